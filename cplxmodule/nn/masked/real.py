"""Real-valued masked layers: torch's dense layers plus :class:`BaseMasked`.

Each layer subclasses its dense torch twin, so it takes the same arguments
and has the same state_dict keys (plus ``mask``): a trained dense checkpoint
loads with ``load_state_dict(state_dict, strict=False)``. Its forward pass
calls the twin's single entry point with ``self.weight_masked``.
"""

import torch
import torch.nn.functional as F

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


class LinearMasked(torch.nn.Linear, BaseMasked):
    r"""Linear layer with a fixed sparsity mask on its weight.

    ``y = x (W \odot M)^T + b``. Takes the arguments of
    :class:`torch.nn.Linear`; the mask (see :class:`BaseMasked`) must be set
    before the first forward pass.

    Examples
    --------
    >>> layer = LinearMasked(4, 3)
    >>> layer.mask = torch.ones(3, 4).tril()
    >>> layer(torch.randn(2, 4)).shape
    torch.Size([2, 3])
    """

    def forward(self, input):
        return F.linear(input, self.weight_masked, self.bias)


class BilinearMasked(torch.nn.Bilinear, BaseMasked):
    r"""Bilinear layer with a fixed sparsity mask on its weight.

    Takes the arguments of :class:`torch.nn.Bilinear`; the mask has the
    weight's shape ``(out_features, in1_features, in2_features)`` or
    broadcasts to it.
    """

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight_masked, self.bias)


class Conv1dMasked(torch.nn.Conv1d, BaseMasked):
    r"""1d convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.Conv1d`, every ``padding_mode``
    included; the mask broadcasts to ``(out_channels, in_channels // groups,
    kernel_size)``.
    """

    def forward(self, input):
        return self._conv_forward(input, self.weight_masked, self.bias)


class Conv2dMasked(torch.nn.Conv2d, BaseMasked):
    r"""2d convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.Conv2d`, every ``padding_mode``
    included; the mask broadcasts to the kernel's shape.

    Examples
    --------
    >>> layer = Conv2dMasked(2, 4, 3, padding=1, padding_mode="reflect")
    >>> layer.mask = torch.rand(4, 2, 3, 3) > 0.5
    >>> layer(torch.randn(1, 2, 5, 5)).shape
    torch.Size([1, 4, 5, 5])
    """

    def forward(self, input):
        return self._conv_forward(input, self.weight_masked, self.bias)


class Conv3dMasked(torch.nn.Conv3d, BaseMasked):
    r"""3d convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.Conv3d`, every ``padding_mode``
    included; the mask broadcasts to the kernel's shape.
    """

    def forward(self, input):
        return self._conv_forward(input, self.weight_masked, self.bias)


def _conv_transpose_masked(layer, input, output_size, conv_transpose):
    """Forward pass of a masked transposed convolution of any dimension.

    torch's transposed convolutions have no ``_conv_forward(input, weight,
    bias)`` entry point: this mirrors their ``forward`` once, for 1d, 2d
    and 3d.
    """
    if layer.padding_mode != "zeros":
        raise ValueError(
            f"Only `zeros` padding mode is supported for {type(layer).__name__}, "
            f"got padding_mode={layer.padding_mode!r}."
        )
    output_padding = layer._output_padding(
        input,
        output_size,
        layer.stride,
        layer.padding,
        layer.kernel_size,
        len(layer.kernel_size),
        layer.dilation,
    )
    return conv_transpose(
        input,
        layer.weight_masked,
        layer.bias,
        layer.stride,
        layer.padding,
        output_padding,
        layer.groups,
        layer.dilation,
    )


class ConvTranspose1dMasked(torch.nn.ConvTranspose1d, BaseMasked):
    r"""1d transposed convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.ConvTranspose1d`; the mask
    broadcasts to ``(in_channels, out_channels // groups, kernel_size)``.
    """

    def forward(self, input, output_size=None):
        return _conv_transpose_masked(self, input, output_size, F.conv_transpose1d)


class ConvTranspose2dMasked(torch.nn.ConvTranspose2d, BaseMasked):
    r"""2d transposed convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.ConvTranspose2d`; the mask
    broadcasts to the kernel's shape.
    """

    def forward(self, input, output_size=None):
        return _conv_transpose_masked(self, input, output_size, F.conv_transpose2d)


class ConvTranspose3dMasked(torch.nn.ConvTranspose3d, BaseMasked):
    r"""3d transposed convolution with a fixed sparsity mask on its kernel.

    Takes the arguments of :class:`torch.nn.ConvTranspose3d`; the mask
    broadcasts to the kernel's shape.
    """

    def forward(self, input, output_size=None):
        return _conv_transpose_masked(self, input, output_size, F.conv_transpose3d)
