r"""Complex losses: real-valued measures of the error between two complex tensors.

Each takes a prediction ``input`` and a ``target``, both :class:`Cplx` of
the same shape, computes a loss per element from the complex error
:math:`e = x - y` (or from the moduli and phases of :math:`x` and
:math:`y`), and reduces it as torch's losses do: ``reduction="mean"``
(the default), ``"sum"`` or ``"none"``. The modulus is computed on the two
real parts, never through torch's native complex dtype, so every loss
compiles with inductor and exports.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._shared import (
    check_bool,
    check_choice,
    check_positive,
    check_reduction,
    check_ssim_options,
    check_ssim_shape,
    check_weights,
    checked_cplx,
)
from ._typing import CplxLike
from .spectral import _hilbert
from .tensor import Cplx, _rescaled
__all__ = [
    "mse_loss",
    "l1_loss",
    "cauchy_loss",
    "log_cosh_loss",
    "log_error_loss",
    "phase_aware_loss",
    "ssim_loss",
    "fourth_power_loss",
    "analytic_signal_loss",
    "gaussian_nll_loss",
    "rice_nll_loss",
]


def _checked_pair(
    input: object, target: object, reduction: str, where: str,
    reductions: tuple[str, ...] = ("none", "mean", "sum"),
) -> tuple[Cplx, Cplx]:
    input = checked_cplx(input, "input", where=where)
    target = checked_cplx(target, "target", where=where)
    if input.shape != target.shape:
        raise ValueError(
            f"{where}: `target` must have the shape of `input`, {tuple(input.shape)},"
            f" got {tuple(target.shape)}"
        )
    check_choice(reduction, "reduction", where, reductions)
    return input, target


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _squared_error(input, target):
    re, im = input.real - target.real, input.imag - target.imag
    return re * re + im * im


def mse_loss(input: CplxLike, target: CplxLike, reduction: str = "mean") -> torch.Tensor:
    r"""The mean squared modulus of the error, :math:`|x - y|^2`.

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of the same shape.
    reduction : {"mean", "sum", "none"}
        As for :func:`torch.nn.functional.mse_loss`.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    Notes
    -----
    :math:`|e|^2 = (\operatorname{Re} e)^2 + (\operatorname{Im} e)^2`: the
    complex loss and the sum of torch's real MSE on each part are one and
    the same, so there is no separate split form. It is twice
    :func:`torch.nn.functional.mse_loss` on the two parts taken as real
    elements (e.g. on :func:`torch.view_as_real` of a native tensor).

    Examples
    --------
    >>> x = Cplx(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0]))
    >>> cplx.mse_loss(x, Cplx.zeros(2)), cplx.mse_loss(x, Cplx.zeros(2), reduction="none")
    (tensor(2.5000), tensor([1., 4.]))
    """
    input, target = _checked_pair(input, target, reduction, "mse_loss")
    return _reduce(_squared_error(input, target), reduction)


def l1_loss(
    input: CplxLike, target: CplxLike, reduction: str = "mean", split: bool = False,
) -> torch.Tensor:
    r"""The mean modulus of the error, :math:`|x - y|`, or its split form.

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of the same shape.
    reduction : {"mean", "sum", "none"}
        As for :func:`torch.nn.functional.l1_loss`.
    split : bool, default False
        Use :math:`|\operatorname{Re} e| + |\operatorname{Im} e|` (the
        sum of torch's real L1 loss on each part, the :math:`\ell^1` norm of
        the error as a point of the plane) instead of :math:`|e|`.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    Notes
    -----
    The modulus form is rotation invariant (it depends on the error's size,
    not its direction) and is what :func:`torch.nn.functional.l1_loss`
    computes on native complex tensors; the split form penalises an error
    along a diagonal up to :math:`\sqrt 2` times more than one along an axis.

    Examples
    --------
    >>> x = Cplx(torch.tensor([3.0]), torch.tensor([-4.0]))
    >>> cplx.l1_loss(x, Cplx.zeros(1)), cplx.l1_loss(x, Cplx.zeros(1), split=True)
    (tensor(5.), tensor(7.))
    """
    input, target = _checked_pair(input, target, reduction, "l1_loss")
    error = input - target
    loss = error.real.abs() + error.imag.abs() if split else abs(error)
    return _reduce(loss, reduction)


def cauchy_loss(
    input: CplxLike, target: CplxLike, c: float = 1.0, reduction: str = "mean",
) -> torch.Tensor:
    r"""The Cauchy (Lorentzian) loss of the error, :math:`\frac{c^2}{2}\log(1 + |x - y|^2 / c^2)`.

    Close to :math:`|e|^2 / 2` for small errors, it grows only
    logarithmically for large ones, so outliers weigh little.

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of the same shape.
    c : float, default 1.0
        The scale of the error beyond which the loss flattens.
    reduction : {"mean", "sum", "none"}
        As for torch's losses.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ, ``c`` is not positive or ``reduction`` is unknown.

    Examples
    --------
    >>> x = Cplx(torch.tensor([0.0]), torch.tensor([1.0]))
    >>> cplx.cauchy_loss(x, Cplx.zeros(1))  # log(2) / 2
    tensor(0.3466)
    """
    input, target = _checked_pair(input, target, reduction, "cauchy_loss")
    check_positive(c, "c", "cauchy_loss")
    loss = torch.log1p(_squared_error(input, target) / (c * c)) * (c * c / 2)
    return _reduce(loss, reduction)


def log_cosh_loss(input: CplxLike, target: CplxLike, reduction: str = "mean") -> torch.Tensor:
    r"""The log-cosh loss of the error's modulus, :math:`\log\cosh|x - y|`.

    Close to :math:`|e|^2 / 2` for small errors and to
    :math:`|e| - \log 2` for large ones: smooth like the MSE, robust like
    the L1 loss.

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of the same shape.
    reduction : {"mean", "sum", "none"}
        As for torch's losses.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    Notes
    -----
    Computed as :math:`a + \operatorname{softplus}(-2a) - \log 2` with
    :math:`a = |e|`, which does not overflow where :math:`\cosh a` would.

    Examples
    --------
    >>> x = Cplx(torch.tensor([0.0, 600.0]), torch.tensor([1.0, 800.0]))
    >>> loss = cplx.log_cosh_loss(x, Cplx.zeros(2), reduction="none")
    >>> [round(value, 3) for value in loss.tolist()]  # log(cosh(1)), 1000 - log(2)
    [0.434, 999.307]
    """
    input, target = _checked_pair(input, target, reduction, "log_cosh_loss")
    size = abs(input - target)
    loss = size + F.softplus(-2 * size) - math.log(2)
    return _reduce(loss, reduction)


def log_error_loss(input: CplxLike, target: CplxLike, reduction: str = "mean") -> torch.Tensor:
    r"""The squared modulus of the difference of the logarithms, :math:`|\log x - \log y|^2`.

    With principal logarithms it is
    :math:`(\log|x| - \log|y|)^2 + (\arg x - \arg y)^2`: a relative error
    of the modulus plus the squared difference of the phases, as used to
    train fully complex-valued networks (Savitha et al.; Hirose 2012).

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of the same shape, nonzero.
    reduction : {"mean", "sum", "none"}
        As for torch's losses.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``;
        infinite where ``input`` or ``target`` is zero.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    Notes
    -----
    The phase difference is that of the principal arguments, in
    :math:`(-2\pi, 2\pi)`, as the formula defines it: phases on either
    side of :math:`\pm\pi` count as far apart. :func:`phase_aware_loss`
    measures the phase the short way round.

    References
    ----------
    R. Savitha, S. Suresh, N. Sundararajan and P. Saratchandran, "A new
    learning algorithm with logarithmic performance index for complex-valued
    neural networks", Neurocomputing 72 (2009).
    A. Hirose, "Complex-Valued Neural Networks", 2nd ed., Springer, 2012.

    Examples
    --------
    >>> x = Cplx(torch.tensor([0.0]), torch.tensor([1.0]))
    >>> cplx.log_error_loss(x, Cplx.ones(1))  # (pi/2)^2
    tensor(2.4674)
    """
    input, target = _checked_pair(input, target, reduction, "log_error_loss")
    modulus = torch.log(abs(input)) - torch.log(abs(target))
    phase = input.angle - target.angle
    return _reduce(modulus * modulus + phase * phase, reduction)


def phase_aware_loss(
    input: CplxLike,
    target: CplxLike,
    modulus_weight: float = 1.0,
    phase_weight: float = 1.0,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""Modulus and phase terms, :math:`\alpha(|x| - |y|)^2 + \beta(1 - \cos\Delta\varphi)`.

    Here :math:`\Delta\varphi = \arg x - \arg y`. The two weights set how
    much the magnitude and the phase of the prediction count, which the
    MSE ties together.

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of the same shape.
    modulus_weight : float, default 1.0
        The weight :math:`\alpha \geq 0` of the squared modulus error.
    phase_weight : float, default 1.0
        The weight :math:`\beta \geq 0` of the phase error.
    reduction : {"mean", "sum", "none"}
        As for torch's losses.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ, a weight is negative or ``reduction`` is unknown.

    Notes
    -----
    The phase term is :math:`1 - \operatorname{Re}(x\bar y) / (|x||y|)`:
    :math:`0` for equal phases, :math:`2` for opposite ones, smooth and
    periodic (no jump at :math:`\pm\pi`), and close to
    :math:`\Delta\varphi^2 / 2` for small differences. Where :math:`x` or
    :math:`y` is zero the phase is undefined and the term is :math:`0`.

    Examples
    --------
    >>> x = Cplx(torch.tensor([0.0]), torch.tensor([2.0]))
    >>> cplx.phase_aware_loss(x, Cplx.ones(1))  # (2 - 1)^2 + (1 - cos(pi/2))
    tensor(2.)
    >>> cplx.phase_aware_loss(x, Cplx.ones(1), phase_weight=0.0)
    tensor(1.)
    """
    where = "phase_aware_loss"
    input, target = _checked_pair(input, target, reduction, where)
    check_weights(where, modulus_weight=modulus_weight, phase_weight=phase_weight)
    # the cosine is the same for each operand scaled by a power of two,
    # which brings its modulus near 1: the product of two moduli below about
    # 1e-19 (above 1e19) underflows to 0 (overflows) in single precision,
    # and the terms of the cosine's gradient, each of the order of
    # 1 / modulus, overflow below about 3e-39 before they cancel; the
    # division by an exact power of two changes no other value
    x_re, x_im, _ = _rescaled(input.real, input.imag)
    y_re, y_im, _ = _rescaled(target.real, target.imag)
    dot = x_re * y_re + x_im * y_im
    product = abs(Cplx(x_re, x_im)) * abs(Cplx(y_re, y_im))
    defined = product > 0
    # the division only where it is defined, so that no NaN reaches the gradient
    cos = torch.where(defined, dot / torch.where(defined, product, 1), 1)
    difference = abs(input) - abs(target)
    loss = modulus_weight * difference * difference + phase_weight * (1 - cos)
    return _reduce(loss, reduction)


