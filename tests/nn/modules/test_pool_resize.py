"""Average, adaptive and modulus pooling, upsampling and flattening of complex tensors.

References: explicit loops in numpy over torch's documented windows, numpy's
``interp`` on complex arrays, and torch's native complex dtype.
"""

import copy
import io
import itertools
import math
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from ...helpers import random_native


def as_numpy(z):
    return z.real.detach().numpy() + 1j * z.imag.detach().numpy()


def windows(size, out, kernel, stride, padding):
    """torch's average pooling windows along one dimension: (start, end, divisor with pad)."""
    for o in range(out):
        start = o * stride - padding
        end = min(start + kernel, size + padding)
        yield max(start, 0), min(end, size), end - start


def np_avg_pool(z, n, kernel, stride, padding, count_include_pad, divisor, out_shape):
    out = np.empty(out_shape, dtype=z.dtype)
    spatial = z.shape[-n:]
    per_dim = [list(windows(spatial[d], out_shape[-n + d], kernel, stride, padding))
               for d in range(n)]
    for lead in itertools.product(*map(range, z.shape[:-n])):
        for pos in itertools.product(*map(range, out_shape[-n:])):
            spans = [per_dim[d][pos[d]] for d in range(n)]
            block = z[lead + tuple(slice(a, b) for a, b, _ in spans)]
            if divisor is None:
                divisor_here = (math.prod(p for _, _, p in spans) if count_include_pad
                                else block.size)
            else:
                divisor_here = divisor
            out[lead + pos] = block.sum() / divisor_here
    return out


