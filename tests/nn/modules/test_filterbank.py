"""Gabor/Morlet kernels and filterbank layers, spectral pooling: against numpy."""

import copy

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import cplxmodule.nn as nn
from cplxmodule import cplx
from cplxmodule.cplx import Cplx


def numpy_kernel(kind, center, width, kernel_size, sample_rate=None):
    """The filters of the docstrings' formulas, on the centred grid, in numpy."""
    t = np.arange(kernel_size) - (kernel_size - 1) / 2
    if sample_rate is not None:
        t = t / sample_rate
    f, s = np.asarray(center)[:, None], np.asarray(width)[:, None]
    wave = np.exp(2j * np.pi * f * t)
    if kind == "morlet":
        wave = wave - np.exp(-2 * np.pi**2 * f**2 * s**2)
    return np.exp(-(t**2) / (2 * s**2)) * wave


def as_numpy(z):
    return z.real.detach().numpy() + 1j * z.imag.detach().numpy()


KERNELS = {"gabor": cplx.gabor_kernel, "morlet": cplx.morlet_kernel}
LAYERS = {"gabor": nn.CplxGaborConv1d, "morlet": nn.CplxMorletConv1d}


@pytest.mark.parametrize("kind", KERNELS)
@settings(max_examples=20, deadline=None)
@given(
    kernel_size=st.integers(1, 40),
    sample_rate=st.sampled_from([None, 8000.0, 3]),
    seed=st.integers(0, 2**16),
)
def test_kernel_matches_numpy(kind, kernel_size, sample_rate, seed):
    rng = np.random.default_rng(seed)
    rate = 1.0 if sample_rate is None else sample_rate
    center = rng.uniform(0, rate / 2, size=5)
    width = rng.uniform(0.5, 10, size=5) / rate
    got = KERNELS[kind](
        torch.tensor(center), torch.tensor(width), kernel_size, sample_rate=sample_rate
    )
    assert got.shape == (5, kernel_size) and got.dtype == torch.float64
    expected = numpy_kernel(kind, center, width, kernel_size, sample_rate)
    np.testing.assert_allclose(as_numpy(got), expected, rtol=1e-12, atol=1e-12)


def test_morlet_has_zero_mean_where_gabor_does_not():
    center = torch.tensor([0.02, 0.05], dtype=torch.float64)
    width = torch.tensor([6.0, 4.0], dtype=torch.float64)
    morlet = as_numpy(cplx.morlet_kernel(center, width, 129))
    gabor = as_numpy(cplx.gabor_kernel(center, width, 129))
    assert np.abs(morlet.sum(-1)).max() < 1e-6
    assert np.abs(gabor.sum(-1)).min() > 1


def test_kernel_gradcheck():
    center = torch.tensor([0.1, 0.3], dtype=torch.float64, requires_grad=True)
    width = torch.tensor([2.0, 1.5], dtype=torch.float64, requires_grad=True)
    for kernel in KERNELS.values():

        def parts(c, w):
            z = kernel(c, w, 7, sample_rate=2.0)
            return z.real, z.imag

        assert torch.autograd.gradcheck(parts, (center, width))


