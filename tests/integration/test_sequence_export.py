"""The sequence layers under ``torch.compile(fullgraph=True)`` and ``torch.export``.

The layers: the complex GRU and LSTM (the LSTM with ``proj_size``), the
multi-head attention, the transformer encoder layer, the S4D layer, the two
positional encodings and the unitary RNN, each with settings off its
defaults. The reference is always the eager layer on the same input.

As tests/integration/test_layers_compile.py does, each layer is
wrapped in a module of real tensors (``Parts``: the parts of the complex
inputs in, the parts of every output out), and:

- ``torch.compile(fullgraph=True)`` with the ``eager`` backend (dynamo's
  graph capture, where a graph break fails), in training mode with dropout
  off: the outputs and the inputs' gradients against eager;
- ``torch.export`` in eval mode with a dynamic batch axis and, where the
  layer allows it, dynamic sequence lengths, exported at batch size 3 and
  run at batch sizes 2 and 5 (and another length). The recurrent layers
  (GRU, LSTM, unitary RNN) loop over the time steps in Python, so their
  graph unrolls the loop for the length it was exported at: their length
  is fixed, and a dynamic one fails as ``FIXED_LENGTH`` says (strict
  xfails, so that a torch or a layer that lifts the limit is noticed), as
  it does for the S4D layer.
"""

import pytest
import torch

from cplxmodule import nn
from cplxmodule.cplx import Cplx

from ..helpers import weighted_sum

pytestmark = pytest.mark.usefixtures("one_thread")

LENGTH = 4

# id -> (factory, call of the layer on its complex inputs, the shapes of the
# complex inputs without the batch axis (the first) at sequence length ``L``,
# and the axis of the sequence length in them)
SPECS = {
    "GRU": (
        lambda: nn.CplxGRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
        lambda layer, x: layer(x),
        lambda L: [(L, 3)],
        1,
    ),
    "LSTM": (
        lambda: nn.CplxLSTM(3, 5, num_layers=2, batch_first=True, proj_size=2),
        lambda layer, x: layer(x),
        lambda L: [(L, 3)],
        1,
    ),
    "MultiheadAttention": (
        lambda: nn.CplxMultiheadAttention(4, 2, batch_first=True, kdim=3, vdim=3),
        lambda layer, q, kv: layer(q, kv, kv),
        lambda L: [(L, 4), (L + 1, 3)],
        1,
    ),
    "TransformerEncoderLayer": (
        lambda: nn.CplxTransformerEncoderLayer(
            4, 2, dim_feedforward=6, dropout=0.0, batch_first=True, norm_first=True
        ),
        lambda layer, x: layer(x, src_mask=causal_mask(x.shape[1]), is_causal=True),
        lambda L: [(L, 4)],
        1,
    ),
    "S4D": (
        lambda: nn.CplxS4D(3, d_state=4, out_proj=True),
        lambda layer, x: layer(x),
        lambda L: [(3, L)],
        2,
    ),
    "SinusoidalPositionalEncoding": (
        lambda: nn.CplxSinusoidalPositionalEncoding(
            4, dropout=0.0, max_len=16, batch_first=True, mode="multiply"
        ),
        lambda layer, x: layer(x, offset=2),
        lambda L: [(L, 4)],
        1,
    ),
    "RotaryPositionalEncoding": (
        lambda: nn.CplxRotaryPositionalEncoding(4, batch_first=True),
        lambda layer, x: layer(x, offset=1),
        lambda L: [(L, 4)],
        1,
    ),
    "UnitaryRNN": (
        lambda: nn.CplxUnitaryRNN(3, 4, batch_first=True),
        lambda layer, x: layer(x),
        lambda L: [(L, 3)],
        1,
    ),
}

