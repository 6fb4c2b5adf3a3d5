"""Masked layers against torch's dense layers and native complex arithmetic."""

import copy
import io
import pickle

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import (
    CplxBilinear,
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
    CplxLinear,
)
from cplxmodule.nn.masked import (
    BaseMasked,
    BilinearMasked,
    Conv1dMasked,
    Conv2dMasked,
    Conv3dMasked,
    ConvTranspose1dMasked,
    ConvTranspose2dMasked,
    ConvTranspose3dMasked,
    CplxBilinearMasked,
    CplxConv1dMasked,
    CplxConv2dMasked,
    CplxConv3dMasked,
    CplxConvTranspose1dMasked,
    CplxConvTranspose2dMasked,
    CplxConvTranspose3dMasked,
    CplxLinearMasked,
    LinearMasked,
    binarize_masks,
    deploy_masks,
    is_sparse,
    named_masks,
)
from ...helpers import cplx_to_native

# (masked class, dense twin, constructor args, kwargs, input shapes)
REAL = [
    (LinearMasked, torch.nn.Linear, (5, 3), {}, [(4, 5)]),
    (BilinearMasked, torch.nn.Bilinear, (3, 4, 2), {}, [(5, 3), (5, 4)]),
    (Conv1dMasked, torch.nn.Conv1d, (2, 3, 3), {"padding": 1}, [(2, 2, 7)]),
    (Conv2dMasked, torch.nn.Conv2d, (2, 3, 3), {"stride": 2}, [(2, 2, 6, 6)]),
    (Conv3dMasked, torch.nn.Conv3d, (2, 4, 2), {"groups": 2, "bias": False}, [(1, 2, 4, 4, 4)]),
    (ConvTranspose1dMasked, torch.nn.ConvTranspose1d, (2, 3, 3), {"stride": 2}, [(2, 2, 5)]),
    (ConvTranspose2dMasked, torch.nn.ConvTranspose2d, (2, 4, 3), {"groups": 2}, [(2, 2, 4, 4)]),
    (ConvTranspose3dMasked, torch.nn.ConvTranspose3d, (2, 3, 2), {"stride": 2}, [(1, 2, 3, 3, 3)]),
]
# (masked class, dense complex twin, torch native-complex twin, args, kwargs, input shapes)
COMPLEX = [
    (CplxLinearMasked, CplxLinear, torch.nn.Linear, (5, 3), {}, [(4, 5)]),
    (CplxBilinearMasked, CplxBilinear, None, (3, 4, 2), {}, [(5, 3), (5, 4)]),
    (CplxConv1dMasked, CplxConv1d, torch.nn.Conv1d, (2, 3, 3), {"padding": 1}, [(2, 2, 7)]),
    (CplxConv2dMasked, CplxConv2d, torch.nn.Conv2d, (2, 3, 3), {"stride": 2}, [(2, 2, 6, 6)]),
    (CplxConv3dMasked, CplxConv3d, torch.nn.Conv3d, (2, 4, 2), {"groups": 2}, [(1, 2, 4, 4, 4)]),
    (CplxConvTranspose1dMasked, CplxConvTranspose1d, torch.nn.ConvTranspose1d, (2, 3, 3), {"stride": 2}, [(2, 2, 5)]),
    (CplxConvTranspose2dMasked, CplxConvTranspose2d, torch.nn.ConvTranspose2d, (2, 4, 3), {"groups": 2}, [(2, 2, 4, 4)]),
    (CplxConvTranspose3dMasked, CplxConvTranspose3d, torch.nn.ConvTranspose3d, (2, 3, 2), {"stride": 2}, [(1, 2, 3, 3, 3)]),
]
PADDING_MODES = ["zeros", "reflect", "replicate", "circular"]


def random_mask(shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=generator) > 0.4).float()


# ---------------------------------------------------------------- outputs


