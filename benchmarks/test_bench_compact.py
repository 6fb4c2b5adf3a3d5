"""Compact sparse inference against the dense-masked forward it replaces.

Run with ``python -m pytest benchmarks/test_bench_compact.py --benchmark-enable``.
Every group is one model at one batch size, timed under
:func:`torch.inference_mode`, with variants

- ``masked``: what a masked layer computes at every call, ``weight * mask``
  then the dense product (``F.linear`` or :func:`cplxmodule.cplx.linear`);
- ``compact``: :func:`cplxmodule.nn.masked.compact` of the masked model;
- ``shrunk-dense`` (structured groups): the dense model of the shrunk size,
  built directly, which ``compact`` must match.

Unstructured groups are one 2048 x 2048 layer (real, or complex) with a
random mask keeping 10 % or 1 % of the weight. Structured groups are
``Linear(2048, 2048) -> ReLU -> Linear(2048, 2048)`` whose first mask zeroes
half of the rows (no bias): ``compact`` removes those features from both
layers. Runs on one thread. At the end the session
prints each variant's time over the compact model's (``benchmarks/conftest.py``):
``masked`` is then the speedup, and ``shrunk-dense`` is at least 1 when the
compact model is as fast as the dense model of its size; from the minimum and
from the median.
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxLinear, CplxModReLU, CplxSequential
from cplxmodule.nn.masked import CplxLinearMasked, LinearMasked, compact

SIZE = 2048
# one thread: on the shared 2-core machine a second OpenMP thread waits for
# a busy core, and sparse products then vary by 100x between runs
pytestmark = pytest.mark.usefixtures("one_thread")


class _DenseMasked(torch.nn.Module):
    """``weight * mask`` then the dense product, at every call."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        layer = self.layer
        weight = layer.weight * layer.mask
        if isinstance(weight, cplx.Cplx):
            return cplx.linear(x, weight, layer.bias)
        return F.linear(x, weight, layer.bias)


def _input(is_complex, batch):
    torch.manual_seed(1)
    return cplx.randn(batch, SIZE) if is_complex else torch.randn(batch, SIZE)


def unstructured(is_complex, density, variant):
    torch.manual_seed(0)
    layer = (CplxLinearMasked if is_complex else LinearMasked)(SIZE, SIZE)
    layer.mask = torch.rand(SIZE, SIZE) < density
    model = torch.nn.Sequential(layer).eval()
    return compact(model) if variant == "compact" else _DenseMasked(layer)


def structured(is_complex, variant):
    torch.manual_seed(0)
    Linear = CplxLinear if is_complex else torch.nn.Linear
    Sequential = CplxSequential if is_complex else torch.nn.Sequential
    act = CplxModReLU(0.1) if is_complex else torch.nn.ReLU()
    if variant == "shrunk-dense":
        return Sequential(Linear(SIZE, SIZE // 2, bias=False), act, Linear(SIZE // 2, SIZE)).eval()
    Masked = CplxLinearMasked if is_complex else LinearMasked
    first, second = Masked(SIZE, SIZE, bias=False), Masked(SIZE, SIZE)
    first.mask = (torch.arange(SIZE) % 2 == 0).float().unsqueeze(1).expand(SIZE, SIZE)
    second.mask = torch.ones(SIZE, SIZE)
    masked = Sequential(first, act, second).eval()
    if variant == "compact":
        return compact(masked, max_density=0.0)
    return Sequential(_DenseMasked(first), act, _DenseMasked(second))


def cases():
    for is_complex in (False, True):
        kind = "cplx" if is_complex else "real"
        for batch in (1, 64):
            for density in (0.1, 0.01):
                for variant in ("masked", "compact"):
                    group = f"{kind}-{SIZE}-sparsity{1 - density:.0%}-batch{batch}"
                    yield pytest.param(
                        is_complex, batch, density, variant, group, id=f"{group}-{variant}"
                    )
            for variant in ("masked", "compact", "shrunk-dense"):
                group = f"{kind}-{SIZE}-structured-batch{batch}"
                yield pytest.param(is_complex, batch, None, variant, group, id=f"{group}-{variant}")


@pytest.mark.parametrize("is_complex, batch, density, variant, group", list(cases()))
def test_compact_inference(benchmark, is_complex, batch, density, variant, group):
    if density is None:
        model = structured(is_complex, variant)
    else:
        model = unstructured(is_complex, density, variant)
    x = _input(is_complex, batch)
    benchmark.group = group
    benchmark.extra_info.update(variant=variant, reference="compact")

    def step():
        with torch.inference_mode():
            return model(x)

    step()
    benchmark(step)
