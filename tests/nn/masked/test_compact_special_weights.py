"""compact() on weights with whole parts or rows of zeros, in every compactable family.

A complex weight whose imaginary (or real) part is all zero is still a
nonzero weight: a test of "nonzero" written with ``.all`` over the parts
instead of ``.any`` (or "all zero" with ``.any`` instead of ``.all``) would
drop it, or remove its channels, and random weights never show it. Each
family's masked twin (all-one mask: the zeros are the weight's own), and
its gated twin whose eval weight ``compact`` reads (gates open), gets a
weight with an all-zero imaginary part, an all-zero real part, a zero
output row, or no nonzero entry at all, in a chain ``layer -> activation ->
masked consumer`` where ``compact`` may remove channels; every weight stored
dense, and (linear layers) as CSR. The reference is the model itself in
eval mode (float64).
"""

import pytest
import torch

import cplxmodule.nn.masked  # noqa: F401  (registers the masked twins)
import cplxmodule.nn.relevance  # noqa: F401  (registers the Bayesian twins)
from cplxmodule import Cplx
from cplxmodule import cplx
from cplxmodule.nn import CplxSequential, CplxSplitTanh, _families
from cplxmodule.nn.masked import BaseMasked, CplxSparseLinear, compact, compact_report

DTYPE = torch.float64
# the spatial size of the input of each number of kernel dimensions
SPATIAL = {0: (), 1: (7,), 2: (5, 4), 3: (4, 3, 3)}
PATTERNS = {
    False: ["zero-row", "zero"],
    True: ["imag-zero", "real-zero", "zero-row", "zero"],
}


def kernel_dims(family):
    name = family.dense.__name__
    return 0 if "Linear" in name else int(name[-2])


def is_complex(family):
    return family.dense.__name__.startswith("Cplx")


def cases():
    for family in _families.families():
        if "Bilinear" in family.dense.__name__:
            continue  # below: it takes two inputs and is no link of a chain
        # a linear layer's weight is stored dense, or as CSR
        storages = (0.0, 1.0) if kernel_dims(family) == 0 else (0.0,)
        for kind in ("masked", "channel_l0", "l0"):
            if kind not in family.twins and not (kind == "l0" and family.dense is torch.nn.Linear):
                continue
            for pattern in PATTERNS[is_complex(family)]:
                for max_density in storages:
                    storage = "csr" if max_density else "dense"
                    yield pytest.param(
                        family, kind, pattern, max_density,
                        id=f"{family.dense.__name__}-{kind}-{pattern}-{storage}",
                    )


def twin(family, kind):
    if kind == "l0":
        return cplxmodule.nn.relevance.LinearL0
    return family.twins[kind]


def make(family, kind, sizes):
    """A layer of ``family`` and ``kind``: input and output features ``sizes``."""
    cls = twin(family, kind)
    d = kernel_dims(family)
    inputs, outputs = sizes
    if d == 0:
        layer = cls(inputs, outputs)
    else:
        # zero padding: a constant channel cannot move into the next bias
        padding = {} if "Transpose" in family.dense.__name__ else {"padding": 1}
        layer = cls(inputs, outputs, 3, **padding)
    return layer.to(DTYPE)


def special(weight, pattern, out_dim):
    """Write ``pattern`` into ``weight`` (a Cplx or a real tensor), in place."""
    parts = (weight.real, weight.imag) if isinstance(weight, Cplx) else (weight,)
    with torch.no_grad():
        if pattern == "imag-zero":
            parts[1].zero_()
        elif pattern == "real-zero":
            parts[0].zero_()
        elif pattern == "zero":
            for part in parts:
                part.zero_()
        else:  # the second output feature (channel) reads nothing
            for part in parts:
                part.select(out_dim, 1).zero_()


def open_gates(layer):
    """Masks of ones, or gates fully open: the zeros are the weight's."""
    shape = (layer.weight.real if isinstance(layer.weight, Cplx) else layer.weight).shape
    if isinstance(layer, BaseMasked):
        layer.mask = torch.ones(shape)
    else:
        with torch.no_grad():
            layer.log_alpha.fill_(-20.0)  # gates of 1 (L0 here parameterises dropping)


