r"""Complex scaled dot-product attention: real scores, real weights, complex values.

The score of a query :math:`q` and a key :math:`k` is made real from their
Hermitian product :math:`\langle q, k \rangle = \sum_j q_j \overline{k_j}`,
either its real part (``score="real"``, Eilers & Jiang 2023) or its modulus
(``score="modulus"``, as in Yang et al. 2020); a softmax over the keys turns
the real scores into real weights, which average the complex values.

The real part is one real dot product of the concatenated parts,
:math:`\Re \langle q, k \rangle = q_r \cdot k_r + q_i \cdot k_i
= [q_r, q_i] \cdot [k_r, k_i]`, and the real weights act on both parts of a
value alike, so the whole of real-score attention is one call of
:func:`torch.nn.functional.scaled_dot_product_attention` on
:math:`[q_r, q_i]`, :math:`[k_r, k_i]` and :math:`[v_r, v_i]`, which returns
:math:`[o_r, o_i]`: torch's fused kernels do the work.

References
----------
F. Eilers and X. Jiang, "Building blocks for a complex-valued transformer
architecture", ICASSP 2023.

M. Yang, M. Q. Ma, D. Li, Y.-H. H. Tsai and R. Salakhutdinov, "Complex
transformer: a framework for modeling complex-valued sequence", ICASSP 2020.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._shared import (
    check_choice,
    check_positive_int,
    check_probability,
    check_real,
    check_shape,
    checked_cplx,
    describe,
)
from .tensor import Cplx, _modulus
from typing import Callable, Optional
from ._typing import CplxLike

#: A projection of :func:`multi_head_attention_forward`: a :class:`Cplx` to a :class:`Cplx`.
_Projection = Callable[[Cplx], Cplx]

__all__ = ["scaled_dot_product_attention", "attention_weights", "multi_head_attention_forward"]

#: The ways of making the Hermitian product of a query and a key real.
SCORES = ("real", "modulus")


def _cplx(real, imag):
    # parts of one real tensor split in two: they agree in shape, dtype and
    # device by construction, so the checks of ``Cplx.__init__`` are skipped
    z = Cplx.__new__(Cplx)
    z._real, z._imag = real, imag
    return z


def check_score(score, where):
    """Raise a ``ValueError`` unless ``score`` is one of :data:`SCORES`."""
    return check_choice(score, "score", where, SCORES)


def _check_mask(mask, name, where):
    """Raise a ``TypeError`` unless ``mask`` is a bool or floating tensor."""
    if not isinstance(mask, torch.Tensor) or not (
        mask.dtype == torch.bool or mask.is_floating_point()
    ):
        raise TypeError(
            f"{where}: `{name}` must be a bool or floating torch.Tensor, got {describe(mask)}"
        )


def _check_operands(query, key, value, attn_mask, dropout_p, is_causal, scale, score, where):
    """Check the operands; return ``(query, key, value)`` as :class:`Cplx` (``value`` may be None)."""
    query = checked_cplx(query, "query", where)
    key = checked_cplx(key, "key", where)
    if value is not None:
        value = checked_cplx(value, "value", where)
    check_score(score, where)
    if query.dim() < 2 or query.dim() != key.dim() or query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"{where}: `key` must have the dimensions and the feature size of `query`,"
            f" (*, S, {query.shape[-1]}), got {tuple(key.shape)}"
        )
    if value is not None and (value.dim() != key.dim() or value.shape[-2] != key.shape[-2]):
        raise ValueError(
            f"{where}: `value` must have as many dimensions and elements (S = {key.shape[-2]})"
            f" as `key`, shape (*, {key.shape[-2]}, Ev), got {tuple(value.shape)}"
        )
    if attn_mask is not None:
        _check_mask(attn_mask, "attn_mask", where)
        if is_causal:
            raise ValueError(f"{where}: `attn_mask` must be None when `is_causal` is set")
    check_probability(dropout_p, "dropout_p", where)
    check_real(scale, "scale", where, optional=True)
    return query, key, value


def _scale(query, scale):
    # 1/sqrt(d) with d the *complex* feature size, not 1/sqrt(2d) of the
    # concatenated parts: a real input then gets torch's real attention; of
    # no features, the scores are all zero whatever the scale, and the
    # weights uniform, as torch's
    if scale is not None:
        return scale
    return 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0


def _cat(z):
    return torch.cat([z.real, z.imag], dim=-1)


def _scores(query, key, scale, score):
    """The real scores ``(*, L, S)`` of every query against every key."""
    k = _cat(key)
    if score == "real":
        return (_cat(query) * scale) @ k.transpose(-2, -1)
    # Re and Im of q conj(k) in one product: Im = q_i k_r - q_r k_i = [q_i, -q_r] . [k_r, k_i]
    length = query.shape[-2]
    q = torch.cat([_cat(query), torch.cat([query.imag, -query.real], dim=-1)], dim=-2)
    product = q @ k.transpose(-2, -1)
    return _modulus(product[..., :length, :], product[..., length:, :]) * scale


def _masked(scores, attn_mask, is_causal):
    if is_causal:
        length, size = scores.shape[-2:]
        attn_mask = torch.ones(length, size, dtype=torch.bool, device=scores.device).tril()
    if attn_mask is None:
        return scores
    if attn_mask.dtype == torch.bool:
        return scores.masked_fill(~attn_mask, float("-inf"))
    return scores + attn_mask


def _softmax(scores, masked):
    """The softmax over the keys; 0, not NaN, for a query whose every key is masked.

    torch's fused kernels give such a row 0; a plain softmax of ``-inf``
    alone gives NaN, and NaN gradients to every score it meets. The row's
    scores are zeroed before the softmax and its weights after, so both the
    weights and their gradients are 0 there. Only a mask can empty a row
    (a causal one never does): without one the plain softmax is taken.
    """
    if not masked:
        return torch.softmax(scores, dim=-1)
    empty = (scores == float("-inf")).all(dim=-1, keepdim=True)
    return torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)


def _weighted(weights, value):
    """The real ``weights`` ``(*, L, S)`` applied to both parts of ``value`` at once."""
    out = weights.to(value.dtype) @ _cat(value)
    real, imag = out.chunk(2, dim=-1)
    return _cplx(real, imag)


def attention_weights(
    query: CplxLike,
    key: CplxLike,
    attn_mask: Optional[torch.Tensor] = None,
    is_causal: bool = False,
    scale: Optional[float] = None,
    score: str = "real",
) -> torch.Tensor:
    r"""The real attention weights: the softmax over the keys of the real scores.

    Parameters
    ----------
    query : Cplx
        Queries of shape :math:`(*, L, E)`.
    key : Cplx
        Keys of shape :math:`(*, S, E)`.
    attn_mask : torch.Tensor, optional
        Broadcastable to :math:`(*, L, S)`, as in
        :func:`torch.nn.functional.scaled_dot_product_attention`: a bool mask
        tells with ``True`` which keys a query may attend to, a float mask is
        added to the scores.
    is_causal : bool
        Let query :math:`l` attend to keys :math:`s \le l` only (no
        ``attn_mask`` then).
    scale : float, optional
        The factor of the scores; :math:`1/\sqrt{E}` by default, with
        :math:`E` the complex feature size.
    score : {"real", "modulus"}
        :math:`\Re \langle q, k \rangle` or :math:`|\langle q, k \rangle|`,
        with :math:`\langle q, k \rangle = \sum_j q_j \overline{k_j}`.

    Returns
    -------
    torch.Tensor
        Real weights of shape :math:`(*, L, S)`, each row summing to one,
        or zero where ``attn_mask`` masks every key (as torch's fused
        attention gives such a query nothing rather than NaN).

    Raises
    ------
    TypeError
        If ``query`` or ``key`` is not a :class:`Cplx`, or ``attn_mask`` is
        neither bool nor floating.
    ValueError
        If the shapes disagree, ``score`` is unknown, or both ``attn_mask``
        and ``is_causal`` are given.

    Examples
    --------
    >>> w = cplx.attention_weights(cplx.randn(2, 5, 8), cplx.randn(2, 7, 8))
    >>> w.shape, bool(torch.allclose(w.sum(-1), torch.ones(2, 5)))
    (torch.Size([2, 5, 7]), True)
    """
    where = "attention_weights"
    query, key, _ = _check_operands(
        query, key, None, attn_mask, 0.0, is_causal, scale, score, where
    )
    scores = _scores(query, key, _scale(query, scale), score)
    return _softmax(_masked(scores, attn_mask, is_causal), attn_mask is not None)


def scaled_dot_product_attention(
    query: CplxLike,
    key: CplxLike,
    value: CplxLike,
    attn_mask: Optional[torch.Tensor] = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: Optional[float] = None,
    score: str = "real",
) -> Cplx:
    r"""Complex attention: real weights from real scores, applied to complex values.

    .. math::

        \operatorname{softmax}_s\bigl(\text{scale} \cdot
        \operatorname{score}\langle q_l, k_s \rangle + \text{mask}_{ls}\bigr) v_s,
        \qquad \langle q, k \rangle = \sum_j q_j \overline{k_j}

    The arguments are those of
    :func:`torch.nn.functional.scaled_dot_product_attention`, plus
    ``score``. With ``score="real"`` the call is one call of torch's
    function on the concatenated parts (see the module's docstring); with
    ``"modulus"`` the scores come from one real product of the parts and
    the weights act on both parts of the values in one more.

    Parameters
    ----------
    query : Cplx
        Queries of shape :math:`(*, L, E)`.
    key : Cplx
        Keys of shape :math:`(*, S, E)`.
    value : Cplx
        Values of shape :math:`(*, S, E_v)`.
    attn_mask : torch.Tensor, optional
        Broadcastable to :math:`(*, L, S)`; a bool mask is ``True`` where a
        query may attend to a key, a float mask is added to the scores
        (torch's convention for this function; the layers take torch's
        layer convention, ``True`` where *not* allowed).
    dropout_p : float
        Probability of zeroing a weight (pass 0 in evaluation).
    is_causal : bool
        Let query :math:`l` attend to keys :math:`s \le l` only.
    scale : float, optional
        :math:`1/\sqrt{E}` by default, :math:`E` the *complex* feature size
        (not :math:`1/\sqrt{2E}` of the concatenated parts), so that a real
        input gives torch's real attention.
    score : {"real", "modulus"}
        :math:`\Re \langle q, k \rangle` (Eilers & Jiang 2023) or
        :math:`|\langle q, k \rangle|` (Yang et al. 2020).

    Returns
    -------
    Cplx
        Shape :math:`(*, L, E_v)`.

    Raises
    ------
    TypeError
        If an operand is not a :class:`Cplx`, or ``attn_mask`` is neither
        bool nor floating.
    ValueError
        If the shapes disagree, ``score`` or ``dropout_p`` is out of range,
        or both ``attn_mask`` and ``is_causal`` are given.

    Notes
    -----
    A query whose every key ``attn_mask`` masks gets the output 0 and
    zero gradients, on either path, as from torch's function (a plain
    softmax would give NaN).

    The modulus score is not differentiable where
    :math:`\langle q, k \rangle = 0`; its gradient is taken as zero there,
    as for torch's complex ``abs``.

    References
    ----------
    F. Eilers and X. Jiang, "Building blocks for a complex-valued transformer
    architecture", ICASSP 2023.

    M. Yang, M. Q. Ma, D. Li, Y.-H. H. Tsai and R. Salakhutdinov, "Complex
    transformer: a framework for modeling complex-valued sequence", ICASSP 2020.

    Examples
    --------
    >>> q, k, v = cplx.randn(2, 5, 8), cplx.randn(2, 7, 8), cplx.randn(2, 7, 3)
    >>> cplx.scaled_dot_product_attention(q, k, v, score="modulus").shape
    torch.Size([2, 5, 3])
    """
    where = "scaled_dot_product_attention"
    query, key, value = _check_operands(
        query, key, value, attn_mask, dropout_p, is_causal, scale, score, where
    )
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, score)[0]


def _attention(
    query, key, value, attn_mask, dropout_p, is_causal, scale, score, need_weights=False
):
    """Unchecked attention: the output and, with ``need_weights``, the weights (after dropout)."""
    scale = _scale(query, scale)
    # the default ONNX exporter takes torch's fused attention of 4-d operands only
    # (heads); traced for it, other operands take the explicit math below
    exported = torch.onnx.is_in_onnx_export() or torch.compiler.is_exporting()
    if score == "real" and not need_weights and not (exported and query.dim() != 4):
        out = F.scaled_dot_product_attention(
            _cat(query),
            _cat(key),
            _cat(value),
            attn_mask=attn_mask,
            dropout_p=dropout_p,
            is_causal=is_causal,
            scale=scale,
        )
        real, imag = out.chunk(2, dim=-1)
        return _cplx(real, imag), None
    scores = _masked(_scores(query, key, scale, score), attn_mask, is_causal)
    weights = _softmax(scores, attn_mask is not None)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p)
    return _weighted(weights, value), weights if need_weights else None


# --- multi-head attention: torch's layer conventions ----------------------------------
def _additive_mask(mask, name, dtype, where):
    """``mask`` of torch's layer convention (bool ``True``: not allowed) as an additive mask."""
    if mask is None:
        return None
    _check_mask(mask, name, where)
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
            mask, float("-inf")
        )
    return mask.to(dtype)


