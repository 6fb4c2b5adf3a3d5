"""CplxParameter: storage, state_dict keys and promotion, and torch's module machinery."""

import copy
import importlib
import io
import pickle
from unittest import mock

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear, CplxParameter, CplxToCplx
from ...helpers import cplx_to_native


class Scale(CplxToCplx):
    """A user layer written as for the published package."""

    def __init__(self, n):
        super().__init__()
        self.weight = CplxParameter(Cplx.empty(n))
        with torch.no_grad():
            self.weight.real.normal_()
            self.weight.imag.normal_()

    def forward(self, input):
        return input * self.weight


class Wrapper(torch.nn.Module):
    """Real tensors in and out, for export."""

    def __init__(self):
        super().__init__()
        self.layer = CplxLinear(4, 3)

    def forward(self, re, im):
        out = self.layer(Cplx(re, im))
        return out.real, out.imag


@pytest.fixture
def layer():
    torch.manual_seed(0)
    return CplxLinear(4, 3)


def test_parts_are_the_parameters(layer):
    params = dict(layer.named_parameters())
    assert set(params) == {"weight.real", "weight.imag", "bias.real", "bias.imag"}
    assert list(layer.state_dict()) == list(params)
    assert isinstance(layer.weight, Cplx)
    assert layer.weight.real is params["weight.real"]
    assert layer.weight.imag is params["weight.imag"]
    assert isinstance(layer.weight.real, torch.nn.Parameter)


def test_inplace_init_changes_parameter(layer):
    with torch.no_grad():
        layer.weight.real.fill_(2.0)
        layer.weight.imag.zero_()
    x = cplx.randn(5, 4)
    expected = cplx_to_native(x) @ torch.full((4, 3), 2.0 + 0j) + cplx_to_native(layer.bias)
    assert torch.allclose(cplx_to_native(layer(x)), expected, atol=1e-5)


def test_cplx_arithmetic_and_value_methods(layer):
    w = cplx_to_native(layer.weight)
    assert torch.equal(cplx_to_native(layer.weight * 2j), w * 2j)
    assert torch.equal(cplx_to_native(layer.weight.t()), w.t())
    assert torch.equal(cplx_to_native(layer.weight.conj), w.conj())
    assert layer.weight.shape == (3, 4) and len(layer.weight) == 3
    moved = layer.weight.to(torch.float64)  # a value: the parameter stays put
    assert type(moved) is Cplx and moved.dtype == torch.float64
    assert layer.weight.dtype == torch.float32


def test_model_apply_recurses_through_parameters(layer):
    seen = []
    layer.apply(lambda m: seen.append(type(m).__name__))
    assert seen.count("CplxParameter") == 2


def test_custom_layer_published_style():
    torch.manual_seed(1)
    layer = Scale(3)
    x = cplx.randn(2, 3)
    assert torch.allclose(cplx_to_native(layer(x)), cplx_to_native(x) * cplx_to_native(layer.weight))
    assert sorted(layer.state_dict()) == ["weight.imag", "weight.real"]


def test_constructor_rejects_non_tensor():
    with pytest.raises(TypeError, match="`cplx`"):
        CplxParameter([1.0, 2.0])


def test_gradients_and_optimizer(layer):
    x = cplx.randn(5, 4)
    before = layer.weight.real.detach().clone()
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    assert len(opt.param_groups[0]["params"]) == 4
    loss = abs(layer(x)).pow(2).sum()
    loss.backward()
    # reference gradient from torch's complex autograd: d/d(re) and d/d(im)
    w = cplx_to_native(layer.weight).detach().requires_grad_()
    b = cplx_to_native(layer.bias).detach()
    ref = (cplx_to_native(x) @ w.T + b).abs().pow(2).sum()
    ref.backward()
    assert torch.allclose(layer.weight.real.grad, w.grad.real, atol=1e-4)
    assert torch.allclose(layer.weight.imag.grad, w.grad.imag, atol=1e-4)
    opt.step()
    assert torch.allclose(layer.weight.real, before - 0.1 * w.grad.real, atol=1e-5)