# the layers whose exported graph holds the sequence length as a constant:
# the error torch.export raises with a dynamic length, and why
FIXED_LENGTH = {
    **dict.fromkeys(
        ["GRU", "LSTM", "UnitaryRNN"],
        (
            torch._dynamo.exc.UserError,
            "the recurrence is a Python loop over the time steps, which torch.export"
            " unrolls: it specialises the length ('You marked length as dynamic but your"
            " code specialized it to be a constant')",
        ),
    ),
    "S4D": (
        ValueError,
        "cplx.ssm_kernel checks that `length` is an int, which a symbolic length"
        " (torch.SymInt) is not ('ssm_kernel: `length` must be a positive int, got s..')",
    ),
}


def causal_mask(length):
    return torch.ones(length, length, dtype=torch.bool).triu(1)


def parts(outputs):
    """The real tensors of a layer's outputs (Cplx, tensors, nested tuples), in order."""
    if isinstance(outputs, Cplx):
        return [outputs.real, outputs.imag]
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    if outputs is None:
        return []
    return [t for output in outputs for t in parts(output)]


class Parts(torch.nn.Module):
    """A sequence layer as a map of real tensors: the parts of its complex
    inputs in, the real tensors of its outputs out."""

    def __init__(self, name):
        super().__init__()
        torch.manual_seed(0)
        self.name, self.layer = name, SPECS[name][0]()
        # parameters away from their initial values (zeros, ones, ...)
        with torch.no_grad():
            for p in self.layer.parameters():
                p.add_(0.1 * torch.randn_like(p))

    def forward(self, *tensors):
        xs = [Cplx(re, im) for re, im in zip(tensors[::2], tensors[1::2])]
        return tuple(parts(SPECS[self.name][1](self.layer, *xs)))


def inputs(name, batch, length=LENGTH, requires_grad=False):
    generator = torch.Generator().manual_seed(batch + length)
    return [
        torch.randn(batch, *shape, generator=generator).requires_grad_(requires_grad)
        for shape in SPECS[name][2](length)
        for _ in range(2)
    ]


def export(model, dynamic_length):
    """``model`` exported at batch size 3 with a dynamic batch axis (and lengths)."""
    example = tuple(inputs(model.name, 3))
    batch, axis = torch.export.Dim("batch", min=2), SPECS[model.name][3]
    # the parts of each complex input share their axes; each input its own length
    shapes = [{0: batch} for _ in example]
    if dynamic_length:
        for i, shape in enumerate(shapes):
            # at most 12: the sinusoidal encoding's table holds 16 positions
            shape[axis] = torch.export.Dim(f"length{i // 2}", min=2, max=12)
    # one entry for the variadic `tensors`: the tuple of its shapes
    return torch.export.export(model, example, dynamic_shapes=(tuple(shapes),)).module()


def assert_close(actual, expected, name):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5, msg=lambda m: f"{name}: {m}")


@pytest.mark.inductor
@pytest.mark.parametrize("name", SPECS)
def test_compile_fullgraph_matches_eager(name):
    torch._dynamo.reset()
    model = Parts(name).train()
    xs = inputs(name, 3, requires_grad=True)
    ys = inputs(name, 3, requires_grad=True)
    expected = model(*xs)
    actual = torch.compile(model, fullgraph=True, backend="eager")(*ys)
    assert_close(actual, expected, name)
    # one random linear functional of both outputs, so that no gradient cancels
    weighted_sum(expected, torch.Generator().manual_seed(0)).backward()
    weighted_sum(actual, torch.Generator().manual_seed(0)).backward()
    assert_close([y.grad for y in ys], [x.grad for x in xs], name)


@pytest.mark.parametrize("name", SPECS)
def test_torch_export_with_a_dynamic_batch(name):
    """Dynamic batch, and dynamic sequence lengths where the layer allows them."""
    model = Parts(name).eval()
    dynamic_length = name not in FIXED_LENGTH
    exported = export(model, dynamic_length)
    for size, length in [(2, LENGTH), (5, LENGTH + 3 * dynamic_length)]:
        xs = inputs(name, size, length)
        with torch.no_grad():
            assert_close(exported(*xs), model(*xs), name)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(raises=error, strict=True, reason=reason))
        for name, (error, reason) in FIXED_LENGTH.items()
    ],
)
def test_torch_export_with_a_dynamic_length_fails(name):
    export(Parts(name).eval(), dynamic_length=True)
