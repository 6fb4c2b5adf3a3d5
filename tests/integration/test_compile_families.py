"""Every model family under ``torch.compile(fullgraph=True)``, training and inference.

The compile column of the conformance table: one test per family, each a
small model of the family's layers whose compiled training step (the loss,
the Bayesian layers' penalties included, and its gradients) and compiled
inference match the same model run eagerly. ``fullgraph=True`` makes any
graph break an error.

Compilation is slow on small CPUs: the fast tests capture each family with
dynamo alone (the ``eager`` backend: where a graph break would be); the
slow ones (``-m slow``) trace every family into AOTAutograd's joint graph
of real aten operators (``aot_eager``: the forward and backward that
inductor starts from), and compile the key families (dense, convolution
with pooling by modulus, masked, Bayesian) with inductor. Layer-by-layer capture of every layer is in
``tests/integration/test_layers_compile.py``; export and ONNX of every
layer in ``tests/integration/test_layer_table_export.py``.
"""

import copy
import shutil

import pytest
import torch

from cplxmodule import nn
from cplxmodule.cplx import Cplx
from cplxmodule.nn import masked, relevance
from cplxmodule.nn.relevance import named_penalties

pytestmark = [pytest.mark.inductor, pytest.mark.usefixtures("one_thread")]

needs_compiler = pytest.mark.skipif(shutil.which("g++") is None, reason="inductor needs a C++ compiler")


def cplx_randn(*shape, generator):
    return Cplx(torch.randn(*shape, generator=generator), torch.randn(*shape, generator=generator))


def dense():
    return nn.CplxSequential(nn.CplxLinear(6, 5), nn.CplxModReLU(0.1), nn.CplxLinear(5, 4)), (3, 6)


def conv():
    return nn.CplxSequential(
        nn.CplxConv1d(2, 3, 3, padding=1), nn.CplxMaxPool1d(2), nn.CplxConvTranspose1d(3, 2, 2, stride=2),
    ), (3, 2, 8)


def masked_layers():
    torch.manual_seed(0)
    conv = masked.CplxConv1dMasked(2, 3, 3)
    conv.mask = torch.rand(3, 2, 3) < 0.5
    linear = masked.CplxLinearMasked(6, 4)
    linear.mask = torch.rand(4, 6) < 0.5
    return nn.CplxSequential(conv, nn.CplxFlatten(), linear), (3, 2, 4)


def bayesian():
    model = nn.CplxSequential(
        relevance.CplxLinearVD(6, 5),
        relevance.CplxLinearARD(5, 4),
        nn.CplxToConcatenatedReal(),
        relevance.LinearL0(8, 3),
    )
    with torch.no_grad():  # noise of the local reparameterisation that shows
        model[0].log_sigma2.uniform_(-4, 0)
        model[1].log_sigma2.uniform_(-4, 0)
    return model, (3, 6)


def channels():
    return nn.CplxSequential(
        relevance.CplxConv1dChannelVD(2, 3, 3),
        relevance.CplxConv1dChannelARD(3, 3, 1),
        nn.CplxFlatten(),
        relevance.CplxLinearChannelL0(6, 2),
    ), (3, 2, 4)


def norms():
    return nn.CplxSequential(
        nn.CplxBatchNorm1d(2), nn.CplxLayerNorm(4), nn.CplxGroupNorm(1, 2), nn.CplxRMSNorm(4),
    ), (3, 2, 4)


def pooling():
    return nn.CplxSequential(nn.CplxMaxPool1d(2), nn.CplxAdaptiveMaxPool1d(2)), (3, 2, 8)


def activations():
    return nn.CplxSequential(
        nn.CplxModReLU(0.2), nn.CplxCardioid(), nn.CplxZReLU(), nn.CplxSplitTanh(), nn.CplxModTanh(),
    ), (3, 4)


def spectral():
    return nn.CplxSequential(nn.CplxSTFT(8, hop_length=2, learnable_window=True), nn.CplxFlatten(1), nn.CplxFFT()), (
        3, 16,
    )


def gru():
    return nn.CplxGRU(3, 4, batch_first=True), (2, 5, 3)


def lstm():
    return nn.CplxLSTM(3, 4, batch_first=True), (2, 5, 3)


def attention():
    return nn.CplxMultiheadAttention(4, 2, batch_first=True), (2, 5, 4)


def transformer():
    layer = nn.CplxTransformerEncoderLayer(4, 2, 8, dropout=0.1, batch_first=True)
    return nn.CplxTransformerEncoder(layer, 2), (2, 5, 4)


def s4d():
    return nn.CplxS4D(4, 8), (2, 4, 6)


