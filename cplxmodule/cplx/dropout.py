"""Complex dropout: one mask, shared by the real and the imaginary part.

Dropping the two parts independently would keep half-erased values whose
phase is snapped to an axis; a complex unit is either kept or dropped whole.
"""

from __future__ import annotations

import torch.nn.functional as F

from ._shared import check_probability, check_spatial_dims, checked_cplx, doc_kwargs
from .tensor import Cplx
from ._typing import CplxLike

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d"]


def _masked(input, p, training, inplace, mask_shape, where):
    check_probability(p, "p", where)
    if not training or p == 0.0:
        return input

    # Element-wise dropout of a tensor of ones is a scaled Bernoulli mask;
    # channel dropout is the same on a shape with singleton spatial dims.
    mask = F.dropout(input.real.new_ones(mask_shape), p, training=True)
    if inplace:
        input.real.mul_(mask)
        input.imag.mul_(mask)
        return input
    return Cplx(input.real * mask, input.imag * mask)


def dropout(input: CplxLike, p: float = 0.5, training: bool = True, inplace: bool = False) -> Cplx:
    r"""Zero complex elements with probability ``p``, scaling the rest by :math:`1/(1-p)`.

    Parameters
    ----------
    input : Cplx
        Input of any shape.
    p : float
        Probability of an element to be zeroed.
    training : bool
        Apply dropout if ``True``; return ``input`` unchanged otherwise.
    inplace : bool
        Modify the parts of ``input`` in place.

    Returns
    -------
    Cplx
        The input with the same random elements zeroed in both parts.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``p`` is not in :math:`[0, 1]`.

    Examples
    --------
    >>> z = cplx.dropout(cplx.randn(3, 4), p=0.5)
    >>> bool(((z.real == 0) == (z.imag == 0)).all())
    True
    """
    input = checked_cplx(input, where="dropout")
    return _masked(input, p, training, inplace, input.shape, "dropout")


def _channel_dropout(input, p, training, inplace, n_spatial):
    where = f"dropout{n_spatial}d"
    input = checked_cplx(input, where=where)
    check_spatial_dims(input, n_spatial, where)
    mask_shape = (*input.shape[: input.dim() - n_spatial], *[1] * n_spatial)
    return _masked(input, p, training, inplace, mask_shape, where)


_CHANNEL_DOC = r"""Zero whole channels of a complex :math:`(N, C, {dims})` or :math:`(C, {dims})` input.

    Each channel is dropped with probability ``p`` in both parts at once
    and the kept ones are scaled by :math:`1/(1-p)`, as
    :func:`torch.nn.functional.dropout{n}d`.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(N, C, {dims})` or :math:`(C, {dims})`.
    p : float
        Probability of a channel to be zeroed.
    training : bool
        Apply dropout if ``True``; return ``input`` unchanged otherwise.
    inplace : bool
        Modify the parts of ``input`` in place.

    Returns
    -------
    Cplx
        The input with random channels zeroed.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has the wrong number of dimensions or ``p`` is not in
        :math:`[0, 1]`.

    Examples
    --------
    >>> cplx.dropout{n}d(cplx.randn(2, 3, {pexample}), p=0.5).shape
    torch.Size([2, 3, {pexample}])
    """


def dropout1d(
    input: CplxLike, p: float = 0.5, training: bool = True, inplace: bool = False,
) -> Cplx:
    return _channel_dropout(input, p, training, inplace, 1)


def dropout2d(
    input: CplxLike, p: float = 0.5, training: bool = True, inplace: bool = False,
) -> Cplx:
    return _channel_dropout(input, p, training, inplace, 2)


def dropout3d(
    input: CplxLike, p: float = 0.5, training: bool = True, inplace: bool = False,
) -> Cplx:
    return _channel_dropout(input, p, training, inplace, 3)


for _n, _f in ((1, dropout1d), (2, dropout2d), (3, dropout3d)):
    _f.__doc__ = _CHANNEL_DOC.format(**doc_kwargs(_n))