def chain(family, kind, pattern):
    torch.manual_seed(0)
    layer = make(family, kind, (3, 4))
    consumer = make(family, "masked", (4, 2))
    open_gates(layer)
    consumer.mask = torch.rand(consumer.weight.real.shape) < 0.7
    with torch.no_grad():
        for bias in (layer.bias, consumer.bias):
            for part in (bias.real, bias.imag) if isinstance(bias, Cplx) else (bias,):
                part.uniform_(0.5, 1.0)  # dead channels carry constants
        if is_complex(family):
            # constants with one zero part: still constants to carry
            layer.bias.imag[1] = 0.0
            layer.bias.real[0] = 0.0
    transposed = "Transpose" in family.dense.__name__
    special(layer.weight, pattern, out_dim=1 if transposed else 0)
    if is_complex(family):
        return CplxSequential(layer, CplxSplitTanh(), consumer).eval()
    return torch.nn.Sequential(layer, torch.nn.Tanh(), consumer).eval()


def draw(family, batch=3):
    shape = (batch, 3, *SPATIAL[kernel_dims(family)])
    if kernel_dims(family) == 0:
        shape = (batch, 3)
    if is_complex(family):
        return cplx.randn(*shape, dtype=DTYPE)
    return torch.randn(*shape, dtype=DTYPE)


def assert_same(actual, expected):
    if isinstance(expected, Cplx):
        actual = torch.complex(actual.real, actual.imag)
        expected = torch.complex(expected.real, expected.imag)
    torch.testing.assert_close(actual, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("family, kind, pattern, max_density", list(cases()))
def test_compact_keeps_what_special_weights_compute(family, kind, pattern, max_density):
    model = chain(family, kind, pattern)
    x = draw(family)
    with torch.no_grad():
        expected = model(x)
        small = compact(model, max_density=max_density)
        assert_same(small(x), expected)
    if pattern in ("imag-zero", "real-zero"):
        # no output feature of the layer is zero: every one stays
        first = small[0]
        assert getattr(first, "out_features", getattr(first, "out_channels", None)) == 4


@pytest.mark.parametrize("pattern", PATTERNS[True])
@pytest.mark.parametrize("conjugate", [True, False])
def test_complex_bilinear_with_special_weights(pattern, conjugate):
    from cplxmodule.nn.masked import CplxBilinearMasked

    torch.manual_seed(0)
    layer = CplxBilinearMasked(3, 2, 4, conjugate=conjugate).to(DTYPE)
    layer.mask = torch.ones(layer.weight.real.shape)
    special(layer.weight, pattern, out_dim=0)
    x1, x2 = cplx.randn(5, 3, dtype=DTYPE), cplx.randn(5, 2, dtype=DTYPE)
    with torch.no_grad():
        assert_same(compact(layer.eval())(x1, x2), layer(x1, x2))


@pytest.mark.parametrize("pattern", PATTERNS[True])
def test_csr_layer_of_a_special_weight_keeps_its_nonzeros(pattern):
    # without a mask the layer keeps the entries where either part is nonzero
    torch.manual_seed(0)
    weight = cplx.randn(5, 6, dtype=DTYPE)
    special(weight, pattern, out_dim=0)
    bias = cplx.randn(5, dtype=DTYPE)
    layer = CplxSparseLinear(weight, bias=bias)
    x = cplx.randn(4, 6, dtype=DTYPE)
    native = torch.complex(x.real, x.imag) @ torch.complex(weight.real, weight.imag).T
    expected = native + torch.complex(bias.real, bias.imag)
    assert_same(layer(x), Cplx(expected.real, expected.imag))
    nonzero = (weight.real != 0) | (weight.imag != 0)
    assert layer.col_indices.numel() == int(nonzero.sum())


@pytest.mark.parametrize("pattern", ["imag-zero", "real-zero"])
def test_report_finds_no_zeros_in_a_kernel_with_one_zero_part(pattern):
    torch.manual_seed(0)
    layer = cplxmodule.nn.masked.CplxConv1dMasked(2, 3, 3).to(DTYPE)
    layer.mask = torch.ones(layer.weight.real.shape)
    special(layer.weight, pattern, out_dim=0)
    model = CplxSequential(layer).eval()
    assert compact_report(model, compact(model)).notes == ()
