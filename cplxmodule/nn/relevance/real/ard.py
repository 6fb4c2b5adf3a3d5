"""Real automatic relevance determination (Kharitonov, Molchanov & Vetrov, 2018).

Variational dropout with an empirical-Bayes Gaussian prior: each layer is
its dense torch twin with a Gaussian posterior and the penalty
:func:`~cplxmodule.nn.relevance.functional.kl_real_ard`.
"""

import torch

from .. import functional as F
from ..base import PenaltyMixin
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


class RealARDMixin(PenaltyMixin):
    """The penalty of real ARD; goes before a Gaussian layer in the bases."""

    _doc_method = "ARD"

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_real_ard` of
        ``log_alpha``, per weight.
        """
        return F.kl_real_ard(self.log_alpha)


class LinearARD(RealARDMixin, LinearGaussian, family=torch.nn.Linear, kind="ard"):
    pass


class BilinearARD(RealARDMixin, BilinearGaussian, family=torch.nn.Bilinear, kind="ard"):
    pass


class Conv1dARD(RealARDMixin, Conv1dGaussian, family=torch.nn.Conv1d, kind="ard"):
    pass


class Conv2dARD(RealARDMixin, Conv2dGaussian, family=torch.nn.Conv2d, kind="ard"):
    pass


class Conv3dARD(RealARDMixin, Conv3dGaussian, family=torch.nn.Conv3d, kind="ard"):
    pass


class ConvTranspose1dARD(
    RealARDMixin, ConvTranspose1dGaussian, family=torch.nn.ConvTranspose1d, kind="ard"
):
    pass


class ConvTranspose2dARD(
    RealARDMixin, ConvTranspose2dGaussian, family=torch.nn.ConvTranspose2d, kind="ard"
):
    pass


class ConvTranspose3dARD(
    RealARDMixin, ConvTranspose3dGaussian, family=torch.nn.ConvTranspose3d, kind="ard"
):
    pass
