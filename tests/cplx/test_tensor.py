"""The Cplx tensor type against torch's native complex tensors.

Every operation is checked for values and for the gradient of a real loss,
computed once through Cplx and once through complex64/complex128 tensors.
"""

import copy
import math
import operator
import pickle

import numpy
import pytest
import torch
import torch.utils._pytree as pytree
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx

fast = settings(max_examples=20, deadline=None)

COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
dtypes = st.sampled_from([torch.float32, torch.float64])
seeds = st.integers(0, 2**31 - 1)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
nonempty = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)
broadcast_pairs = hnp.mutually_broadcastable_shapes(
    num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4
)


# helpers: random native values, paired leaves, and the two-way check
def rand(shape, dtype, gen, *, away_from_zero=False):
    """Native complex values; ``away_from_zero`` keeps moduli in [0.5, 2]."""
    kw = dict(dtype=torch.empty(0, dtype=dtype).real.dtype, generator=gen)
    if away_from_zero:
        r = 0.5 + 1.5 * torch.rand(shape, **kw)
        phi = (2 * torch.rand(shape, **kw) - 1) * math.pi
        return torch.polar(r, phi)
    return torch.complex(torch.randn(shape, **kw), torch.randn(shape, **kw))


def leaves(x):
    """A native leaf and a Cplx of leaves (or a real leaf twice) with x's values."""
    if isinstance(x, torch.Tensor) and x.is_complex():
        native = x.detach().clone().requires_grad_()
        parts = (x.real.detach().clone().requires_grad_(), x.imag.detach().clone())
        return native, Cplx(parts[0], parts[1].requires_grad_())
    if isinstance(x, torch.Tensor):
        return x.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    return x, x


def grad_of(leaf):
    """The gradient in torch's convention (dL/dre + 1j dL/dim), zeros if none."""
    if isinstance(leaf, Cplx):
        re = torch.zeros_like(leaf.real) if leaf.real.grad is None else leaf.real.grad
        im = torch.zeros_like(leaf.imag) if leaf.imag.grad is None else leaf.imag.grad
        return torch.complex(re, im)
    if isinstance(leaf, torch.Tensor):
        return torch.zeros_like(leaf) if leaf.grad is None else leaf.grad
    return None


def tolerance(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-11)


def check(fn_cplx, fn_native, *inputs, dtype, gen, to_cplx=None):
    """Values and gradients of ``fn_cplx`` on Cplx agree with ``fn_native``.

    ``inputs`` are native complex tensors (becoming Cplx on one side), real
    tensors or Python numbers; a real-valued output is compared as is.
    """
    pairs = [leaves(x) for x in inputs]
    natives, cplxs = [p[0] for p in pairs], [p[1] for p in pairs]
    out_n = fn_native(*natives)
    out_c = fn_cplx(*cplxs)
    tol = tolerance(dtype)
    if isinstance(out_c, Cplx):
        assert out_c.real.dtype == out_c.imag.dtype == out_n.real.dtype
        torch.testing.assert_close(cplx.to_complex(out_c), out_n, **tol)
    else:
        assert not out_n.is_complex()
        torch.testing.assert_close(out_c, out_n, **tol)

    g = rand(out_n.shape, out_n.real.dtype, gen)
    if not any(isinstance(x, torch.Tensor) and x.requires_grad for x in natives):
        return
    loss_n = (out_n.real * g.real + (out_n.imag * g.imag if out_n.is_complex() else 0)).sum()
    if isinstance(out_c, Cplx):
        loss_c = (out_c.real * g.real + out_c.imag * g.imag).sum()
    else:
        loss_c = (out_c * g.real).sum()
    loss_n.backward()
    loss_c.backward()
    for native, other in zip(natives, cplxs):
        if isinstance(native, torch.Tensor):
            torch.testing.assert_close(grad_of(other), grad_of(native), **tol)


