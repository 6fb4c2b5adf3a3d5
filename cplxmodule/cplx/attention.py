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

import math

import torch
import torch.nn.functional as F

from ._shared import checked_cplx, describe
from .tensor import Cplx, _modulus

__all__ = ["scaled_dot_product_attention", "attention_weights"]

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
    if score not in SCORES:
        raise ValueError(f"{where}: `score` must be 'real' or 'modulus', got {score!r}")
    return score


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
        if not isinstance(attn_mask, torch.Tensor) or attn_mask.is_complex():
            raise TypeError(
                f"{where}: `attn_mask` must be a bool or floating torch.Tensor,"
                f" got {describe(attn_mask)}"
            )
        if attn_mask.dtype != torch.bool and not attn_mask.is_floating_point():
            raise TypeError(
                f"{where}: `attn_mask` must be a bool or floating torch.Tensor,"
                f" got {describe(attn_mask)}"
            )
        if is_causal:
            raise ValueError(f"{where}: `attn_mask` must be None when `is_causal` is set")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{where}: `dropout_p` must be between 0 and 1, got {dropout_p}")
    if scale is not None and not isinstance(scale, (int, float)):
        raise TypeError(f"{where}: `scale` must be a float or None, got {describe(scale)}")
    return query, key, value


def _scale(query, scale):
    # 1/sqrt(d) with d the *complex* feature size, not 1/sqrt(2d) of the
    # concatenated parts: a real input then gets torch's real attention
    return 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale


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


def _weighted(weights, value):
    """The real ``weights`` ``(*, L, S)`` applied to both parts of ``value`` at once."""
    out = weights.to(value.dtype) @ _cat(value)
    real, imag = out.chunk(2, dim=-1)
    return _cplx(real, imag)


def attention_weights(query, key, attn_mask=None, is_causal=False, scale=None, score="real"):
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
        Real weights of shape :math:`(*, L, S)`, each row summing to one.

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
    return torch.softmax(_masked(scores, attn_mask, is_causal), dim=-1)


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, score="real"
):
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
    if score == "real" and not need_weights:
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
    weights = torch.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p)
    return _weighted(weights, value), weights if need_weights else None
