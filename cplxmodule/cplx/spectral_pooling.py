r"""Spectral pooling: downsampling by cropping the discrete Fourier transform."""

from __future__ import annotations

import torch

from . import _fft
from ._shared import checked_cplx, ntuple
from .spectral import _compiling
from .conversions import _from_complex, _to_complex
from ._typing import CplxLike
from torch.nn.common_types import _size_1_t, _size_2_t, _size_3_t
from .tensor import Cplx

__all__ = ["spectral_pool1d", "spectral_pool2d", "spectral_pool3d"]


def _spectral_pool(input, output_size, n, where):
    """Crop the centred spectrum of the last ``n`` dimensions of ``input`` to ``output_size``.

    ``where`` names the function, or the layer that calls it, in messages.
    """
    input = checked_cplx(input, where=where)
    output_size = ntuple(output_size, n, "output_size", where, minimum=1)
    if input.dim() < n:
        raise ValueError(
            f"{where}: `input` must have at least {n} dimensions, got shape {tuple(input.shape)}"
        )
    spatial = tuple(input.shape[-n:])
    if any(m > size for m, size in zip(output_size, spatial)):
        raise ValueError(
            f"{where}: `output_size` must be at most the input's spatial size {spatial},"
            f" got {output_size!r}"
        )
    if _compiling():
        # torch's FFTs on the ``(..., 2)`` layout of real tensors (see ``_fft``)
        dims = list(range(input.dim() - n, input.dim()))
        spectrum = _fft.fft_c2c(input.real, input.imag, dims, "forward", True)
        spectrum = _crop(spectrum, dims, spatial, output_size)
        return Cplx(*_fft.fft_interleaved_split(spectrum, dims, "forward", False))
    last = tuple(range(-n, 0))
    # norm="forward" divides by the input's size before the crop and not after,
    # so the zero-frequency bin is the mean and a constant input stays constant
    spectrum = torch.fft.fftn(_to_complex(input.real, input.imag), dim=last, norm="forward")
    output = torch.fft.ifftn(_crop(spectrum, last, spatial, output_size), dim=last, norm="forward")
    return _from_complex(output)


def _crop(spectrum, dims, spatial, output_size):
    """The ``output_size`` lowest frequencies of ``spectrum`` along ``dims``, in FFT order."""
    spectrum = torch.fft.fftshift(spectrum, dim=dims)
    for dim, size, m in zip(dims, spatial, output_size):
        spectrum = spectrum.narrow(dim, size // 2 - m // 2, m)
    return torch.fft.ifftshift(spectrum, dim=dims)


_DOC = r"""Spectral pooling over the last {n} dimension{s} (Rippel et al., 2015).

    Takes the discrete Fourier transform of the last {n} dimension{s}, keeps
    the ``output_size`` lowest frequencies (the central block of the
    centred spectrum) and transforms back:

    .. math::

        y = \mathcal{{F}}_M^{{-1}}\left[\, \operatorname{{crop}}_M
            \tfrac{{1}}{{N}} \mathcal{{F}}_N x \,\right] \cdot M,

    where :math:`N` and :math:`M` are the numbers of input and output
    samples: the transforms are normalised so that the mean is kept (a
    constant input stays constant). A size :math:`M` keeps the frequencies
    :math:`-\lfloor M/2 \rfloor, \dots, \lceil M/2 \rceil - 1` (in bins):
    for an even :math:`M` the Nyquist bin :math:`-M/2` is kept without its
    positive twin, so a real input may give an output with an imaginary
    part. Differentiable.

    Parameters
    ----------
    input : Cplx
        Of shape ``(*, {dims_in})``.
    output_size : int or tuple of int
        The output's sizes, ``{n}`` of them, or one for all; none above the
        input's.

    Returns
    -------
    Cplx
        Of shape ``(*, {dims_out})``.

    References
    ----------
    O. Rippel, J. Snoek, R. P. Adams, "Spectral Representations for
    Convolutional Neural Networks", NeurIPS 2015.

    Examples
    --------
    >>> from cplxmodule import cplx
    >>> y = cplx.{name}(cplx.Cplx(torch.ones({ones})), {size})
    >>> torch.allclose(y.real, torch.ones_like(y.real)), y.shape
    (True, torch.Size([{out_shape}]))
    """


def spectral_pool1d(input: CplxLike, output_size: _size_1_t) -> Cplx:
    return _spectral_pool(input, output_size, 1, "spectral_pool1d")


def spectral_pool2d(input: CplxLike, output_size: _size_2_t) -> Cplx:
    return _spectral_pool(input, output_size, 2, "spectral_pool2d")


def spectral_pool3d(input: CplxLike, output_size: _size_3_t) -> Cplx:
    return _spectral_pool(input, output_size, 3, "spectral_pool3d")


spectral_pool1d.__doc__ = _DOC.format(
    n=1, s="", dims_in="L_in", dims_out="L_out", name="spectral_pool1d",
    ones="2, 8", size="3", out_shape="2, 3",
)
spectral_pool2d.__doc__ = _DOC.format(
    n=2, s="s", dims_in="H_in, W_in", dims_out="H_out, W_out", name="spectral_pool2d",
    ones="1, 6, 7", size="(4, 3)", out_shape="1, 4, 3",
)
spectral_pool3d.__doc__ = _DOC.format(
    n=3, s="s", dims_in="D_in, H_in, W_in", dims_out="D_out, H_out, W_out",
    name="spectral_pool3d", ones="1, 4, 6, 5", size="(2, 3, 5)", out_shape="1, 2, 3, 5",
)
