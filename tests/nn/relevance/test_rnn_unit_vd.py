"""Gaussian (variational dropout, ARD) gates on the hidden units of the recurrent layers.

The penalty is compared with the KL integrated by scipy (tests/helpers.py);
the training gates with their distribution by Monte Carlo, and the training
forward with torch's native complex recurrence of the weights scaled by the
drawn gates; the eval forward with the plain layer's. The pipeline
to_bayesian -> compute_ard_masks -> to_masked -> compact is checked against
masks built here from the indices of the dropped units, and the compact
layer against the masked one in float64.
"""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from cplxmodule import cplx
from cplxmodule.nn import CplxGRU, CplxLSTM, CplxRNN
from cplxmodule.nn.masked import CompactRecurrent, CplxLinearMasked, compact, to_masked
from cplxmodule.nn.relevance import (
    CplxGRUUnitARD,
    CplxGRUUnitVD,
    CplxLSTMUnitVD,
    compute_ard_masks,
    named_penalties,
    to_bayesian,
)
from cplxmodule.nn.relevance.base import BaseARD
from cplxmodule.nn import _families
from cplxmodule.nn.relevance.recurrent import UnitGaussianMixin, _declare_unit_twin

from ... import helpers
from .test_rnn_units import CLOSED, GATES, HIDDEN, IDS, INPUT, SAMPLES, assert_same, expected_masks
from .test_rnn_units import outputs, randn

pytestmark = pytest.mark.usefixtures("one_thread")

KINDS = ["unit_vd", "unit_ard"]
THRESHOLD = 3.0


def gaussian_layer(cls, kwargs, kind):
    """A 2-layer bidirectional unit-gated twin, float64, the units of CLOSED above THRESHOLD."""
    torch.manual_seed(0)
    layer = to_bayesian(cls(INPUT, HIDDEN, num_layers=2, bidirectional=True, **kwargs),
                        kind).double()
    with torch.no_grad():
        for value in layer.parameters():
            if value is not layer.log_alpha:  # non-zero biases: a dropped unit keeps them
                value.add_(0.1)
        layer.log_alpha.copy_(torch.linspace(-4, 2, layer.log_alpha.numel()).view_as(
            layer.log_alpha))
        for k, units in enumerate(CLOSED):
            layer.log_alpha[k, units] = THRESHOLD + 1
    return layer.eval()


@pytest.mark.parametrize("kind", KINDS)
def test_penalty_is_the_real_kl_of_each_unit(kind):
    layer = to_bayesian(CplxLSTM(3, 4, num_layers=2), kind).double()
    with torch.no_grad():
        layer.log_alpha.copy_(torch.tensor(helpers.LOG_ALPHAS).view(2, 4))
    if kind == "unit_vd":
        # the approximation of Molchanov et al. (2017) is within 0.01 nats
        reference, atol = [helpers.real_vd_kl(la) for la in helpers.LOG_ALPHAS], 1e-2
    else:
        reference, atol = [helpers.ard_kl(la, 1) for la in helpers.LOG_ALPHAS], 1e-9
    assert layer.penalty.shape == (2, 4)
    np.testing.assert_allclose(layer.penalty.detach().flatten().numpy(), reference, atol=atol)
    # the sum of what ``named_penalties`` collects, one term per unit
    (name, total), = named_penalties(layer)
    assert total.item() == pytest.approx(sum(reference), abs=8 * atol)


def test_training_gates_have_mean_one_and_variance_alpha():
    layer = CplxGRUUnitVD(3, 4, num_layers=2).double().train()
    alphas = torch.logspace(-2, 0.5, 8, dtype=torch.float64).view(2, 4)
    with torch.no_grad():
        layer.log_alpha.copy_(alphas.log())
    torch.manual_seed(0)
    draws = torch.stack([layer.gate().detach() for _ in range(5000)])
    # five standard errors of the mean; the variance within 10% (its relative error is 2%)
    assert (draws.mean(0) - 1).abs().le(5 * (alphas / len(draws)).sqrt()).all()
    torch.testing.assert_close(draws.var(0), alphas, rtol=0.1, atol=0)
    assert layer.eval().gate().equal(torch.ones(2, 4, dtype=torch.float64))


