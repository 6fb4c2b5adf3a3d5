"""Signal and image quality in ``cplxmodule.cplx.loss``: SI-SDR, PSNR and NMSE, against numpy.

The references are computed in numpy complex128 from the definitions (Le
Roux et al. 2019 for SI-SDR; the fastMRI evaluation's PSNR and NMSE), and
SI-SDR also from an independent form: without ``eps``, the ratio of the
squared correlation :math:`\\rho` to :math:`1 - \\rho`.
"""

import numpy as np
import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.nn import CplxSISDRLoss

pytestmark = pytest.mark.usefixtures("one_thread")


def signal(*shape, seed=0, complex_=True):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(shape)
    return z + 1j * rng.standard_normal(shape) if complex_ else z


def operand(z):
    """A numpy array as the library takes it: a Cplx if complex, else a real tensor."""
    if np.iscomplexobj(z):
        return Cplx(torch.from_numpy(z.real.copy()), torch.from_numpy(z.imag.copy()))
    return torch.from_numpy(z)


def numpy_si_sdr(x, s, axis=-1, zero_mean=False, eps=1e-8):
    x, s = np.asarray(x, complex), np.asarray(s, complex)
    if zero_mean:
        x, s = x - x.mean(axis, keepdims=True), s - s.mean(axis, keepdims=True)
    alpha = ((np.conj(s) * x).sum(axis, keepdims=True) + eps) / (
        (abs(s) ** 2).sum(axis, keepdims=True) + eps)
    projection = alpha * s
    return 10 * np.log10(((abs(projection) ** 2).sum(axis) + eps)
                         / ((abs(x - projection) ** 2).sum(axis) + eps))


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("axis, zero_mean", [(-1, False), (0, True), (1, False)])
def test_si_sdr_is_numpys(complex_, axis, zero_mean):
    s = signal(3, 50, 2, complex_=complex_)
    x = 0.7 * s + 0.3 * signal(3, 50, 2, seed=1, complex_=complex_)
    actual = cplx.si_sdr(operand(x), operand(s), dim=axis, zero_mean=zero_mean)
    expected = numpy_si_sdr(x, s, axis, zero_mean)
    np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-12)
    loss = cplx.si_sdr_loss(operand(x), operand(s), dim=axis, zero_mean=zero_mean,
                            reduction="none")
    np.testing.assert_allclose(loss.numpy(), -expected, rtol=1e-12)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_si_sdr_without_eps_is_the_ratio_of_the_squared_correlation(complex_):
    # an independent form: rho = |<s, x>|^2 / (|s|^2 |x|^2), SI-SDR = 10 log10(rho / (1 - rho))
    s, noise = signal(4, 64, complex_=complex_), signal(4, 64, seed=2, complex_=complex_)
    x = s + 0.2 * noise
    rho = abs((np.conj(s) * x).sum(-1)) ** 2 / ((abs(s) ** 2).sum(-1) * (abs(x) ** 2).sum(-1))
    actual = cplx.si_sdr(operand(x), operand(s), eps=0.0)
    np.testing.assert_allclose(actual.numpy(), 10 * np.log10(rho / (1 - rho)), rtol=1e-10)


def test_si_sdr_ignores_the_level_and_for_complex_signals_a_constant_phase():
    s = signal(2, 100)
    x = s + 0.1 * signal(2, 100, seed=3)
    reference = cplx.si_sdr(operand(x), operand(s))
    for gain in (3.0, 0.25, np.exp(1j * 0.7), -2j):
        torch.testing.assert_close(cplx.si_sdr(operand(gain * x), operand(s)), reference)
    # for real signals a sign flip is a gain of -1
    r = signal(2, 100, complex_=False)
    y = r + 0.1 * signal(2, 100, seed=4, complex_=False)
    torch.testing.assert_close(cplx.si_sdr(operand(-y), operand(r)),
                               cplx.si_sdr(operand(y), operand(r)))


def test_a_real_estimate_of_a_complex_target_is_compared_as_complex():
    s = signal(2, 30)
    x = signal(2, 30, seed=5, complex_=False)
    np.testing.assert_allclose(cplx.si_sdr(operand(x), operand(s)).numpy(),
                               numpy_si_sdr(x, s), rtol=1e-12)
    np.testing.assert_allclose(cplx.si_sdr(operand(s), operand(x)).numpy(),
                               numpy_si_sdr(s, x), rtol=1e-12)


def test_si_sdr_gradients_and_finite_edges():
    g = torch.Generator().manual_seed(0)
    x, s = (Cplx(torch.randn(2, 9, dtype=torch.float64, generator=g).requires_grad_(),
                 torch.randn(2, 9, dtype=torch.float64, generator=g)) for _ in range(2))
    assert torch.autograd.gradcheck(lambda a, b: cplx.si_sdr_loss(Cplx(a, x.imag), Cplx(b, s.imag)),
                                    (x.real, s.real.requires_grad_()))
    # silence and a perfect estimate: finite values, finite (zero) gradients
    zero = torch.zeros(2, 9, dtype=torch.float64, requires_grad=True)
    value = cplx.si_sdr_loss(zero, torch.zeros(2, 9, dtype=torch.float64))
    value.backward()
    assert value.item() == 0 and torch.equal(zero.grad, torch.zeros_like(zero))
    perfect = cplx.si_sdr(s, s)
    assert torch.isfinite(perfect).all() and (perfect > 80).all()


