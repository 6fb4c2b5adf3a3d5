r"""Signal front ends: FFTs and their shifts, short-time FFTs with a learnable window, the analytic signal.

The layers hold the settings (and the STFT's window) and call the functions
of :mod:`cplxmodule.cplx.spectral` (the shifts those of
:mod:`cplxmodule.utils.spectrum`), which run through torch's native complex
FFT, through the same kernels as operators on real tensors when compiled (no
complex tensor in a compiled graph), and on real ops only when exported or
traced (so that the layers export to ONNX with both of torch's exporters).
"""

from __future__ import annotations

import torch

from ...cplx import spectral
from ...cplx._shared import check_bool, check_choice, check_int, check_positive_int, describe
from ...utils import spectrum as spectrum_utils
from .base import BaseRealToCplx, CplxToCplx, _check_cplx
from typing import Callable, ClassVar, Optional, Sequence, Union
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx

__all__ = [
    "CplxFFT",
    "CplxIFFT",
    "CplxFFTShift",
    "CplxIFFTShift",
    "CplxSTFT",
    "CplxISTFT",
    "CplxAnalytic",
    "HilbertTransform",
]

_WINDOWS: dict[str, Callable[..., torch.Tensor]] = {
    "hann": torch.hann_window,
    "hamming": torch.hamming_window,
    "blackman": torch.blackman_window,
    "bartlett": torch.bartlett_window,
    "boxcar": lambda n, **kwargs: torch.ones(n, **kwargs),
}


def _check_dims(dim, where, name="dim"):
    """``dim`` as an int, or as a tuple of ints for a sequence, else raise."""
    if isinstance(dim, (tuple, list)):
        if not dim:
            raise ValueError(f"{where}: `{name}` must be an int or a non-empty tuple of ints,"
                             f" got {dim!r}")
        return tuple(check_int(d, name, where) for d in dim)
    return check_int(dim, name, where)


def _check_input_dims(layer, input, dims):
    """Raise a ``ValueError`` naming the layer unless ``input`` has every dimension of ``dims``,
    each once."""
    ndim = input.dim()
    dims = dims if isinstance(dims, tuple) else (dims,)
    for d in dims:
        if not -ndim <= d < ndim:
            raise ValueError(
                f"{layer._get_name()}: `input` must have dimension {d}, got shape"
                f" {tuple(input.shape)}"
            )
    if len({d % ndim for d in dims}) != len(dims):
        raise ValueError(
            f"{layer._get_name()}: `dim` must not name a dimension twice, got {dims} for an"
            f" input of {ndim} dimensions"
        )


class _CplxFourierBase(CplxToCplx):
    """The settings and checks shared by :class:`CplxFFT` and :class:`CplxIFFT`."""

    #: The functional transforms along one dimension and several: :func:`cplxmodule.cplx.fft`
    #: and ``fftn``, or ``ifft`` and ``ifftn``.
    _transform: ClassVar[Callable[..., Cplx]]
    _transform_n: ClassVar[Callable[..., Cplx]]

    def __init__(
        self,
        dim: Union[int, Sequence[int]] = -1,
        norm: Optional[str] = None,
        n: Optional[Union[int, Sequence[int]]] = None,
    ) -> None:
        super().__init__()
        where = self._get_name()
        dims = _check_dims(dim, where)
        if isinstance(dims, tuple):
            if n is not None:
                if not isinstance(n, (tuple, list)) or len(n) != len(dims):
                    raise ValueError(
                        f"{where}: `n` must be None or a tuple of {len(dims)} positive ints"
                        f" (one per dimension of `dim`), got {n!r}"
                    )
                n = tuple(check_positive_int(size, "n", where) for size in n)
        else:
            n = check_positive_int(n, "n", where, optional=True)
        check_choice(norm, "norm", where, spectral.NORMS, optional=True)
        self.dim, self.norm, self.n = dims, norm, n

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        _check_input_dims(self, input, self.dim)
        if isinstance(self.dim, tuple):
            return self._transform_n(input, s=self.n, dim=self.dim, norm=self.norm)
        return self._transform(input, n=self.n, dim=self.dim, norm=self.norm)

    def extra_repr(self):
        settings = [f"dim={self.dim}"]
        if self.norm is not None:
            settings.append(f"norm={self.norm!r}")
        if self.n is not None:
            settings.append(f"n={self.n}")
        return ", ".join(settings)


