"""KL penalties and the exponential integral of cplxmodule.nn.relevance.functional.

References are independent of the code under test: scipy.special.expi, and
the KL divergences integrated numerically with scipy.integrate.
"""

import numpy as np
import pytest
import torch
from scipy import special

import cplxmodule.nn.relevance.functional as F

from ...helpers import LOG_ALPHAS, ard_kl, cplx_log_modulus2, cplx_vd_kl, real_vd_kl


def as_tensor(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype)


@pytest.mark.parametrize("la", LOG_ALPHAS)
def test_real_vd_is_molchanov_approximation_of_the_kl(la):
    # the published approximation is accurate to 0.01 nats
    assert abs(F.kl_real_vd(as_tensor([la])).item() - real_vd_kl(la)) < 0.01


@pytest.mark.parametrize("la", LOG_ALPHAS)
def test_cplx_vd_is_the_exact_kl(la):
    assert F.kl_cplx_vd(as_tensor([la])).item() == pytest.approx(
        cplx_vd_kl(la), rel=1e-8, abs=1e-10
    )


@pytest.mark.parametrize("la", LOG_ALPHAS)
def test_cplx_vd_approx_is_close_to_the_kl(la):
    assert abs(F.kl_cplx_vd_approx(as_tensor([la])).item() - cplx_vd_kl(la)) < 0.011


@pytest.mark.parametrize("la", LOG_ALPHAS)
def test_ard_penalties_are_the_empirical_bayes_kl(la):
    assert F.kl_real_ard(as_tensor([la])).item() == pytest.approx(ard_kl(la, 1), rel=1e-6, abs=1e-9)
    assert F.kl_cplx_ard(as_tensor([la])).item() == pytest.approx(ard_kl(la, 2), rel=1e-6, abs=1e-9)


def test_scale_free_is_the_kl_of_the_one_over_modulus_prior_up_to_a_constant():
    # KL(q || 1/|w|) = -log sigma^2 + E log|w|^2 / 2 + const, with
    # E log|w|^2 = log|mu|^2 + E log|1 + sqrt(alpha) eps|^2
    pairs = [(la, log_mu2) for la in (-3.0, 0.0, 2.0, 6.0) for log_mu2 in (-2.0, 0.0, 1.5)]
    reference = np.array([-(la + m) + 0.5 * (m + cplx_log_modulus2(la)) for la, m in pairs])
    la, log_mu2 = as_tensor([p[0] for p in pairs]), as_tensor([p[1] for p in pairs])
    got = F.kl_cplx_vd_scale_free(la, la + log_mu2).numpy()
    offsets = got - reference
    assert np.ptp(offsets) < 1e-8


def test_bogus_has_the_value_minus_log_alpha_and_the_gradient_of_the_kl():
    la = as_tensor(LOG_ALPHAS).requires_grad_()
    value = F.kl_cplx_vd_bogus(la)
    value.sum().backward()
    torch.testing.assert_close(value.detach(), -la.detach())
    h = 1e-4
    numeric = [(cplx_vd_kl(x + h) - cplx_vd_kl(x - h)) / (2 * h) for x in LOG_ALPHAS]
    np.testing.assert_allclose(la.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "kl",
    [
        F.kl_real_vd,
        F.kl_real_ard,
        F.kl_cplx_vd,
        F.kl_cplx_ard,
        F.kl_cplx_vd_approx,
        F.kl_cplx_vd_bogus,
    ],
)
def test_penalty_gradcheck(kl):
    la = torch.linspace(-8, 8, 17, dtype=torch.float64, requires_grad=True)
    # bogus: its gradient is not that of its value, check it runs
    if kl is F.kl_cplx_vd_bogus:
        kl(la).sum().backward()
        assert torch.isfinite(la.grad).all()
        return
    assert torch.autograd.gradcheck(kl, (la,))


