"""Masks and checkpoints that the pipeline refuses whole (issue #34, items 4-9).

- a mask that is finite in float64 but not in the weight's dtype is
  refused, the old mask kept; ``binarize_masks`` refuses a NaN mask;
- a masked or Bayesian layer that refuses a checkpoint (a mask that does
  not broadcast, a NaN weight or variance) keeps every tensor it had, the
  same objects with the same values, ``assign=True`` included;
- ``cplxmodule.nn.utils.load_state_dict`` loads a whole model or nothing;
- ``deploy_masks`` / ``to_masked`` name the key of a bad mask, name a
  meta-device mask as such, and take a layer shared under two names;
- ``compact`` of a model with a zero-channel convolution;
- a NaN ``threshold`` is refused by ``compact`` and ``compute_ard_masks``.

References are the values held before the call (cloned) and torch's own
``load_state_dict``.
"""

import copy

import pytest
import torch

from cplxmodule import Cplx
from cplxmodule.nn import CplxConv2d, CplxLinear
from cplxmodule.nn.masked import (
    CplxConv2dMasked, CplxLinearMasked, LinearMasked, binarize_masks, compact, deploy_masks, to_masked,
)
from cplxmodule.nn.relevance import CplxLinearVD, LinearVD, compute_ard_masks

from ...helpers import detached_native


def tensors(module):
    """Every parameter and buffer of ``module`` by name: ``(the object, a copy of its values)``."""
    found = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    return {key: (t, t.detach().clone()) for key, t in found.items()}


def assert_as_before(module, before):
    now = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    assert sorted(now) == sorted(before)
    for key, (obj, value) in before.items():
        assert now[key] is obj, key
        assert torch.equal(now[key].detach(), value), key


# --- item 5: masks finite in the weight's dtype; binarize_masks ---------------------------------
@pytest.mark.parametrize("cls", [LinearMasked, CplxLinearMasked])
@pytest.mark.parametrize("how", ["setattr", "mask_", "deploy_masks"])
def test_mask_overflowing_weight_dtype_refused(cls, how):
    layer = cls(3, 2)
    layer.mask = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    old = layer.mask
    huge = torch.full((2, 3), 1e300, dtype=torch.float64)
    assert bool(torch.isfinite(huge).all())  # finite in float64, inf in float32
    with pytest.raises(ValueError, match="finite"):
        if how == "setattr":
            layer.mask = huge
        elif how == "mask_":
            layer.mask_(huge)
        else:
            deploy_masks(torch.nn.Sequential(layer), state_dict={"0.mask": huge})
    assert layer.mask is old
    assert torch.equal(layer.mask, torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))


def test_binarize_masks_refuses_nan_mask():
    model = torch.nn.Sequential(CplxLinear(3, 2), CplxLinear(2, 2))
    masks = {"0.mask": torch.ones(2, 3), "1.mask": torch.tensor([[1.0, float("nan")], [0.0, 1.0]])}
    with pytest.raises(ValueError, match=r"'1\.mask'"):
        binarize_masks(model.state_dict(), masks)


# --- item 6: a refused checkpoint leaves the layer as it was ------------------------------------
@pytest.mark.parametrize("assign", [False, True], ids=["copy", "assign"])
def test_complex_masked_layer_refusing_mask_loads_nothing(assign):
    torch.manual_seed(0)
    layer = CplxLinearMasked(7, 7)
    layer.mask = (torch.rand(7, 7) < 0.5).float()
    before = tensors(layer)
    checkpoint = {key: value + 1 for key, value in layer.state_dict().items()}
    checkpoint["mask"] = torch.ones(3, 3)
    with pytest.raises(RuntimeError, match=r"'mask'"):
        layer.load_state_dict(checkpoint, assign=assign)
    assert_as_before(layer, before)


NON_FINITE_CHECKPOINTS = [
    (CplxLinearVD, "weight.real"), (CplxLinearVD, "log_sigma2"), (LinearVD, "weight"),
    (LinearVD, "log_sigma2"), (LinearMasked, "weight"), (CplxLinearMasked, "weight.imag"),
    (CplxLinearMasked, "bias.real"),
]


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
@pytest.mark.parametrize("assign", [False, True], ids=["copy", "assign"])
@pytest.mark.parametrize("cls, key", NON_FINITE_CHECKPOINTS,
                         ids=[f"{cls.__name__}-{key}" for cls, key in NON_FINITE_CHECKPOINTS])
def test_layer_refuses_non_finite_checkpoint(cls, key, assign, value):
    torch.manual_seed(0)
    layer = cls(4, 3)
    if hasattr(layer, "mask_"):
        layer.mask = torch.ones(3, 4)
    before = tensors(layer)
    checkpoint = {k: v - 1 for k, v in layer.state_dict().items()}
    checkpoint[key] = checkpoint[key].clone()
    checkpoint[key].view(-1)[0] = value
    with pytest.raises(RuntimeError, match=f"'{key}'"):
        layer.load_state_dict(checkpoint, assign=assign)
    assert_as_before(layer, before)


# --- item 6: the all-or-nothing load ------------------------------------------------------------
def three_masked_layers():
    torch.manual_seed(0)
    model = torch.nn.Sequential(CplxLinearMasked(3, 4), CplxLinearMasked(4, 4), CplxLinearMasked(4, 2))
    model[0].mask = (torch.rand(4, 3) < 0.5).float()
    model[2].mask = torch.ones(2, 4)  # model[1] has no mask
    return model


