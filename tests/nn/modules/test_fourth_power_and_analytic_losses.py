"""The fourth-power and analytic-signal losses against independent complex128 references.

The fourth-power loss against :math:`|x - y|^4` of native complex tensors,
with torch's complex autograd for the gradient; the analytic-signal loss
against the analytic signal from :func:`numpy.fft.fft` (zero the negative
frequencies, double the positive ones) for the value and torch's own FFT on
native complex tensors for the gradient.
"""

import numpy as np
import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx


def _from_native(z):
    return Cplx(z.real, z.imag)


pytestmark = pytest.mark.usefixtures("one_thread")

F64 = torch.float64


def _native(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(shape, generator=g, dtype=F64),
                         torch.randn(shape, generator=g, dtype=F64))


def _leaf(z):
    return z.real.clone().requires_grad_(), z.imag.clone().requires_grad_()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_fourth_power_matches_native(reduction):
    x, y = _native(3, 4), _native(3, 4, seed=1)
    xr, xi = _leaf(x)
    loss = cnn.losses.CplxFourthPowerLoss(reduction=reduction)(Cplx(xr, xi), _from_native(y))
    xn = x.clone().requires_grad_()
    per_element = (xn - y).abs() ** 4
    ref = {"mean": per_element.mean(), "sum": per_element.sum(), "none": per_element}[reduction]
    torch.testing.assert_close(loss, ref.detach(), rtol=1e-12, atol=1e-12)
    w = torch.randn(loss.shape, generator=torch.Generator().manual_seed(2), dtype=F64)
    (loss * w).sum().backward()
    (ref * w).sum().backward()
    torch.testing.assert_close(torch.complex(xr.grad, xi.grad), xn.grad)


def test_fourth_power_refuses_bad_operands_naming_the_layer():
    loss = cnn.losses.CplxFourthPowerLoss()
    with pytest.raises(ValueError, match=r"CplxFourthPowerLoss: `target` must have the shape"):
        loss(cplx.randn(3), cplx.randn(4))
    with pytest.raises(TypeError, match=r"CplxFourthPowerLoss: `input`"):
        loss(torch.ones(3), cplx.randn(3))
    with pytest.raises(ValueError, match=r"CplxFourthPowerLoss: `reduction`"):
        cnn.losses.CplxFourthPowerLoss(reduction="max")


@pytest.mark.parametrize("dim, length", [(-1, 16), (-1, 15), (0, 7)])
def test_analytic_signal_matches_numpy(dim, length):
    shape = (length, 3) if dim == 0 else (3, length)
    z = _native(*shape)
    layer = cnn.losses.CplxAnalyticSignalLoss(dim=dim, reduction="none")
    loss = layer(_from_native(z))
    transform = _numpy_hilbert(z.real.numpy(), dim)
    ref = (z.imag.numpy() - transform) ** 2
    np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-10, atol=1e-12)
    mean = cnn.losses.CplxAnalyticSignalLoss(dim=dim)(_from_native(z))
    np.testing.assert_allclose(mean.item(), ref.mean(), rtol=1e-10)


def _numpy_hilbert(x, axis):
    """The Hilbert transform of the real array ``x`` along ``axis``, by numpy's FFT."""
    n = x.shape[axis]
    gain = np.zeros(n)
    gain[0] = 1
    gain[1:(n + 1) // 2] = 2
    if n % 2 == 0:
        gain[n // 2] = 1
    shape = [1] * x.ndim
    shape[axis] = n
    return np.fft.ifft(np.fft.fft(x, axis=axis) * gain.reshape(shape), axis=axis).imag


def _native_analytic_loss(z):
    """The loss on a native tensor, by torch's FFT with the analytic signal's gains."""
    n = z.shape[-1]
    gain = torch.zeros(n, dtype=F64)
    gain[0] = 1
    gain[1:(n + 1) // 2] = 2
    if n % 2 == 0:
        gain[n // 2] = 1
    transform = torch.fft.ifft(torch.fft.fft(z.real) * gain).imag
    return ((z.imag - transform) ** 2).mean()


def test_analytic_signal_gradient_matches_native():
    z = _native(2, 10)
    re, im = _leaf(z)
    cnn.losses.CplxAnalyticSignalLoss()(Cplx(re, im)).backward()
    zn = z.clone().requires_grad_()
    _native_analytic_loss(zn).backward()
    torch.testing.assert_close(torch.complex(re.grad, im.grad), zn.grad)


def test_an_analytic_signal_has_zero_loss_and_its_conjugate_does_not():
    t = torch.arange(32, dtype=F64)
    z = Cplx(torch.cos(2 * torch.pi * 3 * t / 32), torch.sin(2 * torch.pi * 3 * t / 32))
    assert cplx.analytic_signal_loss(z) < 1e-24
    torch.testing.assert_close(cplx.analytic_signal_loss(z.conj), torch.tensor(2.0, dtype=F64))


def test_analytic_signal_refuses_bad_arguments_naming_the_layer():
    name = "CplxAnalyticSignalLoss"
    with pytest.raises(TypeError, match=f"{name}: `dim`"):
        cnn.losses.CplxAnalyticSignalLoss(dim=1.0)
    with pytest.raises(ValueError, match=f"{name}: `reduction`"):
        cnn.losses.CplxAnalyticSignalLoss(reduction="max")
    with pytest.raises(TypeError, match=f"{name}: `input`"):
        cnn.losses.CplxAnalyticSignalLoss()(torch.ones(4))
    with pytest.raises(IndexError, match=f"{name}: `dim`"):
        cnn.losses.CplxAnalyticSignalLoss(dim=2)(cplx.randn(3, 4))
