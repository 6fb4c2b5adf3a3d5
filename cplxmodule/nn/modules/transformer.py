"""Complex transformer layers, the twins of torch's ``nn/modules/transformer.py``."""

from __future__ import annotations

import copy

import torch

from ...cplx._shared import (
    check_divides,
    check_features,
    check_positive_int,
    check_probability,
    checked_cplx,
)
from ..init import cplx_xavier_uniform_
from .activation import CplxSplitGELU, CplxSplitReLU
from .attention import CplxMultiheadAttention
from .base import CplxToCplx
from .dropout import CplxDropout
from .linear import CplxLinear
from .normalization import CplxLayerNorm
from typing import Any, Callable, Optional, Union
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx

__all__ = [
    "CplxTransformerEncoderLayer",
    "CplxTransformerDecoderLayer",
    "CplxTransformerEncoder",
    "CplxTransformerDecoder",
    "CplxTransformer",
]

_ACTIVATIONS = {"relu": CplxSplitReLU, "gelu": CplxSplitGELU}

_LAYER_PARAMETERS = """\
    d_model : int
        Complex features of the input and output.
    nhead : int
        Attention heads; must divide ``d_model``.
    dim_feedforward : int, default 2048
        Complex features of the feed-forward block's hidden layer.
    dropout : float, default 0.1
        Dropout probability of the attention weights and of each block.
    activation : {"relu", "gelu"} or callable, default "relu"
        The feed-forward activation: ``"relu"`` is the split ReLU
        :class:`~cplxmodule.nn.CplxSplitReLU` (:math:`\\mathbb{C}\\mathrm{ReLU}`),
        ``"gelu"`` the split GELU; a module or a function of a
        :class:`~cplxmodule.cplx.Cplx` is used as given.
    layer_norm_eps : float, default 1e-5
        ``eps`` of the :class:`~cplxmodule.nn.CplxLayerNorm` layers.
    batch_first : bool, default False
        Inputs and outputs are ``(N, L, E)`` rather than ``(L, N, E)``.
    norm_first : bool, default False
        Normalise before each block (pre-norm) rather than after the
        residual sum.
    bias : bool, default True
        Learn the biases of the linear and normalisation layers.
    device, dtype : optional
        Factory kwargs (a complex ``dtype`` names its parts' dtype).
    score : {"real", "modulus"}, default "real"
        The attention score, see :class:`CplxMultiheadAttention`."""


def _check_layer_args(layer, d_model, nhead, dim_feedforward, dropout, activation):
    where = type(layer).__name__
    check_positive_int(d_model, "d_model", where)
    check_positive_int(nhead, "nhead", where)
    check_positive_int(dim_feedforward, "dim_feedforward", where)
    check_divides(nhead, "nhead", d_model, "`d_model`", where)
    check_probability(dropout, "dropout", where)
    if not (callable(activation) or isinstance(activation, str) and activation in _ACTIVATIONS):
        raise ValueError(
            f"{where}: `activation` must be 'relu', 'gelu' or a callable, got {activation!r}"
        )


def _activation(activation):
    # a string names a fresh module (a child, listed and moved with the layer);
    # a callable is kept as given, as torch does
    return _ACTIVATIONS[activation]() if isinstance(activation, str) else activation


class _FeedForward:
    """The feed-forward block and the shared layers of the encoder and decoder layers."""

    def _build(self, d_model, dim_feedforward, dropout, activation, layer_norm_eps, bias,
               norms, kwargs):
        self.linear1 = CplxLinear(d_model, dim_feedforward, bias=bias, **kwargs)
        self.dropout = CplxDropout(dropout)
        self.linear2 = CplxLinear(dim_feedforward, d_model, bias=bias, **kwargs)
        for k in range(1, norms + 1):
            setattr(self, f"norm{k}", CplxLayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                    **kwargs))
            setattr(self, f"dropout{k}", CplxDropout(dropout))
        self.activation = _activation(activation)

    @property
    def dropout_last(self) -> CplxDropout:
        """The dropout after the feed-forward block, the layer's last (``dropout2`` or ``dropout3``)."""
        raise NotImplementedError

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout_last(x)


