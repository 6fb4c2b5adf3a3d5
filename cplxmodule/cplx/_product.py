"""The complex product of a real bilinear operation, by strategy, and the default choice.

The strategies are described in :mod:`cplxmodule.cplx.linalg`. The ops at
the end (``linear``, ``bilinear``, ``convnd``, ``conv_transposend``) are the
public ones of :mod:`~cplxmodule.cplx.linalg` and :mod:`~cplxmodule.cplx.conv`
without their argument checks: each layer checks its input once, in its
``forward``, naming itself, and owns its weight, so its entry point
``_dense_forward`` calls these, and each public op is its checks followed
by one of these.
"""

import sys
from typing import NamedTuple

import torch
import torch.nn.functional as F

from ._dtypes import HALF_DTYPES, autocast_dtype
from ._shared import check_choice, ntuple
from .conversions import _to_complex
from .tensor import Cplx, _pair

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
    return _pair(*_STRATEGY_IMPL[strategy](op, input, weight, bias, layout))


def _bias_parts(bias):
    """The real and imaginary parts of a Cplx, real or absent bias (``None`` if absent)."""
    if bias is None:
        return None, None
    if isinstance(bias, Cplx):
        return bias.real, bias.imag
    return bias, None


def _pack(z):
    return _to_complex(z.real, z.imag)


def _complex_bias(bias):
    real, imag = _bias_parts(bias)
    return torch.complex(real, torch.zeros_like(real) if imag is None else imag)


# Each strategy returns the real and imaginary parts of the output. Results of
# real products are fresh tensors that no backward formula reads, so sums into
# them are done in place (but not into the views that slices or `unbind`
# return: autograd forbids it).
def _naive(op, x, w, bias, layout):
    # the two parts of the input share one call per weight part, so each
    # weight part is read once (as in a complex product); with a batch
    # dimension they are concatenated along it, otherwise stacked
    if layout.channel_dim > 0:
        both, n = torch.cat([x.real, x.imag]), x.real.shape[0]
        # slices, not ``chunk(2)``, whose count of chunks a trace with a
        # dynamic batch size cannot prove and would specialise
        by_real, by_imag = op(both, w.real, None), op(both, w.imag, None)
        rr, ir, ri, ii = by_real[:n], by_real[n:], by_imag[:n], by_imag[n:]
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
    # Gauss's trick in the form whose sums do not cancel on these operands
    # (see `_aligned`): for a linear map, ``addmm`` folds the products' sums
    # into the products themselves.
    # autocast casts no operand of an in-place ``addmm_``: there, the
    # generic form, whose products autocast casts
    if op is F.linear and autocast_dtype(x.real) is None:
        return _gauss_linear(x, w, bias)
    aligned = _aligned(x, w)
    if isinstance(aligned, torch.Tensor):
        # compiled: ``i op(x, -i w)`` where the operands are not aligned (as `_gauss_mm`)
        bias_real, bias_imag = _bias_parts(bias)
        if bias is not None:
            bias = Cplx(*_turn(bias_real, torch.zeros_like(bias_real) if bias_imag is None
                               else bias_imag, aligned))
        real, imag = _gauss_cross(op, x, Cplx(*_turn(w.real, w.imag, aligned)), bias)
        return _turn_back(real, imag, aligned)
    return _GAUSS[aligned](op, x, w, bias)


def _aligned(x, w):
    """Whether the larger part of ``x`` and of ``w`` is the same (both real or both imaginary).

    Every form of Gauss's trick cancels for some operands: a sum of
    products much larger than the output part it makes. The cross form
    (products ``xi wr``, ``xr wi``, ``(xr - xi)(wr + wi)``) cancels only
    when one operand is mostly real and the other mostly imaginary, the
    diagonal form (``xr wr``, ``xi wi``, ``(xr - xi)(wi - wr)``, as torch's
    complex convolution) only when both are mostly real or both mostly
    imaginary. Choosing by the norms of the parts bounds the error of either
    at about three times that of the four-product form, whatever the phases.
    Compiled code cannot branch on values: there the answer is a boolean
    tensor, which `_gauss_mm` takes without branching.
    """
    return _form(x, "real-dominant", _real_dominant) == _form(w, "real-dominant", _real_dominant)


def _real_dominant(z):
    dominant = torch.linalg.vector_norm(z.real) >= torch.linalg.vector_norm(z.imag)
    return dominant if torch.compiler.is_compiling() else bool(dominant)


