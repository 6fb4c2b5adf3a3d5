"""Complex upsampling: interpolation part by part, or in polar form."""

from __future__ import annotations

import torch

from ... import cplx
from .base import CplxToCplx, _check_cplx
from typing import Optional, Union
from ...cplx._typing import CplxLike
from ...cplx.tensor import Cplx

__all__ = ["CplxUpsample"]


class CplxUpsample(torch.nn.Upsample, CplxToCplx):
    r"""Resize a complex input: interpolate its parts, or its modulus and phase.

    The arguments but ``polar`` are those of :class:`torch.nn.Upsample`;
    see :func:`cplxmodule.cplx.interpolate`.

    Parameters
    ----------
    size : int or tuple of int, optional
        The output's spatial size.
    scale_factor : float or tuple of float, optional
        The multiplier of the spatial size.
    mode : str
        ``"nearest"``, ``"linear"``, ``"bilinear"``, ``"bicubic"``,
        ``"trilinear"`` or ``"nearest-exact"``, as for :class:`torch.nn.Upsample`.
    align_corners : bool, optional
        As for :class:`torch.nn.Upsample` (linear and cubic modes).
    recompute_scale_factor : bool, optional
        As for :class:`torch.nn.Upsample`.
    polar : bool, default False
        Interpolate the real and imaginary parts (``False``, the complex
        value itself), or the modulus and the phase separately (``True``:
        the modulus as a real image, the phase on the unit circle, so it
        never jumps at :math:`\pm\pi`).

    Shape
    -----
    - Input: ``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    - Output: ``(N, C, L_out)``, ``(N, C, H_out, W_out)`` or
      ``(N, C, D_out, H_out, W_out)``, as for :class:`torch.nn.Upsample`.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input does not have 3 to 5 dimensions.

    Examples
    --------
    >>> layer = CplxUpsample(scale_factor=2, mode="bilinear", polar=True)
    >>> layer
    CplxUpsample(scale_factor=2.0, mode='bilinear', polar=True)
    >>> layer(cplx.randn(1, 3, 4, 4)).shape
    torch.Size([1, 3, 8, 8])
    """

    def __init__(
        self,
        size: Optional[Union[int, tuple[int, ...]]] = None,
        scale_factor: Optional[Union[float, tuple[float, ...]]] = None,
        mode: str = "nearest",
        align_corners: Optional[bool] = None,
        recompute_scale_factor: Optional[bool] = None,
        polar: bool = False,
    ) -> None:
        super().__init__(size, scale_factor, mode, align_corners, recompute_scale_factor)
        self.polar = polar

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        if input.dim() not in (3, 4, 5):
            raise ValueError(
                f"{self._get_name()}: `input` must have shape (N, C, L), (N, C, H, W)"
                f" or (N, C, D, H, W), got {tuple(input.shape)}"
            )
        return cplx.interpolate(
            input, self.size, self.scale_factor, self.mode, self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor, polar=self.polar,
        )

    def extra_repr(self):
        return super().extra_repr() + (", polar=True" if self.polar else "")
