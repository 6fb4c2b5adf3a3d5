"""compact(example_inputs=...) removes the heads of an attention layer that compute nothing used.

A head goes when the output projection never reads it, or when its values
are zero (the value projection's rows and bias, and ``bias_v``), and only
where the recorded call leaves the attention weights unused and takes no
per-head mask. The reference is the masked model in eval mode, float64, on
an input other than the recorded one.
"""

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxMultiheadAttention
from cplxmodule.nn.masked import compact, to_masked

pytestmark = pytest.mark.usefixtures("one_thread")
DTYPE = torch.float64
EMBED, HEADS = 8, 4  # head_dim 2


class SelfAttention(torch.nn.Module):
    """Self-attention that returns the output, and the weights with ``weights=True``."""

    def __init__(self, weights=False, **kwargs):
        super().__init__()
        self.weights = weights
        self.attn = CplxMultiheadAttention(EMBED, HEADS, batch_first=True, dtype=DTYPE, **kwargs)

    def forward(self, x, attn_mask=None):
        out, weights = self.attn(x, x, x, need_weights=self.weights, attn_mask=attn_mask)
        return (out, weights) if self.weights else out


def with_dead_heads(model, silent_bias=0.0):
    """``model`` masked: head 1 unread by ``out_proj``, head 3's values zero (bias ``silent_bias``)."""
    torch.manual_seed(0)
    masked = to_masked(model).eval()
    attn = masked.attn
    for proj in (attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj):
        proj.mask = torch.ones_like(proj.weight.real)
    attn.out_proj.mask[:, 2:4] = 0
    attn.v_proj.mask[6:8] = 0
    with torch.no_grad():
        attn.v_proj.bias.real[6:8], attn.v_proj.bias.imag[6:8] = silent_bias, 0.0
        if attn.bias_v is not None:
            attn.bias_v.real[..., 6:8], attn.bias_v.imag[..., 6:8] = 0.0, 0.0
    return masked


def outputs(model, x):
    with torch.no_grad():
        out = model(x)
    return [cplx.to_complex(o) if isinstance(o, cplx.Cplx) else o
            for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("kwargs", [{}, {"add_bias_kv": True, "add_zero_attn": True}],
                         ids=["plain", "bias-kv-zero-attn"])
def test_unread_and_silent_heads_go(kwargs):
    masked = with_dead_heads(SelfAttention(**kwargs))
    small = compact(masked, example_inputs=(cplx.randn(2, 5, EMBED, dtype=DTYPE),))
    attn = small.attn
    assert attn.num_heads == 2 and attn.head_dim == 2
    assert [p.out_features for p in (attn.q_proj, attn.k_proj, attn.v_proj)] == [4, 4, 4]
    assert (attn.out_proj.in_features, attn.out_proj.out_features) == (4, EMBED)
    if attn.bias_k is not None:
        assert attn.bias_k.shape == attn.bias_v.shape == (1, 1, 4)
    assert "head_dim=2" in repr(attn)
    x = cplx.randn(3, 7, EMBED, dtype=DTYPE)
    torch.testing.assert_close(outputs(small, x), outputs(masked, x))


@pytest.mark.parametrize("case", ["weights-read", "per-head-mask", "bias", "no-record"])
def test_heads_stay_where_they_may_be_seen(case):
    masked = with_dead_heads(SelfAttention(weights=case == "weights-read"),
                             silent_bias=0.5 if case == "bias" else 0.0)
    x = cplx.randn(2, 5, EMBED, dtype=DTYPE)
    if case == "per-head-mask":  # (N * num_heads, L, S)
        mask = torch.zeros(2 * HEADS, 5, 5, dtype=DTYPE)
        small = compact(masked, example_inputs=(x, mask))
        assert small.attn.num_heads == HEADS
        return
    small = compact(masked, example_inputs=None if case == "no-record" else (x,))
    # a head whose values are the constant bias is not silent: only the unread one goes
    assert small.attn.num_heads == (3 if case == "bias" else HEADS)
    y = cplx.randn(3, 7, EMBED, dtype=DTYPE)
    torch.testing.assert_close(outputs(small, y), outputs(masked, y))
