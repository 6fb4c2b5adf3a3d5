"""The layer form of complex scaled dot-product attention against native complex128.

The reference computes the scores from the Hermitian products ``q @ k^H`` of
complex128 tensors (their real part or modulus), a softmax over the keys and
the weighted sum of the values, all in torch's native complex dtype.
"""

import math

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from tests.helpers import detached_native as native, native_scores, native_softmax, randc

pytestmark = pytest.mark.usefixtures("one_thread")


def _reference(q, k, v, score, mask=None, scale=None):
    scores = native_scores(q, k, score)
    if scale is not None:
        scores = scores * math.sqrt(q.shape[-1]) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    return native_softmax(scores).to(v.dtype) @ v


@pytest.mark.parametrize("score", ["real", "modulus"])
def test_matches_native_values_and_gradients(score):
    q, k, v = randc(2, 3, 5, 4, seed=0), randc(2, 3, 6, 4, seed=1), randc(2, 3, 6, 2, seed=2)
    parts = [t.requires_grad_() for z in (q, k, v) for t in (z.real, z.imag)]
    out = cnn.CplxScaledDotProductAttention(score=score)(q, k, v)
    qn, kn, vn = (native(z).requires_grad_() for z in (q, k, v))
    ref = _reference(qn, kn, vn, score)
    torch.testing.assert_close(native(out), ref.detach(), rtol=1e-10, atol=1e-10)

    g = torch.Generator().manual_seed(3)
    w = torch.randn(2, *ref.shape, generator=g, dtype=torch.float64)
    (out.real * w[0] + out.imag * w[1]).sum().backward()
    (ref.real * w[0] + ref.imag * w[1]).sum().backward()
    ours = [torch.complex(parts[i].grad, parts[i + 1].grad) for i in (0, 2, 4)]
    for mine, theirs in zip(ours, (qn.grad, kn.grad, vn.grad)):
        torch.testing.assert_close(mine, theirs, rtol=1e-10, atol=1e-10)


def test_mask_causal_and_scale_reach_the_function():
    q, k, v = randc(4, 3, seed=4), randc(4, 3, seed=5), randc(4, 2, seed=6)
    mask = torch.tensor([[1, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1], [1, 1, 1, 1]], dtype=torch.bool)
    layer = cnn.CplxScaledDotProductAttention(score="modulus", scale=0.3)
    ref = _reference(native(q), native(k), native(v), "modulus", mask, scale=0.3)
    torch.testing.assert_close(native(layer(q, k, v, attn_mask=mask)), ref)
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    ref = _reference(native(q), native(k), native(v), "modulus", causal, scale=0.3)
    torch.testing.assert_close(native(layer(q, k, v, is_causal=True)), ref)


def test_dropout_only_in_training():
    q, k, v = randc(6, 3, seed=7), randc(6, 3, seed=8), randc(6, 3, seed=9)
    layer = cnn.CplxScaledDotProductAttention(dropout=0.5).eval()
    plain = cplx.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(native(layer(q, k, v)), native(plain))
    layer.train()
    torch.manual_seed(0)
    dropped = layer(q, k, v)
    assert not torch.allclose(native(dropped), native(plain))


def test_refuses_bad_arguments_naming_the_layer():
    name = "CplxScaledDotProductAttention"
    with pytest.raises(ValueError, match=f"{name}: `score`"):
        cnn.CplxScaledDotProductAttention(score="angle")
    with pytest.raises(ValueError, match=f"{name}: `dropout`"):
        cnn.CplxScaledDotProductAttention(dropout=1.5)
    with pytest.raises(ValueError, match=f"{name}: `scale`"):
        cnn.CplxScaledDotProductAttention(scale=0.0)
    layer = cnn.CplxScaledDotProductAttention()
    with pytest.raises(TypeError, match=f"{name}: `query`"):
        layer(torch.ones(2, 3), cplx.randn(2, 3), cplx.randn(2, 3))
    with pytest.raises(ValueError, match=f"{name}: `key`"):
        layer(cplx.randn(2, 3), cplx.randn(2, 4), cplx.randn(2, 3))


@pytest.mark.parametrize("score", ["real", "modulus"])
def test_queries_of_no_features_average_the_values_as_torch(score):
    # the scores are all zero: uniform weights (torch's real function gives the same)
    q, k, v = randc(2, 3, 0, seed=10), randc(2, 5, 0, seed=11), randc(2, 5, 2, seed=12)
    out = cnn.CplxScaledDotProductAttention(score=score)(q, k, v)
    expected = native(v).mean(dim=-2, keepdim=True).expand(2, 3, 2)
    torch.testing.assert_close(native(out), expected)
