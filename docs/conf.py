"""Sphinx configuration for the cplxmodule reference and guides.

Built in CI with ``python -m sphinx -W -n --keep-going -b html docs
docs/_build/html``: warnings are errors and every cross-reference must
resolve, except those into torch, numpy, scipy and the standard library,
whose inventories cannot be fetched without network access (see
``nitpick_ignore_regex``). The guides' ``>>>`` examples run in the test suite
(``tests/integration/test_docs.py``).
"""

import importlib
import inspect
import sys

import torch

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
    # MathJax shipped with the pages: the maths renders without network access
    "sphinx-mathjax-offline",
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
# Long code lines wrap instead of hiding behind a scroll bar (see the file).
html_static_path = ["_static"]
html_css_files = ["cplxmodule.css"]

# Every reference must resolve, except into packages whose inventories are
# out of reach offline: torch, numpy, scipy and Python itself.
nitpicky = True
_EXTERNAL = (
    r"(torch|numpy|np|scipy|onnx|onnxruntime|tqdm|matplotlib|"
    + "|".join(sorted(sys.stdlib_module_names))
    + r")(\..*)?"
)
_BUILTINS = (
    r"(True|False|None|int|float|complex|bool|str|bytes|tuple|list|dict|set|slice|object|type"
    r"|callable|iterable|iterator|sequence|mapping|array_like|array-like"
    r"|Ellipsis|NotImplemented|Exception|\w+Error|\w+Warning|module|function"
    r"|generator|number|scalar|Tensor|Module|Parameter|dtype|device|Generator)"
)
# napoleon splits compound types ("tuple of (Cplx, float)", "Mapping[str,
# Tensor]", "CplxConv1d/2d/3d", "0-dim float tensor") into pieces that are
# not names
_FRAGMENTS = r".*[()\[\]/\s].*"
nitpick_ignore_regex = [
    (r"py:.*", _EXTERNAL),
    (r"py:.*", _BUILTINS),
    (r"py:.*", _FRAGMENTS),
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


def _constructor_signature(app, what, name, obj, options, signature, return_annotation):
    """Show the arguments a class really takes, not ``(*args, **kwargs)``.

    Masked and Bayesian layers put a cooperative base first, whose
    ``__init__(*args, **kwargs)`` hands everything to the dense twin: the
    signature to show is the twin's. A module that inherits the constructor
    of ``torch.nn.Module`` takes no arguments.
    """
    if what != "class" or not inspect.isclass(obj):
        return None
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    passed_variadic = False
    for klass in obj.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        if klass is torch.nn.Module:
            return None if passed_variadic else ("()", None)
        params = list(inspect.signature(init).parameters.values())[1:]
        passed_variadic = True
        if not all(p.kind in variadic for p in params):
            if klass is obj:
                return None
            bare = [p.replace(annotation=inspect.Parameter.empty) for p in params]
            return str(inspect.Signature(bare)), None
    return None


def _import(dotted):
    """The object at a dotted path, or None."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _resolve_package_names(app, env, node, contnode):
    """Resolve references to this package's objects under any of their names.

    Docstrings name classes by their short name wherever they are imported
    (``:class:`Cplx```) or by the module that defines them
    (``cplxmodule.nn.relevance.real.base.GaussianMixin``), while the reference
    documents each object once, at its public path. A reference resolves to
    the documented name (the shortest, if several) of the same object.
    """
    if node.get("refdomain") != "py" or not node["reftarget"]:
        return None
    target = node["reftarget"].lstrip("~.")
    domain = env.get_domain("py")
    ours = [name for name in domain.objects if name.startswith("cplxmodule.")]
    if target.startswith("cplxmodule."):
        wanted = _import(target)
        candidates = [n for n in ours if wanted is not None and _import(n) is wanted]
    else:
        candidates = [n for n in ours if n.endswith("." + target)]
        if len({id(_import(n)) for n in candidates}) > 1:
            return None  # ambiguous: several objects of that name
    if not candidates:
        return None
    name = min(candidates, key=len)
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], name, node, contnode
    )


def setup(app):
    app.connect("autodoc-skip-member", _skip_torch_members)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("autodoc-process-signature", _constructor_signature)
    app.connect("missing-reference", _resolve_package_names)
