"""The spectral front ends and filterbanks against the same computation in torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_spectral.py --benchmark-enable

Each group is one layer, forward and backward (from a fixed gradient of
the output, as :func:`_backward` says), with three variants, and the
first and the last of them compiled (``-compiled``, see
``benchmarks/_compiling.py``).
``torch-complex64`` is what a user of torch's native complex tensors writes
for the same result, from the layer's own parameters, on a complex64
tensor. The layer of :mod:`cplxmodule.nn` runs on two inputs: ``cplxmodule``, a
:class:`~cplxmodule.cplx.Cplx` whose parts are two separate contiguous
tensors (as a model holds them, and as a split layer returns them), and
``cplxmodule-chained``, one whose parts are the halves of one complex buffer (as
a previous FFT or native product returns them), which the layer reads with
no copy. The analytic signal takes a real input: it has no chained
variant. Each variant is checked against the reference before it is
timed. Runs on one thread; ``benchmarks/conftest.py`` prints each variant's
time divided by the native time of its group (below 1 is faster). On a
busy machine add ``--benchmark-timer=time.process_time``.
"""

import functools
import math

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from _compiling import NATIVE, NATIVE_COMPILED, OURS, OURS_COMPILED, compiled, eager, warm_up
from _operands import separate_parts
from tests.helpers import native_spectral_pool

pytestmark = pytest.mark.usefixtures("one_thread")

CHAINED = OURS + "-chained"


def _spectral_pool(sizes):
    return functools.partial(native_spectral_pool, sizes=sizes)


