"""The published package's spellings of the complex products, thin over ours.

The published ``cplxmodule.cplx`` named each way of computing a complex
product as a function of its own (``linear_3m``, ``convnd_quick``, ...) and
took the real op as an argument (``convnd(F.conv2d, ...)``). Here each is the
corresponding function of :mod:`cplxmodule.cplx` with its ``strategy``
fixed: ``"naive"`` (four real products), ``"cat"`` (one real product on
concatenated blocks, the published "quick") or ``"3m"`` (Gauss's three
products). Results agree with the default strategy to rounding.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._shared import checked_cplx, ntuple
from .conv import _conv_transposend, _convnd
from .linalg import bilinear, linear
from .pooling import _max_poolnd
from .tensor import Cplx
from typing import Any, Callable, Optional, Union
from ._typing import CplxLike
from torch.nn.common_types import _size_any_t

__all__ = [
    "linear_naive",
    "linear_cat",
    "linear_3m",
    "bilinear_naive",
    "bilinear_cat",
    "convnd",
    "convnd_naive",
    "convnd_3m",
    "convnd_quick",
    "conv_transposend",
    "conv_transposend_naive",
    "conv_transposend_3m",
    "max_poolnd",
    "symmetric_circular_padding",
]

_POOLS = {F.max_pool1d: 1, F.max_pool2d: 2, F.max_pool3d: 3}

_HOW = {
    "naive": "four real products",
    "cat": "one real product on concatenated blocks",
    "3m": "three real products, Gauss's trick",
}

_PRODUCT_DOC = """:func:`{base}` with ``strategy="{strategy}"`` ({how}).

    Parameters
    ----------
    {inputs}
    weight : Cplx
        Weight of shape ``{weight}``.
    bias : Cplx, optional
        Bias of shape ``(out_features,)``.{extra}

    Returns
    -------
    Cplx
        Shape ``(*, out_features)``.

    Raises
    ------
    TypeError, ValueError
        As :func:`{base}`.

    Examples
    --------
    >>> {example}
    >>> {name}({arguments}).shape
    torch.Size([8, 5])
    """

_LINEAR = dict(
    base="linear",
    inputs="input : Cplx\n        Input of shape ``(*, in_features)``.",
    weight="(out_features, in_features)",
    extra="",
    example="x, w = cplx.randn(8, 3), cplx.randn(5, 3)",
    arguments="x, w",
)
_BILINEAR = dict(
    base="bilinear",
    inputs="input1, input2 : Cplx\n"
    "        Inputs of shapes ``(*, in1_features)`` and ``(*, in2_features)``.",
    weight="(out_features, in1_features, in2_features)",
    extra="\n    conjugate : bool, default True\n        Conjugate ``input1``.",
    example="x1, x2, w = cplx.randn(8, 3), cplx.randn(8, 2), cplx.randn(5, 3, 2)",
    arguments="x1, x2, w",
)


def linear_naive(input: CplxLike, weight: CplxLike, bias: Optional[CplxLike] = None) -> Union[Cplx, torch.Tensor]:
    return linear(input, weight, bias, strategy="naive")


def linear_cat(input: CplxLike, weight: CplxLike, bias: Optional[CplxLike] = None) -> Union[Cplx, torch.Tensor]:
    return linear(input, weight, bias, strategy="cat")


def linear_3m(input: CplxLike, weight: CplxLike, bias: Optional[CplxLike] = None) -> Union[Cplx, torch.Tensor]:
    return linear(input, weight, bias, strategy="3m")


def bilinear_naive(
    input1: CplxLike,
    input2: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    conjugate: bool = True,
) -> Union[Cplx, torch.Tensor]:
    return bilinear(input1, input2, weight, bias, conjugate, strategy="naive")


def bilinear_cat(
    input1: CplxLike,
    input2: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    conjugate: bool = True,
) -> Union[Cplx, torch.Tensor]:
    return bilinear(input1, input2, weight, bias, conjugate, strategy="cat")


# the docstring loops below reuse these names over functions of different signatures
_function: Callable[..., Any]
_kind: dict[str, Any]
for _function, _strategy, _kind in (
    (linear_naive, "naive", _LINEAR),
    (linear_cat, "cat", _LINEAR),
    (linear_3m, "3m", _LINEAR),
    (bilinear_naive, "naive", _BILINEAR),
    (bilinear_cat, "cat", _BILINEAR),
):
    _function.__doc__ = _PRODUCT_DOC.format(
        strategy=_strategy, how=_HOW[_strategy], name=_function.__name__, **_kind
    )


def _spatial_dims(weight):
    """The number of spatial dimensions of a convolution ``weight``."""
    weight = checked_cplx(weight, "weight")
    if weight.dim() not in (3, 4, 5):
        raise ValueError(
            "`weight` must have 3, 4 or 5 dimensions (out, in, *kernel), "
            f"got shape {tuple(weight.shape)}"
        )
    return weight.dim() - 2


def convnd(
    conv: Callable[..., Any],
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_any_t = 1,
    padding: _size_any_t = 0,
    dilation: _size_any_t = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
) -> Cplx:
    r"""A complex convolution computed with the real op ``conv``.

    :func:`conv1d`, :func:`conv2d` or :func:`conv3d` (by the dimensions of
    ``weight``) with ``conv`` as the real convolution, typically
    :func:`torch.nn.functional.conv2d`.

    Parameters
    ----------
    conv : callable
        The real convolution, called as ``conv(x, w, b, stride, padding,
        dilation, groups)`` with real tensors.
    input : Cplx
        Input of shape ``(N, C_in, *spatial)`` or ``(C_in, *spatial)``.
    weight : Cplx
        Filters of shape ``(C_out, C_in / groups, *kernel)``.
    bias : Cplx, optional
        Bias of shape ``(C_out,)``.
    stride, padding, dilation, groups
        As for :func:`torch.nn.functional.conv2d`.
    padding_mode : {"zeros", "reflect", "replicate", "circular"}
        As in :class:`torch.nn.Conv2d` (the published function knew
        "zeros" and "circular" only).

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError, ValueError
        As :func:`conv2d`, and if ``weight`` has not 3 to 5 dimensions.

    Examples
    --------
    >>> import torch.nn.functional as F
    >>> x, w = cplx.randn(2, 4, 9), cplx.randn(6, 4, 3)
    >>> convnd(F.conv1d, x, w, padding=1, padding_mode="reflect").shape
    torch.Size([2, 6, 9])
    """
    return _convnd(_spatial_dims(weight), conv, input, weight, bias, stride,
                   padding, dilation, groups, padding_mode, None)


_STRATEGY_CONV_DOC = """:func:`{base}` without bias and with ``strategy="{strategy}"``.

    The complex product takes {how}.

    Parameters
    ----------
    {op} : callable
        The real op, e.g. :func:`torch.nn.functional.{torch_op}`.
    input : Cplx
        Input of shape ``(N, C_in, *spatial)`` or ``(C_in, *spatial)``.
    weight : Cplx
        Filters of shape ``{weight}``.
    {arguments}
        As for :func:`torch.nn.functional.{torch_op}`.

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError, ValueError
        As :func:`{base}`.

    Examples
    --------
    >>> import torch.nn.functional as F
    >>> x, w = cplx.randn(2, 4, {length}), cplx.randn({weight_example})
    >>> {name}(F.{torch_op}, x, w).shape
    torch.Size([2, 6, 7])
    """

_CONV = dict(
    base="convnd",
    op="conv",
    torch_op="conv1d",
    weight="(C_out, C_in / groups, *kernel)",
    length=9,
    weight_example="6, 4, 3",
)
_CONV_TRANSPOSE = dict(
    base="conv_transposend",
    op="conv_t",
    torch_op="conv_transpose1d",
    weight="(C_in, C_out / groups, *kernel)",
    arguments="stride, padding, output_padding, groups, dilation",
    length=5,
    weight_example="4, 6, 3",
)


def convnd_naive(
    conv: Callable[..., Any],
    input: CplxLike,
    weight: CplxLike,
    stride: _size_any_t = 1,
    padding: _size_any_t = 0,
    dilation: _size_any_t = 1,
    groups: int = 1,
) -> Cplx:
    return _convnd(_spatial_dims(weight), conv, input, weight, None, stride,
                   padding, dilation, groups, "zeros", "naive")


def convnd_3m(
    conv: Callable[..., Any],
    input: CplxLike,
    weight: CplxLike,
    stride: _size_any_t = 1,
    padding: _size_any_t = 0,
    dilation: _size_any_t = 1,
    groups: int = 1,
) -> Cplx:
    return _convnd(_spatial_dims(weight), conv, input, weight, None, stride,
                   padding, dilation, groups, "zeros", "3m")


def convnd_quick(
    conv: Callable[..., Any],
    input: CplxLike,
    weight: CplxLike,
    stride: _size_any_t = 1,
    padding: _size_any_t = 0,
    dilation: _size_any_t = 1,
) -> Cplx:
    return _convnd(_spatial_dims(weight), conv, input, weight, None, stride,
                   padding, dilation, 1, "zeros", "cat")


for _function, _strategy, _kind in (
    (convnd_naive, "naive", {**_CONV, "arguments": "stride, padding, dilation, groups"}),
    (convnd_3m, "3m", {**_CONV, "arguments": "stride, padding, dilation, groups"}),
    (convnd_quick, "cat", {**_CONV, "arguments": "stride, padding, dilation"}),
):
    _function.__doc__ = _STRATEGY_CONV_DOC.format(
        strategy=_strategy, how=_HOW[_strategy], name=_function.__name__, **_kind
    )


def conv_transposend(
    conv: Callable[..., Any],
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_any_t = 1,
    padding: _size_any_t = 0,
    output_padding: _size_any_t = 1,
    groups: int = 1,
    dilation: _size_any_t = 1,
    padding_mode: str = "zeros",
) -> Cplx:
    r"""A complex transposed convolution computed with the real op ``conv``.

    :func:`conv_transpose1d`, ``2d`` or ``3d`` (by the dimensions of
    ``weight``) with ``conv`` as the real transposed convolution, typically
    :func:`torch.nn.functional.conv_transpose2d`. Note the published
    default ``output_padding=1``, kept here: with the default ``stride=1``
    pass ``output_padding=0``.

    Parameters
    ----------
    conv : callable
        The real transposed convolution, called as ``conv(x, w, b, stride,
        padding, output_padding, groups, dilation)``.
    input : Cplx
        Input of shape ``(N, C_in, *spatial)`` or ``(C_in, *spatial)``.
    weight : Cplx
        Filters of shape ``(C_in, C_out / groups, *kernel)``.
    bias : Cplx, optional
        Bias of shape ``(C_out,)``.
    stride, padding, output_padding, groups, dilation
        As for :func:`torch.nn.functional.conv_transpose2d`.
    padding_mode : {"zeros"}
        The only mode of a transposed convolution, as in torch.

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError, ValueError
        As :func:`conv_transpose2d`, and if ``padding_mode`` is not "zeros".

    Examples
    --------
    >>> import torch.nn.functional as F
    >>> x, w = cplx.randn(2, 4, 5), cplx.randn(4, 6, 3)
    >>> conv_transposend(F.conv_transpose1d, x, w, stride=2).shape
    torch.Size([2, 6, 12])
    """
    return _conv_transposend(_spatial_dims(weight), conv, input, weight, bias, stride,
                             padding, output_padding, groups, dilation, padding_mode, None)


def conv_transposend_naive(
    conv_t: Callable[..., Any],
    input: CplxLike,
    weight: CplxLike,
    stride: _size_any_t = 1,
    padding: _size_any_t = 0,
    output_padding: _size_any_t = 0,
    groups: int = 1,
    dilation: _size_any_t = 1,
) -> Cplx:
    return _conv_transposend(_spatial_dims(weight), conv_t, input, weight, None, stride,
                             padding, output_padding, groups, dilation, "zeros", "naive")


def conv_transposend_3m(
    conv_t: Callable[..., Any],
    input: CplxLike,
    weight: CplxLike,
    stride: _size_any_t = 1,
    padding: _size_any_t = 0,
    output_padding: _size_any_t = 0,
    groups: int = 1,
    dilation: _size_any_t = 1,
) -> Cplx:
    return _conv_transposend(_spatial_dims(weight), conv_t, input, weight, None, stride,
                             padding, output_padding, groups, dilation, "zeros", "3m")


for _function, _strategy in ((conv_transposend_naive, "naive"), (conv_transposend_3m, "3m")):
    _function.__doc__ = _STRATEGY_CONV_DOC.format(
        strategy=_strategy, how=_HOW[_strategy], name=_function.__name__, **_CONV_TRANSPOSE
    )


def max_poolnd(
    pool: Callable[..., Any],
    input: CplxLike,
    kernel_size: _size_any_t,
    stride: Optional[_size_any_t] = None,
    padding: _size_any_t = 0,
    dilation: _size_any_t = 1,
    ceil_mode: bool = False,
) -> Cplx:
    r"""Complex max pooling by modulus with the real op ``pool``.

    :func:`max_pool1d`, ``2d`` or ``3d``, chosen by ``pool``.

    Parameters
    ----------
    pool : callable
        :func:`torch.nn.functional.max_pool1d`, ``max_pool2d`` or ``max_pool3d``.
    input : Cplx
        Input of shape ``(N, C, *spatial)`` or ``(C, *spatial)``.
    kernel_size, stride, padding, dilation, ceil_mode
        As for :func:`torch.nn.functional.max_pool2d`.

    Returns
    -------
    Cplx

    Raises
    ------
    ValueError
        If ``pool`` is not one of torch's max-pooling functions.
    TypeError
        If ``input`` is not a :class:`Cplx`.

    Examples
    --------
    >>> import torch.nn.functional as F
    >>> max_poolnd(F.max_pool2d, cplx.randn(1, 3, 8, 8), 2).shape
    torch.Size([1, 3, 4, 4])
    """
    if pool not in _POOLS:
        raise ValueError(
            "max_poolnd: `pool` must be torch.nn.functional.max_pool1d, max_pool2d or "
            f"max_pool3d, got {pool!r}"
        )
    return _max_poolnd(_POOLS[pool], pool, input, kernel_size, stride, padding,
                       dilation, ceil_mode, False)


def symmetric_circular_padding(input: CplxLike, padding: Union[int, tuple[int, ...]]) -> Cplx:
    r"""Pad the spatial dimensions of ``input`` circularly, by ``padding`` on each side.

    What ``padding_mode="circular"`` does before a convolution with
    ``padding``: the dimensions after ``(N, C)`` get ``padding[i]`` values
    from their other end on both sides, as
    :func:`torch.nn.functional.pad` with ``mode="circular"``.

    Parameters
    ----------
    input : Cplx
        Input of shape ``(N, C, *spatial)``.
    padding : int or tuple of int
        Per spatial dimension, in order; an int applies to all of them.

    Returns
    -------
    Cplx
        Each spatial size grows by ``2 * padding[i]``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has no spatial dimension or ``padding`` does not match
        their number.

    Notes
    -----
    Circular padding adds ``p`` on each side, as torch's ``padding_mode``
    does (how this differs from the published package:
    :doc:`/guides/migrating`).

    Examples
    --------
    >>> z = Cplx(torch.arange(5.0).reshape(1, 1, 5))
    >>> symmetric_circular_padding(z, 2).real
    tensor([[[3., 4., 0., 1., 2., 3., 4., 0., 1.]]])
    """
    input = checked_cplx(input, where="symmetric_circular_padding")
    n = input.dim() - 2
    if n < 1:
        raise ValueError(
            "symmetric_circular_padding: `input` must have shape (N, C, *spatial), "
            f"got {tuple(input.shape)}"
        )
    sizes = ntuple(padding, n, "padding", "symmetric_circular_padding", minimum=0)
    pad = [p for p in reversed(sizes) for _ in range(2)]
    return input.apply(F.pad, pad, mode="circular")
