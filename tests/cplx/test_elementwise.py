"""Elementwise complex functions against torch's native complex tensors.

Values and the gradient of a real loss are compared with the same function
applied to complex64/complex128 tensors.
"""

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx

COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
dtypes = st.sampled_from([torch.float32, torch.float64])
seeds = st.integers(0, 2**31 - 1)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
broadcast_pairs = hnp.mutually_broadcastable_shapes(
    num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4
)
property_test = settings(max_examples=30, deadline=None)


def uniform(shape, dtype, gen, low, high):
    return low + (high - low) * torch.rand(shape, dtype=dtype, generator=gen)


def values(shape, dtype, gen, bound=3.0):
    """Native complex values with both parts in [-bound, bound]."""
    re = uniform(shape, dtype, gen, -bound, bound)
    im = uniform(shape, dtype, gen, -bound, bound)
    return torch.complex(re, im)


def away_from(x, bad, shift):
    """Move the points where ``bad(x)`` holds by ``shift``, out of ill-conditioned spots."""
    return torch.where(bad(x), x + shift, x)


def tolerance(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-11)


def compare(fn_cplx, fn_native, x, gen, *extra):
    """Values and input gradients of ``fn_cplx(Cplx)`` and ``fn_native(complex)`` agree.

    ``extra`` are real tensors passed to both, whose gradients are compared too.
    """
    dtype = x.real.dtype
    native = x.clone().requires_grad_()
    z = Cplx(x.real.clone().requires_grad_(), x.imag.clone().requires_grad_())
    extra_n = [e.clone().requires_grad_() for e in extra]
    extra_c = [e.clone().requires_grad_() for e in extra]

    out_n = fn_native(native, *extra_n)
    out_c = fn_cplx(z, *extra_c)
    assert isinstance(out_c, Cplx)
    assert out_c.real.dtype == out_c.imag.dtype == dtype
    torch.testing.assert_close(torch.complex(out_c.real, out_c.imag), out_n, **tolerance(dtype))

    g = torch.complex(torch.randn(out_n.shape, dtype=dtype, generator=gen),
                      torch.randn(out_n.shape, dtype=dtype, generator=gen))
    (out_n.real * g.real + out_n.imag * g.imag).sum().backward()
    (out_c.real * g.real + out_c.imag * g.imag).sum().backward()
    # torch's convention for a real loss L: z.grad = dL/dre + 1j dL/dim
    torch.testing.assert_close(torch.complex(z.real.grad, z.imag.grad), native.grad, **tolerance(dtype))
    for a, b in zip(extra_c, extra_n):
        torch.testing.assert_close(a.grad, b.grad, **tolerance(dtype))


def _near_tanh_pole(x):
    # cosh(2a) + cos(2b) = 0 at a = 0, b = pi/2 + k pi
    return (torch.cosh(2 * x.real) + torch.cos(2 * x.imag)).abs() < 0.2


def _near_tan_pole(x):
    return (torch.cos(2 * x.real) + torch.cosh(2 * x.imag)).abs() < 0.2


def _near_log_cut(x):
    # zero, and the negative real axis where the angle jumps by 2 pi
    return (x.abs() < 0.1) | ((x.real < 0) & (x.imag.abs() < 0.1))


