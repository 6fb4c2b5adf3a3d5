"""Mixed precision: a training step of the demo's model under bfloat16 autocast.

Run with ``python -m pytest benchmarks/test_bench_amp.py --benchmark-enable``.
One group per model (the demo's complex
:class:`~cplxmodule.demo.model.ModulationNet` and its real twin, width 16,
bursts of 128 samples, batch 128, one thread): forward, cross-entropy,
backward and an Adam step, with variants

- ``float32``: eager float32, the reference;
- ``bfloat16``: the same step with the forward pass and the loss under
  ``torch.autocast("cpu", dtype=torch.bfloat16)``, parameters and optimizer
  state in float32.

The session prints each variant's time over the float32 time of its group:
whether bfloat16 pays on a CPU depends on its matrix units (AMX, AVX512-BF16);
without them torch converts to float32 inside its kernels and autocast adds
casts to every product.
"""

import contextlib

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule.demo.data import MODULATIONS
from cplxmodule.demo.model import ModulationNet

BATCH, LENGTH, WIDTH = 128, 128, 16
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("variant", ["float32", "bfloat16"])
@pytest.mark.parametrize("is_complex", [True, False], ids=["complex", "real"])
def test_training_step(benchmark, is_complex, variant):
    torch.manual_seed(0)
    model = ModulationNet(len(MODULATIONS), WIDTH, complex=is_complex).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    if is_complex:
        x = cplx.randn(BATCH, 1, LENGTH)
    else:
        x = torch.randn(BATCH, 2, LENGTH)
    label = torch.randint(len(MODULATIONS), (BATCH,))

    def context():
        if variant == "float32":
            return contextlib.nullcontext()
        return torch.autocast("cpu", dtype=torch.bfloat16)

    def step():
        with context():
            loss = F.cross_entropy(model(x), label)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    benchmark.group = f"{'complex' if is_complex else 'real'}-demo-train"
    benchmark.extra_info.update(variant=variant, reference="float32")
    step()
    benchmark(step)
