"""Complex layers against references built from torch's native complex tensors."""

import io
import math
import pickle
import re

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from ...helpers import cplx_to_native


def leaf(*shape, dtype=torch.float64):
    """A random Cplx input whose parts are autograd leaves."""
    return cplx.randn(*shape, dtype=dtype, requires_grad=True)


def check_backward(out, ref, leaves):
    """Compare gradients of a random real projection of ``out`` and ``ref``."""
    probe = torch.randn_like(ref)
    got = torch.autograd.grad(
        (cplx_to_native(out) * probe.conj()).real.sum(), leaves, retain_graph=True
    )
    want = torch.autograd.grad((ref * probe.conj()).real.sum(), leaves)
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-8)


@pytest.fixture(autouse=True)
def seed():
    torch.manual_seed(0)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_linear(bias, batch):
    layer = cnn.CplxLinear(4, 3, bias=bias, dtype=torch.float64)
    x = leaf(*batch, 4)
    out = layer(x)
    w = cplx_to_native(layer.weight)
    ref = cplx_to_native(x) @ w.T + (cplx_to_native(layer.bias) if bias else 0)
    assert torch.allclose(cplx_to_native(out), ref, atol=1e-12)
    leaves = [x.real, x.imag, layer.weight.real, layer.weight.imag]
    check_backward(out, ref, leaves)


@pytest.mark.parametrize("conjugate", [True, False])
def test_bilinear(conjugate):
    layer = cnn.CplxBilinear(3, 4, 2, conjugate=conjugate, dtype=torch.complex128)
    assert layer.weight.dtype == torch.float64
    x1, x2 = leaf(5, 3), leaf(5, 4)
    out = layer(x1, x2)
    a = cplx_to_native(x1).conj() if conjugate else cplx_to_native(x1)
    ref = torch.einsum("bi,kij,bj->bk", a, cplx_to_native(layer.weight), cplx_to_native(x2))
    ref = ref + cplx_to_native(layer.bias)
    assert torch.allclose(cplx_to_native(out), ref, atol=1e-12)
    check_backward(out, ref, [x1.real, x2.imag, layer.weight.imag])


def test_identity_real_imag_modulus_angle():
    z = cplx.randn(4, 3)
    assert cnn.CplxIdentity(1, key=2)(z) is z
    assert torch.equal(cnn.CplxReal()(z), z.real)
    assert torch.equal(cnn.CplxImag()(z), z.imag)
    assert torch.allclose(cnn.CplxModulus()(z), cplx_to_native(z).abs())
    assert torch.allclose(cnn.CplxAngle()(z), cplx_to_native(z).angle())


def test_phase_shift():
    layer = cnn.CplxPhaseShift(3, dtype=torch.float64)
    x = leaf(2, 3)
    out = layer(x)
    ref = cplx_to_native(x) * torch.exp(1j * layer.phi)
    assert torch.allclose(cplx_to_native(out), ref)
    check_backward(out, ref, [x.real, layer.phi])
    assert repr(layer) == "CplxPhaseShift(3)"


@pytest.mark.parametrize("threshold", [0.0, 0.5, 2.0])
def test_modrelu(threshold):
    x = cplx.randn(50, dtype=torch.float64)
    out = cnn.CplxModReLU(threshold)(x)
    z = cplx_to_native(x)
    ref = torch.where(z.abs() > threshold, z * (1 - threshold / z.abs()), 0)
    assert torch.allclose(cplx_to_native(out), ref)


def test_adaptive_modrelu():
    layer = cnn.CplxAdaptiveModReLU(4, dtype=torch.float64)
    with torch.no_grad():
        layer.threshold.copy_(torch.tensor([0.0, 0.3, 0.6, 1.0], dtype=torch.float64))
    x = cplx.randn(20, 4, dtype=torch.float64)
    z, b = cplx_to_native(x), layer.threshold.detach()
    ref = torch.where(z.abs() > b, z * (1 - b / z.abs()), 0)
    assert torch.allclose(cplx_to_native(layer(x)), ref)
    assert [n for n, _ in layer.named_parameters()] == ["threshold"]


def test_zrelu():
    x = cplx.randn(200, dtype=torch.float64)
    z = cplx_to_native(x)
    angle = z.angle()
    ref = torch.where((angle >= 0) & (angle <= math.pi / 2), z, 0)
    assert torch.equal(cplx_to_native(cnn.CplxZReLU()(x)), ref)


