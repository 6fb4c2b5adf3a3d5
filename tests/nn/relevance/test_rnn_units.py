"""Hidden-unit L0 gates of the recurrent layers, through the whole pipeline.

to_bayesian(kind="unit_l0") -> train with the penalty -> compute_ard_masks
(whole units) -> to_masked -> compact (a CompactRecurrent with fewer units).
The masks are compared with masks built here from the indices of the units
closed by hand; the compact layer with the masked one in eval mode, in
float64; the masked one with the gated one, whose eval output the layer
table compares with an independent reference.
"""

import pytest
import torch
from torch.nn.utils.rnn import pack_sequence

from cplxmodule import cplx
from cplxmodule.nn import CplxGRU, CplxLinear, CplxLSTM, CplxRNN
from cplxmodule.nn.masked import CompactRecurrent, CplxLinearMasked, compact, convert_layers
from cplxmodule.nn.masked import to_masked
from cplxmodule.nn.relevance import (
    CplxGRUUnitL0,
    CplxLSTMUnitL0,
    CplxLinearVD,
    CplxRNNUnitL0,
    compute_ard_masks,
    named_penalties,
    penalties,
    to_bayesian,
)
from cplxmodule.nn.utils import named_sparsity

from ...helpers import Predictor

pytestmark = pytest.mark.usefixtures("one_thread")