def test_the_loss_layer_is_the_function():
    s, x = signal(3, 40, complex_=False), signal(3, 40, seed=6, complex_=False)
    for kwargs in ({}, {"reduction": "sum", "zero_mean": True}, {"reduction": "none", "dim": 0}):
        layer = CplxSISDRLoss(**kwargs)
        options = {k: v for k, v in kwargs.items() if k != "reduction"}
        expected = -numpy_si_sdr(x, s, options.get("dim", -1), options.get("zero_mean", False))
        reduction = kwargs.get("reduction", "mean")
        expected = expected.mean() if reduction == "mean" else (
            expected.sum() if reduction == "sum" else expected)
        np.testing.assert_allclose(layer(operand(x), operand(s)).numpy(), expected, rtol=1e-12)
    assert repr(CplxSISDRLoss()) == "CplxSISDRLoss()"
    assert repr(CplxSISDRLoss(dim=0, zero_mean=True, reduction="sum")) == (
        "CplxSISDRLoss(dim=0, zero_mean=True, reduction='sum')")


def numpy_image_pair(x, y, magnitude):
    x, y = np.asarray(x, complex), np.asarray(y, complex)
    if magnitude:
        x, y = abs(x), abs(y)
    return x, y


@pytest.mark.parametrize("magnitude", [False, True])
def test_psnr_and_nmse_are_numpys(magnitude):
    y = signal(3, 2, 8, 8)
    x = y + 0.05 * signal(3, 2, 8, 8, seed=7)
    a, b = numpy_image_pair(x, y, magnitude)
    axes = (1, 2, 3)
    mse = (abs(a - b) ** 2).mean(axes)
    peak = (abs(b) ** 2).max(axes)
    psnr = cplx.psnr(operand(x), operand(y), magnitude=magnitude, reduction="none")
    np.testing.assert_allclose(psnr.numpy(), 10 * np.log10(peak / mse), rtol=1e-12)
    np.testing.assert_allclose(cplx.psnr(operand(x), operand(y), magnitude=magnitude).item(),
                               (10 * np.log10(peak / mse)).mean(), rtol=1e-12)
    fixed = cplx.psnr(operand(x), operand(y), data_range=2.0, magnitude=magnitude, dim=(-2, -1),
                      reduction="none")
    np.testing.assert_allclose(fixed.numpy(), 10 * np.log10(4 / (abs(a - b) ** 2).mean((2, 3))),
                               rtol=1e-12)
    nmse = cplx.nmse(operand(x), operand(y), magnitude=magnitude, reduction="sum")
    expected = ((abs(a - b) ** 2).sum(axes) / (abs(b) ** 2).sum(axes)).sum()
    np.testing.assert_allclose(nmse.item(), expected, rtol=1e-12)


def test_magnitude_images_and_native_tensors():
    # a complex reconstruction against a real magnitude reference, as fastMRI evaluates
    y = signal(2, 6, 6)
    x = y * np.exp(1j * 0.3) + 0.01 * signal(2, 6, 6, seed=8)
    magnitude = torch.from_numpy(abs(y))
    actual = cplx.nmse(torch.from_numpy(x), magnitude, magnitude=True, reduction="none")
    expected = ((abs(x) - abs(y)) ** 2).sum((1, 2)) / (abs(y) ** 2).sum((1, 2))
    np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-12)
    # an image of one dimension is one image
    np.testing.assert_allclose(cplx.nmse(operand(x[0, 0]), operand(y[0, 0])).item(),
                               abs(x[0, 0] - y[0, 0]) @ abs(x[0, 0] - y[0, 0])
                               / (abs(y[0, 0]) @ abs(y[0, 0])), rtol=1e-12)


@pytest.mark.parametrize("call, error, message", [
    (lambda: cplx.si_sdr(torch.ones(3, dtype=torch.int64), torch.ones(3)), TypeError,
     "si_sdr: `input` must be a real floating-point tensor, a Cplx or a complex tensor"),
    (lambda: cplx.si_sdr(torch.ones(3), "x"), TypeError, "si_sdr: `target` must be"),
    (lambda: cplx.si_sdr(torch.ones(3), torch.ones(4)), ValueError,
     r"si_sdr: `target` must have the shape of `input`, \(3,\)"),
    (lambda: cplx.si_sdr(torch.ones(3), torch.ones(3), dim=1), ValueError,
     "si_sdr: `input` must have dimension 1"),
    (lambda: cplx.si_sdr(torch.ones(3), torch.ones(3), eps=-1.0), ValueError, "si_sdr: `eps`"),
    (lambda: cplx.si_sdr_loss(torch.ones(3), torch.ones(3), reduction="max"), ValueError,
     "si_sdr_loss: `reduction`"),
    (lambda: cplx.psnr(torch.ones(2, 3), torch.ones(2, 3), dim=(1, 2)), ValueError,
     r"psnr: `dim` must be in \[-2, 1\]"),
    (lambda: cplx.psnr(torch.ones(2, 3), torch.ones(2, 3), data_range=0.0), ValueError,
     "psnr: `data_range`"),
    (lambda: cplx.nmse(torch.ones(2, 3), torch.ones(2, 3), magnitude=1), TypeError,
     "nmse: `magnitude`"),
    (lambda: CplxSISDRLoss(eps=-1.0), ValueError, "CplxSISDRLoss: `eps`"),
    (lambda: CplxSISDRLoss()(torch.ones(3), cplx.randn(4)), ValueError,
     "CplxSISDRLoss: `target` must have the shape"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()