# construction
def test_construction_from_parts_and_numbers():
    re, im = torch.randn(2, 3), torch.randn(2, 3)
    z = Cplx(re, im)
    assert z.real is re and z.imag is im

    z = Cplx(re)
    assert z.imag.shape == re.shape and not z.imag.any()

    for value, expected in [(2 - 3j, 2 - 3j), (1.5, 1.5 + 0j), (4.0, 4 + 0j)]:
        z = Cplx(value)
        assert z.shape == () and z.item() == expected
        assert z.dtype == torch.get_default_dtype()

    w = torch.randn(4, dtype=torch.complex128)
    z = Cplx(w)
    assert torch.equal(cplx.to_complex(z), w)


@pytest.mark.parametrize("factory, value", [("zeros", 0j), ("ones", 1 + 0j), ("empty", None)])
@pytest.mark.parametrize("dtype", [None, torch.float64, torch.complex64])
def test_factories(factory, value, dtype):
    z = getattr(Cplx, factory)(2, 3, dtype=dtype, requires_grad=True)
    assert z.shape == (2, 3)
    expected = {None: torch.get_default_dtype(), torch.complex64: torch.float32}.get(dtype, dtype)
    assert z.real.dtype == z.imag.dtype == expected
    assert z.real.requires_grad and z.imag.requires_grad
    assert z.real.is_leaf and z.imag.is_leaf
    if value is not None:
        native = torch.full((2, 3), value, dtype=COMPLEX[expected])
        assert torch.equal(cplx.to_complex(z.detach()), native)
    assert getattr(Cplx, factory)((4,)).shape == (4,)


def test_randn_statistics_and_options():
    gen = torch.Generator().manual_seed(0)
    z = cplx.randn(50_000, generator=gen, dtype=torch.complex128)
    assert z.dtype == torch.float64
    # E|z|^2 = 1 and independent parts of variance 1/2, as torch's complex randn.
    assert abs(z.real.var().item() - 0.5) < 0.015
    assert abs(z.imag.var().item() - 0.5) < 0.015
    assert abs((z.real * z.imag).mean().item()) < 0.015
    reference = torch.randn(50_000, dtype=torch.complex128, generator=gen)
    assert abs(reference.abs().square().mean().item() - (z.real**2 + z.imag**2).mean().item()) < 0.03

    again = cplx.randn(3, 4, generator=torch.Generator().manual_seed(1))
    same = cplx.randn((3, 4), generator=torch.Generator().manual_seed(1))
    assert torch.equal(again.real, same.real) and torch.equal(again.imag, same.imag)

    w = cplx.randn(2, 5, requires_grad=True)
    assert w.real.is_leaf and w.real.requires_grad and w.imag.requires_grad

    like = cplx.randn_like(w)
    assert like.shape == w.shape and like.dtype == w.dtype and not like.requires_grad
    like = cplx.randn_like(torch.zeros(3, dtype=torch.complex128))
    assert like.shape == (3,) and like.dtype == torch.float64
    like = cplx.randn_like(w, dtype=torch.float64, device="meta")
    assert like.dtype == torch.float64 and like.device.type == "meta"


# arithmetic
BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
}


def _operand(kind, shape, dtype, gen, divisor):
    if kind == "cplx" or kind == "native":
        return rand(shape, COMPLEX[dtype], gen, away_from_zero=divisor)
    if kind == "real":
        x = rand(shape, COMPLEX[dtype], gen, away_from_zero=divisor)
        return x.abs() * torch.sign(x.real) if divisor else x.real
    if kind == "complex number":
        return complex(0.7, -1.3)
    return -1.75  # "float"


BINARY_KINDS = st.sampled_from(
    [
        ("cplx", "cplx"),
        ("cplx", "real"),
        ("real", "cplx"),
        ("cplx", "native"),
        ("native", "cplx"),
        ("cplx", "complex number"),
        ("complex number", "cplx"),
        ("cplx", "float"),
        ("float", "cplx"),
    ]
)


def _promoted(fn):
    """``fn`` on native tensors, a real tensor operand cast to complex first.

    torch's matmul does not mix real and complex dtypes; the cast is
    differentiable, so a real leaf receives the real part of the gradient.
    """

    def native(a, b):
        dtype = next(x.dtype for x in (a, b) if x.is_complex())
        return fn(a.to(dtype), b.to(dtype))

    return native


