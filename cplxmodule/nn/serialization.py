"""The allow-list that loads a pickled model with ``torch.load(..., weights_only=True)``."""

from __future__ import annotations

import importlib
import io
import pickle
import pickletools
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from ..cplx.conversions import _ELEMENTWISE
from ._globals import resolve as _resolve
from .modules.base import _promoted

__all__ = ["safe_globals"]

# What the library's models are made of, imported before the classes are
# collected when no model is given.
_PACKAGES = (
    "cplxmodule.cplx",
    "cplxmodule.nn",
    "cplxmodule.nn.masked",
    "cplxmodule.nn.relevance",
    "cplxmodule.nn.relevance.extensions",
    "cplxmodule.models",
)

# Modules whose classes and functions can reach the interpreter, the
# operating system or arbitrary attributes (``operator.getitem``,
# ``builtins.getattr``, ``functools.partial``, ``subprocess.Popen``): never
# allow-listed, whatever a pickle names.
_BROAD_MODULES = frozenset({
    "builtins", "operator", "_operator", "functools", "_functools", "copyreg", "copy", "importlib", "types",
    "inspect", "os", "posix", "nt", "sys", "subprocess", "shutil", "pathlib", "io",
    "_io", "pickle", "_pickle", "marshal", "runpy", "code", "codeop", "ctypes",
    "socket", "multiprocessing", "threading", "tempfile", "pty", "webbrowser",
})

# The data types of ``builtins`` (torch allows ``set``, ``complex`` and
# ``bytearray`` by default).
_BUILTIN_DATA = frozenset({frozenset, slice, range, set, complex, bytearray})


def safe_globals(model: Optional[object] = None) -> List[Callable[..., Any]]:
    """The allow-list that loads a pickled ``model`` with ``weights_only=True``.

    ``torch.load(path, weights_only=True)`` (torch's default) rebuilds only
    tensors and the few types torch allows; a whole pickled model
    (``torch.save(model)``) also names its classes, which must be allowed
    by :func:`torch.serialization.safe_globals` (or
    :func:`torch.serialization.add_safe_globals`). This function lists
    them: every class and function that the pickle of ``model`` names and
    torch does not allow by default, found by pickling ``model`` as
    :func:`torch.save` does, tensor data left out.

    Parameters
    ----------
    model : object, optional
        The model to be loaded, or one of the same architecture: the same
        classes, the same kinds of layer (a masked or Bayesian twin names
        other classes than its dense model), the same
        ``CplxToCplx[...]`` promotions; any object that
        :func:`torch.save` takes (a dict of a model and an optimizer's
        state, say). Its weights do not matter. Without a model: every
        class of the library (layers, twins, models), the
        ``CplxToCplx[...]`` classes of torch's elementwise layers and
        functions and those made so far in this process, and every layer
        class of :mod:`torch.nn`: it loads any model made of them alone,
        but not one holding a user's own classes (add them), nor a
        ``CplxToCplx[...]`` of another base before that class is made.

    Returns
    -------
    list
        The classes (and the library's elementwise functions, such as
        :func:`torch.tanh`, where a model holds one as an attribute),
        sorted by their module and name. The ``CplxToCplx[...]`` classes
        are among them under their global names (see
        :class:`~cplxmodule.nn.CplxToCplx`).

    Raises
    ------
    ValueError
        If the pickle of ``model`` names a global that this function does
        not vouch for: a function other than the library's elementwise
        ones, or a class or function of a module that reaches the
        interpreter or the system (``operator.getitem``,
        ``builtins.getattr``, ``functools.partial``, ``os``, ...), each of
        which would let a file loaded under the allow-list call or reach
        arbitrary code. The message names them.
    pickle.PicklingError
        If ``model`` cannot be pickled at all (a lambda as an attribute, a
        ``CplxToCplx[...]`` of a lambda).

    Notes
    -----
    To load, one needs this list before the file: build a model of the
    same architecture (its weights are not read) or keep the list, e.g.
    as the names ``f"{cls.__module__}.{cls.__qualname__}"``. The call
    without a model needs neither, for models made of the library's and
    torch's layers. A file saved from a model whose classes have since
    changed may name others: :func:`torch.serialization.get_unsafe_globals_in_checkpoint`
    lists what a file names, without loading it. ``weights_only=False``
    loads any pickle, and runs any code it holds: only for files from a
    trusted source. Saving ``model.state_dict()`` rather than the model
    needs no allow-list at all.

    Examples
    --------
    >>> import io
    >>> from cplxmodule.nn import CplxLinear, CplxSequential, CplxToCplx
    >>> model = CplxSequential(CplxLinear(4, 3), CplxToCplx[torch.nn.ELU]())
    >>> [f"{cls.__module__}.{cls.__qualname__}" for cls in safe_globals(model)]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['cplxmodule.nn.modules.base.CplxToCplx[torch/nn/modules/activation:ELU]',
     'cplxmodule.nn.modules.container.CplxSequential',
     'cplxmodule.nn.modules.linear.CplxLinear',
     'cplxmodule.nn.modules.parameter.CplxParameter']
    >>> buffer = io.BytesIO()
    >>> torch.save(model, buffer)
    >>> _ = buffer.seek(0)
    >>> with torch.serialization.safe_globals(safe_globals(model)):
    ...     loaded = torch.load(buffer, weights_only=True)
    >>> loaded[1]
    CplxToCplx[ELU](alpha=1.0)
    >>> from cplxmodule import Cplx
    >>> z = Cplx(torch.randn(2, 4), torch.randn(2, 4))
    >>> torch.equal(loaded(z).real, model(z).real)
    True
    """
    if model is None:
        return _sorted(_library_classes())
    needed = [_resolve(module, name) for module, name in _pickled_globals(model)]
    default = _torch_defaults()
    needed = [obj for obj in needed if id(obj) not in default]
    refused = [obj for obj in needed if not _vouched(obj)]
    if refused:
        names = ", ".join(f"`{_name(obj)}`" for obj in _sorted(refused))
        raise ValueError(
            f"safe_globals: the pickle of `model` names {names}, which would let a file "
            "loaded under the allow-list call or reach arbitrary code; they are not "
            "listed. Save the model without them (or its state_dict), or load it with "
            "`weights_only=False`, only from a trusted source"
        )
    return _sorted(needed)


