"""The published import paths exist, and every public name is documented."""

import importlib
import inspect

import pytest

PUBLIC_MODULES = [
    "cplxmodule",
    "cplxmodule.cplx",
    "cplxmodule.nn",
    "cplxmodule.nn.init",
    "cplxmodule.nn.masked",
    "cplxmodule.nn.utils",
    "cplxmodule.utils",
]

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


def _public_objects():
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{module}.{name}", obj


@pytest.mark.parametrize("qualname, obj", list(_public_objects()))
def test_public_name_has_docstring(qualname, obj):
    assert obj.__doc__ and obj.__doc__.strip(), f"{qualname} has no docstring of its own"


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_all_lists_existing_names(module):
    mod = importlib.import_module(module)
    assert all(hasattr(mod, name) for name in getattr(mod, "__all__", []))
