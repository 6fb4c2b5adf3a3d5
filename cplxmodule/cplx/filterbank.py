r"""Kernels of parametrised complex filterbanks: Gabor and Morlet wavelets.

Each filter is set by two real numbers, its centre frequency :math:`f` and
its width :math:`\sigma`, sampled on ``kernel_size`` points centred at zero;
the layers of :mod:`cplxmodule.nn` learn them (see
:class:`~cplxmodule.nn.CplxGaborConv1d`).
"""

from __future__ import annotations

import math

import torch

from ._shared import check_positive, check_positive_int, describe
from .tensor import Cplx
from typing import Optional

__all__ = ["gabor_kernel", "morlet_kernel"]


def _grid_and_parts(center, width, kernel_size, sample_rate, where):
    """The sampling times, ``2 pi f t`` and the Gaussian envelope, checked."""
    for name, value in (("center", center), ("width", width)):
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            raise TypeError(
                f"{where}: `{name}` must be a real floating point torch.Tensor,"
                f" got {describe(value)}"
            )
    if center.shape != width.shape:
        raise ValueError(
            f"{where}: `width` must have the shape of `center`, {tuple(center.shape)},"
            f" got {tuple(width.shape)}"
        )
    check_positive_int(kernel_size, "kernel_size", where)
    check_positive(sample_rate, "sample_rate", where, optional=True)
    t = torch.arange(kernel_size, dtype=center.dtype, device=center.device)
    t = t - (kernel_size - 1) / 2
    if sample_rate is not None:
        t = t / sample_rate
    center, width = center.unsqueeze(-1), width.unsqueeze(-1)
    phase = 2 * math.pi * center * t
    envelope = torch.exp(-(t**2) / (2 * width**2))
    return phase, envelope


def gabor_kernel(
    center: torch.Tensor,
    width: torch.Tensor,
    kernel_size: int,
    sample_rate: Optional[float] = None,
) -> Cplx:
    r"""Sampled complex Gabor filters, one per element of ``center``.

    .. math::

        g(t) = \exp\left(-\frac{t^2}{2\sigma^2}\right) e^{i 2\pi f t},
        \qquad t = \frac{k - (K - 1)/2}{r}, \quad k = 0, \dots, K - 1,

    with :math:`f` = ``center``, :math:`\sigma` = ``width``, :math:`K` =
    ``kernel_size`` and :math:`r` = ``sample_rate`` (1 if ``None``): times
    are in samples, or in seconds when ``sample_rate`` is given in Hz, and
    :math:`f` and :math:`\sigma` in the matching units (cycles per sample
    and samples, or Hz and seconds). The filter's frequency response is a
    Gaussian around :math:`f` of width :math:`1 / (2\pi\sigma)`; the
    envelope peaks at 1, as in the complex Gabor filterbank of Noé et al.
    (2020), the learnable front end LEAF (Zeghidour et al., 2021) scales it
    by :math:`1 / (\sqrt{2\pi}\sigma)` instead.

    Parameters
    ----------
    center, width : torch.Tensor
        Real floating point tensors of the same shape ``(*)``: the centre
        frequencies and the widths; differentiable.
    kernel_size : int
        The number of samples :math:`K`.
    sample_rate : float, optional
        Samples per unit of time; ``None`` measures time in samples.

    Returns
    -------
    Cplx
        Of shape ``(*, kernel_size)``, and the dtype of ``center``.

    References
    ----------
    P.-G. Noé, T. Parcollet, M. Morchid, "CGCNN: Complex Gabor Convolutional
    Neural Network on raw speech", ICASSP 2020.

    N. Zeghidour, O. Teboul, F. de Chaumont Quitry, M. Tagliasacchi, "LEAF:
    A Learnable Frontend for Audio Classification", ICLR 2021.

    Examples
    --------
    >>> g = gabor_kernel(torch.tensor([0.1, 0.25]), torch.tensor([2.0, 3.0]), 9)
    >>> g.shape
    torch.Size([2, 9])
    >>> g.real[:, 4], g.imag[:, 4]  # t = 0 at the middle sample
    (tensor([1., 1.]), tensor([0., 0.]))
    """
    phase, envelope = _grid_and_parts(center, width, kernel_size, sample_rate, "gabor_kernel")
    return Cplx(envelope * torch.cos(phase), envelope * torch.sin(phase))


def morlet_kernel(
    center: torch.Tensor,
    width: torch.Tensor,
    kernel_size: int,
    sample_rate: Optional[float] = None,
) -> Cplx:
    r"""Sampled complex Morlet wavelets: Gabor filters corrected to zero mean.

    .. math::

        \psi(t) = \exp\left(-\frac{t^2}{2\sigma^2}\right)
            \left(e^{i 2\pi f t} - \kappa\right),
        \qquad \kappa = \exp\left(-2\pi^2 f^2 \sigma^2\right),

    on the grid of :func:`gabor_kernel`, whose arguments and units it takes.
    The admissibility term :math:`\kappa` makes :math:`\int \psi(t)\, dt = 0`
    in continuous time, so the sampled wavelet has a mean close to zero when
    the envelope fits in the kernel; it matters when :math:`f\sigma` is small,
    and is negligible (the wavelet is the Gabor filter) when it is large.

    Parameters
    ----------
    center, width : torch.Tensor
        Real floating point tensors of the same shape ``(*)``.
    kernel_size : int
        The number of samples.
    sample_rate : float, optional
        Samples per unit of time; ``None`` measures time in samples.

    Returns
    -------
    Cplx
        Of shape ``(*, kernel_size)``.

    References
    ----------
    I. Daubechies, "Ten Lectures on Wavelets", SIAM 1992, section 2.3 (the
    Morlet wavelet and its correction term).

    Examples
    --------
    >>> psi = morlet_kernel(torch.tensor([0.05]), torch.tensor([4.0]), 65)
    >>> bool(abs(psi.real.sum()) < 1e-3 and abs(psi.imag.sum()) < 1e-6)
    True
    """
    phase, envelope = _grid_and_parts(center, width, kernel_size, sample_rate, "morlet_kernel")
    kappa = torch.exp(-2 * math.pi**2 * (center * width).unsqueeze(-1) ** 2)
    return Cplx(envelope * (torch.cos(phase) - kappa), envelope * torch.sin(phase))
