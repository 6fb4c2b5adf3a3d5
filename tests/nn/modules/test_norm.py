"""Complex batch and layer normalisation against an independent numpy whitening."""

import copy
import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx

EPS = 1e-5
BATCH_NORMS = [
    (cnn.CplxBatchNorm1d, (16, 3)),
    (cnn.CplxBatchNorm1d, (8, 3, 5)),
    (cnn.CplxBatchNorm2d, (4, 3, 3, 5)),
    (cnn.CplxBatchNorm3d, (2, 3, 2, 3, 4)),
]


# --- numpy reference ------------------------------------------------------
def inv_sqrtm(cov):
    """Inverse square root of a symmetric positive definite matrix (eigh)."""
    lam, q = np.linalg.eigh(cov)
    return (q / np.sqrt(lam)) @ q.T


def np_whiten(pairs, mean=None, cov=None, eps=EPS):
    """Whiten real 2-vectors ``pairs`` (2, n), by their own or given statistics."""
    if mean is None:
        mean = pairs.mean(1)
        cov = np.cov(pairs, bias=True)
    return inv_sqrtm(cov + eps * np.eye(2)) @ (pairs - mean[:, None])


def np_batch_norm(z, weight=None, bias=None, mean=None, cov=None, eps=EPS):
    """Reference batch norm of a complex ndarray ``z`` of shape (N, C, *)."""
    out = np.empty_like(z)
    for c in range(z.shape[1]):
        channel = z[:, c]
        pairs = np.stack([channel.real.ravel(), channel.imag.ravel()])
        stats = (None, None) if mean is None else (mean[:, c], cov[:, :, c])
        u = np_whiten(pairs, *stats, eps=eps)
        if weight is not None:
            u = weight[:, :, c] @ u + bias[:, c, None]
        out[:, c] = (u[0] + 1j * u[1]).reshape(channel.shape)
    return out


def np_batch_stats(z):
    """Per-channel mean (2, C) and unbiased covariance (2, 2, C)."""
    means, covs = [], []
    for c in range(z.shape[1]):
        channel = z[:, c].ravel()
        pairs = np.stack([channel.real, channel.imag])
        means.append(pairs.mean(1))
        covs.append(np.cov(pairs))
    return np.stack(means, -1), np.stack(covs, -1)


def np_layer_norm(z, k, weight=None, bias=None, eps=EPS):
    """Reference layer norm over the trailing ``k`` dims of complex ``z``."""
    tail = z.shape[z.ndim - k :]
    flat = z.reshape(-1, int(np.prod(tail)))
    out = np.empty_like(flat)
    for i, row in enumerate(flat):
        u = np_whiten(np.stack([row.real, row.imag]), eps=eps)
        if weight is not None:
            w = weight.reshape(2, 2, -1)
            u = np.einsum("ijn,jn->in", w, u) + bias.reshape(2, -1)
        out[i] = u[0] + 1j * u[1]
    return out.reshape(z.shape)


def correlated(shape, seed=0):
    """A complex float64 input with correlated parts and non-zero mean per channel."""
    g = torch.Generator().manual_seed(seed)
    n_channels = shape[1]
    mix = torch.randn(n_channels, 2, 2, generator=g, dtype=torch.float64)
    shift = torch.randn(n_channels, 2, generator=g, dtype=torch.float64) * 3
    raw = torch.randn(2, *shape, generator=g, dtype=torch.float64)
    view = (n_channels, *[1] * (len(shape) - 2))
    re = mix[:, 0, 0].view(view) * raw[0] + mix[:, 0, 1].view(view) * raw[1]
    im = mix[:, 1, 0].view(view) * raw[0] + mix[:, 1, 1].view(view) * raw[1]
    return Cplx(re + shift[:, 0].view(view), im + shift[:, 1].view(view))


def to_np(z):
    return z.real.detach().numpy() + 1j * z.imag.detach().numpy()


def randomise_affine(module, seed=1):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        module.weight.copy_(torch.randn(module.weight.shape, generator=g))
        module.bias.copy_(torch.randn(module.bias.shape, generator=g))


