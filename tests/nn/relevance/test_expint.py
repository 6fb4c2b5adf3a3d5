"""The exponential integrals of ``cplxmodule.nn.relevance._expint``: values and gradients.

The reference is :func:`scipy.special.exp1` and :func:`scipy.special.expi`
where scipy is installed, else numerical integration with numpy
(composite Gauss-Legendre quadrature of the integrals that define them);
a test checks that integration against scipy where both are there.
"""

import importlib.util

import numpy as np
import pytest
import torch

from cplxmodule.nn.relevance import _expint
from cplxmodule.nn.relevance import functional as F

HAS_SCIPY = importlib.util.find_spec("scipy") is not None

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(30)


def _integrate(f, a, b, panels=400):
    """``int_a^b f(t) dt`` by Gauss-Legendre on ``panels`` equal panels; ``a``, ``b`` arrays."""
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    edges = a[..., None] + (b - a)[..., None] * np.linspace(0, 1, panels + 1)
    lo, hi = edges[..., :-1, None], edges[..., 1:, None]
    t = (hi + lo) / 2 + (hi - lo) / 2 * _NODES
    return ((hi - lo) / 2 * _WEIGHTS * f(t)).sum(axis=(-1, -2))


def _exp1_by_quadrature(z):
    r""":math:`E_1(z) = \int_z^\infty e^{-t} / t\,dt`, for :math:`z > 0`.

    Below 1 as :math:`-\gamma - \log z + \int_0^z (1 - e^{-t}) / t\,dt`
    (a smooth integrand); above, :math:`e^{-z} \int_0^{60} e^{-s} / (z + s)\,ds`,
    which loses nothing to cancellation when :math:`E_1` is tiny.
    """
    z = np.asarray(z, float)
    small = -np.euler_gamma - np.log(z) + _integrate(lambda t: -np.expm1(-t) / t, 0.0, z)
    large = np.exp(-z) * _integrate(lambda s: np.exp(-s) / (z[..., None, None] + s), 0.0, 60.0)
    return np.where(z < 1, small, large)


def _expi_by_quadrature(x):
    r""":math:`\operatorname{Ei}(x)`: :math:`-E_1(-x)` below 0, and above

    :math:`\gamma + \log x + \int_0^x (e^t - 1) / t\,dt`.
    """
    x = np.asarray(x, float)
    negative = -_exp1_by_quadrature(np.abs(x))
    positive = np.euler_gamma + np.log(np.abs(x)) + _integrate(
        lambda t: np.expm1(t) / t, 0.0, np.abs(x)
    )
    return np.where(x < 0, negative, positive)


if HAS_SCIPY:
    from scipy import special

    exp1_reference, expi_reference = special.exp1, special.expi
else:
    exp1_reference, expi_reference = _exp1_by_quadrature, _expi_by_quadrature

# away from Ei's root at 0.3725, where any relative error is unbounded
POINTS = np.array(
    [-80.0, -30.0, -5.0, -1.0, -0.99, -1e-3, 1e-4, 0.2, 0.5, 1.0, 7.0, 39.0, 41.0, 80.0]
)


@pytest.mark.skipif(not HAS_SCIPY, reason="scipy is the check of the numpy integration")
def test_the_numpy_integration_agrees_with_scipy():
    z = np.abs(POINTS)
    np.testing.assert_allclose(_exp1_by_quadrature(z), special.exp1(z), rtol=1e-12)
    np.testing.assert_allclose(_expi_by_quadrature(POINTS), special.expi(POINTS), rtol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [(torch.float64, 1e-10), (torch.float32, 5e-6)])
def test_exp1_values(dtype, rtol):
    z = np.concatenate([np.geomspace(1e-6, 80, 60), [0.999, 1.0, 1.001]])
    got = _expint._exp1(torch.tensor(z, dtype=dtype))
    assert got.dtype == dtype
    np.testing.assert_allclose(got.double().numpy(), exp1_reference(z), rtol=rtol, atol=1e-36)


@pytest.mark.parametrize("dtype, rtol", [(torch.float64, 1e-10), (torch.float32, 5e-6)])
def test_expi_values_on_both_sides_of_zero(dtype, rtol):
    got = _expint.expi(torch.tensor(POINTS, dtype=dtype))
    assert got.dtype == dtype
    np.testing.assert_allclose(got.double().numpy(), expi_reference(POINTS), rtol=rtol, atol=1e-36)


def test_expi_gradients_match_differences_of_the_reference():
    x = torch.tensor(POINTS[np.abs(POINTS) <= 40], dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(_expint.expi(x).sum(), x, create_graph=True)
    (second,) = torch.autograd.grad(grad.sum(), x)
    xs = x.detach().numpy()
    h = 1e-5 * np.maximum(np.abs(xs), 1e-2)
    first_difference = (expi_reference(xs + h) - expi_reference(xs - h)) / (2 * h)
    np.testing.assert_allclose(grad.detach().numpy(), first_difference, rtol=1e-6)
    second_difference = (
        expi_reference(xs + h) - 2 * expi_reference(xs) + expi_reference(xs - h)
    ) / h**2
    # (at x = 1, where the second derivative is 0, the difference is roundoff)
    np.testing.assert_allclose(second.numpy(), second_difference, rtol=1e-3, atol=1e-5)


def test_bogus_expi_has_zero_value_and_the_gradient_of_ei():
    x = torch.tensor([-4.0, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    value = _expint.BogusExpiFunction.apply(x)
    assert torch.equal(value, torch.zeros_like(x))
    (grad,) = torch.autograd.grad(value.sum(), x)
    xs = x.detach().numpy()
    h = 1e-6
    expected = (expi_reference(xs + h) - expi_reference(xs - h)) / (2 * h)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6)


def test_the_penalties_use_the_one_definition():
    assert F.expi is _expint.expi
    assert F.ExpiFunction is _expint.ExpiFunction
    assert F.BogusExpiFunction is _expint.BogusExpiFunction


def test_expi_refuses_a_non_floating_input():
    with pytest.raises(TypeError, match="expi: `input`"):
        _expint.expi(torch.tensor([1, 2]))
