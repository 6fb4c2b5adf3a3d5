"""The polar activations against torch's native complex128: values, gradients, zero, errors.

The reference of :math:`f(|z|) e^{i g(\\arg z)}` is :func:`torch.polar` of
:func:`torch.abs` and :func:`torch.angle` of a complex128 tensor, its
gradients those of torch's complex autograd (for a real loss
:math:`L`, ``z.grad`` is :math:`\\partial L / \\partial x + i \\partial L /
\\partial y`).
"""

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from tests.helpers import as_native


def _from_native(z):
    return Cplx(z.real, z.imag)


pytestmark = pytest.mark.usefixtures("one_thread")

F64 = torch.float64


def _native_input(seed=0, shape=(4, 5)):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(shape, generator=g, dtype=F64),
                         torch.randn(shape, generator=g, dtype=F64))


def _ours_and_native_grads(fn_ours, fn_native, z, seed=1):
    """The gradients of one random real loss of the output, ours (on the parts) and torch's."""
    g = torch.Generator().manual_seed(seed)
    wr, wi = torch.randn(z.shape, generator=g, dtype=F64), torch.randn(z.shape, generator=g, dtype=F64)
    re, im = z.real.clone().requires_grad_(), z.imag.clone().requires_grad_()
    out = fn_ours(Cplx(re, im))
    (out.real * wr + out.imag * wi).sum().backward()
    zn = z.clone().requires_grad_()
    outn = fn_native(zn)
    (outn.real * wr + outn.imag * wi).sum().backward()
    return torch.complex(re.grad, im.grad), zn.grad


def _native_phase_sigmoid(z):
    return torch.polar(torch.sigmoid(z.abs()), z.angle())


