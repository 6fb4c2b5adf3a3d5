r"""Signal front ends: FFTs, short-time FFTs with a learnable window, the analytic signal.

The layers hold the settings (and the STFT's window) and call the functions
of :mod:`cplxmodule.cplx.spectral`, which run through torch's native complex
FFT, through the same kernels as operators on real tensors when compiled (no
complex tensor in a compiled graph), and on real ops only when exported or
traced (so that the layers export to ONNX with both of torch's exporters).
"""

from __future__ import annotations

import torch

from ...cplx import spectral
from ...cplx._shared import check_choice, check_int, check_positive_int, describe
from .base import BaseRealToCplx, CplxToCplx, _check_cplx
from typing import Callable, ClassVar, Optional, Union
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx

__all__ = ["CplxFFT", "CplxIFFT", "CplxSTFT", "CplxISTFT", "CplxAnalytic", "HilbertTransform"]

_WINDOWS: dict[str, Callable[..., torch.Tensor]] = {
    "hann": torch.hann_window,
    "hamming": torch.hamming_window,
    "blackman": torch.blackman_window,
    "bartlett": torch.bartlett_window,
    "boxcar": lambda n, **kwargs: torch.ones(n, **kwargs),
}


class _CplxFourierBase(CplxToCplx):
    """The settings and checks shared by :class:`CplxFFT` and :class:`CplxIFFT`."""

    #: The functional transform, :func:`cplxmodule.cplx.fft` or ``ifft``.
    _transform: ClassVar[Callable[..., Cplx]]

    def __init__(self, dim: int = -1, norm: Optional[str] = None, n: Optional[int] = None) -> None:
        super().__init__()
        where = self._get_name()
        check_int(dim, "dim", where)
        check_positive_int(n, "n", where, optional=True)
        check_choice(norm, "norm", where, spectral.NORMS, optional=True)
        self.dim, self.norm, self.n = dim, norm, n

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        if not -input.dim() <= self.dim < input.dim():
            raise ValueError(
                f"{self._get_name()}: `input` must have dimension {self.dim},"
                f" got shape {tuple(input.shape)}"
            )
        return self._transform(input, n=self.n, dim=self.dim, norm=self.norm)

    def extra_repr(self):
        settings = [f"dim={self.dim}"]
        if self.norm is not None:
            settings.append(f"norm={self.norm!r}")
        if self.n is not None:
            settings.append(f"n={self.n}")
        return ", ".join(settings)


class CplxFFT(_CplxFourierBase):
    r"""The discrete Fourier transform along one dimension, as a layer.

    See :func:`cplxmodule.cplx.fft`.

    Parameters
    ----------
    dim : int, default -1
        The dimension transformed.
    norm : {None, "backward", "forward", "ortho"}
        The scaling, as for :func:`torch.fft.fft`.
    n : int, optional
        The length of the transform (zero-padding or cutting the input).

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, ``(*)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*)``, with ``n`` along ``dim``
      if given.

    Raises
    ------
    ValueError
        At construction, if ``dim``, ``norm`` or ``n`` are out of range; on
        a call, if the input lacks the dimension ``dim``.
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> layer = CplxFFT(dim=1, norm="ortho")
    >>> layer
    CplxFFT(dim=1, norm='ortho')
    >>> layer(cplx.randn(2, 8, 3)).shape
    torch.Size([2, 8, 3])
    """

    _transform = staticmethod(spectral.fft)


