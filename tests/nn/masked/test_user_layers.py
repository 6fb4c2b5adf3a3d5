"""A layer a user writes goes through the whole pipeline as itself.

A subclass of a dense layer (its own ``forward``, parameters and
constructor) and a layer written from scratch on the dense entry point
(one ``family=Family(...)`` declaration) get every kind of twin: an
instance of the user's class, computing with the twin's weight; the
penalties count it, the masks find it, ``compact`` gives the user's class
back with the mask folded in. References are torch's own complex
operations on the weights worked out here.
"""

import io
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.nn import CplxConv2d, CplxParameter, CplxToCplx, Family, WeightedLayer, _families
from cplxmodule.nn import safe_globals
from cplxmodule.nn.masked import BaseMasked, compact, magnitude_masks, to_masked
from cplxmodule.nn.relevance import (
    BaseARD, CplxConv2dVD, compute_ard_masks, named_penalties, to_bayesian,
)

from ...helpers import as_data_parallel, cplx_to_native

ROOT = Path(__file__).resolve().parents[3]
BAYESIAN = ["vd", "ard", "channel_vd", "channel_ard", "channel_l0", "input_vd", "input_ard",
            "input_l0"]


class ScaledConv(CplxConv2d):
    """A user's convolution: its own constructor argument, parameter, buffer and forward."""

    def __init__(self, *args, scale=2.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.scale = torch.nn.Parameter(torch.tensor(scale))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, input):
        self.calls += 1
        return super().forward(input) * self.scale


class Bounded(torch.nn.Linear):
    """A user's subclass of torch's layer: ``tanh`` of the product."""

    def forward(self, input):
        return torch.tanh(super().forward(input))


