"""Complex RNN, GRU and LSTM layers and cells against torch's native complex dtype.

The reference (``native_rnn`` of tests/helpers.py) is written in
complex128 from the equations of the layers' docstrings (split gates and
gating products, complex linear maps), one step at a time; the
zero-imaginary tests compare with torch's own real layers, loaded with the
same real weights.
"""

import copy
import pickle
import re

import pytest
import torch
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import (
    CplxGRU,
    CplxGRUCell,
    CplxLSTM,
    CplxLSTMCell,
    CplxRNN,
    CplxRNNCell,
)
from cplxmodule.nn.masked import to_masked

from ...helpers import native_rnn, native_rnn_step

pytestmark = pytest.mark.usefixtures("one_thread")


MODES = {
    "tanh": lambda *a, **k: CplxRNN(*a, nonlinearity="tanh", **k),
    "relu": lambda *a, **k: CplxRNN(*a, nonlinearity="relu", **k),
    "GRU": CplxGRU,
    "LSTM": CplxLSTM,
}
CONFIGS = {
    "two-layers-bidirectional": dict(num_layers=2, bidirectional=True),
    "batch-first": dict(batch_first=True),
    "no-bias": dict(bias=False, num_layers=2),
    "dropout-eval": dict(num_layers=2, dropout=0.5),
}


def randc(*shape):
    return torch.randn(*shape, dtype=torch.complex128)


def make(mode, *args, **kwargs):
    torch.manual_seed(0)
    return MODES[mode](*args, **kwargs).double().eval()


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("mode", MODES)
def test_layer_matches_native_reference(mode, config):
    kwargs = CONFIGS[config]
    layer = make(mode, 3, 4, **kwargs)
    x = randc(5, 2, 3)
    expected, h_n, c_n = native_rnn(layer, x)
    given = cplx.from_complex(x.transpose(0, 1) if layer.batch_first else x)
    output, states = layer(given)
    if layer.batch_first:
        output = output.transpose(0, 1)
    torch.testing.assert_close(cplx.to_complex(output), expected)
    h, c = states if mode == "LSTM" else (states, None)
    torch.testing.assert_close(cplx.to_complex(h), h_n)
    if c is not None:
        torch.testing.assert_close(cplx.to_complex(c), c_n)


@pytest.mark.parametrize("mode", MODES)
def test_hooks_on_the_projections_act(mode):
    # a hook that zeroes the hidden projection's output: the layer then computes as
    # one whose hidden weights and biases are zero
    layer = make(mode, 3, 4, num_layers=2)
    zeroed = copy.deepcopy(layer)
    with torch.no_grad():
        for p in zeroed.hh_l1.parameters():
            p.zero_()
    calls = []

    def hook(module, args, output):
        calls.append(module)
        return output * 0

    layer.hh_l1.register_forward_hook(hook)
    x = cplx.from_complex(randc(5, 2, 3))
    expected, _ = zeroed(x)
    output, _ = layer(x)
    assert calls and all(m is layer.hh_l1 for m in calls)
    torch.testing.assert_close(cplx.to_complex(output), cplx.to_complex(expected))


@pytest.mark.parametrize("mode", MODES)
def test_layer_unbatched_and_initial_state(mode):
    layer = make(mode, 3, 4, num_layers=2, bidirectional=True)
    x, h0, c0 = randc(5, 1, 3), randc(4, 1, 4), randc(4, 1, 4)
    expected, h_n, c_n = native_rnn(layer, x, h0, c0)
    h0_ = cplx.from_complex(h0[:, 0])
    hx = (h0_, cplx.from_complex(c0[:, 0])) if mode == "LSTM" else h0_
    output, states = layer(cplx.from_complex(x[:, 0]), hx)
    assert output.shape == (5, 8)
    torch.testing.assert_close(cplx.to_complex(output), expected[:, 0])
    h, c = states if mode == "LSTM" else (states, None)
    assert h.shape == (4, 4)
    torch.testing.assert_close(cplx.to_complex(h), h_n[:, 0])
    if c is not None:
        torch.testing.assert_close(cplx.to_complex(c), c_n[:, 0])


