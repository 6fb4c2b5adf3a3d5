"""Twins of whole models: dense, masked and Bayesian, and magnitude masks.

Every dense layer family (``Linear``, ``Bilinear``, ``Conv1-3d``,
``ConvTranspose1-3d``, real and complex, and those a user declares) and
every user's subclass of a dense layer has twins of several kinds that
take the same constructor arguments and share state_dict keys: the dense
layer itself, its masked twin (``"masked"``), its variational dropout
(``"vd"``), ARD (``"ard"``) and structured twins, made by the table of
kinds (``cplxmodule.nn._families``). :func:`convert_layers` copies a model
and makes every layer its twin of a kind, in place, keeping the weights.
"""

from __future__ import annotations

import copy
import functools
import warnings

import torch
import torch.nn.utils.parametrize

from ...cplx import Cplx
from ...cplx._shared import check_choice, check_real
from .. import _families
from .._guards import check_finite, layer_label, renamed
from ._channels import _parts
from typing import Callable, Iterable, Mapping, Optional, Union

__all__ = ["convert_layers", "to_masked", "magnitude_masks"]


_MISSING = object()


def _conversion_weight(layer):
    """The weight a twin of ``layer`` takes: what ``layer`` computes with in eval mode.

    A masked layer (its mask folded in) and a layer with gates of its own
    (L0: its eval-mode gates folded in) define ``_eval_weight()``, which
    :func:`~cplxmodule.nn.masked.compact` stores as well; any other layer
    computes with its ``weight`` (as a posterior's mean).
    """
    eval_weight = getattr(layer, "_eval_weight", None)
    return layer.weight if eval_weight is None else eval_weight()


def _retype(layer, plain, target, weight=None, options=None):
    """``layer``, a copy, made in place into its twin ``target`` (a class, or one with bound arguments).

    Its kind's state is taken off (the weight it computes with in eval mode
    folded into its weight), its class set to its dense class ``plain``,
    then to the twin's, whose kind bases add their state. Everything else of
    the layer stays: its parameters and their ``requires_grad`` flags, its
    hooks, modes and attributes, those of a user's class included. A
    variational parameter of the same name, shape and gated channels in
    source and twin (``log_sigma2`` between VD and ARD) keeps its value;
    one the twin adds is trainable as the weight of its module is.
    ``weight`` replaces the weight folded in (``compact`` folds a Bayesian
    layer's relevance mask in); ``options`` are the layer's own arguments
    of its kind (the width of a quantized twin).
    """
    cls, bound = (target.func, target.keywords) if isinstance(target, functools.partial) else (
        target, {})
    before = dict(layer.named_parameters())
    gated = getattr(layer, "gated", None)
    if type(layer) is not plain:
        with torch.no_grad():
            folded = _conversion_weight(layer) if weight is None else weight
            parts = [part.clone() for part in _parts(folded)]
            layer._detach_kind()
            layer.__class__ = plain
            for part, value in zip(_parts(layer.weight), parts):
                part.copy_(value)
    if cls is not plain:
        layer.__class__ = cls
        layer._attach_kind(**bound, **(options or {}))
    with torch.no_grad():
        for name, parameter in layer.named_parameters():
            old = before.get(name, parameter)
            if old is not parameter and old.shape == parameter.shape and (
                    getattr(layer, "gated", None) == gated):
                parameter.copy_(old)
    _set_flags(layer, {name: p.requires_grad for name, p in before.items()})
    return layer


# what a conversion carries from a layer to its twin besides the state_dict
_HOOKS = (
    "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
    "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_backward_pre_hooks",
    "_backward_hooks", "_state_dict_pre_hooks", "_state_dict_hooks",
    "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
)


def _carry(source, twin):
    """Give ``twin``, a new module, the hooks, ``requires_grad`` flags and modes of ``source``."""
    _set_flags(twin, {name: p.requires_grad for name, p in source.named_parameters()})
    for hooks in _HOOKS:
        getattr(twin, hooks).update(getattr(source, hooks))
    if source._is_full_backward_hook is not None:
        twin._is_full_backward_hook = source._is_full_backward_hook
    twin.train(source.training)
    modes = {name: sub.training for name, sub in source.named_modules()}
    for name, sub in twin.named_modules():
        sub.training = modes.get(name, sub.training)


