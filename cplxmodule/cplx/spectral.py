r"""Fourier transforms of complex tensors: FFT, short-time FFT, analytic signal, data consistency.

The transforms run through torch's native complex kernels (:mod:`torch.fft`
and :func:`torch.stft`): a Fourier transform has no cheaper form on split
parts, so the input is viewed or copied as a native complex tensor and the
result viewed back as a :class:`Cplx` (:func:`to_complex`,
:func:`from_complex`). Gradients flow through both conversions. The
short-time transforms also take real waveforms and one-sided spectra, as
torch's do (real-to-complex transforms, ``onesided``), and
:func:`data_consistency` is the k-space step of MRI reconstruction.

Under :func:`torch.compile` (``fullgraph=True`` and dynamic shapes work)
no complex tensor enters the graph, where inductor has no kernel for it:
each FFT is one operator of the ``cplxmodule`` namespace that takes the two
real parts and returns real tensors, calling torch's FFT kernel inside, its
gradient again such an operator (the adjoint transform). The framing,
padding, windows and overlap-add of the short-time transforms are real ops
around it that inductor compiles; the analytic signal is one such operator
whole, and so are the real-to-complex transform of real frames and its
inverse. The check of :func:`istft` that the overlap-added window does not
vanish is an assertion in the compiled graph.

Exported and traced (:func:`torch.export` and the ONNX exporter built on it,
the TorchScript tracer and its ONNX exporter), the same transforms are
computed on the two real parts with real ops only, which every exporter
knows: a discrete Fourier transform of length :math:`n` is products with
the :math:`\cos` and :math:`\sin` of its angles, split by the "four-step"
factorisation :math:`n = n_1 n_2` (:math:`n_2` transforms of length
:math:`n_1`, twiddle factors, :math:`n_1` transforms of length :math:`n_2`,
recursively) into small matrices, about :math:`n (n_1 + n_2)` products
instead of :math:`n^2`; a prime length above 64 is one product with the
whole :math:`n \times n` matrix. The short-time transforms gather the frames
and overlap-add them with pads. This form is an order of magnitude slower
than torch's FFT kernels (compiled or not), hence only for export. The
transform length (and the signal's length for the short-time transforms) is
fixed in an exported graph; the batch is not.

Power spectra (Welch's method) and :func:`~cplxmodule.utils.spectrum.fftshift`
live in :mod:`cplxmodule.utils.spectrum`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import _fft
from ._shared import (
    check_bool, check_choice, check_positive_int, checked_cplx, checked_real, describe,
)
from .conversions import _from_complex, to_complex
from .tensor import Cplx
from typing import Optional, Union
from ._typing import CplxLike

__all__ = ["fft", "ifft", "fftn", "ifftn", "stft", "istft", "hilbert", "data_consistency"]

#: The normalisations of :mod:`torch.fft`, besides ``None``.
NORMS = ("backward", "forward", "ortho")


def _exporting():
    """Whether the call is exported or traced: then the transforms take real ops only."""
    return (
        torch.compiler.is_exporting()
        or torch.onnx.is_in_onnx_export()
        or torch._C._get_tracing_state() is not None
    )


def _compiling():
    """Whether the call is compiled, not exported: then the FFTs are the operators of ``_fft``."""
    return torch.compiler.is_compiling() and not _exporting()


def _transform(op, parts_op, inverse, input, where, norm, **kwargs):
    """``op`` of torch on the native complex input, ``parts_op`` on its parts for an export,
    or ``_fftn_compiled`` compiled."""
    input = checked_cplx(input, where=where)
    check_choice(norm, "norm", where, NORMS, optional=True)
    if _exporting():
        return Cplx(*parts_op(input.real, input.imag, norm=norm, inverse=inverse, **kwargs))
    if torch.compiler.is_compiling():
        if "n" in kwargs:
            n, dim = kwargs["n"], kwargs["dim"]
            kwargs = {"s": None if n is None else (n,), "dim": (dim,)}
        return _fftn_compiled(input.real, input.imag, norm=norm, inverse=inverse, where=where,
                              **kwargs)
    return _from_complex(op(to_complex(input), norm=norm, **kwargs))


# the transforms compiled: torch's kernels as operators on real tensors (see ``_fft``)
def _fftn_plan(ndim, s, dim, where):
    """The dimensions (counted from the front) and lengths of an ``fftn``, as torch reads them."""
    if dim is None:
        dim = range(ndim) if s is None else range(ndim - len(s), ndim)
    dims = []
    for d in dim:
        if not -ndim <= d < ndim:
            raise IndexError(
                f"{where}: `dim` must be in [{-ndim}, {ndim - 1}] for a {ndim}-d input, got {d}"
            )
        dims.append(d % ndim)
    if len(set(dims)) != len(dims):
        raise ValueError(f"{where}: `dim` must not repeat a dimension, got {tuple(dim)}")
    if s is None:
        return dims, [None] * len(dims)
    if len(s) != len(dims):
        raise ValueError(f"{where}: `s` and `dim` must have the same length, got {s} and {dim}")
    for n in s:
        if n != -1 and n < 1:
            raise ValueError(f"{where}: the lengths of the transform must be positive, got {n}")
    return dims, [None if n == -1 else n for n in s]


def _fftn_compiled(real, imag, s, dim, norm, inverse, where):
    """:func:`fftn` (:func:`ifftn`) of the parts, padded or cut by real ops, by ``_fft.fft_c2c``."""
    dims, lengths = _fftn_plan(real.dim(), s, dim, where)
    for d, n in zip(dims, lengths):
        length = real.shape[d]
        if n is None or n == length:
            continue
        if n < length:
            real, imag = real.narrow(d, 0, n), imag.narrow(d, 0, n)
        else:
            pad = (0, 0) * (real.dim() - 1 - d) + (0, n - length)
            real, imag = F.pad(real, pad), F.pad(imag, pad)
    return Cplx(*_fft.fft_c2c_split(real, imag, dims, norm or "backward", not inverse))


# the transforms on real parts, for an export (see the module's docstring)
_DIRECT = 64  # transform lengths up to this are one product with the whole matrix


def _split_length(n):
    """The largest divisor of ``n`` not above its square root (1 for a prime)."""
    # plain arithmetic: dynamo cannot trace ``math.isqrt`` of a length it
    # holds as a symbol (the comparisons specialise it instead)
    best, divisor = 1, 2
    while divisor * divisor <= n:
        if n % divisor == 0:
            best = divisor
        divisor += 1
    return best


def _angles(rows, cols, n, inverse, like):
    r""":math:`\cos` and :math:`\pm\sin` of :math:`2\pi jk/n`, ``(rows, cols)``, as ``like``.

    The product ``jk`` is reduced modulo ``n`` in integers and the angles
    computed in float64, so that long transforms keep their accuracy.
    """
    j = torch.arange(rows, device=like.device)
    k = torch.arange(cols, device=like.device)
    angle = torch.outer(j, k).remainder(n).to(torch.float64) * (2 * math.pi / n)
    sign = 1.0 if inverse else -1.0
    return torch.cos(angle).to(like.dtype), (sign * torch.sin(angle)).to(like.dtype)


def _dft(real, imag, inverse):
    """The unscaled discrete Fourier transform of ``real + i imag`` along the last dimension.

    Four-step: with ``n = n1 n2``, input index ``m = n2 m1 + m2`` and output
    index ``k = k1 + n1 k2``, transform over ``m1``, multiply by the twiddle
    factors of ``m2 k1``, transform over ``m2``.
    """
    n = real.shape[-1]
    n1 = _split_length(n) if n > _DIRECT else 1
    if n1 == 1:
        cos, sin = _angles(n, n, n, inverse, real)
        return real @ cos - imag @ sin, real @ sin + imag @ cos
    n2 = n // n1
    shape = real.shape[:-1]
    # (..., m2, m1): the first transforms run along the last dimension
    real, imag = (t.reshape(shape + (n1, n2)).transpose(-1, -2) for t in (real, imag))
    real, imag = _dft(real, imag, inverse)
    cos, sin = _angles(n2, n1, n, inverse, real)
    real, imag = real * cos - imag * sin, real * sin + imag * cos
    real, imag = _dft(real.transpose(-1, -2), imag.transpose(-1, -2), inverse)
    # (..., k2, k1) in memory order is k = k1 + n1 k2
    return tuple(t.transpose(-1, -2).reshape(shape + (n,)) for t in (real, imag))


def _scale(n, norm, inverse):
    """The factor of a transform of length ``n`` under ``norm``, as torch scales it."""
    if norm == "ortho":
        return n ** -0.5
    backward = norm in (None, "backward")
    return 1 / n if backward == inverse else 1.0


def _fft_parts(real, imag, n, dim, norm, inverse):
    """:func:`fft` (:func:`ifft` if ``inverse``) on the parts, with real ops."""
    # dimensions counted from the front: the TorchScript exporter writes
    # negative ones into the permutation of a ``movedim``
    dim, last = dim % real.dim(), real.dim() - 1
    real, imag = real.movedim(dim, last), imag.movedim(dim, last)
    length = real.shape[-1]
    n = length if n is None else n
    if n < length:
        real, imag = real[..., :n], imag[..., :n]
    elif n > length:
        real, imag = (F.pad(t, (0, n - length)) for t in (real, imag))
    real, imag = _dft(real, imag, inverse)
    scale = _scale(n, norm, inverse)
    if scale != 1:
        real, imag = real * scale, imag * scale
    return real.movedim(last, dim), imag.movedim(last, dim)


def _fftn_parts(real, imag, s, dim, norm, inverse):
    """:func:`fftn` (:func:`ifftn`) on the parts: a transform along each dimension in turn."""
    if dim is None:
        dim = range(real.dim()) if s is None else range(-len(s), 0)
    dim = list(dim)
    s = [None] * len(dim) if s is None else [None if n == -1 else n for n in s]
    for n, d in zip(s, dim):
        real, imag = _fft_parts(real, imag, n, d, norm, inverse)
    return real, imag


def fft(
    input: CplxLike, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None,
) -> Cplx:
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
    return _transform(torch.fft.fft, _fft_parts, False, input, "fft", norm, n=n, dim=dim)


def ifft(
    input: CplxLike, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None,
) -> Cplx:
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
    return _transform(torch.fft.ifft, _fft_parts, True, input, "ifft", norm, n=n, dim=dim)


def fftn(
    input: CplxLike,
    s: Optional[tuple[int, ...]] = None,
    dim: Optional[tuple[int, ...]] = None,
    norm: Optional[str] = None,
) -> Cplx:
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
    return _transform(torch.fft.fftn, _fftn_parts, False, input, "fftn", norm, s=s, dim=dim)


def ifftn(
    input: CplxLike,
    s: Optional[tuple[int, ...]] = None,
    dim: Optional[tuple[int, ...]] = None,
    norm: Optional[str] = None,
) -> Cplx:
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
    return _transform(torch.fft.ifftn, _fftn_parts, True, input, "ifftn", norm, s=s, dim=dim)


def _roll_half(input, dims, inverse):
    """``input`` rolled by half its size along each of ``dims``: :func:`torch.fft.fftshift`,
    or :func:`torch.fft.ifftshift` if ``inverse`` (the public forms are in
    :mod:`cplxmodule.utils.spectrum`)."""
    sizes = [input.shape[d] // 2 for d in dims]
    if torch._C._get_tracing_state() is not None:
        # the TorchScript exporter takes a roll by constant shifts only, not by a traced size
        sizes = [int(n) for n in sizes]
    return torch.roll(input, [-n if inverse else n for n in sizes], list(dims))


def _fft_dims(dim, ndim, where):
    """The dimensions ``dim`` (an int or a tuple of them) of an ``ndim``-d input, from the front."""
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise TypeError(f"{where}: `dim` must be an int or a non-empty tuple of ints, got {dim!r}")
    fixed = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise ValueError(
                f"{where}: `dim` must be in [{-ndim}, {ndim - 1}] for a {ndim}-d `input`, got {d}"
            )
        fixed.append(d % ndim)
    if len(set(fixed)) != len(fixed):
        raise ValueError(f"{where}: `dim` must not name a dimension twice, got {tuple(dims)}")
    return tuple(fixed)


def _checked_mask(mask, shape, where):
    """``mask`` as a boolean or real floating-point tensor that broadcasts to ``shape``."""
    if not isinstance(mask, torch.Tensor) or mask.is_complex() or not (
        mask.dtype == torch.bool or mask.is_floating_point()
    ):
        raise TypeError(
            f"{where}: `mask` must be a bool or real floating-point tensor (1 or True where"
            f" k-space is sampled), got {describe(mask)}"
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, shape)
    except RuntimeError:
        broadcast = None
    if broadcast != shape:
        raise ValueError(
            f"{where}: `mask` must broadcast to the shape of `kspace`, {tuple(shape)}, got"
            f" shape {tuple(mask.shape)}"
        )
    return mask


def _checked_dc_weight(weight, like, where):
    """``weight`` as a real tensor of ``like``'s dtype that broadcasts to it, or ``None``."""
    if weight is None:
        return None
    if not isinstance(weight, torch.Tensor):
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(
            weight
        ):
            raise TypeError(
                f"{where}: `weight` must be None, a finite number or a real tensor, got"
                f" {describe(weight)}"
            )
        return torch.tensor(float(weight), dtype=like.dtype, device=like.device)
    if weight.is_complex() or not weight.is_floating_point():
        raise TypeError(
            f"{where}: `weight` must be None, a finite number or a real tensor, got"
            f" {describe(weight)}"
        )
    try:
        torch.broadcast_shapes(weight.shape, like.shape)
    except RuntimeError:
        raise ValueError(
            f"{where}: `weight` must broadcast to the shape of `kspace`, {tuple(like.shape)},"
            f" got shape {tuple(weight.shape)}"
        ) from None
    return weight.to(like.dtype)


