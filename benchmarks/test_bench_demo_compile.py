"""The demo's convolutional network, eager against compiled, dense against channel-compact.

Run with ``python -m pytest benchmarks/test_bench_demo_compile.py --benchmark-enable``.
The model is the demo's :class:`~cplxmodule.demo.model.ModulationNet`
(default width 16, ten classes, bursts of 128 samples, batch 64), complex,
and its real twin of as many real parameters. Variants:

- ``cplx-eager``, the reference of every group, and ``cplx-compiled``
  (``torch.compile``, inductor, default mode, ``fullgraph=True``);
- ``real-eager`` and ``real-compiled``: the real twin, torch's own layers;
- ``compact-eager`` and ``compact-compiled`` (compact groups): the complex
  network with 75 % of each convolution's output channels masked,
  compacted (:func:`~cplxmodule.nn.masked.compact`), the structured model
  the demo's ``--structured`` run deploys.

Groups time the inference (under :func:`torch.inference_mode`) and a
training step (the forward, the cross-entropy, the backward and an SGD
step; the optimizer stays eager), at one thread and at two. Each variant's
first call compiles (its wall-clock time is kept in ``extra_info
["first_call_s"]``: a user pays it once per input shape), and two more
calls run before timing. The session ends with each variant's time over
``cplx-eager``'s (``benchmarks/conftest.py``): below 1 is faster.
"""

import time

import pytest
import torch
import torch.nn.functional as F

from cplxmodule import cplx
from cplxmodule.demo.model import ModulationNet
from cplxmodule.nn.masked import compact, to_masked

REFERENCE = "cplx-eager"
BATCH, LENGTH, CLASSES = 64, 128, 10
DEAD_CHANNELS = 0.75
WARMUP = 3


def _model(variant):
    torch.manual_seed(0)
    is_complex = not variant.startswith("real")
    model = ModulationNet(CLASSES, complex=is_complex)
    x = (cplx.randn if is_complex else torch.randn)(BATCH, 1 if is_complex else 2, LENGTH)
    if variant.startswith("compact"):
        masked = to_masked(model).eval()
        for layer in masked.modules():
            if hasattr(layer, "mask"):
                mask = torch.ones(layer.weight.real.shape)
                if mask.dim() > 2:
                    mask[: int(DEAD_CHANNELS * mask.shape[0])] = 0
                layer.mask = mask
        model = compact(masked)
    return model, x


def _compiled(model, variant):
    if not variant.endswith("compiled"):
        return model
    torch._dynamo.reset()  # each test compiles afresh, far from dynamo's recompilation limit
    return torch.compile(model, fullgraph=True)


def _warm_up(benchmark, call):
    start = time.perf_counter()
    call()
    benchmark.extra_info["first_call_s"] = time.perf_counter() - start
    for _ in range(WARMUP - 1):
        call()


VARIANTS = ["cplx-eager", "cplx-compiled", "real-eager", "real-compiled"]


@pytest.mark.parametrize("variant", VARIANTS + ["compact-eager", "compact-compiled"])
def test_demo_inference(benchmark, threads, variant):
    model, x = _model(variant)
    forward = _compiled(model.eval(), variant)

    def call():
        with torch.inference_mode():
            return forward(x)

    benchmark.group = f"demo conv net batch {BATCH}: inference, {threads} thread(s)"
    benchmark.extra_info.update(variant=variant, reference=REFERENCE)
    _warm_up(benchmark, call)
    benchmark(call)


@pytest.mark.parametrize("variant", VARIANTS)
def test_demo_training_step(benchmark, threads, variant):
    model, x = _model(variant)
    forward = _compiled(model.train(), variant)
    target = torch.randint(0, CLASSES, (BATCH,), generator=torch.Generator().manual_seed(1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(forward(x), target).backward()
        optimizer.step()

    benchmark.group = f"demo conv net batch {BATCH}: training step, {threads} thread(s)"
    benchmark.extra_info.update(variant=variant, reference=REFERENCE)
    _warm_up(benchmark, step)
    benchmark(step)


def test_compiled_computes_as_eager():
    # the timed variants compute the same map
    for variant in ("cplx", "compact"):
        model, x = _model(f"{variant}-compiled")
        with torch.no_grad():
            want = model.eval()(x)
            got = torch.compile(model, backend="aot_eager", fullgraph=True)(x)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
