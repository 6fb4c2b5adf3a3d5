"""Complex attention (functional and CplxMultiheadAttention) against torch's native complex128.

The reference (``native_mha`` of tests/helpers.py) writes the same equations
on native complex tensors: projections as complex matrix products, scores
from ``q @ k.conj().T`` made real, the masks of torch's layer convention, a
real softmax (zero weights for a query with no key left, as torch's
function gives it) and the weights applied to complex values. With zero imaginary parts the layer is
also checked against torch's own :class:`torch.nn.MultiheadAttention` and
the function against :func:`torch.nn.functional.scaled_dot_product_attention`.
"""

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxMultiheadAttention, cached

from ...helpers import DOUBLE, detached_native, native_mha, native_scores, native_softmax, randc

pytestmark = pytest.mark.usefixtures("one_thread")


def make(embed_dim=8, num_heads=2, **kwargs):
    torch.manual_seed(0)
    return CplxMultiheadAttention(embed_dim, num_heads, dtype=torch.float64, **kwargs).eval()


def seq_first(z):
    return z.transpose(0, 1)


def assert_cplx(z, reference, **tol):
    torch.testing.assert_close(detached_native(z), reference, **(tol or DOUBLE))


# --- the layer against the native reference -----------------------------------
@pytest.mark.parametrize("score", ["real", "modulus"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_layer_matches_native(score, batch_first, average):
    layer = make(score=score, batch_first=batch_first)
    q, k, v = randc(3, 5, 8, seed=1), randc(3, 6, 8, seed=2), randc(3, 6, 8, seed=3)
    ref, ref_weights = native_mha(layer, detached_native(q), detached_native(k), detached_native(v), average=average)
    args = (q, k, v) if batch_first else tuple(map(seq_first, (q, k, v)))
    out, weights = layer(*args, average_attn_weights=average)
    assert_cplx(out if batch_first else seq_first(out), ref)
    torch.testing.assert_close(weights, ref_weights, **DOUBLE)
    assert layer(*args, need_weights=False)[1] is None


MASKS = {
    "key_padding_bool": lambda: dict(
        key_padding_mask=torch.tensor([[False] * 5 + [True], [False] * 3 + [True] * 3])
    ),
    "key_padding_float": lambda: dict(key_padding_mask=torch.randn(2, 6, dtype=torch.float64)),
    "attn_bool_2d": lambda: dict(
        attn_mask=(torch.rand(5, 6) > 0.7) & ~torch.eye(5, 6, dtype=torch.bool)
    ),
    "attn_float_3d": lambda: dict(attn_mask=torch.randn(2 * 2, 5, 6, dtype=torch.float64)),
    "both": lambda: dict(
        attn_mask=torch.randn(5, 6, dtype=torch.float64),
        key_padding_mask=torch.tensor([[False] * 6, [False] * 4 + [True] * 2]),
    ),
    "causal": lambda: dict(is_causal=True),
}


@pytest.mark.parametrize("score", ["real", "modulus"])
@pytest.mark.parametrize("masks", MASKS)
def test_masks_match_native_and_both_paths_agree(score, masks):
    torch.manual_seed(5)
    kwargs = MASKS[masks]()
    layer = make(score=score, batch_first=True)
    q, k, v = randc(2, 5, 8, seed=1), randc(2, 6, 8, seed=2), randc(2, 6, 8, seed=3)
    ref, ref_weights = native_mha(layer, detached_native(q), detached_native(k), detached_native(v), **kwargs)
    out, weights = layer(q, k, v, **kwargs)
    assert_cplx(out, ref)
    torch.testing.assert_close(weights, ref_weights, **DOUBLE)
    # the fused path (one scaled_dot_product_attention call for the real score)
    assert_cplx(layer(q, k, v, need_weights=False, **kwargs)[0], ref)


@pytest.mark.parametrize("score", ["real", "modulus"])
@pytest.mark.parametrize("extra", [dict(add_bias_kv=True), dict(add_zero_attn=True),
                                   dict(add_bias_kv=True, add_zero_attn=True)])
@pytest.mark.parametrize("masks", ["both", "causal"])
def test_appended_keys_match_native(score, extra, masks):
    torch.manual_seed(5)
    kwargs = MASKS[masks]()
    layer = make(score=score, batch_first=True, **extra)
    q, k, v = randc(2, 5, 8, seed=1), randc(2, 6, 8, seed=2), randc(2, 6, 8, seed=3)
    ref, ref_weights = native_mha(layer, detached_native(q), detached_native(k), detached_native(v), **kwargs)
    out, weights = layer(q, k, v, **kwargs)
    assert weights.shape == (2, 5, 6 + len(extra))
    assert_cplx(out, ref)
    torch.testing.assert_close(weights, ref_weights, **DOUBLE)
    assert_cplx(layer(q, k, v, need_weights=False, **kwargs)[0], ref)


@pytest.mark.parametrize("score", ["real", "modulus"])
def test_kdim_vdim_and_unbatched(score):
    layer = make(score=score, kdim=3, vdim=5)
    assert (layer.k_proj.in_features, layer.v_proj.in_features) == (3, 5)
    q, k, v = randc(4, 8, seed=1), randc(6, 3, seed=2), randc(6, 5, seed=3)
    head_mask = torch.randn(2, 4, 6, dtype=torch.float64)
    ref, ref_weights = native_mha(
        layer, detached_native(q)[None], detached_native(k)[None], detached_native(v)[None],
        key_padding_mask=torch.tensor([[False] * 5 + [True]]), attn_mask=head_mask, average=False,
    )
    out, weights = layer(q, k, v, key_padding_mask=torch.tensor([False] * 5 + [True]),
                         attn_mask=head_mask, average_attn_weights=False)
    assert out.shape == (4, 8) and weights.shape == (2, 4, 6)
    assert_cplx(out, ref[0])
    torch.testing.assert_close(weights, ref_weights[0], **DOUBLE)


# --- zero imaginary parts: torch's real attention -------------------------------
@pytest.mark.parametrize("kdim", [None, 3])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("extra", [{}, dict(add_bias_kv=True, add_zero_attn=True)])
def test_real_input_equals_torch_multihead_attention(kdim, need_weights, extra):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, kdim=kdim, vdim=kdim, dtype=torch.float64,
                                      **extra).eval()
    # torch's own init leaves the in-projection biases at 0
    torch.nn.init.normal_(mha.in_proj_bias)
    layer = make(kdim=kdim, vdim=kdim, **extra)
    layer.load_state_dict(mha.state_dict())  # the real weights, imaginary parts zero
    ek = kdim or 8
    q = torch.randn(5, 2, 8, dtype=torch.float64)
    k, v = torch.randn(6, 2, ek, dtype=torch.float64), torch.randn(6, 2, ek, dtype=torch.float64)
    masks = dict(key_padding_mask=torch.tensor([[False] * 6, [False] * 4 + [True] * 2]),
                 attn_mask=(torch.rand(5, 6) > 0.8) & ~torch.eye(5, 6, dtype=torch.bool))
    ref, ref_weights = mha(q, k, v, need_weights=need_weights, **masks)
    out, weights = layer(Cplx(q), Cplx(k), Cplx(v), need_weights=need_weights, **masks)
    torch.testing.assert_close(out.real, ref, **DOUBLE)
    assert torch.equal(out.imag, torch.zeros_like(ref))
    if need_weights:
        torch.testing.assert_close(weights, ref_weights, **DOUBLE)


@pytest.mark.parametrize("kwargs", [{}, dict(is_causal=True), dict(scale=0.3)])
def test_functional_real_input_equals_torch_sdpa(kwargs):
    q, k, v = (torch.randn(2, 3, 5, 4, dtype=torch.float64) for _ in range(3))
    out = cplx.scaled_dot_product_attention(Cplx(q), Cplx(k), Cplx(v), **kwargs)
    expected = F.scaled_dot_product_attention(q, k, v, **kwargs)
    torch.testing.assert_close(out.real, expected, **DOUBLE)
    assert torch.equal(out.imag, torch.zeros_like(q))


# --- the functional core: property test against native ---------------------------
@settings(max_examples=25, deadline=None)
@given(
    length=st.integers(1, 5),
    size=st.integers(1, 5),
    features=st.integers(1, 4),
    vfeatures=st.integers(1, 3),
    score=st.sampled_from(["real", "modulus"]),
    mask=st.sampled_from([None, "bool", "float", "causal"]),
    seed=st.integers(0, 2**16),
)
def test_functional_matches_native(length, size, features, vfeatures, score, mask, seed):
    q, k, v = randc(2, length, features, seed=seed), randc(2, size, features, seed=seed + 1), \
        randc(2, size, vfeatures, seed=seed + 2)
    g = torch.Generator().manual_seed(seed)
    # torch's function convention: bool True takes part; a row may keep no key
    masks = {
        None: {},
        "bool": dict(attn_mask=torch.rand(length, size, generator=g) > 0.5),
        "float": dict(attn_mask=torch.randn(length, size, generator=g, dtype=torch.float64)),
        "causal": dict(is_causal=True),
    }[mask]
    scores = native_scores(detached_native(q), detached_native(k), score)
    if mask == "bool":
        scores = scores.masked_fill(~masks["attn_mask"], -math.inf)
    elif mask == "float":
        scores = scores + masks["attn_mask"]
    elif mask == "causal":
        scores = scores.masked_fill(torch.ones(length, size, dtype=torch.bool).triu(1), -math.inf)
    weights = native_softmax(scores)
    expected = weights.to(torch.complex128) @ detached_native(v)
    assert_cplx(cplx.scaled_dot_product_attention(q, k, v, score=score, **masks), expected)
    torch.testing.assert_close(
        cplx.attention_weights(q, k, score=score, **masks), weights, **DOUBLE
    )


@pytest.mark.parametrize("score", ["real", "modulus"])
def test_gradcheck(score):
    parts = [torch.randn(1, 3, 2, dtype=torch.float64, requires_grad=True) for _ in range(6)]

    def f(qr, qi, kr, ki, vr, vi):
        out = cplx.scaled_dot_product_attention(
            Cplx(qr, qi), Cplx(kr, ki), Cplx(vr, vi), score=score,
            attn_mask=torch.tensor([[True, False, True]] * 3),
        )
        return out.real, out.imag

    assert torch.autograd.gradcheck(f, parts)

    layer = make(4, 2, score=score)
    x = randc(3, 4, seed=4)
    x = Cplx(x.real.requires_grad_(), x.imag.requires_grad_())
    assert torch.autograd.gradcheck(
        lambda xr, xi: layer(Cplx(xr, xi), Cplx(xr, xi), Cplx(xr, xi))[0].real,
        (x.real, x.imag),
    )


def test_dropout_in_training_only():
    layer = make(dropout=0.5, batch_first=True)
    q = randc(2, 5, 8)
    ref = native_mha(layer, detached_native(q), detached_native(q), detached_native(q))[0]
    assert_cplx(layer(q, q, q)[0], ref)  # eval: no dropout
    layer.train()
    torch.manual_seed(0)
    _, weights = layer(q, q, q, average_attn_weights=False)
    # torch returns the weights after dropout: zeros and rows scaled by 2
    assert (weights == 0).any() and (weights.sum(-1) > 1.01).any()
    torch.manual_seed(0)
    out, _ = layer(q, q, q, need_weights=False)
    assert not torch.allclose(detached_native(out), ref)


# --- bad input ----------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(embed_dim=0, num_heads=1), "`embed_dim` must be a positive int"),
        (dict(embed_dim=8, num_heads=3), "`num_heads` must divide `embed_dim`"),
        (dict(embed_dim=8, num_heads=2, dropout=1.5), r"`dropout` must be a number in \[0, 1\], got 1.5"),
        (dict(embed_dim=8, num_heads=2, kdim=0), "`kdim` must be a positive int or None"),
        (dict(embed_dim=8, num_heads=2, score="imag"), "`score` must be 'real' or 'modulus'"),
        (dict(embed_dim=8, num_heads=2, add_bias_kv=1), "`add_bias_kv` must be a bool"),
        (dict(embed_dim=8, num_heads=2, add_zero_attn="yes"), "`add_zero_attn` must be a bool"),
    ],
)
def test_bad_arguments(kwargs, match):
    error = TypeError if "must be a bool" in match else ValueError
    with pytest.raises(error, match=f"CplxMultiheadAttention: {match}"):
        CplxMultiheadAttention(**kwargs)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda layer, z: layer(z.real, z, z), TypeError, "`query` must be a Cplx"),
        (lambda layer, z: layer(z, z[..., :4], z), ValueError, "`key` must have shape"),
        (lambda layer, z: layer(z, z, z[:, :1]), ValueError,
         "`key` and `value` must have the batch"),
        (lambda layer, z: layer(z, z, z, key_padding_mask=torch.ones(2, 3, dtype=torch.bool)),
         ValueError, r"`key_padding_mask` must have shape \(2, 5\)"),
        (lambda layer, z: layer(z, z, z, attn_mask=torch.ones(5, 5, dtype=torch.long)),
         TypeError, "`attn_mask` must be a bool or floating"),
        (lambda layer, z: layer(z[0], z[0], z[0], key_padding_mask=[True] * 5),
         TypeError, "`key_padding_mask` must be a bool or floating"),
        (lambda layer, z: layer(z, z, z, attn_mask=torch.ones(3, 5, 5)),
         ValueError, "`attn_mask` must have shape"),
    ],
)
def test_bad_forward_input_leaves_layer_unchanged(call, error, match):
    layer = make(batch_first=True)
    state = copy.deepcopy(layer.state_dict())
    with pytest.raises(error, match=f"CplxMultiheadAttention: {match}"):
        call(layer, randc(2, 5, 8))
    for name, value in layer.state_dict().items():
        assert torch.equal(value, state[name])


