"""Fixed-point bit precision of the surviving weights (``cplxmodule.nn.relevance.bits``).

Reference: the survivors and the marginal variance of every stored real
number (a complex weight's two parts each) computed here in numpy from the
layers' parameters, and the format found by brute force: the first step
``2**-f`` whose round-off ``2**(-f-1)`` is within the root mean variance,
then the fewest bits that hold every survivor rounded to it.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cplxmodule.nn import CplxLSTM
from cplxmodule.nn import relevance as R
from cplxmodule.nn.relevance import FixedPoint, bit_precision, named_bit_precision


# ----------------------------------------------------------------- the reference


def reference_format(values, variances):
    """``(bits, fraction)`` of the survivors' stored ``values`` of marginal ``variances`` (1-d, paired)."""
    values, variances = np.abs(np.asarray(values, float)), np.asarray(variances, float)
    if values.size == 0 or values.max() == 0:
        return 0, 0
    sigma = math.sqrt(variances.mean())
    fraction = next(f for f in range(-300, 3000) if 2.0 ** (-f - 1) <= sigma)
    steps = np.floor(values * 2.0**fraction + 0.5)
    magnitude = next(n for n in range(1, 3000) if steps.max() <= 2**n - 1)
    return 1 + magnitude, fraction


def near_boundary(variances):
    """Whether the root mean variance is within float error of a power of two (the step is then either)."""
    log2 = math.log2(math.sqrt(np.mean(variances)))
    return abs(log2 - round(log2)) < 1e-9


def stored(weight, variance, kept):
    """The survivors' stored real numbers and their variances: each part of a complex weight."""
    if np.iscomplexobj(weight):
        return (np.concatenate([weight.real[kept], weight.imag[kept]]),
                np.concatenate([variance[0][kept], variance[1][kept]]))
    return weight[kept], variance[kept]


def numpy_weight(layer):
    weight = layer.weight
    if isinstance(weight, torch.Tensor):
        return weight.detach().double().numpy()
    return weight.real.detach().double().numpy() + 1j * weight.imag.detach().double().numpy()


def per_weight_reference(layer, threshold):
    """A per-weight VD/ARD layer: variance exp(log_sigma2), of a complex weight half per part."""
    w = numpy_weight(layer)
    log_sigma2 = layer.log_sigma2.detach().double().numpy()
    kept = log_sigma2 - np.log(np.abs(w) ** 2 + 1e-24) <= threshold
    variance = np.exp(log_sigma2)
    if np.iscomplexobj(w):
        variance = (variance / 2, variance / 2)
    return stored(w, variance, kept)


def set_params(layer, **values):
    with torch.no_grad():
        for name, value in values.items():
            if name in ("real", "imag"):
                getattr(layer.weight, name).copy_(torch.as_tensor(value))
            else:
                getattr(layer, name).copy_(torch.as_tensor(value))
    return layer


def format_of(module, threshold, key):
    return dict(named_bit_precision(module, threshold=threshold))[key]


# ----------------------------------------------------------------- per-weight layers


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    complex_=st.booleans(),
    shape=st.tuples(st.integers(1, 3), st.integers(1, 4)),
    threshold=st.floats(-4.0, 6.0),
)
def test_per_weight_layers_match_the_reference(data, complex_, shape, threshold):
    def arrays(low, high):
        size = math.prod(shape)
        return st.lists(st.floats(low, high, width=32), min_size=size, max_size=size).map(
            lambda x: np.reshape(x, shape))

    layer = (R.CplxLinearVD if complex_ else R.LinearVD)(shape[1], shape[0]).double()
    set_params(layer, log_sigma2=data.draw(arrays(-20.0, 2.0)))
    if complex_:
        set_params(layer, real=data.draw(arrays(-4.0, 4.0)), imag=data.draw(arrays(-4.0, 4.0)))
    else:
        set_params(layer, weight=data.draw(arrays(-4.0, 4.0)))
    w = numpy_weight(layer)
    log_alpha = layer.log_sigma2.detach().numpy() - np.log(np.abs(w) ** 2 + 1e-24)
    assume(np.all(np.abs(log_alpha - threshold) > 1e-9))
    values, variances = per_weight_reference(layer, threshold)
    assume(values.size == 0 or not near_boundary(variances))

    fmt = format_of(layer, threshold, "")
    assert fmt == reference_format(values, variances)
    assert bit_precision(layer, threshold=threshold) == {"": fmt.bits}


