"""The published import paths exist, and every public name is documented.

Public modules are found by walking the package (``public_modules`` of
tests/helpers.py), so a new module is covered as soon as it exists.
"""

import importlib
import inspect

import pytest

from ..helpers import public_modules, public_objects


PUBLIC_MODULES = public_modules()

# Names a user of the published package imports (DESIGN.md, "Layout").
CONTRACT = {
    "cplxmodule": ["Cplx", "from_real", "to_real", "__version__", "nn"],
    "cplxmodule.cplx": ["Cplx", "linear", "conv2d", "einsum", "modrelu"],
    "cplxmodule.nn": ["CplxParameter", "CplxLinear", "CplxToCplx", "CplxSequential"],
    "cplxmodule.nn.masked": [
        "BaseMasked",
        "LinearMasked",
        "CplxLinearMasked",
        "is_sparse",
        "named_masks",
        "deploy_masks",
        "binarize_masks",
    ],
    "cplxmodule.nn.utils": ["sparsity", "named_sparsity"],
}


@pytest.mark.parametrize("module, names", CONTRACT.items())
def test_contract_names_importable(module, names):
    mod = importlib.import_module(module)
    missing = [name for name in names if not hasattr(mod, name)]
    assert not missing, f"{module} lacks {missing}"


def test_walk_finds_the_public_packages():
    # guards the walker itself: these must be among what it finds
    assert set(CONTRACT) <= set(PUBLIC_MODULES)


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_module_declares_all(module):
    mod = importlib.import_module(module)
    assert isinstance(getattr(mod, "__all__", None), (list, tuple)), (
        f"{module} has no __all__"
    )


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_all_lists_existing_names(module):
    mod = importlib.import_module(module)
    missing = [name for name in getattr(mod, "__all__", []) if not hasattr(mod, name)]
    assert not missing, f"{module}.__all__ lists missing names {missing}"


@pytest.mark.parametrize("qualname, obj", list(public_objects()))
def test_public_name_has_docstring(qualname, obj):
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
    assert doc and doc.strip(), f"{qualname} has no docstring of its own"