def numpy_conv1d(x, w, b, stride, padding, dilation, groups):
    """Correlation of the docstring, summed per group, from numpy's convolution."""
    x = np.pad(x, [(0, 0), (0, 0), (padding, padding)])
    out_channels, per_group, k = w.shape
    dilated = np.zeros((out_channels, per_group, dilation * (k - 1) + 1), complex)
    dilated[..., ::dilation] = w
    out_per_group = out_channels // groups
    rows = []
    for n in range(x.shape[0]):
        row = []
        for c in range(out_channels):
            g = c // out_per_group
            acc = sum(
                np.convolve(x[n, g * per_group + j], dilated[c, j, ::-1], mode="valid")
                for j in range(per_group)
            )
            row.append(acc[::stride] + (0 if b is None else b[c]))
        rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize(
    "in_channels, out_channels, kwargs",
    [
        (1, 6, dict(stride=3, sample_rate=16000.0)),
        (4, 6, dict(groups=2, padding=2, dilation=2, bias=True)),
        (2, 3, dict(stride=2, padding=4)),
    ],
)
def test_layer_matches_numpy_convolution(kind, in_channels, out_channels, kwargs):
    torch.manual_seed(0)
    layer = LAYERS[kind](in_channels, out_channels, 11, dtype=torch.float64, **kwargs)
    with torch.no_grad():
        layer.center.add_(torch.rand(out_channels, dtype=torch.float64) * layer.center)
        layer.width.mul_(0.5 + torch.rand(out_channels, dtype=torch.float64))
        if layer.bias is not None:
            layer.bias.real.normal_()
            layer.bias.imag.normal_()
    x = cplx.randn(2, in_channels, 30, dtype=torch.float64)
    kernel = numpy_kernel(
        kind,
        layer.center.detach().numpy(),
        layer.width.detach().numpy(),
        11,
        kwargs.get("sample_rate"),
    )
    # the layer correlates with the conjugate filter (its passband is +f_c)
    w = np.repeat(np.conj(kernel)[:, None], in_channels // kwargs.get("groups", 1), axis=1)
    b = None if layer.bias is None else as_numpy(Cplx(layer.bias.real, layer.bias.imag))
    expected = numpy_conv1d(
        as_numpy(x),
        w,
        b,
        kwargs.get("stride", 1),
        kwargs.get("padding", 0),
        kwargs.get("dilation", 1),
        kwargs.get("groups", 1),
    )
    np.testing.assert_allclose(as_numpy(layer(x)), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", LAYERS)
def test_layer_gradcheck_wrt_center_and_width(kind):
    layer = LAYERS[kind](2, 3, 5, stride=2, dtype=torch.float64)
    x = cplx.randn(1, 2, 9, dtype=torch.float64)

    center = layer.center.detach().clone().requires_grad_()
    width = layer.width.detach().clone().requires_grad_()
    assert torch.autograd.gradcheck(
        lambda c, w: torch.func.functional_call(layer, {"center": c, "width": w}, (x,)).real,
        (center, width),
    )
    assert torch.autograd.gradcheck(
        lambda c, w: torch.func.functional_call(layer, {"center": c, "width": w}, (x,)).imag,
        (center, width),
    )


@pytest.mark.parametrize("kind", LAYERS)
def test_layer_to_deepcopy_state_dict(kind):
    layer = LAYERS[kind](2, 4, 7, bias=True, sample_rate=100.0)
    with torch.no_grad():
        layer.center.mul_(1.3)
        layer.bias.real.fill_(0.5)
    assert set(layer.state_dict()) == {"center", "width", "bias.real", "bias.imag"}
    x = cplx.randn(3, 2, 20)
    expected = layer(x)

    clone = copy.deepcopy(layer)
    assert clone.center is not layer.center
    assert torch.equal(clone(x).real, expected.real)

    fresh = LAYERS[kind](2, 4, 7, bias=True, sample_rate=100.0)
    fresh.load_state_dict(layer.state_dict())
    assert torch.equal(fresh(x).imag, expected.imag)

    double = layer.to(torch.float64)
    assert double.weight.dtype == torch.float64
    np.testing.assert_allclose(
        as_numpy(double(x.to(torch.float64))), as_numpy(expected), rtol=1e-4, atol=1e-5
    )
    with nn.cached(double):
        cached = double(x.to(torch.float64))
    np.testing.assert_allclose(as_numpy(cached), as_numpy(double(x.to(torch.float64))))


def test_initial_centres_spread_over_the_band():
    layer = nn.CplxGaborConv1d(1, 4, 101, sample_rate=8000.0)
    np.testing.assert_allclose(layer.center.detach().numpy(), [500, 1500, 2500, 3500])
    # the widths: the smaller of 1 / (pi * 1000 Hz) and a sixth of 101 samples
    np.testing.assert_allclose(layer.width.detach().numpy(), 1 / (np.pi * 1000), rtol=1e-6)
    narrow = nn.CplxGaborConv1d(1, 4, 13, sample_rate=8000.0)
    np.testing.assert_allclose(narrow.width.detach().numpy(), 13 / 6 / 8000, rtol=1e-6)


def numpy_spectral_pool(x, output_size):
    """Keep the bins -(M // 2) .. M - M // 2 - 1 of each axis, by explicit index."""
    axes = tuple(range(-len(output_size), 0))
    spectrum = np.fft.fftn(x, axes=axes) / np.prod([x.shape[a] for a in axes])
    for axis, m in zip(axes, output_size):
        bins = np.arange(-(m // 2), m - m // 2)
        # bin k of the size-m spectrum sits at index k mod m, as numpy lays it out
        picked = np.take(spectrum, bins % spectrum.shape[axis], axis=axis)
        spectrum = np.zeros_like(picked)
        index = [slice(None)] * spectrum.ndim
        index[axis] = bins % m
        spectrum[tuple(index)] = picked
    return np.fft.ifftn(spectrum, axes=axes) * np.prod(output_size)


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 12), st.integers(0, 6)), min_size=1, max_size=2),
    seed=st.integers(0, 2**16),
)
def test_spectral_pool_matches_numpy(sizes, seed):
    torch.manual_seed(seed)
    n = len(sizes)
    spatial = tuple(m + extra for m, extra in sizes)
    output_size = tuple(m for m, _ in sizes)
    x = cplx.randn(2, 3, *spatial, dtype=torch.float64)
    pool = cplx.spectral_pool1d if n == 1 else cplx.spectral_pool2d
    got = pool(x, output_size)
    assert got.shape == (2, 3, *output_size)
    np.testing.assert_allclose(
        as_numpy(got), numpy_spectral_pool(as_numpy(x), output_size), rtol=1e-10, atol=1e-12
    )


