"""Spectral estimation for real and complex baseband signals, in torch.

Every function takes torch tensors (real or native complex) or a
:class:`~cplxmodule.cplx.Cplx`, works over arbitrary leading batch
dimensions, and is differentiable with respect to the signal.
"""

from __future__ import annotations

import numbers

import numpy
import scipy.signal
import torch

from ..cplx import Cplx, to_complex
from ..cplx._views import _complex_view
from ..cplx.conversions import _from_complex
from ..cplx.spectral import _roll_half
from ..cplx._shared import check_choice, check_int, check_positive, check_positive_int
from .views import _fixed_index, window_view
from typing import Any, Callable, Optional, Sequence, Union, overload
from ..cplx._typing import CplxLike

__all__ = ["pwelch", "fftshift", "ifftshift", "bandwidth_power", "acpr_calc"]


# Every message reads "{where}: `{argument}` must be ..., got ...", where
# ``where`` is the public function the user called: the private helpers
# below serve several of them, so they take it as an argument (and
# ``bandwidth_power`` and ``acpr_calc`` call the private implementations of
# ``pwelch`` and ``bandwidth_power`` so that their own name reaches it).
def _as_signal(x, where, name="x"):
    """``x`` as a floating point or complex torch tensor."""
    if isinstance(x, Cplx):
        return to_complex(x)
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{where}: `{name}` must be a torch.Tensor or a Cplx,"
            f" got {type(x).__name__}"
        )
    if x.dim() == 0:
        raise ValueError(
            f"{where}: `{name}` must have at least one dimension, got a scalar"
        )
    if not (x.is_floating_point() or x.is_complex()):
        return x.to(torch.get_default_dtype())
    return x


def _real_dtype_of(x):
    return x.real.dtype if x.is_complex() else x.dtype


def _positive(value, name, where):
    return float(check_positive(value, name, where))


def _window_tensor(window, nperseg, n_samples, x, where):
    """The 1d window tensor (real dtype of ``x``, on its device)."""
    dtype = _real_dtype_of(x)
    if isinstance(window, (str, tuple)):
        # scipy's default segment length, shortened for short signals
        if nperseg is None:
            nperseg = min(256, n_samples)
        nperseg = check_positive_int(nperseg, "nperseg", where)
        try:
            values = scipy.signal.get_window(window, nperseg)
        except ValueError as error:
            raise ValueError(
                f"{where}: `window` must be a window of scipy.signal.get_window,"
                f" got {window!r} ({error})"
            ) from None
        return torch.as_tensor(values, dtype=dtype, device=x.device)

    try:
        window = torch.as_tensor(window, dtype=dtype, device=x.device)
    except (TypeError, ValueError):
        raise TypeError(
            f"{where}: `window` must be a name, a tuple or a 1d array of numbers,"
            f" got {type(window).__name__}"
        ) from None
    if window.dim() != 1 or window.numel() == 0:
        raise ValueError(
            f"{where}: `window` must be a name, a tuple or a nonempty 1d array, "
            f"got shape {tuple(window.shape)}"
        )
    if nperseg is not None and check_int(nperseg, "nperseg", where) != len(window):
        raise ValueError(
            f"{where}: `nperseg` must equal the length of an array `window`,"
            f" {len(window)}, got {nperseg}"
        )
    return window


def _detrended(segments, detrend, where):
    """Remove a constant or linear trend along the last dimension."""
    if detrend is False or detrend is None:
        return segments
    if callable(detrend):
        return detrend(segments)
    if detrend == "constant":
        return segments - segments.mean(dim=-1, keepdim=True)
    if detrend == "linear":
        # subtract the least squares fit a + b t, with t centred so that
        # the intercept and slope decouple
        n = segments.shape[-1]
        t = torch.arange(n, dtype=_real_dtype_of(segments), device=segments.device)
        t = t - t.mean()
        centred = segments - segments.mean(dim=-1, keepdim=True)
        slope = (centred * t).sum(dim=-1, keepdim=True) / t.square().sum().clamp_min(1)
        return centred - slope * t
    raise ValueError(
        f"{where}: `detrend` must be False, 'constant', 'linear' or a callable,"
        f" got {detrend!r}"
    )