@pytest.mark.parametrize("cls", [R.Conv2dARD, R.CplxConv1dVD, R.CplxBilinearARD, R.ConvTranspose1dVD])
def test_every_family_matches_the_reference(cls):
    torch.manual_seed(0)
    args = {"Conv2d": (2, 3, 2), "Conv1d": (2, 4, 3), "Bilinear": (2, 3, 2), "ConvTranspose1d": (2, 3, 3)}
    family = next(f for f in args if f in cls.__name__)
    layer = cls(*args[family]).double()
    with torch.no_grad():
        layer.log_sigma2.uniform_(-9.0, -1.0).view(-1)[0] = 10.0  # pruned
    values, variances = per_weight_reference(layer, 0.5)
    assert values.size  # some kept
    assert format_of(layer, 0.5, "") == reference_format(values, variances)


def test_the_paper_example_by_hand():
    # weights 1.5 and -0.25 kept, 0 pruned; std 0.1: round-off 1/16 <= 0.1 < 1/8,
    # step 1/8; 1.5 is 12 steps, 4 bits and the sign
    layer = set_params(R.LinearVD(3, 1), weight=[[1.5, -0.25, 0.0]],
                       log_sigma2=torch.full((1, 3), 2 * math.log(0.1)))
    assert format_of(layer, 3.0, "") == FixedPoint(bits=5, fraction=3)


def test_complex_parts_share_one_format_and_split_the_variance():
    # sigma^2 = 2 s^2 over two parts is s^2 per part: the real layer's step with std s
    s = 0.003
    real = set_params(R.LinearVD(2, 1), weight=[[0.2, -0.7]],
                      log_sigma2=torch.full((1, 2), 2 * math.log(s)))
    cplx = set_params(R.CplxLinearVD(2, 1), real=[[0.2, 0.1]], imag=[[-0.05, -0.7]],
                      log_sigma2=torch.full((1, 2), math.log(2 * s**2)))
    expected = format_of(real, 3.0, "")
    # the largest part, -0.7, is an imaginary one: it sets the width of both
    assert format_of(cplx, 3.0, "") == expected == reference_format([0.7, 0.2], [s**2, s**2])


def test_scaling_weights_and_posterior_by_a_power_of_two_moves_the_binary_point():
    torch.manual_seed(1)
    layer = R.CplxConv1dARD(2, 3, 3).double()
    with torch.no_grad():
        layer.log_sigma2.uniform_(-12.0, -4.0)
    before = format_of(layer, 3.0, "")
    for k in (-3, 5):
        scaled = R.CplxConv1dARD(2, 3, 3).double()
        with torch.no_grad():
            scaled.weight.real.copy_(layer.weight.real * 2.0**k)
            scaled.weight.imag.copy_(layer.weight.imag * 2.0**k)
            scaled.log_sigma2.copy_(layer.log_sigma2 + 2 * k * math.log(2))
        assert format_of(scaled, 3.0, "") == FixedPoint(before.bits, before.fraction - k)


def test_a_posterior_too_narrow_for_float_variances_still_gives_its_bits():
    # exp(-2000) underflows to 0 in float64; the std e^-1000 is 2^-1442.7
    layer = set_params(R.LinearVD(1, 1).double(), weight=[[1.0]], log_sigma2=[[-2000.0]])
    fraction = math.ceil(1000 / math.log(2) - 1)
    # 1.0 is 2^fraction steps: fraction + 1 bits and the sign
    assert format_of(layer, 3.0, "") == FixedPoint(fraction + 2, fraction) == FixedPoint(1444, 1442)