def data_consistency(
    input: CplxLike,
    kspace: CplxLike,
    mask: torch.Tensor,
    weight: Optional[Union[float, torch.Tensor]] = None,
    dim: Union[int, tuple[int, ...]] = (-2, -1),
    norm: Optional[str] = "ortho",
    centered: bool = False,
) -> Cplx:
    r"""Make an image agree with the k-space measured where it was sampled (MRI reconstruction).

    The image ``input`` (a network's estimate) is Fourier transformed along
    ``dim``; where ``mask`` says k-space was sampled, its values are
    replaced by the measured ones ``kspace`` (hard, ``weight=None``), or
    moved toward them by ``weight`` (soft); then back to the image domain:

    .. math::

        \hat x = \mathcal F^{-1}\bigl(k - \lambda\, m \odot (k - k_0)\bigr),
        \quad k = \mathcal F x,

    with :math:`m` the mask, :math:`k_0` the measured k-space and
    :math:`\lambda =` ``weight`` (1 for the hard form). With a boolean mask
    the hard form copies :math:`k_0` exactly where ``mask`` is ``True`` and
    keeps :math:`k` elsewhere.

    Parameters
    ----------
    input : Cplx
        The image, of any shape; a :class:`Cplx` or a tensor of torch's
        complex dtype (a real image: ``Cplx(x)``).
    kspace : Cplx
        The measured k-space :math:`k_0`, of the shape of ``input`` (its
        values where ``mask`` is 0 play no part: zero-filled is fine).
    mask : torch.Tensor
        Where k-space was sampled: a bool tensor, or a real one (1 sampled,
        0 not, or a weight in between, e.g. a sampling density), that
        broadcasts to ``kspace``: a Cartesian mask of columns is of shape
        ``(W,)`` or ``(1, W)`` for ``dim=(-2, -1)``.
    weight : float or torch.Tensor, optional
        :math:`\lambda`: ``None`` for the hard replacement; a number or a
        real tensor (a learnable parameter) for the soft form, 1 being the
        hard one and 0 no data consistency at all (see the Notes).
    dim : int or tuple of int, default (-2, -1)
        The dimensions of the Fourier transform (an image's rows and columns).
    norm : {"ortho", "backward", "forward", None}, default "ortho"
        The scaling of the transforms, as for :func:`fftn`: ``kspace`` must
        have been measured (or simulated) with the same one.
    centered : bool, default False
        Whether image and k-space have their origin at the centre (as the
        fastMRI data do): the transforms are then the centred ones,
        ``fftshift(fftn(ifftshift(x)))`` and its inverse.

    Returns
    -------
    Cplx
        The image, of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` or ``kspace`` is not complex, ``mask`` is not a bool or
        real floating-point tensor, ``weight`` is not a number or a real
        tensor, or ``centered`` is not a bool.
    ValueError
        If ``kspace`` and ``input`` differ in shape, ``mask`` or ``weight``
        do not broadcast to it, ``dim`` is out of range or ``norm`` unknown.

    Notes
    -----
    The soft form is the data-consistency layer of Schlemper et al.
    (2018) for noisy measurements, :math:`k_0` weighted by their
    :math:`\nu` (a ratio of the regularisation weight to the noise level)
    against the network's :math:`k`, :math:`(k + \nu k_0) / (1 + \nu)`
    where sampled, which is :math:`\lambda = \nu / (1 + \nu)` above; it is
    also the gradient step on the data term :math:`\tfrac12 \|m \odot
    (\mathcal F x - k_0)\|^2` of the variational networks of Hammernik et
    al. (2018), with step :math:`\lambda` (the transform being unitary with
    ``norm="ortho"``). A learnable :math:`\lambda` per cascade is
    :class:`~cplxmodule.nn.CplxDataConsistency`'s ``soft=True``.
    Computed in float32 for float16 and bfloat16 parts (torch's FFT has no
    half-precision kernel on the CPU), and returned in their dtype.

    References
    ----------
    J. Schlemper, J. Caballero, J. V. Hajnal, A. N. Price and D. Rueckert, "A
    deep cascade of convolutional neural networks for dynamic MR image
    reconstruction", IEEE Trans. Medical Imaging 37(2), 2018.

    K. Hammernik, T. Klatzer, E. Kobler, M. P. Recht, D. K. Sodickson, T. Pock
    and F. Knoll, "Learning a variational network for reconstruction of
    accelerated MRI data", Magnetic Resonance in Medicine 79(6), 2018.

    Examples
    --------
    >>> image = cplx.randn(1, 1, 8, 8)
    >>> kspace = fftn(image, dim=(-2, -1), norm="ortho")
    >>> mask = torch.zeros(8, dtype=torch.bool)
    >>> mask[::2] = True  # every other column measured
    >>> zero_filled = ifftn(kspace * mask, dim=(-2, -1), norm="ortho")
    >>> out = data_consistency(zero_filled, kspace * mask, mask)
    >>> torch.allclose(out.real, zero_filled.real, atol=1e-6)  # consistent already
    True
    >>> full = data_consistency(Cplx.zeros(1, 1, 8, 8), kspace, torch.ones(8, dtype=torch.bool))
    >>> torch.allclose(full.imag, image.imag, atol=1e-6)  # all of k-space: the image itself
    True
    """
    return _data_consistency(input, kspace, mask, weight, dim, norm, centered,
                             where="data_consistency")


