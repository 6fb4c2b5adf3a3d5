"""Tests of cplxmodule.utils spectral helpers against scipy, numpy and known powers."""

import itertools

import numpy
import pytest
import scipy.signal
import torch

from cplxmodule.cplx import Cplx
from cplxmodule.utils import acpr_calc, bandwidth_power, fftshift, pwelch


def signal(shape, complex_, seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x


scipy_welch = scipy.signal.welch


# pwelch against scipy.signal.welch
WELCH_CASES = [
    # nperseg, n_overlap, window, scaling, detrend, average, nfft
    (64, None, "hann", "density", False, "mean", None),
    (64, 0, "hamming", "spectrum", "constant", "mean", None),
    (33, 10, ("kaiser", 6.0), "density", "linear", "mean", None),
    (32, 31, "boxcar", "spectrum", False, "median", None),
    (40, 20, "blackman", "density", "constant", "median", 64),
    (16, 4, "hann", "spectrum", "linear", "mean", 37),
]


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("case", WELCH_CASES)
def test_pwelch_matches_scipy(case, complex_):
    nperseg, n_overlap, window, scaling, detrend, average, nfft = case
    x = signal((2, 3, 500), complex_)
    sides = [False] if complex_ else [True, False]
    for onesided in sides:
        common = dict(
            fs=3.0,
            window=window,
            nperseg=nperseg,
            nfft=nfft,
            detrend=detrend,
            return_onesided=onesided,
            scaling=scaling,
            average=average,
        )
        f_ref, p_ref = scipy_welch(x, noverlap=n_overlap, **common)
        f, p = pwelch(torch.from_numpy(x), n_overlap=n_overlap, **common)
        assert p.dtype == torch.float64 and p.shape == p_ref.shape
        numpy.testing.assert_allclose(f.numpy(), f_ref, rtol=1e-12, atol=1e-12)
        numpy.testing.assert_allclose(p.numpy(), p_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_pwelch_default_sides_match_scipy(complex_):
    x = signal(300, complex_)
    # scipy's default is one-sided (it switches to two-sided for complex
    # input with a warning); ours is one-sided for real, two-sided for complex
    f_ref, p_ref = scipy_welch(
        x, nperseg=50, detrend=False, return_onesided=not complex_
    )
    f, p = pwelch(torch.from_numpy(x), nperseg=50)
    numpy.testing.assert_allclose(f.numpy(), f_ref)
    numpy.testing.assert_allclose(p.numpy(), p_ref, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("dim", [0, 1, -2])
def test_pwelch_along_other_dims_matches_scipy(dim):
    x = signal((120, 130, 2), complex_=True)
    f_ref, p_ref = scipy_welch(
        x, axis=dim, nperseg=32, detrend=False, return_onesided=False
    )
    f, p = pwelch(torch.from_numpy(x), dim, nperseg=32)
    assert p.shape == p_ref.shape
    numpy.testing.assert_allclose(p.numpy(), p_ref, rtol=1e-9, atol=1e-15)


def test_pwelch_float32_and_cplx_input():
    x = signal((4, 256), complex_=True)
    _, p_ref = scipy_welch(x, nperseg=64, detrend=False, return_onesided=False)
    z = torch.from_numpy(x).to(torch.complex64)
    _, p_native = pwelch(z, nperseg=64)
    _, p_cplx = pwelch(Cplx(z.real.contiguous(), z.imag.contiguous()), nperseg=64)
    assert p_native.dtype == p_cplx.dtype == torch.float32
    numpy.testing.assert_allclose(p_native.numpy(), p_ref, rtol=1e-4, atol=1e-6)
    numpy.testing.assert_allclose(p_cplx.numpy(), p_ref, rtol=1e-4, atol=1e-6)


def test_pwelch_window_array_is_used_as_given():
    # the named window is scipy's periodic one, i.e. torch's periodic window
    x = torch.from_numpy(signal((2, 400), complex_=True))
    window = torch.hann_window(50, periodic=True, dtype=torch.float64)
    f_name, p_name = pwelch(x, window="hann", nperseg=50)
    f_array, p_array = pwelch(x, window=window)
    assert torch.allclose(p_array, p_name, rtol=1e-12, atol=0)
    _, p_ref = scipy_welch(
        x.numpy(), window=window.numpy(), detrend=False, return_onesided=False
    )
    numpy.testing.assert_allclose(p_array.numpy(), p_ref, rtol=1e-9)


def test_pwelch_density_integrates_to_signal_power():
    # boxcar, no overlap, no padding: Parseval per segment, exactly
    x = signal((3, 512), complex_=True)
    f, p = pwelch(torch.from_numpy(x), window="boxcar", nperseg=64, n_overlap=0, fs=8.0)
    power = (p * 8.0 / 64).sum(dim=-1)
    numpy.testing.assert_allclose(
        power.numpy(), (abs(x) ** 2).mean(axis=-1), rtol=1e-12
    )


def test_pwelch_is_differentiable():
    x = torch.randn(2, 40, dtype=torch.complex128, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda z: pwelch(z, nperseg=16, detrend="linear")[1], (x,)
    )


def test_pwelch_gradient_reaches_cplx_parts():
    real = torch.randn(2, 64, dtype=torch.float64, requires_grad=True)
    imag = torch.randn(2, 64, dtype=torch.float64, requires_grad=True)
    _, p = pwelch(Cplx(real, imag), window="boxcar", nperseg=16, n_overlap=0)
    p.sum().backward()
    # boxcar, no overlap, fs = 1: sum(p) is sum |x|^2 over 4 segments, / 4
    torch.testing.assert_close(real.grad, 2 * real.detach() / 4)
    torch.testing.assert_close(imag.grad, 2 * imag.detach() / 4)


def test_pwelch_default_nperseg_is_scipy_default():
    x = signal(1000, complex_=False)
    f_ref, p_ref = scipy_welch(x, detrend=False)  # nperseg=256
    f, p = pwelch(torch.from_numpy(x))
    numpy.testing.assert_allclose(p.numpy(), p_ref, rtol=1e-9)
    # shorter signals use their whole length
    f, p = pwelch(torch.from_numpy(x[:100]))
    assert len(f) == 51


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(nperseg=600), ValueError, "`nperseg`"),
        (dict(window=torch.ones(10), nperseg=12), ValueError, "`nperseg`"),
        (dict(window=torch.ones(2, 5)), ValueError, "`window`"),
        (dict(nperseg=32, n_overlap=32), ValueError, "`n_overlap`"),
        (dict(nperseg=32, n_overlap=-1), ValueError, "`n_overlap`"),
        (dict(nperseg=32, nfft=16), ValueError, "`nfft`"),
        (dict(fs=0.0), ValueError, "`fs`"),
        (dict(scaling="psd"), ValueError, "`scaling`"),
        (dict(average="max"), ValueError, "`average`"),
        (dict(detrend="cubic"), ValueError, "`detrend`"),
        (dict(dim=2), IndexError, "`dim`"),
        (dict(nperseg=32.0), TypeError, "`nperseg`"),
        (dict(return_onesided=True), ValueError, "`return_onesided`"),
    ],
)
def test_pwelch_errors_name_the_argument(kwargs, error, name):
    x = torch.randn(2, 500, dtype=torch.complex64)
    with pytest.raises(error, match=f"^pwelch: {name}"):
        pwelch(x, **kwargs)


