"""Complex automatic relevance determination (Nazarov & Burnaev, 2020).

Complex variational dropout with an empirical-Bayes complex Gaussian prior:
each layer is its dense complex twin with a complex Gaussian posterior and
the penalty :func:`~cplxmodule.nn.relevance.functional.kl_cplx_ard`.
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
from .. import functional as F
from ..base import PenaltyMixin
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


class CplxARDMixin(PenaltyMixin):
    """The penalty of complex ARD; goes before a complex Gaussian layer in the bases."""

    _doc_method = "ARD"

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_ard` of
        ``log_alpha``, per weight.
        """
        return F.kl_cplx_ard(self.log_alpha)


class CplxLinearARD(CplxARDMixin, CplxLinearGaussian, family=CplxLinear, kind="ard"):
    pass


class CplxBilinearARD(CplxARDMixin, CplxBilinearGaussian, family=CplxBilinear, kind="ard"):
    pass


class CplxConv1dARD(CplxARDMixin, CplxConv1dGaussian, family=CplxConv1d, kind="ard"):
    pass


class CplxConv2dARD(CplxARDMixin, CplxConv2dGaussian, family=CplxConv2d, kind="ard"):
    pass


class CplxConv3dARD(CplxARDMixin, CplxConv3dGaussian, family=CplxConv3d, kind="ard"):
    pass


class CplxConvTranspose1dARD(
    CplxARDMixin, CplxConvTranspose1dGaussian, family=CplxConvTranspose1d, kind="ard"
):
    pass


class CplxConvTranspose2dARD(
    CplxARDMixin, CplxConvTranspose2dGaussian, family=CplxConvTranspose2d, kind="ard"
):
    pass


class CplxConvTranspose3dARD(
    CplxARDMixin, CplxConvTranspose3dGaussian, family=CplxConvTranspose3d, kind="ard"
):
    pass
