"""The recurrent and spectral layers, deployed, under ``torch.compile(fullgraph=True)``.

The layers: the complex RNN, GRU and LSTM (off their defaults: two layers,
bidirectional, ``batch_first``, ``proj_size``), their three cells, and the
FFT, inverse FFT, STFT, inverse STFT and analytic-signal layers. Each sits
in a model of real tensors at its boundary, as it is deployed:
``RealToCplx`` (the interleaved layout) in, ``CplxToReal`` out, for every
complex output (the states of the recurrent layers too). The reference is
always the eager model on the same input; the eager layers take torch's
native complex kernels where they have them, the compiled ones real ops
only, so the comparison checks one against the other.

The models run side by side in one module (``Zoo``), so that dynamo
captures one graph for all of them (a capture costs seconds), with the
``eager`` backend (where a graph break fails), in training mode: outputs
and the inputs' gradients. Their export (``torch.export`` and both ONNX
exporters, with a dynamic batch) is tests/integration/test_layer_table_export.py,
over every layer of the table.

The batch axis is the first one but for the LSTM, which takes ``(L, N, *)``.
Sequence and signal lengths are fixed: the recurrences unroll over the time
steps, and a transform's matrices depend on its length.
"""

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