def test_functional_call(layer):
    x = cplx.randn(5, 4)
    params = {k: torch.randn_like(v) for k, v in layer.named_parameters()}
    out = torch.func.functional_call(layer, params, (x,))
    w = torch.complex(params["weight.real"], params["weight.imag"])
    b = torch.complex(params["bias.real"], params["bias.imag"])
    assert torch.allclose(cplx_to_native(out), cplx_to_native(x) @ w.T + b, atol=1e-5)
    # the layer's own parameters are back in place
    assert layer.weight.real is dict(layer.named_parameters())["weight.real"]
    # also through the state_dict keys
    out = torch.func.functional_call(layer, layer.state_dict(), (x,))
    assert torch.allclose(cplx_to_native(out), cplx_to_native(layer(x)))


def test_export():
    torch.manual_seed(2)
    model = Wrapper()
    re, im = torch.randn(2, 4), torch.randn(2, 4)
    program = torch.export.export(model, (re, im))
    assert set(program.graph_signature.parameters) == {
        "layer.weight.real", "layer.weight.imag", "layer.bias.real", "layer.bias.imag"
    }
    for got, want in zip(program.module()(re, im), model(re, im)):
        assert torch.allclose(got, want)


@pytest.mark.inductor
def test_compile_fullgraph(layer):
    x = cplx.randn(5, 4)
    compiled = torch.compile(layer, fullgraph=True, backend="eager")
    assert torch.allclose(cplx_to_native(compiled(x)), cplx_to_native(layer(x)))


@pytest.mark.parametrize("how", ["deepcopy", "pickle", "torch.save"])
def test_copies(layer, how):
    if how == "deepcopy":
        clone = copy.deepcopy(layer)
    elif how == "pickle":
        clone = pickle.loads(pickle.dumps(layer))
    else:
        buffer = io.BytesIO()
        torch.save(layer, buffer)
        buffer.seek(0)
        clone = torch.load(buffer, weights_only=False)
    assert clone.weight.real is not layer.weight.real
    assert isinstance(clone.weight.real, torch.nn.Parameter)
    x = cplx.randn(2, 4)
    assert torch.equal(cplx_to_native(clone(x)), cplx_to_native(layer(x)))
    with torch.no_grad():
        clone.weight.real.zero_()
    assert layer.weight.real.abs().sum() > 0


def test_to_moves_parameters(layer):
    layer.to(torch.float64)
    assert layer.weight.dtype == torch.float64 and layer.bias.imag.dtype == torch.float64
    assert isinstance(layer.weight.real, torch.nn.Parameter)
    out = layer(cplx.randn(2, 4, dtype=torch.float64))
    assert out.dtype == torch.float64


def _copy_to_devices(tensors, devices, detach=False):
    return [[t.detach().to(d) if detach else t.to(d) for t in tensors] for d in devices]


def test_dataparallel_replicate(layer):
    # CPU-only: broadcast by plain copies, second replica on the meta device
    replicate = importlib.import_module("torch.nn.parallel.replicate")
    devices = [torch.device("cpu"), torch.device("meta")]
    with mock.patch.object(replicate, "_broadcast_coalesced_reshape", _copy_to_devices), \
            mock.patch.object(replicate, "_get_device_index", lambda d, optional=False: d):
        replicas = replicate.replicate(layer, devices)
    x = cplx.randn(2, 4)
    assert torch.equal(cplx_to_native(replicas[0](x)), cplx_to_native(layer(x)))
    meta = replicas[1]
    assert meta.weight.real.device.type == "meta" and meta.weight.device.type == "meta"
    assert meta(x.to("meta")).real.device.type == "meta"
    assert layer.weight.real.device.type == "cpu"


def test_state_dict_round_trip(layer):
    other = CplxLinear(4, 3)
    other.load_state_dict(layer.state_dict())
    for a, b in zip(layer.parameters(), other.parameters()):
        assert torch.equal(a, b)


