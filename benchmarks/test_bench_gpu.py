"""On a CUDA device: complex layers against the same layers in torch's native complex64.

Skipped without a GPU. Each group times ours and torch's native complex
layer on the same data in one run (every timed call ends with
``torch.cuda.synchronize()``), so the tables of ``benchmarks/conftest.py``
give ratios, below 1 where ours is faster. The small MLP's training step is
timed eager and compiled, for both: inductor compiles ours (two real
parts) but not torch's complex dtype, which it runs as eager kernels.
Run with::

    python -m pytest benchmarks/test_bench_gpu.py --benchmark-enable
"""

import pytest
import torch
import torch.nn.functional as F

from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxConv2d, CplxLinear, CplxModReLU, CplxSequential

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

NATIVE = "torch-complex64"


def _timed(benchmark, fn, group, variant):
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference=NATIVE)

    def run():
        out = fn()
        torch.cuda.synchronize()
        return out

    run()  # warm up: kernels chosen, compiled graphs built
    benchmark(run)


def _native_twin(layer, native_cls, *args, **kwargs):
    """torch's layer in complex64 with ``layer``'s complex weight and bias."""
    native = native_cls(*args, **kwargs, dtype=torch.complex64, device="cuda")
    with torch.no_grad():
        native.weight.copy_(torch.complex(layer.weight.real, layer.weight.imag))
        native.bias.copy_(torch.complex(layer.bias.real, layer.bias.imag))
    return native


def _step(module, x, backward):
    if not backward:
        with torch.no_grad():
            return module(x)
    module.zero_grad(set_to_none=True)
    out = module(x)
    (out.real.square() + out.imag.square()).mean().backward()
    return out


LAYERS = {
    "linear-4096x1024x1024": (
        lambda: CplxLinear(1024, 1024, device="cuda"),
        lambda layer: _native_twin(layer, torch.nn.Linear, 1024, 1024),
        (4096, 1024),
    ),
    "conv2d-32x64x64x64-k3": (
        lambda: CplxConv2d(64, 64, 3, padding=1, device="cuda"),
        lambda layer: _native_twin(layer, torch.nn.Conv2d, 64, 64, 3, padding=1),
        (32, 64, 64, 64),
    ),
}


@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwd+bwd"])
@pytest.mark.parametrize("side", ["cplxmodule", NATIVE])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_bench_gpu_layer(benchmark, name, side, backward):
    make, native, shape = LAYERS[name]
    torch.manual_seed(0)
    layer = make()
    z = torch.randn(*shape, dtype=torch.complex64, device="cuda")
    if side == NATIVE:
        module, x = native(layer), z
    else:
        module, x = layer, Cplx(z.real.contiguous(), z.imag.contiguous())
    _timed(benchmark, lambda: _step(module, x, backward),
           f"{name}-{'fwd+bwd' if backward else 'fwd'}", side)


class _NativeModReLU(torch.nn.Module):
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def forward(self, z):
        modulus = z.abs()
        return z * (F.relu(modulus - self.threshold) / modulus.clamp_min(1e-12))


def _mlp(native):
    torch.manual_seed(0)
    ours = CplxSequential(
        CplxLinear(32, 64, device="cuda"), CplxModReLU(0.1), CplxLinear(64, 10, device="cuda")
    )
    if not native:
        return ours
    return torch.nn.Sequential(
        _native_twin(ours[0], torch.nn.Linear, 32, 64), _NativeModReLU(0.1),
        _native_twin(ours[2], torch.nn.Linear, 64, 10),
    )


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("side", ["cplxmodule", NATIVE])
def test_bench_gpu_small_mlp_training_step(benchmark, side, compiled):
    native = side == NATIVE
    model = _mlp(native)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    z = torch.randn(64, 32, dtype=torch.complex64, device="cuda")
    x = z if native else Cplx(z.real.contiguous(), z.imag.contiguous())
    forward = torch.compile(model) if compiled else model

    def step():
        optimizer.zero_grad(set_to_none=True)
        out = forward(x)
        (out.real.square() + out.imag.square()).mean().backward()
        optimizer.step()

    variant = f"{side}-compiled" if compiled else side
    benchmark.group = "small-mlp-training-step"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)

    def run():
        step()
        torch.cuda.synchronize()

    for _ in range(3):
        run()
    benchmark(run)
