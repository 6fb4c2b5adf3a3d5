"""The recurrent and spectral layers, deployed: ONNX with both exporters, torch.export, torch.compile.

The layers: the complex RNN, GRU and LSTM (off their defaults: two layers,
bidirectional, ``batch_first``, ``proj_size``), their three cells, and the
FFT, inverse FFT, STFT, inverse STFT and analytic-signal layers. Each sits
in a model of real tensors at its boundary, as it is deployed:
``RealToCplx`` (the interleaved layout) in, ``CplxToReal`` out, for every
complex output (the states of the recurrent layers too). The reference is
always the eager model on the same input; the eager layers take torch's
native complex kernels where they have them, the exported and compiled ones
real ops only, so the comparison checks one against the other.

As tests/integration/test_layers_compile_export.py does, the models run
side by side in one module (``Zoo``), so that each mechanism captures one
graph for all of them (a capture costs seconds):

- the TorchScript ONNX exporter (``dynamo=False``) with ``dynamic_axes`` and
  the default one (``dynamo=True``, without its graph optimisations, which
  cost twice the export) with ``dynamic_shapes``, each exported at batch
  size 3 and run in onnxruntime at batch sizes 2 and 5;
- :func:`torch.export.export` with a dynamic batch, run at 2 and 5;
- ``torch.compile(fullgraph=True)`` with the ``eager`` backend (dynamo's
  graph capture, where a graph break fails), in training mode: outputs and
  the inputs' gradients.

The batch axis is the first one but for the LSTM, which takes ``(L, N, *)``.
Sequence and signal lengths are fixed: the recurrences unroll over the time
steps, and a transform's matrices depend on its length.
"""

import io
import warnings

import pytest
import torch

from cplxmodule import nn
from cplxmodule.cplx import Cplx

pytestmark = pytest.mark.usefixtures("one_thread")

# id -> (factory, the complex shape of the input without the batch axis, the
# batch axis, whether the input is real (not complex), the call)
SPECS = {
    "RNN": (lambda: nn.CplxRNN(3, 4, nonlinearity="relu", batch_first=True),
            (3, 3), 0, False, None),
    "GRU": (lambda: nn.CplxGRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
            (3, 3), 0, False, None),
    "LSTM": (lambda: nn.CplxLSTM(3, 5, bidirectional=True, proj_size=2),
             (3, 3), 1, False, None),
    "RNNCell": (lambda: nn.CplxRNNCell(3, 4, nonlinearity="tanh"), (3,), 0, False, None),
    "GRUCell": (lambda: nn.CplxGRUCell(3, 4), (3,), 0, False, None),
    "LSTMCell": (lambda: nn.CplxLSTMCell(3, 4, bias=False), (3,), 0, False, None),
    "FFT": (lambda: nn.CplxFFT(dim=1, norm="ortho"), (12, 2), 0, False, None),
    "IFFT": (lambda: nn.CplxIFFT(n=10), (3, 8), 0, False, None),
    "STFT": (lambda: nn.CplxSTFT(8, hop_length=3, win_length=6, learnable_window=True),
             (20,), 0, False, None),
    "ISTFT": (lambda: nn.CplxISTFT(8, hop_length=2, normalized=True), (8, 7), 0, False,
              lambda layer, x: layer(x, length=15)),
    "Analytic": (lambda: nn.CplxAnalytic(dim=1), (9, 2), 0, True, None),
}
NAMES = list(SPECS)
EXPORT_BATCH, RUN_BATCHES = 3, (2, 5)


def complex_outputs(output):
    """The Cplx outputs of a layer (its states too), in order."""
    if isinstance(output, Cplx):
        return [output]
    return [z for item in output for z in complex_outputs(item)]


def real_shape(name, batch):
    """The shape of the real input of the model of ``name``: the interleaved layout."""
    shape, axis, real = SPECS[name][1], SPECS[name][2], SPECS[name][3]
    shape = list(shape[:-1]) + [shape[-1] * (1 if real else 2)]
    shape.insert(axis, batch)
    return shape


class Deployed(torch.nn.Module):
    """A layer between real tensors: ``RealToCplx`` in (unless it takes a real
    input), ``CplxToReal`` out for each of its complex outputs."""

    def __init__(self, name):
        super().__init__()
        factory, _, _, real, call = SPECS[name]
        torch.manual_seed(0)
        self.layer = factory()
        # parameters away from their initial values (zeros, ones, ...)
        with torch.no_grad():
            for p in self.layer.parameters():
                p.add_(0.1 * torch.randn_like(p))
        self.to_cplx = torch.nn.Identity() if real else nn.RealToCplx()
        self.to_real = nn.CplxToReal()
        self.call = call or (lambda layer, x: layer(x))

    def forward(self, x):
        return tuple(self.to_real(z) for z in complex_outputs(self.call(self.layer, self.to_cplx(x))))


