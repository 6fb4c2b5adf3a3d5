"""compact() removes whole channels along chains of layers, or keeps them.

Masks with whole output channels zero (structured sparsity) are set by hand
on masked layers. The reference is always the masked model itself in eval
mode, in float64; batch norms first run a few training batches so that
their running statistics are not the initial ones.
"""

import pytest
import torch

import cplxmodule.nn as cnn
import cplxmodule.nn.masked as masked
from cplxmodule import Cplx
from cplxmodule.nn.masked import compact

pytestmark = pytest.mark.usefixtures("one_thread")

DTYPE = torch.float64
C = 8  # channels between the producer and the consumer
DEAD = [1, 4]  # producer rows zeroed: constant channels
UNUSED = [6]  # consumer columns zeroed: channels nobody reads
KEPT = C - len(DEAD) - len(UNUSED)


def assert_same(actual, expected):
    if isinstance(expected, Cplx):
        actual = torch.complex(actual.real, actual.imag)
        expected = torch.complex(expected.real, expected.imag)
    torch.testing.assert_close(actual, expected, rtol=1e-9, atol=1e-10)


def conv(complex_, d, *args, transposed=False, **kwargs):
    name = f"Conv{'Transpose' if transposed else ''}{d}d"
    cls = getattr(masked, ("Cplx" if complex_ else "") + name + "Masked")
    return cls(*args, dtype=DTYPE, **kwargs)


def linear(complex_, *args, **kwargs):
    cls = masked.CplxLinearMasked if complex_ else masked.LinearMasked
    return cls(*args, dtype=DTYPE, **kwargs)


def batchnorm(complex_, d, n=C, kind=""):
    name = f"BatchNorm{d}d"
    if complex_:
        return getattr(cnn, f"Cplx{kind}{name}")(n, dtype=DTYPE)
    return getattr(torch.nn, name)(n, dtype=DTYPE)


def relu(complex_):
    return cnn.CplxSplitReLU() if complex_ else torch.nn.ReLU()


def tanh(complex_):
    return cnn.CplxToCplx[torch.tanh]() if complex_ else torch.nn.Tanh()


def sequential(complex_, *modules):
    return (cnn.CplxSequential if complex_ else torch.nn.Sequential)(*modules)


def sample(complex_, *shape):
    if complex_:
        return Cplx(torch.randn(shape, dtype=DTYPE), torch.randn(shape, dtype=DTYPE))
    return torch.randn(shape, dtype=DTYPE)


def real_shape(layer):
    weight = layer.weight
    return (weight.real if isinstance(weight, Cplx) else weight).shape


def mask_outputs(layer, channels, dim=0):
    """A full mask on ``layer`` but for whole output ``channels``."""
    mask = torch.ones(real_shape(layer), dtype=DTYPE)
    mask.index_fill_(dim, torch.tensor(channels, dtype=torch.long), 0.0)
    layer.mask = mask


def mask_inputs(layer, channels, dim=1, group=1):
    """A full mask on ``layer`` but for the input ``channels``, of ``group`` features each."""
    mask = torch.ones(real_shape(layer), dtype=DTYPE)
    features = [c * group + s for c in channels for s in range(group)]
    mask.index_fill_(dim, torch.tensor(features, dtype=torch.long), 0.0)
    layer.mask = mask


def warm_up(model, x, batches=3):
    """Running statistics away from the initial ones, then eval mode."""
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(x * 2.0 + 0.5)
    return model.eval()


def check(model, x):
    """``compact(model)``, checked against the model's eval output."""
    with torch.no_grad():
        expected = model(x)
    small = compact(model)
    with torch.no_grad():
        assert_same(small(x), expected)
    return small


complexity = pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])


# --- chains that lose their channels -----------------------------------------