def _gaussian_window(size, sigma, dtype, device):
    position = torch.arange(size, dtype=dtype, device=device) - (size - 1) / 2
    window = torch.exp(-(position * position) / (2 * sigma * sigma))
    return window / window.sum()


def ssim_loss(
    input: CplxLike,
    target: CplxLike,
    window_size: int = 11,
    sigma: float = 1.5,
    data_range: float = 1.0,
    k1: float = 0.01,
    k2: float = 0.03,
    reduction: str = "mean",
    split: bool = False,
) -> torch.Tensor:
    r"""One minus the structural similarity (SSIM) of the moduli :math:`|x|` and :math:`|y|`, or of the parts.

    SSIM (Wang et al. 2004) compares local means, variances and the
    covariance of two images in a Gaussian window:

    .. math::

        \mathrm{SSIM} = \frac{(2\mu_a\mu_b + C_1)(2\sigma_{ab} + C_2)}
                             {(\mu_a^2 + \mu_b^2 + C_1)(\sigma_a^2 + \sigma_b^2 + C_2)},
        \quad C_1 = (k_1 L)^2,\ C_2 = (k_2 L)^2,

    here of :math:`a = |x|` and :math:`b = |y|`, each channel on its own,
    at every position where the window fits inside the image (no padding).
    The loss is :math:`1 - \mathrm{SSIM}`.

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of shape ``(N, C, H, W)``.
    window_size : int, default 11
        The side of the Gaussian window, odd.
    sigma : float, default 1.5
        The standard deviation of the Gaussian window, in pixels.
    data_range : float, default 1.0
        The range :math:`L` of the moduli (e.g. 1 for images in [0, 1]).
    k1, k2 : float
        The stabilising constants of :math:`C_1` and :math:`C_2`.
    reduction : {"mean", "sum", "none"}
        ``"mean"`` gives one minus the mean SSIM; ``"none"`` the map
        :math:`1 - \mathrm{SSIM}` of shape ``(N, C, H - w + 1, W - w + 1)``.
    split : bool, default False
        Compare the real parts and the imaginary parts apart, each as an
        image, and average their SSIM maps: :math:`1 - (\mathrm{SSIM}(\Re x,
        \Re y) + \mathrm{SSIM}(\Im x, \Im y)) / 2`. ``data_range`` is then
        the range of the parts (e.g. 2 for parts in :math:`[-1, 1]`).

    Returns
    -------
    torch.Tensor
        The reduced loss, or the map. Images of no channels give an empty
        map, whose mean is NaN and sum 0, as for torch's losses.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ or are not ``(N, C, H, W)``, an image is
        smaller than the window, or an argument is out of its range.

    References
    ----------
    Z. Wang, A. C. Bovik, H. R. Sheikh and E. P. Simoncelli, "Image quality
    assessment: from error visibility to structural similarity", IEEE Trans.
    Image Processing 13(4), 2004. The split form is complextorch's
    ``SplitSSIM`` (J. Smith, 2023), which returns the sum of the two SSIMs,
    a similarity, where this is a loss.

    Examples
    --------
    >>> x = cplx.randn(2, 3, 16, 16)
    >>> float(cplx.ssim_loss(x, x)) < 1e-6
    True
    >>> cplx.ssim_loss(x, x * 1j, reduction="none").shape  # the phase plays no part
    torch.Size([2, 3, 6, 6])
    >>> float(cplx.ssim_loss(x, x * 1j, split=True)) > 0.5  # unless split
    True
    """
    return _ssim_loss(input, target, window_size, sigma, data_range, k1, k2, reduction,
                      split, where="ssim_loss")