_FOURIER_DOC = r"""
    Parameters
    ----------
    dim : int or tuple of int, default -1
        The dimension transformed, or the dimensions (then the transform is
        :func:`cplxmodule.cplx.{n_name}`, along each in turn), e.g.
        ``(-2, -1)`` for the two-dimensional transform of images.
    norm : {{None, "backward", "forward", "ortho"}}
        The scaling, as for :func:`torch.fft.{name}`; for several
        dimensions, :math:`n` is the product of their lengths.
    n : int or tuple of int, optional
        The length of the transform (zero-padding or cutting the input): an
        int for one dimension, a tuple of as many ints as ``dim`` for
        several (torch's ``s``).

    Shape
    -----
    - Input: complex, ``(*)``: a :class:`~cplxmodule.cplx.Cplx`, a tensor of
      torch's complex dtype, or an object whose ``.real`` and ``.imag`` are
      tensors of one shape.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*)``, with ``n`` along
      ``dim`` if given.

    Raises
    ------
    ValueError
        At construction, if ``dim``, ``norm`` or ``n`` are out of range; on
        a call, if the input lacks a dimension of ``dim`` or ``dim`` names
        one twice.
    TypeError
        If the input is not complex (a real tensor included: wrap it as
        ``Cplx(x)``).
"""


class CplxFFT(_CplxFourierBase):
    r"""The discrete Fourier transform along one dimension or several, as a layer.

    See :func:`cplxmodule.cplx.fft` and :func:`cplxmodule.cplx.fftn`.
    {doc}
    Examples
    --------
    >>> layer = CplxFFT(dim=1, norm="ortho")
    >>> layer
    CplxFFT(dim=1, norm='ortho')
    >>> layer(cplx.randn(2, 8, 3)).shape
    torch.Size([2, 8, 3])
    >>> image = cplx.randn(2, 1, 4, 6)  # the k-space of images, unitary
    >>> kspace = CplxFFT(dim=(-2, -1), norm="ortho")(image)
    >>> torch.allclose(cplx.to_complex(kspace), torch.fft.fft2(cplx.to_complex(image),
    ...                                                        norm="ortho"), atol=1e-6)
    True
    """

    _transform = staticmethod(spectral.fft)
    _transform_n = staticmethod(spectral.fftn)


class CplxIFFT(_CplxFourierBase):
    r"""The inverse discrete Fourier transform along one dimension or several, as a layer.

    See :func:`cplxmodule.cplx.ifft` and :func:`cplxmodule.cplx.ifftn`;
    ``CplxIFFT(dim, norm)`` inverts ``CplxFFT(dim, norm)``.
    {doc}
    Examples
    --------
    >>> x = cplx.randn(4, 8)
    >>> y = CplxIFFT(dim=0)(CplxFFT(dim=0)(x))
    >>> torch.allclose(y.real, x.real, atol=1e-6)
    True
    >>> image = cplx.randn(2, 1, 4, 6)
    >>> y = CplxIFFT(dim=(-2, -1), norm="ortho")(CplxFFT(dim=(-2, -1), norm="ortho")(image))
    >>> torch.allclose(y.imag, image.imag, atol=1e-6)
    True
    """

    _transform = staticmethod(spectral.ifft)
    _transform_n = staticmethod(spectral.ifftn)


if CplxFFT.__doc__ and CplxIFFT.__doc__:  # not under python -OO
    CplxFFT.__doc__ = CplxFFT.__doc__.format(doc=_FOURIER_DOC.format(name="fftn", n_name="fftn"))
    CplxIFFT.__doc__ = CplxIFFT.__doc__.format(
        doc=_FOURIER_DOC.format(name="ifftn", n_name="ifftn"))


