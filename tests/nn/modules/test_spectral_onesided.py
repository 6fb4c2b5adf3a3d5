"""Short-time transforms of real waveforms and one-sided spectra, against torch's own kernels.

The references are :func:`torch.stft` and :func:`torch.istft` on torch's
native tensors (values, not only shapes), for the eager path, the real-op
path that export takes, and the compiled path (the operators of
``cplxmodule.cplx._fft``); the round trip of a waveform is exact; the
one-sided inverse reads a spectrum as :func:`torch.fft.irfft` does.
"""

import numpy as np
import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.cplx import _fft, spectral
from cplxmodule.models import CplxUNet
from cplxmodule.nn import CplxISTFT, CplxSTFT

pytestmark = pytest.mark.usefixtures("one_thread")

# n_fft, hop, win_length, center, normalized, pad_mode: odd and even lengths,
# a window shorter than the frame, padding modes, frames from the first sample
SETTINGS = [
    (16, 4, None, True, False, "reflect"),
    (15, 5, 12, True, True, "constant"),
    (8, 3, None, True, True, "circular"),
    (12, 4, None, False, False, "reflect"),
]


def _window(n_fft, win_length, center):
    # a window whose overlap-added square never vanishes: Hann when centred,
    # a rectangle (whose edges are covered) otherwise
    size = win_length or n_fft
    if center:
        return torch.hann_window(size, dtype=torch.float64)
    return torch.ones(size, dtype=torch.float64)


@pytest.fixture(params=["eager", "real_ops"])
def path(request, monkeypatch):
    """The eager path (torch's kernels), or the real ops that export takes."""
    if request.param == "real_ops":
        monkeypatch.setattr(spectral, "_exporting", lambda: True)
    return request.param


def native(z):
    return cplx.to_complex(z) if isinstance(z, Cplx) else z


