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