def _plain_class(module):
    """The dense class ``module`` converts through (see ``_families.plain_class``), or ``None``.

    A layer parametrized with :mod:`torch.nn.utils.parametrize` computes
    its weight in a parametrization, which a twin would not keep: ``None``.
    """
    if torch.nn.utils.parametrize.is_parametrized(module):
        return None
    return _families.plain_class(type(module))


def _built_as(module, target):
    """Whether ``target``, a class or a class with bound arguments, builds ``module`` as it is."""
    if isinstance(target, functools.partial):
        return type(module) is target.func and all(
            getattr(module, name, _MISSING) == value for name, value in target.keywords.items()
        )
    return type(module) is target


Selection = Union[Iterable[Union[str, type]], Callable[[str, torch.nn.Module], bool], None]


def convert_layers(
    module: torch.nn.Module, kind: str, *, layers: Selection = None, exclude: Selection = None,
) -> torch.nn.Module:
    """A copy of ``module`` in which every layer with a ``kind`` twin is that twin.

    The walk is recursive (containers and custom modules included); a
    swapped layer is rebuilt with the same constructor arguments, device
    and dtype and loads the original's state_dict with ``strict=False``, so
    weights and biases are kept (and a mask, between masked layers), and
    what the twin adds starts from its initial value (``log_sigma2 = -10``,
    no mask). In eval mode the twin computes what the layer computed (a
    Bayesian twin as its posterior mean): a masked layer's twins of other
    kinds take its weight times its mask, so that its pruned entries stay
    zero (a second round of variational dropout on a fine-tuned masked
    model keeps the pruning, and drops them again). A layer with gates of
    its own (the L0 layers: :class:`~cplxmodule.nn.relevance.LinearL0` and
    the ``*ChannelL0`` layers) converts as the dense layer it computes as in
    eval mode: the twin's weight is its weight with the eval-mode gates
    folded in (as :func:`~cplxmodule.nn.masked.compact` stores it), and the
    gates stay behind. A recurrent layer with gates on its hidden units
    (:mod:`~cplxmodule.nn.relevance.recurrent`) converts so too: to the
    plain layer, its gates folded into its projections' weights and biases,
    whose projections then convert to ``kind``. A layer already of the kind
    is kept as it is. ``module`` itself is not changed, whether the
    conversion succeeds or raises.

    What a swapped layer had besides its state carries over to its twin:
    each parameter's ``requires_grad`` (a parameter the twin adds, such as
    ``log_sigma2`` or a gate, follows the weight's, so that a frozen layer
    stays frozen), its forward, backward and state_dict hooks (the handles
    that registered them remove them from ``module``, not from the copy, as
    for :func:`copy.deepcopy`) and the training mode of it and of each of
    its submodules. A layer used under several names stays one layer.

    Layers of other types are copied as they are; a subclass of a layer
    that has a ``kind`` twin, or a layer parametrized with
    :mod:`torch.nn.utils.parametrize` (``weight_norm``), whose ``forward``
    may compute anything, is copied too, with a warning naming it: it gets
    no penalty and no mask.

    Parameters
    ----------
    module : torch.nn.Module
    kind : str
        ``"dense"``, ``"masked"``, ``"vd"``, ``"ard"`` and the structured
        kinds of :func:`~cplxmodule.nn.relevance.to_bayesian`. Converting
        to ``"dense"`` folds masks into the weights and drops variances.
    layers : iterable of str or type, or callable, optional
        The layers to convert, the others copied as they are: names in
        ``module`` (as :meth:`~torch.nn.Module.named_modules` gives them; a
        name selects the module and everything in it), classes (a layer
        that is an instance of one), or a predicate ``(name, layer) ->
        bool``. All by default.
    exclude : iterable of str or type, or callable, optional
        The layers not to convert, of the same forms (the complement):
        ``exclude=["head"]`` keeps a 1-channel output layer dense, say.

    Returns
    -------
    torch.nn.Module
        The converted copy, in ``module``'s training mode.

    Raises
    ------
    ValueError
        If ``kind`` is not a known kind, if a name in ``layers`` or
        ``exclude`` names no module of ``module`` (a typo), or if a layer to
        convert has a parameter holding NaN or an infinity (naming it: such
        a weight would read as pruned by a mask or a relevance threshold,
        and poisons the output all the same).
    RuntimeError, TypeError
        If ``module`` cannot be copied, naming the layer and the attribute
        that :func:`copy.deepcopy` fails on (the ``weight`` that
        :mod:`torch.nn.utils.prune` computes from ``weight_orig``: remove
        the pruning first; a lock).

    Warns
    -----
    UserWarning
        For each layer left as it is although its base class has a
        ``kind`` twin (a subclass of a twin, a parametrized layer), naming it.

    Examples
    --------
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    >>> masked = convert_layers(model, "masked")
    >>> type(masked[0]).__name__, bool(torch.equal(masked[2].weight, model[2].weight))
    ('LinearMasked', True)
    >>> [type(m).__name__ for m in convert_layers(model, "vd", exclude=["2"])]
    ['LinearVD', 'ReLU', 'Linear']
    """
    check_choice(kind, "kind", "convert_layers", _families.kinds())
    return _convert_model(module, kind, "convert_layers", layers, exclude)