CELLS = {
    "tanh": lambda *a, **k: CplxRNNCell(*a, nonlinearity="tanh", **k),
    "relu": lambda *a, **k: CplxRNNCell(*a, nonlinearity="relu", **k),
    "GRU": CplxGRUCell,
    "LSTM": CplxLSTMCell,
}


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("mode", CELLS)
def test_cell_matches_native_reference(mode, batched):
    torch.manual_seed(0)
    cell = CELLS[mode](3, 4).double()
    shape = (2,) if batched else ()
    x, h, c = randc(*shape, 3), randc(*shape, 4), randc(*shape, 4)
    expected_h, expected_c = native_rnn_step(cell.mode, x, h, c, cell.ih, cell.hh)
    if mode == "LSTM":
        out_h, out_c = cell(cplx.from_complex(x), (cplx.from_complex(h), cplx.from_complex(c)))
        torch.testing.assert_close(cplx.to_complex(out_c), expected_c)
    else:
        out_h = cell(cplx.from_complex(x), cplx.from_complex(h))
    torch.testing.assert_close(cplx.to_complex(out_h), expected_h)
    # an omitted state is zeros
    zero = torch.zeros_like(h)
    expected_h, _ = native_rnn_step(cell.mode, x, zero, zero, cell.ih, cell.hh)
    out = cell(cplx.from_complex(x))
    out_h = out[0] if mode == "LSTM" else out
    torch.testing.assert_close(cplx.to_complex(out_h), expected_h)


# torch's real layers, with zero imaginary parts everywhere
TORCH_LAYERS = {
    "tanh": lambda *a, **k: torch.nn.RNN(*a, nonlinearity="tanh", **k),
    "relu": lambda *a, **k: torch.nn.RNN(*a, nonlinearity="relu", **k),
    "GRU": torch.nn.GRU,
    "LSTM": torch.nn.LSTM,
}
TORCH_CELLS = {
    "tanh": lambda *a: torch.nn.RNNCell(*a, nonlinearity="tanh"),
    "relu": lambda *a: torch.nn.RNNCell(*a, nonlinearity="relu"),
    "GRU": torch.nn.GRUCell,
    "LSTM": torch.nn.LSTMCell,
}


def real_cplx(x):
    return Cplx(x, torch.zeros_like(x))


@pytest.mark.parametrize("mode", MODES)
def test_zero_imaginary_parts_give_torchs_real_layer(mode):
    torch.manual_seed(1)
    reference = TORCH_LAYERS[mode](3, 4, num_layers=2, bidirectional=True).double()
    layer = make(mode, 3, 4, num_layers=2, bidirectional=True)
    layer.load_state_dict(reference.state_dict())  # torch's names, real tensors promoted
    x, h0 = torch.randn(5, 2, 3, dtype=torch.double), torch.randn(4, 2, 4, dtype=torch.double)
    hx, hx_ref = real_cplx(h0), h0
    if mode == "LSTM":
        c0 = torch.randn(4, 2, 4, dtype=torch.double)
        hx, hx_ref = (hx, real_cplx(c0)), (h0, c0)
    output, states = layer(real_cplx(x), hx)
    expected, states_ref = reference(x, hx_ref)
    torch.testing.assert_close(output.real, expected, rtol=1e-12, atol=1e-12)
    assert not output.imag.any()
    for ours, theirs in zip(
        states if mode == "LSTM" else [states], states_ref if mode == "LSTM" else [states_ref]
    ):
        torch.testing.assert_close(ours.real, theirs, rtol=1e-12, atol=1e-12)
        assert not ours.imag.any()


@pytest.mark.parametrize("mode", CELLS)
def test_zero_imaginary_parts_give_torchs_real_cell(mode):
    torch.manual_seed(2)
    reference = TORCH_CELLS[mode](3, 4).double()
    cell = CELLS[mode](3, 4).double()
    cell.load_state_dict(reference.state_dict())
    x, h = torch.randn(2, 3, dtype=torch.double), torch.randn(2, 4, dtype=torch.double)
    if mode == "LSTM":
        c = torch.randn(2, 4, dtype=torch.double)
        ours, ours_c = cell(real_cplx(x), (real_cplx(h), real_cplx(c)))
        theirs, theirs_c = reference(x, (h, c))
        torch.testing.assert_close(ours_c.real, theirs_c, rtol=1e-12, atol=1e-12)
    else:
        ours, theirs = cell(real_cplx(x), real_cplx(h)), reference(x, h)
    torch.testing.assert_close(ours.real, theirs, rtol=1e-12, atol=1e-12)
    assert not ours.imag.any()


