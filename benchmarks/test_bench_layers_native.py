"""Normalisation and activation layers against the same computation in torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_layers_native.py --benchmark-enable

Each group is one layer, forward and backward, on a ``(8, 16, 64, 64)``
complex input, with two variants: ``cplx``, the layer of
:mod:`cplxmodule.nn` on a :class:`~cplxmodule.cplx.Cplx`, and
``torch-complex64``, what a user of torch's native complex tensors writes for
the same result, from the layer's own parameters. The group norm's
:math:`2 \\times 2` whitening and affine map are written widely linear,
:math:`\\alpha z + \\beta \\bar z`, with the covariance from the complex moments
:math:`\\operatorname{mean}|z|^2` and :math:`\\operatorname{mean} z^2`. Each
variant is checked against the other before it is timed. Runs on one thread;
``benchmarks/conftest.py`` prints each ``cplx`` time divided by the native
time of its group (below 1 is faster). On a busy machine add
``--benchmark-timer=time.process_time``.
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn

pytestmark = pytest.mark.usefixtures("one_thread")

NATIVE = "torch-complex64"
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
RMS_NORM = cnn.CplxRMSNorm((64, 64))
# parameters away from their identity initialisation, so the check covers the affine maps
torch.manual_seed(1)
with torch.no_grad():
    for _param in (*GROUP_NORM.parameters(), *RMS_NORM.parameters()):
        _param.add_(torch.randn_like(_param) * 0.5)

# name -> (layer, native function of the input); layers take one Cplx
LAYERS = {
    "group_norm": (GROUP_NORM, _group_norm(GROUP_NORM)),
    "rms_norm": (RMS_NORM, _rms_norm(RMS_NORM)),
    "split_relu": (cnn.CplxSplitReLU(), lambda z: torch.complex(F.relu(z.real), F.relu(z.imag))),
    "mod_tanh": (cnn.CplxModTanh(), lambda z: torch.tanh(z.abs()) * torch.sgn(z)),
}


def _inputs(variant):
    torch.manual_seed(0)
    native = torch.randn(SHAPE, dtype=torch.complex64)
    if variant == NATIVE:
        return native.requires_grad_()
    z = cplx.from_complex(native)
    return cplx.Cplx(z.real.contiguous().requires_grad_(), z.imag.contiguous().requires_grad_())


def _parts_sum(out):
    return out.real.sum() + out.imag.sum()


@pytest.mark.parametrize("variant", ["cplx", NATIVE])
@pytest.mark.parametrize("name", LAYERS)
def test_layer(benchmark, name, variant):
    layer, native = LAYERS[name]
    benchmark.group = f"{name}-fwd+bwd"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    with torch.no_grad():
        # the two variants must compute the same thing for the ratio to mean anything
        torch.testing.assert_close(
            cplx.to_complex(layer(_inputs("cplx"))), native(_inputs(NATIVE)), rtol=1e-4, atol=1e-4
        )
    z = _inputs(variant)
    fn = native if variant == NATIVE else layer
    benchmark(lambda: _parts_sum(fn(z)).backward())
