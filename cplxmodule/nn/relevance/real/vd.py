"""Real variational dropout (Molchanov, Ashukha & Vetrov, 2017).

Each layer is its dense torch twin with a Gaussian posterior
(:class:`~cplxmodule.nn.relevance.real.base.GaussianMixin`) and the KL
penalty from the log-uniform prior,
:func:`~cplxmodule.nn.relevance.functional.kl_real_vd`. It takes the twin's
arguments and loads its state_dict with ``strict=False``.
"""

from ..base import BaseARD, GaussianMixin
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


class RealVDMixin:
    """The penalty of real variational dropout; goes before a Gaussian layer in the bases."""

    @property
    def penalty(self):
        """torch.Tensor: :func:`~cplxmodule.nn.relevance.functional.kl_real_vd` of
        ``log_alpha``, per weight.
        """
        return F.kl_real_vd(self.log_alpha)


class LinearVD(RealVDMixin, LinearGaussian):
    r"""Linear layer with variational dropout.

    Takes the arguments of :class:`torch.nn.Linear`.

    Examples
    --------
    >>> import torch
    >>> layer = LinearVD(4, 3)
    >>> layer(torch.randn(2, 4)).shape
    torch.Size([2, 3])
    >>> layer.penalty.shape
    torch.Size([3, 4])
    """


class BilinearVD(RealVDMixin, BilinearGaussian):
    """Bilinear layer with variational dropout.

    Takes the arguments of :class:`torch.nn.Bilinear`.
    """


class Conv1dVD(RealVDMixin, Conv1dGaussian):
    """1d convolution with variational dropout; takes the arguments of :class:`torch.nn.Conv1d`."""


class Conv2dVD(RealVDMixin, Conv2dGaussian):
    """2d convolution with variational dropout; takes the arguments of :class:`torch.nn.Conv2d`."""


class Conv3dVD(RealVDMixin, Conv3dGaussian):
    """3d convolution with variational dropout; takes the arguments of :class:`torch.nn.Conv3d`."""


class ConvTranspose1dVD(RealVDMixin, ConvTranspose1dGaussian):
    """1d transposed convolution with variational dropout.

    Takes the arguments of :class:`torch.nn.ConvTranspose1d`.
    """


class ConvTranspose2dVD(RealVDMixin, ConvTranspose2dGaussian):
    """2d transposed convolution with variational dropout.

    Takes the arguments of :class:`torch.nn.ConvTranspose2d`.
    """


class ConvTranspose3dVD(RealVDMixin, ConvTranspose3dGaussian):
    """3d transposed convolution with variational dropout.

    Takes the arguments of :class:`torch.nn.ConvTranspose3d`.
    """
