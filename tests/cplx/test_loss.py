"""The likelihood data terms: complex Gaussian and Rice negative log-likelihoods.

References: torch's real Gaussian NLL on the two parts (a circular complex
Gaussian of variance var is two real ones of var / 2), and scipy's Rice
law.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rice

import cplxmodule.cplx as cplx
from cplxmodule import Cplx

DOUBLE = torch.float64


def draw_cplx(shape, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return Cplx(*(scale * torch.randn(shape, generator=g, dtype=DOUBLE) for _ in "ri"))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 999),
       per_element=st.booleans(), scale=st.sampled_from([1e-3, 1.0, 30.0]))
def test_gaussian_nll_is_two_real_gaussians_of_half_the_variance(shape, seed, per_element,
                                                                 scale):
    x, y = draw_cplx(shape, seed), draw_cplx(shape, seed + 1)
    g = torch.Generator().manual_seed(seed + 2)
    var = scale * (torch.rand(shape if per_element else shape[-1:], generator=g,
                              dtype=DOUBLE) + 0.1)
    got = cplx.gaussian_nll_loss(x, y, var, full=True, reduction="none")
    half = (var / 2).expand(shape)
    expected = sum(F.gaussian_nll_loss(a, b, half, full=True, reduction="none")
                   for a, b in ((x.real, y.real), (x.imag, y.imag)))
    torch.testing.assert_close(got, expected)
    # without the constant: log(pi) less
    torch.testing.assert_close(cplx.gaussian_nll_loss(x, y, var, reduction="none"),
                               expected - math.log(math.pi))


@pytest.mark.parametrize("reduction", ["mean", "sum", "batchmean"])
def test_reductions(reduction):
    x, y, var = draw_cplx((5, 3), 0), draw_cplx((5, 3), 1), torch.tensor(0.5, dtype=DOUBLE)
    per_element = cplx.gaussian_nll_loss(x, y, var, reduction="none")
    expected = {"mean": per_element.mean(), "sum": per_element.sum(),
                "batchmean": per_element.sum() / 5}[reduction]
    torch.testing.assert_close(cplx.gaussian_nll_loss(x, y, var, reduction=reduction), expected)


def test_a_learned_variance_gets_its_gradient():
    x, y = draw_cplx((4, 3), 0), draw_cplx((4, 3), 1)
    log_var = torch.zeros(3, dtype=DOUBLE, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda v, xr, xi: cplx.gaussian_nll_loss(Cplx(xr, xi), y, v.exp()),
        (log_var, x.real.requires_grad_(), x.imag.requires_grad_()))
    # the loss is least at the mean squared modulus of the error
    best = ((x.real - y.real) ** 2 + (x.imag - y.imag) ** 2).detach().mean(0).requires_grad_()
    grad, = torch.autograd.grad(cplx.gaussian_nll_loss(x.detach(), y, best), [best])
    torch.testing.assert_close(grad, torch.zeros_like(grad), atol=1e-12, rtol=0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 999), mean=st.sampled_from([0.0, 0.1, 2.0, 50.0]),
       var=st.sampled_from([1e-2, 1.0, 4.0]))
def test_rice_nll_is_scipys_rice_law(seed, mean, var):
    g = torch.Generator().manual_seed(seed)
    phase = 2 * math.pi * torch.rand(6, generator=g, dtype=DOUBLE)
    x = Cplx(mean * torch.cos(phase), mean * torch.sin(phase))
    r = (x.abs() + math.sqrt(var) * torch.randn(6, generator=g, dtype=DOUBLE)).abs() + 1e-3
    s = math.sqrt(var / 2)
    expected = -rice.logpdf(r.numpy(), b=mean / s, scale=s)
    got = cplx.rice_nll_loss(x, r, var, full=True, reduction="none")
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9, atol=1e-9)
    assert torch.isfinite(cplx.rice_nll_loss(x, r, var, reduction="none")).all()


@pytest.mark.parametrize("call, message", [
    (lambda x, y: cplx.gaussian_nll_loss(x, y, -1.0), "`var` must be"),
    (lambda x, y: cplx.gaussian_nll_loss(x, y, -torch.ones(3)), "`var` must be non-negative"),
    (lambda x, y: cplx.gaussian_nll_loss(x, y, torch.ones(5)), "`var` must broadcast"),
    (lambda x, y: cplx.gaussian_nll_loss(x, y, torch.ones(3, dtype=torch.complex64)),
     "`var` must be real"),
    (lambda x, y: cplx.gaussian_nll_loss(x, y, 1.0, reduction="batch"), "`reduction` must be"),
    (lambda x, y: cplx.gaussian_nll_loss(x, y, 1.0, eps=0.0), "`eps` must be"),
    (lambda x, y: cplx.rice_nll_loss(x, -torch.ones(2, 3), 1.0), "`target` must be moduli"),
    (lambda x, y: cplx.rice_nll_loss(x, y, 1.0), "`target` must be a real tensor"),
    (lambda x, y: cplx.rice_nll_loss(x, torch.ones(3), 1.0), "`target` must have the shape"),
])
def test_bad_arguments_are_named(call, message):
    x, y = draw_cplx((2, 3), 0), draw_cplx((2, 3), 1)
    with pytest.raises((TypeError, ValueError), match=message):
        call(x, y)
