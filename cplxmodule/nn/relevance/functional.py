r"""Stateless math of Bayesian sparsification: KL penalties, ``log_alpha``, Ei.

The layers of :mod:`cplxmodule.nn.relevance` hold ``weight`` and
``log_sigma2`` and call these functions, as torch's layers call
:mod:`torch.nn.functional`.

Every penalty is the per-weight Kullback-Leibler divergence
:math:`KL(q(w) \| p(w))` of a factorised Gaussian posterior
:math:`q(w) = \mathcal{N}(\mu, \sigma^2)` (complex-circular
:math:`\mathcal{CN}(\mu, \sigma^2)` for complex weights) from a
sparsity-inducing prior, as a function of
:math:`\log\alpha = \log\sigma^2 - \log|\mu|^2`, up to an additive constant
chosen so that the penalty vanishes as :math:`\alpha \to \infty`.

The exponential integral :math:`\operatorname{Ei}` the complex penalty needs
is computed in torch, on the tensor's device and in its dtype, by a power
series near zero, a continued fraction for large negative and an asymptotic
series for large positive arguments, with a fixed number of terms so that
``torch.compile(fullgraph=True)`` traces it.
"""

from __future__ import annotations

import math

import torch
from typing import Any

from ...cplx import Cplx
from ...cplx._views import _interleaved
from ...cplx.tensor import _pair

__all__ = [
    "expi",
    "ExpiFunction",
    "BogusExpiFunction",
    "log_alpha",
    "local_reparameterization",
    "kl_real_vd",
    "kl_real_ard",
    "kl_cplx_vd",
    "kl_cplx_ard",
    "kl_cplx_vd_approx",
    "kl_cplx_vd_scale_free",
    "kl_cplx_vd_bogus",
    "hard_concrete",
    "hard_concrete_gate",
    "l0_penalty",
    "gaussian_gate",
]

euler_gamma = 0.5772156649015329

# Below the switch E1 is summed as a power series, above it as a continued
# fraction. E1 itself switches at 1: its series cancels (E1 = -gamma -
# log z + P(z)), 10x at 1 and 25x at 2, which float32 feels. The complex VD
# KL is P(z) itself, without the cancellation, and switches at 2, where the
# fraction converges faster. The term counts give 1e-11 relative error in
# float64 and 1e-7 in float32 on either side of each switch; float32 and
# lower precisions take the shorter ones, which makes the KL twice as cheap.
_E1_SWITCH = 1.0
_E1_TERMS = {torch.float64: (18, 50)}
_E1_TERMS_SINGLE = 11, 20
_KL_SWITCH = 2.0
_KL_TERMS = {torch.float64: (24, 30)}
_KL_TERMS_SINGLE = 14, 15
# Above this z = 1/alpha, E1(z) < 1e-23 of the KL (>= gamma + log 50): the KL
# clamps z there, which keeps exp(-z) out of the denormal range, where the
# CPU's exp is 20 times slower.
_KL_FRACTION_CAP = 50.0
# Positive Ei: power series up to 40, asymptotic series above (its smallest
# term at 40 is 7e-17 of the sum); the power series needs 110 terms at 40.
_EI_SWITCH, _EI_SERIES_TERMS, _EI_ASYMPTOTIC_TERMS = 40.0, 110, 40

# Molchanov et al. (2017), eq. 14: the real VD KL approximation.
_REAL_VD = 0.63576, 1.87320, 1.48695
# The same form fitted to the complex VD KL (Nazarov & Burnaev, 2020): these
# constants reproduce the published package's ``*VDApprox`` penalty (to 1e-15,
# compared as a black box).
_CPLX_VD_APPROX = 0.57810, 1.45926, 1.36526


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


