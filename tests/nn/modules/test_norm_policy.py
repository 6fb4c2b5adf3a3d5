"""Every complex norm layer against torch's twin, at the edges and in half precision.

The references are independent of the code under test: torch's real norm
(the twin: ``torch.nn.BatchNorm2d`` for ``CplxBatchNorm2d``...), which a
complex norm must reproduce on an input of zero imaginary part (the
:math:`2 \\times 2` whitening of ``(x, 0)`` is the variance normalisation of
``x``; the modulus of ``x`` is ``|x|``); the same layer in float64 for the
float32 gradients; and, for the dtype policy, the layer in float32 on the
same (half-rounded) values, itself tested against numpy elsewhere.
"""

import copy
import dataclasses
import functools
import inspect

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from cplxmodule.nn.modules import batchnorm

pytestmark = pytest.mark.usefixtures("one_thread")

F64 = torch.float64
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@dataclasses.dataclass(frozen=True)
class Norm:
    """One norm layer: its factory and torch's twin's (both take the same keywords)."""

    name: str
    make: object
    twin: object
    shape: tuple
    # "pair": 2x2 whitening; "modulus": the modulus normalised; "parts": the
    # parts normalised apart; "rms": the modulus rescaled
    kind: str
    running: bool = False  # momentum and track_running_stats apply

    def __str__(self):
        return self.name


def _norms():
    norms = []
    for n, shape in ((1, (8, 3, 5)), (2, (4, 3, 3, 4)), (3, (2, 3, 2, 3, 4))):
        torch_bn = getattr(torch.nn, f"BatchNorm{n}d")
        for prefix, kind in (("", "pair"), ("Magnitude", "modulus"), ("Naive", "parts")):
            cls = getattr(cnn, f"Cplx{prefix}BatchNorm{n}d")
            norms.append(Norm(cls.__name__, functools.partial(cls, 3),
                              functools.partial(torch_bn, 3), shape, kind, True))
        cls, twin = getattr(cnn, f"CplxInstanceNorm{n}d"), getattr(torch.nn, f"InstanceNorm{n}d")
        make, make_twin = (functools.partial(c, 3, affine=True) for c in (cls, twin))
        norms.append(Norm(cls.__name__, make, make_twin, shape, "pair", True))
        norms.append(Norm(f"{cls.__name__}-unbatched", make, make_twin, shape[1:], "pair", True))
    norms.append(Norm("CplxBatchNorm1d-flat", functools.partial(cnn.CplxBatchNorm1d, 3),
                      functools.partial(torch.nn.BatchNorm1d, 3), (16, 3), "pair", True))
    # outside a process group, as torch's twin
    norms.append(Norm("CplxSyncBatchNorm", functools.partial(cnn.CplxSyncBatchNorm, 3),
                      functools.partial(torch.nn.SyncBatchNorm, 3), (4, 3, 2, 3, 2), "pair", True))
    norms += [
        Norm("CplxGroupNorm", functools.partial(cnn.CplxGroupNorm, 2, 4),
             functools.partial(torch.nn.GroupNorm, 2, 4), (3, 4, 5), "pair"),
        Norm("CplxLayerNorm", functools.partial(cnn.CplxLayerNorm, (4, 5)),
             functools.partial(torch.nn.LayerNorm, (4, 5)), (3, 4, 5), "pair"),
        Norm("CplxLayerNorm-unbatched", functools.partial(cnn.CplxLayerNorm, (4, 5)),
             functools.partial(torch.nn.LayerNorm, (4, 5)), (4, 5), "pair"),
        Norm("CplxRMSNorm", functools.partial(cnn.CplxRMSNorm, 5),
             functools.partial(torch.nn.RMSNorm, 5), (3, 4, 5), "rms"),
    ]
    return norms


NORMS = _norms()
RUNNING = [norm for norm in NORMS if norm.running]
# the settings of a norm with running statistics, as its constructor's keywords
SETTINGS = {
    "default": {},
    "tracked": {"track_running_stats": True},
    "untracked": {"track_running_stats": False},
    "cumulative": {"track_running_stats": True, "momentum": None},
}