def test_cardioid():
    x = leaf(100)
    out = cnn.CplxCardioid()(x)
    z = cplx_to_native(x)
    ref = z * (1 + torch.cos(z.angle())) / 2
    assert torch.allclose(cplx_to_native(out), ref)
    check_backward(out, ref, [x.real, x.imag])
    zero = cnn.CplxCardioid()(Cplx.zeros(3, requires_grad=True))
    assert torch.equal(cplx_to_native(zero), torch.zeros(3, dtype=torch.complex64))


def test_casting_layers():
    x = torch.randn(3, 8)
    z = cnn.InterleavedRealToCplx()(x)
    assert torch.equal(cplx_to_native(z), torch.view_as_complex(x.reshape(3, 4, 2)))
    assert torch.equal(cnn.CplxToInterleavedReal()(z), x)
    assert cnn.RealToCplx is cnn.InterleavedRealToCplx
    assert cnn.CplxToReal is cnn.CplxToInterleavedReal
    z = cnn.ConcatenatedRealToCplx(dim=0)(x.T)
    assert torch.equal(cplx_to_native(z), torch.complex(x.T[:4], x.T[4:]))
    assert torch.equal(cnn.CplxToConcatenatedReal(dim=0)(z), x.T)
    z = cnn.AsTypeCplx()(x)
    assert torch.equal(z.real, x) and torch.equal(z.imag, torch.zeros_like(x))
    pairs = cnn.CplxToInterleavedReal(flatten=False)(cnn.RealToCplx()(x))
    assert pairs.shape == (3, 4, 2)


@pytest.mark.parametrize(
    "layer",
    [cnn.CplxToCplx[torch.nn.ELU](alpha=0.3), cnn.CplxToCplx[torch.tanh](),
     cnn.CplxToCplx[torch.nn.functional.leaky_relu](0.2)],
    ids=["ELU", "tanh", "leaky_relu"],
)
def test_split_layers(layer):
    x = cplx.randn(4, 5)
    reference = {
        "CplxToCplx[ELU]": lambda t: torch.nn.functional.elu(t, alpha=0.3),
        "CplxToCplx[tanh]": torch.tanh,
        "CplxToCplx[leaky_relu]": lambda t: torch.nn.functional.leaky_relu(t, 0.2),
    }[type(layer).__name__]
    out = layer(x)
    assert torch.equal(out.real, reference(x.real))
    assert torch.equal(out.imag, reference(x.imag))
    assert isinstance(layer, cnn.CplxToCplx)


def test_split_classes_cached_and_picklable():
    ELU = cnn.CplxToCplx[torch.nn.ELU]
    assert cnn.CplxToCplx[torch.nn.ELU] is ELU
    assert cnn.CplxToCplx[cnn.CplxLinear] is cnn.CplxLinear
    assert cnn.CplxToCplx[torch.nn.Module] is cnn.CplxToCplx
    assert pickle.loads(pickle.dumps(ELU)) is ELU
    model = cnn.CplxSequential(
        cnn.CplxLinear(3, 4), ELU(alpha=0.5), cnn.CplxToCplx[torch.tanh]()
    )
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    assert type(loaded[1]) is ELU and loaded[1].alpha == 0.5
    x = cplx.randn(2, 3)
    assert torch.equal(cplx_to_native(loaded(x)), cplx_to_native(model(x)))


def test_split_rejects_non_layers():
    with pytest.raises(TypeError, match="CplxToCplx"):
        cnn.CplxToCplx[3]
    with pytest.raises(TypeError, match="CplxToCplx"):
        cnn.CplxLinear[torch.nn.ELU]


def test_sequential():
    model = cnn.CplxSequential(cnn.CplxLinear(3, 4), cnn.CplxModReLU(), cnn.CplxLinear(4, 2))
    x = cplx.randn(5, 3)
    ref = model[2](model[1](model[0](x)))
    assert torch.equal(cplx_to_native(model(x)), cplx_to_native(ref))
    assert isinstance(model, cnn.CplxToCplx)
    assert len(model.state_dict()) == 8


