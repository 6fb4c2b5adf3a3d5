"""Whole pickled models load with ``torch.load(..., weights_only=True)``.

Every reference model of :mod:`cplxmodule.models`, and a model of
``CplxToCplx[...]`` layers, at each stage of the pipeline (dense, Bayesian,
masked, compacted), saved with ``torch.save(model)`` and loaded under the
allow-list of :func:`cplxmodule.nn.safe_globals`: the loaded model computes
what the saved one computes, and the load fails without the allow-list. The
classes made by ``CplxToCplx[...]`` pickle by a global name that a fresh
process finds without having made them.
"""

import copy
import functools
import io
import operator
import os
import pickle
import subprocess
import sys
import textwrap

import pytest
import torch

import cplxmodule
from cplxmodule.cplx import Cplx
from cplxmodule.models import CplxResNet, CplxUNet, CplxVisionTransformer
from cplxmodule.nn import CplxLinear, CplxSequential, CplxToCplx, safe_globals
from cplxmodule.nn.masked import compact, magnitude_masks, to_masked
from cplxmodule.nn.relevance import to_bayesian

pytestmark = pytest.mark.usefixtures("one_thread")


def _split_model():
    return CplxSequential(
        CplxLinear(4, 6), CplxToCplx[torch.nn.ELU](alpha=0.5),
        CplxLinear(6, 6), CplxToCplx[torch.tanh](), CplxLinear(6, 3),
    )


# name -> (model, input): tiny, so that the whole file runs in about a second
MODELS = {
    "CplxResNet": (lambda: CplxResNet(1, 3, widths=(2, 4), blocks=(1, 1)), (2, 1, 8, 8)),
    "CplxUNet": (lambda: CplxUNet(channels=(2, 4)), (2, 1, 8, 8)),
    "CplxVisionTransformer": (
        lambda: CplxVisionTransformer(1, 3, image_size=4, patch_size=2, d_model=4, nhead=1,
                                      num_layers=1),
        (2, 1, 4, 4),
    ),
    "split": (_split_model, (2, 4)),
}
STAGES = ("dense", "vd", "masked", "compact")


@functools.lru_cache(maxsize=None)
def _stages(name):
    """``{stage: model}`` in eval mode, and the input, of the model ``name``."""
    torch.manual_seed(0)
    make, shape = MODELS[name]
    dense = make()
    masked = to_masked(dense, magnitude_masks(dense, keep=0.5))
    models = {
        "dense": dense,
        "vd": to_bayesian(dense, "vd"),
        "masked": masked,
        "compact": compact(copy.deepcopy(masked).eval()),
    }
    input = torch.randn(*shape, dtype=torch.complex64)
    return {stage: model.eval() for stage, model in models.items()}, input


def _outputs(model, input):
    with torch.no_grad():
        output = model(input)
    if isinstance(output, Cplx):
        return output.real, output.imag
    return (output,)


