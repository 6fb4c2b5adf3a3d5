"""compact(example_inputs=...) removes channels along chains inside a model's own forward.

One forward call on the example inputs proves which layer hands its whole
output to which module and to nothing else; channels then go along those
chains as along a Sequential's. The reference is the masked model itself in
eval mode, in float64; what the record cannot prove keeps its channels.
"""

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.models import CplxResNet, CplxUNet, CplxVisionTransformer
from cplxmodule.nn import (
    CplxConv2d, CplxFlatten, CplxLinear, CplxSplitReLU, CplxToConcatenatedReal,
)
from cplxmodule.nn.masked import _dataflow, compact, to_masked
from cplxmodule.nn.relevance import compute_ard_masks, to_bayesian

pytestmark = pytest.mark.usefixtures("one_thread")
DTYPE = torch.float64


def native(x):
    return torch.complex(x.real, x.imag) if isinstance(x, Cplx) else x


def masked_with_dead_rows(model, suffix):
    """``model``'s masked twin, every other output channel of the layers ``*suffix`` masked out."""
    masked = to_masked(model)
    for name, layer in masked.named_modules():
        if hasattr(layer, "mask"):
            mask = torch.ones_like(layer.weight.real)
            if name.endswith(suffix):
                mask[::2] = 0
                with torch.no_grad():
                    if layer.bias is not None:  # a dead channel outputs zero
                        layer.bias.real[::2], layer.bias.imag[::2] = 0, 0
            layer.mask = mask
    return masked.eval()


def out_sizes(model, suffix):
    return [getattr(m, "out_channels", getattr(m, "out_features", None))
            for name, m in model.named_modules() if name.endswith(suffix)]


def test_a_residual_networks_inner_channels_go():
    torch.manual_seed(0)
    masked = masked_with_dead_rows(CplxResNet(1, 4, widths=(4, 8), blocks=(1, 1), dtype=DTYPE),
                                   "conv1")
    x = cplx.randn(3, 1, 8, 8, dtype=DTYPE)
    assert out_sizes(compact(masked), "conv1") == [4, 8]  # the blocks' forward hides them
    small = compact(masked, example_inputs=(x,))
    assert out_sizes(small, "conv1") == [2, 4]
    assert [m.in_channels for n, m in small.named_modules() if n.endswith("conv2")] == [2, 4]
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))
        y = cplx.randn(5, 1, 11, 6, dtype=DTYPE)  # other sizes take the same path
        torch.testing.assert_close(native(small(y)), native(masked(y)))


def test_a_transformers_hidden_units_go():
    torch.manual_seed(0)
    model = CplxVisionTransformer(1, 3, image_size=8, patch_size=4, d_model=8,
                                  dim_feedforward=16, dtype=DTYPE)
    masked = masked_with_dead_rows(model, "linear1")
    x = cplx.randn(2, 1, 8, 8, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert out_sizes(small, "linear1") == [8, 8]
    with torch.no_grad():
        torch.testing.assert_close(small(x), masked(x))


class Block(torch.nn.Module):
    """conv1, a split ReLU and conv2; ``use`` says what else reads conv1's output."""

    def __init__(self, use):
        super().__init__()
        self.use = use
        self.conv1 = CplxConv2d(2, 6, 3, padding=1, dtype=DTYPE)
        self.act = CplxSplitReLU()
        self.conv2 = CplxConv2d(6, 2, 3, padding=1, dtype=DTYPE)

    def forward(self, x):
        h = self.conv1(x)
        if self.use == "glue":  # a function between: not a module the record knows
            h = h * 2.0
        out = self.conv2(self.act(h))
        if self.use == "skip":  # conv1's output read twice
            out = out + h[:, :2]
        if self.use == "twice":  # the activation called twice
            out = out + self.act(out)
        return out


@pytest.mark.parametrize("use", ["glue", "skip", "twice"])
def test_what_the_record_cannot_prove_keeps_its_channels(use):
    torch.manual_seed(0)
    masked = masked_with_dead_rows(Block(use), "conv1")
    x = cplx.randn(2, 2, 5, 5, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert small.conv1.out_channels == 6
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))


def test_a_plain_block_loses_them():
    torch.manual_seed(0)
    masked = masked_with_dead_rows(Block("none"), "conv1")
    x = cplx.randn(2, 2, 5, 5, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert (small.conv1.out_channels, small.conv2.in_channels) == (3, 3)
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))


