"""Compact sparse inference against the dense-masked forward it replaces.

Run with ``python -m pytest benchmarks/test_bench_compact.py --benchmark-enable``.
Every group is one model at one batch size, timed under
:func:`torch.inference_mode`, with variants

- ``masked``: what a masked layer computes at every call, ``weight * mask``
  then the dense product (``F.linear`` or :func:`cplxmodule.cplx.linear`);
- ``compact``: :func:`cplxmodule.nn.masked.compact` of the masked model;
- ``shrunk-dense`` (structured groups): the dense model of the shrunk size,
  built directly, which ``compact`` must match.

Channel groups (``demo-*``, ``conv32-*``, batch 64) time a whole
convolutional network with 75 % of each convolution's output channels
masked (whole rows of the mask; biases kept), against the dense network
(``dense``, the same weights unmasked) and its masked twin (``masked``):
the demo's :class:`~cplxmodule.demo.model.ModulationNet` (default width,
bursts of 128 samples), and a wider net on 32 x 32 images, three 3 x 3
convolutions of 64, 128 and 128 channels, each followed by a batch norm,
a ReLU and a pooling, then a flatten and a linear read-out; real and
complex (split ReLU, max pooling by modulus). ``compact`` removes the dead
channels along the whole chain (the demo's last convolution feeds the
model's own ``forward``, so its outputs stay).

Unstructured groups are one 2048 x 2048 layer (real, or complex) with a
random mask keeping 10 % or 1 % of the weight (by default ``compact``
stores the first dense, the second CSR). Structured groups are
``Linear(2048, 2048) -> ReLU -> Linear(2048, 2048)`` whose first mask zeroes
half of the rows (no bias): ``compact`` removes those features from both
layers.

The residual groups are ``CplxResNet(3, 10)`` (widths 16, 32, 64; batch
32 of 32 x 32) with half of every block's inner channels masked
(``resnet-cplx-inner50%``) and, besides, half the channels of every
stage's stream, masked in every layer that adds into them
(``resnet-cplx-inner50%-streams50%``).

The U-Net group (``unet-cplx-channels75%-batch8``) is
``CplxUNet(1, channels=(32, 64))`` on 8 spectrograms of 64 x 64 with three
quarters of every level's channels masked (the output layer's kept):
``compact`` with ``example_inputs`` removes them from each level and from
both of its readers, the next level and the decoder level that takes it
through the skip connection; ``compact-sequentials`` (without them) keeps
every channel.

Threshold groups (``threshold-*``) time one layer on either side of the
size at which ``compact`` starts to choose CSR (1024 x 1024 real, 512 x 512
complex; 2 % kept), at 1 and 64 rows: variants ``compact`` (the default
choice), ``csr`` and ``dense`` (forced by ``max_density``). Classifier
groups (``gru-*``, ``transformer-*``) are small complex models built as a
new user would, masked at random to 87 % sparsity (the weights of every
linear layer and projection): a GRU of 64 features and a read-out over
sequences of 32 steps, and a two-layer transformer encoder (``d_model`` 64,
4 heads, feed-forward 128, sinusoidal positions) with a read-out of the
mean over 32 positions, batch 16; variants ``masked``, ``compact`` (the
default: dense layers) and ``csr`` (``max_density=0.15``, the choice
before the rule, which made both slower than their masked original).

Runs on one thread. At the end the session
prints each variant's time over the compact model's (``benchmarks/conftest.py``):
``masked`` is then the speedup, and ``shrunk-dense`` is at least 1 when the
compact model is as fast as the dense model of its size; from the minimum and
from the median.
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.demo.model import ModulationNet
from cplxmodule.models import CplxResNet, CplxUNet
from cplxmodule.nn import CplxLinear, CplxModReLU, CplxSequential
from cplxmodule.nn.masked import CplxLinearMasked, LinearMasked, compact, to_masked

SIZE = 2048
# one thread: on the shared 2-core machine a second OpenMP thread waits for
# a busy core, and sparse products then vary by 100x between runs
pytestmark = pytest.mark.usefixtures("one_thread")


class _DenseMasked(torch.nn.Module):
    """``weight * mask`` then the dense product, at every call."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        layer = self.layer
        weight = layer.weight * layer.mask
        if isinstance(weight, cplx.Cplx):
            return cplx.linear(x, weight, layer.bias)
        return F.linear(x, weight, layer.bias)


def _input(is_complex, batch):
    torch.manual_seed(1)
    return cplx.randn(batch, SIZE) if is_complex else torch.randn(batch, SIZE)


