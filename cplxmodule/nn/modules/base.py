"""Base classes of complex layers and the promotion of real layers to split ones."""

from __future__ import annotations

import torch

from ...cplx import Cplx
from ...cplx.conversions import _COMPILED, _ELEMENTWISE, _split_apply
from ...cplx._dtypes import AUTOCAST_DTYPES, HALF_DTYPES, autocast_dtype
from ...cplx._shared import check_dtype, checked_cplx
from .. import _kinds
from .._globals import finder, global_name
from .parameter import CplxParameter  # noqa: F401  (published import path)
from .parameter import _load_complex_children, _refuse_complex_cast
from typing import TYPE_CHECKING, Any, Dict, Union

from ...cplx._typing import CplxLike

__all__ = [
    "CplxToCplx",
    "BaseRealToCplx",
    "BaseCplxToReal",
    "CplxParameterAccessor",
    "is_from_cplx",
    "is_to_cplx",
    "is_cplx_to_cplx",
]


if TYPE_CHECKING:
    _Module = torch.nn.Module
else:
    # a mixin at run time, so that it goes before torch.nn.Module in any MRO
    _Module = object


class CplxParameterAccessor(_Module):
    """The base that makes a layer's complex parameters load and move as wholes.

    The published package read a complex parameter ``layer.weight`` through
    a ``__getattr__`` on this base.  Here a :class:`CplxParameter` is itself
    a :class:`Cplx`, so attribute access already returns one; what this
    base adds is the state-dict side: ``load_state_dict`` loads each complex
    parameter at once (both parts, or one native complex tensor), or leaves
    the whole layer as it was, and ``module.to(torch.complex64)`` is refused
    rather than casting the real parts to complex.  :class:`CplxToCplx`,
    :class:`BaseRealToCplx` and :class:`BaseCplxToReal` derive from it, and
    so may any module holding a :class:`CplxParameter` (before
    :class:`torch.nn.Module` in its bases).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> class Scale(CplxParameterAccessor, torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.weight = CplxParameter(cplx.Cplx.ones(2))
    >>> isinstance(Scale().weight, cplx.Cplx)
    True
    >>> layer = Scale()
    >>> _ = layer.load_state_dict({"weight": torch.tensor([2 + 1j, 3 - 1j])})
    >>> layer.weight.real.tolist(), layer.weight.imag.tolist()
    ([2.0, 3.0], [1.0, -1.0])
    """

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
    ):
        _load_complex_children(self, state_dict, prefix, error_msgs, missing_keys)
        super()._load_from_state_dict(
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )

    def _apply(self, fn, recurse=True):
        _refuse_complex_cast(self, fn)
        return super()._apply(fn, recurse)