def test_a_bayesian_network_compacts_by_its_relevance():
    torch.manual_seed(0)
    vd = to_bayesian(CplxResNet(1, 4, widths=(4,), blocks=(1,), dtype=DTYPE)).eval()
    with torch.no_grad():
        vd.stages[0].conv1.log_sigma2[::2] = 8.0  # every other channel: noise
    x = cplx.randn(2, 1, 6, 6, dtype=DTYPE)
    small = compact(vd, threshold=3.0, example_inputs=(x,))
    assert small.stages[0].conv1.out_channels == 2
    masked = to_masked(vd, compute_ard_masks(vd, threshold=3.0)).eval()
    with torch.no_grad():
        torch.testing.assert_close(small(x), masked(x))


def test_a_compaction_that_computes_otherwise_falls_back(monkeypatch):
    torch.manual_seed(0)
    masked = masked_with_dead_rows(Block("skip"), "conv1")
    x = cplx.randn(2, 2, 5, 5, dtype=DTYPE)
    # a record that missed the skip: the chain it proves is wrong
    # (conv1, act and conv2, the first three calls)
    monkeypatch.setattr(_dataflow, "chains", lambda rec: [[m for m, *_ in rec.calls][:3]])
    with pytest.warns(UserWarning, match="computes otherwise"):
        small = compact(masked, example_inputs=(x,))
    assert small.conv1.out_channels == 6
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))


def test_example_inputs_must_be_a_tuple():
    masked = masked_with_dead_rows(Block("none"), "conv1")
    with pytest.raises(TypeError, match="`example_inputs` must be a tuple"):
        compact(masked, example_inputs=cplx.randn(1, 2, 5, 5))


# --- fan-outs: a value read by several layers, whole or concatenated -------------------------
def unet_with_dead_encoder_channels(constant):
    torch.manual_seed(0)
    masked = masked_with_dead_rows(CplxUNet(1, channels=(8, 16), dtype=DTYPE), "never")
    first = masked.encoder[0]
    first.conv.mask = torch.ones_like(first.conv.weight.real).index_fill_(
        0, torch.tensor([1, 4, 6]), 0.0)
    if constant:  # the dead channels then hold a constant that is not zero
        with torch.no_grad():
            first.bn.bias[0].fill_(0.3)  # real parts
            first.bn.bias[1].fill_(-0.2)  # imaginary parts
    return masked.eval()


@pytest.mark.parametrize("constant", [False, True], ids=["zero", "constant"])
def test_a_unets_encoder_channels_go_from_both_readers(constant):
    masked = unet_with_dead_encoder_channels(constant)
    x = cplx.randn(2, 1, 16, 12, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    # read by the next encoder level and, concatenated after the decoder's
    # channels, by the last decoder level: zero padding and a transposed
    # convolution take a constant through one of the channels, kept
    kept = 8 - 3 + (1 if constant else 0)
    assert small.encoder[0].conv.out_channels == kept
    assert small.encoder[1].conv.in_channels == kept
    assert small.decoder[0].conv.in_channels == 8 + kept
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))
        y = cplx.randn(1, 1, 9, 14, dtype=DTYPE)
        torch.testing.assert_close(native(small(y)), native(masked(y)))
    assert compact(masked).encoder[0].conv.out_channels == 8  # without the record


class Fan(torch.nn.Module):
    """conv1 read by conv2 and, concatenated along ``dim``, by conv3.

    Along the channels (``dim=1``) conv1's output follows the input's; along
    the rows (``dim=2``) it follows itself.
    """

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.conv1 = CplxConv2d(2, 6, 3, padding=1, dtype=DTYPE)
        self.conv2 = CplxConv2d(6, 2, 1, dtype=DTYPE)
        self.conv3 = CplxConv2d(8 if dim == 1 else 6, 2, 1, dtype=DTYPE)

    def forward(self, x):
        h = self.conv1(x)
        joined = cplx.cat([x, h] if self.dim == 1 else [h, h], dim=self.dim)
        return self.conv2(h) + self.conv3(joined)[:, :, :x.shape[2]]


@pytest.mark.parametrize("dim, kept", [(1, 3), (2, 6)], ids=["channels", "rows"])
def test_a_concatenation_along_the_channels_alone_is_read_through(dim, kept):
    torch.manual_seed(0)
    masked = masked_with_dead_rows(Fan(dim), "conv1")
    x = cplx.randn(2, 2, 5, 5, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert small.conv1.out_channels == kept
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))


# --- sums: a residual stream, written by several layers ----------------------------------------
def resnet_with_dead_stream(writers, model=None, size=16):
    """A CplxResNet (by default ``CplxResNet(3, 10)``) whose stream channels 0, 2, ... are dead in ``writers``."""
    torch.manual_seed(0)
    model = CplxResNet(3, 10, dtype=DTYPE) if model is None else model
    with torch.no_grad():  # running statistics: the dead channels hold constants
        model.train()(cplx.randn(4, 3, size, size, dtype=DTYPE))
    masked = to_masked(model).eval()
    for name, layer in masked.named_modules():
        if hasattr(layer, "mask"):
            mask = torch.ones_like(layer.weight.real)
            if name in writers:
                mask[::2] = 0
                if layer.bias is not None:
                    with torch.no_grad():
                        layer.bias.real[::2], layer.bias.imag[::2] = 0.5, -0.25
            layer.mask = mask
    return masked


