"""Linear algebra on :class:`Cplx`: linear and bilinear maps, einsum, product strategies.

Every complex product here is a real bilinear operation ``op(x, w)``
(:func:`torch.nn.functional.linear`, ``conv*d``, ``conv_transpose*d``)
lifted to complex operands by one shared mechanism (``cplx._product``), which
offers several strategies, used by :func:`linear`, :func:`bilinear` and the
convolutions of :mod:`cplxmodule.cplx.conv`:

``"naive"``
    four real products, ``(xr wr - xi wi) + i (xr wi + xi wr)``, in two
    calls: the input's parts stacked along the batch against each part of
    the weight, so that each weight part is read once;
``"cat"``
    one real product on concatenated blocks: the input ``[xr, xi]`` along
    its feature (channel) dimension against the block weight
    ``[[wr, -wi], [wi, wr]]`` (per group, for grouped convolutions);
``"3m"``
    Gauss's trick, three real products, in the form whose sums do not cancel
    on the operands at hand: if the larger part of the input and of the weight
    (by norm) is the same, both real or both imaginary, the products
    ``p1 = op(xi, wr)``, ``p2 = op(xr, wi)``, ``p3 = op(xr - xi, wr + wi)``
    give ``re = p3 + p1 - p2`` and ``im = p1 + p2``; otherwise
    ``q1 = op(xr, wr)``, ``q2 = op(xi, wi)``, ``q3 = op(xr - xi, wi - wr)``
    give ``re = q1 - q2`` and ``im = q3 + q1 + q2``. A form chosen
    regardless of the operands loses up to ``-log10(ratio)`` digits when
    one part is ``ratio`` times the other (a model started from a real
    checkpoint); under :func:`torch.compile`, which cannot branch on
    values, the first form is taken;
``"native"``
    pack both operands into torch's native complex dtype, run one complex
    product and view the result's parts.

Every strategy adds the bias once. ``"cat"``, ``"3m"`` and ``"native"``
hand it to a product, where ``addmm`` and the convolution kernels add it for
free (for a linear map, ``"3m"`` adds it after its products, so that a real
input and weight give an exactly zero imaginary part); ``"naive"`` runs its
products without bias and adds each part afterwards, in place, broadcast
along the feature dimension.

``strategy=None`` picks the measured default, see the Notes of :func:`linear`
and ``benchmarks/test_bench_products.py``.
"""

from __future__ import annotations

import torch

from . import _product

# STRATEGIES, the names ``strategy=`` accepts besides ``None``, is read from here
from ._product import STRATEGIES, check_strategy  # noqa: F401
from ._shared import check_features, check_operand, check_operands, check_shape, describe
from .conversions import from_complex, to_complex
from .tensor import Cplx
from typing import Optional, Sequence, Union
from ._typing import CplxLike

__all__ = ["linear", "bilinear", "einsum"]


