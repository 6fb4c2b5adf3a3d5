"""Global names for classes made at run time, so that pickle finds them again.

A class made from another object (``CplxToCplx[torch.nn.ELU]``, the masked
twin of a user's layer) is named after where that object is found:
``<prefix>[<module>:<qualname>]``, dots written as ``/`` (pickle splits a
name at its dots and looks each piece up in turn). The module holding such
classes answers a lookup of the name (PEP 562's module ``__getattr__``) by
making the class, so a process that has not made it yet unpickles it.
"""

import importlib
from typing import Any, Callable, Optional, Tuple

__all__ = []


def resolve(module: str, qualname: str) -> Any:
    """The object found at ``module`` (imported if need be) by the attributes of ``qualname``.

    Raises ``ImportError`` or ``AttributeError`` where there is none.
    """
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def location(obj: Any) -> Optional[Tuple[str, str]]:
    """``(module, qualname)`` where ``obj`` is found again, or ``None``.

    A builtin such as :func:`torch.tanh` has a qualname
    (``_VariableFunctionsClass.tanh``) that its module does not hold, but
    its ``__name__`` is found there; a method of a builtin class, such as
    ``torch.Tensor.tanh``, has no module, but its class has.
    """
    module = getattr(obj, "__module__", None)
    names = [getattr(obj, "__qualname__", None), getattr(obj, "__name__", None)]
    owner = getattr(obj, "__objclass__", None)
    if module is None and isinstance(owner, type):
        module = owner.__module__
        names = [f"{owner.__qualname__}.{getattr(obj, '__name__', '')}"]
    if not isinstance(module, str):
        return None
    for name in names:
        if not isinstance(name, str) or "<" in name:
            continue  # a lambda or a local object: not a global
        try:
            if resolve(module, name) is obj:
                return module, name
        except (ImportError, AttributeError):
            continue
    return None


def global_name(prefix: str, obj: Any) -> str:
    """``<prefix>[<module>:<qualname>]`` of ``obj``, dots written as ``/``.

    An object that is not found by its name again gets a name all the same
    (its module and qualname as they are): its class cannot be pickled.
    """
    found = location(obj)
    if found is None:
        module = getattr(obj, "__module__", None) or "?"
        label = getattr(obj, "__qualname__", None) or type(obj).__qualname__
        found = str(module), str(label)
    module, qualname = found
    return f"{prefix}[{module.replace('.', '/')}:{qualname.replace('.', '/')}]"


def finder(
    module: str, prefixes: Tuple[str, ...], make: Callable[[str, Any], type]
) -> Callable[[str], type]:
    """A module ``__getattr__`` that makes the class of a global name from :func:`global_name`.

    ``make(prefix, obj)`` returns the class of ``obj`` for ``prefix``; the
    lookup succeeds only for the one name of that class.
    """

    def find(name: str) -> type:
        prefix, _, rest = name.partition("[")
        if prefix in prefixes and rest.endswith("]") and ":" in rest:
            where, qualname = rest[:-1].split(":", 1)
            try:
                cls = make(prefix, resolve(where.replace("/", "."), qualname.replace("/", ".")))
            except (ImportError, AttributeError, TypeError, ValueError):
                pass
            else:
                if cls.__qualname__ == name and cls.__module__ == module:
                    return cls
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return find