@pytest.mark.parametrize("masked_cls, dense_cls, args, kwargs, shapes", REAL, ids=lambda x: getattr(x, "__name__", None))
def test_real_matches_dense_with_masked_weight(masked_cls, dense_cls, args, kwargs, shapes):
    torch.manual_seed(0)
    dense = dense_cls(*args, **kwargs)
    layer = masked_cls(*args, **kwargs)
    # the dense twin's checkpoint loads; only the mask is missing
    result = layer.load_state_dict(dense.state_dict(), strict=False)
    assert result.missing_keys == ["mask"] and result.unexpected_keys == []
    mask = random_mask(dense.weight.shape)
    layer.mask = mask
    with torch.no_grad():
        dense.weight.mul_(mask)
    inputs = [torch.randn(shape) for shape in shapes]
    torch.testing.assert_close(layer(*inputs), dense(*inputs))


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
def test_real_conv_honours_padding_mode(n, padding_mode):
    torch.manual_seed(n)
    masked_cls = (Conv1dMasked, Conv2dMasked, Conv3dMasked)[n - 1]
    dense_cls = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)[n - 1]
    kwargs = dict(padding=1, padding_mode=padding_mode)
    dense, layer = dense_cls(2, 3, 3, **kwargs), masked_cls(2, 3, 3, **kwargs)
    layer.load_state_dict(dense.state_dict(), strict=False)
    layer.mask = random_mask(dense.weight.shape)
    with torch.no_grad():
        dense.weight.mul_(layer.mask)
    x = torch.randn(2, 2, *[5] * n)
    torch.testing.assert_close(layer(x), dense(x))


def _native_reference(layer, torch_cls, args, kwargs, inputs):
    """The same layer built from torch's complex-dtype layer, weight masked by hand."""
    if torch_cls is None:  # bilinear: y_k = sum_ij conj(x1_i) W_kij x2_j + b_k
        weight = cplx_to_native(layer.weight) * layer.mask
        x1, x2 = map(cplx_to_native, inputs)
        out = torch.einsum("bi,kij,bj->bk", x1.conj(), weight, x2)
        return out + cplx_to_native(layer.bias)
    reference = torch_cls(*args, **kwargs, dtype=torch.complex64)
    with torch.no_grad():
        reference.weight.copy_(cplx_to_native(layer.weight) * layer.mask)
        if layer.bias is not None:
            reference.bias.copy_(cplx_to_native(layer.bias))
    return reference(*map(cplx_to_native, inputs))


@pytest.mark.parametrize("masked_cls, dense_cls, torch_cls, args, kwargs, shapes", COMPLEX, ids=lambda x: getattr(x, "__name__", None))
def test_complex_matches_native_complex(masked_cls, dense_cls, torch_cls, args, kwargs, shapes):
    torch.manual_seed(0)
    dense = dense_cls(*args, **kwargs)
    layer = masked_cls(*args, **kwargs)
    result = layer.load_state_dict(dense.state_dict(), strict=False)
    assert result.missing_keys == ["mask"] and result.unexpected_keys == []
    layer.mask = random_mask(layer.weight.shape)
    assert layer.mask.shape == layer.weight.real.shape
    inputs = [cplx.randn(*shape) for shape in shapes]
    expected = _native_reference(layer, torch_cls, args, kwargs, inputs)
    torch.testing.assert_close(cplx_to_native(layer(*inputs)), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
def test_complex_conv_honours_padding_mode(n, padding_mode):
    torch.manual_seed(n)
    masked_cls = (CplxConv1dMasked, CplxConv2dMasked, CplxConv3dMasked)[n - 1]
    torch_cls = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)[n - 1]
    kwargs = dict(padding=1, padding_mode=padding_mode)
    layer = masked_cls(2, 3, 3, **kwargs)
    layer.mask = random_mask(layer.weight.shape)
    x = cplx.randn(2, 2, *[5] * n)
    expected = _native_reference(layer, torch_cls, (2, 3, 3), kwargs, [x])
    torch.testing.assert_close(cplx_to_native(layer(x)), expected, rtol=1e-4, atol=1e-5)


