"""A complex residual network for image classification (Deep Complex Networks)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch

from ..cplx._shared import check_choice, check_positive_int
from ..cplx._typing import CplxLike, Device
from ..cplx.tensor import Cplx
from ..nn.modules.activation import CplxSplitReLU
from ..nn.modules.batchnorm import CplxBatchNorm2d
from ..nn.modules.conv import CplxConv2d
from ..nn.modules.flatten import CplxFlatten
from ..nn.modules.pooling import CplxAdaptiveAvgPool2d
from ._common import READOUTS, check_image, check_sizes, readout_layer

__all__ = ["CplxResNet"]


class _PreActivationBlock(torch.nn.Module):
    """Batch norm, CReLU, 3x3 convolution, twice, plus the shortcut (He et al., 2016)."""

    def __init__(self, in_channels: int, out_channels: int, stride: int, kwargs: dict) -> None:
        super().__init__()
        self.bn1 = CplxBatchNorm2d(in_channels, **kwargs)
        self.act1 = CplxSplitReLU()
        self.conv1 = CplxConv2d(in_channels, out_channels, 3, stride=stride, padding=1,
                                bias=False, **kwargs)
        self.bn2 = CplxBatchNorm2d(out_channels, **kwargs)
        self.act2 = CplxSplitReLU()
        self.conv2 = CplxConv2d(out_channels, out_channels, 3, padding=1, bias=False, **kwargs)
        # a projection where the shape changes, the identity elsewhere
        self.shortcut = (
            CplxConv2d(in_channels, out_channels, 1, stride=stride, bias=False, **kwargs)
            if stride != 1 or in_channels != out_channels else None
        )

    def forward(self, input: Cplx) -> Cplx:
        h = self.act1(self.bn1(input))
        skip = input if self.shortcut is None else self.shortcut(h)
        h = self.conv2(self.act2(self.bn2(self.conv1(h))))
        return h + skip


class CplxResNet(torch.nn.Module):
    r"""A complex residual network classifier, after Deep Complex Networks (Trabelsi et al., 2018).

    A 3x3 complex convolution (:class:`~cplxmodule.nn.CplxConv2d`), then
    stages of pre-activation residual blocks, each block two rounds of
    complex batch norm (:class:`~cplxmodule.nn.CplxBatchNorm2d`, the
    whitening of the real and imaginary parts by their 2x2 covariance that
    the paper introduced), :math:`\mathbb{C}\mathrm{ReLU}` (the ReLU of each
    part, :class:`~cplxmodule.nn.CplxSplitReLU`) and a 3x3 complex
    convolution, added to the block's input. Every stage after the first
    halves the height and width (its first block has stride 2, its shortcut
    a strided 1x1 convolution). A last batch norm and
    :math:`\mathbb{C}\mathrm{ReLU}`, the global average over positions, a
    real read-out of the complex features and a real
    :class:`torch.nn.Linear` layer give the class logits.

    Built from the library's layers only, the model sparsifies through
    :func:`~cplxmodule.nn.relevance.to_bayesian`,
    :func:`~cplxmodule.nn.relevance.compute_ard_masks`,
    :func:`~cplxmodule.nn.masked.to_masked` and
    :func:`~cplxmodule.nn.masked.compact` like any model of them
    (:doc:`/guides/models`).

    Parameters
    ----------
    in_channels : int
        Complex channels of the input.
    num_classes : int
        Outputs (logits).
    widths : sequence of int, default (16, 32, 64)
        Complex channels of each stage.
    blocks : int or sequence of int, default 2
        Residual blocks of each stage: one number for every stage, or one
        per entry of ``widths``.
    readout : {"parts", "modulus"}, default "parts"
        The real features of the pooled complex ones: ``"parts"`` the real
        parts then the imaginary parts (``2 * widths[-1]`` features, as the
        paper's real classifier reads them), ``"modulus"`` the modulus
        (``widths[-1]`` features, invariant to a global phase of the
        features).
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of the parts.

    Raises
    ------
    ValueError
        If ``in_channels`` or ``num_classes`` is not a positive int, ``widths``
        or ``blocks`` is not a non-empty tuple of positive ints, they differ
        in length, or ``readout`` is not one of the two; in the forward, if
        ``input`` is not of the shape below.
    TypeError
        If ``input`` is not complex.

    Shape
    -----
    - Input: ``(N, in_channels, H, W)``, a :class:`~cplxmodule.cplx.Cplx`
      (or a tensor of torch's complex dtype), ``H, W >= 1``.
    - Output: ``(N, num_classes)``, real.

    Notes
    -----
    The paper's blocks are the pre-activation blocks of He et al. (2016)
    used here; where the paper downsamples by concatenating a projection
    of the block's input to its output, this model uses the strided
    projection shortcut of He et al., so that the widths are free.
    The weights start at the layers' own initialisation (the complex
    analogue of torch's default).

    References
    ----------
    C. Trabelsi, O. Bilaniuk, Y. Zhang, D. Serdyuk, S. Subramanian,
    J. F. Santos, S. Mehri, N. Rostamzadeh, Y. Bengio, C. J. Pal, "Deep
    complex networks", ICLR 2018; K. He, X. Zhang, S. Ren, J. Sun,
    "Identity mappings in deep residual networks", ECCV 2016.

    Examples
    --------
    >>> from cplxmodule.models import CplxResNet
    >>> model = CplxResNet(1, 10, widths=(4, 8), blocks=(1, 1))
    >>> model(cplx.randn(2, 1, 16, 16)).shape
    torch.Size([2, 10])
    >>> model(torch.randn(2, 1, 9, 7, dtype=torch.complex64)).shape  # any size
    torch.Size([2, 10])
    """

    def __init__(
        self,
        in_channels: int,
        num_classes: int,
        widths: Union[int, Sequence[int]] = (16, 32, 64),
        blocks: Union[int, Sequence[int]] = 2,
        readout: str = "parts",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        name = type(self).__name__
        check_positive_int(in_channels, "in_channels", name)
        check_positive_int(num_classes, "num_classes", name)
        stage_widths = check_sizes(widths, "widths", name)
        stage_blocks = check_sizes(blocks, "blocks", name, n=len(stage_widths))
        check_choice(readout, "readout", name, READOUTS)
        super().__init__()
        self.in_channels, self.num_classes = in_channels, num_classes
        self.widths, self.blocks, self.readout = stage_widths, stage_blocks, readout
        kwargs: dict[str, Any] = dict(device=device, dtype=dtype)
        self.stem = CplxConv2d(in_channels, stage_widths[0], 3, padding=1, bias=False, **kwargs)
        layers, channels = [], stage_widths[0]
        for stage, (width, count) in enumerate(zip(stage_widths, stage_blocks)):
            for block in range(count):
                stride = 2 if stage > 0 and block == 0 else 1
                layers.append(_PreActivationBlock(channels, width, stride, kwargs))
                channels = width
        self.stages = torch.nn.Sequential(*layers)
        self.bn = CplxBatchNorm2d(channels, **kwargs)
        self.act = CplxSplitReLU()
        self.pool = CplxAdaptiveAvgPool2d(1)
        self.flatten = CplxFlatten(1)
        self.real = readout_layer(readout)
        features = 2 * channels if readout == "parts" else channels
        self.classifier = torch.nn.Linear(features, num_classes, **kwargs)

    def forward(self, input: CplxLike) -> torch.Tensor:
        """Class logits of a batch of complex images (see the class's Shape)."""
        input = check_image(self, input, self.in_channels)
        h = self.act(self.bn(self.stages(self.stem(input))))
        return self.classifier(self.real(self.flatten(self.pool(h))))

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.num_classes}, widths={self.widths}, "
                f"blocks={self.blocks}, readout={self.readout!r}")
