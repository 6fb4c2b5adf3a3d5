"""The published import paths exist, and every public name is documented.

Public modules are found by walking the package, so a new module is covered
as soon as it exists: every module whose dotted name has no component that
starts with an underscore.
"""

import importlib
import inspect
import pkgutil

import pytest

import cplxmodule


def public_modules():
    """The names of every public module of cplxmodule, the package included."""
    names = ["cplxmodule"]
    for info in pkgutil.walk_packages(cplxmodule.__path__, "cplxmodule."):
        # private modules include ``__main__``, which runs a program on import
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


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


def public_objects():
    """``(qualified name, object)`` for every class and function in an ``__all__``."""
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            if inspect.isclass(obj) or inspect.isroutine(obj):
                yield f"{module}.{name}", obj


@pytest.mark.parametrize("qualname, obj", list(public_objects()))
def test_public_name_has_docstring(qualname, obj):
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
    assert doc and doc.strip(), f"{qualname} has no docstring of its own"
