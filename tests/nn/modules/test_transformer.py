"""Complex transformer layers against native complex128 references and, on real inputs, torch's.

The native reference of a layer writes its equations on native complex
tensors: attention as in ``helpers.native_mha``, the layer norm by
whitening each sample's (real, imaginary) pairs with the eigendecomposition
of their covariance (the code under test uses a closed form), the split
ReLU on the parts. With zero imaginary parts the layers are checked against
torch's own transformer layers carrying the same real weights.
"""

import copy

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import (
    CplxLayerNorm,
    CplxLinear,
    CplxSplitGELU,
    CplxTransformer,
    CplxTransformerDecoder,
    CplxTransformerDecoderLayer,
    CplxTransformerEncoder,
    CplxTransformerEncoderLayer,
    cached,
)
from cplxmodule.nn.masked import compact, magnitude_masks, to_masked

from ...helpers import DOUBLE, detached_native, load_torch_transformer, native_linear, native_mha, randc

pytestmark = pytest.mark.usefixtures("one_thread")


# --- native complex128 references ----------------------------------------------
def native_layer_norm(norm, z):
    centred = z - z.mean(-1, keepdim=True)
    pairs = torch.stack([centred.real, centred.imag], dim=-1)  # (..., E, 2)
    cov = pairs.transpose(-2, -1) @ pairs / z.shape[-1] + norm.eps * torch.eye(2)
    lam, q = torch.linalg.eigh(cov)
    inv_sqrt = (q / lam.sqrt().unsqueeze(-2)) @ q.transpose(-2, -1)
    u = pairs @ inv_sqrt  # symmetric: rows of pairs times the matrix
    w, b = norm.weight.detach(), norm.bias.detach()
    real = w[0, 0] * u[..., 0] + w[0, 1] * u[..., 1] + b[0]
    imag = w[1, 0] * u[..., 0] + w[1, 1] * u[..., 1] + b[1]
    return torch.complex(real, imag)


def split_relu(z):
    return torch.complex(F.relu(z.real), F.relu(z.imag))


def native_ff(layer, x):
    return native_linear(layer.linear2, split_relu(native_linear(layer.linear1, x)))


def native_encoder_layer(layer, x, mask=None, key_padding_mask=None):
    def sa(y):
        return native_mha(layer.self_attn, y, y, y, key_padding_mask, mask)[0]

    if layer.norm_first:
        x = x + sa(native_layer_norm(layer.norm1, x))
        return x + native_ff(layer, native_layer_norm(layer.norm2, x))
    x = native_layer_norm(layer.norm1, x + sa(x))
    return native_layer_norm(layer.norm2, x + native_ff(layer, x))


def native_decoder_layer(layer, x, memory, tgt_mask=None, memory_key_padding_mask=None):
    def sa(y):
        return native_mha(layer.self_attn, y, y, y, attn_mask=tgt_mask)[0]

    def mha(y):
        return native_mha(layer.multihead_attn, y, memory, memory, memory_key_padding_mask)[0]

    if layer.norm_first:
        x = x + sa(native_layer_norm(layer.norm1, x))
        x = x + mha(native_layer_norm(layer.norm2, x))
        return x + native_ff(layer, native_layer_norm(layer.norm3, x))
    x = native_layer_norm(layer.norm1, x + sa(x))
    x = native_layer_norm(layer.norm2, x + mha(x))
    return native_layer_norm(layer.norm3, x + native_ff(layer, x))


def perturb_norms(module):
    """Move the norms' affine maps away from the identity, so the check covers them."""
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for sub in module.modules():
            if isinstance(sub, CplxLayerNorm):
                sub.weight.add_(0.3 * torch.randn(sub.weight.shape, generator=g,
                                                  dtype=sub.weight.dtype))
                sub.bias.add_(0.3 * torch.randn(sub.bias.shape, generator=g,
                                                dtype=sub.bias.dtype))


def encoder_layer(**kwargs):
    torch.manual_seed(0)
    kwargs = dict(dim_feedforward=12, dropout=0.0, batch_first=True, dtype=torch.float64) | kwargs
    layer = CplxTransformerEncoderLayer(8, 2, **kwargs).eval()
    perturb_norms(layer)
    return layer


# --- complex inputs: native references ---------------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_native(norm_first):
    layer = encoder_layer(norm_first=norm_first)
    x = randc(3, 5, 8)
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    mask = torch.randn(5, 5, dtype=torch.float64)
    out = layer(x, src_mask=mask, src_key_padding_mask=kpm)
    torch.testing.assert_close(detached_native(out), native_encoder_layer(layer, detached_native(x), mask, kpm),
                               **DOUBLE)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_native(norm_first):
    torch.manual_seed(0)
    layer = CplxTransformerDecoderLayer(8, 2, dim_feedforward=12, norm_first=norm_first,
                                        dtype=torch.float64).eval()
    perturb_norms(layer)
    tgt, memory = randc(4, 2, 8, seed=1), randc(6, 2, 8, seed=2)  # sequence first
    causal = CplxTransformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    mkpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    out = layer(tgt, memory, tgt_mask=causal, memory_key_padding_mask=mkpm)
    expected = native_decoder_layer(layer, detached_native(tgt).transpose(0, 1),
                                    detached_native(memory).transpose(0, 1), causal, mkpm)
    torch.testing.assert_close(detached_native(out).transpose(0, 1), expected, **DOUBLE)
    # the causal flag alone gives the causal mask
    flagged = layer(tgt, memory, tgt_is_causal=True, memory_key_padding_mask=mkpm)
    torch.testing.assert_close(detached_native(flagged), detached_native(out), **DOUBLE)


