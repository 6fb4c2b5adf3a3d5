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
from torch.nn.utils.rnn import pack_sequence

from cplxmodule import cplx
from cplxmodule.nn import CplxGRU, CplxLinear, CplxLSTM, CplxRNN
from cplxmodule.nn.masked import CompactRecurrent, compact, to_masked

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
    """The masked twin of a 2-layer bidirectional layer with the units ``dead`` killed."""
    torch.manual_seed(0)
    layer = to_masked(cls(INPUT, HIDDEN, num_layers=2, bidirectional=True, **kwargs, **options))
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
