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
    """Complex linear layer with variational dropout and the scale-free prior's penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxLinear`.
    """


class CplxBilinearVDScaleFree(CplxVDScaleFreeMixin, CplxBilinearGaussian):
    """Complex bilinear layer with variational dropout and the scale-free prior's penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxBilinear`.
    """


class CplxConv1dVDScaleFree(CplxVDScaleFreeMixin, CplxConv1dGaussian):
    """Complex 1d convolution with variational dropout and the scale-free prior's penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv1d`.
    """


class CplxConv2dVDScaleFree(CplxVDScaleFreeMixin, CplxConv2dGaussian):
    """Complex 2d convolution with variational dropout and the scale-free prior's penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv2d`.
    """


class CplxConv3dVDScaleFree(CplxVDScaleFreeMixin, CplxConv3dGaussian):
    """Complex 3d convolution with variational dropout and the scale-free prior's penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv3d`.
    """


class CplxConvTranspose1dVDScaleFree(CplxVDScaleFreeMixin, CplxConvTranspose1dGaussian):
    """Complex 1d transposed convolution with variational dropout and the scale-free prior's
    penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose1d`.
    """


class CplxConvTranspose2dVDScaleFree(CplxVDScaleFreeMixin, CplxConvTranspose2dGaussian):
    """Complex 2d transposed convolution with variational dropout and the scale-free prior's
    penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose2d`.
    """


class CplxConvTranspose3dVDScaleFree(CplxVDScaleFreeMixin, CplxConvTranspose3dGaussian):
    """Complex 3d transposed convolution with variational dropout and the scale-free prior's
    penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose3d`.
    """


class CplxLinearVDApprox(CplxVDApproxMixin, CplxLinearGaussian):
    """Complex linear layer with variational dropout and the approximate complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxLinear`.
    """


class CplxBilinearVDApprox(CplxVDApproxMixin, CplxBilinearGaussian):
    """Complex bilinear layer with variational dropout and the approximate complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxBilinear`.
    """


class CplxConv1dVDApprox(CplxVDApproxMixin, CplxConv1dGaussian):
    """Complex 1d convolution with variational dropout and the approximate complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv1d`.
    """


class CplxConv2dVDApprox(CplxVDApproxMixin, CplxConv2dGaussian):
    """Complex 2d convolution with variational dropout and the approximate complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv2d`.
    """


class CplxConv3dVDApprox(CplxVDApproxMixin, CplxConv3dGaussian):
    """Complex 3d convolution with variational dropout and the approximate complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv3d`.
    """


class CplxConvTranspose1dVDApprox(CplxVDApproxMixin, CplxConvTranspose1dGaussian):
    """Complex 1d transposed convolution with variational dropout and the approximate complex VD
    penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose1d`.
    """


class CplxConvTranspose2dVDApprox(CplxVDApproxMixin, CplxConvTranspose2dGaussian):
    """Complex 2d transposed convolution with variational dropout and the approximate complex VD
    penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose2d`.
    """


class CplxConvTranspose3dVDApprox(CplxVDApproxMixin, CplxConvTranspose3dGaussian):
    """Complex 3d transposed convolution with variational dropout and the approximate complex VD
    penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose3d`.
    """


class CplxLinearVDBogus(CplxVDBogusMixin, CplxLinearGaussian):
    """Complex linear layer with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxLinear`.
    """


class CplxBilinearVDBogus(CplxVDBogusMixin, CplxBilinearGaussian):
    """Complex bilinear layer with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxBilinear`.
    """


class CplxConv1dVDBogus(CplxVDBogusMixin, CplxConv1dGaussian):
    """Complex 1d convolution with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv1d`.
    """


class CplxConv2dVDBogus(CplxVDBogusMixin, CplxConv2dGaussian):
    """Complex 2d convolution with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv2d`.
    """


class CplxConv3dVDBogus(CplxVDBogusMixin, CplxConv3dGaussian):
    """Complex 3d convolution with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv3d`.
    """


class CplxConvTranspose1dVDBogus(CplxVDBogusMixin, CplxConvTranspose1dGaussian):
    """Complex 1d transposed convolution with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose1d`.
    """


class CplxConvTranspose2dVDBogus(CplxVDBogusMixin, CplxConvTranspose2dGaussian):
    """Complex 2d transposed convolution with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose2d`.
    """


class CplxConvTranspose3dVDBogus(CplxVDBogusMixin, CplxConvTranspose3dGaussian):
    """Complex 3d transposed convolution with variational dropout and the bogus complex VD penalty.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose3d`.
    """
