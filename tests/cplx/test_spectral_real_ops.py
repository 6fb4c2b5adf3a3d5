"""The real-ops form of the Fourier transforms, which exports and traces take.

Exported or traced, :mod:`cplxmodule.cplx.spectral` computes its transforms
on the two real parts with real ops only (products with cos/sin matrices,
split by the four-step factorisation; frames gathered and overlap-added by
pads). Here that form is forced (the fixture ``real_ops``) and checked
against independent references: :mod:`numpy.fft` for the FFTs (lengths that
take one matrix, composite ones that take the four steps, primes above the
direct limit), torch's own :func:`torch.stft`/:func:`torch.istft` kernels on
the native complex signal for the short-time transforms (every setting,
including the lengths, windows and paddings scipy has no twin for), and
:func:`scipy.signal.hilbert` for the analytic signal; and its gradients
against those of torch's native kernels. That an export or a trace does take
this form is checked by tests/integration/test_layer_table_export.py,
which exports the layers and finds no complex value in the graph.
"""

import itertools

import numpy as np
import pytest
import scipy.signal
import torch

from cplxmodule import cplx
from cplxmodule.cplx import Cplx, spectral
from ..helpers import cplx_to_native


@pytest.fixture
def real_ops(monkeypatch):
    monkeypatch.setattr(spectral, "_exporting", lambda: True)


def numpy_signal(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def as_cplx(z):
    return cplx.from_complex(torch.from_numpy(np.ascontiguousarray(z)))


# lengths of one matrix (up to 64), of the four steps (composite above 64:
# 65 = 5 * 13, 360 = 18 * 20, 1024 = 32 * 32) and a prime above 64
LENGTHS = [1, 2, 7, 64, 65, 97, 360, 1024]


@pytest.mark.usefixtures("real_ops")
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_fft_of_each_length_matches_numpy(name, n):
    z = numpy_signal(3, n, seed=n)
    expected = getattr(np.fft, name)(z)
    actual = cplx_to_native(getattr(cplx, name)(as_cplx(z)))
    np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-11, atol=1e-11 * np.sqrt(n))


@pytest.mark.usefixtures("real_ops")
@pytest.mark.parametrize("norm", [None, "backward", "forward", "ortho"])
@pytest.mark.parametrize("dim, n", [(-1, None), (0, None), (1, 5), (1, 80), (-1, 9)])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_fft_settings_match_numpy(name, norm, dim, n):
    z = numpy_signal(4, 6, 7)
    expected = getattr(np.fft, name)(z, n=n, axis=dim, norm=norm)
    actual = cplx_to_native(getattr(cplx, name)(as_cplx(z), n=n, dim=dim, norm=norm))
    np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-11, atol=1e-12)


@pytest.mark.usefixtures("real_ops")
@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("s, dim", [(None, None), ((3, 8), None), (None, (0, 2)),
                                    ((5, -1), (1, 2)), ((70,), (-1,))])
@pytest.mark.parametrize("name", ["fftn", "ifftn"])
def test_fftn_settings_match_numpy(name, norm, s, dim):
    z = numpy_signal(4, 6, 7)
    # numpy's ``s`` has no -1 for "keep the length"
    axes = dim if dim is not None else (None if s is None else tuple(range(-len(s), 0)))
    np_s = None if s is None else [z.shape[a] if m == -1 else m for m, a in zip(s, axes)]
    expected = getattr(np.fft, name)(z, s=np_s, axes=axes, norm=norm)
    actual = cplx_to_native(getattr(cplx, name)(as_cplx(z), s=s, dim=dim, norm=norm))
    np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-11, atol=1e-12)


# the short-time transforms against torch's own kernels
SETTINGS = list(itertools.product(
    [8, 9],                      # n_fft
    [2, 3, 8],                   # hop_length
    [None, 5],                   # win_length
    [True, False],               # center
    ["hann", None],              # window
    [False, True],               # normalized
))


def window_of(kind, n_fft, win_length):
    return None if kind is None else torch.hann_window(win_length or n_fft, dtype=torch.float64)


