"""Per-channel scaling and efficient channel attention against torch's native complex128.

The references compute the maps from their definitions on complex128
tensors: a scale per channel broadcast along dim 1; for ECA, the channel
means, a zero-padded cross-correlation across channels written as a sum of
shifted copies, and the gate :math:`\\sigma(|a|) e^{i \\arg a}` (or
:math:`\\sigma(|a|)`) from :func:`torch.polar`. Gradients are torch's complex
autograd's (``z.grad`` is :math:`\\partial L / \\partial x + i \\partial L /
\\partial y` for a real loss :math:`L`).
"""

import copy
import math

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from cplxmodule.nn import _kinds
from tests.helpers import as_native


def _from_native(z):
    return Cplx(z.real, z.imag)


pytestmark = pytest.mark.usefixtures("one_thread")

F64 = torch.float64


def _native(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(shape, generator=g, dtype=F64),
                         torch.randn(shape, generator=g, dtype=F64))


def _loss_weights(shape, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=F64), torch.randn(shape, generator=g, dtype=F64)


def _loss(out, weights):
    return (out.real * weights[0] + out.imag * weights[1]).sum()


def _grad(param):
    return torch.complex(param.real.grad, param.imag.grad)


def _set(param, value):
    with torch.no_grad():
        param.real.copy_(value.real)
        param.imag.copy_(value.imag)


# --- CplxScaling ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (2, 4, 3, 2)])
def test_scaling_matches_native(shape):
    x, s = _native(*shape), _native(4, seed=2)
    layer = cnn.CplxScaling(4).double()
    _set(layer.weight, s)
    xr, xi = x.real.clone().requires_grad_(), x.imag.clone().requires_grad_()
    out = layer(Cplx(xr, xi))
    view = (4,) + (1,) * (len(shape) - 2)
    torch.testing.assert_close(as_native(out), x * s.reshape(view), rtol=1e-12, atol=1e-12)

    weights = _loss_weights(shape)
    _loss(out, weights).backward()
    xn, sn = x.clone().requires_grad_(), s.clone().requires_grad_()
    _loss(xn * sn.reshape(view), weights).backward()
    torch.testing.assert_close(torch.complex(xr.grad, xi.grad), xn.grad)
    torch.testing.assert_close(_grad(layer.weight), sn.grad)


def test_scaling_starts_as_the_identity_with_complex_state():
    layer = cnn.CplxScaling(3)
    x = cplx.randn(2, 3, 4)
    out = layer(x)
    assert torch.equal(out.real, x.real) and torch.equal(out.imag, x.imag)
    assert sorted(layer.state_dict()) == ["weight.imag", "weight.real"]


def test_scaling_slices_with_its_channels():
    layer = cnn.CplxScaling(5).double()
    _set(layer.weight, _native(5, seed=4))
    x = _from_native(_native(2, 5, 3))
    (kind,) = _kinds.kinds_of(cnn.CplxScaling)
    index = torch.tensor([0, 3, 4])
    sliced = copy.deepcopy(layer)
    kind.slice(sliced, index)
    assert sliced.num_features == 3 and isinstance(sliced.weight, cnn.CplxParameter)
    part = sliced(Cplx(x.real[:, index], x.imag[:, index]))
    full = layer(x)
    torch.testing.assert_close(part.real, full.real[:, index])
    torch.testing.assert_close(part.imag, full.imag[:, index])


def test_scaling_refuses_bad_arguments_naming_the_layer():
    with pytest.raises(ValueError, match=r"CplxScaling: `num_features`"):
        cnn.CplxScaling(0)
    with pytest.raises(TypeError, match=r"CplxScaling: `num_features`"):
        cnn.CplxScaling(2.0)
    with pytest.raises(ValueError, match=r"CplxScaling: `input` must have shape \(N, 3, \*\)"):
        cnn.CplxScaling(3)(cplx.randn(2, 4))
    with pytest.raises(TypeError, match=r"CplxScaling: `input`"):
        cnn.CplxScaling(3)(torch.ones(2, 3))


# --- efficient channel attention -------------------------------------------------------------