# ----------------------------------------------------------------- the threshold


def noisy_and_precise_layer():
    """Two precise weights (std 1e-3) and two noisy ones (alpha = e), kept only above log alpha 1."""
    w = [[0.9, -0.4, 0.05, 0.03]]
    log_sigma2 = [[2 * math.log(1e-3)] * 2 + [1 + 2 * math.log(0.05), 1 + 2 * math.log(0.03)]]
    return set_params(R.LinearARD(4, 1).double(), weight=w, log_sigma2=log_sigma2)


@pytest.mark.parametrize("threshold, kept", [(0.5, [0, 1]), (1.5, [0, 1, 2, 3])])
def test_the_threshold_chooses_the_survivors(threshold, kept):
    layer = noisy_and_precise_layer()
    w = layer.weight.detach().numpy()[0]
    variances = np.exp(layer.log_sigma2.detach().numpy()[0])
    assert format_of(layer, threshold, "") == reference_format(w[kept], variances[kept])


def test_noisy_survivors_coarsen_the_step():
    layer = noisy_and_precise_layer()
    precise, all_ = format_of(layer, 0.5, ""), format_of(layer, 1.5, "")
    assert all_.fraction < precise.fraction and all_.bits < precise.bits
    # a threshold tensor acts as the number
    assert format_of(layer, torch.tensor(0.5, dtype=torch.float64), "") == precise


def test_a_layer_without_survivors_takes_no_bits():
    layer = noisy_and_precise_layer()
    model = torch.nn.Sequential(layer, torch.nn.ReLU(), R.LinearVD(1, 2))
    assert bit_precision(model, threshold=-30.0) == {"0": 0, "2": 0}
    assert format_of(model, -30.0, "0") == FixedPoint(0, 0)


def test_survivors_that_are_all_zero_take_no_bits():
    # a zero weight survives only with a variance below 1e-24 e^threshold
    layer = set_params(R.LinearVD(2, 1), weight=[[0.0, 0.0]], log_sigma2=[[-80.0, -80.0]])
    assert bool(layer.relevance(threshold=3.0).all())
    assert format_of(layer, 3.0, "") == FixedPoint(0, 0)


# ----------------------------------------------------------------- channel and input gates


def channel_reference(layer, threshold):
    """Gate z of mean 1 and variance alpha per channel: variance alpha |w|^2 (half per part)."""
    w = numpy_weight(layer)
    log_alpha = layer.log_sigma2.detach().double().numpy()
    transposed = "Transpose" in type(layer).__name__
    # the weight's dimension that holds the gated channels: rows (0) are the
    # output channels, or a transposed convolution's input channels
    rows = (layer.gated == "output") != transposed
    if rows:
        per_weight = log_alpha.reshape(-1, *(1,) * (w.ndim - 1))
    else:
        groups = getattr(layer, "groups", 1)
        per_group = log_alpha.reshape(groups, -1)  # group g's channels read by its rows
        rows_per_group = w.shape[0] // groups
        per_weight = np.repeat(per_group, rows_per_group, axis=0).reshape(
            w.shape[0], w.shape[1], *(1,) * (w.ndim - 2))
    per_weight = np.broadcast_to(per_weight, w.shape)
    kept = per_weight <= threshold
    variance = np.exp(per_weight) * np.abs(w) ** 2
    if np.iscomplexobj(w):
        variance = (variance / 2, variance / 2)
    return stored(w, variance, kept)


CHANNEL_LAYERS = [
    (R.LinearChannelVD, (5, 4), {}),
    (R.CplxLinearChannelARD, (5, 4), {"gated": "input"}),
    (R.Conv1dChannelARD, (4, 6, 3), {"groups": 2, "gated": "input"}),
    (R.CplxConv2dChannelVD, (2, 4, 2), {}),
    (R.CplxConvTranspose1dChannelVD, (4, 6, 3), {"groups": 2, "gated": "input"}),
    (R.ConvTranspose1dChannelARD, (4, 6, 3), {"groups": 2}),
]


