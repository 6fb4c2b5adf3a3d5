"""Real-valued masked layers: torch's dense layers plus :class:`BaseMasked`.

Each layer subclasses its dense torch twin, so it takes the same arguments
and has the same state_dict keys (plus ``mask``): a trained dense checkpoint
loads with ``load_state_dict(state_dict, strict=False)``. The twin is a
private subclass of torch's layer (``isinstance(layer, torch.nn.Linear)``
holds) that adds the entry point ``_dense_forward`` which
``BaseMasked._weighted_forward`` calls with ``self.weight_masked``.
"""

import torch

from ..modules.conv import (
    _RealConv1d,
    _RealConv2d,
    _RealConv3d,
    _RealConvTranspose1d,
    _RealConvTranspose2d,
    _RealConvTranspose3d,
)
from ..modules.linear import _RealBilinear, _RealLinear
from .base import BaseMasked

__all__ = [
    "LinearMasked",
    "BilinearMasked",
    "Conv1dMasked",
    "Conv2dMasked",
    "Conv3dMasked",
    "ConvTranspose1dMasked",
    "ConvTranspose2dMasked",
    "ConvTranspose3dMasked",
]


class LinearMasked(BaseMasked, _RealLinear, family=torch.nn.Linear, kind="masked"):
    r"""Linear layer with a fixed sparsity mask on its weight.

    ``y = x (W \odot M)^T + b``. Takes the arguments of
    :class:`torch.nn.Linear`; the mask (see :class:`BaseMasked`) must be set
    before the first forward pass.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.Linear`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> layer = LinearMasked(4, 3)
    >>> layer.mask = torch.ones(3, 4).tril()
    >>> layer(torch.randn(2, 4)).shape
    torch.Size([2, 3])
    """


class BilinearMasked(BaseMasked, _RealBilinear, family=torch.nn.Bilinear, kind="masked"):
    r"""Bilinear layer with a fixed sparsity mask on its weight.

    Takes the arguments of :class:`torch.nn.Bilinear`; the mask has the
    weight's shape ``(out_features, in1_features, in2_features)`` or
    broadcasts to it.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.Bilinear`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> layer = BilinearMasked(3, 4, 2)
    >>> layer.mask = torch.ones_like(layer.weight)
    >>> layer(torch.randn(8, 3), torch.randn(8, 4)).shape
    torch.Size([8, 2])
    """


class Conv1dMasked(BaseMasked, _RealConv1d, family=torch.nn.Conv1d, kind="masked"):
    r"""1d convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.Conv1d`, every ``padding_mode``
    included; the mask broadcasts to ``(out_channels, in_channels // groups,
    kernel_size)``.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.Conv1d`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> layer = Conv1dMasked(2, 4, 3)
    >>> layer.mask = torch.ones_like(layer.weight)
    >>> layer(torch.randn(8, 2, 16)).shape
    torch.Size([8, 4, 14])
    """


class Conv2dMasked(BaseMasked, _RealConv2d, family=torch.nn.Conv2d, kind="masked"):
    r"""2d convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.Conv2d`, every ``padding_mode``
    included; the mask broadcasts to the kernel's shape.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.Conv2d`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> layer = Conv2dMasked(2, 4, 3, padding=1, padding_mode="reflect")
    >>> layer.mask = torch.rand(4, 2, 3, 3) > 0.5
    >>> layer(torch.randn(1, 2, 5, 5)).shape
    torch.Size([1, 4, 5, 5])
    """


class Conv3dMasked(BaseMasked, _RealConv3d, family=torch.nn.Conv3d, kind="masked"):
    r"""3d convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.Conv3d`, every ``padding_mode``
    included; the mask broadcasts to the kernel's shape.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.Conv3d`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> layer = Conv3dMasked(2, 4, 3)
    >>> layer.mask = torch.ones_like(layer.weight)
    >>> layer(torch.randn(8, 2, 6, 6, 6)).shape
    torch.Size([8, 4, 4, 4, 4])
    """


class ConvTranspose1dMasked(
    BaseMasked, _RealConvTranspose1d, family=torch.nn.ConvTranspose1d, kind="masked"
):
    r"""1d transposed convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.ConvTranspose1d`; the mask
    broadcasts to ``(in_channels, out_channels // groups, kernel_size)``.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.ConvTranspose1d`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> layer = ConvTranspose1dMasked(2, 4, 3)
    >>> layer.mask = torch.ones_like(layer.weight)
    >>> layer(torch.randn(8, 2, 16)).shape
    torch.Size([8, 4, 18])
    """


class ConvTranspose2dMasked(
    BaseMasked, _RealConvTranspose2d, family=torch.nn.ConvTranspose2d, kind="masked"
):
    r"""2d transposed convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.ConvTranspose2d`; the mask
    broadcasts to the kernel's shape.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.ConvTranspose2d`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> layer = ConvTranspose2dMasked(2, 4, 3)
    >>> layer.mask = torch.ones_like(layer.weight)
    >>> layer(torch.randn(8, 2, 16, 16)).shape
    torch.Size([8, 4, 18, 18])
    """


class ConvTranspose3dMasked(
    BaseMasked, _RealConvTranspose3d, family=torch.nn.ConvTranspose3d, kind="masked"
):
    r"""3d transposed convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.ConvTranspose3d`; the mask
    broadcasts to the kernel's shape.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.ConvTranspose3d`; the mask has the
      weight's shape (or broadcasts to it).

    Examples
    --------
    >>> import torch
    >>> layer = ConvTranspose3dMasked(2, 4, 3)
    >>> layer.mask = torch.ones_like(layer.weight)
    >>> layer(torch.randn(8, 2, 6, 6, 6)).shape
    torch.Size([8, 4, 8, 8, 8])
    """
