"""Every public function of ``cplxmodule.cplx`` takes torch's complex tensors and duck types.

Wherever a function takes a :class:`Cplx` operand, a tensor of torch's
complex dtype and any object whose ``.real`` and ``.imag`` are tensors of
one shape are taken too (as the published package took them). The
reference is the same call on the equivalent :class:`Cplx`: values and
gradients must be equal, and the gradient reaches a complex leaf.
"""

import math

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import given, settings

import cplxmodule.cplx as cplx
from cplxmodule import Cplx

from ..helpers import Duck, flat_outputs, weighted_sum


def c(*shape):
    """A complex operand slot of ``shape`` (drawn by the test)."""
    return ("complex", shape)


def _identity(z):
    return z


def r(*shape):
    """A real tensor of ``shape`` (the same in every call of a test)."""
    return ("real", shape)


# name -> (positional arguments, keyword arguments); ``c(...)`` marks the
# complex operands, which the test passes as Cplx, native tensors or ducks.
SAMPLES = {
    "to_interleaved_real": ((c(3, 4),), {}),
    "to_concatenated_real": ((c(3, 4),), {}),
    "to_real": ((c(3, 4),), {}),
    "to_complex": ((c(3, 4),), {}),
    "to_view_as_real": ((c(3, 4),), {}),
    "randn_like": ((c(3, 4),), {}),
    "cat": (([c(2, 4), c(3, 4)],), {}),
    "stack": (([c(3, 4), c(3, 4)],), {"dim": 1}),
    "split": ((c(5, 4), 2), {}),
    "chunk": ((c(5, 4), 2), {"dim": 1}),
    "unbind": ((c(3, 4),), {"dim": 1}),
    "take": ((c(3, 4), torch.tensor([0, 5, 11])), {}),
    "narrow": ((c(3, 4), 1, 1, 2), {}),
    "squeeze": ((c(3, 1, 4),), {}),
    "unsqueeze": ((c(3, 4), 1), {}),
    "exp": ((c(3, 4),), {}),
    "log": ((c(3, 4),), {}),
    "sin": ((c(3, 4),), {}),
    "cos": ((c(3, 4),), {}),
    "tan": ((c(3, 4),), {}),
    "sinh": ((c(3, 4),), {}),
    "cosh": ((c(3, 4),), {}),
    "tanh": ((c(3, 4),), {}),
    "modrelu": ((c(3, 4),), {"threshold": 0.3}),
    "phaseshift": ((c(3, 4),), {"phi": 0.7}),
    "zrelu": ((c(3, 4),), {}),
    "cardioid": ((c(3, 4),), {}),
    "sigmoid": ((c(3, 4),), {}),
    "modtanh": ((c(3, 4),), {}),
    "modsquash": ((c(3, 4),), {}),
    "modlog": ((c(3, 4),), {}),
    "zabsrelu": ((c(3, 4),), {"threshold": 0.3}),
    "zleakyrelu": ((c(3, 4),), {}),
    "phase_softmax": ((c(3, 4),), {"dim": 1}),
    "ratio_mask": ((c(3, 4), c(3, 4)), {}),
    "linear": ((c(3, 4), c(5, 4), c(5)), {}),
    "bilinear": ((c(3, 4), c(3, 2), c(5, 4, 2), c(5)), {}),
    "einsum": (("ij,jk->ik", c(3, 4), c(4, 2)), {}),
    "conv1d": ((c(2, 4, 9), c(6, 2, 3), c(6)), {"groups": 2, "padding": "same"}),
    "conv2d": ((c(2, 3, 6, 6), c(5, 3, 3, 3), c(5)), {"padding": "same"}),
    "conv3d": ((c(1, 2, 4, 4, 4), c(3, 2, 2, 2, 2), c(3)), {}),
    "conv_transpose1d": ((c(2, 3, 5), c(3, 4, 3), c(4)), {"stride": 2}),
    "conv_transpose2d": ((c(2, 3, 4, 4), c(3, 2, 3, 3), c(2)), {}),
    "conv_transpose3d": ((c(1, 2, 3, 3, 3), c(2, 2, 2, 2, 2), c(2)), {}),
    "max_pool1d": ((c(2, 3, 8), 2), {}),
    "max_pool2d": ((c(2, 3, 6, 6), 2), {"return_indices": True}),
    "max_pool3d": ((c(1, 2, 4, 4, 4), 2), {}),
    "adaptive_max_pool1d": ((c(2, 3, 8), 3), {}),
    "adaptive_max_pool2d": ((c(2, 3, 6, 6), 2), {}),
    "adaptive_max_pool3d": ((c(1, 2, 4, 4, 4), 2), {}),
    "avg_pool1d": ((c(2, 3, 8), 2), {}),
    "avg_pool2d": ((c(2, 3, 6, 6), 2), {}),
    "avg_pool3d": ((c(1, 2, 4, 4, 4), 2), {}),
    "adaptive_avg_pool1d": ((c(2, 3, 8), 3), {}),
    "adaptive_avg_pool2d": ((c(2, 3, 6, 6), 2), {}),
    "adaptive_avg_pool3d": ((c(1, 2, 4, 4, 4), 2), {}),
    "interpolate": ((c(2, 3, 5),), {"scale_factor": 2, "mode": "linear"}),
    "mse_loss": ((c(3, 4), c(3, 4)), {}),
    "gaussian_nll_loss": ((c(3, 4), c(3, 4), 0.5), {}),
    "rice_nll_loss": ((c(3, 4), r(3, 4), 0.5), {}),  # the real slot is positive: moduli
    "l1_loss": ((c(3, 4), c(3, 4)), {}),
    "cauchy_loss": ((c(3, 4), c(3, 4)), {}),
    "log_cosh_loss": ((c(3, 4), c(3, 4)), {}),
    "log_error_loss": ((c(3, 4), c(3, 4)), {}),
    "phase_aware_loss": ((c(3, 4), c(3, 4)), {}),
    "ssim_loss": ((c(2, 1, 12, 12), c(2, 1, 12, 12)), {"window_size": 5}),
    "batch_norm": ((c(6, 3), None, None), {"training": True}),
    "layer_norm": ((c(3, 4), (4,)), {}),
    "group_norm": ((c(2, 4, 5), 2), {}),
    "instance_norm": ((c(2, 3, 5),), {}),
    "rms_norm": ((c(3, 4), (4,)), {}),
    "magnitude_batch_norm": ((c(6, 3), None, None), {"training": True}),
    "dropout": ((c(3, 4),), {"p": 0.5}),
    "dropout1d": ((c(2, 3, 4),), {"p": 0.5}),
    "dropout2d": ((c(2, 3, 4, 4),), {"p": 0.5}),
    "dropout3d": ((c(2, 3, 2, 2, 2),), {"p": 0.5}),
    "scaled_dot_product_attention": ((c(2, 3, 4), c(2, 5, 4), c(2, 5, 4)), {}),
    # projections by the identity: the complex operands are the attention's
    "multi_head_attention_forward": (
        (c(3, 2, 4), c(5, 2, 4), c(5, 2, 4), 4, 2, (_identity,) * 3, c(4), c(4), True, 0.0,
         _identity), {},
    ),
    "attention_weights": ((c(2, 3, 4), c(2, 5, 4)), {"score": "modulus"}),
    "fft": ((c(3, 8),), {}),
    "ifft": ((c(3, 8),), {"n": 6}),
    "fftn": ((c(3, 4, 4),), {"dim": (1, 2)}),
    "ifftn": ((c(3, 4, 4),), {}),
    "stft": ((c(2, 64), 16), {"window": torch.hann_window(16)}),
    "istft": ((c(2, 16, 9), 16), {"window": torch.hann_window(16)}),
    "data_consistency": ((c(2, 1, 4, 4), c(2, 1, 4, 4), torch.tensor([True, False, True, False])),
                         {"weight": 0.5, "centered": True}),
    "linear_naive": ((c(3, 4), c(5, 4), c(5)), {}),
    "linear_cat": ((c(3, 4), c(5, 4), c(5)), {}),
    "linear_3m": ((c(3, 4), c(5, 4), c(5)), {}),
    "bilinear_naive": ((c(3, 4), c(3, 2), c(5, 4, 2), c(5)), {}),
    "bilinear_cat": ((c(3, 4), c(3, 2), c(5, 4, 2), c(5)), {}),
    "convnd": ((torch.nn.functional.conv1d, c(2, 3, 6), c(4, 3, 3), c(4)), {}),
    "convnd_naive": ((torch.nn.functional.conv1d, c(2, 3, 6), c(4, 3, 3)), {}),
    "convnd_3m": ((torch.nn.functional.conv1d, c(2, 3, 6), c(4, 3, 3)), {}),
    "convnd_quick": ((torch.nn.functional.conv1d, c(2, 3, 6), c(4, 3, 3)), {}),
    "conv_transposend": (
        (torch.nn.functional.conv_transpose1d, c(2, 3, 6), c(3, 4, 3), c(4)), {"stride": 2}
    ),
    "conv_transposend_naive": (
        (torch.nn.functional.conv_transpose1d, c(2, 3, 6), c(3, 4, 3)), {}
    ),
    "conv_transposend_3m": (
        (torch.nn.functional.conv_transpose1d, c(2, 3, 6), c(3, 4, 3)), {}
    ),
    "max_poolnd": ((torch.nn.functional.max_pool1d, c(2, 3, 8), 2), {}),
    "symmetric_circular_padding": ((c(2, 3, 8), 2), {}),
    "spectral_pool1d": ((c(2, 3, 8), 5), {}),
    "spectral_pool2d": ((c(2, 3, 6, 6), 4), {}),
    "spectral_pool3d": ((c(1, 2, 4, 4, 4), 3), {}),
    "rotary": ((c(5, 2, 4),), {}),
    "zoh": ((c(3, 2), c(3, 2), r(3)), {}),
    "ssm_kernel": ((c(3, 2), c(3, 2), c(3, 2), r(3), 7), {"d": c(3)}),
    "causal_fftconv": ((c(2, 3, 7), c(3, 7)), {}),
    "matrix_exp": ((c(2, 3, 3),), {}),
    "phase_sigmoid": ((c(3, 4),), {}),
    "polar_activation": ((c(3, 4), torch.tanh, torch.sin), {}),
    "magnitude_minmax_norm": ((c(3, 4),), {"dim": 1}),
    "scale_channels": ((c(2, 3, 4), c(3)), {}),
    "efficient_channel_attention": ((c(2, 5, 4), c(3)), {}),
    "fourth_power_loss": ((c(3, 4), c(3, 4)), {}),
    "analytic_signal_loss": ((c(3, 8),), {}),
    "si_sdr": ((c(3, 8), c(3, 8)), {}),
    "si_sdr_loss": ((c(3, 8), c(3, 8)), {"zero_mean": True}),
    "psnr": ((c(2, 1, 4, 4), c(2, 1, 4, 4)), {}),
    "nmse": ((c(2, 1, 4, 4), c(2, 1, 4, 4)), {"magnitude": True}),
    "ssim": ((c(2, 1, 6, 6), c(2, 1, 6, 6)), {"window_size": 3}),
}

