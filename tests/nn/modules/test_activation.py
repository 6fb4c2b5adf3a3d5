"""The split, holomorphic and polar activations, softmaxes and the ratio mask.

Each layer is checked against the same formula written in torch's native
complex128 (through ``torch.polar``, ``Tensor.abs``/``angle`` and torch's
complex functions), values and gradients: for a real loss of a complex
output, torch's native autograd gives ``dL/dRe + i dL/dIm`` of the input,
which the gradients of our two parts must match.
"""

import copy
import io
import math
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx


def _split(f):
    return lambda z: torch.complex(f(z.real), f(z.imag))


def _polar(f):
    return lambda z: torch.polar(f(z.abs()), z.angle())


def _zleaky(a):
    def reference(z):
        phase = z.angle()
        return torch.where((phase >= 0) & (phase <= math.pi / 2), z, a * z)

    return reference


THRESHOLD = torch.tensor([0.3, 0.9, 1.5], dtype=torch.float64)
SLOPE = torch.tensor([0.1, -0.2, 0.5], dtype=torch.float64)

# name -> (layer factory, native complex128 reference)
NATIVE = {
    "split_relu": (cnn.CplxSplitReLU, _split(F.relu)),
    "split_elu": (lambda: cnn.CplxSplitELU(alpha=0.7), _split(lambda x: F.elu(x, 0.7))),
    "split_gelu": (cnn.CplxSplitGELU, _split(F.gelu)),
    "split_gelu_tanh": (lambda: cnn.CplxSplitGELU("tanh"),
                        _split(lambda x: F.gelu(x, approximate="tanh"))),
    "split_tanh": (cnn.CplxSplitTanh, _split(torch.tanh)),
    "split_sigmoid": (cnn.CplxSplitSigmoid, _split(torch.sigmoid)),
    "tanh": (cnn.CplxTanh, torch.tanh),
    "sigmoid": (cnn.CplxSigmoid, lambda z: 1 / (1 + torch.exp(-z))),
    "mod_tanh": (cnn.CplxModTanh, _polar(torch.tanh)),
    "mod_squash": (cnn.CplxModSquash, _polar(lambda r: r * r / (1 + r * r))),
    "mod_log": (cnn.CplxModLog, _polar(torch.log1p)),
    "zabsrelu": (lambda: cnn.CplxZAbsReLU(0.8),
                 lambda z: torch.where(z.abs() >= 0.8, z, torch.zeros_like(z))),
    "zleakyrelu": (lambda: cnn.CplxZLeakyReLU(0.2), _zleaky(0.2)),
    "zabsrelu_channel": (
        lambda: _with_threshold(cnn.CplxZAbsReLU(learnable=True, num_parameters=3)),
        lambda z: torch.where(z.abs() >= THRESHOLD.reshape(3, 1), z, torch.zeros_like(z)),
    ),
    "zleakyrelu_learnable": (lambda: cnn.CplxZLeakyReLU(0.3, learnable=True), _zleaky(0.3)),
    "zleakyrelu_channel": (
        lambda: _with_slope(cnn.CplxZLeakyReLU(learnable=True, num_parameters=3)),
        _zleaky(SLOPE.reshape(3, 1)),
    ),
    "channel_modrelu": (
        lambda: _with_threshold(cnn.CplxChannelModReLU(3)),
        _polar(lambda r: F.relu(r - THRESHOLD.reshape(3, 1))),
    ),
    "phase_softmax": (lambda: cnn.CplxPhaseSoftmax(dim=1),
                      _polar(lambda r: torch.softmax(r, dim=1))),
}


def _with_threshold(layer):
    with torch.no_grad():
        layer.threshold.copy_(THRESHOLD)
    return layer


def _with_slope(layer):
    with torch.no_grad():
        layer.negative_slope.copy_(SLOPE)
    return layer


def _native(z):
    return torch.complex(z.real, z.imag)