def _pickled_globals(obj: object) -> List[Tuple[str, str]]:
    """``(module, name)`` of every global that the pickle of ``obj`` names.

    Pickled as :func:`torch.save` pickles (protocol 2, storages saved by
    reference), with Python 3's module names (``builtins``, not
    ``__builtin__``), as torch's ``weights_only`` loader reads them.
    """
    buffer = io.BytesIO()
    pickler = _StoragesByReference(buffer, protocol=2, fix_imports=False)
    pickler.dump(obj)
    found: Dict[Tuple[str, str], None] = {}
    for opcode, arg, _ in pickletools.genops(buffer.getvalue()):
        # protocol 2 names a global by GLOBAL only (STACK_GLOBAL is protocol 4's)
        if opcode.name == "GLOBAL":
            module, name = str(arg).split(" ", 1)
            found[module, name] = None
    return list(found)


class _StoragesByReference(pickle.Pickler):
    """A pickler that leaves the tensors' data out, as :func:`torch.save` does."""

    def persistent_id(self, obj: Any) -> Optional[str]:
        if isinstance(obj, torch.storage.TypedStorage) or torch.is_storage(obj):
            return "storage"
        return None


def _torch_defaults() -> Dict[int, Any]:
    """The globals that torch's ``weights_only`` loader allows unasked, by id.

    Read from torch's private table; without it (another torch), nothing
    is left out, and the list only grows by what torch allows anyway.
    """
    try:
        from torch._weights_only_unpickler import _get_allowed_globals
    except ImportError:
        return {}
    return {id(obj): obj for obj in _get_allowed_globals().values()}


def _vouched(obj: Any) -> bool:
    """Whether ``obj`` may be allow-listed: a class or an elementwise function, of no broad module."""
    root = str(getattr(obj, "__module__", None) or "").split(".")[0]
    if isinstance(obj, type):
        return obj in _BUILTIN_DATA or root not in _BROAD_MODULES
    try:
        return obj in _ELEMENTWISE
    except TypeError:  # unhashable
        return False


def _library_classes() -> List[type]:
    """Every picklable layer class of the library and of :mod:`torch.nn`."""
    for package in _PACKAGES:
        importlib.import_module(package)
    from ..cplx import Cplx

    # the split layers of torch's elementwise layers and functions, which a
    # model may make in its constructor (``CplxUNet``'s leaky ReLU): made
    # now, so that the list holds them in a process that has built no model
    for base in _ELEMENTWISE:
        _promoted(base)

    found: Dict[int, type] = {id(Cplx): Cplx}
    stack = [torch.nn.Module]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        module = cls.__module__
        ours = module == "cplxmodule" or module.startswith("cplxmodule.")
        torch_nn = module.startswith("torch.nn.modules.") and not cls.__name__.startswith("_")
        if (ours or torch_nn) and _found_again(cls):
            found[id(cls)] = cls
    return list(found.values())


def _found_again(cls: type) -> bool:
    """Whether pickle finds ``cls`` by its module and qualname (a local class is not)."""
    try:
        # a ``CplxToCplx[...]`` class is found by the module's ``__getattr__``
        return _resolve(cls.__module__, cls.__qualname__) is cls
    except (ImportError, AttributeError):
        return False


def _name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', repr(obj))}"


def _sorted(objects: List[Any]) -> List[Any]:
    return sorted(objects, key=_name)