def _ssim_loss(input, target, window_size, sigma, data_range, k1, k2, reduction, split=False,
               *, where):
    """:func:`ssim_loss`, whose messages start with ``where`` (a layer's name)."""
    input, target = _checked_pair(input, target, reduction, where)
    check_ssim_options(window_size, sigma, data_range, k1, k2, where)
    check_ssim_shape(input.shape, window_size, where)
    check_bool(split, "split", where)
    return _reduce(1 - _ssim_map(input, target, window_size, sigma, data_range, k1, k2, split),
                   reduction)


def _ssim_map(input, target, window_size, sigma, data_range, k1, k2, split):
    """The SSIM map of the moduli of two checked ``Cplx`` images, or the mean map of their parts."""
    options = (window_size, sigma, data_range, k1, k2)
    if split:
        return (_ssim(input.real, target.real, *options)
                + _ssim(input.imag, target.imag, *options)) / 2
    return _ssim(abs(input), abs(target), *options)


def _ssim(a, b, window_size, sigma, data_range, k1, k2):
    """The SSIM map of the real images ``a`` and ``b``, of shape ``(N, C, H, W)``."""
    # a Python int, not the traced size: the exporters then see a kernel of a
    # known shape, and export the loss with a dynamic batch
    channels = int(a.shape[1])
    if channels == 0:
        # a convolution takes no zero groups; the map of no channels is
        # empty, and reduces as torch's losses reduce an empty input (a mean
        # of NaN, a sum of 0), with empty gradients for both operands
        return (a - b)[..., window_size - 1:, window_size - 1:]
    rows = _gaussian_window(window_size, sigma, a.dtype, a.device).view(1, 1, -1, 1)
    rows = rows.repeat(channels, 1, 1, 1)
    columns = rows.transpose(2, 3)

    def blur(image):
        # the separable Gaussian, one channel at a time; a call per map is
        # faster than one call on the maps stacked (which costs a copy)
        return F.conv2d(F.conv2d(image, rows, groups=channels), columns, groups=channels)

    mu_a, mu_b, aa, bb, ab = (blur(m) for m in (a, b, a * a, b * b, a * b))
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    mu_ab, mu_aa, mu_bb = mu_a * mu_b, mu_a * mu_a, mu_b * mu_b
    # a product of two ratios, not the ratio of two products, which overflow
    # float32 for moduli above ~1e9
    return ((2 * mu_ab + c1) / (mu_aa + mu_bb + c1)) * (
        (2 * (ab - mu_ab) + c2) / ((aa - mu_aa) + (bb - mu_bb) + c2)
    )