def test_pwelch_rejects_non_tensors():
    with pytest.raises(TypeError, match="^pwelch: `x`"):
        pwelch(numpy.zeros(100))


# fftshift against numpy
@pytest.mark.parametrize(
    "shape, dim",
    [
        ((7,), -1),
        ((8,), 0),
        ((3, 5, 4), 1),
        ((3, 5, 4), (0, 2)),
        ((3, 5, 4), None),
        ((4, 6), [-1, 0]),
    ],
)
def test_fftshift_matches_numpy(shape, dim):
    x = torch.randn(shape)
    axes = tuple(dim) if isinstance(dim, list) else dim
    numpy.testing.assert_array_equal(
        fftshift(x, dim).numpy(), numpy.fft.fftshift(x.numpy(), axes)
    )


def test_fftshift_of_cplx_and_frequencies():
    z = torch.randn(3, 6, dtype=torch.complex128)
    shifted = fftshift(Cplx(z.real, z.imag))
    expected = numpy.fft.fftshift(z.numpy(), axes=-1)
    numpy.testing.assert_array_equal(shifted.real.numpy(), expected.real)
    numpy.testing.assert_array_equal(shifted.imag.numpy(), expected.imag)
    f = fftshift(torch.fft.fftfreq(9))
    assert torch.all(f[1:] > f[:-1])


def test_fftshift_errors():
    with pytest.raises(IndexError, match="^fftshift: `dim`"):
        fftshift(torch.randn(4), dim=1)
    with pytest.raises(TypeError, match="^fftshift: `x`"):
        fftshift(numpy.zeros(4))


# bandwidth_power and acpr_calc on signals of known power
def tones(freqs, amps, n, seed=0):
    """Sum of complex tones with random phases, built with numpy."""
    rng = numpy.random.default_rng(seed)
    t = numpy.arange(n)
    phases = rng.uniform(0, 2 * numpy.pi, len(freqs))
    return sum(
        a * numpy.exp(1j * (2 * numpy.pi * f * t + p))
        for f, a, p in zip(freqs, amps, phases)
    )


def db(power):
    return 10 * numpy.log10(power)