def _selection(module, layers, exclude, where):
    """The predicate ``(name, layer) -> bool`` of the layers to convert; arguments checked."""
    chosen = _matcher(module, layers, "layers", where, default=True)
    excluded = _matcher(module, exclude, "exclude", where, default=False)
    return lambda name, layer: chosen(name, layer) and not excluded(name, layer)


def _matcher(module, selection, argument, where, default):
    """A predicate ``(name, layer) -> bool`` for ``selection`` (see :func:`convert_layers`)."""
    if selection is None:
        return lambda name, layer: default
    if callable(selection) and not isinstance(selection, type):
        return selection
    if isinstance(selection, (str, type)):
        selection = [selection]
    try:
        items = list(selection)
    except TypeError:
        items = [selection]
    wrong = [item for item in items if not isinstance(item, (str, type))]
    if wrong:
        raise TypeError(
            f"{where}: `{argument}` must be names, classes or a predicate (name, layer) ->"
            f" bool, got {wrong!r}"
        )
    names = {name for name in items if isinstance(name, str)}
    unknown = sorted(names - {name for name, _ in module.named_modules()})
    if unknown:
        raise ValueError(f"{where}: `{argument}` must name modules of `module`, got {unknown}")
    types = tuple(cls for cls in items if isinstance(cls, type))

    def matches(name, layer):
        inside = any(name == n or name.startswith(n + ".") for n in names if n)
        return inside or "" in names or isinstance(layer, types)
    return matches


def _set_flags(twin, flags):
    """Set ``requires_grad`` of ``twin``'s parameters from the source's ``flags``, by name.

    A parameter the source has keeps its flag; one the twin adds
    (``log_sigma2``, gates) is trainable as the weight of the module that
    holds it was (any of its parts), as any parameter was where that module
    has no weight: a frozen layer stays frozen.
    """
    for name, parameter in twin.named_parameters():
        parameter.requires_grad_(flags[name] if name in flags else _added_flag(flags, name))


def _added_flag(flags, name):
    """``requires_grad`` of a parameter ``name`` that a twin adds, from the source's ``flags``."""
    owner = name.rpartition(".")[0]
    weight = f"{owner}.weight" if owner else "weight"
    of_weight = [flag for key, flag in flags.items() if key == weight or key.startswith(weight + ".")]
    return any(of_weight or flags.values()) if flags else True


def _convert_model(module, kind, where, layers=None, exclude=None, options=None):
    """:func:`convert_layers` of a checked ``kind``, its errors and warnings naming ``where``.

    ``options(name)`` gives the kind's arguments of the layer ``name`` (see
    :func:`_retype`).
    """
    selected = _selection(module, layers, exclude, where)
    return _convert(_copy(module, where), kind, {}, "", where, selected, options)