# --- functional batch norm --------------------------------------------------
@pytest.mark.parametrize("shape", [s for _, s in BATCH_NORMS])
def test_batch_norm_whitens_each_channel(shape):
    z = correlated(shape)
    out = to_np(cplx.batch_norm(z, None, None, training=True, eps=1e-12))
    for c in range(shape[1]):
        pairs = np.stack([out[:, c].real.ravel(), out[:, c].imag.ravel()])
        np.testing.assert_allclose(pairs.mean(1), 0, atol=1e-10)
        np.testing.assert_allclose(np.cov(pairs, bias=True), np.eye(2), atol=1e-8)


@pytest.mark.parametrize("shape", [s for _, s in BATCH_NORMS])
def test_batch_norm_matches_numpy_with_affine(shape):
    z = correlated(shape)
    g = torch.Generator().manual_seed(3)
    weight = torch.randn(2, 2, shape[1], generator=g, dtype=torch.float64)
    bias = torch.randn(2, shape[1], generator=g, dtype=torch.float64)
    out = cplx.batch_norm(z, None, None, weight, bias, training=True)
    expected = np_batch_norm(to_np(z), weight.numpy(), bias.numpy())
    np.testing.assert_allclose(to_np(out), expected, rtol=1e-9, atol=1e-9)


def test_batch_norm_accepts_complex_bias():
    z = correlated((6, 2, 4))
    bias = Cplx(torch.tensor([1.0, -2.0]).double(), torch.tensor([0.5, 3.0]).double())
    out = cplx.batch_norm(z, None, None, bias=bias, training=True)
    real_bias = torch.stack([bias.real, bias.imag])
    expected = np_batch_norm(to_np(z), np.stack([np.eye(2)] * 2, -1), real_bias.numpy())
    np.testing.assert_allclose(to_np(out), expected, rtol=1e-9, atol=1e-9)


def test_batch_norm_gradcheck():
    z = correlated((5, 2, 3))
    re, im = z.real.requires_grad_(), z.imag.requires_grad_()
    weight = torch.randn(2, 2, 2, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)

    def f(re, im, weight, bias):
        out = cplx.batch_norm(Cplx(re, im), None, None, weight, bias, training=True)
        return out.real, out.imag

    assert torch.autograd.gradcheck(f, (re, im, weight, bias))


def test_batch_norm_collinear_parts_stay_finite():
    # imag = 2 real: a singular covariance that eps alone regularises, and
    # whose determinant rounds to zero or below in float32 at this scale
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, 8, generator=g) * 100
    out = cplx.batch_norm(Cplx(x, 2 * x), None, None, training=True)
    assert torch.isfinite(out.real).all() and torch.isfinite(out.imag).all()
    expected = np_batch_norm(x.double().numpy() * (1 + 2j))
    # float32 rounding of values ~100 (ulp ~1e-5) is amplified by up to
    # 1/sqrt(eps) ~ 300 along the degenerate direction
    np.testing.assert_allclose(to_np(out), expected, rtol=1e-2, atol=1e-2)


def test_batch_norm_eval_needs_running_stats():
    with pytest.raises(ValueError, match="running_mean"):
        cplx.batch_norm(cplx.randn(4, 3), None, None, training=False)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(running_mean=torch.zeros(2, 4), running_cov=None), "running_mean"),
        (dict(running_mean=None, running_cov=torch.zeros(2, 2, 4)), "running_cov"),
        (dict(running_mean=None, running_cov=None, weight=torch.ones(2, 3)), "weight"),
        (dict(running_mean=None, running_cov=None, bias=torch.ones(3, 2)), "bias"),
    ],
)
def test_batch_norm_rejects_mismatched_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        cplx.batch_norm(cplx.randn(4, 3), training=True, **kwargs)


def test_batch_norm_rejects_real_input():
    with pytest.raises(TypeError, match="Cplx"):
        cplx.batch_norm(torch.randn(4, 3), None, None, training=True)


