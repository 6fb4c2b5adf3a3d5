"""Complex multi-head attention, the twin of :class:`torch.nn.MultiheadAttention`."""

from __future__ import annotations

import torch

from ...cplx import Cplx
from ...cplx.attention import (
    _attention,
    _check_operands,
    _multi_head_attention_forward,
    check_score,
)
from ...cplx._shared import (
    check_bool,
    check_divides,
    check_positive_int,
    check_positive,
    check_probability,
)
from ..init import cplx_xavier_normal_
from .base import CplxToCplx
from .linear import CplxLinear
from .parameter import CplxParameter, _factory_kwargs
from typing import Any, Optional
from ...cplx._typing import CplxLike, Device

__all__ = ["CplxMultiheadAttention", "CplxScaledDotProductAttention"]


def _torch_in_proj(state_dict, prefix):
    """The in-projections of a :class:`torch.nn.MultiheadAttention` state_dict, as ours.

    torch packs the three weights into ``in_proj_weight`` (or keeps them
    apart, ``q_proj_weight``..., when the features of the keys or values
    differ) and the three biases into ``in_proj_bias``; each piece is put
    under the key of its projection (``q_proj.weight``...), where the
    projection's own loader promotes a real tensor to a complex one with
    zero imaginary part. A projection whose own entries are there already
    is left alone, and torch's entry is then reported as unexpected.
    """
    names = [f"{prefix}{p}_proj" for p in "qkv"]
    separate = [f"{prefix}{p}_proj_weight" for p in "qkv"]
    for part, packed, apart in (
        ("weight", prefix + "in_proj_weight", separate),
        ("bias", prefix + "in_proj_bias", ()),
    ):
        targets = [f"{name}.{part}" for name in names]
        if any(key.startswith(target) for key in state_dict for target in targets):
            continue
        if isinstance(state_dict.get(packed), torch.Tensor):
            pieces = state_dict.pop(packed).chunk(3)
        elif apart and all(isinstance(state_dict.get(key), torch.Tensor) for key in apart):
            pieces = [state_dict.pop(key) for key in apart]
        else:
            continue
        state_dict.update(zip(targets, pieces))