STAGE_ONE = ("stem", "stages.0.conv2", "stages.1.conv2")


def test_a_residual_streams_channels_go_when_dead_in_every_summand():
    masked = resnet_with_dead_stream(STAGE_ONE)
    x = cplx.randn(2, 3, 16, 16, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    # the stream's dead channels hold constants (batch norms in eval, the
    # stem's bias) that zero-padded convolutions read: one carries them
    kept = 8 + 1
    for name in STAGE_ONE:
        assert small.get_submodule(name).out_channels == kept
    for name in ("stages.0.conv1", "stages.1.conv1", "stages.2.conv1", "stages.2.shortcut"):
        assert small.get_submodule(name).in_channels == kept
    assert small.stages[1].bn1.num_features == kept
    assert small.stages[0].conv1.out_channels == 16  # inner channels: all live
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))
        y = cplx.randn(3, 3, 9, 13, dtype=DTYPE)
        torch.testing.assert_close(native(small(y)), native(masked(y)))


def test_a_residual_streams_channels_stay_when_one_summand_writes_them():
    masked = resnet_with_dead_stream(STAGE_ONE[:2])  # stages.1.conv2 writes them
    small = compact(masked, example_inputs=(cplx.randn(2, 3, 16, 16, dtype=DTYPE),))
    for name in STAGE_ONE:
        assert small.get_submodule(name).out_channels == 16