def test_every_norm_layer_is_in_the_table():
    # a norm added later must join the generic tests here
    bases = (batchnorm._CplxNormBase, batchnorm._CplxNaiveBatchNorm)
    public = {
        name for name in cnn.__all__
        if inspect.isclass(obj := getattr(cnn, name)) and issubclass(obj, bases)
    }
    covered = {norm.name.split("-")[0] for norm in NORMS}
    assert public == covered


# --- torch's twin at zero imaginary part ---------------------------------------
def _real_input(shape, seed, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=F64) * 2 + 0.5).to(device)


def _paired(norm, settings, seed=1, device="cpu"):
    """The layer and its twin, in float64, with the twin's random affine map in the layer."""
    g = torch.Generator().manual_seed(seed)
    layer, twin = norm.make(**settings).double(), norm.twin(**settings).double()
    with torch.no_grad():
        for p in twin.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=F64))
        if norm.kind == "parts":
            layer.real.load_state_dict(twin.state_dict())
        elif norm.kind in ("modulus", "rms"):
            layer.load_state_dict(twin.state_dict())
        elif layer.weight is not None:
            # the real part's scale and shift are the twin's; what would mix
            # the real part into the imaginary one is zero, the rest random
            for p in layer.parameters():
                p.copy_(torch.randn(p.shape, generator=g, dtype=F64))
            layer.weight[0, 0] = twin.weight
            layer.weight[1, 0] = 0
            layer.bias[0] = twin.bias
    return layer.to(device), twin.to(device)


def _expected_imag(norm, layer, x):
    """The imaginary part of the output on ``Cplx(x, 0)``: a shift per feature, or 0."""
    if norm.kind == "parts":
        return copy.deepcopy(layer.imag)(torch.zeros_like(x))
    if norm.kind != "pair" or layer.bias is None:
        return torch.zeros_like(x)
    shift = layer.bias[1]
    if norm.name.startswith("CplxLayerNorm"):
        return shift.expand_as(x)
    channel = 0 if norm.name.endswith("unbatched") else 1
    view = [1] * x.dim()
    view[channel] = -1
    return shift.reshape(view).expand_as(x)


def _twin_output(norm, twin, x):
    if norm.kind == "modulus":
        return twin(x.abs()) * torch.where(x < 0, -1.0, 1.0).to(x.dtype)
    return twin(x)


