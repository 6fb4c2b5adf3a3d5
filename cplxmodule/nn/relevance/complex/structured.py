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
from ..structured import ChannelGaussianMixin, ChannelL0Mixin, channel_layer_doc
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


class CplxLinearChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxLinear):
    __doc__ = channel_layer_doc("CplxLinearChannelVD")


class CplxBilinearChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxBilinear):
    __doc__ = channel_layer_doc("CplxBilinearChannelVD")


class CplxConv1dChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxConv1d):
    __doc__ = channel_layer_doc("CplxConv1dChannelVD")


class CplxConv2dChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxConv2d):
    __doc__ = channel_layer_doc("CplxConv2dChannelVD")


class CplxConv3dChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxConv3d):
    __doc__ = channel_layer_doc("CplxConv3dChannelVD")


class CplxConvTranspose1dChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxConvTranspose1d):
    __doc__ = channel_layer_doc("CplxConvTranspose1dChannelVD")


class CplxConvTranspose2dChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxConvTranspose2d):
    __doc__ = channel_layer_doc("CplxConvTranspose2dChannelVD")


class CplxConvTranspose3dChannelVD(CplxVDMixin, ChannelGaussianMixin, CplxConvTranspose3d):
    __doc__ = channel_layer_doc("CplxConvTranspose3dChannelVD")


class CplxLinearChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxLinear):
    __doc__ = channel_layer_doc("CplxLinearChannelARD")


class CplxBilinearChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxBilinear):
    __doc__ = channel_layer_doc("CplxBilinearChannelARD")


class CplxConv1dChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxConv1d):
    __doc__ = channel_layer_doc("CplxConv1dChannelARD")


class CplxConv2dChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxConv2d):
    __doc__ = channel_layer_doc("CplxConv2dChannelARD")


class CplxConv3dChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxConv3d):
    __doc__ = channel_layer_doc("CplxConv3dChannelARD")


class CplxConvTranspose1dChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxConvTranspose1d):
    __doc__ = channel_layer_doc("CplxConvTranspose1dChannelARD")


class CplxConvTranspose2dChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxConvTranspose2d):
    __doc__ = channel_layer_doc("CplxConvTranspose2dChannelARD")


class CplxConvTranspose3dChannelARD(CplxARDMixin, ChannelGaussianMixin, CplxConvTranspose3d):
    __doc__ = channel_layer_doc("CplxConvTranspose3dChannelARD")


class CplxLinearChannelL0(ChannelL0Mixin, CplxLinear):
    __doc__ = channel_layer_doc("CplxLinearChannelL0")


class CplxBilinearChannelL0(ChannelL0Mixin, CplxBilinear):
    __doc__ = channel_layer_doc("CplxBilinearChannelL0")


class CplxConv1dChannelL0(ChannelL0Mixin, CplxConv1d):
    __doc__ = channel_layer_doc("CplxConv1dChannelL0")


class CplxConv2dChannelL0(ChannelL0Mixin, CplxConv2d):
    __doc__ = channel_layer_doc("CplxConv2dChannelL0")


class CplxConv3dChannelL0(ChannelL0Mixin, CplxConv3d):
    __doc__ = channel_layer_doc("CplxConv3dChannelL0")


class CplxConvTranspose1dChannelL0(ChannelL0Mixin, CplxConvTranspose1d):
    __doc__ = channel_layer_doc("CplxConvTranspose1dChannelL0")


class CplxConvTranspose2dChannelL0(ChannelL0Mixin, CplxConvTranspose2d):
    __doc__ = channel_layer_doc("CplxConvTranspose2dChannelL0")


class CplxConvTranspose3dChannelL0(ChannelL0Mixin, CplxConvTranspose3d):
    __doc__ = channel_layer_doc("CplxConvTranspose3dChannelL0")
