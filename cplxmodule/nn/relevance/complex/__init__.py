"""Complex variational dropout and ARD layers, and the exponential integral in torch."""

from .vd import (
    CplxVDMixin,
    ExpiFunction,
    torch_expi,
    CplxBilinearVD,
    CplxConv1dVD,
    CplxConv2dVD,
    CplxConv3dVD,
    CplxConvTranspose1dVD,
    CplxConvTranspose2dVD,
    CplxConvTranspose3dVD,
    CplxLinearVD,
)
from .ard import (
    CplxARDMixin,
    CplxBilinearARD,
    CplxConv1dARD,
    CplxConv2dARD,
    CplxConv3dARD,
    CplxConvTranspose1dARD,
    CplxConvTranspose2dARD,
    CplxConvTranspose3dARD,
    CplxLinearARD,
)

from . import structured
from .structured import *  # noqa: F401,F403

__all__ = [
    "CplxLinearVD",
    "CplxBilinearVD",
    "CplxConv1dVD",
    "CplxConv2dVD",
    "CplxConv3dVD",
    "CplxConvTranspose1dVD",
    "CplxConvTranspose2dVD",
    "CplxConvTranspose3dVD",
    "CplxLinearARD",
    "CplxBilinearARD",
    "CplxConv1dARD",
    "CplxConv2dARD",
    "CplxConv3dARD",
    "CplxConvTranspose1dARD",
    "CplxConvTranspose2dARD",
    "CplxConvTranspose3dARD",
    "CplxVDMixin",
    "CplxARDMixin",
    "ExpiFunction",
    "torch_expi",
    *structured.__all__,
]
