"""A masked layer without a mask: the error says which layer of the model it is.

With several masked layers in a model, "LinearMasked has no sparsity mask"
does not say which one; called from a model, the error names the layer's
path in it (the reference: the names the model was built with), and its
class; called on its own, its class. The forward pass records nothing for
this (the lookup runs only when the error is raised).
"""

import re

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxSequential, CplxSplitReLU
from cplxmodule.nn.masked import (
    Conv1dMasked,
    CplxConv1dMasked,
    CplxLinearMasked,
    LinearMasked,
    compact,
)


class Block(torch.nn.Module):
    def __init__(self, make):
        super().__init__()
        self.proj, self.act = make(), torch.nn.ReLU()

    def forward(self, input):
        return self.act(self.proj(input))


class Real(torch.nn.Module):
    """Four masked layers: a stem, two blocks of a ModuleList, and a head."""

    def __init__(self):
        super().__init__()
        self.stem = Conv1dMasked(2, 4, 3, padding=1)
        self.blocks = torch.nn.ModuleList([Block(lambda: LinearMasked(8, 8)) for _ in range(2)])
        self.head = torch.nn.Sequential(torch.nn.Flatten(), LinearMasked(32, 3))

    def forward(self, input):
        z = self.stem(input)
        for block in self.blocks:
            z = block(z)
        return self.head(z)


class Complex(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = CplxConv1dMasked(2, 4, 3, padding=1)
        self.body = CplxSequential(CplxLinearMasked(8, 8), CplxSplitReLU(), CplxLinearMasked(8, 8))

    def forward(self, input):
        return self.body(self.stem(input))


MODELS = {
    "real": (Real, lambda: torch.randn(5, 2, 8),
             ["stem", "blocks.0.proj", "blocks.1.proj", "head.1"]),
    "complex": (Complex, lambda: cplx.randn(5, 2, 8), ["stem", "body.0", "body.2"]),
}


def with_masks_but(model, missing):
    for name, layer in model.named_modules():
        if hasattr(layer, "mask") and name != missing:
            layer.mask = torch.ones_like(layer.weight.real if isinstance(
                layer.weight, cplx.Cplx) else layer.weight)
    return model


@pytest.mark.parametrize("kind", MODELS)
def test_a_model_names_the_layer_without_a_mask(kind):
    build, draw, names = MODELS[kind]
    for missing in names:
        model = with_masks_but(build(), missing)
        layer = model.get_submodule(missing)
        expected = f"`{missing}` ({type(layer).__name__}) has no sparsity mask"
        with pytest.raises(RuntimeError, match=re.escape(expected)):
            model(draw())
        # wrapped once more, the path is the outermost model's
        outer = torch.nn.Sequential(model)
        with pytest.raises(RuntimeError, match=re.escape(f"`0.{missing}` (")):
            outer(draw())
        assert layer.mask is None


def test_a_layer_called_on_its_own_names_its_class():
    layer = LinearMasked(3, 2)
    with pytest.raises(RuntimeError, match=r"^LinearMasked has no sparsity mask"):
        layer(torch.randn(4, 3))
    with pytest.raises(RuntimeError, match=r"^LinearMasked has no sparsity mask"):
        layer.weight_masked


@pytest.mark.inductor
def test_compiled_model_raises_the_same_error():
    model = with_masks_but(Real(), "blocks.1.proj")
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with pytest.raises(RuntimeError, match="LinearMasked.* has no sparsity mask"):
        compiled(torch.randn(5, 2, 8))


def test_compact_names_the_layer_without_a_mask():
    model = with_masks_but(Real(), "head.1")
    with pytest.raises(RuntimeError, match=re.escape("`head.1` (LinearMasked)")):
        compact(model)
