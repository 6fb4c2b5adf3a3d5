"""The table of docs/guides/layers.rst lists every public layer of ``cplxmodule.nn``."""

import inspect
import re
from pathlib import Path

import torch

import cplxmodule.nn
import cplxmodule.nn.losses
from tests.nn import layer_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "layers.rst"

# Public modules of the page's packages that are not layers of their own, so
# have no row: the classes that tests/nn/layer_table.py leaves out, with its
# reasons (the others there, BaseMasked, BaseARD..., are public elsewhere),
# but CplxParameter, which the page lists anyway (under "Parameters and
# containers"), since users build one in their own layers.
ROWS_ANYWAY = {cplxmodule.nn.CplxParameter}
NOT_LAYERS = {
    cls.__name__: reason
    for cls, reason in layer_table.NOT_LAYERS.items()
    if any(getattr(package, cls.__name__, None) is cls for package in (cplxmodule.nn, cplxmodule.nn.losses))
    and cls not in ROWS_ANYWAY
}


def public_layers():
    names = set(cplxmodule.nn.__all__) | set(cplxmodule.nn.losses.__all__)
    return {
        name
        for name in names
        if inspect.isclass(obj := getattr(cplxmodule.nn, name))
        and issubclass(obj, torch.nn.Module)
    }


def table_names():
    """The ``:class:`` targets in the table's first column, by their last dotted part."""
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index(".. list-table::") :]
    # a row's first cell opens with "* -" and goes on in lines indented past it;
    # the other cells ("-") may name layers in passing
    first_cells = re.findall(r"^( *)\* - (.*(?:\n\1    \S.*)*)", table, flags=re.MULTILINE)
    return {
        target.rsplit(".", 1)[-1]
        for _, cell in first_cells
        for target in re.findall(r":class:`~?([\w.]+)`", cell)
        if target.startswith("cplxmodule.nn.")
    }


def test_every_public_layer_has_a_row():
    missing = public_layers() - set(NOT_LAYERS) - table_names()
    assert not missing, f"add a row to {PAGE.name} for: {sorted(missing)}"


def test_every_row_names_a_public_layer():
    # a renamed or removed layer must leave the table too
    unknown = table_names() - public_layers()
    assert not unknown, f"{PAGE.name} names no public layer: {sorted(unknown)}"


def test_left_out_names_are_still_public():
    # a stale exclusion would hide a layer the table should have
    assert set(NOT_LAYERS) <= public_layers()
    assert not set(NOT_LAYERS) & table_names()