def test_factory_kwargs_and_repr():
    layer = cnn.CplxLinear(3, 2, bias=False, device="meta", dtype=torch.complex128)
    assert layer.weight.device.type == "meta" and layer.weight.dtype == torch.float64
    assert layer.bias is None
    assert "in_features=3, out_features=2, bias=False" in repr(layer)


def test_default_init_variance():
    # E|W|^2 = 1 / (3 fan_in), as torch's kaiming_uniform_(a=sqrt(5)) for reals
    layer = cnn.CplxLinear(400, 300)
    power = cplx_to_native(layer.weight).abs().pow(2).mean().item()
    real = torch.nn.Linear(400, 300).weight.pow(2).mean().item()
    assert power == pytest.approx(1 / 1200, rel=0.02)
    assert power == pytest.approx(real, rel=0.03)
    bias = cplx_to_native(layer.bias).abs().pow(2).mean().item()
    assert bias == pytest.approx(1 / 1200, rel=0.2)
    assert layer.weight.real.std().item() == pytest.approx(layer.weight.imag.std().item(), rel=0.03)


@pytest.mark.parametrize(
    "complex_layer, real_layer",
    [
        (lambda: cnn.CplxBilinear(40, 50, 30), lambda: torch.nn.Bilinear(40, 50, 30)),
        (lambda: cnn.CplxConv2d(20, 30, 3), lambda: torch.nn.Conv2d(20, 30, 3)),
        (lambda: cnn.CplxConvTranspose2d(20, 30, 3), lambda: torch.nn.ConvTranspose2d(20, 30, 3)),
    ],
    ids=["bilinear", "conv2d", "conv_transpose2d"],
)
def test_default_init_matches_torch_twin_variance(complex_layer, real_layer):
    # the complex weight's E|W|^2 and bias's E|b|^2 equal the variance torch's
    # default gives the twin's real weight (fans as the twin computes them)
    layer, twin = complex_layer(), real_layer()
    for name in ("weight", "bias"):
        power = cplx_to_native(getattr(layer, name)).abs().pow(2).mean().item()
        real = getattr(twin, name).detach().pow(2).mean().item()
        n = getattr(twin, name).numel()
        # uniform samples: the relative standard error of a mean square is 0.89/sqrt(n)
        assert power == pytest.approx(real, rel=5 * 0.9 / math.sqrt(n) * 2)


def test_phase_shift_default_is_one_angle():
    layer = cnn.CplxPhaseShift()
    assert layer.phi.shape == (1,)
    z = cplx.randn(2, 3)
    expected = cplx_to_native(z) * torch.exp(1j * layer.phi.detach())
    torch.testing.assert_close(cplx_to_native(layer(z)), expected)


def test_reset_parameters_in_place():
    layer = cnn.CplxLinear(3, 2)
    real = layer.weight.real
    layer.reset_parameters()
    assert layer.weight.real is real


@pytest.mark.parametrize(
    "layer, args",
    [
        (cnn.CplxLinear(4, 3), (torch.randn(2, 4),)),
        (cnn.CplxModReLU(), (torch.randn(2, 4),)),
        (cnn.CplxToCplx[torch.nn.ELU](), (torch.randn(2),)),
        (cnn.CplxModulus(), (torch.randn(2),)),
        (cnn.CplxBilinear(2, 3, 4), (cplx.randn(2), torch.randn(3))),
    ],
    ids=["linear", "modrelu", "split", "modulus", "bilinear"],
)
def test_real_tensor_into_complex_layer(layer, args):
    name = type(layer).__name__
    with pytest.raises(TypeError, match=rf"{re.escape(name)}: `input\d?` must be a Cplx"):
        layer(*args)


def test_astype_cplx_takes_complex_values_as_they_are():
    # as published: a Cplx comes back as it is, torch's complex dtype keeps its parts
    z = cplx.randn(2, 4)
    assert cnn.AsTypeCplx()(z) is z
    native = torch.randn(2, 4, dtype=torch.complex64)
    out = cnn.AsTypeCplx()(native)
    assert torch.equal(out.real, native.real) and torch.equal(out.imag, native.imag)
    with pytest.raises(TypeError, match="AsTypeCplx: `input` must be"):
        cnn.AsTypeCplx()("z")