def unstructured(is_complex, density, variant):
    torch.manual_seed(0)
    layer = (CplxLinearMasked if is_complex else LinearMasked)(SIZE, SIZE)
    layer.mask = torch.rand(SIZE, SIZE) < density
    model = torch.nn.Sequential(layer).eval()
    return compact(model) if variant == "compact" else _DenseMasked(layer)


def structured(is_complex, variant):
    torch.manual_seed(0)
    Linear = CplxLinear if is_complex else torch.nn.Linear
    Sequential = CplxSequential if is_complex else torch.nn.Sequential
    act = CplxModReLU(0.1) if is_complex else torch.nn.ReLU()
    if variant == "shrunk-dense":
        return Sequential(Linear(SIZE, SIZE // 2, bias=False), act, Linear(SIZE // 2, SIZE)).eval()
    Masked = CplxLinearMasked if is_complex else LinearMasked
    first, second = Masked(SIZE, SIZE, bias=False), Masked(SIZE, SIZE)
    first.mask = (torch.arange(SIZE) % 2 == 0).float().unsqueeze(1).expand(SIZE, SIZE)
    second.mask = torch.ones(SIZE, SIZE)
    masked = Sequential(first, act, second).eval()
    if variant == "compact":
        return compact(masked, max_density=0.0)
    return Sequential(_DenseMasked(first), act, _DenseMasked(second))


def cases():
    for is_complex in (False, True):
        kind = "cplx" if is_complex else "real"
        for batch in (1, 64):
            for density in (0.1, 0.01):
                for variant in ("masked", "compact"):
                    group = f"{kind}-{SIZE}-sparsity{1 - density:.0%}-batch{batch}"
                    yield pytest.param(
                        is_complex, batch, density, variant, group, id=f"{group}-{variant}"
                    )
            for variant in ("masked", "compact", "shrunk-dense"):
                group = f"{kind}-{SIZE}-structured-batch{batch}"
                yield pytest.param(is_complex, batch, None, variant, group, id=f"{group}-{variant}")


def _time_inference(benchmark, model, x):
    """Time ``model(x)`` under :func:`torch.inference_mode`, after one untimed call."""

    def step():
        with torch.inference_mode():
            return model(x)

    step()
    benchmark(step)


@pytest.mark.parametrize("is_complex, batch, density, variant, group", list(cases()))
def test_compact_inference(benchmark, is_complex, batch, density, variant, group):
    if density is None:
        model = structured(is_complex, variant)
    else:
        model = unstructured(is_complex, density, variant)
    x = _input(is_complex, batch)
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference="compact")
    _time_inference(benchmark, model, x)


# --- whole channels: structured sparsity through a convolutional network ----

DEAD_CHANNELS = 0.75


def demo_net(is_complex):
    return ModulationNet(10, complex=is_complex), (1 if is_complex else 2, 128)


def conv32_net(is_complex):
    if is_complex:
        conv, bn, relu, pool, flatten, linear = (
            cnn.CplxConv2d, cnn.CplxBatchNorm2d, cnn.CplxSplitReLU, cnn.CplxMaxPool2d,
            cnn.CplxFlatten, cnn.CplxLinear,
        )
        seq, average = cnn.CplxSequential, cnn.CplxAdaptiveAvgPool2d
    else:
        conv, bn, relu, pool, flatten, linear = (
            torch.nn.Conv2d, torch.nn.BatchNorm2d, torch.nn.ReLU, torch.nn.MaxPool2d,
            torch.nn.Flatten, torch.nn.Linear,
        )
        seq, average = torch.nn.Sequential, torch.nn.AdaptiveAvgPool2d
    net = seq(
        conv(3, 64, 3, padding=1), bn(64), relu(), pool(2),
        conv(64, 128, 3, padding=1), bn(128), relu(), pool(2),
        conv(128, 128, 3, padding=1), bn(128), relu(), average(1),
        flatten(), linear(128, 10),
    )
    return net, (3, 32, 32)


def channel_pruned(build, is_complex):
    """``(dense, masked, input)``: the dense net and its twin with 75 % of channels masked."""
    torch.manual_seed(0)
    dense, shape = build(is_complex)
    x = (cplx.randn if is_complex else torch.randn)(64, *shape)
    dense.train()
    with torch.no_grad():  # running statistics of the batch norms
        dense(x)
    dense.eval()
    masked = to_masked(dense).eval()
    for layer in masked.modules():
        if hasattr(layer, "mask"):
            weight = layer.weight
            mask = torch.ones((weight.real if is_complex else weight).shape)
            if weight.dim() > 2:  # a convolution: its first 75 % channels are dead
                mask[: int(DEAD_CHANNELS * mask.shape[0])] = 0
            layer.mask = mask
    return dense, masked, x


def channel_cases():
    for name in ("demo", "conv32"):
        for is_complex in (False, True):
            group = f"{name}-{'cplx' if is_complex else 'real'}-channels75%-batch64"
            for variant in ("dense", "masked", "compact"):
                yield pytest.param(name, is_complex, variant, group, id=f"{group}-{variant}")


@pytest.mark.parametrize("name, is_complex, variant, group", list(channel_cases()))
def test_compact_channels(benchmark, name, is_complex, variant, group):
    build = {"demo": demo_net, "conv32": conv32_net}[name]
    dense, masked, x = channel_pruned(build, is_complex)
    small = compact(masked)
    with torch.inference_mode():
        # the compact model computes what the masked one does
        want, got = masked(x), small(x)
        if is_complex and isinstance(want, cplx.Cplx):
            want, got = torch.stack([want.real, want.imag]), torch.stack([got.real, got.imag])
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    model = {"dense": dense, "masked": masked, "compact": small}[variant]
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference="compact")
    _time_inference(benchmark, model, x)


