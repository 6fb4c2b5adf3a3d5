r"""Complex variational dropout with other penalties: scale-free prior, approximate and bogus KL.

Each ``Cplx*VD<variant>`` layer is the complex Gaussian layer of
:mod:`cplxmodule.nn.relevance.complex` with another penalty:

- ``ScaleFree``: the KL from the prior :math:`p(w) \propto 1/|w|`
  (:func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_scale_free`);
- ``Approx``: an approximation of the complex VD KL without Ei
  (:func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_approx`);
- ``Bogus``: the complex VD gradient with the value :math:`-\log\alpha`
  (:func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_bogus`).
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
from ..complex.base import (
    CplxBilinearGaussian,
    CplxConv1dGaussian,
    CplxConv2dGaussian,
    CplxConv3dGaussian,
    CplxConvTranspose1dGaussian,
    CplxConvTranspose2dGaussian,
    CplxConvTranspose3dGaussian,
    CplxLinearGaussian,
)
from ..complex.vd import (
    CplxBilinearVD,
    CplxConv1dVD,
    CplxConv2dVD,
    CplxConv3dVD,
    CplxLinearVD,
    ExpiFunction,
    torch_expi,
)
from ..functional import BogusExpiFunction

__all__ = [
    "CplxVDScaleFreeMixin",
    "CplxVDApproxMixin",
    "CplxVDBogusMixin",
    "ExpiFunction",
    "BogusExpiFunction",
    "torch_expi",
    "bogus_expi",
    "CplxLinearVD",
    "CplxBilinearVD",
    "CplxConv1dVD",
    "CplxConv2dVD",
    "CplxConv3dVD",
    "CplxLinearVDScaleFree",
    "CplxBilinearVDScaleFree",
    "CplxConv1dVDScaleFree",
    "CplxConv2dVDScaleFree",
    "CplxConv3dVDScaleFree",
    "CplxConvTranspose1dVDScaleFree",
    "CplxConvTranspose2dVDScaleFree",
    "CplxConvTranspose3dVDScaleFree",
    "CplxLinearVDApprox",
    "CplxBilinearVDApprox",
    "CplxConv1dVDApprox",
    "CplxConv2dVDApprox",
    "CplxConv3dVDApprox",
    "CplxConvTranspose1dVDApprox",
    "CplxConvTranspose2dVDApprox",
    "CplxConvTranspose3dVDApprox",
    "CplxLinearVDBogus",
    "CplxBilinearVDBogus",
    "CplxConv1dVDBogus",
    "CplxConv2dVDBogus",
    "CplxConv3dVDBogus",
    "CplxConvTranspose1dVDBogus",
    "CplxConvTranspose2dVDBogus",
    "CplxConvTranspose3dVDBogus",
]


def bogus_expi(input):
    """Zero, with the gradient of Ei (see
    :class:`~cplxmodule.nn.relevance.functional.BogusExpiFunction`).

    Parameters
    ----------
    input : torch.Tensor

    Returns
    -------
    torch.Tensor
        Zeros of ``input``'s shape whose gradient is :math:`e^x / x`.
    """
    return BogusExpiFunction.apply(input)


class CplxVDScaleFreeMixin(PenaltyMixin):
    """The scale-free prior's penalty; goes before a complex Gaussian layer in the bases."""

    _doc_method = "variational dropout and the scale-free prior's penalty"

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_scale_free`, per
        weight.
        """
        return F.kl_cplx_vd_scale_free(self.log_alpha, self.log_sigma2)


class CplxVDApproxMixin(PenaltyMixin):
    """The approximate complex VD penalty; goes before a complex Gaussian layer in the bases."""

    _doc_method = "variational dropout and the approximate complex VD penalty"

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_approx`, per
        weight.
        """
        return F.kl_cplx_vd_approx(self.log_alpha)


class CplxVDBogusMixin(PenaltyMixin):
    """The bogus complex VD penalty; goes before a complex Gaussian layer in the bases."""

    _doc_method = "variational dropout and the bogus complex VD penalty"

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_bogus`, per
        weight.
        """
        return F.kl_cplx_vd_bogus(self.log_alpha)


class CplxLinearVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxLinearGaussian,
    family=CplxLinear,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxBilinearVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxBilinearGaussian,
    family=CplxBilinear,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxConv1dVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxConv1dGaussian,
    family=CplxConv1d,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxConv2dVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxConv2dGaussian,
    family=CplxConv2d,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxConv3dVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxConv3dGaussian,
    family=CplxConv3d,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose1dVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxConvTranspose1dGaussian,
    family=CplxConvTranspose1d,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose2dVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxConvTranspose2dGaussian,
    family=CplxConvTranspose2d,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose3dVDScaleFree(
    CplxVDScaleFreeMixin,
    CplxConvTranspose3dGaussian,
    family=CplxConvTranspose3d,
    kind="vd_scalefree",
    twin=False,
    convertible=False,
):
    pass


class CplxLinearVDApprox(
    CplxVDApproxMixin,
    CplxLinearGaussian,
    family=CplxLinear,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxBilinearVDApprox(
    CplxVDApproxMixin,
    CplxBilinearGaussian,
    family=CplxBilinear,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxConv1dVDApprox(
    CplxVDApproxMixin,
    CplxConv1dGaussian,
    family=CplxConv1d,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxConv2dVDApprox(
    CplxVDApproxMixin,
    CplxConv2dGaussian,
    family=CplxConv2d,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxConv3dVDApprox(
    CplxVDApproxMixin,
    CplxConv3dGaussian,
    family=CplxConv3d,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose1dVDApprox(
    CplxVDApproxMixin,
    CplxConvTranspose1dGaussian,
    family=CplxConvTranspose1d,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose2dVDApprox(
    CplxVDApproxMixin,
    CplxConvTranspose2dGaussian,
    family=CplxConvTranspose2d,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose3dVDApprox(
    CplxVDApproxMixin,
    CplxConvTranspose3dGaussian,
    family=CplxConvTranspose3d,
    kind="vd_approx",
    twin=False,
    convertible=False,
):
    pass


class CplxLinearVDBogus(
    CplxVDBogusMixin,
    CplxLinearGaussian,
    family=CplxLinear,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass


class CplxBilinearVDBogus(
    CplxVDBogusMixin,
    CplxBilinearGaussian,
    family=CplxBilinear,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass


class CplxConv1dVDBogus(
    CplxVDBogusMixin,
    CplxConv1dGaussian,
    family=CplxConv1d,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass


class CplxConv2dVDBogus(
    CplxVDBogusMixin,
    CplxConv2dGaussian,
    family=CplxConv2d,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass


class CplxConv3dVDBogus(
    CplxVDBogusMixin,
    CplxConv3dGaussian,
    family=CplxConv3d,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose1dVDBogus(
    CplxVDBogusMixin,
    CplxConvTranspose1dGaussian,
    family=CplxConvTranspose1d,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose2dVDBogus(
    CplxVDBogusMixin,
    CplxConvTranspose2dGaussian,
    family=CplxConvTranspose2d,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass


class CplxConvTranspose3dVDBogus(
    CplxVDBogusMixin,
    CplxConvTranspose3dGaussian,
    family=CplxConvTranspose3d,
    kind="vd_bogus",
    twin=False,
    convertible=False,
):
    pass
