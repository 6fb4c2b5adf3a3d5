r"""Complex variational dropout (Nazarov & Burnaev, 2020).

Each layer is its dense complex twin with a complex Gaussian posterior
(:class:`~cplxmodule.nn.relevance.base.GaussianMixin`) and the exact KL
penalty from the prior :math:`p(w) \propto 1/|w|^2`,
:func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd`, whose exponential
integral is computed in torch (:func:`torch_expi`). It takes the twin's
arguments and loads its state_dict with ``strict=False``.
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
from ..base import BaseARD, GaussianMixin, PenaltyMixin
from .. import functional as F
from ..functional import ExpiFunction, euler_gamma
from ...utils.sparsity import SparsityStats  # noqa: F401  (published import path)
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

__all__ = [
    "CplxVDMixin",
    "RelevanceMixin",
    "BaseARD",
    "ExpiFunction",
    "torch_expi",
    "euler_gamma",
    "CplxLinearGaussian",
    "CplxBilinearGaussian",
    "CplxConv1dGaussian",
    "CplxConv2dGaussian",
    "CplxConv3dGaussian",
    "CplxLinearVD",
    "CplxBilinearVD",
    "CplxConv1dVD",
    "CplxConv2dVD",
    "CplxConv3dVD",
    "CplxConvTranspose1dVD",
    "CplxConvTranspose2dVD",
    "CplxConvTranspose3dVD",
]

#: The published package's relevance base (``relevance`` and ``sparsity``
#: from ``log_alpha``): here part of :class:`GaussianMixin`.
RelevanceMixin = GaussianMixin

#: The exponential integral in torch, under the published package's name;
#: see :func:`~cplxmodule.nn.relevance.functional.expi`.
torch_expi = F.expi


class CplxVDMixin(PenaltyMixin):
    """The penalty of complex variational dropout; goes before a complex Gaussian layer in the
    bases.
    """

    _doc_method = "variational dropout"

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd` of
        ``log_alpha``, per weight.
        """
        return F.kl_cplx_vd(self.log_alpha)


class CplxLinearVD(CplxVDMixin, CplxLinearGaussian, family=CplxLinear, kind="vd"):
    pass


class CplxBilinearVD(CplxVDMixin, CplxBilinearGaussian, family=CplxBilinear, kind="vd"):
    pass


class CplxConv1dVD(CplxVDMixin, CplxConv1dGaussian, family=CplxConv1d, kind="vd"):
    pass


class CplxConv2dVD(CplxVDMixin, CplxConv2dGaussian, family=CplxConv2d, kind="vd"):
    pass


class CplxConv3dVD(CplxVDMixin, CplxConv3dGaussian, family=CplxConv3d, kind="vd"):
    pass


class CplxConvTranspose1dVD(
    CplxVDMixin, CplxConvTranspose1dGaussian, family=CplxConvTranspose1d, kind="vd"
):
    pass


class CplxConvTranspose2dVD(
    CplxVDMixin, CplxConvTranspose2dGaussian, family=CplxConvTranspose2d, kind="vd"
):
    pass


class CplxConvTranspose3dVD(
    CplxVDMixin, CplxConvTranspose3dGaussian, family=CplxConvTranspose3d, kind="vd"
):
    pass
