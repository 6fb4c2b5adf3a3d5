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


class CplxLinearMasked(BaseMasked, CplxLinear, family=CplxLinear, kind="masked"):
    r"""Complex linear layer with a fixed real sparsity mask on its weight.

    ``y = x (W \odot M)^T + b`` with a real mask ``M``. Takes the arguments
    of :class:`~cplxmodule.nn.CplxLinear`.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxLinear`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> layer = CplxLinearMasked(4, 3)
    >>> layer.mask = torch.ones(3, 4).triu()
    >>> layer(cplx.randn(2, 4)).shape
    torch.Size([2, 3])
    """


class CplxBilinearMasked(BaseMasked, CplxBilinear, family=CplxBilinear, kind="masked"):
    r"""Complex bilinear layer with a fixed real sparsity mask on its weight.

    Takes the arguments of :class:`~cplxmodule.nn.CplxBilinear`; the mask
    broadcasts to ``(out_features, in1_features, in2_features)``.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxBilinear`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxBilinearMasked(3, 4, 2)
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer(cplx.randn(8, 3), cplx.randn(8, 4)).shape
    torch.Size([8, 2])
    """


class CplxConv1dMasked(BaseMasked, CplxConv1d, family=CplxConv1d, kind="masked"):
    r"""Complex 1d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv1d`, every
    ``padding_mode`` included.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxConv1d`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConv1dMasked(2, 4, 3)
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer(cplx.randn(8, 2, 16)).shape
    torch.Size([8, 4, 14])
    """


class CplxConv2dMasked(BaseMasked, CplxConv2d, family=CplxConv2d, kind="masked"):
    r"""Complex 2d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv2d`, every
    ``padding_mode`` included.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxConv2d`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConv2dMasked(2, 4, 3)
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer(cplx.randn(8, 2, 16, 16)).shape
    torch.Size([8, 4, 14, 14])
    """


class CplxConv3dMasked(BaseMasked, CplxConv3d, family=CplxConv3d, kind="masked"):
    r"""Complex 3d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv3d`, every
    ``padding_mode`` included.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxConv3d`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConv3dMasked(2, 4, 3)
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer(cplx.randn(8, 2, 6, 6, 6)).shape
    torch.Size([8, 4, 4, 4, 4])
    """


class CplxConvTranspose1dMasked(
    BaseMasked, CplxConvTranspose1d, family=CplxConvTranspose1d, kind="masked"
):
    r"""Complex 1d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose1d`.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxConvTranspose1d`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConvTranspose1dMasked(2, 4, 3)
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer(cplx.randn(8, 2, 16)).shape
    torch.Size([8, 4, 18])
    """


class CplxConvTranspose2dMasked(
    BaseMasked, CplxConvTranspose2d, family=CplxConvTranspose2d, kind="masked"
):
    r"""Complex 2d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose2d`.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxConvTranspose2d`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConvTranspose2dMasked(2, 4, 3)
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer(cplx.randn(8, 2, 16, 16)).shape
    torch.Size([8, 4, 18, 18])
    """


class CplxConvTranspose3dMasked(
    BaseMasked, CplxConvTranspose3d, family=CplxConvTranspose3d, kind="masked"
):
    r"""Complex 3d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose3d`.

    Shape
    -----
    - Input and output: as for :class:`~cplxmodule.nn.CplxConvTranspose3d`; the
      mask is real, of the shape of ``weight.real`` (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConvTranspose3dMasked(2, 4, 3)
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer(cplx.randn(8, 2, 6, 6, 6)).shape
    torch.Size([8, 4, 8, 8, 8])
    """
