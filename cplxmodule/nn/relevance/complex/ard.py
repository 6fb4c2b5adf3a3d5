"""Complex automatic relevance determination (Nazarov & Burnaev, 2020).

Complex variational dropout with an empirical-Bayes complex Gaussian prior:
each layer is its dense complex twin with a complex Gaussian posterior and
the penalty :func:`~cplxmodule.nn.relevance.functional.kl_cplx_ard`.
"""

from .. import functional as F
from .._doc import layer_doc
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

_ARD = "ARD"


class CplxARDMixin:
    """The penalty of complex ARD; goes before a complex Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_ard` of
        ``log_alpha``, per weight.
        """
        return F.kl_cplx_ard(self.log_alpha)


class CplxLinearARD(CplxARDMixin, CplxLinearGaussian):
    __doc__ = layer_doc("CplxLinearARD", _ARD)


class CplxBilinearARD(CplxARDMixin, CplxBilinearGaussian):
    __doc__ = layer_doc("CplxBilinearARD", _ARD)


class CplxConv1dARD(CplxARDMixin, CplxConv1dGaussian):
    __doc__ = layer_doc("CplxConv1dARD", _ARD)


class CplxConv2dARD(CplxARDMixin, CplxConv2dGaussian):
    __doc__ = layer_doc("CplxConv2dARD", _ARD)


class CplxConv3dARD(CplxARDMixin, CplxConv3dGaussian):
    __doc__ = layer_doc("CplxConv3dARD", _ARD)


class CplxConvTranspose1dARD(CplxARDMixin, CplxConvTranspose1dGaussian):
    __doc__ = layer_doc("CplxConvTranspose1dARD", _ARD)


class CplxConvTranspose2dARD(CplxARDMixin, CplxConvTranspose2dGaussian):
    __doc__ = layer_doc("CplxConvTranspose2dARD", _ARD)


class CplxConvTranspose3dARD(CplxARDMixin, CplxConvTranspose3dGaussian):
    __doc__ = layer_doc("CplxConvTranspose3dARD", _ARD)