def _layer_mask(attn_mask, key_padding_mask, is_causal, shape, extra, batched, like, where):
    """The masks of a layer as one additive mask, and whether ``is_causal`` is still to apply.

    ``shape`` is ``(N, heads, L, S)``, ``like`` a tensor of the mask's
    dtype and device (the query's real part). The mask broadcasts to
    ``(N, heads, L, S + extra)``: the ``extra`` keys appended after the
    given ones are open to every query, as in torch. An ``attn_mask``
    makes ``is_causal`` a hint (the mask is used); without one, the causal
    mask is built wherever it must merge with others, and otherwise left
    to the attention as a flag (torch's fused kernels take it so).
    """
    n, heads, length, size = shape
    padding = _additive_mask(key_padding_mask, "key_padding_mask", like.dtype, where)
    mask = _additive_mask(attn_mask, "attn_mask", like.dtype, where)
    check_shape(padding, [(n, size) if batched else (size,)], "key_padding_mask", where)
    check_shape(mask, [(length, size), (n * heads, length, size)], "attn_mask", where)
    causal = is_causal and mask is None
    if causal and (padding is not None or extra):
        future = torch.ones(length, size, dtype=torch.bool, device=like.device).triu(1)
        mask, causal = _additive_mask(future, "attn_mask", like.dtype, where), False
    if mask is not None and mask.dim() == 3:
        mask = mask.view(n, heads, length, size)
    if padding is not None:
        padding = padding.view(n, 1, 1, size)
        mask = padding if mask is None else mask + padding
    if mask is not None and extra:
        mask = F.pad(mask, (0, extra))
    return mask, causal