def fourth_power_loss(input: CplxLike, target: CplxLike, reduction: str = "mean") -> torch.Tensor:
    r"""The mean fourth power of the modulus of the error, :math:`|x - y|^4`.

    Large errors weigh more, small ones less, than in :func:`mse_loss`.

    Parameters
    ----------
    input, target : Cplx
        The prediction and the target, of the same shape.
    reduction : {"mean", "sum", "none"}
        As for :func:`torch.nn.functional.mse_loss`.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not a :class:`Cplx`.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    Notes
    -----
    complextorch's ``CVFourthPowError`` is half of this loss, as its
    ``CVQuadError`` is half of :func:`mse_loss`.

    References
    ----------
    R. Hänsch, "Complex-valued multi-layer perceptrons - an application to
    polarimetric SAR data", Photogrammetric Engineering & Remote Sensing
    76(9), 2010.

    Examples
    --------
    >>> x = Cplx(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0]))
    >>> cplx.fourth_power_loss(x, Cplx.zeros(2), reduction="none")
    tensor([ 1., 16.])
    """
    input, target = _checked_pair(input, target, reduction, "fourth_power_loss")
    squared = _squared_error(input, target)
    return _reduce(squared * squared, reduction)


def analytic_signal_loss(input: CplxLike, dim: int = -1, reduction: str = "mean") -> torch.Tensor:
    r"""How far a signal is from analytic: :math:`|\operatorname{Im} z - \mathcal{H}\{\operatorname{Re} z\}|^2`.

    A signal is analytic when its imaginary part is the Hilbert transform
    :math:`\mathcal{H}` of its real part (its spectrum has no negative
    frequencies); the loss is the squared distance from that, per element,
    reduced. It takes one argument, the signal, not a prediction and a
    target.

    Parameters
    ----------
    input : Cplx
        The signal.
    dim : int, default -1
        The time dimension, along which the Hilbert transform is taken (see
        :func:`~cplxmodule.cplx.hilbert`).
    reduction : {"mean", "sum", "none"}
        As for :func:`torch.nn.functional.mse_loss`.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss per element with ``reduction="none"``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``reduction`` is unknown or ``input`` is a scalar.

    References
    ----------
    The consistency penalty of analytic neural networks, arXiv:2409.10075
    (2024), as complextorch's ``AnalyticSignalLoss``; D. Gabor, "Theory of
    communication", J. IEE 93(26), 1946 (the analytic signal).

    Examples
    --------
    >>> t = torch.arange(16.0)
    >>> z = Cplx(torch.cos(torch.pi * t / 4), torch.sin(torch.pi * t / 4))
    >>> float(cplx.analytic_signal_loss(z)) < 1e-10
    True
    >>> round(float(cplx.analytic_signal_loss(z.conj)), 4)  # a negative frequency: mean |2 sin|^2
    2.0
    """
    where = "analytic_signal_loss"
    input = checked_cplx(input, where=where)
    check_reduction(reduction, where)
    transform = _hilbert(input.real, dim, where).imag
    error = input.imag - transform
    return _reduce(error * error, reduction)


# the likelihoods also reduce per example: the data term of the evidence lower bound
_NLL_REDUCTIONS = ("none", "mean", "sum", "batchmean")


def _checked_var(var: object, like: torch.Tensor, eps: float, where: str) -> torch.Tensor:
    """``var`` as a positive tensor that broadcasts to ``like``, clamped at ``eps`` (its gradient kept).

    A number becomes a tensor of ``like``'s dtype and device (not float32's rounding).
    """
    check_positive(eps, "eps", where)
    shape = like.shape
    if not isinstance(var, torch.Tensor):
        var = torch.tensor(float(check_positive(var, "var", where)), dtype=like.dtype,
                           device=like.device)
    if var.is_complex():
        raise TypeError(f"{where}: `var` must be real, got dtype {var.dtype}")
    try:
        torch.broadcast_shapes(var.shape, shape)
    except RuntimeError as error:
        raise ValueError(
            f"{where}: `var` must broadcast to the shape of `input`, {tuple(shape)},"
            f" got {tuple(var.shape)}"
        ) from error
    if bool((var < 0).any()):
        raise ValueError(f"{where}: `var` must be non-negative, got negative entries")
    # as torch's gaussian_nll_loss: the clamp does not stop the gradient
    var = var.clone()
    with torch.no_grad():
        var.clamp_(min=eps)
    return var