def test_bandwidth_power_of_tones():
    fs = 1000.0
    freqs, amps = [-310.3, 50.0, 222.7], [0.3, 2.0, 1.0]
    x = tones(numpy.asarray(freqs) / fs, amps, 2048)
    bands = [(f - 20, f + 20) for f in freqs] + [(400, 450)]
    f, p, power = bandwidth_power(torch.from_numpy(x), fs, bands)
    assert power.shape == (4,)
    numpy.testing.assert_allclose(power[:3].numpy(), db(numpy.square(amps)), atol=0.01)
    assert power[3] < db(min(amps) ** 2) - 40  # nothing but leakage there
    # frequencies are fft-shifted, the spectrum with them
    assert torch.all(f[1:] > f[:-1]) and f[0] == -fs / 2
    assert f[p.argmax()].item() == pytest.approx(50.0, abs=fs / 2048)


def band_limited_noise(lo, hi, n, rng):
    """Complex white noise with every DFT bin outside ``(lo, hi)`` cycles/sample removed."""
    spectrum = numpy.fft.fft(rng.standard_normal(n) + 1j * rng.standard_normal(n))
    f = numpy.fft.fftfreq(n)
    spectrum[(f <= lo) | (f >= hi)] = 0
    return numpy.fft.ifft(spectrum)


def test_bandwidth_power_of_band_limited_noise():
    rng = numpy.random.default_rng(1)
    n = 1 << 15
    x = band_limited_noise(-0.1, 0.05, n, rng) + 0.1 * band_limited_noise(
        0.2, 0.3, n, rng
    )
    in_band = band_limited_noise(-0.1, 0.05, n, numpy.random.default_rng(1))
    # the independent reference: mean power of each component (same seed)
    noise_power = numpy.mean(abs(in_band) ** 2)
    total_power = numpy.mean(abs(x) ** 2)
    f, p, power = bandwidth_power(
        torch.from_numpy(x), 1.0, [(-0.12, 0.07), (-0.5, 0.5)], nperseg=256
    )
    numpy.testing.assert_allclose(power[0].item(), db(noise_power), atol=0.1)
    numpy.testing.assert_allclose(power[1].item(), db(total_power), atol=0.1)


def test_bandwidth_power_batched_layouts_agree():
    amps = numpy.array([[1.0, 0.5, 2.0], [0.1, 3.0, 1.5]])
    x = numpy.stack(
        [
            numpy.stack([tones([0.1], [a], 1024, seed=k) for k, a in enumerate(row)])
            for row in amps
        ]
    )
    z = torch.from_numpy(x)  # (2, 3, 1024)
    _, p, power = bandwidth_power(z, 1.0, [(0.05, 0.15)])
    assert power.shape == (2, 3, 1) and p.shape == (2, 3, 1024)
    numpy.testing.assert_allclose(power[..., 0].numpy(), db(amps**2), atol=0.01)

    # the published real layout (..., T, 2), a Cplx, and time along dim 1
    _, p_real, power_real = bandwidth_power(torch.view_as_real(z), 1.0, [(0.05, 0.15)])
    _, _, power_cplx = bandwidth_power(Cplx(z.real, z.imag), 1.0, [(0.05, 0.15)])
    _, p_t, power_t = bandwidth_power(z.transpose(1, 2), 1.0, [(0.05, 0.15)], dim=1)
    for other in (power_real, power_cplx, power_t):
        torch.testing.assert_close(other, power)
    torch.testing.assert_close(p_real, p)
    torch.testing.assert_close(p_t, p.transpose(1, 2))


def test_bandwidth_power_scaling_only_changes_the_spectrum():
    x = torch.from_numpy(tones([0.1, -0.2], [1.0, 0.5], 512))
    _, density, power = bandwidth_power(x, 2.0, [(0.1, 0.3)], nperseg=128)
    _, spectrum, power_s = bandwidth_power(
        x, 2.0, [(0.1, 0.3)], nperseg=128, scaling="spectrum"
    )
    torch.testing.assert_close(power_s, power)
    # the default window is the symmetric Hamming window
    _, p_ref = scipy_welch(
        x.numpy(),
        fs=2.0,
        window=numpy.hamming(128),
        detrend=False,
        return_onesided=False,
        scaling="spectrum",
    )
    numpy.testing.assert_allclose(
        spectrum.numpy(), numpy.fft.fftshift(p_ref), rtol=1e-9
    )
    _, p_ref = scipy_welch(
        x.numpy(),
        fs=2.0,
        window=numpy.hamming(128),
        detrend=False,
        return_onesided=False,
    )
    numpy.testing.assert_allclose(density.numpy(), numpy.fft.fftshift(p_ref), rtol=1e-9)