# function -> (native twin, a way out of ill-conditioned points)
FUNCTIONS = {
    "exp": (torch.exp, None),
    "log": (torch.log, lambda x: away_from(x, _near_log_cut, 0.5 + 0.5j)),
    "sin": (torch.sin, None),
    "cos": (torch.cos, None),
    "tan": (torch.tan, lambda x: away_from(x, _near_tan_pole, 0.5j)),
    "sinh": (torch.sinh, None),
    "cosh": (torch.cosh, None),
    "tanh": (torch.tanh, lambda x: away_from(x, _near_tanh_pole, 0.5)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@property_test
@given(shape=shapes, dtype=dtypes, seed=seeds)
def test_function_matches_torch(name, shape, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    native_fn, fix = FUNCTIONS[name]
    x = values(shape, dtype, gen)
    if fix is not None:
        x = fix(x)
    compare(getattr(cplx, name), native_fn, x, gen)


@pytest.mark.parametrize("name", ["tanh", "tan"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tanh_and_tan_stay_finite_for_large_arguments(name, dtype):
    # cosh(2 * 60) overflows float32 and cosh(2 * 400) overflows float64
    big = torch.tensor([60.0, -60.0, 400.0, -400.0, 1e4], dtype=dtype)
    b = torch.tensor([0.3, -1.2, 2.0, 0.0, 1.0], dtype=dtype)
    x = torch.complex(big, b) if name == "tanh" else torch.complex(b, big)
    gen = torch.Generator().manual_seed(0)
    compare(getattr(cplx, name), getattr(torch, name), x, gen)


@property_test
@given(shapes=broadcast_pairs, dtype=dtypes, seed=seeds, threshold_kind=st.sampled_from(["float", "tensor"]))
def test_modrelu_matches_native_formula(shapes, dtype, seed, threshold_kind):
    gen = torch.Generator().manual_seed(seed)
    shape, threshold_shape = shapes.input_shapes
    x = values(shape, dtype, gen, bound=1.5)
    b = uniform(threshold_shape, dtype, gen, 0.1, 1.0)
    # keep |z| away from the kink at |z| = b and from the clamp at zero
    modulus = x.abs()
    kink = (modulus - b).abs() < 0.05
    x = torch.where(kink | (modulus < 0.05), x * 1.5 + 0.1, x)

    def native(w, b):
        return w * torch.relu(1 - b / w.abs().clamp(min=1e-5))

    if threshold_kind == "float":
        compare(lambda z: cplx.modrelu(z, threshold=0.4), lambda w: native(w, 0.4),
                away_from(x, lambda w: (w.abs() - 0.4).abs() < 0.05, 0.2), gen)
    else:
        compare(cplx.modrelu, native, x, gen, b)


def test_modrelu_is_zero_with_zero_gradient_inside_the_threshold():
    z = Cplx(torch.tensor([0.0, 0.1, -0.2], requires_grad=True), torch.tensor([0.0, 0.2, 0.1], requires_grad=True))
    out = cplx.modrelu(z, threshold=0.5)
    assert not out.real.any() and not out.imag.any()
    (out.real + out.imag).sum().backward()
    assert torch.isfinite(z.real.grad).all() and not z.real.grad.any()
    assert cplx.modrelu(Cplx(torch.tensor(3.0), torch.tensor(4.0))).item() == pytest.approx(2.7 + 3.6j)


@property_test
@given(shapes=broadcast_pairs, dtype=dtypes, seed=seeds)
def test_phaseshift_matches_exp_i_phi(shapes, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    shape, phi_shape = shapes.input_shapes
    x = values(shape, dtype, gen)
    phi = uniform(phi_shape, dtype, gen, -2 * math.pi, 2 * math.pi)
    compare(cplx.phaseshift, lambda w, p: w * torch.exp(1j * p), x, gen, phi)
    compare(lambda z: cplx.phaseshift(z, 0.75), lambda w: w * torch.exp(1j * torch.tensor(0.75, dtype=dtype)), x, gen)


APPLIED = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "flip": lambda t: t.flip(0) if t.dim() else t,
    "scale": lambda t: 3 * t,
}


@pytest.mark.parametrize("name", sorted(APPLIED))
@property_test
@given(shape=shapes, dtype=dtypes, seed=seeds)
def test_apply_is_split(name, shape, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    f = APPLIED[name]
    x = values(shape, dtype, gen)
    compare(lambda z: z.apply(f), lambda w: torch.complex(f(w.real), f(w.imag)), x, gen)


def test_apply_passes_arguments():
    z = cplx.randn(2, 3)
    out = z.apply(torch.sum, dim=1, keepdim=True)
    assert out.shape == (2, 1)
    torch.testing.assert_close(torch.complex(out.real, out.imag), torch.complex(z.real, z.imag).sum(1, keepdim=True))


@pytest.mark.parametrize("name", sorted(FUNCTIONS) + ["modrelu"])
@pytest.mark.parametrize("bad", [torch.zeros(2), 1.0, "z"], ids=["real tensor", "float", "str"])
def test_non_cplx_input_raises_type_error(name, bad):
    with pytest.raises(TypeError, match="`input` must be a Cplx"):
        getattr(cplx, name)(bad)


def test_phaseshift_rejects_non_cplx():
    with pytest.raises(TypeError, match="`input`"):
        cplx.phaseshift(torch.zeros(2), 0.5)