# --- a U-Net: a level's channels read by the next level and by the decoder --


def unet_pruned(fraction):
    """``(dense, masked, input)``: CplxUNet, ``fraction`` of every level's channels masked."""
    torch.manual_seed(0)
    dense = CplxUNet(1, channels=(32, 64))
    x = cplx.randn(8, 1, 64, 64)  # spectrograms of 64 frequencies and frames
    dense.train()
    with torch.no_grad():
        dense(x)
    dense.eval()
    masked = to_masked(dense).eval()
    last = masked.decoder[0].conv  # the output: its channels stay
    for layer in masked.modules():
        if hasattr(layer, "mask"):
            mask = torch.ones(layer.weight.real.shape)
            if layer is not last:
                dim = 1 if isinstance(layer, cnn.CplxConvTranspose2d) else 0
                mask.narrow(dim, 0, int(fraction * mask.shape[dim])).zero_()
            layer.mask = mask
    return dense, masked, x


@pytest.mark.parametrize("variant", ["dense", "masked", "compact", "compact-sequentials"])
def test_compact_unet_channels(benchmark, variant):
    """Three quarters of CplxUNet's channels: compact(example_inputs=...) removes them."""
    dense, masked, x = unet_pruned(0.75)
    small = compact(masked, example_inputs=(x[:2],))
    with torch.inference_mode():
        torch.testing.assert_close(cplx.to_complex(small(x)), cplx.to_complex(masked(x)),
                                   rtol=1e-4, atol=1e-4)
    _time_graph_variant(benchmark, "unet-cplx-channels75%-batch8", variant, dense, masked, small, x)


def _time_graph_variant(benchmark, group, variant, dense, masked, small, x):
    """Time ``variant`` of a model that ``compact`` follows through its forward.

    ``small`` is ``masked`` compacted with ``example_inputs``; the variant
    ``"compact-sequentials"`` compacts it without (every channel kept).
    """
    model = {"dense": dense, "masked": masked, "compact": small}.get(variant)
    if variant == "compact-sequentials":
        model = compact(masked)
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference="compact")
    _time_inference(benchmark, model, x)


# --- inner channels of a residual network: chains inside its own forward -----


# the layers that write the streams of the three stages (the last one's
# reaches the classifier through a flatten and the read-out)
STREAM_WRITERS = ("stem", "stages.0.conv2", "stages.1.conv2",
                  "stages.2.conv2", "stages.2.shortcut", "stages.3.conv2",
                  "stages.4.conv2", "stages.4.shortcut", "stages.5.conv2")


def resnet_pruned(fraction, stream=False):
    """``(dense, masked, input)``: CplxResNet, each block's inner channels ``fraction`` masked.

    With ``stream``, the same fraction of every stage's stream too.
    """
    torch.manual_seed(0)
    dense = CplxResNet(3, 10)  # widths (16, 32, 64), two blocks each
    x = cplx.randn(32, 3, 32, 32)
    dense.train()
    with torch.no_grad():  # running statistics of the batch norms
        dense(x)
    dense.eval()
    masked = to_masked(dense).eval()
    for name, layer in masked.named_modules():
        if hasattr(layer, "mask"):
            mask = torch.ones(layer.weight.real.shape)
            # a block's first convolution: its inner channels
            if name.endswith("conv1") or stream and name in STREAM_WRITERS:
                mask[: int(fraction * mask.shape[0])] = 0
            layer.mask = mask
    return dense, masked, x