def test_stacks_match_their_layers_and_copies_are_independent():
    layer = encoder_layer()
    encoder = CplxTransformerEncoder(layer, 2, norm=CplxLayerNorm(8, dtype=torch.float64))
    assert encoder.layers[0].linear1.weight.real is not encoder.layers[1].linear1.weight.real
    with torch.no_grad():
        encoder.layers[1].linear1.weight.real.mul_(2)
    perturb_norms(encoder.norm)
    x = randc(2, 5, 8)
    mask = CplxTransformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    expected = detached_native(x)
    for sub in encoder.layers:
        expected = native_encoder_layer(sub, expected, mask)
    expected = native_layer_norm(encoder.norm, expected)
    torch.testing.assert_close(detached_native(encoder(x, mask=mask)), expected, **DOUBLE)
    torch.testing.assert_close(detached_native(encoder(x, is_causal=True)), expected, **DOUBLE)


def test_unbatched_equals_batch_of_one():
    layer = encoder_layer(batch_first=False)
    x = randc(5, 8)
    torch.testing.assert_close(detached_native(layer(x)), detached_native(layer(x.unsqueeze(1)).squeeze(1)),
                               **DOUBLE)


def test_gradcheck_encoder_layer():
    torch.manual_seed(0)
    layer = CplxTransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0,
                                        activation="gelu", dtype=torch.float64, score="modulus")
    assert isinstance(layer.activation, CplxSplitGELU)
    x = randc(3, 1, 4)
    xr, xi = x.real.requires_grad_(), x.imag.requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: layer(Cplx(a, b)).imag, (xr, xi))


# --- zero imaginary parts: torch's own layers -------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_real_input_equals_torch_encoder_layer(norm_first, activation):
    kwargs = dict(dim_feedforward=12, dropout=0.0, activation=activation, batch_first=True,
                  norm_first=norm_first, dtype=torch.float64)
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, **kwargs).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(0.1 * torch.randn_like(p))
    ours = CplxTransformerEncoderLayer(8, 2, **kwargs).eval()
    load_torch_transformer(ours, theirs)
    x = torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True)  # off torch's fast path
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    out = ours(Cplx(x), src_key_padding_mask=kpm)
    torch.testing.assert_close(out.real, theirs(x, src_key_padding_mask=kpm), **DOUBLE)
    assert torch.equal(out.imag, torch.zeros_like(x))


# torch's reference warns that its sequence-first encoder takes no nested tensors
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_real_input_equals_torch_transformer():
    kwargs = dict(num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=12, dropout=0.0,
                  dtype=torch.float64)
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(8, 2, **kwargs).eval()
    ours = CplxTransformer(8, 2, **kwargs).eval()
    load_torch_transformer(ours, theirs)
    src = torch.randn(6, 2, 8, dtype=torch.float64, requires_grad=True)
    tgt = torch.randn(4, 2, 8, dtype=torch.float64)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    torch.testing.assert_close(CplxTransformer.generate_square_subsequent_mask(
        4, dtype=torch.float64), tgt_mask, rtol=0, atol=0)
    masks = dict(tgt_mask=tgt_mask,
                 src_key_padding_mask=torch.tensor([[False] * 6, [False] * 5 + [True]]))
    out = ours(Cplx(src), Cplx(tgt), **masks, memory_key_padding_mask=masks["src_key_padding_mask"])
    expected = theirs(src, tgt, **masks, memory_key_padding_mask=masks["src_key_padding_mask"])
    torch.testing.assert_close(out.real, expected, **DOUBLE)


