"""Sphinx configuration for the cplxmodule reference and guides.

Built in CI with ``python -m sphinx -W -n --keep-going -b html docs
docs/_build/html``: warnings are errors and every cross-reference must
resolve, except those into torch, numpy, scipy and the standard library,
whose inventories cannot be fetched without network access (see
``nitpick_ignore_regex``). The guides' ``>>>`` examples run in the test suite
(``tests/test_docs.py``).
"""

import inspect

import cplxmodule

project = "cplxmodule"
author = "cplxmodule developers"
copyright = "cplxmodule developers"
release = cplxmodule.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
]

# The copy button copies the code of an example without prompts or output.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# numpy-style types ("int, optional", "{'a', 'b'}, default 'a'") become
# cross-references for the names and plain text for the rest.
napoleon_preprocess_types = True
napoleon_custom_sections = ["Shape"]

autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
# torch's own docstrings are written for torch's Sphinx set-up; our subclasses
# document what they add.
autodoc_inherit_docstrings = False

exclude_patterns = ["_build"]
templates_path = []

html_theme = "furo"
html_title = f"cplxmodule {release}"
html_theme_options = {
    "sidebar_hide_name": False,
    "navigation_with_keys": True,
}

# Every reference must resolve, except into packages whose inventories are
# out of reach offline: torch, numpy, scipy and Python itself.
nitpicky = True
_EXTERNAL = r"(torch|numpy|np|scipy|typing|collections|abc|builtins)(\..*)?"
_BUILTINS = (
    r"(True|False|None|int|float|complex|bool|str|bytes|tuple|list|dict|set|slice|object|type"
    r"|callable|iterable|iterator|sequence|mapping|array_like|array-like"
    r"|Ellipsis|NotImplemented|Exception|\w+Error|\w+Warning|module|function"
    r"|generator|number|scalar|Tensor|Module|Parameter|dtype|device|Generator)"
)
nitpick_ignore_regex = [
    (r"py:.*", _EXTERNAL),
    (r"py:.*", _BUILTINS),
]


def _skip_torch_members(app, what, name, obj, skip, options):
    """Leave out methods that are torch's, re-bound in our classes."""
    module = getattr(obj, "__module__", None) or ""
    return True if module.startswith("torch") else None


def _public_bases(app, name, obj, options, bases):
    """Show a class's public ancestors in place of private helper bases."""

    def expand(base):
        if base.__name__.startswith("_") and base is not object:
            return [b for parent in base.__bases__ for b in expand(parent)]
        return [base]

    public = []
    for base in bases:
        for b in expand(base) if inspect.isclass(base) else [base]:
            if b not in public and b is not object:
                public.append(b)
    bases[:] = public or [object]


def _resolve_short_names(app, env, node, contnode):
    """Resolve ``:class:`Cplx``` written in any module of this package.

    Docstrings name the package's classes and functions by their short name
    wherever they are imported; a short name that ends exactly one object
    documented under ``cplxmodule`` resolves to it.
    """
    if node.get("refdomain") != "py" or not node["reftarget"]:
        return None
    target = node["reftarget"].lstrip("~.")
    domain = env.get_domain("py")
    matches = [
        name
        for name in domain.objects
        if name.startswith("cplxmodule.") and name.endswith("." + target)
    ]
    if len(matches) != 1:
        return None
    node["reftarget"] = matches[0]
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], matches[0], node, contnode
    )


def setup(app):
    app.connect("autodoc-skip-member", _skip_torch_members)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _resolve_short_names)
