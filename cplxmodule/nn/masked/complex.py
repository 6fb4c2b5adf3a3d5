"""Complex-valued masked layers: the complex layers plus :class:`BaseMasked`.

Each layer subclasses its dense complex twin from :mod:`cplxmodule.nn`, so
it takes the same arguments and has the same state_dict keys (plus
``mask``). The mask is a real tensor with the shape of ``weight.real``; it
multiplies both parts of the complex weight.
"""

from ..modules.conv import (
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
)
from ..modules.linear import CplxBilinear, CplxLinear
from .base import BaseMasked

__all__ = [
    "CplxLinearMasked",
    "CplxBilinearMasked",
    "CplxConv1dMasked",
    "CplxConv2dMasked",
    "CplxConv3dMasked",
    "CplxConvTranspose1dMasked",
    "CplxConvTranspose2dMasked",
    "CplxConvTranspose3dMasked",
]


class CplxLinearMasked(BaseMasked, CplxLinear, family=CplxLinear, kind="masked"):
    pass


class CplxBilinearMasked(BaseMasked, CplxBilinear, family=CplxBilinear, kind="masked"):
    pass


class CplxConv1dMasked(BaseMasked, CplxConv1d, family=CplxConv1d, kind="masked"):
    pass


class CplxConv2dMasked(BaseMasked, CplxConv2d, family=CplxConv2d, kind="masked"):
    pass


class CplxConv3dMasked(BaseMasked, CplxConv3d, family=CplxConv3d, kind="masked"):
    pass


class CplxConvTranspose1dMasked(
    BaseMasked, CplxConvTranspose1d, family=CplxConvTranspose1d, kind="masked"
):
    pass


class CplxConvTranspose2dMasked(
    BaseMasked, CplxConvTranspose2d, family=CplxConvTranspose2d, kind="masked"
):
    pass


class CplxConvTranspose3dMasked(
    BaseMasked, CplxConvTranspose3d, family=CplxConvTranspose3d, kind="masked"
):
    pass
