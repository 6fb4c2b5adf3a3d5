"""Write ``published_object_model.json`` with the published cplxmodule 2022.6.

Run with the published package first on the path, never this repository's:

    pip install --no-deps --target /tmp/pub cplxmodule==2022.6
    cd /tmp && PYTHONPATH=/tmp/pub python /path/to/tests/data/make_published_object_model.py OUT.json

For each public class, recorded from the published package alone:

- ``mro``: the names of the classes of ``cls.__mro__``, in order, and which
  of them are :class:`torch.nn.Module` subclasses;
- ``instances``: the constructor arguments used, and the public members
  (``dir()`` without leading underscores) of an instance built with them,
  less those every :class:`torch.nn.Module` has.
"""

import importlib
import inspect
import json
import sys

import torch

import cplxmodule
from cplxmodule import Cplx

# every namespace of the published package that holds public classes
MODULES = [
    "cplxmodule",
    "cplxmodule.nn",
    "cplxmodule.nn.modules",
    "cplxmodule.nn.modules.base",
    "cplxmodule.nn.modules.casting",
    "cplxmodule.nn.masked",
    "cplxmodule.nn.masked.base",
    "cplxmodule.nn.relevance",
    "cplxmodule.nn.relevance.base",
    "cplxmodule.nn.relevance.real",
    "cplxmodule.nn.relevance.real.base",
    "cplxmodule.nn.relevance.complex",
    "cplxmodule.nn.relevance.complex.base",
    "cplxmodule.nn.relevance.extensions",
    "cplxmodule.nn.relevance.extensions.real",
    "cplxmodule.nn.relevance.extensions.complex",
]

LINEAR, BILINEAR, CONV = [3, 2], [3, 4, 2], [2, 3, 3]
FAMILIES = {"Linear": LINEAR, "Bilinear": BILINEAR, "Conv1d": CONV, "Conv2d": CONV, "Conv3d": CONV}


def constructors():
    """``{class path: positional arguments}`` of the instances to record."""
    table = {
        "cplxmodule.Cplx": "cplx",
        "cplxmodule.nn.CplxParameter": "cplx",
        "cplxmodule.nn.modules.base.CplxParameterAccessor": [],
        "cplxmodule.nn.CplxToCplx": [],
        "cplxmodule.nn.modules.base.BaseRealToCplx": [],
        "cplxmodule.nn.modules.base.BaseCplxToReal": [],
        "cplxmodule.nn.CplxLinear": LINEAR,
        "cplxmodule.nn.CplxBilinear": BILINEAR,
        "cplxmodule.nn.CplxAdaptiveModReLU": [3],
        "cplxmodule.nn.relevance.extensions.LinearL0": LINEAR,
        "cplxmodule.nn.relevance.extensions.LinearLASSO": LINEAR,
    }
    for dim in (1, 2, 3):
        table[f"cplxmodule.nn.CplxConv{dim}d"] = CONV
        table[f"cplxmodule.nn.CplxConvTranspose{dim}d"] = CONV
        table[f"cplxmodule.nn.CplxBatchNorm{dim}d"] = [3]
        table[f"cplxmodule.nn.CplxMaxPool{dim}d"] = [2]
    for name in ("Identity", "Real", "Imag", "Modulus", "Angle", "ModReLU", "Dropout", "Sequential"):
        table[f"cplxmodule.nn.Cplx{name}"] = []
    for name in (
        "AsTypeCplx",
        "InterleavedRealToCplx",
        "CplxToInterleavedReal",
        "ConcatenatedRealToCplx",
        "CplxToConcatenatedReal",
        "TensorToCplx",
        "CplxToTensor",
    ):
        table[f"cplxmodule.nn.modules.casting.{name}"] = []
    for family, args in FAMILIES.items():
        table[f"cplxmodule.nn.masked.{family}Masked"] = args
        table[f"cplxmodule.nn.masked.Cplx{family}Masked"] = args
        table[f"cplxmodule.nn.relevance.real.base.{family}Gaussian"] = args
        table[f"cplxmodule.nn.relevance.complex.base.Cplx{family}Gaussian"] = args
        for kind in ("VD", "ARD"):
            table[f"cplxmodule.nn.relevance.{family}{kind}"] = args
            table[f"cplxmodule.nn.relevance.Cplx{family}{kind}"] = args
        for kind in ("VDScaleFree", "VDApprox", "VDBogus"):
            table[f"cplxmodule.nn.relevance.extensions.Cplx{family}{kind}"] = args
    return table


def resolve(path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def public(obj):
    return {name for name in dir(obj) if not name.startswith("_")}


def main(path):
    # the published package, not this repository's
    where = cplxmodule.__file__
    assert "site-packages" in where or "pub" in where, where
    torch.manual_seed(2022)
    mro = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None) or sorted(public(module))
        for name in names:
            cls = getattr(module, name, None)
            if inspect.isclass(cls):
                mro[f"{module_name}.{name}"] = [
                    [k.__name__, issubclass(k, torch.nn.Module)] for k in cls.__mro__
                ]

    bare = public(torch.nn.Module())
    instances = {}
    for cls_path, args in constructors().items():
        # "cplx": the class's value (``Cplx``) or its argument (``CplxParameter``)
        value = Cplx(torch.randn(2, 3), torch.randn(2, 3)) if args == "cplx" else None
        if cls_path != "cplxmodule.Cplx":
            value = resolve(cls_path)(*([value] if args == "cplx" else args))
        instances[cls_path] = {"args": args, "members": sorted(public(value) - bare)}

    # one line per class, for readable diffs
    with open(path, "w") as file:
        file.write("{\n")
        for number, (key, table) in enumerate((("mro", mro), ("instances", instances))):
            file.write(f"{json.dumps(key)}: {{\n")
            rows = [f"{json.dumps(name)}: {json.dumps(table[name])}" for name in sorted(table)]
            file.write(",\n".join(rows) + ("\n},\n" if number == 0 else "\n}\n"))
        file.write("}\n")


if __name__ == "__main__":
    main(sys.argv[1])
