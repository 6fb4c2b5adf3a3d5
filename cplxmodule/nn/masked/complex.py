"""Complex-valued masked layers: the complex layers plus :class:`BaseMasked`.

Each layer subclasses its dense complex twin from :mod:`cplxmodule.nn`, so
it takes the same arguments and has the same state_dict keys (plus
``mask``). The mask is a real tensor with the shape of ``weight.real``; it
multiplies both parts of the complex weight.
"""

import cplxmodule.cplx as cplx

from ..modules.conv import (
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
)
from ..modules.linear import CplxBilinear, CplxLinear, _check_features
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


class CplxLinearMasked(CplxLinear, BaseMasked):
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

    def forward(self, input):
        _check_features(self, input, self.in_features)
        return cplx.linear(input, self.weight_masked, self.bias)


class CplxBilinearMasked(CplxBilinear, BaseMasked):
    r"""Complex bilinear layer with a fixed real sparsity mask on its weight.

    Takes the arguments of :class:`~cplxmodule.nn.CplxBilinear`; the mask
    broadcasts to ``(out_features, in1_features, in2_features)``.
    """

    def forward(self, input1, input2):
        _check_features(self, input1, self.in1_features, "input1")
        _check_features(self, input2, self.in2_features, "input2")
        return cplx.bilinear(input1, input2, self.weight_masked, self.bias, self.conjugate)


class CplxConv1dMasked(CplxConv1d, BaseMasked):
    r"""Complex 1d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv1d`, every
    ``padding_mode`` included.
    """

    def forward(self, input):
        return self._conv_forward(input, self.weight_masked, self.bias)


class CplxConv2dMasked(CplxConv2d, BaseMasked):
    r"""Complex 2d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv2d`, every
    ``padding_mode`` included.
    """

    def forward(self, input):
        return self._conv_forward(input, self.weight_masked, self.bias)


class CplxConv3dMasked(CplxConv3d, BaseMasked):
    r"""Complex 3d convolution with a fixed real sparsity mask on its kernel.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConv3d`, every
    ``padding_mode`` included.
    """

    def forward(self, input):
        return self._conv_forward(input, self.weight_masked, self.bias)


class CplxConvTranspose1dMasked(CplxConvTranspose1d, BaseMasked):
    r"""Complex 1d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose1d`.
    """

    def forward(self, input, output_size=None):
        return self._conv_forward(input, self.weight_masked, self.bias, output_size)


class CplxConvTranspose2dMasked(CplxConvTranspose2d, BaseMasked):
    r"""Complex 2d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose2d`.
    """

    def forward(self, input, output_size=None):
        return self._conv_forward(input, self.weight_masked, self.bias, output_size)


class CplxConvTranspose3dMasked(CplxConvTranspose3d, BaseMasked):
    r"""Complex 3d transposed convolution with a fixed real sparsity mask.

    Takes the arguments of :class:`~cplxmodule.nn.CplxConvTranspose3d`.
    """

    def forward(self, input, output_size=None):
        return self._conv_forward(input, self.weight_masked, self.bias, output_size)
