"""Real Gaussian layers: torch's dense layers plus :class:`GaussianMixin`, without a penalty.

They are the bases of the real variational dropout and ARD layers, which
add a penalty mixin; on their own their ``penalty`` raises
``NotImplementedError``. Each lists :class:`~cplxmodule.nn.relevance.base.BaseARD`
after its dense twin, where the published package has it, so that a user's
mixin deriving from it comes after torch's layer (see the Notes of
:class:`GaussianMixin`).
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
from ..base import BaseARD, GaussianMixin

__all__ = [
    "GaussianMixin",
    "ConvNdGaussianMixin",
    "LinearGaussian",
    "BilinearGaussian",
    "Conv1dGaussian",
    "Conv2dGaussian",
    "Conv3dGaussian",
    "ConvTranspose1dGaussian",
    "ConvTranspose2dGaussian",
    "ConvTranspose3dGaussian",
]

#: The published package's Gaussian base of convolutions: the same
#: :class:`GaussianMixin` serves every layer family here.
ConvNdGaussianMixin = GaussianMixin


class LinearGaussian(
    GaussianMixin,
    _RealLinear,
    BaseARD,
    family=torch.nn.Linear,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.Linear` with a Gaussian weight posterior (see :class:`GaussianMixin`)."""


class BilinearGaussian(
    GaussianMixin,
    _RealBilinear,
    BaseARD,
    family=torch.nn.Bilinear,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.Bilinear` with a Gaussian weight posterior (see :class:`GaussianMixin`)."""


class Conv1dGaussian(
    GaussianMixin,
    _RealConv1d,
    BaseARD,
    family=torch.nn.Conv1d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.Conv1d` with a Gaussian weight posterior (see :class:`GaussianMixin`)."""


class Conv2dGaussian(
    GaussianMixin,
    _RealConv2d,
    BaseARD,
    family=torch.nn.Conv2d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.Conv2d` with a Gaussian weight posterior (see :class:`GaussianMixin`)."""


class Conv3dGaussian(
    GaussianMixin,
    _RealConv3d,
    BaseARD,
    family=torch.nn.Conv3d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.Conv3d` with a Gaussian weight posterior (see :class:`GaussianMixin`)."""


class ConvTranspose1dGaussian(
    GaussianMixin,
    _RealConvTranspose1d,
    BaseARD,
    family=torch.nn.ConvTranspose1d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.ConvTranspose1d` with a Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class ConvTranspose2dGaussian(
    GaussianMixin,
    _RealConvTranspose2d,
    BaseARD,
    family=torch.nn.ConvTranspose2d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.ConvTranspose2d` with a Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class ConvTranspose3dGaussian(
    GaussianMixin,
    _RealConvTranspose3d,
    BaseARD,
    family=torch.nn.ConvTranspose3d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`torch.nn.ConvTranspose3d` with a Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """
