"""Settings shared by the test suite and the docstring examples (doctests).

pytest runs every docstring example of the package (``--doctest-modules``,
see setup.cfg); they read ``torch``, ``cplx`` and ``Cplx`` from this
namespace, as the package's own modules do.
"""

import os

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx

# Under pytest-xdist (``-n logical``) each worker is one process per core: a
# second intra-op thread per worker would only contend with the others.
if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _doctest_globals(doctest_namespace):
    doctest_namespace.update(torch=torch, cplx=cplx, Cplx=Cplx)
    # examples that draw random numbers print the same values on every run
    torch.manual_seed(0)