def _input(seed=0, shape=(4, 3, 5)):
    generator = torch.Generator().manual_seed(seed)
    parts = torch.randn(2, *shape, dtype=torch.float64, generator=generator)
    return parts[0], parts[1]


@pytest.mark.parametrize("name", NATIVE)
def test_values_and_gradients_match_native(name):
    factory, reference = NATIVE[name]
    layer = factory().double()
    re, im = _input()
    re.requires_grad_(), im.requires_grad_()
    weight = torch.complex(*_input(seed=1))

    out = layer(Cplx(re, im))
    loss = (out.real * weight.real + out.imag * weight.imag).sum()
    grad_re, grad_im = torch.autograd.grad(loss, (re, im))

    z = torch.complex(re.detach(), im.detach()).requires_grad_()
    expected = reference(z)
    (grad,) = torch.autograd.grad((expected * weight.conj()).real.sum(), z)

    torch.testing.assert_close(_native(out.detach()), expected.detach())
    torch.testing.assert_close(torch.complex(grad_re, grad_im), grad)


@pytest.mark.parametrize("name", NATIVE)
def test_gradcheck(name):
    factory, _ = NATIVE[name]
    layer = factory().double()
    re, im = _input(shape=(2, 3, 2))
    inputs = (re.requires_grad_(), im.requires_grad_())
    params = tuple(layer.parameters())

    def function(re, im, *params):
        out = layer(Cplx(re, im))
        return out.real, out.imag

    assert torch.autograd.gradcheck(function, inputs + params)


def test_mag_softmax_matches_native():
    re, im = _input()
    out = cnn.CplxMagSoftmax(dim=-1)(Cplx(re, im))
    torch.testing.assert_close(out, torch.softmax(torch.complex(re, im).abs(), dim=-1))
    re.requires_grad_(), im.requires_grad_()
    assert torch.autograd.gradcheck(
        lambda re, im: cnn.CplxMagSoftmax(dim=1)(Cplx(re, im)), (re, im)
    )


@pytest.mark.parametrize("bounded", [True, False])
def test_ratio_mask_matches_native(bounded):
    m_re, m_im = _input(seed=2)
    y_re, y_im = _input(seed=3, shape=(3, 5))  # broadcast against the mask
    inputs = tuple(t.requires_grad_() for t in (m_re, m_im, y_re, y_im))

    def function(m_re, m_im, y_re, y_im):
        out = cnn.CplxRatioMask(bounded=bounded)(Cplx(m_re, m_im), Cplx(y_re, y_im))
        return out.real, out.imag

    mask, spectrum = torch.complex(m_re, m_im), torch.complex(y_re, y_im)
    if bounded:  # DCCRN-E: |Y| tanh(|M|) e^{i (arg Y + arg M)}
        modulus = spectrum.abs() * torch.tanh(mask.abs())
        expected = torch.polar(modulus, spectrum.angle() + mask.angle())
    else:
        expected = mask * spectrum
    torch.testing.assert_close(torch.complex(*function(*inputs)), expected)
    assert torch.autograd.gradcheck(function, inputs)


# zero or at least 1e-6 in size: with a tinier part beside a large one,
# ``np.angle`` rounds to exactly pi / 2 or 0 and misplaces the quadrant
finite = st.one_of(
    st.just(0.0),
    st.floats(1e-6, 1e3).flatmap(lambda x: st.sampled_from([x, -x])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=8),
       st.floats(0, 1, allow_nan=False), st.floats(0, 10, allow_nan=False))
def test_z_variants_match_numpy(pairs, slope, threshold):
    # zeros and the axes included: the closed quadrant and ``>=`` matter there
    z = np.array([complex(a, b) for a, b in pairs] + [0j, 1 + 0j, 1j, -1 + 0j])
    value = Cplx(torch.from_numpy(z.real.copy()), torch.from_numpy(z.imag.copy()))

    phase = np.angle(z)
    leaky = np.where((phase >= 0) & (phase <= np.pi / 2), z, slope * z)
    out = cplx.zleakyrelu(value, slope)
    np.testing.assert_allclose(out.real.numpy() + 1j * out.imag.numpy(), leaky, rtol=1e-12)

    kept = np.where(np.abs(z) >= threshold, z, 0)
    out = cnn.CplxZAbsReLU(threshold)(value)
    np.testing.assert_allclose(out.real.numpy() + 1j * out.imag.numpy(), kept, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=8))
