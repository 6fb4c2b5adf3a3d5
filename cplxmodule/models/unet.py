"""A complex U-Net that masks a spectrogram, for speech enhancement (DCUNet), or reconstructs an image."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch

from .. import cplx
from ..cplx._shared import check_bool, check_choice, check_positive, check_positive_int
from ..cplx._typing import CplxLike, Device
from ..cplx.tensor import Cplx
from ..nn.modules.activation import CplxRatioMask
from ..nn.modules.base import CplxToCplx
from ..nn.modules.batchnorm import CplxBatchNorm2d
from ..nn.modules.conv import CplxConv2d, CplxConvTranspose2d
from ._common import check_image, check_sizes

__all__ = ["CplxUNet"]


def _leaky_crelu(negative_slope: float) -> torch.nn.Module:
    """The leaky ReLU of each part: DCUNet's leaky :math:`\\mathbb{C}\\mathrm{ReLU}`."""
    # CplxToCplx[...] makes its class at run time: mypy cannot index a class that is not generic
    return CplxToCplx[torch.nn.LeakyReLU](negative_slope)  # type: ignore[misc]


class _Down(torch.nn.Module):
    """A strided complex convolution, complex batch norm, leaky CReLU: half the size (stride 2)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int,
                 negative_slope: float, kwargs: dict, stride: int = 2) -> None:
        super().__init__()
        self.conv = CplxConv2d(in_channels, out_channels, kernel_size, stride=stride,
                               padding=kernel_size // 2, bias=False, **kwargs)
        self.bn = CplxBatchNorm2d(out_channels, **kwargs)
        self.act = _leaky_crelu(negative_slope)

    def forward(self, input: Cplx) -> Cplx:
        return self.act(self.bn(self.conv(input)))


class _Up(torch.nn.Module):
    """A transposed complex convolution to a given size; batch norm and leaky CReLU but last."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int,
                 negative_slope: float, last: bool, kwargs: dict, stride: int = 2) -> None:
        super().__init__()
        self.conv = CplxConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                        padding=kernel_size // 2, bias=last, **kwargs)
        self.bn = None if last else CplxBatchNorm2d(out_channels, **kwargs)
        self.act = None if last else _leaky_crelu(negative_slope)

    def forward(self, input: Cplx, size: Sequence[int]) -> Cplx:
        # the size of the encoder's level: an odd size halved rounds up, and the
        # transposed convolution's output_padding takes it back exactly
        h = self.conv(input, output_size=size)
        if self.bn is None or self.act is None:
            return h
        return self.act(self.bn(h))


#: what the U-Net outputs: a ratio mask of its input applied to it, the input plus a
#: correction, or an estimate of its own
OUTPUTS = ("mask", "residual", "direct")


