"""The complex product of a real bilinear operation, by strategy, and the default choice.

The strategies are described in :mod:`cplxmodule.cplx.linalg`. The ops at
the end (``linear``, ``bilinear``, ``convnd``, ``conv_transposend``) are the
public ones of :mod:`~cplxmodule.cplx.linalg` and :mod:`~cplxmodule.cplx.conv`
without their argument checks: each layer checks its input once, in its
``forward``, naming itself, and owns its weight, so its entry point
``_dense_forward`` calls these, and each public op is its checks followed
by one of these.
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ._shared import HALF_DTYPES, autocast_dtype, ntuple
from .conversions import to_complex
from .tensor import Cplx

#: The names ``strategy=`` accepts (besides ``None``), described above.
STRATEGIES = ("naive", "cat", "3m", "native")


class Layout(NamedTuple):
    """Where the features live, for the strategies that rearrange operands.

    ``channel_dim`` is the feature dimension of the input and of the output
    (non-negative; zero means the input has no batch dimension);
    ``weight_out``/``weight_in`` index the weight's output and input
    features; a grouped weight holds ``groups`` consecutive blocks along its
    dimension 0.
    """

    channel_dim: int
    weight_out: int
    weight_in: int
    groups: int = 1


class Packed(Cplx):
    """A :class:`Cplx` operand that keeps the forms the strategies derive from it.

    Each packed form of a weight or a bias (the native complex tensor,
    Gauss's sums of parts, the block matrix, the negated real part) is
    computed at its first use and reused by every later product. Only
    :func:`cplxmodule.nn.cached` makes these, for weights it holds fixed;
    nothing checks whether the parts changed since.
    """

    __slots__ = ("_forms",)

    def __init__(self, value):
        self._real, self._imag, self._forms = value.real, value.imag, {}


def _form(value, key, make):
    """``make(value)``, computed once per ``key`` if ``value`` is :class:`Packed`."""
    if type(value) is not Packed:
        return make(value)
    form = value._forms.get(key)
    if form is None:
        form = value._forms[key] = make(value)
    return form


# the generic complex product
def product(op, input, weight, bias, strategy, layout):
    """The complex product ``op(input, weight)`` plus ``bias``, by ``strategy``.

    A real ``input`` (with a real ``weight`` and ``bias``) is one real product.

    ``op(x, w, b)`` is a real bilinear operation with an optional real bias,
    such as :func:`torch.nn.functional.linear`. A real ``weight`` and the
    strategies ``"cat"``, ``"3m"`` and ``"native"`` pass ``bias`` to ``op``,
    which adds it for free (``addmm``, the convolution kernels), each part
    within exactly one product; ``"naive"`` adds it after its products.
    A :class:`Packed` weight or bias keeps the forms the strategy makes of it.
    """
    if isinstance(input, torch.Tensor):
        # real operands throughout (checked by the caller): one real product
        return op(input, weight, bias)
    if isinstance(weight, torch.Tensor):
        # a real weight maps both parts alike
        bias_real, bias_imag = _bias_parts(bias)
        return Cplx(op(input.real, weight, bias_real), op(input.imag, weight, bias_imag))
    return _cplx(*_STRATEGY_IMPL[strategy](op, input, weight, bias, layout))


def _cplx(real, imag):
    # the parts of a product agree in shape, dtype and device by construction:
    # skip the checks of ``Cplx.__init__``, a real cost at small sizes
    z = Cplx.__new__(Cplx)
    z._real, z._imag = real, imag
    return z


def _bias_parts(bias):
    """The real and imaginary parts of a Cplx, real or absent bias (``None`` if absent)."""
    if bias is None:
        return None, None
    if isinstance(bias, Cplx):
        return bias.real, bias.imag
    return bias, None


def _negated_real(bias):
    return -_bias_parts(bias)[0]


def _complex_bias(bias):
    real, imag = _bias_parts(bias)
    return torch.complex(real, torch.zeros_like(real) if imag is None else imag)


# Each strategy returns the real and imaginary parts of the output. Results of
# real products are fresh tensors that no backward formula reads, so sums into
# them are done in place (but not into the views that `chunk` or `unbind`
# return: autograd forbids it).
def _naive(op, x, w, bias, layout):
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
    br, bi = _bias_parts(bias)
    if br is not None:
        shape = (-1,) + (1,) * (real.dim() - layout.channel_dim - 1)
        real = real.add_(br.view(shape))
        if bi is not None:
            imag = imag.add_(bi.view(shape))
    return real, imag


def _gauss(op, x, w, bias, layout):
    # Two forms of the trick: each needs three additions of operand parts;
    # put two of them on the smaller operand, or on a packed weight, whose
    # sums are computed once.
    xr, xi, wr, wi = x.real, x.imag, w.real, w.imag
    on_input = type(w) is not Packed and _known(xr.numel() <= wr.numel())
    # autocast casts no operand of an in-place ``addmm_``: there, the
    # generic form, whose products autocast casts
    if not on_input and op is F.linear and autocast_dtype(xr) is None:
        return _gauss_linear(x, w, bias)
    bi = _bias_parts(bias)[1]
    nbr = None if bias is None else _form(bias, "-real", _negated_real)
    if on_input:
        k1, k2, k3 = op(xr, wr + wi, None), op(xi - xr, wr, bi), op(xr + xi, wi, nbr)
    else:
        k1 = op(xr + xi, wr, None)
        k2 = op(xr, _form(w, "imag-real", lambda w: w.imag - w.real), bi)
        k3 = op(xi, _form(w, "real+imag", lambda w: w.real + w.imag), nbr)
    # re = k1 - k3 and im = k1 + k2: update k2 first, it reads k1
    imag = k2.add_(k1)
    return k1.sub_(k3), imag


def _gauss_linear(x, w, bias):
    # The weight-side form for a linear map, on the input's rows as a matrix:
    # ``addmm`` adds ``k1 = (xr + xi) wr^T`` within the other two products,
    # which saves two passes over the output: im = k1 + xr (wi - wr)^T,
    # then re = k1 - xi (wr + wi)^T in place. The bias is added last, so a
    # real input and weight give an exactly zero imaginary part.
    rows = x.shape[:-1]
    xr, xi = x.real.reshape(-1, x.shape[-1]), x.imag.reshape(-1, x.shape[-1])
    k1 = torch.mm(xr + xi, w.real.t())
    imag = torch.addmm(k1, xr, _form(w, "imag-real", lambda w: w.imag - w.real).t())
    real = k1.addmm_(xi, _form(w, "real+imag", lambda w: w.real + w.imag).t(), alpha=-1)
    br, bi = _bias_parts(bias)
    if br is not None:
        real = real.add_(br)
    if bi is not None:
        imag = imag.add_(bi)
    return real.view(*rows, -1), imag.view(*rows, -1)


def _native(op, x, w, bias, layout):
    weight = _form(w, "complex", to_complex)
    bias = None if bias is None else _form(bias, "complex", _complex_bias)
    if x.dtype != w.dtype and autocast_dtype(x) is not None:
        # autocast leaves complex tensors alone: the product runs in the
        # weight's precision, whatever autocast made of the input
        x = x.to(w.dtype)
    output = op(to_complex(x), weight, bias)
    return output.real, output.imag


def _cat(op, x, w, bias, layout):
    dim, groups = layout.channel_dim, layout.groups

    def cat_weight(a, b, d):
        # the groups are consecutive blocks of the weight's dimension 0 (its
        # output channels in a convolution, input channels when transposed)
        return _group_cat(a, b, d, groups if d == 0 else 1)

    def block(w):
        # rows producing the real part, then rows producing the imaginary part
        top = cat_weight(w.real, -w.imag, layout.weight_in)
        bottom = cat_weight(w.imag, w.real, layout.weight_in)
        return cat_weight(top, bottom, layout.weight_out)

    def block_bias(bias):
        br, bi = _bias_parts(bias)
        return _group_cat(br, torch.zeros_like(br) if bi is None else bi, 0, groups)

    weight = _form(w, ("block", layout.weight_in, layout.weight_out, groups), block)
    bias = None if bias is None else _form(bias, ("block", groups), block_bias)
    output = op(_group_cat(x.real, x.imag, dim, groups), weight, bias)
    real, imag = output.unflatten(dim, (groups, 2, -1)).unbind(dim + 1)
    return real.flatten(dim, dim + 1), imag.flatten(dim, dim + 1)


def _group_cat(a, b, dim, groups):
    """Concatenate ``a`` and ``b`` along ``dim`` within each of ``groups`` blocks."""
    if groups == 1:
        return torch.cat([a, b], dim=dim)
    a, b = a.unflatten(dim, (groups, -1)), b.unflatten(dim, (groups, -1))
    return torch.cat([a, b], dim=dim + 1).flatten(dim, dim + 1)


_STRATEGY_IMPL = {"naive": _naive, "cat": _cat, "3m": _gauss, "native": _native}


def check_strategy(strategy, where):
    """Raise a ``ValueError`` unless ``strategy`` is ``None`` or a known name."""
    if strategy is not None and strategy not in STRATEGIES:
        raise ValueError(
            f"{where}: `strategy` must be None or one of {STRATEGIES}, got {strategy!r}"
        )


# The default strategy, from benchmarks/test_bench_products.py (see the Notes
# of `linear`): Gauss's three products save a quarter of the arithmetic and,
# at small sizes, make the fewest torch calls. Only when the product is bound
# by reading the weight (many weight elements per row of the input) does
# "naive" win: it reads each weight part once, 3M reads it twice for its sum.
# A packed weight (inside ``cplxmodule.nn.cached``) costs nothing to pack:
# then, without autograd, one product wins below about 4M complex
# multiply-adds, where the three products and the sums of 3M cost more in
# torch calls: torch's complex product for linear maps (also when the weight
# dominates, as it reads each element once), the block matrix for
# convolutions (torch's complex convolution is slow); above, 3M with its sums
# on the weight, computed once.
_WEIGHT_PER_ROW = 16384
_GAUSS_DTYPES = (torch.float32, torch.float64)
_SMALL_MACS = 2 ** 22


def _known(condition):
    """A condition on sizes, ``False`` where a dynamic size of a trace leaves it open.

    Every strategy computes the same product, so a traced model with a
    dynamic batch axis (``torch.export``, the ONNX exporters) takes one
    without installing a guard on the batch size, which would bound it.
    """
    if type(condition) is bool:  # eager
        return condition
    if isinstance(condition, torch.SymBool):
        return statically_known_true(condition)
    return bool(condition)  # a traced tensor under torch.jit.trace


def default_strategy(input, weight, layout):
    if autocast_dtype(input) in HALF_DTYPES:
        # one real product on the block matrix accumulates all four terms
        # of each output part in float32 and rounds once, as a real layer
        # under autocast does: "naive" rounds three times, 3M's sums cancel
        return "cat"
    if input.dtype not in _GAUSS_DTYPES:
        # the sums of 3M lose too much in half precision
        return "naive"
    rows = input.numel() // max(input.shape[layout.channel_dim], 1)
    weight_bound = _known(weight.numel() > _WEIGHT_PER_ROW * rows)
    if type(weight) is Packed:
        if torch.is_grad_enabled():
            # torch's complex backward makes eight real products, 3M's six
            return "3m"
        # packing the weight is free: one product wins while torch calls (or
        # reading the weight) cost more than arithmetic; for a convolution
        # one real product on the block matrix, as torch's complex
        # convolution is slower than three real ones
        small = _known(rows * weight.numel() < _SMALL_MACS)
        if weight.dim() > 2:
            return "cat" if small else "3m"
        return "native" if small or weight_bound else "3m"
    return "naive" if weight_bound else "3m"


# the ops, unchecked (see the module's docstring)
def linear(input, weight, bias=None, strategy=None):
    """:func:`cplxmodule.cplx.linear` without its checks."""
    layout = Layout(channel_dim=input.dim() - 1, weight_out=0, weight_in=1)
    strategy = strategy or default_strategy(input, weight, layout)
    return product(F.linear, input, weight, bias, strategy, layout)


def bilinear(input1, input2, weight, bias=None, conjugate=True, strategy=None):
    """:func:`cplxmodule.cplx.bilinear` without its checks."""
    if conjugate and isinstance(input1, Cplx):
        input1 = input1.conj
    # t[..., k, j] = sum_i x1[..., i] W[k, i, j] is a linear map of ``input1``
    out_features, in1_features, in2_features = weight.shape
    flat = weight.permute(0, 2, 1).reshape(out_features * in2_features, in1_features)
    t = linear(input1, flat, None, strategy)
    t = t.reshape(*t.shape[:-1], out_features, in2_features)
    output = (t @ input2.unsqueeze(-1)).squeeze(-1)
    # in the products' dtype, as ``addmm`` adds a bias under autocast
    return output if bias is None else output + bias.to(output.dtype)


def convnd(n, op, input, weight, bias, stride, padding, dilation, groups, padding_mode,
           strategy=None):
    """:func:`cplxmodule.cplx.conv2d` without its checks (for ``n=2, op=F.conv2d``)."""
    if padding_mode != "zeros":
        pad = _explicit_padding(padding, weight.shape[2:], dilation, n)
        if isinstance(input, Cplx):
            input = input.apply(F.pad, pad, mode=padding_mode)
        else:
            input = F.pad(input, pad, mode=padding_mode)
        padding = 0

    def real_op(x, w, b):
        return op(x, w, b, stride, padding, dilation, groups)

    return _conv_product(n, real_op, input, weight, bias, groups, strategy, transposed=False)


def conv_transposend(n, op, input, weight, bias, stride, padding, output_padding, groups,
                     dilation, strategy=None):
    """:func:`cplxmodule.cplx.conv_transpose2d` without its checks (for ``n=2``)."""

    def real_op(x, w, b):
        return op(x, w, b, stride, padding, output_padding, groups, dilation)

    return _conv_product(n, real_op, input, weight, bias, groups, strategy, transposed=True)


def _conv_product(n, real_op, input, weight, bias, groups, strategy, transposed):
    """The complex product of an ``n``-d convolution ``real_op`` of real parts."""
    # a transposed convolution's weight is (in, out / groups, *kernel)
    weight_out, weight_in = (1, 0) if transposed else (0, 1)
    layout = Layout(
        input.dim() - n - 1, weight_out=weight_out, weight_in=weight_in, groups=groups
    )
    strategy = strategy or default_strategy(input, weight, layout)
    return product(real_op, input, weight, bias, strategy, layout)


def _explicit_padding(padding, kernel_size, dilation, n):
    """The per-side padding amounts for :func:`torch.nn.functional.pad`.

    Returns the pad list in :func:`torch.nn.functional.pad`'s order (last
    dimension first), resolving ``"same"`` as torch's convolution modules do.
    """
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":
        pad = []
        for d, k in zip(reversed(ntuple(dilation, n, "dilation")), reversed(kernel_size)):
            total = d * (k - 1)
            pad += [total // 2, total - total // 2]
        return pad
    return [p for p in reversed(ntuple(padding, n, "padding")) for _ in range(2)]