@pytest.mark.parametrize("cls, args, kwargs", CHANNEL_LAYERS,
                         ids=[f"{c.__name__}-{k.get('gated', 'output')}" for c, _, k in CHANNEL_LAYERS])
def test_channel_and_input_gates_match_the_reference(cls, args, kwargs):
    torch.manual_seed(2)
    layer = cls(*args, **kwargs).double()
    with torch.no_grad():
        layer.log_sigma2.copy_(torch.linspace(-7.0, 2.0, layer.log_sigma2.numel()))
    values, variances = channel_reference(layer, 0.0)
    stored_numbers = layer.weight.real.numel() * (1 if isinstance(layer.weight, torch.Tensor) else 2)
    assert 0 < values.size < stored_numbers  # some channels pruned, some kept
    assert not near_boundary(variances)
    assert format_of(layer, 0.0, "") == reference_format(values, variances)


def test_gates_in_a_group_give_each_layer_its_own_format():
    first, second = R.LinearChannelVD(3, 2).double(), R.LinearChannelVD(4, 2).double()
    R.GateGroup([first, second], ["first", "second"])
    set_params(first, log_sigma2=[-6.0, 1.0])
    model = torch.nn.ModuleDict({"first": first, "second": second})
    for name, layer in model.items():
        values, variances = channel_reference(layer, 0.0)
        assert format_of(model, 0.0, name) == reference_format(values, variances)


# ----------------------------------------------------------------- hidden-unit gates


def unit_reference(layer, threshold):
    """Per projection: the survivors' parts and variances alpha_j Re(w)^2, alpha_j Im(w)^2 of unit j's rows."""
    log_alpha = layer.log_alpha.detach().double().numpy()
    kept_units = log_alpha <= threshold
    gates = {"LSTM": 4, "GRU": 3}.get(layer.mode, 1)
    directions = 2 if layer.bidirectional else 1
    expected = {}
    for index, suffix in enumerate(layer._suffixes()):
        row_alpha = np.tile(np.exp(log_alpha[index]), gates)[:, None]
        row_kept = np.tile(kept_units[index], gates)[:, None]
        below = index // directions - 1
        for name in ("ih", "hh"):
            w = numpy_weight(getattr(layer, name + suffix))
            if name == "hh" and not layer.proj_size:
                columns = kept_units[index]
            elif name == "ih" and below >= 0 and not layer.proj_size:
                columns = kept_units[below * directions:(below + 1) * directions].ravel()
            else:
                columns = np.ones(w.shape[1], bool)
            kept = np.broadcast_to(row_kept & columns[None, :], w.shape)
            variances = (row_alpha * w.real**2, row_alpha * w.imag**2)
            expected[name + suffix] = reference_format(*stored(w, variances, kept))
    return expected


@pytest.mark.parametrize("cls, kwargs", [
    (R.CplxGRUUnitVD, {"num_layers": 2, "bidirectional": True}),
    (R.CplxLSTMUnitARD, {"num_layers": 2}),
    (R.CplxLSTMUnitVD, {"proj_size": 2}),
    (R.CplxRNNUnitVD, {}),
], ids=["gru-bidirectional", "lstm", "lstm-proj", "rnn"])
def test_hidden_unit_gates_match_the_reference(cls, kwargs):
    torch.manual_seed(3)
    layer = cls(3, 4, **kwargs).double()
    with torch.no_grad():
        layer.log_alpha.copy_(torch.linspace(-6.0, 2.5, layer.log_alpha.numel()).view_as(layer.log_alpha))
    found = dict(named_bit_precision(torch.nn.Sequential(layer), threshold=1.0))
    expected = {f"0.{name}": FixedPoint(*fmt) for name, fmt in unit_reference(layer, 1.0).items()}
    # ``hr`` of a layer with proj_size is not gated: a point estimate, left out
    assert found == expected
    assert all(fmt.bits > 0 for fmt in found.values())