def test_scale_free_gradcheck():
    la = torch.linspace(-8, 8, 9, dtype=torch.float64, requires_grad=True)
    ls2 = torch.linspace(-3, 3, 9, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(F.kl_cplx_vd_scale_free, (la, ls2))


def test_cplx_vd_is_accurate_where_alpha_is_large_in_float32():
    # the form without cancellation: the KL tends to 1/alpha
    la = torch.tensor([15.0, 20.0, 30.0])
    z = np.exp(-la.double().numpy())
    np.testing.assert_allclose(F.kl_cplx_vd(la).double().numpy(), z - z * z / 4, rtol=1e-6)


def test_expi_matches_scipy_over_the_kl_range_float64():
    la = torch.linspace(-20, 20, 2001, dtype=torch.float64)
    x = -torch.exp(-la)
    np.testing.assert_allclose(F.expi(x).numpy(), special.expi(x.numpy()), rtol=1e-6, atol=1e-300)


@pytest.mark.parametrize("dtype, rtol", [(torch.float64, 1e-10), (torch.float32, 5e-6)])
def test_expi_matches_scipy_on_both_sides_of_zero(dtype, rtol):
    x = np.concatenate([np.linspace(-80, -1e-6, 1001), np.linspace(1e-6, 80, 1001)])
    # away from Ei's root at 0.3725, where any relative error is unbounded
    x = x[np.abs(x - 0.3725) > 1e-2]
    x = torch.tensor(x, dtype=dtype)
    reference = special.expi(x.double().numpy())
    got = F.expi(x)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.double().numpy(), reference, rtol=rtol, atol=1e-36)


def test_expi_float32_is_finite_where_ei_is():
    # e^x overflows float32 above 88.72; Ei(x) ~ e^x / x does above 93.2
    x = np.concatenate([np.linspace(85, 94, 901), [88.72, 88.73, 93.0]]).astype(np.float32)
    reference = special.expi(x.astype(np.float64))
    representable = reference < np.finfo(np.float32).max
    assert representable.any() and not representable.all()
    xt = torch.tensor(x, requires_grad=True)
    got = F.expi(xt)
    np.testing.assert_allclose(got.detach().double().numpy()[representable],
                               reference[representable], rtol=5e-6)
    assert torch.isinf(got[~torch.from_numpy(representable)]).all()
    # the gradient e^x / x: likewise finite where representable
    got.sum().backward()
    gradient = np.exp(x.astype(np.float64)) / x
    fits = gradient < np.finfo(np.float32).max
    np.testing.assert_allclose(xt.grad.double().numpy()[fits], gradient[fits], rtol=5e-6)


def test_expi_gradient_is_exp_over_x():
    x = torch.tensor(
        [-30.0, -3.0, -0.5, -1e-3, 0.2, 2.0, 50.0], dtype=torch.float64, requires_grad=True
    )
    F.expi(x).sum().backward()
    xs = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xs) / xs, rtol=1e-12)
    y = torch.tensor([-2.0, -0.7, 1.3], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(F.expi, (y,))
    assert torch.autograd.gradgradcheck(F.expi, (y,))


def test_expi_on_meta_keeps_shape_and_dtype():
    for dtype in (torch.float32, torch.float64):
        x = torch.empty(3, 4, device="meta", dtype=dtype)
        for out in (F.expi(x), F.kl_cplx_vd(x)):
            assert out.device.type == "meta" and out.shape == x.shape and out.dtype == dtype


def test_expi_rejects_what_is_not_a_float_tensor():
    with pytest.raises(TypeError, match="`input`"):
        F.expi(np.ones(3))
    with pytest.raises(TypeError, match="`input`"):
        F.expi(torch.ones(3, dtype=torch.int64))


def test_log_alpha_of_real_and_complex_weights():
    from cplxmodule.cplx import Cplx

    log_sigma2 = torch.tensor([0.0, 1.0, -2.0], dtype=torch.float64)
    real = torch.tensor([2.0, -0.5, 0.0], dtype=torch.float64)
    expected = log_sigma2.numpy() - 2 * np.log(np.abs(real.numpy()) + 1e-12)
    np.testing.assert_allclose(F.log_alpha(log_sigma2, real).numpy(), expected, rtol=0, atol=1e-10)
    z = Cplx(
        torch.tensor([3.0, 0.0, 0.0], dtype=torch.float64),
        torch.tensor([4.0, -1.0, 0.0], dtype=torch.float64),
    )
    modulus = np.abs(np.array([3 + 4j, -1j, 0]))
    expected = log_sigma2.numpy() - 2 * np.log(modulus + 1e-12)
    np.testing.assert_allclose(F.log_alpha(log_sigma2, z).numpy(), expected, rtol=0, atol=1e-10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_expi_and_kl_on_cuda():
    la = torch.linspace(-20, 20, 401, dtype=torch.float64)
    x = -torch.exp(-la)
    got = F.expi(x.cuda())
    assert got.is_cuda
    np.testing.assert_allclose(got.cpu().numpy(), special.expi(x.numpy()), rtol=1e-6, atol=1e-300)
    torch.testing.assert_close(F.kl_cplx_vd(la.cuda()).cpu(), F.kl_cplx_vd(la))