def _data_consistency(input, kspace, mask, weight, dim, norm, centered, *, where):
    """:func:`data_consistency`, its errors starting with ``where``."""
    input = checked_cplx(input, "input", where=where)
    kspace = checked_cplx(kspace, "kspace", where=where)
    if kspace.shape != input.shape:
        raise ValueError(
            f"{where}: `kspace` must have the shape of `input`, {tuple(input.shape)}, got"
            f" {tuple(kspace.shape)}"
        )
    mask = _checked_mask(mask, input.shape, where)
    check_choice(norm, "norm", where, NORMS, optional=True)
    check_bool(centered, "centered", where)
    dims = _fft_dims(dim, input.dim(), where)
    dtype = input.dtype
    if dtype in (torch.float16, torch.bfloat16):
        # torch's FFT has no half-precision kernels on the CPU (on a GPU, for
        # powers of two only): the transforms run in float32
        input, kspace = input.to(torch.float32), kspace.to(torch.float32)
    weight = _checked_dc_weight(weight, input.real, where)
    if not (_compiling() or _exporting()):
        # eagerly, all of it on torch's complex tensors: no split and interleave between
        # the transforms
        output = _from_complex(_consistent(to_complex(input), to_complex(kspace), mask, weight,
                                           dims, norm, centered))
        return output.to(dtype) if output.dtype != dtype else output
    if centered:
        input = input.apply(_roll_half, dims, True)
    k = fftn(input, dim=dims, norm=norm)
    if centered:
        k = k.apply(_roll_half, dims, False)
    if weight is None and mask.dtype == torch.bool:
        k = Cplx(torch.where(mask, kspace.real, k.real), torch.where(mask, kspace.imag, k.imag))
    else:
        # k (1 - f) + k0 f: exactly k where f = 0, and k0 where f = 1
        factor = mask.to(k.dtype) if weight is None else weight * mask.to(k.dtype)
        k = k * (1 - factor) + kspace * factor
    if centered:
        k = k.apply(_roll_half, dims, True)
    output = ifftn(k, dim=dims, norm=norm)
    if centered:
        output = output.apply(_roll_half, dims, False)
    return output.to(dtype) if output.dtype != dtype else output