def _median_bias(n):
    """Ratio of the median to the mean of ``n`` chi-squared(2) periodograms.

    Allen et al. (2012), "FINDCHIRP", Phys. Rev. D 85, appendix B.
    """
    return 1.0 + sum(
        1.0 / (2 * i + 1) - 1.0 / (2 * i) for i in range(1, (n - 1) // 2 + 1)
    )


def _scale(window, fs, scaling, where):
    """The factor turning ``|FFT(window * x)|^2`` into a density or a spectrum."""
    if check_choice(scaling, "scaling", where, ("density", "spectrum")) == "density":
        return 1.0 / (fs * window.square().sum())
    return 1.0 / window.sum().square()


def pwelch(
    x: CplxLike,
    dim: int = -1,
    window: Union[str, tuple[Any, ...], Any] = "hann",
    fs: float = 1.0,
    scaling: str = "density",
    n_overlap: Optional[int] = None,
    *,
    nperseg: Optional[int] = None,
    nfft: Optional[int] = None,
    detrend: Union[bool, str, Callable[..., Any]] = False,
    return_onesided: Optional[bool] = None,
    average: str = "mean",
) -> torch.Tensor:
    r"""Estimate the power spectral density of a signal by Welch's method.

    The signal is cut into segments of ``nperseg`` samples overlapping by
    ``n_overlap`` samples (trailing samples that do not fill a segment are
    dropped), each segment is optionally detrended, multiplied by the window
    and Fourier transformed (zero-padded to ``nfft``), and the squared
    magnitudes are averaged over the segments.

    Parameters
    ----------
    x : torch.Tensor or Cplx
        The signal: a real tensor, a tensor of torch's complex dtype, or a
        :class:`~cplxmodule.cplx.Cplx`. All dimensions but ``dim`` are batch
        dimensions. Integer tensors are converted to the default dtype.
    dim : int, default -1
        The time dimension.
    window : str, tuple or array_like, default "hann"
        A name or ``(name, parameter)`` tuple understood by
        :func:`scipy.signal.get_window` (periodic windows, as in scipy), or
        the window values themselves, whose length is then the segment length.
    fs : float, default 1.0
        The sampling frequency, in Hz when the time step is in seconds.
    scaling : {"density", "spectrum"}, default "density"
        ``"density"`` gives the power spectral density, in V**2/Hz if ``x``
        is in V and ``fs`` in Hz; ``"spectrum"`` gives the power spectrum in
        V**2 (the squared amplitude of a tone at its bin).
    n_overlap : int, optional
        Samples shared by consecutive segments, ``0 <= n_overlap < nperseg``.
        Defaults to ``nperseg // 2``. (Named ``noverlap`` in scipy.)
    nperseg : int, optional
        Segment length. Defaults to the length of an array ``window``, or for
        a named window to 256, or the signal length if that is shorter.
    nfft : int, optional
        FFT length, ``>= nperseg``; segments are zero-padded to it. Defaults
        to ``nperseg``.
    detrend : False, "constant", "linear" or callable, default False
        What to subtract from each segment before windowing: nothing, its
        mean, its least squares line, or what the callable (taking a tensor
        of segments along its last dimension) returns. Note that scipy
        defaults to ``"constant"``; the default here keeps the behaviour of
        the published package.
    return_onesided : bool, optional
        For a real signal, return only the nonnegative frequencies, the power
        of the negative ones folded onto them. Defaults to ``True`` for a real
        signal and ``False`` for a complex one, whose spectrum is always
        two-sided.
    average : {"mean", "median"}, default "mean"
        How to average the segments' periodograms; the median is divided by
        its bias relative to the mean for chi-squared data, as in scipy.

    Returns
    -------
    f : torch.Tensor
        The ``(n_freq,)`` frequencies of the bins, in the units of ``fs``, in
        FFT order (zero first, then the positive, then for a two-sided
        spectrum the negative frequencies); see :func:`fftshift`.
    Pxx : torch.Tensor
        The real power spectral density or power spectrum, of the shape of
        ``x`` with dimension ``dim`` replaced by the ``n_freq`` frequency
        bins, in ``x``'s real dtype.

    Raises
    ------
    TypeError
        If ``x`` is not a tensor or a Cplx, an integer argument is not an
        integer, or an array ``window`` does not hold numbers.
    IndexError
        If ``dim`` is out of range.
    ValueError
        If ``nperseg`` exceeds the signal length or disagrees with an array
        ``window``, ``n_overlap`` or ``nfft`` are out of range, ``fs`` is not
        positive, ``return_onesided=True`` for a complex signal, or
        ``window``, ``scaling``, ``detrend`` or ``average`` is unknown.
        Every message starts with ``"pwelch: "`` and names the argument.

    Notes
    -----
    With the same arguments this is :func:`scipy.signal.welch` with
    ``axis=dim`` (but ``detrend=False`` by default, and an ``nperseg``
    longer than the signal is an error rather than shortened): both use :math:`P_k = c\,\frac{1}{S}\sum_s |\sum_n
    w_n x_{s,n} e^{-2\pi i kn/N_{fft}}|^2` (or the median over segments
    :math:`s`), with :math:`c = 1/(f_s \sum_n w_n^2)` for a density and
    :math:`c = 1/(\sum_n w_n)^2` for a spectrum, doubled at the bins of a
    one-sided spectrum that stand for two frequencies. Summing a density
    times the bin width ``fs / nfft`` over all bins gives the mean power of
    the windowed signal.

    Examples
    --------
    >>> t = torch.arange(1024.)
    >>> x = torch.exp(2j * torch.pi * 0.25 * t)   # a unit tone at fs / 4
    >>> f, p = pwelch(x, window="hann", nperseg=64, scaling="spectrum")
    >>> f[p.argmax()].item(), round(p.max().item(), 4)
    (0.25, 1.0)
    """
    return _pwelch(
        x, dim, window, fs, scaling, n_overlap, nperseg=nperseg, nfft=nfft,
        detrend=detrend, return_onesided=return_onesided, average=average,
        where="pwelch",
    )


def _pwelch(
    x, dim, window, fs, scaling, n_overlap, *, nperseg=None, nfft=None,
    detrend=False, return_onesided=None, average="mean", where,
):
    """:func:`pwelch`, its messages starting with ``where``."""
    x = _as_signal(x, where)
    dim = _fixed_index(dim, x.dim(), "dim", where)
    fs = _positive(fs, "fs", where)
    n_samples = x.shape[dim]
    window = _window_tensor(window, nperseg, n_samples, x, where)
    nperseg = len(window)
    if nperseg > n_samples:
        raise ValueError(
            f"{where}: `nperseg` must be at most the signal's length along `dim` ="
            f" {dim}, {n_samples}, got {nperseg}"
        )
    n_overlap = (
        nperseg // 2 if n_overlap is None else check_int(n_overlap, "n_overlap", where)
    )
    if not 0 <= n_overlap < nperseg:
        raise ValueError(
            f"{where}: `n_overlap` must be in [0, nperseg) = [0, {nperseg}),"
            f" got {n_overlap}"
        )
    nfft = nperseg if nfft is None else check_int(nfft, "nfft", where)
    if nfft < nperseg:
        raise ValueError(
            f"{where}: `nfft` must be at least `nperseg`, {nperseg}, got {nfft}"
        )
    onesided = not x.is_complex() if return_onesided is None else bool(return_onesided)
    if onesided and x.is_complex():
        raise ValueError(
            f"{where}: `return_onesided` must be False or None for a complex `x`"
            f" (its spectrum is two-sided), got {return_onesided!r}"
        )
    check_choice(average, "average", where, ("mean", "median"))
    scale = _scale(window, fs, scaling, where)

    # segments along the last dimension, the segment index at `dim`
    segments = window_view(x, dim, nperseg, nperseg - n_overlap, at=-1)
    windowed = _detrended(segments, detrend, where) * window
    fft = torch.fft.rfft if onesided else torch.fft.fft
    spectrum = fft(windowed, n=nfft, dim=-1)
    power = spectrum.real.square() + spectrum.imag.square()
    if onesided:
        # fold the negative frequencies onto the positive ones: every bin but
        # zero and (for an even nfft) Nyquist stands for two frequencies
        fold = torch.full(
            (power.shape[-1],), 2.0, dtype=power.dtype, device=power.device
        )
        fold[0] = 1.0
        if nfft % 2 == 0:
            fold[-1] = 1.0
        power = power * fold

    if average == "mean":
        power = power.mean(dim=dim)
    else:
        power = power.quantile(0.5, dim=dim) / _median_bias(segments.shape[dim])
    power = (power * scale).movedim(-1, dim)

    freq = (torch.fft.rfftfreq if onesided else torch.fft.fftfreq)(
        nfft, d=1.0 / fs, dtype=power.dtype, device=power.device
    )
    return freq, power


@overload
def fftshift(
    x: torch.Tensor, dim: Optional[Union[int, tuple[int, ...]]] = -1,
) -> torch.Tensor: ...


@overload
def fftshift(x: Cplx, dim: Optional[Union[int, tuple[int, ...]]] = -1) -> Cplx: ...


def fftshift(
    x: Union[torch.Tensor, Cplx], dim: Optional[Union[int, tuple[int, ...]]] = -1,
) -> Union[torch.Tensor, Cplx]:
    r"""Move the zero-frequency bin to the centre of the spectrum.

    Rolls ``x`` by ``size // 2`` along each dimension in ``dim``, so that an
    FFT-ordered axis runs from the most negative frequency to the most
    positive one, as :func:`torch.fft.fftshift`; :func:`ifftshift` undoes it.

    Parameters
    ----------
    x : torch.Tensor or Cplx
        The spectrum (or frequencies), of any dtype.
    dim : int, tuple of int, or None, default -1
        The dimension(s) to shift; ``None`` shifts every dimension, as
        :func:`numpy.fft.fftshift` does by default.

    Returns
    -------
    torch.Tensor or Cplx
        The shifted copy, of the type and shape of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a tensor or a Cplx, or a dimension in ``dim`` is not
        an integer.
    IndexError
        If a dimension in ``dim`` is out of range.

    Examples
    --------
    >>> fftshift(torch.fft.fftfreq(5))
    tensor([-0.4000, -0.2000,  0.0000,  0.2000,  0.4000])
    """
    return _shift(x, dim, False, "fftshift")


@overload
def ifftshift(
    x: torch.Tensor, dim: Optional[Union[int, tuple[int, ...]]] = -1,
) -> torch.Tensor: ...


@overload
def ifftshift(x: Cplx, dim: Optional[Union[int, tuple[int, ...]]] = -1) -> Cplx: ...


def ifftshift(
    x: Union[torch.Tensor, Cplx], dim: Optional[Union[int, tuple[int, ...]]] = -1,
) -> Union[torch.Tensor, Cplx]:
    r"""Move the centre of a centred spectrum back to index zero: the inverse of :func:`fftshift`.

    Rolls ``x`` by ``-(size // 2)`` along each dimension in ``dim``, as
    :func:`torch.fft.ifftshift`: the same roll as :func:`fftshift` for an
    even size, one sample less for an odd one, so that
    ``ifftshift(fftshift(x))`` is ``x`` for every size. Centred transforms
    (of images and k-space whose origin is at the centre, as in MRI) are
    ``fftshift(fft(ifftshift(x)))``.

    Parameters
    ----------
    x : torch.Tensor or Cplx
        The centred spectrum (or frequencies), of any dtype.
    dim : int, tuple of int, or None, default -1
        The dimension(s) to shift; ``None`` shifts every dimension.

    Returns
    -------
    torch.Tensor or Cplx
        The shifted copy, of the type and shape of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a tensor or a Cplx, or a dimension in ``dim`` is not
        an integer.
    IndexError
        If a dimension in ``dim`` is out of range.

    Examples
    --------
    >>> ifftshift(fftshift(torch.arange(5)))
    tensor([0, 1, 2, 3, 4])
    >>> ifftshift(torch.fft.fftshift(torch.fft.fftfreq(5)))
    tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
    """
    return _shift(x, dim, True, "ifftshift")


def _traced():
    """Whether the call is compiled, exported or traced: there the parts are rolled one by one."""
    return (torch.compiler.is_compiling() or torch.onnx.is_in_onnx_export()
            or torch._C._get_tracing_state() is not None)


def _shift(x, dim, inverse, where):
    """:func:`fftshift` (:func:`ifftshift` if ``inverse``), its errors starting with ``where``."""
    if isinstance(x, Cplx):
        view = None if _traced() else _complex_view(x.real, x.imag)
        if view is not None:
            # the parts of one complex buffer (an FFT's output): one roll of
            # it, where a roll of each strided part costs twice as much
            return _from_complex(_shift(view, dim, inverse, where))
        return x.apply(_shift, dim, inverse, where)
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{where}: `x` must be a torch.Tensor or a Cplx, got {type(x).__name__}"
        )
    dims: list[int]
    if dim is None:
        dims = list(range(x.dim()))
    elif isinstance(dim, (tuple, list)):
        dims = [_fixed_index(d, x.dim(), "dim", where) for d in dim]
    else:
        dims = [_fixed_index(dim, x.dim(), "dim", where)]
    if not dims:
        return x.clone()
    return _roll_half(x, dims, inverse)