def log_alpha(log_sigma2, weight):
    r"""The log of the relative variance :math:`\alpha = \sigma^2 / |w|^2`.

    :math:`\log\alpha = \log\sigma^2 - \log(|w|^2 + 10^{-24})`; the
    :math:`10^{-24}` keeps it finite at :math:`w = 0` with a smooth
    gradient, and differs from :math:`\log\sigma^2 - 2\log(|w| + 10^{-12})`
    (the published package's form) by at most :math:`2 \cdot 10^{-12} / |w|`.

    Parameters
    ----------
    log_sigma2 : torch.Tensor
        :math:`\log\sigma^2`, of the weight's real shape.
    weight : torch.Tensor or Cplx
        The posterior mean :math:`w`; a complex weight counts by modulus.

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> log_alpha(torch.zeros(2), torch.tensor([1.0, 0.1]))
    tensor([0.0000, 4.6052])
    """
    if isinstance(weight, torch.Tensor):
        modulus2 = weight * weight
    else:
        modulus2 = weight.real * weight.real + weight.imag * weight.imag
    return log_sigma2 - torch.log(modulus2 + 1e-24)


def _sigmoid_softplus(log_alpha, k1, k2, k3, scale):
    r""":math:`k_1 \sigma(-(k_2 + k_3 \log\alpha)) + c \cdot \operatorname{softplus}(-\log\alpha)`.

    Both terms are computed stably for every :math:`\log\alpha`: this is
    :math:`k_1 - k_1\sigma(k_2 + k_3\log\alpha) + c\log(1 + 1/\alpha)`.
    """
    return k1 * torch.sigmoid(-(k2 + k3 * log_alpha)) + scale * torch.nn.functional.softplus(
        -log_alpha
    )


def kl_real_vd(log_alpha):
    r"""KL penalty of real variational dropout (Molchanov et al., 2017).

    The prior is the improper log-uniform :math:`p(|w|) \propto 1/|w|`; the
    KL has no closed form and this is the paper's approximation

    .. math::

        k_1 - k_1 \sigma(k_2 + k_3 \log\alpha) + \tfrac12 \log(1 + 1/\alpha),

    :math:`k_1, k_2, k_3 = 0.63576, 1.87320, 1.48695`, accurate to about
    0.01 nats, computed stably for every :math:`\log\alpha`.

    Parameters
    ----------
    log_alpha : torch.Tensor

    Returns
    -------
    torch.Tensor
        The penalty of each weight.

    Examples
    --------
    >>> kl_real_vd(torch.tensor([-10.0, 0.0, 10.0]))
    tensor([5.6358e+00, 4.3124e-01, 2.2733e-05])
    """
    return _sigmoid_softplus(log_alpha, *_REAL_VD, scale=0.5)


def kl_real_ard(log_alpha):
    r"""KL penalty of real ARD (Kharitonov et al., 2018): :math:`\tfrac12 \log(1 + 1/\alpha)`.

    The KL from :math:`\mathcal{N}(0, \tau^2)` with the prior variance
    :math:`\tau^2 = \mu^2 + \sigma^2` that minimises it (empirical Bayes).

    Parameters
    ----------
    log_alpha : torch.Tensor

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> kl_real_ard(torch.tensor([0.0]))
    tensor([0.3466])
    """
    return 0.5 * torch.nn.functional.softplus(-log_alpha)


def kl_cplx_ard(log_alpha):
    r"""KL penalty of complex ARD (Nazarov & Burnaev, 2020): :math:`\log(1 + 1/\alpha)`.

    The KL of :math:`\mathcal{CN}(\mu, \sigma^2)` from
    :math:`\mathcal{CN}(0, |\mu|^2 + \sigma^2)`.

    Parameters
    ----------
    log_alpha : torch.Tensor

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> kl_cplx_ard(torch.tensor([0.0]))
    tensor([0.6931])
    """
    return torch.nn.functional.softplus(-log_alpha)