def test_real_checkpoint_promotes():
    torch.manual_seed(3)
    real = torch.nn.Linear(4, 3)
    layer = CplxLinear(4, 3)
    layer.load_state_dict(real.state_dict())
    assert torch.equal(layer.weight.real, real.weight)
    assert torch.equal(layer.weight.imag, torch.zeros(3, 4))
    x = torch.randn(5, 4)
    out = layer(Cplx(x))
    assert torch.allclose(out.real, real(x), atol=1e-6)
    assert torch.equal(out.imag, torch.zeros(5, 3))


def _snapshot(module):
    return {k: v.clone() for k, v in module.state_dict().items()}


def _unchanged(module, snapshot):
    return all(torch.equal(v, snapshot[k]) for k, v in module.state_dict().items())


@pytest.mark.parametrize("strict", [True, False])
def test_half_state_dict_is_error_and_loads_nothing(layer, strict):
    snapshot = _snapshot(layer)
    state = {k: torch.zeros_like(v) for k, v in layer.state_dict().items()}
    del state["weight.imag"]
    with pytest.raises(RuntimeError, match="weight.imag"):
        layer.load_state_dict(state, strict=strict)
    assert torch.equal(layer.weight.real, snapshot["weight.real"])
    assert torch.equal(layer.weight.imag, snapshot["weight.imag"])


def test_half_state_dict_reports_missing_key(layer):
    state = dict(layer.state_dict())
    del state["bias.real"]
    with pytest.raises(RuntimeError, match=r"Missing key\(s\).*bias\.real"):
        layer.load_state_dict(state)


def test_size_mismatch_loads_neither_part(layer):
    snapshot = _snapshot(layer)
    state = dict(layer.state_dict())
    state["weight.real"] = torch.zeros(3, 4)
    state["weight.imag"] = torch.zeros(3, 5)
    with pytest.raises(RuntimeError, match="size mismatch for weight.imag"):
        layer.load_state_dict(state)
    assert _unchanged(layer, snapshot)


