r"""Sequence-model math: positional phases, diagonal state-space kernels, unitary maps.

- :func:`sinusoid` and :func:`rotary`: the complex sinusoids
  :math:`e^{i p \omega_k}` of position :math:`p` and feature :math:`k`, as a
  table or as a rotation of an input (rotary position embedding);
- :func:`zoh`, :func:`ssm_kernel` and :func:`causal_fftconv`: a diagonal
  linear state-space model discretised with a zero-order hold, its
  convolution kernel in closed form, and the causal convolution by FFT that
  applies it (the S4D layer of Gu et al., 2022);
- :func:`matrix_exp`: the exponential of a complex square matrix, unitary
  for a skew-Hermitian one.

The state-space kernel and the FFT convolution compute in torch's native
complex dtype, as :mod:`~cplxmodule.cplx.spectral` does (a Fourier transform
has no cheaper form on split parts); the rest computes on the two real parts.
"""

from __future__ import annotations

import math

import torch

from ._dtypes import HALF_DTYPES, real_dtype
from ._shared import check_int, check_positive, checked_cplx, describe, is_int
from .conversions import from_complex, to_complex
from .elementwise import exp, phaseshift
from .tensor import Cplx
from typing import Optional, Union
from ._typing import CplxLike, Device

__all__ = ["sinusoid", "rotary", "zoh", "ssm_kernel", "causal_fftconv", "matrix_exp"]


def _angles(length, features, base, offset, dtype, device):
    r"""The angles :math:`(p + \text{offset}) \omega_k \bmod 2\pi`, ``(length, features)``.

    Computed in float64 and reduced modulo :math:`2\pi` before the cast, so
    that a float32 (or half) sine of a far position keeps its precision.
    """
    positions = torch.arange(offset, offset + length, dtype=torch.float64, device=device)
    exponents = torch.arange(features, dtype=torch.float64, device=device) / features
    frequencies = float(base) ** -exponents
    angles = torch.remainder(positions.unsqueeze(-1) * frequencies, 2 * math.pi)
    return angles.to(dtype)


def sinusoid(
    length: int,
    features: int,
    base: float = 10000.0,
    offset: int = 0,
    *,
    dtype: Optional[torch.dtype] = None,
    device: Device = None,
) -> Cplx:
    r"""The table of complex sinusoids :math:`e^{i p \omega_k}`.

    .. math::

        S_{pk} = e^{i (p + \text{offset}) \, \omega_k}, \qquad
        \omega_k = \text{base}^{-k / \text{features}},

    for :math:`p = 0, \dots, \text{length} - 1` and
    :math:`k = 0, \dots, \text{features} - 1`: feature 0 turns by one radian
    per position, the last by about :math:`1/\text{base}`. Each complex
    feature carries the cosine and the sine of the real sinusoidal encoding
    of Vaswani et al. (2017) at once.

    Parameters
    ----------
    length : int
        The number of positions.
    features : int
        The number of complex features.
    base : float, default 10000.0
        The ratio of the fastest to (about) the slowest frequency.
    offset : int, default 0
        The first position.
    dtype : torch.dtype, optional
        The real dtype of the parts (a complex dtype names its parts');
        the default dtype by default.
    device : torch.device, optional

    Returns
    -------
    Cplx
        Of shape ``(length, features)``.

    Raises
    ------
    ValueError
        If ``length`` or ``offset`` is negative, ``features`` is not positive
        or ``base`` is not a positive number.

    Examples
    --------
    >>> table = sinusoid(4, 2)
    >>> table.shape
    torch.Size([4, 2])
    >>> torch.allclose(abs(table), torch.ones(4, 2))
    True
    """
    check_int(length, "length", "sinusoid", 0)
    check_int(features, "features", "sinusoid", 1)
    check_int(offset, "offset", "sinusoid", 0)
    check_positive(base, "base", "sinusoid")
    dtype = torch.get_default_dtype() if dtype is None else real_dtype(dtype)
    angles = _angles(length, features, base, offset, dtype, device)
    return Cplx(torch.cos(angles), torch.sin(angles))


