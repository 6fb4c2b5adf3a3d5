"""Random :class:`Cplx` tensors."""

from __future__ import annotations

import math

import torch

from ._dtypes import real_dtype
from ._shared import checked_cplx
from .tensor import Cplx
from typing import Any, Optional, Sequence, overload
from ._typing import CplxLike, Device

__all__ = ["randn", "randn_like"]


@overload
def randn(
    *size: int,
    generator: Optional[torch.Generator] = None,
    dtype: Optional[torch.dtype] = None,
    device: Device = None,
    requires_grad: bool = False
) -> Cplx: ...


@overload
def randn(
    size: Sequence[int],
    /,
    *,
    generator: Optional[torch.Generator] = None,
    dtype: Optional[torch.dtype] = None,
    device: Device = None,
    requires_grad: bool = False
) -> Cplx: ...


# sizes as separate ints or one sequence of them, as torch.randn's two overloads
def randn(
    *size: Any,
    generator: Optional[torch.Generator] = None,
    dtype: Optional[torch.dtype] = None,
    device: Device = None,
    requires_grad: bool = False
) -> Cplx:
    """Standard complex normal samples: independent parts of variance 1/2.

    The scaling matches :func:`torch.randn` with a complex dtype, so that
    :math:`E|z|^2 = 1`.

    Parameters
    ----------
    *size : int or sequence of int
        The shape, as for :func:`torch.randn`.
    generator : torch.Generator, optional
        The source of randomness.
    dtype : torch.dtype, optional
        The real dtype of the parts; a complex dtype means its real
        counterpart. Default: :func:`torch.get_default_dtype`.
    device : torch.device, optional
    requires_grad : bool, default False

    Returns
    -------
    Cplx

    Examples
    --------
    >>> randn(2, 3, dtype=torch.complex128).dtype
    torch.float64
    """
    kwargs = dict(generator=generator, dtype=real_dtype(dtype), device=device)
    scale = math.sqrt(0.5)
    z = Cplx(torch.randn(*size, **kwargs) * scale, torch.randn(*size, **kwargs) * scale)
    return z.requires_grad_(requires_grad)


def randn_like(
    input: CplxLike,
    *,
    dtype: Optional[torch.dtype] = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Cplx:
    """:func:`randn` with the shape, and by default dtype and device, of ``input``.

    Parameters
    ----------
    input : Cplx or torch.Tensor
        Whose shape, dtype and device to take.
    dtype, device, requires_grad
        As for :func:`randn`; ``dtype`` and ``device`` default to those of
        ``input``.

    Returns
    -------
    Cplx
    """
    if not isinstance(input, torch.Tensor) or input.is_complex():
        input = checked_cplx(input, where="randn_like")
    return randn(
        *input.shape,
        dtype=input.dtype if dtype is None else dtype,
        device=input.device if device is None else device,
        requires_grad=requires_grad,
    )
