r"""The exponential integrals :math:`E_1` and :math:`\operatorname{Ei}` in torch, with autograd.

They are computed on the tensor's device and in its dtype, by a power
series near zero, a continued fraction for large negative and an asymptotic
series for large positive arguments, with a fixed number of terms so that
``torch.compile(fullgraph=True)`` traces them. The penalties of
:mod:`cplxmodule.nn.relevance.functional` import them; the public names
(:func:`~cplxmodule.nn.relevance.functional.expi`,
:class:`~cplxmodule.nn.relevance.functional.ExpiFunction`,
:class:`~cplxmodule.nn.relevance.functional.BogusExpiFunction`) are
documented there.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["euler_gamma", "expi", "ExpiFunction", "BogusExpiFunction"]

euler_gamma = 0.5772156649015329

# Below the switch E1 is summed as a power series, above it as a continued
# fraction. E1 switches at 1: its series cancels (E1 = -gamma - log z +
# P(z)), 10x at 1 and 25x at 2, which float32 feels. The term counts give
# 1e-11 relative error in float64 and 1e-7 in float32 on either side of the
# switch; float32 and lower precisions take the shorter ones.
_E1_SWITCH = 1.0
_E1_TERMS = {torch.float64: (18, 50)}
_E1_TERMS_SINGLE = 11, 20
# Positive Ei: power series up to 40, asymptotic series above (its smallest
# term at 40 is 7e-17 of the sum); the power series needs 110 terms at 40.
_EI_SWITCH, _EI_SERIES_TERMS, _EI_ASYMPTOTIC_TERMS = 40.0, 110, 40


def _exp1_series(z, n_terms):
    r""":math:`P(z) = \sum_{k=1}^{n} (-1)^{k+1} z^k / (k \cdot k!)`, by Horner's rule.

    :math:`E_1(z) = -\gamma - \log z + P(z)`. The loops here run on every
    weight at every training step: they work in place on one buffer, since
    on a CPU allocating a fresh weight-sized tensor costs more than a pass
    of arithmetic over it.
    """
    total = torch.mul(z, (-1) ** (n_terms + 1) / (n_terms * math.factorial(n_terms)))
    for k in range(n_terms - 1, 0, -1):
        total.add_((-1) ** (k + 1) / (k * math.factorial(k))).mul_(z)
    return total


def _exp1_fraction(z, depth):
    r""":math:`E_1(z)` by its continued fraction to ``depth``, evaluated bottom-up in place.

    The tail :math:`t_k = k^2 / (z + 2k + 1 - t_{k+1})` is updated as
    :math:`-k^2 / ((t - z) - (2k + 1))`.
    """
    tail = torch.add(z, 2 * depth + 1).reciprocal_().mul_(depth * depth)
    for k in range(depth - 1, 0, -1):
        tail.sub_(z).sub_(2 * k + 1).reciprocal_().mul_(-k * k)
    return torch.neg(z).exp_().div_(tail.neg_().add_(z).add_(1))


def _exp1(z):
    r""":math:`E_1(z) = -\operatorname{Ei}(-z)` for :math:`z > 0`, no autograd."""
    n_terms, depth = _E1_TERMS.get(z.dtype, _E1_TERMS_SINGLE)
    small = torch.clamp(z, max=_E1_SWITCH)
    series = _exp1_series(small, n_terms) - euler_gamma - torch.log(small)
    fraction = _exp1_fraction(torch.clamp(z, min=_E1_SWITCH), depth)
    return torch.where(z <= _E1_SWITCH, series, fraction)


def _expi_positive(x):
    r""":math:`\operatorname{Ei}(x)` for :math:`x > 0`, no autograd."""
    small = torch.clamp(x, max=_EI_SWITCH)
    # term by term: the late coefficients 1 / (k k!) underflow in float32
    term, series = torch.ones_like(small), euler_gamma + torch.log(small)
    for k in range(1, _EI_SERIES_TERMS + 1):
        term = term * small / k
        series = series + term / k
    large = torch.clamp(x, min=_EI_SWITCH)
    term, total = torch.ones_like(large), torch.ones_like(large)
    for k in range(1, _EI_ASYMPTOTIC_TERMS + 1):
        term = term * k / large
        total = total + term
    asymptotic = _exp_over_x(large) * total
    return torch.where(x <= _EI_SWITCH, series, asymptotic)


def _exp_over_x(x):
    r""":math:`e^x / x`, finite wherever it is representable.

    As :math:`e^{x/2} / x \cdot e^{x/2}`: :math:`e^x` alone overflows
    float32 above 88.7, where :math:`\operatorname{Ei}(x) \approx e^x / x`
    is finite up to 93; halving is exact, so the result is as accurate.
    """
    half = torch.exp(x / 2)
    return half / x * half


class ExpiFunction(torch.autograd.Function):
    r"""The exponential integral :math:`\operatorname{Ei}` as an autograd function.

    Forward: :math:`\operatorname{Ei}(x) = -\int_{-x}^\infty e^{-t} t^{-1} dt`
    (the Cauchy principal value for :math:`x > 0`), computed in torch.
    Backward: :math:`\tfrac{d}{dx}\operatorname{Ei}(x) = e^x / x`, itself
    differentiable. Use it through :func:`expi`.

    Examples
    --------
    >>> x = torch.tensor([-1.0, 1.0], dtype=torch.float64, requires_grad=True)
    >>> ExpiFunction.apply(x)
    tensor([-0.2194,  1.8951], dtype=torch.float64, grad_fn=<ExpiFunctionBackward>)
    """

    @staticmethod
    def forward(x: torch.Tensor) -> torch.Tensor:
        negative = -_exp1(torch.clamp(-x, min=0))
        return torch.where(x < 0, negative, _expi_positive(torch.clamp(x, min=0)))

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad_output * _exp_over_x(x)


class BogusExpiFunction(ExpiFunction):
    r"""Zero in the forward pass, the gradient of :math:`\operatorname{Ei}` in the backward pass.

    The ``*VDBogus`` layers of :mod:`cplxmodule.nn.relevance.extensions`
    use it: their penalty has the wrong value but the right gradient, and
    costs no Ei evaluation.

    Examples
    --------
    >>> x = torch.tensor([-1.0], dtype=torch.float64, requires_grad=True)
    >>> BogusExpiFunction.apply(x).backward()
    >>> x.grad  # exp(-1) / -1
    tensor([-0.3679], dtype=torch.float64)
    """

    @staticmethod
    def forward(x):
        return torch.zeros_like(x)


def expi(input: torch.Tensor) -> torch.Tensor:
    r"""The exponential integral :math:`\operatorname{Ei}(x)`, elementwise, in torch.

    :math:`\operatorname{Ei}(x) = -\int_{-x}^\infty \frac{e^{-t}}{t} dt`,
    the Cauchy principal value for :math:`x > 0`. It agrees with
    :func:`scipy.special.expi` to about 1e-12 relative in float64 and runs
    on ``input``'s device (``meta`` included) and in its dtype, without a
    round trip through numpy, so that a GPU step does not stall and
    ``torch.compile(fullgraph=True)`` traces it.

    Parameters
    ----------
    input : torch.Tensor
        Floating-point tensor (float32 or float64).

    Returns
    -------
    torch.Tensor
        :math:`\operatorname{Ei}` of each element; ``-inf`` at 0. Its
        gradient is :math:`e^x / x`.

    Raises
    ------
    TypeError
        If ``input`` is not a floating-point tensor.

    Examples
    --------
    >>> expi(torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64))
    tensor([-0.0489,  0.4542,  9.9338], dtype=torch.float64)
    """
    if not isinstance(input, torch.Tensor) or not input.is_floating_point():
        raise TypeError(f"expi: `input` must be a floating-point tensor, got {_describe(input)}.")
    return ExpiFunction.apply(input)


def _describe(value):
    return (
        f"a tensor of dtype {value.dtype}"
        if isinstance(value, torch.Tensor)
        else type(value).__name__
    )