def _targets(module, kind, where, layers=None, exclude=None):
    """The names of the layers that :func:`_convert_model` makes twins of ``kind`` (each once)."""
    selected = _selection(module, layers, exclude, where)
    found: list = []
    for name, layer in module.named_modules():
        if any(name.startswith(outer + ".") for outer in found):
            continue
        plain = _plain_class(layer) if selected(name, layer) else None
        target = None if plain is None else _families.twin_class(plain, kind)
        if target is not None and not _built_as(layer, target):
            found.append(name)
    return found


def _convert(module, kind, memo, name, where, selected, options=None):
    if id(module) in memo:  # a layer used twice stays one layer
        return memo[id(module)]
    if not selected(name, module):
        plain, target = None, None
    else:
        plain = _plain_class(module)
        target = None if plain is None else _families.twin_class(plain, kind)
    if target is not None and not _built_as(module, target):
        check_finite(module, where, name)
        converted = _retype(module, plain, target, options=None if options is None else options(name))
    else:
        if plain is None and selected(name, module):
            _warn_if_left_as_it_is(module, kind, name, where)
        converted = _convert_composite(module, kind, name, where, selected)
        # not ``named_children``, which yields a shared child only once
        for child_name, child in list(converted._modules.items()):
            path = f"{name}.{child_name}" if name else child_name
            new = None if child is None else _convert(
                child, kind, memo, path, where, selected, options)
            if new is not child:
                setattr(converted, child_name, new)
    if converted is not module:
        _carry(module, converted)
    memo[id(module)] = converted
    return converted


def _copy(module, where):
    """``copy.deepcopy(module)``; what cannot be copied is named, with its layer."""
    try:
        return copy.deepcopy(module)
    except Exception as error:  # noqa: BLE001 (whatever deepcopy raised, re-raised below)
        found = _uncopyable(module)
        if found is None:
            raise
        name, attribute = found
        message = (
            f"{layer_label(where, name, module.get_submodule(name))} cannot be copied: its"
            f" attribute `{attribute}` fails to copy ({error}). A tensor computed from the"
            " parameters (torch.nn.utils.prune's `weight`: undo it with"
            " `torch.nn.utils.prune.remove`) or a lock must go before converting"
        )
        raise renamed(error, message) from error


def _uncopyable(module):
    """``(layer name, attribute)`` of the first attribute of a layer that deepcopy fails on."""
    for name, layer in module.named_modules():
        for attribute, value in vars(layer).items():
            if attribute == "_modules":
                continue
            try:
                copy.deepcopy(value)
            except Exception:  # noqa: BLE001 (any failure names the attribute)
                return name, attribute
    return None


def _warn_if_left_as_it_is(module, kind, name, where):
    """Warn when ``module`` derives from a layer that has a ``kind`` twin but is left as it is.

    Membership is by exact class: a subclass or a parametrized layer may
    compute anything in its ``forward``, so it is copied as it is; it then
    gets no penalty and no mask, which the user must hear of.
    """
    base = next(
        (
            cls for cls in type(module).__mro__[1:]
            if getattr(_families.lookup(cls), "convertible", False)
            and _families.lookup(cls).kind != kind
            and _families.twin_class(_families.lookup(cls).family.dense, kind) is not None
        ),
        None,
    )
    if base is None:
        return
    if torch.nn.utils.parametrize.is_parametrized(module):
        why = (
            "is parametrized (torch.nn.utils.parametrize, e.g. weight_norm): remove the"
            " parametrization first (parametrize.remove_parametrizations with"
            " leave_parametrized=True)"
        )
    else:
        why = f"is a subclass of {base.__name__}, whose own forward may compute anything"
    warnings.warn(
        f"{layer_label(where, name, module)} is left as it is, with no {kind!r} twin: it {why}",
        UserWarning,
        stacklevel=4,
    )