class CplxTransformerEncoderLayer(_FeedForward, CplxToCplx):
    __doc__ = r"""Complex self-attention and feed-forward blocks.

    The twin of :class:`torch.nn.TransformerEncoderLayer`:

    .. math::

        x \leftarrow \operatorname{LN}_1(x + \operatorname{SA}(x)), \qquad
        x \leftarrow \operatorname{LN}_2(x + W_2\, \sigma(W_1 x))

    (with ``norm_first``, :math:`x \leftarrow x + \operatorname{SA}(\operatorname{LN}_1 x)`
    and likewise), with dropout after the attention weights, the activation
    and each block. Attention is :class:`CplxMultiheadAttention`, the
    normalisation :class:`~cplxmodule.nn.CplxLayerNorm` (per sample over the
    features, by :math:`2 \times 2` whitening of the real and imaginary
    parts; never statistics across the batch), the linear maps
    :class:`~cplxmodule.nn.CplxLinear`.

    Parameters
    ----------
""" + _LAYER_PARAMETERS + r"""

    Shape
    -----
    - src: :math:`(S, N, E)`, :math:`(N, S, E)` with ``batch_first``, or
      :math:`(S, E)` unbatched; the output has its shape.
    - src_mask, src_key_padding_mask: as ``attn_mask`` and
      ``key_padding_mask`` of :class:`CplxMultiheadAttention` (bool
      ``True`` is not allowed; a float mask is added to the scores).
    - is_causal: without ``src_mask``, each position attends to itself and
      the earlier ones only (merged with ``src_key_padding_mask``); with
      one, a hint that it is causal, and ``src_mask`` is used (torch asks
      for the mask with the flag).

    Notes
    -----
    With zero imaginary parts, ``score="real"`` and ``activation="relu"``
    (or ``"gelu"``) the layer computes what
    :class:`torch.nn.TransformerEncoderLayer` computes with the real parts
    of the weights and the diagonal entries ``weight[0, 0]`` of the norms'
    affine maps: the whitening of a real input is its division by the
    standard deviation. With the modulus score it does not (:math:`|s| \ne
    s`), nor for complex inputs, where the whitening differs from a
    division by the modulus' spread.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxTransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True)
    >>> layer(cplx.randn(4, 10, 16)).shape
    torch.Size([4, 10, 16])
    """

    __constants__ = ["norm_first"]
    # set by ``_build``
    norm1: CplxLayerNorm
    norm2: CplxLayerNorm
    dropout1: CplxDropout
    dropout2: CplxDropout

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Union[str, Callable[..., Any]] = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
        score: str = "real",
    ) -> None:
        _check_layer_args(self, d_model, nhead, dim_feedforward, dropout, activation)
        super().__init__()
        kwargs: dict[str, Any] = dict(device=device, dtype=dtype)
        self.self_attn = CplxMultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, score=score,
            **kwargs
        )
        self._build(d_model, dim_feedforward, dropout, activation, layer_norm_eps, bias, 2,
                    kwargs)
        self.norm_first = norm_first

    @property
    def dropout_last(self) -> CplxDropout:
        return self.dropout2

    def forward(
        self,
        src: CplxLike,
        src_mask: Optional[torch.Tensor] = None,
        src_key_padding_mask: Optional[torch.Tensor] = None,
        is_causal: bool = False,
    ) -> Cplx:
        """Run the layer on ``src``; see the class docstring."""
        x = checked_cplx(src, "src", self._get_name())
        check_features(x, self.self_attn.embed_dim, "src", self._get_name())
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)