def test_torch_names_read_the_projections():
    gru = CplxGRU(3, 4, num_layers=2, bidirectional=True)
    assert gru.weight_hh_l1_reverse is gru.hh_l1_reverse.weight
    assert gru.bias_ih_l0 is gru.ih_l0.bias
    assert gru.all_weights[1][0] is gru.ih_l0_reverse.weight
    gru.flatten_parameters()  # torch code calls it; nothing to do here
    cell = CplxLSTMCell(3, 4)
    assert cell.weight_ih is cell.ih.weight
    with pytest.raises(AttributeError, match="CplxGRU: `weight_ih_l0` is read-only"):
        gru.weight_ih_l0 = gru.ih_l1.weight
    with pytest.raises(AttributeError):
        gru.weight_ih_l5


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_gradcheck(mode):
    torch.manual_seed(3)
    cell = CELLS[mode](2, 3).double()
    layer = make(mode, 2, 3, bidirectional=True).train()
    params = dict(layer.named_parameters())

    def run_cell(xr, xi, hr, hi):
        out = cell(Cplx(xr, xi), (Cplx(hr, hi),) * 2 if mode == "LSTM" else Cplx(hr, hi))
        out = out[0] if mode == "LSTM" else out
        return out.real, out.imag

    def run_layer(xr, xi, wr, wi):
        weights = {**params, "hh_l0.weight.real": wr, "hh_l0.weight.imag": wi}
        out, _ = torch.func.functional_call(layer, weights, (Cplx(xr, xi),))
        return out.real, out.imag

    def leaves(*shape):
        return [torch.randn(*shape, dtype=torch.double, requires_grad=True) for _ in range(2)]

    assert torch.autograd.gradcheck(run_cell, (*leaves(2, 2), *leaves(2, 3)))
    weight = [
        p.detach().clone().requires_grad_()
        for p in (layer.hh_l0.weight.real, layer.hh_l0.weight.imag)
    ]
    assert torch.autograd.gradcheck(run_layer, (*leaves(3, 2, 2), *weight))


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_packed_sequence_runs_each_sequence_alone(mode):
    layer = make(mode, 3, 4, num_layers=2, bidirectional=True)
    sequences = [cplx.randn(n, 3, dtype=torch.double) for n in (4, 6, 2)]
    packed = pack_sequence([cplx.to_interleaved_real(s) for s in sequences], enforce_sorted=False)
    output, states = layer(packed)
    padded, lengths = pad_packed_sequence(output)
    assert lengths.tolist() == [4, 6, 2]
    padded = cplx.from_interleaved_real(padded)
    h_n = states[0] if mode == "LSTM" else states
    for i, sequence in enumerate(sequences):
        alone, alone_states = layer(sequence)
        torch.testing.assert_close(
            cplx.to_complex(padded[: len(sequence), i]), cplx.to_complex(alone)
        )
        assert not padded[len(sequence):, i].real.any()
        alone_h = alone_states[0] if mode == "LSTM" else alone_states
        torch.testing.assert_close(cplx.to_complex(h_n[:, i]), cplx.to_complex(alone_h))


def test_packed_sequence_with_initial_state():
    layer = make("LSTM", 3, 4)
    sequences = [cplx.randn(n, 3, dtype=torch.double) for n in (2, 5)]
    h0, c0 = cplx.randn(1, 2, 4, dtype=torch.double), cplx.randn(1, 2, 4, dtype=torch.double)
    packed = pack_sequence([cplx.to_interleaved_real(s) for s in sequences], enforce_sorted=False)
    _, (h_n, c_n) = layer(packed, (h0, c0))
    for i, sequence in enumerate(sequences):
        _, (h, c) = layer(sequence, (h0[:, i], c0[:, i]))
        torch.testing.assert_close(cplx.to_complex(h_n[:, i]), cplx.to_complex(h))
        torch.testing.assert_close(cplx.to_complex(c_n[:, i]), cplx.to_complex(c))


def test_dropout_between_layers_in_training():
    torch.manual_seed(4)
    layer = CplxGRU(3, 4, num_layers=2, dropout=1.0).train()
    # everything between the layers dropped: the output forgets the input
    out1, _ = layer(cplx.randn(5, 2, 3))
    out2, _ = layer(cplx.randn(5, 2, 3))
    torch.testing.assert_close(cplx.to_complex(out1), cplx.to_complex(out2))
    layer.eval()
    out1, _ = layer(cplx.randn(5, 2, 3))
    assert not torch.allclose(cplx.to_complex(out1), cplx.to_complex(out2))


