r"""Fourier transforms of complex tensors: FFT, short-time FFT, analytic signal.

The transforms run through torch's native complex kernels (:mod:`torch.fft`
and :func:`torch.stft`): a Fourier transform has no cheaper form on split
parts, so the input is viewed or copied as a native complex tensor and the
result viewed back as a :class:`Cplx` (:func:`to_complex`,
:func:`from_complex`). Gradients flow through both conversions.
:func:`torch.compile` traces them into one graph (``fullgraph=True``, with
the default inductor backend too), where the FFTs stay torch's own kernels:
inductor generates no code of its own for them.

Power spectra (Welch's method) and :func:`~cplxmodule.utils.spectrum.fftshift`
live in :mod:`cplxmodule.utils.spectrum`.
"""

import torch

from ._shared import check_positive_int, checked_cplx, checked_real, describe
from .conversions import _from_complex, to_complex

__all__ = ["fft", "ifft", "fftn", "ifftn", "stft", "istft", "hilbert"]

_NORMS = (None, "backward", "forward", "ortho")


def _check_norm(norm, where):
    if norm not in _NORMS:
        raise ValueError(
            f"{where}: `norm` must be None, 'backward', 'forward' or 'ortho', got {norm!r}"
        )


def _transform(op, input, where, norm, **kwargs):
    input = checked_cplx(input, where=where)
    _check_norm(norm, where)
    return _from_complex(op(to_complex(input), norm=norm, **kwargs))


def fft(input, n=None, dim=-1, norm=None):
    r"""The discrete Fourier transform of a complex input along one dimension.

    Parameters
    ----------
    input : Cplx
        The signal.
    n : int, optional
        The length of the transform: the input is zero-padded or cut to
        ``n`` along ``dim``; its own length by default.
    dim : int, default -1
        The dimension transformed.
    norm : {None, "backward", "forward", "ortho"}
        The scaling, as for :func:`torch.fft.fft`: ``None`` or
        ``"backward"`` scales nothing forward (and :func:`ifft` by
        :math:`1/n`), ``"forward"`` scales by :math:`1/n`, ``"ortho"`` by
        :math:`1/\sqrt{n}` (a unitary transform).

    Returns
    -------
    Cplx
        :math:`X_k = \sum_m x_m e^{-2\pi i km/n}`, scaled by ``norm``, of
        the input's shape with ``n`` along ``dim``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``norm`` is not one of the four above.

    Examples
    --------
    >>> x = Cplx(torch.tensor([1.0, 0.0, 0.0, 0.0]))
    >>> fft(x).real
    tensor([1., 1., 1., 1.])
    """
    return _transform(torch.fft.fft, input, "fft", norm, n=n, dim=dim)


def ifft(input, n=None, dim=-1, norm=None):
    r"""The inverse discrete Fourier transform of a complex input along one dimension.

    Parameters
    ----------
    input : Cplx
        The spectrum.
    n : int, optional
        The length of the transform (zero-padding or cutting ``input``).
    dim : int, default -1
        The dimension transformed.
    norm : {None, "backward", "forward", "ortho"}
        The scaling, as for :func:`torch.fft.ifft`: ``None`` or
        ``"backward"`` scales by :math:`1/n`, so that ``ifft(fft(x))`` is
        ``x`` for the same ``norm``.

    Returns
    -------
    Cplx
        :math:`x_m = \frac1n \sum_k X_k e^{2\pi i km/n}` (scaled by ``norm``).

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``norm`` is not one of the four above.

    Examples
    --------
    >>> x = cplx.randn(8)
    >>> torch.allclose(ifft(fft(x)).real, x.real, atol=1e-6)
    True
    """
    return _transform(torch.fft.ifft, input, "ifft", norm, n=n, dim=dim)


def fftn(input, s=None, dim=None, norm=None):
    r"""The discrete Fourier transform of a complex input along several dimensions.

    Parameters
    ----------
    input : Cplx
        The signal.
    s : tuple of int, optional
        The lengths of the transform along ``dim`` (zero-padding or cutting).
    dim : tuple of int, optional
        The dimensions transformed: all of them by default, or the last
        ``len(s)`` if ``s`` is given, as for :func:`torch.fft.fftn`.
    norm : {None, "backward", "forward", "ortho"}
        The scaling, as for :func:`fft`, with :math:`n` the product of the
        transformed lengths.

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``norm`` is not one of the four above.

    Examples
    --------
    >>> fftn(cplx.randn(2, 4, 4), dim=(-2, -1)).shape
    torch.Size([2, 4, 4])
    """
    return _transform(torch.fft.fftn, input, "fftn", norm, s=s, dim=dim)