class _CplxVDKL(torch.autograd.Function):
    r""":math:`\gamma - \log\alpha - \operatorname{Ei}(-1/\alpha)` without cancellation.

    With :math:`z = 1/\alpha`, :math:`E_1(z) = -\gamma - \log z + P(z)`
    (:math:`P` the power series), so for small :math:`z` the KL is
    :math:`P(z)` itself: no difference of two large logs, accurate as
    :math:`\alpha \to \infty` in float32 too. Its derivative in
    :math:`\log\alpha` is :math:`e^{-1/\alpha} - 1`.
    """

    @staticmethod
    def forward(log_alpha):
        z = torch.neg(log_alpha).exp_()
        n_terms, depth = _KL_TERMS.get(z.dtype, _KL_TERMS_SINGLE)
        small = _exp1_series(torch.clamp(z, max=_KL_SWITCH), n_terms)
        large = _exp1_fraction(torch.clamp(z, min=_KL_SWITCH, max=_KL_FRACTION_CAP), depth)
        return torch.where(z <= _KL_SWITCH, small, large.add_(euler_gamma).sub_(log_alpha))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        (log_alpha,) = ctx.saved_tensors
        return grad_output * torch.expm1(-torch.exp(-log_alpha))


def kl_cplx_vd(log_alpha):
    r"""KL penalty of complex variational dropout (Nazarov & Burnaev, 2020).

    The prior is the improper :math:`p(w) \propto 1/|w|^2` on the complex
    plane, and the KL is exact:

    .. math::

        \gamma - \log\alpha - \operatorname{Ei}(-1/\alpha),

    :math:`\gamma` Euler's constant. Computed in torch without cancellation
    for large :math:`\alpha`; its gradient is :math:`e^{-1/\alpha} - 1`.

    Parameters
    ----------
    log_alpha : torch.Tensor

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> kl_cplx_vd(torch.tensor([-10.0, 0.0, 10.0], dtype=torch.float64))
    tensor([1.0577e+01, 7.9660e-01, 4.5399e-05], dtype=torch.float64)
    """
    return _CplxVDKL.apply(log_alpha)


def kl_cplx_vd_approx(log_alpha):
    r"""An approximation of :func:`kl_cplx_vd` without Ei.

    The form of :func:`kl_real_vd` fitted to the complex KL:

    .. math::

        k_1 \sigma(-(k_2 + k_3 \log\alpha)) + \log(1 + 1/\alpha),

    :math:`k_1, k_2, k_3 = 0.57810, 1.45926, 1.36526`, within 0.011 nats of
    the exact KL.

    Parameters
    ----------
    log_alpha : torch.Tensor

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> kl_cplx_vd_approx(torch.tensor([0.0]))
    tensor([0.8022])
    """
    return _sigmoid_softplus(log_alpha, *_CPLX_VD_APPROX, scale=1.0)


def kl_cplx_vd_scale_free(log_alpha, log_sigma2):
    r"""KL penalty of complex VD under the scale-free prior :math:`p(w) \propto 1/|w|`.

    .. math::

        -\tfrac12 \bigl(\log\sigma^2 + \log\alpha
            + \operatorname{Ei}(-1/\alpha)\bigr)
        = \tfrac12 \bigl(\mathrm{KL}_{VD}(\alpha) - \gamma - \log\sigma^2\bigr),

    up to a constant; :math:`\mathrm{KL}_{VD}` is :func:`kl_cplx_vd`. Unlike
    the other penalties it depends on :math:`\sigma^2`, not only on
    :math:`\alpha`, and has no lower bound.

    Parameters
    ----------
    log_alpha : torch.Tensor
    log_sigma2 : torch.Tensor

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> kl_cplx_vd_scale_free(torch.tensor([0.0]), torch.tensor([0.0]))
    tensor([0.1097])
    """
    return 0.5 * (kl_cplx_vd(log_alpha) - euler_gamma - log_sigma2)


def kl_cplx_vd_bogus(log_alpha):
    r"""The complex VD penalty's gradient with a cheap, wrong value: :math:`-\log\alpha`.

    The value drops the :math:`\gamma - \operatorname{Ei}(-1/\alpha)` term of
    :func:`kl_cplx_vd` (see :class:`BogusExpiFunction`); the gradient,
    :math:`e^{-1/\alpha} - 1`, is exact. Useful only to train: do not
    compare its value across models.

    Parameters
    ----------
    log_alpha : torch.Tensor

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> kl_cplx_vd_bogus(torch.tensor([2.0]))
    tensor([-2.])
    """
    return -log_alpha - BogusExpiFunction.apply(-torch.exp(-log_alpha))


