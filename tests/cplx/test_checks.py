"""The generic argument checks of ``cplx/_shared.py``, and the layers and functions that use them.

Every message reads "{where}: `{name}` must be ..., got {value!r}"; a wrong
value raises a ValueError, a value of the wrong type an ArgumentTypeError,
which is both a TypeError and a ValueError.
"""

import re

import numpy
import pytest
import torch
from torch.overrides import TorchFunctionMode

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import _shared
from cplxmodule.cplx._shared import ArgumentTypeError
from cplxmodule.nn import masked
from cplxmodule.nn import relevance
from cplxmodule.nn.masked import compact, magnitude_masks
from cplxmodule.utils import pwelch, window_view

NAN, INF = float("nan"), float("inf")


def raises(error, where, name, value):
    """``pytest.raises`` for a message that names ``where``, ``name`` and ``value``, in the format."""
    got = re.escape(repr(value))
    return pytest.raises(error, match=rf"^{re.escape(where)}: `{name}` must .+, got {got}$")


# --- the generic checks -------------------------------------------------------------------------
# (value, error): the kinds of bad values, each with the error it must raise
NOT_AN_INT = [(True, ArgumentTypeError), (False, ArgumentTypeError), (2.5, ArgumentTypeError),
              (2.0, ArgumentTypeError), (NAN, ArgumentTypeError), (INF, ArgumentTypeError),
              ("3", ArgumentTypeError), (None, ArgumentTypeError),
              (torch.tensor(3), ArgumentTypeError)]
NOT_A_NUMBER = [(True, ArgumentTypeError), ("0.5", ArgumentTypeError), (None, ArgumentTypeError),
                (torch.tensor(0.5), ArgumentTypeError), (NAN, ValueError), (INF, ValueError),
                (-INF, ValueError)]


@pytest.mark.parametrize("value, error", NOT_AN_INT + [(0, ValueError), (-1, ValueError)])
def test_positive_int_refuses(value, error):
    with raises(error, "Layer", "size", value) as info:
        _shared.check_positive_int(value, "size", "Layer")
    assert "`size` must be a positive int, got" in str(info.value)


@pytest.mark.parametrize("value, error", NOT_AN_INT + [(-1, ValueError), (-7, ValueError)])
def test_non_negative_int_refuses(value, error):
    with raises(error, "Layer", "size", value) as info:
        _shared.check_non_negative_int(value, "size", "Layer")
    assert "`size` must be an int >= 0, got" in str(info.value)


@pytest.mark.parametrize("value, error", NOT_AN_INT + [(2, ValueError)])
def test_int_with_a_minimum_refuses(value, error):
    with raises(error, "f", "n", value) as info:
        _shared.check_int(value, "n", "f", minimum=3)
    assert "`n` must be an int >= 3, got" in str(info.value)


def test_int_errors_are_type_or_value_errors_as_python_says():
    # a wrong type is a TypeError to code written for torch, a ValueError to
    # code written for the layers' checks; a wrong value is only a ValueError
    with pytest.raises(TypeError):
        _shared.check_positive_int(2.5, "n", "f")
    with pytest.raises(ValueError):
        _shared.check_positive_int(2.5, "n", "f")
    with pytest.raises(ValueError) as info:
        _shared.check_positive_int(0, "n", "f")
    assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize("value", [0, 1, 7, numpy.int64(5), numpy.int32(2)])
def test_int_accepts_ints_and_returns_python_ints(value):
    got = _shared.check_non_negative_int(value, "n", "f")
    assert type(got) is int and got == int(value)
    assert _shared.check_int(-3, "n", "f") == -3


def test_optional_int():
    assert _shared.check_positive_int(None, "kdim", "f", optional=True) is None
    with raises(ValueError, "f", "kdim", 0) as info:
        _shared.check_positive_int(0, "kdim", "f", optional=True)
    assert "must be a positive int or None" in str(info.value)


