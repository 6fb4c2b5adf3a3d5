"""The documentation runs and is complete.

- Every ``>>>`` example in ``docs/**/*.rst`` and in ``README.rst`` runs and
  prints what the page says, and no page hides Python code in a block that
  would not run.
- Every public name (any class or function in the ``__all__`` of a public
  module) is in the API reference, ``docs/api/*.rst``, through an ``auto*``
  directive (under any of its import paths).

The Sphinx build itself (``-W -n``, in ``.ci/run``) checks that the
references resolve and that autodoc finds what the pages name.
"""

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest
import torch

import cplxmodule.nn
from cplxmodule.nn import masked
from cplxmodule.nn.relevance import GaussianMixin
from tests.nn import layer_table

from ..helpers import public_modules, public_objects

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.rst") if "_build" not in p.parts)
EXAMPLE_FILES = PAGES + [ROOT / "README.rst"]

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


# pages whose examples train models: each takes more than a few seconds
SLOW_PAGES = {"deploying.rst", "models.rst", "reconstruction.rst", "sequence.rst", "sparsifying.rst"}


@pytest.mark.parametrize("path", [
    pytest.param(path, marks=pytest.mark.slow) if path.name in SLOW_PAGES else path
    for path in EXAMPLE_FILES
], ids=_ids(EXAMPLE_FILES))
def test_examples_run(path):
    text = path.read_text()
    test = doctest.DocTestParser().get_doctest(text, {}, path.name, str(path), 0)
    report = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


# Python that doctest would not run: code directives, Sphinx's testcode
# blocks (run only by its doctest builder), and literal blocks with imports.
HIDDEN_CODE = re.compile(
    r"^\s*\.\. (code-block|code|sourcecode|testcode|testsetup)::\s*(python|py|pycon)?\s*$"
)
IMPORT_LINE = re.compile(r"^\s+(import \w|from [\w.]+ import )")


def _unexecuted_code(lines):
    """Line numbers of Python code that the doctest parser would skip."""
    found, in_literal = [], False
    for number, line in enumerate(lines, 1):
        match = HIDDEN_CODE.match(line)
        if match and (match.group(1) in ("testcode", "testsetup") or match.group(2)):
            found.append(number)
        if line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            in_literal = True
        elif line.strip() and not line[0].isspace():
            in_literal = False
        elif in_literal and IMPORT_LINE.match(line):
            found.append(number)
    return found


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=_ids(EXAMPLE_FILES))
def test_python_is_written_as_examples(path):
    found = _unexecuted_code(path.read_text().splitlines())
    assert not found, (
        f"{path.name}: Python code at lines {found} would never run; write it "
        "as `>>>` examples, which tests/integration/test_docs.py runs"
    )


def test_hidden_code_detector():
    # the detector itself must see each way of hiding code, and nothing else
    page = [
        ".. code-block:: python",  # 1
        "",
        ".. code-block:: console",  # 3
        "",
        ".. testcode::",  # 5
        "",
        "A literal block::",  # 7
        "",
        "    from cplxmodule import Cplx",  # 9
        "    pip install -e .",
        "",
        ">>> import torch",  # 12
    ]
    assert _unexecuted_code(page) == [1, 5, 9]


DIRECTIVE = re.compile(
    r"^\.\. (?:py:)?(automodule|autoclass|autofunction|autodata|autoexception"
    r"|autodecorator|currentmodule|module)::\s*(\S+)\s*$"
)


def _resolve(name, current):
    """The object that ``name`` names, relative to module ``current``."""
    if current and "." not in name:
        return getattr(importlib.import_module(current), name)
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def documented():
    """Ids of the objects the API pages document."""
    objects = set()
    for page in sorted((DOCS / "api").glob("*.rst")):
        lines = page.read_text().splitlines()
        current = None
        for number, line in enumerate(lines):
            match = DIRECTIVE.match(line)
            if not match:
                continue
            kind, name = match.groups()
            if kind in ("currentmodule", "module", "automodule"):
                current = name
            if kind == "automodule":
                options = []
                for option in lines[number + 1 :]:
                    if not option.startswith("   :"):
                        break
                    options.append(option.strip())
                if ":no-members:" not in options:
                    mod = importlib.import_module(name)
                    objects.update(id(getattr(mod, n)) for n in getattr(mod, "__all__", []))
            elif kind.startswith("auto"):
                objects.add(id(_resolve(name, current)))
    return objects


def test_every_public_name_is_in_the_reference():
    objects = documented()
    missing = sorted(qualname for qualname, obj in public_objects() if id(obj) not in objects)
    assert not missing, f"not in docs/api/*.rst: {missing}"


# Not layers of their own: the public classes that tests/nn/layer_table.py
# leaves out (bases to derive from, a parameter), and here besides a
# container, a wrapper and the Gaussian layers' mixin, whose docstrings say
# how they are used instead. CompactRecurrent stays in: no layer of the
# layer table's generic tests (only compact() builds one), but a public
# module with a forward, documented as a layer.
NOT_LAYERS = {cls for cls in layer_table.NOT_LAYERS if cls is not masked.CompactRecurrent} | {
    cplxmodule.nn.CplxSequential,
    cplxmodule.nn.CplxDataParallel,
    GaussianMixin,
}
# The Bayesian layers live in the subpackages of nn.relevance too, at their
# published paths, next to their Gaussian bases (``LinearGaussian``...):
# layers without a penalty, to derive from as the VD and ARD layers do.
LAYER_MODULES = ["cplxmodule.nn", "cplxmodule.nn.masked"] + [
    module for module in public_modules() if module.startswith("cplxmodule.nn.relevance")
]


def _layers():
    seen = set()
    for module in LAYER_MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if (
                inspect.isclass(obj)
                and issubclass(obj, torch.nn.Module)
                and obj not in NOT_LAYERS
                and not name.endswith("Gaussian")
                and obj.__name__ == name  # aliases are documented as aliases
                and obj not in seen  # re-exports: checked once, where first found
            ):
                seen.add(obj)
                yield f"{module}.{name}", obj


@pytest.mark.parametrize("qualname, layer", list(_layers()))
def test_layer_documents_shape_and_example(qualname, layer):
    doc = inspect.cleandoc(layer.__dict__.get("__doc__") or "")
    missing = [
        section
        for section in ("Shape", "Examples")
        if not re.search(rf"^{section}\n-+$", doc, re.M)
    ]
    assert not missing, f"{qualname}'s docstring lacks {missing}"
