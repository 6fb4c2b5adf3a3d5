"""Complex-valued masked layers: the complex layers plus :class:`BaseMasked`.

Each layer subclasses its dense complex twin from :mod:`cplxmodule.nn`, so
it takes the same arguments and has the same state_dict keys (plus
``mask``). The mask is a real tensor with the shape of ``weight.real``; it
multiplies both parts of the complex weight.
"""

from ..modules.conv import (
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
)
from ..modules.linear import CplxBilinear, CplxLinear
from .base import BaseMasked

__all__ = [
    "CplxLinearMasked",
    "CplxBilinearMasked",
    "CplxConv1dMasked",
    "CplxConv2dMasked",
    "CplxConv3dMasked",
    "CplxConvTranspose1dMasked",
    "CplxConvTranspose2dMasked",
    "CplxConvTranspose3dMasked",
]


class CplxLinearMasked(BaseMasked, CplxLinear):
    r"""Complex linear layer with a fixed real sparsity mask on its weight.

    ``y = x (W \odot M)^T + b`` with a real mask ``M``. Takes the arguments
    of :class:`~cplxmodule.nn.CplxLinear`.

    Examples
    --------
    >>> import torch
    >>> layer = CplxLinearMasked(4, 3)
    >>> layer.mask = torch.ones(3, 4).triu()
    >>> layer(cplx.randn(2, 4)).shape
    torch.Size([2, 3])
    """


class CplxBilinearMasked(BaseMasked, CplxBilinear):
    r"""Complex bilinear layer with a fixed real sparsity mask on its weight.

    Takes the arguments of :class:`~cplxmodule.nn.CplxBilinear`; the mask
    broadcasts to ``(out_features, in1_features, in2_features)``.
    """


class CplxConv1dMasked(BaseMasked, CplxConv1d):
    r"""Complex 1d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv1d`, every
    ``padding_mode`` included.
    """


class CplxConv2dMasked(BaseMasked, CplxConv2d):
    r"""Complex 2d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv2d`, every
    ``padding_mode`` included.
    """


class CplxConv3dMasked(BaseMasked, CplxConv3d):
    r"""Complex 3d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv3d`, every
    ``padding_mode`` included.
    """


class CplxConvTranspose1dMasked(BaseMasked, CplxConvTranspose1d):
    r"""Complex 1d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose1d`.
    """


class CplxConvTranspose2dMasked(BaseMasked, CplxConvTranspose2d):
    r"""Complex 2d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose2d`.
    """


class CplxConvTranspose3dMasked(BaseMasked, CplxConvTranspose3d):
    r"""Complex 3d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose3d`.
    """