def rotary(input: CplxLike, dim: int = 0, base: float = 10000.0, offset: int = 0) -> Cplx:
    r"""Rotate each feature of each position by its positional phase (rotary embedding).

    .. math::

        y_{\dots p \dots k} = x_{\dots p \dots k} \,
        e^{i (p + \text{offset}) \theta_k}, \qquad
        \theta_k = \text{base}^{-k / d},

    with :math:`p` the index along ``dim``, :math:`k` the index along the
    last dimension and :math:`d` its size: :func:`phaseshift` by the angles
    of :func:`sinusoid`. This is the rotary position embedding of Su et al.
    (2021) written in complex form, where each complex feature is one of its
    rotated pairs. The modulus is kept, and a query at position :math:`m`
    and a key at :math:`n` have the score
    :math:`\Re \sum_k y^q_{mk} \overline{y^k_{nk}} = \Re \sum_k x^q_k
    \overline{x^k_k} e^{i (m - n) \theta_k}`, which depends on the
    positions only through :math:`m - n`.

    Parameters
    ----------
    input : Cplx
        Features along the last dimension, positions along ``dim``.
    dim : int, default 0
        The dimension of positions; not the last one.
    base : float, default 10000.0
        As for :func:`sinusoid`.
    offset : int, default 0
        The position of the first element along ``dim`` (for a sequence
        decoded a step at a time).

    Returns
    -------
    Cplx
        Of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has fewer than two dimensions, ``dim`` is the last one
        or out of range, ``offset`` is negative or ``base`` not positive.

    Examples
    --------
    >>> q = cplx.randn(5, 8)
    >>> torch.allclose(abs(rotary(q)), abs(q))
    True
    """
    input = checked_cplx(input, where="rotary")
    check_positive(base, "base", "rotary")
    check_int(offset, "offset", "rotary", 0)
    ndim = input.dim()
    if ndim < 2:
        raise ValueError(
            f"rotary: `input` must have positions and features (2 or more dimensions),"
            f" got {describe(input.real)}"
        )
    valid = is_int(dim) and -ndim <= dim < ndim - 1
    if not valid or dim == -1:
        raise ValueError(
            f"rotary: `dim` must be a dimension of `input` other than the last"
            f" (from {-ndim} to {ndim - 2}, not -1), got {dim!r}"
        )
    dim %= ndim
    angles = _angles(input.shape[dim], input.shape[-1], base, offset, input.dtype, input.device)
    angles = angles.view(angles.shape[0], *([1] * (ndim - dim - 2)), angles.shape[1])
    return phaseshift(input, angles)


def zoh(a: CplxLike, b: CplxLike, step: Union[torch.Tensor, float]) -> tuple[Cplx, Cplx]:
    r"""The zero-order-hold discretisation of the diagonal system :math:`x' = a x + b u`.

    .. math::

        \bar a = e^{\Delta a}, \qquad \bar b = \frac{\bar a - 1}{a} \, b,

    so that :math:`x_k = \bar a x_{k-1} + \bar b u_k` is exact for an input
    held constant over each step :math:`\Delta`.

    Parameters
    ----------
    a, b : Cplx
        The diagonal of the state matrix and the input vector, of
        broadcastable shapes ``(..., N)``; no element of ``a`` may be zero.
    step : torch.Tensor or float
        The real step :math:`\Delta`, of a shape that broadcasts against
        ``a.shape[:-1]`` (one step per system).

    Returns
    -------
    tuple of Cplx
        :math:`(\bar a, \bar b)`.

    Raises
    ------
    TypeError
        If ``a`` or ``b`` is not a :class:`Cplx`.

    Examples
    --------
    >>> a = Cplx(torch.tensor([-0.5]), torch.tensor([3.0]))
    >>> abar, bbar = zoh(a, Cplx.ones(1), torch.tensor(0.1))
    >>> round(float(abs(abar)), 4)
    0.9512
    """
    a = checked_cplx(a, "a", where="zoh")
    b = checked_cplx(b, "b", where="zoh")
    step = torch.as_tensor(step, dtype=a.dtype, device=a.device).unsqueeze(-1)
    abar = exp(a * step)
    return abar, (abar - 1) / a * b


