"""Test-suite settings: hypothesis runs the same examples on every CI run; a one-thread fixture."""

import os

import pytest
import torch
from hypothesis import settings

# Locally each run explores new examples; CI (which sets CI=true) replays a
# fixed set, so that its verdict depends on the change alone.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