# linear maps
def linear(
    input: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    r"""Complex affine map :math:`y = x W^T + b`, as :func:`torch.nn.functional.linear`.

    Parameters
    ----------
    input : Cplx or torch.Tensor
        Input of shape ``(..., in_features)``. A real tensor, with a real
        ``weight`` and ``bias``, gives one real product (as
        :func:`torch.nn.functional.linear`).
    weight : Cplx or torch.Tensor
        Weight of shape ``(out_features, in_features)``; a real tensor
        applies the same real map to both parts.
    bias : Cplx or torch.Tensor, optional
        Bias of shape ``(out_features,)``, added once after the product.
    strategy : {None, "naive", "cat", "3m", "native"}, optional
        How the complex product is computed (see :mod:`cplxmodule.cplx.linalg`).
        ``None`` picks the measured default.

    Returns
    -------
    Cplx or torch.Tensor
        Output of shape ``(..., out_features)``, real for real operands.

    Raises
    ------
    TypeError
        If ``input`` is neither a :class:`Cplx` nor a real tensor with real
        ``weight`` and ``bias``, or ``weight``/``bias`` is neither a
        :class:`Cplx` nor a real tensor.
    ValueError
        If ``strategy`` is unknown.

    Notes
    -----
    ``strategy=None`` (shared with the convolutions) is never less accurate
    than torch's complex product by more than a factor of 4, on any operands
    (nearly real, nearly imaginary, or with parts that cancel): the error
    bounds of every strategy are tabulated in the products guide
    (``docs/guides/products.rst``) and tested in
    ``tests/cplx/test_product_accuracy.py``. For float32 and float64 parts it
    picks ``"native"`` below :math:`2^{22}` complex multiply-adds (rows of
    the input, the product of its sizes other than the feature dimension,
    times weight elements): packing the operands and viewing the output's
    parts are fewer torch calls than any other strategy makes, and the
    parts of its output view one complex tensor, which the next product
    takes back without a copy (see :func:`~cplxmodule.cplx.to_complex`).
    Above, it picks ``"3m"`` for float32 parts on the CPU (whose form
    follows the operands, within about twice the error of four real
    products), unless the weight has more than 16384 elements per row of
    the input, where the product is bound by reading the weight and it
    picks ``"naive"``, which reads each part once; float64 parts and other
    devices get ``"naive"`` there: against float64's complex GEMM the margin
    of 3M is too thin, and the choice of its form would wait for a device.
    Compiled and traced code (:func:`torch.compile`, :func:`torch.export.export`,
    :func:`torch.jit.trace` and so ONNX export) and other dtypes always get
    ``"naive"`` (inductor and ONNX have no complex tensors, dynamo cannot
    branch on values, and half precisions lose too much in 3M's sums).
    Products that :func:`torch.autocast` runs in float16 or bfloat16 get
    ``"cat"``: one real product accumulates each output part in float32
    and rounds it once, as a real layer under autocast does (``"native"``
    runs in complex64 there: autocast leaves complex alone). Each strategy's backward mirrors
    its forward; for ``"3m"`` the gradients of a linear map are complex
    products of their own, each in the form that suits its operands.

    Inside :func:`cplxmodule.nn.cached`, layers pass their weight and bias
    packed: each form a strategy makes of them (the native complex tensor,
    3M's sums, the block matrix) is computed once. Then, without autograd,
    a linear map bound by reading its weight takes ``"native"`` too (it
    reads the packed weight once), and a small convolution ``"cat"`` (one
    real convolution on the block matrix).

    The thresholds come from ``benchmarks/test_bench_products.py`` and
    ``benchmarks/test_bench_small.py``; the products guide
    (``docs/guides/products.rst``) has their figures.

    Examples
    --------
    >>> x, w = cplx.randn(8, 3), cplx.randn(5, 3)
    >>> linear(x, w).shape
    torch.Size([8, 5])
    """
    (input,), weight, bias = check_operands({"input": input}, weight, bias, "linear")
    if weight.dim() != 2:
        raise ValueError(
            "linear: `weight` must have shape (out_features, in_features),"
            f" got {tuple(weight.shape)}"
        )
    check_features(input, weight.shape[1], "input", "linear")
    check_shape(bias, weight.shape[:1], "bias", "linear")
    check_strategy(strategy, "linear")
    return _product.linear(input, weight, bias, strategy)


def bilinear(
    input1: CplxLike,
    input2: CplxLike,
    weight: CplxLike,
    bias: Optional[CplxLike] = None,
    conjugate: bool = True,
    *,
    strategy: Optional[str] = None,
) -> Union[Cplx, torch.Tensor]:
    r"""Complex bilinear map :math:`y_k = \sum_{ij} \bar{x}_{1i} W_{kij} x_{2j} + b_k`.

    Parameters
    ----------
    input1 : Cplx or torch.Tensor
        First input, of shape ``(..., in1_features)``; conjugated when
        ``conjugate`` is true.
    input2 : Cplx or torch.Tensor
        Second input, of shape ``(..., in2_features)``. Real inputs, with a
        real ``weight`` and ``bias``, give a real output.
    weight : Cplx or torch.Tensor
        Weight of shape ``(out_features, in1_features, in2_features)``.
    bias : Cplx or torch.Tensor, optional
        Bias of shape ``(out_features,)``.
    conjugate : bool, default True
        Conjugate ``input1``, which makes the map sesquilinear.
    strategy : {None, "naive", "cat", "3m", "native"}, optional
        Strategy of the contraction of ``input1`` with ``weight``
        (see :func:`linear`); the result meets ``input2`` in a batched
        matrix-vector product.

    Returns
    -------
    Cplx or torch.Tensor
        Output of shape ``(..., out_features)``, real for real operands.

    Raises
    ------
    TypeError
        If an input is not a :class:`Cplx` (nor all operands real), or ``weight``/``bias`` is neither a
        :class:`Cplx` nor a real tensor.
    ValueError
        If ``weight`` is not three-dimensional, the inputs' last sizes or
        ``bias`` do not fit it, or ``strategy`` is unknown.

    Examples
    --------
    >>> x1, x2, w = cplx.randn(8, 3), cplx.randn(8, 4), cplx.randn(5, 3, 4)
    >>> bilinear(x1, x2, w).shape
    torch.Size([8, 5])
    """
    inputs = {"input1": input1, "input2": input2}
    (input1, input2), weight, bias = check_operands(inputs, weight, bias, "bilinear")
    if weight.dim() != 3:
        raise ValueError(
            "bilinear: `weight` must have shape (out_features, in1_features,"
            f" in2_features), got {tuple(weight.shape)}"
        )
    out_features, in1_features, in2_features = weight.shape
    check_features(input1, in1_features, "input1", "bilinear")
    check_features(input2, in2_features, "input2", "bilinear")
    check_shape(bias, (out_features,), "bias", "bilinear")
    check_strategy(strategy, "bilinear")
    return _product.bilinear(input1, input2, weight, bias, conjugate, strategy)


def einsum(equation: str, *tensors: CplxLike) -> Cplx:
    """Einstein summation over :class:`Cplx` (or real) operands, as :func:`torch.einsum`.

    Parameters
    ----------
    equation : str
        The subscripts, as for :func:`torch.einsum`.
    *tensors : Cplx or torch.Tensor
        The operands; a single list or tuple of them is accepted too.

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError
        If ``equation`` is not a string or an operand is neither a
        :class:`Cplx` nor a tensor.
    RuntimeError
        If there is no operand, or more operands than ``equation`` has
        terms (the messages start as the published package's,
        ``"`einsum()` requires at least one tensor"`` and ``"`Cplx.einsum`
        does not support more ..."``), or torch's :func:`torch.einsum`
        refuses the operands.

    Notes
    -----
    The operands are packed into torch's native complex dtype for one
    :func:`torch.einsum` (whose contraction order torch optimises), and the
    result's parts are returned as views.

    Examples
    --------
    >>> a, b = cplx.randn(2, 3), cplx.randn(3, 4)
    >>> einsum("ij,jk->ik", a, b).shape
    torch.Size([2, 4])
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum: `equation` must be a str, got {describe(equation)}")
    given: Sequence[object] = tensors
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        given = tuple(tensors[0])
    checked = [check_operand(z, f"tensors[{i}]", where="einsum") for i, z in enumerate(given)]
    # the published package's words for these two, which code may match on
    if not checked:
        raise RuntimeError(f"`einsum()` requires at least one tensor: got none for {equation!r}")
    n_terms = equation.split("->")[0].count(",") + 1
    if len(checked) > n_terms:
        raise RuntimeError(
            f"`Cplx.einsum` does not support more operands than `equation` has terms:"
            f" got {len(checked)} for {equation!r}"
        )
    operands = [to_complex(z) if isinstance(z, Cplx) else z for z in checked]
    # torch.einsum does not promote, so real operands join the complex dtype
    dtypes = [z.dtype for z in operands if z.is_complex()]
    if dtypes:
        operands = [z if z.is_complex() else z.to(dtypes[0]) for z in operands]
    output = torch.einsum(equation, *operands)
    return from_complex(output) if output.is_complex() else Cplx(output)