def _consistent(image, kspace, mask, weight, dims, norm, centered):
    """:func:`data_consistency` of torch's complex tensors, unchecked."""
    if centered:
        image = _roll_half(image, dims, True)
    k = torch.fft.fftn(image, dim=dims, norm=norm)
    if centered:
        k = _roll_half(k, dims, False)
    if weight is None and mask.dtype == torch.bool:
        k = torch.where(mask, kspace, k)
    else:
        factor = mask.to(weight.dtype if weight is not None else k.real.dtype)
        factor = factor if weight is None else weight * factor
        k = k * (1 - factor) + kspace * factor
    if centered:
        k = _roll_half(k, dims, True)
    image = torch.fft.ifftn(k, dim=dims, norm=norm)
    return _roll_half(image, dims, False) if centered else image


def _check_window(window, length, like, where):
    """A real window of ``length`` samples on the device and of the dtype of the real ``like``."""
    if window is None:
        return None
    if not isinstance(window, torch.Tensor) or window.is_complex() or window.shape != (length,):
        raise ValueError(
            f"{where}: `window` must be a real tensor of shape ({length},), got {describe(window)}"
        )
    return window.to(like)


def _check_stft_lengths(n_fft, hop_length, win_length, where):
    check_positive_int(n_fft, "n_fft", where)
    win_length = n_fft if win_length is None else check_positive_int(
        win_length, "win_length", where
    )
    if win_length > n_fft:
        raise ValueError(
            f"{where}: `win_length` must be at most `n_fft` ({n_fft}), got {win_length!r}"
        )
    hop_length = n_fft // 4 if hop_length is None else hop_length
    return check_positive_int(hop_length, "hop_length", where), win_length