class Step(torch.nn.Module):
    """One model's loss on a complex input given as its parts: the sum of squares
    of its outputs, plus its Bayesian layers' penalties in training."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, real, imag):
        z = Cplx(real, imag)
        if isinstance(self.model, nn.CplxMultiheadAttention):
            output = self.model(z, z, z)
        else:
            output = self.model(z)
        loss = sum(part.square().sum() for part in parts(output))
        if self.training:
            loss = loss + sum(penalty for _, penalty in named_penalties(self.model))
        return loss


def parts(output):
    if isinstance(output, Cplx):
        return [output.real, output.imag]
    if isinstance(output, torch.Tensor):
        return [output]
    return [t for value in output if value is not None for t in parts(value)]


def run(step, inputs, reference):
    """The loss of one call and, in training, the gradients of ``reference``'s
    parameters and of the input. Every call starts from one seed: the noise
    of the Bayesian layers and of dropout is drawn alike."""
    real, imag = (t.detach().clone().requires_grad_(reference.training) for t in inputs)
    torch.manual_seed(1)
    loss = step(real, imag)
    if not reference.training:
        return [loss.detach()]
    loss.backward()
    grads = [p.grad for p in reference.parameters()] + [real.grad, imag.grad]
    return [loss.detach()] + grads


def check(family, backend, training):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model, shape = family()
    eager = Step(model).train(training)
    twin = copy.deepcopy(eager)
    compiled = torch.compile(twin, fullgraph=True, backend=backend)
    generator = torch.Generator().manual_seed(0)
    z = cplx_randn(*shape, generator=generator)
    for _ in range(2):  # the second call runs the cached graph (and updated running statistics)
        actual = run(compiled, (z.real, z.imag), twin)
        expected = run(eager, (z.real, z.imag), eager)
        assert len(actual) == len(expected)
        for i, (got, want) in enumerate(zip(actual, expected)):
            # compiled code sums the complex products in another order
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg=lambda m: f"output {i}: {m}")
    for (name, b), b_twin in zip(eager.named_buffers(), twin.buffers()):
        torch.testing.assert_close(b_twin, b, rtol=1e-4, atol=1e-5, msg=name)


FAST = [dense, conv, masked_layers, bayesian, norms, pooling, activations, spectral, attention, s4d]
# each of these takes more than 3 s to capture on two busy cores
SLOW = [channels, gru, lstm, transformer]
FAMILIES = FAST + SLOW


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("family", FAST, ids=lambda f: f.__name__)
def test_family_compiles_whole(family, training):
    # dynamo's capture alone: a graph break fails, and the captured graph runs
    check(family, "eager", training)


@pytest.mark.slow
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("family", SLOW, ids=lambda f: f.__name__)
def test_slow_family_compiles_whole(family, training):
    check(family, "eager", training)


# The joint graphs and inductor's code cost seconds to minutes of compilation
# per family: CI takes the families whose decompositions differ most
# (a recurrence, the real-ops transforms, attention, the Bayesian draws).
@pytest.mark.slow
@pytest.mark.parametrize("family", [spectral, gru, attention, s4d], ids=lambda f: f.__name__)
def test_family_traces_to_aten(family):
    # AOTAutograd's joint graph of real aten operators: what inductor compiles
    check(family, "aot_eager", True)


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("family", [dense, bayesian], ids=lambda f: f.__name__)
def test_family_compiles_with_inductor(family):
    # inductor draws its own random numbers unless told to fall back to torch's
    with torch._inductor.config.patch(fallback_random=True):
        check(family, "inductor", True)


@pytest.mark.parametrize(
    "n, shape, kwargs",
    [
        (1, (2, 3, 9), dict(kernel_size=2)),
        (1, (2, 3, 10), dict(kernel_size=3, stride=2, padding=1)),
        (2, (2, 3, 5, 6), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))),
        (3, (1, 2, 4, 5, 4), dict(kernel_size=2)),
    ],
    ids=["1d", "1d-overlapping-padded", "2d-overlapping-padded", "3d"],
)
def test_compiled_max_pooling_selects_as_eager(n, shape, kwargs):
    # compiled, max pooling by modulus picks the same elements as eager, ties
    # of modulus and NaN included, and routes the same gradients, exactly
    from cplxmodule import cplx

    pool = getattr(cplx, f"max_pool{n}d")
    generator = torch.Generator().manual_seed(0)
    real = torch.randn(*shape, generator=generator).round()  # rounded: ties of modulus
    imag = torch.randn(*shape, generator=generator).round()
    real.view(-1)[3] = float("nan")
    weights = torch.randn(2, *pool(Cplx(real, imag), **kwargs).shape, generator=generator)

    def run(function):
        parts = [real.clone().requires_grad_(), imag.clone().requires_grad_()]
        output = function(*parts)
        (weights[0] * output.real.nan_to_num() + weights[1] * output.imag).sum().backward()
        return [output.real, output.imag] + [p.grad for p in parts]

    def function(a, b):
        return pool(Cplx(a, b), **kwargs)

    torch._dynamo.reset()
    expected = run(function)
    actual = run(torch.compile(function, fullgraph=True, backend="aot_eager"))
    for got, want in zip(actual, expected):
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
