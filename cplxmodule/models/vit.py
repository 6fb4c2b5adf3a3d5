"""A small complex vision transformer."""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple, Union

import torch

from .. import cplx
from ..cplx._shared import check_choice, check_divides, check_positive_int, check_probability, ntuple
from ..cplx._typing import CplxLike, Device
from ..nn.modules.conv import CplxConv2d
from ..nn.modules.flatten import CplxFlatten
from ..nn.modules.normalization import CplxLayerNorm
from ..nn.modules.parameter import CplxParameter
from ..nn.modules.transformer import CplxTransformerEncoder, CplxTransformerEncoderLayer
from ._common import READOUTS, check_image, readout_layer

__all__ = ["CplxVisionTransformer"]

#: how the sequence of tokens becomes one feature vector
POOLINGS = ("cls", "mean")


class CplxVisionTransformer(torch.nn.Module):
    r"""A complex vision transformer classifier (after Dosovitskiy et al., 2021).

    The image is cut into non-overlapping patches, each mapped to a complex
    token of ``d_model`` features by a strided complex convolution
    (:class:`~cplxmodule.nn.CplxConv2d` with kernel and stride
    ``patch_size``); a learnable class token is put first (``pool="cls"``)
    and a learnable complex positional embedding added; a pre-norm complex
    transformer encoder (:class:`~cplxmodule.nn.CplxTransformerEncoder` of
    :class:`~cplxmodule.nn.CplxTransformerEncoderLayer`, attention scores
    :math:`\mathrm{Re}(q k^H)`, split GELU in the feed-forward blocks, a
    final :class:`~cplxmodule.nn.CplxLayerNorm`) mixes the tokens; the class
    token's output (or the mean of the tokens', ``pool="mean"``), read out
    as real features, gives the logits through a real
    :class:`torch.nn.Linear` layer.

    Complex transformers of this form (real part of the Hermitian product
    as the attention score) are those of Eilers & Jiang (2023); the vision
    transformer's layout is Dosovitskiy et al.'s.

    Parameters
    ----------
    in_channels : int
        Complex channels of the input.
    num_classes : int
        Outputs (logits).
    image_size : int or (int, int)
        Height and width of the inputs (the positional embedding has one
        entry per patch).
    patch_size : int or (int, int)
        Height and width of a patch; must divide ``image_size``.
    d_model : int, default 16
        Complex features of a token.
    nhead : int, default 2
        Attention heads; must divide ``d_model``.
    num_layers : int, default 2
        Encoder layers.
    dim_feedforward : int, optional
        Complex features of the feed-forward blocks; ``2 * d_model`` by default.
    dropout : float, default 0.0
        Dropout of the encoder layers.
    pool : {"cls", "mean"}, default "cls"
        Read the class token's output, or the mean of the patch tokens'.
    readout : {"parts", "modulus"}, default "parts"
        The real features of the pooled complex token: its real then
        imaginary parts (``2 * d_model``), or its modulus (``d_model``).
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of the parts.

    Raises
    ------
    ValueError
        If a size is not a positive int (or pair of them), ``patch_size``
        does not divide ``image_size``, ``nhead`` does not divide
        ``d_model``, ``dropout`` is not a probability or ``pool`` or
        ``readout`` not one of its choices; in the forward, if ``input`` is
        not of the shape below.
    TypeError
        If ``input`` is not complex.

    Shape
    -----
    - Input: ``(N, in_channels, H, W)`` with ``(H, W) = image_size``, a
      :class:`~cplxmodule.cplx.Cplx` or a tensor of torch's complex dtype.
    - Output: ``(N, num_classes)``, real.

    References
    ----------
    A. Dosovitskiy et al., "An image is worth 16x16 words: transformers for
    image recognition at scale", ICLR 2021; F. Eilers, X. Jiang, "Building
    blocks for a complex-valued transformer architecture", ICASSP 2023.

    Examples
    --------
    >>> from cplxmodule.models import CplxVisionTransformer
    >>> model = CplxVisionTransformer(1, 10, image_size=16, patch_size=4, d_model=8)
    >>> model(cplx.randn(2, 1, 16, 16)).shape
    torch.Size([2, 10])
    >>> model.position.shape  # a class token and 4 x 4 patches
    torch.Size([1, 17, 8])
    """

    def __init__(
        self,
        in_channels: int,
        num_classes: int,
        image_size: Union[int, Tuple[int, int]],
        patch_size: Union[int, Tuple[int, int]],
        d_model: int = 16,
        nhead: int = 2,
        num_layers: int = 2,
        dim_feedforward: Optional[int] = None,
        dropout: float = 0.0,
        pool: str = "cls",
        readout: str = "parts",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        name = type(self).__name__
        check_positive_int(in_channels, "in_channels", name)
        check_positive_int(num_classes, "num_classes", name)
        image_hw = ntuple(image_size, 2, "image_size", name, minimum=1)
        patch_hw = ntuple(patch_size, 2, "patch_size", name, minimum=1)
        for size, patch in zip(image_hw, patch_hw):
            check_divides(patch, "patch_size", size, f"`image_size` {image_hw}", name)
        check_positive_int(d_model, "d_model", name)
        check_positive_int(nhead, "nhead", name)
        check_divides(nhead, "nhead", d_model, "`d_model`", name)
        check_positive_int(num_layers, "num_layers", name)
        dim_feedforward = 2 * d_model if dim_feedforward is None else dim_feedforward
        check_positive_int(dim_feedforward, "dim_feedforward", name)
        check_probability(dropout, "dropout", name)
        check_choice(pool, "pool", name, POOLINGS)
        check_choice(readout, "readout", name, READOUTS)
        super().__init__()
        self.in_channels, self.num_classes = in_channels, num_classes
        self.image_size, self.patch_size = image_hw, patch_hw
        self.d_model, self.pool, self.readout = d_model, pool, readout
        kwargs: dict[str, Any] = dict(device=device, dtype=dtype)
        self.patches = CplxConv2d(in_channels, d_model, patch_hw, stride=patch_hw, **kwargs)
        self.flatten = CplxFlatten(2)
        tokens = math.prod(s // p for s, p in zip(image_hw, patch_hw)) + int(pool == "cls")
        self.class_token = (
            CplxParameter(cplx.Cplx.zeros(1, 1, d_model, **kwargs)) if pool == "cls" else None
        )
        self.position = CplxParameter(cplx.Cplx.zeros(1, tokens, d_model, **kwargs))
        layer = CplxTransformerEncoderLayer(
            d_model, nhead, dim_feedforward, dropout, activation="gelu", batch_first=True,
            norm_first=True, **kwargs
        )
        self.encoder = CplxTransformerEncoder(
            layer, num_layers, norm=CplxLayerNorm(d_model, **kwargs), enable_nested_tensor=False
        )
        self.real = readout_layer(readout)
        features = 2 * d_model if readout == "parts" else d_model
        self.classifier = torch.nn.Linear(features, num_classes, **kwargs)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the positional embedding (each part normal, s.d. 0.02 / sqrt 2); zero the class token.

        The other layers keep their own initialisation.
        """
        std = 0.02 / math.sqrt(2)
        with torch.no_grad():
            torch.nn.init.trunc_normal_(self.position.real, std=std, a=-2 * std, b=2 * std)
            torch.nn.init.trunc_normal_(self.position.imag, std=std, a=-2 * std, b=2 * std)
            if self.class_token is not None:
                self.class_token.real.zero_()
                self.class_token.imag.zero_()

    def forward(self, input: CplxLike) -> torch.Tensor:
        """Class logits of a batch of complex images (see the class's Shape)."""
        input = check_image(self, input, self.in_channels, size=self.image_size)
        tokens = self.flatten(self.patches(input)).transpose(1, 2)  # (N, L, E)
        if self.class_token is not None:
            n = tokens.shape[0]
            token = cplx.Cplx(self.class_token.real.expand(n, 1, self.d_model),
                              self.class_token.imag.expand(n, 1, self.d_model))
            tokens = cplx.cat([token, tokens], dim=1)
        h = self.encoder(tokens + self.position)
        pooled = h[:, 0] if self.pool == "cls" else h.mean(dim=1)
        return self.classifier(self.real(pooled))

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.num_classes}, image_size={self.image_size}, "
             f"patch_size={self.patch_size}, d_model={self.d_model}")
        if self.pool != "cls":
            s += f", pool={self.pool!r}"
        return s + ("" if self.readout == "parts" else f", readout={self.readout!r}")
