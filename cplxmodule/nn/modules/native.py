"""Conversion between complex layers and torch's layers of native complex dtype."""

from __future__ import annotations

import copy

import torch

from ...cplx._dtypes import COMPLEX_OF
from .. import _families
from .container import CplxSequential
from .linear import CplxIdentity

__all__ = ["to_native", "from_native"]

# complex layer -> (native twin, constructor arguments both store as attributes)
_TO_NATIVE = {f.dense: (f.native, f.args) for f in _families.families() if f.native}
_FROM_NATIVE = {f.native: (f.dense, f.args) for f in _families.families() if f.native}


def to_native(module: torch.nn.Module) -> torch.nn.Module:
    """The model of torch's native complex layers computing what ``module`` computes.

    Parameters
    ----------
    module : torch.nn.Module
        A layer (:class:`CplxLinear`, ``CplxConv1d/2d/3d``,
        ``CplxConvTranspose1d/2d/3d``, :class:`CplxIdentity`), or a model
        built of them: :class:`CplxSequential` becomes
        :class:`torch.nn.Sequential`; ``ModuleList``, ``ModuleDict`` and any
        other module without parameters or buffers of its own (a custom
        model's top module) keep their class and have their children
        converted. Exactly these classes: a subclass (a masked layer, say)
        computes something else and is refused.

    Returns
    -------
    torch.nn.Module
        A new model: :class:`torch.nn.Linear`, ``Conv*d``, ``ConvTranspose*d``
        or :class:`torch.nn.Identity` layers with the same settings, on the
        same device, of dtype ``complex64`` for float32 parts (``complex128``
        for float64), holding exact copies of the parameters, each in its
        layer's training mode. ``module`` is not changed.

    Raises
    ------
    TypeError
        If a layer of ``module`` has no native twin (an activation such as
        :class:`CplxModReLU`, a masked layer, ...), naming it.

    Notes
    -----
    The conversion is lossless both ways: ``from_native(to_native(m))`` has
    bit-identical parameters.  Use it to run a trained model with torch's
    complex kernels, or to start from a torch complex model. A custom
    module's ``forward`` is kept as written: it must work on torch's complex
    tensors as well as on :class:`~cplxmodule.cplx.Cplx`. A masked model
    converts after :func:`~cplxmodule.nn.masked.compact` with
    ``max_density=0``, which leaves dense layers.

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear
    >>> model = CplxSequential(CplxLinear(3, 4), CplxLinear(4, 2))
    >>> to_native(model)
    Sequential(
      (0): Linear(in_features=3, out_features=4, bias=True)
      (1): Linear(in_features=4, out_features=2, bias=True)
    )
    >>> to_native(model)[0].weight.dtype
    torch.complex64
    """
    return _convert(module, _TO_NATIVE, "to_native", "")


def from_native(module: torch.nn.Module) -> torch.nn.Module:
    """The model of complex layers computing what a model of torch's complex layers computes.

    Parameters
    ----------
    module : torch.nn.Module
        A :class:`torch.nn.Linear`, ``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d``
        or :class:`torch.nn.Identity`, or a model built of them (containers as
        in :func:`to_native`; :class:`torch.nn.Sequential` becomes
        :class:`CplxSequential`). Layers with complex parameters convert; a
        real one given alone is promoted (imaginary parts zero), while inside
        a model it stays as it is (it works on real tensors).

    Returns
    -------
    torch.nn.Module
        A new model of :class:`CplxLinear`, ``CplxConv*d``,
        ``CplxConvTranspose*d`` and :class:`CplxIdentity` layers with the same
        settings and device, parts of the matching real dtype, exact copies of
        the parameters and the training modes. ``module`` is not changed.

    Raises
    ------
    TypeError
        If a layer of ``module`` is not one of the classes above, naming it.

    Examples
    --------
    >>> native = torch.nn.Conv2d(2, 4, 3, dtype=torch.complex64)
    >>> type(from_native(native)).__name__
    'CplxConv2d'
    """
    return _convert(module, _FROM_NATIVE, "from_native", "")


_CONTAINERS: dict[str, dict[type[torch.nn.Module], type[torch.nn.Module]]] = {
    "to_native": {CplxSequential: torch.nn.Sequential},
    "from_native": {torch.nn.Sequential: CplxSequential},
}
_IDENTITY = {"to_native": (CplxIdentity, torch.nn.Identity), "from_native": (torch.nn.Identity, CplxIdentity)}


def _convert(module, table, where, name):
    """Convert ``module`` (called ``name`` in the whole model) and its children."""
    cls = type(module)
    if name and where == "from_native" and cls in table and not module.weight.is_complex():
        return copy.deepcopy(module)  # a real layer inside a model stays real
    if cls in table:
        target, names = table[cls]
        return _convert_layer(module, target, names, where)
    source, target = _IDENTITY[where]
    if cls is source:
        return target().train(module.training)
    children = module._modules
    own = [t for t in module._parameters.values() if t is not None]
    own += [t for t in module._buffers.values() if t is not None]
    if not children or own or _is_ours(module, where):
        if cls not in _CONTAINERS[where]:
            _refuse(module, table, where, name)
    converted = {
        key: None if child is None else _convert(child, table, where, f"{name}.{key}".lstrip("."))
        for key, child in children.items()
    }
    if cls in _CONTAINERS[where]:
        new = _CONTAINERS[where][cls](*converted.values())
        return new.train(module.training)
    new = copy.copy(module)
    new._modules = converted
    return new


def _is_ours(module, where):
    """A layer of this package, which computes on Cplx (refused by ``to_native``)."""
    return where == "to_native" and type(module).__module__.startswith("cplxmodule.")


def _refuse(module, table, where, name):
    known = ", ".join(sorted(cls.__name__ for cls in table))
    identity = _IDENTITY[where][0].__name__
    got = type(module).__name__
    at = f" at `{name}`" if name else ""
    raise TypeError(
        f"{where}: `module` must be one of {known}, {identity}, or a model of them, "
        f"got {got}{at}"
    )


def _convert_layer(module, target, names, where):
    weight = module.weight
    if where == "to_native":
        dtype = COMPLEX_OF[weight.dtype]
    else:
        dtype = weight.real.dtype
    layer = torch.nn.utils.skip_init(
        target,
        **{name: getattr(module, name) for name in names},
        bias=module.bias is not None,
        device=weight.device,
        dtype=dtype,
    )
    with torch.no_grad():
        for name in ("weight", "bias"):
            value = getattr(module, name)
            if value is None:
                continue
            part = getattr(layer, name)
            if where == "to_native":
                part.copy_(torch.complex(value.real, value.imag))
            else:
                part.real.copy_(value.real)
                part.imag.copy_(value.imag if value.is_complex() else torch.zeros_like(value))
    return layer.train(module.training)
