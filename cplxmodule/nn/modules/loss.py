"""Complex losses: modules over :mod:`cplxmodule.cplx.loss`, also at :mod:`cplxmodule.nn.losses`.

Each takes the prediction and the target as :class:`~cplxmodule.cplx.Cplx`
tensors of one shape and returns a real tensor, reduced as torch's losses
reduce (``reduction="mean"``, ``"sum"`` or ``"none"``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import inspect

import torch
from torch.nn.modules.loss import _Loss

from ... import cplx
from ...cplx._shared import (
    check_bool,
    check_int,
    check_positive,
    check_reduction,
    check_ssim_options,
    check_ssim_shape,
    check_weights,
    checked_cplx,
)
from ...cplx.loss import _ssim_loss
from .base import BaseCplxToReal
from ...cplx._typing import CplxLike

__all__ = [
    "CplxMSELoss",
    "CplxL1Loss",
    "CplxCauchyLoss",
    "CplxLogCoshLoss",
    "CplxLogErrorLoss",
    "CplxPhaseAwareLoss",
    "CplxSSIMLoss",
    "CplxFourthPowerLoss",
    "CplxAnalyticSignalLoss",
]


class _CplxLoss(BaseCplxToReal, _Loss):
    """The base of the complex losses: a checked ``reduction`` and the call of ``_loss``.

    ``_loss`` is the functional loss; ``_options`` the names of the
    attributes it takes as keywords besides ``reduction``. The legacy
    ``size_average`` and ``reduce`` arguments of torch's losses are not
    taken: ``reduction`` says it all.
    """

    _loss: ClassVar[Any] = None
    _options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, reduction: str = "mean") -> None:
        check_reduction(reduction, type(self).__name__)
        super().__init__(reduction=reduction)

    def forward(self, input: CplxLike, target: CplxLike) -> torch.Tensor:
        where = self._get_name()
        input = checked_cplx(input, "input", where=where)
        target = checked_cplx(target, "target", where=where)
        if input.shape != target.shape:
            raise ValueError(
                f"{where}: `target` must have the shape of `input`, {tuple(input.shape)},"
                f" got {tuple(target.shape)}"
            )
        options = {name: getattr(self, name) for name in self._options}
        return self._loss(input, target, reduction=self.reduction, **options)

    def extra_repr(self):
        # the settings that differ from the constructor's defaults
        defaults = inspect.signature(type(self).__init__).parameters
        names = (*self._options, "reduction")
        return ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in names
            if getattr(self, name) != defaults[name].default
        )


_SHAPE = """
    Shape
    -----
    - Input and target: ``(*)``, the same shape.
    - Output: a scalar; with ``reduction="none"``, ``(*)``."""


class CplxMSELoss(_CplxLoss):
    r"""The mean squared modulus of the error, :math:`|x - y|^2` (complex ``MSELoss``).

    As :math:`|e|^2 = (\operatorname{Re} e)^2 + (\operatorname{Im} e)^2`,
    it is also the sum of torch's real MSE on the two parts: the complex
    and the split form coincide. See :func:`cplxmodule.cplx.mse_loss`.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        As for torch's losses.
    {shape}

    Raises
    ------
    ValueError
        If ``reduction`` is unknown, or the shapes differ in a call.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> loss = CplxMSELoss()
    >>> loss(Cplx(torch.tensor([3.0]), torch.tensor([4.0])), Cplx.zeros(1))
    tensor(25.)
    """

    _loss = staticmethod(cplx.mse_loss)


class CplxL1Loss(_CplxLoss):
    r"""The mean modulus of the error, :math:`|x - y|`, or the split L1 loss.

    The complex :class:`torch.nn.L1Loss`: the default, :math:`|e|`, is what
    torch's ``l1_loss`` computes on native complex tensors; ``split=True``
    gives :math:`|\operatorname{Re} e| + |\operatorname{Im} e|`, the sum of
    torch's real L1 loss on the two parts. See :func:`cplxmodule.cplx.l1_loss`.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        As for torch's losses.
    split : bool, default False
        Sum the absolute errors of the parts instead of taking the modulus
        of the error.
    {shape}

    Raises
    ------
    ValueError
        If ``reduction`` is unknown, or the shapes differ in a call.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> x, y = Cplx(torch.tensor([3.0]), torch.tensor([4.0])), Cplx.zeros(1)
    >>> CplxL1Loss()(x, y), CplxL1Loss(split=True)(x, y)
    (tensor(5.), tensor(7.))
    """

    _loss, _options = staticmethod(cplx.l1_loss), ("split",)

    def __init__(self, reduction: str = "mean", split: bool = False) -> None:
        super().__init__(reduction)
        self.split = bool(split)


class CplxCauchyLoss(_CplxLoss):
    r"""The Cauchy loss of the error, :math:`\frac{c^2}{2}\log(1 + |x - y|^2 / c^2)`.

    Quadratic for small errors, logarithmic for large ones: robust to
    outliers. See :func:`cplxmodule.cplx.cauchy_loss`.

    Parameters
    ----------
    c : float, default 1.0
        The scale of the error beyond which the loss flattens.
    reduction : {"mean", "sum", "none"}
        As for torch's losses.
    {shape}

    Raises
    ------
    ValueError
        If ``c`` is not positive or ``reduction`` is unknown, or the shapes
        differ in a call.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> loss = CplxCauchyLoss(c=2.0)
    >>> loss
    CplxCauchyLoss(c=2.0)
    >>> loss(Cplx(torch.tensor([0.0]), torch.tensor([2.0])), Cplx.zeros(1))  # 2 log 2
    tensor(1.3863)
    """

    _loss, _options = staticmethod(cplx.cauchy_loss), ("c",)

    def __init__(self, c: float = 1.0, reduction: str = "mean") -> None:
        check_positive(c, "c", type(self).__name__)
        super().__init__(reduction)
        self.c = c


class CplxLogCoshLoss(_CplxLoss):
    r"""The log-cosh loss of the error's modulus, :math:`\log\cosh|x - y|`.

    Like the MSE for small errors and the L1 loss for large ones; computed
    without overflow. See :func:`cplxmodule.cplx.log_cosh_loss`.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        As for torch's losses.
    {shape}

    Raises
    ------
    ValueError
        If ``reduction`` is unknown, or the shapes differ in a call.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> CplxLogCoshLoss()(Cplx(torch.tensor([0.0]), torch.tensor([1.0])), Cplx.zeros(1))
    tensor(0.4338)
    """

    _loss = staticmethod(cplx.log_cosh_loss)


class CplxLogErrorLoss(_CplxLoss):
    r"""The squared modulus of the difference of the logarithms, :math:`|\log x - \log y|^2`.

    :math:`(\log|x| - \log|y|)^2 + (\arg x - \arg y)^2`: a relative error of
    the modulus plus a phase error (principal arguments), as in the
    logarithmic performance index of fully complex-valued networks. See
    :func:`cplxmodule.cplx.log_error_loss`.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        As for torch's losses.
    {shape}

    Raises
    ------
    ValueError
        If ``reduction`` is unknown, or the shapes differ in a call.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> x = Cplx(torch.tensor([torch.e]), torch.tensor([0.0]))
    >>> CplxLogErrorLoss()(x, Cplx.ones(1))  # (log e - log 1)^2
    tensor(1.)
    """

    _loss = staticmethod(cplx.log_error_loss)


class CplxPhaseAwareLoss(_CplxLoss):
    r"""Modulus and phase terms, :math:`\alpha(|x| - |y|)^2 + \beta(1 - \cos\Delta\varphi)`.

    :math:`\Delta\varphi = \arg x - \arg y`; the phase term is smooth and
    periodic, :math:`0` for equal phases and :math:`2` for opposite ones,
    and :math:`0` where either value is zero. See
    :func:`cplxmodule.cplx.phase_aware_loss`.

    Parameters
    ----------
    modulus_weight : float, default 1.0
        The weight :math:`\alpha \geq 0` of the squared modulus error.
    phase_weight : float, default 1.0
        The weight :math:`\beta \geq 0` of the phase error.
    reduction : {"mean", "sum", "none"}
        As for torch's losses.
    {shape}

    Raises
    ------
    ValueError
        If a weight is negative or ``reduction`` is unknown, or the shapes
        differ in a call.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> loss = CplxPhaseAwareLoss(modulus_weight=0.5, phase_weight=2.0)
    >>> loss(Cplx(torch.tensor([-3.0]), torch.tensor([0.0])), Cplx.ones(1))  # 0.5 * 4 + 2 * 2
    tensor(6.)
    """

    _loss = staticmethod(cplx.phase_aware_loss)
    _options = ("modulus_weight", "phase_weight")

    def __init__(
        self, modulus_weight: float = 1.0, phase_weight: float = 1.0, reduction: str = "mean",
    ) -> None:
        check_weights(
            type(self).__name__, modulus_weight=modulus_weight, phase_weight=phase_weight
        )
        super().__init__(reduction)
        self.modulus_weight, self.phase_weight = modulus_weight, phase_weight


class CplxSSIMLoss(_CplxLoss):
    r"""One minus the structural similarity (SSIM) of the moduli of two complex images, or of their parts.

    SSIM (Wang et al. 2004) of :math:`|x|` and :math:`|y|` in a Gaussian
    window, per channel, where the window fits in the image; the phase
    plays no part. See :func:`cplxmodule.cplx.ssim_loss`.

    Parameters
    ----------
    window_size : int, default 11
        The side of the Gaussian window, odd.
    sigma : float, default 1.5
        The standard deviation of the window, in pixels.
    data_range : float, default 1.0
        The range of the moduli (the :math:`L` of :math:`C_1 = (k_1 L)^2`).
    k1, k2 : float
        The stabilising constants, 0.01 and 0.03.
    reduction : {"mean", "sum", "none"}
        ``"mean"`` is one minus the mean SSIM; ``"none"`` the map
        :math:`1 - \mathrm{SSIM}`.
    split : bool, default False
        The SSIM of the real parts and of the imaginary parts, averaged,
        in place of that of the moduli (complextorch's ``SplitSSIM`` as a
        loss); ``data_range`` is then the range of the parts.

    Shape
    -----
    - Input and target: ``(N, C, H, W)``, the same shape, with ``H`` and
      ``W`` at least ``window_size``.
    - Output: a scalar; with ``reduction="none"``,
      ``(N, C, H - window_size + 1, W - window_size + 1)``.

    Raises
    ------
    ValueError
        If an argument is out of its range, or in a call the shapes differ
        or an image is smaller than the window.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> loss = CplxSSIMLoss(window_size=7)
    >>> x = cplx.randn(1, 2, 16, 16)
    >>> float(loss(x, x)) < 1e-6, float(loss(x, Cplx.zeros(1, 2, 16, 16))) > 0.5
    (True, True)
    """

    def _loss(self, input, target, **options):
        # the functional's checks, in the layer's name
        return _ssim_loss(input, target, **options, where=self._get_name())
    _options = ("window_size", "sigma", "data_range", "k1", "k2", "split")

    def __init__(
        self,
        window_size: int = 11,
        sigma: float = 1.5,
        data_range: float = 1.0,
        k1: float = 0.01,
        k2: float = 0.03,
        reduction: str = "mean",
        split: bool = False,
    ) -> None:
        check_ssim_options(window_size, sigma, data_range, k1, k2, type(self).__name__)
        check_bool(split, "split", type(self).__name__)
        super().__init__(reduction)
        self.window_size, self.sigma, self.data_range = window_size, sigma, data_range
        self.k1, self.k2, self.split = k1, k2, split

    def forward(self, input: CplxLike, target: CplxLike) -> torch.Tensor:
        # the function's own check would name the function, not the layer
        where = self._get_name()
        check_ssim_shape(checked_cplx(input, "input", where=where).shape, self.window_size, where)
        return super().forward(input, target)


class CplxFourthPowerLoss(_CplxLoss):
    r"""The mean fourth power of the modulus of the error, :math:`|x - y|^4`.

    See :func:`cplxmodule.cplx.fourth_power_loss`; complextorch's
    ``CVFourthPowError`` is half of it.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        As for torch's losses.
    {shape}

    Raises
    ------
    ValueError
        If ``reduction`` is unknown, or the shapes differ in a call.
    TypeError
        If the input or the target is not a :class:`~cplxmodule.cplx.Cplx`.

    References
    ----------
    R. Hänsch, "Complex-valued multi-layer perceptrons - an application to
    polarimetric SAR data", Photogrammetric Engineering & Remote Sensing
    76(9), 2010.

    Examples
    --------
    >>> loss = CplxFourthPowerLoss()
    >>> loss(Cplx(torch.tensor([1.0]), torch.tensor([1.0])), Cplx.zeros(1))
    tensor(4.)
    """

    _loss = staticmethod(cplx.fourth_power_loss)


class CplxAnalyticSignalLoss(BaseCplxToReal, _Loss):
    r"""How far a complex signal is from analytic, a loss of one argument.

    :math:`|\operatorname{Im} z - \mathcal{H}\{\operatorname{Re} z\}|^2`
    along ``dim``, reduced: zero when the imaginary part is the Hilbert
    transform of the real part. See
    :func:`cplxmodule.cplx.analytic_signal_loss`.

    Parameters
    ----------
    dim : int, default -1
        The time dimension.
    reduction : {"mean", "sum", "none"}
        As for torch's losses.

    Shape
    -----
    - Input: ``(*)``, at least one dimension.
    - Output: a scalar; with ``reduction="none"``, ``(*)``.

    Raises
    ------
    TypeError
        If ``dim`` is not an int, or in a call the input is not a
        :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``reduction`` is unknown.

    References
    ----------
    The consistency penalty of analytic neural networks, arXiv:2409.10075
    (2024), with complextorch's ``AnalyticSignalLoss`` the same loss.

    Examples
    --------
    >>> t = torch.arange(16.0)
    >>> z = Cplx(torch.cos(torch.pi * t / 4), torch.sin(torch.pi * t / 4))
    >>> float(CplxAnalyticSignalLoss()(z)) < 1e-10
    True
    """

    def __init__(self, dim: int = -1, reduction: str = "mean") -> None:
        check_int(dim, "dim", type(self).__name__)
        check_reduction(reduction, type(self).__name__)
        super().__init__(reduction=reduction)
        self.dim = dim

    def forward(self, input: CplxLike) -> torch.Tensor:
        where = self._get_name()
        input = checked_cplx(input, "input", where=where)
        if not -input.dim() <= self.dim < input.dim():
            raise IndexError(
                f"{where}: `dim` must be in [{-input.dim()}, {input.dim() - 1}]"
                f" for an input of shape {tuple(input.shape)}, got {self.dim}"
            )
        return cplx.analytic_signal_loss(input, self.dim, self.reduction)

    def extra_repr(self):
        return f"dim={self.dim}, reduction={self.reduction!r}"


for _cls in (CplxMSELoss, CplxL1Loss, CplxCauchyLoss, CplxLogCoshLoss, CplxLogErrorLoss,
             CplxPhaseAwareLoss, CplxFourthPowerLoss):
    if _cls.__doc__:  # not under python -OO
        _cls.__doc__ = _cls.__doc__.replace("    {shape}\n", _SHAPE + "\n")
del _cls


# --- signal quality ------------------------------------------------------------------------------
__all__ += ["CplxSISDRLoss"]


class CplxSISDRLoss(BaseCplxToReal, _Loss):
    r"""The negative scale-invariant signal-to-distortion ratio (SI-SDR), in decibels, of real or complex signals.

    :math:`-10 \log_{10} (\|\alpha s\|^2 / \|\hat s - \alpha s\|^2)` of each
    signal along ``dim``, :math:`\alpha s` being the projection of the
    estimate :math:`\hat s` on the target :math:`s` (a complex
    :math:`\alpha` for complex signals), reduced over the signals: the
    loss of speech separation and enhancement, where the level of the
    estimate is free. See :func:`cplxmodule.cplx.si_sdr` and
    :func:`cplxmodule.cplx.si_sdr_loss`.

    Parameters
    ----------
    dim : int, default -1
        The time dimension.
    zero_mean : bool, default False
        Subtract each signal's mean first.
    eps : float, default 1e-8
        The stabiliser of :func:`~cplxmodule.cplx.si_sdr`, which caps the
        ratio of a perfect estimate (at about 100 dB for unit energy).
    reduction : {"mean", "sum", "none"}
        Over the signals, as torch's losses.

    Shape
    -----
    - Input and target: ``(*)``, the same shape, time along ``dim``: real
      floating-point tensors (waveforms) or complex (a
      :class:`~cplxmodule.cplx.Cplx`, a tensor of torch's complex dtype).
    - Output: a scalar; with ``reduction="none"``, ``(*)`` without ``dim``.

    Raises
    ------
    TypeError
        If an argument is of the wrong type, or in a call the input or the
        target is neither a real floating-point tensor nor complex.
    ValueError
        If ``reduction`` is unknown or ``eps`` negative, or in a call the
        shapes differ or the input lacks the dimension ``dim``.

    Notes
    -----
    SI-SDR is not a likelihood: with a sparsifying penalty, put the penalty
    on the loss's scale rather than reading a weight of 1 as the evidence
    lower bound.

    References
    ----------
    J. Le Roux, S. Wisdom, H. Erdogan and J. R. Hershey, "SDR - half-baked
    or well done?", ICASSP 2019.

    Examples
    --------
    >>> loss = CplxSISDRLoss()
    >>> clean = torch.randn(4, 16000)
    >>> float(loss(0.5 * clean, clean)) < -90  # the level plays no part
    True
    >>> z = cplx.randn(4, 256)  # complex baseband signals
    >>> float(loss(z + 0.1 * cplx.randn(4, 256), z)) < -15
    True
    """

    def __init__(self, dim: int = -1, zero_mean: bool = False, eps: float = 1e-8,
                 reduction: str = "mean") -> None:
        where = type(self).__name__
        check_int(dim, "dim", where)
        check_bool(zero_mean, "zero_mean", where)
        check_weights(where, eps=eps)
        check_reduction(reduction, where)
        super().__init__(reduction=reduction)
        self.dim, self.zero_mean, self.eps = dim, zero_mean, eps

    def forward(self, input: CplxLike, target: CplxLike
                ) -> torch.Tensor:
        ratio = cplx.loss._si_sdr(input, target, self.dim, self.zero_mean, self.eps,
                                  where=self._get_name())
        if self.reduction == "mean":
            return -ratio.mean()
        return -ratio.sum() if self.reduction == "sum" else -ratio

    def extra_repr(self):
        settings = [f"dim={self.dim}"] if self.dim != -1 else []
        if self.zero_mean:
            settings.append("zero_mean=True")
        if self.eps != 1e-8:
            settings.append(f"eps={self.eps}")
        if self.reduction != "mean":
            settings.append(f"reduction={self.reduction!r}")
        return ", ".join(settings)