def test_masked_out_weights_get_zero_gradient():
    torch.manual_seed(0)
    for layer, x in [(LinearMasked(5, 3), torch.randn(4, 5)), (CplxLinearMasked(5, 3), cplx.randn(4, 5))]:
        layer.mask = random_mask((3, 5))
        out = layer(x)
        (out.real.sum() + out.imag.sum() if isinstance(out, Cplx) else out.sum()).backward()
        grads = (layer.weight.real.grad, layer.weight.imag.grad) if isinstance(out, Cplx) else (layer.weight.grad,)
        for grad in grads:
            assert torch.all(grad[layer.mask == 0] == 0)
            assert torch.any(grad[layer.mask == 1] != 0)


# ---------------------------------------------------------------- the mask


def test_mask_is_a_buffer_none_until_set():
    layer = LinearMasked(3, 2)
    # registered, so that replicate and state_dict loading see the name
    assert "mask" in layer._buffers and layer._buffers["mask"] is None
    assert layer.mask is None and not layer.is_sparse and not is_sparse(layer)
    assert "mask" not in layer.state_dict()
    with pytest.raises(RuntimeError, match="has no sparsity mask"):
        layer(torch.randn(1, 3))
    with pytest.raises(RuntimeError, match="has no sparsity mask"):
        layer.weight_masked
    assert not is_sparse(torch.nn.Linear(3, 2))


def test_mask_conversion_on_set():
    layer = LinearMasked(3, 2, dtype=torch.float64)
    source = torch.tensor([1, 0, 1], dtype=torch.int64, requires_grad=False)
    assert layer.mask_(source) is layer
    assert layer.mask.dtype == torch.float64 and layer.mask.shape == (2, 3)
    assert layer.mask.is_contiguous() and layer.mask.device == layer.weight.device
    torch.testing.assert_close(layer.mask, torch.tensor([[1.0, 0, 1]] * 2, dtype=torch.float64))
    # a stored copy: changing the source does not change the mask, and no graph
    same = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    layer.mask = same
    assert not layer.mask.requires_grad and layer.mask.data_ptr() != same.data_ptr()
    with torch.no_grad():
        same.zero_()
    assert torch.all(layer.mask == 1)
    # boolean masks
    layer.mask = torch.tensor([True, False, True])
    assert layer.mask.dtype == torch.float64
    layer.mask = None
    assert layer.mask is None and "mask" in layer._buffers


def test_every_assignment_registers_a_fresh_buffer():
    layer = LinearMasked(3, 2)
    layer.mask = torch.ones(2, 3)
    first = layer.mask
    layer.mask = torch.zeros(2, 3)
    assert layer.mask is not first and torch.all(first == 1)


def test_bad_masks_leave_the_layer_unchanged():
    layer = CplxLinearMasked(3, 2)
    layer.mask = torch.tensor([1.0, 0.0, 1.0])
    before = layer.mask
    with pytest.raises(TypeError, match="mask"):
        layer.mask = [1.0, 0.0, 1.0]
    with pytest.raises(TypeError, match="mask"):
        layer.mask_(1.0)
    with pytest.raises(RuntimeError, match=r"\(4,\).*\(2, 3\)"):
        layer.mask = torch.ones(4)
    with pytest.raises(RuntimeError, match=r"\(2, 2, 3\)"):
        layer.mask = torch.ones(2, 2, 3)  # broadcasts, but not *to* the weight
    assert layer.mask is before


@pytest.mark.parametrize("order", ["masked-last", "masked-first"])
def test_cooperative_init_any_base_order_and_subclassing(order):
    bases = (torch.nn.Linear, BaseMasked) if order == "masked-last" else (BaseMasked, torch.nn.Linear)

    class UserMasked(*bases):
        def __init__(self, *args, scale=1.0, **kwargs):
            super().__init__(*args, **kwargs)
            self.scale = scale

        def forward(self, input):
            return torch.nn.functional.linear(input, self.weight_masked, self.bias) * self.scale

    class Deeper(UserMasked):
        pass

    layer = Deeper(3, 2, bias=False, scale=2.0)
    layer.mask = torch.tensor([0.0, 1.0, 1.0])  # routed through the conversion
    assert layer.mask.shape == (2, 3) and layer.scale == 2.0
    x = torch.randn(4, 3)
    torch.testing.assert_close(layer(x), x @ (layer.weight * layer.mask).T * 2.0)
    assert set(layer.state_dict()) == {"weight", "mask"}


