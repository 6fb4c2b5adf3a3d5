"""Which layers a conversion converts (layers=, exclude=), and masked layers left without a mask."""

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxConv2d, CplxGRU, CplxLinear, CplxSequential, CplxSplitReLU
from cplxmodule.nn.masked import BaseMasked, convert_layers, magnitude_masks, to_masked
from cplxmodule.nn.relevance import BaseARD, compute_ard_masks, to_bayesian


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = CplxSequential(CplxConv2d(1, 4, 3), CplxSplitReLU(), CplxConv2d(4, 4, 3))
        self.gru = CplxGRU(4, 3)
        self.head = CplxLinear(3, 1)


SELECTIONS = [  # (layers, exclude, the layers expected converted, the GRU's projections too)
    (None, None, {"encoder.0", "encoder.2", "head"}, True),
    (["encoder"], None, {"encoder.0", "encoder.2"}, False),
    (None, ["head"], {"encoder.0", "encoder.2"}, True),
    ([CplxLinear], None, {"head"}, True),  # the projections are linear layers
    (None, CplxConv2d, {"head"}, True),
    (lambda name, layer: name.endswith("2"), None, {"encoder.2"}, False),
    (["encoder"], ["encoder.0"], {"encoder.2"}, False),
]


@pytest.mark.parametrize("layers, exclude, converted, projections", SELECTIONS)
@pytest.mark.parametrize("how", ["vd", "masked"])
def test_only_the_selected_layers_convert(layers, exclude, converted, projections, how):
    model = Net()
    if how == "masked":
        twin = to_masked(model, layers=layers, exclude=exclude)
        base = BaseMasked
    else:
        twin = to_bayesian(model, how, layers=layers, exclude=exclude)
        base = BaseARD
    for name in ("encoder.0", "encoder.2", "head"):
        assert isinstance(twin.get_submodule(name), base) == (name in converted), name
        if name not in converted:
            assert type(twin.get_submodule(name)) is type(model.get_submodule(name))
    assert isinstance(twin.gru.ih_l0, base) == projections


def test_a_recurrent_layer_is_selected_by_its_name():
    twin = to_bayesian(Net(), "unit_vd", exclude=["gru"])
    assert type(twin.gru) is CplxGRU
    assert type(to_bayesian(Net(), "unit_vd", layers=["gru"]).gru).__name__ == "CplxGRUUnitVD"


@pytest.mark.parametrize("argument", ["layers", "exclude"])
def test_bad_selections_name_the_argument(argument):
    model = Net()
    with pytest.raises(ValueError, match=rf"`{argument}` must name modules.*'enocder'"):
        convert_layers(model, "vd", **{argument: ["enocder"]})
    with pytest.raises(TypeError, match=rf"`{argument}` must be names, classes or a predicate"):
        to_bayesian(model, **{argument: [3]})
    assert type(model.head) is CplxLinear


def test_a_layer_left_without_a_mask_is_named_at_conversion():
    torch.manual_seed(0)
    model = Net()
    masks = magnitude_masks(model, keep=0.5)
    del masks["head.mask"]
    with pytest.warns(UserWarning, match=r"got none for \['head'\]"):
        masked = to_masked(model, masks)
    assert masked.head.mask is None and masked.encoder[0].mask is not None
    with pytest.raises(ValueError, match=r"got none for \['head'\]"):
        to_masked(model, masks, strict=True)
    # excluded, it is no masked layer: nothing to say
    masked = to_masked(model, masks, strict=True, exclude=["head"])
    assert type(masked.head) is CplxLinear
    x = cplx.randn(2, 1, 7, 7)
    assert masked.encoder(x).shape == (2, 4, 3, 3)


def test_masks_from_a_selected_bayesian_model_cover_its_masked_twin():
    vd = to_bayesian(Net(), "vd", exclude=["head", "gru"])
    masks = compute_ard_masks(vd, threshold=3.0)
    assert sorted(masks) == ["encoder.0.mask", "encoder.2.mask"]
    masked = to_masked(vd, masks, strict=True, exclude=["head", "gru"])
    assert all(layer.mask is not None for layer in masked.modules() if isinstance(layer, BaseMasked))
