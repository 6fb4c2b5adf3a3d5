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

The exponential integral :math:`\operatorname{Ei}` the complex penalties
need (:func:`expi`, :class:`ExpiFunction`, :class:`BogusExpiFunction`) is
computed in torch, on the tensor's device and in its dtype, so that a GPU
step does not stall and ``torch.compile(fullgraph=True)`` traces it.
"""

from __future__ import annotations

import math

import torch

from ...cplx import Cplx
from ...cplx._views import _interleaved
from ...cplx.tensor import _pair
from ._expint import (
    BogusExpiFunction,
    ExpiFunction,
    _exp1_fraction,
    _exp1_series,
    euler_gamma,
    expi,
)

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
    "uniform_noise",
    "hard_concrete_gate",
    "l0_penalty",
    "gaussian_noise",
    "gaussian_gate",
]

# Documented, and published, here: the reference and pickles name this module.
for _public in (expi, ExpiFunction, BogusExpiFunction):
    _public.__module__ = __name__

# The complex VD KL is the series P(z) of E1 itself, without E1's
# cancellation (see ``_expint``), and switches to the continued fraction at
# 2, where the fraction converges faster. The term counts give 1e-11
# relative error in float64 and 1e-7 in float32 on either side of the
# switch; float32 and lower precisions take the shorter ones, which makes
# the KL twice as cheap.
_KL_SWITCH = 2.0
_KL_TERMS = {torch.float64: (24, 30)}
_KL_TERMS_SINGLE = 14, 15
# Above this z = 1/alpha, E1(z) < 1e-23 of the KL (>= gamma + log 50): the KL
# clamps z there, which keeps exp(-z) out of the denormal range, where the
# CPU's exp is 20 times slower.
_KL_FRACTION_CAP = 50.0

# Molchanov et al. (2017), eq. 14: the real VD KL approximation.
_REAL_VD = 0.63576, 1.87320, 1.48695
# The same form fitted to the complex VD KL (Nazarov & Burnaev, 2020): these
# constants reproduce the published package's ``*VDApprox`` penalty (to 1e-15,
# compared as a black box).
_CPLX_VD_APPROX = 0.57810, 1.45926, 1.36526


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


def _standard_normal(shape, like):
    """Standard normal noise of ``shape``, of ``like``'s dtype and device, by torch's own kernel.

    Compiled for the CPU, inductor (torch 2.13) generates its own normal
    draws, ten times slower than torch's kernel (131072 numbers: 5.1 ms
    against 0.48 ms), which made a compiled variational dropout step slower
    than an eager one; there the draw is an opaque op that fills a new
    tensor in place, so that no pass of the compiler merges two draws or
    recomputes one. It reads ``like`` (the values it is drawn for), so that
    the draws of consecutive layers keep their order, and takes the numbers
    eager code would.
    """
    if torch.compiler.is_compiling() and not torch.compiler.is_exporting() and (
        like.device.type == "cpu"
    ):
        noise = torch.empty(shape, dtype=like.dtype, device=like.device)
        _fill_standard_normal_(noise, like)
        return noise
    return torch.randn(shape, dtype=like.dtype, device=like.device)


@torch.library.custom_op("cplxmodule::fill_standard_normal_", mutates_args=("out",))
def _fill_standard_normal_(out: torch.Tensor, after: torch.Tensor) -> None:
    out.normal_()


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
        return torch.addcmul(mean, std, _standard_normal(var.shape, var))
    # complex-circular: each part of variance var / 2. One draw for both
    # parts, the real parts' first, so that compiled code (which may reorder
    # independent draws) takes the same random numbers as eager.
    noise = _standard_normal((2 * var.numel(),), var).view(2, *var.shape)
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


def hard_concrete(log_alpha, shape, beta=2.0 / 3.0, gamma=-0.1, zeta=1.1, noise=None):
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
    noise : torch.Tensor, optional
        The uniform draw :math:`u` of ``shape`` (:func:`uniform_noise`), so
        that layers can share one; drawn if omitted.

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
    u = uniform_noise(shape, log_alpha) if noise is None else noise
    s = torch.sigmoid((torch.log(u) - torch.log1p(-u) - log_alpha) / beta)
    return _stretch(s, gamma, zeta)


def uniform_noise(shape, like):
    """The uniform draw of :func:`hard_concrete`: of ``shape``, in :math:`[10^{-6}, 1 - 10^{-6}]`.

    Parameters
    ----------
    shape : tuple of int
    like : torch.Tensor
        Gives the dtype and device.

    Returns
    -------
    torch.Tensor
    """
    return torch.rand(shape, dtype=like.dtype, device=like.device).clamp_(1e-6, 1 - 1e-6)


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


def gaussian_noise(output, shape):
    r"""The standard normal draw of :func:`gaussian_gate` for ``output``.

    Parameters
    ----------
    output : torch.Tensor or Cplx
    shape : tuple of int
        The shape of the gates' draw.

    Returns
    -------
    torch.Tensor
        Of ``shape`` for a real ``output``; ``(2, *shape)`` for a complex
        one (the real and imaginary parts of :math:`\varepsilon`, each of
        variance 1).
    """
    if isinstance(output, torch.Tensor):
        return _standard_normal(shape, output)
    return _standard_normal((2, *shape), output.real)


def gaussian_gate(output, log_alpha, shape, noise=None):
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
    noise : torch.Tensor, optional
        The standard normal draw (:func:`gaussian_noise`), so that layers
        can share one; drawn if omitted.

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
    if noise is None:
        noise = gaussian_noise(output, shape)
    if isinstance(output, torch.Tensor):
        return torch.addcmul(output, output, noise * std)
    # one draw for both parts, as in ``local_reparameterization``
    a, b = (noise * (std * 0.5**0.5)).unbind(0)
    re, im = output.real, output.imag
    # (re + i im)(1 + a + i b)
    return type(output)(re + re * a - im * b, im + im * a + re * b)
