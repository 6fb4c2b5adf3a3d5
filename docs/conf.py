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


def _run_guide_examples(app):
    """Run the guides' ``>>>`` examples; a failing one stops the build."""
    import doctest
    import pathlib

    for guide in sorted(pathlib.Path(app.srcdir, "guides").glob("*.rst")):
        result = doctest.testfile(str(guide), module_relative=False, optionflags=doctest.ELLIPSIS)
        if result.failed:
            raise RuntimeError(f"docs/guides/{guide.name}: {result.failed} example(s) failed")


def setup(app):
    app.connect("autodoc-skip-member", _skip_torch_members)
    app.connect("builder-inited", _run_guide_examples)