@pytest.mark.parametrize("variant", ["dense", "masked", "compact", "compact-sequentials"])
def test_compact_resnet_inner_channels(benchmark, variant):
    """Half the inner channels of CplxResNet: compact(example_inputs=...) removes them."""
    dense, masked, x = resnet_pruned(0.5)
    small = compact(masked, example_inputs=(x[:2],))
    with torch.inference_mode():
        torch.testing.assert_close(small(x), masked(x), rtol=1e-4, atol=1e-4)
    _time_graph_variant(benchmark, "resnet-cplx-inner50%-batch32", variant, dense, masked, small, x)


@pytest.mark.parametrize("variant", ["dense", "masked", "compact", "compact-sequentials"])
def test_compact_resnet_streams(benchmark, variant):
    """Half the inner channels and half of every stream: compact removes both."""
    dense, masked, x = resnet_pruned(0.5, stream=True)
    small = compact(masked, example_inputs=(x[:2],))
    assert small.stem.out_channels < 16 and small.stages[2].shortcut.out_channels < 32
    assert small.classifier.in_features < masked.classifier.in_features
    with torch.inference_mode():  # real logits
        torch.testing.assert_close(small(x), masked(x), rtol=1e-4, atol=1e-4)
    _time_graph_variant(benchmark, "resnet-cplx-inner50%-streams50%-batch32", variant, dense, masked, small, x)


# --- the default choice of CSR, at its threshold and on small models ---------


def threshold_cases():
    for is_complex, sizes in ((False, (512, 1024)), (True, (256, 512))):
        kind = "cplx" if is_complex else "real"
        for size in sizes:
            for batch in (1, 64):
                group = f"threshold-{kind}-{size}-density2%-batch{batch}"
                for variant in ("compact", "csr", "dense"):
                    yield pytest.param(is_complex, size, batch, variant, group,
                                       id=f"{group}-{variant}")


@pytest.mark.parametrize("is_complex, size, batch, variant, group", list(threshold_cases()))
def test_compact_threshold(benchmark, is_complex, size, batch, variant, group):
    torch.manual_seed(0)
    layer = (CplxLinearMasked if is_complex else LinearMasked)(size, size)
    layer.mask = torch.rand(size, size) < 0.02
    model = torch.nn.Sequential(layer).eval()
    max_density = {"compact": None, "csr": 1.0, "dense": 0.0}[variant]
    small = compact(model, max_density=max_density)
    x = cplx.randn(batch, size) if is_complex else torch.randn(batch, size)
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference="compact")
    _time_inference(benchmark, small, x)


class GRUClassifier(torch.nn.Module):
    def __init__(self, features=8, hidden=64, classes=5):
        super().__init__()
        self.gru = cnn.CplxGRU(features, hidden, batch_first=True)
        self.head = cnn.CplxLinear(hidden, classes)

    def forward(self, x):
        output, _ = self.gru(x)
        return self.head(output[:, -1])


class TransformerClassifier(torch.nn.Module):
    def __init__(self, features=8, d_model=64, classes=5):
        super().__init__()
        self.embed = cnn.CplxLinear(features, d_model)
        self.position = cnn.CplxSinusoidalPositionalEncoding(d_model, batch_first=True)
        layer = cnn.CplxTransformerEncoderLayer(d_model, 4, 128, batch_first=True)
        self.encoder = cnn.CplxTransformerEncoder(layer, 2)
        self.head = cnn.CplxLinear(d_model, classes)

    def forward(self, x):
        z = self.encoder(self.position(self.embed(x)))
        return self.head(cplx.Cplx(z.real.mean(1), z.imag.mean(1)))


def classifier(name):
    """``(masked model, input)``: a small classifier with 87 % of its weights masked."""
    torch.manual_seed(0)
    model = {"gru": GRUClassifier, "transformer": TransformerClassifier}[name]()
    masked = to_masked(model).eval()
    for layer in masked.modules():
        if hasattr(layer, "mask"):
            layer.mask = torch.rand(layer.weight.real.shape) < 0.13
    return masked, cplx.randn(16, 32, 8)


def classifier_cases():
    for name in ("gru", "transformer"):
        group = f"{name}-cplx-sparsity87%-batch16"
        for variant in ("masked", "compact", "csr"):
            yield pytest.param(name, variant, group, id=f"{group}-{variant}")


@pytest.mark.parametrize("name, variant, group", list(classifier_cases()))
def test_compact_small_classifiers(benchmark, name, variant, group):
    masked, x = classifier(name)
    model = {
        "masked": masked, "compact": compact(masked), "csr": compact(masked, max_density=0.15),
    }[variant]
    with torch.inference_mode():
        torch.testing.assert_close(
            torch.view_as_real(cplx.to_complex(model(x))),
            torch.view_as_real(cplx.to_complex(masked(x))), rtol=1e-4, atol=1e-4,
        )
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference="compact")
    _time_inference(benchmark, model, x)
