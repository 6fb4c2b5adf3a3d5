"""Sparsity statistics as the published package reports them, against counts made by hand.

The published ``named_sparsity`` yields one entry per parameter and buffer,
``(n_zeroed, numel)``: a masked weight counts its mask's non-positive
entries (``hard=False``: the sum of ``1 - mask``), a Bayesian weight the
entries its relevance mask drops, every part of a complex weight alike;
every other tensor counts as dense; the mask and the variational
parameters are left out (``__sparsity_ignore__``). The reference below
computes this from the layers' tensors with numpy, never with the code
under test.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import cplxmodule.nn.relevance.extensions as extensions
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxBatchNorm1d, CplxLinear, _families
from cplxmodule.nn.masked import Conv2dMasked, CplxLinearMasked, LinearMasked
from cplxmodule.nn.relevance import LinearVD
from cplxmodule.nn.utils import named_sparsity, sparsity
from cplxmodule.nn.utils.sparsity import SparsityStats

from ... import helpers

PACKAGE_FAMILIES = helpers.package_families()
#: the families counted here: the linear maps and the convolutions, real and complex
FAMILIES = [f for f in PACKAGE_FAMILIES if not f.transposed]
# the complex VD variants of the extensions, published there as members of no conversion
EXTENSION_KINDS = ("vd_scalefree", "vd_approx", "vd_bogus")


def arguments(family):
    """The constructor arguments of a member of ``family``, from its geometry."""
    if family.kernel_dims:
        return (2, 3, 2)  # in and out channels, kernel size
    bilinear = family.args[:2] == ("in1_features", "in2_features")
    return (3, 2, 4) if bilinear else (3, 4)


def members(kinds, complex_=(False, True)):
    """``(class, family)`` of ``kinds`` of the families counted here, by class name."""
    cases = []
    for flag in complex_:
        for family in FAMILIES:
            if family.complex != flag:
                continue
            for kind in kinds:
                cls = (helpers.published_member(extensions, family, kind) if kind in EXTENSION_KINDS
                       else _families.twin_class(family.dense, kind))
                cases.append(pytest.param(cls, family, id=cls.__name__))
    return cases


MASKED = members(["masked"])
BAYESIAN = members(["vd", "ard"])
EXTENSIONS = members(EXTENSION_KINDS, complex_=[True])
VARIATIONAL = {"log_sigma2", "log_alpha", "mask"}


def build(cls, family):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(2, 2), cls(*arguments(family)))


def weight_parts(layer):
    weight = layer.weight
    if isinstance(weight, Cplx):
        return {"weight.real": weight.real, "weight.imag": weight.imag}
    return {"weight": weight}


def reference(model, prefix, layer, dropped):
    """The published figures of ``model``, whose ``layer`` (at ``prefix``) drops ``dropped``."""
    expected = {}
    tensors = list(model.named_parameters()) + list(model.named_buffers())
    for name, tensor in tensors:
        if name.rpartition(".")[2] in VARIATIONAL:
            continue
        expected[name] = (0, tensor.numel())
    for name, part in weight_parts(layer).items():
        expected[f"{prefix}.{name}"] = (dropped, part.numel())
    return expected


@pytest.mark.parametrize("cls, family", MASKED)
def test_masked_families_count_as_published(cls, family):
    model = build(cls, family)
    layer = model[1]
    shape = weight_parts(layer)["weight" if "weight" in weight_parts(layer) else "weight.real"].shape
    mask = np.random.default_rng(0).integers(0, 2, size=shape).astype(np.float32)
    layer.mask = torch.from_numpy(mask)
    expected = reference(model, "1", layer, int((mask == 0).sum()))
    assert dict(named_sparsity(model)) == expected
    total = sum(n for _, n in expected.values())
    assert sparsity(model) == pytest.approx(int((mask == 0).sum()) * len(weight_parts(layer)) / total)
    # a masked layer without a mask zeroes nothing
    layer.mask = None
    assert dict(named_sparsity(model)) == reference(model, "1", layer, 0)


@pytest.mark.parametrize("cls, family", BAYESIAN + EXTENSIONS)
def test_bayesian_families_count_as_published(cls, family):
    model = build(cls, family)
    layer = model[1]
    rng = np.random.default_rng(1)
    drop = rng.integers(0, 2, size=layer.log_sigma2.shape).astype(bool)
    with torch.no_grad():
        # weights of modulus in [0.5, 2]: log_alpha is log_sigma2 give or take 1.4
        for part in weight_parts(layer).values():
            part.copy_(torch.from_numpy(rng.uniform(0.5, 2.0, part.shape) * rng.choice([-1, 1], part.shape)))
        layer.log_sigma2.copy_(torch.from_numpy(np.where(drop, 20.0, -20.0)))
    expected = reference(model, "1", layer, int(drop.sum()))
    assert dict(named_sparsity(model, threshold=3.0)) == expected
    # code written for the published package passes `hard`, which VD and ARD ignore
    assert dict(named_sparsity(model, threshold=3.0, hard=True)) == expected
    total = sum(n for _, n in expected.values())
    fraction = int(drop.sum()) * len(weight_parts(layer)) / total
    assert sparsity(model, threshold=3.0, hard=False) == pytest.approx(fraction)


def test_fully_pruned_linear_vd_reads_the_published_figure():
    model = torch.nn.Sequential(LinearVD(10, 5))
    with torch.no_grad():
        model[0].log_sigma2.fill_(10.0)
        model[0].weight.fill_(1.0)
    assert dict(named_sparsity(model, threshold=3.0)) == {"0.weight": (50, 50), "0.bias": (0, 5)}
    assert sparsity(model, threshold=3.0) == pytest.approx(50 / 55)


def test_complex_masked_layer_counts_each_part():
    layer = CplxLinearMasked(5, 3)
    layer.mask = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0])
    assert dict(named_sparsity(layer, prefix="c")) == {
        "c.weight.real": (6, 15), "c.weight.imag": (6, 15),
        "c.bias.real": (0, 3), "c.bias.imag": (0, 3),
    }


def test_mask_counts_hard_and_soft():
    layer = LinearMasked(3, 2, bias=False)
    mask = np.array([[1.0, 0.5, 0.0], [0.0, -1.0, 2.0]], dtype=np.float32)
    layer.mask = torch.from_numpy(mask)
    # hard: the entries a non-positive mask switches off; soft: the sum of 1 - mask
    assert dict(named_sparsity(layer)) == {"weight": (int((mask <= 0).sum()), 6)}
    (zeroed, total), = dict(named_sparsity(layer, hard=False)).values()
    assert zeroed == pytest.approx(float((1 - mask).sum())) and total == 6


@given(
    mask=hnp.arrays(np.float32, (3, 4), elements=st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0, 1e-9])),
    complex_=st.booleans(),
)
def test_any_mask_counts_as_published(mask, complex_):
    layer = (CplxLinearMasked if complex_ else LinearMasked)(4, 3, bias=False)
    layer.mask = torch.from_numpy(mask)
    parts = ["weight.real", "weight.imag"] if complex_ else ["weight"]
    assert dict(named_sparsity(layer)) == {p: (int((mask <= 0).sum()), 12) for p in parts}
    soft = dict(named_sparsity(layer, hard=False))
    for p in parts:
        assert soft[p][0] == pytest.approx(float((1 - mask.astype(np.float64)).sum()), abs=1e-5)


def test_l0_and_lasso_count_as_published():
    l0 = extensions.LinearL0(3, 2)
    with torch.no_grad():
        l0.log_alpha.copy_(torch.tensor([[-5.0, -1.0, 0.0], [1.0, 3.0, 10.0]]))
    # eval-mode gates min(1, max(0, 1.2 sigmoid(-log_alpha) - 0.1)): two are exactly closed
    gates = np.clip(1.2 / (1 + np.exp(l0.log_alpha.detach().numpy())) - 0.1, 0, 1)
    assert dict(named_sparsity(l0, hard=True)) == {"weight": (int((gates == 0).sum()), 6), "bias": (0, 2)}
    (zeroed, _), _ = dict(named_sparsity(l0, hard=False)).values()
    assert zeroed == pytest.approx(float((1 - gates).sum()))

    lasso = extensions.LinearLASSO(4, 1)
    weight = np.array([[0.9, 1.1, -2.7, 2.75]], dtype=np.float32)
    with torch.no_grad():
        lasso.weight.copy_(torch.from_numpy(weight))
    # the threshold is on log|w|, as for log_alpha
    for threshold in (-1.0, 0.0, 1.0):
        n_dropped = int((np.log(np.abs(weight)) <= threshold).sum())
        assert dict(named_sparsity(lasso, threshold=threshold)) == {
            "weight": (n_dropped, 4), "bias": (0, 1)
        }


def test_dense_layers_and_buffers_count_as_dense():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2), CplxLinear(2, 2))
    with torch.no_grad():
        model[0].weight.zero_()  # zero weights outside a mask are not counted
    expected = {name: (0, t.numel()) for name, t in model.named_parameters()}
    expected.update({name: (0, t.numel()) for name, t in model.named_buffers()})
    assert dict(named_sparsity(model)) == expected
    assert [name for name, _ in named_sparsity(model)][-3:] == [
        "1.running_mean", "1.running_var", "1.num_batches_tracked"
    ]
    assert sparsity(model) == 0.0
    assert sparsity(torch.nn.ReLU()) == 0.0
    assert dict(named_sparsity(CplxBatchNorm1d(2)))["running_var"] == (0, 8)


def test_sparsity_ignore_and_custom_counts():
    class Pruned(SparsityStats, torch.nn.Module):
        __sparsity_ignore__ = ("scale",)

        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Linear(2, 2)
            self.scale = torch.nn.Parameter(torch.zeros(3))
            self.register_buffer("gate", torch.ones(4))

        def sparsity(self, **kwargs):
            # ids (as published) or the tensors themselves
            return [(id(self.inner.weight), 3), (self.gate, 1)]

    model = torch.nn.Sequential(Pruned(), torch.nn.Linear(1, 1))
    assert dict(named_sparsity(model, prefix="m")) == {
        "m.0.inner.weight": (3, 4), "m.0.inner.bias": (0, 2), "m.1.weight": (0, 1),
        "m.1.bias": (0, 1), "m.0.gate": (1, 4),
    }
    # the ignore list names the owner's own tensors only
    assert "m.0.scale" not in dict(named_sparsity(model, prefix="m"))


def test_modules_outside_sparsity_stats_are_dense():
    class Relevant(torch.nn.Linear):
        def relevance(self, **kwargs):
            return torch.zeros_like(self.weight)

    assert dict(named_sparsity(Relevant(5, 4))) == {"weight": (0, 20), "bias": (0, 4)}


def test_shared_layers_count_once():
    layer = Conv2dMasked(2, 2, 3)
    layer.mask = torch.zeros(1)
    model = torch.nn.Sequential(layer, layer)
    assert dict(named_sparsity(model)) == {"0.weight": (36, 36), "0.bias": (0, 2)}
