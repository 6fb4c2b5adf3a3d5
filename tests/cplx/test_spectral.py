"""Fourier transforms, short-time transforms and the analytic signal on Cplx.

References: :mod:`numpy.fft` for the FFTs, :func:`scipy.signal.stft` /
:func:`scipy.signal.istft` for the short-time transforms (scipy divides the
spectrum by the window's sum and pads with zeros: compared with that scaling
and ``pad_mode="constant"``), :func:`scipy.signal.hilbert` for the analytic
signal.
"""

import copy

import numpy as np
import pytest
import scipy.signal
import torch
from hypothesis import given, settings, strategies as st

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import (
    CplxAnalytic,
    CplxFFT,
    CplxIFFT,
    CplxISTFT,
    CplxSTFT,
    HilbertTransform,
)


def numpy_signal(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def as_cplx(z):
    return cplx.from_complex(torch.from_numpy(np.ascontiguousarray(z)))


def as_numpy(z):
    return cplx.to_complex(z).detach().numpy()


def parts(z):
    return z.real, z.imag


def cplx64(*shape):
    return Cplx(torch.randn(*shape, dtype=torch.float64, requires_grad=True),
                torch.randn(*shape, dtype=torch.float64, requires_grad=True))


# FFT blocks against numpy.fft


@pytest.mark.parametrize("norm", [None, "backward", "forward", "ortho"])
@pytest.mark.parametrize("dim, n", [(-1, None), (0, None), (1, 5), (-1, 9)])
def test_fft_ifft_match_numpy(norm, dim, n):
    z = numpy_signal(4, 6, 7)
    assert np.allclose(as_numpy(cplx.fft(as_cplx(z), n=n, dim=dim, norm=norm)),
                       np.fft.fft(z, n=n, axis=dim, norm=norm))
    assert np.allclose(as_numpy(cplx.ifft(as_cplx(z), n=n, dim=dim, norm=norm)),
                       np.fft.ifft(z, n=n, axis=dim, norm=norm))


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("s, dim", [(None, None), (None, (0, 2)), ((3, 8), (-2, -1))])
def test_fftn_ifftn_match_numpy(norm, s, dim):
    z = numpy_signal(4, 5, 6)
    assert np.allclose(as_numpy(cplx.fftn(as_cplx(z), s=s, dim=dim, norm=norm)),
                       np.fft.fftn(z, s=s, axes=dim, norm=norm))
    assert np.allclose(as_numpy(cplx.ifftn(as_cplx(z), s=s, dim=dim, norm=norm)),
                       np.fft.ifftn(z, s=s, axes=dim, norm=norm))


@pytest.mark.parametrize("layer, reference", [
    (CplxFFT(dim=1, norm="ortho"), lambda z: np.fft.fft(z, axis=1, norm="ortho")),
    (CplxIFFT(dim=0, n=6), lambda z: np.fft.ifft(z, n=6, axis=0)),
])
def test_fft_layers_match_numpy(layer, reference):
    z = numpy_signal(3, 4)
    assert np.allclose(as_numpy(layer(as_cplx(z))), reference(z))


# STFT against scipy.signal


@pytest.mark.parametrize("n_fft, hop, win_length, batch", [
    (16, 4, None, ()), (16, 5, None, (3,)), (32, 8, 24, (2,)),
])
def test_stft_matches_scipy(n_fft, hop, win_length, batch):
    win_length = win_length or n_fft
    z = numpy_signal(*batch, 75)
    window = scipy.signal.get_window("hann", win_length)
    # scipy centres a short window in the frame the way torch does
    frame_window = np.zeros(n_fft)
    left = (n_fft - win_length) // 2
    frame_window[left:left + win_length] = window
    _, _, expected = scipy.signal.stft(
        z, window=frame_window, nperseg=n_fft, noverlap=n_fft - hop, boundary="zeros",
        padded=False, return_onesided=False, detrend=False,
    )
    spec = cplx.stft(as_cplx(z), n_fft, hop_length=hop, win_length=win_length,
                     window=torch.from_numpy(window), pad_mode="constant")
    assert np.allclose(as_numpy(spec) / window.sum(), expected)


def test_istft_matches_scipy_on_any_spectrum():
    # a spectrum of no signal: both take the least-squares overlap-add
    n_fft, hop = 16, 4
    spec = numpy_signal(n_fft, 12)
    window = scipy.signal.get_window("hann", n_fft)
    _, expected = scipy.signal.istft(
        spec / window.sum(), window=window, nperseg=n_fft, noverlap=n_fft - hop,
        input_onesided=False, boundary=True,
    )
    signal = cplx.istft(as_cplx(spec), n_fft, hop, window=torch.from_numpy(window))
    assert np.allclose(as_numpy(signal), expected)


@settings(max_examples=20, deadline=None)
@given(n_fft=st.sampled_from([8, 16, 32, 64]), length=st.integers(64, 200),
       batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_default_layers_reconstruct_perfectly(n_fft, length, batch, seed):
    z = numpy_signal(batch, length, seed=seed)
    stft, istft = CplxSTFT(n_fft, dtype=torch.float64), CplxISTFT(n_fft, dtype=torch.float64)
    assert stft.hop_length == n_fft // 4 and stft.center
    assert np.allclose(as_numpy(istft(stft(as_cplx(z)), length=length)), z)


def test_default_window_is_hann():
    layer = CplxSTFT(16, dtype=torch.float64)
    assert np.allclose(layer.window.numpy(), scipy.signal.get_window("hann", 16))
    assert "window" in dict(layer.named_buffers())


# analytic signal against scipy.signal.hilbert


@pytest.mark.parametrize("shape, dim", [((9,), -1), ((10,), 0), ((3, 8), 0), ((2, 7, 4), 1)])
def test_hilbert_matches_scipy(shape, dim):
    x = np.random.default_rng(1).standard_normal(shape)
    expected = scipy.signal.hilbert(x, axis=dim)
    assert np.allclose(as_numpy(cplx.hilbert(torch.from_numpy(x), dim=dim)), expected)
    assert np.allclose(as_numpy(HilbertTransform(dim)(torch.from_numpy(x))), expected)


# gradients


def test_gradcheck_fft_and_hilbert():
    z = cplx64(3, 5)
    for op in (cplx.fft, cplx.ifft, cplx.fftn):
        assert torch.autograd.gradcheck(
            lambda re, im, op=op: parts(op(Cplx(re, im), norm="ortho")), (z.real, z.imag)
        )
    x = torch.randn(2, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: parts(cplx.hilbert(x)), (x,))


def test_gradgradcheck_fft_and_spectral_pool():
    # the second derivative runs through the backward that packs the two
    # parts' gradients; a nonlinear loss makes it nonzero
    z = cplx64(2, 6)
    for op in (lambda x: cplx.fft(x, norm="ortho"), lambda x: cplx.spectral_pool1d(x, 4)):
        assert torch.autograd.gradgradcheck(
            lambda re, im, op=op: tuple(p * p for p in parts(op(Cplx(re, im)))),
            (z.real, z.imag),
        )


@pytest.mark.parametrize("part", ["real", "imag"])
def test_gradient_of_one_part_matches_native(part):
    # a loss on one part only leaves the other part's gradient unset: it counts as zero
    z = cplx64(3, 8)
    native = torch.complex(z.real.detach(), z.imag.detach()).requires_grad_()
    getattr(cplx.fft(z), part).sum().backward()
    getattr(torch.fft.fft(native), part).sum().backward()
    torch.testing.assert_close(z.real.grad, native.grad.real)
    torch.testing.assert_close(z.imag.grad, native.grad.imag)


@pytest.mark.slow
def test_gradcheck_stft_istft_input_and_window():
    z, window = cplx64(20), torch.rand(8, dtype=torch.float64, requires_grad=True)

    def stft(re, im, w):
        return parts(cplx.stft(Cplx(re, im), 8, 2, window=w + 0.5))

    def istft(re, im, w):
        spec = cplx.stft(Cplx(re, im), 8, 2, window=w + 0.5)
        return parts(cplx.istft(spec * 1.5, 8, 2, window=w + 0.5))

    assert torch.autograd.gradcheck(stft, (z.real, z.imag, window))
    assert torch.autograd.gradcheck(istft, (z.real, z.imag, window))


def test_learnable_window_trains():
    layer = CplxSTFT(16, learnable_window=True)
    assert isinstance(layer.window, torch.nn.Parameter)
    assert "window" not in dict(layer.named_buffers())
    layer(cplx.randn(2, 64)).abs().sum().backward()
    assert layer.window.grad is not None and layer.window.grad.abs().sum() > 0


# module plumbing


LAYERS = [
    (lambda: CplxFFT(dim=0, norm="forward"), lambda: cplx.randn(4, 3)),
    (lambda: CplxIFFT(n=5), lambda: cplx.randn(2, 4)),
    (lambda: CplxSTFT(8, learnable_window=True), lambda: cplx.randn(2, 40)),
    (lambda: CplxSTFT(8, win_length=6, window="hamming"), lambda: cplx.randn(40)),
    (lambda: CplxISTFT(8, learnable_window=True), lambda: cplx.randn(2, 8, 11)),
    (lambda: CplxAnalytic(dim=0), lambda: torch.randn(6, 2)),
]


def to_double(input):
    return input.apply(torch.Tensor.double) if isinstance(input, Cplx) else input.double()


@pytest.mark.parametrize("make, data", LAYERS)
def test_layer_to_deepcopy_state_dict(make, data):
    layer, input = make(), data()
    expected = layer(input)
    clone = copy.deepcopy(layer)
    assert torch.equal(clone(input).real, expected.real)

    fresh = make()
    for value in fresh.state_dict().values():
        value.uniform_()
    fresh.load_state_dict(layer.state_dict())
    assert torch.equal(fresh(input).imag, expected.imag)

    layer.to(torch.float64)
    out = layer(to_double(input))
    assert out.real.dtype == torch.float64
    assert torch.allclose(out.real.float(), expected.real, atol=1e-5)
    assert all(v.dtype == torch.float64 for v in layer.state_dict().values())


def test_reprs():
    assert repr(CplxFFT()) == "CplxFFT(dim=-1)"
    assert repr(CplxISTFT(16, 8, 12, center=False)) == (
        "CplxISTFT(n_fft=16, hop_length=8, win_length=12, center=False)"
    )
    assert repr(CplxSTFT(8, pad_mode="constant")) == (
        "CplxSTFT(n_fft=8, hop_length=2, pad_mode='constant')"
    )


# bad input


@pytest.mark.parametrize("call, error, message", [
    (lambda: cplx.fft(torch.randn(3)), TypeError, "fft: `input` must be a Cplx"),
    (lambda: cplx.ifft(cplx.randn(3), norm="unit"), ValueError, "ifft: `norm` must be"),
    (lambda: cplx.stft(cplx.randn(2, 2, 9), 4), ValueError, "stft: `input` must have shape"),
    (lambda: cplx.stft(cplx.randn(9), 0), ValueError, "stft: `n_fft` must be"),
    (lambda: cplx.stft(cplx.randn(9), 4, win_length=5), ValueError, "stft: `win_length`"),
    (lambda: cplx.stft(cplx.randn(9), 4, hop_length=0), ValueError, "stft: `hop_length`"),
    (lambda: cplx.stft(cplx.randn(9), 4, window=torch.ones(3)), ValueError, "stft: `window`"),
    (lambda: cplx.istft(cplx.randn(5, 3), 4), ValueError, "istft: `input` must have shape"),
    (lambda: cplx.hilbert(cplx.randn(3)), TypeError, "hilbert: `input` must be a real"),
    (lambda: cplx.hilbert(torch.tensor(1.0)), ValueError, "hilbert: `input` must have"),
    (lambda: CplxFFT(norm="none"), ValueError, "CplxFFT: `norm` must be"),
    (lambda: CplxIFFT(n=0), ValueError, "CplxIFFT: `n` must be"),
    (lambda: CplxSTFT(8, window="kaiser"), ValueError, "CplxSTFT: `window` must be one of"),
    (lambda: CplxISTFT(8, window=torch.ones(7)), ValueError, "CplxISTFT: `window` must be"),
    (lambda: CplxSTFT(8, hop_length=-1), ValueError, "CplxSTFT: `hop_length`"),
    (lambda: CplxAnalytic(dim=None), ValueError, "CplxAnalytic: `dim` must be an int"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("layer, input, error, message", [
    (CplxFFT(dim=2), cplx.randn(3, 4), ValueError, "CplxFFT: `input` must have dimension 2"),
    (CplxFFT(), torch.randn(3), TypeError, "CplxFFT: `input` must be a Cplx"),
    (CplxSTFT(8, learnable_window=True), cplx.randn(1, 1, 9), ValueError,
     "CplxSTFT: `input` must have shape"),
    (CplxISTFT(8), cplx.randn(7, 3), ValueError, "CplxISTFT: `input` must have shape"),
    (CplxAnalytic(dim=1), torch.randn(4), ValueError, "CplxAnalytic: `input` must have"),
    (CplxAnalytic(), cplx.randn(4), TypeError, "CplxAnalytic: `input` must be a real"),
])
def test_bad_input_names_layer_and_leaves_it_unchanged(layer, input, error, message):
    before = copy.deepcopy(layer.state_dict())
    with pytest.raises(error, match=message):
        layer(input)
    after = layer.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)