def _turn(real, imag, aligned):
    """The parts of ``-i z`` where ``aligned`` (a boolean tensor) is false, else of ``z``."""
    return torch.where(aligned, real, imag), torch.where(aligned, imag, -real)


def _turn_back(real, imag, aligned):
    """The parts of ``i z`` where ``aligned`` is false, else of ``z``: undoes `_turn`."""
    return torch.where(aligned, real, -imag), torch.where(aligned, imag, real)


def _bias_sum(bias):
    br, bi = _bias_parts(bias)
    return br if bi is None else br + bi


def _bias_difference(bias):
    br, bi = _bias_parts(bias)
    return -br if bi is None else bi - br


def _gauss_cross(op, x, w, bias):
    # p1 = xi wr, p2 = xr wi, p3 = (xr - xi)(wr + wi):
    # re = p3 + p1 - p2, im = p1 + p2. The bias rides on the products:
    # bi on p2, br + bi on p3, which the difference p3 - p2 leaves as br.
    xr, xi = x.real, x.imag
    p1 = op(xi, w.real, None)
    p2 = op(xr, w.imag, _bias_parts(bias)[1])
    p3 = op(xr - xi, _form(w, "real+imag", lambda w: w.real + w.imag),
            None if bias is None else _form(bias, "real+imag", _bias_sum))
    real = p3.add_(p1).sub_(p2)
    return real, p2.add_(p1)


def _gauss_diagonal(op, x, w, bias):
    # q1 = xr wr, q2 = xi wi, q3 = (xr - xi)(wi - wr):
    # re = q1 - q2, im = q3 + q1 + q2. The bias rides on the products:
    # br on q1, bi - br on q3, which the sum q3 + q1 leaves as bi.
    xr, xi = x.real, x.imag
    q1 = op(xr, w.real, _bias_parts(bias)[0])
    q2 = op(xi, w.imag, None)
    q3 = op(xr - xi, _form(w, "imag-real", lambda w: w.imag - w.real),
            None if bias is None else _form(bias, "imag-real", _bias_difference))
    imag = q3.add_(q1).add_(q2)
    return q1.sub_(q2), imag


def _rows(x):
    """The parts of ``x`` as matrices, one row per sample."""
    return x.real.reshape(-1, x.shape[-1]), x.imag.reshape(-1, x.shape[-1])


def _gauss_mm(ar, ai, br, bi, aligned, sign=1, b_sum=None, buffered=False):
    """The complex matrix product ``(ar + i ai) @ (br + i sign bi)`` by Gauss's trick.

    ``aligned`` chooses the form (see `_aligned`); ``addmm`` sums in its
    products. ``b_sum`` is the sum of parts the form needs, if known:
    ``br + sign bi`` for the aligned form, ``sign bi - br`` for the other.
    ``buffered`` (outside autograd only) writes both parts into one new
    buffer, of which they are views (see `_gauss_mm_buffered`).

    Compiled, ``aligned`` is a boolean tensor: where it is false, the
    product is ``i ((-i a) @ b)`` or ``i (a @ (-i b))`` (turning the smaller
    operand), whose operands are aligned, in the aligned form; the turns by
    ``-i`` and ``i`` swap parts and signs.
    """
    if isinstance(aligned, torch.Tensor):
        if ar.numel() < br.numel():
            ar, ai = _turn(ar, ai, aligned)
        else:
            br, bi = _turn(br, bi if sign == 1 else -bi, aligned)
            sign = 1
        real, imag = _gauss_mm(ar, ai, br, bi, True, sign)
        return _turn_back(real, imag, aligned)
    if buffered:
        return _gauss_mm_buffered(ar, ai, br, bi, aligned, sign, b_sum)
    if aligned:
        # p1 = ai br, p2 = sign ar bi, p3 = (ar - ai)(br + sign bi):
        # im = p1 + p2, then re = p3 + p1 - p2 = p3 - (im - 2 p1)
        if b_sum is None:
            b_sum = torch.add(br, bi, alpha=sign)
        p1 = torch.mm(ai, br)
        imag = torch.addmm(p1, ar, bi, alpha=sign)
        real = torch.add(imag, p1, alpha=-2).addmm_(ar - ai, b_sum, beta=-1)
        return real, imag
    # q1 = ar br, q2 = sign ai bi, q3 = (ar - ai)(sign bi - br):
    # re = q1 - q2, then im = q3 + q1 + q2 = q3 - (re - 2 q1)
    if b_sum is None:
        b_sum = torch.sub(bi, br) if sign == 1 else torch.add(bi, br).neg_()
    q1 = torch.mm(ar, br)
    real = torch.addmm(q1, ai, bi, alpha=-sign)
    imag = torch.add(real, q1, alpha=-2).addmm_(ar - ai, b_sum, beta=-1)
    return real, imag


