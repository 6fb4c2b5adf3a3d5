"""Complex products, layers and a small model against torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_products.py --benchmark-enable

Every strategy of :mod:`cplxmodule.cplx.linalg` (and the default,
``strategy=None``) is timed in the same ``benchmark.group`` as torch's own
``F.linear`` / ``F.conv2d`` on ``torch.complex64`` tensors, for the forward
pass and for forward + backward, at 1 and 2 threads; so is the default on
packed operands (``packed``), as layers inside :func:`cplxmodule.nn.cached`
run it. Then complex layers and a complex MLP (256 -> 512 -> 512 -> 8, split
ReLU) are timed against their twins built from torch's complex64 layers,
outside (``layer``) and inside (``cached``) the context, and both sides
compiled (``layer-compiled``, ``torch-complex64-compiled``, see
``benchmarks/_compiling.py``); for forward + backward the context is
entered at every step, as training does.
``benchmarks/conftest.py`` prints each time divided by the native time of
its group. The variants of one group run one after another (``variant`` is
the innermost parameter), so that they see the same load on a shared machine.
On a busy machine time the 1-thread groups in CPU time, which waiting for a
core does not inflate: add ``-k threads1 --benchmark-timer=time.process_time``.
"""

import contextlib

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule.cplx._product import STRATEGIES, Packed
from cplxmodule.nn import CplxConv2d, CplxLinear, CplxSequential, CplxToCplx, cached
from _compiling import NATIVE, NATIVE_COMPILED, compiled, eager, warm_up

VARIANTS = (NATIVE, "default", "packed") + STRATEGIES
LAYER_VARIANTS = (NATIVE, "layer", "cached", NATIVE_COMPILED, "layer-compiled")

# the last one is bound by reading the weight, where the default is "naive"
LINEAR_SIZES = [(32, 64, 64), (256, 512, 512), (64, 1024, 1024), (4096, 128, 128), (16, 1024, 1024)]

# (batch, in_channels, height=width, out_channels, kernel_size)
CONV2D_SIZES = [(8, 16, 32, 32, 3), (32, 32, 16, 64, 3), (4, 64, 32, 64, 5)]


def _run(benchmark, group, variant, native_fn, cplx_fn, native_args, cplx_args, backward):
    """Time ``variant`` (native, default or a strategy), optionally with backward."""
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    if variant == NATIVE:
        fn, args = native_fn, native_args
    elif variant == "packed":
        # the packed weight and bias of a layer inside ``cached``: reused
        # without autograd, made afresh at every step with it
        if backward:

            def fn(x, w, b):
                return cplx_fn(x, Packed(w), Packed(b), strategy=None)

        else:
            packed = cplx_args[:1] + [Packed(z) for z in cplx_args[1:]]

            def fn(*args):
                return cplx_fn(*packed, strategy=None)

        args = cplx_args
    else:
        strategy = None if variant == "default" else variant

        def fn(*args):
            return cplx_fn(*args, strategy=strategy)

        args = cplx_args

    if not backward:
        with torch.no_grad():
            benchmark(fn, *args)
        return

    leaves = [t for a in args for t in ((a.real, a.imag) if isinstance(a, cplx.Cplx) else (a,))]
    for leaf in leaves:
        leaf.requires_grad_(True)

    def step():
        out = fn(*args)
        loss = out.real.sum() + out.imag.sum()
        return torch.autograd.grad(loss, leaves)

    benchmark(step)


def _operands(*shapes):
    """The same random values as :class:`Cplx` and as native complex64."""
    zs = [cplx.randn(*shape) for shape in shapes]
    return zs, [torch.complex(z.real, z.imag) for z in zs]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwdbwd"])
@pytest.mark.parametrize("size", LINEAR_SIZES, ids=lambda s: "x".join(map(str, s)))
def test_linear(benchmark, threads, variant, size, backward):
    batch, n_in, n_out = size
    zs, cs = _operands((batch, n_in), (n_out, n_in), (n_out,))
    group = f"linear {'x'.join(map(str, size))} {'fwd+bwd' if backward else 'fwd'} t{threads}"
    _run(benchmark, group, variant, F.linear, cplx.linear, cs, zs, backward)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwdbwd"])
@pytest.mark.parametrize("size", CONV2D_SIZES, ids=lambda s: "x".join(map(str, s)))
def test_conv2d(benchmark, threads, variant, size, backward):
    batch, n_in, hw, n_out, k = size
    zs, cs = _operands((batch, n_in, hw, hw), (n_out, n_in, k, k), (n_out,))
    group = f"conv2d {'x'.join(map(str, size))} {'fwd+bwd' if backward else 'fwd'} t{threads}"

    def native(x, w, b):
        return F.conv2d(x, w, b, padding=k // 2)

    def ours(x, w, b, strategy):
        return cplx.conv2d(x, w, b, padding=k // 2, strategy=strategy)

    _run(benchmark, group, variant, native, ours, cs, zs, backward)


# layers and a model: (name, our factory, native factory, input shape)
class _NativeSplitReLU(torch.nn.Module):
    """ReLU on each part of a native complex tensor (a split ReLU)."""

    def forward(self, input):
        return torch.view_as_complex(F.relu(torch.view_as_real(input)))


def _mlp(linear, relu):
    return [linear(256, 512), relu(), linear(512, 512), relu(), linear(512, 8)]


def _native_linear(n_in, n_out):
    return torch.nn.Linear(n_in, n_out, dtype=torch.complex64)


MODELS = {
    "linear 32x64x64": (lambda: CplxLinear(64, 64), lambda: _native_linear(64, 64), (32, 64)),
    "linear 256x512x512": (
        lambda: CplxLinear(512, 512), lambda: _native_linear(512, 512), (256, 512)
    ),
    "conv2d 8x16x32x32x3": (
        lambda: CplxConv2d(16, 32, 3, padding=1),
        lambda: torch.nn.Conv2d(16, 32, 3, padding=1, dtype=torch.complex64),
        (8, 16, 32, 32),
    ),
    "mlp 256x(256-512-512-8)": (
        lambda: CplxSequential(*_mlp(CplxLinear, CplxToCplx[torch.nn.ReLU])),
        lambda: torch.nn.Sequential(*_mlp(_native_linear, _NativeSplitReLU)),
        (256, 256),
    ),
}


@pytest.mark.parametrize("variant", LAYER_VARIANTS)
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwdbwd"])
@pytest.mark.parametrize("name", MODELS)
def test_model(benchmark, threads, variant, name, backward):
    ours, theirs, shape = MODELS[name]
    torch.manual_seed(0)
    model = theirs() if eager(variant) == NATIVE else ours()
    forward = compiled(model, variant)
    x = cplx.randn(*shape)
    if eager(variant) == NATIVE:
        x = cplx.to_complex(x)
    benchmark.group = f"{name} {'fwd+bwd' if backward else 'fwd'} t{threads}"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)

    def loss(out):
        out = torch.view_as_real(out) if isinstance(out, torch.Tensor) else out
        return out.real.sum() + out.imag.sum() if isinstance(out, cplx.Cplx) else out.sum()

    context = cached if variant == "cached" else lambda model: contextlib.nullcontext()
    if backward:
        params = list(model.parameters())

        def step():
            with context(model):
                return torch.autograd.grad(loss(forward(x)), params)

        warm_up(benchmark, variant, step)
        benchmark(step)
        return
    # inference as deployed: torch.inference_mode, for both sides
    with torch.inference_mode(), context(model):
        warm_up(benchmark, variant, lambda: forward(x))
        benchmark(forward, x)