def test_polar_family_keeps_the_phase_and_bounds_the_modulus(pairs):
    z = np.array([complex(a, b) for a, b in pairs])
    value = Cplx(torch.from_numpy(z.real.copy()), torch.from_numpy(z.imag.copy()))
    moduli = {
        cplx.modtanh: np.tanh(np.abs(z)),
        cplx.modsquash: np.abs(z) ** 2 / (1 + np.abs(z) ** 2),
        cplx.modlog: np.log1p(np.abs(z)),
    }
    for function, modulus in moduli.items():
        out = function(value)
        expected = modulus * np.exp(1j * np.angle(z))
        np.testing.assert_allclose(
            out.real.numpy() + 1j * out.imag.numpy(), expected, rtol=1e-12, atol=1e-300
        )


@pytest.mark.parametrize("function", [cplx.modtanh, cplx.modlog])
def test_polar_tanh_and_log_are_the_identity_to_first_order_at_zero(function):
    # tanh(r) / r and log(1 + r) / r tend to 1: the Jacobian at 0 is the identity
    re = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    im = torch.zeros(3, dtype=torch.float64)
    out = function(Cplx(re, im))
    assert torch.equal(out.real, torch.zeros(3, dtype=torch.float64))
    (grad,) = torch.autograd.grad(out.real.sum(), re)
    torch.testing.assert_close(grad, torch.ones(3, dtype=torch.float64))


def test_at_zero_everything_is_finite():
    zero = Cplx(torch.zeros(2, 3, requires_grad=True), torch.zeros(2, 3, requires_grad=True))
    for name, (factory, _) in NATIVE.items():
        out = factory().float()(zero)
        grads = torch.autograd.grad((out.real + out.imag).sum(), (zero.real, zero.imag))
        assert all(torch.isfinite(t).all() for t in (out.real, out.imag, *grads)), name
    out = cnn.CplxPhaseSoftmax(dim=1)(zero)
    torch.testing.assert_close(out.real, torch.full((2, 3), 1 / 3))


def test_holomorphic_sigmoid_saturates_far_from_the_poles():
    re = torch.tensor([-800.0, 800.0], dtype=torch.float64, requires_grad=True)
    im = torch.tensor([1.0, 1.0], dtype=torch.float64, requires_grad=True)
    out = cplx.sigmoid(Cplx(re, im))
    torch.testing.assert_close(out.real, torch.tensor([0.0, 1.0], dtype=torch.float64))
    torch.testing.assert_close(out.imag, torch.zeros(2, dtype=torch.float64))
    grads = torch.autograd.grad(out.real.sum(), (re, im))
    assert all(torch.isfinite(g).all() for g in grads)


def test_split_layers_are_the_promotions_without_inplace():
    pairs = [(cnn.CplxSplitReLU, torch.nn.ReLU), (cnn.CplxSplitELU, torch.nn.ELU),
             (cnn.CplxSplitGELU, torch.nn.GELU), (cnn.CplxSplitTanh, torch.nn.Tanh),
             (cnn.CplxSplitSigmoid, torch.nn.Sigmoid)]
    for layer, base in pairs:
        assert issubclass(layer, cnn.CplxToCplx[base])
        assert not getattr(layer(), "inplace", False)
    # an in-place split ReLU would overwrite the input's parts
    re, im = torch.randn(5, requires_grad=True), torch.randn(5, requires_grad=True)
    z = Cplx(re * 1, im * 1)
    out = cnn.CplxSplitReLU()(z)
    (out.real.sum() + out.imag.sum()).backward()
    assert torch.equal(re.grad, (re > 0).float()) and torch.equal(z.real, re * 1)