@pytest.mark.parametrize("value, error", NOT_A_NUMBER + [(0, ValueError), (-0.5, ValueError)])
def test_positive_number_refuses(value, error):
    with raises(error, "cauchy_loss", "c", value) as info:
        _shared.check_positive(value, "c", "cauchy_loss")
    assert "`c` must be a positive number, got" in str(info.value)


@pytest.mark.parametrize("value, error", NOT_A_NUMBER + [(-0.1, ValueError), (1.5, ValueError),
                                                         (2, ValueError), (-1e-9, ValueError)])
def test_probability_refuses(value, error):
    with raises(error, "dropout", "p", value) as info:
        _shared.check_probability(value, "p", "dropout")
    assert "`p` must be a number in [0, 1], got" in str(info.value)


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0, numpy.float32(0.25), numpy.float64(1.0)])
def test_probability_accepts_the_closed_interval(value):
    assert _shared.check_probability(value, "p", "dropout") is value


@pytest.mark.parametrize(
    "bounds, words, good, bad",
    [
        (dict(low=0, high=1, open_low=True), "a number in (0, 1]", [1e-9, 1], [0, 1.01]),
        (dict(low=0, high=1, open_high=True), "a number in [0, 1)", [0, 0.99], [1, -0.1]),
        (dict(low=0), "a number >= 0", [0, 3.5, 10**400], [-1e-300]),
        (dict(low=2, open_low=True), "a number > 2", [2.5], [2, -3]),
        (dict(high=4), "a number <= 4", [-1e9, 4], [4.5]),
        (dict(), "a number", [-1e300, 0, 3], []),
    ],
)
def test_real_in_an_interval(bounds, words, good, bad):
    for value in good:
        assert _shared.check_real(value, "x", "f", **bounds) is value
    for value, error in [(v, ValueError) for v in bad] + NOT_A_NUMBER:
        with raises(error, "f", "x", value) as info:
            _shared.check_real(value, "x", "f", **bounds)
        assert f"`x` must be {words}, got" in str(info.value)


def test_optional_real():
    assert _shared.check_real(None, "scale", "f", optional=True) is None
    with raises(ValueError, "f", "max_density", 1.5) as info:
        _shared.check_real(1.5, "max_density", "f", low=0, high=1, optional=True)
    assert "must be a number in [0, 1] or None" in str(info.value)


def test_weights_are_numbers_at_least_zero():
    _shared.check_weights("loss", a=0, b=2.5)
    for value, error in NOT_A_NUMBER + [(-1, ValueError)]:
        with raises(error, "loss", "b", value) as info:
            _shared.check_weights("loss", a=1.0, b=value)
        assert "`b` must be a number >= 0, got" in str(info.value)


@pytest.mark.parametrize(
    "choices, optional, words",
    [
        (("real",), False, "'real'"),
        (("real", "modulus"), False, "'real' or 'modulus'"),
        (("input", "output"), True, "None, 'input' or 'output'"),
        (("none", "mean", "sum"), False, "one of ('none', 'mean', 'sum')"),
        (("naive", "cat", "3m"), True, "None or one of ('naive', 'cat', '3m')"),
    ],
)
def test_choice_among_strings(choices, optional, words):
    for choice in choices:
        assert _shared.check_choice(choice, "mode", "f", choices, optional) == choice
    bad = [("other", ValueError), (choices[0].upper(), ValueError), (choices[0] + " ", ValueError),
           (3, ArgumentTypeError), (True, ArgumentTypeError), ([choices[0]], ArgumentTypeError)]
    if not optional:
        bad.append((None, ArgumentTypeError))
    for value, error in bad:
        with raises(error, "f", "mode", value) as info:
            _shared.check_choice(value, "mode", "f", choices, optional)
        assert f"`mode` must be {words}, got" in str(info.value)


def test_reduction_is_a_choice():
    assert _shared.check_reduction("sum", "mse_loss") == "sum"
    with raises(ValueError, "mse_loss", "reduction", "avg"):
        _shared.check_reduction("avg", "mse_loss")