def local_reparameterization(mean, var):
    r"""Draw each output of a Gaussian layer: ``mean + sqrt(var) * noise``.

    The local reparameterisation trick (Kingma, Salimans & Welling, 2015):
    instead of sampling a weight, sample every output from its own Gaussian.
    For a complex ``mean`` the noise is complex-circular, :math:`\mathcal{CN}(0,
    \mathrm{var})`: real and imaginary parts independent, of variance
    ``var / 2`` each.

    Parameters
    ----------
    mean : torch.Tensor or Cplx
        The output of the layer with the mean weight.
    var : torch.Tensor
        The real output variance, of ``mean``'s shape; overwritten with the
        standard deviation (it is the fresh output of the variance product).

    Returns
    -------
    torch.Tensor or Cplx
        One sample per output, differentiable in ``mean`` and ``var``.

    Examples
    --------
    >>> out = local_reparameterization(torch.zeros(10000), torch.full((10000,), 4.0))
    >>> round(float(out.std()), 1)
    2.0
    """
    # ``var`` is 0 where a whole receptive field is 0, where sqrt's infinite
    # derivative times the zero input gradient would give NaN; ``tiny``
    # keeps it finite, and changes no other variance
    # in place: ``var`` is the fresh output of a product, which keeps its
    # inputs for the backward pass, not its output
    std = var.add_(torch.finfo(var.dtype).tiny).sqrt_()
    if isinstance(mean, torch.Tensor):
        return torch.addcmul(mean, std, torch.randn_like(var))
    # complex-circular: each part of variance var / 2. One draw for both
    # parts, the real parts' first, so that compiled code (which may reorder
    # independent draws) takes the same random numbers as eager.
    noise = torch.randn(2 * var.numel(), dtype=var.dtype, device=var.device).view(2, *var.shape)
    scale = 0.5**0.5
    # a plain Cplx skips the checks of ``Cplx.__init__``: its parts agree
    pair = _pair if type(mean) is Cplx else type(mean)
    buffer = _interleaved(mean.real, mean.imag)
    if buffer is not None:
        # the parts of the mean are the halves of one buffer (a "native"
        # product's output): the noise is added to both in one op, and the
        # output's parts are again the halves of one buffer
        output = torch.addcmul(buffer, std.unsqueeze(-1), noise.movedim(0, -1), value=scale)
        return pair(*output.unbind(-1))
    return pair(
        torch.addcmul(mean.real, std, noise[0], value=scale),
        torch.addcmul(mean.imag, std, noise[1], value=scale),
    )


def _stretch(s, gamma, zeta):
    return torch.clamp(s * (zeta - gamma) + gamma, 0.0, 1.0)


def hard_concrete(log_alpha, shape, beta=2.0 / 3.0, gamma=-0.1, zeta=1.1):
    r"""Independent hard-concrete gates (Louizos, Welling & Kingma, 2018), drawn.

    :math:`z = \min(1, \max(0, s (\zeta - \gamma) + \gamma))` with
    :math:`s = \sigma((\log u - \log(1 - u) - \log\alpha) / \beta)`,
    :math:`u \sim U(0, 1)`: a gate in :math:`[0, 1]` that is exactly 0 or 1
    with positive probability, differentiable in :math:`\log\alpha`. The
    sign is this package's: a large :math:`\log\alpha` closes the gate.

    Parameters
    ----------
    log_alpha : torch.Tensor
        The gates' log-odds of being closed, broadcastable to ``shape``.
    shape : tuple of int
        The shape of the sample: a gate per element.
    beta, gamma, zeta : float
        Temperature and stretch interval :math:`(\gamma, \zeta)`.

    Returns
    -------
    torch.Tensor
        Of ``shape``, on ``log_alpha``'s device and of its dtype.

    Examples
    --------
    >>> gates = hard_concrete(torch.tensor([-10.0, 10.0]), (1000, 2))
    >>> gates.mean(0).round()
    tensor([1., 0.])
    """
    u = torch.rand(shape, dtype=log_alpha.dtype, device=log_alpha.device).clamp_(1e-6, 1 - 1e-6)
    s = torch.sigmoid((torch.log(u) - torch.log1p(-u) - log_alpha) / beta)
    return _stretch(s, gamma, zeta)


