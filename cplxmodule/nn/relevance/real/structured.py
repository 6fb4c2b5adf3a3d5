"""Real structured layers: variational dropout, ARD and L0 gates of whole output or input channels.

Each layer is its dense torch twin plus the one channel-gate mechanism of
:mod:`cplxmodule.nn.relevance.structured` and a penalty: the variational
dropout or ARD KL of the per-weight layers, one term per channel, or the
probability of an L0 gate being open.
"""

import torch

from ...modules.conv import (
    _RealConv1d,
    _RealConv2d,
    _RealConv3d,
    _RealConvTranspose1d,
    _RealConvTranspose2d,
    _RealConvTranspose3d,
)
from ...modules.linear import _RealBilinear, _RealLinear
from ..structured import ChannelGaussianMixin, ChannelL0Mixin
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


class LinearChannelVD(
    RealVDMixin, ChannelGaussianMixin, _RealLinear, family=torch.nn.Linear, kind="channel_vd"
):
    pass


class BilinearChannelVD(
    RealVDMixin, ChannelGaussianMixin, _RealBilinear, family=torch.nn.Bilinear, kind="channel_vd"
):
    pass


class Conv1dChannelVD(
    RealVDMixin, ChannelGaussianMixin, _RealConv1d, family=torch.nn.Conv1d, kind="channel_vd"
):
    pass


class Conv2dChannelVD(
    RealVDMixin, ChannelGaussianMixin, _RealConv2d, family=torch.nn.Conv2d, kind="channel_vd"
):
    pass


class Conv3dChannelVD(
    RealVDMixin, ChannelGaussianMixin, _RealConv3d, family=torch.nn.Conv3d, kind="channel_vd"
):
    pass


class ConvTranspose1dChannelVD(
    RealVDMixin,
    ChannelGaussianMixin,
    _RealConvTranspose1d,
    family=torch.nn.ConvTranspose1d,
    kind="channel_vd",
):
    pass


class ConvTranspose2dChannelVD(
    RealVDMixin,
    ChannelGaussianMixin,
    _RealConvTranspose2d,
    family=torch.nn.ConvTranspose2d,
    kind="channel_vd",
):
    pass


class ConvTranspose3dChannelVD(
    RealVDMixin,
    ChannelGaussianMixin,
    _RealConvTranspose3d,
    family=torch.nn.ConvTranspose3d,
    kind="channel_vd",
):
    pass


class LinearChannelARD(
    RealARDMixin, ChannelGaussianMixin, _RealLinear, family=torch.nn.Linear, kind="channel_ard"
):
    pass


class BilinearChannelARD(
    RealARDMixin, ChannelGaussianMixin, _RealBilinear, family=torch.nn.Bilinear, kind="channel_ard"
):
    pass


class Conv1dChannelARD(
    RealARDMixin, ChannelGaussianMixin, _RealConv1d, family=torch.nn.Conv1d, kind="channel_ard"
):
    pass


class Conv2dChannelARD(
    RealARDMixin, ChannelGaussianMixin, _RealConv2d, family=torch.nn.Conv2d, kind="channel_ard"
):
    pass


class Conv3dChannelARD(
    RealARDMixin, ChannelGaussianMixin, _RealConv3d, family=torch.nn.Conv3d, kind="channel_ard"
):
    pass


class ConvTranspose1dChannelARD(
    RealARDMixin,
    ChannelGaussianMixin,
    _RealConvTranspose1d,
    family=torch.nn.ConvTranspose1d,
    kind="channel_ard",
):
    pass


class ConvTranspose2dChannelARD(
    RealARDMixin,
    ChannelGaussianMixin,
    _RealConvTranspose2d,
    family=torch.nn.ConvTranspose2d,
    kind="channel_ard",
):
    pass


class ConvTranspose3dChannelARD(
    RealARDMixin,
    ChannelGaussianMixin,
    _RealConvTranspose3d,
    family=torch.nn.ConvTranspose3d,
    kind="channel_ard",
):
    pass


class LinearChannelL0(ChannelL0Mixin, _RealLinear, family=torch.nn.Linear, kind="channel_l0"):
    pass


class BilinearChannelL0(
    ChannelL0Mixin, _RealBilinear, family=torch.nn.Bilinear, kind="channel_l0"
):
    pass


class Conv1dChannelL0(ChannelL0Mixin, _RealConv1d, family=torch.nn.Conv1d, kind="channel_l0"):
    pass


class Conv2dChannelL0(ChannelL0Mixin, _RealConv2d, family=torch.nn.Conv2d, kind="channel_l0"):
    pass


class Conv3dChannelL0(ChannelL0Mixin, _RealConv3d, family=torch.nn.Conv3d, kind="channel_l0"):
    pass


class ConvTranspose1dChannelL0(
    ChannelL0Mixin, _RealConvTranspose1d, family=torch.nn.ConvTranspose1d, kind="channel_l0"
):
    pass


class ConvTranspose2dChannelL0(
    ChannelL0Mixin, _RealConvTranspose2d, family=torch.nn.ConvTranspose2d, kind="channel_l0"
):
    pass


class ConvTranspose3dChannelL0(
    ChannelL0Mixin, _RealConvTranspose3d, family=torch.nn.ConvTranspose3d, kind="channel_l0"
):
    pass
