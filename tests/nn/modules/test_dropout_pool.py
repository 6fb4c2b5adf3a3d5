"""Complex dropout (one mask for both parts) and max pooling by modulus."""

import itertools
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx


def nonzero_cplx(*shape, seed=0):
    """Complex values with both parts bounded away from zero."""
    g = torch.Generator().manual_seed(seed)
    re, im = torch.rand(2, *shape, generator=g, dtype=torch.float64) + 0.5
    return Cplx(re, -im)


# --- element-wise dropout ---------------------------------------------------
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_mask_shared_and_scaled(p):
    torch.manual_seed(0)
    z = nonzero_cplx(40, 500)
    out = cplx.dropout(z, p, training=True)
    dropped_re, dropped_im = out.real == 0, out.imag == 0
    assert torch.equal(dropped_re, dropped_im)
    kept = ~dropped_re
    torch.testing.assert_close(out.real[kept], z.real[kept] / (1 - p))
    torch.testing.assert_close(out.imag[kept], z.imag[kept] / (1 - p))

    # the dropped count is Binomial(n, p): allow five standard deviations
    n = z.numel()
    assert abs(dropped_re.sum().item() - n * p) < 5 * math.sqrt(n * p * (1 - p))


def test_dropout_eval_and_edge_probabilities():
    z = nonzero_cplx(3, 4)
    out = cplx.dropout(z, 0.5, training=False)
    assert torch.equal(out.real, z.real) and torch.equal(out.imag, z.imag)
    out = cplx.dropout(z, 0.0)
    assert torch.equal(out.real, z.real) and torch.equal(out.imag, z.imag)
    out = cplx.dropout(z, 1.0)
    assert not out.real.any() and not out.imag.any()


def test_dropout_gradient_is_the_shared_mask():
    torch.manual_seed(1)
    z = nonzero_cplx(8, 16).requires_grad_()
    out = cplx.dropout(z, 0.3)
    (out.real + out.imag).sum().backward()
    mask = (out.real != 0).double() / 0.7
    torch.testing.assert_close(z.real.grad, mask)
    torch.testing.assert_close(z.imag.grad, mask)


def test_dropout_inplace_writes_into_input():
    torch.manual_seed(2)
    z = nonzero_cplx(10, 10)
    re, im = z.real, z.imag
    out = cnn.CplxDropout(0.5, inplace=True)(z)
    assert out.real.data_ptr() == re.data_ptr() and out.imag.data_ptr() == im.data_ptr()
    assert torch.equal(re == 0, im == 0) and (re == 0).any()


def test_dropout_module_train_eval_and_repr():
    layer = cnn.CplxDropout(0.25)
    assert isinstance(layer, torch.nn.Dropout)
    assert repr(layer) == "CplxDropout(p=0.25, inplace=False)"
    torch.manual_seed(3)
    z = nonzero_cplx(20, 20)
    out = layer(z)
    assert torch.equal(out.real == 0, out.imag == 0) and (out.real == 0).any()
    layer.eval()
    out = layer(z)
    assert torch.equal(out.real, z.real) and torch.equal(out.imag, z.imag)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_rejects_bad_probability(p):
    with pytest.raises(ValueError, match="p"):
        cnn.CplxDropout(p)
    with pytest.raises(ValueError, match="`p`"):
        cplx.dropout(cplx.randn(3), p)


def test_dropout_rejects_real_input():
    with pytest.raises(TypeError, match="CplxDropout: `input` must be a Cplx"):
        cnn.CplxDropout()(torch.randn(3))
    with pytest.raises(TypeError, match="dropout2d"):
        cplx.dropout2d(torch.randn(2, 3, 4, 4))


# --- channel dropout ----------------------------------------------------------
CHANNEL = [
    (cnn.CplxDropout1d, cplx.dropout1d, 1),
    (cnn.CplxDropout2d, cplx.dropout2d, 2),
    (cnn.CplxDropout3d, cplx.dropout3d, 3),
]


@pytest.mark.parametrize("layer, function, n", CHANNEL)
@pytest.mark.parametrize("batched", [True, False])
def test_channel_dropout_drops_whole_channels_in_both_parts(layer, function, n, batched):
    torch.manual_seed(4)
    p = 0.4
    lead = (6, 50) if batched else (300,)
    z = nonzero_cplx(*lead, *[3] * n)
    for out in (function(z, p), layer(p)(z)):
        per_channel = (out.real == 0).flatten(len(lead))
        assert torch.equal(out.real == 0, out.imag == 0)
        dropped = per_channel.all(-1)
        # within a channel, all zero or all kept (and scaled)
        assert torch.equal(per_channel.any(-1), dropped)
        kept = ~(out.real == 0)
        torch.testing.assert_close(out.imag[kept], z.imag[kept] / (1 - p))
        n_channels = dropped.numel()
        tol = 5 * math.sqrt(n_channels * p * (1 - p))
        assert abs(dropped.sum().item() - n_channels * p) < tol