class CplxTransformerDecoderLayer(_FeedForward, CplxToCplx):
    __doc__ = r"""Complex self-attention, cross-attention and feed-forward blocks.

    The twin of :class:`torch.nn.TransformerDecoderLayer`: as
    :class:`CplxTransformerEncoderLayer`, with a block of attention from
    the target to the ``memory`` (the encoder's output) between the
    self-attention and the feed-forward blocks, normalised by ``norm2``;
    the feed-forward block's norm is ``norm3``.

    Parameters
    ----------
""" + _LAYER_PARAMETERS + r"""

    Shape
    -----
    - tgt: :math:`(T, N, E)`, :math:`(N, T, E)` with ``batch_first``, or
      :math:`(T, E)` unbatched; the output has its shape.
    - memory: :math:`(S, N, E)` likewise.
    - masks: as in :class:`CplxMultiheadAttention`; ``tgt_mask`` is
      :math:`(T, T)`, ``memory_mask`` :math:`(T, S)`.
    - tgt_is_causal, memory_is_causal: without ``tgt_mask`` (``memory_mask``),
      the causal mask, merged with the key padding mask; with it, a hint
      that it is causal, as for ``is_causal`` of
      :class:`CplxTransformerEncoderLayer`.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxTransformerDecoderLayer(16, 2, dim_feedforward=32)
    >>> layer(cplx.randn(7, 4, 16), cplx.randn(10, 4, 16)).shape
    torch.Size([7, 4, 16])
    """

    __constants__ = ["norm_first"]
    # set by ``_build``
    norm1: CplxLayerNorm
    norm2: CplxLayerNorm
    dropout1: CplxDropout
    dropout2: CplxDropout
    norm3: CplxLayerNorm
    dropout3: CplxDropout

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Union[str, Callable[..., Any]] = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
        score: str = "real",
    ) -> None:
        _check_layer_args(self, d_model, nhead, dim_feedforward, dropout, activation)
        super().__init__()
        kwargs: dict[str, Any] = dict(device=device, dtype=dtype)
        attention: dict[str, Any] = dict(dropout=dropout, bias=bias, batch_first=batch_first, score=score)
        self.self_attn = CplxMultiheadAttention(d_model, nhead, **attention, **kwargs)
        self.multihead_attn = CplxMultiheadAttention(d_model, nhead, **attention, **kwargs)
        self._build(d_model, dim_feedforward, dropout, activation, layer_norm_eps, bias, 3,
                    kwargs)
        self.norm_first = norm_first

    @property
    def dropout_last(self) -> CplxDropout:
        return self.dropout3

    def forward(
        self,
        tgt: CplxLike,
        memory: CplxLike,
        tgt_mask: Optional[torch.Tensor] = None,
        memory_mask: Optional[torch.Tensor] = None,
        tgt_key_padding_mask: Optional[torch.Tensor] = None,
        memory_key_padding_mask: Optional[torch.Tensor] = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Cplx:
        """Run the layer on ``tgt`` attending to ``memory``; see the class docstring."""
        x = checked_cplx(tgt, "tgt", self._get_name())
        memory = checked_cplx(memory, "memory", self._get_name())
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(
            x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        )
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(
            x,
            memory,
            memory,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout2(x)


def _clones(layer, num_layers, where, kind):
    name = "encoder_layer" if kind is CplxTransformerEncoderLayer else "decoder_layer"
    if not isinstance(layer, kind):
        raise TypeError(
            f"{where}: `{name}` must be a {kind.__name__}, got {type(layer).__name__}"
        )
    check_positive_int(num_layers, "num_layers", where)
    return torch.nn.ModuleList(copy.deepcopy(layer) for _ in range(num_layers))


class CplxTransformerEncoder(CplxToCplx):
    r"""A stack of ``num_layers`` copies of an encoder layer.

    The twin of :class:`torch.nn.TransformerEncoder`.

    Parameters
    ----------
    encoder_layer : CplxTransformerEncoderLayer
        Deep-copied ``num_layers`` times (the copies do not share weights).
    num_layers : int
        Number of layers.
    norm : torch.nn.Module, optional
        Applied to the output of the last layer (e.g. a
        :class:`~cplxmodule.nn.CplxLayerNorm`).
    enable_nested_tensor, mask_check : bool
        Accepted for torch's signature; they select torch's fast paths and
        have no effect here.

    Shape
    -----
    As :class:`CplxTransformerEncoderLayer`.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxTransformerEncoderLayer(16, 2, dim_feedforward=32)
    >>> encoder = CplxTransformerEncoder(layer, num_layers=2)
    >>> encoder(cplx.randn(10, 4, 16)).shape
    torch.Size([10, 4, 16])
    """

    def __init__(
        self,
        encoder_layer: CplxTransformerEncoderLayer,
        num_layers: int,
        norm: Optional[torch.nn.Module] = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        where = type(self).__name__
        layers = _clones(encoder_layer, num_layers, where, CplxTransformerEncoderLayer)
        super().__init__()
        self.layers, self.num_layers, self.norm = layers, num_layers, norm

    def forward(
        self,
        src: CplxLike,
        mask: Optional[torch.Tensor] = None,
        src_key_padding_mask: Optional[torch.Tensor] = None,
        is_causal: Optional[bool] = None,
    ) -> Cplx:
        """Run every layer in turn on ``src``, then ``norm``."""
        x = checked_cplx(src, "src", self._get_name())
        check_features(x, self.layers[0].self_attn.embed_dim, "src", self._get_name())
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class CplxTransformerDecoder(CplxToCplx):
    r"""A stack of ``num_layers`` copies of a decoder layer.

    The twin of :class:`torch.nn.TransformerDecoder`.

    Parameters
    ----------
    decoder_layer : CplxTransformerDecoderLayer
        Deep-copied ``num_layers`` times.
    num_layers : int
        Number of layers.
    norm : torch.nn.Module, optional
        Applied to the output of the last layer.

    Shape
    -----
    As :class:`CplxTransformerDecoderLayer`.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxTransformerDecoderLayer(16, 2, dim_feedforward=32, batch_first=True)
    >>> decoder = CplxTransformerDecoder(layer, num_layers=2)
    >>> decoder(cplx.randn(4, 7, 16), cplx.randn(4, 10, 16)).shape
    torch.Size([4, 7, 16])
    """

    def __init__(
        self,
        decoder_layer: CplxTransformerDecoderLayer,
        num_layers: int,
        norm: Optional[torch.nn.Module] = None,
    ) -> None:
        where = type(self).__name__
        layers = _clones(decoder_layer, num_layers, where, CplxTransformerDecoderLayer)
        super().__init__()
        self.layers, self.num_layers, self.norm = layers, num_layers, norm

    def forward(
        self,
        tgt: CplxLike,
        memory: CplxLike,
        tgt_mask: Optional[torch.Tensor] = None,
        memory_mask: Optional[torch.Tensor] = None,
        tgt_key_padding_mask: Optional[torch.Tensor] = None,
        memory_key_padding_mask: Optional[torch.Tensor] = None,
        tgt_is_causal: Optional[bool] = None,
        memory_is_causal: bool = False,
    ) -> Cplx:
        """Run every layer in turn on ``tgt`` attending to ``memory``, then ``norm``."""
        x = checked_cplx(tgt, "tgt", self._get_name())
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal),
                memory_is_causal=memory_is_causal,
            )
        return x if self.norm is None else self.norm(x)


class CplxTransformer(CplxToCplx):
    __doc__ = r"""A complex encoder-decoder transformer, the twin of :class:`torch.nn.Transformer`.

    An encoder of ``num_encoder_layers`` :class:`CplxTransformerEncoderLayer`
    and a decoder of ``num_decoder_layers`` :class:`CplxTransformerDecoderLayer`,
    each followed by a :class:`~cplxmodule.nn.CplxLayerNorm`, as in torch.
    Every weight of the linear maps is drawn by
    :func:`~cplxmodule.nn.init.cplx_xavier_uniform_` (torch draws every
    parameter of two or more dimensions by Xavier's rule).

    Parameters
    ----------
""" + _LAYER_PARAMETERS.replace(
        "    dim_feedforward",
        "    num_encoder_layers, num_decoder_layers : int, default 6\n"
        "        Layers of the encoder and of the decoder.\n    dim_feedforward",
    ) + r"""
    custom_encoder, custom_decoder : torch.nn.Module, optional
        Used instead of the default encoder or decoder.

    Shape
    -----
    - src: :math:`(S, N, E)`, :math:`(N, S, E)` with ``batch_first``, or
      :math:`(S, E)` unbatched; tgt: :math:`(T, N, E)` likewise.
    - Output: the shape of ``tgt``.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> model = CplxTransformer(16, 2, num_encoder_layers=1, num_decoder_layers=1,
    ...                         dim_feedforward=32, batch_first=True)
    >>> model(cplx.randn(4, 10, 16), cplx.randn(4, 7, 16)).shape
    torch.Size([4, 7, 16])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Union[str, Callable[..., Any]] = "relu",
        custom_encoder: Optional[torch.nn.Module] = None,
        custom_decoder: Optional[torch.nn.Module] = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
        score: str = "real",
    ) -> None:
        where = type(self).__name__
        check_positive_int(num_encoder_layers, "num_encoder_layers", where)
        check_positive_int(num_decoder_layers, "num_decoder_layers", where)
        _check_layer_args(self, d_model, nhead, dim_feedforward, dropout, activation)
        super().__init__()
        kwargs: dict[str, Any] = dict(device=device, dtype=dtype)
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias)
        if custom_encoder is None:
            encoder_layer = CplxTransformerEncoderLayer(*args, score=score, **kwargs)
            norm = CplxLayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
            custom_encoder = CplxTransformerEncoder(encoder_layer, num_encoder_layers, norm)
        if custom_decoder is None:
            decoder_layer = CplxTransformerDecoderLayer(*args, score=score, **kwargs)
            norm = CplxLayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
            custom_decoder = CplxTransformerDecoder(decoder_layer, num_decoder_layers, norm)
        self.encoder, self.decoder = custom_encoder, custom_decoder
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self._reset_parameters()

    def _reset_parameters(self):
        for module in self.modules():
            if isinstance(module, CplxLinear):
                cplx_xavier_uniform_(module.weight)

    def forward(
        self,
        src: CplxLike,
        tgt: CplxLike,
        src_mask: Optional[torch.Tensor] = None,
        tgt_mask: Optional[torch.Tensor] = None,
        memory_mask: Optional[torch.Tensor] = None,
        src_key_padding_mask: Optional[torch.Tensor] = None,
        tgt_key_padding_mask: Optional[torch.Tensor] = None,
        memory_key_padding_mask: Optional[torch.Tensor] = None,
        src_is_causal: Optional[bool] = None,
        tgt_is_causal: Optional[bool] = None,
        memory_is_causal: bool = False,
    ) -> Cplx:
        """Encode ``src``, then decode ``tgt`` attending to the encoding."""
        where = self._get_name()
        src = checked_cplx(src, "src", where)
        tgt = checked_cplx(tgt, "tgt", where)
        batch = 0 if self.batch_first else 1
        if src.dim() != tgt.dim() or src.dim() == 3 and src.shape[batch] != tgt.shape[batch]:
            raise ValueError(
                f"{where}: `tgt` must have the dimensions and the batch size of `src`,"
                f" {tuple(src.shape)}, got {tuple(tgt.shape)}"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(
                f"{where}: `src` and `tgt` must have {self.d_model} features (d_model),"
                f" got {tuple(src.shape)} and {tuple(tgt.shape)}"
            )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float causal mask of shape ``(sz, sz)``: ``-inf`` above the diagonal, 0 elsewhere.

        As :meth:`torch.nn.Transformer.generate_square_subsequent_mask`.

        Examples
        --------
        >>> CplxTransformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
        """
        check_positive_int(sz, "sz", "CplxTransformer.generate_square_subsequent_mask")
        return torch.triu(
            torch.full((sz, sz), float("-inf"), device=device, dtype=dtype or torch.float32),
            diagonal=1,
        )