def _saved(model):
    buffer = io.BytesIO()
    torch.save(model, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", MODELS)
def test_safe_load_computes_what_was_saved(name, stage):
    models, input = _stages(name)
    model = models[stage]
    data = _saved(model)
    allowed = safe_globals(model)
    with torch.serialization.safe_globals(allowed):
        loaded = torch.load(io.BytesIO(data), weights_only=True)
    assert type(loaded) is type(model)
    expected, got = _outputs(model, input), _outputs(loaded, input)
    assert len(got) == len(expected)
    assert all(torch.equal(a, b) for a, b in zip(got, expected))


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", MODELS)
def test_load_fails_without_the_allow_list(name, stage):
    model = _stages(name)[0][stage]
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(io.BytesIO(_saved(model)), weights_only=True)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", MODELS)
def test_the_list_without_a_model_holds_each_models_list(name, stage):
    model = _stages(name)[0][stage]
    assert set(safe_globals(model)) <= set(safe_globals())


def test_the_list_names_only_classes_and_no_broad_callable():
    models = [model for name in MODELS for model in _stages(name)[0].values()]
    listed = {obj for model in models for obj in safe_globals(model)}
    assert all(isinstance(obj, type) for obj in listed)
    assert operator.getitem not in listed and getattr not in listed
    assert CplxToCplx[torch.nn.LeakyReLU] in listed  # CplxUNet's
    assert {CplxToCplx[torch.nn.ELU], CplxToCplx[torch.tanh]} <= listed
    assert all(obj.__module__.split(".")[0] in ("cplxmodule", "torch") for obj in listed)


class _HoldsPartial(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = functools.partial(torch.mul, other=2.0)


class _HoldsBoundMethod(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = CplxLinear(2, 2)
        self.fn = self.inner.forward  # pickled as getattr(inner, "forward")


@pytest.mark.parametrize("module, broad", [
    (_HoldsPartial, "functools.partial"),
    (_HoldsBoundMethod, "builtins.getattr"),
    (lambda: {"step": operator.getitem}, "_operator.getitem"),
])
def test_broad_globals_are_refused_by_name(module, broad):
    with pytest.raises(ValueError, match=broad):
        safe_globals(module())


def test_any_picklable_object_is_listed():
    # a checkpoint of a model and its training state
    checkpoint = {"model": _split_model(), "momentum": [torch.zeros(3)], "epoch": 3}
    assert set(safe_globals(checkpoint)) == set(safe_globals(checkpoint["model"]))


# --- the names of the promoted classes --------------------------------------


class ELU(torch.nn.Module):
    """A user's layer of the same short name as torch's."""

    def forward(self, input):
        return 2 * input


def test_promoted_classes_have_one_global_name_each():
    ours, torchs = CplxToCplx[ELU], CplxToCplx[torch.nn.ELU]
    assert ours is not torchs and ours.__qualname__ != torchs.__qualname__
    assert torchs.__qualname__ == "CplxToCplx[torch/nn/modules/activation:ELU]"
    assert CplxToCplx[torch.tanh].__qualname__ == "CplxToCplx[torch:tanh]"
    for cls in (ours, torchs, CplxToCplx[torch.tanh], CplxToCplx[torch.Tensor.tanh]):
        assert "." not in cls.__qualname__  # pickle would read a dot as an attribute
        assert pickle.loads(pickle.dumps(cls)) is cls
    # the layers keep their short names
    assert repr(torchs(alpha=0.5)) == "CplxToCplx[ELU](alpha=0.5)"
    assert torchs.__name__ == ours.__name__ == "CplxToCplx[ELU]"


def test_promoted_layers_copy_and_pickle():
    model = _split_model()
    z = Cplx(torch.randn(2, 4), torch.randn(2, 4))
    for copied in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert [type(m) for m in copied] == [type(m) for m in model]
        assert torch.equal(copied(z).real, model(z).real)


def test_no_other_name_finds_a_promoted_class():
    base = sys.modules[CplxToCplx.__module__]
    assert getattr(base, CplxToCplx[torch.nn.ELU].__qualname__) is CplxToCplx[torch.nn.ELU]
    for name in ("CplxToCplx[torch/nn:ELU]", "CplxToCplx[torch:nope]", "CplxToCplx[ELU]",
                 "CplxToCplx[builtins:int]", "CplxToCplx[torch/nn/modules/linear:Linear"):
        assert not hasattr(base, name)


def test_an_unnamed_base_gives_a_class_that_refuses_pickle():
    cls = CplxToCplx[lambda t: t]
    z = Cplx(torch.ones(2))
    assert torch.equal(cls()(z).real, z.real)
    with pytest.raises(pickle.PicklingError, match="<lambda>"):
        pickle.dumps(cls)


def test_files_of_the_recipe_pickle_still_load():
    # the previous releases pickled a promoted class as ``CplxToCplx[base]``
    class Recipe:
        def __reduce__(self):
            return operator.getitem, (CplxToCplx, torch.nn.ELU)

    assert pickle.loads(pickle.dumps(Recipe())) is CplxToCplx[torch.nn.ELU]


# a user's module, and a fresh interpreter that reads what this process saved
_USER_MODULE = '''
import torch

class ELU(torch.nn.Module):
    def forward(self, input):
        return 3 * input
'''

_FRESH = textwrap.dedent("""
    import io, pickle, sys, torch
    import cplxmodule
    import cplxmodule.nn as nn
    from cplxmodule.nn.modules import base
    # torch's leaky ReLU and hardswish, torch.tanh and the user's ELU: not made yet
    made = set(base._PROMOTED)
    assert not made & {torch.nn.LeakyReLU, torch.nn.Hardswish, torch.tanh}, made
    assert not any(getattr(b, "__module__", "") == "cplx_user_layers" for b in made), made
    with open("pickled", "rb") as f:
        model, z, expected = pickle.load(f)
    assert torch.equal(model(z).real, expected.real)
    with open("saved.pt", "rb") as f:
        saved = f.read()
    model = torch.load(io.BytesIO(saved), weights_only=False)
    assert torch.equal(model(z).real, expected.real)
    import cplx_user_layers
    allowed = nn.safe_globals() + [nn.CplxToCplx[cplx_user_layers.ELU]]
    with torch.serialization.safe_globals(allowed):
        model = torch.load(io.BytesIO(saved), weights_only=True)
    assert torch.equal(model(z).real, expected.real)
    print(cplxmodule.__file__)
    print(type(model[0]).__qualname__, type(model[-1]).__qualname__)
""")


# a fresh interpreter imports torch: about 3 s
@pytest.mark.slow
def test_a_fresh_process_finds_the_promoted_classes(tmp_path, monkeypatch):
    (tmp_path / "cplx_user_layers.py").write_text(_USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import cplx_user_layers

    model = CplxSequential(
        CplxToCplx[torch.nn.LeakyReLU](0.2), CplxToCplx[torch.nn.Hardswish](),
        CplxToCplx[torch.tanh](), CplxLinear(3, 3), CplxToCplx[cplx_user_layers.ELU](),
    ).eval()
    z = Cplx(torch.randn(2, 3), torch.randn(2, 3))
    with torch.no_grad():
        expected = model(z)
    (tmp_path / "pickled").write_bytes(pickle.dumps((model, z, expected)))
    (tmp_path / "saved.pt").write_bytes(_saved(model))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path))
    result = subprocess.run(
        [sys.executable, "-c", _FRESH], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    # the code under test, not an installed copy
    assert result.stdout.splitlines() == [
        cplxmodule.__file__,
        "CplxToCplx[torch/nn/modules/activation:LeakyReLU] CplxToCplx[cplx_user_layers:ELU]",
    ]