@pytest.mark.parametrize("value", [1, 0, "yes", None, numpy.bool_(True), torch.tensor(True)])
def test_bool_refuses_anything_but_a_bool(value):
    with raises(ArgumentTypeError, "Layer", "flag", value) as info:
        _shared.check_bool(value, "flag", "Layer")
    assert "`flag` must be a bool, got" in str(info.value)
    assert _shared.check_bool(False, "flag", "Layer") is False


@pytest.mark.parametrize(
    "value, error",
    [
        ((1, True), ArgumentTypeError), ((1, 2.0), ArgumentTypeError), (2.5, ArgumentTypeError),
        (True, ArgumentTypeError), ("3", ArgumentTypeError), (None, ArgumentTypeError),
        ({1, 2}, ArgumentTypeError), ((1, 2, 3), ValueError), ((1,), ValueError),
        ((1, 0), ValueError), (0, ValueError), ((-1, 2), ValueError),
    ],
)
def test_tuple_of_ints_refuses(value, error):
    with raises(error, "CplxConv2d", "stride", value) as info:
        _shared.ntuple(value, 2, "stride", "CplxConv2d", minimum=1)
    assert "`stride` must be a positive int or a tuple of 2 of them, got" in str(info.value)


def test_tuple_of_ints_accepts_an_int_a_tuple_a_list_and_a_size():
    assert _shared.ntuple(3, 2, "k", "f") == (3, 3)
    assert _shared.ntuple([1, numpy.int64(2)], 2, "k", "f") == (1, 2)
    assert all(type(v) is int for v in _shared.ntuple([1, numpy.int64(2)], 2, "k", "f"))
    assert _shared.ntuple(torch.Size([4, 5, 6]), None, "shape", "f", minimum=0) == (4, 5, 6)
    assert _shared.ntuple(0, None, "shape", "f", minimum=0) == (0,)
    with raises(ValueError, "f", "shape", (2, -1)) as info:
        _shared.ntuple((2, -1), None, "shape", "f", minimum=0)
    assert "`shape` must be an int >= 0 or a tuple of them, got" in str(info.value)


def test_divides():
    _shared.check_divides(2, "num_heads", 8, "`embed_dim`", "Attn")
    with raises(ValueError, "Attn", "num_heads", 3) as info:
        _shared.check_divides(3, "num_heads", 8, "`embed_dim`", "Attn")
    assert "`num_heads` must divide `embed_dim` (8), got 3" in str(info.value)


def test_dtype_equality():
    x = torch.zeros(2, dtype=torch.float64)
    _shared.check_dtype(x, torch.float64, "input", "Layer")
    with pytest.raises(TypeError) as info:
        _shared.check_dtype(x, torch.float32, "input", "Layer", "the layer's weight", "cast it")
    assert str(info.value) == (
        "Layer: `input` must have the dtype of the layer's weight, torch.float32,"
        " got torch.float64 (cast it)"
    )


def test_shape_equality_with_one_shape_or_several():
    _shared.check_shape(None, (2, 3), "bias", "f")
    _shared.check_shape(torch.zeros(2, 3), torch.Size([2, 3]), "bias", "f")
    _shared.check_shape(torch.zeros(4, 5), [(3,), (4, 5)], "mask", "f")
    with pytest.raises(ValueError, match=r"^f: `bias` must have shape \(3,\), got \(2, 3\)$"):
        _shared.check_shape(torch.zeros(2, 3), (3,), "bias", "f")
    with pytest.raises(ValueError, match=r"^f: `mask` must have shape \(3,\) or \(4, 5\), got \(5,\)$"):
        _shared.check_shape(torch.zeros(5), [(3,), (4, 5)], "mask", "f")


def test_padding_of_a_convolution():
    _shared.check_padding("same", "reflect", 1, 2, "CplxConv2d")
    with raises(ValueError, "CplxConv2d", "padding_mode", "mirror"):
        _shared.check_padding(0, "mirror", 1, 2, "CplxConv2d")
    with raises(ValueError, "CplxConv2d", "padding", "full"):
        _shared.check_padding("full", "zeros", 1, 2, "CplxConv2d")
    with raises(ValueError, "CplxConv2d", "stride", (1, 2)):
        _shared.check_padding("same", "zeros", (1, 2), 2, "CplxConv2d")
    with raises(ValueError, "conv_transpose1d", "padding_mode", "reflect"):
        _shared.check_transposed_padding_mode("reflect", "conv_transpose1d")