def chain(kind, complex_, d):
    """``(model, input, producer index, consumer index)`` of one chain kind."""
    size = 6
    first = conv(complex_, d, 3, C, 3, padding=1)
    last = conv(complex_, d, C, 5, 3)  # no zero padding: constants fold into its bias
    if kind == "batchnorm":
        middle = [batchnorm(complex_, d), relu(complex_)]
    elif kind == "maxpool":
        pool = (cnn.CplxMaxPool1d, cnn.CplxMaxPool2d)[d - 1] if complex_ else (
            torch.nn.MaxPool1d, torch.nn.MaxPool2d)[d - 1]
        middle = [tanh(complex_), pool(2, padding=1), batchnorm(complex_, d)]
    elif kind == "avgpool":
        # padding outside the mean: a constant channel stays the constant
        pool = (cnn.CplxAvgPool1d, cnn.CplxAvgPool2d)[d - 1] if complex_ else (
            torch.nn.AvgPool1d, torch.nn.AvgPool2d)[d - 1]
        middle = [relu(complex_), pool(3, stride=2, padding=1, count_include_pad=False)]
        last = conv(complex_, d, C, 5, 3, padding=1, padding_mode="reflect")
    elif kind == "adaptive":
        pool = (cnn.CplxAdaptiveAvgPool1d, cnn.CplxAdaptiveMaxPool2d)[d - 1] if complex_ else (
            torch.nn.AdaptiveAvgPool1d, torch.nn.AdaptiveMaxPool2d)[d - 1]
        middle = [batchnorm(complex_, d), tanh(complex_), pool(4), torch.nn.Identity()]
    elif kind == "channel-activation":
        act = cnn.CplxChannelModReLU(C, dtype=DTYPE) if complex_ else torch.nn.PReLU(
            C, dtype=DTYPE)
        with torch.no_grad():
            (act.threshold if complex_ else act.weight).uniform_(0.1, 0.5)
        middle = [act, cnn.CplxDropout(0.3) if complex_ else torch.nn.Dropout(0.3)]
    elif kind == "learnable-z":
        # learnable per-channel values, each its own: PReLU's way
        if complex_:
            middle = [cnn.CplxZLeakyReLU(learnable=True, num_parameters=C, dtype=DTYPE),
                      cnn.CplxZAbsReLU(learnable=True, num_parameters=C, dtype=DTYPE)]
        else:
            middle = [torch.nn.PReLU(C, dtype=DTYPE), torch.nn.ReLU()]
        with torch.no_grad():
            for value in (p for m in middle for p in m.parameters()):
                value.uniform_(0.1, 0.5)
    elif kind == "transposed":
        first = conv(complex_, d, 3, C, 3, stride=2, transposed=True)
        middle = [batchnorm(complex_, d), relu(complex_)]
    model = sequential(complex_, first, *middle, last)
    return model, sample(complex_, 4, 3, *(size,) * d), 0, len(model) - 1


KINDS = ["batchnorm", "maxpool", "avgpool", "adaptive", "channel-activation", "learnable-z",
         "transposed"]


@complexity
@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("kind", KINDS)
def test_a_chain_loses_dead_and_unused_channels(kind, complex_, d):
    torch.manual_seed(0)
    model, x, i, j = chain(kind, complex_, d)
    mask_outputs(model[i], DEAD, dim=1 if kind == "transposed" else 0)
    mask_inputs(model[j], UNUSED)
    model = warm_up(model, x)
    small = check(model, x)
    assert (small[i].out_channels, small[j].in_channels) == (KEPT, KEPT)
    assert (small[i].in_channels, small[j].out_channels) == (3, 5)  # the model's ends stay
    for module in small[i + 1:j]:
        for name in ("num_features", "num_parameters", "num_channels"):
            assert getattr(module, name, KEPT) == KEPT


SPLIT_MAPS = {  # torch's elementwise maps, split on the parts: the table the fast path reads
    "leaky_relu": lambda: cnn.CplxToCplx[torch.nn.functional.leaky_relu](),
    "sin": lambda: cnn.CplxToCplx[torch.sin](),  # maps 0 to 0
    "cos": lambda: cnn.CplxToCplx[torch.cos](),  # maps 0 to 1: the constant moves on
    "relu6": lambda: cnn.CplxToCplx[torch.nn.functional.relu6](),
    "Threshold": lambda: cnn.CplxToCplx[torch.nn.Threshold](0.1, 20.0),
    "real Threshold": lambda: torch.nn.Threshold(0.1, 20.0),
}


@pytest.mark.parametrize("name", SPLIT_MAPS)
def test_the_split_elementwise_maps_are_steps(name):
    torch.manual_seed(0)
    complex_ = not name.startswith("real")
    model = sequential(complex_, conv(complex_, 1, 3, C, 3, padding=1), SPLIT_MAPS[name](),
                       conv(complex_, 1, C, 5, 3))
    mask_outputs(model[0], DEAD)
    mask_inputs(model[2], UNUSED)
    small = check(model.eval(), sample(complex_, 4, 3, 6))
    assert (small[0].out_channels, small[2].in_channels) == (KEPT, KEPT)