@pytest.mark.parametrize("readout, blocks", [("parts", 2), ("modulus", 1)])
def test_the_last_streams_channels_go_through_the_flatten_and_the_read_out(readout, blocks):
    # the stream reaches the classifier through a norm, pooling, a flatten and
    # a read-out to real features (each block of it): the dead channels'
    # constants go into the classifier's bias
    torch.manual_seed(0)
    model = CplxResNet(3, 5, widths=(4, 8), blocks=1, readout=readout, dtype=DTYPE)
    masked = resnet_with_dead_stream(("stages.1.conv2", "stages.1.shortcut"), model, size=8)
    x = cplx.randn(2, 3, 8, 8, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert small.stages[1].conv2.out_channels == small.stages[1].shortcut.out_channels == 4
    assert small.bn.num_features == 4 and small.classifier.in_features == 4 * blocks
    with torch.no_grad():
        torch.testing.assert_close(small(x), masked(x))
        y = cplx.randn(3, 3, 11, 7, dtype=DTYPE)
        torch.testing.assert_close(small(y), masked(y))


class ReadAlong(torch.nn.Module):
    """A convolution's channels flattened, read out along ``dim`` and read by a linear layer."""

    def __init__(self, dim, flatten):
        super().__init__()
        self.conv = CplxConv2d(2, 4, 3, dtype=DTYPE)
        self.flatten = CplxFlatten(1) if flatten == "module" else None
        self.readout = CplxToConcatenatedReal(dim=dim)
        # joined along the features, or along the batch
        self.fc = torch.nn.Linear((2 if dim == -1 else 1) * 4 * 9, 3, dtype=DTYPE)

    def forward(self, x):
        h = self.conv(x)
        h = Cplx(h.real.flatten(1), h.imag.flatten(1)) if self.flatten is None else self.flatten(h)
        return self.fc(self.readout(h))


@pytest.mark.parametrize("flatten, dim, kept", [
    ("module", -1, 2),
    ("module", 0, 4),  # the blocks are examples, not features
    ("function", -1, 4),  # a function of the forward: not proven to keep the features' order
])
def test_a_read_out_goes_through_only_along_the_features_of_a_flatten_module(flatten, dim, kept):
    torch.manual_seed(0)
    masked = masked_with_dead_rows(ReadAlong(dim, flatten), "conv")
    x = cplx.randn(2, 2, 5, 5, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert small.conv.out_channels == kept
    with torch.no_grad():
        torch.testing.assert_close(small(x), masked(x))


class Residual(torch.nn.Module):
    """An MLP whose hidden features ``h`` are updated, ``h - fc2(relu(h))``, then read."""

    def __init__(self):
        super().__init__()
        self.fc1 = CplxLinear(4, 6, dtype=DTYPE)
        self.act = CplxSplitReLU()
        self.fc2 = CplxLinear(6, 6, dtype=DTYPE)
        self.fc3 = CplxLinear(6, 3, dtype=DTYPE)

    def forward(self, x):
        h = self.fc1(x)
        return self.fc3(h - self.fc2(self.act(h)))


def test_a_subtraction_couples_its_terms_and_the_constants_go_into_biases():
    torch.manual_seed(0)
    masked = masked_with_dead_rows(Residual(), "never")
    for layer in (masked.fc1, masked.fc2):  # rows 1 and 4 dead, each with a bias
        layer.mask = torch.ones_like(layer.weight.real).index_fill_(0, torch.tensor([1, 4]), 0)
    x = cplx.randn(5, 4, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    # a linear layer reads a constant the same everywhere: no channel carries it
    assert (small.fc1.out_features, small.fc2.in_features, small.fc2.out_features,
            small.fc3.in_features) == (4, 4, 4, 4)
    with torch.no_grad():
        torch.testing.assert_close(native(small(x)), native(masked(x)))
        y = cplx.randn(2, 7, 4, dtype=DTYPE)
        torch.testing.assert_close(native(small(y)), native(masked(y)))


class Functional(torch.nn.Module):
    """Elementwise torch functions between two layers, on a tensor or on each part of a Cplx."""

    def __init__(self, complex_):
        super().__init__()
        self.complex_ = complex_
        self.fc1 = (CplxLinear if complex_ else torch.nn.Linear)(4, 6, dtype=DTYPE)
        self.fc2 = (CplxLinear if complex_ else torch.nn.Linear)(6, 3, dtype=DTYPE)

    def forward(self, x):
        h = self.fc1(x)
        if self.complex_:
            h = Cplx(torch.nn.functional.leaky_relu(h.real, 0.2), h.imag.tanh())
        else:
            h = torch.nn.functional.leaky_relu(h, 0.2).tanh()
        return self.fc2(h)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "cplx"])
def test_elementwise_functions_of_the_forward_are_steps(complex_):
    torch.manual_seed(0)
    masked = masked_with_dead_rows(Functional(complex_), "never")
    masked.fc1.mask = torch.ones(6, 4).index_fill_(0, torch.tensor([0, 3]), 0)
    with torch.no_grad():  # the dead rows' biases: constants that the functions map
        bias = masked.fc1.bias
        for part in (bias.real, bias.imag) if complex_ else (bias,):
            part.uniform_(-1, 1)
    x = (cplx.randn if complex_ else torch.randn)(5, 4, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert (small.fc1.out_features, small.fc2.in_features) == (4, 4)
    with torch.no_grad():
        y = (cplx.randn if complex_ else torch.randn)(2, 3, 4, dtype=DTYPE)
        torch.testing.assert_close(native(small(y)), native(masked(y)))


class MeanReadOut(torch.nn.Module):
    """A convolution whose moduli (or ReLUs), averaged over the positions, a linear layer reads."""

    def __init__(self, complex_, keepdim=False):
        super().__init__()
        self.complex, self.keepdim = complex_, keepdim
        self.conv = (CplxConv2d if complex_ else torch.nn.Conv2d)(2, 6, 3, dtype=DTYPE)
        self.head = torch.nn.Linear(6, 3, dtype=DTYPE)

    def forward(self, x):
        features = abs(self.conv(x)) if self.complex else torch.relu(self.conv(x))
        pooled = features.mean(dim=(-2, -1), keepdim=self.keepdim)
        return self.head(pooled.flatten(1) if self.keepdim else pooled)


@pytest.mark.parametrize("complex_, keepdim, kept", [
    (True, False, 3),  # the moduli of the channels, then their means
    (False, False, 3),
    (True, True, 6),  # a flatten of the forward: not proven to keep the features' order
])
def test_a_mean_over_the_positions_hands_each_channel_to_its_feature(complex_, keepdim, kept):
    torch.manual_seed(0)
    masked = to_masked(MeanReadOut(complex_, keepdim))
    masked.conv.mask = torch.ones_like(native(masked.conv.weight).real).index_fill_(
        0, torch.tensor([0, 2, 5]), 0)
    with torch.no_grad():  # the dead channels hold their biases: their moduli go into the head's
        bias = masked.conv.bias
        for part in (bias.real, bias.imag) if complex_ else (bias,):
            part.uniform_(-1, 1)
    masked.head.mask = torch.ones(3, 6)
    masked.eval()
    x = (cplx.randn if complex_ else torch.randn)(2, 2, 6, 5, dtype=DTYPE)
    small = compact(masked, example_inputs=(x,))
    assert (small.conv.out_channels, small.head.in_features) == (kept, kept)
    with torch.no_grad():
        y = (cplx.randn if complex_ else torch.randn)(4, 2, 7, 4, dtype=DTYPE)
        torch.testing.assert_close(small(y), masked(y))
