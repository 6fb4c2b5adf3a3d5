"""Flattening and unflattening complex tensors, as torch's ``Flatten`` and ``Unflatten``."""

from __future__ import annotations

import torch

from .._kinds import FLATTEN
from .base import CplxToCplx, _check_cplx
from ...cplx._typing import CplxLike
from ...cplx.tensor import Cplx

__all__ = ["CplxFlatten", "CplxUnflatten"]


class CplxFlatten(torch.nn.Flatten, CplxToCplx, compact=FLATTEN):
    """Flatten a contiguous range of dimensions of a complex tensor.

    The arguments are those of :class:`torch.nn.Flatten`; both parts are
    flattened alike.

    Parameters
    ----------
    start_dim : int, default 1
        The first dimension to flatten.
    end_dim : int, default -1
        The last dimension to flatten.

    Shape
    -----
    - Input: ``(*, S_start, ..., S_end, *)``.
    - Output: ``(*, S_start * ... * S_end, *)``.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> CplxFlatten()(cplx.randn(2, 3, 4, 5)).shape
    torch.Size([2, 60])
    >>> CplxFlatten(0, 2)(cplx.randn(2, 3, 4, 5)).shape
    torch.Size([24, 5])
    """

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        return input.flatten(self.start_dim, self.end_dim)


class CplxUnflatten(torch.nn.Unflatten, CplxToCplx):
    """Unflatten one dimension of a complex tensor into the shape ``unflattened_size``.

    The arguments are those of :class:`torch.nn.Unflatten`; both parts are
    unflattened alike.

    Parameters
    ----------
    dim : int or str
        The dimension to unflatten.
    unflattened_size : tuple of int or torch.Size
        Its new shape (one entry may be ``-1``).

    Shape
    -----
    - Input: ``(*, S_dim, *)``.
    - Output: ``(*, U_1, ..., U_n, *)``, where ``U_1 * ... * U_n = S_dim``.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> CplxUnflatten(1, (3, 4))(cplx.randn(2, 12)).shape
    torch.Size([2, 3, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        return input.apply(torch.unflatten, self.dim, self.unflattened_size)