ALL = {name: factory for name, (factory, _) in NATIVE.items()} | {
    "mag_softmax": lambda: cnn.CplxMagSoftmax(dim=-1),
}


def _out(layer, z):
    out = layer(z)
    return torch.stack([out.real, out.imag]) if isinstance(out, Cplx) else out


@pytest.mark.parametrize("name", ALL)
def test_to_deepcopy_pickle_and_state_dict(name):
    layer = ALL[name]()
    z = Cplx(*_input())
    expected = _out(layer.double(), z)
    for copied in (copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        torch.testing.assert_close(_out(copied, z), expected)
    fresh = ALL[name]().double()
    if name == "channel_modrelu":
        torch.nn.init.normal_(fresh.threshold)
    fresh.load_state_dict(layer.state_dict())
    torch.testing.assert_close(_out(fresh, z), expected)
    single = _out(layer.to(torch.float32), Cplx(z.real.float(), z.imag.float()))
    assert single.dtype == torch.float32
    torch.testing.assert_close(single, expected.float())


class Everything(torch.nn.Module):
    """Every new layer on the same input, plus the ratio mask, summed into one real tensor."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([factory() for factory in ALL.values()])
        self.mask = cnn.CplxRatioMask()

    def forward(self, re, im):
        z = Cplx(re, im)
        out = self.mask(z, z)
        total = out.real + out.imag
        for layer in self.layers:
            out = layer(z)
            total = total + (out.real + out.imag if isinstance(out, Cplx) else out)
        return total


@pytest.mark.inductor
def test_everything_compiles_fullgraph_with_gradients():
    model = Everything()
    re, im = (t.float().requires_grad_() for t in _input())
    expected = model(re, im)
    grads = torch.autograd.grad(expected.sum(), (re, im))
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    out = compiled(re, im)
    compiled_grads = torch.autograd.grad(out.sum(), (re, im))
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(compiled_grads, grads)


@pytest.mark.onnx
def test_everything_exports_to_onnx():
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    model = Everything()
    re, im = (t.float() for t in _input())
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (re, im), buffer, dynamo=False)
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    (output,) = session.run(None, dict(zip(names, (re.numpy(), im.numpy()))))
    torch.testing.assert_close(torch.from_numpy(output), model(re, im), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ALL)
def test_a_real_tensor_is_refused_naming_the_layer(name):
    layer = ALL[name]()
    with pytest.raises(TypeError, match=rf"^{layer._get_name()}: `input` must be a Cplx"):
        layer(torch.randn(4, 3))


def test_ratio_mask_names_the_argument():
    z = cplx.randn(4, 3)
    with pytest.raises(TypeError, match=r"^CplxRatioMask: `mask` must be a Cplx"):
        cnn.CplxRatioMask()(torch.randn(4, 3), z)
    with pytest.raises(TypeError, match=r"^CplxRatioMask: `input` must be a Cplx"):
        cnn.CplxRatioMask()(z, torch.randn(4, 3))
    with pytest.raises(TypeError, match=r"^ratio_mask: `mask` must be a Cplx"):
        cplx.ratio_mask(torch.randn(4, 3), z)


@pytest.mark.parametrize("function", [cplx.sigmoid, cplx.modtanh, cplx.modsquash, cplx.modlog,
                                      cplx.zabsrelu, cplx.zleakyrelu])
def test_functions_refuse_a_real_tensor(function):
    with pytest.raises(TypeError, match=rf"^{function.__name__}: `input` must be a Cplx"):
        function(torch.randn(3))


@pytest.mark.parametrize("make, error, message", [
    (lambda: cnn.CplxSplitELU(alpha="1"), TypeError, "CplxSplitELU: `alpha` must be a number"),
    (lambda: cnn.CplxSplitGELU("erf"), ValueError, "CplxSplitGELU: `approximate` must be"),
    (lambda: cnn.CplxZAbsReLU(-1.0), ValueError, "CplxZAbsReLU: `threshold` must be a number >= 0"),
    (lambda: cnn.CplxZAbsReLU(True), TypeError, "CplxZAbsReLU: `threshold` must be a number"),
    (lambda: cnn.CplxZLeakyReLU(None), TypeError, "CplxZLeakyReLU: `negative_slope` must be"),
    (lambda: cnn.CplxChannelModReLU(0), ValueError, "CplxChannelModReLU: `num_channels` must be"),
    (lambda: cnn.CplxChannelModReLU(2.0), TypeError, "CplxChannelModReLU: `num_channels` must be"),
    (lambda: cnn.CplxPhaseSoftmax(dim=None), TypeError, "CplxPhaseSoftmax: `dim` must be an int"),
    (lambda: cnn.CplxMagSoftmax(dim=0.5), TypeError, "CplxMagSoftmax: `dim` must be an int"),
    (lambda: cnn.CplxRatioMask(bounded=1), TypeError, "CplxRatioMask: `bounded` must be a bool"),
])
def test_bad_constructor_arguments(make, error, message):
    with pytest.raises(error, match="^" + message):
        make()


@pytest.mark.parametrize("make, error, message", [
    (lambda cls: cls(learnable=1), TypeError, "`learnable` must be a bool"),
    (lambda cls: cls(learnable=True, num_parameters=0), ValueError, "`num_parameters` must be"),
    (lambda cls: cls(learnable=True, num_parameters=2.0), TypeError, "`num_parameters` must be"),
    (lambda cls: cls(num_parameters=3), ValueError,
     "`num_parameters` above 1 needs `learnable=True`"),
])
@pytest.mark.parametrize("cls", [cnn.CplxZAbsReLU, cnn.CplxZLeakyReLU])
def test_learnable_value_arguments_are_checked(cls, make, error, message):
    with pytest.raises(error, match=f"^{cls.__name__}: {message}"):
        make(cls)


def test_learnable_slope_gradient_matches_native_autograd():
    # the slope's gradient, per channel, against torch's complex autograd
    # of the same formula; zeros and the half-axes included
    re, im = _input(shape=(4, 3, 5))
    re[0, :, :2], im[0, :, :2] = 0.0, 0.0
    re[1, :, 0], im[1, :, 1] = 0.0, 0.0
    layer = _with_slope(cnn.CplxZLeakyReLU(learnable=True, num_parameters=3, dtype=torch.float64))
    weight = torch.complex(*_input(seed=1, shape=(4, 3, 5)))
    out = layer(Cplx(re, im))
    (out.real * weight.real + out.imag * weight.imag).sum().backward()

    slope = SLOPE.clone().requires_grad_()
    z = torch.complex(re, im)
    expected = _zleaky(slope.reshape(3, 1))(z)
    (grad,) = torch.autograd.grad((expected * weight.conj()).real.sum(), slope)
    torch.testing.assert_close(layer.negative_slope.grad, grad)


@pytest.mark.parametrize("cls", [cnn.CplxZAbsReLU, cnn.CplxZLeakyReLU])
def test_learnable_values_gradcheck_with_exact_zeros(cls):
    layer = cls(0.7, learnable=True, num_parameters=3, dtype=torch.float64)
    (value,) = layer.parameters()

    def function(re, im, value):
        out = torch.func.functional_call(layer, {layer._value_name: value}, (Cplx(re, im),))
        return out.real, out.imag

    re, im = _input(shape=(2, 3, 4))
    assert torch.autograd.gradcheck(function, (re.requires_grad_(), im.requires_grad_(), value))
    # at zero the leaky zReLU has a kink in z (as the ReLU at 0), not in its slope
    re, im = re.detach().clone(), im.detach().clone()
    re[0, :, :2], im[0, :, :2] = 0.0, 0.0
    assert torch.autograd.gradcheck(function, (re, im, value))
    inputs = (re.requires_grad_(), im.requires_grad_(), value)
    grads = torch.autograd.grad(sum(t.sum() for t in function(*inputs)), inputs)
    assert all(g.isfinite().all() for g in grads)


def test_learnable_threshold_gets_a_zero_gradient_not_none():
    # zAbsReLU is a step in its threshold: the exact derivative is zero, and
    # it reaches the parameter (DDP refuses one that gets no gradient)
    layer = cnn.CplxZAbsReLU(0.5, learnable=True)
    z = cplx.randn(4, 3)
    out = layer(z)
    (out.real.sum() + out.imag.sum()).backward()
    assert torch.equal(layer.threshold.grad, torch.zeros(1))
    with torch.no_grad():
        assert layer(z).real.grad_fn is None


@pytest.mark.parametrize("cls, name", [(cnn.CplxZAbsReLU, "threshold"),
                                       (cnn.CplxZLeakyReLU, "negative_slope")])
def test_learnable_value_is_a_prelu_style_parameter(cls, name):
    layer = cls(0.25, learnable=True, num_parameters=3, dtype=torch.float64)
    value = getattr(layer, name)
    assert isinstance(value, torch.nn.Parameter) and value.dtype == torch.float64
    assert torch.equal(value, torch.full((3,), 0.25, dtype=torch.float64))
    assert [k for k, _ in layer.named_parameters()] == [name]
    with torch.no_grad():
        value.zero_()
    layer.reset_parameters()
    assert torch.equal(value, torch.full((3,), 0.25, dtype=torch.float64))
    assert repr(layer) == f"{cls.__name__}({name}=0.25, learnable=True, num_parameters=3)"
    # meta init, then to_empty() and reset_parameters(), as torch's deferred init
    meta = cls(0.25, learnable=True, num_parameters=3, device="meta")
    meta = meta.to_empty(device="cpu")
    meta.reset_parameters()
    assert torch.equal(getattr(meta, name), torch.full((3,), 0.25))
    # a shared learnable value keeps the input's shape, a 0-dim input's too
    shared = cls(0.25, learnable=True)
    assert shared(cplx.randn(())).shape == () and shared(cplx.randn(2, 5, 7)).shape == (2, 5, 7)
    assert not cls().learnable and list(cls().parameters()) == []


@pytest.mark.parametrize("cls", [cnn.CplxZAbsReLU, cnn.CplxZLeakyReLU])
def test_per_channel_value_refuses_a_wrong_channel_count(cls):
    layer = cls(learnable=True, num_parameters=3)
    before = copy.deepcopy(layer.state_dict())
    for shape in [(4, 2, 5), (3,)]:
        with pytest.raises(ValueError, match=rf"^{cls.__name__}: `input` must have shape "
                                             r"\(N, 3, \*\), got shape"):
            layer(cplx.randn(*shape))
    assert all(torch.equal(before[k], v) for k, v in layer.state_dict().items())
    # any number of trailing dimensions
    for shape in [(4, 3), (4, 3, 5), (2, 3, 4, 4)]:
        assert layer(cplx.randn(*shape)).shape == shape


def test_channel_modrelu_refuses_a_wrong_channel_count_and_stays_unchanged():
    layer = _with_threshold(cnn.CplxChannelModReLU(3, dtype=torch.float64))
    before = copy.deepcopy(layer.state_dict())
    with pytest.raises(ValueError, match=r"^CplxChannelModReLU: `input` must have shape "
                                         r"\(N, 3, \*\), got shape \(4, 2, 5\)"):
        layer(Cplx(*_input(shape=(4, 2, 5))))
    assert all(torch.equal(before[k], v) for k, v in layer.state_dict().items())
    # the same layer serves any number of spatial dimensions
    for shape in [(4, 3), (4, 3, 5), (2, 3, 4, 4)]:
        z = torch.complex(*_input(shape=shape))
        out = layer(Cplx(z.real, z.imag))
        b = THRESHOLD.reshape(3, *(1,) * (len(shape) - 2))
        torch.testing.assert_close(_native(out), torch.polar(F.relu(z.abs() - b), z.angle()))
