"""Zero-copy views into real tensors: dimension checks, complex parts, sliding windows."""

from __future__ import annotations

import warnings

import torch

from ..cplx._shared import check_int, check_positive_int
from ..cplx._views import _pairs
from typing import Optional

__all__ = ["fix_dim", "complex_view", "window_view"]


class _DimOutOfRange(IndexError, ValueError):
    """Raised for a dimension index out of range.

    An :class:`IndexError`, like torch's own "dimension out of range" error,
    and a :class:`ValueError`, which is what the published package raised.
    """


def fix_dim(dim: int, n_dim: int) -> int:
    r"""Normalise a possibly negative dimension index to ``0 <= dim < n_dim``.

    Parameters
    ----------
    dim : int
        The dimension index, in ``[-n_dim, n_dim)``; a negative one counts
        from the end, as in torch.
    n_dim : int
        The number of dimensions of the tensor that ``dim`` indexes.

    Returns
    -------
    int
        ``dim`` if it is nonnegative, ``dim + n_dim`` otherwise.

    Raises
    ------
    TypeError
        If ``dim`` or ``n_dim`` is not an integer.
    IndexError
        If ``dim`` is out of range. The error is also a :class:`ValueError`,
        so code written for the published package, which raised
        ``ValueError``, still catches it.

    Examples
    --------
    >>> fix_dim(-1, 3)
    2
    >>> fix_dim(1, 3)
    1
    """
    return _fixed_index(dim, check_int(n_dim, "n_dim", "fix_dim"), "dim", "fix_dim")


# Every message reads "{where}: `{argument}` must be ..., got ...", where
# ``where`` is the public function the user called: the private helpers
# below serve several of them, so they take it as an argument.
def _fixed_index(value, n_dim, name, where):
    """The dimension index ``value`` in ``[0, n_dim)``; see :func:`fix_dim`."""
    value = check_int(value, name, where)
    if not -n_dim <= value < n_dim:
        raise _DimOutOfRange(
            f"{where}: `{name}` must be in [{-n_dim}, {n_dim - 1}] for {n_dim}"
            f" dimension(s), got {value}"
        )
    return value + n_dim if value < 0 else value


def _checked_tensor(x, where):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{where}: `x` must be a torch.Tensor, got {type(x).__name__}")
    return x


