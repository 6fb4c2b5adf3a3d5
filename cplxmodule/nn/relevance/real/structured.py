"""Real structured layers: variational dropout, ARD and L0 gates of whole output or input channels.

Each layer is its dense torch twin plus the one channel-gate mechanism of
:mod:`cplxmodule.nn.relevance.structured` and a penalty: the variational
dropout or ARD KL of the per-weight layers, one term per channel, or the
probability of an L0 gate being open.
"""

from ...modules.conv import (
    _RealConv1d,
    _RealConv2d,
    _RealConv3d,
    _RealConvTranspose1d,
    _RealConvTranspose2d,
    _RealConvTranspose3d,
)
from ...modules.linear import _RealBilinear, _RealLinear
from ..structured import ChannelGaussianMixin, ChannelL0Mixin, channel_layer_doc
from .ard import RealARDMixin
from .vd import RealVDMixin

__all__ = [
    "LinearChannelVD",
    "BilinearChannelVD",
    "Conv1dChannelVD",
    "Conv2dChannelVD",
    "Conv3dChannelVD",
    "ConvTranspose1dChannelVD",
    "ConvTranspose2dChannelVD",
    "ConvTranspose3dChannelVD",
    "LinearChannelARD",
    "BilinearChannelARD",
    "Conv1dChannelARD",
    "Conv2dChannelARD",
    "Conv3dChannelARD",
    "ConvTranspose1dChannelARD",
    "ConvTranspose2dChannelARD",
    "ConvTranspose3dChannelARD",
    "LinearChannelL0",
    "BilinearChannelL0",
    "Conv1dChannelL0",
    "Conv2dChannelL0",
    "Conv3dChannelL0",
    "ConvTranspose1dChannelL0",
    "ConvTranspose2dChannelL0",
    "ConvTranspose3dChannelL0",
]


class LinearChannelVD(RealVDMixin, ChannelGaussianMixin, _RealLinear):
    __doc__ = channel_layer_doc("LinearChannelVD")


class BilinearChannelVD(RealVDMixin, ChannelGaussianMixin, _RealBilinear):
    __doc__ = channel_layer_doc("BilinearChannelVD")


class Conv1dChannelVD(RealVDMixin, ChannelGaussianMixin, _RealConv1d):
    __doc__ = channel_layer_doc("Conv1dChannelVD")


class Conv2dChannelVD(RealVDMixin, ChannelGaussianMixin, _RealConv2d):
    __doc__ = channel_layer_doc("Conv2dChannelVD")


class Conv3dChannelVD(RealVDMixin, ChannelGaussianMixin, _RealConv3d):
    __doc__ = channel_layer_doc("Conv3dChannelVD")


class ConvTranspose1dChannelVD(RealVDMixin, ChannelGaussianMixin, _RealConvTranspose1d):
    __doc__ = channel_layer_doc("ConvTranspose1dChannelVD")


class ConvTranspose2dChannelVD(RealVDMixin, ChannelGaussianMixin, _RealConvTranspose2d):
    __doc__ = channel_layer_doc("ConvTranspose2dChannelVD")


class ConvTranspose3dChannelVD(RealVDMixin, ChannelGaussianMixin, _RealConvTranspose3d):
    __doc__ = channel_layer_doc("ConvTranspose3dChannelVD")


class LinearChannelARD(RealARDMixin, ChannelGaussianMixin, _RealLinear):
    __doc__ = channel_layer_doc("LinearChannelARD")


class BilinearChannelARD(RealARDMixin, ChannelGaussianMixin, _RealBilinear):
    __doc__ = channel_layer_doc("BilinearChannelARD")


class Conv1dChannelARD(RealARDMixin, ChannelGaussianMixin, _RealConv1d):
    __doc__ = channel_layer_doc("Conv1dChannelARD")


class Conv2dChannelARD(RealARDMixin, ChannelGaussianMixin, _RealConv2d):
    __doc__ = channel_layer_doc("Conv2dChannelARD")


class Conv3dChannelARD(RealARDMixin, ChannelGaussianMixin, _RealConv3d):
    __doc__ = channel_layer_doc("Conv3dChannelARD")


class ConvTranspose1dChannelARD(RealARDMixin, ChannelGaussianMixin, _RealConvTranspose1d):
    __doc__ = channel_layer_doc("ConvTranspose1dChannelARD")


class ConvTranspose2dChannelARD(RealARDMixin, ChannelGaussianMixin, _RealConvTranspose2d):
    __doc__ = channel_layer_doc("ConvTranspose2dChannelARD")


class ConvTranspose3dChannelARD(RealARDMixin, ChannelGaussianMixin, _RealConvTranspose3d):
    __doc__ = channel_layer_doc("ConvTranspose3dChannelARD")


class LinearChannelL0(ChannelL0Mixin, _RealLinear):
    __doc__ = channel_layer_doc("LinearChannelL0")


class BilinearChannelL0(ChannelL0Mixin, _RealBilinear):
    __doc__ = channel_layer_doc("BilinearChannelL0")


class Conv1dChannelL0(ChannelL0Mixin, _RealConv1d):
    __doc__ = channel_layer_doc("Conv1dChannelL0")


class Conv2dChannelL0(ChannelL0Mixin, _RealConv2d):
    __doc__ = channel_layer_doc("Conv2dChannelL0")


class Conv3dChannelL0(ChannelL0Mixin, _RealConv3d):
    __doc__ = channel_layer_doc("Conv3dChannelL0")


class ConvTranspose1dChannelL0(ChannelL0Mixin, _RealConvTranspose1d):
    __doc__ = channel_layer_doc("ConvTranspose1dChannelL0")


class ConvTranspose2dChannelL0(ChannelL0Mixin, _RealConvTranspose2d):
    __doc__ = channel_layer_doc("ConvTranspose2dChannelL0")


class ConvTranspose3dChannelL0(ChannelL0Mixin, _RealConvTranspose3d):
    __doc__ = channel_layer_doc("ConvTranspose3dChannelL0")