def hard_concrete_gate(log_alpha, gamma=-0.1, zeta=1.1):
    r"""The deterministic (test-time) hard-concrete gate: :math:`\min(1, \max(0, \sigma(-\log\alpha)(\zeta - \gamma) + \gamma))`.

    Parameters
    ----------
    log_alpha : torch.Tensor
    gamma, zeta : float
        The stretch interval, as for :func:`hard_concrete`.

    Returns
    -------
    torch.Tensor
        In :math:`[0, 1]`; exactly 0 for :math:`\log\alpha \geq \log(-\zeta / \gamma)`.

    Examples
    --------
    >>> hard_concrete_gate(torch.tensor([-5.0, 0.0, 5.0]))
    tensor([1.0000, 0.5000, 0.0000])
    """
    return _stretch(torch.sigmoid(-log_alpha), gamma, zeta)


def l0_penalty(log_alpha, beta=2.0 / 3.0, gamma=-0.1, zeta=1.1):
    r"""The probability that a hard-concrete gate is non-zero: the expected L0 norm.

    :math:`\sigma(-\log\alpha - \beta \log(-\gamma / \zeta))`, Louizos et
    al. (2018), eq. 12, with this package's sign of :math:`\log\alpha`.

    Parameters
    ----------
    log_alpha : torch.Tensor
    beta, gamma, zeta : float
        As for :func:`hard_concrete`.

    Returns
    -------
    torch.Tensor
        Per gate, in :math:`(0, 1)`.

    Examples
    --------
    >>> l0_penalty(torch.tensor([0.0]))
    tensor([0.8318])
    """
    return torch.sigmoid(-log_alpha - beta * math.log(-gamma / zeta))


def gaussian_gate(output, log_alpha, shape):
    r"""The output times a multiplicative Gaussian gate of mean 1: ``output * (1 + sqrt(alpha) * noise)``.

    The gate :math:`z = 1 + \sqrt\alpha\,\varepsilon` is drawn once per
    element of ``shape`` and broadcast over ``output`` (e.g. once per
    example and channel, shared by the channel's spatial positions). For a
    complex ``output`` the noise is complex-circular,
    :math:`\varepsilon \sim \mathcal{CN}(0, 1)`: the output's variance
    :math:`\alpha |y|^2` is split evenly between its real and imaginary parts.

    Parameters
    ----------
    output : torch.Tensor or Cplx
        The output :math:`y` of the layer with its plain weight.
    log_alpha : torch.Tensor
        :math:`\log\alpha`, broadcastable to ``shape``.
    shape : tuple of int
        The shape of the draw, broadcastable to ``output``'s.

    Returns
    -------
    torch.Tensor or Cplx
        :math:`z y`: mean :math:`y`, variance :math:`\alpha |y|^2`, differentiable in
        ``output`` and ``log_alpha``.

    Examples
    --------
    >>> y = gaussian_gate(torch.full((20000, 1), 2.0), torch.tensor([0.0]), (20000, 1))
    >>> round(float(y.std()), 1)
    2.0
    """
    std = torch.exp(0.5 * log_alpha)
    if isinstance(output, torch.Tensor):
        noise = torch.randn(shape, dtype=output.dtype, device=output.device)
        return torch.addcmul(output, output, noise * std)
    # one draw for both parts, as in ``local_reparameterization``
    noise = torch.randn((2, *shape), dtype=output.real.dtype, device=output.real.device)
    a, b = (noise * (std * 0.5**0.5)).unbind(0)
    re, im = output.real, output.imag
    # (re + i im)(1 + a + i b)
    return type(output)(re + re * a - im * b, im + im * a + re * b)
