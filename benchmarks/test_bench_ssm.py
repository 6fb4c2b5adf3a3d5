"""CplxS4D against the same layer written with torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_ssm.py --benchmark-enable

The layer has ``H = 64`` channels of ``N = 64`` (32 complex modes) and runs
on a ``(16, 64, 1024)`` complex input (batch, channels, length), forward and
backward (``fwd+bwd``) or forward only (``fwd``); the ``kernel`` groups time
the convolution kernel alone (length 1024), forward and backward. Two
variants: ``cplx``, :class:`~cplxmodule.nn.CplxS4D` on a
:class:`~cplxmodule.cplx.Cplx` whose parts are two separate tensors, and
``torch-complex64``, the layer as a user of torch's native complex tensors
writes it from the paper's definition and its reference code: complex
parameters, the Vandermonde matrix :math:`e^{l \\Delta\\Lambda_n}` taken whole
and contracted with :math:`C \\bar B` by ``einsum``, the causal convolution by
``torch.fft.fft`` of length :math:`2L`, and the skip added. The
``cplx`` variant computes the kernel as one complex matrix product of
:math:`O(N\\sqrt L)` exponentials (:func:`~cplxmodule.cplx.ssm_kernel`)
and folds the skip into tap 0: the difference is the algorithm, not the
dtype (both convolve by torch's native FFT). Each variant is checked
against the other before it is timed. Runs on one thread;
``benchmarks/conftest.py`` prints each ``cplx`` time divided by the native
time of its group (below 1 is faster). On a busy machine add
``--benchmark-timer=time.process_time``.
"""

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn

pytestmark = pytest.mark.usefixtures("one_thread")

NATIVE = "torch-complex64"
BATCH, H, N, L = 16, 64, 64, 1024


class NativeS4D(torch.nn.Module):
    """S4D with complex in and out, in torch's native complex dtype, from ``layer``'s values."""

    def __init__(self, layer):
        super().__init__()

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
        powers = torch.exp(dt_a.unsqueeze(-1) * torch.arange(length, device=dt_a.device))
        return torch.einsum("hn,hnl->hl", c_bbar, powers)

    def forward(self, u):
        length = u.shape[-1]
        k = self.kernel(length)
        y = torch.fft.ifft(torch.fft.fft(u, n=2 * length) * torch.fft.fft(k, n=2 * length))
        return y[..., :length] + self.D.unsqueeze(-1) * u


def _layers():
    torch.manual_seed(0)
    layer = cnn.CplxS4D(H, N)
    return layer, NativeS4D(layer)


def _input(variant, backward):
    torch.manual_seed(1)
    native = torch.randn(BATCH, H, L, dtype=torch.complex64)
    if variant == NATIVE:
        return native.requires_grad_(backward)
    z = cplx.from_complex(native)
    return cplx.Cplx(z.real.contiguous().requires_grad_(backward),
                     z.imag.contiguous().requires_grad_(backward))


def _parts_sum(out):
    return out.real.sum() + out.imag.sum()


def test_variants_agree():
    layer, native = _layers()
    u = _input(NATIVE, False)
    expected = native(u).detach()
    got = layer(cplx.from_complex(u))
    scale = expected.abs().max()
    assert (torch.complex(got.real, got.imag).detach() - expected).abs().max() < 1e-4 * scale
    k = native.kernel(L).detach()
    got = layer.kernel(L)
    # the layer's kernel holds the skip D in tap 0
    got = torch.complex(got.real, got.imag).detach()
    got[:, 0] -= native.D.detach()
    assert (got - k).abs().max() < 1e-4 * k.abs().max()


@pytest.mark.parametrize("variant", ["cplx", NATIVE])
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwd+bwd"])
def test_s4d(benchmark, variant, backward):
    layer, native = _layers()
    fn = native if variant == NATIVE else layer
    benchmark.group = f"s4d-{'fwd+bwd' if backward else 'fwd'}"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    u = _input(variant, backward)
    if backward:
        benchmark(lambda: _parts_sum(fn(u)).backward())
    else:
        with torch.no_grad():
            benchmark(fn, u)


@pytest.mark.parametrize("variant", ["cplx", NATIVE])
def test_kernel(benchmark, variant):
    layer, native = _layers()
    fn = native if variant == NATIVE else layer
    benchmark.group = "kernel-fwd+bwd"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    benchmark(lambda: _parts_sum(fn.kernel(L)).backward())
