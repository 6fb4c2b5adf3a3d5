"""Sphinx configuration for the cplxmodule reference and guides."""

import cplxmodule

project = "cplxmodule"
author = "cplxmodule developers"
release = cplxmodule.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
}
autodoc_member_order = "bysource"
autodoc_typehints = "none"

exclude_patterns = ["_build"]
html_theme = "alabaster"
nitpicky = False

# torch's own docstrings are written for torch's Sphinx set-up; our subclasses
# document what they add.
autodoc_inherit_docstrings = False


def _skip_torch_members(app, what, name, obj, skip, options):
    """Leave out methods that are torch's, re-bound in our classes."""
    module = getattr(obj, "__module__", None) or ""
    return True if module.startswith("torch") else None


def setup(app):
    app.connect("autodoc-skip-member", _skip_torch_members)