def _native_eca(x, w, gate):
    """ECA from its definition: channel means, a padded sum of shifted copies, the gate."""
    means = x.mean(dim=tuple(range(2, x.dim())))
    k, c = len(w), x.shape[1]
    padded = torch.nn.functional.pad(torch.view_as_real(means), (0, 0, k // 2, k // 2))
    padded = torch.view_as_complex(padded.contiguous())
    scores = sum(w[j] * padded[:, j:j + c] for j in range(k))
    if gate == "phase":
        scale = torch.polar(torch.sigmoid(scores.abs()), scores.angle())
    else:
        scale = torch.sigmoid(scores.abs()).to(x.dtype)
    return x * scale.reshape(*scale.shape, *(1,) * (x.dim() - 2))


ECAS = [(cnn.CplxECA1d, (2, 6, 5)), (cnn.CplxECA2d, (2, 6, 3, 4)), (cnn.CplxECA3d, (2, 6, 2, 3, 2))]


@pytest.mark.parametrize("gate", ["phase", "modulus"])
@pytest.mark.parametrize("cls, shape", ECAS, ids=["1d", "2d", "3d"])
def test_eca_matches_native(cls, shape, gate):
    x, w = _native(*shape), _native(3, seed=5)
    layer = cls(6, kernel_size=3, gate=gate).double()
    _set(layer.weight, w)
    xr, xi = x.real.clone().requires_grad_(), x.imag.clone().requires_grad_()
    out = layer(Cplx(xr, xi))
    torch.testing.assert_close(as_native(out), _native_eca(x, w, gate), rtol=1e-12, atol=1e-12)

    weights = _loss_weights(shape)
    _loss(out, weights).backward()
    xn, wn = x.clone().requires_grad_(), w.clone().requires_grad_()
    _loss(_native_eca(xn, wn, gate), weights).backward()
    torch.testing.assert_close(torch.complex(xr.grad, xi.grad), xn.grad)
    torch.testing.assert_close(_grad(layer.weight), wn.grad)


def test_eca_wide_kernel_reaches_the_padded_edges():
    x, w = _native(2, 4, 3), _native(5, seed=6)
    out = cplx.efficient_channel_attention(_from_native(x), _from_native(w))
    torch.testing.assert_close(as_native(out), _native_eca(x, w, "phase"))


@pytest.mark.parametrize("channels", [1, 16, 64, 256, 512, 1024, 2048])
def test_eca_kernel_size_follows_the_paper(channels):
    # the rule of Wang et al.: the odd integer nearest above int((log2 C + b) / gamma)
    t = int((math.log2(channels) + 1) / 2)
    expected = t + 1 - t % 2
    assert cplx.eca_kernel_size(channels) == expected
    assert cnn.CplxECA2d(channels).kernel_size == expected
    assert cnn.CplxECA2d(channels).weight.shape == (expected,)
    assert cplx.eca_kernel_size(channels, gamma=1, b=0) % 2 == 1


def test_eca_refuses_bad_arguments_naming_the_layer():
    with pytest.raises(ValueError, match=r"CplxECA2d: `kernel_size` must be odd"):
        cnn.CplxECA2d(8, kernel_size=4)
    with pytest.raises(ValueError, match=r"CplxECA1d: `gate`"):
        cnn.CplxECA1d(8, gate="sigmoid")
    with pytest.raises(ValueError, match=r"CplxECA3d: `channels`"):
        cnn.CplxECA3d(0)
    with pytest.raises(ValueError, match=r"CplxECA2d: `input` must have shape \(N, 4, \*, \*\)"):
        cnn.CplxECA2d(4)(cplx.randn(2, 4, 3))
    with pytest.raises(ValueError, match=r"CplxECA1d: `input`"):
        cnn.CplxECA1d(4)(cplx.randn(2, 5, 3))
    with pytest.raises(ValueError, match=r"efficient_channel_attention: `weight`"):
        cplx.efficient_channel_attention(cplx.randn(2, 4, 3), cplx.randn(2))


def test_compact_removes_channels_through_a_scaling():
    from cplxmodule.nn.masked import compact

    torch.manual_seed(0)
    model = cnn.CplxSequential(
        cnn.CplxConv1d(2, 6, 3), cnn.CplxScaling(6), cnn.CplxConv1d(6, 3, 1)
    ).double().eval()
    with torch.no_grad():
        _set(model[1].weight, _native(6, seed=7))
        for part in (model[0].weight.real, model[0].weight.imag):
            part[[1, 4]] = 0  # constant channels (the bias): folded into the next bias
        for part in (model[2].weight.real, model[2].weight.imag):
            part[:, 2] = 0  # a channel never read
        x = _from_native(_native(4, 2, 7, seed=8))
        expected = model(x)
        small = compact(model)
        out = small(x)
    assert (small[0].out_channels, small[1].num_features, small[2].in_channels) == (3, 3, 3)
    torch.testing.assert_close(as_native(out), as_native(expected))