def test_bandwidth_power_is_differentiable():
    x = torch.randn(2, 64, dtype=torch.complex128, requires_grad=True)
    _, _, power = bandwidth_power(x, 1.0, [(-0.2, 0.1), (0.15, 0.4)], nperseg=32)
    power.sum().backward()
    assert (
        x.grad is not None and torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0
    )


def test_bandwidth_power_without_bands():
    _, _, power = bandwidth_power(torch.randn(2, 3, 64, dtype=torch.complex64), 1.0, [])
    assert power.shape == (2, 3, 0)


@pytest.mark.parametrize(
    "x, kwargs, error, name",
    [
        (torch.randn(3, 64), {}, ValueError, "`x`"),
        (torch.randn(3, 64, 2), dict(dim=-1), ValueError, "`dim`"),
        (
            torch.randn(64, dtype=torch.complex64),
            dict(bands=[(0.2, 0.1)]),
            ValueError,
            "`bands`",
        ),
        (
            torch.randn(64, dtype=torch.complex64),
            dict(bands=[(0.1, 0.2, 0.3)]),
            ValueError,
            "`bands`",
        ),
        (torch.randn(64, dtype=torch.complex64), dict(fs=-1.0), ValueError, "`fs`"),
        (
            torch.randn(64, dtype=torch.complex64),
            dict(nperseg=0),
            ValueError,
            "`nperseg`",
        ),
        ("signal", {}, TypeError, "`x`"),
    ],
)
def test_bandwidth_power_errors_name_the_argument(x, kwargs, error, name):
    arguments = dict(fs=1.0, bands=[(0.1, 0.2)])
    arguments.update(kwargs)
    with pytest.raises(error, match=f"^bandwidth_power: {name}"):
        bandwidth_power(x, **arguments)


def test_acpr_of_tones():
    fs = 100e3
    main_amp, adjacent = 2.0, {-20e3: 0.1, 20e3: 0.2, 40e3: 0.05}
    x = tones(
        numpy.array([1e3] + list(adjacent)) / fs,
        [main_amp] + list(adjacent.values()),
        8192,
    )
    x = torch.from_numpy(x)[None].repeat(3, 1)  # a batch of three
    main, adj = acpr_calc(
        x, fs, mcf=0.0, mcb=10e3, acf=list(adjacent), acb=10e3, nperseg=1024
    )
    assert main.shape == (3, 1) and adj.shape == (3, 3)
    ratios = 20 * numpy.log10(numpy.array(list(adjacent.values())) / main_amp)
    numpy.testing.assert_allclose(
        (adj - main).numpy(), numpy.broadcast_to(ratios, (3, 3)), atol=0.05
    )
    numpy.testing.assert_allclose(main.numpy(), db(main_amp**2), atol=0.05)

    # per-channel and default bandwidths measure the same here
    _, adj_list = acpr_calc(
        x, fs, 0.0, 10e3, acf=list(adjacent), acb=[10e3] * 3, nperseg=1024
    )
    _, adj_default = acpr_calc(x, fs, 0.0, 10e3, acf=list(adjacent), nperseg=1024)
    torch.testing.assert_close(adj_list, adj)
    torch.testing.assert_close(adj_default, adj)


def test_acpr_without_adjacent_channels():
    x = torch.from_numpy(tones([0.0], [1.0], 256))
    main, adj = acpr_calc(x, 1.0, 0.0, 0.1)
    assert adj.shape == (0,)
    assert main.item() == pytest.approx(0.0, abs=0.01)


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(mcb=0.0), ValueError, "`mcb`"),
        (dict(acf=[0.2, -0.2], acb=[0.1, 0.1, 0.1]), ValueError, "`acb`"),
        (dict(acf=[0.2], acb=-0.1), ValueError, "`acb`"),
        (dict(acf="near"), TypeError, "`acf`"),
        (dict(acf=[0.2], acb={"a": 1}), TypeError, "`acb`"),
    ],
)
def test_acpr_errors_name_the_argument(kwargs, error, name):
    arguments = dict(mcf=0.0, mcb=0.1)
    arguments.update(kwargs)
    with pytest.raises(error, match=f"^acpr_calc: {name}"):
        acpr_calc(torch.randn(128, dtype=torch.complex64), 1.0, **arguments)


def test_spectral_grid_agrees_with_scipy_for_many_overlaps():
    # a sweep over segment lengths and overlaps on one complex signal
    x = signal(257, complex_=True)
    z = torch.from_numpy(x)
    for nperseg, n_overlap in itertools.product([8, 31, 64], [0, 3, 7]):
        _, p_ref = scipy_welch(
            x, nperseg=nperseg, noverlap=n_overlap, detrend=False, return_onesided=False
        )
        _, p = pwelch(z, nperseg=nperseg, n_overlap=n_overlap)
        numpy.testing.assert_allclose(p.numpy(), p_ref, rtol=1e-9, atol=1e-15)
