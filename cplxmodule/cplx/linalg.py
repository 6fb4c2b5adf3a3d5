"""Linear algebra on :class:`Cplx`: linear maps, convolutions, einsum, pooling.

Every complex product here is a real bilinear operation ``op(x, w)``
(:func:`torch.nn.functional.linear`, ``conv*d``, ``conv_transpose*d``)
lifted to complex operands by one shared mechanism, :func:`_product`, which
offers several strategies:

``"naive"``
    four real products, ``(xr wr - xi wi) + i (xr wi + xi wr)``, in two
    calls: the input's parts stacked along the batch against each part of
    the weight, so that each weight part is read once;
``"cat"``
    one real product on concatenated blocks: the input ``[xr, xi]`` along
    its feature (channel) dimension against the block weight
    ``[[wr, -wi], [wi, wr]]`` (per group, for grouped convolutions);
``"3m"``
    Gauss's trick, three real products
    ``k1 = op(xr + xi, wr)``, ``k2 = op(xr, wi - wr)``, ``k3 = op(xi, wr + wi)``,
    ``re = k1 - k3``, ``im = k1 + k2``;
``"native"``
    pack both operands into torch's native complex dtype, run one complex
    product and view the result's parts.

Every strategy adds the bias once. ``"cat"``, ``"3m"`` and ``"native"``
hand it to a product, where ``addmm`` and the convolution kernels add it for
free: ``"3m"`` feeds each part into exactly one of its real products (the
imaginary part into ``k2``, the negated real part into ``k3``), ``"cat"``
and ``"native"`` feed the whole bias into their single product. ``"naive"``
runs its products without bias and adds each part afterwards, in place,
broadcast along the feature dimension.

``strategy=None`` picks the measured default, see the Notes of :func:`linear`
and ``benchmarks/test_bench_products.py``.
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F

from .tensor import Cplx, _checked_cplx, _describe, from_complex, to_complex

__all__ = [
    "linear",
    "bilinear",
    "einsum",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
]

#: The names ``strategy=`` accepts (besides ``None``), described above.
STRATEGIES = ("naive", "cat", "3m", "native")

#: The names ``padding_mode=`` accepts, as :class:`torch.nn.Conv2d` does.
PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _Layout(NamedTuple):
    """Where the features live, for the strategies that rearrange operands.

    ``channel_dim`` is the feature dimension of the input and of the output
    (non-negative; zero means the input has no batch dimension);
    ``weight_out``/``weight_in`` index the weight's output and input
    features; the weight dimension ``grouped`` holds ``groups`` consecutive
    blocks, one per group.
    """

    channel_dim: int
    weight_out: int
    weight_in: int
    groups: int = 1
    grouped: int = 0


# the generic complex product
def _product(op, input, weight, bias, strategy, layout):
    """The complex product ``op(input, weight)`` plus ``bias``, by ``strategy``.

    A real ``input`` (with a real ``weight`` and ``bias``) is one real product.

    ``op(x, w, b)`` is a real bilinear operation with an optional real bias,
    such as :func:`torch.nn.functional.linear`. A real ``weight`` and the
    strategies ``"cat"``, ``"3m"`` and ``"native"`` pass ``bias`` to ``op``,
    which adds it for free (``addmm``, the convolution kernels), each part
    within exactly one product; ``"naive"`` adds it after its products.
    """
    if bias is None:
        bias_real = bias_imag = None
    elif isinstance(bias, Cplx):
        bias_real, bias_imag = bias.real, bias.imag
    else:
        bias_real, bias_imag = bias, None

    if isinstance(input, torch.Tensor):
        # real operands throughout (checked by the caller): one real product
        return op(input, weight, bias)
    if isinstance(weight, torch.Tensor):
        # a real weight maps both parts alike
        return Cplx(op(input.real, weight, bias_real), op(input.imag, weight, bias_imag))
    impl = _STRATEGY_IMPL[strategy]
    return Cplx(*impl(op, input, weight, bias_real, bias_imag, layout))


# Each strategy returns the real and imaginary parts of the output. Results of
# real products are fresh tensors that no backward formula reads, so sums into
# them are done in place (but not into the views that `chunk` or `unbind`
# return: autograd forbids it).
def _naive(op, x, w, br, bi, layout):
    # the two parts of the input share one call per weight part, so each
    # weight part is read once (as in a complex product); with a batch
    # dimension they are concatenated along it, otherwise stacked
    if layout.channel_dim > 0:
        both = torch.cat([x.real, x.imag])
        (rr, ir), (ri, ii) = op(both, w.real, None).chunk(2), op(both, w.imag, None).chunk(2)
    else:
        both = torch.stack([x.real, x.imag])
        (rr, ir), (ri, ii) = op(both, w.real, None).unbind(), op(both, w.imag, None).unbind()
    real, imag = rr - ii, ri + ir
    if br is not None:
        shape = (-1,) + (1,) * (real.dim() - layout.channel_dim - 1)
        real = real.add_(br.view(shape))
        if bi is not None:
            imag = imag.add_(bi.view(shape))
    return real, imag


def _gauss(op, x, w, br, bi, layout):
    # Two forms of the trick: each needs three additions of operand parts;
    # put two of them on the smaller operand.
    xr, xi, wr, wi = x.real, x.imag, w.real, w.imag
    nbr = None if br is None else -br
    if xr.numel() <= wr.numel():
        k1, k2, k3 = op(xr, wr + wi, None), op(xi - xr, wr, bi), op(xr + xi, wi, nbr)
    else:
        k1, k2, k3 = op(xr + xi, wr, None), op(xr, wi - wr, bi), op(xi, wr + wi, nbr)
    # re = k1 - k3 and im = k1 + k2: update k2 first, it reads k1
    imag = k2.add_(k1)
    return k1.sub_(k3), imag


def _native(op, x, w, br, bi, layout):
    bias = None
    if br is not None:
        bias = torch.complex(br, torch.zeros_like(br) if bi is None else bi)
    output = op(to_complex(x), to_complex(w), bias)
    return output.real, output.imag


def _cat(op, x, w, br, bi, layout):
    dim, groups = layout.channel_dim, layout.groups

    def cat_weight(a, b, d):
        return _group_cat(a, b, d, groups if d == layout.grouped else 1)

    # rows producing the real part, then rows producing the imaginary part
    top = cat_weight(w.real, -w.imag, layout.weight_in)
    bottom = cat_weight(w.imag, w.real, layout.weight_in)
    block = cat_weight(top, bottom, layout.weight_out)
    bias = None
    if br is not None:
        bias = _group_cat(br, torch.zeros_like(br) if bi is None else bi, 0, groups)

    output = op(_group_cat(x.real, x.imag, dim, groups), block, bias)
    real, imag = output.unflatten(dim, (groups, 2, -1)).unbind(dim + 1)
    return real.flatten(dim, dim + 1), imag.flatten(dim, dim + 1)


def _group_cat(a, b, dim, groups):
    """Concatenate ``a`` and ``b`` along ``dim`` within each of ``groups`` blocks."""
    if groups == 1:
        return torch.cat([a, b], dim=dim)
    a, b = a.unflatten(dim, (groups, -1)), b.unflatten(dim, (groups, -1))
    return torch.cat([a, b], dim=dim + 1).flatten(dim, dim + 1)


_STRATEGY_IMPL = {"naive": _naive, "cat": _cat, "3m": _gauss, "native": _native}


# argument checks
def _check_operand(value, name, optional=False):
    """A Cplx or a real tensor (or ``None`` if ``optional``)."""
    if value is None and optional:
        return value
    if isinstance(value, Cplx):
        return value
    if isinstance(value, torch.Tensor) and not value.is_complex():
        return value
    kinds = "a Cplx, a real torch.Tensor" + (" or None" if optional else "")
    raise TypeError(f"`{name}` must be {kinds}, got {_describe(value)}")


def _check_operands(inputs, weight, bias):
    """Check the operands of a product; return ``(weight, bias)``.

    ``inputs`` maps argument names to inputs. Either every input is a
    :class:`Cplx` (and ``weight``, ``bias`` are each a Cplx or a real tensor),
    or all operands are real tensors: then the product is one real product,
    as a Bayesian layer computes its output variance from ``|x|^2``.
    """
    weight = _check_operand(weight, "weight")
    bias = _check_operand(bias, "bias", optional=True)
    operands = (*inputs.values(), weight) + (() if bias is None else (bias,))
    if all(isinstance(x, torch.Tensor) and not x.is_complex() for x in operands):
        return weight, bias
    for name, value in inputs.items():
        if not isinstance(value, Cplx):
            raise TypeError(
                f"`{name}` must be a Cplx, or a real torch.Tensor with real"
                f" inputs, `weight` and `bias`, got {_describe(value)}"
            )
    return weight, bias


def _check_bias(bias, out_features):
    if bias is not None and tuple(bias.shape) != (out_features,):
        raise ValueError(
            f"`bias` must have shape ({out_features},), got {tuple(bias.shape)}"
        )
    return bias


def _check_strategy(strategy):
    if strategy is not None and strategy not in STRATEGIES:
        raise ValueError(
            f"`strategy` must be None or one of {STRATEGIES}, got {strategy!r}"
        )
    return strategy


# The default strategy, from benchmarks/test_bench_products.py (see the Notes
# of `linear`): Gauss's three products save a quarter of the arithmetic and,
# at small sizes, make the fewest torch calls. Only when the product is bound
# by reading the weight (many weight elements per row of the input) does
# "naive" win: it reads each weight part once, 3M reads it twice for its sum.
_WEIGHT_PER_ROW = 16384
_GAUSS_DTYPES = (torch.float32, torch.float64)


def _default_strategy(input, weight, layout):
    if input.dtype not in _GAUSS_DTYPES:
        # the sums of 3M lose too much in half precision
        return "naive"
    rows = input.numel() // max(input.shape[layout.channel_dim], 1)
    return "naive" if weight.numel() > _WEIGHT_PER_ROW * rows else "3m"


# linear maps
def linear(input, weight, bias=None, *, strategy=None):
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
    ``strategy=None`` (shared with the convolutions) picks, for float32 and
    float64 parts, ``"3m"``, unless the weight has more than 16384 elements
    per row of the input (the product of the input's sizes other than the
    feature dimension), where it picks ``"naive"``; other dtypes always get
    ``"naive"``, since 3M's sums of parts lose more precision there. The
    grad mode does not change the choice: each strategy's backward mirrors
    its forward (3M's backward has six real products where torch's complex
    one has eight).

    Measured with ``benchmarks/test_bench_products.py`` on a shared 2-core
    AMD EPYC (torch 2.13, MKL): time of the default over ``F.linear`` on
    complex64 tensors, best of at least five rounds; forward, and
    forward + backward::

        (batch, in, out)     1 thread: fwd  fwd+bwd   2 threads: fwd  fwd+bwd
        (32, 64, 64)              2.72     1.29            3.81     1.76
        (256, 512, 512)           1.02     0.87            0.84     0.84
        (64, 1024, 1024)          1.02     0.93            1.17     1.05
        (4096, 128, 128)          0.96     0.92            0.85     0.94
        (16, 1024, 1024)          1.16     0.96            1.59     0.78

    Between two runs the same code varies by up to 30% on this machine.
    Gauss's trick saves a quarter of the arithmetic once the products
    dominate, and makes the fewest torch calls at small sizes. With few
    rows and a large weight, e.g. 16 rows against a 1024 x 1024 weight, the
    product is bound by reading the weight, which ``"naive"`` does once per
    part (3M reads it twice, for its sum): there ``"naive"`` is 5-30%
    faster than ``"3m"``, and 0.8-1.6x native. At the smallest
    size (15 microseconds native) every strategy's handful of torch calls
    costs more in dispatch than torch's single complex kernel.

    Examples
    --------
    >>> x, w = cplx.randn(8, 3), cplx.randn(5, 3)
    >>> linear(x, w).shape
    torch.Size([8, 5])
    """
    weight, bias = _check_operands({"input": input}, weight, bias)
    if weight.dim() != 2:
        raise ValueError(
            "`weight` must have shape (out_features, in_features),"
            f" got {tuple(weight.shape)}"
        )
    if input.dim() == 0 or input.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"`input` must have shape (..., {weight.shape[1]}) for a weight of"
            f" shape {tuple(weight.shape)}, got {tuple(input.shape)}"
        )
    _check_bias(bias, weight.shape[0])
    _check_strategy(strategy)
    layout = _Layout(channel_dim=input.dim() - 1, weight_out=0, weight_in=1)
    strategy = strategy or _default_strategy(input, weight, layout)
    return _product(F.linear, input, weight, bias, strategy, layout)


