"""Real automatic relevance determination (Kharitonov, Molchanov & Vetrov, 2018).

Variational dropout with an empirical-Bayes Gaussian prior: each layer is
its dense torch twin with a Gaussian posterior and the penalty
:func:`~cplxmodule.nn.relevance.functional.kl_real_ard`.
"""

from .. import functional as F
from .._doc import layer_doc
from .base import (
    BilinearGaussian,
    Conv1dGaussian,
    Conv2dGaussian,
    Conv3dGaussian,
    ConvTranspose1dGaussian,
    ConvTranspose2dGaussian,
    ConvTranspose3dGaussian,
    LinearGaussian,
)
from .vd import BilinearVD, Conv1dVD, Conv2dVD, Conv3dVD, LinearVD

__all__ = [
    "RealARDMixin",
    "LinearVD",
    "BilinearVD",
    "Conv1dVD",
    "Conv2dVD",
    "Conv3dVD",
    "LinearARD",
    "BilinearARD",
    "Conv1dARD",
    "Conv2dARD",
    "Conv3dARD",
    "ConvTranspose1dARD",
    "ConvTranspose2dARD",
    "ConvTranspose3dARD",
]

_ARD = "ARD"


class RealARDMixin:
    """The penalty of real ARD; goes before a Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_real_ard` of
        ``log_alpha``, per weight.
        """
        return F.kl_real_ard(self.log_alpha)


class LinearARD(RealARDMixin, LinearGaussian):
    __doc__ = layer_doc("LinearARD", _ARD)


class BilinearARD(RealARDMixin, BilinearGaussian):
    __doc__ = layer_doc("BilinearARD", _ARD)


class Conv1dARD(RealARDMixin, Conv1dGaussian):
    __doc__ = layer_doc("Conv1dARD", _ARD)


class Conv2dARD(RealARDMixin, Conv2dGaussian):
    __doc__ = layer_doc("Conv2dARD", _ARD)


class Conv3dARD(RealARDMixin, Conv3dGaussian):
    __doc__ = layer_doc("Conv3dARD", _ARD)


class ConvTranspose1dARD(RealARDMixin, ConvTranspose1dGaussian):
    __doc__ = layer_doc("ConvTranspose1dARD", _ARD)


class ConvTranspose2dARD(RealARDMixin, ConvTranspose2dGaussian):
    __doc__ = layer_doc("ConvTranspose2dARD", _ARD)


class ConvTranspose3dARD(RealARDMixin, ConvTranspose3dGaussian):
    __doc__ = layer_doc("ConvTranspose3dARD", _ARD)
