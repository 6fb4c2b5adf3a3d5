"""Test-suite settings: hypothesis runs the same examples on every CI run; shared fixtures."""

import gc
import os

import pytest
import torch
from hypothesis import settings

from .helpers import (
    FakeGather, data_parallel, fake_broadcast, fake_parallel_apply, fake_scatter, replicate_module,
    scatter_gather,
)

# Locally each run explores new examples; CI (which sets CI=true) replays a
# fixed set, so that its verdict depends on the change alone.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="module")
def gc_paused():
    """Pause Python's cyclic garbage collector for a module's tests, then collect.

    For files that trace large graphs (``torch.export``, ONNX): tracing makes
    millions of objects, and the collector's passes over them took a fifth
    of an export's time (the layer table's zoo: 48.6 s, 38.9 s paused, for
    60 MB more memory at the peak).
    """
    enabled = gc.isenabled()
    gc.disable()
    yield
    if enabled:
        gc.enable()
    gc.collect()


@pytest.fixture(scope="module")
def one_thread():
    """Run a module's tests on one thread (``pytestmark = pytest.mark.usefixtures("one_thread")``).

    For files of tiny tensors and short training runs: on a busy machine a
    second thread only waits for the first, and the file takes several
    times longer.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def two_fake_devices(monkeypatch):
    """DataParallel's machinery on two CPU 'devices' (distinct copies)."""
    calls = []

    def counting_scatter(tensor, *args, **kwargs):
        calls.append(tensor.shape)
        return fake_scatter(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.nn.parallel.comm, "scatter", counting_scatter)
    monkeypatch.setattr(scatter_gather, "Gather", FakeGather)
    monkeypatch.setattr(data_parallel, "parallel_apply", fake_parallel_apply)
    monkeypatch.setattr(
        replicate_module, "_broadcast_coalesced_reshape", fake_broadcast(torch.device("cpu"))
    )
    return calls