def _scaled_reference(layer, gates, x):
    """torch's native recurrence with each unit's rows of every gate, biases included, times its gate."""
    folded = SimpleNamespace(**{name: getattr(layer, name) for name in (
        "mode", "bidirectional", "num_layers", "hidden_size", "proj_size", "batch_first")})
    for suffix, gate in zip(layer._suffixes(), gates):
        rows = gate.repeat(layer.ih_l0.out_features // layer.hidden_size)
        for name in ("ih", "hh"):
            projection = getattr(layer, name + suffix)
            setattr(folded, name + suffix, SimpleNamespace(
                weight=helpers.as_native(projection.weight).detach() * rows[:, None],
                bias=helpers.as_native(projection.bias).detach() * rows))
    out, h, c = helpers.native_rnn(folded, cplx.to_complex(x))
    return out


@pytest.mark.parametrize("cls", [CplxRNN, CplxGRU, CplxLSTM])
def test_training_forward_scales_each_unit_by_one_draw(cls):
    layer = to_bayesian(cls(INPUT, HIDDEN, num_layers=2), "unit_vd").double().train()
    with torch.no_grad():
        layer.log_alpha.fill_(-1.0)
    x = randn(5, 2, INPUT)
    torch.manual_seed(3)
    output, _ = layer(x)
    torch.manual_seed(3)
    gates = layer.gate().detach()
    torch.testing.assert_close(cplx.to_complex(output).detach(), _scaled_reference(layer, gates, x),
                               rtol=0, atol=1e-10)
    # the noise reaches ``log_alpha``
    output.real.sum().backward()
    assert layer.log_alpha.grad.abs().gt(0).all()


@pytest.mark.parametrize("kind", KINDS)
def test_eval_output_is_the_plain_layers(kind):
    plain = CplxLSTM(INPUT, HIDDEN, num_layers=2, bidirectional=True).double().eval()
    layer = to_bayesian(plain, kind)
    with torch.no_grad():
        layer.log_alpha.fill_(THRESHOLD + 1)  # every unit dropped: eval still computes them
    x = randn(5, 2, INPUT)
    with torch.no_grad():
        for a, b in zip(outputs(layer(x)), outputs(plain(x))):
            assert cplx.to_complex(a).equal(cplx.to_complex(b))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cls, kwargs", SAMPLES, ids=IDS)
def test_masked_drops_whole_units_and_compact_removes_them(cls, kwargs, kind):
    layer = gaussian_layer(cls, kwargs, kind)
    masks = compute_ard_masks(layer, threshold=THRESHOLD)
    expected = expected_masks(cls, kwargs)
    assert sorted(masks) == sorted(expected)
    for key, mask in masks.items():
        torch.testing.assert_close(mask, expected[key], rtol=0, atol=0)
    masked = to_masked(layer, masks, strict=True).eval()
    assert type(masked) is cls and type(masked.ih_l1) is CplxLinearMasked
    # the dropped units' rows of every gate's bias are zero, the others kept
    for k, suffix in enumerate(layer._suffixes()):
        rows = torch.ones(HIDDEN, dtype=torch.bool)
        rows[CLOSED[k]] = False
        rows = rows.repeat(GATES[cls])
        for name in ("ih", "hh"):
            bias, original = (getattr(m, name + suffix).bias for m in (masked, layer))
            if original is None:
                continue
            for ours, theirs in zip(helpers.parts(bias), helpers.parts(original)):
                assert ours[~rows].eq(0).all() and ours[rows].equal(theirs[rows])
    x = randn(5, 2, INPUT)
    with torch.no_grad():
        expected_output = masked(x)
        # the dropped units of the last layer are dead: zero outputs
        last = [CLOSED[2], [HIDDEN + j for j in CLOSED[3]]]
        if not masked.proj_size:
            assert cplx.to_complex(expected_output[0])[..., sum(last, [])].eq(0).all()
        # the masked model prunes: it does not compute what the Bayesian one does
        assert not torch.allclose(cplx.to_complex(layer(x)[0]),
                                  cplx.to_complex(expected_output[0]))
        small = compact(masked)
        assert type(small) is CompactRecurrent
        assert small.hidden_size == 4 and small.full_size == HIDDEN
        assert small.ih_l0.weight.shape == (GATES[cls] * 4, INPUT)
        assert_same(small(x), expected_output)
        # compact of the Bayesian layer at the threshold: the same layer
        direct = compact(layer, threshold=THRESHOLD)
        assert type(direct) is CompactRecurrent and direct.hidden_size == 4
        assert_same(direct(x), expected_output)


def test_bad_threshold_is_refused_by_name():
    layer = CplxGRUUnitARD(3, 4)
    before = layer.log_alpha.detach().clone()
    with pytest.raises(TypeError, match="CplxGRUUnitARD: `threshold`"):
        layer.relevance(threshold="3")
    with pytest.raises(TypeError, match="CplxGRUUnitARD: `threshold`"):
        compute_ard_masks(layer, threshold=torch.ones(2))
    with pytest.raises(ValueError, match=r"compact: `threshold` must be a number .*CplxGRUUnitARD"):
        compact(torch.nn.Sequential(layer))
    assert layer.log_alpha.equal(before)


def test_kinds_convert_between_each_other():
    vd = gaussian_layer(CplxGRU, {}, "unit_vd")
    ard = to_bayesian(vd, "unit_ard")
    assert type(ard) is CplxGRUUnitARD and ard.log_alpha.eq(-10).all()
    assert ard.ih_l0.weight.real.equal(vd.ih_l0.weight.real)
    assert type(to_bayesian(vd, "unit_vd")) is CplxGRUUnitVD
    assert isinstance(vd, BaseARD) and "unit gates: Gaussian" in repr(vd)
    assert CplxLSTMUnitVD(2, 3, bidirectional=True).log_alpha.shape == (2, 3)


def test_a_gaussian_unit_layer_needs_a_known_kind():
    class Bad(UnitGaussianMixin, CplxGRU, BaseARD):
        pass

    with pytest.raises(ValueError, match="kind"):
        _declare_unit_twin(Bad, CplxGRU, "unit_l1")
    assert _families.lookup_composite(Bad) is None