def test_casting_layers_keep_integer_parts():
    # the published package's casting layers read an integer tensor as integer parts
    x = torch.arange(8).reshape(2, 4)
    cases = [(cnn.AsTypeCplx(), x, torch.zeros_like(x)),
             (cnn.InterleavedRealToCplx(), x[:, ::2], x[:, 1::2]),
             (cnn.ConcatenatedRealToCplx(), x[:, :2], x[:, 2:]),
             (cnn.TensorToCplx(), x[:, 0::2], x[:, 1::2])]
    for layer, real, imag in cases:
        out = layer(x if not isinstance(layer, cnn.TensorToCplx) else x.reshape(2, 2, 2))
        assert out.real.dtype == torch.int64, type(layer).__name__
        assert torch.equal(out.real, real) and torch.equal(out.imag, imag), type(layer).__name__


def test_analytic_signal_of_an_integer_signal():
    # as torch.fft.fft: an integer signal is promoted to the default float dtype
    scipy_signal = pytest.importorskip("scipy.signal")
    x = torch.tensor([[3, -1, 4, 1, -5, 9, 2, -6]])
    out = cnn.CplxAnalytic()(x)
    assert out.real.dtype == torch.get_default_dtype()
    expected = scipy_signal.hilbert(x.numpy().astype(float), axis=-1)
    torch.testing.assert_close(cplx_to_native(out).to(torch.complex128),
                               torch.from_numpy(expected), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("layer", [cnn.InterleavedRealToCplx(), cnn.ConcatenatedRealToCplx()])
def test_cplx_into_real_layer(layer):
    with pytest.raises(TypeError, match=type(layer).__name__):
        layer(cplx.randn(2, 4))


def test_odd_size_into_casting_layer():
    with pytest.raises(ValueError, match=r"InterleavedRealToCplx.*even size.*\(2, 5\)"):
        cnn.InterleavedRealToCplx()(torch.randn(2, 5))


def test_wrong_feature_size():
    message = r"CplxLinear: `input` must have shape \(\.\.\., 4\), got \(2, 5\)"
    with pytest.raises(ValueError, match=message):
        cnn.CplxLinear(4, 3)(cplx.randn(2, 5))
    with pytest.raises(ValueError, match=r"CplxBilinear: `input2` must have shape \(\.\.\., 3\)"):
        cnn.CplxBilinear(2, 3, 4)(cplx.randn(5, 2), cplx.randn(5, 4))


# every complex layer with parameters or buffers: (constructor, input shape)
FACTORY_CASES = [
    (lambda **kw: cnn.CplxLinear(3, 2, **kw), (4, 3)),
    (lambda **kw: cnn.CplxBilinear(3, 2, 2, **kw), None),
    (lambda **kw: cnn.CplxConv1d(2, 3, 3, **kw), (1, 2, 5)),
    (lambda **kw: cnn.CplxConvTranspose2d(2, 3, 3, **kw), (1, 2, 4, 4)),
    (lambda **kw: cnn.CplxPhaseShift(3, **kw), (2, 3)),
    (lambda **kw: cnn.CplxAdaptiveModReLU(3, **kw), (2, 3)),
    (lambda **kw: cnn.CplxBatchNorm1d(3, **kw), (4, 3)),
    (lambda **kw: cnn.CplxBatchNorm2d(3, **kw), (4, 3, 2, 2)),
    (lambda **kw: cnn.CplxBatchNorm3d(3, **kw), (4, 3, 2, 2, 2)),
    (lambda **kw: cnn.CplxLayerNorm(3, **kw), (4, 3)),
]


@pytest.mark.parametrize("make, shape", FACTORY_CASES)
def test_complex_dtype_names_the_parts_dtype(make, shape):
    # dtype=complex128 means float64 parts, in every layer
    layer = make(dtype=torch.complex128)
    tensors = [*layer.parameters(), *layer.buffers()]
    assert tensors and all(t.dtype in (torch.float64, torch.long) for t in tensors)
    meta = make(device="meta", dtype=torch.complex64)
    assert all(t.device.type == "meta" for t in [*meta.parameters(), *meta.buffers()])
    assert all(t.dtype in (torch.float32, torch.long) for t in meta.parameters())
    if shape is not None:
        out = layer(cplx.randn(*shape, dtype=torch.float64))
        assert out.dtype == torch.float64
