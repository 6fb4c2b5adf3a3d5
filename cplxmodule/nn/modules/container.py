"""Containers of complex layers."""

import torch

from .base import CplxToCplx

__all__ = ["CplxSequential"]


class CplxSequential(torch.nn.Sequential, CplxToCplx):
    """A :class:`torch.nn.Sequential` of complex layers, itself a :class:`CplxToCplx`.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn import CplxLinear, CplxModReLU
    >>> model = CplxSequential(CplxLinear(3, 4), CplxModReLU(), CplxLinear(4, 2))
    >>> model(cplx.randn(5, 3)).shape
    torch.Size([5, 2])
    """
