"""Real automatic relevance determination (Kharitonov, Molchanov & Vetrov, 2018).

Variational dropout with an empirical-Bayes Gaussian prior: each layer is
its dense torch twin with a Gaussian posterior and the penalty
:func:`~cplxmodule.nn.relevance.functional.kl_real_ard`.
"""

from .. import functional as F
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


class RealARDMixin:
    """The penalty of real ARD; goes before a Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_real_ard` of
        ``log_alpha``, per weight.
        """
        return F.kl_real_ard(self.log_alpha)


class LinearARD(RealARDMixin, LinearGaussian):
    r"""Linear layer with ARD.

    Takes the arguments of :class:`torch.nn.Linear`.

    Examples
    --------
    >>> import torch
    >>> layer = LinearARD(4, 3)
    >>> layer(torch.randn(2, 4)).shape
    torch.Size([2, 3])
    """


class BilinearARD(RealARDMixin, BilinearGaussian):
    """Bilinear layer with ARD; takes the arguments of :class:`torch.nn.Bilinear`."""


class Conv1dARD(RealARDMixin, Conv1dGaussian):
    """1d convolution with ARD; takes the arguments of :class:`torch.nn.Conv1d`."""


class Conv2dARD(RealARDMixin, Conv2dGaussian):
    """2d convolution with ARD; takes the arguments of :class:`torch.nn.Conv2d`."""


class Conv3dARD(RealARDMixin, Conv3dGaussian):
    """3d convolution with ARD; takes the arguments of :class:`torch.nn.Conv3d`."""


class ConvTranspose1dARD(RealARDMixin, ConvTranspose1dGaussian):
    """1d transposed convolution with ARD.

    Takes the arguments of :class:`torch.nn.ConvTranspose1d`.
    """


class ConvTranspose2dARD(RealARDMixin, ConvTranspose2dGaussian):
    """2d transposed convolution with ARD.

    Takes the arguments of :class:`torch.nn.ConvTranspose2d`.
    """


class ConvTranspose3dARD(RealARDMixin, ConvTranspose3dGaussian):
    """3d transposed convolution with ARD.

    Takes the arguments of :class:`torch.nn.ConvTranspose3d`.
    """