@pytest.mark.parametrize("kind", ["Naive", "Magnitude"])
def test_complex_batch_norm_variants_are_sliced(kind):
    torch.manual_seed(0)
    model = sequential(True, conv(True, 1, 2, C, 3), batchnorm(True, 1, kind=kind),
                       cnn.CplxModReLU(0.2), conv(True, 1, C, 3, 1))
    mask_outputs(model[0], DEAD)
    mask_inputs(model[3], UNUSED)
    x = sample(True, 5, 2, 7)
    small = check(warm_up(model, x), x)
    assert (small[0].out_channels, small[3].in_channels) == (KEPT, KEPT)
    bn = small[1]
    assert (bn.real.num_features if kind == "Naive" else bn.num_features) == KEPT


def test_complex_batch_norm_slices_its_covariance_per_channel():
    # the 2x2 whitening of each kept channel must be that channel's own
    torch.manual_seed(1)
    model = sequential(True, conv(True, 2, 1, C, 3), batchnorm(True, 2), conv(True, 2, C, 2, 1))
    mask_outputs(model[0], [0, 3, 5])
    mask_inputs(model[2], [])
    x = sample(True, 6, 1, 5, 5)
    warm_up(model, x)
    with torch.no_grad():  # correlated parts, different per channel
        cov = model[1].running_var
        cov[0, 1] = cov[1, 0] = (cov[0, 0] * cov[1, 1]).sqrt() * torch.linspace(-0.6, 0.6, C)
        model[1].weight[0, 1].uniform_(-1, 1)
    small = check(model, x)
    kept = torch.tensor([1, 2, 4, 6, 7])
    assert torch.equal(small[1].running_var, model[1].running_var[..., kept])
    assert torch.equal(small[1].weight, model[1].weight[..., kept])


@complexity
@pytest.mark.parametrize("d", [1, 2])
def test_flatten_into_a_linear_layer_loses_each_channels_features(complex_, d):
    torch.manual_seed(2)
    pool = (cnn.CplxMaxPool1d, cnn.CplxMaxPool2d)[d - 1] if complex_ else (
        torch.nn.MaxPool1d, torch.nn.MaxPool2d)[d - 1]
    flatten = cnn.CplxFlatten() if complex_ else torch.nn.Flatten()
    spatial = 3 ** d  # 6 -> 3 per dimension
    model = sequential(complex_, conv(complex_, d, 2, C, 3, padding=1), batchnorm(complex_, d),
                       relu(complex_), pool(2), flatten, tanh(complex_),
                       linear(complex_, C * spatial, 4))
    mask_outputs(model[0], DEAD)
    mask_inputs(model[6], UNUSED, group=spatial)
    x = sample(complex_, 5, 2, *(6,) * d)
    small = check(warm_up(model, x), x)
    assert small[0].out_channels == KEPT
    assert small[6].in_features == KEPT * spatial and small[6].out_features == 4


@complexity
def test_constant_channels_fold_into_the_next_bias(complex_):
    # rows zero, biases not: each dead channel carries bn(bias) everywhere
    torch.manual_seed(3)
    model = sequential(complex_, conv(complex_, 1, 2, C, 3), batchnorm(complex_, 1),
                       tanh(complex_), conv(complex_, 1, C, 3, 2, bias=False),
                       relu(complex_), torch.nn.Flatten() if not complex_ else cnn.CplxFlatten(),
                       linear(complex_, 3 * 5, 2, bias=False))
    mask_outputs(model[0], DEAD)
    mask_inputs(model[3], [])
    mask_outputs(model[3], [2])  # a constant 0 through relu: nothing to add
    mask_inputs(model[6], [])
    x = sample(complex_, 4, 2, 8)
    small = check(warm_up(model, x), x)
    assert (small[0].out_channels, small[3].in_channels) == (C - 2, C - 2)
    # the consumer had no bias: it gets one holding the constants' contribution
    assert small[3].bias is not None
    assert (small[3].out_channels, small[6].in_features) == (2, 10)


# --- what stays ----------------------------------------------------------------


@complexity
@pytest.mark.parametrize("consumer", ["zero-padded", "transposed"])
def test_constant_channels_reach_a_zero_padded_consumer_through_one_of_them(complex_, consumer):
    # bn(bias) is a nonzero constant, and zeros pad it at the borders (or a
    # transposed convolution sums fewer taps there): no bias can hold it,
    # but every constant channel is a multiple of one of them
    torch.manual_seed(4)
    if consumer == "transposed":
        last = conv(complex_, 1, C, 3, 3, stride=2, transposed=True)
        mask = torch.ones(real_shape(last), dtype=DTYPE)
        mask[UNUSED] = 0  # a transposed convolution's inputs are its axis 0
    else:
        last = conv(complex_, 1, C, 3, 3, padding=1)
    model = sequential(complex_, conv(complex_, 1, 2, C, 3), batchnorm(complex_, 1), last)
    mask_outputs(model[0], DEAD)
    if consumer == "transposed":
        model[2].mask = mask
    else:
        mask_inputs(model[2], UNUSED)
    x = sample(complex_, 4, 2, 7)
    small = check(warm_up(model, x), x)
    assert small[0].out_channels == KEPT + 1 and small[1].num_features == KEPT + 1
    assert small[2].in_channels == KEPT + 1


