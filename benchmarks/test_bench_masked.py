"""The cost of masking: masked layers next to their dense twin and torch's pruning.

Run with ``python -m pytest benchmarks/test_bench_masked.py --benchmark-enable``.
Each group is one layer at one size in one mode (``forward`` under
``torch.no_grad()`` in eval mode, or ``forward+backward``), with variants

- ``dense``: the dense twin (``torch.nn.Linear``, ``CplxLinear``, ...);
- ``masked``: the masked layer (:mod:`cplxmodule.nn.masked`), which
  computes ``weight * mask`` at every call;
- ``cached``: the masked layer inside :func:`cplxmodule.nn.cached`, entered
  once around all the timed calls for ``forward`` (the product and the
  packed complex weight are computed once) and at every step for
  ``forward+backward``;
- ``prune``: the dense real layer under ``torch.nn.utils.prune.custom_from_mask``
  (real layers only: prune recomputes ``weight`` in a forward pre-hook of the
  module owning the parameter, and a complex weight's parts are owned by a
  :class:`~cplxmodule.nn.CplxParameter`, which is never called);
- ``parametrize``: the dense complex layer with each weight part masked by
  ``torch.nn.utils.parametrize`` (complex layers only).

At the end the session prints each variant's time over the dense time of
its group (``benchmarks/conftest.py``; min and median, on a busy machine the
min is the steadier of the two).
"""

import contextlib

import pytest
import torch
import torch.nn.utils.parametrize as parametrize
import torch.nn.utils.prune as prune

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxConv2d, CplxLinear, cached
from cplxmodule.nn.masked import Conv2dMasked, CplxConv2dMasked, CplxLinearMasked, LinearMasked

# kind -> size -> (constructor args, input shape)
SIZES = {
    "linear": {"small": ((64, 64), (32, 64)), "large": ((512, 512), (256, 512))},
    "conv2d": {"small": ((8, 8, 3), (8, 8, 16, 16)), "large": ((32, 32, 3), (16, 32, 32, 32))},
}
LAYERS = {  # (kind, complex) -> (dense class, masked class)
    ("linear", False): (torch.nn.Linear, LinearMasked),
    ("conv2d", False): (torch.nn.Conv2d, Conv2dMasked),
    ("linear", True): (CplxLinear, CplxLinearMasked),
    ("conv2d", True): (CplxConv2d, CplxConv2dMasked),
}


class _Mask(torch.nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)

    def forward(self, weight):
        return weight * self.mask


def make_layer(kind, is_complex, variant, args):
    torch.manual_seed(0)
    dense_cls, masked_cls = LAYERS[kind, is_complex]
    layer = (masked_cls if variant in ("masked", "cached") else dense_cls)(*args)
    shape = layer.weight.real.shape if is_complex else layer.weight.shape
    mask = (torch.rand(shape) > 0.5).float()
    if variant in ("masked", "cached"):
        layer.mask = mask
    elif variant == "prune":
        prune.custom_from_mask(layer, "weight", mask)
    elif variant == "parametrize":
        for part in ("real", "imag"):
            parametrize.register_parametrization(layer.weight, part, _Mask(mask))
    return layer


def make_input(shape, is_complex):
    torch.manual_seed(1)
    return cplx.randn(*shape) if is_complex else torch.randn(*shape)


def total(output):
    return output.real.sum() + output.imag.sum() if isinstance(output, cplx.Cplx) else output.sum()


def cases():
    for kind, sizes in SIZES.items():
        for is_complex in (False, True):
            for size in sizes:
                for mode in ("forward", "forward+backward"):
                    variants = ["dense", "masked", "cached", "parametrize" if is_complex else "prune"]
                    for variant in variants:
                        name = f"{'cplx-' if is_complex else ''}{kind}-{size}-{mode}"
                        yield pytest.param(kind, is_complex, size, mode, variant, id=f"{name}-{variant}")


@pytest.mark.parametrize("kind, is_complex, size, mode, variant", list(cases()))
def test_masked_layer(benchmark, kind, is_complex, size, mode, variant):
    args, input_shape = SIZES[kind][size]
    layer = make_layer(kind, is_complex, variant, args)
    x = make_input(input_shape, is_complex)
    benchmark.group = f"{'cplx-' if is_complex else ''}{kind}-{size}-{mode}"
    benchmark.extra_info.update(variant=variant, reference="dense")

    context = cached if variant == "cached" else lambda layer: contextlib.nullcontext()
    if mode == "forward":
        layer.eval()

        def step():
            with torch.no_grad():
                return layer(x)

        with context(layer):
            step()  # warm up (and fill the cache)
            benchmark(step)
    else:

        def step():
            with context(layer):
                total(layer(x)).backward()

        step()  # warm up
        benchmark(step)