@pytest.mark.parametrize(
    "make_layer, message",
    [
        (lambda: CplxGRU(3, 0), "CplxGRU: `hidden_size` must be a positive int, got 0"),
        (lambda: CplxGRU(2.5, 4), "CplxGRU: `input_size` must be a positive int, got 2.5"),
        (lambda: CplxLSTM(3, 4, num_layers=0), "CplxLSTM: `num_layers` must be a positive int"),
        (lambda: CplxGRU(3, 4, dropout=1.5), "CplxGRU: `dropout` must be a number in"),
        (lambda: CplxRNN(3, 4, nonlinearity="sigmoid"), "CplxRNN: `nonlinearity` must be"),
        (
            lambda: CplxLSTM(3, 4, proj_size=4),
            "CplxLSTM: `proj_size` must be an int in [0, hidden_size) = [0, 4), got 4",
        ),
        (lambda: CplxLSTM(3, 4, proj_size=-1), "CplxLSTM: `proj_size` must be an int in"),
        (lambda: CplxLSTM(3, 4, proj_size=1.5), "CplxLSTM: `proj_size` must be an int in"),
        (lambda: CplxGRUCell(3, -1), "CplxGRUCell: `hidden_size` must be a positive int"),
        (lambda: CplxRNNCell(3, 4, nonlinearity="gelu"), "CplxRNNCell: `nonlinearity` must be"),
    ],
)
def test_bad_arguments(make_layer, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make_layer()


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning, match="num_layers=1"):
        CplxGRU(3, 4, dropout=0.5)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m(torch.randn(5, 2, 3)), TypeError, "CplxGRU: `input` must be a Cplx"),
        (lambda m: m(cplx.randn(5, 2, 7)), ValueError, "CplxGRU: `input` must have shape"),
        (
            lambda m: m(cplx.randn(5, 2, 3), cplx.randn(1, 2, 4)),
            ValueError,
            "CplxGRU: `hx` must have shape",
        ),
        (
            lambda m: m(cplx.randn(5, 2, 3), torch.zeros(2, 2, 4)),
            TypeError,
            "CplxGRU: `hx` must be a Cplx",
        ),
        (
            lambda m: m(cplx.randn(5, 2, 3, dtype=torch.double)),
            TypeError,
            "CplxGRU: `input` must have the dtype",
        ),
        (
            lambda m: m(cplx.randn(0, 2, 3)),
            ValueError,
            "CplxGRU: `input` must have at least one time step",
        ),
    ],
)
def test_bad_inputs_leave_the_layer_unchanged(call, error, message):
    layer = CplxGRU(3, 4, num_layers=2)
    before = copy.deepcopy(layer.state_dict())
    with pytest.raises(error, match=message):
        call(layer)
    after = layer.state_dict()
    assert before.keys() == after.keys() and all(torch.equal(before[k], after[k]) for k in before)


def test_bad_states_of_lstm_and_cells():
    with pytest.raises(TypeError, match="CplxLSTM: `hx` must be a tuple"):
        CplxLSTM(3, 4)(cplx.randn(5, 2, 3), cplx.randn(1, 2, 4))
    with pytest.raises(ValueError, match="CplxLSTM: `c_0` must have shape"):
        CplxLSTM(3, 4)(cplx.randn(5, 2, 3), (cplx.randn(1, 2, 4), cplx.randn(2, 4)))
    with pytest.raises(TypeError, match="CplxLSTMCell: `hx` must be a tuple"):
        CplxLSTMCell(3, 4)(cplx.randn(2, 3), cplx.randn(2, 4))
    with pytest.raises(ValueError, match="CplxGRUCell: `input` must have shape"):
        CplxGRUCell(3, 4)(cplx.randn(2, 5))
    with pytest.raises(ValueError, match="CplxGRUCell: `hx` must have shape"):
        CplxGRUCell(3, 4)(cplx.randn(2, 3), cplx.randn(3, 4))
    with pytest.raises(TypeError, match="CplxGRU: `input` must be a PackedSequence whose data"):
        CplxGRU(3, 4)(pack_sequence([torch.randn(4, 3)]))