def _gauss_mm_buffered(ar, ai, br, bi, aligned, sign, b_sum):
    """`_gauss_mm` with its products written into one buffer, a part in each half.

    The same operations in the same order, so the same bits, with one
    output buffer and one temporary (``ar - ai``) instead of four fresh
    tensors per call. Freeing those four at once returned their memory to
    the system on every call on a 2-core VM (glibc trims the top of its
    heap), and the next call faulted every page back in: 2016 page faults
    per call of a (4096, 128) x (128, 128) product, which took 1.7x the time
    of torch's complex product instead of 0.8x (``benchmarks/test_bench_products.py``).
    """
    # each part starts on a 64-byte boundary, as a tensor of its own does:
    # BLAS kernels may sum in another order on a misaligned output
    shape = (ar.shape[0], br.shape[1])
    numel, align = shape[0] * shape[1], max(64 // ar.element_size(), 1)
    stride = -(-numel // align) * align
    out = ar.new_empty(2 * stride)
    real, imag = out[:numel].view(shape), out[stride : stride + numel].view(shape)
    if aligned:
        if b_sum is None:
            b_sum = torch.add(br, bi, alpha=sign)
        # p1 into real; imag = p1 + p2; real = p3 - (imag - 2 p1), -2 p1 exact
        torch.mm(ai, br, out=real)
        torch.addmm(real, ar, bi, alpha=sign, out=imag)
        real.mul_(-2).add_(imag).addmm_(ar - ai, b_sum, beta=-1)
        return real, imag
    if b_sum is None:
        b_sum = torch.sub(bi, br) if sign == 1 else torch.add(bi, br).neg_()
    torch.mm(ar, br, out=imag)
    torch.addmm(imag, ai, bi, alpha=-sign, out=real)
    imag.mul_(-2).add_(real).addmm_(ar - ai, b_sum, beta=-1)
    return real, imag


class _GaussLinear(torch.autograd.Function):
    """``x @ w.T`` by Gauss's trick, whose backward chooses its forms as well.

    Autograd's backward of three products is the transpose of the forward's
    form, whose sums cancel on the gradients of nearly-real outputs (it
    would lose up to ``-log10(ratio)`` digits in the gradients of the
    imaginary parts); here each gradient is a complex product of its own,
    ``g @ conj(w)`` and ``g.T @ conj(x)``, in the form that suits its
    operands. ``w_sum`` is the weight's sum of parts for the forward's form
    (from a packed weight), or ``None``.
    """

    @staticmethod
    def forward(xr, xi, wr, wi, aligned, w_sum):
        return _gauss_mm(xr, xi, wr.t(), wi.t(), aligned, b_sum=None if w_sum is None else w_sum.t())

    @staticmethod
    def setup_context(ctx, inputs, output):
        xr, xi, wr, wi, _, _ = inputs
        ctx.save_for_backward(xr, xi, wr, wi)

    @staticmethod
    def backward(ctx, grad_real, grad_imag):
        xr, xi, wr, wi = ctx.saved_tensors
        grad_x = grad_w = (None, None)
        if grad_real is None:
            grad_real = torch.zeros_like(grad_imag)
        if grad_imag is None:
            grad_imag = torch.zeros_like(grad_real)
        g_dominant = _real_dominant(Cplx(grad_real, grad_imag))
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            aligned = g_dominant == _real_dominant(Cplx(wr, wi))
            grad_x = _gauss_mm(grad_real, grad_imag, wr, wi, aligned, sign=-1)
        if ctx.needs_input_grad[2] or ctx.needs_input_grad[3]:
            aligned = g_dominant == _real_dominant(Cplx(xr, xi))
            grad_w = _gauss_mm(grad_real.t(), grad_imag.t(), xr, xi, aligned, sign=-1)
        return *grad_x, *grad_w, None, None


def _gauss_linear(x, w, bias):
    # Outside autograd the products themselves; with autograd, the function
    # whose backward chooses its forms too.
    aligned = _aligned(x, w)
    w_sum = None
    if not isinstance(aligned, torch.Tensor):
        key = "real+imag" if aligned else "imag-real"
        w_sum = _form(w, key, lambda w: w.real + w.imag if aligned else w.imag - w.real)
    xr, xi = _rows(x)
    wr, wi = w.real, w.imag
    tracked = torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (xr, xi, wr, wi, w_sum)
    )
    if tracked:
        real, imag = _GaussLinear.apply(xr, xi, wr, wi, aligned, w_sum)
    else:
        # compiled code plans its own memory
        buffered = not torch.compiler.is_compiling()
        b_sum = None if w_sum is None else w_sum.t()
        real, imag = _gauss_mm(xr, xi, wr.t(), wi.t(), aligned, b_sum=b_sum, buffered=buffered)
    # the bias is added last, so that a real input and weight give an
    # exactly zero imaginary part, and in place: fresh temporaries of the
    # output's size would fault their pages in at every call (see
    # `_gauss_mm_buffered`)
    br, bi = _bias_parts(bias)
    if br is not None:
        real = real.add_(br)
    if bi is not None:
        imag = imag.add_(bi)
    return real.view(*x.shape[:-1], -1), imag.view(*x.shape[:-1], -1)


_GAUSS = {True: _gauss_cross, False: _gauss_diagonal}


def _native(op, x, w, bias, layout):
    weight = _form(w, "complex", _pack)
    bias = None if bias is None else _form(bias, "complex", _complex_bias)
    if x.dtype != w.dtype and autocast_dtype(x) is not None:
        # autocast leaves complex tensors alone: the product runs in the
        # weight's precision, whatever autocast made of the input
        x = x.to(w.dtype)
    output = op(_to_complex(x.real, x.imag), weight, bias)
    return torch.view_as_real(output).unbind(-1)


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
    check_choice(strategy, "strategy", where, STRATEGIES, optional=True)


# The default strategy, from benchmarks/test_bench_products.py and
# benchmarks/test_bench_small.py (see the Notes of `linear`). Accuracy comes
# first (docs/guides/products.rst, tests/cplx/test_product_accuracy.py): every
# strategy picked here stays within 4x of the error of torch's complex GEMM.
#
# Small linear maps (below 4M complex multiply-adds, rows times weight
# elements) take torch's complex product: packing the operands and viewing
# the output's parts cost three or four torch calls, every other strategy
# more; the output's parts view one complex tensor, which the next product
# takes back without a copy. Larger ones take Gauss's three products, a
# quarter less arithmetic, unless the product is bound by reading the weight
# (many weight elements per row of the input): then "naive" reads each
# weight part once, where 3M reads it twice for its sum, and a weight packed
# once (inside ``cplxmodule.nn.cached``) goes to torch's complex product.
# Convolutions take 3M (torch's complex convolution loses digits on nearly
# real operands, see the guide), or, without autograd, one real convolution
# on the block matrix while small: a small convolution costs about the same
# per call whatever its size, so one call of twice the channels beats three,
# even with the block weight built at each call (two small concatenations;
# benchmarks/test_bench_compact.py times the compacted demo network).
#
# 3M chooses its form by the norms of the operands' parts, which bounds its
# error at about twice that of four products in float32; against the complex
# GEMM of float64 (itself more accurate than four real products there) the
# margin is too thin, so float64 never gets 3M by default, nor do other
# dtypes (their sums of parts lose too much). Traced and exported code takes
# real ops only (ONNX has no complex tensors, nor a branch on values), and on
# other devices than the CPU the choice would wait for the device: there the
# default is "naive". Compiled code (inductor has no complex kernels either)
# takes 3M where eager code does, its form chosen by a boolean tensor instead
# of a branch (`_gauss_mm`; linear 256 x 512 x 512: 0.87x native's complex
# GEMM, "naive" 1.05x, benchmarks/test_bench_products.py); a smaller linear
# map takes "naive", whose sums fuse into the kernels around it, and a
# smaller convolution on the CPU "cat", training or not: inductor calls the
# same convolution kernels as eager code, and one call of twice the
# channels beats the two calls of "naive" on twice the batch (the demo's
# network: 0.66-0.96x the time of inference, 0.84x of a training step,
# benchmarks/test_bench_demo_compile.py), while the block weight's
# concatenations fuse into one small kernel. A small linear map compiled for
# inference with inductor's ``freezing`` takes "cat" too: freezing folds the
# block matrix into a constant (prepacked for MKL), and one product per
# layer instead of two halves the products' fixed cost, which dominates
# small ones (the masked MLP 32-64-10, batch 64, with ``cpp_wrapper``:
# 1.29x native eager instead of 1.73x, benchmarks/test_bench_small.py);
# without freezing the block matrix is built at each call, and "naive"
# stays faster.
_WEIGHT_PER_ROW = 16384
_GAUSS_DTYPES = (torch.float32,)
_SMALL_MACS = 2 ** 22


def default_strategy(input, weight, layout):
    rows = input.numel() // max(input.shape[layout.channel_dim], 1)
    return _choose(input, rows, weight.numel(), weight.dim() > 2, type(weight) is Packed)


def _choose(input, rows, n_weight, conv, packed):
    """The default strategy, from what it depends on (see the comment above)."""
    if autocast_dtype(input) in HALF_DTYPES:
        # one real product on the block matrix accumulates all four terms
        # of each output part in float32 and rounds once, as a real layer
        # under autocast does: "naive" rounds three times, 3M's sums cancel
        return "cat"
    dtype, device = input.dtype, input.device
    if dtype not in _COMPLEX_DTYPES or torch.jit.is_tracing() or torch.compiler.is_exporting():
        return "naive"
    small = rows * n_weight < _SMALL_MACS
    gauss = dtype in _GAUSS_DTYPES and device.type == "cpu"
    if torch.compiler.is_compiling():
        if gauss and not small and n_weight <= _WEIGHT_PER_ROW * rows:
            return "3m"
        return "cat" if device.type == "cpu" and (conv or small and _frozen()) else "naive"
    if conv:
        if not torch.is_grad_enabled() and (small or packed and not gauss):
            return "cat"
        return "3m" if gauss and n_weight <= _WEIGHT_PER_ROW * rows else "naive"
    if small or packed and not (gauss and torch.is_grad_enabled()):
        return "native"
    if n_weight > _WEIGHT_PER_ROW * rows:
        return "naive"
    return "3m" if gauss else "naive"


_COMPLEX_DTYPES = (torch.float32, torch.float64)


def _frozen():
    """Whether inductor's ``freezing`` folds the weights of the code being compiled into constants."""
    # grad mode first: a training graph then holds no guard on the setting.
    # Inductor is imported by the time it compiles anything; importing its
    # config here would import it with cplxmodule, which takes seconds
    if torch.is_grad_enabled():
        return False
    config = sys.modules.get("torch._inductor.config")
    return config is not None and bool(config.freezing)


# the ops, unchecked (see the module's docstring)
def linear(input, weight, bias=None, strategy=None):
    """:func:`cplxmodule.cplx.linear` without its checks."""
    if strategy is None and isinstance(input, Cplx) and isinstance(weight, Cplx):
        # the hot path of every complex linear layer: read each part once
        real, weight_real = input.real, weight.real
        rows = real.numel() // max(weight_real.shape[1], 1)
        strategy = _choose(real, rows, weight_real.numel(), False, type(weight) is Packed)
        if strategy == "native":
            return _native_linear(real, input.imag, weight, weight_real, bias)
    layout = Layout(channel_dim=input.dim() - 1, weight_out=0, weight_in=1)
    strategy = strategy or default_strategy(input, weight, layout)
    return product(F.linear, input, weight, bias, strategy, layout)


def _native_linear(real, imag, weight, weight_real, bias):
    """``"native"`` for a linear map, on parts already read."""
    if type(weight) is Packed:
        weight = _form(weight, "complex", _pack)
    else:
        weight = _to_complex(weight_real, weight.imag)
    if type(bias) is Cplx or isinstance(bias, Cplx) and type(bias) is not Packed:
        # a layer's bias (a CplxParameter), or a Cplx: its parts are packed
        bias = _to_complex(bias.real, bias.imag)
    elif bias is not None:
        bias = _form(bias, "complex", _complex_bias)
    output = F.linear(_to_complex(real, imag), weight, bias)
    return _split(output)


def _split(output):
    """The parts of the complex ``output`` as a :class:`Cplx`, by one view and one ``unbind``.

    Autograd takes both parts back with one ``stack`` (``.real`` and
    ``.imag`` would cost a ``select`` each, and in the backward pass a zero
    tensor of the whole output per part); the next product or split
    activation finds ``output`` behind them (see
    :func:`~cplxmodule.cplx.conversions._pair_view`).
    """
    return _pair(*torch.view_as_real(output).unbind(-1))


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
        if b is None and n == 3 and (torch.onnx.is_in_onnx_export()
                                     or torch.compiler.is_exporting()):
            # onnxscript's conv3d (0.7) gives a missing bias the shape (C_out, 2),
            # which onnxruntime refuses: an explicit zero bias exports right
            b = w.new_zeros(w.shape[0])
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