# ---------------------------------------------------------------- state_dict


def test_state_dict_round_trip_strict_and_non_strict():
    torch.manual_seed(0)
    source = Conv2dMasked(2, 3, 3)
    source.mask = random_mask((3, 2, 3, 3))
    state = source.state_dict()
    assert torch.equal(state["mask"], source.mask)

    target = Conv2dMasked(2, 3, 3)
    target.load_state_dict(state)  # sets a mask where there was none
    assert torch.equal(target.mask, source.mask) and target.mask is not source.mask
    target.mask = torch.ones(1)
    old = target.mask
    target.load_state_dict(state)  # replaces (a new buffer, not a copy_ into the old)
    assert torch.equal(target.mask, source.mask) and target.mask is not old
    assert torch.all(old == 1)

    dense_state = {k: v for k, v in state.items() if k != "mask"}
    with pytest.raises(RuntimeError, match="Missing key.*mask"):
        target.load_state_dict(dense_state)
    result = target.load_state_dict(dense_state, strict=False)  # tolerated, mask kept
    assert result.missing_keys == ["mask"] and torch.equal(target.mask, source.mask)
    # no mask in the layer, none in the state_dict: strict loading reports it
    fresh = Conv2dMasked(2, 3, 3)
    with pytest.raises(RuntimeError, match='Missing key.*"mask"'):
        fresh.load_state_dict(dense_state)
    assert fresh.load_state_dict(dense_state, strict=False).missing_keys == ["mask"]
    assert fresh.mask is None


def test_state_dict_with_broadcastable_mask_and_dtype():
    layer = LinearMasked(3, 2, dtype=torch.float64)
    state = torch.nn.Linear(3, 2, dtype=torch.float64).state_dict()
    state["mask"] = torch.tensor([1, 0, 1])
    layer.load_state_dict(state)
    assert layer.mask.shape == (2, 3) and layer.mask.dtype == torch.float64


def test_bad_state_dict_leaves_module_unchanged():
    layer = LinearMasked(3, 2)
    layer.mask = torch.ones(2, 3)
    before = copy.deepcopy(layer.state_dict())
    mask_before = layer.mask
    state = {"weight": torch.zeros(2, 3), "bias": torch.zeros(2), "mask": torch.ones(5)}
    with pytest.raises(RuntimeError, match="mask"):
        layer.load_state_dict(state)
    state = {"weight": torch.zeros(2, 3), "bias": torch.zeros(2), "mask": "ones"}
    with pytest.raises(RuntimeError, match="mask"):
        layer.load_state_dict(state)
    assert layer.mask is mask_before
    for key, value in layer.state_dict().items():
        assert torch.equal(value, before[key])
    # a bad weight: the (good) mask is not set either
    state = {"weight": torch.zeros(4, 3), "bias": torch.zeros(2), "mask": torch.zeros(2, 3)}
    with pytest.raises(RuntimeError, match="weight"):
        layer.load_state_dict(state)
    assert layer.mask is mask_before


def test_complex_dense_checkpoint_loads_and_masks_deploy():
    dense = torch.nn.Sequential(CplxLinear(4, 3), CplxConv1d(3, 2, 3))
    model = torch.nn.Sequential(CplxLinearMasked(4, 3), CplxConv1dMasked(3, 2, 3))
    result = model.load_state_dict(dense.state_dict(), strict=False)
    assert result.missing_keys == ["0.mask", "1.mask"] and result.unexpected_keys == []
    assert all(torch.equal(a, b) for a, b in zip(dense.parameters(), model.parameters()))


# ---------------------------------------------------------------- moves and copies


def _consistent(layer):
    target = layer.weight.real if isinstance(layer.weight, Cplx) else layer.weight
    return layer.mask.dtype == target.dtype and layer.mask.device == target.device