def _as_baseband(x, dim, where, name="x"):
    """A complex tensor and the time dimension; reads the ``(..., T, 2)`` layout."""
    if isinstance(x, torch.Tensor) and not x.is_complex():
        if x.dim() < 2 or x.shape[-1] != 2:
            raise ValueError(
                f"{where}: `{name}` must be complex (a complex tensor or a Cplx), or a"
                f" real tensor with (re, im) pairs in a last dimension of size 2,"
                f" got shape {tuple(x.shape)}"
            )
        fixed = _fixed_index(-2 if dim is None else dim, x.dim(), "dim", where)
        if fixed == x.dim() - 1:
            raise ValueError(
                f"{where}: `dim` must not be the last dimension of a real `{name}`"
                f" (it holds the (re, im) pairs), got {dim}"
            )
        return torch.complex(x[..., 0], x[..., 1]), fixed
    x = _as_signal(x, where, name)
    return x, _fixed_index(-1 if dim is None else dim, x.dim(), "dim", where)


def _bands_tensor(bands, where):
    """The ``(n_bands, 2)`` float64 tensor of ``(lo, hi)`` band edges."""
    try:
        if not isinstance(bands, (torch.Tensor, numpy.ndarray)):
            bands = list(bands)
        edges = numpy.asarray(bands, dtype=numpy.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{where}: `bands` must be a sequence of (lo, hi) pairs, got {bands!r}"
        ) from None
    if edges.size == 0:
        edges = edges.reshape(0, 2)
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError(
            f"{where}: `bands` must be a sequence of (lo, hi) pairs,"
            f" got shape {edges.shape}"
        )
    if (edges[:, 0] >= edges[:, 1]).any():
        raise ValueError(
            f"{where}: `bands` must have lo < hi in every band, got {edges.tolist()}"
        )
    return torch.from_numpy(edges)