# Public names that take no complex operand, with the reason.
NO_COMPLEX_OPERAND = {
    "Cplx": "the class itself (tests/cplx/test_tensor.py)",
    "from_interleaved_real": "takes a real tensor",
    "from_concatenated_real": "takes a real tensor",
    "from_real": "takes a real tensor",
    "from_complex": "takes a native complex tensor by definition",
    "from_view_as_real": "takes a real tensor",
    "hilbert": "takes a real signal",
    "randn": "takes a size",
    "gabor_kernel": "takes real centres and widths",
    "morlet_kernel": "takes real centres and widths",
    "sinusoid": "takes sizes",
    "eca_kernel_size": "takes a number of channels",
}


TOLERANCES = {
    torch.complex64: dict(rtol=4e-6, atol=1e-6),
    torch.complex128: dict(rtol=1e-13, atol=1e-13),
}


def test_every_public_function_has_a_sample():
    names = set(cplx.__all__)
    missing = names - set(SAMPLES) - set(NO_COMPLEX_OPERAND)
    assert not missing, f"add a sample to SAMPLES for: {sorted(missing)}"
    assert not (set(SAMPLES) | set(NO_COMPLEX_OPERAND)) - names, "a sample names no public function"


def _draw_parts(spec, dtype, generator):
    """The parts of every complex slot of ``spec``, and the real tensors, drawn once."""
    kind, shape = spec
    real_dtype = torch.float64 if dtype == torch.complex128 else torch.float32
    if kind == "real":
        return torch.rand(*shape, generator=generator, dtype=real_dtype) + 0.5
    parts = torch.randn(2, *shape, generator=generator, dtype=real_dtype)
    return parts[0], parts[1]