def ssm_kernel(
    a: CplxLike,
    b: CplxLike,
    c: CplxLike,
    step: Union[torch.Tensor, float],
    length: int,
    d: Optional[CplxLike] = None,
) -> Cplx:
    r"""The convolution kernel of a diagonal state-space model discretised by :func:`zoh`.

    The model :math:`x_l = \bar a \odot x_{l-1} + \bar b \, u_l`,
    :math:`y_l = c^\top x_l + d \, u_l` (all complex, :math:`x_{-1} = 0`)
    maps an input :math:`u` to :math:`y_l = \sum_{j \le l} K_j u_{l-j}`, its
    causal convolution with the kernel

    .. math::

        K_j = \sum_n c_n \bar b_n \bar a_n^{\,j} + d \, [j = 0],
        \qquad j = 0, \dots, \text{length} - 1,

    a Vandermonde product (Gu et al., 2022). It is computed as one complex
    matrix product: with :math:`j = qT + r` and :math:`T \approx
    \sqrt{\text{length}}`, :math:`K_{qT + r} = \sum_n (c_n \bar b_n \bar
    a_n^{\,r}) \, \bar a_n^{\,qT}`, so that only :math:`O(N
    \sqrt{\text{length}})` complex exponentials are taken, instead of the
    :math:`N \cdot \text{length}` of the direct Vandermonde matrix.

    Parameters
    ----------
    a, b, c : Cplx
        The diagonal state matrix, the input and the output vectors, of
        broadcastable shapes ``(..., N)``: one system per index of ``...``
        (channels), ``N`` states each. No element of ``a`` may be zero.
    step : torch.Tensor or float
        The real step :math:`\Delta`, broadcasting against ``(...)``.
    length : int
        The number of taps.
    d : Cplx, optional
        The feedthrough :math:`d`, of shape ``(...)``, added to tap 0.

    Returns
    -------
    Cplx
        Of shape ``(..., length)``.

    Raises
    ------
    TypeError
        If ``a``, ``b``, ``c`` or ``d`` is not a :class:`Cplx`.
    ValueError
        If ``length`` is not a positive int.

    Examples
    --------
    >>> a = Cplx(torch.tensor([[-0.5, -0.5]]), torch.tensor([[0.0, 3.1]]))
    >>> k = ssm_kernel(a, Cplx.ones(1, 2), Cplx.ones(1, 2), torch.tensor([0.1]), 16)
    >>> k.shape
    torch.Size([1, 16])
    """
    a = checked_cplx(a, "a", where="ssm_kernel")
    b = checked_cplx(b, "b", where="ssm_kernel")
    c = checked_cplx(c, "c", where="ssm_kernel")
    if d is not None:
        d = checked_cplx(d, "d", where="ssm_kernel")
    check_int(length, "length", "ssm_kernel", 1)
    abar, bbar = zoh(a, b, step)
    step = torch.as_tensor(step, dtype=a.dtype, device=a.device).unsqueeze(-1)
    log_abar = to_complex(a) * step
    weights = to_complex(c * bbar)
    # K_{qT + r} = sum_n (w_n abar_n^r) abar_n^(qT): a (T, N) @ (N, Q) product
    # per system; each power is one exp of its exact exponent, not a
    # repeated product, so rounding does not grow with the length
    chunk = math.isqrt(length - 1) + 1
    chunks = -(-length // chunk)
    r = torch.arange(chunk, dtype=a.dtype, device=a.device)
    q = torch.arange(chunks, dtype=a.dtype, device=a.device) * chunk
    left = weights.unsqueeze(-2) * torch.exp(log_abar.unsqueeze(-2) * r.unsqueeze(-1))
    right = torch.exp(log_abar.unsqueeze(-1) * q)
    kernel = (left @ right).transpose(-1, -2)
    kernel = kernel.reshape(*kernel.shape[:-2], chunk * chunks)[..., :length]
    if d is not None:
        d = to_complex(d).unsqueeze(-1)
        kernel = torch.cat([kernel[..., :1] + d, kernel[..., 1:]], dim=-1)
    return from_complex(kernel)


def _fast_size(n):
    """The least ``2^i 3^j 5^k >= n``: a length the FFT handles at full speed."""
    best = 1 << (n - 1).bit_length()
    power5 = 1
    while power5 < best:
        power35 = power5
        while power35 < best:
            size = power35
            while size < n:
                size *= 2
            best = min(best, size)
            power35 *= 3
        power5 *= 5
    return best


def causal_fftconv(input: CplxLike, kernel: CplxLike) -> Cplx:
    r"""The causal convolution of ``input`` with ``kernel`` along the last dimension, by FFT.

    .. math::

        y_l = \sum_{j=0}^{\min(l, K - 1)} k_j \, u_{l - j},
        \qquad l = 0, \dots, L - 1,

    a true convolution (the kernel is not flipped, unlike
    :func:`~cplxmodule.cplx.conv1d`, which correlates), with the input zero
    before its start and the output cut to the input's length. Both are
    zero-padded to a fast FFT size of at least :math:`L + \min(K, L) - 1`, so
    nothing wraps around: :math:`O(L \log L)` per sequence instead of the
    direct form's :math:`O(L K)`.

    Parameters
    ----------
    input : Cplx
        The signal :math:`u`, of shape ``(..., L)``.
    kernel : Cplx
        The kernel :math:`k`, of shape ``(..., K)``, its leading dimensions
        broadcasting against the input's.

    Returns
    -------
    Cplx
        Of shape ``(..., L)`` (the broadcast leading shape).

    Raises
    ------
    TypeError
        If ``input`` or ``kernel`` is not a :class:`Cplx`.
    ValueError
        If either has no dimension.

    Examples
    --------
    >>> u = Cplx(torch.tensor([1.0, 2.0, 3.0]))
    >>> causal_fftconv(u, Cplx(torch.tensor([1.0, 1.0]))).real
    tensor([1., 3., 5.])
    """
    input = checked_cplx(input, where="causal_fftconv")
    kernel = checked_cplx(kernel, "kernel", where="causal_fftconv")
    for name, value in (("input", input), ("kernel", kernel)):
        if value.dim() < 1:
            raise ValueError(
                f"causal_fftconv: `{name}` must have at least one dimension,"
                f" got {describe(value.real)}"
            )
    length = input.shape[-1]
    taps = min(kernel.shape[-1], length)
    if taps == 0 or 0 in torch.broadcast_shapes(input.shape[:-1], kernel.shape[:-1]):
        # torch's FFT fails on an empty batch, and a kernel of no taps gives
        # zeros (NaN where the input is not finite, as a convolution's)
        return input * kernel.sum(-1, keepdim=True)
    n = _fast_size(length + taps - 1)
    spectrum = torch.fft.fft(to_complex(input), n=n) * torch.fft.fft(
        to_complex(kernel[..., :taps]), n=n
    )
    return from_complex(torch.fft.ifft(spectrum, n=n)[..., :length])


def matrix_exp(input: CplxLike) -> Cplx:
    r"""The matrix exponential :math:`e^A` of a complex square matrix, on its real parts.

    Computed as the exponential of the real :math:`2n \times 2n` matrix
    :math:`\begin{pmatrix} \Re A & -\Im A \\ \Im A & \Re A \end{pmatrix}`,
    whose exponential is the same block form of :math:`e^A` (the embedding
    is an algebra homomorphism), by :func:`torch.linalg.matrix_exp`. For a
    skew-Hermitian :math:`A` (:math:`A^H = -A`) the real matrix is
    skew-symmetric and :math:`e^A` is unitary to rounding: the
    parametrisation of unitary matrices of Lezcano-Casado and
    Martínez-Rubio (2019).

    Parameters
    ----------
    input : Cplx
        Of shape ``(..., n, n)``.

    Returns
    -------
    Cplx
        Of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` is not a (batch of) square matrices.

    Examples
    --------
    >>> theta = torch.tensor([[0.0, -1.0], [1.0, 0.0]])
    >>> e = matrix_exp(Cplx(theta))  # a rotation by one radian
    >>> torch.allclose(e.real, torch.tensor([[0.5403, -0.8415], [0.8415, 0.5403]]), atol=1e-4)
    True
    """
    input = checked_cplx(input, where="matrix_exp")
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise ValueError(
            f"matrix_exp: `input` must be a square matrix or a batch of them,"
            f" got {describe(input.real)}"
        )
    n = input.shape[-1]
    re, im = input.real, input.imag
    block = torch.cat([torch.cat([re, -im], -1), torch.cat([im, re], -1)], -2)
    if block.dtype in HALF_DTYPES or block.dtype == torch.float32:
        # torch's matrix_exp in half precision returns NaN for some matrices
        # of norm ~3 (on the CPU), and in float32 its real series loses
        # digits near the norms where it changes degree (exp of the rotation
        # generator of angle 0.575: |det| - 1 = 3.4e-5, where its complex64
        # one errs by 5e-8): in float64, rounded after
        result = torch.linalg.matrix_exp(block.double()).to(block.dtype)
    else:
        result = torch.linalg.matrix_exp(block)
    return Cplx(result[..., :n, :n], result[..., n:, :n])
