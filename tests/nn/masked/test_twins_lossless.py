"""Conversions between kinds keep what they are given (issue #34, items 1, 2, 3, 7, 8, 10).

``to_bayesian``, ``to_masked`` and ``convert_layers`` of:

- a masked layer: in eval mode its twins compute what it computes, the
  mask folded into the weight (reference: torch's dense ops on the weight
  times the mask, complex layers in torch's complex dtype), and the ARD
  masks of its Bayesian twin drop the pruned entries again;
- frozen parameters, hooks and train/eval modes: carried to the twin (a
  parameter the twin adds follows the weight's ``requires_grad``);
- a layer with a NaN or infinite parameter: refused naming its path, the
  source model unchanged;
- a model that ``copy.deepcopy`` cannot copy (``torch.nn.utils.prune``, a
  lock): refused naming the layer and the attribute;
- a subclass or a ``weight_norm``-parametrized layer: left as it is, with a
  warning naming it;

and ``magnitude_masks`` of a model with empty layers (reference: numpy's
top-k of the magnitudes).
"""

import copy
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.nn.utils import parametrize, prune

from cplxmodule import Cplx
from cplxmodule.nn import CplxLinear
from cplxmodule.nn.masked import (
    CplxConv2dMasked, CplxLinearMasked, LinearMasked, convert_layers, magnitude_masks, to_masked,
)
from cplxmodule.nn.relevance import LinearVD, compute_ard_masks, to_bayesian

from ...helpers import detached_native

# name: (masked layer, input shape, torch's dense op on the weight times the mask)
MASKED = {
    "LinearMasked": (lambda: LinearMasked(5, 4), (3, 5), F.linear),
    "CplxLinearMasked": (lambda: CplxLinearMasked(5, 4), (3, 5), F.linear),
    "CplxConv2dMasked": (
        lambda: CplxConv2dMasked(2, 3, 3, padding=1), (2, 2, 5, 5),
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
    ),
}


def pruned_layer(name, seed=0):
    """The masked layer ``name``: weights of modulus at least 0.5, a zero row and random zeros."""
    make, shape, op = MASKED[name]
    torch.manual_seed(seed)
    layer = make()
    with torch.no_grad():
        for parameter in layer.parameters():
            # bounded away from zero: the ARD masks of the twin keep every unpruned entry
            magnitude = torch.rand(parameter.shape) * 0.5 + 0.5
            parameter.copy_(magnitude * torch.where(torch.rand(parameter.shape) < 0.5, -1.0, 1.0))
    mask = (torch.rand(layer.weight.shape) < 0.7).float()
    mask[1] = 0  # a whole output row pruned
    layer.mask = mask
    return layer, shape, op, mask


def reference(layer, mask, op, x):
    """The dense computation with the weight times the mask done by hand (complex: torch's dtype)."""
    weight, bias = detached_native(layer.weight), detached_native(layer.bias)
    return op(detached_native(x), weight * mask, bias)


def random_input(layer, shape):
    if isinstance(layer, LinearMasked):
        return torch.randn(*shape)
    return Cplx(torch.randn(*shape), torch.randn(*shape))


@pytest.mark.parametrize("name", sorted(MASKED))
@pytest.mark.parametrize("convert", [
    lambda m: to_bayesian(m, "vd"), lambda m: to_bayesian(m, "ard"), lambda m: convert_layers(m, "dense"),
], ids=["to_bayesian-vd", "to_bayesian-ard", "convert_layers-dense"])
def test_twin_of_masked_layer_computes_masked_product(name, convert):
    layer, shape, op, mask = pruned_layer(name)
    x = random_input(layer, shape)
    expected = reference(layer, mask, op, x)
    twin = convert(torch.nn.Sequential(layer)).eval()
    with torch.no_grad():
        got = detached_native(twin(x))
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    # the masked layer itself agrees with the reference (the reference is right)
    torch.testing.assert_close(detached_native(layer.eval()(x)), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(MASKED))
@pytest.mark.parametrize("kind", ["vd", "ard"])
def test_ard_masks_of_twin_drop_pruned_entries_again(name, kind):
    layer, _, _, mask = pruned_layer(name)
    masks = compute_ard_masks(to_bayesian(torch.nn.Sequential(layer), kind), threshold=3.0)
    assert list(masks) == ["0.mask"]
    assert torch.equal(masks["0.mask"], mask)


