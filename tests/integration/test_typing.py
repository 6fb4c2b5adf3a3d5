"""Every public callable carries annotations on all its parameters and its return.

mypy (run by ``.ci/run``) checks that the annotations agree with the code;
this test checks that they are there, for the names users call: the
functions and the class of :mod:`cplxmodule.cplx`, and ``__init__`` and
``forward`` of every layer of :mod:`cplxmodule.nn`,
:mod:`cplxmodule.nn.masked` and :mod:`cplxmodule.nn.relevance`, and of the
models of :mod:`cplxmodule.models`.
"""

import importlib
import importlib.resources
import inspect

import pytest
import torch

PACKAGES = (
    "cplxmodule.cplx",
    "cplxmodule.nn",
    "cplxmodule.nn.masked",
    "cplxmodule.nn.relevance",
    "cplxmodule.utils",
    "cplxmodule.models",
)

# ``*args``/``**kwargs`` left unannotated, each with its reason. None today:
# cooperative ``__init__(*args: Any, **kwargs: Any)`` of the bases and
# ``Cplx.to(*args: Any, **kwargs: Any)`` (torch's ``Tensor.to`` overloads) are
# annotated ``Any``, which states that they pass anything on.
UNANNOTATED_VARIADICS: dict[str, str] = {}


def _ours(obj):
    return getattr(obj, "__module__", "").startswith("cplxmodule")


def _public_callables():
    seen = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
                methods = [getattr(obj, m, None) for m in ("__init__", "forward")]
            elif inspect.isclass(obj) and _ours(obj):
                # a plain class (Cplx, a report): its public methods and properties
                methods = []
                for klass in obj.__mro__:
                    if not _ours(klass):
                        continue
                    for attr, value in vars(klass).items():
                        if attr.startswith("_") and not attr.endswith("__"):
                            continue
                        if isinstance(value, property):
                            value = value.fget
                        if isinstance(value, (staticmethod, classmethod)):
                            value = value.__func__
                        methods.append(value)
            elif inspect.isfunction(obj):
                methods = [obj]
            else:
                methods = []
            for function in methods:
                # torch's own methods (a layer that inherits forward) are torch's business
                if inspect.isfunction(function) and _ours(function):
                    key = (function.__module__, function.__qualname__)
                    if key not in seen:
                        seen.add(key)
                        yield f"{function.__module__}.{function.__qualname__}", function


CALLABLES = dict(_public_callables())


def test_the_public_api_is_found():
    # a broken walk would pass the test below vacuously
    assert len(CALLABLES) > 300
    assert "cplxmodule.cplx.tensor.Cplx.__add__" in CALLABLES
    assert "cplxmodule.nn.modules.linear.CplxLinear.forward" in CALLABLES


def _missing(function):
    signature = inspect.signature(function)
    missing = []
    for position, (name, parameter) in enumerate(signature.parameters.items()):
        if position == 0 and name in ("self", "cls"):
            continue
        if parameter.annotation is inspect.Parameter.empty:
            variadic = parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
            if not (variadic and function.__qualname__ in UNANNOTATED_VARIADICS):
                missing.append(name)
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_public_signature_is_annotated(name):
    missing = _missing(CALLABLES[name])
    assert not missing, f"{name}: no annotation on {missing}"


def test_the_check_fails_for_an_unannotated_function():
    def partly(input: torch.Tensor, dim=0) -> torch.Tensor:
        return input

    def no_return(input: torch.Tensor):
        return input

    assert _missing(partly) == ["dim"]
    assert _missing(no_return) == ["return"]


def test_the_package_ships_py_typed():
    import cplxmodule

    root = importlib.resources.files(cplxmodule)
    assert root.joinpath("py.typed").is_file()
