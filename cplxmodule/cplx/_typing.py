"""Type aliases of the public signatures, declared once.

A leaf like ``_dtypes``: it imports nothing from the package at run time, so
any module may import it. The aliases are for annotations and type checkers;
the run-time checks of ``_shared`` decide what is accepted.
"""

from __future__ import annotations

from types import EllipsisType
from typing import TYPE_CHECKING, Any, Protocol, Sequence, SupportsIndex, Union

import torch
from torch.types import Device

if TYPE_CHECKING:
    from .tensor import Cplx

__all__ = ["CplxLike", "Device", "HasRealImag", "Index", "ModuleMixin"]


class HasRealImag(Protocol):
    """An object whose ``.real`` and ``.imag`` are real tensors of one shape."""

    @property
    def real(self) -> torch.Tensor: ...

    @property
    def imag(self) -> torch.Tensor: ...


CplxLike = Union["Cplx", torch.Tensor, HasRealImag]
"""A complex operand: a :class:`~cplxmodule.cplx.Cplx`, a tensor (real, or of
torch's complex dtype) or any object with tensor ``.real`` and ``.imag``."""


_IndexItem = Union[SupportsIndex, slice, EllipsisType, None, torch.Tensor, Sequence[Any]]
Index = Union[_IndexItem, tuple[_IndexItem, ...]]
"""A key of ``[]`` on a tensor, and so on both parts of a
:class:`~cplxmodule.cplx.Cplx`: an integer, a slice, ``...``, ``None``, an
index or mask tensor, a list of these, or a tuple of them."""

# The base of a mixin that goes before a torch.nn.Module in the bases: the
# module for the type checker, which then knows the mixin's ``self``, and
# ``object`` at run time, so that the mixin adds nothing to the module's bases.
if TYPE_CHECKING:
    ModuleMixin = torch.nn.Module
else:
    ModuleMixin = object