class CplxUNet(torch.nn.Module):
    r"""A complex U-Net: a bounded ratio mask of a spectrogram after DCUNet (Choi et al., 2019), or an image.

    The encoder halves the frequency and time sizes at each level with a
    strided complex convolution (:class:`~cplxmodule.nn.CplxConv2d`),
    complex batch norm (:class:`~cplxmodule.nn.CplxBatchNorm2d`) and the
    leaky ReLU of each part (the paper's leaky
    :math:`\mathbb{C}\mathrm{ReLU}`); the decoder doubles them back with
    transposed complex convolutions
    (:class:`~cplxmodule.nn.CplxConvTranspose2d`), each level after the
    innermost reading the previous level's output concatenated with the
    encoder's output of the same size (the skip connections). The last
    transposed convolution gives a complex map :math:`M` of the input's
    shape. By default (``output="mask"``) it is a mask, applied to the
    input spectrogram :math:`Y` as the paper's bounded (polar) ratio mask
    (:class:`~cplxmodule.nn.CplxRatioMask`):

    .. math::

        \hat S = \tanh(|M|) \, e^{i \arg M} \, Y,

    so that :math:`|\hat S| < |Y|` everywhere, with the phase free. For
    image reconstruction (a zero-filled MRI image in, the image out), the
    output is the input plus :math:`M` (``output="residual"``, the
    network learns the aliasing to remove) or :math:`M` itself
    (``"direct"``), and the first level can keep the full resolution
    (``first_stride=1``), as the U-Nets of image reconstruction do.

    Parameters
    ----------
    in_channels : int, default 1
        Complex channels of the spectrogram (one per microphone) or image
        (one per coil); the output has as many.
    channels : sequence of int, default (8, 16)
        Complex channels of the encoder's levels, outermost first: their
        number is the depth.
    kernel_size : int, default 3
        The (odd) kernel of every convolution; the padding is half of it,
        so that each level halves the size, rounding up.
    negative_slope : float, default 0.1
        The slope of the leaky ReLU below zero.
    bounded : bool, default True
        With ``output="mask"``, squash the mask's modulus by :math:`\tanh`
        (the paper's bounded mask); ``False`` multiplies by :math:`M`
        itself (the unbounded cRM). It plays no part in the other outputs.
    output : {"mask", "residual", "direct"}, default "mask"
        The output: the input times the ratio mask :math:`M`, the input
        plus :math:`M`, or :math:`M`.
    first_stride : {2, 1}, default 2
        The stride of the first level's convolution (and of the last
        transposed one): 2 halves the size there, as DCUNet does; 1 keeps
        the input's resolution for the first level's features, and the
        levels below halve it.
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of the parts.

    Raises
    ------
    ValueError
        If ``in_channels`` is not a positive int, ``channels`` not a
        non-empty tuple of positive ints, ``kernel_size`` not an odd
        positive int, ``negative_slope`` not positive, ``output`` or
        ``first_stride`` not one of the above; in the forward, if ``input``
        is not of the shape below.
    TypeError
        If ``bounded`` is not a bool, or ``input`` is not complex.

    Shape
    -----
    - Input: ``(N, in_channels, F, T)``, the complex STFT (frequency bins
      ``F``, frames ``T``) or image (``H, W``), a
      :class:`~cplxmodule.cplx.Cplx` or a tensor of torch's complex dtype.
      Any ``F, T >= 1``: no divisibility is required, the decoder restores
      each level's size exactly.
    - Output: ``(N, in_channels, F, T)``, the masked spectrogram (or the
      image), a :class:`~cplxmodule.cplx.Cplx`.

    Notes
    -----
    The paper's networks are deeper (DCUNet-10 to DCUNet-20: 10 to 20
    convolutions, encoder and decoder together), with rectangular kernels
    (7x5, 5x3) and strides of 2 along one or both axes; this one keeps the
    structure at a size that trains in seconds, with square kernels and
    strides of 2 along both axes: set ``channels`` and ``kernel_size``
    for more. Its skip connections concatenate, as the paper's; the output
    is the masked spectrogram, to be inverted by
    :class:`~cplxmodule.nn.CplxISTFT` (which takes the one-sided spectrum of
    a waveform, from :class:`~cplxmodule.nn.CplxSTFT` or :func:`torch.stft`,
    and gives the waveform back; the paper's weighted-SDR loss is on the
    waveform), or by :func:`torch.istft` after the one conversion
    :func:`cplxmodule.cplx.to_complex` of the output. For image
    reconstruction, follow it with
    :class:`~cplxmodule.nn.CplxDataConsistency`.

    References
    ----------
    H.-S. Choi, J.-H. Kim, J. Huh, A. Kim, J.-W. Ha, K. Lee, "Phase-aware
    speech enhancement with deep complex U-Net", ICLR 2019.

    Examples
    --------
    >>> from cplxmodule.models import CplxUNet
    >>> from cplxmodule.nn import CplxISTFT
    >>> model = CplxUNet(channels=(4, 8))
    >>> waveform = torch.randn(2, 512)
    >>> noisy = torch.stft(waveform, 64, window=torch.hann_window(64),
    ...                    return_complex=True).unsqueeze(1)
    >>> noisy.shape  # 33 frequency bins, 33 frames: odd sizes are fine
    torch.Size([2, 1, 33, 33])
    >>> enhanced = model(noisy)
    >>> enhanced.shape
    torch.Size([2, 1, 33, 33])
    >>> bool((abs(enhanced) < noisy.abs()).all())  # the bounded mask attenuates
    True
    >>> CplxISTFT(64)(enhanced.squeeze(1), length=512).shape  # back to waveforms
    torch.Size([2, 512])
    >>> torch.istft(cplx.to_complex(enhanced.squeeze(1)), 64,  # or with torch's istft
    ...             window=torch.hann_window(64), length=512).shape
    torch.Size([2, 512])

    An image reconstruction network, its first level at full resolution:

    >>> model = CplxUNet(channels=(4, 8), output="residual", first_stride=1)
    >>> model(cplx.randn(2, 1, 16, 16)).shape
    torch.Size([2, 1, 16, 16])
    """

    def __init__(
        self,
        in_channels: int = 1,
        channels: Union[int, Sequence[int]] = (8, 16),
        kernel_size: int = 3,
        negative_slope: float = 0.1,
        bounded: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
        output: str = "mask",
        first_stride: int = 2,
    ) -> None:
        name = type(self).__name__
        check_positive_int(in_channels, "in_channels", name)
        levels = check_sizes(channels, "channels", name)
        check_positive_int(kernel_size, "kernel_size", name)
        if kernel_size % 2 == 0:
            raise ValueError(f"{name}: `kernel_size` must be an odd positive int, got {kernel_size}")
        check_positive(negative_slope, "negative_slope", name)
        check_bool(bounded, "bounded", name)
        check_choice(output, "output", name, OUTPUTS)
        if check_positive_int(first_stride, "first_stride", name) not in (1, 2):
            raise ValueError(f"{name}: `first_stride` must be 1 or 2, got {first_stride}")
        super().__init__()
        self.in_channels, self.channels, self.kernel_size = in_channels, levels, kernel_size
        self.negative_slope, self.bounded = negative_slope, bounded
        self.output, self.first_stride = output, first_stride
        kwargs: dict[str, Any] = dict(device=device, dtype=dtype)
        sizes = (in_channels,) + levels
        self.encoder = torch.nn.ModuleList(
            _Down(c_in, c_out, kernel_size, negative_slope, kwargs,
                  stride=first_stride if k == 0 else 2)
            for k, (c_in, c_out) in enumerate(zip(sizes[:-1], sizes[1:]))
        )
        # level k maps to the channels of encoder level k's input; every level
        # but the innermost reads its input concatenated with the skip
        depth = len(levels)
        self.decoder = torch.nn.ModuleList(
            _Up(levels[k] * (1 if k == depth - 1 else 2), sizes[k], kernel_size,
                negative_slope, k == 0, kwargs, stride=first_stride if k == 0 else 2)
            for k in range(depth)
        )
        self.ratio_mask = CplxRatioMask(bounded=bounded) if output == "mask" else None

    def forward(self, input: CplxLike) -> Cplx:
        """The masked spectrogram (or the image) of a batch of complex inputs (see the class's Shape)."""
        input = check_image(self, input, self.in_channels)
        levels = [input]
        for down in self.encoder:
            levels.append(down(levels[-1]))
        h = levels[-1]
        for k in reversed(range(len(self.decoder))):
            if k < len(self.decoder) - 1:
                h = cplx.cat([h, levels[k + 1]], dim=1)
            h = self.decoder[k](h, levels[k].shape[-2:])
        if self.ratio_mask is not None:
            return self.ratio_mask(h, input)
        return input + h if self.output == "residual" else h

    def extra_repr(self) -> str:
        s = f"in_channels={self.in_channels}, channels={self.channels}"
        s += f", kernel_size={self.kernel_size}, negative_slope={self.negative_slope}"
        if self.output != "mask":
            s += f", output={self.output!r}"
        elif not self.bounded:
            s += ", bounded=False"
        return s + (f", first_stride={self.first_stride}" if self.first_stride != 2 else "")
