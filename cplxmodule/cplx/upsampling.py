"""Complex resizing: interpolation part by part, or in polar form."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._shared import checked_cplx
from .tensor import Cplx
from ._typing import CplxLike
from typing import Optional, Sequence, Union

__all__ = ["interpolate"]


def _reciprocal_or_zero(value):
    """``1 / value``, and 0 where ``value`` is 0, with a gradient free of NaN there."""
    zero = value == 0
    return torch.where(zero, 0, torch.where(zero, 1, value).reciprocal())


def interpolate(
    input: CplxLike,
    size: Optional[Union[int, Sequence[int]]] = None,
    scale_factor: Optional[Union[float, Sequence[float]]] = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
    recompute_scale_factor: Optional[bool] = None,
    antialias: bool = False,
    polar: bool = False,
) -> Cplx:
    r"""Resize a complex input, part by part or in polar form.

    The arguments but ``polar`` are those of
    :func:`torch.nn.functional.interpolate`.

    Parameters
    ----------
    input : Cplx
        Input of shape ``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    size, scale_factor, mode, align_corners, recompute_scale_factor, antialias
        As for :func:`torch.nn.functional.interpolate`.
    polar : bool, default False
        Interpolate the real and imaginary parts (``False``), or the
        modulus and the phase separately (``True``).

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.

    Notes
    -----
    Interpolating the parts (the default) interpolates :math:`z` itself, as
    every mode is linear in its input: a point halfway between :math:`1`
    and :math:`-1` is :math:`0`. In polar form the modulus :math:`|z|` is
    interpolated, and the phase on the unit circle: the unit phasors
    :math:`z / |z|` (:math:`0` where :math:`z = 0`) are interpolated and
    normalised again, so that the phase turns the short way round and never
    jumps at :math:`\pm\pi` (interpolating the angle in :math:`(-\pi, \pi]`
    as a number would turn halfway between :math:`3` and :math:`-3` radians
    to :math:`0` instead of :math:`\pi`). Where the interpolated phasors
    cancel, the phase is undefined and the output is :math:`0`; a modulus
    that a cubic mode overshoots below :math:`0` is clipped to :math:`0`.
    With ``mode="nearest"`` both forms give the same values.

    Examples
    --------
    >>> z = Cplx(torch.tensor([[[1.0, -1.0]]]), torch.tensor([[[0.0, 0.0]]]))
    >>> split = cplx.interpolate(z, size=3, mode="linear", align_corners=True)
    >>> split.real
    tensor([[[ 1.,  0., -1.]]])
    >>> z = Cplx(torch.tensor([[[0.0, 0.0]]]), torch.tensor([[[1.0, 2.0]]]))
    >>> polar = cplx.interpolate(z, size=3, mode="linear", align_corners=True, polar=True)
    >>> polar.imag  # the phase stays pi/2, the modulus goes from 1 to 2
    tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    input = checked_cplx(input, where="interpolate")

    def resize(part):
        return F.interpolate(part, size, scale_factor, mode, align_corners,
                             recompute_scale_factor, antialias)

    if not polar:
        return Cplx(resize(input.real), resize(input.imag))

    modulus = abs(input)
    modulus_out = resize(modulus)
    if mode == "bicubic":
        modulus_out = modulus_out.clamp(min=0)
    inverse = _reciprocal_or_zero(modulus)
    cos, sin = resize(input.real * inverse), resize(input.imag * inverse)
    # Where the phasors cancel, cos = sin = 0: any positive divisor gives the
    # output 0 there, so a clamp (one cheap pass on the large grid) replaces
    # a test and a ``where``; dividing the parts first keeps each ratio <= 1,
    # so the product with the modulus cannot overflow.
    norm = abs(Cplx(cos, sin)).clamp_min(torch.finfo(cos.dtype).tiny)
    return Cplx(cos / norm * modulus_out, sin / norm * modulus_out)
