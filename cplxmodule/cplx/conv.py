"""Complex convolutions and transposed convolutions, every padding mode."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._product import check_strategy, conv_transposend, convnd
from ._shared import (
    check_conv_input,
    check_operands,
    check_padding,
    check_positive_int,
    check_shape,
    check_transposed_padding_mode,
    doc_kwargs,
)
from typing import Any, Callable, Optional, Union
from ._typing import CplxLike
from torch.nn.common_types import _size_1_t, _size_2_t, _size_3_t
from .tensor import Cplx

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]


def _check_conv_operands(n, input, weight, bias, groups, strategy, where):
    """The checks shared by the convolutions; returns ``(input, weight, bias)``."""
    (input,), weight, bias = check_operands({"input": input}, weight, bias, where)
    if weight.dim() != n + 2:
        raise ValueError(
            f"{where}: `weight` must have {n + 2} dimensions, got shape {tuple(weight.shape)}"
        )
    check_positive_int(groups, "groups", where)
    check_strategy(strategy, where)
    return input, weight, bias


def _convnd(n, op, input, weight, bias, stride, padding, dilation, groups, padding_mode,
            strategy):
    where = f"conv{n}d"
    input, weight, bias = _check_conv_operands(n, input, weight, bias, groups, strategy, where)
    check_shape(bias, weight.shape[:1], "bias", where)
    check_padding(padding, padding_mode, stride, n, where)
    check_conv_input(input, weight.shape[1] * groups, n, where)
    return convnd(n, op, input, weight, bias, stride, padding, dilation, groups, padding_mode,
                  strategy)


def _conv_transposend(n, op, input, weight, bias, stride, padding, output_padding, groups,
                      dilation, padding_mode, strategy):
    where = f"conv_transpose{n}d"
    check_transposed_padding_mode(padding_mode, where)
    input, weight, bias = _check_conv_operands(n, input, weight, bias, groups, strategy, where)
    check_shape(bias, (weight.shape[1] * groups,), "bias", where)
    check_conv_input(input, weight.shape[0], n, where)
    return conv_transposend(n, op, input, weight, bias, stride, padding, output_padding,
                            groups, dilation, strategy)


_CONV_DOC = r"""Complex {n}d convolution, as :func:`torch.nn.functional.conv{n}d`.

    Parameters
    ----------
    input : Cplx or torch.Tensor
        Input of shape ``(N, C_in, {dims})`` or unbatched ``(C_in, {dims})``;
        a real tensor, with a real ``weight`` and ``bias``, gives one real
        product.
    weight : Cplx or torch.Tensor
        Filters of shape ``(C_out, C_in / groups, {kdims})``.
    bias : Cplx or torch.Tensor, optional
        Bias of shape ``(C_out,)``, added once after the product.
    stride, padding, dilation, groups
        As for :func:`torch.nn.functional.conv{n}d`; ``padding`` may also
        be ``"same"`` or ``"valid"``.
    padding_mode : {{"zeros", "reflect", "replicate", "circular"}}, default "zeros"
        How the input is padded, as in :class:`torch.nn.Conv{n}d`.
    strategy : {{None, "naive", "cat", "3m", "native"}}, optional
        How the complex product is computed (see :mod:`cplxmodule.cplx.linalg`).
        ``None`` picks the measured default.

    Returns
    -------
    Cplx or torch.Tensor
        Real for real operands.

    Raises
    ------
    TypeError
        If ``input`` is neither a :class:`Cplx` nor a real tensor with real
        ``weight`` and ``bias``, or ``weight``/``bias`` is neither a
        :class:`Cplx` nor a real tensor.
    ValueError
        If ``padding``, ``padding_mode`` or ``strategy`` is unknown,
        ``padding="same"`` comes with a stride, or ``input`` has the wrong
        number of dimensions.

    Notes
    -----
    The input is padded once, before the product, for every
    ``padding_mode`` other than ``"zeros"``. The default strategy is
    chosen as for :func:`linear`: ``"3m"`` for float32 parts on the CPU
    (torch's own complex convolution computes three real convolutions as
    well, but in a form that loses digits on nearly-real operands), see the
    products guide (``docs/guides/products.rst``) for its accuracy and
    speed.

    Examples
    --------
    >>> x, w = cplx.randn(2, 4, {example}), cplx.randn(6, 4, {kexample})
    >>> conv{n}d(x, w, padding="same", padding_mode="circular").shape
    torch.Size([2, 6, {example}])
    """

_CONV_T_DOC = r"""Complex {n}d transposed convolution, as :func:`torch.nn.functional.conv_transpose{n}d`.

    Parameters
    ----------
    input : Cplx or torch.Tensor
        Input of shape ``(N, C_in, {dims})`` or unbatched ``(C_in, {dims})``;
        a real tensor, with a real ``weight`` and ``bias``, gives one real
        product.
    weight : Cplx or torch.Tensor
        Filters of shape ``(C_in, C_out / groups, {kdims})``.
    bias : Cplx or torch.Tensor, optional
        Bias of shape ``(C_out,)``, added once after the product.
    stride, padding, output_padding, groups, dilation
        As for :func:`torch.nn.functional.conv_transpose{n}d` (same order).
    padding_mode : {{"zeros"}}, default "zeros"
        The only mode of a transposed convolution, as in torch (accepted
        for the published signature).
    strategy : {{None, "naive", "cat", "3m", "native"}}, optional
        How the complex product is computed (see :mod:`cplxmodule.cplx.linalg`).

    Returns
    -------
    Cplx or torch.Tensor
        Real for real operands.

    Raises
    ------
    TypeError
        If ``input`` is neither a :class:`Cplx` nor a real tensor with real
        ``weight`` and ``bias``, or ``weight``/``bias`` is neither a
        :class:`Cplx` nor a real tensor.
    ValueError
        If ``strategy`` is unknown, ``padding_mode`` is not "zeros" or
        ``input`` has the wrong number of dimensions.

    Notes
    -----
    The default strategy is that of :func:`linear`.

    Examples
    --------
    >>> x, w = cplx.randn(2, 4, {example}), cplx.randn(4, 3, {kexample})
    >>> conv_transpose{n}d(x, w, stride=2).shape
    torch.Size([2, 3, {texample}])
    """


def conv1d(
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_1_t = 1,
    padding: _size_1_t = 0,
    dilation: _size_1_t = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    return _convnd(1, F.conv1d, input, weight, bias, stride, padding, dilation,
                   groups, padding_mode, strategy)


def conv2d(
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_2_t = 1,
    padding: _size_2_t = 0,
    dilation: _size_2_t = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    return _convnd(2, F.conv2d, input, weight, bias, stride, padding, dilation,
                   groups, padding_mode, strategy)


def conv3d(
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_3_t = 1,
    padding: _size_3_t = 0,
    dilation: _size_3_t = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    return _convnd(3, F.conv3d, input, weight, bias, stride, padding, dilation,
                   groups, padding_mode, strategy)


def conv_transpose1d(
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_1_t = 1,
    padding: _size_1_t = 0,
    output_padding: _size_1_t = 0,
    groups: int = 1,
    dilation: _size_1_t = 1,
    padding_mode: str = "zeros",
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    return _conv_transposend(1, F.conv_transpose1d, input, weight, bias, stride,
                             padding, output_padding, groups, dilation, padding_mode,
                             strategy)


def conv_transpose2d(
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_2_t = 1,
    padding: _size_2_t = 0,
    output_padding: _size_2_t = 0,
    groups: int = 1,
    dilation: _size_2_t = 1,
    padding_mode: str = "zeros",
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    return _conv_transposend(2, F.conv_transpose2d, input, weight, bias, stride,
                             padding, output_padding, groups, dilation, padding_mode,
                             strategy)


def conv_transpose3d(
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    stride: _size_3_t = 1,
    padding: _size_3_t = 0,
    output_padding: _size_3_t = 0,
    groups: int = 1,
    dilation: _size_3_t = 1,
    padding_mode: str = "zeros",
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    return _conv_transposend(3, F.conv_transpose3d, input, weight, bias, stride,
                             padding, output_padding, groups, dilation, padding_mode,
                             strategy)


_f: Callable[..., Any]  # the docstring loops go over functions of different signatures
for _n, _f in ((1, conv1d), (2, conv2d), (3, conv3d)):
    _f.__doc__ = _CONV_DOC.format(**doc_kwargs(_n))
for _n, _f in ((1, conv_transpose1d), (2, conv_transpose2d), (3, conv_transpose3d)):
    _f.__doc__ = _CONV_T_DOC.format(**doc_kwargs(_n))
