"""Sparsity statistics: how many parameters the masks switch off."""

from __future__ import annotations

import torch

from ...cplx import Cplx
from .._guards import check_finite, layer_label, naming
from typing import Any, ClassVar

__all__ = ["SparsityStats", "named_sparsity", "sparsity"]


class SparsityStats:
    """Base of layers that count their own zeroed parameters for :func:`named_sparsity`.

    A layer deriving from it implements ``sparsity(**kwargs)``, returning
    pairs ``(tensor, n_zeroed)``: a parameter or buffer anywhere in the model
    (or its ``id``, the published package's form) and how many of its
    entries the layer zeroes. :func:`named_sparsity` passes its keyword
    arguments on. The masked and Bayesian layers of cplxmodule are
    ``SparsityStats``.

    Attributes
    ----------
    __sparsity_ignore__ : tuple of str
        Names of the layer's own parameters and buffers that
        :func:`named_sparsity` leaves out (``("mask",)`` for a masked layer,
        ``("log_sigma2",)`` for a Bayesian one): they are not weights of the
        model. Any module may declare it (a lookup table kept in a
        persistent buffer, say), not only a ``SparsityStats`` layer.

    Examples
    --------
    >>> class Pruned(SparsityStats, torch.nn.Linear):
    ...     def sparsity(self, **kwargs):
    ...         return [(self.weight, int((self.weight == 0).sum()))]
    >>> layer = Pruned(3, 2, bias=False)
    >>> with torch.no_grad():
    ...     _ = layer.weight[0].zero_()
    >>> dict(named_sparsity(layer))
    {'weight': (3, 6)}
    """

    __sparsity_ignore__: ClassVar[tuple[str, ...]] = ()

    def sparsity(self, *args: Any, **kwargs: Any) -> list[tuple[Any, int]]:
        """Pairs ``(tensor or its id, number of zeroed entries)``; see the class.

        Raises
        ------
        NotImplementedError
            Unless a subclass implements it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} derives from SparsityStats and must implement "
            "`sparsity(**kwargs)`"
        )


def named_sparsity(module, prefix="", **kwargs):
    r"""Iterate over the parameters and buffers of ``module`` with their count of zeroed entries.

    The figures are the published package's. Every :class:`SparsityStats`
    layer reports the entries it zeroes (its ``sparsity(**kwargs)``):

    - a masked layer (:class:`~cplxmodule.nn.masked.BaseMasked`) the entries
      of its weight whose mask is not positive (with ``hard=False``, the sum
      of ``1 - mask``); nothing without a mask;
    - a Bayesian layer (:mod:`cplxmodule.nn.relevance`) the entries its
      relevance mask drops (the sum of ``1 - relevance(**kwargs)``).

    The real and imaginary parts of a complex weight each count them. Every
    other parameter and buffer counts as dense (no zeroed entries), and the
    names in a module's ``__sparsity_ignore__`` (a mask, ``log_sigma2``,
    ``log_alpha``) are left out, as are non-persistent buffers: tables a
    layer recomputes at construction and keeps out of its state_dict (the
    sinusoidal positional encoding's), which are no weights of the model.
    The published package counted these too, but none of its layers (nor
    torch's) has one, so its models keep their published figures.

    Parameters
    ----------
    module : torch.nn.Module
        The model to walk.
    prefix : str, optional
        Prepended to every name.
    **kwargs
        Passed on to each layer's ``sparsity()``: ``threshold`` for the
        Bayesian layers, ``hard`` for masked layers and ``LinearL0`` (the
        others accept and ignore it).

    Yields
    ------
    name : str
        The parameter's or buffer's name, as in
        :meth:`~torch.nn.Module.named_parameters` (``weight.real`` and
        ``weight.imag`` for a complex weight): every parameter first, then
        every buffer.
    counts : tuple
        ``(n_zeroed, numel)``; ``n_zeroed`` is a float, as published (a
        soft count need not be whole).

    Raises
    ------
    ValueError
        Naming the layer, if a masked or Bayesian layer has a parameter
        holding NaN or an infinity: such an entry is refused, never counted
        as zeroed (a NaN weight times a zero mask is still NaN).
    TypeError
        Naming the layer, if its ``sparsity`` lacks an argument, e.g. the
        ``threshold`` of a Bayesian layer.

    Examples
    --------
    >>> from cplxmodule.nn.masked import CplxLinearMasked
    >>> layer = CplxLinearMasked(4, 2)
    >>> layer.mask = torch.tensor([1.0, 0.0, 0.0, 1.0])
    >>> dict(named_sparsity(layer))
    {'weight.real': (4.0, 8), 'weight.imag': (4.0, 8), 'bias.real': (0.0, 2), 'bias.imag': (0.0, 2)}
    """
    return _named_sparsity(module, prefix, kwargs, "named_sparsity")


def _named_sparsity(module, prefix, kwargs, where):
    """:func:`named_sparsity`, its errors naming the helper ``where``."""
    n_zeroed = {}
    for name, layer in module.named_modules(prefix=prefix):
        if isinstance(layer, SparsityStats):
            check_finite(layer, where, name)
            with naming(layer_label(where, name, layer)):
                counts = layer.sparsity(**kwargs)
            for tensor, count in counts:
                n_zeroed[id(tensor) if isinstance(tensor, torch.Tensor) else tensor] = count
    for kind in ("_parameters", "_buffers"):
        for name, tensor in _named_counted(module, prefix, kind):
            yield name, (n_zeroed.get(id(tensor), 0.0), tensor.numel())


def sparsity(module, **kwargs):
    r"""The fraction of the parameters and buffers of ``module`` that its layers zero.

    Parameters
    ----------
    module : torch.nn.Module
    **kwargs
        Passed on to :func:`named_sparsity` (e.g. ``threshold`` for the
        Bayesian layers).

    Returns
    -------
    float
        Zeroed entries over all entries, as :func:`named_sparsity` counts
        them; ``0.0`` for a model without parameters or buffers.

    Raises
    ------
    ValueError, TypeError
        As :func:`named_sparsity`, naming the layer.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> model = torch.nn.Sequential(LinearMasked(4, 2, bias=False), torch.nn.Linear(2, 4))
    >>> model[0].mask = torch.tensor([1.0, 0.0, 0.0, 1.0])
    >>> sparsity(model)
    0.2
    """
    n_zeroed = n_total = 0
    for _, (zeroed, total) in _named_sparsity(module, "", kwargs, "sparsity"):
        n_zeroed, n_total = n_zeroed + zeroed, n_total + total
    return float(n_zeroed / n_total) if n_total else 0.0


def _named_counted(module, prefix, kind):
    """The named parameters (``kind="_parameters"``) or buffers that :func:`named_sparsity` counts.

    As :meth:`~torch.nn.Module.named_parameters`, each tensor once, less the
    names in its owner's ``__sparsity_ignore__`` (any module's) and the
    non-persistent buffers: tables that a layer recomputes at construction
    (a positional encoding's), which are not weights of the model and would
    dilute the figure (the published package counted them, but none of its
    layers, nor torch's, has one).
    """
    seen = set()
    for owner_name, owner in module.named_modules(prefix=prefix):
        ignore = set(getattr(owner, "__sparsity_ignore__", ()))
        if kind == "_buffers":
            ignore |= owner._non_persistent_buffers_set
        for name, tensor in getattr(owner, kind).items():
            if tensor is None or name in ignore or id(tensor) in seen:
                continue
            seen.add(id(tensor))
            yield (f"{owner_name}.{name}" if owner_name else name), tensor


def _weight_counts(layer, dropped):
    """``[(id(part), n)]`` for each real part of ``layer.weight``: ``n`` is the sum of ``dropped``.

    ``dropped`` is 1 where a weight entry is switched off (or ``1 - keep``
    for a soft count); a complex weight's real and imaginary parts count
    the same entries.
    """
    weight = layer.weight
    parts = (weight.real, weight.imag) if isinstance(weight, Cplx) else (weight,)
    count = float(torch.sum(dropped))
    return [(id(part), count) for part in parts]
