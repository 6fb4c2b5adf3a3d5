"""Flattening and unflattening complex tensors, as torch's ``Flatten`` and ``Unflatten``."""

import torch

from .._kinds import FLATTEN
from .base import CplxToCplx, _check_cplx

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

    def forward(self, input):
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
    ValueError
        If the input has no dimension ``dim``, or its size there does not
        unflatten into ``unflattened_size``.

    Examples
    --------
    >>> CplxUnflatten(1, (3, 4))(cplx.randn(2, 12)).shape
    torch.Size([2, 3, 4])
    """

    def forward(self, input):
        input = _check_cplx(self, input)
        _check_unflattens(self, input.shape)
        return input.apply(torch.unflatten, self.dim, self.unflattened_size)


def _check_unflattens(layer, shape):
    """Raise a ``ValueError`` unless dimension ``layer.dim`` of ``shape`` unflattens as asked."""
    dim, sizes = layer.dim, tuple(layer.unflattened_size)
    if not isinstance(dim, int):
        return  # a named dimension: torch's check
    where = layer._get_name()
    if not -len(shape) <= dim < len(shape):
        raise ValueError(f"{where}: `input` has no dimension {dim}, got shape {tuple(shape)}")
    known = 1
    for size in sizes:
        known *= size if size != -1 else 1
    size = shape[dim]
    if size != known and not (-1 in sizes and known and size % known == 0):
        raise ValueError(
            f"{where}: `input` must have a size in dimension {dim} that unflattens into"
            f" {sizes}, got shape {tuple(shape)}"
        )