def _signal(input, where):
    """A real floating-point tensor as it is, anything complex as a :class:`Cplx`, else raise."""
    if isinstance(input, torch.Tensor) and not input.is_complex():
        if not input.is_floating_point():
            raise TypeError(
                f"{where}: `input` must be a real floating-point signal, a Cplx or a complex"
                f" tensor, got {describe(input)}"
            )
        return input
    return checked_cplx(input, where=where)


def _check_onesided(onesided, real, where):
    """``onesided`` for a real signal (``real``) or a complex one, ``None`` read as torch reads it."""
    if onesided is None:
        return real
    check_bool(onesided, "onesided", where)
    if onesided and not real:
        raise ValueError(
            f"{where}: `onesided` must be False or None for a complex signal (its spectrum has"
            f" no symmetry to halve), got True"
        )
    return onesided


def stft(
    input: CplxLike,
    n_fft: int,
    hop_length: Optional[int] = None,
    win_length: Optional[int] = None,
    window: Optional[torch.Tensor] = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: Optional[bool] = None,
) -> Cplx:
    r"""The short-time Fourier transform of a real or complex signal, as :func:`torch.stft`.

    :func:`torch.stft` with ``return_complex=True``, its result a
    :class:`Cplx`: frame :math:`t` of the padded signal, windowed, is
    Fourier transformed over ``n_fft`` points. A real signal gives its
    one-sided spectrum by default (the ``n_fft // 2 + 1`` non-negative
    frequencies, the others being their conjugates), a complex one all
    ``n_fft`` frequencies.

    Parameters
    ----------
    input : torch.Tensor or Cplx
        The signal, of shape ``(L,)`` or ``(B, L)``: a real floating-point
        tensor (a waveform), or complex (a :class:`Cplx`, a tensor of torch's
        complex dtype).
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
    onesided : bool, optional
        Return the ``n_fft // 2 + 1`` non-negative frequencies only: the
        default for a real signal, refused for a complex one, as by
        :func:`torch.stft`. ``False`` gives all ``n_fft`` frequencies.

    Returns
    -------
    Cplx
        Of shape ``(F, frames)`` or ``(B, F, frames)``, with ``F = n_fft // 2
        + 1`` one-sided and ``n_fft`` otherwise (in :func:`torch.fft.fftfreq`
        order), and ``frames = 1 + L // hop_length`` with ``center``.

    Raises
    ------
    TypeError
        If ``input`` is neither a real floating-point tensor nor complex, or
        ``onesided`` is not a bool.
    ValueError
        If ``input`` is not 1-d or 2-d, ``onesided`` is True for a complex
        signal, or ``n_fft``, ``hop_length``, ``win_length`` or ``window``
        are out of range.

    Notes
    -----
    With :math:`w` the window zero-padded to ``n_fft`` and :math:`H` the hop,
    :math:`S_{k,t} = \sum_{m=0}^{n_{fft}-1} w_m x_{tH+m} e^{-2\pi i km/n_{fft}}`
    on the (padded) signal :math:`x`. :func:`scipy.signal.stft` computes the
    same sums divided by :math:`\sum_m w_m` (its ``scaling="spectrum"``) and
    pads with zeros, not by reflection. :func:`istft` inverts it; so does
    :func:`torch.istft` of ``cplx.to_complex(spectrum)``.

    Examples
    --------
    >>> w = torch.hann_window(16)
    >>> stft(torch.randn(2, 64), 16, window=w).shape  # a waveform: one-sided
    torch.Size([2, 9, 17])
    >>> stft(cplx.randn(2, 64), 16, window=w).shape  # a complex signal: two-sided
    torch.Size([2, 16, 17])
    """
    return _stft(input, n_fft, hop_length, win_length, window, center, pad_mode,
                 normalized, onesided, where="stft")


def _stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
          onesided=None, *, where):
    """:func:`stft`, its errors starting with ``where``."""
    input = _signal(input, where)
    if input.dim() not in (1, 2):
        raise ValueError(
            f"{where}: `input` must have shape (L,) or (B, L), got {tuple(input.shape)}"
        )
    hop_length, win_length = _check_stft_lengths(n_fft, hop_length, win_length, where)
    real = isinstance(input, torch.Tensor)
    onesided = _check_onesided(onesided, real, where)
    parts = (input,) if real else (input.real, input.imag)
    window = _check_window(window, win_length, parts[0], where)
    if _compiling():
        return Cplx(*_stft_compiled(parts, n_fft, hop_length, win_length, window, center,
                                    pad_mode, normalized, onesided))
    if _exporting():
        return Cplx(*_stft_parts(parts, n_fft, hop_length, win_length, window, center,
                                 pad_mode, normalized, onesided))
    return _from_complex(torch.stft(
        input if real else to_complex(input), n_fft, hop_length=hop_length,
        win_length=win_length, window=window, center=center, pad_mode=pad_mode,
        normalized=normalized, onesided=onesided, return_complex=True,
    ))


