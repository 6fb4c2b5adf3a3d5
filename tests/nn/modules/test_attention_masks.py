"""Masks, edges and checkpoints of complex attention and transformers, against torch's twins.

- Causality: with ``is_causal`` (``tgt_is_causal``) and no explicit mask,
  no output depends on a later token, with or without padding masks, at
  every level (attention, encoder and decoder layers, their stacks, the
  transformer); on real inputs the attention equals torch's with the
  explicit causal mask.
- A query whose every key is masked: output and weights 0, finite
  gradients, as torch's :func:`torch.nn.functional.scaled_dot_product_attention`
  gives (its values and gradients are the reference on real inputs; on
  complex ones the reference is the same problem without that query,
  written in native complex128).
- torch's :class:`torch.nn.MultiheadAttention` checkpoints load, and the
  loaded layer computes torch's outputs on real inputs.
- The functional core calls the projections as modules (their hooks run).
- Edges: empty batches, half precisions, unbatched inputs, dropout in
  evaluation, against torch's twins.
"""

import pytest
import torch
import torch.nn.functional as F

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.cplx.attention import _multi_head_attention_forward
from cplxmodule.nn import (
    CplxMultiheadAttention,
    CplxTransformer,
    CplxTransformerDecoder,
    CplxTransformerDecoderLayer,
    CplxTransformerEncoder,
    CplxTransformerEncoderLayer,
)

from ...helpers import (
    DOUBLE, detached_native, load_torch_transformer, native_mha, native_scores, randc,
)

pytestmark = pytest.mark.usefixtures("one_thread")

LENGTH = 5

# key padding masks of a batch of two sequences of LENGTH keys (torch's layer convention)
PADDING = {
    "none": lambda: None,
    "bool": lambda: torch.tensor([[False] * LENGTH, [False] * 3 + [True] * 2]),
    "float": lambda: torch.randn(2, LENGTH, generator=torch.Generator().manual_seed(3),
                                 dtype=torch.float64),
}


def mha(**kwargs):
    torch.manual_seed(0)
    return CplxMultiheadAttention(8, 2, dtype=torch.float64, **kwargs).eval()


def perturbed(layer):
    """``layer`` with every parameter moved off its initial value (zero biases, unit norms)."""
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in layer.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return layer


def future_redrawn(x, t, seed):
    """``x`` (batch first) with every token after position ``t`` drawn anew."""
    other = randc(*x.shape, seed=seed)
    real, imag = x.real.clone(), x.imag.clone()
    real[:, t + 1:], imag[:, t + 1:] = other.real[:, t + 1:], other.imag[:, t + 1:]
    return Cplx(real, imag)


def assert_causal(run, x):
    """``run(x)`` (batch first) up to each position does not change with the later tokens.

    The later outputs must change, so that a run that ignores its input fails.
    """
    out = detached_native(run(x))
    for t in range(x.shape[1] - 1):
        other = detached_native(run(future_redrawn(x, t, seed=100 + t)))
        torch.testing.assert_close(other[:, : t + 1], out[:, : t + 1], **DOUBLE)
        assert not torch.allclose(other[:, t + 1:], out[:, t + 1:])


def batch_first(run, layer_batch_first):
    """``run`` of batch-first inputs and output, for a layer of either layout."""
    if layer_batch_first:
        return run

    def transposed(*inputs):
        return run(*(z.transpose(0, 1) for z in inputs)).transpose(0, 1)

    return transposed


# --- causality at every level ----------------------------------------------------------
@pytest.mark.parametrize("score", ["real", "modulus"])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("padding", PADDING)
@pytest.mark.parametrize("extra", [{}, dict(add_bias_kv=True, add_zero_attn=True)])
def test_attention_is_causal_with_any_padding(score, need_weights, padding, extra):
    layer = perturbed(mha(score=score, batch_first=True, **extra))
    kpm = PADDING[padding]()
    x = randc(2, LENGTH, 8, seed=1)

    def run(z):
        return layer(z, z, z, key_padding_mask=kpm, is_causal=True, need_weights=need_weights)[0]

    assert_causal(run, x)
    # the causal mask merged with the padding, written out in complex128
    reference = native_mha(layer, *[detached_native(x)] * 3, key_padding_mask=kpm,
                           is_causal=True)[0]
    torch.testing.assert_close(detached_native(run(x)), reference, **DOUBLE)