def _reduce_nll(loss, reduction):
    if reduction == "batchmean":
        return loss.sum() / (loss.shape[0] if loss.dim() else 1)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: CplxLike, target: CplxLike, var: object, full: bool = False, eps: float = 1e-6,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The negative log-likelihood of ``target`` under a circular complex Gaussian of mean ``input``.

    The complex twin of :func:`torch.nn.functional.gaussian_nll_loss`: the
    noise :math:`n = y - x` is :math:`\mathcal{CN}(0, \sigma^2)`, its real
    and imaginary parts independent, of variance :math:`\sigma^2 / 2` each,
    with :math:`\sigma^2 =` ``var`` the expected :math:`|n|^2`. Per element

    .. math::

        -\log p(y \mid x) = \log \sigma^2 + \frac{|y - x|^2}{\sigma^2}
        \;(+ \log \pi \text{ with } ``full``),

    twice the mean squared error over :math:`\sigma^2` plus the log-variance
    that keeps a learned :math:`\sigma^2` from growing without bound.

    Parameters
    ----------
    input, target : Cplx
        The mean (the model's output) and the observation, of one shape.
    var : torch.Tensor or float
        :math:`\sigma^2`, positive: a number, or a tensor that broadcasts to
        ``input`` (one per output, per feature, per example), fixed or learned
        (e.g. ``log_var.exp()`` of a parameter). Clamped at ``eps`` for
        stability, as torch does, without stopping its gradient.
    full : bool, default False
        Add the constant :math:`\log \pi`.
    eps : float, default 1e-6
    reduction : {"mean", "sum", "none", "batchmean"}
        As torch's losses, and ``"batchmean"``: the sum over every output
        divided by the batch size (dimension 0), the negative
        log-likelihood *per example* that the evidence lower bound takes
        (see :func:`~cplxmodule.nn.relevance.elbo_loss`).

    Returns
    -------
    torch.Tensor

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is not complex, or ``var`` is complex.
    ValueError
        If the shapes differ, ``var`` does not broadcast or is negative,
        or ``reduction`` is unknown.

    Notes
    -----
    It is the sum of :func:`torch.nn.functional.gaussian_nll_loss` on the
    two parts, each of variance :math:`\sigma^2 / 2`, less
    :math:`\log 2`, times two.

    Examples
    --------
    >>> x, y = Cplx.zeros(2), Cplx(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0]))
    >>> cplx.gaussian_nll_loss(x, y, var=2.0, reduction="none")
    tensor([1.1931, 2.6931])
    """
    where = "gaussian_nll_loss"
    input, target = _checked_pair(input, target, reduction, where, _NLL_REDUCTIONS)
    check_bool(full, "full", where)
    variance = _checked_var(var, input.real, eps, where).to(input.real)
    loss = torch.log(variance) + _squared_error(input, target) / variance
    if full:
        loss = loss + math.log(math.pi)
    return _reduce_nll(loss, reduction)


def rice_nll_loss(
    input: CplxLike, target: torch.Tensor, var: object, full: bool = False, eps: float = 1e-6,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The negative log-likelihood of a magnitude ``target`` under a Rice law of complex mean ``input``.

    When only the modulus :math:`r = |y|` of a noisy observation
    :math:`y = x + n`, :math:`n \sim \mathcal{CN}(0, \sigma^2)`, is
    measured (a magnitude image, an envelope), :math:`r` follows the Rice
    law of parameters :math:`\nu = |x|` and :math:`s^2 = \sigma^2 / 2`.
    Per element, dropping what does not depend on the model,

    .. math::

        -\log p(r \mid x) = \log \sigma^2 + \frac{(r - |x|)^2}{\sigma^2}
        - \log \tilde I_0\!\left(\frac{2 r |x|}{\sigma^2}\right)
        \;(- \log r - \log 2 \text{ with } ``full``),

    :math:`\tilde I_0(z) = e^{-z} I_0(z)` the scaled Bessel function
    (:func:`torch.special.i0e`), which keeps it finite for any :math:`r|x|`.

    Parameters
    ----------
    input : Cplx
        The complex mean :math:`x`.
    target : torch.Tensor
        The measured moduli :math:`r \geq 0`, real, of ``input``'s shape.
    var, eps : as for :func:`gaussian_nll_loss`
    full : bool, default False
        Add the terms that do not depend on the model, :math:`-\log r -
        \log 2` (infinite where :math:`r = 0`).
    reduction : {"mean", "sum", "none", "batchmean"}
        As for :func:`gaussian_nll_loss`.

    Returns
    -------
    torch.Tensor

    Raises
    ------
    TypeError
        If ``input`` is not complex or ``target`` not a real tensor.
    ValueError
        If the shapes differ, ``target`` is negative, ``var`` does not
        broadcast or is negative, or ``reduction`` is unknown.

    Examples
    --------
    >>> x = Cplx(torch.tensor([3.0]), torch.tensor([4.0]))
    >>> cplx.rice_nll_loss(x, torch.tensor([5.0]), var=1.0, full=True)
    tensor(0.5698)
    """
    where = "rice_nll_loss"
    input = checked_cplx(input, "input", where=where)
    if not isinstance(target, torch.Tensor) or target.is_complex():
        raise TypeError(f"{where}: `target` must be a real tensor of moduli, got {target!r}")
    if target.shape != input.shape:
        raise ValueError(
            f"{where}: `target` must have the shape of `input`, {tuple(input.shape)},"
            f" got {tuple(target.shape)}"
        )
    if bool((target < 0).any()):
        raise ValueError(f"{where}: `target` must be moduli (>= 0), got negative entries")
    check_choice(reduction, "reduction", where, _NLL_REDUCTIONS)
    check_bool(full, "full", where)
    variance = _checked_var(var, input.real, eps, where).to(input.real)
    modulus = abs(input)
    loss = torch.log(variance) + (target - modulus) ** 2 / variance - torch.log(
        torch.special.i0e(2 * target * modulus / variance))
    if full:
        loss = loss - torch.log(target) - math.log(2.0)
    return _reduce_nll(loss, reduction)


# --- signal and image quality: SI-SDR, PSNR, NMSE -----------------------------------------------
__all__ += ["si_sdr", "si_sdr_loss", "psnr", "nmse", "ssim"]