def bandwidth_power(
    x: CplxLike,
    fs: float,
    bands: Sequence[tuple[float, float]],
    dim: Optional[int] = None,
    n_overlap: Optional[int] = None,
    nperseg: Optional[int] = None,
    scaling: str = "density",
    *,
    window: Optional[Union[str, tuple[Any, ...], Any]] = None,
) -> torch.Tensor:
    r"""The power of a complex baseband signal within each frequency band, in dB.

    Estimates the two-sided power spectral density with :func:`pwelch`
    (no detrending) and integrates it over the bins whose centre frequency
    lies strictly inside each band.

    Parameters
    ----------
    x : torch.Tensor or Cplx
        The signal: a complex tensor or a :class:`~cplxmodule.cplx.Cplx`, or
        a real tensor in torch's :func:`torch.view_as_real` layout
        ``(..., T, 2)`` holding (re, im) pairs, as in the published package.
        A real-valued signal must be cast to complex first.
    fs : float
        The sampling frequency, in Hz when the time step is in seconds.
    bands : sequence of (float, float)
        The ``(lo, hi)`` edges of each band, in the units of ``fs``, in
        ``[-fs / 2, fs / 2)``.
    dim : int, optional
        The time dimension (of the real tensor, for the ``(..., T, 2)``
        layout). Defaults to ``-2`` for that layout and ``-1`` for a complex
        ``x``.
    n_overlap : int, optional
        Overlap of the Welch segments; defaults to ``nperseg // 2``.
    nperseg : int, optional
        Welch segment length; defaults to the whole signal.
    scaling : {"density", "spectrum"}, default "density"
        The scaling of the returned spectrum ``Pxx`` (see :func:`pwelch`);
        the band powers do not depend on it.
    window : str, tuple or array_like, optional
        The window (see :func:`pwelch`); defaults to the symmetric Hamming
        window of length ``nperseg``, as in the published package.

    Returns
    -------
    f : torch.Tensor
        The ``(nperseg,)`` bin frequencies, increasing (fft-shifted).
    Pxx : torch.Tensor
        The fft-shifted spectrum, with the time dimension of the complex
        signal replaced by the frequency bins.
    band_power : torch.Tensor
        ``10 log10(P)`` where ``P`` is the sum of the power spectral density
        over the bins of each band times the bin width ``fs / nperseg``: the
        mean power of the band's content in V**2 if ``x`` is in V. Of shape
        ``(..., len(bands))``, the batch dimensions of ``x`` first. A band
        containing no bin has power 0 (``-inf`` dB).

    Raises
    ------
    TypeError, IndexError, ValueError
        For a bad ``x``, ``dim``, ``bands`` (a band with ``lo >= hi``) or
        Welch argument; the message starts with ``"bandwidth_power: "`` and
        names the argument.

    Notes
    -----
    The integrated density recovers the power of a tone exactly (its
    leakage sums to its power) if its window's main lobe lies inside the
    band, and the power of noise in expectation. The published package
    summed ``Pxx`` without the bin width, which shifts every band power by
    the same number of dB for given ``fs``, ``nperseg`` and ``scaling``:
    differences between bands (power ratios) are unchanged.

    Examples
    --------
    >>> t = torch.arange(1000.)
    >>> tone = lambda f, a: a * torch.exp(2j * torch.pi * f * t)
    >>> x = tone(0.1, 2.0) + tone(-0.25, 0.5)   # powers 4 and 1/4
    >>> f, p, pwr = bandwidth_power(x, 1.0, [(0.05, 0.15), (-0.3, -0.2)])
    >>> pwr.round(decimals=2)                   # 10 log10(4), 10 log10(1/4)
    tensor([ 6.0200, -6.0200])
    """
    return _bandwidth_power(
        x, fs, bands, dim, n_overlap, nperseg, scaling, window=window,
        where="bandwidth_power",
    )