def bilinear(input1, input2, weight, bias=None, conjugate=True, *, strategy=None):
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
    weight, bias = _check_operands({"input1": input1, "input2": input2}, weight, bias)
    if weight.dim() != 3:
        raise ValueError(
            "`weight` must have shape (out_features, in1_features, in2_features),"
            f" got {tuple(weight.shape)}"
        )
    out_features, in1_features, in2_features = weight.shape
    for name, z, size in (("input1", input1, in1_features), ("input2", input2, in2_features)):
        if z.dim() == 0 or z.shape[-1] != size:
            raise ValueError(
                f"`{name}` must have shape (..., {size}) for a weight of shape"
                f" {tuple(weight.shape)}, got {tuple(z.shape)}"
            )
    _check_bias(bias, out_features)
    if conjugate and isinstance(input1, Cplx):
        input1 = input1.conj

    # t[..., k, j] = sum_i x1[..., i] W[k, i, j] is a linear map of ``input1``
    flat = weight.permute(0, 2, 1).reshape(out_features * in2_features, in1_features)
    t = linear(input1, flat, bias=None, strategy=strategy)
    t = t.reshape(*t.shape[:-1], out_features, in2_features)
    output = (t @ input2.unsqueeze(-1)).squeeze(-1)
    return output if bias is None else output + bias