# --- item 2: requires_grad, hooks, modes --------------------------------------------------------
def frozen_flags(layer, frozen):
    for key, parameter in layer.named_parameters():
        if frozen == "all" or key.split(".")[0] == frozen:
            parameter.requires_grad_(False)
    return {key: p.requires_grad for key, p in layer.named_parameters()}


# (source layers of a two-layer model, conversion)
CONVERSIONS = {
    "dense-to_bayesian": (lambda: [CplxLinear(3, 4), CplxLinear(4, 2)], lambda m: to_bayesian(m, "vd")),
    "dense-to_bayesian-real": (lambda: [torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)], to_bayesian),
    "dense-to_masked": (lambda: [CplxLinear(3, 4), CplxLinear(4, 2)], to_masked),
    "vd-to_masked": (lambda: [LinearVD(3, 4), LinearVD(4, 2)], to_masked),
    "masked-dense": (
        lambda: [CplxLinearMasked(3, 4), CplxLinearMasked(4, 2)], lambda m: convert_layers(m, "dense"),
    ),
}


@pytest.mark.parametrize("frozen", ["weight", "bias", "all"])
@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_requires_grad_carried(conversion, frozen):
    make, convert = CONVERSIONS[conversion]
    model = torch.nn.Sequential(*make())
    for layer in model:
        if hasattr(layer, "mask_"):
            layer.mask = torch.ones(layer.weight.shape)
    flags = frozen_flags(model[0], frozen)
    twin = convert(model)
    assert type(twin[0]) is not type(model[0])
    got = {key: p.requires_grad for key, p in twin[0].named_parameters()}
    # the parameters of both keep their flags; those the twin adds follow the weight's
    weight_trainable = frozen not in ("weight", "all")
    expected = {key: flags.get(key, weight_trainable) for key in got}
    assert got == expected
    assert {key for key in flags if key.split(".")[0] in ("weight", "bias")} <= set(got)
    # the other layer, untouched, stays trainable
    assert all(p.requires_grad for p in twin[1].parameters())


def test_hooks_fire_after_to_bayesian_then_to_masked():
    calls = {"pre": 0, "forward": 0, "backward": 0}

    def count(kind):
        def hook(*args):
            calls[kind] += 1
        return hook

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    model[0].register_forward_pre_hook(count("pre"))
    model[0].register_forward_hook(count("forward"))
    model[0].register_full_backward_hook(count("backward"))
    bayesian = to_bayesian(model)
    masked = to_masked(bayesian, {"0.mask": torch.ones(4, 3), "1.mask": torch.ones(2, 4)})
    assert type(masked[0]) is LinearMasked
    for _ in range(2):
        masked(torch.randn(5, 3, requires_grad=True)).sum().backward()
    assert calls == {"pre": 2, "forward": 2, "backward": 2}


MODE_CONVERSIONS = {
    "to_bayesian": (lambda m: to_bayesian(m, "vd"), "CplxLinearVD"),
    "to_masked": (to_masked, "CplxLinearMasked"),
    "to_masked-dense": (lambda m: convert_layers(to_masked(m), "dense"), "CplxLinear"),
}


@pytest.mark.parametrize("conversion", sorted(MODE_CONVERSIONS))
def test_modes_carried(conversion):
    convert, cls = MODE_CONVERSIONS[conversion]
    model = torch.nn.Sequential(CplxLinear(3, 4), CplxLinear(4, 2)).train()
    model[0].eval()
    model[0].weight.train()  # a submodule (the complex weight) in train mode in a layer in eval
    twin = convert(model)
    assert type(twin[0]).__name__ == cls and twin[0] is not model[0]
    assert (twin.training, twin[0].training, twin[0].weight.training, twin[0].bias.training) == (
        True, False, True, False,
    )
    assert twin[1].training and twin[1].weight.training


# --- item 3: non-finite parameters --------------------------------------------------------------
def poisoned_model(value, complex_):
    layer = (lambda n, m: CplxLinear(n, m)) if complex_ else (lambda n, m: torch.nn.Linear(n, m))
    model = torch.nn.Sequential(
        layer(3, 4), torch.nn.Identity(), torch.nn.Sequential(layer(4, 4), layer(4, 2)),
    )
    with torch.no_grad():
        weight = model[2][0].weight
        (weight.real if complex_ else weight)[1, 2] = value
    return model


def snapshot(model):
    return {key: value.clone() for key, value in model.state_dict().items()}


