"""Complex pooling: max and adaptive max by modulus, average and adaptive average.

Max pooling picks whole elements (the one of largest modulus in each
window), so it keeps their phase; pooling the two parts separately would
pair the real part of one element with the imaginary part of another.
Average pooling is linear, so the split application, part by part, is the
complex average exactly.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._dtypes import HALF_DTYPES
from ._shared import check_spatial_dims, checked_cplx, doc_kwargs
from ._views import _eager
from .tensor import Cplx
from typing import Any, Callable, Optional, Union
from ._typing import CplxLike
from torch.nn.common_types import _size_1_t, _size_2_t, _size_3_t

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
]


def _select_by_modulus(n, input, pool, return_indices):
    """Gather, per plane, the elements that ``pool`` picks on the modulus.

    ``pool(modulus)`` returns ``(values, indices)`` as torch's max pooling
    with ``return_indices=True`` does: indices into the flattened ``n``
    spatial dimensions of each plane (each sample and channel).
    """
    with torch.no_grad():
        # the modulus itself, not its square: squares of parts below ~1e-19
        # (float32) underflow into ties that pick the wrong element, as do
        # squares that overflow; in float32 for a half-precision input, whose
        # moduli would round (bfloat16) into ties
        parts = input.float() if input.dtype in HALF_DTYPES else input
        modulus = abs(parts)
        _, indices = pool(_channels_innermost(modulus, n))
    flat = indices.flatten(-n)
    output = input.apply(lambda part: part.flatten(-n).gather(-1, flat).view_as(indices))
    # the indices of a channels-innermost modulus are laid out as it is
    return (output, indices.contiguous()) if return_indices else output


# torch's max pooling with indices has a kernel vectorised over the channels
# for a channels-innermost (channels last) input, and takes one window at a
# time otherwise; with 8 channels or more, a copy of the modulus into that
# layout pays for itself 2-4 times over (benchmarks/test_bench_pool_loss.py)
_CHANNELS_INNERMOST = 8


def _channels_innermost(modulus, n):
    """``modulus``, batched ``(N, C, *spatial)``, with its channels innermost in memory where that pays."""
    if modulus.dim() != n + 2 or modulus.shape[1] < _CHANNELS_INNERMOST or not _eager():
        return modulus
    return modulus.movedim(1, -1).contiguous().movedim(-1, 1)


def _max_poolnd(n, op, input, kernel_size, stride, padding, dilation, ceil_mode,
                return_indices):
    where = f"max_pool{n}d"
    input = checked_cplx(input, where=where)
    check_spatial_dims(input, n, where)

    def pool(modulus):
        return op(modulus, kernel_size, stride, padding, dilation,
                  ceil_mode=ceil_mode, return_indices=True)

    return _select_by_modulus(n, input, pool, return_indices)


_POOL_DOC = r"""Complex {n}d max pooling by modulus.

    Each window yields its element of largest :math:`|z|`, which keeps the
    phase (pooling the parts separately would mix elements).

    Parameters
    ----------
    input : Cplx
        Input of shape ``(N, C, {dims})`` or ``(C, {dims})``.
    kernel_size, stride, padding, dilation, ceil_mode
        As for :func:`torch.nn.functional.max_pool{n}d`.
    return_indices : bool, default False
        Also return the flat indices of the chosen elements, as torch does.

    Returns
    -------
    Cplx, or (Cplx, torch.Tensor) if ``return_indices``

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.

    Notes
    -----
    The window's winner is chosen by :math:`|z|^2` (no square root, in
    float32 for a float16 or bfloat16 input), without tracking gradients;
    the gradient flows to the chosen elements' parts.

    Examples
    --------
    >>> z = cplx.randn(2, 3, {example})
    >>> out, indices = max_pool{n}d(z, 2, return_indices=True)
    >>> out.shape == indices.shape == torch.Size([2, 3, {pexample}])
    True
    """


def max_pool1d(
    input: CplxLike,
    kernel_size: _size_1_t,
    stride: Optional[_size_1_t] = None,
    padding: _size_1_t = 0,
    dilation: _size_1_t = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
    return _max_poolnd(1, F.max_pool1d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


def max_pool2d(
    input: CplxLike,
    kernel_size: _size_2_t,
    stride: Optional[_size_2_t] = None,
    padding: _size_2_t = 0,
    dilation: _size_2_t = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
    return _max_poolnd(2, F.max_pool2d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


def max_pool3d(
    input: CplxLike,
    kernel_size: _size_3_t,
    stride: Optional[_size_3_t] = None,
    padding: _size_3_t = 0,
    dilation: _size_3_t = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
    return _max_poolnd(3, F.max_pool3d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


_f: Callable[..., Any]  # the docstring loops go over functions of different signatures
for _n, _f in ((1, max_pool1d), (2, max_pool2d), (3, max_pool3d)):
    _f.__doc__ = _POOL_DOC.format(**doc_kwargs(_n))


def _adaptive_max_poolnd(n, op, input, output_size, return_indices):
    where = f"adaptive_max_pool{n}d"
    input = checked_cplx(input, where=where)
    check_spatial_dims(input, n, where)
    return _select_by_modulus(
        n, input, lambda modulus: op(modulus, output_size, return_indices=True),
        return_indices,
    )


_ADAPTIVE_MAX_DOC = r"""Complex {n}d adaptive max pooling by modulus.

    The windows are those of :func:`torch.nn.functional.adaptive_max_pool{n}d`
    for the requested ``output_size``; each yields its element of largest
    :math:`|z|`, whole.

    Parameters
    ----------
    input : Cplx
        Input of shape ``(N, C, {dims})`` or ``(C, {dims})``.
    output_size : int or tuple of int
        The size of the output's spatial dimensions (``None`` keeps one).
    return_indices : bool, default False
        Also return the indices of the chosen elements, flat within each
        plane, as torch does.

    Returns
    -------
    Cplx, or (Cplx, torch.Tensor) if ``return_indices``

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has the wrong number of dimensions.

    Notes
    -----
    The winner is chosen by :math:`|z|^2` on the two real parts, without
    tracking gradients; the gradient flows to the chosen elements' parts.

    Examples
    --------
    >>> out, indices = cplx.adaptive_max_pool{n}d(cplx.randn(2, 3, {example}), 3,
    ...                                         return_indices=True)
    >>> out.shape == indices.shape == torch.Size([2, 3, {three}])
    True
    """


def adaptive_max_pool1d(
    input: CplxLike, output_size: _size_1_t, return_indices: bool = False,
) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
    return _adaptive_max_poolnd(1, F.adaptive_max_pool1d, input, output_size, return_indices)


def adaptive_max_pool2d(
    input: CplxLike, output_size: _size_2_t, return_indices: bool = False,
) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
    return _adaptive_max_poolnd(2, F.adaptive_max_pool2d, input, output_size, return_indices)


def adaptive_max_pool3d(
    input: CplxLike, output_size: _size_3_t, return_indices: bool = False,
) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
    return _adaptive_max_poolnd(3, F.adaptive_max_pool3d, input, output_size, return_indices)


def _split_pool(n, name, input, op, *args, **kwargs):
    where = f"{name}{n}d"
    input = checked_cplx(input, where=where)
    check_spatial_dims(input, n, where)
    return Cplx(op(input.real, *args, **kwargs), op(input.imag, *args, **kwargs))


_AVG_DOC = r"""Complex {n}d average pooling: the mean of each window, part by part.

    The mean is linear, so averaging the real and the imaginary parts
    separately is the complex mean. The arguments are those of
    :func:`torch.nn.functional.avg_pool{n}d`.

    Parameters
    ----------
    input : Cplx
        Input of shape ``(N, C, {dims})`` or ``(C, {dims})``.
    kernel_size, stride, padding, ceil_mode, count_include_pad{divisor}
        As for :func:`torch.nn.functional.avg_pool{n}d`; ``stride`` defaults
        to ``kernel_size``.

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has the wrong number of dimensions.

    Examples
    --------
    >>> z = cplx.randn(2, 3, {example})
    >>> out = cplx.avg_pool{n}d(z, 2)
    >>> out.shape
    torch.Size([2, 3, {pexample}])
    >>> bool(torch.isclose(out.real[0, 0, {first}], z.real[0, 0, {window}].mean()))
    True
    """


def avg_pool1d(
    input: CplxLike,
    kernel_size: _size_1_t,
    stride: Optional[_size_1_t] = None,
    padding: _size_1_t = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Cplx:
    return _split_pool(1, "avg_pool", input, F.avg_pool1d, kernel_size, stride,
                       padding, ceil_mode, count_include_pad)


def avg_pool2d(
    input: CplxLike,
    kernel_size: _size_2_t,
    stride: Optional[_size_2_t] = None,
    padding: _size_2_t = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Cplx:
    return _split_pool(2, "avg_pool", input, F.avg_pool2d, kernel_size, stride,
                       padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(
    input: CplxLike,
    kernel_size: _size_3_t,
    stride: Optional[_size_3_t] = None,
    padding: _size_3_t = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Cplx:
    return _split_pool(3, "avg_pool", input, F.avg_pool3d, kernel_size, stride,
                       padding, ceil_mode, count_include_pad, divisor_override)


_ADAPTIVE_AVG_DOC = r"""Complex {n}d adaptive average pooling, part by part.

    The windows are those of :func:`torch.nn.functional.adaptive_avg_pool{n}d`
    for the requested ``output_size``; the mean is linear, so averaging
    the parts separately is the complex mean.

    Parameters
    ----------
    input : Cplx
        Input of shape ``(N, C, {dims})`` or ``(C, {dims})``.
    output_size : int or tuple of int
        The size of the output's spatial dimensions (``None`` keeps one).

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has the wrong number of dimensions.

    Examples
    --------
    >>> cplx.adaptive_avg_pool{n}d(cplx.randn(2, 3, {example}), 3).shape
    torch.Size([2, 3, {three}])
    """


def adaptive_avg_pool1d(input: CplxLike, output_size: _size_1_t) -> Cplx:
    return _split_pool(1, "adaptive_avg_pool", input, F.adaptive_avg_pool1d, output_size)


def adaptive_avg_pool2d(input: CplxLike, output_size: _size_2_t) -> Cplx:
    return _split_pool(2, "adaptive_avg_pool", input, F.adaptive_avg_pool2d, output_size)


def adaptive_avg_pool3d(input: CplxLike, output_size: _size_3_t) -> Cplx:
    return _split_pool(3, "adaptive_avg_pool", input, F.adaptive_avg_pool3d, output_size)


for _n, _f, _g, _h in (
    (1, adaptive_max_pool1d, avg_pool1d, adaptive_avg_pool1d),
    (2, adaptive_max_pool2d, avg_pool2d, adaptive_avg_pool2d),
    (3, adaptive_max_pool3d, avg_pool3d, adaptive_avg_pool3d),
):
    _kwargs = doc_kwargs(_n)
    _kwargs["three"] = ", ".join(["3"] * _n)
    _f.__doc__ = _ADAPTIVE_MAX_DOC.format(**_kwargs)
    _h.__doc__ = _ADAPTIVE_AVG_DOC.format(**_kwargs)
    _g.__doc__ = _AVG_DOC.format(
        **_kwargs,
        divisor="" if _n == 1 else ", divisor_override",
        first=", ".join(["0"] * _n),
        window=", ".join([":2"] * _n),
    )