class CplxToCplx(CplxParameterAccessor, torch.nn.Module):
    r"""Base class of layers mapping a :class:`Cplx` to a :class:`Cplx`.

    ``CplxToCplx[Base]`` promotes a real layer class or a unary function to a
    *split* complex layer, which applies it to the real and imaginary parts
    separately: ``CplxToCplx[torch.nn.ELU](alpha=0.5)`` takes the arguments
    of :class:`torch.nn.ELU`, and ``CplxToCplx[torch.tanh]()`` applies
    :func:`torch.tanh`; extra constructor arguments of a promoted function
    are passed to it on every call.  The base runs twice per call, once per
    part, so a stateful base updates its state twice (a promoted
    :class:`torch.nn.BatchNorm1d` counts each batch twice and mixes the parts'
    statistics; a promoted :class:`torch.nn.Dropout` draws a mask per part):
    use :class:`CplxBatchNorm1d` and :class:`CplxDropout` instead.

    The generated classes are cached (the same ``Base`` gives the same
    class) and named after where ``Base`` is found:
    ``CplxToCplx[torch.nn.ELU]`` is the global
    ``CplxToCplx[torch/nn/modules/activation:ELU]`` of this module (dots
    written as ``/``, since pickle reads a dot as an attribute access), so
    two bases of one short name, ``torch.nn.ELU`` and a user's ``ELU``, get
    two names.  Pickle saves such a class by that name, as any class, and
    finds it again in a process that has not made it yet (the module makes
    it on lookup); a load with ``weights_only=True`` needs the class itself
    in the allow-list, as :func:`cplxmodule.nn.safe_globals` gives it.  A
    base that cannot be found by its name (a lambda, a local class) gives a
    class that works but cannot be pickled.  The layers keep the short name
    in their repr, ``CplxToCplx[ELU](alpha=1.0)``.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxToCplx[torch.nn.ReLU]()
    >>> z = cplx.Cplx(torch.tensor([-1.0, 2.0]), torch.tensor([3.0, -4.0]))
    >>> layer(z).real, layer(z).imag
    (tensor([0., 2.]), tensor([3., 0.]))
    """

    def __init_subclass__(cls, compact=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if compact is not None:
            # a list holds several kinds, the first that applies wins (a kind
            # itself may be a tuple)
            _kinds.declare(cls, *(compact if isinstance(compact, list) else [compact]))

    def __class_getitem__(cls, base):
        if cls is not CplxToCplx:
            raise TypeError(f"{cls.__name__}[...] is not defined; use CplxToCplx[...]")
        return _promoted(base)


class BaseRealToCplx(CplxParameterAccessor, torch.nn.Module):
    """Base class of layers mapping real tensors to a :class:`Cplx`."""


class BaseCplxToReal(CplxParameterAccessor, torch.nn.Module):
    """Base class of layers mapping a :class:`Cplx` to real tensors."""


_PROMOTED: Dict[Any, type] = {}  # base -> promoted class
_RECIPES: Dict[type, Any] = {}  # promoted class -> base


def _promoted(base):
    """The split complex layer class for the real layer class or function ``base``."""
    if isinstance(base, type) and issubclass(base, CplxToCplx):
        return base
    if base is torch.nn.Module:
        return CplxToCplx
    if base not in _PROMOTED:
        if isinstance(base, type) and issubclass(base, torch.nn.Module):
            cls = _split_module(base)
        elif callable(base) and not isinstance(base, type):
            cls = _split_function(base)
        else:
            raise TypeError(
                "CplxToCplx[...] takes a torch.nn.Module subclass or a function, "
                f"got {base!r}"
            )
        _PROMOTED[base], _RECIPES[cls] = cls, base
    return _PROMOTED[base]


if not TYPE_CHECKING:
    # module ``__getattr__`` (PEP 562): pickle finds a promoted class in a
    # process that has not made it yet; hidden from mypy, which would
    # otherwise take any name imported from this module as found
    __getattr__ = finder(__name__, ("CplxToCplx",), lambda prefix, base: _promoted(base))


def _split_module(base):
    if base in _ELEMENTWISE:
        # one call on both parts where they share a buffer (see `_split_apply`)
        compiled = _COMPILED.get(base)

        def forward(self: torch.nn.Module, input: CplxLike) -> Cplx:
            input = _check_cplx(self, input)
            return _split_apply(input, base.forward.__get__(self), compiled=compiled)

    else:
        def forward(self: torch.nn.Module, input: CplxLike) -> Cplx:
            input = _check_cplx(self, input)
            return Cplx(base.forward(self, input.real), base.forward(self, input.imag))

    name = f"CplxToCplx[{base.__name__}]"
    namespace = {
        "__module__": __name__,
        "__qualname__": global_name("CplxToCplx", base),
        "__doc__": f"Split complex :class:`{base.__module__}.{base.__qualname__}`: "
        "applied to the real and the imaginary part separately.",
        "forward": forward,
    }
    return type(name, (CplxToCplx, base), namespace)


class _SplitFunction(CplxToCplx):
    """Shared body of the layers made by ``CplxToCplx[f]`` for a function ``f``."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.args, self.kwargs = args, kwargs

    def forward(self, input):
        input = _check_cplx(self, input)
        if self._function in _ELEMENTWISE:
            return _split_apply(input, self._function, self.args, self.kwargs,
                                _COMPILED.get(self._function))
        return input.apply(self._function, *self.args, **self.kwargs)

    def extra_repr(self):
        args = [repr(a) for a in self.args]
        args += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return ", ".join(args)


def _split_function(function):
    label = getattr(function, "__name__", None) or repr(function)
    name = f"CplxToCplx[{label}]"
    namespace = {
        "__module__": __name__,
        "__qualname__": global_name("CplxToCplx", function),
        "__doc__": f"Split complex ``{label}``: applied to the real and the "
        "imaginary part separately.",
        "_function": staticmethod(function),
    }
    return type(name, (_SplitFunction,), namespace)


def _ends(module, index):
    """The first (``index=0``) or last (``-1``) layer of a :class:`torch.nn.Sequential`."""
    while isinstance(module, torch.nn.Sequential) and not isinstance(module, CplxToCplx):
        if not len(module):
            return None
        module = module[index]
    return module


def _is(module, bases):
    """Whether ``module``, a layer or a layer class, derives from one of ``bases``."""
    if isinstance(module, type):
        return issubclass(module, bases)
    return isinstance(module, bases)


def is_from_cplx(module: Union[torch.nn.Module, type]) -> bool:
    """Whether ``module`` takes a :class:`Cplx` input.

    Parameters
    ----------
    module : torch.nn.Module or type
        A layer or a layer class. A :class:`torch.nn.Sequential` is judged
        by its first layer.

    Returns
    -------
    bool
        ``True`` for :class:`CplxToCplx` and :class:`BaseCplxToReal` layers;
        ``False`` for anything else, an empty sequence included.

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear, CplxToReal
    >>> is_from_cplx(CplxToReal()), is_from_cplx(torch.nn.Linear(2, 2))
    (True, False)
    >>> is_from_cplx(torch.nn.Sequential(CplxLinear(2, 2), torch.nn.ReLU()))
    True
    """
    return _is(_ends(module, 0), (CplxToCplx, BaseCplxToReal))


def is_to_cplx(module: Union[torch.nn.Module, type]) -> bool:
    """Whether ``module`` returns a :class:`Cplx`.

    Parameters
    ----------
    module : torch.nn.Module or type
        A layer or a layer class. A :class:`torch.nn.Sequential` is judged
        by its last layer.

    Returns
    -------
    bool
        ``True`` for :class:`CplxToCplx` and :class:`BaseRealToCplx` layers;
        ``False`` for anything else, an empty sequence included.

    Examples
    --------
    >>> from cplxmodule.nn import RealToCplx
    >>> is_to_cplx(RealToCplx()), is_to_cplx(torch.nn.ReLU)
    (True, False)
    """
    return _is(_ends(module, -1), (CplxToCplx, BaseRealToCplx))


def is_cplx_to_cplx(module: Union[torch.nn.Module, type]) -> bool:
    """Whether ``module`` maps a :class:`Cplx` to a :class:`Cplx`.

    Parameters
    ----------
    module : torch.nn.Module or type
        A layer or a layer class; see :func:`is_from_cplx` and :func:`is_to_cplx`.

    Returns
    -------
    bool
        ``is_from_cplx(module) and is_to_cplx(module)``.

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear, CplxToReal, RealToCplx
    >>> is_cplx_to_cplx(CplxLinear(2, 2))
    True
    >>> is_cplx_to_cplx(torch.nn.Sequential(CplxToReal(), RealToCplx()))
    True
    """
    return is_from_cplx(module) and is_to_cplx(module)


def _check_cplx(
    layer: Any, input: object, shape: object = None, name: str = "input", half_input: bool = False
) -> Cplx:
    """Raise the functional core's error unless ``input`` is a :class:`Cplx`, naming ``layer``.

    ``shape`` describes the expected shape in the message, e.g. ``"(..., 4)"``.
    The input's dtype must be that of the layer's weight, if it has one:
    torch's own message would come from deep in the functional core and
    name neither the layer nor the argument. Two exceptions follow torch's
    own layers. Under :func:`torch.autocast` (enabled for the input's
    device), any dtype autocast casts passes, as it does into
    :class:`torch.nn.Linear`: the products run in autocast's dtype. With
    ``half_input`` (the norms), a float16 or bfloat16 input passes with
    float32 parameters, as into :class:`torch.nn.BatchNorm1d`, in or out
    of autocast.
    """
    input = checked_cplx(input, name, where=layer._get_name(), shape=shape)
    weight = layer._modules.get("weight", layer._parameters.get("weight"))
    if weight is not None and weight.dtype != input.dtype and not _dtypes_mix(
        input, weight.dtype, half_input
    ):
        hint = "cast one to the other, e.g. `layer.to(input.dtype)` or `input.to(weight.dtype)`"
        check_dtype(
            input, weight.dtype, name, layer._get_name(), "the layer's weight",
            hint + ("" if half_input else ", or run under `torch.autocast`"),
        )
    return input


def _dtypes_mix(input, weight_dtype, half_input):
    """Whether torch's twin of the layer would take ``input`` with a ``weight_dtype`` weight."""
    if half_input:
        return input.dtype in HALF_DTYPES and weight_dtype == torch.float32
    return weight_dtype in AUTOCAST_DTYPES and autocast_dtype(input) is not None
