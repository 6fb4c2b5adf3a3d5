"""compact() removes the dead hidden units of the recurrent layers.

A unit is dead when its candidate gate's rows (the RNN's only gate, the
GRU's n, the LSTM's g) in ``ih`` and ``hh`` are masked to zero, with zero
candidate biases under split gates (any gate bias under modulus gates):
its state is then zero at every step. The reference is the masked layer
itself, run in eval mode at full size (float64): the compact layer must
give the same output and final states, on padded and packed inputs, with
fewer units computed. The masks here are built by hand so that which units
die is known; the other gates' rows of a dead unit are left unmasked, so
that the test fails if compact kept reading them.
"""

import pytest
import torch
from torch.nn.utils.rnn import PackedSequence, pack_sequence, pad_packed_sequence

from cplxmodule import cplx
from cplxmodule.nn import CplxGRU, CplxLinear, CplxLSTM, CplxRNN, CplxSequential
from cplxmodule.nn.masked import CompactRecurrent, compact, compact_report, to_masked

pytestmark = pytest.mark.usefixtures("one_thread")

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}
CANDIDATE = {"RNN_TANH": 0, "RNN_RELU": 0, "GRU": 2, "LSTM": 2}
INPUT, HIDDEN = 3, 6
# per layer and direction (torch's order), the units killed: at most 4 of 6 live
DEAD = [[0, 2], [1, 2, 3, 5], [4, 5], [0, 1, 3]]