def _convert_composite(module, kind, name, where, selected):
    """``module``, or its ``kind`` twin if it is a layer with gates that span its projections.

    Such a layer (a recurrent layer with hidden-unit gates) converts through
    the plain layer it computes as in eval mode, its gates folded into the
    projections; its twin of ``kind``, if the plain layer has one, is built
    from that plain layer with dense projections. The caller then converts
    the projections of what comes out to ``kind``.
    """
    composite = _families.lookup_composite(type(module))
    if composite is None or composite.kind == kind or not selected(name, module):
        return module
    check_finite(module, where, name)
    plain = module if composite.kind == "dense" else module.plain_twin()
    target = _families.composite_twin(composite.dense, kind)
    if target is None:
        return plain
    return target.from_plain(_convert(plain, "dense", {}, name, where, lambda *_: True))


def plain_composites(model, **kwargs):
    """``model`` with every layer whose gates span its projections as the plain layer it computes as.

    ``model`` is changed in place, and returned (replaced, if it is such a
    layer itself). ``kwargs`` go to each layer's ``plain_twin`` (the
    ``threshold`` of :func:`~cplxmodule.nn.masked.compact`, at which a
    Gaussian unit gate drops its units).
    """
    new = {}
    for module in model.modules():
        composite = _families.lookup_composite(type(module))
        if composite is not None and composite.kind != "dense" and id(module) not in new:
            new[id(module)] = module.plain_twin(**kwargs)
            _carry(module, new[id(module)])
    for parent in list(model.modules()):
        for name, child in list(parent._modules.items()):
            if id(child) in new:
                setattr(parent, name, new[id(child)])
    return new.get(id(model), model)


def to_masked(
    module: torch.nn.Module,
    masks: Optional[Mapping[str, torch.Tensor]] = None,
    strict: bool = False,
    *,
    layers: Selection = None,
    exclude: Selection = None,
) -> torch.nn.Module:
    """The masked twin of ``module``: every layer with a masked twin swapped for it.

    Parameters
    ----------
    module : torch.nn.Module
        A dense, Bayesian or masked model; see :func:`convert_layers`.
    masks : Mapping[str, torch.Tensor], optional
        Masks keyed ``<layer>.mask`` (e.g. from
        :func:`~cplxmodule.nn.relevance.compute_ard_masks` or
        :func:`magnitude_masks`), deployed with
        :func:`~cplxmodule.nn.masked.deploy_masks`.
    strict : bool, default False
        With ``masks``: raise if a mask key names no masked layer of the
        twin (a typo), or a layer that this call makes masked gets no mask
        from them (its first forward pass would fail); by default the keys
        are left out and the layers left without a mask, with a warning.
    layers, exclude : optional
        The layers to convert, and those not to, as for
        :func:`convert_layers`.

    Returns
    -------
    torch.nn.Module

    Raises
    ------
    ValueError
        With ``strict``, naming the keys of no layer or the layers left
        without a mask; and as :func:`convert_layers` and
        :func:`~cplxmodule.nn.masked.deploy_masks` raise.

    Warns
    -----
    UserWarning
        Without ``strict``, naming them.

    Notes
    -----
    An L0 layer (:class:`~cplxmodule.nn.relevance.LinearL0`, the
    ``*ChannelL0`` layers) becomes a masked layer whose weight is its
    weight times its eval-mode gates, values in :math:`[0, 1]` (see
    :func:`convert_layers`). With its mask from ``compute_ard_masks`` (by
    default ``hard=True``: 1 where a gate is open at all, whole channels
    of a structured layer) the masked twin then computes in eval mode
    what the L0 layer computes, and its masks are binary, as
    :func:`~cplxmodule.nn.masked.compact` needs them. Masks of
    ``hard=False`` hold the gates' values, which that weight holds
    already: deployed, they would scale it twice.

    A recurrent layer with Gaussian gates on its hidden units
    (:class:`~cplxmodule.nn.relevance.recurrent.UnitGaussianMixin`)
    becomes the plain layer with masked projections; once the masks are
    deployed, the biases of the units they drop (rows of every gate) are
    zeroed, so that those units are dead and
    :func:`~cplxmodule.nn.masked.compact` removes them. The masked model
    then differs from the Bayesian one in eval mode on those units:
    pruning them is the point, as for the weights of a VD layer.

    Examples
    --------
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3))
    >>> masked = to_masked(model, masks=magnitude_masks(model, keep=0.5))
    >>> int(masked[0].mask.sum())
    6
    """
    from .base import BaseMasked, _deploy_masks, _refuse_or_warn

    masked = _deploy_masks(
        _convert_model(module, "masked", "to_masked", layers, exclude), masks, "", False, None,
        strict, "to_masked", "masks",
    )
    # a layer whose gates span its projections and are pruned by a mask
    # (Gaussian unit gates) folds the deployed masks into its plain twin
    for name, layer in module.named_modules():
        fold = getattr(layer, "fold_masks", None)
        twin = masked.get_submodule(name)
        if fold is not None and _families.lookup_composite(type(layer)) is not None and (
                type(twin) is not type(layer)):
            fold(twin)
    if masks is not None:
        was_masked = {name for name, layer in module.named_modules()
                      if isinstance(layer, BaseMasked)}
        bare = [name for name, layer in masked.named_modules()
                if isinstance(layer, BaseMasked) and layer.mask is None and name not in was_masked]
        if bare:
            _refuse_or_warn(
                f"to_masked: `masks` must hold a mask for every layer made masked, got none"
                f" for {bare}: their first forward pass would fail", "set them, or deploy_masks",
                strict, stacklevel=3,
            )
    return masked


