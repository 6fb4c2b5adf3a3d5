"""Real variational dropout (Molchanov, Ashukha & Vetrov, 2017).

Each layer is its dense torch twin with a Gaussian posterior
(:class:`~cplxmodule.nn.relevance.real.base.GaussianMixin`) and the KL
penalty from the log-uniform prior,
:func:`~cplxmodule.nn.relevance.functional.kl_real_vd`. It takes the twin's
arguments and loads its state_dict with ``strict=False``.
"""

import torch

from ..base import BaseARD, GaussianMixin, PenaltyMixin
from .. import functional as F
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


class RealVDMixin(PenaltyMixin):
    """The penalty of real variational dropout; goes before a Gaussian layer in the bases."""

    _doc_method = "variational dropout"

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_real_vd` of
        ``log_alpha``, per weight.
        """
        return F.kl_real_vd(self.log_alpha)


class LinearVD(RealVDMixin, LinearGaussian, family=torch.nn.Linear, kind="vd"):
    pass


class BilinearVD(RealVDMixin, BilinearGaussian, family=torch.nn.Bilinear, kind="vd"):
    pass


class Conv1dVD(RealVDMixin, Conv1dGaussian, family=torch.nn.Conv1d, kind="vd"):
    pass


class Conv2dVD(RealVDMixin, Conv2dGaussian, family=torch.nn.Conv2d, kind="vd"):
    pass


class Conv3dVD(RealVDMixin, Conv3dGaussian, family=torch.nn.Conv3d, kind="vd"):
    pass


class ConvTranspose1dVD(
    RealVDMixin, ConvTranspose1dGaussian, family=torch.nn.ConvTranspose1d, kind="vd"
):
    pass


class ConvTranspose2dVD(
    RealVDMixin, ConvTranspose2dGaussian, family=torch.nn.ConvTranspose2d, kind="vd"
):
    pass


class ConvTranspose3dVD(
    RealVDMixin, ConvTranspose3dGaussian, family=torch.nn.ConvTranspose3d, kind="vd"
):
    pass