def _frame_window(window, n_fft, win_length, like):
    """The window zero-padded to ``n_fft`` and centred, as torch pads it (ones if None)."""
    if window is None:
        window = torch.ones(win_length, dtype=like.dtype, device=like.device)
    left = (n_fft - win_length) // 2
    return F.pad(window, (left, n_fft - win_length - left))


def _padded(part, n_fft, center, pad_mode):
    """A batch ``(B, L)`` of signals, padded by ``n_fft // 2`` on both sides with ``center``."""
    if not center:
        return part
    # torch pads a batch of signals as the channels of one
    return F.pad(part.unsqueeze(0), (n_fft // 2, n_fft // 2), mode=pad_mode).squeeze(0)


def _stft_parts(parts, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                onesided):
    """:func:`stft` on the parts (the real signal, or the two parts of a complex one), with real
    ops: frames, windowed, transformed."""
    window = _frame_window(window, n_fft, win_length, parts[0])
    batched = parts[0].dim() == 2
    # the frames, gathered by their indices (``unfold`` has no ONNX form
    # in the TorchScript exporter)
    length = parts[0].shape[-1] + 2 * (n_fft // 2) * center
    starts = torch.arange(0, length - n_fft + 1, hop_length, device=window.device)[:, None]
    offsets = torch.arange(n_fft, device=window.device)
    frames = []
    for part in parts:
        part = _padded(part if batched else part.unsqueeze(0), n_fft, center, pad_mode)
        frames.append(part[..., starts + offsets] * window)
    if len(frames) == 1:
        frames.append(torch.zeros_like(frames[0]))
    real, imag = _dft(frames[0], frames[1], inverse=False)
    if onesided:
        real, imag = real[..., : n_fft // 2 + 1], imag[..., : n_fft // 2 + 1]
    if normalized:
        real, imag = real * n_fft ** -0.5, imag * n_fft ** -0.5
    # (B, frames, F) -> (B, F, frames)
    real, imag = real.transpose(-1, -2), imag.transpose(-1, -2)
    return (real, imag) if batched else (real.squeeze(0), imag.squeeze(0))


class _WindowedFrames(torch.autograd.Function):
    """The frames ``(..., T, n_fft)`` of a signal, frame ``t`` from sample ``t * hop_length``,
    times the window ``(n_fft,)``.

    The gradient of :meth:`torch.Tensor.unfold` compiles to a scatter-add of
    each frame's samples onto the signal, a scalar loop; it is written here
    as the overlap-add of the frames, ``k`` shifted sums of whole chunks that
    inductor computes in one vectorised pass.
    """

    @staticmethod
    def forward(signal, window, n_fft, hop_length):
        return signal.unfold(-1, n_fft, hop_length) * window

    @staticmethod
    def setup_context(ctx, inputs, output):
        signal, window, ctx.n_fft, ctx.hop_length = inputs
        ctx.save_for_backward(signal, window)

    @staticmethod
    def backward(ctx, grad):
        signal, window = ctx.saved_tensors
        grad_signal = grad_window = None
        if ctx.needs_input_grad[0]:
            grad_signal = _overlap_add(grad * window, ctx.hop_length)
            # the samples after the last frame have no gradient
            grad_signal = F.pad(grad_signal, (0, signal.shape[-1] - grad_signal.shape[-1]))
        if ctx.needs_input_grad[1]:
            frames = signal.unfold(-1, ctx.n_fft, ctx.hop_length)
            grad_window = (grad * frames).flatten(0, -2).sum(0)
        return grad_signal, grad_window, None, None


def _stft_compiled(parts, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                   onesided):
    """:func:`stft` compiled: the frames by real ops, their FFT by an operator of ``_fft``
    (the one-sided transform of real frames by ``_fft.fft_r2c_split``)."""
    window = _frame_window(window, n_fft, win_length, parts[0])
    batched = parts[0].dim() == 2
    frames = [
        _WindowedFrames.apply(_padded(part if batched else part.unsqueeze(0), n_fft, center,
                                      pad_mode), window, n_fft, hop_length)
        for part in parts
    ]
    norm = "ortho" if normalized else "backward"
    if len(frames) == 1 and onesided:
        spectrum = _fft.fft_r2c_split(frames[0], 2, norm)
    else:
        if len(frames) == 1:
            frames.append(torch.zeros_like(frames[0]))
        spectrum = _fft.fft_c2c_split(frames[0], frames[1], [2], norm, True)
    # (B, frames, F) -> (B, F, frames), as views: a copy would transpose
    real, imag = (t.transpose(1, 2) for t in spectrum)
    return (real, imag) if batched else (real.squeeze(0), imag.squeeze(0))


def istft(
    input: CplxLike,
    n_fft: int,
    hop_length: Optional[int] = None,
    win_length: Optional[int] = None,
    window: Optional[torch.Tensor] = None,
    center: bool = True,
    normalized: bool = False,
    length: Optional[int] = None,
    onesided: Optional[bool] = None,
    return_complex: Optional[bool] = None,
) -> Union[Cplx, torch.Tensor]:
    r"""The inverse of :func:`stft`: a signal from its short-time spectrum, as :func:`torch.istft`.

    The frames are inverse transformed, windowed again and overlap-added,
    divided by the overlap-added squared window, as :func:`torch.istft` does.
    A one-sided spectrum (``n_fft // 2 + 1`` frequencies, that of a real
    signal) gives a real signal; a two-sided one (``n_fft`` frequencies) a
    complex signal.

    Parameters
    ----------
    input : Cplx
        The short-time spectrum, of shape ``(F, frames)`` or ``(B, F,
        frames)``, ``F`` being ``n_fft // 2 + 1`` (one-sided) or ``n_fft``
        (two-sided); a :class:`Cplx` or a tensor of torch's complex dtype.
    n_fft, hop_length, win_length, window, center, normalized
        Those given to :func:`stft`.
    length : int, optional
        The length of the signal returned (cut or zero-padded); the length
        the frames cover by default.
    onesided : bool, optional
        Whether ``input`` is one-sided; by default, as for
        :func:`torch.istft`, unless it has ``n_fft`` frequencies.
    return_complex : bool, optional
        Return a complex signal (a :class:`Cplx`): the default for a
        two-sided spectrum, refused for a one-sided one (whose signal is
        real). ``False`` reads a two-sided spectrum as that of a real signal
        (conjugate-symmetric), by its first ``n_fft // 2 + 1`` frequencies,
        as :func:`torch.istft` does.

    Returns
    -------
    Cplx or torch.Tensor
        Of shape ``(L,)`` or ``(B, L)``: a :class:`Cplx` with
        ``return_complex``, else a real tensor.

    Raises
    ------
    TypeError
        If ``input`` is not complex, or ``onesided`` or ``return_complex``
        is not a bool.
    ValueError
        If ``input`` is not 2-d or 3-d with ``n_fft`` or ``n_fft // 2 + 1``
        frequencies (as ``onesided`` says), ``return_complex`` is True for a
        one-sided spectrum, or the lengths or the window are out of range.
    RuntimeError
        From :func:`torch.istft`, where the overlap-added squared window
        vanishes somewhere (the window and hop do not satisfy the
        nonzero-overlap-add condition, so the signal cannot be recovered).

    Notes
    -----
    ``istft(stft(x, ...), ...)`` recovers ``x`` for a window :math:`w` and
    hop whose shifted squares :math:`\sum_t w^2_{m - tH}` never vanish on
    the signal, e.g. a Hann window with ``hop_length = n_fft // 4`` and
    ``center=True``. The inverse of a one-sided spectrum reads the spectrum
    as the half of a conjugate-symmetric one, as :func:`torch.fft.irfft`
    does: the imaginary parts of its zero (and, for an even ``n_fft``,
    Nyquist) frequencies play no part.

    Examples
    --------
    >>> x, w = torch.randn(2, 64), torch.hann_window(16)
    >>> spectrum = stft(x, 16, window=w)  # one-sided: (2, 9, 17)
    >>> y = istft(spectrum, 16, window=w, length=64)  # real
    >>> torch.allclose(y, x, atol=1e-5)
    True
    >>> z = cplx.randn(64)
    >>> torch.allclose(istft(stft(z, 16, window=w), 16, window=w, length=64).imag, z.imag,
    ...                atol=1e-5)
    True
    """
    return _istft(input, n_fft, hop_length, win_length, window, center, normalized,
                  length, onesided, return_complex, where="istft")


def _istft(input, n_fft, hop_length, win_length, window, center, normalized, length,
           onesided=None, return_complex=None, *, where):
    """:func:`istft`, its errors starting with ``where``."""
    input = checked_cplx(input, where=where)
    hop_length, win_length = _check_stft_lengths(n_fft, hop_length, win_length, where)
    half = n_fft // 2 + 1
    if onesided is not None:
        check_bool(onesided, "onesided", where)
    if return_complex is not None:
        check_bool(return_complex, "return_complex", where)
    sizes = (n_fft, half) if onesided is None else (half,) if onesided else (n_fft,)
    if input.dim() not in (2, 3) or input.shape[-2] not in sizes:
        expected = " or ".join(
            f"({size}, frames) or (B, {size}, frames)"
            + (" (one-sided)" if size != n_fft or onesided else "")
            for size in dict.fromkeys(sizes)
        )
        raise ValueError(f"{where}: `input` must have shape {expected}, got {tuple(input.shape)}")
    if onesided is None:
        onesided = input.shape[-2] != n_fft
    if return_complex is None:
        return_complex = not onesided
    elif return_complex and onesided:
        raise ValueError(
            f"{where}: `return_complex` must be False or None for a one-sided spectrum (the"
            f" spectrum of a real signal), got True"
        )
    window = _check_window(window, win_length, input.real, where)
    if _compiling() or _exporting():
        real, imag = input.real, input.imag
        if not (onesided or return_complex):
            # a real signal of a two-sided spectrum: that of its first half, as torch reads it
            real, imag = real.narrow(-2, 0, half), imag.narrow(-2, 0, half)
        inverse = _istft_compiled if _compiling() else _istft_parts
        signal = inverse(real, imag, n_fft, hop_length, win_length, window, center, normalized,
                         length, not return_complex, where)
        return Cplx(*signal) if return_complex else signal[0]
    signal = torch.istft(
        to_complex(input), n_fft, hop_length=hop_length, win_length=win_length,
        window=window, center=center, normalized=normalized, onesided=onesided,
        length=length, return_complex=return_complex,
    )
    return _from_complex(signal) if return_complex else signal


def _overlap_add(frames, hop_length):
    """The sum of the frames ``(..., T, n)``, frame ``t`` shifted by ``t * hop_length``.

    Each frame is cut into chunks of ``hop_length`` samples (the last one
    zero-padded); chunk ``j`` of frame ``t`` lands on chunk ``t + j`` of the
    output, so the output is the sum over ``j`` of chunk ``j`` of every
    frame, shifted by ``j`` chunks.
    """
    frames_count, n = frames.shape[-2:]
    chunks = -(-n // hop_length)
    frames = F.pad(frames, (0, chunks * hop_length - n))
    frames = frames.reshape(frames.shape[:-1] + (chunks, hop_length))
    total = F.pad(frames[..., 0, :], (0, 0, 0, chunks - 1))
    for j in range(1, chunks):
        total = total + F.pad(frames[..., j, :], (0, 0, j, chunks - 1 - j))
    return total.flatten(-2)[..., : n + hop_length * (frames_count - 1)]


def _istft_parts(real, imag, n_fft, hop_length, win_length, window, center, normalized, length,
                 onesided, where):
    """:func:`istft` on the parts, with real ops, as :func:`torch.istft` computes it: the real
    signal of a one-sided spectrum, or the two parts of the complex signal of a two-sided one.

    Unlike the eager path, it does not check that the overlap-added squared
    window stays away from zero (an exported graph cannot raise on values).
    """
    window = _frame_window(window, n_fft, win_length, real)
    batched = real.dim() == 3
    # (B, F, frames) -> the frames' spectra (B, frames, F)
    real, imag = (
        (t if batched else t.unsqueeze(0)).transpose(-1, -2) for t in (real, imag)
    )
    if onesided:
        # the conjugates of the positive frequencies, in the order of the negative ones
        mirror = torch.arange(n_fft - n_fft // 2 - 1, 0, -1, device=real.device)
        real = torch.cat([real, real[..., mirror]], dim=-1)
        imag = torch.cat([imag, -imag[..., mirror]], dim=-1)
    real, imag = _dft(real, imag, inverse=True)
    scale = n_fft ** -0.5 if normalized else 1 / n_fft
    envelope, start, end, expected = _istft_envelope(window, real.shape[-2], n_fft, hop_length,
                                                     center, length)
    parts = (real,) if onesided else (real, imag)
    return _istft_signal(parts, window * scale, envelope, hop_length, start, end, expected,
                         batched)


def _istft_envelope(window, frames, n_fft, hop_length, center, length):
    """The overlap-added squared window of the signal kept, where it starts and ends, and the
    length the frames cover."""
    expected = n_fft + hop_length * (frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    envelope = _overlap_add((window * window).expand(frames, n_fft), hop_length)
    return envelope[start:end], start, end, expected


def _istft_signal(parts, window, envelope, hop_length, start, end, expected, batched):
    """The frames' parts ``(B, frames, n_fft)``, windowed, overlap-added, divided by the envelope."""
    signal = []
    for part in parts:
        part = _overlap_add(part * window, hop_length)[..., start:end] / envelope
        if end > expected:
            part = F.pad(part, (0, end - expected))
        signal.append(part if batched else part.squeeze(0))
    return tuple(signal)


def _istft_compiled(real, imag, n_fft, hop_length, win_length, window, center, normalized,
                    length, onesided, where):
    """:func:`istft` compiled: the frames' inverse FFT by an operator of ``_fft`` (that of a
    one-sided spectrum by ``_fft.fft_c2r``), the rest real ops.

    The check of the envelope that :func:`torch.istft` makes is an assertion
    in the graph.
    """
    window = _frame_window(window, n_fft, win_length, real)
    batched = real.dim() == 3
    # (B, F, frames) -> the frames' spectra (B, frames, F)
    real, imag = ((t if batched else t.unsqueeze(0)).transpose(1, 2) for t in (real, imag))
    norm = "ortho" if normalized else "backward"
    if onesided:
        parts: tuple[torch.Tensor, ...] = (_fft.fft_c2r(real, imag, 2, n_fft, norm),)
    else:
        parts = _fft.fft_c2c(real, imag, [2], norm, False).unbind(-1)
    envelope, start, end, expected = _istft_envelope(window, parts[0].shape[1], n_fft,
                                                     hop_length, center, length)
    torch._assert_async(
        envelope.abs().min() > 1e-11,
        f"{where}: the overlap-added squared window vanishes (the window and hop do not"
        f" satisfy the nonzero-overlap-add condition)",
    )
    return _istft_signal(parts, window, envelope, hop_length, start, end, expected, batched)


def hilbert(input: torch.Tensor, dim: int = -1) -> Cplx:
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
    if _exporting():
        n = input.shape[dim]
        gain = _fft.analytic_gain(n, input)
        dim, last = dim % input.dim(), input.dim() - 1
        signal = input.movedim(dim, last)
        real, imag = _dft(signal, torch.zeros_like(signal), inverse=False)
        real, imag = _dft(real * (gain / n), imag * (gain / n), inverse=True)
        return Cplx(real.movedim(last, dim), imag.movedim(last, dim))
    if _compiling():
        (dim,), _ = _fftn_plan(input.dim(), None, (dim,), where)
        # a fresh real part, as eager code returns (see ``_fft``)
        return Cplx(input.clone(), _fft.hilbert_transform(input, dim))
    return _from_complex(_fft.analytic_signal(input, dim))