@pytest.mark.parametrize("op", sorted(BINARY))
@settings(max_examples=50, deadline=None)
@given(kinds=BINARY_KINDS, shapes=broadcast_pairs, dtype=dtypes, seed=seeds)
def test_binary_arithmetic(op, kinds, shapes, dtype, seed):
    left, right = kinds
    gen = torch.Generator().manual_seed(seed)
    fn = BINARY[op]
    shape_l, shape_r = shapes.input_shapes
    divisor = op == "truediv"
    x = _operand(left, shape_l, dtype, gen, divisor and left != "cplx")
    y = _operand(right, shape_r, dtype, gen, divisor)

    def cplx_side(a, b):
        # A "native" operand stays a native complex tensor on the Cplx side.
        if left == "native":
            a = cplx.to_complex(a)
        if right == "native":
            b = cplx.to_complex(b)
        return fn(a, b)

    check(cplx_side, fn, x, y, dtype=dtype, gen=gen)


def test_real_operand_promotes_both_parts():
    z = cplx.randn(3)
    for out in [z + torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64) - z]:
        assert out.real.dtype == out.imag.dtype == torch.float64
    out = z + torch.ones(2, 1)
    assert out.shape == (2, 3)
    # the broadcast imaginary part is a fresh tensor, not an alias of z's
    out.imag.zero_()
    assert z.imag.abs().sum() > 0


matmul_shapes = st.sampled_from(
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)),
        ((1, 2, 3), (4, 3, 2)),
        ((0, 3), (3, 2)),
        ((2, 0), (0, 2)),
    ]
)


@settings(max_examples=50, deadline=None)
@given(kinds=BINARY_KINDS.filter(lambda k: "number" not in k[0] + k[1] and "float" not in k),
       shapes=matmul_shapes, dtype=dtypes, seed=seeds)
def test_matmul(kinds, shapes, dtype, seed):
    left, right = kinds
    gen = torch.Generator().manual_seed(seed)
    x = _operand(left, shapes[0], dtype, gen, False)
    y = _operand(right, shapes[1], dtype, gen, False)

    def cplx_side(a, b):
        a = cplx.to_complex(a) if left == "native" else a
        b = cplx.to_complex(b) if right == "native" else b
        return a @ b

    check(cplx_side, _promoted(operator.matmul), x, y, dtype=dtype, gen=gen)