@pytest.mark.parametrize("strict", [True, False])
def test_keys_under_a_parameter_besides_its_parts_are_refused(layer, strict):
    # as published, whatever `strict` says: nothing else belongs under `weight.`
    snapshot = _snapshot(layer)
    state = {k: torch.ones_like(v) for k, v in layer.state_dict().items()}
    state["weight.extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError, match=r"disallows redundant key\(s\) in state_dict: \['weight.extra'\]"):
        layer.load_state_dict(state, strict=strict)
    assert _unchanged(layer, snapshot)
    # a key outside any complex parameter is torch's business
    state = {**layer.state_dict(), "extra": torch.zeros(1)}
    with pytest.raises(RuntimeError, match="Unexpected key"):
        layer.load_state_dict(state)
    assert layer.load_state_dict(state, strict=False).unexpected_keys == ["extra"]


@pytest.mark.parametrize("strict", [True, False])
def test_error_in_one_parameter_leaves_whole_layer_unchanged(layer, strict):
    snapshot = _snapshot(layer)
    state = {k: torch.ones_like(v) for k, v in layer.state_dict().items()}
    state["bias.imag"] = torch.ones(7)
    with pytest.raises(RuntimeError, match="size mismatch for bias.imag"):
        layer.load_state_dict(state, strict=strict)
    assert _unchanged(layer, snapshot)


def test_promotion_in_nested_user_layer():
    torch.manual_seed(4)
    model = torch.nn.Sequential(Scale(3))
    model.load_state_dict({"0.weight": torch.tensor([1.0, 2.0, 3.0])})
    assert torch.equal(model[0].weight.real, torch.tensor([1.0, 2.0, 3.0]))
    assert torch.equal(model[0].weight.imag, torch.zeros(3))


def test_half_state_dict_in_plain_module():
    holder = torch.nn.Module()
    holder.w = CplxParameter(Cplx(torch.ones(2), torch.ones(2)))
    with pytest.raises(RuntimeError, match="Complex parameter requires both"):
        holder.load_state_dict({"w.real": torch.zeros(2)})
    assert torch.equal(holder.w.real, torch.ones(2))


def test_native_complex_tensor_loads_as_both_parts():
    # a checkpoint of torch's complex layers keeps the complex tensor whole
    native_layer = torch.nn.Linear(3, 2, dtype=torch.cfloat)
    layer = CplxLinear(3, 2)
    layer.load_state_dict(native_layer.state_dict())
    assert torch.equal(cplx_to_native(layer.weight), native_layer.weight.detach())
    assert torch.equal(cplx_to_native(layer.bias), native_layer.bias.detach())


def test_failed_assign_load_keeps_the_parameter_objects():
    layer = CplxLinear(3, 2)
    before = [layer.weight.real, layer.weight.imag, layer.bias.real, layer.bias.imag]
    values = [t.detach().clone() for t in before]
    bad = {
        "weight.real": torch.zeros(2, 4),
        "weight.imag": torch.zeros(2, 4),
        "bias.real": torch.zeros(2),
        "bias.imag": torch.zeros(2),
    }
    with pytest.raises(RuntimeError, match="size mismatch for weight.real"):
        layer.load_state_dict(bad, assign=True)
    after = [layer.weight.real, layer.weight.imag, layer.bias.real, layer.bias.imag]
    assert all(a is b for a, b in zip(after, before))
    assert all(torch.equal(a, v) for a, v in zip(after, values))


# Names defined by both torch.nn.Module and Cplx, and the class whose
# definition CplxParameter uses, as reviewed. A torch release that adds a
# Module method of a Cplx method's name fails here, for a new review.
REVIEWED_SHARED_NAMES = {
    "__init__": CplxParameter,  # its own: builds the module, then the parts
    "__repr__": torch.nn.Module,
    "apply": torch.nn.Module,  # model.apply(fn) recurses into it
    "requires_grad_": torch.nn.Module,
    "to": Cplx,  # value semantics, as Parameter.to returns a copy
    "cpu": Cplx,
    "cuda": Cplx,
    "half": Cplx,  # value casts, as Parameter.double returns a copy
    "float": Cplx,
    "double": Cplx,
}
_CLASS_BOOKKEEPING = {"__module__", "__doc__", "__dict__", "__weakref__", "__annotations__",
                      "__firstlineno__", "__static_attributes__", "__qualname__", "__slots__"}


def test_names_shared_by_module_and_cplx_are_reviewed():
    shared = (set(vars(torch.nn.Module)) & set(vars(Cplx))) - _CLASS_BOOKKEEPING
    assert shared == set(REVIEWED_SHARED_NAMES)
    for name, winner in REVIEWED_SHARED_NAMES.items():
        assert getattr(CplxParameter, name) is vars(winner)[name], name


@pytest.mark.parametrize("method, args", [
    ("bfloat16", ()), ("type", (torch.float64,)), ("to_empty", ()),
])
def test_in_place_conversions_of_a_parameter_refer_to_the_layer(method, args):
    layer = CplxLinear(3, 2)
    before = {k: (id(v), v.dtype) for k, v in layer.state_dict(keep_vars=True).items()}
    with pytest.raises(RuntimeError, match="convert the owning layer"):
        getattr(layer.weight, method)(*args)
    after = {k: (id(v), v.dtype) for k, v in layer.state_dict(keep_vars=True).items()}
    assert after == before
    # the layer's own conversion reaches both parameters
    layer.double()
    assert layer.weight.dtype == layer.bias.dtype == torch.float64
    copy_ = layer.weight.to(torch.float32)
    assert copy_.dtype == torch.float32 and layer.weight.dtype == torch.float64
    # the value casts return copies, as Parameter.float() does
    copy_ = layer.weight.float()
    assert copy_.dtype == torch.float32 and layer.weight.dtype == torch.float64