class Zoo(torch.nn.Module):
    """The deployed models side by side: one real input each, their outputs in order."""

    def __init__(self, names=NAMES):
        super().__init__()
        self.names = list(names)
        self.models = torch.nn.ModuleDict({name: Deployed(name) for name in self.names})

    def forward(self, *inputs):
        return tuple(y for name, x in zip(self.names, inputs) for y in self.models[name](x))

    def labels(self):
        """The model of each output, in order."""
        return [name for name in self.names
                for _ in self.models[name](torch.randn(real_shape(name, 2)))]


def inputs(names, batch, requires_grad=False):
    generator = torch.Generator().manual_seed(batch)
    return [torch.randn(real_shape(name, batch), generator=generator)
            .requires_grad_(requires_grad) for name in names]


def assert_outputs_close(actual, expected, labels, rtol=1e-4, atol=1e-5):
    assert len(actual) == len(expected) == len(labels)
    for a, e, label in zip(actual, expected, labels):
        torch.testing.assert_close(a, e, rtol=rtol, atol=atol, msg=lambda m: f"{label}: {m}")


@pytest.fixture(scope="module")
def zoo():
    return Zoo().eval()


def run_onnx(zoo, model_bytes):
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only, not the constants it leaves unfolded
    session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    assert len(names) == len(zoo.names)
    labels = zoo.labels()
    for batch in RUN_BATCHES:
        xs = inputs(zoo.names, batch)
        outputs = session.run(None, {n: x.numpy() for n, x in zip(names, xs)})
        with torch.no_grad():
            expected = zoo(*xs)
        assert_outputs_close([torch.from_numpy(o) for o in outputs], expected, labels)


@pytest.mark.onnx
def test_torchscript_onnx_export_with_a_dynamic_batch(zoo):
    pytest.importorskip("onnx")
    names = [f"x_{name}" for name in zoo.names]
    axes = {n: {SPECS[name][2]: "batch"} for n, name in zip(names, zoo.names)}
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter is deprecated
        torch.onnx.export(zoo, tuple(inputs(zoo.names, EXPORT_BATCH)), buffer, dynamo=False,
                          input_names=names, dynamic_axes=axes)
    run_onnx(zoo, buffer.getvalue())


def dynamic_shapes(names):
    batch = torch.export.Dim("batch", min=2)
    # one entry for the variadic `inputs`: the tuple of its shapes
    return (tuple({SPECS[name][2]: batch} for name in names),)


@pytest.mark.onnx
def test_dynamo_onnx_export_with_a_dynamic_batch(zoo):
    pytest.importorskip("onnxscript")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # ``optimize=False``: the exporter's graph optimisations (which the
        # models also pass) would triple the time of this test
        program = torch.onnx.export(zoo, tuple(inputs(zoo.names, EXPORT_BATCH)), dynamo=True,
                                    dynamic_shapes=dynamic_shapes(zoo.names), verbose=False,
                                    optimize=False)
    run_onnx(zoo, program.model_proto.SerializeToString())


def test_torch_export_with_a_dynamic_batch(zoo):
    example = tuple(inputs(zoo.names, EXPORT_BATCH))
    exported = torch.export.export(zoo, example, dynamic_shapes=dynamic_shapes(zoo.names))
    # real ops only: no value of the graph has a complex dtype
    complex_nodes = [
        node.format_node() for node in exported.graph.nodes
        if isinstance(value := node.meta.get("val"), torch.Tensor) and value.is_complex()
    ]
    assert not complex_nodes, complex_nodes[:3]
    module, labels = exported.module(), zoo.labels()
    for batch in RUN_BATCHES:
        xs = inputs(zoo.names, batch)
        with torch.no_grad():
            assert_outputs_close(module(*xs), zoo(*xs), labels)


@pytest.mark.inductor
def test_compile_fullgraph_matches_eager():
    torch._dynamo.reset()
    eager = Zoo().train()
    compiled = torch.compile(Zoo().train(), fullgraph=True, backend="eager")
    labels = eager.labels()
    xs, ys = inputs(eager.names, 3, True), inputs(eager.names, 3, True)
    expected, actual = eager(*xs), compiled(*ys)
    assert_outputs_close(actual, expected, labels)
    # a random linear functional of the outputs, so that no gradient cancels
    weights = [torch.randn_like(e) for e in expected]
    sum((w * e).sum() for w, e in zip(weights, expected)).backward()
    sum((w * a).sum() for w, a in zip(weights, actual)).backward()
    assert_outputs_close([y.grad for y in ys], [x.grad for x in xs], eager.names)