# --- arguments, module machinery ----------------------------------------------------
@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: CplxTransformerEncoderLayer(0, 1), ValueError,
         "CplxTransformerEncoderLayer: `d_model` must be a positive int"),
        (lambda: CplxTransformerEncoderLayer(8, 3), ValueError,
         "CplxTransformerEncoderLayer: `nhead` must divide `d_model`"),
        (lambda: CplxTransformerDecoderLayer(8, 2, dim_feedforward=-1), ValueError,
         "CplxTransformerDecoderLayer: `dim_feedforward` must be a positive int"),
        (lambda: CplxTransformerEncoderLayer(8, 2, dropout=2.0), ValueError,
         r"CplxTransformerEncoderLayer: `dropout` must be a number in \[0, 1\], got 2.0"),
        (lambda: CplxTransformerEncoderLayer(8, 2, activation="tanh"), ValueError,
         "CplxTransformerEncoderLayer: `activation` must be 'relu', 'gelu' or a callable"),
        (lambda: CplxTransformerEncoderLayer(8, 2, score="abs"), ValueError,
         "CplxMultiheadAttention: `score` must be 'real' or 'modulus'"),
        (lambda: CplxTransformerEncoder(torch.nn.Linear(2, 2), 2), TypeError,
         "CplxTransformerEncoder: `encoder_layer` must be a CplxTransformerEncoderLayer"),
        (lambda: CplxTransformerDecoder(CplxTransformerDecoderLayer(8, 2, 4), 0), ValueError,
         "CplxTransformerDecoder: `num_layers` must be a positive int"),
        (lambda: CplxTransformer(8, 2, num_encoder_layers=0), ValueError,
         "CplxTransformer: `num_encoder_layers` must be a positive int"),
    ],
)
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_bad_inputs_leave_model_unchanged():
    model = CplxTransformer(8, 2, 1, 1, dim_feedforward=12, batch_first=True)
    state = copy.deepcopy(model.state_dict())
    z = cplx.randn(2, 5, 8)
    with pytest.raises(TypeError, match="CplxTransformer: `src` must be a Cplx"):
        model(z.real, z)
    with pytest.raises(ValueError, match="CplxTransformer: `tgt` must have the dimensions and"):
        model(z, z[:1])
    with pytest.raises(ValueError, match=r"CplxTransformer: `src` and `tgt` must have 8 features"):
        model(z[..., :4], z[..., :4])
    with pytest.raises(TypeError, match="CplxTransformerEncoderLayer: `src` must be a Cplx"):
        model.encoder.layers[0](z.real)
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key])


def test_deepcopy_state_dict_to_double_and_train_mode():
    torch.manual_seed(0)
    model = CplxTransformer(8, 2, 1, 1, dim_feedforward=12, batch_first=True)
    assert {"encoder.layers.0.self_attn.q_proj.weight.real",
            "decoder.layers.0.multihead_attn.out_proj.bias.imag",
            "decoder.norm.weight"} <= set(model.state_dict())
    src, tgt = cplx.randn(2, 5, 8), cplx.randn(2, 3, 8)
    model.eval()
    twin = copy.deepcopy(model)
    fresh = CplxTransformer(8, 2, 1, 1, dim_feedforward=12, batch_first=True).eval()
    fresh.load_state_dict(model.state_dict())
    expected = model(src, tgt)
    for other in (twin, fresh):
        assert torch.equal(other(src, tgt).real, expected.real)
    double = model.to(torch.float64)
    out = double(src.to(torch.float64), tgt.to(torch.float64))
    assert out.dtype == torch.float64
    torch.testing.assert_close(out.real.float(), expected.real, rtol=1e-4, atol=1e-4)
    # dropout acts in training mode only
    model.train()
    torch.manual_seed(1)
    assert not torch.allclose(model(src.to(torch.float64), tgt.to(torch.float64)).real, out.real)


def test_masked_compact_and_cached_give_the_masked_output():
    layer = encoder_layer(dtype=torch.float32)
    model = CplxTransformerEncoder(layer, 2).eval()
    masks = magnitude_masks(model, keep=0.3)
    masked = to_masked(model, masks=masks).eval()
    names = set(masks)
    for i in range(2):
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            assert f"layers.{i}.self_attn.{proj}.mask" in names
        assert {f"layers.{i}.linear1.mask", f"layers.{i}.linear2.mask"} <= names
    x = cplx.randn(2, 5, 8)
    expected = masked(x)
    # the reference: the dense model with the masked weights zeroed
    dense = copy.deepcopy(model)
    with torch.no_grad():
        for key, mask in masks.items():
            weight = dense.get_submodule(key[: -len(".mask")]).weight
            weight.real.mul_(mask)
            weight.imag.mul_(mask)
    torch.testing.assert_close(detached_native(dense(x)), detached_native(expected))
    small = compact(masked)
    assert not any(type(m).__name__.endswith("Masked") for m in small.modules())
    torch.testing.assert_close(detached_native(small(x)), detached_native(expected), rtol=1e-5, atol=1e-5)
    with cached(masked):
        torch.testing.assert_close(detached_native(masked(x)), detached_native(expected))
    assert all(isinstance(m, CplxLinear) or "Linear" not in type(m).__name__
               for m in model.modules())


@pytest.mark.inductor
def test_compiles_without_graph_breaks():
    layer = encoder_layer(dtype=torch.float32)
    x = cplx.randn(2, 5, 8)
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    compiled = torch.compile(layer, fullgraph=True, backend="eager")
    torch.testing.assert_close(detached_native(compiled(x, src_key_padding_mask=kpm)),
                               detached_native(layer(x, src_key_padding_mask=kpm)))