def _check_state(norm, layer, twin):
    """The running statistics of the real part (or of the modulus) are the twin's."""
    if not norm.running or twin.running_mean is None:
        assert getattr(layer, "running_mean", None) is None
        return
    if norm.kind == "parts":
        layer = layer.real
    mean, var = layer.running_mean, layer.running_var
    if norm.kind == "pair":
        mean, var = mean[0], var[0, 0]
    torch.testing.assert_close(mean, twin.running_mean, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(var, twin.running_var, rtol=1e-12, atol=1e-12)
    assert int(layer.num_batches_tracked) == int(twin.num_batches_tracked)


def _check_step(norm, layer, twin, x):
    out = layer(Cplx(x, torch.zeros_like(x)))
    torch.testing.assert_close(out.real, _twin_output(norm, twin, x), rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(out.imag, _expected_imag(norm, layer, x), rtol=1e-10, atol=1e-10)
    _check_state(norm, layer, twin)


def _settings(norm):
    return list(SETTINGS) if norm.running else ["default"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm, setting", [
    (norm, setting) for norm in NORMS for setting in _settings(norm)
], ids=str)
def test_zero_imaginary_part_is_torchs_twin(norm, setting, device):
    # training steps (running statistics updated), then evaluation mode
    layer, twin = _paired(norm, SETTINGS[setting], device=device)
    for seed in range(3):
        _check_step(norm, layer, twin, _real_input(norm.shape, seed, device))
    layer.eval(), twin.eval()
    _check_step(norm, layer, twin, _real_input(norm.shape, 10, device))


def _empty_shapes(norm):
    if norm.name.endswith("unbatched"):
        return []
    shapes = [(0, *norm.shape[1:])]
    if norm.running and len(norm.shape) > 2:
        shapes.append((*norm.shape[:-1], 0))  # no spatial value
    return shapes


@pytest.mark.parametrize("norm, shape", [
    (norm, shape) for norm in NORMS for shape in _empty_shapes(norm)
], ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_an_empty_input_gives_an_empty_output_as_torchs_twin(norm, shape, training):
    settings = {"track_running_stats": True} if norm.running else {}
    layer, twin = _paired(norm, settings)
    layer.train(training), twin.train(training)
    before = copy.deepcopy(layer.state_dict())
    x = torch.zeros(shape, dtype=F64, requires_grad=True)
    out = layer(Cplx(x, torch.zeros_like(x)))
    assert out.shape == shape and out.dtype == F64
    (out.real.sum() + out.imag.sum()).backward()
    assert x.grad.shape == shape
    if norm.name.startswith("CplxInstanceNorm") and shape[0] == 0:
        # torch's InstanceNorm raises an IndexError with an affine map (and
        # its functional makes the running statistics NaN): as its batch
        # norms, the statistics stay, and nothing is counted
        for key, value in layer.state_dict().items():
            torch.testing.assert_close(value, before[key], rtol=0, atol=0, msg=key)
        return
    # the twin counts the batch and leaves its statistics as they are
    assert _twin_output(norm, twin, x.detach()).shape == shape
    _check_state(norm, layer, twin)


# --- the dtype policy ---------------------------------------------------------
LARGE = {torch.float16: 1e4, torch.bfloat16: 1e12}


def _half_cases():
    for dtype in (torch.float16, torch.bfloat16):
        for scale in (1.0, 300.0, LARGE[dtype]):
            yield dtype, scale, "float32"
            # a running variance past 65504 is infinite in float16 (as
            # torch's): parameters and statistics in float16 for small values
            if dtype == torch.bfloat16 or scale == 1.0:
                yield dtype, scale, "own"


def _randomised(layer, seed=2):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in layer.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.3)
    return layer


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("autocast", [False, True], ids=["eager", "autocast"])
@pytest.mark.parametrize("dtype, scale, params", list(_half_cases()), ids=str)
@pytest.mark.parametrize("norm", NORMS, ids=str)
def test_half_input_is_normalised_in_float32(norm, dtype, scale, params, autocast, device):
    # as torch's norms: float32 statistics, one rounding of the output into
    # the input's dtype, float32 parameters taken with a half input
    settings = {"track_running_stats": True} if norm.running else {}
    layer = _randomised(norm.make(**settings)).to(device)
    twin = norm.twin(**settings).to(device)
    if params == "own":
        layer, twin = layer.to(dtype), twin.to(dtype)
    reference = copy.deepcopy(layer).float()
    g = torch.Generator().manual_seed(5)
    z = (cplx.randn(*norm.shape, generator=g) * scale).to(device=device, dtype=dtype)
    # the output is rounded once; the kernels of torch's naive parts may
    # differ by an ulp
    tol = {"rtol": 2 * torch.finfo(dtype).eps, "atol": 2 * torch.finfo(dtype).eps}
    context = torch.autocast(device, dtype=dtype, enabled=autocast)
    for training in (True, False):
        layer.train(training), reference.train(training), twin.train(training)
        with context:
            out = layer(z)
            twin(z.real)  # torch's twin takes it too
        expected = reference(z.to(torch.float32))
        assert out.dtype == dtype
        assert torch.isfinite(out.real).all() and torch.isfinite(out.imag).all()
        torch.testing.assert_close(out.real.float(), expected.real, **tol)
        torch.testing.assert_close(out.imag.float(), expected.imag, **tol)
        with torch.no_grad():
            for (name, value), ref in zip(layer.named_buffers(), reference.buffers()):
                if value.is_floating_point():
                    # the layer's statistics, in its own dtype, normalise next
                    torch.testing.assert_close(value.float(), ref, **tol, msg=name)
                    ref.copy_(value)


def test_rms_norm_of_values_past_256_in_float16():
    # the square overflows float16: torch's rms_norm computes it in float32
    x = torch.full((2, 4), 300.0, dtype=torch.float16)
    expected = torch.nn.functional.rms_norm(x, (4,))
    out = cplx.rms_norm(Cplx(x, torch.zeros_like(x)), 4)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.real, expected)
    # the default eps is float32's, as torch's for a half input
    small = torch.full((1, 4), 0.01, dtype=torch.bfloat16)
    out = cplx.rms_norm(Cplx(small, torch.zeros_like(small)), 4)
    torch.testing.assert_close(out.real, torch.nn.functional.rms_norm(small, (4,)))


