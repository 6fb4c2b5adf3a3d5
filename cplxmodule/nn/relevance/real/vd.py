"""Real variational dropout (Molchanov, Ashukha & Vetrov, 2017).

Each layer is its dense torch twin with a Gaussian posterior
(:class:`~cplxmodule.nn.relevance.real.base.GaussianMixin`) and the KL
penalty from the log-uniform prior,
:func:`~cplxmodule.nn.relevance.functional.kl_real_vd`. It takes the twin's
arguments and loads its state_dict with ``strict=False``.
"""

from ..base import BaseARD, GaussianMixin
from .. import functional as F
from .._doc import layer_doc
from ...utils.sparsity import SparsityStats  # noqa: F401  (published import path)
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

__all__ = [
    "RealVDMixin",
    "RelevanceMixin",
    "BaseARD",
    "LinearGaussian",
    "BilinearGaussian",
    "Conv1dGaussian",
    "Conv2dGaussian",
    "Conv3dGaussian",
    "LinearVD",
    "BilinearVD",
    "Conv1dVD",
    "Conv2dVD",
    "Conv3dVD",
    "ConvTranspose1dVD",
    "ConvTranspose2dVD",
    "ConvTranspose3dVD",
]

#: The published package's relevance base (``relevance`` and ``sparsity``
#: from ``log_alpha``): here part of :class:`GaussianMixin`.
RelevanceMixin = GaussianMixin

_VD = "variational dropout"


class RealVDMixin:
    """The penalty of real variational dropout; goes before a Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_real_vd` of
        ``log_alpha``, per weight.
        """
        return F.kl_real_vd(self.log_alpha)


class LinearVD(RealVDMixin, LinearGaussian):
    __doc__ = layer_doc("LinearVD", _VD)


class BilinearVD(RealVDMixin, BilinearGaussian):
    __doc__ = layer_doc("BilinearVD", _VD)


class Conv1dVD(RealVDMixin, Conv1dGaussian):
    __doc__ = layer_doc("Conv1dVD", _VD)


class Conv2dVD(RealVDMixin, Conv2dGaussian):
    __doc__ = layer_doc("Conv2dVD", _VD)


class Conv3dVD(RealVDMixin, Conv3dGaussian):
    __doc__ = layer_doc("Conv3dVD", _VD)


class ConvTranspose1dVD(RealVDMixin, ConvTranspose1dGaussian):
    __doc__ = layer_doc("ConvTranspose1dVD", _VD)


class ConvTranspose2dVD(RealVDMixin, ConvTranspose2dGaussian):
    __doc__ = layer_doc("ConvTranspose2dVD", _VD)


class ConvTranspose3dVD(RealVDMixin, ConvTranspose3dGaussian):
    __doc__ = layer_doc("ConvTranspose3dVD", _VD)