def _signal_parts(value: object, name: str, where: str) -> tuple[torch.Tensor, torch.Tensor | None]:
    """A real floating-point tensor as ``(value, None)``, anything complex as its two parts."""
    if isinstance(value, torch.Tensor) and not value.is_complex():
        if not value.is_floating_point():
            raise TypeError(
                f"{where}: `{name}` must be a real floating-point tensor, a Cplx or a complex"
                f" tensor, got {value.dtype} tensor of shape {tuple(value.shape)}"
            )
        return value, None
    value = checked_cplx(value, name, where=where)
    return value.real, value.imag


def _signal_pair(input, target, where):
    """The parts of ``input`` and ``target``, real or complex, of one shape."""
    x = _signal_parts(input, "input", where)
    y = _signal_parts(target, "target", where)
    if x[0].shape != y[0].shape:
        raise ValueError(
            f"{where}: `target` must have the shape of `input`, {tuple(x[0].shape)},"
            f" got {tuple(y[0].shape)}"
        )
    return x, y


def _dims(dim, ndim, name, where):
    """``dim`` (an int or a tuple of ints) as a tuple of dimensions counted from the front."""
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    fixed = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"{where}: `{name}` must be an int or a tuple of ints, got {dim!r}")
        if not -ndim <= d < max(ndim, 1):
            raise ValueError(
                f"{where}: `{name}` must be in [{-ndim}, {ndim - 1}] for an input of"
                f" {ndim} dimensions, got {d}"
            )
        fixed.append(d % max(ndim, 1))
    if len(set(fixed)) != len(fixed):
        raise ValueError(f"{where}: `{name}` must not name a dimension twice, got {dim!r}")
    return tuple(fixed)


def si_sdr(
    input: CplxLike,
    target: CplxLike,
    dim: int = -1,
    zero_mean: bool = False,
    eps: float = 1e-8,
) -> torch.Tensor:
    r"""The scale-invariant signal-to-distortion ratio (SI-SDR) of an estimate, in decibels.

    The target :math:`s` scaled to best fit the estimate :math:`\hat s`,
    :math:`\alpha s` with :math:`\alpha = \langle s, \hat s\rangle / \|s\|^2`
    (the orthogonal projection of :math:`\hat s` on :math:`s`), against what
    is left, :math:`e = \hat s - \alpha s`:

    .. math::

        \mathrm{SI\text{-}SDR} = 10 \log_{10}
        \frac{\|\alpha s\|^2 + \epsilon}{\|\hat s - \alpha s\|^2 + \epsilon},

    of each signal along ``dim``. Rescaling the estimate leaves it unchanged,
    unlike the SNR, so that a model is not rewarded for guessing the level.

    Parameters
    ----------
    input : torch.Tensor or Cplx
        The estimate :math:`\hat s`: a real floating-point tensor (a
        waveform) or complex (a :class:`Cplx`, a tensor of torch's complex
        dtype: a baseband signal).
    target : torch.Tensor or Cplx
        The reference :math:`s`, of the shape of ``input``, real or complex.
    dim : int, default -1
        The time dimension; the others index the signals.
    zero_mean : bool, default False
        Subtract each signal's mean first (as Le Roux et al. do, and
        torchmetrics with ``zero_mean=True``).
    eps : float, default 1e-8
        Added to :math:`\langle s, \hat s\rangle`, :math:`\|s\|^2` and both
        energies (as torchmetrics adds its ``eps``), so that silent signals
        and a perfect estimate give finite values and gradients.

    Returns
    -------
    torch.Tensor
        The SI-SDR in dB of each signal: real, of the input's shape without
        ``dim``.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is neither a real floating-point tensor
        nor complex, ``dim`` is not an int, ``zero_mean`` not a bool.
    ValueError
        If the shapes differ, ``input`` has no dimension ``dim``, or ``eps``
        is negative.

    Notes
    -----
    For complex signals :math:`\langle s, \hat s\rangle = \sum_t
    \overline{s_t} \hat s_t` and :math:`\alpha` is complex: the measure is
    invariant to any complex gain (a scale and a constant phase), the
    orthogonal projection on the complex line of :math:`s`. A real signal
    and a complex one may be compared (the real one taken as complex). For
    real signals it is the SI-SDR of Le Roux et al. (2019), and with ``eps``
    the dtype's machine epsilon, torchmetrics'
    ``scale_invariant_signal_distortion_ratio``. :func:`si_sdr_loss` is its
    negative, to minimise.

    References
    ----------
    J. Le Roux, S. Wisdom, H. Erdogan and J. R. Hershey, "SDR - half-baked
    or well done?", IEEE International Conference on Acoustics, Speech and
    Signal Processing (ICASSP), 2019.

    Examples
    --------
    >>> s = torch.sin(torch.arange(100.0) / 5)
    >>> noise = 0.1 * torch.cos(torch.arange(100.0) * 3)
    >>> cplx.si_sdr(s + noise, s)
    tensor(19.8446)
    >>> cplx.si_sdr(3 * (s + noise), s)  # the level plays no part
    tensor(19.8446)
    >>> z = Cplx(s, torch.cos(torch.arange(100.0) / 5))
    >>> cplx.si_sdr(z * 1j, z)  # a constant phase plays no part: perfect, up to eps
    tensor(100.)
    """
    return _si_sdr(input, target, dim, zero_mean, eps, where="si_sdr")