GATES = {CplxRNN: 1, CplxGRU: 3, CplxLSTM: 4}
TWINS = {CplxRNN: CplxRNNUnitL0, CplxGRU: CplxGRUUnitL0, CplxLSTM: CplxLSTMUnitL0}
INPUT, HIDDEN = 3, 6
# per layer and direction (torch's order), the units whose gate is closed
CLOSED = [[0, 2], [1, 2, 3, 5], [4, 5], [0, 1, 3]]
SAMPLES = [
    (CplxRNN, dict(nonlinearity="tanh")),
    (CplxRNN, dict(nonlinearity="relu")),
    (CplxGRU, {}),
    (CplxLSTM, {}),
    (CplxLSTM, dict(proj_size=2)),
    (CplxGRU, dict(gates="modulus")),
]
IDS = [f"{cls.__name__}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for cls, kw in SAMPLES]


def gated_layer(cls, kwargs, **options):
    """A 2-layer bidirectional unit-gated twin, float64, the units of CLOSED closed."""
    torch.manual_seed(0)
    layer = to_bayesian(cls(INPUT, HIDDEN, num_layers=2, bidirectional=True, **kwargs,
                            **options), "unit_l0").double()
    with torch.no_grad():
        # open gates of different values in (0, 1]: the folding must scale
        layer.log_alpha.copy_(torch.linspace(-4, -2, layer.log_alpha.numel()).view_as(
            layer.log_alpha))
        for k, units in enumerate(CLOSED):
            layer.log_alpha[k, units] = 20.0
    return layer.eval()


def randn(*shape, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return cplx.from_complex(torch.randn(*shape, dtype=torch.complex128, generator=generator))


def outputs(result):
    output, states = result
    return [output] + (list(states) if isinstance(states, tuple) else [states])


def assert_same(ours, theirs, atol=1e-10):
    for a, b in zip(outputs(ours), outputs(theirs)):
        if not isinstance(a, cplx.Cplx):  # packed: the interleaved data
            torch.testing.assert_close(a.data, b.data, rtol=0, atol=atol)
            continue
        assert a.shape == b.shape
        torch.testing.assert_close(cplx.to_complex(a), cplx.to_complex(b), rtol=0, atol=atol)


def expected_masks(cls, kwargs):
    """The masks of CLOSED, built from the indices: rows of every gate, columns that read the unit."""
    gates, proj = GATES[cls], kwargs.get("proj_size", 0)
    keep = [torch.ones(HIDDEN, dtype=torch.float64) for _ in CLOSED]
    for k, units in enumerate(CLOSED):
        keep[k][units] = 0
    masks = {}
    for k, suffix in enumerate(["_l0", "_l0_reverse", "_l1", "_l1_reverse"]):
        rows = torch.cat([keep[k]] * gates)
        inputs = (torch.ones(INPUT if k < 2 else 2 * (proj or HIDDEN), dtype=torch.float64)
                  if k < 2 or proj else torch.cat(keep[:2]))
        masks[f"ih{suffix}.mask"] = rows[:, None] * inputs[None, :]
        if proj:
            masks[f"hh{suffix}.mask"] = rows[:, None].expand(-1, proj)
            masks[f"hr{suffix}.mask"] = keep[k][None, :].expand(proj, -1)
        else:
            masks[f"hh{suffix}.mask"] = rows[:, None] * keep[k][None, :]
    return masks


@pytest.mark.parametrize("cls, kwargs", SAMPLES, ids=IDS)
def test_masks_are_whole_units(cls, kwargs):
    layer = gated_layer(cls, kwargs)
    masks = compute_ard_masks(layer)
    expected = expected_masks(cls, kwargs)
    assert sorted(masks) == sorted(expected)
    for key, mask in masks.items():
        assert mask.dtype == torch.float64
        torch.testing.assert_close(mask, expected[key], rtol=0, atol=0)
    # the sparsity counts the entries of the masks' zeros, per weight part
    counts = dict(named_sparsity(layer))
    for key, mask in expected.items():
        name = key.removesuffix(".mask")
        assert counts[f"{name}.weight.real"] == (float((1 - mask).sum()), mask.numel())
    assert "log_alpha" not in counts


@pytest.mark.parametrize("cls, kwargs", SAMPLES, ids=IDS)
def test_compact_equals_the_masked_and_the_gated_layer(cls, kwargs):
    layer = gated_layer(cls, kwargs)
    masked = to_masked(layer, compute_ard_masks(layer), strict=True).eval()
    assert type(masked) is cls and type(masked.ih_l1) is CplxLinearMasked
    small = compact(masked)
    assert type(small) is CompactRecurrent
    # the most live units of any layer and direction: 4 of 6
    assert small.hidden_size == 4 and small.full_size == HIDDEN
    assert small.ih_l0.weight.shape == (GATES[cls] * 4, INPUT)
    if not masked.proj_size:
        assert small.ih_l1.weight.shape == (GATES[cls] * 4, 2 * 4)
        assert small.hh_l1.weight.shape == (GATES[cls] * 4, 4)
    x = randn(5, 2, INPUT)
    with torch.no_grad():
        expected = masked(x)
        assert_same(layer(x), expected)
        assert_same(small(x), expected)
        # compact of the gated layer itself: the same layer
        assert_same(compact(layer)(x), expected)
        # the final states fed back: the closed units hold zeros there
        _, states = expected
        assert_same(small(x, states), masked(x, states))


@pytest.mark.parametrize("cls, kwargs", SAMPLES[2:5], ids=IDS[2:5])
def test_packed_sequences(cls, kwargs):
    layer = gated_layer(cls, kwargs, batch_first=True)
    small = compact(to_masked(layer, compute_ard_masks(layer)))
    sequences = [randn(n, INPUT, seed=n) for n in (2, 5, 3)]
    packed = pack_sequence([cplx.to_interleaved_real(s) for s in sequences],
                           enforce_sorted=False)
    with torch.no_grad():
        assert_same(small(packed), layer(packed))


def mse(output, target):
    return ((output - target).real ** 2 + (output - target).imag ** 2).mean()


def test_a_unit_gated_gru_trains_and_closes_units():
    torch.manual_seed(0)
    z = torch.randn(8, 9, dtype=torch.complex64).cumsum(1) * 0.3
    x, y = cplx.from_complex(z[:, :-1, None]), cplx.from_complex(z[:, 1:, None])
    model = to_bayesian(Predictor(), "unit_l0")
    assert type(model.gru) is CplxGRUUnitL0 and type(model.head) is CplxLinear
    names = [name for name, _ in named_penalties(model)]
    assert names == ["gru"]
    with torch.no_grad():
        # the expected number of open units: about 12 at the start
        assert float(sum(penalties(model))) == pytest.approx(12 * 0.9, rel=0.1)
    # the gates learn faster than the weights, as usual for L0 gates
    gates = [model.gru.log_alpha]
    weights = [p for p in model.parameters() if p is not model.gru.log_alpha]
    optimizer = torch.optim.Adam([dict(params=weights, lr=5e-2), dict(params=gates, lr=0.3)])
    first = None
    for _ in range(30):
        loss = mse(model(x), y)
        first = loss.item() if first is None else first
        loss = loss + 0.05 * sum(penalties(model))
        optimizer.zero_grad()
        loss.backward()
        for parameter in model.parameters():
            assert torch.isfinite(parameter.grad).all()
        assert model.gru.log_alpha.grad.abs().sum() > 0
        optimizer.step()
    model.eval()
    with torch.no_grad():
        assert float(mse(model(x), y)) < first
    # the penalty closed some units, not all; their masks are whole units
    kept = model.gru.relevance()[0]
    assert 0 < kept.sum() < 12
    masks = compute_ard_masks(model)
    assert sorted(masks) == ["gru.hh_l0.mask", "gru.ih_l0.mask"]
    rows = torch.cat([kept] * 3)
    torch.testing.assert_close(masks["gru.hh_l0.mask"], rows[:, None] * kept[None, :])
    torch.testing.assert_close(masks["gru.ih_l0.mask"], rows[:, None].expand(-1, 1))
    masks["head.mask"] = torch.ones(1, 12)
    small = compact(to_masked(model, masks))
    assert small.gru.hidden_size == int(kept.sum())
    assert compact(model).gru.hidden_size == int(kept.sum())
    with torch.no_grad():
        torch.testing.assert_close(cplx.to_complex(small(x)), cplx.to_complex(model(x)))


def test_training_draws_one_gate_per_call_and_closed_units_stay_zero():
    layer = gated_layer(CplxGRU, {}).float().train()
    x = cplx.from_complex(torch.randn(4, 2, INPUT, dtype=torch.complex64))
    with torch.no_grad():
        (first, h_n), (second, _) = layer(x), layer(x)
    assert not torch.equal(first.real, second.real)
    # a gate at log_alpha = 20 is exactly 0 in every draw: the unit's state is 0
    assert first.real[..., CLOSED[2]].abs().max() == 0
    assert first.imag[..., HIDDEN + torch.tensor(CLOSED[3])].abs().max() == 0
    for k, units in enumerate(CLOSED):
        assert h_n.real[k][:, units].abs().max() == 0 and h_n.real[k].abs().max() > 0


def test_conversions_fold_the_gates():
    layer = gated_layer(CplxLSTM, {})
    x = randn(4, 2, INPUT)
    dense = convert_layers(layer, "dense")
    assert type(dense) is CplxLSTM and "log_alpha" not in dense.state_dict()
    vd = to_bayesian(layer, "vd").eval()
    assert type(vd) is CplxLSTM and type(vd.hh_l1_reverse) is CplxLinearVD
    again = to_bayesian(dense, "unit_l0")
    assert type(again) is CplxLSTMUnitL0
    assert to_bayesian(layer, "unit_l0").log_alpha.equal(layer.log_alpha)
    with torch.no_grad():
        assert_same(dense(x), layer(x))
        assert_same(vd(x), layer(x))
        # a fresh gate is open at about 0.98 on every unit
        scale = torch.clamp(torch.sigmoid(-again.log_alpha) * 1.2 - 0.1, 0, 1)
        assert torch.allclose(scale, torch.full_like(scale, 0.98))