@pytest.mark.parametrize("scale", [1e10, 1e15])
def test_whitening_of_large_float32_values(scale):
    # the determinant of the 2x2 covariance is of the fourth power of the
    # values: it must not overflow where torch's variance does not
    x = _real_input((64, 3), 0).float() * scale
    out = cnn.CplxBatchNorm1d(3)(Cplx(x, 0.5 * x + x.flip(0)))
    assert torch.isfinite(out.real).all() and torch.isfinite(out.imag).all()
    expected = torch.nn.BatchNorm1d(3)(x)
    out = cnn.CplxBatchNorm1d(3)(Cplx(x, torch.zeros_like(x)))
    torch.testing.assert_close(out.real, expected, rtol=1e-5, atol=1e-5)


# --- gradients ------------------------------------------------------------------
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("norm", NORMS, ids=str)
def test_gradcheck_in_float64(norm, training):
    settings = {"track_running_stats": True} if norm.running else {}
    layer = _randomised(norm.make(**settings)).double()
    if norm.running:
        layer(cplx.randn(*norm.shape, dtype=F64) * 2 + 1)  # running statistics move
    layer.train(training)
    names = [n for n, _ in layer.named_parameters()]
    buffers = {n: b.clone() for n, b in layer.named_buffers()}
    g = torch.Generator().manual_seed(3)
    parts = torch.randn(2, *norm.shape, generator=g, dtype=F64)
    re, im = (part.clone().requires_grad_() for part in parts)

    def f(re, im, *values):
        # the running statistics must not move between evaluations
        state = {**dict(zip(names, values)), **{n: b.clone() for n, b in buffers.items()}}
        out = torch.func.functional_call(layer, state, (Cplx(re, im),))
        return out.real, out.imag

    assert torch.autograd.gradcheck(f, (re, im, *layer.parameters()), fast_mode=True)


def _tiny_input(norm, value, where):
    """A float32 input with ``value``-sized moduli: everywhere, or at a few places."""
    g = torch.Generator().manual_seed(7)
    re, im = torch.randn(2, *norm.shape, generator=g)
    phase = torch.rand(norm.shape, generator=g) * 6.28
    tiny_re, tiny_im = value * torch.cos(phase), value * torch.sin(phase)
    if where == "everywhere":
        return tiny_re, tiny_im
    spots = torch.rand(norm.shape, generator=g) < 0.2
    return torch.where(spots, tiny_re, re), torch.where(spots, tiny_im, im)


def _tiny_cases():
    for norm in NORMS:
        for value in (0.0, 1e-20, 1e-38):
            for where in ("everywhere", "at places"):
                yield pytest.param(norm, value, where, id=f"{norm}-{value}-{where}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm, value, where", list(_tiny_cases()))
def test_gradients_at_zeros_and_tiny_moduli_are_finite_and_those_of_float64(
    norm, value, where, device
):
    # the float64 gradient, on the same values, is the reference: finite and
    # of its size, not merely finite (a fixed eps for RMS: its default is the
    # dtype's own)
    settings = {"eps": 1e-6} if norm.kind == "rms" else {}
    layer = _randomised(norm.make(**settings)).to(device)
    re, im = (part.to(device) for part in _tiny_input(norm, value, where))
    g = torch.Generator().manual_seed(11)
    weights = [(torch.rand(norm.shape, generator=g, dtype=F64) * 0.2 - 0.1).to(device)
               for _ in range(2)]
    grads = {}
    for dtype in (torch.float32, F64):
        x = [re.to(dtype).requires_grad_(), im.to(dtype).requires_grad_()]
        out = copy.deepcopy(layer).to(dtype)(Cplx(*x))
        loss = (out.real.double() * weights[0]).sum() + (out.imag.double() * weights[1]).sum()
        grads[dtype] = torch.autograd.grad(loss, x)
    for g32, g64 in zip(grads[torch.float32], grads[F64]):
        assert torch.isfinite(g32).all()
        torch.testing.assert_close(g32.double(), g64, rtol=1e-3, atol=1e-4)