@pytest.mark.parametrize("make", [lambda: LinearMasked(4, 3), lambda: CplxConv2dMasked(2, 3, 3)])
def test_dtype_moves_keep_weight_and_mask_consistent(make):
    layer = make()
    layer.mask = random_mask(layer.weight.shape)
    mask = layer.mask.clone()
    layer.to(torch.float64)
    assert _consistent(layer) and layer.mask.dtype == torch.float64
    layer.half()
    assert _consistent(layer) and layer.mask.dtype == torch.float16
    torch.testing.assert_close(layer.mask.float(), mask)


def test_meta_construction_and_to_empty():
    with torch.device("meta"):
        model = torch.nn.Sequential(LinearMasked(4, 3), CplxLinearMasked(3, 2))
    model[0].mask = torch.ones(3, 4)  # a CPU mask follows the meta weight
    model[1].mask = torch.ones(3)
    assert model[0].mask.is_meta and model[1].mask.is_meta
    model.to_empty(device="cpu")
    assert all(_consistent(layer) for layer in model)
    state = {**LinearMasked(4, 3).state_dict(), "mask": random_mask((3, 4))}
    model[0].load_state_dict(state)
    torch.testing.assert_close(model[0].mask, state["mask"])


def test_meta_load_with_assign():
    with torch.device("meta"):
        layer = LinearMasked(4, 3)
    state = {**torch.nn.Linear(4, 3).state_dict(), "mask": random_mask((3, 4))}
    layer.load_state_dict(state, assign=True)
    assert not layer.weight.is_meta and _consistent(layer)
    torch.testing.assert_close(layer.mask, state["mask"])


def _model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(Conv1dMasked(2, 3, 3), torch.nn.Flatten(), LinearMasked(9, 2))
    model[0].mask = random_mask((3, 2, 3), 1)
    model[2].mask = random_mask((2, 9), 2)
    return model


@pytest.mark.parametrize(
    "clone",
    [
        copy.deepcopy,
        lambda m: pickle.loads(pickle.dumps(m)),
        lambda m: _torch_round_trip(m),
    ],
    ids=["deepcopy", "pickle", "torch.save"],
)
def test_copies_keep_masks(clone):
    model = _model()
    x = torch.randn(2, 2, 5)
    with torch.no_grad():
        expected = model(x)
    twin = clone(model)
    for (name, mask), (_, twin_mask) in zip(named_masks(model), named_masks(twin)):
        assert torch.equal(mask, twin_mask) and mask is not twin_mask
    with torch.no_grad():
        torch.testing.assert_close(twin(x), expected)
        twin[2].weight.zero_()
        assert torch.all(twin(x) == twin[2].bias)
        torch.testing.assert_close(model(x), expected)