# --- CplxBatchNorm modules --------------------------------------------------
def test_published_state_dict_layout():
    bn = cnn.CplxBatchNorm2d(5)
    shapes = {k: tuple(v.shape) for k, v in bn.state_dict().items()}
    assert shapes == {
        "weight": (2, 2, 5),
        "bias": (2, 5),
        "running_mean": (2, 5),
        "running_var": (2, 2, 5),
        "num_batches_tracked": (),
    }
    np.testing.assert_array_equal(bn.weight.detach().numpy()[..., 0], np.eye(2))
    np.testing.assert_array_equal(bn.running_var.numpy()[..., 3], np.eye(2))
    assert not bn.bias.detach().any() and not bn.running_mean.any()


@pytest.mark.parametrize("layer, shape", BATCH_NORMS)
@pytest.mark.parametrize("momentum", [0.1, 0.7, None])
def test_running_statistics_match_numpy(layer, shape, momentum):
    bn = layer(shape[1], momentum=momentum).double()
    mean, cov = np.zeros((2, shape[1])), np.stack([np.eye(2)] * shape[1], -1)
    batch_means, batch_covs = [], []
    for seed in range(3):
        z = correlated(shape, seed)
        bn(z)
        m, v = np_batch_stats(to_np(z))
        batch_means.append(m)
        batch_covs.append(v)
        if momentum is not None:
            mean = (1 - momentum) * mean + momentum * m
            cov = (1 - momentum) * cov + momentum * v
    if momentum is None:  # cumulative moving average: the plain mean
        mean, cov = np.mean(batch_means, 0), np.mean(batch_covs, 0)
    np.testing.assert_allclose(bn.running_mean.numpy(), mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), cov, rtol=1e-10, atol=1e-12)
    assert bn.num_batches_tracked.item() == 3