# ----------------------------------------------------------------- the model walk


def test_layers_without_a_posterior_are_left_out_and_names_take_the_prefix():
    model = torch.nn.Sequential(
        R.LinearL0(3, 4), R.CplxLinearChannelL0(4, 4), torch.nn.Sequential(R.LinearVD(4, 2)),
        R.to_bayesian(CplxLSTM(2, 3), "unit_l0"), R.LinearLASSO(2, 2),
    )
    assert list(bit_precision(model, threshold=3.0, prefix="net")) == ["net.2.0"]


def test_bit_precision_gives_the_widths_of_the_formats():
    model = torch.nn.Sequential(noisy_and_precise_layer(), R.CplxLinearVD(1, 3),
                                R.CplxGRUUnitARD(3, 2))
    formats = dict(named_bit_precision(model, threshold=1.0))
    assert list(formats) == ["0", "1", "2.ih_l0", "2.hh_l0"]
    assert bit_precision(model, threshold=1.0) == {name: fmt.bits for name, fmt in formats.items()}
    assert all(type(bits) is int for bits in bit_precision(model, threshold=1.0).values())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtypes_agree(dtype):
    layer = noisy_and_precise_layer().to(dtype)
    assert format_of(layer, 1.5, "") == format_of(noisy_and_precise_layer(), 1.5, "")


# ----------------------------------------------------------------- errors


def snapshot(model):
    return {key: value.clone() for key, value in model.state_dict().items()}


@pytest.mark.parametrize("function", [bit_precision, named_bit_precision])
@pytest.mark.parametrize("module, threshold, error, words", [
    ([R.LinearVD(2, 2)], 3.0, TypeError, ["`module`", "list"]),
    (torch.nn.Sequential(R.LinearVD(2, 2)), "3", TypeError, ["`threshold`"]),
    (torch.nn.Sequential(R.LinearVD(2, 2)), None, TypeError, ["`threshold`"]),
    (torch.nn.Sequential(R.LinearVD(2, 2)), float("nan"), ValueError, ["`threshold`", "NaN"]),
    (torch.nn.Sequential(torch.nn.Linear(2, 2), R.LinearL0(2, 2)), 3.0, ValueError,
     ["`module`", "Gaussian posterior", "L0"]),
], ids=["module", "threshold-str", "threshold-none", "threshold-nan", "no-gaussian-layer"])
def test_bad_arguments_are_refused_at_the_call(function, module, threshold, error, words):
    before = snapshot(module) if isinstance(module, torch.nn.Module) else None
    with pytest.raises(error) as info:
        function(module, threshold=threshold)  # no iteration: refused at the call
    message = str(info.value)
    assert message.startswith(function.__name__) and all(word in message for word in words)
    if before is not None:
        after = module.state_dict()
        assert all(torch.equal(before[key], after[key]) for key in before)


def test_a_non_finite_layer_is_refused_by_name_and_left_as_it_was():
    model = torch.nn.Sequential(R.LinearVD(2, 2), torch.nn.Sequential(R.CplxLinearVD(2, 2)))
    with torch.no_grad():
        model[1][0].log_sigma2[0, 1] = float("nan")
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"bit_precision: layer '1\.0' \(CplxLinearVD\).*log_sigma2"):
        bit_precision(model, threshold=3.0)
    after = model.state_dict()
    assert all(torch.allclose(before[key], after[key], rtol=0, atol=0, equal_nan=True)
               for key in before)
    assert model[1][0].log_sigma2.requires_grad and model.training


def test_threshold_is_keyword_only_and_required():
    with pytest.raises(TypeError):
        bit_precision(R.LinearVD(2, 2), 3.0)
    with pytest.raises(TypeError):
        bit_precision(R.LinearVD(2, 2))