def assert_unchanged(model, before):
    after = model.state_dict()
    assert list(after) == list(before)
    for key, value in before.items():
        assert torch.equal(after[key].isnan(), value.isnan()), key
        assert torch.equal(after[key].nan_to_num(), value.nan_to_num()), key


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
@pytest.mark.parametrize("convert", [to_bayesian, to_masked, lambda m: convert_layers(m, "ard")],
                         ids=["to_bayesian", "to_masked", "convert_layers-ard"])
def test_non_finite_parameter_refused_naming_layer(convert, value, complex_):
    model = poisoned_model(value, complex_)
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"'2\.0'"):
        convert(model)
    assert_unchanged(model, before)


# --- item 7: models that deepcopy cannot copy ---------------------------------------------------
def pruned_model():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    prune.l1_unstructured(model[1], "weight", amount=0.5)
    return model, "weight"


def locked_model():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    model[1].lock = threading.Lock()
    return model, "lock"


@pytest.mark.parametrize("make", [pruned_model, locked_model], ids=["prune", "lock"])
@pytest.mark.parametrize("convert", [to_bayesian, to_masked], ids=["to_bayesian", "to_masked"])
def test_uncopyable_model_refused_naming_layer_and_attribute(make, convert):
    model, attribute = make()
    with pytest.raises((RuntimeError, TypeError)) as info:
        convert(model)
    message = str(info.value)
    assert "'1'" in message and f"`{attribute}`" in message, message


# --- item 8: magnitude masks of a model with empty layers ---------------------------------------
def numpy_top(magnitudes, keep):
    """Boolean masks keeping the ``keep`` fraction (at least one) of all ``magnitudes`` together."""
    flat = np.concatenate([m.ravel() for m in magnitudes])
    k = max(1, round(keep * flat.size))
    cut = np.sort(flat)[::-1][k - 1]
    return [m >= cut for m in magnitudes]


EMPTY_MODELS = {
    "mixed": lambda: [CplxLinear(3, 4), CplxLinear(4, 0), CplxLinear(0, 3), CplxLinear(3, 5)],
    "all-empty": lambda: [CplxLinear(4, 0), CplxLinear(0, 3)],
}


@pytest.mark.parametrize("scope", ["global", "layer"])
def test_magnitude_masks_with_empty_layers(scope):
    for layers in EMPTY_MODELS.values():  # "all-empty" takes the global scope's branch for k = 0
        torch.manual_seed(0)
        model = torch.nn.Sequential(*layers())
        masks = magnitude_masks(model, keep=0.5, scope=scope)
        magnitudes = [np.abs(detached_native(layer.weight).numpy()) for layer in model]
        if scope == "global" and any(m.size for m in magnitudes):
            expected = numpy_top(magnitudes, 0.5)
        else:
            expected = [numpy_top([m], 0.5)[0] if m.size else np.zeros(m.shape, bool) for m in magnitudes]
        assert sorted(masks) == [f"{i}.mask" for i in range(len(model))]
        for i, want in enumerate(expected):
            got = masks[f"{i}.mask"]
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))
        assert sum(int(m.sum()) for m in masks.values()) == sum(int(w.sum()) for w in expected)


# --- item 10: layers left as they are warn ------------------------------------------------------
# (a user's subclass of a dense layer converts as itself: tests/nn/masked/test_user_layers.py)
class MyMasked(CplxLinearMasked):
    """A user's subclass of a masked layer, whose forward may compute anything."""


def subclass_model():
    return torch.nn.Sequential(CplxLinear(3, 4), MyMasked(4, 4), CplxLinear(4, 2)), MyMasked


def weight_norm_model():
    norm = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 4))
    return torch.nn.Sequential(torch.nn.Linear(3, 4), norm, torch.nn.Linear(4, 2)), type(norm)


@pytest.mark.parametrize("make", [subclass_model, weight_norm_model], ids=["subclass", "weight_norm"])
def test_layer_left_as_it_is_warns(make):
    model, cls = make()
    source = copy.deepcopy(model)
    with pytest.warns(UserWarning, match=r"layer '1'.*left as it is"):
        twin = to_bayesian(model)
    assert type(twin[1]) is cls
    assert parametrize.is_parametrized(twin[1]) == parametrize.is_parametrized(model[1])
    assert type(twin[0]).__name__.endswith("VD") and type(twin[2]).__name__.endswith("VD")
    for key, value in source.state_dict().items():
        assert torch.equal(model.state_dict()[key], value)
