"""Shape functions on :class:`Cplx`: joining, splitting, indexing, squeezing."""

from __future__ import annotations

import torch

from ._shared import checked_cplx
from .tensor import Cplx, _map_parts
from typing import Optional, Sequence, Union
from ._typing import CplxLike

__all__ = [
    "cat",
    "stack",
    "split",
    "chunk",
    "unbind",
    "take",
    "narrow",
    "squeeze",
    "unsqueeze",
]


def _checked_sequence(tensors, where):
    return [checked_cplx(z, f"tensors[{i}]", where) for i, z in enumerate(tensors)]


def cat(tensors: Sequence[CplxLike], dim: int = 0) -> Cplx:
    """Concatenate :class:`Cplx` tensors along ``dim``."""
    tensors = _checked_sequence(tensors, "cat")
    return Cplx(
        torch.cat([z.real for z in tensors], dim=dim),
        torch.cat([z.imag for z in tensors], dim=dim),
    )


def stack(tensors: Sequence[CplxLike], dim: int = 0) -> Cplx:
    """Stack :class:`Cplx` tensors along a new dimension ``dim``."""
    tensors = _checked_sequence(tensors, "stack")
    return Cplx(
        torch.stack([z.real for z in tensors], dim=dim),
        torch.stack([z.imag for z in tensors], dim=dim),
    )


def _zip_parts(reals, imags):
    return tuple(map(Cplx, reals, imags))


def split(
    input: CplxLike, split_size_or_sections: Union[int, list[int]], dim: int = 0,
) -> tuple[Cplx, ...]:
    """Split into pieces, as :func:`torch.split`."""
    input = checked_cplx(input, where="split")
    return _zip_parts(
        torch.split(input.real, split_size_or_sections, dim),
        torch.split(input.imag, split_size_or_sections, dim),
    )


def chunk(input: CplxLike, chunks: int, dim: int = 0) -> tuple[Cplx, ...]:
    """Split into ``chunks`` pieces, as :func:`torch.chunk`."""
    input = checked_cplx(input, where="chunk")
    return _zip_parts(
        torch.chunk(input.real, chunks, dim), torch.chunk(input.imag, chunks, dim)
    )


def unbind(input: CplxLike, dim: int = 0) -> tuple[Cplx, ...]:
    """Remove dimension ``dim``, returning the slices along it."""
    input = checked_cplx(input, where="unbind")
    return _zip_parts(torch.unbind(input.real, dim), torch.unbind(input.imag, dim))


def take(input: CplxLike, index: torch.Tensor) -> Cplx:
    """Elements at ``index`` of the flattened tensor, as :func:`torch.take`."""
    input = checked_cplx(input, where="take")
    return _map_parts(input, torch.take, index)


def narrow(input: CplxLike, dim: int, start: Union[int, torch.Tensor], length: int) -> Cplx:
    """A narrowed view, as :func:`torch.narrow`."""
    input = checked_cplx(input, where="narrow")
    return _map_parts(input, torch.narrow, dim, start, length)


def squeeze(input: CplxLike, dim: Optional[int] = None) -> Cplx:
    """Remove dimensions of size one, as :func:`torch.squeeze`."""
    input = checked_cplx(input, where="squeeze")
    return Cplx.squeeze(input, dim)


def unsqueeze(input: CplxLike, dim: int) -> Cplx:
    """Insert a dimension of size one, as :func:`torch.unsqueeze`."""
    input = checked_cplx(input, where="unsqueeze")
    return _map_parts(input, torch.unsqueeze, dim)