def _torch_round_trip(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    twin = torch.nn.Sequential(Conv1dMasked(2, 3, 3), torch.nn.Flatten(), LinearMasked(9, 2))
    twin.load_state_dict(torch.load(buffer, weights_only=True))
    return twin


def test_torch_save_whole_complex_model(tmp_path):
    model = torch.nn.Sequential(CplxLinearMasked(3, 2))
    model[0].mask = torch.tensor([1.0, 0.0, 1.0])
    torch.save(model, tmp_path / "model.pt")
    twin = torch.load(tmp_path / "model.pt", weights_only=False)
    assert torch.equal(twin[0].mask, model[0].mask)


# ---------------------------------------------------------------- helpers


def _masked_model():
    return torch.nn.Sequential(
        LinearMasked(4, 3),
        torch.nn.ReLU(),
        torch.nn.Sequential(CplxLinearMasked(3, 2), torch.nn.Linear(2, 2)),
    )


def test_named_masks_and_deploy_masks():
    model = _masked_model()
    assert [name for name, _ in named_masks(model)] == ["0", "2.0"]
    assert [name for name, _ in named_masks(model, prefix="m")] == ["m.0", "m.2.0"]
    assert all(mask is None for _, mask in named_masks(model))

    masks = {"0.mask": random_mask((3, 4)), "2.0.mask": torch.tensor([1.0, 0.0, 1.0]), "9.mask": torch.ones(1)}
    with pytest.warns(UserWarning, match=r"\['9.mask'\]"):
        assert deploy_masks(model, state_dict=masks) is model
    assert torch.equal(model[0].mask, masks["0.mask"])
    assert torch.equal(model[2][0].mask, masks["2.0.mask"].expand(2, 3))
    assert deploy_masks(model) is model  # nothing to deploy

    deploy_masks(model, state_dict={"net.0.mask": torch.zeros(3, 4)}, prefix="net", reduce_fn=lambda m: m + 1)
    assert torch.all(model[0].mask == 1)


def test_deploy_masks_is_all_or_nothing():
    model = _masked_model()
    with pytest.raises(RuntimeError, match="does not broadcast"):
        deploy_masks(model, state_dict={"0.mask": torch.ones(3, 4), "2.0.mask": torch.ones(5)})
    assert model[0].mask is None


def test_binarize_masks_keeps_weight_times_mask():
    model = _masked_model()
    state = model.state_dict()
    masks = {"0.mask": torch.rand(3, 4) * (torch.rand(3, 4) > 0.5), "2.0.mask": torch.tensor([0.5, 0.0, 2.0])}
    new_state, binary = binarize_masks(state, masks)
    assert set(new_state) == set(state) and new_state is not state
    for name, mask in binary.items():
        assert set(mask.unique().tolist()) <= {0.0, 1.0}
        assert torch.equal(mask, (masks[name] != 0).float())
    torch.testing.assert_close(new_state["0.weight"] * binary["0.mask"], state["0.weight"] * masks["0.mask"])
    for part in ("real", "imag"):
        key = f"2.0.weight.{part}"
        torch.testing.assert_close(new_state[key] * binary["2.0.mask"], state[key] * masks["2.0.mask"])
    assert torch.equal(new_state["2.1.weight"], state["2.1.weight"])
    new_state.update(binary)
    model.load_state_dict(new_state)
    with pytest.raises(KeyError, match="7.mask"):
        binarize_masks(state, {"7.mask": torch.ones(1)})


# ---------------------------------------------------------------- torch.compile


@pytest.mark.inductor
def test_torch_compile_matches_eager():
    model = _model()
    x = torch.randn(3, 2, 5)
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), model(x))
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
        model[2].mask.zero_()  # seen by both
        torch.testing.assert_close(compiled(x), model(x))


def test_functional_call_uses_the_given_mask():
    layer = LinearMasked(3, 2)
    layer.mask = torch.ones(2, 3)
    other = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    x = torch.randn(4, 3)
    out = torch.func.functional_call(layer, {"mask": other}, (x,))
    torch.testing.assert_close(out, x @ (layer.weight * other).T + layer.bias)
    assert torch.all(layer.mask == 1)


def test_failed_load_of_complex_layer_leaves_mask_unset():
    layer = CplxLinearMasked(3, 2)
    bad = {
        "weight.real": torch.zeros(2, 4),
        "weight.imag": torch.zeros(2, 4),
        "bias.real": torch.zeros(2),
        "bias.imag": torch.zeros(2),
        "mask": torch.zeros(2, 3),
    }
    with pytest.raises(RuntimeError, match="size mismatch"):
        layer.load_state_dict(bad)
    assert layer.mask is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("cls", [LinearMasked, CplxLinearMasked])
def test_assign_load_into_meta_layer_puts_mask_next_to_weight(cls, dtype):
    source = cls(3, 2, dtype=dtype)
    source.mask = torch.tensor([1.0, 0.0, 1.0])
    target = cls(3, 2, device="meta")
    target.load_state_dict(source.state_dict(), assign=True)
    weight = target.weight.real if isinstance(target.weight, Cplx) else target.weight
    assert target.mask.device == weight.device == torch.device("cpu")
    assert target.mask.dtype == weight.dtype == dtype
    assert torch.equal(target.mask, source.mask)
    x = cplx.randn(4, 3, dtype=dtype) if cls is CplxLinearMasked else torch.randn(4, 3, dtype=dtype)
    expected, output = source(x), target(x)
    if isinstance(output, Cplx):
        expected, output = cplx_to_native(expected), cplx_to_native(output)
    torch.testing.assert_close(output, expected)