def _check_layer_inputs(query, key, value, features, batch_first, where):
    """Check the inputs of multi-head attention; return them, batch first, and ``batched``."""
    query = checked_cplx(query, "query", where)
    key = checked_cplx(key, "key", where)
    value = checked_cplx(value, "value", where)
    batched = query.dim() == 3
    dims = 3 if batched else 2
    for name, z, size in zip(("query", "key", "value"), (query, key, value), features):
        if z.dim() != dims or z.shape[-1] != size:
            layout = "(N, *, " if batch_first else "(*, N, "
            raise ValueError(
                f"{where}: `{name}` must have shape {layout}{size}) or"
                f" (*, {size}) as `query`, got {tuple(z.shape)}"
            )
    if not batched:
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
    elif not batch_first:
        query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
    if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
        raise ValueError(
            f"{where}: `key` and `value` must have the batch size of `query` and the same"
            f" length, got {tuple(key.shape[:2])} and {tuple(value.shape[:2])}"
            " (batch first)"
        )
    return query, key, value, batched


def _appended_keys(key, value, bias_k, bias_v, add_zero_attn):
    """``bias_k``, ``bias_v``, then zeros, appended to the keys and values ``(N, heads, S, d)``."""
    n, heads, _, d = key.shape

    def appended(z, bias):
        parts = [(z.real, z.imag)]
        if bias is not None:
            parts.append(tuple(p.reshape(1, heads, 1, d).expand(n, heads, 1, d)
                               for p in (bias.real, bias.imag)))
        if add_zero_attn:
            zeros = z.real.new_zeros(n, heads, 1, d)
            parts.append((zeros, zeros))
        real, imag = zip(*parts)
        return _cplx(torch.cat(real, dim=2), torch.cat(imag, dim=2))

    return appended(key, bias_k), appended(value, bias_v)