def _bandwidth_power(x, fs, bands, dim, n_overlap, nperseg, scaling, *, window, where):
    """:func:`bandwidth_power`, its messages starting with ``where``."""
    x, dim = _as_baseband(x, dim, where)
    fs = _positive(fs, "fs", where)
    n_samples = x.shape[dim]
    if window is None:
        length = n_samples if nperseg is None else check_positive_int(
            nperseg, "nperseg", where
        )
        window = torch.hamming_window(
            length, periodic=False, dtype=_real_dtype_of(x), device=x.device
        )
    elif isinstance(window, (str, tuple)) and nperseg is None:
        nperseg = n_samples
    window = _window_tensor(window, nperseg, n_samples, x, where)
    bands = _bands_tensor(bands, where)
    freq, density = _pwelch(x, dim, window, fs, "density", n_overlap, where=where)
    freq, density = fftshift(freq), fftshift(density, dim=dim)

    # 0/1 matrix of the bins (rows) in each band (columns), times the bin width
    lo, hi = bands.to(freq).unbind(dim=1)
    inside = (freq[:, None] > lo) & (freq[:, None] < hi)
    weight = inside.to(density.dtype) * (fs / len(freq))
    band_power = 10 * torch.log10(density.movedim(dim, -1) @ weight)

    rescale = _scale(window, fs, scaling, where) / _scale(window, fs, "density", where)
    return freq, density * rescale, band_power