class CplxIFFT(_CplxFourierBase):
    r"""The inverse discrete Fourier transform along one dimension, as a layer.

    See :func:`cplxmodule.cplx.ifft`; ``CplxIFFT(dim, norm)`` inverts
    ``CplxFFT(dim, norm)``.

    Parameters
    ----------
    dim : int, default -1
        The dimension transformed.
    norm : {None, "backward", "forward", "ortho"}
        The scaling, as for :func:`torch.fft.ifft`.
    n : int, optional
        The length of the transform (zero-padding or cutting the input).

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, ``(*)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*)``, with ``n`` along ``dim``
      if given.

    Raises
    ------
    ValueError
        At construction, if ``dim``, ``norm`` or ``n`` are out of range; on
        a call, if the input lacks the dimension ``dim``.
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> x = cplx.randn(4, 8)
    >>> y = CplxIFFT(dim=0)(CplxFFT(dim=0)(x))
    >>> torch.allclose(y.real, x.real, atol=1e-6)
    True
    """

    _transform = staticmethod(spectral.ifft)


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
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__()
        where = self._get_name()
        hop_length, win_length = spectral._check_stft_lengths(
            n_fft, hop_length, win_length, where
        )
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
        self.center, self.normalized = center, normalized
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
        return ", ".join(settings)


class CplxSTFT(_CplxSTFTBase):
    r"""The two-sided short-time Fourier transform of a complex signal, window learnable.

    See :func:`cplxmodule.cplx.stft`.

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
    device, dtype
        Of the window.

    Attributes
    ----------
    window : torch.Tensor
        The real window, of shape ``(win_length,)``: a parameter or a buffer.

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, ``(L,)`` or ``(B, L)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(n_fft, frames)`` or
      ``(B, n_fft, frames)``, with ``frames = 1 + L // hop_length`` when
      ``center``.

    Raises
    ------
    ValueError
        At construction, if the lengths or the window are out of range; on a
        call, if the input is not 1-d or 2-d.
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> layer = CplxSTFT(16, learnable_window=True)
    >>> layer
    CplxSTFT(n_fft=16, hop_length=4, learnable_window=True)
    >>> layer(cplx.randn(2, 64)).shape
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
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(n_fft, hop_length, win_length, window, learnable_window, center,
                         normalized, device, dtype)
        self.pad_mode = pad_mode

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        return spectral._stft(
            input, self.n_fft, self.hop_length, self.win_length, self.window, self.center,
            self.pad_mode, self.normalized, where=self._get_name(),
        )

    def extra_repr(self):
        pad = f", pad_mode={self.pad_mode!r}" if self.pad_mode != "reflect" else ""
        return super().extra_repr() + pad


class CplxISTFT(_CplxSTFTBase):
    r"""The inverse of :class:`CplxSTFT`: a complex signal from its two-sided short-time spectrum.

    See :func:`cplxmodule.cplx.istft`. With the settings and window of a
    :class:`CplxSTFT`, it recovers that layer's input (for a window whose
    overlap-added square never vanishes, e.g. the default Hann window with
    the default hop); a learnable window here is trained on its own, and the
    pair then stops being an exact inverse.

    Parameters
    ----------
    n_fft, hop_length, win_length, window, learnable_window, center, normalized, device, dtype
        As for :class:`CplxSTFT`.

    Attributes
    ----------
    window : torch.Tensor
        The real window, of shape ``(win_length,)``: a parameter or a buffer.

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, ``(n_fft, frames)`` or
      ``(B, n_fft, frames)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(L,)`` or ``(B, L)``, with
      ``L`` the ``length`` given to ``forward``, or
      ``hop_length * (frames - 1)`` when ``center``.

    Raises
    ------
    ValueError
        At construction, if the lengths or the window are out of range; on a
        call, if the input does not have ``n_fft`` frequencies.
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> x = cplx.randn(2, 64)
    >>> y = CplxISTFT(16)(CplxSTFT(16)(x), length=64)
    >>> torch.allclose(y.imag, x.imag, atol=1e-5)
    True
    """

    def forward(self, input: CplxLike, length: Optional[int] = None) -> Cplx:
        """The signal of the short-time spectrum ``input``, cut or padded to ``length``."""
        input = _check_cplx(self, input)
        return spectral._istft(
            input, self.n_fft, self.hop_length, self.win_length, self.window, self.center,
            self.normalized, length, where=self._get_name(),
        )


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