@pytest.mark.parametrize("padding", ["none", "bool"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_attention_is_causal_as_torch_with_the_causal_mask(padding, need_weights):
    torch.manual_seed(0)
    theirs = perturbed(torch.nn.MultiheadAttention(8, 2, batch_first=True,
                                                   dtype=torch.float64)).eval()
    ours = mha(batch_first=True)
    ours.load_state_dict(theirs.state_dict())
    kpm = PADDING[padding]()
    x = torch.randn(2, LENGTH, 8, dtype=torch.float64)
    # torch wants the mask with its causal hint; ours builds it
    causal = torch.ones(LENGTH, LENGTH, dtype=torch.bool).triu(1)
    expected = theirs(x, x, x, key_padding_mask=kpm, attn_mask=causal, is_causal=True,
                      need_weights=need_weights)
    out = ours(Cplx(x), Cplx(x), Cplx(x), key_padding_mask=kpm, is_causal=True,
               need_weights=need_weights)
    torch.testing.assert_close(out[0].real, expected[0], **DOUBLE)
    assert torch.equal(out[0].imag, torch.zeros_like(x))
    if need_weights:
        torch.testing.assert_close(out[1], expected[1], **DOUBLE)


def encoder_layer(layout=True):
    torch.manual_seed(0)
    return perturbed(CplxTransformerEncoderLayer(
        8, 2, dim_feedforward=12, dropout=0.0, batch_first=layout, dtype=torch.float64)).eval()


def decoder_layer(layout=True):
    torch.manual_seed(0)
    return perturbed(CplxTransformerDecoderLayer(
        8, 2, dim_feedforward=12, dropout=0.0, batch_first=layout, dtype=torch.float64)).eval()


@pytest.mark.parametrize("layout", [True, False], ids=["batch_first", "sequence_first"])
@pytest.mark.parametrize("padding", PADDING)
@pytest.mark.parametrize("level", ["encoder_layer", "encoder", "decoder_layer", "decoder",
                                   "transformer"])
def test_transformers_are_causal_with_any_padding(level, padding, layout):
    kpm = PADDING[padding]()
    memory = randc(2, 7, 8, seed=2)
    if not layout:
        memory = memory.transpose(0, 1)
    if level == "encoder_layer":
        layer = encoder_layer(layout)

        def run(z):
            return layer(z, src_key_padding_mask=kpm, is_causal=True)
    elif level == "encoder":
        layer = CplxTransformerEncoder(encoder_layer(layout), 2)

        def run(z):
            return layer(z, src_key_padding_mask=kpm, is_causal=True)
    elif level == "decoder_layer":
        layer = decoder_layer(layout)

        def run(z):
            return layer(z, memory, tgt_key_padding_mask=kpm, tgt_is_causal=True)
    elif level == "decoder":
        layer = CplxTransformerDecoder(decoder_layer(layout), 2)

        def run(z):
            return layer(z, memory, tgt_key_padding_mask=kpm, tgt_is_causal=True)
    else:
        torch.manual_seed(0)
        layer = perturbed(CplxTransformer(8, 2, 1, 2, dim_feedforward=12, dropout=0.0,
                                          batch_first=layout, dtype=torch.float64)).eval()
        src = memory

        def run(z):
            return layer(src, z, tgt_key_padding_mask=kpm, tgt_is_causal=True)

    assert_causal(batch_first(run, layout), randc(2, LENGTH, 8, seed=1))


@pytest.mark.parametrize("padding", ["none", "bool"])
def test_transformer_layers_are_causal_as_torch_with_the_causal_mask(padding):
    """The causal flag alone gives what torch gives with the mask and its hint."""
    kpm = PADDING[padding]()
    causal = torch.ones(LENGTH, LENGTH, dtype=torch.bool).triu(1)  # the padding's type
    kwargs = dict(dim_feedforward=12, dropout=0.0, batch_first=True, dtype=torch.float64)
    torch.manual_seed(0)
    theirs = perturbed(torch.nn.TransformerDecoderLayer(8, 2, **kwargs)).eval()
    ours = CplxTransformerDecoderLayer(8, 2, **kwargs).eval()
    load_torch_transformer(ours, theirs)
    tgt = torch.randn(2, LENGTH, 8, dtype=torch.float64, requires_grad=True)  # no fast path
    memory = torch.randn(2, 7, 8, dtype=torch.float64)
    expected = theirs(tgt, memory, tgt_mask=causal, tgt_key_padding_mask=kpm, tgt_is_causal=True)
    out = ours(Cplx(tgt), Cplx(memory), tgt_key_padding_mask=kpm, tgt_is_causal=True)
    torch.testing.assert_close(out.real, expected, **DOUBLE)


# --- a query whose every key is masked ------------------------------------------------
def grads(out, *leaves):
    """Gradients of a fixed real function of ``out`` (Cplx, complex or real) w.r.t. ``leaves``."""
    g = torch.Generator().manual_seed(5)
    parts = [out.real, out.imag] if isinstance(out, Cplx) or out.is_complex() else [out]
    loss = sum((p * torch.randn(p.shape, generator=g, dtype=p.dtype)).sum() for p in parts)
    return torch.autograd.grad(loss, leaves)


def cplx_leaves(*shapes, seed):
    return [Cplx(z.real.requires_grad_(), z.imag.requires_grad_())
            for z in (randc(*shape, seed=seed + i) for i, shape in enumerate(shapes))]


def native_grads(ours):
    """Gradients w.r.t. the parts of a Cplx leaf as torch's complex gradient ``d/dre + i d/dim``."""
    return [torch.complex(ours[k], ours[k + 1]) for k in range(0, len(ours), 2)]


@pytest.mark.parametrize("score", ["real", "modulus"])
@pytest.mark.parametrize("function", ["scaled_dot_product_attention", "attention_weights"])
def test_functions_give_zero_to_a_query_with_no_key(score, function):
    # torch's function convention: bool True takes part; query 1 keeps no key
    allowed = torch.rand(4, 6, generator=torch.Generator().manual_seed(0)) > 0.4
    allowed[1] = False
    allowed[[0, 2, 3], 0] = True
    q, k, v = cplx_leaves((2, 4, 3), (2, 6, 3), (2, 6, 2), seed=1)
    if function == "attention_weights":
        out = cplx.attention_weights(q, k, attn_mask=allowed, score=score)
    else:
        out = cplx.scaled_dot_product_attention(q, k, v, attn_mask=allowed, score=score)
    with_values = function == "scaled_dot_product_attention"
    leaves = [q.real, q.imag, k.real, k.imag] + ([v.real, v.imag] if with_values else [])
    ours = grads(out, *leaves)
    assert all(torch.isfinite(g).all() for g in ours)
    out = detached_native(out) if isinstance(out, Cplx) else out.detach()
    assert torch.equal(out[:, 1], torch.zeros_like(out[:, 1]))
    # the reference: the same problem without query 1, in native complex128
    kept = [0, 2, 3]
    nq, nk, nv = (detached_native(z).requires_grad_() for z in (q, k, v))
    scores = native_scores(nq[:, kept], nk, score).masked_fill(~allowed[kept], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    expected = weights if function == "attention_weights" else weights.to(nv.dtype) @ nv
    torch.testing.assert_close(out[:, kept], expected.detach(), **DOUBLE)
    # torch's gradient of a real function of a complex leaf is d/dre + i d/dim
    full = torch.zeros(2, 4, *expected.shape[2:], dtype=expected.dtype)
    full[:, kept] = expected
    native_leaves = [nq, nk] + ([nv] if with_values else [])
    reference = grads(full, *native_leaves)
    for theirs, mine in zip(reference, native_grads(ours)):
        torch.testing.assert_close(mine, theirs, **DOUBLE)
    assert torch.equal(native_grads(ours)[0][:, 1], torch.zeros(2, 3, dtype=torch.complex128))


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_function_on_real_inputs_is_torch_sdpa_with_a_query_with_no_key(kind):
    allowed = torch.ones(4, 6, dtype=torch.bool)
    allowed[2] = False
    allowed[0, 3:] = False
    mask = allowed if kind == "bool" else torch.zeros(4, 6, dtype=torch.float64).masked_fill(
        ~allowed, float("-inf"))
    q, k, v = (torch.randn(2, 2, n, 3, dtype=torch.float64, requires_grad=True)
               for n in (4, 6, 6))
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out = cplx.scaled_dot_product_attention(Cplx(q), Cplx(k), Cplx(v), attn_mask=mask)
    torch.testing.assert_close(out.real, expected, **DOUBLE)
    assert torch.equal(out.imag, torch.zeros_like(expected))
    for mine, theirs in zip(grads(out.real, q, k, v), grads(expected, q, k, v)):
        torch.testing.assert_close(mine, theirs, **DOUBLE)


@pytest.mark.parametrize("score", ["real", "modulus"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_attention_gives_zero_to_a_query_with_no_key(score, need_weights):
    layer = perturbed(mha(score=score, batch_first=True))
    # sample 1 masks every key by padding; sample 0's query 2 by the attention mask
    kpm = torch.tensor([[False] * LENGTH, [True] * LENGTH])
    attn_mask = torch.zeros(LENGTH, LENGTH, dtype=torch.bool)
    attn_mask[2] = True
    x = randc(2, LENGTH, 8, seed=1)
    xr, xi = x.real.requires_grad_(), x.imag.requires_grad_()
    out, weights = layer(x, x, x, key_padding_mask=kpm, attn_mask=attn_mask,
                         need_weights=need_weights)
    reference, ref_weights = native_mha(layer, *[detached_native(x)] * 3,
                                        key_padding_mask=kpm, attn_mask=attn_mask)
    torch.testing.assert_close(detached_native(out), reference, **DOUBLE)
    # no attention: the output projection's bias
    bias = detached_native(layer.out_proj.bias)
    torch.testing.assert_close(detached_native(out)[1], bias.expand(LENGTH, 8), **DOUBLE)
    torch.testing.assert_close(detached_native(out)[0, 2], bias, **DOUBLE)
    if need_weights:
        torch.testing.assert_close(weights, ref_weights, **DOUBLE)
        assert weights[1].abs().sum() == 0 and weights[0, 2].abs().sum() == 0
    leaves = [xr, xi] + [p for p in layer.parameters()]
    assert all(torch.isfinite(g).all() for g in grads(out, *leaves))


def test_attention_on_real_inputs_is_torch_fused_attention_with_a_query_with_no_key():
    torch.manual_seed(0)
    theirs = perturbed(torch.nn.MultiheadAttention(8, 2, dtype=torch.float64)).eval()
    ours = mha()
    ours.load_state_dict(theirs.state_dict())
    kpm = torch.tensor([[False] * LENGTH, [True] * LENGTH])
    x = torch.randn(LENGTH, 2, 8, dtype=torch.float64, requires_grad=True)
    # torch's weights path gives NaN there, its fused path 0: ours gives 0 on both
    expected = theirs(x, x, x, key_padding_mask=kpm, need_weights=False)[0]
    assert theirs(x, x, x, key_padding_mask=kpm)[0].isnan().any()
    (expected_grad,) = grads(expected, x)
    for need_weights in (True, False):
        out = ours(Cplx(x), Cplx(x), Cplx(x), key_padding_mask=kpm, need_weights=need_weights)[0]
        torch.testing.assert_close(out.real, expected, **DOUBLE)
        torch.testing.assert_close(grads(out.real, x)[0], expected_grad, **DOUBLE)


# --- torch's checkpoints -------------------------------------------------------------------
TORCH_MHA = {
    "packed": {},
    "separate": dict(kdim=3, vdim=5),
    "no_bias": dict(bias=False),
    "separate_no_bias": dict(kdim=3, vdim=3, bias=False),
    "extra_keys": dict(add_bias_kv=True, add_zero_attn=True),
}


@pytest.mark.parametrize("config", TORCH_MHA)
@pytest.mark.parametrize("layout", [True, False], ids=["batch_first", "sequence_first"])
def test_torch_multihead_attention_state_dict_loads(config, layout):
    kwargs = dict(batch_first=layout, **TORCH_MHA[config])
    torch.manual_seed(0)
    theirs = perturbed(torch.nn.MultiheadAttention(8, 2, **kwargs)).eval()  # float32
    ours = mha(**kwargs)  # float64: the loader converts
    assert set(theirs.state_dict()) & {"in_proj_weight", "q_proj_weight"}
    result = ours.load_state_dict(theirs.state_dict())
    assert not result.missing_keys and not result.unexpected_keys
    theirs.double()
    shape, kv_shape = ((2, 4), (2, 6)) if layout else ((4, 2), (6, 2))
    q = torch.randn(*shape, 8, dtype=torch.float64)
    k = torch.randn(*kv_shape, kwargs.get("kdim", 8), dtype=torch.float64)
    v = torch.randn(*kv_shape, kwargs.get("vdim", 8), dtype=torch.float64)
    attn_mask = torch.rand(4, 6, generator=torch.Generator().manual_seed(0)) > 0.6
    attn_mask[:, 0] = False  # no query without keys: torch's weights path gives NaN there
    masks = dict(key_padding_mask=torch.tensor([[False] * 6, [False] * 4 + [True] * 2]),
                 attn_mask=attn_mask)
    for need_weights in (True, False):
        expected = theirs(q, k, v, need_weights=need_weights, **masks)
        out = ours(Cplx(q), Cplx(k), Cplx(v), need_weights=need_weights, **masks)
        torch.testing.assert_close(out[0].real, expected[0], **DOUBLE)
        assert torch.equal(out[0].imag, torch.zeros_like(expected[0]))
        if need_weights:
            torch.testing.assert_close(out[1], expected[1], **DOUBLE)


def test_a_projection_given_twice_is_reported():
    """torch's packed weight beside our own entries of the projections is not used, but reported."""
    theirs = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64)
    ours = mha()
    before = {key: value.clone() for key, value in ours.state_dict().items()}
    state = dict(ours.state_dict(), in_proj_weight=theirs.in_proj_weight.detach())
    with pytest.raises(RuntimeError, match="Unexpected key.*in_proj_weight"):
        ours.load_state_dict(state)
    for key, value in ours.state_dict().items():
        assert torch.equal(value, before[key])


# --- one functional, the projections called as modules -------------------------------------
@pytest.mark.parametrize("need_weights", [True, False])
def test_projections_run_as_modules(need_weights):
    layer = mha(batch_first=True, kdim=3)
    calls = []
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        proj = getattr(layer, name)
        proj.register_forward_pre_hook(lambda module, args, name=name: calls.append(name))
    # a forward hook that replaces the keys' projection: the output must follow it
    layer.k_proj.register_forward_hook(lambda module, args, out: out * 0.5)
    q, kv, value = randc(2, 4, 8, seed=1), randc(2, 6, 3, seed=2), randc(2, 6, 8, seed=3)
    out = layer(q, kv, value, need_weights=need_weights)[0]
    assert sorted(calls) == ["k_proj", "out_proj", "q_proj", "v_proj"]
    # the reference: the keys' projection scaled by a half
    with torch.no_grad():
        for p in layer.k_proj.parameters():
            p.mul_(0.5)
    expected = native_mha(layer, detached_native(q), detached_native(kv), detached_native(value))[0]
    torch.testing.assert_close(detached_native(out), expected, **DOUBLE)


def test_functional_with_plain_functions_equals_the_layer():
    layer = perturbed(mha(add_bias_kv=True, add_zero_attn=True))
    projections = [
        (lambda z, p=p: cplx.linear(z, p.weight, p.bias))
        for p in (layer.q_proj, layer.k_proj, layer.v_proj, layer.out_proj)
    ]
    x = randc(LENGTH, 2, 8, seed=1)
    kpm = PADDING["bool"]()
    out, weights = _multi_head_attention_forward(
        x, x, x, 8, 2, projections[:3], layer.bias_k, layer.bias_v, True, 0.0, projections[3],
        key_padding_mask=kpm, is_causal=True,
    )
    expected, ref_weights = layer(x, x, x, key_padding_mask=kpm, is_causal=True)
    torch.testing.assert_close(detached_native(out), detached_native(expected), **DOUBLE)
    torch.testing.assert_close(weights, ref_weights, **DOUBLE)


# --- edges: empty batches, half precision, unbatched inputs, dropout in evaluation ----------
@pytest.mark.parametrize("layout", [True, False], ids=["batch_first", "sequence_first"])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("score", ["real", "modulus"])
def test_empty_batch(layout, need_weights, score):
    layer = mha(batch_first=layout, score=score, kdim=3)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=layout, kdim=3, dtype=torch.float64)
    q, k = randc(0, 4, 8), randc(0, 6, 3)
    v = randc(0, 6, 8)
    if not layout:
        q, k, v = (z.transpose(0, 1) for z in (q, k, v))
    q.real.requires_grad_()
    kpm = torch.zeros(0, 6, dtype=torch.bool)
    out, weights = layer(q, k, v, key_padding_mask=kpm, need_weights=need_weights,
                         is_causal=True)
    # torch's fused path fails on an empty batch with a mask: the shapes without one
    expected = theirs(q.real, k.real, v.real, need_weights=need_weights)
    assert out.shape == expected[0].shape
    assert (weights is None) == (expected[1] is None)
    if need_weights:
        assert weights.shape == expected[1].shape
    out.real.sum().backward()
    assert q.real.grad.shape == q.shape


def test_transformers_take_an_empty_batch():
    src, tgt = randc(0, 6, 8), randc(0, LENGTH, 8)
    torch.manual_seed(0)
    model = CplxTransformer(8, 2, 1, 1, dim_feedforward=12, batch_first=True,
                            dtype=torch.float64).eval()
    theirs = torch.nn.Transformer(8, 2, 1, 1, dim_feedforward=12, batch_first=True,
                                  dtype=torch.float64).eval()
    expected = theirs(src.real, tgt.real, tgt_is_causal=True,
                      tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(LENGTH))
    assert model(src, tgt, tgt_is_causal=True).shape == expected.shape


HALF = {torch.float16: 1e-3, torch.bfloat16: 8e-3}  # about the machine epsilons


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("need_weights", [True, False])
def test_half_precision_is_as_accurate_as_torch(dtype, need_weights):
    torch.manual_seed(0)
    theirs = perturbed(torch.nn.MultiheadAttention(8, 2, batch_first=True, dtype=dtype)).eval()
    ours = CplxMultiheadAttention(8, 2, batch_first=True, dtype=dtype).eval()
    ours.load_state_dict(theirs.state_dict())
    exact = mha(batch_first=True)
    exact.load_state_dict(theirs.state_dict())  # the half weights, in float64
    kpm = torch.tensor([[False] * LENGTH, [False] * 2 + [True] * 3])
    x = torch.randn(2, LENGTH, 8).to(dtype)
    out, weights = ours(Cplx(x), Cplx(x), Cplx(x), key_padding_mask=kpm,
                        need_weights=need_weights)
    assert out.dtype == dtype and (weights is None or weights.dtype == dtype)
    # real inputs: the error is torch's own in that precision
    reference = exact(*[Cplx(x.double())] * 3, key_padding_mask=kpm)[0].real
    torch_error = (theirs(x, x, x, key_padding_mask=kpm, need_weights=need_weights)[0].double()
                   - reference).abs().max()
    assert (out.real.double() - reference).abs().max() <= 2 * torch_error + HALF[dtype] / 8
    # complex inputs: within a few epsilons of the complex128 reference
    z = randc(2, LENGTH, 8).to(dtype)
    out = ours(z, z, z, key_padding_mask=kpm, need_weights=need_weights)[0]
    native_z = detached_native(z.to(torch.float64))
    expected = native_mha(exact, native_z, native_z, native_z, key_padding_mask=kpm)[0]
    scale = expected.abs().max()
    torch.testing.assert_close(detached_native(out.to(torch.float64)), expected, rtol=0,
                               atol=4 * HALF[dtype] * scale)


@pytest.mark.parametrize("dtype", HALF)
def test_half_precision_query_with_no_key(dtype):
    layer = CplxMultiheadAttention(8, 2, dtype=dtype).eval()
    kpm = torch.tensor([[True] * LENGTH, [False] * LENGTH])
    z = randc(LENGTH, 2, 8).to(dtype)
    bias = layer.out_proj.bias.detach()  # the output of no attention
    for need_weights in (True, False):
        out = layer(z, z, z, key_padding_mask=kpm, need_weights=need_weights)[0]
        assert torch.equal(out.real[:, 0], bias.real.expand(LENGTH, 8))
        assert torch.equal(out.imag[:, 0], bias.imag.expand(LENGTH, 8))


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_unbatched_inputs_as_torch(need_weights, average):
    torch.manual_seed(0)
    theirs = perturbed(torch.nn.MultiheadAttention(8, 2, kdim=3, vdim=3,
                                                   dtype=torch.float64)).eval()
    ours = mha(kdim=3, vdim=3)
    ours.load_state_dict(theirs.state_dict())
    q, kv = torch.randn(4, 8, dtype=torch.float64), torch.randn(6, 3, dtype=torch.float64)
    masks = dict(key_padding_mask=torch.tensor([0.0] * 5 + [float("-inf")], dtype=torch.float64),
                 attn_mask=torch.randn(2, 4, 6, dtype=torch.float64))
    expected = theirs(q, kv, kv, need_weights=need_weights, average_attn_weights=average,
                      **masks)
    out = ours(Cplx(q), Cplx(kv), Cplx(kv), need_weights=need_weights,
               average_attn_weights=average, **masks)
    torch.testing.assert_close(out[0].real, expected[0], **DOUBLE)
    if need_weights:
        torch.testing.assert_close(out[1], expected[1], **DOUBLE)
    # complex inputs: the batch of one
    z, w = randc(4, 8, seed=1), randc(6, 3, seed=2)
    batched = mha(kdim=3, vdim=3, batch_first=True)
    batched.load_state_dict(ours.state_dict())
    one = batched(z[None], w[None], w[None], key_padding_mask=masks["key_padding_mask"][None],
                  attn_mask=masks["attn_mask"], is_causal=True)[0]
    alone = ours(z, w, w, key_padding_mask=masks["key_padding_mask"], attn_mask=masks["attn_mask"],
                 is_causal=True)[0]
    torch.testing.assert_close(detached_native(alone), detached_native(one)[0], **DOUBLE)


def test_unbatched_transformers_equal_a_batch_of_one():
    torch.manual_seed(0)
    model = perturbed(CplxTransformer(8, 2, 1, 1, dim_feedforward=12, dropout=0.0,
                                      dtype=torch.float64)).eval()
    src, tgt = randc(6, 8, seed=1), randc(LENGTH, 8, seed=2)
    kpm = torch.tensor([False] * 4 + [True])
    alone = model(src, tgt, tgt_is_causal=True, tgt_key_padding_mask=kpm)
    one = model(src[:, None], tgt[:, None], tgt_is_causal=True, tgt_key_padding_mask=kpm[None])
    torch.testing.assert_close(detached_native(alone), detached_native(one)[:, 0], **DOUBLE)


def test_unbatched_padding_mask_of_the_wrong_shape_names_it():
    layer = mha()
    z = randc(4, 8)
    with pytest.raises(ValueError, match=r"CplxMultiheadAttention: `key_padding_mask` must have"
                                         r" shape \(4,\), got \(1, 4\)"):
        layer(z, z, z, key_padding_mask=torch.zeros(1, 4, dtype=torch.bool))


def test_dropout_acts_in_training_only():
    """In evaluation a layer with dropout computes what it computes without."""
    torch.manual_seed(0)
    model = perturbed(CplxTransformer(8, 2, 1, 1, dim_feedforward=12, dropout=0.5,
                                      batch_first=True, dtype=torch.float64))
    twin = CplxTransformer(8, 2, 1, 1, dim_feedforward=12, dropout=0.0, batch_first=True,
                           dtype=torch.float64)
    twin.load_state_dict(model.state_dict())
    src, tgt = randc(2, 6, 8, seed=1), randc(2, LENGTH, 8, seed=2)
    model.eval()
    torch.testing.assert_close(detached_native(model(src, tgt)),
                               detached_native(twin.eval()(src, tgt)), rtol=0, atol=0)
    model.train()
    assert not torch.allclose(detached_native(model(src, tgt)), detached_native(twin(src, tgt)))