UNARY = {
    "neg": (operator.neg, operator.neg),
    "pos": (operator.pos, operator.pos),
    "abs": (abs, torch.abs),
    "conj": (lambda z: z.conj, torch.conj_physical),
    "conjugate": (lambda z: z.conjugate(), torch.conj_physical),
    "angle": (lambda z: z.angle, torch.angle),
    "clone": (lambda z: z.clone(), torch.clone),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@fast
@given(shape=shapes, dtype=dtypes, seed=seeds)
def test_unary(name, shape, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    fn_cplx, fn_native = UNARY[name]
    # away from zero: angle is not differentiable there
    x = rand(shape, COMPLEX[dtype], gen, away_from_zero=True)
    check(fn_cplx, fn_native, x, dtype=dtype, gen=gen)


def test_abs_gradient_at_zero_is_zero_like_torch():
    z = Cplx(torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True))
    abs(z).sum().backward()
    native = torch.zeros(2, dtype=torch.complex64, requires_grad=True)
    native.abs().sum().backward()
    assert torch.equal(grad_of(z), native.grad)


def test_conj_and_angle_are_read_only_properties():
    z = cplx.randn(3)
    assert isinstance(z.conj, Cplx)
    with pytest.raises(AttributeError):
        z.conj = z
    with pytest.raises(AttributeError):
        z.angle = z.real


@pytest.mark.parametrize("method", ["t", "h"])
@fast
@given(shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4), dtype=dtypes, seed=seeds)
def test_transposes(method, shape, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    x = rand(shape, COMPLEX[dtype], gen)
    native = torch.t if method == "t" else lambda w: w.conj_physical().t()
    check(lambda z: getattr(z, method)(), native, x, dtype=dtype, gen=gen)


# shape
def test_shape_api():
    z = cplx.randn(2, 3, 4)
    assert z.shape == (2, 3, 4) and z.size() == (2, 3, 4) and z.size(1) == 3
    assert len(z) == 2 and z.dim() == z.ndim == 3 and z.numel() == 24
    native = cplx.to_complex(z)
    items = list(z)
    assert len(items) == 2 and all(isinstance(w, Cplx) for w in items)
    for w, v in zip(items, native):
        assert torch.equal(cplx.to_complex(w), v)
    for w, v in zip(reversed(z), native.flip(0)):
        assert torch.equal(cplx.to_complex(w), v)
    with pytest.raises(TypeError):
        len(Cplx(1j))


SHAPE_OPS = {
    "index int": (lambda z: z[1], lambda w: w[1]),
    "index slice": (lambda z: z[:, ::2], lambda w: w[:, ::2]),
    "index mask": (lambda z: z[z.real > 0], lambda w: w[w.real > 0]),
    "index list": (lambda z: z[[0, 1, 0]], lambda w: w[[0, 1, 0]]),
    "ellipsis none": (lambda z: z[..., None, 0], lambda w: w[..., None, 0]),
    "view": (lambda z: z.view(-1), lambda w: w.view(-1)),
    "view_as": (lambda z: z.view_as(torch.empty(3, 8)), lambda w: w.view(3, 8)),
    "reshape": (lambda z: z.reshape(4, -1), lambda w: w.reshape(4, -1)),
    "flatten": (lambda z: z.flatten(1), lambda w: w.flatten(1)),
    "permute": (lambda z: z.permute(2, 0, 1), lambda w: w.permute(2, 0, 1)),
    "transpose": (lambda z: z.transpose(0, 2), lambda w: w.transpose(0, 2)),
    "method squeeze": (lambda z: z[:, :1].squeeze(), lambda w: w[:, :1].squeeze()),
    "method squeeze dim": (lambda z: z[:, :1].squeeze(1), lambda w: w[:, :1].squeeze(1)),
    "method unsqueeze": (lambda z: z.unsqueeze(-1), lambda w: w.unsqueeze(-1)),
    "squeeze": (lambda z: cplx.squeeze(z[:1]), lambda w: torch.squeeze(w[:1])),
    "squeeze dim": (lambda z: cplx.squeeze(z[:1], 0), lambda w: torch.squeeze(w[:1], 0)),
    "unsqueeze": (lambda z: cplx.unsqueeze(z, 1), lambda w: torch.unsqueeze(w, 1)),
    "narrow": (lambda z: cplx.narrow(z, 2, 1, 2), lambda w: torch.narrow(w, 2, 1, 2)),
    "take": (
        lambda z: cplx.take(z, torch.tensor([[0, 5], [23, 5]])),
        lambda w: torch.take(w, torch.tensor([[0, 5], [23, 5]])),
    ),
    "cat": (
        lambda z: cplx.cat([z, z[:1] * 2], dim=0),
        lambda w: torch.cat([w, w[:1] * 2], dim=0),
    ),
    "stack": (lambda z: cplx.stack([z, -z], dim=1), lambda w: torch.stack([w, -w], dim=1)),
    "split": (
        lambda z: cplx.cat(cplx.split(z, [1, 2], dim=1)[::-1], 1),
        lambda w: torch.cat(torch.split(w, [1, 2], dim=1)[::-1], 1),
    ),
    "chunk": (
        lambda z: cplx.chunk(z, 2, dim=2)[1],
        lambda w: torch.chunk(w, 2, dim=2)[1],
    ),
    "unbind": (
        lambda z: cplx.unbind(z, 1)[2] * cplx.unbind(z, 1)[0],
        lambda w: torch.unbind(w, 1)[2] * torch.unbind(w, 1)[0],
    ),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_shape_ops(name, dtype):
    gen = torch.Generator().manual_seed(hash(name) % 1000)
    fn_cplx, fn_native = SHAPE_OPS[name]
    x = rand((2, 3, 4), COMPLEX[dtype], gen)
    check(fn_cplx, fn_native, x, dtype=dtype, gen=gen)


def test_split_chunk_unbind_return_tuples_of_cplx():
    z = cplx.randn(4, 3)
    for pieces, count in [
        (cplx.split(z, 3), 2),
        (cplx.chunk(z, 2, dim=1), 2),
        (cplx.unbind(z, 1), 3),
    ]:
        assert isinstance(pieces, tuple) and len(pieces) == count
        assert all(isinstance(p, Cplx) for p in pieces)


SETITEM_VALUES = ["cplx", "native", "real", "complex number", "float"]


@pytest.mark.parametrize("kind", SETITEM_VALUES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_setitem(kind, dtype):
    gen = torch.Generator().manual_seed(7)
    x = rand((3, 4), COMPLEX[dtype], gen)
    v = _operand(kind, (4,), dtype, gen, False)

    def assign(z, value):
        z = z.clone()
        z[1:, ...] = cplx.to_complex(value) if kind == "native" else value
        z[0, 0] = value[0] if kind in ("cplx", "native", "real") else value
        return z

    def assign_native(w, value):
        w = w.clone()
        w[1:, ...] = value
        w[0, 0] = value[0] if kind in ("cplx", "native", "real") else value
        return w

    check(assign, assign_native, x, v, dtype=dtype, gen=gen)


# moves and copies
def test_moves_cast_both_parts():
    z = cplx.randn(2, 3)
    for out in [
        z.to(torch.float64),
        z.to(dtype=torch.float64),
        z.to(torch.complex128),
        z.to("cpu", torch.float64),
        z.to(cplx.randn(1, dtype=torch.float64)),
        z.to(torch.ones(1, dtype=torch.float64)),
    ]:
        assert out.real.dtype == out.imag.dtype == torch.float64
        torch.testing.assert_close(out.real, z.real.double())
        torch.testing.assert_close(out.imag, z.imag.double())
    for out in [z.to(device="meta"), z.to("meta"), z.to(torch.device("meta"))]:
        assert out.real.device.type == out.imag.device.type == out.device.type == "meta"
        assert out.shape == z.shape
    assert z.cpu().device.type == "cpu"
    assert z.dtype == torch.float32 and z.device == torch.device("cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_round_trip():
    z = cplx.randn(3)
    w = z.cuda()
    assert w.real.is_cuda and w.imag.is_cuda and w.device.type == "cuda"
    back = w.cpu()
    assert torch.equal(back.real, z.real) and torch.equal(back.imag, z.imag)


def test_detach_requires_grad_grad_item():
    z = cplx.randn(3).requires_grad_()
    assert z.requires_grad and z.real.requires_grad and z.imag.requires_grad
    assert z.grad is None
    d = z.detach()
    assert not d.requires_grad
    assert d.real.data_ptr() == z.real.data_ptr() and d.imag.data_ptr() == z.imag.data_ptr()

    (abs(z * (2 - 1j)) ** 2).sum().backward()
    # d|z w|^2 / d(re, im) = 2 |w|^2 (re, im) with |w|^2 = 5
    torch.testing.assert_close(z.grad.real, 10 * z.real.detach())
    torch.testing.assert_close(z.grad.imag, 10 * z.imag.detach())
    assert isinstance(z.grad, Cplx)

    half = Cplx(torch.ones(2, requires_grad=True), torch.ones(2))
    (half.real * 3).sum().backward()
    assert torch.equal(half.grad.imag, torch.zeros(2))

    z.requires_grad_(False)
    assert not z.real.requires_grad and not z.imag.requires_grad
    assert Cplx(torch.tensor([1.5]), torch.tensor([-2.0])).item() == 1.5 - 2j
    assert complex(Cplx(torch.tensor(0.5), torch.tensor(0.25))) == 0.5 + 0.25j


def test_clone_is_independent_and_differentiable():
    z = cplx.randn(3, requires_grad=True)
    c = z.clone()
    assert c.real.data_ptr() != z.real.data_ptr()
    (c.real + 2 * c.imag).sum().backward()
    assert torch.equal(z.real.grad, torch.ones(3)) and torch.equal(z.imag.grad, 2 * torch.ones(3))


SPECIAL = [0.0, -0.0, 1.5, -math.inf, math.inf, math.nan, 1e-40, -3.0]


def _special(dtype):
    re = torch.tensor(SPECIAL, dtype=dtype)
    return Cplx(re, re.flip(0))


def _bit_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    int_type = {torch.float32: torch.int32, torch.float64: torch.int64}[a.dtype]
    assert torch.equal(a.contiguous().view(int_type), b.contiguous().view(int_type))


def _cplx_bit_equal(z, w):
    _bit_equal(z.real, w.real)
    _bit_equal(z.imag, w.imag)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_numpy_round_trip_is_exact(dtype):
    z = _special(dtype).reshape(2, 4)
    array = z.numpy()
    assert array.dtype == {torch.float32: numpy.complex64, torch.float64: numpy.complex128}[dtype]
    numpy.testing.assert_array_equal(numpy.signbit(array.real), numpy.signbit(z.real.numpy()))
    numpy.testing.assert_array_equal(array.imag, z.imag.numpy())
    _cplx_bit_equal(Cplx.from_numpy(array), z)
    real = Cplx.from_numpy(numpy.arange(3.0))
    assert torch.equal(real.real, torch.arange(3.0, dtype=torch.float64))
    assert not real.imag.any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_copy_deepcopy_pickle(dtype):
    z = _special(dtype)
    shallow = copy.copy(z)
    assert shallow.real is z.real and shallow.imag is z.imag
    for other in [copy.deepcopy(z), pickle.loads(pickle.dumps(z))]:
        assert type(other) is Cplx
        assert other.real.data_ptr() != z.real.data_ptr()
        _cplx_bit_equal(other, z)
    leaf = cplx.randn(2, requires_grad=True)
    assert copy.deepcopy(leaf).requires_grad


def test_pickles_under_the_published_name():
    assert Cplx.__module__ == "cplxmodule.cplx" and Cplx.__qualname__ == "Cplx"
    data = pickle.dumps(cplx.randn(2), protocol=pickle.HIGHEST_PROTOCOL)
    assert b"cplxmodule.cplx" in data and b"cplxmodule.cplx.tensor" not in data


def test_deepcopy_keeps_shared_storage_shared():
    native = torch.randn(3, dtype=torch.complex64)
    twin = copy.deepcopy(cplx.from_complex(native))
    twin.real.add_(1.0)
    # still one buffer: the view conversion finds it
    w = cplx.to_complex(twin)
    assert w.data_ptr() == twin.real.data_ptr()
    torch.testing.assert_close(w, native + 1)


# conversions
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("copy_", [True, False])
def test_real_layouts_round_trip_exactly(dtype, dim, copy_):
    z = _special(dtype).reshape(2, 4)
    z = cplx.stack([z, -z, z * 1j], dim=-1)  # shape (2, 4, 3)
    inter = cplx.to_interleaved_real(z, dim=dim)
    concat = cplx.to_concatenated_real(z, dim=dim)
    shape = list(z.shape)
    shape[dim] *= 2
    assert inter.shape == concat.shape == tuple(shape)
    _cplx_bit_equal(cplx.from_interleaved_real(inter, copy=copy_, dim=dim), z)
    _cplx_bit_equal(cplx.from_concatenated_real(concat, copy=copy_, dim=dim), z)
    _cplx_bit_equal(cplx.from_real(cplx.to_real(z, dim=dim), copy=copy_, dim=dim), z)

    pairs = cplx.to_interleaved_real(z, flatten=False, dim=dim)
    assert pairs.shape == (*z.shape[: dim % 3 + 1], 2, *z.shape[dim % 3 + 1 :])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_layouts_match_torch(dtype):
    native = torch.complex(torch.randn(3, 4, dtype=dtype), torch.randn(3, 4, dtype=dtype))
    z = cplx.from_complex(native)
    _bit_equal(cplx.to_view_as_real(z), torch.view_as_real(native))
    _bit_equal(cplx.to_interleaved_real(z), torch.view_as_real(native).flatten(-2))
    _bit_equal(cplx.to_concatenated_real(z), torch.cat([native.real, native.imag], -1))
    _cplx_bit_equal(cplx.from_view_as_real(torch.view_as_real(native)), z)
    _bit_equal(cplx.to_view_as_real(Cplx(native[0, 0])), torch.view_as_real(native[0, 0]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_native_round_trip_shares_storage(dtype):
    native = torch.complex(torch.randn(3, 4, dtype=dtype), torch.randn(3, 4, dtype=dtype))
    special = torch.complex(*(_special(dtype).real, _special(dtype).imag))
    for w in [native, native[:, 1::2], native.t(), special]:
        z = cplx.from_complex(w)
        back = cplx.to_complex(z)
        assert back.data_ptr() == w.data_ptr() and back.stride() == w.stride()
        _bit_equal(torch.view_as_real(back), torch.view_as_real(w))
        z.real[...] = 5.0  # the parts are views: writes reach the native tensor
        assert (w.real == 5.0).all()

    # the detached parts still alias one buffer
    back = cplx.to_complex(cplx.from_complex(native).detach())
    assert back.data_ptr() == native.data_ptr()

    # interleaved real views too
    flat = torch.randn(3, 8, dtype=dtype)
    view = cplx.to_complex(cplx.from_interleaved_real(flat, copy=False))
    assert view.data_ptr() == flat.data_ptr()

    # separate parts are copied
    z = cplx.randn(3, dtype=dtype)
    back = cplx.to_complex(z)
    assert back.data_ptr() not in (z.real.data_ptr(), z.imag.data_ptr())
    assert torch.equal(back.real, z.real) and torch.equal(back.imag, z.imag)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_native_round_trip_passes_gradients_to_both_parts(dtype):
    native = torch.randn(5, dtype=COMPLEX[dtype], requires_grad=True)
    out = cplx.to_complex(cplx.from_complex(native))
    assert out.data_ptr() == native.data_ptr()
    (out.abs() ** 2).sum().backward()
    torch.testing.assert_close(native.grad, 2 * native.detach())

    flat = torch.randn(4, 6, dtype=dtype, requires_grad=True)
    out = cplx.to_complex(cplx.from_interleaved_real(flat, copy=False))
    (out.real + 3 * out.imag).sum().backward()
    torch.testing.assert_close(flat.grad, torch.tensor([1.0, 3.0], dtype=dtype).repeat(4, 3))


def test_conversions_on_meta():
    z = cplx.randn(2, 3).to(device="meta")
    assert cplx.to_complex(z).device.type == "meta"
    assert cplx.to_complex(z).dtype == torch.complex64
    assert cplx.to_interleaved_real(z).shape == (2, 6)


# bad input
@pytest.mark.parametrize(
    "real, imag, what",
    [
        (torch.zeros(2, 3), torch.zeros(3, 2), "shape"),
        (torch.zeros(2), torch.zeros(2, dtype=torch.float64), "dtype"),
        (torch.zeros(2), torch.zeros(2, device="meta"), "device"),
    ],
)
def test_mismatched_parts_raise_value_error(real, imag, what):
    with pytest.raises(ValueError, match=f"(?s)`real`.*`imag`.*{what}"):
        Cplx(real, imag)


@pytest.mark.parametrize(
    "real, imag, name",
    [
        (torch.zeros(2), 1.0, "imag"),
        ("a", None, "real"),
        (torch.zeros(2), [0.0, 1.0], "imag"),
        (1j, torch.zeros(()), "imag"),
        (True, None, "real"),
    ],
)
def test_bad_parts_raise_type_error(real, imag, name):
    with pytest.raises(TypeError, match=f"`{name}`"):
        Cplx(real, imag)


BAD_OPERANDS = ["a string", [1.0, 2.0], object(), numpy.ones(2), None, {"a": 1}]
OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.matmul]


@pytest.mark.parametrize("bad", BAD_OPERANDS, ids=lambda b: type(b).__name__)
@pytest.mark.parametrize("op", OPERATORS, ids=lambda f: f.__name__)
def test_unsupported_operands_raise_type_error(op, bad):
    z = cplx.randn(2)
    with pytest.raises(TypeError):
        op(z, bad)
    with pytest.raises(TypeError):
        op(bad, z)


def test_matmul_with_a_number_raises_type_error():
    z = cplx.randn(2)
    for number in [2.0, 1j]:
        with pytest.raises(TypeError):
            z @ number
        with pytest.raises(TypeError):
            number @ z


@pytest.mark.parametrize("bad", ["x", [1.0], object(), None])
def test_setitem_with_bad_value_raises_and_changes_nothing(bad):
    z = cplx.randn(3)
    before = z.clone()
    with pytest.raises(TypeError, match="assign"):
        z[0] = bad
    assert torch.equal(z.real, before.real) and torch.equal(z.imag, before.imag)


def test_conversion_errors():
    with pytest.raises(TypeError, match="input"):
        cplx.from_complex(torch.zeros(2))
    native = torch.tensor([1 + 2j, 3 - 4j])
    assert cplx.to_complex(native).equal(native)  # a complex operand of any kind
    with pytest.raises(TypeError, match="input"):
        cplx.from_interleaved_real(torch.zeros(2, dtype=torch.complex64))
    with pytest.raises(ValueError, match="even"):
        cplx.from_interleaved_real(torch.zeros(3))
    with pytest.raises(ValueError, match="even"):
        cplx.from_concatenated_real(torch.zeros(4, 3), dim=1)
    with pytest.raises(ValueError, match="size 2"):
        cplx.from_view_as_real(torch.zeros(4, 3))
    with pytest.raises(TypeError, match="input"):
        cplx.from_view_as_real([0.0, 1.0])
    with pytest.raises(TypeError, match="input"):
        cplx.to_interleaved_real(torch.zeros(2))


# pytree and compile
def test_pytree_round_trip():
    z, w = cplx.randn(2), cplx.randn(3, dtype=torch.float64)
    tree = {"a": z, "b": [w, torch.ones(1)]}
    leaves_, spec = pytree.tree_flatten(tree)
    assert len(leaves_) == 5
    assert leaves_[0] is z.real and leaves_[1] is z.imag
    back = pytree.tree_unflatten(leaves_, spec)
    assert isinstance(back["a"], Cplx) and back["a"].real is z.real
    assert back["b"][0].imag is w.imag
    doubled = pytree.tree_map(lambda t: t * 2, tree)
    assert torch.equal(doubled["a"].imag, z.imag * 2)
    keyed, _ = pytree.tree_flatten_with_path(tree)
    assert [pytree.keystr(k) for k, _ in keyed][:2] == ["['a'].real", "['a'].imag"]


@pytest.mark.inductor
def test_compile_fullgraph_matches_eager():
    def f(z, w, x):
        # ``@`` is left out: dynamo does not trace a user-defined __matmul__.
        out = (z * w.conj + x) / (abs(w) + 1.0) - x * z
        out = cplx.from_complex(cplx.to_complex(out).tanh())
        return cplx.cat([out, (2 - x) * z]).t().conj, out.angle

    torch._dynamo.reset()
    # aot_eager: dynamo must trace Cplx without a graph break (fullgraph) and
    # AOT autograd must differentiate it; inductor's codegen is not about Cplx.
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    gen = torch.Generator().manual_seed(3)
    inputs = [rand((3, 4), torch.complex64, gen) for _ in range(2)] + [torch.randn(4, generator=gen)]
    results, grads = [], []
    for fn in (f, compiled):
        args = [leaves(x)[1] for x in inputs]
        prod, angle = fn(*args)
        assert isinstance(prod, Cplx)
        (prod.real.sum() + 2 * prod.imag.sum() + angle.sum()).backward()
        results.append((prod.real, prod.imag, angle))
        grads.append([grad_of(a) for a in args])
    for got, expected in zip(results[1] + tuple(grads[1]), results[0] + tuple(grads[0])):
        torch.testing.assert_close(got, expected)
