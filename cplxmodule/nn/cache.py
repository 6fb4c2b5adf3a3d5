"""An explicit cache of the weights that layers derive from their parameters."""

from __future__ import annotations

from typing import Any, Literal

import contextvars
import threading

import torch

from ..cplx import Cplx
from ..cplx._product import Packed

__all__ = ["cached"]

# What ``cached`` holds, per thread and per context (``contextvars``), so that
# a context caches for the code that entered it alone: every module held ->
# its store, a dict of the values computed for it; the same modules -> the
# number of contexts holding them; each ``cached`` object -> the module lists
# of its active entries. The mappings are replaced on entry and exit, never
# changed in place, and live here, not on the module, so that
# ``replicate``'s shallow copies, ``deepcopy`` and pickle never see them.
_Store = dict[tuple[str, bool, bool], Any]  # (name, grad mode, inference mode) -> value
_STORES: contextvars.ContextVar[dict[torch.nn.Module, _Store]] = contextvars.ContextVar(
    "cplxmodule_cached_stores", default={}
)
_DEPTHS: contextvars.ContextVar[dict[torch.nn.Module, int]] = contextvars.ContextVar(
    "cplxmodule_cached_depths", default={}
)
_ENTRIES: contextvars.ContextVar[dict[cached, tuple[list[torch.nn.Module], ...]]] = (
    contextvars.ContextVar("cplxmodule_cached_entries", default={})
)
# The number of contexts active in every thread: the hot path's one test
# outside them (dynamo cannot trace ``ContextVar.get``, a plain global it can).
_ACTIVE = 0
_ACTIVE_LOCK = threading.Lock()


def _count_active(change):
    global _ACTIVE
    with _ACTIVE_LOCK:
        _ACTIVE += change


class cached:
    r"""Compute the weights of ``module``'s layers once and reuse them, inside a context.

    Inside the context, each masked layer computes ``weight * mask`` at most
    once, and each complex layer (dense, masked, or Bayesian for its mean)
    packs its weight and bias at most once in every form its complex
    products need (torch's native complex dtype, the sums of Gauss's trick,
    the block matrix); then every forward pass reuses them. On exit
    everything is dropped. Outside the context nothing is cached, so nothing
    can be stale: every forward pass reads the parameters and masks as they
    are, whatever wrote into them (``.data``,
    :func:`torch.distributed.broadcast`, DDP's buffer broadcast).

    Contexts nest, for the same module or for overlapping parts of a model,
    and one ``cached`` object may be entered again: a layer keeps its cache
    until the last context holding it exits, also when the exit is due to an
    exception.

    The context holds the layers for the thread, and the :mod:`contextvars`
    context, that entered it: another thread running the same model at the
    same time computes its weights at every call, from its own parameters
    and masks, as outside any context. A context copied inside it (an
    :mod:`asyncio` task created there) shares it, as with any context
    variable.

    Parameters
    ----------
    module : torch.nn.Module
        The model; the context covers every submodule it has on entry.
        ``with cached(model) as m`` binds ``m`` to ``model``.

    Raises
    ------
    TypeError
        If ``module`` is not a :class:`torch.nn.Module`.
    RuntimeError
        On exit in a thread or context where the object is not active.

    Notes
    -----
    As :func:`torch.nn.utils.parametrize.cached`, the context promises that
    the weights do not change while it is active: writes into parameters or
    masks inside it (an optimizer step, ``load_state_dict``, ``.to()``,
    :func:`torch.func.functional_call`) may go unseen by the layers until it
    exits. Each value is computed lazily, at its first use, and once per grad
    mode: values computed under :func:`torch.no_grad` or
    :func:`torch.inference_mode` are never used with autograd, and values
    computed with autograd carry their graph, so gradients reach the
    parameters; as with ``parametrize.cached``, that graph can be
    back-propagated once, so enter the context once per training step.

    Only the modules held by the context are cached: the replicas that
    :class:`torch.nn.DataParallel` makes of them are new modules and compute
    their weights at every call, on their own device.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn import CplxLinear
    >>> model = CplxLinear(4, 3)
    >>> x = cplx.randn(2, 4)
    >>> with cached(model), torch.no_grad():
    ...     outputs = [model(x) for _ in range(3)]  # the weight is packed once
    >>> outputs[0].shape
    torch.Size([2, 3])
    """

    def __init__(self, module: torch.nn.Module) -> None:
        if not isinstance(module, torch.nn.Module):
            raise TypeError(
                f"cached: `module` must be a torch.nn.Module, got {type(module).__name__}"
            )
        self.module = module

    def __enter__(self) -> torch.nn.Module:
        held = list(self.module.modules())
        stores, depths = dict(_STORES.get()), dict(_DEPTHS.get())
        for layer in held:
            depths[layer] = depths.get(layer, 0) + 1
            stores.setdefault(layer, {})
        entries = _ENTRIES.get()
        entries = {**entries, self: entries.get(self, ()) + (held,)}
        _STORES.set(stores)
        _DEPTHS.set(depths)
        _ENTRIES.set(entries)
        _count_active(+1)
        return self.module

    def __exit__(self, *exc_info: object) -> Literal[False]:
        entries = dict(_ENTRIES.get())
        if self not in entries:
            raise RuntimeError(
                "cached: a context must exit in the thread (and contextvars context)"
                " that entered it, got an exit where it is not active"
            )
        *rest, held = entries.pop(self)
        if rest:
            entries[self] = tuple(rest)
        stores, depths = dict(_STORES.get()), dict(_DEPTHS.get())
        for layer in held:
            depths[layer] -= 1
            if not depths[layer]:
                del depths[layer], stores[layer]
        _STORES.set(stores)
        _DEPTHS.set(depths)
        _ENTRIES.set(entries)
        _count_active(-1)
        return False


def _stores():
    """The stores of the modules held in this thread and context: module -> dict."""
    return _STORES.get()


def _memo(layer, name, make):
    """``make()``, computed once per grad mode while ``layer`` is inside ``cached``.

    A complex value is returned as a :class:`~cplxmodule.cplx._product.Packed`,
    which keeps the forms the complex products derive from it. Compiled code
    always calls ``make``: torch.compile plans its own reuse.
    """
    # the hot path outside any context is this one test
    if not _ACTIVE or torch.compiler.is_compiling():
        return make()
    store = _STORES.get().get(layer)
    if store is None:
        return make()
    key = name, torch.is_grad_enabled(), torch.is_inference_mode_enabled()
    value = store.get(key)
    if value is None:
        value = make()
        if isinstance(value, Cplx):
            value = Packed(value)
        store[key] = value
    return value


def _cached_attr(layer, name):
    """``getattr(layer, name)``, packed once while ``layer`` is inside ``cached``."""
    if not _ACTIVE:
        return getattr(layer, name)
    return _memo(layer, name, lambda: getattr(layer, name))