class CplxStepMixer(WeightedLayer, CplxToCplx, family=Family(
        ("in_steps", "out_steps"), features=("out_steps", "in_steps"), positions=1)):
    """A layer from scratch: a complex linear map over the time steps (dimension -2)."""

    def __init__(self, in_steps, out_steps, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_steps, self.out_steps = in_steps, out_steps
        self.weight = CplxParameter(cplx.randn(out_steps, in_steps, dtype=dtype) / 4)
        self.bias = CplxParameter(cplx.randn(out_steps, 1, dtype=dtype)) if bias else None

    def _dense_forward(self, input, *, weight, bias):
        einsum = torch.einsum if isinstance(input, torch.Tensor) else cplx.einsum
        output = einsum("oi,...if->...of", weight, input)
        return output if bias is None else output + bias

    def forward(self, input):
        return self._weighted_forward(input)


def native(x):
    return cplx_to_native(x.detach()) if isinstance(x, Cplx) else x.detach()


def weight_computed(layer):
    """The weight ``layer`` computes with in eval mode, from its parameters."""
    weight = native(layer.weight)
    if isinstance(layer, BaseMasked):
        weight = weight * layer.mask
    return weight


def scaled_conv_reference(layer, weight, x):
    out = F.conv2d(native(x), weight, native(layer.bias), layer.stride, layer.padding)
    return out * layer.scale.detach()


def random_state(model, seed=0):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith(("log_sigma2", "log_alpha")):
                parameter.copy_(3 * torch.randn(parameter.shape, generator=generator))


@pytest.mark.parametrize("kind", BAYESIAN + ["masked"])
def test_a_subclass_converts_as_itself(kind):
    model = torch.nn.Sequential(ScaledConv(2, 3, 3, padding=1, scale=3.0))
    model[0].weight.real.requires_grad_(False)
    twin = (to_masked(model) if kind == "masked" else to_bayesian(model, kind))[0]
    assert isinstance(twin, ScaledConv) and type(twin) is not ScaledConv
    assert type(twin).__name__.startswith("ScaledConv")
    assert isinstance(twin, BaseMasked if kind == "masked" else BaseARD)
    assert twin.scale.item() == 3.0 and twin.stride == (1, 1) and twin.padding == (1, 1)
    assert not twin.weight.real.requires_grad and twin.weight.imag.requires_grad
    assert type(model[0]) is ScaledConv  # the source is a copy's
    if kind == "masked":
        twin.mask = torch.ones(())
    x = cplx.randn(2, 2, 5, 5)
    with torch.no_grad():
        got = native(twin.eval()(x))
        if kind.endswith("l0"):  # a new L0 twin's eval gates: a deterministic 0.98
            gate = torch.clamp(torch.sigmoid(-twin.log_alpha) * 1.2 - 0.1, 0, 1)
            dim = 1 if kind.startswith("input") else 0
            weight = native(model[0].weight) * gate.view([-1 if d == dim else 1 for d in range(4)])
        else:
            weight = native(model[0].weight)
        expected = scaled_conv_reference(model[0], weight, x)
    torch.testing.assert_close(got, expected)
    assert twin.calls.item() == 1


def test_the_pipeline_takes_a_subclass_to_compact():
    model = torch.nn.Sequential(ScaledConv(2, 4, 3, scale=0.5))
    vd = to_bayesian(model, "vd")
    random_state(vd)
    # the twin's penalty is that of the package's twin of its weight and variances
    reference = CplxConv2dVD(2, 4, 3)
    reference.load_state_dict(vd[0].state_dict(), strict=False)
    (name, penalty), = named_penalties(vd)
    assert name == "0" and torch.allclose(penalty, reference.penalty.sum())

    masks = compute_ard_masks(vd, threshold=0.0)
    assert list(masks) == ["0.mask"] and 0 < masks["0.mask"].mean() < 1
    masked = to_masked(vd, masks).eval()
    assert isinstance(masked[0], ScaledConv) and torch.equal(masked[0].mask, masks["0.mask"])
    small = compact(masked)
    assert type(small[0]) is ScaledConv and small[0].scale.item() == 0.5
    x = cplx.randn(3, 2, 6, 6)
    with torch.no_grad():
        expected = scaled_conv_reference(masked[0], weight_computed(masked[0]), x)
        torch.testing.assert_close(native(small(x)), expected)
        torch.testing.assert_close(native(masked(x)), expected)


def test_a_subclass_of_a_torch_layer_computes_with_its_mask():
    model = torch.nn.Sequential(Bounded(5, 3))
    masks = magnitude_masks(model, keep=0.4)
    masked = to_masked(model, masks)
    assert isinstance(masked[0], Bounded) and isinstance(masked[0], BaseMasked)
    x = torch.randn(4, 5)
    expected = torch.tanh(F.linear(x, model[0].weight * masks["0.mask"], model[0].bias))
    torch.testing.assert_close(masked(x), expected)
    small = compact(masked)
    assert type(small[0]) is Bounded
    torch.testing.assert_close(small(x), expected)


def step_mixer_reference(layer, weight, x):
    out = torch.einsum("oi,...if->...of", weight, native(x))
    return out + native(layer.bias)


@pytest.mark.parametrize("kind", BAYESIAN)
def test_a_family_of_one_declaration_gets_every_kind(kind):
    model = torch.nn.Sequential(CplxStepMixer(5, 3))
    bayesian = to_bayesian(model, kind)
    assert isinstance(bayesian[0], CplxStepMixer) and isinstance(bayesian[0], BaseARD)
    random_state(bayesian)
    masks = compute_ard_masks(bayesian, threshold=0.0)
    masked = to_masked(bayesian, masks).eval()
    small = compact(masked)
    assert type(small[0]) is CplxStepMixer
    x = cplx.randn(2, 5, 4)
    with torch.no_grad():
        expected = step_mixer_reference(masked[0], weight_computed(masked[0]), x)
        torch.testing.assert_close(native(masked(x)), expected)
        torch.testing.assert_close(native(small(x)), expected)
        bayesian.train()
        assert bayesian(x).shape == (2, 3, 4)  # the local reparameterisation runs


def test_twins_of_users_classes_pickle_and_load_safely():
    model = to_masked(torch.nn.Sequential(ScaledConv(2, 3, 3)), {"0.mask": torch.ones(3, 2, 3, 3)})
    cls = type(model[0])
    assert pickle.loads(pickle.dumps(cls)) is cls
    assert getattr(_families, cls.__qualname__) is cls
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    with pytest.raises(Exception):
        torch.load(buffer, weights_only=True)
    buffer.seek(0)
    with torch.serialization.safe_globals(safe_globals(model)):
        loaded = torch.load(buffer, weights_only=True)
    x = cplx.randn(1, 2, 4, 4)
    torch.testing.assert_close(native(loaded(x)), native(model(x)))


@pytest.mark.slow
def test_a_fresh_process_finds_the_twin_of_a_users_class():
    model = to_bayesian(torch.nn.Sequential(ScaledConv(2, 3, 3)), "channel_vd")
    code = (
        "import pickle, sys; layer = pickle.loads(sys.stdin.buffer.read());"
        "print(type(layer).__name__, type(layer).__mro__[1].__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(model[0]),
                          capture_output=True, cwd=ROOT, check=True)
    assert done.stdout.decode().split() == ["ScaledConvChannelVD", "CplxVDMixin"]


@pytest.mark.parametrize("kind", ["vd", "masked"])
def test_a_twin_of_a_users_class_runs_under_data_parallel(two_fake_devices, kind):
    from cplxmodule.nn import CplxDataParallel

    torch.manual_seed(0)
    model = torch.nn.Sequential(ScaledConv(2, 3, 3, scale=2.0))
    twin = (to_masked(model, {"0.mask": (torch.rand(3, 2, 3, 3) < 0.5).float()})
            if kind == "masked" else to_bayesian(model, kind)).eval()
    x = cplx.randn(4, 2, 5, 5)
    out = as_data_parallel(CplxDataParallel, twin)(x)
    assert two_fake_devices  # the input was split across the two replicas
    torch.testing.assert_close(native(out), native(twin(x)))