@pytest.mark.parametrize("layer, shape", BATCH_NORMS)
def test_training_output_matches_numpy(layer, shape):
    bn = layer(shape[1]).double()
    randomise_affine(bn)
    z = correlated(shape)
    expected = np_batch_norm(
        to_np(z), bn.weight.detach().numpy(), bn.bias.detach().numpy()
    )
    np.testing.assert_allclose(to_np(bn(z)), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("layer, shape", BATCH_NORMS)
def test_eval_uses_running_statistics(layer, shape):
    bn = layer(shape[1], momentum=0.5).double()
    randomise_affine(bn)
    for seed in range(2):
        bn(correlated(shape, seed))
    bn.eval()
    z = correlated(shape, seed=10)
    before = copy.deepcopy(bn.state_dict())
    expected = np_batch_norm(
        to_np(z),
        bn.weight.detach().numpy(),
        bn.bias.detach().numpy(),
        bn.running_mean.numpy(),
        bn.running_var.numpy(),
    )
    np.testing.assert_allclose(to_np(bn(z)), expected, rtol=1e-9, atol=1e-9)
    for key, value in bn.state_dict().items():  # eval does not update
        torch.testing.assert_close(value, before[key], rtol=0, atol=0)


def test_affine_false_has_no_parameters():
    bn = cnn.CplxBatchNorm1d(3, affine=False).double()
    assert bn.weight is None and bn.bias is None
    assert list(bn.parameters()) == []
    z = correlated((10, 3, 4))
    np.testing.assert_allclose(to_np(bn(z)), np_batch_norm(to_np(z)), atol=1e-9)


def test_no_running_stats_uses_batch_statistics_in_eval():
    bn = cnn.CplxBatchNorm2d(3, track_running_stats=False).double().eval()
    assert bn.running_mean is None and bn.running_var is None
    assert bn.num_batches_tracked is None
    assert set(bn.state_dict()) == {"weight", "bias"}
    z = correlated((4, 3, 3, 3))
    np.testing.assert_allclose(to_np(bn(z)), np_batch_norm(to_np(z)), atol=1e-9)


def test_reset_parameters_and_running_stats():
    bn = cnn.CplxBatchNorm1d(4)
    randomise_affine(bn)
    bn(cplx.randn(8, 4))
    bn.reset_parameters()
    fresh = cnn.CplxBatchNorm1d(4)
    for key, value in fresh.state_dict().items():
        torch.testing.assert_close(bn.state_dict()[key], value, rtol=0, atol=0)


def test_factory_kwargs_and_extra_repr():
    bn = cnn.CplxBatchNorm3d(2, eps=1e-3, momentum=None, dtype=torch.float64)
    assert bn.weight.dtype == bn.running_var.dtype == torch.float64
    assert bn.num_batches_tracked.dtype == torch.long
    assert repr(bn) == (
        "CplxBatchNorm3d(2, eps=0.001, momentum=None, affine=True, "
        "track_running_stats=True)"
    )


def test_state_dict_round_trip_and_pickle():
    bn = cnn.CplxBatchNorm1d(3).double()
    randomise_affine(bn)
    bn(correlated((8, 3)))
    other = cnn.CplxBatchNorm1d(3).double()
    other.load_state_dict(bn.state_dict())
    clone = pickle.loads(pickle.dumps(bn))
    z = correlated((5, 3), seed=4)
    for m in (bn, other, clone):
        m.eval()
    torch.testing.assert_close(other(z).real, bn(z).real)
    torch.testing.assert_close(clone(z).imag, bn(z).imag)


def _without_num_batches_tracked(model, version):
    source = copy.deepcopy(model)
    source(cplx.randn(8, 3))
    state = source.state_dict()
    for key in [k for k in state if k.endswith("num_batches_tracked")]:
        del state[key]
    for meta in state._metadata.values():
        if version is None:
            meta.pop("version", None)
        else:
            meta["version"] = version
    return source, state


def test_old_checkpoint_without_num_batches_tracked_loads():
    # before version 2 (as in torch's _NormBase) the count was not saved
    model = torch.nn.Sequential(cnn.CplxBatchNorm1d(3))
    assert model.state_dict()._metadata["0"]["version"] == 2
    source, state = _without_num_batches_tracked(model, version=None)
    model.load_state_dict(state)  # strict
    assert model[0].num_batches_tracked.item() == 0
    torch.testing.assert_close(model[0].running_var, source[0].running_var)
    # a plain dict has no metadata at all
    plain = cnn.CplxBatchNorm1d(3)
    plain.load_state_dict({k[2:]: v for k, v in state.items()})
    assert plain.num_batches_tracked.item() == 0


def test_version_2_checkpoint_without_num_batches_tracked_is_missing_it():
    model = torch.nn.Sequential(cnn.CplxBatchNorm1d(3))
    _, state = _without_num_batches_tracked(model, version=2)
    with pytest.raises(RuntimeError, match="0.num_batches_tracked"):
        model.load_state_dict(state)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["0.num_batches_tracked"]


def test_gradients_reach_input_and_affine():
    bn = cnn.CplxBatchNorm1d(3)
    z = cplx.randn(6, 3, 4).requires_grad_()
    out = bn(z)
    (out.real.square().sum() + out.imag[:, 0].sum()).backward()
    assert z.real.grad is not None and z.imag.grad is not None
    assert bn.weight.grad is not None and bn.bias.grad is not None


@pytest.mark.parametrize(
    "layer, bad, match",
    [
        (cnn.CplxBatchNorm1d, (4, 3, 2, 2), r"CplxBatchNorm1d: `input` must have shape \(N, C\) or \(N, C, L\)"),
        (cnn.CplxBatchNorm2d, (4, 3, 5), r"CplxBatchNorm2d: `input` must have shape \(N, C, H, W\)"),
        (cnn.CplxBatchNorm3d, (4, 3, 5, 5), r"CplxBatchNorm3d: `input` must have shape \(N, C, D, H, W\)"),
        (cnn.CplxBatchNorm2d, (4, 2, 5, 5), r"CplxBatchNorm2d: `input` must have shape \(N, 3, \*\)"),
        (cnn.CplxBatchNorm1d, (1, 3), r"more than 1 value per channel"),
    ],
)
def test_bad_input_raises_and_leaves_module_unchanged(layer, bad, match):
    bn = layer(3)
    before = copy.deepcopy(bn.state_dict())
    with pytest.raises(ValueError, match=match):
        bn(cplx.randn(*bad))
    for key, value in bn.state_dict().items():
        torch.testing.assert_close(value, before[key], rtol=0, atol=0)


def test_real_input_raises_type_error_naming_layer():
    with pytest.raises(TypeError, match="CplxBatchNorm2d: `input` must be a Cplx"):
        cnn.CplxBatchNorm2d(3)(torch.randn(2, 3, 4, 4))


# --- layer norm --------------------------------------------------------------
@pytest.mark.parametrize("shape, k", [((4, 6), 1), ((3, 2, 8), 1), ((2, 3, 4, 5), 2)])
def test_layer_norm_matches_numpy(shape, k):
    z = correlated(shape)
    ln = cnn.CplxLayerNorm(shape[-k:]).double()
    randomise_affine(ln)
    expected = np_layer_norm(
        to_np(z), k, ln.weight.detach().numpy(), ln.bias.detach().numpy()
    )
    np.testing.assert_allclose(to_np(ln(z)), expected, rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    tail=st.lists(st.integers(1, 4), min_size=1, max_size=2),
    seed=st.integers(0, 2**16),
)
def test_layer_norm_whitens_every_sample(lead, tail, seed):
    if np.prod(tail) < 3:  # a covariance needs at least three points to be regular
        tail = [*tail[:-1], tail[-1] + 2]
    shape = (*lead, *tail)
    g = torch.Generator().manual_seed(seed)
    z = Cplx(*torch.randn(2, *shape, generator=g, dtype=torch.float64))
    out = to_np(cplx.layer_norm(z, tail, eps=0.0))
    np.testing.assert_allclose(out, np_layer_norm(to_np(z), len(tail), eps=0.0), atol=1e-7)
    for row in out.reshape(-1, int(np.prod(tail))):
        pairs = np.stack([row.real, row.imag])
        np.testing.assert_allclose(pairs.mean(1), 0, atol=1e-9)
        np.testing.assert_allclose(np.cov(pairs, bias=True), np.eye(2), atol=1e-7)


def test_layer_norm_without_affine_and_bias():
    assert cnn.CplxLayerNorm(4, elementwise_affine=False).weight is None
    ln = cnn.CplxLayerNorm(4, bias=False).double()
    assert ln.bias is None and ln.weight.shape == (2, 2, 4)
    z = correlated((3, 4))
    np.testing.assert_allclose(to_np(ln(z)), np_layer_norm(to_np(z), 1), atol=1e-9)
    assert repr(ln) == "CplxLayerNorm((4,), eps=1e-05, elementwise_affine=True)"


def test_layer_norm_bad_shape_names_layer_and_expected_shape():
    ln = cnn.CplxLayerNorm([3, 4])
    with pytest.raises(ValueError, match=r"CplxLayerNorm: `input` must have shape \(\*, 3, 4\)"):
        ln(cplx.randn(2, 4, 3))
    with pytest.raises(TypeError, match="CplxLayerNorm"):
        ln(torch.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"layer_norm: `input` must have shape \(\*, 4\)"):
        cplx.layer_norm(cplx.randn(2, 5), [4])
    with pytest.raises(ValueError, match="weight"):
        cplx.layer_norm(cplx.randn(2, 5), 5, weight=torch.ones(2, 5))


def test_meta_construction_then_to_empty_and_functional_call():
    bn = cnn.CplxBatchNorm2d(3, device="meta")
    assert bn.running_var.is_meta
    bn.to_empty(device="cpu")
    bn.reset_parameters()
    fresh = cnn.CplxBatchNorm2d(3)
    for key, value in fresh.state_dict().items():
        torch.testing.assert_close(bn.state_dict()[key], value, rtol=0, atol=0)

    # parameters swapped in by torch.func reach the output like the module's own
    params = {"weight": 2 * bn.weight.detach(), "bias": bn.bias.detach() + 1}
    z = cplx.randn(4, 3, 2, 2)
    out = torch.func.functional_call(bn, params, (z,))
    ref = cplx.batch_norm(z, None, None, params["weight"], params["bias"], training=True)
    torch.testing.assert_close(out.real, ref.real)
    torch.testing.assert_close(out.imag, ref.imag)
