"""Real variational dropout and ARD layers."""

from .vd import (
    BilinearVD,
    Conv1dVD,
    Conv2dVD,
    Conv3dVD,
    ConvTranspose1dVD,
    ConvTranspose2dVD,
    ConvTranspose3dVD,
    LinearVD,
    RealVDMixin,
)
from .ard import (
    BilinearARD,
    Conv1dARD,
    Conv2dARD,
    Conv3dARD,
    ConvTranspose1dARD,
    ConvTranspose2dARD,
    ConvTranspose3dARD,
    LinearARD,
    RealARDMixin,
)

from . import structured
from .structured import *  # noqa: F401,F403

__all__ = [
    "LinearVD",
    "BilinearVD",
    "Conv1dVD",
    "Conv2dVD",
    "Conv3dVD",
    "ConvTranspose1dVD",
    "ConvTranspose2dVD",
    "ConvTranspose3dVD",
    "LinearARD",
    "BilinearARD",
    "Conv1dARD",
    "Conv2dARD",
    "Conv3dARD",
    "ConvTranspose1dARD",
    "ConvTranspose2dARD",
    "ConvTranspose3dARD",
    "RealVDMixin",
    "RealARDMixin",
    *structured.__all__,
]