def test_ssim_options():
    _shared.check_ssim_options(11, 1.5, 1.0, 0.01, 0.03, "ssim_loss")
    for value, error in [(4, ValueError), (0, ValueError), (11.0, ArgumentTypeError),
                         (True, ArgumentTypeError)]:
        with raises(error, "ssim_loss", "window_size", value):
            _shared.check_ssim_options(value, 1.5, 1.0, 0.01, 0.03, "ssim_loss")
    with raises(ValueError, "ssim_loss", "k2", 0.0):
        _shared.check_ssim_options(11, 1.5, 1.0, 0.01, 0.0, "ssim_loss")


# --- public layers and functions: a bad size or probability, and nothing half-built -------------
class _TensorCalls(TorchFunctionMode):
    """Counts the torch functions called (tensor creation, parameter initialisation)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


SIZE = [-1, True, 2.5, "3"]  # an int >= 0: a size, a number of channels or features
POSITIVE = [0, -2, True, 2.0, None]  # an int >= 1
PROBABILITY = [-0.1, 1.5, NAN, INF, True, "0.5"]
EPS = [-1e-5, NAN, INF, True, "1e-5"]  # a number >= 0

# (layer, argument, keyword arguments of a layer that builds, bad values)
LAYERS = [
    (cnn.CplxLinear, "in_features", dict(in_features=3, out_features=2), SIZE),
    (cnn.CplxLinear, "out_features", dict(in_features=3, out_features=2), SIZE),
    (cnn.CplxBilinear, "in2_features", dict(in1_features=3, in2_features=2, out_features=2), SIZE),
    (masked.LinearMasked, "out_features", dict(in_features=3, out_features=2), SIZE),
    (masked.CplxLinearMasked, "in_features", dict(in_features=3, out_features=2), SIZE),
    (relevance.CplxLinearVD, "in_features", dict(in_features=3, out_features=2), SIZE),
    (relevance.LinearARD, "out_features", dict(in_features=3, out_features=2), SIZE),
    (cnn.CplxConv2d, "in_channels", dict(in_channels=2, out_channels=4, kernel_size=3), SIZE),
    (cnn.CplxConv1d, "out_channels", dict(in_channels=2, out_channels=4, kernel_size=3), SIZE),
    (cnn.CplxConv2d, "kernel_size", dict(in_channels=2, out_channels=4, kernel_size=3),
     POSITIVE + [(3, 0), (3, 3, 3)]),
    (cnn.CplxConv3d, "stride", dict(in_channels=2, out_channels=4, kernel_size=3), POSITIVE),
    (cnn.CplxConv1d, "dilation", dict(in_channels=2, out_channels=4, kernel_size=3), POSITIVE),
    (cnn.CplxConv2d, "padding", dict(in_channels=2, out_channels=4, kernel_size=3),
     [-1, (1, -1), 1.5, True]),
    (cnn.CplxConv2d, "groups", dict(in_channels=2, out_channels=4, kernel_size=3),
     POSITIVE + [3]),
    (masked.CplxConv2dMasked, "groups", dict(in_channels=2, out_channels=4, kernel_size=3),
     POSITIVE),
    (cnn.CplxConvTranspose2d, "output_padding", dict(in_channels=2, out_channels=4, kernel_size=3),
     [-1, True, 0.5]),
    (cnn.CplxConvTranspose1d, "out_channels", dict(in_channels=2, out_channels=4, kernel_size=3),
     SIZE),
    (cnn.CplxDropout, "p", dict(), PROBABILITY),
    (cnn.CplxDropout1d, "p", dict(), PROBABILITY),
    (cnn.CplxDropout2d, "p", dict(), PROBABILITY),
    (cnn.CplxDropout3d, "p", dict(), PROBABILITY),
    (cnn.CplxBatchNorm2d, "num_features", dict(num_features=3), SIZE),
    (cnn.CplxBatchNorm1d, "eps", dict(num_features=3), EPS),
    (cnn.CplxBatchNorm1d, "momentum", dict(num_features=3), PROBABILITY),
    (cnn.CplxMagnitudeBatchNorm1d, "num_features", dict(num_features=3), SIZE),
    (cnn.CplxNaiveBatchNorm2d, "num_features", dict(num_features=3), SIZE),
    (cnn.CplxNaiveBatchNorm2d, "momentum", dict(num_features=3), PROBABILITY),
    (cnn.CplxInstanceNorm1d, "num_features", dict(num_features=3), SIZE),
    (cnn.CplxInstanceNorm2d, "eps", dict(num_features=3), EPS),
    (cnn.CplxGroupNorm, "num_groups", dict(num_groups=2, num_channels=4), POSITIVE + [3]),
    (cnn.CplxGroupNorm, "num_channels", dict(num_groups=2, num_channels=4), SIZE),
    (cnn.CplxLayerNorm, "normalized_shape", dict(normalized_shape=4), SIZE + [(4, -1)]),
    (cnn.CplxLayerNorm, "eps", dict(normalized_shape=4), EPS),
    (cnn.CplxRMSNorm, "normalized_shape", dict(normalized_shape=(2, 4)), SIZE + [(2, 4.0)]),
    (cnn.CplxMultiheadAttention, "embed_dim", dict(embed_dim=8, num_heads=2), POSITIVE),
    (cnn.CplxMultiheadAttention, "num_heads", dict(embed_dim=8, num_heads=2), POSITIVE + [3]),
    (cnn.CplxMultiheadAttention, "kdim", dict(embed_dim=8, num_heads=2), [0, -1, True, 4.0]),
    (cnn.CplxMultiheadAttention, "dropout", dict(embed_dim=8, num_heads=2), PROBABILITY),
    (cnn.CplxTransformerEncoderLayer, "nhead", dict(d_model=8, nhead=2), POSITIVE + [3]),
    (cnn.CplxTransformerEncoderLayer, "dim_feedforward", dict(d_model=8, nhead=2), POSITIVE),
    (cnn.CplxTransformerDecoderLayer, "dropout", dict(d_model=8, nhead=2), PROBABILITY),
    (cnn.CplxTransformer, "num_decoder_layers", dict(d_model=8, nhead=2), POSITIVE),
    (cnn.CplxTransformer, "d_model", dict(d_model=8, nhead=2), POSITIVE),
    (cnn.CplxSinusoidalPositionalEncoding, "max_len", dict(d_model=8), POSITIVE),
    (cnn.CplxSinusoidalPositionalEncoding, "dropout", dict(d_model=8), PROBABILITY),
    (cnn.CplxRotaryPositionalEncoding, "base", dict(d_model=8), [0, -1.0, True, "1e4"]),
    (cnn.CplxS4D, "d_model", dict(d_model=4), POSITIVE),
    (cnn.CplxS4D, "d_state", dict(d_model=4), POSITIVE + [3]),
    (cnn.CplxUnitaryRNNCell, "hidden_size", dict(input_size=3, hidden_size=4), POSITIVE),
    (cnn.CplxRNN, "hidden_size", dict(input_size=3, hidden_size=4), POSITIVE),
    (cnn.CplxGRU, "num_layers", dict(input_size=3, hidden_size=4), POSITIVE),
    (cnn.CplxLSTM, "dropout", dict(input_size=3, hidden_size=4, num_layers=2), PROBABILITY),
    (cnn.CplxLSTM, "proj_size", dict(input_size=3, hidden_size=4), [-1, 4, True]),
    (cnn.CplxGRUCell, "input_size", dict(input_size=3, hidden_size=4), POSITIVE),
    (cnn.CplxSTFT, "n_fft", dict(n_fft=8), POSITIVE),
    (cnn.CplxSTFT, "hop_length", dict(n_fft=8), [0, -1, 2.0]),
    (cnn.CplxCauchyLoss, "c", dict(), [0, -1.0, NAN, INF, True]),
    (cnn.CplxSSIMLoss, "window_size", dict(), [4, 0, True, 7.0]),
    (cnn.CplxSSIMLoss, "sigma", dict(), [0, NAN, "1.5"]),
    (cnn.CplxSTFT, "hop_length", dict(n_fft=8), [True]),
    (cnn.CplxSpectralPool2d, "output_size", dict(output_size=4), [0, True, 2.5, (4, 0)]),
    (cnn.CplxSpectralPool1d, "output_size", dict(output_size=4), [0, -1, (2, 2)]),
]


def _cases(table):
    """One case per bad value of each row of ``table``, the marks of a row on each of its cases."""
    cases = []
    for row in table:
        marks = getattr(row, "marks", ())
        *head, values = getattr(row, "values", row)
        cases += [pytest.param(*head, value, marks=marks) for value in values]
    return cases


def _case_id(value):
    return value.__name__ if isinstance(value, type) else "" if isinstance(value, dict) else repr(value)


@pytest.mark.parametrize("layer, name, kwargs, value", _cases(LAYERS), ids=_case_id)
def test_layer_refuses_a_bad_argument_before_building_anything(layer, name, kwargs, value):
    layer(**kwargs)  # the table's arguments build a layer
    calls = _TensorCalls()
    with calls, raises(ValueError, layer.__name__, name, value):
        layer(**{**kwargs, name: value})
    assert calls.count == 0, "the layer created or touched tensors before refusing the argument"


def test_a_subclass_is_named_by_its_own_name():
    class MyDropout(cnn.CplxDropout):
        pass

    with raises(ValueError, "MyDropout", "p", 2):
        MyDropout(2)


z = cplx.randn(2, 3, 4, 4)
# (where, argument, a call of the function with the argument, bad values); the
# input ``z`` is dropped in place if the check comes too late
FUNCTIONS = [
    ("dropout", "p", lambda p: cplx.dropout(z, p, inplace=True), PROBABILITY),
    ("dropout2d", "p", lambda p: cplx.dropout2d(z, p, inplace=True), PROBABILITY),
    ("dropout3d", "p", lambda p: cplx.dropout3d(z, p, inplace=True), PROBABILITY),
    ("scaled_dot_product_attention", "dropout_p",
     lambda p: cplx.scaled_dot_product_attention(z, z, z, dropout_p=p), PROBABILITY),
    ("scaled_dot_product_attention", "scale",
     lambda s: cplx.scaled_dot_product_attention(z, z, z, scale=s), [NAN, "2", True]),
    ("group_norm", "num_groups", lambda g: cplx.group_norm(z, g), POSITIVE + [2]),
    ("layer_norm", "normalized_shape", lambda s: cplx.layer_norm(z, s), [-4, (4, 4.0), True]),
    ("conv2d", "groups", lambda g: cplx.conv2d(z, cplx.randn(3, 3, 3, 3), groups=g), POSITIVE),
    ("linear", "strategy", lambda s: cplx.linear(z, cplx.randn(2, 4), strategy=s), ["fast", 3]),
    ("window_view", "stride", lambda s: window_view(torch.zeros(8), 0, 2, s), POSITIVE),
    ("pwelch", "nperseg", lambda n: pwelch(torch.randn(64), nperseg=n), [0, -2, True, 2.0]),
    ("magnitude_masks", "keep",
     lambda k: magnitude_masks(torch.nn.Linear(2, 2), k), [0, 1.5, NAN, True, "0.5"]),
    ("compact", "max_density",
     lambda d: compact(torch.nn.Linear(2, 2), max_density=d), [-0.5, 2, INF, False]),
]


@pytest.mark.parametrize(
    "where, name, call, value", _cases(FUNCTIONS), ids=lambda x: "" if callable(x) else repr(x)
)
def test_function_refuses_a_bad_argument_and_leaves_the_input_unchanged(where, name, call, value):
    before = z.real.clone(), z.imag.clone()
    with raises(ValueError, where, name, value):
        call(value)
    assert torch.equal(z.real, before[0]) and torch.equal(z.imag, before[1])