@pytest.mark.usefixtures("real_ops")
@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("pad_mode", ["reflect", "constant", "replicate", "circular"])
@pytest.mark.parametrize("batch", [(), (2,)], ids=["unbatched", "batched"])
def test_stft_matches_torch_kernel(batch, pad_mode):
    x = cplx.randn(*batch, 40, dtype=torch.float64)
    for n_fft, hop, win_length, center, kind, normalized in SETTINGS:
        window = window_of(kind, n_fft, win_length)
        expected = torch.stft(
            cplx_to_native(x), n_fft, hop, win_length, window, center, pad_mode, normalized,
            onesided=False, return_complex=True,
        )
        actual = cplx.stft(x, n_fft, hop, win_length, window, center, pad_mode, normalized)
        torch.testing.assert_close(cplx_to_native(actual), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("real_ops")
@pytest.mark.filterwarnings("ignore:A window was not provided", "ignore:The length of signal")
@pytest.mark.parametrize("length", [None, 25, 60])
@pytest.mark.parametrize("batch", [(), (2,)], ids=["unbatched", "batched"])
def test_istft_matches_torch_kernel(batch, length):
    compared = 0
    for n_fft, hop, win_length, center, kind, normalized in SETTINGS:
        window = window_of(kind, n_fft, win_length)
        frames = 6
        spectrum = cplx.randn(*batch, n_fft, frames, dtype=torch.float64)
        try:
            expected = torch.istft(
                cplx_to_native(spectrum), n_fft, hop, win_length, window, center, normalized,
                onesided=False, length=length, return_complex=True,
            )
        except RuntimeError:
            # the window's overlap-added square vanishes: torch refuses it,
            # and the real form (which cannot raise on values) divides by 0
            continue
        actual = cplx.istft(spectrum, n_fft, hop, win_length, window, center, normalized,
                            length)
        torch.testing.assert_close(cplx_to_native(actual), expected, rtol=1e-10, atol=1e-12)
        compared += 1
    assert compared >= 30  # of the 96 settings, those torch inverts


@pytest.mark.usefixtures("real_ops")
@pytest.mark.parametrize("shape, dim", [((16,), -1), ((3, 15), -1), ((8, 4), 0), ((2, 97), 1)])
def test_hilbert_matches_scipy(shape, dim):
    x = np.random.default_rng(1).standard_normal(shape)
    expected = scipy.signal.hilbert(x, axis=dim)
    actual = cplx_to_native(cplx.hilbert(torch.from_numpy(x), dim=dim))
    np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-11, atol=1e-11)


CALLS = {
    "fft": lambda z, w: cplx.fft(z, n=70, norm="ortho"),
    "ifftn": lambda z, w: cplx.ifftn(z, s=(3, 66)),
    "stft": lambda z, w: cplx.stft(z, 16, 4, window=w),
    "istft": lambda z, w: cplx.istft(cplx.stft(z, 16, 4, window=w), 16, 4, window=w, length=60),
    "hilbert": lambda z, w: cplx.hilbert(z.real * w.sum()),
}


@pytest.mark.parametrize("name", CALLS)
def test_gradients_match_torch_kernels(name, monkeypatch):
    torch.manual_seed(2)
    leaves = [torch.randn(3, 66, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    window = torch.hann_window(16, dtype=torch.float64).requires_grad_()
    weights = None
    grads = []
    for form in ("native", "real"):
        monkeypatch.setattr(spectral, "_exporting", lambda f=form: f == "real")
        output = CALLS[name](Cplx(*leaves), window)
        if weights is None:
            generator = torch.Generator().manual_seed(3)
            weights = [torch.randn(output.shape, dtype=torch.float64, generator=generator)
                       for _ in range(2)]
        loss = (weights[0] * output.real + weights[1] * output.imag).sum()
        grads.append(torch.autograd.grad(loss, [*leaves, window], allow_unused=True))
    for native_grad, real_grad in zip(*grads):
        if native_grad is None:
            assert real_grad is None or not real_grad.any()
        else:
            torch.testing.assert_close(real_grad, native_grad, rtol=1e-10, atol=1e-10)
