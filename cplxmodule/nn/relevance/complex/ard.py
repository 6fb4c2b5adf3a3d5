"""Complex automatic relevance determination (Nazarov & Burnaev, 2020).

Complex variational dropout with an empirical-Bayes complex Gaussian prior:
each layer is its dense complex twin with a complex Gaussian posterior and
the penalty :func:`~cplxmodule.nn.relevance.functional.kl_cplx_ard`.
"""

from .. import functional as F
from .base import (
    CplxBilinearGaussian,
    CplxConv1dGaussian,
    CplxConv2dGaussian,
    CplxConv3dGaussian,
    CplxConvTranspose1dGaussian,
    CplxConvTranspose2dGaussian,
    CplxConvTranspose3dGaussian,
    CplxLinearGaussian,
)
from .vd import (
    CplxBilinearVD,
    CplxConv1dVD,
    CplxConv2dVD,
    CplxConv3dVD,
    CplxLinearVD,
)

__all__ = [
    "CplxARDMixin",
    "CplxLinearVD",
    "CplxBilinearVD",
    "CplxConv1dVD",
    "CplxConv2dVD",
    "CplxConv3dVD",
    "CplxLinearARD",
    "CplxBilinearARD",
    "CplxConv1dARD",
    "CplxConv2dARD",
    "CplxConv3dARD",
    "CplxConvTranspose1dARD",
    "CplxConvTranspose2dARD",
    "CplxConvTranspose3dARD",
]


class CplxARDMixin:
    """The penalty of complex ARD; goes before a complex Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_ard` of
        ``log_alpha``, per weight.
        """
        return F.kl_cplx_ard(self.log_alpha)


class CplxLinearARD(CplxARDMixin, CplxLinearGaussian):
    """Complex linear layer with ARD; takes the arguments of :class:`~cplxmodule.nn.CplxLinear`."""


class CplxBilinearARD(CplxARDMixin, CplxBilinearGaussian):
    """Complex bilinear layer with ARD.

    Takes the arguments of :class:`~cplxmodule.nn.CplxBilinear`.
    """


class CplxConv1dARD(CplxARDMixin, CplxConv1dGaussian):
    """Complex 1d convolution with ARD.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv1d`.
    """


class CplxConv2dARD(CplxARDMixin, CplxConv2dGaussian):
    """Complex 2d convolution with ARD.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv2d`.
    """


class CplxConv3dARD(CplxARDMixin, CplxConv3dGaussian):
    """Complex 3d convolution with ARD.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv3d`.
    """


class CplxConvTranspose1dARD(CplxARDMixin, CplxConvTranspose1dGaussian):
    """Complex 1d transposed convolution with ARD.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose1d`.
    """


class CplxConvTranspose2dARD(CplxARDMixin, CplxConvTranspose2dGaussian):
    """Complex 2d transposed convolution with ARD.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose2d`.
    """


class CplxConvTranspose3dARD(CplxARDMixin, CplxConvTranspose3dGaussian):
    """Complex 3d transposed convolution with ARD.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose3d`.
    """