@pytest.mark.parametrize("layer, function, n", CHANNEL)
def test_channel_dropout_rejects_wrong_dims(layer, function, n):
    bad = cplx.randn(*[2] * (n + 3))
    with pytest.raises(ValueError, match=rf"{layer.__name__}: `input` must have shape \(N, C"):
        layer()(bad)
    with pytest.raises(ValueError, match=f"dropout{n}d"):
        function(bad)


def test_channel_dropout_eval_is_identity():
    layer = cnn.CplxDropout2d(0.9).eval()
    z = nonzero_cplx(2, 3, 4, 4)
    out = layer(z)
    assert torch.equal(out.real, z.real) and torch.equal(out.imag, z.imag)


# --- max pooling by modulus ----------------------------------------------------
def np_max_pool(z, n, kernel, stride, padding, dilation, out_shape):
    """Loop over windows of complex ``z`` (N, C, *spatial); pick the largest |z|."""
    spatial = z.shape[-n:]
    out = np.empty(out_shape, dtype=z.dtype)
    index = np.empty(out_shape, dtype=np.int64)
    for lead in itertools.product(*map(range, z.shape[:-n])):
        for pos in itertools.product(*map(range, out_shape[-n:])):
            best, best_flat = None, None
            for offset in itertools.product(*map(range, kernel)):
                coord = [
                    pos[d] * stride[d] - padding[d] + offset[d] * dilation[d]
                    for d in range(n)
                ]
                if not all(0 <= c < s for c, s in zip(coord, spatial)):
                    continue
                value = z[lead + tuple(coord)]
                if best is None or abs(value) > abs(best):
                    best = value
                    best_flat = np.ravel_multi_index(coord, spatial)
            out[lead + pos] = best
            index[lead + pos] = best_flat
    return out, index


POOLS = {1: cnn.CplxMaxPool1d, 2: cnn.CplxMaxPool2d, 3: cnn.CplxMaxPool3d}
REAL_POOLS = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}


@settings(max_examples=40, deadline=None)
@given(
    n=st.sampled_from([1, 2, 3]),
    kernel=st.integers(1, 3),
    stride=st.integers(1, 3),
    dilation=st.integers(1, 2),
    padding=st.integers(0, 1),
    ceil_mode=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_max_pool_matches_numpy_selection_by_modulus(
    n, kernel, stride, dilation, padding, ceil_mode, seed
):
    padding = min(padding, kernel // 2)  # torch's own limit
    size = 7 if n < 3 else 5
    g = torch.Generator().manual_seed(seed)
    native = torch.randn(2, 3, *[size] * n, dtype=torch.complex128, generator=g)
    layer = POOLS[n](kernel, stride, padding, dilation, True, ceil_mode)
    out, indices = layer(cplx.from_complex(native))

    # output shape from torch's real pooling; values from an explicit loop
    shape = REAL_POOLS[n](native.abs(), kernel, stride, padding, dilation, ceil_mode).shape
    args = ((kernel,) * n, (stride,) * n, (padding,) * n, (dilation,) * n)
    expected, expected_index = np_max_pool(native.numpy(), n, *args, tuple(shape))
    np.testing.assert_array_equal(out.real.numpy() + 1j * out.imag.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_index)


def test_max_pool_module_defaults_repr_and_gradient():
    layer = cnn.CplxMaxPool2d(2)
    assert layer.stride == 2
    assert repr(layer) == (
        "CplxMaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    z = cplx.randn(1, 2, 4, 4, dtype=torch.float64).requires_grad_()
    out = layer(z)
    (out.real.sum() + out.imag.sum()).backward()
    # only the selected element of each window receives a gradient
    assert z.real.grad.sum().item() == out.numel()
    assert torch.equal(z.real.grad, z.imag.grad)


def test_max_pool_rejects_real_input():
    with pytest.raises(TypeError, match="CplxMaxPool1d: `input` must be a Cplx"):
        cnn.CplxMaxPool1d(2)(torch.randn(1, 2, 8))


@pytest.mark.parametrize(
    "layer",
    [
        cnn.CplxBatchNorm1d(2),
        cnn.CplxBatchNorm2d(2),
        cnn.CplxBatchNorm3d(2),
        cnn.CplxLayerNorm(2),
        cnn.CplxDropout(),
        cnn.CplxDropout1d(),
        cnn.CplxDropout2d(),
        cnn.CplxDropout3d(),
        cnn.CplxMaxPool1d(2),
        cnn.CplxMaxPool2d(2),
        cnn.CplxMaxPool3d(2),
    ],
    ids=type,
)
def test_layers_are_complex_to_complex(layer):
    assert isinstance(layer, cnn.CplxToCplx)