def magnitude_masks(
    module: torch.nn.Module, keep: float, scope: str = "global",
) -> dict[str, torch.Tensor]:
    """Masks that keep the largest weights by magnitude: the pruning baseline.

    Every layer that has a masked twin (dense, masked or Bayesian, real or
    complex) gets a mask keeping its weights of largest magnitude
    (:math:`|w|`, the modulus for complex weights), either the top ``keep``
    fraction of all these weights together (``scope="global"``) or of each
    layer's own (``"layer"``).

    Parameters
    ----------
    module : torch.nn.Module
    keep : float
        The fraction of weights to keep, in :math:`(0, 1]`; at least one
        weight per masked set is kept.
    scope : {"global", "layer"}

    Returns
    -------
    dict of str to torch.Tensor
        0/1 masks keyed ``<layer>.mask`` as :func:`~cplxmodule.nn.relevance.compute_ard_masks`
        gives them, of each weight's real shape and dtype.

    Raises
    ------
    ValueError
        If ``keep`` is not in :math:`(0, 1]`, ``scope`` is unknown or
        ``module`` has no layer with a masked twin.

    Examples
    --------
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    >>> masks = magnitude_masks(model, keep=0.25)
    >>> sorted(masks), int(sum(m.sum() for m in masks.values()))
    (['0.mask', '1.mask'], 4)
    """
    check_real(keep, "keep", "magnitude_masks", low=0, high=1, open_low=True)
    check_choice(scope, "scope", "magnitude_masks", ("global", "layer"))
    layers = [
        (name, layer) for name, layer in module.named_modules() if _plain_class(layer) is not None
    ]
    if not layers:
        raise ValueError(
            "magnitude_masks: `module` must have a layer with a masked twin,"
            f" got a {type(module).__name__} with none"
        )
    magnitudes = [_magnitude(_conversion_weight(layer)) for _, layer in layers]
    if scope == "global":
        flat = torch.cat([m.flatten().to(magnitudes[0].device) for m in magnitudes])
        kept = _top(flat, keep).split([m.numel() for m in magnitudes])
        kept = [k.view_as(m).to(m.device) for k, m in zip(kept, magnitudes)]
    else:
        kept = [_top(m.flatten(), keep).view_as(m) for m in magnitudes]
    return {
        f"{name}.mask" if name else "mask": k.to(m.dtype)
        for (name, _), k, m in zip(layers, kept, magnitudes)
    }


def _magnitude(weight):
    with torch.no_grad():
        if isinstance(weight, Cplx):
            return torch.hypot(weight.real, weight.imag)
        return torch.abs(weight)


def _top(values, keep):
    """A boolean vector marking the ``keep`` fraction of largest ``values``."""
    k = min(values.numel(), max(1, round(keep * values.numel())))
    kept = torch.zeros_like(values, dtype=torch.bool)
    kept[torch.topk(values, k, sorted=False).indices] = True
    return kept