def _si_sdr(input, target, dim, zero_mean, eps, *, where):
    """:func:`si_sdr`, its errors starting with ``where``."""
    (x_re, x_im), (y_re, y_im) = _signal_pair(input, target, where)
    check_bool(zero_mean, "zero_mean", where)
    check_weights(where, eps=eps)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{where}: `dim` must be an int, got {dim!r}")
    if not -x_re.dim() <= dim < x_re.dim():
        raise ValueError(
            f"{where}: `input` must have dimension {dim}, got shape {tuple(x_re.shape)}"
        )
    # real signals have one part; a real one against a complex one is complex
    x, y = [x_re], [y_re]
    if x_im is not None or y_im is not None:
        x.append(torch.zeros_like(x_re) if x_im is None else x_im)
        y.append(torch.zeros_like(y_re) if y_im is None else y_im)
    if zero_mean:
        x, y = ([t - t.mean(dim, keepdim=True) for t in parts] for parts in (x, y))

    def total(t):
        return t.sum(dim, keepdim=True)

    # alpha = (<s, s^> + eps) / (|s|^2 + eps), <s, s^> = sum conj(s) s^
    scale = sum(total(t * t) for t in y) + eps
    alpha = [(sum(total(a * b) for a, b in zip(y, x)) + eps) / scale]
    if len(x) == 2:
        alpha.append(total(y[0] * x[1] - y[1] * x[0]) / scale)
        projection = [alpha[0] * y[0] - alpha[1] * y[1], alpha[0] * y[1] + alpha[1] * y[0]]
    else:
        projection = [alpha[0] * y[0]]
    signal = sum(p * p for p in projection)
    distortion = sum((a - p) ** 2 for a, p in zip(x, projection))
    return 10 * torch.log10((signal.sum(dim) + eps) / (distortion.sum(dim) + eps))