def _is_slot(value):
    return isinstance(value, tuple) and len(value) == 2 and value[0] in ("complex", "real")


def _map(structure, fn):
    """``structure`` with ``fn`` applied to every slot (lists and tuples of args searched)."""
    if _is_slot(structure):
        return fn(structure)
    if isinstance(structure, list):
        return [_map(x, fn) for x in structure]
    if isinstance(structure, dict):
        return {k: _map(v, fn) for k, v in structure.items()}
    if isinstance(structure, tuple):
        return tuple(_map(x, fn) for x in structure)
    return structure


def _call(name, args, kwargs, drawn, kind):
    """Call ``name`` with the drawn values as operands of ``kind``; return (output, leaves)."""
    leaves = []
    values = iter(drawn)

    def operand(slot):
        value = next(values)
        if slot[0] == "real":
            return value
        re, im = (p.detach().clone().requires_grad_() for p in value)
        if kind == "cplx":
            leaves.append((re, im))
            return Cplx(re, im)
        if kind == "duck":
            leaves.append((re, im))
            return Duck(re, im)
        native = torch.complex(re.detach(), im.detach()).requires_grad_()
        leaves.append(native)
        return native

    args, kwargs = _map((args, kwargs), operand)
    torch.manual_seed(0)  # dropout and randn_like draw the same numbers for every kind
    return getattr(cplx, name)(*args, **kwargs), leaves


