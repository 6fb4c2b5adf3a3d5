"""Checks and read-outs shared by the reference models."""

from __future__ import annotations

from typing import Optional

import torch

from ..cplx._shared import _fail, checked_cplx, ntuple
from ..cplx.tensor import Cplx
from ..nn.modules.activation import CplxModulus
from ..nn.modules.casting import CplxToConcatenatedReal

__all__: list[str] = []


def check_image(
    model: object, input: object, channels: int, size: Optional[tuple[int, ...]] = None
) -> Cplx:
    """``input`` as a :class:`Cplx` of shape ``(N, channels, H, W)``, else raise naming it.

    ``H`` and ``W`` must be positive, and equal ``size`` (a pair) when given.
    """
    where = type(model).__name__
    hw = "H, W" if size is None else ", ".join(map(str, size))
    shape = f"(N, {channels}, {hw})"
    input = checked_cplx(input, where=where, shape=shape)
    spatial = tuple(input.shape[2:])
    if (input.dim() != 4 or input.shape[1] != channels or 0 in spatial
            or (size is not None and spatial != size)):
        qualifier = "" if size is not None else " with H, W > 0"
        raise ValueError(
            f"{where}: `input` must have shape {shape}{qualifier}, got {tuple(input.shape)}"
        )
    return input


def check_sizes(value: object, name: str, where: str, n: int | None = None) -> tuple[int, ...]:
    """``value`` as a non-empty tuple of positive ints (of length ``n`` when given)."""
    values = ntuple(value, n, name, where, minimum=1)
    if not values:
        _fail(value, name, where, "a non-empty tuple of positive ints")
    return values


#: the real read-outs of a complex feature vector: its parts side by side, or its modulus
READOUTS = ("parts", "modulus")


def readout_layer(readout: str) -> torch.nn.Module:
    """The layer of ``readout`` (one of :data:`READOUTS`) on ``(N, E)`` complex features."""
    return CplxToConcatenatedReal(dim=-1) if readout == "parts" else CplxModulus()
