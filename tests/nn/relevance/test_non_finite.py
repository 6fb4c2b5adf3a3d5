"""Non-finite Bayesian parameters are refused, never counted as pruned (issue #34, items 3 and 7).

A NaN weight or ``log_sigma2`` gives a NaN ``log_alpha``, which compares
false with any threshold: read as "dropped", the weight would be counted
as pruned although the masked twin still outputs NaN (NaN times 0). An L0
gate with a NaN ``log_alpha`` would read as closed (``hard=True``) or as
NaN (``hard=False``). The whole-model helpers (``compute_ard_masks``,
``named_relevance``, ``sparsity``, ``compact``) and the layer's own
``relevance`` raise ``ValueError`` instead, the helpers naming the layer.
Helpers called without the ``threshold`` a Bayesian layer needs raise a
``TypeError`` naming the layer and the argument.
"""

import pytest
import torch

from cplxmodule.nn.masked import compact
from cplxmodule.nn.relevance import CplxLinearVD, LinearL0, LinearVD, compute_ard_masks, named_relevance
from cplxmodule.nn.utils import sparsity

HELPERS = {
    "compute_ard_masks": lambda m, **kw: compute_ard_masks(m, **kw),
    "named_relevance": lambda m, **kw: list(named_relevance(m, **kw)),
    "sparsity": lambda m, **kw: sparsity(m, **kw),
    "compact": lambda m, **kw: compact(m, **kw),
}
VD = {"real": LinearVD, "complex": CplxLinearVD}


def vd_model(family):
    torch.manual_seed(0)
    cls = VD[family]
    return torch.nn.Sequential(cls(4, 4), torch.nn.Sequential(cls(4, 4), cls(4, 3)))


def poison(model, key, value):
    """Put ``value`` in one entry of the parameter ``key`` of the layer ``'1.0'``."""
    with torch.no_grad():
        model[1][0].get_parameter(key)[1, 2] = value


def weight_key(family):
    return "weight" if family == "real" else "weight.real"


@pytest.mark.parametrize("helper", sorted(HELPERS))
@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
@pytest.mark.parametrize("parameter", ["weight", "log_sigma2"])
@pytest.mark.parametrize("family", sorted(VD))
def test_vd_non_finite_refused_naming_layer(family, parameter, value, helper):
    model = vd_model(family)
    key = weight_key(family) if parameter == "weight" else parameter
    poison(model, key, value)
    # the clean model goes through (the refusal is the poison's)
    HELPERS[helper](vd_model(family), threshold=3.0)
    with pytest.raises(ValueError, match=rf"layer '1\.0'.*`{key}`"):
        HELPERS[helper](model, threshold=3.0)


@pytest.mark.parametrize("parameter", ["weight", "log_sigma2"])
@pytest.mark.parametrize("family", sorted(VD))
def test_vd_layer_relevance_refuses_nan(family, parameter):
    model = vd_model(family)
    key = weight_key(family) if parameter == "weight" else parameter
    poison(model, key, float("nan"))
    assert bool(torch.isnan(model[1][0].log_alpha).any())
    with pytest.raises(ValueError, match="NaN"):
        model[1][0].relevance(threshold=3.0)


def l0_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(LinearL0(4, 4), torch.nn.Sequential(LinearL0(4, 4), LinearL0(4, 3)))
    with torch.no_grad():
        model[1][0].log_alpha[1, 2] = float("nan")
    return model


@pytest.mark.parametrize("call", [
    lambda m: compute_ard_masks(m, hard=True), lambda m: compute_ard_masks(m, hard=False),
    lambda m: list(named_relevance(m, hard=True)), lambda m: compact(m),
], ids=["compute_ard_masks-hard", "compute_ard_masks-soft", "named_relevance", "compact"])
def test_l0_nan_log_alpha_refused_naming_layer(call):
    with pytest.raises(ValueError, match=r"layer '1\.0'.*`log_alpha`"):
        call(l0_model())


@pytest.mark.parametrize("hard", [True, False])
def test_l0_layer_relevance_refuses_nan(hard):
    layer = l0_model()[1][0]
    with pytest.raises(ValueError, match="`log_alpha`"):
        layer.relevance(hard=hard)


@pytest.mark.parametrize("helper", ["compute_ard_masks", "sparsity"])
@pytest.mark.parametrize("family", sorted(VD))
def test_missing_threshold_named(family, helper):
    with pytest.raises(TypeError, match=r"layer '0'.*'threshold'"):
        HELPERS[helper](vd_model(family))
