"""The table of layer families is built from the class statements and complete on any import."""

import inspect
import subprocess
import sys
import textwrap

import torch

import cplxmodule.nn.masked
import cplxmodule.nn.relevance
import cplxmodule.nn.relevance.extensions
from cplxmodule.nn import _families
from cplxmodule.nn.masked import BaseMasked
from cplxmodule.nn.modules._weighted import WeightedLayer
from cplxmodule.nn.relevance import GaussianMixin
from cplxmodule.nn.relevance.structured import ChannelGateMixin


def _public_classes():
    modules = (
        cplxmodule.nn, cplxmodule.nn.masked, cplxmodule.nn.relevance,
        cplxmodule.nn.relevance.extensions,
    )
    return {
        obj for module in modules for name in module.__all__
        if inspect.isclass(obj := getattr(module, name))
    }


def test_a_fresh_process_converts_to_every_kind_whatever_it_imported():
    # before, the Bayesian kinds existed only once cplxmodule.nn.relevance was imported
    code = textwrap.dedent("""
        import torch
        from cplxmodule.nn.masked import convert_layers
        model = torch.nn.Sequential(torch.nn.Linear(3, 2))
        print(type(convert_layers(model, "vd")[0]).__name__,
              type(convert_layers(model, "input_l0")[0]).__name__)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["LinearVD", "LinearChannelL0"]


# Public layers with the dense entry point that belong to no family, and why.
NOT_MEMBERS = {
    "CplxConvNd": "the published dimension-generic base: a subclass chooses its op",
    "CplxConvTransposeNd": "the published dimension-generic base: a subclass chooses its op",
    "CplxGaborConv1d": "its weight is made from learnable centres and widths: no twin",
    "CplxMorletConv1d": "its weight is made from learnable centres and widths: no twin",
    "WeightedLayer": "the dense entry point: the base of every dense layer, of no family",
}


def test_every_public_twin_declares_its_family_and_kind():
    twins = {
        cls for cls in _public_classes()
        if issubclass(cls, (BaseMasked, GaussianMixin, ChannelGateMixin, WeightedLayer))
        and "Mixin" not in cls.__name__ and cls is not BaseMasked
        and cls.__name__ not in NOT_MEMBERS
    }
    undeclared = sorted(cls.__name__ for cls in twins if _families.lookup(cls) is None)
    assert not undeclared, f"declare family= and kind= in the class statements of {undeclared}"


def test_each_member_computes_with_its_family_dense_layer():
    # a member subclasses its family's dense class (torch's, through this
    # package's twin of it), so state_dict keys and arguments are the family's
    for cls, member in _families._MEMBERS.items():
        family = member.family
        assert issubclass(cls, family.dense), cls
        if cls.__module__.startswith("cplxmodule"):  # torch's own dense layers aside
            assert cls._family is family, cls
        rebuilt = inspect.signature(family.dense).parameters
        assert set(family.args) <= set(rebuilt), (cls, family.args)


def test_a_subclass_inherits_the_geometry_not_the_membership():
    from cplxmodule.nn.relevance import CplxConv2dChannelVD

    class Mine(CplxConv2dChannelVD):
        pass

    assert _families.lookup(Mine) is None
    layer = Mine(2, 5, 3, gated="output")
    assert layer.n_channels == 5 and layer.log_sigma2.shape == (5,)
    assert Mine(2, 5, 3, gated="input").log_sigma2.shape == (2,)


def test_the_geometry_of_every_structured_member_matches_its_weight():
    # each kind's gates cover the dimension of the weight that holds its channels
    for cls, member in _families._MEMBERS.items():
        if not issubclass(cls, ChannelGateMixin):
            continue
        family = member.family
        args = {"Linear": (4, 3), "Bilinear": (3, 4, 5)}.get(family.name, (2, 4, 3))
        for gated in ("output", "input"):
            layer = cls(*args, gated=gated)
            out_size, in_size = (getattr(layer, name) for name in family.features)
            assert layer.n_channels == (out_size if gated == "output" else in_size)
            mask = layer.relevance(threshold=torch.inf, hard=True)
            real = layer.weight.real if family.dense.__module__.startswith("cplx") else layer.weight
            assert mask.shape == real.shape


def test_the_product_of_families_and_kinds_is_complete():
    # every family of the package has a published twin of every kind of the
    # table of kinds, the class that the table's bases make (a missing
    # ``CplxConv3dARD`` fails here, not silently in a conversion)
    rows = {(name, flag): row for (name, flag), row in _families._KINDS.items()}
    assert {name for (name, _), row in rows.items() if not row.lossy} == set(
        _families.kinds()) - {"dense", "unit_vd", "unit_ard", "unit_l0"}
    for family in _families.families():
        if not family.rebuilt:
            continue  # a family a test declared
        for (name, flag), row in rows.items():
            if flag != family.complex:
                continue
            twin = _families.twin_class(family.dense, name)
            cls = twin.func if hasattr(twin, "func") else twin
            # published, not made (a lossy kind's twins, quantized, are made)
            assert (cls in family.twins.values()) != row.lossy, (family, name)
            bound = twin.keywords if hasattr(twin, "func") else {}
            assert bound == dict(row.bound), (family, name)
            assert cls.__name__ == ("Cplx" if flag else "") + family.name + row.suffix
            for base in row.before + row.after:
                assert issubclass(cls, base), (cls, base)
            assert issubclass(cls, family.entry)
