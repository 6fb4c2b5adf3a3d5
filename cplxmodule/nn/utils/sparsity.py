"""Sparsity statistics: how many parameters the masks switch off."""

import types

import torch

from ...cplx import Cplx

__all__ = ["SparsityStats", "named_sparsity", "sparsity"]


class SparsityStats:
    """Base of layers that count their own zeroed parameters for :func:`named_sparsity`.

    A layer deriving from it implements ``sparsity(**kwargs)``, returning
    pairs ``(parameter, n_zeroed)`` (the published package's first item is
    ``id(parameter)``; either is accepted and only the counts are used).
    :func:`named_sparsity` passes its keyword arguments on and counts the
    layer as one unit: the sum of the counts over all its parameters.

    Examples
    --------
    >>> class Pruned(SparsityStats, torch.nn.Linear):
    ...     def sparsity(self, **kwargs):
    ...         return [(id(self.weight), int((self.weight == 0).sum()))]
    >>> layer = Pruned(3, 2, bias=False)
    >>> with torch.no_grad():
    ...     _ = layer.weight[0].zero_()
    >>> dict(named_sparsity(layer))
    {'': (3, 6)}
    """

    __sparsity_ignore__ = ()

    def sparsity(self, **kwargs):
        """Pairs ``(parameter or its id, number of zeroed entries)``; see the class.

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
    r"""Iterate over the layers of ``module`` with their count of zeroed parameters.

    A masked layer (:class:`~cplxmodule.nn.masked.BaseMasked`) with a mask
    zeroes every weight entry whose mask is zero; a complex weight entry
    counts as two real parameters. A layer with a ``relevance(**kwargs)``
    method (the Bayesian layers of :mod:`cplxmodule.nn.relevance`) zeroes
    the entries its relevance mask drops, and a :class:`SparsityStats`
    layer the counts its ``sparsity(**kwargs)`` returns. Every other
    parameter counts as dense.

    Parameters
    ----------
    module : torch.nn.Module
        The model to walk, in the order of :meth:`torch.nn.Module.named_modules`.
    prefix : str, optional
        Prepended to every name.
    **kwargs
        Passed on to ``relevance()`` (e.g. ``threshold``) and ``sparsity()``.

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
        n_zeroed = _n_zeroed(layer, kwargs)
        if n_zeroed is not None:
            layers.add(name)
            n_parameters = sum(p.numel() for p in layer.parameters())
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


def _n_zeroed(layer, kwargs):
    """The number of real parameters ``layer`` zeroes, or ``None`` if it zeroes none."""
    if isinstance(layer, SparsityStats):  # the masked layers among them
        return int(sum(count for _, count in layer.sparsity(**kwargs)))
    relevance = getattr(layer, "relevance", None)
    if not isinstance(relevance, types.MethodType):
        return None
    zeroed = torch.eq(relevance(**kwargs), 0)
    # a complex weight entry is a real and an imaginary parameter
    return int(zeroed.sum()) * (2 if isinstance(layer.weight, Cplx) else 1)
