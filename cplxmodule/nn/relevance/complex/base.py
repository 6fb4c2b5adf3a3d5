r"""Complex Gaussian layers: the complex dense layers plus :class:`GaussianMixin`, without a
penalty.

They are the bases of the complex variational dropout and ARD layers, which
add a penalty mixin; on their own their ``penalty`` raises
``NotImplementedError``. Each lists :class:`~cplxmodule.nn.relevance.base.BaseARD`
after its dense twin, where the published package has it, so that a user's
mixin deriving from it comes after torch's layer (see the Notes of
:class:`GaussianMixin`). The weight posterior is complex-circular Gaussian,
:math:`\mathcal{CN}(\mu, \sigma^2)`, with a real ``log_sigma2``.
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
from ..base import BaseARD, GaussianMixin

__all__ = [
    "GaussianMixin",
    "CplxConvNdGaussianMixin",
    "CplxLinearGaussian",
    "CplxBilinearGaussian",
    "CplxConv1dGaussian",
    "CplxConv2dGaussian",
    "CplxConv3dGaussian",
    "CplxConvTranspose1dGaussian",
    "CplxConvTranspose2dGaussian",
    "CplxConvTranspose3dGaussian",
    "CplxLinear",
    "CplxBilinear",
    "CplxConv1d",
    "CplxConv2d",
    "CplxConv3d",
]

#: The published package's Gaussian base of complex convolutions: the same
#: :class:`GaussianMixin` serves every layer family here.
CplxConvNdGaussianMixin = GaussianMixin


class CplxLinearGaussian(
    GaussianMixin,
    CplxLinear,
    BaseARD,
    family=CplxLinear,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxLinear` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class CplxBilinearGaussian(
    GaussianMixin,
    CplxBilinear,
    BaseARD,
    family=CplxBilinear,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxBilinear` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class CplxConv1dGaussian(
    GaussianMixin,
    CplxConv1d,
    BaseARD,
    family=CplxConv1d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxConv1d` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class CplxConv2dGaussian(
    GaussianMixin,
    CplxConv2d,
    BaseARD,
    family=CplxConv2d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxConv2d` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class CplxConv3dGaussian(
    GaussianMixin,
    CplxConv3d,
    BaseARD,
    family=CplxConv3d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxConv3d` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class CplxConvTranspose1dGaussian(
    GaussianMixin,
    CplxConvTranspose1d,
    BaseARD,
    family=CplxConvTranspose1d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxConvTranspose1d` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class CplxConvTranspose2dGaussian(
    GaussianMixin,
    CplxConvTranspose2d,
    BaseARD,
    family=CplxConvTranspose2d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxConvTranspose2d` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """


class CplxConvTranspose3dGaussian(
    GaussianMixin,
    CplxConvTranspose3d,
    BaseARD,
    family=CplxConvTranspose3d,
    kind="gaussian",
    twin=False,
    convertible=False,
):
    """:class:`~cplxmodule.nn.CplxConvTranspose3d` with a complex Gaussian weight posterior (see
    :class:`GaussianMixin`).
    """