def test_phase_sigmoid_matches_native_away_from_zero():
    z = _native_input()
    out = cnn.CplxPhaseSigmoid()(_from_native(z))
    torch.testing.assert_close(as_native(out), _native_phase_sigmoid(z), rtol=1e-12, atol=1e-12)
    ours, ref = _ours_and_native_grads(cplx.phase_sigmoid, _native_phase_sigmoid, z)
    torch.testing.assert_close(ours, ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_phase_sigmoid_is_zero_at_zero_with_a_zero_gradient(dtype):
    re = torch.tensor([0.0, 3.0], dtype=dtype, requires_grad=True)
    im = torch.tensor([0.0, 4.0], dtype=dtype, requires_grad=True)
    out = cplx.phase_sigmoid(Cplx(re, im))
    assert out.real[0] == 0 and out.imag[0] == 0 and out.dtype == dtype
    (out.real + out.imag).sum().backward()
    assert re.grad[0] == 0 and im.grad[0] == 0
    assert torch.isfinite(re.grad).all() and torch.isfinite(im.grad).all()


MAPS = {
    "tanh": (torch.tanh, None),
    "softplus-phase2": (torch.nn.Softplus(), lambda phase: 2 * phase),
    "sigmoid": (torch.sigmoid, None),
    "sqrt-sin": (torch.sqrt, torch.sin),
}


def _native_polar(f, g):
    return lambda z: torch.polar(f(z.abs()), z.angle() if g is None else g(z.angle()))


@pytest.mark.parametrize("f, g", MAPS.values(), ids=list(MAPS))
def test_polar_matches_native(f, g):
    z = _native_input()
    layer = cnn.CplxPolar(f, g)
    out = layer(_from_native(z))
    torch.testing.assert_close(as_native(out), _native_polar(f, g)(z), rtol=1e-12, atol=1e-12)
    ours, ref = _ours_and_native_grads(layer, _native_polar(f, g), z)
    torch.testing.assert_close(ours, ref, rtol=1e-9, atol=1e-9)


class _Power(torch.nn.Module):
    """:math:`a r^2` with a learnable :math:`a`: a map with a parameter."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.7, dtype=F64))

    def forward(self, r):
        return self.a * r * r


def test_polar_trains_the_parameters_of_its_maps():
    z = _native_input()
    power = _Power()
    layer = cnn.CplxPolar(power)
    assert [name for name, _ in layer.named_parameters()] == ["modulus_fn.a"]
    layer(_from_native(z)).real.sum().backward()
    a = power.a.detach().clone().requires_grad_()
    torch.polar(a * z.abs() ** 2, z.angle()).real.sum().backward()
    torch.testing.assert_close(power.a.grad, a.grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, g", MAPS.values(), ids=list(MAPS))
def test_polar_at_zero_is_the_native_value_with_a_finite_gradient(f, g):
    z = torch.zeros(3, dtype=torch.complex128)
    out = cnn.CplxPolar(f, g)(_from_native(z))
    torch.testing.assert_close(as_native(out), _native_polar(f, g)(z), rtol=0, atol=1e-300)
    re, im = torch.zeros(3, dtype=F64, requires_grad=True), torch.zeros(3, dtype=F64, requires_grad=True)
    out = cplx.polar_activation(Cplx(re, im), f, g)
    (out.real + out.imag).sum().backward()
    assert torch.isfinite(re.grad).all() and torch.isfinite(im.grad).all()


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_polar_of_tanh_is_modtanh_gradient_at_zero_included(dtype):
    g = torch.Generator().manual_seed(3)
    parts = torch.randn(2, 7, generator=g).to(dtype)
    parts[:, 0] = 0
    grads = []
    for layer in (cnn.CplxPolar(torch.tanh), cnn.CplxModTanh()):
        re, im = parts[0].clone().requires_grad_(), parts[1].clone().requires_grad_()
        out = layer(Cplx(re, im))
        (out.real * 2 + out.imag * 3).sum().backward()
        grads.append((out.real.detach(), out.imag.detach(), re.grad, im.grad))
    for ours, theirs in zip(*grads):
        torch.testing.assert_close(ours, theirs)
    # tangent to the identity at zero
    assert grads[0][2][0] == 2 and grads[0][3][0] == 3


def test_polar_with_a_jump_at_zero_has_zero_gradient_there():
    re, im = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    out = cnn.CplxPolar(torch.sigmoid)(Cplx(re, im))
    torch.testing.assert_close(out.real, torch.full((2,), 0.5))
    (out.real + out.imag).sum().backward()
    assert (re.grad == 0).all() and (im.grad == 0).all()


def test_polar_refuses_bad_maps_naming_the_layer():
    with pytest.raises(TypeError, match=r"CplxPolar: `modulus_fn` must be callable"):
        cnn.CplxPolar(None)
    with pytest.raises(TypeError, match=r"CplxPolar: `phase_fn` must be callable"):
        cnn.CplxPolar(torch.tanh, 2.0)
    with pytest.raises(ValueError, match=r"CplxPolar: `modulus_fn` must return .* shape"):
        cnn.CplxPolar(lambda r: r.sum())(cplx.randn(3))
    with pytest.raises(TypeError, match=r"CplxPolar: `phase_fn` must return a real"):
        cnn.CplxPolar(torch.tanh, lambda phase: phase > 0)(cplx.randn(3))
    with pytest.raises(TypeError, match=r"polar_activation: `input`"):
        cplx.polar_activation(torch.ones(3), torch.tanh)


@pytest.mark.parametrize("layer", [cnn.CplxPhaseSigmoid(), cnn.CplxPolar(torch.tanh)])
def test_layers_refuse_a_real_input_naming_themselves(layer):
    with pytest.raises(TypeError, match=f"{type(layer).__name__}: `input`"):
        layer(torch.ones(3))


# --- min-max normalisation of the moduli ----------------------------------------------------


def _native_minmax(z, dim):
    r = z.abs()
    low = r.min() if dim is None else r.amin(dim=dim, keepdim=True)
    high = r.max() if dim is None else r.amax(dim=dim, keepdim=True)
    return torch.polar((r - low) / (high - low), z.angle())


@pytest.mark.parametrize("dim", [None, 0, -1])
def test_minmax_norm_matches_native(dim):
    z = _native_input()
    layer = cnn.CplxMagMinMaxNorm(dim)
    out = layer(_from_native(z))
    torch.testing.assert_close(as_native(out), _native_minmax(z, dim), rtol=1e-12, atol=1e-12)
    ours, ref = _ours_and_native_grads(layer, lambda zn: _native_minmax(zn, dim), z)
    torch.testing.assert_close(ours, ref, rtol=1e-9, atol=1e-9)


def test_minmax_norm_is_zero_where_the_extremes_agree_and_at_zero():
    re = torch.tensor([[3.0, -3.0], [0.0, 1.0]], dtype=F64, requires_grad=True)
    im = torch.tensor([[4.0, 4.0], [0.0, 1.0]], dtype=F64, requires_grad=True)
    out = cplx.magnitude_minmax_norm(Cplx(re, im), dim=1)
    # row 0: equal moduli; row 1: zero is the minimum
    torch.testing.assert_close(out.real, torch.tensor([[0.0, 0.0], [0.0, 2 ** -0.5]], dtype=F64))
    (out.real + out.imag).sum().backward()
    assert torch.isfinite(re.grad).all() and torch.isfinite(im.grad).all()
    assert re.grad[1, 0] == 0 and im.grad[1, 0] == 0


def test_minmax_norm_refuses_bad_dims_naming_the_layer():
    with pytest.raises(TypeError, match=r"CplxMagMinMaxNorm: `dim`"):
        cnn.CplxMagMinMaxNorm(1.0)
    with pytest.raises(IndexError, match=r"CplxMagMinMaxNorm: `dim`"):
        cnn.CplxMagMinMaxNorm(2)(cplx.randn(3, 4))
    with pytest.raises(IndexError, match=r"magnitude_minmax_norm: `dim`"):
        cplx.magnitude_minmax_norm(cplx.randn(3, 4), dim=-3)