def complex_view(x: torch.Tensor, dim: int = -1, squeeze: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Views of the real and imaginary parts of an interleaved real tensor.

    The size-``2n`` dimension ``dim`` of ``x`` holds ``n`` pairs
    ``re, im, re, im, ...``. Conceptually it is split into a ``(n, 2)``
    pair of dimensions and the trailing size-2 axis is unbound into its
    real and imaginary slices. No data is copied: both parts are strided
    views into the storage of ``x`` (this is always possible, whatever the
    strides of ``x``), and gradients flow back into ``x``.

    Parameters
    ----------
    x : torch.Tensor
        A real tensor of any strides, normally with an even size along ``dim``.
    dim : int, default -1
        The dimension holding the interleaved pairs.
    squeeze : bool, default True
        If ``x`` has size exactly 2 along ``dim`` (a single pair, as in
        torch's :func:`torch.view_as_real` layout ``(..., 2)``), drop that
        dimension instead of keeping it with size one.

    Returns
    -------
    real : torch.Tensor
        ``x`` sampled at the even positions of ``dim``: the same shape as
        ``x`` except that dimension ``dim`` has half the size (or is dropped,
        see ``squeeze``), and twice the stride.
    imag : torch.Tensor
        ``x`` sampled at the odd positions of ``dim``, of the same shape and
        strides as ``real``, at one ``x.stride(dim)`` further in storage.

    Raises
    ------
    TypeError
        If ``x`` is not a tensor, or is complex.
    IndexError
        If ``dim`` is out of range for ``x`` (see :func:`fix_dim`).

    Warns
    -----
    RuntimeWarning
        If ``x`` has an odd size along ``dim``: its last value there has no
        partner and is left out of both views, as in the published package.

    Notes
    -----
    ``real[..., k, ...]`` is ``x[..., 2k, ...]`` and ``imag[..., k, ...]`` is
    ``x[..., 2k + 1, ...]`` along ``dim``. Writing into a view writes into
    ``x``. With ``dim=-1`` on a contiguous ``x`` this is the memory layout of
    torch's native complex dtype: ``torch.view_as_complex(x.unflatten(-1,
    (-1, 2)))`` views the same values as one complex tensor.

    Examples
    --------
    >>> x = torch.tensor([[1., 2., 3., 4.], [5., 6., 7., 8.]])
    >>> re, im = complex_view(x, dim=-1)
    >>> re
    tensor([[1., 3.],
            [5., 7.]])
    >>> im
    tensor([[2., 4.],
            [6., 8.]])
    >>> re.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    True
    """
    where = "complex_view"
    x = _checked_tensor(x, where)
    if x.is_complex():
        raise TypeError(f"{where}: `x` must be a real tensor, got {x.dtype}")
    dim = _fixed_index(dim, x.dim(), "dim", where)
    # only a whole single pair is squeezed, not one left after trimming
    squeeze = squeeze and x.shape[dim] == 2
    if x.shape[dim] % 2:
        # the published words first: code filters this warning by them
        warnings.warn(
            f"Odd dimension size for the complex data unpacking in {where}:"
            f" `x` of shape {tuple(x.shape)} has no imaginary partner for its last"
            f" value along `dim` = {dim}, which is left out",
            RuntimeWarning,
            stacklevel=2,
        )
        x = x.narrow(dim, 0, x.shape[dim] - 1)
    if squeeze:
        return x.select(dim, 0), x.select(dim, 1)
    pairs = _pairs(x, dim)
    return pairs.select(dim + 1, 0), pairs.select(dim + 1, 1)


def window_view(
    x: torch.Tensor, dim: int, size: int, stride: int, at: Optional[int] = None,
) -> torch.Tensor:
    r"""A zero-copy view of the sliding windows of ``x`` along ``dim``.

    Like :meth:`torch.Tensor.unfold`, which appends the window axis at the
    end, but places the window axis at position ``at`` of the result.

    Parameters
    ----------
    x : torch.Tensor
        The tensor to slide over (any dtype and strides).
    dim : int
        The dimension to slide along.
    size : int
        The length of each window, ``1 <= size <= x.shape[dim]``.
    stride : int
        The step between the starts of consecutive windows, ``>= 1``.
    at : int, optional
        The position of the window axis in the result, which has
        ``x.dim() + 1`` dimensions (a negative one counts from the end).
        Defaults to ``dim + 1``, right after the axis that counts windows.

    Returns
    -------
    torch.Tensor
        A view with ``x.dim() + 1`` dimensions. Dimension ``dim`` (counted
        with the window axis removed) enumerates the
        ``(x.shape[dim] - size) // stride + 1`` windows, and the window axis
        of length ``size`` is at ``at``; trailing values that do not fill a
        window are left out. Element ``[..., k, ..., j, ...]`` is
        ``x[..., k * stride + j, ...]``. Windows overlap in storage when
        ``stride < size``, so write into the view with care.

    Raises
    ------
    TypeError
        If ``x`` is not a tensor, or ``dim``, ``size``, ``stride`` or ``at``
        is not an integer.
    IndexError
        If ``dim`` or ``at`` is out of range (see :func:`fix_dim`).
    ValueError
        If ``size`` is not in ``[1, x.shape[dim]]`` or ``stride`` is not
        positive.

    Examples
    --------
    >>> x = torch.arange(6.)
    >>> window_view(x, 0, size=3, stride=2)
    tensor([[0., 1., 2.],
            [2., 3., 4.]])
    >>> window_view(x, 0, size=3, stride=2, at=0)
    tensor([[0., 2.],
            [1., 3.],
            [2., 4.]])
    """
    where = "window_view"
    x = _checked_tensor(x, where)
    dim = _fixed_index(dim, x.dim(), "dim", where)
    size = check_int(size, "size", where)
    if not 1 <= size <= x.shape[dim]:
        raise ValueError(
            f"{where}: `size` must be in [1, {x.shape[dim]}] (the length of `x`"
            f" along `dim` = {dim}), got {size}"
        )
    stride = check_positive_int(stride, "stride", where)
    at = dim + 1 if at is None else _fixed_index(at, x.dim() + 1, "at", where)
    return x.unfold(dim, size, stride).movedim(-1, at)
