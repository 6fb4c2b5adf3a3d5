"""Sparsity figures: the published package's for its models, and no count of fixed tables.

``published_sparsity.pt`` holds what the published cplxmodule 2022.6 returned
(``record_published_sparsity.py`` beside this file): models of masked layers
(binary and soft masks), Bayesian layers and batch norms, with their
state_dicts. Each is rebuilt here from the same names and state_dict, and
``named_sparsity`` and ``sparsity`` must return the recorded keys and values.

The published package counts every buffer as dense entries; a table that is
no state of the model (a positional encoding's, recomputed at construction
and kept out of the state_dict) is not counted here, nor is a tensor its
layer names in ``__sparsity_ignore__``. The reference is counted with numpy
from the masks, over the learnable parameters and state buffers.
"""

import importlib
import pathlib

import numpy as np
import pytest
import torch

from cplxmodule.nn import CplxLinear, CplxSinusoidalPositionalEncoding
from cplxmodule.nn.masked import CplxLinearMasked, to_masked
from cplxmodule.nn.utils import named_sparsity, sparsity

RECORD = torch.load(pathlib.Path(__file__).with_name("published_sparsity.pt"), weights_only=True)


def rebuild(entry):
    model = torch.nn.Sequential(*[
        getattr(importlib.import_module(path), name)(*args) for path, name, args in entry["spec"]
    ])
    model.load_state_dict(entry["state_dict"])
    return model


@pytest.mark.parametrize("key", sorted(RECORD))
def test_published_models_count_as_published(key):
    entry = RECORD[key]
    model = rebuild(entry)
    for call in entry["calls"]:
        expected = {name: (n, total) for name, n, total in call["named"]}
        got = {
            name: (float(n), total)
            for name, (n, total) in named_sparsity(model, **call["kwargs"])
        }
        assert got.keys() == expected.keys(), call["kwargs"]
        for name, (n, total) in expected.items():
            assert got[name][1] == total, name
            assert got[name][0] == pytest.approx(n, rel=1e-6, abs=1e-6), (name, call["kwargs"])
        assert sparsity(model, **call["kwargs"]) == pytest.approx(call["sparsity"], rel=1e-6)


class Encoder(torch.nn.Module):
    """A complex sequence model as a user writes it: positions added, then linear layers."""

    def __init__(self, d_model=16, max_len=500):
        super().__init__()
        self.position = CplxSinusoidalPositionalEncoding(d_model, max_len=max_len, batch_first=True)
        self.hidden = CplxLinear(d_model, 32)
        self.out = CplxLinear(32, 4)

    def forward(self, input):
        return self.out(self.hidden(self.position(input)))


def masked_encoder():
    model = to_masked(Encoder())
    generator = torch.Generator().manual_seed(0)
    for layer in (model.hidden, model.out):
        layer.mask = torch.rand(layer.weight.real.shape, generator=generator) < 0.25
    return model


def learnable_zeros(model):
    """``(zeroed, total)`` over the learnable parameters, counted with numpy from the masks."""
    zeroed = total = 0
    for layer in model.modules():
        for name, param in layer.named_parameters(recurse=False):
            total += param.numel()
        if isinstance(layer, CplxLinearMasked):
            # both parts of the weight lose the entries whose mask is zero
            zeroed += 2 * int(np.sum(layer.mask.numpy() == 0))
    return zeroed, total


def test_a_positional_table_is_not_counted():
    model = masked_encoder()
    zeroed, total = learnable_zeros(model)
    assert zeroed / total > 0.5
    assert sparsity(model) == pytest.approx(zeroed / total)
    names = dict(named_sparsity(model))
    assert not any(name.startswith("position.") for name in names)


class Table(torch.nn.Module):
    """A user's layer with a persistent lookup table that it names as no weight."""

    __sparsity_ignore__ = ("table",)

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(100, 16))
        self.register_buffer("scale", torch.ones(16))

    def forward(self, input):
        return input * self.scale


def test_a_table_named_in_sparsity_ignore_is_not_counted():
    model = torch.nn.Sequential(Table(), masked_encoder())
    zeroed, total = learnable_zeros(model)
    names = dict(named_sparsity(model))
    assert "0.table" not in names and names["0.scale"] == (0.0, 16)
    assert sparsity(model) == pytest.approx(zeroed / (total + 16))
