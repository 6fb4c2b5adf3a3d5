"""Quantized twins, ``quantize`` and ``compressed_size``, against numpy and torch's own layers.

The generic layer-table tests run every family's quantized twin against
torch's functional op on its dequantized weight; these check the
quantization itself, the packed storage, the sizes and the conversions.
"""

import io

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxBilinear, CplxConv2d, CplxConvTranspose1d, CplxGRU, CplxLinear
from cplxmodule.nn.masked import (
    BaseQuantized, compressed_size, convert_layers, named_compressed_size, prepare_qat, quantize,
    to_masked,
)
from cplxmodule.nn.masked.quantized import _decode, _encode
from cplxmodule.nn.relevance import (
    bit_precision, compute_ard_masks, named_bit_precision, to_bayesian,
)


def _numpy_quantized(weight, bits, axis):
    """The symmetric per-channel quantization of the real array ``weight`` (parts on its last axis if complex)."""
    levels = 2 ** (bits - 1) - 1
    reduce = tuple(d for d in range(weight.ndim) if d != axis)
    largest = np.abs(weight).max(axis=reduce, keepdims=True)
    scale = largest / levels
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(scale > 0, np.round(weight / np.where(scale > 0, scale, 1)), 0)
    return np.clip(q, -levels, levels), scale


def _real_weight(layer):
    w = layer.weight
    return np.stack([w.real.detach().numpy(), w.imag.detach().numpy()], -1) \
        if isinstance(w, cplx.Cplx) else w.detach().numpy()


LAYERS = [
    (lambda: torch.nn.Linear(7, 5), 0, lambda: (torch.randn(3, 7),)),
    (lambda: torch.nn.Conv1d(4, 6, 3), 0, lambda: (torch.randn(2, 4, 9),)),
    (lambda: CplxLinear(7, 5), 0, lambda: (cplx.randn(3, 7),)),
    (lambda: CplxConv2d(3, 4, 3, groups=1), 0, lambda: (cplx.randn(2, 3, 6, 6),)),
    (lambda: CplxConvTranspose1d(4, 6, 3, groups=2), 1, lambda: (cplx.randn(2, 4, 5),)),
    (lambda: CplxBilinear(3, 4, 5), 0, lambda: (cplx.randn(2, 3), cplx.randn(2, 4))),
]


def _native(x):
    return torch.complex(x.real, x.imag) if isinstance(x, cplx.Cplx) else x


@pytest.mark.parametrize("make, axis, inputs", LAYERS, ids=lambda v: "")
@pytest.mark.parametrize("bits", [2, 5, 8, 12])
def test_the_codes_and_scales_are_numpy_s_and_the_output_is_the_dense_layer_s_on_them(
        make, axis, inputs, bits):
    torch.manual_seed(bits)
    dense = make().double()
    complex_ = isinstance(dense.weight, cplx.Cplx)
    expected_q, expected_scale = _numpy_quantized(_real_weight(dense), bits, axis)
    if complex_:  # both parts share their channel's scale
        expected_scale = np.broadcast_to(expected_scale.max(-1, keepdims=True), expected_scale.shape)
    layer = quantize(torch.nn.Sequential(dense), bits)[0]
    assert isinstance(layer, BaseQuantized) and isinstance(layer, type(dense))
    np.testing.assert_array_equal(layer.weight_int.numpy(), expected_q)
    scale = np.broadcast_to(layer.weight_scale.numpy(), expected_scale.shape)
    np.testing.assert_allclose(scale, expected_scale, rtol=1e-15)
    assert layer.weight_int.abs().max() <= 2 ** (bits - 1) - 1
    # the dense layer of the same class, given the numpy-dequantized weight
    dequantized = torch.from_numpy(expected_q * expected_scale)
    with torch.no_grad():
        if complex_:
            dense.weight.real.copy_(dequantized[..., 0])
            dense.weight.imag.copy_(dequantized[..., 1])
        else:
            dense.weight.copy_(dequantized)
    x = [t.double() for t in inputs()]
    torch.testing.assert_close(_native(layer(*x)), _native(dense(*x)), rtol=0, atol=1e-12)
    assert not any(name.startswith("weight") for name, _ in layer.named_parameters())