def einsum(equation, *tensors):
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
        raise TypeError(f"`equation` must be a str, got {_describe(equation)}")
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, z in enumerate(tensors):
        if not isinstance(z, (Cplx, torch.Tensor)):
            raise TypeError(
                f"`tensors[{i}]` must be a Cplx or a torch.Tensor, got {_describe(z)}"
            )
    operands = [to_complex(z) if isinstance(z, Cplx) else z for z in tensors]
    # torch.einsum does not promote, so real operands join the complex dtype
    dtypes = [z.dtype for z in operands if z.is_complex()]
    if dtypes:
        operands = [z if z.is_complex() else z.to(dtypes[0]) for z in operands]
    output = torch.einsum(equation, *operands)
    return from_complex(output) if output.is_complex() else Cplx(output)


# convolutions
def _ntuple(value, n, name):
    """``value`` as a tuple of ``n`` ints; the error names the argument ``name``."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"`{name}` must be an int or a tuple of {n} ints, got {value}")
    return value


def _check_padding(padding, padding_mode, stride, n, where=None):
    """Check ``padding_mode`` and a string ``padding`` of an ``n``-d convolution.

    ``padding`` must be an int, a tuple (checked by the caller or the op),
    ``"same"`` (only with stride 1) or ``"valid"``. ``where``, when given,
    starts the messages (the layer's name).
    """
    prefix = f"{where}: " if where else ""
    if padding_mode not in PADDING_MODES:
        raise ValueError(
            f"{prefix}`padding_mode` must be one of {PADDING_MODES}, got {padding_mode!r}"
        )
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(
                f"{prefix}`padding` must be an int, a tuple, 'same' or 'valid',"
                f" got {padding!r}"
            )
        if padding == "same" and any(s != 1 for s in _ntuple(stride, n, "stride")):
            raise ValueError(
                f"{prefix}`padding`='same' needs `stride`=1, got `stride`={stride}"
            )


def _explicit_padding(padding, kernel_size, dilation, n):
    """The per-side padding amounts for :func:`torch.nn.functional.pad`.

    Returns the pad list in :func:`torch.nn.functional.pad`'s order (last
    dimension first), resolving ``"same"`` as torch's convolution modules do.
    """
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":
        pad = []
        for d, k in zip(reversed(_ntuple(dilation, n, "dilation")), reversed(kernel_size)):
            total = d * (k - 1)
            pad += [total // 2, total - total // 2]
        return pad
    return [p for p in reversed(_ntuple(padding, n, "padding")) for _ in range(2)]


def _convnd(n, op, input, weight, bias, stride, padding, dilation, groups,
            padding_mode, strategy):
    weight, bias = _check_operands({"input": input}, weight, bias)
    _check_bias(bias, weight.shape[0])
    _check_strategy(strategy)
    _check_padding(padding, padding_mode, stride, n)
    if input.dim() not in (n + 1, n + 2):
        raise ValueError(
            f"`input` must have {n + 1} (unbatched) or {n + 2} (batched) dimensions"
            f" for conv{n}d, got shape {tuple(input.shape)}"
        )

    if padding_mode != "zeros":
        pad = _explicit_padding(padding, weight.shape[2:], dilation, n)
        if isinstance(input, Cplx):
            input = input.apply(F.pad, pad, mode=padding_mode)
        else:
            input = F.pad(input, pad, mode=padding_mode)
        padding = 0

    def real_op(x, w, b):
        return op(x, w, b, stride, padding, dilation, groups)

    channel_dim = input.dim() - n - 1
    layout = _Layout(channel_dim, weight_out=0, weight_in=1, groups=groups, grouped=0)
    strategy = strategy or _default_strategy(input, weight, layout)
    return _product(real_op, input, weight, bias, strategy, layout)


def _conv_transposend(n, op, input, weight, bias, stride, padding, output_padding,
                      groups, dilation, strategy):
    weight, bias = _check_operands({"input": input}, weight, bias)
    _check_bias(bias, weight.shape[1] * groups if weight.dim() > 1 else -1)
    _check_strategy(strategy)
    if input.dim() not in (n + 1, n + 2):
        raise ValueError(
            f"`input` must have {n + 1} (unbatched) or {n + 2} (batched) dimensions"
            f" for conv_transpose{n}d, got shape {tuple(input.shape)}"
        )

    def real_op(x, w, b):
        return op(x, w, b, stride, padding, output_padding, groups, dilation)

    channel_dim = input.dim() - n - 1
    layout = _Layout(channel_dim, weight_out=1, weight_in=0, groups=groups, grouped=0)
    strategy = strategy or _default_strategy(input, weight, layout)
    return _product(real_op, input, weight, bias, strategy, layout)


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
    that of :func:`linear` (in practice ``"3m"``). Its time over
    ``F.conv2d`` on complex64 tensors, measured as described in
    :func:`linear`::

        (N, C_in, H=W, C_out, k)   1 thread: fwd  fwd+bwd   2 threads: fwd  fwd+bwd
        (8, 16, 32, 32, 3)               0.83     0.74            0.71     0.70
        (32, 32, 16, 64, 3)              0.75     0.86            0.80     0.75
        (4, 64, 32, 64, 5)               0.96     0.97            0.91     0.91

    torch computes a complex convolution with three real ones as well, so
    the gain shrinks as the convolutions themselves dominate.

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
        If ``strategy`` is unknown or ``input`` has the wrong number of
        dimensions.

    Notes
    -----
    The default strategy is that of :func:`linear`.

    Examples
    --------
    >>> x, w = cplx.randn(2, 4, {example}), cplx.randn(4, 3, {kexample})
    >>> conv_transpose{n}d(x, w, stride=2).shape
    torch.Size([2, 3, {texample}])
    """


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           padding_mode="zeros", *, strategy=None):
    return _convnd(1, F.conv1d, input, weight, bias, stride, padding, dilation,
                   groups, padding_mode, strategy)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           padding_mode="zeros", *, strategy=None):
    return _convnd(2, F.conv2d, input, weight, bias, stride, padding, dilation,
                   groups, padding_mode, strategy)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           padding_mode="zeros", *, strategy=None):
    return _convnd(3, F.conv3d, input, weight, bias, stride, padding, dilation,
                   groups, padding_mode, strategy)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1, *, strategy=None):
    return _conv_transposend(1, F.conv_transpose1d, input, weight, bias, stride,
                             padding, output_padding, groups, dilation, strategy)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1, *, strategy=None):
    return _conv_transposend(2, F.conv_transpose2d, input, weight, bias, stride,
                             padding, output_padding, groups, dilation, strategy)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1, *, strategy=None):
    return _conv_transposend(3, F.conv_transpose3d, input, weight, bias, stride,
                             padding, output_padding, groups, dilation, strategy)