SAMPLES = [
    (CplxRNN, dict(nonlinearity="tanh")),
    (CplxRNN, dict(nonlinearity="relu")),
    (CplxGRU, {}),
    (CplxLSTM, {}),
    (CplxLSTM, dict(proj_size=2)),
    (CplxRNN, dict(gates="modulus")),
    (CplxGRU, dict(gates="modulus")),
    (CplxLSTM, dict(gates="modulus", proj_size=2)),
]
IDS = [f"{cls.__name__}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for cls, kw in SAMPLES]


def masked_layer(cls, kwargs, dead=DEAD, *, bias_zero=True, **options):
    """The masked twin of a 2-layer (bidirectional) layer with the units ``dead`` killed."""
    torch.manual_seed(0)
    options = dict(num_layers=2, bidirectional=True) | kwargs | options
    layer = to_masked(cls(INPUT, HIDDEN, **options))
    layer = layer.double().eval()
    candidate = CANDIDATE[layer.mode] * HIDDEN
    with torch.no_grad():
        for suffix, units in zip(layer._suffixes(), dead):
            rows = [candidate + j for j in units]
            for name in ("ih", "hh", "hr"):
                projection = getattr(layer, name + suffix, None)
                if projection is None:
                    continue
                mask = torch.ones_like(projection.weight.real)
                if name != "hr":
                    mask[rows] = 0
                    if projection.bias is not None and bias_zero:
                        projection.bias.real[rows] = 0
                        projection.bias.imag[rows] = 0
                projection.mask = mask
            gate_bias = getattr(layer, "gate_bias" + suffix)
            if gate_bias is not None:
                gate_bias.uniform_(-1, 1)  # any real bias: the radial maps 0 to 0
    return layer


def outputs(result):
    output, states = result
    return [output] + (list(states) if isinstance(states, tuple) else [states])


def assert_same(ours, theirs):
    for a, b in zip(outputs(ours), outputs(theirs)):
        if not isinstance(a, cplx.Cplx):
            a, b = a.data, b.data  # packed: the interleaved data
            torch.testing.assert_close(a, b)
            continue
        assert a.shape == b.shape
        torch.testing.assert_close(cplx.to_complex(a), cplx.to_complex(b))


@pytest.mark.parametrize("cls, kwargs", SAMPLES, ids=IDS)
def test_compact_layer_equals_the_masked_one_with_fewer_units(cls, kwargs):
    layer = masked_layer(cls, kwargs)
    small = compact(layer)
    assert type(small) is CompactRecurrent
    # the most live units of any layer and direction: 4 of 6
    assert small.hidden_size == 4 and small.full_size == HIDDEN
    assert small.ih_l0.weight.shape == (GATES[layer.mode] * 4, INPUT)
    if not layer.proj_size:
        assert small.ih_l1.weight.shape == (GATES[layer.mode] * 4, 2 * 4)
        assert small.hh_l1.weight.shape == (GATES[layer.mode] * 4, 4)
    else:
        assert small.hr_l1.weight.shape == (layer.proj_size, 4)
    generator = torch.Generator().manual_seed(1)
    x = cplx.from_complex(torch.randn(5, 2, INPUT, dtype=torch.complex128, generator=generator))
    expected = layer(x)
    assert_same(small(x), expected)
    # the final states of either layer, fed back: dead units hold zeros there
    _, states = expected
    assert_same(small(x, states), layer(x, states))
    # unbatched
    assert_same(small(x[:, 0]), layer(x[:, 0]))
    # projections stored as CSR
    assert_same(compact(layer, max_density=1.0)(x), expected)


@pytest.mark.parametrize("cls, kwargs", SAMPLES[2:5], ids=IDS[2:5])
def test_packed_and_batch_first(cls, kwargs):
    layer = masked_layer(cls, kwargs, batch_first=True)
    small = compact(layer)
    generator = torch.Generator().manual_seed(2)
    sequences = [cplx.from_complex(torch.randn(n, INPUT, dtype=torch.complex128,
                                               generator=generator)) for n in (2, 5, 3)]
    packed = pack_sequence([cplx.to_interleaved_real(s) for s in sequences],
                           enforce_sorted=False)
    assert_same(small(packed), layer(packed))
    x = cplx.from_complex(torch.randn(2, 4, INPUT, dtype=torch.complex128, generator=generator))
    assert_same(small(x), layer(x))


def test_a_unit_whose_rows_read_only_dead_units_is_dead():
    # layer 1's unit 1 reads, through its candidate rows, only units of
    # layer 0 that are dead: its pre-activation is exactly zero too
    layer = masked_layer(CplxGRU, {}, dead=[[0, 1], [0, 1], [], []])
    candidate = 2 * HIDDEN
    with torch.no_grad():
        for suffix in ("_l1", "_l1_reverse"):
            for name in ("ih", "hh"):
                projection = getattr(layer, name + suffix)
                mask = projection.mask.clone()
                # ih: the dead units 0, 1 of either direction below; hh: its own state
                reads = [0, 1, HIDDEN, HIDDEN + 1] if name == "ih" else [1]
                mask[candidate + 1] = 0
                mask[candidate + 1, reads] = 1
                projection.mask = mask
                projection.bias.real[candidate + 1] = 0
                projection.bias.imag[candidate + 1] = 0
        assert layer.hh_l1.mask[candidate + 1, 1] and layer.ih_l1.mask[candidate + 1].sum() == 4
    small = compact(layer)
    assert small.hidden_size == 5
    x = cplx.from_complex(torch.randn(4, 2, INPUT, dtype=torch.complex128))
    assert_same(small(x), layer(x))


def test_zero_rows_with_a_split_bias_keep_the_unit():
    # the bias alone drives the state: the unit is live
    layer = masked_layer(CplxGRU, {}, bias_zero=False)
    assert type(compact(layer)) is CplxGRU
    # an unread unit (its columns zero, its rows not) still shows in h_n: kept
    layer = masked_layer(CplxGRU, {}, dead=[[], [], [], []])
    with torch.no_grad():
        layer.hh_l0.mask = layer.hh_l0.mask * torch.tensor([0.0] + [1.0] * (HIDDEN - 1))
    assert type(compact(layer)) is CplxGRU


def test_modulus_relu_with_a_large_bias_keeps_the_unit():
    # relu(b) / tiny overflows: the masked layer computes 0 * inf there
    layer = masked_layer(CplxRNN, dict(gates="modulus", nonlinearity="relu"),
                         dead=[[0], [], [], []]).float()
    with torch.no_grad():
        layer.gate_bias_l0[0] = 10.0
    assert type(compact(layer)) is CplxRNN


def test_in_a_model_with_a_read_out_and_a_report():
    class Model(torch.nn.Module):
        def __init__(self, rnn):
            super().__init__()
            self.rnn, self.head = rnn, CplxLinear(2 * HIDDEN, 1).double()

        def forward(self, x):
            return self.head(self.rnn(x)[0])

    model = Model(masked_layer(CplxLSTM, {})).eval()
    small = compact(model, max_density=0)
    assert type(small.rnn) is CompactRecurrent and small.rnn.hidden_size == 4
    # state_dict keys of the projections are the layer's
    assert "rnn.ih_l0.weight.real" in small.state_dict()
    x = cplx.from_complex(torch.randn(4, 3, INPUT, dtype=torch.complex128))
    torch.testing.assert_close(cplx.to_complex(small(x)), cplx.to_complex(model(x)))
    assert "4, num_layers=2" in repr(small.rnn)
    # the report's columns stay aligned past the long names of reverse projections
    report = compact_report(model, small)
    lines = str(report).splitlines()
    assert any("rnn.ih_l1_reverse" in line for line in lines)
    after = lines[0].index("after")
    rows = lines[1:1 + len(report.layers)]
    assert all(line[after - 1] == " " and line[after] != " " for line in rows)


class ReadOut(torch.nn.Module):
    """A recurrent layer read out by ``head``: at every step, or its last final state."""

    def __init__(self, rnn, head, last_state=False):
        super().__init__()
        self.rnn, self.head, self.last_state = rnn, head, last_state

    def forward(self, x):
        output, states = self.rnn(x)
        if isinstance(output, PackedSequence):
            output = cplx.from_interleaved_real(pad_packed_sequence(output)[0])
        if self.last_state:
            output = (states[0] if isinstance(states, tuple) else states)[-1]
        if isinstance(self.head, torch.nn.Linear):
            output = abs(output)  # a real read-out of the moduli: 0 stays 0
        return self.head(output)


def read_out(rnn, real=False, last_state=False):
    width = HIDDEN * (2 if rnn.bidirectional else 1)
    head = (torch.nn.Linear if real else CplxLinear)(width, 3).double()
    return ReadOut(rnn, head, last_state).eval()


def assert_close(ours, theirs):
    if isinstance(ours, cplx.Cplx):
        ours, theirs = cplx.to_complex(ours), cplx.to_complex(theirs)
    torch.testing.assert_close(ours, theirs)


@pytest.mark.parametrize("cls, kwargs", SAMPLES, ids=IDS)
@pytest.mark.parametrize("real", [False, True], ids=["cplx-head", "real-head"])
def test_a_declared_read_out_loses_the_dead_units_columns(cls, kwargs, real):
    layer = masked_layer(cls, kwargs)
    model = read_out(layer, real)
    if layer.proj_size:
        with pytest.raises(ValueError, match="`readouts` key `rnn` has proj_size=2"):
            compact(model, readouts={"rnn": "head"})
        return
    small = compact(model, readouts={"rnn": "head"})
    assert type(small.rnn) is CompactRecurrent and not small.rnn.full_width
    assert small.head.in_features == 2 * small.rnn.hidden_size == 8
    x = cplx.from_complex(torch.randn(5, 2, INPUT, dtype=torch.complex128))
    assert_close(small(x), model(x))
    assert small.rnn(x)[0].shape == (5, 2, 8)


@pytest.mark.parametrize("cls, kwargs", SAMPLES[2:4], ids=IDS[2:4])
def test_a_read_out_of_the_final_state_and_of_packed_sequences(cls, kwargs):
    layer = masked_layer(cls, kwargs, bidirectional=False)
    model = read_out(layer, last_state=True)
    small = compact(model, readouts={"rnn": "head"})
    # layer 1 (the last) has units 1, 2, 3, 5 dead: two live
    assert small.head.in_features == small.rnn.hidden_size == 4
    x = cplx.from_complex(torch.randn(5, 2, INPUT, dtype=torch.complex128))
    assert_close(small(x), model(x))
    model.last_state = small.last_state = False
    sequences = [cplx.from_complex(torch.randn(n, INPUT, dtype=torch.complex128))
                 for n in (2, 5, 3)]
    packed = pack_sequence([cplx.to_interleaved_real(s) for s in sequences],
                           enforce_sorted=False)
    assert_close(small(packed), model(packed))


def test_bad_read_outs_name_the_argument_and_leave_the_model():
    def refused(error, match, readouts):
        before = {key: value.clone() for key, value in model.state_dict().items()}
        with pytest.raises(error, match=match):
            compact(model, readouts=readouts)
        assert model.state_dict().keys() == before.keys()
        for key, value in model.state_dict().items():
            assert torch.equal(value, before[key]), key

    model = read_out(masked_layer(CplxGRU, {}))
    refused(TypeError, "`readouts` must be a mapping", ["rnn", "head"])
    refused(ValueError, "`readouts` key `head` must name a CplxRNN", {"head": "rnn"})
    refused(ValueError, "`readouts` key `gru` must name .* got no module", {"gru": "head"})
    for reader in ("rnn.ih_l1", "nothing", ""):
        refused(ValueError, r"`readouts\['rnn'\]` must name a linear layer", {"rnn": reader})
    model.head = CplxLinear(HIDDEN, 3).double()  # reads one direction: not the output
    refused(ValueError, "in_features=12", {"rnn": "head"})
    model.head = model.rnn.ih_l1  # used twice
    refused(ValueError, "used once", {"rnn": "head"})


def test_a_read_out_that_consumes_another_layer_is_refused():
    # head is declared the GRU's read-out, but reads a masked layer of its
    # chain, whose zero rows compact removes from head's inputs first
    model = read_out(masked_layer(CplxGRU, {}))
    first = to_masked(CplxLinear(2 * HIDDEN, 2 * HIDDEN)).double()
    first.mask = torch.ones(2 * HIDDEN, 2 * HIDDEN)
    first.mask[:3] = 0
    with torch.no_grad():
        first.bias.real[:3] = first.bias.imag[:3] = 0
    model.head = CplxSequential(first, model.head)
    with pytest.raises(ValueError, match="lost input features as a consumer of another layer"):
        compact(model, readouts={"rnn": "head.1"})


def test_a_read_out_of_a_layer_without_dead_units_is_kept():
    model = read_out(masked_layer(CplxGRU, {}, dead=[[], [], [], []]))
    small = compact(model, readouts={"rnn": "head"})
    assert type(small.rnn) is CplxGRU and small.head.in_features == 2 * HIDDEN


def test_bad_state_names_the_layer():
    small = compact(masked_layer(CplxGRU, {}))
    x = cplx.randn(3, 2, INPUT, dtype=torch.float64)
    with pytest.raises(ValueError, match="CompactRecurrent: `hx` must have shape"):
        small(x, cplx.randn(4, 2, 4, dtype=torch.float64))
    small = compact(masked_layer(CplxLSTM, {}))
    with pytest.raises(TypeError, match="CompactRecurrent: `hx` must be a tuple"):
        small(x, cplx.randn(4, 2, HIDDEN, dtype=torch.float64))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda():
    layer = masked_layer(CplxLSTM, {}).cuda()
    small = compact(layer)
    assert small.state_out.device.type == "cuda"
    x = cplx.from_complex(torch.randn(4, 3, INPUT, dtype=torch.complex128, device="cuda"))
    assert_same(small(x), layer(x))