def si_sdr_loss(
    input: CplxLike,
    target: CplxLike,
    dim: int = -1,
    zero_mean: bool = False,
    eps: float = 1e-8,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The negative scale-invariant signal-to-distortion ratio, in decibels: a loss to minimise.

    :math:`-\mathrm{SI\text{-}SDR}` of :func:`si_sdr` for each signal,
    reduced over the signals.

    Parameters
    ----------
    input, target, dim, zero_mean, eps
        As for :func:`si_sdr`: real or complex signals of one shape, time
        along ``dim``.
    reduction : {"mean", "sum", "none"}
        Over the signals, as torch's losses.

    Returns
    -------
    torch.Tensor
        A real scalar, or the loss of each signal (the input's shape without
        ``dim``) with ``reduction="none"``.

    Raises
    ------
    TypeError, ValueError
        As :func:`si_sdr`, and if ``reduction`` is unknown.

    Notes
    -----
    It is not a likelihood: with a sparsifying penalty, scale the penalty to
    it (the guide on the KL weight says how) rather than reading a weight
    of 1 as the evidence lower bound.

    References
    ----------
    J. Le Roux, S. Wisdom, H. Erdogan and J. R. Hershey, "SDR - half-baked
    or well done?", ICASSP 2019.

    Examples
    --------
    >>> s = torch.randn(4, 1000)
    >>> cplx.si_sdr_loss(s + 0.1 * torch.randn(4, 1000), s) < -15
    tensor(True)
    """
    check_reduction(reduction, "si_sdr_loss")
    return _reduce(-_si_sdr(input, target, dim, zero_mean, eps, where="si_sdr_loss"), reduction)


def _image_pair(input, target, dim, magnitude, where):
    """The squared error and the target's squared modulus, and the dimensions of one image."""
    check_bool(magnitude, "magnitude", where)
    (x_re, x_im), (y_re, y_im) = _signal_pair(input, target, where)
    ndim = x_re.dim()
    if dim is None:
        dims = tuple(range(1, ndim)) or tuple(range(ndim))
    else:
        dims = _dims(dim, ndim, "dim", where)
    if magnitude:
        x = x_re.abs() if x_im is None else abs(Cplx(x_re, x_im))
        y = y_re.abs() if y_im is None else abs(Cplx(y_re, y_im))
        return (x - y) ** 2, y * y, dims
    error = (x_re - y_re) ** 2
    power = y_re * y_re
    if x_im is not None or y_im is not None:
        zeros = torch.zeros_like(x_re)
        x_im = zeros if x_im is None else x_im
        y_im = zeros if y_im is None else y_im
        error = error + (x_im - y_im) ** 2
        power = power + y_im * y_im
    return error, power, dims


def psnr(
    input: CplxLike,
    target: CplxLike,
    data_range: float | torch.Tensor | None = None,
    magnitude: bool = False,
    dim: int | tuple[int, ...] | None = None,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The peak signal-to-noise ratio of complex (or magnitude) images, in decibels.

    .. math::

        \mathrm{PSNR} = 10 \log_{10} \frac{L^2}{\frac1n \sum |x - y|^2},

    per image, with :math:`L` the data range: by default the largest
    modulus of the target image, as the fastMRI evaluation takes it.

    Parameters
    ----------
    input, target : torch.Tensor or Cplx
        The reconstruction :math:`x` and the reference :math:`y`, of one
        shape: complex images (a :class:`Cplx`, a tensor of torch's complex
        dtype), or real ones (magnitudes, or a real reference of a complex
        image, taken as complex).
    data_range : float or torch.Tensor, optional
        :math:`L`: a number, or a tensor of one value per image; the
        maximum of :math:`|y|` over each image by default.
    magnitude : bool, default False
        Compare the moduli :math:`|x|` and :math:`|y|` (the magnitude images
        that radiologists read, and that the fastMRI metrics take) instead
        of the complex values.
    dim : int or tuple of int, optional
        The dimensions of one image; all but the first (the batch) by
        default (all of them for an input of one dimension).
    reduction : {"mean", "sum", "none"}
        Over the images: the mean PSNR by default, one per image with
        ``"none"``.

    Returns
    -------
    torch.Tensor
        Real: a scalar, or one value per image.

    Raises
    ------
    TypeError
        If ``input`` or ``target`` is neither a real floating-point tensor
        nor complex, ``magnitude`` is not a bool, or ``dim`` not ints.
    ValueError
        If the shapes differ, a dimension of ``dim`` is out of range, or
        ``reduction`` is unknown.

    Notes
    -----
    The structural similarity of magnitude images is :func:`ssim`.

    Examples
    --------
    >>> y = cplx.randn(2, 1, 8, 8)
    >>> x = y + 0.01 * cplx.randn(2, 1, 8, 8)
    >>> cplx.psnr(x, y, reduction="none").shape  # one per image
    torch.Size([2])
    >>> cplx.psnr(y, y, data_range=1.0)  # a perfect reconstruction
    tensor(inf)
    """
    where = "psnr"
    check_reduction(reduction, where)
    error, power, dims = _image_pair(input, target, dim, magnitude, where)
    mse = error.mean(dims)
    if data_range is None:
        peak = power.amax(dims)
    else:
        if not isinstance(data_range, torch.Tensor):
            check_positive(data_range, "data_range", where)
        peak = torch.as_tensor(data_range, dtype=mse.dtype, device=mse.device) ** 2
    return _reduce(10 * torch.log10(peak / mse), reduction)


def nmse(
    input: CplxLike,
    target: CplxLike,
    magnitude: bool = False,
    dim: int | tuple[int, ...] | None = None,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The normalised mean squared error of complex (or magnitude) images.

    .. math::

        \mathrm{NMSE} = \frac{\sum |x - y|^2}{\sum |y|^2},

    per image: the error's energy relative to the reference's, as the
    fastMRI evaluation computes it (not in decibels; :math:`-10 \log_{10}`
    of it is an SNR).

    Parameters
    ----------
    input, target, magnitude, dim, reduction
        As for :func:`psnr`.

    Returns
    -------
    torch.Tensor
        Real, non-negative: a scalar, or one value per image.

    Raises
    ------
    TypeError, ValueError
        As :func:`psnr`.

    Examples
    --------
    >>> y = cplx.randn(2, 1, 8, 8)
    >>> cplx.nmse(Cplx.zeros(2, 1, 8, 8), y)  # nothing reconstructed: all of it is error
    tensor(1.)
    >>> float(cplx.nmse(y * 1j, y, magnitude=True))  # the phase is not compared
    0.0
    """
    where = "nmse"
    check_reduction(reduction, where)
    error, power, dims = _image_pair(input, target, dim, magnitude, where)
    return _reduce(error.sum(dims) / power.sum(dims), reduction)


def ssim(
    input: CplxLike,
    target: CplxLike,
    window_size: int = 11,
    sigma: float = 1.5,
    data_range: float | None = None,
    k1: float = 0.01,
    k2: float = 0.03,
    reduction: str = "mean",
    split: bool = False,
) -> torch.Tensor:
    r"""The structural similarity (SSIM) of complex images' moduli, or of their parts, per image.

    The mean over an image's channels and positions of the SSIM map that
    :func:`ssim_loss` is one minus (Wang et al. 2004; a Gaussian window,
    no padding), as image-quality tables report it beside :func:`psnr`
    and :func:`nmse`.

    Parameters
    ----------
    input, target : torch.Tensor or Cplx
        The reconstruction and the reference, complex (a :class:`Cplx` or a
        tensor of torch's complex dtype), of shape ``(N, C, H, W)``.
    window_size, sigma, k1, k2, split
        As for :func:`ssim_loss`.
    data_range : float, optional
        The range :math:`L` of the moduli (of the parts with ``split``);
        by default each image's largest modulus of the target, as
        :func:`psnr` takes it.
    reduction : {"mean", "sum", "none"}
        Over the images: the mean SSIM by default, one per image with
        ``"none"``.

    Returns
    -------
    torch.Tensor
        Real, at most 1: a scalar, or one value per image.

    Raises
    ------
    TypeError, ValueError
        As :func:`ssim_loss`; a ``ValueError`` also for an image whose
        target is all zero, which has no range, without ``data_range``.

    Examples
    --------
    >>> y = cplx.randn(2, 1, 16, 16)
    >>> cplx.ssim(y, y)  # identical images
    tensor(1.)
    >>> cplx.ssim(y + 0.5 * cplx.randn(2, 1, 16, 16), y, reduction="none").shape
    torch.Size([2])
    >>> bool(cplx.ssim(y * 1j, y) == 1)  # the moduli are compared, not the phases
    True
    """
    where = "ssim"
    input, target = _checked_pair(input, target, reduction, where)
    check_ssim_shape(input.shape, window_size, where)
    check_bool(split, "split", where)
    if data_range is None:
        parts = (target.real.abs().maximum(target.imag.abs()) if split else abs(target))
        peak = parts.flatten(1).amax(1)
        if not torch.compiler.is_compiling() and bool((peak == 0).any()):
            raise ValueError(f"{where}: an image whose `target` is all zero has no range;"
                             " give `data_range`")
        scale = peak.view(-1, 1, 1, 1)
        options = (1.0, k1, k2)
    else:
        scale = None
        options = (data_range, k1, k2)
    check_ssim_options(window_size, sigma, *options, where)
    if scale is not None:
        input, target = input / scale, target / scale
    maps = _ssim_map(input, target, window_size, sigma, *options, split)
    return _reduce(maps.flatten(1).mean(1), reduction)