def test_functional_bad_arguments():
    z = randc(2, 3, 4)
    with pytest.raises(ValueError, match="scaled_dot_product_attention: `score` must be"):
        cplx.scaled_dot_product_attention(z, z, z, score="phase")
    with pytest.raises(TypeError, match="scaled_dot_product_attention: `value` must be a Cplx"):
        cplx.scaled_dot_product_attention(z, z, z.real)
    with pytest.raises(ValueError, match="`attn_mask` must be None when `is_causal`"):
        cplx.scaled_dot_product_attention(z, z, z, attn_mask=torch.ones(3, 3), is_causal=True)
    with pytest.raises(ValueError, match="attention_weights: `key` must have the dimensions"):
        cplx.attention_weights(z, randc(2, 3, 5))


# --- the module machinery ------------------------------------------------------
def test_deepcopy_state_dict_and_to_double():
    torch.manual_seed(0)
    layer = CplxMultiheadAttention(8, 2, batch_first=True).eval()
    assert set(layer.state_dict()) == {
        f"{proj}_proj.{name}.{part}" for proj in ("q", "k", "v", "out")
        for name in ("weight", "bias") for part in ("real", "imag")
    }
    twin = copy.deepcopy(layer)
    assert twin.q_proj.weight.real.data_ptr() != layer.q_proj.weight.real.data_ptr()
    fresh = CplxMultiheadAttention(8, 2, batch_first=True).eval()
    fresh.load_state_dict(layer.state_dict())
    x = randc(2, 5, 8).to(torch.float32)
    assert torch.equal(fresh(x, x, x)[0].real, layer(x, x, x)[0].real)
    double = layer.to(torch.float64)
    assert double.q_proj.weight.dtype == torch.float64
    xd = randc(2, 5, 8)
    assert_cplx(double(xd, xd, xd)[0], native_mha(double, *[detached_native(xd)] * 3)[0])


def test_cached_gives_the_same_output():
    layer = make(batch_first=True)
    x = randc(2, 5, 8)
    expected = layer(x, x, x)[0]
    with cached(layer):
        assert_cplx(layer(x, x, x)[0], detached_native(expected))