def test_spectral_pool_keeps_a_constant_and_a_band_limited_signal():
    constant = Cplx(torch.full((1, 10, 9), 2.5, dtype=torch.float64))
    y = cplx.spectral_pool2d(constant, (5, 4))
    np.testing.assert_allclose(as_numpy(y), 2.5, atol=1e-12)
    # a tone of 2 cycles per window, pooled from 16 to 8 samples, is the same tone
    t = torch.arange(16, dtype=torch.float64)
    tone = Cplx(torch.cos(2 * np.pi * 2 * t / 16), torch.sin(2 * np.pi * 2 * t / 16))
    expected = np.exp(2j * np.pi * 2 * np.arange(8) / 8)
    np.testing.assert_allclose(as_numpy(cplx.spectral_pool1d(tone, 8)), expected, atol=1e-12)


def test_spectral_pool_gradcheck():
    x = cplx.randn(2, 5, 6, dtype=torch.float64)
    re, im = x.real.requires_grad_(), x.imag.requires_grad_()

    def parts(re, im):
        y = cplx.spectral_pool2d(Cplx(re, im), (3, 4))
        return y.real, y.imag

    assert torch.autograd.gradcheck(parts, (re, im))


@pytest.mark.parametrize(
    "layer, shape_in, sizes",
    [
        (nn.CplxSpectralPool1d(4), (2, 3, 9), (4,)),
        (nn.CplxSpectralPool2d((3, 5)), (3, 6, 6), (3, 5)),
    ],
)
def test_spectral_pool_layer(layer, shape_in, sizes):
    x = cplx.randn(*shape_in, dtype=torch.float64)
    expected = numpy_spectral_pool(as_numpy(x), sizes)
    shape_out = shape_in[: -len(sizes)] + sizes
    for candidate in (layer, copy.deepcopy(layer), layer.to(torch.float64)):
        y = candidate(x)
        assert y.shape == shape_out
        np.testing.assert_allclose(as_numpy(y), expected, atol=1e-12)
    assert layer.state_dict() == {}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cplx.spectral_pool2d(cplx.randn(1, 4, 4), (5, 2)), "`output_size` must"),
        (lambda: cplx.spectral_pool1d(cplx.randn(1, 4), 0), "`output_size` must"),
        (lambda: cplx.spectral_pool2d(cplx.randn(4), 2), "`input` must have at least 2"),
        (lambda: cplx.spectral_pool1d(torch.randn(4), 2), "`input` must be a Cplx"),
        (lambda: cplx.gabor_kernel(torch.ones(2), torch.ones(3), 5), "`width` must have"),
        (lambda: cplx.gabor_kernel(torch.ones(2), torch.ones(2), 0), "`kernel_size` must"),
        (lambda: cplx.morlet_kernel(1.0, torch.ones(()), 5), "`center` must be a real"),
        (
            lambda: cplx.gabor_kernel(torch.ones(1), torch.ones(1), 3, sample_rate=-1),
            "`sample_rate` must",
        ),
        (lambda: nn.CplxGaborConv1d(1, 2, 3, sample_rate=0), "`sample_rate` must"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_bad_input_dtype_leaves_layer_unchanged():
    layer = nn.CplxMorletConv1d(1, 2, 3)
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    with pytest.raises(TypeError, match="CplxMorletConv1d: `input` must have the dtype"):
        layer(cplx.randn(1, 1, 8, dtype=torch.float64))
    with pytest.raises(TypeError, match="CplxMorletConv1d: `input` must be a Cplx"):
        layer(torch.randn(1, 1, 8))
    assert all(torch.equal(v, before[k]) for k, v in layer.state_dict().items())
