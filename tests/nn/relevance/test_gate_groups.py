"""Layers that write one group of channels share their gates: to_bayesian(..., example_inputs=...).

The references are independent of the sharing: a model whose two writers
are the same layer twice (their outputs must then be equal in training,
draw for draw), the penalties of an ungrouped twin, and the masked model
in eval mode for what compact makes of the learned gates.
"""

import copy
import warnings

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.models import CplxResNet
from cplxmodule.nn import CplxDataParallel, CplxLinear
from cplxmodule.nn.masked import compact, to_masked
from cplxmodule.nn.relevance import (
    CplxLinearChannelL0, CplxLinearChannelVD, GateGroup, LinearChannelARD, compute_ard_masks,
    penalties, to_bayesian,
)

from ...helpers import as_data_parallel

pytestmark = pytest.mark.usefixtures("one_thread")
DTYPE = torch.float64


class TwoWriters(torch.nn.Module):
    """``first(x) + second(x)``, read by ``head``: one group of channels, two writers."""

    def __init__(self, width=6):
        super().__init__()
        self.first, self.second = CplxLinear(4, width), CplxLinear(4, width)
        self.head = CplxLinear(width, 2)

    def forward(self, x):
        return self.head(self.first(x) + self.second(x))


class ThreeWriters(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = (CplxLinear(4, 6) for _ in range(3))
        self.head = CplxLinear(6, 2)

    def forward(self, x):
        return self.head(self.a(x) + self.b(x) + self.c(x))


def native(x):
    return torch.complex(x.real, x.imag) if isinstance(x, Cplx) else x


def leaders(model):
    return {name: layer.gate_group.names for name, layer in model.named_modules()
            if layer.__dict__.get("_gate_leader")}


@pytest.mark.parametrize("kind, parameter", [
    ("channel_vd", "log_sigma2"), ("channel_ard", "log_sigma2"), ("channel_l0", "log_alpha"),
])
def test_the_writers_of_a_residual_stream_share_one_gate(kind, parameter):
    torch.manual_seed(0)
    model = CplxResNet(1, 4, widths=(4, 8), blocks=(2, 1))
    x = cplx.randn(2, 1, 8, 8)
    twin = to_bayesian(model, kind, example_inputs=(x,))
    # the first stage's stream: the stem and each block's last convolution;
    # the last stage's: its projection shortcut and last convolution, read by
    # the classifier through the flatten and the read-out
    assert leaders(twin) == {"stem": ("stem", "stages.0.conv2", "stages.1.conv2"),
                             "stages.2.shortcut": ("stages.2.shortcut", "stages.2.conv2")}
    stem = getattr(twin.stem, parameter)
    assert all(getattr(twin.get_submodule(f"stages.{i}.conv2"), parameter) is stem for i in (0, 1))
    assert sum(p is stem for p in twin.parameters()) == 1  # an optimizer sees it once
    # one penalty for the group: the ungrouped twin's, less the followers'
    alone = to_bayesian(model, kind)
    counted = {name for name, layer in alone.named_modules() if hasattr(layer, "penalty")}
    followers = {"stages.0.conv2", "stages.1.conv2", "stages.2.conv2"}
    expected = sum(alone.get_submodule(name).penalty.sum() for name in counted - followers)
    torch.testing.assert_close(sum(penalties(twin)), expected)
    assert len(list(penalties(twin))) == len(counted) - 3
    assert to_bayesian(model, kind).stem.__dict__.get("gate_group") is None  # without example_inputs
    assert all(twin.get_submodule(name).extra_repr().endswith(", gate_group='stem'")
               for name in ("stem", "stages.0.conv2", "stages.1.conv2"))
    assert twin.stages[2].conv2.extra_repr().endswith(", gate_group='stages.2.shortcut'")
    assert "gate_group" not in twin.stages[2].conv1.extra_repr()


def test_one_draw_serves_the_group_in_training():
    torch.manual_seed(0)
    model = TwoWriters()
    with torch.no_grad():  # the same layer twice: equal outputs if and only if the draws are one
        model.second.weight.real.copy_(model.first.weight.real)
        model.second.weight.imag.copy_(model.first.weight.imag)
        model.second.bias.real.copy_(model.first.bias.real)
        model.second.bias.imag.copy_(model.first.bias.imag)
    x = cplx.randn(5, 4)
    outputs = {}
    for kind in ("channel_vd", "channel_l0"):
        for grouped in (True, False):
            twin = to_bayesian(model, kind, example_inputs=(x,) if grouped else None).train()
            with torch.no_grad():
                for layer in (twin.first, twin.second):
                    getattr(layer, layer._variational).fill_(0.0)  # noisy gates
            seen = []
            for layer in (twin.first, twin.second):
                layer.register_forward_hook(lambda m, i, out: seen.append(native(out)))
            twin(x)
            outputs[kind, grouped] = seen
    for kind in ("channel_vd", "channel_l0"):
        first, second = outputs[kind, True]
        torch.testing.assert_close(first, second)
        first, second = outputs[kind, False]
        assert not torch.allclose(first, second)


@pytest.mark.parametrize("shift, kept", [(0.0, 2), (0.5, 3)])
def test_the_learned_gates_compact_the_stream_exactly(shift, kept):
    torch.manual_seed(0)
    model = CplxResNet(1, 4, widths=(4, 8), blocks=(2, 1), dtype=DTYPE)
    with torch.no_grad():
        for i in (0, 1, 2):
            model.stages[i].bn1.bias.add_(shift)
    x = cplx.randn(2, 1, 8, 8, dtype=DTYPE)
    twin = to_bayesian(model, "channel_vd", example_inputs=(x,))
    with torch.no_grad():
        twin.stem.log_sigma2[:2] = 8.0  # what training would learn: two stream channels dropped
    masks = compute_ard_masks(twin.eval(), threshold=3.0)
    for name in ("stem", "stages.0.conv2", "stages.1.conv2"):  # alike, whole rows
        assert masks[f"{name}.mask"][:2].eq(0).all() and masks[f"{name}.mask"][2:].eq(1).all()
    masked = to_masked(twin, masks).eval()
    small = compact(masked, example_inputs=(x,))
    # the two channels go from the stream; where its batch norms map zero to
    # a constant, which the next convolution's zero padding needs, one carries it
    assert small.stem.out_channels == kept
    assert [small.get_submodule(f"stages.{i}.conv1").in_channels for i in (0, 1, 2)] == [kept] * 3
    y = cplx.randn(3, 1, 10, 7, dtype=DTYPE)
    with torch.no_grad():
        torch.testing.assert_close(native(small(y)), native(masked(y)))


def test_copies_state_dicts_and_conversions():
    torch.manual_seed(0)
    x = cplx.randn(3, 4)
    twin = to_bayesian(TwoWriters(), "channel_vd", example_inputs=(x,))
    clone = copy.deepcopy(twin)
    assert clone.second.log_sigma2 is clone.first.log_sigma2
    assert clone.first.gate_group is clone.second.gate_group is not twin.first.gate_group
    # the state dict names the shared parameter under each layer, and loads ungrouped too
    state = twin.state_dict()
    assert state["first.log_sigma2"].data_ptr() == state["second.log_sigma2"].data_ptr()
    alone = to_bayesian(TwoWriters(), "channel_vd")
    alone.load_state_dict(state)
    torch.testing.assert_close(alone.second.log_sigma2, twin.first.log_sigma2)
    # another kind leaves the group
    masked = to_masked(twin)
    assert not any("gate_group" in m.__dict__ for m in masked.modules())
    regated = to_bayesian(twin, "channel_l0")
    assert not any("gate_group" in m.__dict__ for m in regated.modules())
    assert len(list(penalties(regated))) == 3


def test_a_writer_left_dense_is_left_out():
    x = cplx.randn(3, 4)
    twin = to_bayesian(TwoWriters(), "channel_vd", exclude=["second"], example_inputs=(x,))
    assert leaders(twin) == {}
    twin = to_bayesian(ThreeWriters(), "channel_vd", exclude=["b"], example_inputs=(x,))
    assert leaders(twin) == {"a": ("a", "c")}  # the other two share


def test_example_inputs_needs_a_kind_of_output_gates():
    x = cplx.randn(3, 4)
    model = TwoWriters()
    for kind in ("vd", "input_vd", "unit_l0"):
        with pytest.raises(ValueError, match=r"to_bayesian: `example_inputs` .* kind '" + kind):
            to_bayesian(model, kind, example_inputs=(x,))
    assert type(model.first) is CplxLinear


def test_a_group_refuses_what_cannot_share_a_gate():
    vd = CplxLinearChannelVD(4, 3)
    cases = [
        (CplxLinearChannelVD(4, 5), "has 5 channels, the leader 3"),
        (CplxLinearChannelVD(4, 3, gated="input"), "gates its inputs"),
        (CplxLinearChannelL0(4, 3), "not of the kind of the leader's"),
        (LinearChannelARD(4, 3), "not of the kind of the leader's"),
        (CplxLinearChannelVD(4, 3, dtype=DTYPE), "float64"),
        (CplxLinear(4, 3), "not of the kind of the leader's"),
    ]
    for other, message in cases:
        before = other.state_dict()
        with pytest.raises(ValueError, match=r"GateGroup: layer 'other' \(\w+\) cannot join: .*" + message):
            GateGroup([vd, other], ["vd", "other"])
        assert "gate_group" not in vd.__dict__ and "gate_group" not in other.__dict__
        assert other.state_dict().keys() == before.keys()
    with pytest.raises(ValueError, match="`layers` must be two or more"):
        GateGroup([vd], ["vd"])
    GateGroup([vd, CplxLinearChannelVD(2, 3)], ["vd", "b"])
    with pytest.raises(ValueError, match="is in GateGroup"):
        GateGroup([CplxLinearChannelVD(5, 3), vd], ["c", "vd"])


def test_it_trains():
    torch.manual_seed(0)
    x = cplx.randn(2, 1, 6, 6)
    twin = to_bayesian(CplxResNet(1, 3, widths=(4, 8), blocks=(2, 1)), "channel_vd", example_inputs=(x,))
    optimizer = torch.optim.Adam(twin.parameters(), lr=0.1)
    before = twin.stem.log_sigma2.detach().clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            optimizer.zero_grad()
            loss = twin(x).pow(2).mean() + sum(penalties(twin)) / 100
            loss.backward()
            optimizer.step()
    assert not torch.equal(twin.stem.log_sigma2, before)
    assert twin.stages[1].conv2.log_sigma2 is twin.stem.log_sigma2


def test_data_parallel_replicas_share_their_own_draws(two_fake_devices):
    # torch's replicate, run for real on two CPU "devices": each replica's
    # writers share one draw, and the shared parameter gets one gradient
    torch.manual_seed(0)
    model = TwoWriters()
    with torch.no_grad():
        for part in ("real", "imag"):
            getattr(model.second.weight, part).copy_(getattr(model.first.weight, part))
            getattr(model.second.bias, part).copy_(getattr(model.first.bias, part))
    x = cplx.randn(6, 4)
    twin = to_bayesian(model, "channel_vd", example_inputs=(x,)).train()
    with torch.no_grad():
        twin.first.log_sigma2.fill_(0.0)
    seen = {"first": [], "second": []}
    for name in seen:
        twin.get_submodule(name).register_forward_hook(
            lambda m, i, out, name=name: seen[name].append(native(out)))
    out = as_data_parallel(CplxDataParallel, twin)(x)
    assert two_fake_devices[:2] == [torch.Size([6, 4])] * 2  # both parts split across the replicas
    assert len(seen["first"]) == len(seen["second"]) == 2
    for first, second in zip(seen["first"], seen["second"]):
        assert first.shape == (3, 6)  # a replica's half of the batch
        torch.testing.assert_close(first, second)
    (out.real.sum() + out.imag.sum()).backward()
    assert twin.first.log_sigma2.grad is not None and twin.second.log_sigma2.grad is twin.first.log_sigma2.grad
