r"""Complex structured layers: variational dropout, ARD and L0 gates of whole output or input channels.

Each layer is its dense complex twin plus the one channel-gate mechanism of
:mod:`cplxmodule.nn.relevance.structured` and a penalty: the complex
variational dropout or ARD KL of the per-weight layers, one term per
channel (the gate has the real mean 1 and complex-circular noise), or the
probability of an L0 gate being open (a real gate).
"""

from ...modules.conv import (
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
)
from ...modules.linear import CplxBilinear, CplxLinear
from ..structured import ChannelGaussianMixin, ChannelL0Mixin
from .ard import CplxARDMixin
from .vd import CplxVDMixin

__all__ = [
    "CplxLinearChannelVD",
    "CplxBilinearChannelVD",
    "CplxConv1dChannelVD",
    "CplxConv2dChannelVD",
    "CplxConv3dChannelVD",
    "CplxConvTranspose1dChannelVD",
    "CplxConvTranspose2dChannelVD",
    "CplxConvTranspose3dChannelVD",
    "CplxLinearChannelARD",
    "CplxBilinearChannelARD",
    "CplxConv1dChannelARD",
    "CplxConv2dChannelARD",
    "CplxConv3dChannelARD",
    "CplxConvTranspose1dChannelARD",
    "CplxConvTranspose2dChannelARD",
    "CplxConvTranspose3dChannelARD",
    "CplxLinearChannelL0",
    "CplxBilinearChannelL0",
    "CplxConv1dChannelL0",
    "CplxConv2dChannelL0",
    "CplxConv3dChannelL0",
    "CplxConvTranspose1dChannelL0",
    "CplxConvTranspose2dChannelL0",
    "CplxConvTranspose3dChannelL0",
]


class CplxLinearChannelVD(
    CplxVDMixin, ChannelGaussianMixin, CplxLinear, family=CplxLinear, kind="channel_vd"
):
    pass


class CplxBilinearChannelVD(
    CplxVDMixin, ChannelGaussianMixin, CplxBilinear, family=CplxBilinear, kind="channel_vd"
):
    pass


class CplxConv1dChannelVD(
    CplxVDMixin, ChannelGaussianMixin, CplxConv1d, family=CplxConv1d, kind="channel_vd"
):
    pass


class CplxConv2dChannelVD(
    CplxVDMixin, ChannelGaussianMixin, CplxConv2d, family=CplxConv2d, kind="channel_vd"
):
    pass


class CplxConv3dChannelVD(
    CplxVDMixin, ChannelGaussianMixin, CplxConv3d, family=CplxConv3d, kind="channel_vd"
):
    pass


class CplxConvTranspose1dChannelVD(
    CplxVDMixin,
    ChannelGaussianMixin,
    CplxConvTranspose1d,
    family=CplxConvTranspose1d,
    kind="channel_vd",
):
    pass


class CplxConvTranspose2dChannelVD(
    CplxVDMixin,
    ChannelGaussianMixin,
    CplxConvTranspose2d,
    family=CplxConvTranspose2d,
    kind="channel_vd",
):
    pass


class CplxConvTranspose3dChannelVD(
    CplxVDMixin,
    ChannelGaussianMixin,
    CplxConvTranspose3d,
    family=CplxConvTranspose3d,
    kind="channel_vd",
):
    pass


class CplxLinearChannelARD(
    CplxARDMixin, ChannelGaussianMixin, CplxLinear, family=CplxLinear, kind="channel_ard"
):
    pass


class CplxBilinearChannelARD(
    CplxARDMixin, ChannelGaussianMixin, CplxBilinear, family=CplxBilinear, kind="channel_ard"
):
    pass


class CplxConv1dChannelARD(
    CplxARDMixin, ChannelGaussianMixin, CplxConv1d, family=CplxConv1d, kind="channel_ard"
):
    pass


class CplxConv2dChannelARD(
    CplxARDMixin, ChannelGaussianMixin, CplxConv2d, family=CplxConv2d, kind="channel_ard"
):
    pass


class CplxConv3dChannelARD(
    CplxARDMixin, ChannelGaussianMixin, CplxConv3d, family=CplxConv3d, kind="channel_ard"
):
    pass


class CplxConvTranspose1dChannelARD(
    CplxARDMixin,
    ChannelGaussianMixin,
    CplxConvTranspose1d,
    family=CplxConvTranspose1d,
    kind="channel_ard",
):
    pass


class CplxConvTranspose2dChannelARD(
    CplxARDMixin,
    ChannelGaussianMixin,
    CplxConvTranspose2d,
    family=CplxConvTranspose2d,
    kind="channel_ard",
):
    pass


class CplxConvTranspose3dChannelARD(
    CplxARDMixin,
    ChannelGaussianMixin,
    CplxConvTranspose3d,
    family=CplxConvTranspose3d,
    kind="channel_ard",
):
    pass


class CplxLinearChannelL0(ChannelL0Mixin, CplxLinear, family=CplxLinear, kind="channel_l0"):
    pass


class CplxBilinearChannelL0(ChannelL0Mixin, CplxBilinear, family=CplxBilinear, kind="channel_l0"):
    pass


class CplxConv1dChannelL0(ChannelL0Mixin, CplxConv1d, family=CplxConv1d, kind="channel_l0"):
    pass


class CplxConv2dChannelL0(ChannelL0Mixin, CplxConv2d, family=CplxConv2d, kind="channel_l0"):
    pass


class CplxConv3dChannelL0(ChannelL0Mixin, CplxConv3d, family=CplxConv3d, kind="channel_l0"):
    pass


class CplxConvTranspose1dChannelL0(
    ChannelL0Mixin, CplxConvTranspose1d, family=CplxConvTranspose1d, kind="channel_l0"
):
    pass


class CplxConvTranspose2dChannelL0(
    ChannelL0Mixin, CplxConvTranspose2d, family=CplxConvTranspose2d, kind="channel_l0"
):
    pass


class CplxConvTranspose3dChannelL0(
    ChannelL0Mixin, CplxConvTranspose3d, family=CplxConvTranspose3d, kind="channel_l0"
):
    pass
