"""Normalisation layers and activations against the same computation in torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_layers_native.py --benchmark-enable

Each group is one layer, forward and backward, on a ``(8, 16, 64, 64)``
complex input, with four variants: ``cplxmodule``, the layer of
:mod:`cplxmodule.nn` on a :class:`~cplxmodule.cplx.Cplx`, and
``torch-complex64``, what a user of torch's native complex tensors writes for
the same result, from the layer's own parameters, each eager and compiled
(``-compiled``, see ``benchmarks/_compiling.py``). The group norm's
:math:`2 \\times 2` whitening and affine map are written widely linear,
:math:`\\alpha z + \\beta \\bar z`, with the covariance from the complex moments
:math:`\\operatorname{mean}|z|^2` and :math:`\\operatorname{mean} z^2`. Each
variant is checked against the other before it is timed. The activations
cover each family: split, polar (modulus tanh, squash, log), zReLU and its
variants, the holomorphic tanh and sigmoid, the cardioid, modReLU (one
threshold and one per channel), the phase and magnitude softmaxes and the
complex ratio mask (two inputs: mask and spectrum). Runs on one thread;
``benchmarks/conftest.py`` prints each variant's time divided by the native
time of its group (below 1 is faster). On a busy machine add
``--benchmark-timer=time.process_time``.
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from _compiling import NATIVE, OURS, VARIANTS, compiled, eager, warm_up
from _operands import parts_sum, separate_parts

pytestmark = pytest.mark.usefixtures("one_thread")

SHAPE = (8, 16, 64, 64)


def _widely_linear(zr_map, z):
    """Apply the real 2x2 map ``[[a, b], [c, d]]`` to ``z`` as ``alpha z + beta conj z``."""
    (a, b), (c, d) = zr_map
    alpha = torch.complex((a + d) / 2, (c - b) / 2)
    beta = torch.complex((a - d) / 2, (c + b) / 2)
    return alpha * z + beta * z.conj()


def _group_norm(layer):
    def native(z):
        groups = z.reshape(z.shape[0], layer.num_groups, -1)
        centred = groups - groups.mean(-1, keepdim=True)
        power = (centred.abs() ** 2).mean(-1, keepdim=True)
        square = (centred * centred).mean(-1, keepdim=True)
        var_rr, var_ii = (power + square.real) / 2, (power - square.real) / 2
        cov_ri = square.imag / 2
        # V + eps I, and its inverse square root in closed form
        a, d = var_rr + layer.eps, var_ii + layer.eps
        s = torch.sqrt(a * d - cov_ri * cov_ri)
        inv = torch.rsqrt(a + d + 2 * s) / s
        q = -cov_ri * inv
        white = _widely_linear((((d + s) * inv, q), (q, (a + s) * inv)), centred)
        white = white.reshape(z.shape)
        w = layer.weight.reshape(2, 2, -1, 1, 1)
        b = layer.bias.reshape(2, -1, 1, 1)
        return _widely_linear(((w[0, 0], w[0, 1]), (w[1, 0], w[1, 1])), white) + torch.complex(
            b[0], b[1]
        )

    return native


def _rms_norm(layer):
    def native(z):
        dims = tuple(range(-len(layer.normalized_shape), 0))
        power = (z.abs() ** 2).mean(dims, keepdim=True)
        return z * torch.rsqrt(power + torch.finfo(torch.float32).eps) * layer.weight

    return native


GROUP_NORM = cnn.CplxGroupNorm(4, 16)
CHANNEL_MOD_RELU = cnn.CplxChannelModReLU(16)
RMS_NORM = cnn.CplxRMSNorm((64, 64))
# parameters away from their identity initialisation, so the check covers the affine maps
torch.manual_seed(1)
with torch.no_grad():
    for _param in (*GROUP_NORM.parameters(), *RMS_NORM.parameters()):
        _param.add_(torch.randn_like(_param) * 0.5)
    CHANNEL_MOD_RELU.threshold.uniform_(0.2, 1.0)

# name -> (layer, native function of the input); layers take one Cplx
LAYERS = {
    "group_norm": (GROUP_NORM, _group_norm(GROUP_NORM)),
    "rms_norm": (RMS_NORM, _rms_norm(RMS_NORM)),
    "split_relu": (cnn.CplxSplitReLU(), lambda z: torch.complex(F.relu(z.real), F.relu(z.imag))),
    "mod_tanh": (cnn.CplxModTanh(), lambda z: torch.tanh(z.abs()) * torch.sgn(z)),
    "mod_squash": (cnn.CplxModSquash(), lambda z: z * (z.abs() / (1 + z.abs() ** 2))),
    "mod_log": (cnn.CplxModLog(), lambda z: torch.log1p(z.abs()) * torch.sgn(z)),
    "zrelu": (cnn.CplxZReLU(), lambda z: z * ((z.real >= 0) & (z.imag >= 0))),
    "zabs_relu": (cnn.CplxZAbsReLU(0.5), lambda z: z * (z.abs() >= 0.5)),
    "zleaky_relu": (
        cnn.CplxZLeakyReLU(0.1),
        lambda z: torch.where((z.real >= 0) & (z.imag >= 0), z, 0.1 * z),
    ),
    "tanh": (cnn.CplxTanh(), torch.tanh),
    "sigmoid": (cnn.CplxSigmoid(), torch.sigmoid),
    "cardioid": (cnn.CplxCardioid(), lambda z: z * (0.5 * (1 + torch.cos(torch.angle(z))))),
    "mod_relu": (
        cnn.CplxModReLU(0.5), lambda z: z * F.relu(1 - 0.5 / z.abs().clamp(min=1e-5))
    ),
    "channel_mod_relu": (
        CHANNEL_MOD_RELU,
        lambda z: z * F.relu(1 - CHANNEL_MOD_RELU.threshold[:, None, None]
                             / z.abs().clamp(min=1e-5)),
    ),
    "phase_softmax": (cnn.CplxPhaseSoftmax(-1), lambda z: torch.softmax(z.abs(), -1) * torch.sgn(z)),
    "mag_softmax": (cnn.CplxMagSoftmax(1), lambda z: torch.softmax(z.abs(), 1)),
}


def _inputs(variant):
    torch.manual_seed(0)
    native = torch.randn(SHAPE, dtype=torch.complex64)
    if variant == NATIVE:
        return native.requires_grad_()
    return separate_parts(native)


def _native(out):
    return cplx.to_complex(out) if isinstance(out, cplx.Cplx) else out


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", LAYERS)
def test_layer(benchmark, name, variant):
    layer, native = LAYERS[name]
    benchmark.group = f"{name}-fwd+bwd"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    with torch.no_grad():
        # the two variants must compute the same thing for the ratio to mean anything
        torch.testing.assert_close(
            _native(layer(_inputs(OURS))), native(_inputs(NATIVE)), rtol=1e-4, atol=1e-4
        )
    z = _inputs(eager(variant))
    fn = compiled(native if eager(variant) == NATIVE else layer, variant)

    def run():
        parts_sum(fn(z)).backward()

    warm_up(benchmark, variant, run)
    benchmark(run)


@pytest.mark.parametrize("bounded", [True, False], ids=["bounded", "unbounded"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_ratio_mask(benchmark, bounded, variant):
    layer = cnn.CplxRatioMask(bounded=bounded)

    def native(mask, z):
        return (torch.tanh(mask.abs()) * torch.sgn(mask) if bounded else mask) * z

    benchmark.group = f"ratio_mask_{'bounded' if bounded else 'unbounded'}-fwd+bwd"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    with torch.no_grad():
        torch.testing.assert_close(
            _native(layer(_inputs(OURS), _inputs(OURS))),
            native(_inputs(NATIVE), _inputs(NATIVE)), rtol=1e-4, atol=1e-4,
        )
    mask, z = _inputs(eager(variant)), _inputs(eager(variant))
    fn = compiled(native if eager(variant) == NATIVE else layer, variant)

    def run():
        parts_sum(fn(mask, z)).backward()

    warm_up(benchmark, variant, run)
    benchmark(run)