@complexity
def test_average_pooling_over_zero_padding_keeps_constant_channels(complex_):
    torch.manual_seed(5)
    pool = cnn.CplxAvgPool1d if complex_ else torch.nn.AvgPool1d
    model = sequential(complex_, conv(complex_, 1, 2, C, 3), tanh(complex_),
                       pool(3, stride=1, padding=1), conv(complex_, 1, C, 3, 1))
    mask_outputs(model[0], DEAD)
    mask_inputs(model[3], UNUSED)
    with torch.no_grad():
        for part in (model[0].bias.real, model[0].bias.imag) if complex_ else (model[0].bias,):
            part.fill_(0.5)  # tanh(0.5), then less at the borders
    x = sample(complex_, 4, 2, 7)
    small = check(model.eval(), x)
    assert small[0].out_channels == C - len(UNUSED)


def test_batch_statistics_keep_constant_channels():
    torch.manual_seed(6)
    model = torch.nn.Sequential(conv(False, 1, 2, C, 3),
                                torch.nn.BatchNorm1d(C, track_running_stats=False, dtype=DTYPE),
                                conv(False, 1, C, 3, 1))
    mask_outputs(model[0], DEAD)
    mask_inputs(model[2], UNUSED)
    x = sample(False, 4, 2, 7)
    small = check(model.eval(), x)
    assert small[0].out_channels == small[1].num_features == C - len(UNUSED)


@pytest.mark.parametrize("between", ["linear-batchnorm", "groupnorm", "shared-batchnorm",
                                     "grouped", "custom"])
def test_unproven_steps_keep_every_channel(between):
    torch.manual_seed(7)
    first, last = conv(False, 1, 2, C, 3), conv(False, 1, C, 3, 1)
    if between == "linear-batchnorm":
        # a linear layer's features are its input's last dimension, a batch norm's dim 1
        first, last = linear(False, 2, C), linear(False, C, 3)
        middle = [torch.nn.BatchNorm1d(C, dtype=DTYPE)]
        x = sample(False, 5, 2)
    else:
        x = sample(False, 5, 2, 7)
        if between == "groupnorm":
            middle = [torch.nn.GroupNorm(2, C, dtype=DTYPE)]
        elif between == "shared-batchnorm":
            bn = torch.nn.BatchNorm1d(C, dtype=DTYPE)
            middle = [bn, torch.nn.Tanh(), conv(False, 1, C, C, 1), bn]
        elif between == "grouped":
            middle = [torch.nn.Conv1d(C, C, 3, groups=2, dtype=DTYPE)]
        else:
            middle = [type("Custom", (torch.nn.ReLU,), {})()]
    model = torch.nn.Sequential(first, *middle, last)
    for layer in (model[0], model[-1]) + ((model[3],) if between == "shared-batchnorm" else ()):
        mask_inputs(layer, [])
    mask_outputs(model[0], DEAD)
    mask_inputs(model[-1], UNUSED)
    small = check(warm_up(model, x), x)
    assert small[0].weight.shape[0] == C


@complexity
@pytest.mark.parametrize("padding", [0, 1])
@pytest.mark.parametrize("masked_", [False, True], ids=["dense", "masked"])
def test_depthwise_convolutions_lose_channels_with_their_neighbours(complex_, padding, masked_):
    torch.manual_seed(12)
    if masked_:
        depthwise = conv(complex_, 2, C, C, 3, padding=padding, groups=C)
        mask = torch.rand(real_shape(depthwise)) < 0.7
        depthwise.mask = mask
    else:
        cls = cnn.CplxConv2d if complex_ else torch.nn.Conv2d
        depthwise = cls(C, C, 3, padding=padding, groups=C, dtype=DTYPE)
    model = sequential(complex_, conv(complex_, 2, 2, C, 1), batchnorm(complex_, 2),
                       relu(complex_), depthwise, batchnorm(complex_, 2), tanh(complex_),
                       conv(complex_, 2, C, 4, 1))
    mask_outputs(model[0], DEAD)
    mask_inputs(model[6], UNUSED)
    x = sample(complex_, 3, 2, 6, 6)
    small = check(warm_up(model, x), x)
    # with zero padding the depthwise layer sees the constants' borders: they stay
    kept = KEPT if padding == 0 else C - len(UNUSED)
    assert (small[0].out_channels, small[6].in_channels) == (kept, kept)
    assert small[3].in_channels == small[3].out_channels == small[3].groups == kept
    assert (small[1].num_features, small[4].num_features) == (kept, kept)


