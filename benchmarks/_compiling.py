"""The compiled variants that the benchmarks against torch's native complex64 share.

A group that compares with native has four variants: ours and the native
model, each eager and under ``torch.compile`` (inductor, the default mode,
``fullgraph=True``), named by :data:`NATIVE` and :data:`OURS` with
``-compiled`` for the compiled ones. An inference group may add the
``-compiled-frozen`` variants (:data:`FROZEN_SETTINGS`), compiled with
inductor's ``freezing`` and ``cpp_wrapper`` inside :func:`settings`.
"""

import contextlib
import time

import pytest
import torch

NATIVE = "torch-complex64"
OURS = "cplxmodule"
NATIVE_COMPILED = NATIVE + "-compiled"
OURS_COMPILED = OURS + "-compiled"
VARIANTS = [NATIVE, NATIVE_COMPILED, OURS, OURS_COMPILED]
NATIVE_FROZEN = NATIVE_COMPILED + "-frozen"
OURS_FROZEN = OURS_COMPILED + "-frozen"
# what a user sets to deploy a compiled model for inference on the CPU:
# freezing folds the parameters (and what the graph computes from them
# alone, the masked weights, the block matrices) into constants, and the
# C++ wrapper calls the kernels without Python between them
FROZEN_SETTINGS = {"freezing": True, "cpp_wrapper": True}
# warm-up calls before timing: the first compiles (forward and, in training,
# backward), the next ones run the cached code
WARMUP = 3


def eager(variant):
    """The eager variant that a ``-compiled`` one compiles (``variant`` itself if eager)."""
    return variant.removesuffix("-frozen").removesuffix("-compiled")


def is_compiled(variant):
    """Whether ``variant`` is compiled (``-compiled`` or ``-compiled-frozen``)."""
    return variant != eager(variant)


def settings(variant):
    """The inductor settings of ``variant`` while it compiles and runs, restored on exit.

    The ``-frozen`` variants run under :data:`FROZEN_SETTINGS`, the others
    under inductor's defaults. Inductor reads its settings when it compiles,
    at the first call, and the library's compiled code reads ``freezing``
    (dynamo guards on it), so the calls that are timed run inside too.
    """
    if not variant.endswith("-frozen"):
        return contextlib.nullcontext()
    import torch._inductor.config

    return torch._inductor.config.patch(FROZEN_SETTINGS)


def compiled(model, variant):
    """``model``, compiled for the ``-compiled`` variants: inductor, default mode, whole graph."""
    if not is_compiled(variant):
        return model
    torch._dynamo.reset()  # each test compiles afresh, far from dynamo's recompilation limit
    return torch.compile(model, fullgraph=True)


def warm_up(benchmark, variant, call):
    """Run ``call`` before timing; keep the first call's wall-clock time in ``extra_info``.

    The first call of a compiled variant compiles: its time
    (``extra_info["first_call_s"]``) is what a user pays once per input
    shape. A native model that does not compile skips its variant with the
    error as the reason: inductor has no complex kernels. With the
    benchmarks disabled (the test run's ``--benchmark-disable``), a compiled
    variant is skipped: compiling takes seconds to minutes, and the eager
    variants check the code runs.
    """
    if benchmark.disabled and is_compiled(variant):
        pytest.skip("compiled variants run only with --benchmark-enable")
    start = time.perf_counter()
    try:
        call()
    except Exception as error:  # noqa: BLE001 - any compile failure of the reference is a finding
        if not (is_compiled(variant) and eager(variant) == NATIVE):
            raise
        pytest.skip(f"torch.compile of the native complex64 model fails: {type(error).__name__}: "
                    f"{str(error).splitlines()[0] if str(error) else ''}")
    benchmark.extra_info["first_call_s"] = time.perf_counter() - start
    for _ in range(WARMUP - 1):
        call()
