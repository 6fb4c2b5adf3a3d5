"""Complex multi-head attention, the twin of :class:`torch.nn.MultiheadAttention`."""

import torch
import torch.nn.functional as F

from ... import cplx
from ...cplx import Cplx
from ...cplx.attention import _attention, check_score
from ...cplx._shared import check_positive_int, checked_cplx, describe
from ..init import cplx_xavier_normal_
from .base import CplxToCplx
from .linear import CplxLinear
from .parameter import CplxParameter, _factory_kwargs

__all__ = ["CplxMultiheadAttention"]


def _float_mask(mask, name, dtype, where):
    """``mask`` as an additive float mask: torch's layer convention, ``True`` is not allowed."""
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or not (
        mask.dtype == torch.bool or mask.is_floating_point()
    ):
        raise TypeError(
            f"{where}: `{name}` must be a bool or floating torch.Tensor, got {describe(mask)}"
        )
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
            mask, float("-inf")
        )
    return mask.to(dtype)


def _check_shape(mask, shapes, name, where):
    if mask is not None and tuple(mask.shape) not in shapes:
        expected = " or ".join(str(s) for s in shapes)
        raise ValueError(f"{where}: `{name}` must have shape {expected}, got {tuple(mask.shape)}")


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

    ``is_causal`` with no ``attn_mask`` applies the causal mask (torch
    raises there, asking for the mask); with an ``attn_mask``, as in torch,
    it is a hint and ``attn_mask`` is used. The projections' weights are
    separate (torch packs them into one ``in_proj_weight``), so a torch
    state_dict is loaded by splitting that tensor into three.

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
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
        score="real",
    ):
        where = type(self).__name__
        check_positive_int(embed_dim, "embed_dim", where)
        check_positive_int(num_heads, "num_heads", where)
        if embed_dim % num_heads:
            raise ValueError(
                f"{where}: `num_heads` must divide `embed_dim` ({embed_dim}), got {num_heads}"
            )
        for name, value in (("kdim", kdim), ("vdim", vdim)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value <= 0
            ):
                raise ValueError(f"{where}: `{name}` must be a positive int or None, got {value!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not (
            0.0 <= dropout <= 1.0
        ):
            raise ValueError(f"{where}: `dropout` must be between 0 and 1, got {dropout!r}")
        for name, value in (("add_bias_kv", add_bias_kv), ("add_zero_attn", add_zero_attn)):
            if not isinstance(value, bool):
                raise TypeError(f"{where}: `{name}` must be a bool, got {value!r}")
        check_score(score, where)
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.dropout, self.batch_first, self.score = float(dropout), batch_first, score
        kwargs = dict(bias=bias, device=device, dtype=dtype)
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
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        """Attend from ``query`` to ``key``, averaging ``value``; see the class docstring.

        Returns
        -------
        (Cplx, torch.Tensor or None)
            The output and the real attention weights (``None`` unless
            ``need_weights``).
        """
        where = self._get_name()
        query = checked_cplx(query, "query", where)
        key = checked_cplx(key, "key", where)
        value = checked_cplx(value, "value", where)
        batched = query.dim() == 3
        dims = 3 if batched else 2
        for name, z, features in (
            ("query", query, self.embed_dim),
            ("key", key, self.kdim),
            ("value", value, self.vdim),
        ):
            if z.dim() != dims or z.shape[-1] != features:
                layout = "(N, *, " if self.batch_first else "(*, N, "
                raise ValueError(
                    f"{where}: `{name}` must have shape {layout}{features}) or"
                    f" (*, {features}) as `query`, got {tuple(z.shape)}"
                )
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = (z.transpose(0, 1) for z in (query, key, value))
        (n, length, _), size = query.shape, key.shape[1]
        if key.shape[:2] != value.shape[:2] or key.shape[0] != n:
            raise ValueError(
                f"{where}: `key` and `value` must have the batch size of `query` and the same"
                f" length, got {tuple(key.shape[:2])} and {tuple(value.shape[:2])}"
                " (batch first)"
            )
        if not batched and isinstance(key_padding_mask, torch.Tensor):
            key_padding_mask = key_padding_mask.unsqueeze(0)
        mask = self._merged_mask(key_padding_mask, attn_mask, n, length, size, query.dtype)

        # (N, L, E) -> (N, heads, L, d)
        heads = [
            proj(z).view(n, -1, self.num_heads, self.head_dim).transpose(1, 2)
            for proj, z in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))
        ]
        extra = (self.bias_k is not None) + self.add_zero_attn
        if extra:
            if is_causal and mask is None:
                # causal over the given keys; the appended ones stay open to all
                mask = _float_mask(
                    torch.ones(length, size, dtype=torch.bool, device=query.device).triu(1),
                    "attn_mask", query.dtype, where,
                )
            heads[1:] = self._extra_keys(*heads[1:])
            if mask is not None:
                mask = F.pad(mask, (0, extra))
        causal = is_causal and mask is None
        out, weights = _attention(
            *heads,
            mask,
            self.dropout if self.training else 0.0,
            causal,
            None,
            self.score,
            need_weights=need_weights,
        )
        out = self.out_proj(out.transpose(1, 2).reshape(n, length, self.embed_dim))
        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if weights is not None:
            if average_attn_weights:
                weights = weights.mean(dim=1)
            if not batched:
                weights = weights.squeeze(0)
        return out, weights

    def _extra_keys(self, key, value):
        """``bias_k``, ``bias_v``, then zeros, appended to the keys of ``(N, heads, S, d)``."""
        n = key.shape[0]
        keys, values = [key], [value]
        if self.bias_k is not None:
            shape = (n, self.num_heads, 1, self.head_dim)
            for bias, parts in ((self.bias_k, keys), (self.bias_v, values)):
                real, imag = (part.view(shape[1:]).expand(shape) for part in (bias.real, bias.imag))
                parts.append(Cplx(real, imag))
        if self.add_zero_attn:
            zeros = key.real.new_zeros(n, self.num_heads, 1, self.head_dim)
            keys.append(Cplx(zeros, zeros))
            values.append(Cplx(zeros, zeros))
        return cplx.cat(keys, dim=2), cplx.cat(values, dim=2)

    def _merged_mask(self, key_padding_mask, attn_mask, n, length, size, dtype):
        """One additive mask broadcastable to ``(N, heads, L, S)``, or ``None``."""
        where = self._get_name()
        key_padding_mask = _float_mask(key_padding_mask, "key_padding_mask", dtype, where)
        attn_mask = _float_mask(attn_mask, "attn_mask", dtype, where)
        _check_shape(key_padding_mask, [(n, size)], "key_padding_mask", where)
        _check_shape(
            attn_mask,
            [(length, size), (n * self.num_heads, length, size)],
            "attn_mask",
            where,
        )
        if attn_mask is not None and attn_mask.dim() > 2:
            attn_mask = attn_mask.reshape(n, self.num_heads, length, size)
        if key_padding_mask is None:
            return attn_mask
        key_padding_mask = key_padding_mask.view(n, 1, 1, size)
        return key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    def extra_repr(self):
        text = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
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