def _layout_bytes(q, bits):
    """The bytes of the smallest layout, each counted from its definition (see quantized.py)."""
    n = q.numel()
    nonzero = np.flatnonzero(q.numpy())
    dense = -(-n * bits // 8)
    bitmap = 1 + -(-n // 8) + -(-len(nonzero) * bits // 8)
    relative = []
    for k in range(1, 17):
        previous, entries = -1, 0
        for p in nonzero:
            entries += 1 + (p - previous - 1) // 2 ** k  # fillers, then the entry
            previous = p
        relative.append(5 + -(-entries * k // 8) + -(-entries * bits // 8))
    return min([dense, bitmap] + relative)


@settings(max_examples=60, deadline=None)
@given(bits=st.integers(2, 24), size=st.integers(0, 300), density=st.floats(0, 1),
       seed=st.integers(0, 2**16))
def test_packing_round_trips_and_takes_the_smallest_layout(bits, size, density, seed):
    g = torch.Generator().manual_seed(seed)
    levels = 2 ** (bits - 1) - 1
    q = torch.randint(-levels, levels + 1, (size,), generator=g)
    q[torch.rand(size, generator=g) > density] = 0
    index, values = _encode(q, bits)
    assert torch.equal(_decode(index, values, bits, (size,)).long(), q)
    assert index.numel() + values.numel() == _layout_bytes(q, bits)
    assert index.dtype == values.dtype == torch.uint8


def test_relative_indices_take_fillers_across_long_runs_of_zeros():
    q = torch.zeros(1000, dtype=torch.long)
    q[[3, 4, 900, 999]] = torch.tensor([5, -7, 1, 2])
    index, values = _encode(q, 4)
    assert int(index[0]) >= 1  # relative indices: 4 bytes of bitmap-free header
    assert index.numel() + values.numel() < 1 + 125  # less than the bitmap alone
    assert torch.equal(_decode(index, values, 4, (1000,)).long(), q)


def test_pruned_weights_stay_exact_zeros_and_the_saved_state_is_what_compressed_size_counts():
    torch.manual_seed(0)
    model = torch.nn.Sequential(CplxConv2d(8, 16, 3), CplxLinear(16, 32))
    masked = convert_layers(model, "masked")
    for layer in masked:
        layer.mask = torch.rand(layer.weight.real.shape) > 0.9
    small = quantize(masked, 4)
    for layer, source in zip(small, masked):
        zero = source.mask == 0
        assert (layer.weight_int[zero] == 0).all()
        assert layer.weight_index.numel() > 0  # 90 % zeros: an index pays
    stored = sum(t.numel() * t.element_size() for t in small.state_dict().values())
    assert compressed_size(small) == stored
    buffer = io.BytesIO()
    torch.save(small.state_dict(), buffer)
    # torch.save's own overhead: the same keys and dtypes holding nothing, plus
    # its alignment of each record's data to 64 bytes
    empty = io.BytesIO()
    torch.save({k: v.new_empty(0) for k, v in small.state_dict().items()}, empty)
    assert stored <= buffer.tell() <= stored + empty.tell() + 64 * len(small.state_dict())
    # 4 bits of ~10 % of the weights and a bitmap against 32-bit floats
    assert compressed_size(small) < compressed_size(model) / 8


def test_compressed_size_counts_a_masked_weight_s_nonzeros_behind_a_bitmap():
    layer = CplxLinear(40, 10)
    masked = convert_layers(torch.nn.Sequential(layer), "masked")
    mask = torch.zeros(10, 40)
    mask[:, :3] = 1
    masked[0].mask = mask
    sizes = dict(named_compressed_size(masked))
    # by hand: per part 30 float32 values and a 400-bit bitmap; biases dense
    assert sizes["0.weight"] == 2 * (30 * 4 + 50)
    assert sizes["0.bias.real"] == sizes["0.bias.imag"] == 10 * 4
    assert "0.mask" not in sizes
    assert compressed_size(masked) == sum(sizes.values())
    # dense: every parameter at its dtype
    assert compressed_size(layer) == (400 + 10) * 2 * 4


def test_a_state_dict_loads_into_another_quantized_model_whatever_its_width():
    torch.manual_seed(1)
    source = quantize(torch.nn.Sequential(CplxLinear(6, 4), torch.nn.Linear(4, 3)), {"0": 3, "1": 9})
    target = quantize(torch.nn.Sequential(CplxLinear(6, 4), torch.nn.Linear(4, 3)), 8)
    target.load_state_dict(source.state_dict())
    assert [layer.bits for layer in (target[0], target[1])] == [3, 9]
    x = cplx.randn(5, 6)
    torch.testing.assert_close(_native(target[0](x)), _native(source[0](x)), rtol=0, atol=0)


def test_a_bad_state_dict_is_refused_naming_it_and_the_layer_stays_as_it_was():
    layer = quantize(torch.nn.Sequential(CplxLinear(6, 4)), 5)[0]
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    for key, bad in (("weight_values", torch.zeros(3, dtype=torch.uint8)),
                     ("weight_bits", torch.tensor(40, dtype=torch.uint8)),
                     ("weight_scale", torch.ones(3, 1, 1))):
        state = dict(layer.state_dict())
        state[key] = bad
        with pytest.raises(RuntimeError, match=key):
            layer.load_state_dict(state)
        for name, value in layer.state_dict().items():
            assert torch.equal(value, before[name]), name
    state = {k: v for k, v in layer.state_dict().items() if k != "weight_index"}
    with pytest.raises(RuntimeError, match="weight_index"):
        layer.load_state_dict(state)


def test_widths_per_layer_come_from_bit_precision_and_a_mapping_must_cover_the_layers():
    torch.manual_seed(2)
    model = to_bayesian(torch.nn.Sequential(CplxLinear(8, 6), CplxLinear(6, 2)), "vd")
    with torch.no_grad():
        for layer in model:
            layer.log_sigma2.uniform_(-12, -4)
    bits = bit_precision(model, threshold=3.0)
    small = quantize(to_masked(model, compute_ard_masks(model, threshold=3.0)), bits)
    assert {name: small.get_submodule(name).bits for name in bits} == {
        name: max(b, 2) for name, b in bits.items()}
    for bad, match in (({"0": 4}, r"missing \['1'\]"), ({"0": 4, "1": 4, "2": 4}, r"\['2'\]"),
                       ({"0": 4, "1": 1}, r"`bits\['1'\]` must be in \[2, 24\]"),
                       (25, r"`bits` must be in \[2, 24\]")):
        with pytest.raises(ValueError, match=match):
            quantize(model, bad)
    assert all(not isinstance(layer, BaseQuantized) for layer in model)


def test_a_quantized_model_converts_back_to_the_dense_layers_computing_the_same():
    torch.manual_seed(3)
    gru = CplxGRU(4, 5)
    small = quantize(gru, 6)
    assert all(isinstance(m, BaseQuantized) for name, m in small.named_modules()
               if name.startswith(("ih", "hh")) and name.count(".") == 0)
    dense = convert_layers(small, "dense")
    assert not any(isinstance(m, BaseQuantized) for m in dense.modules())
    x = cplx.randn(7, 2, 4)
    torch.testing.assert_close(_native(dense(x)[0]), _native(small(x)[0]), rtol=0, atol=0)
    assert all(p.requires_grad for p in dense.parameters())


def test_hooks_and_modes_carry_over_and_the_source_is_not_changed():
    model = torch.nn.Sequential(CplxLinear(3, 2))
    calls = []
    model[0].register_forward_hook(lambda *_: calls.append(1))
    model.eval()
    small = quantize(model, 8)
    assert type(model[0]) is CplxLinear and not small.training
    small(cplx.randn(1, 3))
    assert calls == [1]


def test_an_exported_quantized_model_holds_integer_weights_and_computes_the_same():
    torch.manual_seed(4)
    small = quantize(torch.nn.Sequential(torch.nn.Conv1d(2, 4, 3), torch.nn.ReLU(),
                                         torch.nn.Conv1d(4, 2, 3)), 6).eval()
    x = torch.randn(2, 2, 12)
    program = torch.export.export(small, (x,))
    integers = [name for name, value in program.constants.items() if not value.is_floating_point()]
    integers += [name for name, value in program.state_dict.items() if not value.is_floating_point()]
    assert any("weight_int" in name for name in integers)
    torch.testing.assert_close(program.module()(x), small(x))


def _masked_pair(seed):
    torch.manual_seed(seed)
    model = convert_layers(torch.nn.Sequential(CplxConv2d(3, 4, 3), CplxConvTranspose1d(4, 2, 3)),
                           "masked")
    for layer in model:
        layer.mask = torch.rand(layer.weight.real.shape) > 0.5
    return model


def test_training_with_the_quantizer_in_the_loop_passes_the_gradient_straight_through():
    model = _masked_pair(5)
    qat = prepare_qat(model, 3)
    assert all(layer.training_bits is None for layer in model)
    # the reference: plain masked layers holding numpy's quantized weights
    reference = convert_layers(model, "masked")
    for layer, source in zip(reference, model):
        real = np.stack([source.weight.real.detach().numpy(), source.weight.imag.detach().numpy()],
                        -1) * source.mask.numpy()[..., None]
        axis = 1 if isinstance(source, CplxConvTranspose1d) else 0
        q, scale = _numpy_quantized(real, 3, axis)
        scale = np.broadcast_to(scale.max(-1, keepdims=True), scale.shape)
        value = torch.from_numpy((q * scale).astype(np.float32))
        with torch.no_grad():
            layer.weight.real.copy_(value[..., 0])
            layer.weight.imag.copy_(value[..., 1])
    for index, x in ((0, cplx.randn(2, 3, 5, 5)), (1, cplx.randn(2, 4, 6))):
        out, expected = qat[index](x), reference[index](x)
        torch.testing.assert_close(_native(out), _native(expected), rtol=1e-6, atol=1e-6)
        (out.real.square().sum() + out.imag.sum()).backward()
        (expected.real.square().sum() + expected.imag.sum()).backward()
        for part in ("real", "imag"):
            torch.testing.assert_close(getattr(qat[index].weight, part).grad,
                                       getattr(reference[index].weight, part).grad)


def test_quantize_after_quantization_aware_training_computes_what_it_trained():
    qat = prepare_qat(_masked_pair(6), {"0": 4, "1": 6}).eval()
    small = quantize(qat)
    assert [layer.bits for layer in small] == [4, 6]
    x = cplx.randn(2, 3, 5, 5)
    torch.testing.assert_close(_native(small[0](x)), _native(qat[0](x)), rtol=0, atol=1e-6)
    assert not hasattr(convert_layers(qat, "dense")[0], "training_bits")


def test_prepare_qat_refuses_what_it_cannot_do_naming_the_argument():
    with pytest.raises(ValueError, match="`model` must have masked layers"):
        prepare_qat(torch.nn.Sequential(CplxLinear(2, 2)))
    model = _masked_pair(7)
    with pytest.raises(ValueError, match=r"`bits` must name masked layers of `model`, got \['2'\]"):
        prepare_qat(model, {"0": 4, "2": 4})
    with pytest.raises(ValueError, match="`bits` must be in"):
        prepare_qat(model, 1, inplace=True)
    assert all(layer.training_bits is None for layer in model)


def test_fixed_point_formats_from_the_posterior_store_the_weights_on_their_grid():
    torch.manual_seed(8)
    model = to_bayesian(torch.nn.Sequential(CplxLinear(8, 6), torch.nn.Linear(12, 3)), "vd")
    with torch.no_grad():
        for layer in model:
            layer.log_sigma2.uniform_(-12, -6)
    formats = dict(named_bit_precision(model, threshold=3.0))
    masked = to_masked(model, compute_ard_masks(model, threshold=3.0))
    small = quantize(masked, formats)
    for name, (bits, fraction) in formats.items():
        layer, source = small.get_submodule(name), masked.get_submodule(name)
        weight = _real_weight(source) * (source.mask.numpy()[..., None] if isinstance(
            source.weight, cplx.Cplx) else source.mask.numpy())
        expected = np.clip(np.round(weight * 2.0 ** fraction), -(2 ** (bits - 1) - 1),
                           2 ** (bits - 1) - 1)
        np.testing.assert_array_equal(layer.weight_int.numpy(), expected)
        assert layer.weight_scale.numel() == 1 and float(layer.weight_scale) == 2.0 ** -fraction
        assert f"bits={bits}, fraction={fraction}" in repr(layer)
    # a fixed-point state_dict loads into a model quantized per channel
    target = quantize(masked, 8)
    target.load_state_dict(small.state_dict())
    torch.testing.assert_close(_native(target[0].weight), _native(small[0].weight), rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"`bits\['0'\]'s fraction` must be an int"):
        quantize(masked, {"0": (4, 1.5), "1": 4})


def test_biases_quantize_with_one_scale_per_layer_and_load_back():
    torch.manual_seed(9)
    model = torch.nn.Sequential(CplxLinear(5, 7), torch.nn.Linear(14, 3))
    small = quantize(model, 8, bias_bits=6)
    for layer, source in zip(small, model):
        bias = source.bias
        real = np.stack([bias.real.detach().numpy(), bias.imag.detach().numpy()], -1) \
            if isinstance(bias, cplx.Cplx) else bias.detach().numpy()
        q = np.round(real / (np.abs(real).max() / 31))
        np.testing.assert_array_equal(layer.bias_int.numpy(), q)
        assert layer.bias_scale.numel() == 1 and "bias_bits=6" in repr(layer)
        assert not any(name.startswith("bias") for name, _ in layer.named_parameters())
    assert compressed_size(small) < compressed_size(quantize(model, 8))
    target = quantize(model, 4, bias_bits=12)
    target.load_state_dict(small.state_dict())
    torch.testing.assert_close(_native(target[0].bias), _native(small[0].bias), rtol=0, atol=0)
    dense = convert_layers(small, "dense")
    assert isinstance(dense[1].bias, torch.nn.Parameter)
    torch.testing.assert_close(dense[1].bias, small[1].bias, rtol=0, atol=0)
    # a state_dict with a floating-point bias does not load into a quantized one
    with pytest.raises(RuntimeError, match="bias_values"):
        target.load_state_dict(quantize(model, 8).state_dict())


def test_training_in_a_fixed_point_format_rounds_to_its_grid_and_quantize_keeps_it():
    qat = prepare_qat(_masked_pair(10), {"0": (5, 3), "1": 6})
    assert (qat[0].training_bits, qat[0].training_fraction) == (5, 3)
    x = cplx.randn(2, 3, 5, 5, requires_grad=False)
    weight = qat[0].weight_masked
    real = np.stack([weight.real.detach().numpy(), weight.imag.detach().numpy()], -1)
    source = _real_weight(qat[0]) * qat[0].mask.numpy()[..., None]
    np.testing.assert_array_equal(real * 8, np.clip(np.round(source * 8), -15, 15))
    out = qat[0](x)
    (out.real.sum() + out.imag.sum()).backward()  # straight through: the mask's gradient
    assert torch.equal(qat[0].weight.real.grad == 0, qat[0].mask.expand_as(qat[0].weight.real) == 0)
    small = quantize(qat.eval())
    assert "bits=5, fraction=3" in repr(small[0]) and small[1].weight_scale.numel() > 1
    torch.testing.assert_close(_native(small[0](x)), _native(qat[0](x)), rtol=0, atol=1e-6)


def test_a_quantized_model_runs_under_data_parallel(two_fake_devices):
    from cplxmodule.nn import CplxDataParallel
    from tests.helpers import as_data_parallel

    small = quantize(_masked_pair(11)[:1], 5, bias_bits=8).eval()
    x = cplx.randn(4, 3, 5, 5)
    out = as_data_parallel(CplxDataParallel, small)(x)
    assert two_fake_devices  # the input was split across the two replicas
    torch.testing.assert_close(_native(out), _native(small(x)))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_quantized_model_moves_to_the_gpu_and_loads_there():
    small = quantize(_masked_pair(12), {"0": (5, 3), "1": 6}, bias_bits=8).eval()
    gpu = quantize(_masked_pair(12), 8).cuda()
    gpu.load_state_dict(small.state_dict())
    assert all(t.is_cuda for t in gpu.buffers())
    x = cplx.randn(2, 3, 5, 5)
    torch.testing.assert_close(_native(gpu[0](x.cuda())).cpu(), _native(small[0](x)))


def test_training_with_rounded_biases_deploys_what_it_trained():
    model = _masked_pair(13)
    with torch.no_grad():
        for layer in model:
            layer.bias.real.uniform_(-1, 1)
    qat = prepare_qat(model, 6, bias_bits=5).eval()
    bias = qat[0].bias
    real = np.stack([bias.real.detach().numpy(), bias.imag.detach().numpy()], -1)
    x = cplx.randn(2, 3, 5, 5)
    # the reference: the layer computing with numpy's rounded bias
    reference = prepare_qat(model, 6)
    with torch.no_grad():
        rounded = np.round(real / (np.abs(real).max() / 15)) * (np.abs(real).max() / 15)
        reference[0].bias.real.copy_(torch.from_numpy(rounded[..., 0]))
        reference[0].bias.imag.copy_(torch.from_numpy(rounded[..., 1]))
    torch.testing.assert_close(_native(qat[0](x)), _native(reference.eval()[0](x)))
    small = quantize(qat)
    assert "bias_bits=5" in repr(small[0])
    torch.testing.assert_close(_native(small[0](x)), _native(qat[0](x)), rtol=0, atol=1e-6)