def adaptive_spans(size, out):
    return [(o * size // out, -((-(o + 1) * size) // out)) for o in range(out)]


def np_adaptive(z, n, out_size, reduce):
    """Adaptive pooling with torch's windows; ``reduce(block)`` -> (value, flat index or None)."""
    spatial = z.shape[-n:]
    out_shape = z.shape[:-n] + (out_size,) * n
    out = np.empty(out_shape, dtype=z.dtype)
    index = np.empty(out_shape, dtype=np.int64)
    spans = [adaptive_spans(s, out_size) for s in spatial]
    for lead in itertools.product(*map(range, z.shape[:-n])):
        for pos in itertools.product(*map(range, out_shape[-n:])):
            box = [spans[d][pos[d]] for d in range(n)]
            block = z[lead + tuple(slice(a, b) for a, b in box)]
            value, local = reduce(block)
            out[lead + pos] = value
            if local is not None:
                coord = np.unravel_index(local, block.shape)
                index[lead + pos] = np.ravel_multi_index(
                    [c + a for c, (a, _) in zip(coord, box)], spatial
                )
    return out, index


AVG = {1: cnn.CplxAvgPool1d, 2: cnn.CplxAvgPool2d, 3: cnn.CplxAvgPool3d}
REAL_AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
ADAPTIVE_AVG = {1: cnn.CplxAdaptiveAvgPool1d, 2: cnn.CplxAdaptiveAvgPool2d, 3: cnn.CplxAdaptiveAvgPool3d}
ADAPTIVE_MAX = {1: cnn.CplxAdaptiveMaxPool1d, 2: cnn.CplxAdaptiveMaxPool2d, 3: cnn.CplxAdaptiveMaxPool3d}


# --- average pooling -------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    n=st.sampled_from([1, 2, 3]),
    kernel=st.integers(1, 3),
    stride=st.integers(1, 3),
    padding=st.integers(0, 1),
    ceil_mode=st.booleans(),
    count_include_pad=st.booleans(),
    divisor=st.sampled_from([None, 2]),
    batched=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_avg_pool_matches_numpy_windows(
    n, kernel, stride, padding, ceil_mode, count_include_pad, divisor, batched, seed
):
    padding = min(padding, kernel // 2)  # torch's own limit
    divisor = None if n == 1 else divisor  # avg_pool1d has no divisor_override
    lead = (2, 3) if batched else (3,)
    native = random_native(*lead, *[5 if n == 3 else 7] * n, seed=seed)
    kwargs = {} if n == 1 else {"divisor_override": divisor}
    layer = AVG[n](kernel, stride, padding, ceil_mode, count_include_pad, **kwargs)
    out = layer(cplx.from_complex(native))

    shape = REAL_AVG[n](native.real, kernel, stride, padding, ceil_mode).shape
    expected = np_avg_pool(native.numpy(), n, kernel, stride, padding, count_include_pad,
                           divisor, tuple(shape))
    np.testing.assert_allclose(as_numpy(out), expected, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.sampled_from([1, 2, 3]), out_size=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_adaptive_avg_pool_matches_numpy_windows(n, out_size, seed):
    native = random_native(2, 3, *[5 if n == 3 else 7] * n, seed=seed)
    out = ADAPTIVE_AVG[n](out_size)(cplx.from_complex(native))
    expected, _ = np_adaptive(native.numpy(), n, out_size, lambda block: (block.mean(), None))
    np.testing.assert_allclose(as_numpy(out), expected, rtol=1e-12, atol=1e-12)


# --- max pooling by modulus: values and per-plane indices ------------------------------
@settings(max_examples=30, deadline=None)
@given(n=st.sampled_from([1, 2, 3]), out_size=st.integers(1, 5), batched=st.booleans(),
       channels=st.sampled_from([3, 8]), seed=st.integers(0, 2**16))
def test_adaptive_max_pool_picks_largest_modulus_per_plane(n, out_size, batched, channels, seed):
    # 8 channels: the modulus is pooled with its channels innermost in memory
    lead = (2, channels) if batched else (channels,)
    native = random_native(*lead, *[5 if n == 3 else 7] * n, seed=seed)
    out, indices = ADAPTIVE_MAX[n](out_size, return_indices=True)(cplx.from_complex(native))

    def largest(block):
        local = int(np.argmax(np.abs(block)))
        return block.flat[local], local

    expected, expected_index = np_adaptive(native.numpy(), n, out_size, largest)
    np.testing.assert_array_equal(as_numpy(out), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_index)


MAX = {1: cnn.CplxMaxPool1d, 2: cnn.CplxMaxPool2d, 3: cnn.CplxMaxPool3d}
REAL_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
UNPOOL = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("layer", [MAX, ADAPTIVE_MAX], ids=["max_pool", "adaptive"])
def test_max_pool_indices_unpool_within_each_plane(n, layer):
    # batch x channels > 1: an index into another plane would put values in the
    # wrong sample or channel, which max_unpool reveals. On a side of 4, both
    # layers pool disjoint 2-wide windows.
    native = random_native(3, 4, *[4] * n, seed=n)
    out, indices = layer[n](2, return_indices=True)(cplx.from_complex(native))
    spatial = native.shape[-n:]
    restored = torch.complex(UNPOOL[n](out.real, indices, 2, output_size=spatial),
                             UNPOOL[n](out.imag, indices, 2, output_size=spatial))
    kept = restored != 0
    assert int(kept.sum()) == out.numel()
    assert torch.equal(restored[kept], native[kept])
    # and each is the largest modulus of its window
    torch.testing.assert_close(abs(out), REAL_MAX[n](native.abs(), 2), rtol=1e-15, atol=0)


# --- upsampling ----------------------------------------------------------------------
def np_resize_axis(a, axis, out, mode, align_corners):
    """Resize complex ``a`` along ``axis`` to ``out``, by torch's documented coordinate maps."""
    size = a.shape[axis]
    i = np.arange(out)
    if mode == "nearest":
        src = np.minimum(np.floor(i * size / out).astype(int), size - 1)
        return np.take(a, src, axis=axis)
    if align_corners:
        src = i * (size - 1) / (out - 1) if out > 1 else np.zeros(out)
    else:
        src = np.maximum((i + 0.5) * size / out - 0.5, 0)
    grid = np.arange(size)
    return np.apply_along_axis(lambda v: np.interp(src, grid, v), axis, a)


def np_resize(a, n, out, mode, align_corners):
    for axis in range(a.ndim - n, a.ndim):
        a = np_resize_axis(a, axis, out, mode, align_corners)
    return a


LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}


@settings(max_examples=30, deadline=None)
@given(n=st.sampled_from([1, 2, 3]), out=st.integers(1, 9), nearest=st.booleans(),
       align_corners=st.booleans(), seed=st.integers(0, 2**16))
def test_upsample_split_and_polar_match_numpy(n, out, nearest, align_corners, seed):
    mode = "nearest" if nearest else LINEAR[n]
    align_corners = None if nearest else align_corners
    native = random_native(2, 2, *[4] * n, seed=seed)
    z = cplx.from_complex(native)
    split = cnn.CplxUpsample(size=out, mode=mode, align_corners=align_corners)(z)
    polar = cnn.CplxUpsample(size=out, mode=mode, align_corners=align_corners, polar=True)(z)

    a = native.numpy()
    np.testing.assert_allclose(as_numpy(split), np_resize(a, n, out, mode, align_corners),
                               rtol=1e-12, atol=1e-12)
    # polar: the modulus, and the unit phasors renormalised
    modulus = np_resize(np.abs(a), n, out, mode, align_corners)
    phasor = np_resize(a / np.abs(a), n, out, mode, align_corners)
    np.testing.assert_allclose(as_numpy(polar), modulus * phasor / np.abs(phasor),
                               rtol=1e-10, atol=1e-12)


def test_upsample_polar_turns_the_short_way_round():
    # phases 3 and -3 rad lie 0.28 rad apart across pi; moduli 1 and 3
    native = torch.polar(torch.tensor([[[1.0, 3.0]]], dtype=torch.float64),
                         torch.tensor([[[3.0, -3.0]]], dtype=torch.float64))
    layer = cnn.CplxUpsample(size=3, mode="linear", align_corners=True, polar=True)
    middle = complex(layer(cplx.from_complex(native))[0, 0, 1])
    assert abs(abs(middle) - 2.0) < 1e-12
    # interpolating the angles as numbers would give 0 here
    assert abs(abs(np.angle(middle)) - math.pi) < 1e-12


def test_upsample_polar_bicubic_keeps_modulus_nonnegative_and_zero_where_undefined():
    # a spike makes bicubic undershoot below zero next to it
    real = torch.zeros(1, 1, 6, 6, dtype=torch.float64)
    real[..., 2, 2] = 5.0
    z = Cplx(real, torch.zeros_like(real))
    out = cnn.CplxUpsample(scale_factor=2, mode="bicubic", polar=True)(z)
    split = cnn.CplxUpsample(scale_factor=2, mode="bicubic")(z)
    assert (split.real < 0).any()
    # the phase of a positive real input stays 0: no sign flip from the overshoot
    assert (out.real >= 0).all() and (out.imag == 0).all()
    # zeros have no phase: the phasor of an all-zero input is zero, so is the output
    zero = cnn.CplxUpsample(size=8, mode="bilinear", polar=True)(Cplx.zeros(1, 1, 4, 4))
    assert not zero.real.any() and not zero.imag.any()


def test_upsample_polar_gradient_is_finite_on_zeros():
    # zero padding and masked inputs hold exact zeros, where the phase is undefined
    native = random_native(1, 2, 4, 4, seed=0)
    native[..., :2, :] = 0
    re, im = (part.clone().requires_grad_() for part in (native.real, native.imag))
    out = cnn.CplxUpsample(scale_factor=2, mode="bilinear", polar=True)(Cplx(re, im))
    (out.real.sum() + out.imag.sum()).backward()
    assert torch.isfinite(re.grad).all() and torch.isfinite(im.grad).all()
    # and the output is zero where it interpolates zeros only
    assert not out.real[..., :2, :].any() and not out.imag[..., :2, :].any()


def test_upsample_rejects_wrong_input():
    layer = cnn.CplxUpsample(scale_factor=2)
    with pytest.raises(ValueError, match=r"CplxUpsample: `input` must have shape \(N, C, L\)"):
        layer(cplx.randn(4, 4))
    with pytest.raises(TypeError, match="CplxUpsample: `input` must be a Cplx"):
        layer(torch.randn(1, 1, 4))


# --- flattening ----------------------------------------------------------------------
@pytest.mark.parametrize("start, end", [(1, -1), (0, 2), (2, 3)])
def test_flatten_matches_native(start, end):
    native = random_native(2, 3, 4, 5, seed=0)
    out = cnn.CplxFlatten(start, end)(cplx.from_complex(native))
    assert torch.equal(cplx.to_complex(out), native.flatten(start, end))


@pytest.mark.parametrize("dim, sizes", [(1, (3, 4)), (-1, (2, -1)), (0, (1, 2))])
def test_unflatten_matches_native(dim, sizes):
    native = random_native(2, 12, 6, seed=0)
    out = cnn.CplxUnflatten(dim, sizes)(cplx.from_complex(native))
    assert torch.equal(cplx.to_complex(out), native.unflatten(dim, sizes))


# --- every layer: errors, gradients, moves, copies, state_dict, compile, export -----
LAYERS = {
    "avg1d": (lambda: cnn.CplxAvgPool1d(3, 2, 1), (2, 3, 8)),
    "avg2d": (lambda: cnn.CplxAvgPool2d(2, count_include_pad=False, padding=1), (2, 3, 5, 5)),
    "avg3d": (lambda: cnn.CplxAvgPool3d(2, divisor_override=3), (1, 2, 4, 4, 4)),
    "adaptive_avg1d": (lambda: cnn.CplxAdaptiveAvgPool1d(3), (2, 3, 8)),
    "adaptive_avg2d": (lambda: cnn.CplxAdaptiveAvgPool2d((3, None)), (2, 3, 5, 5)),
    "adaptive_avg3d": (lambda: cnn.CplxAdaptiveAvgPool3d(2), (1, 2, 4, 4, 4)),
    "adaptive_max1d": (lambda: cnn.CplxAdaptiveMaxPool1d(3), (2, 3, 8)),
    "adaptive_max2d": (lambda: cnn.CplxAdaptiveMaxPool2d(2), (2, 3, 5, 5)),
    "adaptive_max3d": (lambda: cnn.CplxAdaptiveMaxPool3d(2), (1, 2, 4, 4, 4)),
    # 8 channels or more: the modulus is pooled with its channels innermost
    "max1d_channels": (lambda: cnn.CplxMaxPool1d(2), (2, 9, 6)),
    "adaptive_max2d_channels": (lambda: cnn.CplxAdaptiveMaxPool2d(2), (2, 8, 5, 5)),
    "upsample": (lambda: cnn.CplxUpsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
    "upsample_polar": (lambda: cnn.CplxUpsample(size=(5, 4), mode="bilinear",
                                                align_corners=True, polar=True), (1, 2, 3, 3)),
    "flatten": (lambda: cnn.CplxFlatten(), (2, 3, 4)),
    "unflatten": (lambda: cnn.CplxUnflatten(1, (2, 2)), (2, 4, 3)),
}


def run(layer, z):
    out = layer(z)
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", LAYERS)
def test_layer_is_complex_to_complex_and_names_itself_in_errors(name):
    make, _ = LAYERS[name]
    layer = make()
    assert isinstance(layer, cnn.CplxToCplx)
    with pytest.raises(TypeError, match=rf"{type(layer).__name__}: `input` must be a Cplx"):
        layer(torch.randn(2, 3, 4, 4))


@pytest.mark.parametrize("name", [n for n in LAYERS if "avg" in n or "max" in n])
def test_pooling_rejects_wrong_dimensions(name):
    make, shape = LAYERS[name]
    layer = make()
    with pytest.raises(ValueError, match=rf"{type(layer).__name__}: `input` must have shape"):
        layer(cplx.randn(*shape, 2))


@pytest.mark.parametrize("name", LAYERS)
def test_layer_gradcheck(name):
    make, shape = LAYERS[name]
    layer = make()
    g = torch.Generator().manual_seed(0)
    parts = [torch.randn(*shape, dtype=torch.float64, generator=g, requires_grad=True)
             for _ in range(2)]

    def f(re, im):
        out = run(layer, Cplx(re, im))
        return out.real, out.imag

    assert torch.autograd.gradcheck(f, parts, fast_mode=True)


@pytest.mark.parametrize("name", LAYERS)
def test_layer_moves_copies_pickles_and_round_trips_state(name):
    make, shape = LAYERS[name]
    layer = make()
    z = cplx.randn(*shape, dtype=torch.float64)
    expected = run(layer, z)
    for other in (layer.to(torch.float64), copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        out = run(other, z)
        assert torch.equal(out.real, expected.real) and torch.equal(out.imag, expected.imag)
    fresh = make()
    fresh.load_state_dict(layer.state_dict())
    assert repr(fresh) == repr(layer)
    buffer = io.BytesIO()
    torch.save(layer, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    assert torch.equal(run(loaded, z).real, expected.real)


class Pipeline(torch.nn.Module):
    """Real (N, 2, C, H, W) in, real out: every layer kind of this file once."""

    def __init__(self):
        super().__init__()
        self.avg = cnn.CplxAvgPool2d(2, padding=1, count_include_pad=False)
        # ONNX takes adaptive pooling only to sizes that divide the input's
        self.adaptive_avg = cnn.CplxAdaptiveAvgPool2d(3)
        self.up = cnn.CplxUpsample(scale_factor=2, mode="bilinear", polar=True)
        self.adaptive_max = cnn.CplxAdaptiveMaxPool2d(3)
        self.flatten = cnn.CplxFlatten()
        self.unflatten = cnn.CplxUnflatten(1, (3, -1))

    def forward(self, x):
        z = Cplx(x[:, 0], x[:, 1])
        z = self.adaptive_max(self.up(self.adaptive_avg(self.avg(z))))
        z = self.unflatten(self.flatten(z))
        return torch.stack([z.real, z.imag], 1)


@pytest.mark.inductor
def test_pipeline_compiles_fullgraph():
    model = Pipeline()
    x = torch.randn(2, 2, 3, 10, 10)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x), model(x))


@pytest.mark.onnx
def test_pipeline_exports_to_onnx():
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    model = Pipeline()
    x = torch.randn(2, 2, 3, 10, 10)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), buffer, dynamo=False)
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    (output,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    torch.testing.assert_close(torch.from_numpy(output), model(x), rtol=1e-5, atol=1e-5)
