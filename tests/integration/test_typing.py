"""Every public callable carries annotations on all its parameters and its return.

mypy (run by ``.ci/run``) checks that the annotations agree with the code;
this test checks that they are there, for the names users call: the
functions and the class of :mod:`cplxmodule.cplx`, and ``__init__`` and
``forward`` of every layer of :mod:`cplxmodule.nn`,
:mod:`cplxmodule.nn.masked` and :mod:`cplxmodule.nn.relevance`, and of the
models of :mod:`cplxmodule.models`. And that ``forward`` returns what it
says: the output of every sample of the layer table
(``tests/nn/layer_table.py``), in training and in eval mode, is an
instance of the return annotation of its layer's ``forward`` (mypy sees a
module's call as ``Any``, so it cannot check this).
"""

import importlib
import importlib.resources
import inspect
import types
import typing

import pytest
import torch

from cplxmodule import Cplx
from tests.nn.layer_table import LAYERS

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


# --- forward returns what its annotation says ------------------------------------------------
def _mismatch(value, annotation, where="output"):
    """Why ``value`` is not an instance of the type ``annotation``, or ``None`` if it is.

    Handles what forward annotations use: classes (a :class:`Cplx`, a tensor,
    a ``PackedSequence``), ``None``, ``Any``, ``Union``/``Optional`` (``X | Y``
    too), ``tuple[X, Y]``, ``tuple[X, ...]``, ``list[X]`` and ``dict[K, V]``.
    """
    if annotation is typing.Any:
        return None
    if annotation is None or annotation is type(None):
        return None if value is None else f"{where} is a {type(value).__name__}, not None"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union or origin is types.UnionType:
        reasons = [_mismatch(value, arm, where) for arm in args]
        if all(reasons):
            return f"{where} is a {type(value).__name__}, none of {annotation}"
        return None
    if origin in (tuple, list, dict):
        if not isinstance(value, origin):
            return f"{where} is a {type(value).__name__}, not a {origin.__name__}"
        if not args:
            return None
        if origin is dict:
            for k, v in value.items():
                reason = _mismatch(k, args[0], f"{where} key") or _mismatch(v, args[1], f"{where}[{k!r}]")
                if reason:
                    return reason
            return None
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                return f"{where} is a tuple of {len(value)}, not of {len(args)}"
            items = zip(value, args)
        else:
            items = ((item, args[0]) for item in value)
        for i, (item, arm) in enumerate(items):
            reason = _mismatch(item, arm, f"{where}[{i}]")
            if reason:
                return reason
        return None
    if inspect.isclass(annotation) and not getattr(annotation, "_is_protocol", False):
        if isinstance(value, annotation):
            return None
        return f"{where} is a {type(value).__name__}, not a {annotation.__name__}"
    raise TypeError(f"the check does not know the annotation {annotation!r}")


def test_the_output_check_reads_the_annotations():
    z, t = Cplx(torch.zeros(2)), torch.zeros(2)
    assert _mismatch(z, Cplx) is None
    assert _mismatch((z, None), tuple[Cplx, typing.Optional[torch.Tensor]]) is None
    assert _mismatch((z, t), tuple[Cplx, torch.Tensor | None]) is None
    assert _mismatch(z, typing.Union[Cplx, tuple[Cplx, torch.Tensor]]) is None
    assert _mismatch((z, t), typing.Union[Cplx, tuple[Cplx, torch.Tensor]]) is None
    assert _mismatch([z, z], list[Cplx]) is None
    assert _mismatch((z, z, z), tuple[Cplx, ...]) is None
    # what the multi-head attention said, and the max-pools with return_indices=True
    assert _mismatch((z, None), Cplx) == "output is a tuple, not a Cplx"
    assert _mismatch((z, t), Cplx) == "output is a tuple, not a Cplx"
    assert _mismatch(t, Cplx) == "output is a Tensor, not a Cplx"
    assert _mismatch((z, t), tuple[Cplx, Cplx]) == "output[1] is a Tensor, not a Cplx"
    assert _mismatch((z,), tuple[Cplx, Cplx]) == "output is a tuple of 1, not of 2"
    assert _mismatch(None, typing.Optional[Cplx]) is None
    assert _mismatch(t, typing.Optional[Cplx]) is not None


def _forward_cases():
    for info in LAYERS:
        for i, sample in enumerate(info.samples):
            ident = f"{info.id}-{sample.note}" if sample.note else info.id
            yield pytest.param(info, i, id=ident)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("info, sample", list(_forward_cases()))
def test_forward_returns_its_annotation(info, sample):
    module = info.make(sample=sample)
    forward = type(module).forward
    hints = typing.get_type_hints(forward)
    if "return" not in hints:
        # ours are annotated (test_public_signature_is_annotated); torch's own
        # (CplxSequential's is Sequential's) may not be: nothing to check
        assert not _ours(forward), f"{forward.__qualname__} has no return annotation"
        hints["return"] = typing.Any
    for training in (True, False):
        module.train(training)
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(0)
            output = module(*info.inputs(sample=sample))
        reason = _mismatch(output, hints["return"])
        assert reason is None, (
            f"{forward.__module__}.{forward.__qualname__} says -> {hints['return']},"
            f" {'training' if training else 'eval'}: {reason}"
        )
