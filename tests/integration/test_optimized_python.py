"""The package imports under ``python -OO``, which strips every docstring."""

import os
import subprocess
import sys

import pytest

import cplxmodule

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(cplxmodule.__file__)))

# every module of the package, as a user's optimised deployment imports it
_SCRIPT = """
import importlib, pkgutil
import cplxmodule, cplxmodule.nn, cplxmodule.nn.relevance, cplxmodule.nn.masked
assert cplxmodule.nn.CplxLinear.__doc__ is None
for module in pkgutil.walk_packages(cplxmodule.__path__, "cplxmodule."):
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)
print(cplxmodule.__file__)
"""


# a fresh interpreter imports torch and scipy: seconds
@pytest.mark.slow
def test_imports_without_docstrings():
    result = subprocess.run(
        [sys.executable, "-OO", "-c", _SCRIPT], cwd=_ROOT, capture_output=True, text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    # the code under test, not an installed copy
    assert result.stdout.strip() == cplxmodule.__file__