def test_every_channel_gone_but_one_stays():
    torch.manual_seed(8)
    model = torch.nn.Sequential(conv(False, 1, 2, C, 3), torch.nn.BatchNorm1d(C, dtype=DTYPE),
                                torch.nn.ReLU(), conv(False, 1, C, 3, 1))
    mask_outputs(model[0], list(range(C)))
    mask_inputs(model[3], [])
    x = sample(False, 4, 2, 7)
    small = check(warm_up(model, x), x)
    assert (small[0].out_channels, small[1].num_features, small[3].in_channels) == (1, 1, 1)


@complexity
def test_nested_sequentials_are_read_through(complex_):
    torch.manual_seed(9)
    inner = sequential(complex_, conv(complex_, 2, 1, C, 3), batchnorm(complex_, 2))
    outer = sequential(complex_, relu(complex_), conv(complex_, 2, C, 2, 1))
    model = torch.nn.Sequential(inner, torch.nn.Sequential(outer))
    mask_outputs(inner[0], DEAD)
    mask_inputs(outer[1], UNUSED)
    x = sample(complex_, 3, 1, 5, 5)
    small = check(warm_up(model, x), x)
    assert (small[0][0].out_channels, small[0][1].num_features) == (KEPT, KEPT)
    assert small[1][0][1].in_channels == KEPT


@complexity
def test_the_demo_network_loses_masked_channels(complex_):
    from cplxmodule.demo.model import ModulationNet

    torch.manual_seed(10)
    net = masked.to_masked(ModulationNet(4, width=4, complex=complex_).to(DTYPE))
    convs = [m for m in net.features if hasattr(m, "mask")]
    for layer in convs:
        dead = list(range(real_shape(layer)[0] // 2))  # half of each layer's channels
        mask_outputs(layer, dead)
        with torch.no_grad():  # relu(bias) = 0: zero padding then sees no difference
            for part in (layer.bias.real, layer.bias.imag) if complex_ else (layer.bias,):
                part[dead] = -1.0
    mask_inputs(net.classifier, [])
    x = sample(complex_, 3, 1 if complex_ else 2, 32)
    small = check(net.eval(), x)
    widths = [m.out_channels for m in small.features if hasattr(m, "out_channels")]
    original = [real_shape(layer)[0] for layer in convs]
    # each conv but the last (read by the custom forward) loses its dead half
    assert widths[:-1] == [w - w // 2 for w in original[:-1]] and widths[-1] == original[-1]


@complexity
def test_bayesian_layers_with_whole_irrelevant_channels_lose_them(complex_):
    import copy

    import cplxmodule.nn.relevance as relevance

    torch.manual_seed(11)
    Layer = relevance.CplxConv1dVD if complex_ else relevance.Conv1dARD
    model = sequential(complex_, Layer(2, C, 3, dtype=DTYPE), batchnorm(complex_, 1),
                       relu(complex_), Layer(C, 3, 1, dtype=DTYPE))
    x = sample(complex_, 4, 2, 7)
    warm_up(model, x)
    with torch.no_grad():
        for layer in (model[0], model[3]):
            layer.log_sigma2.fill_(-10.0)  # every weight relevant ...
        model[0].log_sigma2[DEAD] = 10.0  # ... but whole output channels
        model[3].log_sigma2[:, UNUSED] = 10.0  # and whole input channels
    # the reference: each layer's eval forward with its irrelevant weights zeroed
    reference = copy.deepcopy(model)
    with torch.no_grad():
        for layer in (reference[0], reference[3]):
            keep = layer.relevance(threshold=3.0)
            for part in (layer.weight.real, layer.weight.imag) if complex_ else (layer.weight,):
                part.mul_(keep)
        expected = reference(x)
    small = compact(model, threshold=3.0)
    with torch.no_grad():
        assert_same(small(x), expected)
    assert (small[0].out_channels, small[3].in_channels) == (KEPT, KEPT)