@pytest.mark.parametrize("batch", [(), (3,)], ids=["unbatched", "batched"])
def test_stft_of_a_waveform_is_torchs(path, batch):
    x = torch.randn(*batch, 50, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for n_fft, hop, win, center, normalized, pad in SETTINGS:
        w = _window(n_fft, win, center)
        for onesided in (None, True, False):
            actual = cplx.stft(x, n_fft, hop, win, w, center, pad, normalized, onesided)
            expected = torch.stft(x, n_fft, hop, win, w, center, pad, normalized,
                                  onesided=onesided, return_complex=True)
            assert isinstance(actual, Cplx)
            assert actual.shape == expected.shape
            torch.testing.assert_close(native(actual), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("batch", [(), (3,)], ids=["unbatched", "batched"])
def test_istft_of_any_one_sided_spectrum_is_torchs(path, batch):
    g = torch.Generator().manual_seed(1)
    compared = 0
    for n_fft, hop, win, center, normalized, _ in SETTINGS:
        w = _window(n_fft, win, center)
        # imaginary parts at the zero and Nyquist frequencies too: read as irfft reads them
        spectrum = torch.randn(*batch, n_fft // 2 + 1, 7, dtype=torch.complex128, generator=g)
        for length in (None, 20):
            expected = torch.istft(spectrum, n_fft, hop, win, w, center, normalized,
                                   length=length)
            actual = cplx.istft(cplx.from_complex(spectrum), n_fft, hop, win, w, center,
                                normalized, length)
            assert isinstance(actual, torch.Tensor) and not actual.is_complex()
            torch.testing.assert_close(actual, expected, rtol=1e-11, atol=1e-12)
            compared += 1
    assert compared == 8


def test_istft_of_a_two_sided_spectrum_reads_its_first_half_for_a_real_signal(path):
    # as torch.istft with return_complex=False: the spectrum of a real signal
    spectrum = torch.randn(2, 16, 9, dtype=torch.complex128,
                           generator=torch.Generator().manual_seed(2))
    w = torch.hann_window(16, dtype=torch.float64)
    expected = torch.istft(spectrum, 16, 4, window=w, onesided=False, return_complex=False)
    actual = cplx.istft(cplx.from_complex(spectrum), 16, 4, window=w, return_complex=False)
    torch.testing.assert_close(actual, expected, rtol=1e-11, atol=1e-12)
    # by default a two-sided spectrum gives a complex signal
    complex_ = cplx.istft(cplx.from_complex(spectrum), 16, 4, window=w)
    torch.testing.assert_close(native(complex_), torch.istft(
        spectrum, 16, 4, window=w, onesided=False, return_complex=True), rtol=1e-11, atol=1e-12)


def test_a_waveform_is_recovered_exactly(path):
    x = torch.randn(2, 1000, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    stft, istft = CplxSTFT(64, dtype=torch.float64), CplxISTFT(64, dtype=torch.float64)
    spectrum = stft(x)
    assert spectrum.shape == (2, 33, 1 + 1000 // 16)
    y = istft(spectrum, length=1000)
    assert not y.is_complex()
    np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=0, atol=1e-12)


def test_gradients_of_the_one_sided_transforms():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 30, dtype=torch.float64, generator=g, requires_grad=True)
    w = (torch.rand(8, dtype=torch.float64, generator=g) + 0.5).requires_grad_()

    def forward_and_back(x, w):
        spectrum = cplx.stft(x, 8, 2, window=w)
        return spectrum.real, spectrum.imag, cplx.istft(spectrum * 1.5, 8, 2, window=w)

    assert torch.autograd.gradcheck(forward_and_back, (x, w))


@pytest.mark.parametrize("n", [7, 8])
@pytest.mark.parametrize("norm", ["backward", "forward", "ortho"])
def test_real_fft_operators_and_their_gradients(n, norm):
    # the compiled path's operators: torch's rfft and irfft, with adjoint gradients
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, n, 2, dtype=torch.float64, generator=g, requires_grad=True)
    real, imag = _fft.fft_r2c_split(x, 1, norm)
    expected = torch.fft.rfft(x, dim=1, norm=norm)
    torch.testing.assert_close(torch.complex(real, imag), expected)
    assert torch.autograd.gradcheck(lambda x: _fft.fft_r2c_split(x, 1, norm), (x,))
    re, im = (torch.randn(3, n // 2 + 1, 2, dtype=torch.float64, generator=g,
                          requires_grad=True) for _ in range(2))
    torch.testing.assert_close(_fft.fft_c2r(re, im, 1, n, norm),
                               torch.fft.irfft(torch.complex(re, im), n=n, dim=1, norm=norm))
    assert torch.autograd.gradcheck(lambda re, im: _fft.fft_c2r(re, im, 1, n, norm), (re, im))


@pytest.mark.slow
def test_real_fft_operators_pass_opcheck():
    # the registrations a compiled graph relies on: fake tensors, autograd, schema
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, 7, 2, dtype=torch.float64, generator=g, requires_grad=True)
    re, im = (torch.randn(3, 5, 2, dtype=torch.float64, generator=g, requires_grad=True)
              for _ in range(2))
    torch.library.opcheck(_fft.fft_r2c_split, (x, 1, "ortho"))
    torch.library.opcheck(_fft.fft_c2r, (re, im, 1, 8, "forward"))


@pytest.mark.slow
def test_compiled_one_sided_transforms_are_the_eager_ones():
    # the transforms are operators opaque to inductor: what compiling them
    # tests is that dynamo traces them whole and AOTAutograd differentiates
    # them through their fake kernels and adjoints, which aot_eager checks
    # without inductor's C++ build (20 s on a cold cache)
    x = torch.randn(2, 50, dtype=torch.float64, generator=torch.Generator().manual_seed(6),
                    requires_grad=True)
    w = torch.hann_window(16, dtype=torch.float64)

    def roundtrip(x):
        spectrum = cplx.stft(x, 16, 4, window=w)
        two_sided = cplx.stft(x, 16, 4, window=w, onesided=False)
        return (spectrum.real, spectrum.imag,
                cplx.istft(spectrum * 1.5, 16, 4, window=w, length=50),
                cplx.istft(two_sided, 16, 4, window=w, length=50, return_complex=False))

    compiled = torch.compile(roundtrip, backend="aot_eager", fullgraph=True)
    for a, b in zip(compiled(x), roundtrip(x)):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    grads = [torch.autograd.grad(sum((t * t).sum() for t in f(x)), x)[0]
             for f in (compiled, roundtrip)]
    torch.testing.assert_close(*grads, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("call, error, message", [
    (lambda: cplx.stft(cplx.randn(40), 8, onesided=True), ValueError,
     "stft: `onesided` must be False or None for a complex signal"),
    (lambda: cplx.stft(torch.arange(40), 8), TypeError,
     "stft: `input` must be a real floating-point signal, a Cplx or a complex tensor"),
    (lambda: cplx.stft(torch.randn(40), 8, onesided=1), TypeError, "stft: `onesided`"),
    (lambda: cplx.istft(cplx.randn(5, 3), 8, return_complex=True), ValueError,
     "istft: `return_complex` must be False or None for a one-sided spectrum"),
    (lambda: cplx.istft(cplx.randn(8, 3), 8, onesided=True), ValueError,
     r"istft: `input` must have shape \(5, frames\) or \(B, 5, frames\) \(one-sided\)"),
    (lambda: cplx.istft(cplx.randn(5, 3), 8, onesided=False), ValueError,
     r"istft: `input` must have shape \(8, frames\)"),
    (lambda: cplx.istft(torch.randn(5, 3), 8), TypeError, "istft: `input` must be a Cplx"),
    (lambda: CplxISTFT(8, onesided=True, return_complex=True), ValueError,
     "CplxISTFT: `return_complex` must be False or None with `onesided=True`"),
    (lambda: CplxSTFT(8, onesided=True)(cplx.randn(40)), ValueError,
     "CplxSTFT: `onesided` must be False"),
    (lambda: CplxSTFT(8)(torch.ones(40, dtype=torch.int32)), TypeError,
     "CplxSTFT: `input` must be a real floating-point signal"),
])
def test_bad_settings_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_repr_shows_the_one_sided_settings():
    assert repr(CplxSTFT(8, onesided=False)) == "CplxSTFT(n_fft=8, hop_length=2, onesided=False)"
    assert repr(CplxISTFT(8, return_complex=False)) == (
        "CplxISTFT(n_fft=8, hop_length=2, return_complex=False)")


def test_the_unet_masks_a_waveforms_spectrum_and_istft_inverts_it():
    # the pipeline of the U-Net's docstring: waveform -> one-sided STFT -> mask -> waveform
    torch.manual_seed(7)
    x = torch.randn(2, 512)
    stft, istft = CplxSTFT(64), CplxISTFT(64)
    spectrum = stft(x)
    unet = CplxUNet(channels=(2, 4)).eval()
    enhanced = unet(spectrum.unsqueeze(1)).squeeze(1)
    waveform = istft(enhanced, length=512)
    assert waveform.shape == x.shape and not waveform.is_complex()
    # torch's own inverse, through the one documented conversion
    expected = torch.istft(cplx.to_complex(enhanced), 64, 16, window=istft.window, length=512)
    torch.testing.assert_close(waveform, expected, rtol=1e-5, atol=1e-6)
