"""Type aliases of the public signatures, declared once.

A leaf like ``_dtypes``: it imports nothing from the package at run time, so
any module may import it. The aliases are for annotations and type checkers;
the run-time checks of ``_shared`` decide what is accepted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Union

import torch
from torch.types import Device

if TYPE_CHECKING:
    from .tensor import Cplx

__all__ = ["CplxLike", "Device", "HasRealImag"]


class HasRealImag(Protocol):
    """An object whose ``.real`` and ``.imag`` are real tensors of one shape."""

    @property
    def real(self) -> torch.Tensor: ...

    @property
    def imag(self) -> torch.Tensor: ...


CplxLike = Union["Cplx", torch.Tensor, HasRealImag]
"""A complex operand: a :class:`~cplxmodule.cplx.Cplx`, a tensor (real, or of
torch's complex dtype) or any object with tensor ``.real`` and ``.imag``."""
