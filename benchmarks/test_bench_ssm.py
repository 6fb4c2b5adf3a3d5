"""CplxS4D against the same layer written with torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_ssm.py --benchmark-enable

The layer has ``H = 64`` channels of ``N = 64`` (32 complex modes) and runs
on a ``(16, 64, 1024)`` complex input (batch, channels, length), forward and
backward (``fwd+bwd``) or forward only (``fwd``); the ``kernel`` groups time
the convolution kernel alone (length 1024), forward and backward. Two
variants: ``cplxmodule``, :class:`~cplxmodule.nn.CplxS4D` on a
:class:`~cplxmodule.cplx.Cplx` whose parts are two separate tensors, and
``torch-complex64``, the layer as a user of torch's native complex tensors
writes it from the paper's definition and its reference code: complex
parameters, the Vandermonde matrix :math:`e^{l \\Delta\\Lambda_n}` taken whole
and contracted with :math:`C \\bar B` by ``einsum``, the causal convolution by
``torch.fft.fft`` of length :math:`2L`, and the skip added. The
``cplxmodule`` variant computes the kernel as one complex matrix product of
:math:`O(N\\sqrt L)` exponentials (:func:`~cplxmodule.cplx.ssm_kernel`)
and folds the skip into tap 0: the difference is the algorithm, not the
dtype (both convolve by torch's native FFT), as the third variant,
``torch-complex64-chunked``, shows: the native layer with
:func:`~cplxmodule.cplx.ssm_kernel`'s algorithm. The layer's groups also
time the first two compiled (``-compiled``, see ``benchmarks/_compiling.py``).
Each variant is checked against the native one before it is timed. Runs on one thread;
``benchmarks/conftest.py`` prints each variant's time divided by the
``torch-complex64`` time of its group (below 1 is faster). On a busy machine add
``--benchmark-timer=time.process_time``.
"""

import math

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from _compiling import NATIVE, NATIVE_COMPILED, OURS, OURS_COMPILED, compiled, eager, warm_up
from _operands import parts_sum, separate_parts

pytestmark = pytest.mark.usefixtures("one_thread")

CHUNKED = "torch-complex64-chunked"
VARIANTS = [OURS, NATIVE, CHUNKED]
BATCH, H, N, L = 16, 64, 64, 1024


class NativeS4D(torch.nn.Module):
    """S4D with complex in and out, in torch's native complex dtype, from ``layer``'s values.

    ``chunked`` computes the kernel as :func:`~cplxmodule.cplx.ssm_kernel`
    does, a product of two tables of powers, instead of the whole
    Vandermonde matrix.
    """

    def __init__(self, layer, chunked=False):
        super().__init__()
        self.chunked = chunked

        def complex_of(z):
            return torch.nn.Parameter(torch.complex(z.real.detach(), z.imag.detach()))

        self.log_dt = torch.nn.Parameter(layer.log_dt.detach().clone())
        self.log_A_real = torch.nn.Parameter(layer.log_A_real.detach().clone())
        self.A_imag = torch.nn.Parameter(layer.A_imag.detach().clone())
        self.B, self.C, self.D = complex_of(layer.B), complex_of(layer.C), complex_of(layer.D)

    def kernel(self, length):
        a = torch.complex(-torch.exp(self.log_A_real), self.A_imag)
        dt_a = a * torch.exp(self.log_dt).unsqueeze(-1)
        c_bbar = self.C * self.B * (torch.exp(dt_a) - 1) / a
        if not self.chunked:
            powers = torch.exp(dt_a.unsqueeze(-1) * torch.arange(length, device=dt_a.device))
            return torch.einsum("hn,hnl->hl", c_bbar, powers)
        chunk = math.isqrt(length - 1) + 1
        chunks = -(-length // chunk)
        r = torch.arange(chunk, device=dt_a.device).unsqueeze(-1)
        left = c_bbar.unsqueeze(-2) * torch.exp(dt_a.unsqueeze(-2) * r)
        right = torch.exp(dt_a.unsqueeze(-1) * (torch.arange(chunks, device=dt_a.device) * chunk))
        return (left @ right).transpose(-1, -2).reshape(a.shape[0], -1)[:, :length]

    def forward(self, u):
        length = u.shape[-1]
        k = self.kernel(length)
        y = torch.fft.ifft(torch.fft.fft(u, n=2 * length) * torch.fft.fft(k, n=2 * length))
        return y[..., :length] + self.D.unsqueeze(-1) * u


def _layers(variant):
    torch.manual_seed(0)
    layer = cnn.CplxS4D(H, N)
    if variant == OURS:
        return layer
    return NativeS4D(layer, chunked=variant == CHUNKED)


def _input(variant, backward):
    torch.manual_seed(1)
    native = torch.randn(BATCH, H, L, dtype=torch.complex64)
    if variant != OURS:
        return native.requires_grad_(backward)
    return separate_parts(native, backward)


def test_variants_agree():
    layer, native = _layers(OURS), _layers(NATIVE)
    u = _input(NATIVE, False)
    expected = native(u).detach()
    k = native.kernel(L).detach()
    # the layer's kernel holds the skip D in tap 0
    kernel = layer.kernel(L)
    kernel = torch.complex(kernel.real, kernel.imag).detach()
    kernel[:, 0] -= native.D.detach()
    outputs = [layer(cplx.from_complex(u)), _layers(CHUNKED)(u)]
    outputs = [torch.complex(y.real, y.imag).detach() for y in outputs]
    kernels = [kernel, _layers(CHUNKED).kernel(L).detach()]
    for y in outputs:
        assert (y - expected).abs().max() < 1e-4 * expected.abs().max()
    for got in kernels:
        assert (got - k).abs().max() < 1e-4 * k.abs().max()


@pytest.mark.parametrize("variant", VARIANTS + [OURS_COMPILED, NATIVE_COMPILED])
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwd+bwd"])
def test_s4d(benchmark, variant, backward):
    fn = compiled(_layers(eager(variant)), variant)
    benchmark.group = f"s4d-{'fwd+bwd' if backward else 'fwd'}"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    u = _input(eager(variant), backward)

    def run():
        return parts_sum(fn(u)).backward() if backward else fn(u)

    with torch.set_grad_enabled(backward):
        warm_up(benchmark, variant, run)
        benchmark(run)


@pytest.mark.parametrize("variant", VARIANTS)
def test_kernel(benchmark, variant):
    fn = _layers(variant)
    benchmark.group = "kernel-fwd+bwd"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    benchmark(lambda: parts_sum(fn.kernel(L)).backward())