def ifftn(input, s=None, dim=None, norm=None):
    r"""The inverse discrete Fourier transform of a complex input along several dimensions.

    Parameters
    ----------
    input : Cplx
        The spectrum.
    s : tuple of int, optional
        The lengths of the transform along ``dim``.
    dim : tuple of int, optional
        The dimensions transformed, as for :func:`fftn`.
    norm : {None, "backward", "forward", "ortho"}
        The scaling, as for :func:`ifft`.

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``norm`` is not one of the four above.

    Examples
    --------
    >>> x = cplx.randn(3, 4)
    >>> torch.allclose(ifftn(fftn(x)).imag, x.imag, atol=1e-6)
    True
    """
    return _transform(torch.fft.ifftn, input, "ifftn", norm, s=s, dim=dim)


def _check_window(window, length, input, where):
    """A real window of ``length`` samples on ``input``'s device and real dtype."""
    if window is None:
        return None
    if not isinstance(window, torch.Tensor) or window.is_complex() or window.shape != (length,):
        raise ValueError(
            f"{where}: `window` must be a real tensor of shape ({length},), got {describe(window)}"
        )
    return window.to(input.real)


def _check_stft_lengths(n_fft, hop_length, win_length, where):
    check_positive_int(n_fft, "n_fft", where)
    win_length = n_fft if win_length is None else win_length
    if not isinstance(win_length, int) or not 0 < win_length <= n_fft:
        raise ValueError(
            f"{where}: `win_length` must be an int in [1, n_fft={n_fft}], got {win_length!r}"
        )
    hop_length = n_fft // 4 if hop_length is None else hop_length
    if not isinstance(hop_length, int) or hop_length < 1:
        raise ValueError(f"{where}: `hop_length` must be a positive int, got {hop_length!r}")
    return hop_length, win_length


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False):
    r"""The short-time Fourier transform of a complex signal (two-sided).

    The transform of :func:`torch.stft` with ``return_complex=True`` applied
    to the native complex signal: frame :math:`t` of the padded signal,
    windowed, is Fourier transformed over ``n_fft`` points.

    Parameters
    ----------
    input : Cplx
        The signal, of shape ``(L,)`` or ``(B, L)``.
    n_fft : int
        The length of each frame's Fourier transform.
    hop_length : int, optional
        The step between frames; ``n_fft // 4`` by default.
    win_length : int, optional
        The length of the window, at most ``n_fft`` (centred in the frame
        and zero-padded); ``n_fft`` by default.
    window : torch.Tensor, optional
        The real window of shape ``(win_length,)``; a rectangular window of
        ones by default, as for :func:`torch.stft`. Gradients flow to it.
    center : bool, default True
        Pad the signal by ``n_fft // 2`` on both sides, so that frame
        :math:`t` is centred at sample :math:`t \cdot` ``hop_length``.
    pad_mode : str, default "reflect"
        The padding with ``center``, as for :func:`torch.nn.functional.pad`.
    normalized : bool, default False
        Scale the transform by :math:`1/\sqrt{n_{fft}}`.

    Returns
    -------
    Cplx
        Of shape ``(n_fft, frames)`` or ``(B, n_fft, frames)``: all
        ``n_fft`` frequencies in :func:`torch.fft.fftfreq` order, since a
        complex signal has no symmetric spectrum to halve.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` is not 1-d or 2-d, or ``n_fft``, ``hop_length``,
        ``win_length`` or ``window`` are out of range.

    Notes
    -----
    With :math:`w` the window zero-padded to ``n_fft`` and :math:`H` the hop,
    :math:`S_{k,t} = \sum_{m=0}^{n_{fft}-1} w_m x_{tH+m} e^{-2\pi i km/n_{fft}}`
    on the (padded) signal :math:`x`. :func:`scipy.signal.stft` computes the
    same sums divided by :math:`\sum_m w_m` (its ``scaling="spectrum"``) and
    pads with zeros, not by reflection.

    Examples
    --------
    >>> x = cplx.randn(2, 64)
    >>> spec = stft(x, 16, window=torch.hann_window(16))
    >>> spec.shape
    torch.Size([2, 16, 17])
    """
    return _stft(input, n_fft, hop_length, win_length, window, center, pad_mode,
                 normalized, where="stft")