@pytest.mark.parametrize("mode", MODES)
def test_copies_state_dict_and_dtype(mode):
    torch.manual_seed(5)
    layer = MODES[mode](3, 4, num_layers=2, bidirectional=True).eval()
    x = cplx.randn(5, 2, 3)
    expected = cplx.to_complex(layer(x)[0])
    assert "ih_l0.weight.real" in layer.state_dict()
    fresh = MODES[mode](3, 4, num_layers=2, bidirectional=True).eval()
    fresh.load_state_dict(layer.state_dict())
    for twin in (fresh, copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        torch.testing.assert_close(cplx.to_complex(twin(x)[0]), expected)
    double = copy.deepcopy(layer).to(torch.float64)
    assert double.hh_l1_reverse.weight.dtype == torch.float64
    out = double(x.to(torch.float64))[0]
    assert out.dtype == torch.float64
    torch.testing.assert_close(
        cplx.to_complex(out).to(torch.complex64), expected, rtol=1e-5, atol=1e-5
    )


def test_lstm_proj_size_matches_native_reference():
    layer = make("LSTM", 3, 5, num_layers=2, bidirectional=True, proj_size=2)
    assert layer.hh_l1.in_features == 2 and layer.ih_l1.in_features == 4
    assert layer.weight_hr_l1_reverse is layer.hr_l1_reverse.weight
    assert layer.all_weights[0][-1] is layer.hr_l0.weight
    assert layer.hr_l0.bias is None
    with pytest.raises(AttributeError):
        layer.bias_hr_l0  # as torch's: the projection has no bias
    with pytest.raises(AttributeError):
        CplxLSTM(3, 5).weight_hr_l0
    x, h0, c0 = randc(4, 2, 3), randc(4, 2, 2), randc(4, 2, 5)
    expected, h_n, c_n = native_rnn(layer, x, h0, c0)
    output, (h, c) = layer(cplx.from_complex(x), (cplx.from_complex(h0), cplx.from_complex(c0)))
    torch.testing.assert_close(cplx.to_complex(output), expected)
    torch.testing.assert_close(cplx.to_complex(h), h_n)
    torch.testing.assert_close(cplx.to_complex(c), c_n)
    # zeros for omitted states, and the unbatched input
    zeros = native_rnn(layer, x[:, :1])
    output, (h, c) = layer(cplx.from_complex(x[:, 0]))
    torch.testing.assert_close(cplx.to_complex(output), zeros[0][:, 0])
    torch.testing.assert_close(cplx.to_complex(h), zeros[1][:, 0])
    torch.testing.assert_close(cplx.to_complex(c), zeros[2][:, 0])
    with pytest.raises(ValueError, match=re.escape("CplxLSTM: `h_0` must have shape (4, 2, 2)")):
        layer(cplx.from_complex(x), (cplx.from_complex(c0), cplx.from_complex(c0)))


def test_lstm_proj_size_zero_imaginary_parts_give_torchs_real_layer():
    torch.manual_seed(6)
    reference = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2).double()
    layer = make("LSTM", 3, 5, num_layers=2, bidirectional=True, proj_size=2)
    layer.load_state_dict(reference.state_dict())  # torch's names, weight_hr_l0 included
    x = torch.randn(4, 2, 3, dtype=torch.double)
    h0, c0 = torch.randn(4, 2, 2, dtype=torch.double), torch.randn(4, 2, 5, dtype=torch.double)
    output, states = layer(real_cplx(x), (real_cplx(h0), real_cplx(c0)))
    expected, states_ref = reference(x, (h0, c0))
    for ours, theirs in zip([output, *states], [expected, *states_ref]):
        torch.testing.assert_close(ours.real, theirs, rtol=1e-12, atol=1e-12)
        assert not ours.imag.any()


def test_lstm_proj_size_masks_and_packed_sequences():
    torch.manual_seed(7)
    layer = CplxLSTM(3, 5, proj_size=2).double().eval()
    masked = to_masked(copy.deepcopy(layer))
    for name in ("ih_l0", "hh_l0"):
        getattr(masked, name).mask_(torch.ones(()))
    masked.hr_l0.mask_(torch.zeros(2, 5, dtype=torch.double))
    output, (h, c) = masked(cplx.randn(4, 2, 3, dtype=torch.double))
    assert not cplx.to_complex(output).any() and not cplx.to_complex(h).any()
    # a packed batch runs each sequence alone
    seqs = [cplx.randn(n, 3, dtype=torch.double) for n in (4, 2)]
    packed = pack_sequence([cplx.to_interleaved_real(s) for s in seqs])
    output, (h, c) = layer(packed)
    padded, _ = pad_packed_sequence(output)
    for i, s in enumerate(seqs):
        alone, (h_alone, c_alone) = layer(s)
        torch.testing.assert_close(
            padded[: len(s), i], cplx.to_interleaved_real(alone), rtol=1e-12, atol=1e-12
        )
        torch.testing.assert_close(cplx.to_complex(h[:, i]), cplx.to_complex(h_alone))
        torch.testing.assert_close(cplx.to_complex(c[:, i]), cplx.to_complex(c_alone))
