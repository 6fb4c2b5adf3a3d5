"""Complex product strategies against torch's native complex64 kernels.

Run with::

    python -m pytest benchmarks/test_bench_products.py --benchmark-enable

Every strategy of :mod:`cplxmodule.cplx.linalg` (and the default,
``strategy=None``) is timed in the same ``benchmark.group`` as torch's own
``F.linear`` / ``F.conv2d`` on ``torch.complex64`` tensors, for the forward
pass and for forward + backward, at 1 and 2 threads. ``benchmarks/conftest.py``
prints each time divided by the native time of its group. The variants of one
group run one after another (``variant`` is the innermost parameter), so that
they see the same load on a shared machine.
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule.cplx.linalg import STRATEGIES

VARIANTS = ("torch-complex64", "default") + STRATEGIES

# the last one is bound by reading the weight, where the default is "naive"
LINEAR_SIZES = [(32, 64, 64), (256, 512, 512), (64, 1024, 1024), (4096, 128, 128), (16, 1024, 1024)]

# (batch, in_channels, height=width, out_channels, kernel_size)
CONV2D_SIZES = [(8, 16, 32, 32, 3), (32, 32, 16, 64, 3), (4, 64, 32, 64, 5)]


@pytest.fixture(params=[1, 2], ids=lambda n: f"threads{n}")
def threads(request):
    previous = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(previous)


def _run(benchmark, group, variant, native_fn, cplx_fn, native_args, cplx_args, backward):
    """Time ``variant`` (native, default or a strategy), optionally with backward."""
    benchmark.group = group
    benchmark.extra_info["variant"] = variant
    if variant == "torch-complex64":
        fn, args = native_fn, native_args
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
