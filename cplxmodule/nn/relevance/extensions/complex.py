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

from .. import functional as F
from .._doc import layer_doc
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

_SCALE_FREE = "variational dropout and the scale-free prior's penalty"
_APPROX = "variational dropout and the approximate complex VD penalty"
_BOGUS = "variational dropout and the bogus complex VD penalty"


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


class CplxVDScaleFreeMixin:
    """The scale-free prior's penalty; goes before a complex Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_scale_free`, per
        weight.
        """
        return F.kl_cplx_vd_scale_free(self.log_alpha, self.log_sigma2)


class CplxVDApproxMixin:
    """The approximate complex VD penalty; goes before a complex Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_approx`, per
        weight.
        """
        return F.kl_cplx_vd_approx(self.log_alpha)


class CplxVDBogusMixin:
    """The bogus complex VD penalty; goes before a complex Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_cplx_vd_bogus`, per
        weight.
        """
        return F.kl_cplx_vd_bogus(self.log_alpha)


class CplxLinearVDScaleFree(CplxVDScaleFreeMixin, CplxLinearGaussian):
    __doc__ = layer_doc("CplxLinearVDScaleFree", _SCALE_FREE)


class CplxBilinearVDScaleFree(CplxVDScaleFreeMixin, CplxBilinearGaussian):
    __doc__ = layer_doc("CplxBilinearVDScaleFree", _SCALE_FREE)


class CplxConv1dVDScaleFree(CplxVDScaleFreeMixin, CplxConv1dGaussian):
    __doc__ = layer_doc("CplxConv1dVDScaleFree", _SCALE_FREE)


class CplxConv2dVDScaleFree(CplxVDScaleFreeMixin, CplxConv2dGaussian):
    __doc__ = layer_doc("CplxConv2dVDScaleFree", _SCALE_FREE)


class CplxConv3dVDScaleFree(CplxVDScaleFreeMixin, CplxConv3dGaussian):
    __doc__ = layer_doc("CplxConv3dVDScaleFree", _SCALE_FREE)


class CplxConvTranspose1dVDScaleFree(CplxVDScaleFreeMixin, CplxConvTranspose1dGaussian):
    __doc__ = layer_doc("CplxConvTranspose1dVDScaleFree", _SCALE_FREE)


class CplxConvTranspose2dVDScaleFree(CplxVDScaleFreeMixin, CplxConvTranspose2dGaussian):
    __doc__ = layer_doc("CplxConvTranspose2dVDScaleFree", _SCALE_FREE)


class CplxConvTranspose3dVDScaleFree(CplxVDScaleFreeMixin, CplxConvTranspose3dGaussian):
    __doc__ = layer_doc("CplxConvTranspose3dVDScaleFree", _SCALE_FREE)


class CplxLinearVDApprox(CplxVDApproxMixin, CplxLinearGaussian):
    __doc__ = layer_doc("CplxLinearVDApprox", _APPROX)


class CplxBilinearVDApprox(CplxVDApproxMixin, CplxBilinearGaussian):
    __doc__ = layer_doc("CplxBilinearVDApprox", _APPROX)


class CplxConv1dVDApprox(CplxVDApproxMixin, CplxConv1dGaussian):
    __doc__ = layer_doc("CplxConv1dVDApprox", _APPROX)


class CplxConv2dVDApprox(CplxVDApproxMixin, CplxConv2dGaussian):
    __doc__ = layer_doc("CplxConv2dVDApprox", _APPROX)


class CplxConv3dVDApprox(CplxVDApproxMixin, CplxConv3dGaussian):
    __doc__ = layer_doc("CplxConv3dVDApprox", _APPROX)


class CplxConvTranspose1dVDApprox(CplxVDApproxMixin, CplxConvTranspose1dGaussian):
    __doc__ = layer_doc("CplxConvTranspose1dVDApprox", _APPROX)


class CplxConvTranspose2dVDApprox(CplxVDApproxMixin, CplxConvTranspose2dGaussian):
    __doc__ = layer_doc("CplxConvTranspose2dVDApprox", _APPROX)


class CplxConvTranspose3dVDApprox(CplxVDApproxMixin, CplxConvTranspose3dGaussian):
    __doc__ = layer_doc("CplxConvTranspose3dVDApprox", _APPROX)


class CplxLinearVDBogus(CplxVDBogusMixin, CplxLinearGaussian):
    __doc__ = layer_doc("CplxLinearVDBogus", _BOGUS)


class CplxBilinearVDBogus(CplxVDBogusMixin, CplxBilinearGaussian):
    __doc__ = layer_doc("CplxBilinearVDBogus", _BOGUS)


class CplxConv1dVDBogus(CplxVDBogusMixin, CplxConv1dGaussian):
    __doc__ = layer_doc("CplxConv1dVDBogus", _BOGUS)


class CplxConv2dVDBogus(CplxVDBogusMixin, CplxConv2dGaussian):
    __doc__ = layer_doc("CplxConv2dVDBogus", _BOGUS)


class CplxConv3dVDBogus(CplxVDBogusMixin, CplxConv3dGaussian):
    __doc__ = layer_doc("CplxConv3dVDBogus", _BOGUS)


class CplxConvTranspose1dVDBogus(CplxVDBogusMixin, CplxConvTranspose1dGaussian):
    __doc__ = layer_doc("CplxConvTranspose1dVDBogus", _BOGUS)


class CplxConvTranspose2dVDBogus(CplxVDBogusMixin, CplxConvTranspose2dGaussian):
    __doc__ = layer_doc("CplxConvTranspose2dVDBogus", _BOGUS)


class CplxConvTranspose3dVDBogus(CplxVDBogusMixin, CplxConvTranspose3dGaussian):
    __doc__ = layer_doc("CplxConvTranspose3dVDBogus", _BOGUS)