def test_load_state_dict_all_or_nothing():
    from cplxmodule.nn.utils import load_state_dict

    model = three_masked_layers()
    before = tensors(model)
    assert model[1].mask is None
    checkpoint = {key: value + 1 for key, value in model.state_dict().items()}
    checkpoint["1.mask"] = torch.zeros(4, 4)  # would set the unset mask
    checkpoint["2.mask"] = torch.ones(5, 5)  # the last layer's mask is bad
    with pytest.raises(RuntimeError, match=r"'2\.mask'"):
        load_state_dict(model, checkpoint)
    assert model[1].mask is None
    assert "1.mask" not in model.state_dict()
    assert_as_before(model, before)


def test_load_state_dict_success_is_torch_load():
    from cplxmodule.nn.utils import load_state_dict

    model, reference = three_masked_layers(), three_masked_layers()
    checkpoint = {key: value * 2 for key, value in model.state_dict().items()}
    checkpoint["1.mask"] = torch.zeros(4, 4)
    got = load_state_dict(model, checkpoint)
    expected = torch.nn.Module.load_state_dict(reference, checkpoint)
    assert (got.missing_keys, got.unexpected_keys) == (expected.missing_keys, expected.unexpected_keys)
    ours, theirs = model.state_dict(), reference.state_dict()
    assert list(ours) == list(theirs) and "1.mask" in ours
    assert all(torch.equal(ours[key], theirs[key]) for key in ours)


# --- item 7: bad masks named by their key -------------------------------------------------------
def six_layers(cls):
    torch.manual_seed(0)
    return torch.nn.Sequential(*[cls(4, 4) for _ in range(6)])


def six_masks(bad):
    masks = {f"{i}.mask": torch.ones(4, 4) for i in range(6)}
    masks["4.mask"] = bad
    return masks


BAD_MASKS = {
    "shape": (lambda: torch.ones(3, 3), (ValueError, RuntimeError)),
    "meta": (lambda: torch.ones(4, 4, device="meta"), ValueError),
}


@pytest.mark.parametrize("bad", sorted(BAD_MASKS))
@pytest.mark.parametrize("helper", ["deploy_masks", "to_masked"])
def test_bad_mask_named_by_key(helper, bad):
    make, error = BAD_MASKS[bad]
    if helper == "deploy_masks":
        model = six_layers(CplxLinearMasked)
        before = tensors(model)
        call = lambda: deploy_masks(model, state_dict=six_masks(make()))  # noqa: E731
    else:
        model = six_layers(CplxLinear)
        before = tensors(model)
        call = lambda: to_masked(model, six_masks(make()))  # noqa: E731
    with pytest.raises(error, match=r"'4\.mask'") as info:
        call()
    assert "Cannot copy out of meta tensor" not in str(info.value)
    if bad == "meta":
        assert "meta device" in str(info.value)
    assert_as_before(model, before)  # no layer got a mask


# --- item 9: a layer shared under two names -----------------------------------------------------
def tied_model():
    shared = CplxLinearMasked(3, 3)
    shared.mask = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    return torch.nn.Sequential(shared, torch.nn.Identity(), shared), shared


def test_tied_layer_takes_own_state_dict():
    model, shared = tied_model()
    state = model.state_dict()
    assert {"0.mask", "2.mask"} <= set(state)
    deploy_masks(model, state_dict=state, strict=True)
    assert torch.equal(shared.mask, state["0.mask"])
    assert model[0] is model[2]


@pytest.mark.parametrize("strict", [False, True])
def test_tied_layer_different_masks_refused(strict):
    model, shared = tied_model()
    old = shared.mask
    masks = {"0.mask": torch.ones(3, 3), "2.mask": torch.zeros(3, 3)}
    with pytest.raises(ValueError, match=r"'0\.mask'.*'2\.mask'"):
        deploy_masks(model, state_dict=masks, strict=strict)
    assert shared.mask is old


# --- item 8: compact of a zero-channel convolution ----------------------------------------------
def test_compact_zero_channel_conv():
    torch.manual_seed(0)
    model = torch.nn.Sequential(CplxConv2dMasked(2, 0, 3), CplxConv2dMasked(0, 3, 3))
    model[0].mask = torch.ones(0, 2, 3, 3)
    model[1].mask = torch.ones(3, 0, 3, 3)
    compacted = compact(model)
    expected = {key: value for key, value in model.state_dict().items() if not key.endswith("mask")}
    got = compacted.state_dict()
    assert sorted(got) == sorted(expected)
    assert all(got[key].shape == value.shape and torch.equal(got[key], value) for key, value in expected.items())
    # torch runs no convolution of no outputs, and gives one of no inputs an output of no channels
    # (not its bias): the layer that runs computes as the masked one
    x = Cplx(torch.zeros(2, 0, 5, 5), torch.zeros(2, 0, 5, 5))
    with torch.no_grad():
        torch.testing.assert_close(detached_native(compacted[1](x)), detached_native(model[1](x)))
    assert type(compacted[0]) is type(compacted[1]) is CplxConv2d


# --- item 4: a NaN threshold --------------------------------------------------------------------
def vd_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(CplxLinearVD(3, 4), CplxLinearVD(4, 2))


@pytest.mark.parametrize("helper", [
    lambda m, t: compact(m, threshold=t), lambda m, t: compute_ard_masks(m, threshold=t),
], ids=["compact", "compute_ard_masks"])
@pytest.mark.parametrize("threshold", [float("nan"), torch.tensor(float("nan"))], ids=["float", "tensor"])
def test_nan_threshold_refused(helper, threshold):
    model = vd_model()
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(ValueError, match="`threshold`"):
        helper(model, threshold)
    assert all(torch.equal(model.state_dict()[key], value) for key, value in before.items())