def multi_head_attention_forward(
    query: CplxLike,
    key: CplxLike,
    value: CplxLike,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj: tuple[_Projection, _Projection, _Projection],
    bias_k: Optional[CplxLike],
    bias_v: Optional[CplxLike],
    add_zero_attn: bool,
    dropout_p: float,
    out_proj: _Projection,
    training: bool = True,
    key_padding_mask: Optional[torch.Tensor] = None,
    need_weights: bool = True,
    attn_mask: Optional[torch.Tensor] = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
    *,
    kdim: Optional[int] = None,
    vdim: Optional[int] = None,
    batch_first: bool = False,
    score: str = "real",
) -> tuple[Cplx, Optional[torch.Tensor]]:
    r"""Complex multi-head attention: the functional of :class:`~cplxmodule.nn.CplxMultiheadAttention`.

    As :func:`torch.nn.functional.multi_head_attention_forward`, it takes the
    inputs in the layer's layout, checks them, splits the heads, merges the
    masks of torch's layer convention, attends
    (:func:`scaled_dot_product_attention`'s math), joins the heads and
    projects them, and the mask rules live here alone. Unlike torch's, it
    takes the projections as callables, not as weights: the layer passes
    its :class:`~cplxmodule.nn.CplxLinear` submodules, so that each is
    called as a module (its hooks run, and a masked or Bayesian projection
    computes with its own weight).

    Parameters
    ----------
    query, key, value : Cplx
        :math:`(L, N, E)`, :math:`(S, N, E_k)`, :math:`(S, N, E_v)` (batch
        first with ``batch_first``), or without :math:`N` (unbatched).
    embed_dim_to_check : int
        :math:`E`, the features of ``query``.
    num_heads : int
        Heads; must divide the features of the projections' outputs.
    in_proj : (callable, callable, callable)
        The projections of the queries, keys and values, each mapping a
        :class:`Cplx` :math:`(N, *, E_\cdot)` to :math:`(N, *, E)`.
    bias_k, bias_v : Cplx or None
        Of :math:`E` elements: a key and a value appended to every sequence
        (both or neither).
    add_zero_attn : bool
        Append a zero key and value to every head.
    dropout_p : float
        Probability of zeroing an attention weight when ``training``.
    out_proj : callable
        The projection of the joined heads.
    training : bool
        Apply the dropout.
    key_padding_mask, attn_mask : torch.Tensor, optional
        torch's layer convention: bool ``True`` is not allowed, a float mask
        is added to the scores; :math:`(N, S)` and :math:`(L, S)` or
        :math:`(N \cdot \text{num\_heads}, L, S)`.
    need_weights, average_attn_weights : bool
        Return the real weights, averaged over the heads.
    is_causal : bool
        Without ``attn_mask``, let query :math:`l` attend to the given keys
        :math:`s \le l` (and to every appended key); with one, a hint that
        it is causal (``attn_mask`` is used).
    kdim, vdim : int, optional
        The features of ``key`` and ``value``; ``embed_dim_to_check`` by default.
    batch_first : bool
        The layout of batched inputs and outputs.
    score : {"real", "modulus"}
        See :func:`scaled_dot_product_attention`.

    Returns
    -------
    (Cplx, torch.Tensor or None)
        The output, of the query's layout, and the weights (``None``
        without ``need_weights``).

    Raises
    ------
    TypeError
        If an input or a bias is not complex, a mask neither bool nor
        floating, or a projection not callable.
    ValueError
        If the shapes of the inputs or of the masks disagree, a setting is
        out of its range, or only one of ``bias_k`` and ``bias_v`` is given.

    Examples
    --------
    >>> import cplxmodule.nn as cnn
    >>> q_proj, k_proj, v_proj, out_proj = (cnn.CplxLinear(8, 8) for _ in range(4))
    >>> x = cplx.randn(5, 2, 8)  # (L, N, E)
    >>> out, weights = cplx.multi_head_attention_forward(
    ...     x, x, x, 8, 2, (q_proj, k_proj, v_proj), None, None, False, 0.0, out_proj
    ... )
    >>> out.shape, weights.shape
    (torch.Size([5, 2, 8]), torch.Size([2, 5, 5]))
    """
    where = "multi_head_attention_forward"
    check_positive_int(embed_dim_to_check, "embed_dim_to_check", where)
    check_positive_int(num_heads, "num_heads", where)
    check_positive_int(kdim, "kdim", where, optional=True)
    check_positive_int(vdim, "vdim", where, optional=True)
    check_probability(dropout_p, "dropout_p", where)
    check_score(score, where)
    projections = tuple(in_proj) if isinstance(in_proj, (tuple, list)) else ()
    if len(projections) != 3 or not all(map(callable, projections)):
        raise TypeError(
            f"{where}: `in_proj` must be three callables (query, key, value), got {describe(in_proj)}"
        )
    if not callable(out_proj):
        raise TypeError(f"{where}: `out_proj` must be callable, got {describe(out_proj)}")
    if (bias_k is None) != (bias_v is None):
        raise ValueError(
            f"{where}: `bias_k` and `bias_v` must be given together, got"
            f" {describe(bias_k)} and {describe(bias_v)}"
        )
    biases = [None if b is None else checked_cplx(b, name, where)
              for name, b in (("bias_k", bias_k), ("bias_v", bias_v))]
    return _multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, projections, biases[0], biases[1],
        add_zero_attn, dropout_p, out_proj, training, key_padding_mask, need_weights, attn_mask,
        average_attn_weights, is_causal, kdim=kdim, vdim=vdim, batch_first=batch_first,
        score=score, where=where,
    )


