"""The complex product of a real bilinear operation, by strategy, and the default choice.

The strategies are described in :mod:`cplxmodule.cplx.linalg`.
"""

from typing import NamedTuple

import torch

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


# the generic complex product
def product(op, input, weight, bias, strategy, layout):
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
        # the groups are consecutive blocks of the weight's dimension 0 (its
        # output channels in a convolution, input channels when transposed)
        return _group_cat(a, b, d, groups if d == 0 else 1)

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
_WEIGHT_PER_ROW = 16384
_GAUSS_DTYPES = (torch.float32, torch.float64)


def default_strategy(input, weight, layout):
    if input.dtype not in _GAUSS_DTYPES:
        # the sums of 3M lose too much in half precision
        return "naive"
    rows = input.numel() // max(input.shape[layout.channel_dim], 1)
    return "naive" if weight.numel() > _WEIGHT_PER_ROW * rows else "3m"