def _analytic(z):
    # the input is real: the analytic signal keeps the non-negative frequencies, doubled
    n = z.shape[-1]
    gain = torch.zeros(n)
    gain[0] = 1
    gain[1 : (n + 1) // 2] = 2
    if n % 2 == 0:
        gain[n // 2] = 1
    return torch.fft.ifft(torch.fft.fft(z) * gain)


def _gabor(layer):
    def native(z):
        t = torch.arange(layer.kernel_size[0]) - (layer.kernel_size[0] - 1) / 2
        center, width = layer.center[:, None], layer.width[:, None]
        # F.conv1d correlates: the conjugate atom passes +center
        kernel = torch.exp(-(t**2) / (2 * width**2)) * torch.exp(-2j * math.pi * center * t)
        weight = kernel.unsqueeze(1).expand(-1, layer.in_channels // layer.groups, -1)
        return F.conv1d(z, weight, stride=layer.stride, padding=layer.padding)

    return native


STFT = cnn.CplxSTFT(256, hop_length=64)
ISTFT = cnn.CplxISTFT(256, hop_length=64)
FFT2 = cnn.CplxFFT(dim=(-2, -1), norm="ortho")
SHIFT2 = cnn.CplxFFTShift(dim=(-2, -1))
GABOR = cnn.CplxGaborConv1d(4, 32, 65, padding=32)

# 4x Cartesian undersampling of 128 columns, and a measured k-space
MASK = torch.zeros(128, dtype=torch.bool)
MASK[::4] = MASK[56:72] = True
MEASURED = torch.randn(16, 4, 128, 128, dtype=torch.complex64,
                       generator=torch.Generator().manual_seed(2)) * MASK


class _Consistent(torch.nn.Module):
    """The hard data consistency of a batch of images with :data:`MEASURED`."""

    def __init__(self):
        super().__init__()
        self.dc = cnn.CplxDataConsistency()

    def forward(self, z):
        return self.dc(z, MEASURED, MASK)


def _consistent(z):
    k = torch.fft.fft2(z, norm="ortho")
    return torch.fft.ifft2(torch.where(MASK, MEASURED, k), norm="ortho")


# name -> (layer, native function, input shape, the input is real)
LAYERS = {
    "fft": (cnn.CplxFFT(norm="ortho"), lambda z: torch.fft.fft(z, norm="ortho"),
            (64, 32, 256), False),
    "ifft": (cnn.CplxIFFT(dim=1), lambda z: torch.fft.ifft(z, dim=1), (64, 32, 256), False),
    "stft": (STFT, lambda z: torch.stft(z, 256, 64, window=STFT.window, onesided=False,
                                        return_complex=True), (16, 16384), False),
    "istft": (ISTFT, lambda z: torch.istft(z, 256, 64, window=ISTFT.window, onesided=False,
                                           return_complex=True), (16, 256, 257), False),
    # a waveform's one-sided spectrum, and back to a waveform
    "stft_onesided": (STFT, lambda x: torch.stft(x, 256, 64, window=STFT.window,
                                                 return_complex=True), (16, 16384), True),
    "istft_onesided": (ISTFT, lambda z: torch.istft(z, 256, 64, window=ISTFT.window),
                       (16, 129, 257), False),
    "fft2": (FFT2, lambda z: torch.fft.fft2(z, norm="ortho"), (16, 4, 128, 128), False),
    "fftshift2": (SHIFT2, lambda z: torch.fft.fftshift(z, dim=(-2, -1)), (16, 4, 128, 128),
                  False),
    "data_consistency": (_Consistent(), _consistent, (16, 4, 128, 128), False),
    "analytic": (cnn.CplxAnalytic(), _analytic, (64, 32, 256), True),
    "gabor_conv1d": (GABOR, _gabor(GABOR), (16, 4, 2048), False),
    "spectral_pool1d": (cnn.CplxSpectralPool1d(64), _spectral_pool((64,)), (64, 32, 256), False),
    "spectral_pool2d": (cnn.CplxSpectralPool2d((16, 16)), _spectral_pool((16, 16)),
                        (16, 16, 32, 32), False),
    "spectral_pool3d": (cnn.CplxSpectralPool3d((4, 8, 8)), _spectral_pool((4, 8, 8)),
                        (8, 8, 8, 16, 16), False),
}


def _inputs(name, variant):
    _, _, shape, real = LAYERS[name]
    torch.manual_seed(0)
    if real:
        return torch.randn(shape).requires_grad_()
    native = torch.randn(shape, dtype=torch.complex64)
    if variant == NATIVE:
        return native.requires_grad_()
    if variant == CHAINED:
        # the parts of a complex tensor, as a layer computing in it returns them
        return cplx.from_complex(native.requires_grad_())
    return separate_parts(native)


def _native(out):
    return cplx.to_complex(out) if isinstance(out, cplx.Cplx) else out


def _backward(variant, grad):
    """The backward of an output from the next layer's gradient ``grad`` (complex64).

    The loss itself is not timed: each variant receives the gradient the
    next layer of its kind hands back, computed once. A native layer hands
    back a complex tensor; after ``cplxmodule``, a split layer hands back two
    separate real tensors; after ``cplxmodule-chained``, the next layer computes
    in torch's complex dtype too (an FFT, a native product), reads the
    output's buffer with no copy and hands back a complex tensor.
    """
    if variant == NATIVE:
        return lambda out: out.backward(grad)
    if variant == CHAINED:
        return lambda out: cplx.to_complex(out).backward(grad)
    if not grad.is_complex():
        # a real output (the waveform of a one-sided spectrum)
        return lambda out: out.backward(grad)
    parts = grad.real.contiguous(), grad.imag.contiguous()
    return lambda out: torch.autograd.backward((out.real, out.imag), parts)


@pytest.mark.parametrize("variant", [OURS, CHAINED, NATIVE, OURS_COMPILED, NATIVE_COMPILED])
@pytest.mark.parametrize("name", LAYERS)
def test_spectral(benchmark, name, variant):
    layer, native, _, real = LAYERS[name]
    if real and variant == CHAINED:
        pytest.skip("the input is real")
    benchmark.group = f"{name}-fwd+bwd"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    with torch.no_grad():
        # the variants must compute the same thing for the ratio to mean anything
        expected = native(_inputs(name, NATIVE))
        ours = _native(layer(_inputs(name, OURS if eager(variant) == NATIVE else eager(variant))))
        torch.testing.assert_close(ours, expected, rtol=1e-4, atol=1e-4)
    generator = torch.Generator().manual_seed(1)
    grad = torch.randn(expected.shape, dtype=expected.dtype, generator=generator)
    backward = _backward(eager(variant), grad)
    z = _inputs(name, eager(variant))
    fn = compiled(native if eager(variant) == NATIVE else layer, variant)

    def run():
        backward(fn(z))

    warm_up(benchmark, variant, run)
    benchmark(run)