_DIMS = {1: ("L", "kL"), 2: ("H, W", "kH, kW"), 3: ("D, H, W", "kD, kH, kW")}


def _doc_kwargs(n):
    def sizes(k):
        return ", ".join([str(k)] * n)

    return dict(
        n=n, dims=_DIMS[n][0], kdims=_DIMS[n][1], example=sizes(8),
        kexample=sizes(3), texample=sizes(17), pexample=sizes(4),
    )


for _n, _f in ((1, conv1d), (2, conv2d), (3, conv3d)):
    _f.__doc__ = _CONV_DOC.format(**_doc_kwargs(_n))
for _n, _f in ((1, conv_transpose1d), (2, conv_transpose2d), (3, conv_transpose3d)):
    _f.__doc__ = _CONV_T_DOC.format(**_doc_kwargs(_n))


# pooling
def _max_poolnd(n, op, input, kernel_size, stride, padding, dilation, ceil_mode,
                return_indices):
    input = _checked_cplx(input)
    with torch.no_grad():
        # |z|^2 orders like |z| and costs no square root
        modulus = input.real * input.real + input.imag * input.imag
        _, indices = op(modulus, kernel_size, stride, padding, dilation,
                        ceil_mode=ceil_mode, return_indices=True)
    flat = indices.flatten(-n)
    output = input.apply(lambda part: part.flatten(-n).gather(-1, flat).view_as(indices))
    return (output, indices) if return_indices else output


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
    The window's winner is chosen by :math:`|z|^2` (no square root), without
    tracking gradients; the gradient flows to the chosen elements' parts.

    Examples
    --------
    >>> z = cplx.randn(2, 3, {example})
    >>> out, indices = max_pool{n}d(z, 2, return_indices=True)
    >>> out.shape == indices.shape == torch.Size([2, 3, {pexample}])
    True
    """


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _max_poolnd(1, F.max_pool1d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _max_poolnd(2, F.max_pool2d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _max_poolnd(3, F.max_pool3d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


for _n, _f in ((1, max_pool1d), (2, max_pool2d), (3, max_pool3d)):
    _f.__doc__ = _POOL_DOC.format(**_doc_kwargs(_n))