def _multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    average_attn_weights=True,
    is_causal=False,
    *,
    kdim=None,
    vdim=None,
    batch_first=False,
    score="real",
    where="multi_head_attention_forward",
):
    """:func:`multi_head_attention_forward` without the checks of its settings.

    The layer's settings are checked when it is built; ``where`` names the
    caller in the messages of the checks of the inputs and masks.
    """
    features = (embed_dim_to_check, kdim or embed_dim_to_check, vdim or embed_dim_to_check)
    query, key, value, batched = _check_layer_inputs(query, key, value, features, batch_first,
                                                     where)
    (n, length, _), size = query.shape, key.shape[1]
    extra = (bias_k is not None) + bool(add_zero_attn)
    mask, causal = _layer_mask(attn_mask, key_padding_mask, is_causal,
                               (n, num_heads, length, size), extra, batched, query.real, where)

    # (N, L, E) -> (N, heads, L, d); explicit sizes, which an empty batch needs
    q, k, v = (proj(z) for proj, z in zip(in_proj, (query, key, value)))
    embed_dim = q.shape[-1]
    q, k, v = (z.reshape(n, z.shape[1], num_heads, embed_dim // num_heads).transpose(1, 2)
               for z in (q, k, v))
    if extra:
        k, v = _appended_keys(k, v, bias_k, bias_v, add_zero_attn)
    out, weights = _attention(q, k, v, mask, dropout_p if training else 0.0, causal, None, score,
                              need_weights=need_weights)
    out = out_proj(out.transpose(1, 2).reshape(n, length, embed_dim))
    if not batched:
        out = out.squeeze(0)
    elif not batch_first:
        out = out.transpose(0, 1)
    if weights is not None:
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            weights = weights.squeeze(0)
    return out, weights
