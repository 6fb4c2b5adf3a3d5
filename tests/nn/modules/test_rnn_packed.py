"""Packed sequences through the complex recurrent layers, with initial states.

Each sample combines the options that meet in the packed-sequence
bookkeeping: the recurrence (tanh, relu, GRU, LSTM, LSTM with
``proj_size``), one to three layers, one or two directions, biases or none,
``enforce_sorted`` (sorted sequences, or any order, which the layer's states
follow), an initial state or none, and lengths that tie, that are one step
long, and that make the batch shrink at several steps. The reverse
direction of a packed batch starts each sequence at its own last step, with
its own row of ``h_0``: rows taken in the wrong order go unnoticed unless
every sequence has a different initial state and length, as here.

Two references, each independent of the code under test:

- torch's native complex dtype (``native_rnn`` of tests/helpers.py, written
  from the layers' equations): each sequence alone, with its own rows of the
  initial states, against its part of the packed output (zeros past its
  end, once padded) and of the final states;
- torch's real layer of the same kind, with the same real weights, on the
  packed sequences with zero imaginary parts: torch's own packed
  bookkeeping.
"""

import pytest
import torch
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxGRU, CplxLSTM, CplxRNN

from ...helpers import native_rnn

pytestmark = pytest.mark.usefixtures("one_thread")

LAYERS = {
    "RNN_TANH": (lambda *a, **k: CplxRNN(*a, nonlinearity="tanh", **k),
                 lambda *a, **k: torch.nn.RNN(*a, nonlinearity="tanh", **k)),
    "RNN_RELU": (lambda *a, **k: CplxRNN(*a, nonlinearity="relu", **k),
                 lambda *a, **k: torch.nn.RNN(*a, nonlinearity="relu", **k)),
    "GRU": (CplxGRU, torch.nn.GRU),
    "LSTM": (CplxLSTM, torch.nn.LSTM),
}

# (mode, constructor kwargs, lengths in the order given, enforce_sorted, initial state)
SAMPLES = [
    ("GRU", dict(num_layers=2, bidirectional=True), (4, 6, 1, 6), False, True),
    ("GRU", dict(num_layers=3, bidirectional=True), (5, 3, 2), True, True),
    ("GRU", dict(num_layers=1), (2, 5, 3), False, False),
    ("LSTM", dict(num_layers=2, bidirectional=True), (2, 5, 3), False, True),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2), (4, 4, 1), True, True),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3), (1, 3, 6, 2), False, True),
    ("LSTM", dict(bidirectional=True, bias=False), (3, 5), False, False),
    ("RNN_TANH", dict(num_layers=2, bidirectional=True, bias=False), (3, 1, 4), False, True),
    ("RNN_RELU", dict(bidirectional=True), (6, 2, 2, 1), True, True),
    ("RNN_TANH", dict(num_layers=3), (2, 4), False, True),
]
IDS = [
    f"{mode}-{'-'.join(f'{k}={v}' for k, v in kwargs.items())}-lengths{lengths}"
    f"-{'sorted' if enforce else 'unsorted'}-{'h0' if state else 'no-h0'}"
    for mode, kwargs, lengths, enforce, state in SAMPLES
]
INPUT, HIDDEN = 3, 4


def make(mode, kwargs):
    torch.manual_seed(0)
    return LAYERS[mode][0](INPUT, HIDDEN, **kwargs).double().eval()


def state_shapes(layer, batch):
    stacked = layer.num_layers * (2 if layer.bidirectional else 1)
    h_size = getattr(layer, "proj_size", 0) or layer.hidden_size
    shapes = [(stacked, batch, h_size)]
    return shapes + [(stacked, batch, layer.hidden_size)] if layer.mode == "LSTM" else shapes


def as_hx(layer, states):
    """The states as the layer takes them: ``hx``, or ``(h_0, c_0)`` for an LSTM."""
    return tuple(states) if layer.mode == "LSTM" else states[0]


def packed(sequences, enforce_sorted):
    """The packed interleaved real layout of the Cplx sequences."""
    return pack_sequence([cplx.to_interleaved_real(s) for s in sequences],
                         enforce_sorted=enforce_sorted)


@pytest.mark.parametrize("mode, kwargs, lengths, enforce_sorted, with_state", SAMPLES, ids=IDS)
def test_packed_matches_native_reference(mode, kwargs, lengths, enforce_sorted, with_state):
    layer = make(mode, kwargs)
    generator = torch.Generator().manual_seed(1)

    def randc(*shape):
        return torch.randn(*shape, dtype=torch.complex128, generator=generator)

    sequences = [randc(n, INPUT) for n in lengths]
    states = [randc(*shape) for shape in state_shapes(layer, len(lengths))] if with_state else None
    given = as_hx(layer, [cplx.from_complex(s) for s in states]) if with_state else None
    output, final = layer(packed([cplx.from_complex(s) for s in sequences], enforce_sorted), given)
    final = list(final) if mode == "LSTM" else [final]
    padded, out_lengths = pad_packed_sequence(output)
    assert out_lengths.tolist() == list(lengths)
    padded = cplx.to_complex(cplx.from_interleaved_real(padded))
    for i, sequence in enumerate(sequences):
        own = [s[:, i : i + 1] for s in states] if with_state else [None, None]
        expected, h_n, c_n = native_rnn(layer, sequence[:, None], *own)
        torch.testing.assert_close(padded[: len(sequence), i], expected[:, 0])
        assert not padded[len(sequence) :, i].any()
        for ours, theirs in zip(final, [h_n, c_n]):
            torch.testing.assert_close(cplx.to_complex(ours)[:, i], theirs[:, 0])


@pytest.mark.parametrize("mode, kwargs, lengths, enforce_sorted, with_state", SAMPLES, ids=IDS)
def test_packed_with_zero_imaginary_parts_matches_torchs_layer(
    mode, kwargs, lengths, enforce_sorted, with_state
):
    torch.manual_seed(2)
    reference = LAYERS[mode][1](INPUT, HIDDEN, **kwargs).double()
    layer = make(mode, kwargs)
    layer.load_state_dict(reference.state_dict())  # torch's names, real tensors promoted
    generator = torch.Generator().manual_seed(3)
    sequences = [torch.randn(n, INPUT, dtype=torch.double, generator=generator) for n in lengths]
    states = None
    if with_state:
        states = [torch.randn(*shape, dtype=torch.double, generator=generator)
                  for shape in state_shapes(layer, len(lengths))]
    expected, expected_final = reference(
        pack_sequence(sequences, enforce_sorted=enforce_sorted),
        as_hx(layer, states) if with_state else None,
    )
    output, final = layer(
        packed([Cplx(s) for s in sequences], enforce_sorted),
        as_hx(layer, [Cplx(s) for s in states]) if with_state else None,
    )
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        ours, theirs = getattr(output, field), getattr(expected, field)
        assert (ours is None and theirs is None) or torch.equal(ours, theirs)
    data = cplx.from_interleaved_real(output.data)
    torch.testing.assert_close(data.real, expected.data, rtol=1e-12, atol=1e-12)
    assert not data.imag.any()
    pairs = zip(final, expected_final) if mode == "LSTM" else [(final, expected_final)]
    for ours, theirs in pairs:
        torch.testing.assert_close(ours.real, theirs, rtol=1e-12, atol=1e-12)
        assert not ours.imag.any()