def _as_float(value, name, where):
    """``value`` as a Python float; a ``TypeError`` naming ``name`` otherwise."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: `{name}` must be a number, got {value!r}") from None


def _as_floats(values, name, where):
    """A list of floats from a number or a 1d sequence."""
    if isinstance(values, numbers.Real):
        return [float(values)]
    try:
        return numpy.asarray(values, dtype=numpy.float64).reshape(-1).tolist()
    except (TypeError, ValueError):
        raise TypeError(
            f"{where}: `{name}` must be a number or a sequence of numbers,"
            f" got {values!r}"
        ) from None


def acpr_calc(
    signal: CplxLike,
    sample_rate: float,
    mcf: float,
    mcb: float,
    acf: Optional[Union[float, Sequence[float]]] = None,
    acb: Optional[Union[float, Sequence[float]]] = None,
    nperseg: Optional[int] = None,
    dim: Optional[int] = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Power in the main channel and in adjacent channels, in dB.

    The adjacent channel power ratio (ACPR) of each adjacent channel is
    ``adjacent - main`` (in dB).

    Parameters
    ----------
    signal : torch.Tensor or Cplx
        The complex baseband signal; see ``x`` of :func:`bandwidth_power`
        (a complex tensor, a Cplx, or the real ``(..., T, 2)`` layout).
    sample_rate : float
        The sampling frequency, in Hz.
    mcf : float
        The centre frequency of the main channel, in Hz, in
        ``[-sample_rate / 2, sample_rate / 2)``.
    mcb : float
        The bandwidth of the main channel, in Hz.
    acf : float or sequence of float, optional
        The centre frequencies of the adjacent channels, in Hz. None means
        no adjacent channel.
    acb : float or sequence of float, optional
        The bandwidths of the adjacent channels, in Hz: one for all, or one
        per channel in ``acf``. Defaults to ``mcb``. (The published package
        silently ignored ``acf`` when ``acb`` was omitted.)
    nperseg : int, optional
        The Welch segment length (non-overlapping segments, symmetric
        Hamming window); defaults to the whole signal.
    dim : int, optional
        The time dimension, as in :func:`bandwidth_power`.

    Returns
    -------
    main_channel_power : torch.Tensor
        ``(..., 1)``: the power in the main channel, in dB (of V**2 for a
        signal in V).
    adjacent_channel_power : torch.Tensor
        ``(..., len(acf))``: the power in each adjacent channel, in dB.

    Raises
    ------
    TypeError
        If ``mcf`` is not a number, ``acf`` or ``acb`` is not a number or a
        sequence of numbers, or ``signal`` has a bad type.
    IndexError
        If ``dim`` is out of range.
    ValueError
        If ``sample_rate``, ``mcb`` or an ``acb`` is not positive, ``acb`` has
        a length other than 1 or ``len(acf)``, or ``signal`` or ``nperseg``
        is bad. Every message starts with ``"acpr_calc: "`` and names the
        argument.

    Notes
    -----
    The channel powers are those of :func:`bandwidth_power` for the bands
    ``(f - b / 2, f + b / 2)``. They differ from the published package by a
    constant in dB (it summed a spectrum instead of integrating a density),
    so ACPR values are the same.

    Examples
    --------
    >>> t = torch.arange(4096.)
    >>> tone = lambda f, a: a * torch.exp(2j * torch.pi * f * t)
    >>> x = tone(0.0, 1.0) + tone(0.2, 0.1)        # -20 dB next door
    >>> main, adj = acpr_calc(x, 1.0, 0.0, 0.1, acf=[0.2, -0.2], nperseg=256)
    >>> (adj - main).round(decimals=1)[0].item()
    -20.0
    """
    where = "acpr_calc"
    # checked here, where they have the names the caller knows them by
    signal, dim = _as_baseband(signal, dim, where, "signal")
    sample_rate = _positive(sample_rate, "sample_rate", where)
    mcf = _as_float(mcf, "mcf", where)
    mcb = _positive(mcb, "mcb", where)
    acf = [] if acf is None else _as_floats(acf, "acf", where)
    acb = [mcb] if acb is None else _as_floats(acb, "acb", where)
    if len(acb) == 1:
        acb = acb * len(acf)
    if len(acb) != len(acf):
        raise ValueError(
            f"{where}: `acb` must hold one bandwidth or one per channel in `acf`"
            f" ({len(acf)}), got {len(acb)}"
        )
    for b in acb:
        _positive(b, "acb", where)

    centres, widths = [mcf] + acf, [mcb] + acb
    bands = [(f - b / 2, f + b / 2) for f, b in zip(centres, widths)]
    _, _, power = _bandwidth_power(
        signal, sample_rate, bands, dim, 0, nperseg, "density", window=None,
        where=where,
    )
    return power[..., :1], power[..., 1:]