def _stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
          where):
    """:func:`stft`, its errors starting with ``where``."""
    input = checked_cplx(input, where=where)
    if input.dim() not in (1, 2):
        raise ValueError(
            f"{where}: `input` must have shape (L,) or (B, L), got {tuple(input.shape)}"
        )
    hop_length, win_length = _check_stft_lengths(n_fft, hop_length, win_length, where)
    window = _check_window(window, win_length, input, where)
    return _from_complex(torch.stft(
        to_complex(input), n_fft, hop_length=hop_length, win_length=win_length,
        window=window, center=center, pad_mode=pad_mode, normalized=normalized,
        onesided=False, return_complex=True,
    ))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, length=None):
    r"""The inverse of :func:`stft`: a complex signal from its short-time spectrum.

    The frames are inverse transformed, windowed again and overlap-added,
    divided by the overlap-added squared window, as :func:`torch.istft` does.

    Parameters
    ----------
    input : Cplx
        The two-sided short-time spectrum, of shape ``(n_fft, frames)`` or
        ``(B, n_fft, frames)``.
    n_fft, hop_length, win_length, window, center, normalized
        Those given to :func:`stft`.
    length : int, optional
        The length of the signal returned (cut or zero-padded); the length
        the frames cover by default.

    Returns
    -------
    Cplx
        Of shape ``(L,)`` or ``(B, L)``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` is not 2-d or 3-d with ``n_fft`` frequencies, or the
        lengths or the window are out of range.
    RuntimeError
        From :func:`torch.istft`, where the overlap-added squared window
        vanishes somewhere (the window and hop do not satisfy the
        nonzero-overlap-add condition, so the signal cannot be recovered).

    Notes
    -----
    ``istft(stft(x, ...), ...)`` recovers ``x`` for a window :math:`w` and
    hop whose shifted squares :math:`\sum_t w^2_{m - tH}` never vanish on
    the signal, e.g. a Hann window with ``hop_length = n_fft // 4`` and
    ``center=True``.

    Examples
    --------
    >>> x, w = cplx.randn(64), torch.hann_window(16)
    >>> y = istft(stft(x, 16, window=w), 16, window=w, length=64)
    >>> torch.allclose(y.real, x.real, atol=1e-5)
    True
    """
    return _istft(input, n_fft, hop_length, win_length, window, center, normalized,
                  length, where="istft")


def _istft(input, n_fft, hop_length, win_length, window, center, normalized, length,
           where):
    """:func:`istft`, its errors starting with ``where``."""
    input = checked_cplx(input, where=where)
    hop_length, win_length = _check_stft_lengths(n_fft, hop_length, win_length, where)
    if input.dim() not in (2, 3) or input.shape[-2] != n_fft:
        raise ValueError(
            f"{where}: `input` must have shape ({n_fft}, frames) or (B, {n_fft}, frames),"
            f" got {tuple(input.shape)}"
        )
    window = _check_window(window, win_length, input, where)
    return _from_complex(torch.istft(
        to_complex(input), n_fft, hop_length=hop_length, win_length=win_length,
        window=window, center=center, normalized=normalized, onesided=False,
        length=length, return_complex=True,
    ))


def hilbert(input, dim=-1):
    r"""The analytic signal of a real signal: itself plus ``1j`` times its Hilbert transform.

    Parameters
    ----------
    input : torch.Tensor
        The real signal.
    dim : int, default -1
        The time dimension.

    Returns
    -------
    Cplx
        Of the input's shape: the real part is the input, the imaginary part
        its Hilbert transform, as :func:`scipy.signal.hilbert` returns.

    Raises
    ------
    TypeError
        If ``input`` is not a real tensor.
    ValueError
        If ``input`` is a scalar.

    Notes
    -----
    The discrete analytic signal keeps the spectrum's zero frequency (and the
    Nyquist frequency for an even length :math:`n`), doubles the positive
    frequencies and zeroes the negative ones: the inverse FFT of
    :math:`h_k X_k` with :math:`h = (1, 2, \ldots, 2, 1, 0, \ldots, 0)`.

    Examples
    --------
    >>> t = torch.arange(16.0)
    >>> z = hilbert(torch.cos(torch.pi * t / 4))
    >>> torch.allclose(z.imag, torch.sin(torch.pi * t / 4), atol=1e-5)
    True
    """
    return _hilbert(input, dim, where="hilbert")


def _hilbert(input, dim, where):
    """:func:`hilbert`, its errors starting with ``where``."""
    input = checked_real(input, where=where)
    if input.dim() == 0:
        raise ValueError(f"{where}: `input` must have at least one dimension, got shape ()")
    n = input.shape[dim]
    spectrum = torch.fft.fft(input, dim=dim)
    gain = torch.zeros(n, dtype=input.dtype, device=input.device)
    gain[0] = 1
    gain[1:(n + 1) // 2] = 2
    if n % 2 == 0:
        gain[n // 2] = 1
    shape = [1] * input.dim()
    shape[dim] = n
    return _from_complex(torch.fft.ifft(spectrum * gain.view(shape), dim=dim))