class CplxMultiheadAttention(CplxToCplx):
    r"""Complex multi-head attention, the twin of :class:`torch.nn.MultiheadAttention`.

    Queries, keys and values are projected by the complex linear maps
    ``q_proj``, ``k_proj`` and ``v_proj``, split into ``num_heads`` heads of
    :math:`d = \text{embed\_dim} / \text{num\_heads}` complex features, and
    each head computes

    .. math::

        \operatorname{softmax}_s\Bigl(\frac{\operatorname{score}
        \langle q_l, k_s \rangle}{\sqrt{d}} + \text{mask}_{ls}\Bigr) v_s,
        \qquad \langle q, k \rangle = \sum_j q_j \overline{k_j},

    with the score the real part (``score="real"``, the default) or the
    modulus (``"modulus"``) of the Hermitian product: real weights that
    average complex values (see
    :func:`cplxmodule.cplx.scaled_dot_product_attention`). The heads are
    joined and projected by ``out_proj``.

    Every weight is a :class:`~cplxmodule.nn.CplxLinear`, so
    :func:`~cplxmodule.nn.relevance.to_bayesian`,
    :func:`~cplxmodule.nn.masked.to_masked`,
    :func:`~cplxmodule.nn.relevance.compute_ard_masks`,
    :func:`~cplxmodule.nn.masked.compact` and :class:`~cplxmodule.nn.cached`
    reach the four projections as any other complex linear layer.

    Parameters
    ----------
    embed_dim : int
        Complex features of the queries and of the output.
    num_heads : int
        Heads; must divide ``embed_dim``.
    dropout : float, default 0.0
        Probability of zeroing an attention weight in training.
    bias : bool, default True
        Learn complex biases of the four projections.
    add_bias_kv : bool, default False
        Learn a complex key and value (``bias_k``, ``bias_v``) appended to
        the projected keys and values of every sequence, as torch does.
    add_zero_attn : bool, default False
        Append a zero key and value to every head, as torch does.
    kdim, vdim : int, optional
        Features of the keys and of the values (``embed_dim`` by default).
    batch_first : bool, default False
        Inputs and outputs are ``(N, L, E)`` rather than ``(L, N, E)``.
    device, dtype : optional
        Factory kwargs (a complex ``dtype`` names its parts' dtype).
    score : {"real", "modulus"}, default "real"
        How the Hermitian product of a query and a key is made real.

    Shape
    -----
    - query: :math:`(L, N, E)`, :math:`(N, L, E)` with ``batch_first``,
      or :math:`(L, E)` unbatched; key: :math:`(S, N, E_k)` likewise;
      value: :math:`(S, N, E_v)` likewise.
    - key_padding_mask: :math:`(N, S)` or :math:`(S)` unbatched, bool
      (``True``: the key is ignored) or float (added to the scores).
    - attn_mask: :math:`(L, S)` or :math:`(N \cdot \text{num\_heads}, L, S)`,
      bool (``True``: not allowed) or float (added).
    - Output: the attention of the query's shape, and the real weights
      :math:`(N, L, S)` averaged over the heads, or
      :math:`(N, \text{num\_heads}, L, S)` without ``average_attn_weights``
      (without :math:`N` when unbatched), or ``None`` without
      ``need_weights``; :math:`S` counts the keys that ``add_bias_kv`` and
      ``add_zero_attn`` append.

    Attributes
    ----------
    q_proj, k_proj, v_proj, out_proj : CplxLinear
        The projections; state_dict keys ``q_proj.weight.real`` and so on.
    bias_k, bias_v : CplxParameter or None
        Shape ``(1, 1, embed_dim)``, with ``add_bias_kv``.

    Raises
    ------
    ValueError
        If an argument is out of range, naming it, e.g. ``num_heads`` not
        dividing ``embed_dim``.

    Notes
    -----
    The scale is :math:`1/\sqrt{d}` with :math:`d` the *complex* head size:
    with zero imaginary parts and ``score="real"`` the layer computes what
    :class:`torch.nn.MultiheadAttention` computes with the real parts of the
    weights. Without ``need_weights`` and with the real score, each head is
    one call of :func:`torch.nn.functional.scaled_dot_product_attention` on
    the concatenated real and imaginary parts; otherwise the scores and
    weights are formed explicitly (the two give the same result).

    ``is_causal`` with no ``attn_mask`` applies the causal mask, merged
    with ``key_padding_mask`` when there is one (torch raises there, asking
    for the mask); with an ``attn_mask``, as in torch, it is a hint and
    ``attn_mask`` is used. A query whose every key is masked gets the
    output of zero attention (``out_proj``'s bias), zero weights and zero
    gradients, on either path, as from torch's fused path (torch's
    ``need_weights`` path gives NaN there).

    The masks, the heads and the layouts are handled by one function of
    the functional core, which calls the four projections as modules: their
    hooks run, and masked or Bayesian projections compute with their own
    weights.

    A :class:`torch.nn.MultiheadAttention` state_dict loads (its real
    weights with zero imaginary parts): torch's packed ``in_proj_weight``
    and ``in_proj_bias``, or its separate ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` when ``kdim`` or ``vdim`` differ,
    are split among ``q_proj``, ``k_proj`` and ``v_proj``.

    References
    ----------
    F. Eilers and X. Jiang, "Building blocks for a complex-valued transformer
    architecture", ICASSP 2023.

    M. Yang, M. Q. Ma, D. Li, Y.-H. H. Tsai and R. Salakhutdinov, "Complex
    transformer: a framework for modeling complex-valued sequence", ICASSP 2020.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> attn = CplxMultiheadAttention(16, 4, batch_first=True)
    >>> x = cplx.randn(2, 10, 16)
    >>> out, weights = attn(x, x, x)
    >>> out.shape, weights.shape
    (torch.Size([2, 10, 16]), torch.Size([2, 10, 10]))
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: Optional[int] = None,
        vdim: Optional[int] = None,
        batch_first: bool = False,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
        score: str = "real",
    ) -> None:
        where = type(self).__name__
        embed_dim = check_positive_int(embed_dim, "embed_dim", where)
        num_heads = check_positive_int(num_heads, "num_heads", where)
        check_divides(num_heads, "num_heads", embed_dim, "`embed_dim`", where)
        kdim = check_positive_int(kdim, "kdim", where, optional=True)
        vdim = check_positive_int(vdim, "vdim", where, optional=True)
        check_probability(dropout, "dropout", where)
        check_bool(add_bias_kv, "add_bias_kv", where)
        check_bool(add_zero_attn, "add_zero_attn", where)
        check_score(score, where)
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.dropout, self.batch_first, self.score = float(dropout), batch_first, score
        kwargs: dict[str, Any] = dict(bias=bias, device=device, dtype=dtype)
        self.q_proj = CplxLinear(embed_dim, embed_dim, **kwargs)
        self.k_proj = CplxLinear(self.kdim, embed_dim, **kwargs)
        self.v_proj = CplxLinear(self.vdim, embed_dim, **kwargs)
        self.out_proj = CplxLinear(embed_dim, embed_dim, **kwargs)
        if add_bias_kv:
            factory = _factory_kwargs(device, dtype)
            self.bias_k = CplxParameter(Cplx.empty(1, 1, embed_dim, **factory))
            self.bias_v = CplxParameter(Cplx.empty(1, 1, embed_dim, **factory))
        else:
            self.register_module("bias_k", None)
            self.register_module("bias_v", None)
        self.add_zero_attn = add_zero_attn
        self._reset_extra_keys()

    def reset_parameters(self):
        """Reset the projections (:meth:`CplxLinear.reset_parameters`) and ``bias_k``, ``bias_v``.

        The latter are drawn by
        :func:`~cplxmodule.nn.init.cplx_xavier_normal_`, as torch draws its
        real ones by Xavier's normal rule.
        """
        for proj in (self.q_proj, self.k_proj, self.v_proj, self.out_proj):
            proj.reset_parameters()
        self._reset_extra_keys()

    def _reset_extra_keys(self):
        if self.bias_k is not None:
            cplx_xavier_normal_(self.bias_k)
            cplx_xavier_normal_(self.bias_v)

    def forward(
        self,
        query: CplxLike,
        key: CplxLike,
        value: CplxLike,
        key_padding_mask: Optional[torch.Tensor] = None,
        need_weights: bool = True,
        attn_mask: Optional[torch.Tensor] = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Cplx, Optional[torch.Tensor]]:
        """Attend from ``query`` to ``key``, averaging ``value``; see the class docstring.

        Returns
        -------
        (Cplx, torch.Tensor or None)
            The output and the real attention weights (``None`` unless
            ``need_weights``).
        """
        return _multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            (self.q_proj, self.k_proj, self.v_proj),
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            kdim=self.kdim,
            vdim=self.vdim,
            batch_first=self.batch_first,
            score=self.score,
            where=self._get_name(),
        )

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        _torch_in_proj(state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def extra_repr(self):
        text = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        if self.head_dim * self.num_heads != self.embed_dim:
            text += f", head_dim={self.head_dim}"  # compact removed heads
        if self.kdim != self.embed_dim or self.vdim != self.embed_dim:
            text += f", kdim={self.kdim}, vdim={self.vdim}"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bias_k is not None:
            text += ", add_bias_kv=True"
        if self.add_zero_attn:
            text += ", add_zero_attn=True"
        if self.batch_first:
            text += ", batch_first=True"
        if self.score != "real":
            text += f", score={self.score!r}"
        return text


class CplxScaledDotProductAttention(CplxToCplx):
    r"""Complex scaled dot-product attention as a layer, without projections.

    The layer form of :func:`cplxmodule.cplx.scaled_dot_product_attention`:

    .. math::

        \operatorname{softmax}_s\bigl(\text{scale} \cdot
        \operatorname{score}\langle q_l, k_s \rangle + \text{mask}_{ls}\bigr) v_s,
        \qquad \langle q, k \rangle = \sum_j q_j \overline{k_j},

    real weights from the real part (``score="real"``) or the modulus
    (``"modulus"``) of the Hermitian product, averaging complex values. The
    weights are dropped out with probability ``dropout`` in training mode
    only.

    Parameters
    ----------
    score : {"real", "modulus"}, default "real"
        How the Hermitian product of a query and a key is made real.
    dropout : float, default 0.0
        The probability of zeroing a weight when training.
    scale : float, optional
        The factor of the scores; :math:`1/\sqrt{E}` by default, :math:`E`
        the complex feature size of the queries.

    Raises
    ------
    ValueError
        If ``score`` is unknown, ``dropout`` is not in :math:`[0, 1]` or
        ``scale`` is not positive.

    Shape
    -----
    - query: :math:`(*, L, E)`; key: :math:`(*, S, E)`; value: :math:`(*, S, E_v)`.
    - Output: :math:`(*, L, E_v)`.

    Notes
    -----
    complextorch's ``ScaledDotProductAttention`` takes a ``temperature`` (the
    inverse of ``scale``) and by default applies a softmax to the complex
    scores, so its weights are complex: a different map.

    References
    ----------
    F. Eilers and X. Jiang, "Building blocks for a complex-valued transformer
    architecture", ICASSP 2023.

    M. Yang, M. Q. Ma, D. Li, Y.-H. H. Tsai and R. Salakhutdinov, "Complex
    transformer: a framework for modeling complex-valued sequence", ICASSP 2020.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> q, k, v = cplx.randn(2, 5, 8), cplx.randn(2, 7, 8), cplx.randn(2, 7, 3)
    >>> CplxScaledDotProductAttention(score="modulus")(q, k, v).shape
    torch.Size([2, 5, 3])
    """

    def __init__(
        self, score: str = "real", dropout: float = 0.0, scale: Optional[float] = None
    ) -> None:
        where = type(self).__name__
        check_score(score, where)
        check_probability(dropout, "dropout", where)
        check_positive(scale, "scale", where, optional=True)
        super().__init__()
        self.score, self.dropout, self.scale = score, float(dropout), scale

    def forward(
        self,
        query: CplxLike,
        key: CplxLike,
        value: CplxLike,
        attn_mask: Optional[torch.Tensor] = None,
        is_causal: bool = False,
    ) -> Cplx:
        """Attend ``query`` to ``key``; ``attn_mask`` as for the function (``True``: may attend)."""
        dropout = self.dropout if self.training else 0.0
        query, key, value = _check_operands(
            query, key, value, attn_mask, dropout, is_causal, self.scale, self.score,
            self._get_name(),
        )
        return _attention(query, key, value, attn_mask, dropout, is_causal, self.scale,
                          self.score)[0]

    def extra_repr(self):
        scale = "" if self.scale is None else f", scale={self.scale}"
        return f"score={self.score!r}, dropout={self.dropout}{scale}"
