"""The object model of the published cplxmodule 2022.6: members and class hierarchy.

``tests/data/published_object_model.json`` was recorded with the published
package alone (``tests/data/make_published_object_model.py``): the public
members of an instance of each public class, and each class's MRO. Code
written against the published package reads those members and subclasses
those classes; here every member is present on our instance, and the torch
modules of every MRO come in the published order, except where listed below
with the reason (also in ``docs/guides/migrating.rst``).
"""

import importlib
import json
import pathlib

import pytest
import torch

from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear, CplxParameter
from cplxmodule.nn.modules.casting import TensorToCplx

from ...helpers import Duck

RECORDED = json.loads(
    (pathlib.Path(__file__).parents[2] / "data" / "published_object_model.json").read_text()
)

# Members of the published instance that ours leaves out, and why.
LEFT_OUT = {
    # the mutators and constructors of the published CplxParameter's base,
    # ParameterDict: they would leave a complex parameter with one part, or
    # three, or build a ParameterDict; its read-only mapping (keys, values,
    # items, get, ["real"]) is provided
    "cplxmodule.nn.CplxParameter": {
        "clear", "copy", "fromkeys", "pop", "popitem", "setdefault", "update",
    },
}

# Classes whose torch modules come in another order than published, and why.
MRO_DIFFERS = {
    # the masking base goes before the dense twin (published: after it), so
    # that it intercepts `layer.mask = t` before the twin's Module.__setattr__
    **{
        f"cplxmodule.nn.masked.{prefix}{family}Masked": "masking base first"
        for prefix in ("", "Cplx")
        for family in ("Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d")
    },
}


def resolve(path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def instance(path, args):
    value = Cplx(torch.randn(2, 3), torch.randn(2, 3)) if args == "cplx" else None
    if path == "cplxmodule.Cplx":
        return value
    return resolve(path)(*([value] if args == "cplx" else args))


def test_the_record_covers_every_published_class():
    assert len(RECORDED["mro"]) == 191 and len(RECORDED["instances"]) == 93


@pytest.mark.parametrize("path", sorted(RECORDED["instances"]))
def test_an_instance_has_the_published_members(path):
    recorded = RECORDED["instances"][path]
    ours = set(dir(instance(path, recorded["args"])))
    assert set(recorded["members"]) - ours == LEFT_OUT.get(path, set())


def torch_modules(mro, ours):
    """The names of the torch modules in ``mro`` that both MROs have, in its order."""
    return [name for name, is_module in mro if is_module and name in ours]


@pytest.mark.parametrize("path", sorted(RECORDED["mro"]))
def test_the_torch_modules_of_the_mro_come_in_the_published_order(path):
    ours = [[k.__name__, issubclass(k, torch.nn.Module)] for k in resolve(path).__mro__]
    published = RECORDED["mro"][path]
    shared = {name for name, _ in ours} & {name for name, _ in published}
    same = torch_modules(published, shared) == torch_modules(ours, shared)
    # a listed difference that went away is taken off the list
    assert same != (path in MRO_DIFFERS)


# ------------------------------------------------------------ CplxParameter


def test_data_is_a_detached_cplx_sharing_the_parts_storage():
    # published: a Cplx of the parts' `.data`; code casts inputs with `W.data.dtype`
    weight = CplxParameter(Cplx(torch.randn(2, 3), torch.randn(2, 3)))
    data = weight.data
    assert type(data) is Cplx and data.dtype == weight.real.dtype == torch.float32
    for part, param in ((data.real, weight.real), (data.imag, weight.imag)):
        assert not part.requires_grad and part is not param
        assert part.data_ptr() == param.data_ptr() and torch.equal(part, param)
    data.real.add_(1.0)  # the storage is the parameter's
    assert torch.equal(weight.real.detach(), data.real)
    with pytest.raises(AttributeError):
        weight.data = data


def test_a_layers_weight_data_casts_an_input():
    layer = CplxLinear(3, 2).double()
    input = torch.randn(4, 3).to(layer.weight.data.dtype)
    assert input.dtype == torch.float64


def test_the_parts_read_as_the_published_mapping():
    weight = CplxParameter(Cplx(torch.randn(2), torch.randn(2)))
    assert set(weight.keys()) == {"real", "imag"}
    assert dict(weight.items()) == {"real": weight.real, "imag": weight.imag}
    assert {id(v) for v in weight.values()} == {id(weight.real), id(weight.imag)}
    assert weight.get("real") is weight.real and weight.get("other") is None
    assert weight["imag"] is weight.imag
    with pytest.raises(KeyError):
        weight["other"]
    # any other key indexes the complex value
    torch.testing.assert_close(weight[1].real, weight.real[1])


def test_a_parameter_from_torch_complex_views_its_parts():
    value = torch.randn(2, 3, dtype=torch.complex64)
    weight = CplxParameter(value)
    assert weight.real.data_ptr() == torch.view_as_real(value).data_ptr()
    assert torch.equal(weight.real, value.real) and torch.equal(weight.imag, value.imag)
    assert isinstance(weight.real, torch.nn.Parameter) and weight.real.requires_grad


def test_a_parameter_from_a_duck_typed_value_holds_its_parts():
    real, imag = torch.randn(2, 3), torch.randn(2, 3)
    weight = CplxParameter(Duck(real, imag))
    assert weight.real.data_ptr() == real.data_ptr()
    assert weight.imag.data_ptr() == imag.data_ptr()


@pytest.mark.parametrize("value", [[1.0, 2.0], "weight", Duck([1.0], [2.0])],
                         ids=["list", "str", "duck of lists"])
def test_a_parameter_refuses_what_is_not_complex_nor_a_tensor(value):
    with pytest.raises(TypeError, match=r"CplxParameter: `cplx` must be"):
        CplxParameter(value)


# ---------------------------------------------------------------- the rest


def test_cplx_is_complex():
    # published: `Cplx.is_complex()` is True, as for a tensor of complex dtype
    assert Cplx(torch.ones(2)).is_complex() is True


def test_tensor_to_cplx_reads_torch_complex_as_views():
    value = torch.randn(4, 3, dtype=torch.complex128)
    output = TensorToCplx()(value)
    assert output.real.data_ptr() == torch.view_as_real(value).data_ptr()
    assert torch.equal(output.real, value.real) and torch.equal(output.imag, value.imag)
