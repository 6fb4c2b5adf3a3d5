"""Sparsity statistics: how many parameters the masks switch off."""

import types

import torch

from ...cplx import Cplx
from ..masked.base import BaseMasked

__all__ = ["named_sparsity", "sparsity"]


def named_sparsity(module, prefix="", **kwargs):
    r"""Iterate over the layers of ``module`` with their count of zeroed parameters.

    A masked layer (:class:`~cplxmodule.nn.masked.BaseMasked`) with a mask
    zeroes every weight entry whose mask is zero; a complex weight entry
    counts as two real parameters. A layer with a ``relevance(**kwargs)``
    method (the Bayesian layers of :mod:`cplxmodule.nn.relevance`) zeroes
    the entries its relevance mask drops. Every other parameter counts as
    dense.

    Parameters
    ----------
    module : torch.nn.Module
        The model to walk, in the order of :meth:`torch.nn.Module.named_modules`.
    prefix : str, optional
        Prepended to every name.
    **kwargs
        Passed on to ``relevance()`` (e.g. ``threshold``).

    Yields
    ------
    name : str
        The layer's name. A masked or Bayesian layer counts all the
        parameters below it (a complex weight's two parts included); any
        other module only its own.
    counts : tuple of int
        ``(n_zeroed, n_parameters)``. Modules without parameters are
        skipped.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> layer = LinearMasked(4, 2, bias=False)
    >>> layer.mask = torch.tensor([1.0, 0.0, 0.0, 1.0])
    >>> dict(named_sparsity(layer))
    {'': (4, 8)}
    """
    layers = set()
    for name, layer in module.named_modules(prefix=prefix):
        if any(owner in layers for owner in _ancestors(name)):
            continue
        zeroed_mask = _zeroed_mask(layer, kwargs)
        if zeroed_mask is not None:
            layers.add(name)
            n_parameters = sum(p.numel() for p in layer.parameters())
            n_zeroed = int(zeroed_mask.sum())
            if isinstance(layer.weight, Cplx):
                n_zeroed *= 2
        else:
            n_parameters = sum(p.numel() for p in layer.parameters(recurse=False))
            n_zeroed = 0
        if n_parameters:
            yield name, (n_zeroed, n_parameters)


def sparsity(module, **kwargs):
    r"""The fraction of the parameters of ``module`` that its masks zero.

    Parameters
    ----------
    module : torch.nn.Module
    **kwargs
        Passed on to :func:`named_sparsity`.

    Returns
    -------
    float
        Zeroed parameters over all parameters (see :func:`named_sparsity`),
        ``0.0`` for a model without parameters.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> model = torch.nn.Sequential(LinearMasked(4, 2, bias=False), torch.nn.Linear(2, 4))
    >>> model[0].mask = torch.tensor([1.0, 0.0, 0.0, 1.0])
    >>> sparsity(model)
    0.2
    """
    n_zeroed = n_parameters = 0
    for _, (zeroed, total) in named_sparsity(module, **kwargs):
        n_zeroed, n_parameters = n_zeroed + zeroed, n_parameters + total
    return n_zeroed / n_parameters if n_parameters else 0.0


def _ancestors(name):
    """The names of the modules strictly above ``name``."""
    parts = name.split(".") if name else []
    return [".".join(parts[:i]) for i in range(len(parts))]


def _zeroed_mask(layer, kwargs):
    """A boolean tensor of the weight entries ``layer`` zeroes, or ``None``."""
    if isinstance(layer, BaseMasked):
        return None if layer.mask is None else torch.eq(layer.mask, 0)
    relevance = getattr(layer, "relevance", None)
    if isinstance(relevance, types.MethodType):
        return torch.eq(relevance(**kwargs), 0)
    return None