# --- errors name the layer ----------------------------------------------------------
@pytest.mark.parametrize("make, twin, shape, words", [
    (cnn.CplxBatchNorm1d, torch.nn.BatchNorm1d, (1, 3), "more than 1 value per channel"),
    (cnn.CplxBatchNorm2d, torch.nn.BatchNorm2d, (1, 3, 1, 1), "more than 1 value per channel"),
    (cnn.CplxMagnitudeBatchNorm1d, torch.nn.BatchNorm1d, (1, 3), "more than 1 value per channel"),
    (cnn.CplxNaiveBatchNorm3d, torch.nn.BatchNorm3d, (1, 3, 1, 1, 1), "more than 1 value"),
    (cnn.CplxInstanceNorm1d, torch.nn.InstanceNorm1d, (2, 3, 1), "more than 1 spatial value"),
    (cnn.CplxInstanceNorm2d, torch.nn.InstanceNorm2d, (3, 1, 1), "more than 1 spatial value"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_layers_errors_name_the_layer(make, twin, shape, words):
    with pytest.raises((ValueError, RuntimeError)):
        twin(3)(torch.randn(shape))  # torch's twin refuses it too
    layer = make(3)
    before = copy.deepcopy(layer.state_dict())
    with pytest.raises(ValueError, match=rf"^{make.__name__}: `input` must have {words}"):
        layer(cplx.randn(*shape))
    for key, value in layer.state_dict().items():
        torch.testing.assert_close(value, before[key], rtol=0, atol=0)


def test_the_functional_names_itself():
    with pytest.raises(ValueError, match=r"^magnitude_batch_norm: `input` must have more than 1"):
        cplx.magnitude_batch_norm(cplx.randn(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match=r"^cplx_batch_norm: `input` must have more than 1"):
        batchnorm.cplx_batch_norm(cplx.randn(1, 3), None, None)
    with pytest.raises(ValueError, match=r"^whitendxd: `tensor` must have more than 1"):
        batchnorm.whitendxd(torch.randn(3, 1, 2))


def test_an_unbatched_input_with_the_wrong_channels_is_shown_as_given():
    with pytest.raises(ValueError, match=r"^CplxInstanceNorm1d: `input` must have shape "
                                         r"\(N, 3, \*\) or \(3, \*\), got \(4, 5\)$"):
        cnn.CplxInstanceNorm1d(3)(cplx.randn(4, 5))


# --- state ------------------------------------------------------------------------
# the published layouts (and those of torch's twins for the modulus and the
# RMS norm), which existing checkpoints hold
LAYOUTS = {
    "CplxBatchNorm2d": {"weight": (2, 2, 3), "bias": (2, 3), "running_mean": (2, 3),
                        "running_var": (2, 2, 3), "num_batches_tracked": ()},
    "CplxMagnitudeBatchNorm2d": {"weight": (3,), "bias": (3,), "running_mean": (3,),
                                 "running_var": (3,), "num_batches_tracked": ()},
    "CplxInstanceNorm2d": {"weight": (2, 2, 3), "bias": (2, 3)},
    "CplxGroupNorm": {"weight": (2, 2, 4), "bias": (2, 4)},
    "CplxLayerNorm": {"weight": (2, 2, 4, 5), "bias": (2, 4, 5)},
    "CplxRMSNorm": {"weight": (5,)},
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_state_dict_layout(name):
    (norm,) = [n for n in NORMS if n.name == name]
    layer = norm.make()
    assert {k: tuple(v.shape) for k, v in layer.state_dict().items()} == LAYOUTS[name]
    # absent state is None, as in torch's norms; a norm without running
    # statistics has no such attributes at all, as torch's GroupNorm
    twin = norm.twin()
    for attribute in ("running_mean", "running_var", "num_batches_tracked", "bias"):
        assert hasattr(layer, attribute) == hasattr(twin, attribute), attribute