class _CplxShiftBase(CplxToCplx):
    """The dimensions shared by :class:`CplxFFTShift` and :class:`CplxIFFTShift`."""

    #: whether the shift is :func:`cplxmodule.utils.ifftshift` (else ``fftshift``)
    _inverse: ClassVar[bool]

    def __init__(self, dim: Union[int, Sequence[int]] = -1) -> None:
        super().__init__()
        self.dim = _check_dims(dim, self._get_name())

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        _check_input_dims(self, input, self.dim)
        if self._inverse:
            return spectrum_utils.ifftshift(input, dim=self.dim)
        return spectrum_utils.fftshift(input, dim=self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class CplxFFTShift(_CplxShiftBase):
    r"""Move the zero frequency to the centre of a spectrum, as a layer.

    See :func:`cplxmodule.utils.fftshift`: a roll by ``size // 2`` along
    each dimension of ``dim``, as :func:`torch.fft.fftshift`;
    :class:`CplxIFFTShift` undoes it. With the transforms, it gives the
    centred transforms of imaging (k-space with its origin at the centre):
    ``CplxFFTShift(d)``, ``CplxFFT(d)``, ``CplxIFFTShift(d)`` in turn for
    an image whose origin is at the centre too.

    Parameters
    ----------
    dim : int or tuple of int, default -1
        The dimension(s) shifted.

    Shape
    -----
    - Input: complex, ``(*)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*)``.

    Raises
    ------
    ValueError
        At construction, if ``dim`` is not an int or a tuple of them; on a
        call, if the input lacks a dimension of ``dim``.
    TypeError
        If the input is not complex.

    Examples
    --------
    >>> spectrum = CplxFFT()(Cplx(torch.ones(5)))
    >>> CplxFFTShift()(spectrum).real  # the zero frequency in the middle
    tensor([0., 0., 5., 0., 0.])
    """

    _inverse = False


class CplxIFFTShift(_CplxShiftBase):
    r"""Move the centre of a spectrum back to index zero, as a layer: undoes :class:`CplxFFTShift`.

    See :func:`cplxmodule.utils.ifftshift`: a roll by ``-(size // 2)``
    along each dimension of ``dim``, as :func:`torch.fft.ifftshift` (the
    same roll as :class:`CplxFFTShift`'s for an even size, the other way
    for an odd one).

    Parameters
    ----------
    dim : int or tuple of int, default -1
        The dimension(s) shifted.

    Shape
    -----
    - Input: complex, ``(*)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*)``.

    Raises
    ------
    ValueError
        At construction, if ``dim`` is not an int or a tuple of them; on a
        call, if the input lacks a dimension of ``dim``.
    TypeError
        If the input is not complex.

    Examples
    --------
    >>> z = cplx.randn(3, 5, 7)
    >>> back = CplxIFFTShift(dim=(1, 2))(CplxFFTShift(dim=(1, 2))(z))
    >>> torch.equal(back.real, z.real)
    True
    """

    _inverse = True


class _CplxSTFTBase(CplxToCplx):
    """The settings and the window shared by :class:`CplxSTFT` and :class:`CplxISTFT`."""

    def __init__(
        self,
        n_fft: int,
        hop_length: Optional[int] = None,
        win_length: Optional[int] = None,
        window: Union[str, torch.Tensor] = "hann",
        learnable_window: bool = False,
        center: bool = True,
        normalized: bool = False,
        onesided: Optional[bool] = None,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__()
        where = self._get_name()
        hop_length, win_length = spectral._check_stft_lengths(
            n_fft, hop_length, win_length, where
        )
        if onesided is not None:
            check_bool(onesided, "onesided", where)
        if isinstance(window, str):
            if window not in _WINDOWS:
                raise ValueError(
                    f"{where}: `window` must be one of {sorted(_WINDOWS)} or a real tensor,"
                    f" got {window!r}"
                )
            values = _WINDOWS[window](win_length, device=device, dtype=dtype)
        elif (not isinstance(window, torch.Tensor) or window.is_complex()
              or window.shape != (win_length,)):
            raise ValueError(
                f"{where}: `window` must be a window name or a real tensor of shape"
                f" ({win_length},), got {describe(window)}"
            )
        else:
            values = window.detach().to(device=device, dtype=dtype, copy=True)
        self.n_fft, self.hop_length, self.win_length = n_fft, hop_length, win_length
        self.center, self.normalized, self.onesided = center, normalized, onesided
        if learnable_window:
            self.window = torch.nn.Parameter(values)
        else:
            self.register_buffer("window", values)

    def extra_repr(self):
        settings = [f"n_fft={self.n_fft}", f"hop_length={self.hop_length}"]
        if self.win_length != self.n_fft:
            settings.append(f"win_length={self.win_length}")
        if isinstance(self.window, torch.nn.Parameter):
            settings.append("learnable_window=True")
        if not self.center:
            settings.append("center=False")
        if self.normalized:
            settings.append("normalized=True")
        if self.onesided is not None:
            settings.append(f"onesided={self.onesided}")
        return ", ".join(settings)


class CplxSTFT(_CplxSTFTBase):
    r"""The short-time Fourier transform of a real or complex signal, window learnable.

    See :func:`cplxmodule.cplx.stft`: :func:`torch.stft` with its result a
    :class:`~cplxmodule.cplx.Cplx`. A real waveform gives its one-sided
    spectrum (``n_fft // 2 + 1`` frequencies) by default, a complex signal
    its two-sided one (``n_fft``).

    Parameters
    ----------
    n_fft : int
        The length of each frame's Fourier transform.
    hop_length : int, optional
        The step between frames; ``n_fft // 4`` by default.
    win_length : int, optional
        The length of the window, at most ``n_fft``; ``n_fft`` by default.
    window : str or torch.Tensor, default "hann"
        ``"hann"``, ``"hamming"``, ``"blackman"``, ``"bartlett"`` (the
        periodic windows of torch) or ``"boxcar"``, of ``win_length``
        samples, or a real tensor of shape ``(win_length,)`` (copied).
    learnable_window : bool, default False
        Hold the window as a :class:`torch.nn.Parameter` (trained with the
        model) instead of a buffer.
    center : bool, default True
        Pad the signal by ``n_fft // 2`` on both sides (by reflection, or
        as ``pad_mode`` says).
    pad_mode : str, default "reflect"
        The padding with ``center``, as for :func:`torch.stft`.
    normalized : bool, default False
        Scale the transform by :math:`1/\sqrt{n_{fft}}`.
    onesided : bool, optional
        Return the non-negative frequencies only: by default for a real
        signal, refused for a complex one, as by :func:`torch.stft`;
        ``False`` returns all ``n_fft`` frequencies of a real signal too.
    device, dtype
        Of the window.

    Attributes
    ----------
    window : torch.Tensor
        The real window, of shape ``(win_length,)``: a parameter or a buffer.

    Shape
    -----
    - Input: ``(L,)`` or ``(B, L)``, a real floating-point tensor (a
      waveform) or complex (a :class:`~cplxmodule.cplx.Cplx`, a tensor of
      torch's complex dtype).
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(F, frames)`` or
      ``(B, F, frames)``, with ``F = n_fft // 2 + 1`` one-sided and
      ``n_fft`` two-sided, and ``frames = 1 + L // hop_length`` when
      ``center``.

    Raises
    ------
    ValueError
        At construction, if the lengths or the window are out of range; on a
        call, if the input is not 1-d or 2-d, or ``onesided`` is True and
        the input complex.
    TypeError
        If the input is neither a real floating-point tensor nor complex.

    Examples
    --------
    >>> layer = CplxSTFT(16, learnable_window=True)
    >>> layer
    CplxSTFT(n_fft=16, hop_length=4, learnable_window=True)
    >>> layer(torch.randn(2, 64)).shape  # a waveform: 9 frequencies
    torch.Size([2, 9, 17])
    >>> layer(cplx.randn(2, 64)).shape  # a complex signal: 16
    torch.Size([2, 16, 17])
    """

    def __init__(
        self,
        n_fft: int,
        hop_length: Optional[int] = None,
        win_length: Optional[int] = None,
        window: Union[str, torch.Tensor] = "hann",
        learnable_window: bool = False,
        center: bool = True,
        pad_mode: str = "reflect",
        normalized: bool = False,
        onesided: Optional[bool] = None,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(n_fft, hop_length, win_length, window, learnable_window, center,
                         normalized, onesided, device, dtype)
        self.pad_mode = pad_mode

    def forward(self, input: CplxLike) -> Cplx:
        return spectral._stft(
            input, self.n_fft, self.hop_length, self.win_length, self.window, self.center,
            self.pad_mode, self.normalized, self.onesided, where=self._get_name(),
        )

    def extra_repr(self):
        pad = f", pad_mode={self.pad_mode!r}" if self.pad_mode != "reflect" else ""
        return super().extra_repr() + pad


class CplxISTFT(_CplxSTFTBase):
    r"""The inverse of :class:`CplxSTFT`: a signal from its one-sided or two-sided short-time spectrum.

    See :func:`cplxmodule.cplx.istft`: :func:`torch.istft` of a
    :class:`~cplxmodule.cplx.Cplx`. A one-sided spectrum (``n_fft // 2 +
    1`` frequencies, the spectrum of a waveform) gives a real signal, a
    two-sided one (``n_fft``) a complex signal. With the settings and window
    of a :class:`CplxSTFT`, it recovers that layer's input (for a window
    whose overlap-added square never vanishes, e.g. the default Hann window
    with the default hop); a learnable window here is trained on its own,
    and the pair then stops being an exact inverse.

    Parameters
    ----------
    n_fft, hop_length, win_length, window, learnable_window, center, normalized, device, dtype
        As for :class:`CplxSTFT`.
    onesided : bool, optional
        Whether the input is one-sided; by default, unless it has ``n_fft``
        frequencies, as for :func:`torch.istft`.
    return_complex : bool, optional
        Return a complex signal: by default for a two-sided spectrum,
        refused for a one-sided one; ``False`` returns a real signal, a
        two-sided spectrum read as that of a real signal (by its first
        ``n_fft // 2 + 1`` frequencies), as by :func:`torch.istft`.

    Attributes
    ----------
    window : torch.Tensor
        The real window, of shape ``(win_length,)``: a parameter or a buffer.

    Shape
    -----
    - Input: complex, ``(F, frames)`` or ``(B, F, frames)``, ``F`` being
      ``n_fft // 2 + 1`` or ``n_fft``.
    - Output: ``(L,)`` or ``(B, L)``: a real tensor (one-sided) or a
      :class:`~cplxmodule.cplx.Cplx` (two-sided), ``L`` being the
      ``length`` given to ``forward``, or ``hop_length * (frames - 1)``
      when ``center``.

    Raises
    ------
    ValueError
        At construction, if the lengths or the window are out of range; on a
        call, if the input has neither ``n_fft`` nor ``n_fft // 2 + 1``
        frequencies (as ``onesided`` says), or ``return_complex`` is True
        for a one-sided input.
    TypeError
        If the input is not complex.

    Examples
    --------
    >>> stft, istft = CplxSTFT(16), CplxISTFT(16)
    >>> x = torch.randn(2, 64)  # a waveform, and its one-sided spectrum
    >>> torch.allclose(istft(stft(x), length=64), x, atol=1e-5)
    True
    >>> z = cplx.randn(2, 64)  # a complex signal, and its two-sided spectrum
    >>> torch.allclose(istft(stft(z), length=64).imag, z.imag, atol=1e-5)
    True
    """

    def __init__(
        self,
        n_fft: int,
        hop_length: Optional[int] = None,
        win_length: Optional[int] = None,
        window: Union[str, torch.Tensor] = "hann",
        learnable_window: bool = False,
        center: bool = True,
        normalized: bool = False,
        onesided: Optional[bool] = None,
        return_complex: Optional[bool] = None,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(n_fft, hop_length, win_length, window, learnable_window, center,
                         normalized, onesided, device, dtype)
        if return_complex is not None:
            check_bool(return_complex, "return_complex", self._get_name())
            if return_complex and onesided:
                raise ValueError(
                    f"{self._get_name()}: `return_complex` must be False or None with"
                    f" `onesided=True` (the signal of a one-sided spectrum is real), got True"
                )
        self.return_complex = return_complex

    def forward(self, input: CplxLike, length: Optional[int] = None) -> Union[Cplx, torch.Tensor]:
        """The signal of the short-time spectrum ``input``, cut or padded to ``length``."""
        input = _check_cplx(self, input)
        return spectral._istft(
            input, self.n_fft, self.hop_length, self.win_length, self.window, self.center,
            self.normalized, length, self.onesided, self.return_complex, where=self._get_name(),
        )

    def extra_repr(self):
        extra = "" if self.return_complex is None else f", return_complex={self.return_complex}"
        return super().extra_repr() + extra


class CplxAnalytic(BaseRealToCplx):
    r"""The analytic signal of a real signal, as a layer: real to :class:`~cplxmodule.cplx.Cplx`.

    See :func:`cplxmodule.cplx.hilbert`: the real part of the output is the
    input, the imaginary part its Hilbert transform, as
    :func:`scipy.signal.hilbert` returns. ``HilbertTransform`` is another
    name of this class.

    Parameters
    ----------
    dim : int, default -1
        The time dimension.

    Shape
    -----
    - Input: real, ``(*)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*)``.

    Raises
    ------
    ValueError
        At construction, if ``dim`` is not an int; on a call, if the input
        lacks the dimension ``dim``.
    TypeError
        If the input is not a real tensor.

    Examples
    --------
    >>> t = torch.arange(32.0)
    >>> z = CplxAnalytic()(torch.cos(torch.pi * t / 8))
    >>> torch.allclose(z.imag, torch.sin(torch.pi * t / 8), atol=1e-5)
    True
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        check_int(dim, "dim", self._get_name())
        self.dim = dim

    def forward(self, input: CplxLike) -> Cplx:
        where = self._get_name()
        if isinstance(input, torch.Tensor) and not -input.dim() <= self.dim < input.dim():
            raise ValueError(
                f"{where}: `input` must have dimension {self.dim}, got shape {tuple(input.shape)}"
            )
        return spectral._hilbert(input, self.dim, where=where)

    def extra_repr(self):
        return f"dim={self.dim}"


HilbertTransform = CplxAnalytic