def _slots(structure):
    found = []
    _map(structure, lambda s: found.append(s) or s)
    return found


def _gradients(leaves):
    """Each complex leaf's gradient as a complex tensor (zeros where none reached it)."""
    grads = []
    for leaf in leaves:
        if isinstance(leaf, tuple):
            re, im = leaf
            grads.append(torch.complex(
                torch.zeros_like(re) if re.grad is None else re.grad,
                torch.zeros_like(im) if im.grad is None else im.grad,
            ))
        else:
            grads.append(torch.zeros_like(leaf) if leaf.grad is None else leaf.grad)
    return grads


@pytest.mark.parametrize("name", sorted(SAMPLES))
@settings(max_examples=4, deadline=None, derandomize=True)
@given(
    dtype=st.sampled_from([torch.complex64, torch.complex128]),
    kind=st.sampled_from(["native", "duck"]),
    seed=st.integers(0, 2**16),
)
def test_native_and_duck_operands_equal_cplx(name, dtype, kind, seed):
    args, kwargs = SAMPLES[name]
    generator = torch.Generator().manual_seed(seed)
    drawn = [_draw_parts(s, dtype, generator) for s in _slots((args, kwargs))]
    reference, ref_leaves = _call(name, args, kwargs, drawn, "cplx")
    output, leaves = _call(name, args, kwargs, drawn, kind)

    ours, theirs = flat_outputs(output), flat_outputs(reference)
    assert type(output) is type(reference)
    assert len(ours) == len(theirs)
    # equal up to rounding: strided parts may take other kernels than contiguous ones
    tolerance = TOLERANCES[dtype]
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, **tolerance)

    coefficients = torch.Generator().manual_seed(seed + 1)
    loss = weighted_sum(output, coefficients)
    if not loss.requires_grad:
        return  # integer outputs only (none of the samples today)
    loss.backward()
    weighted_sum(reference, torch.Generator().manual_seed(seed + 1)).backward()
    for a, b in zip(_gradients(leaves), _gradients(ref_leaves)):
        torch.testing.assert_close(a, b, **tolerance)


@pytest.mark.parametrize("name", ["linear", "conv1d", "exp", "cat", "fft", "stft"])
def test_operands_are_read_through_views_not_copies(name):
    """The parts of a native operand are views of its memory: nothing copied on the way in."""
    args, kwargs = SAMPLES[name]
    seen = []
    real_part = torch.Tensor.real.__get__

    def operand(slot):
        z = torch.randn(*slot[1], dtype=torch.complex64) if slot[0] == "complex" else torch.rand(
            *slot[1]) + 0.5
        seen.append(z)
        return z

    args, kwargs = _map((args, kwargs), operand)
    output = getattr(cplx, name)(*args, **kwargs)
    assert isinstance(flat_outputs(output)[0], torch.Tensor)
    # the conversion point keeps views: the parts it makes share the operand's storage
    from cplxmodule.cplx._shared import as_cplx

    for z in seen:
        if z.is_complex():
            parts = as_cplx(z)
            assert parts.real.untyped_storage().data_ptr() == z.untyped_storage().data_ptr()
            assert parts.imag.data_ptr() == real_part(z).data_ptr() + z.element_size() // 2
    assert math.isfinite(1.0)


@pytest.mark.parametrize("bad, message", [
    ("a string", "got str"),
    (torch.randn(3, 4, dtype=torch.float64).numpy(), "got ndarray"),
    (Duck(torch.randn(3, 4), torch.randn(3, 5)), "of shape (3, 5)"),
    (Duck(torch.randn(3, 4), torch.randn(3, 4, dtype=torch.float64)), "torch.float64"),
    (Duck(torch.randn(3, 4), None), "Duck"),
])
def test_other_operands_are_refused_naming_function_and_argument(bad, message):
    with pytest.raises(TypeError, match=r"^exp: `input` must be a Cplx or a complex tensor") as info:
        cplx.exp(bad)
    assert message in str(info.value)
    with pytest.raises(TypeError, match=r"^linear: `weight` must be a Cplx, a complex or real"):
        cplx.linear(cplx.randn(3, 4), bad)


def test_complex32_operands_are_read_as_float16_parts():
    z = torch.randn(3, 4, dtype=torch.complex64).to(torch.complex32)
    out = cplx.modrelu(z, 0.1)
    assert isinstance(out, Cplx) and out.dtype == torch.float16
    reference = cplx.modrelu(Cplx(z.real.clone(), z.imag.clone()), 0.1)
    torch.testing.assert_close(out.real, reference.real, rtol=0, atol=0)
