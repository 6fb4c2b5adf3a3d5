"""cplx.linalg against torch's native complex tensors: values and gradients."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.cplx.linalg import STRATEGIES
from ..helpers import random_native

DTYPES = [torch.complex64, torch.complex128]
ALL_STRATEGIES = [None, *STRATEGIES]
PADDING_MODES = ["zeros", "reflect", "replicate", "circular"]
TOL = {torch.complex64: dict(rtol=1e-4, atol=1e-4), torch.complex128: dict(rtol=1e-9, atol=1e-9)}
# torch's own warning about its zero-padded copy for even kernels with "same"
pytestmark = [
    pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel"),
    pytest.mark.usefixtures("one_thread"),
]
HYPOTHESIS = settings(max_examples=12, deadline=None, derandomize=True)


def compare(ours, theirs, *operands):
    """Compare ``ours(*Cplx)`` with ``theirs(*native)``: values, then gradients.

    ``operands`` are native complex tensors (or real tensors, or None). The
    loss ``sum(Re(conj(g) * out))`` for a random ``g`` is real, and torch's
    gradient of a real loss w.r.t. a complex leaf is ``dL/dre + i dL/dim``,
    which is what the two real leaves of a Cplx receive part by part.
    """
    leaves, args = [], []
    for z in operands:
        if z is None:
            args.append(None)
            continue
        z = z.detach().clone().requires_grad_()
        leaves.append(z)
        args.append(z)
    expected = theirs(*args)

    parts = []
    for z in operands:
        if z is None or not z.is_complex():
            parts.append(None if z is None else z.detach().clone().requires_grad_())
        else:
            parts.append(Cplx(z.real.clone(), z.imag.clone()).requires_grad_())
    output = ours(*parts)

    assert isinstance(output, Cplx)
    assert output.shape == expected.shape
    tol = TOL[expected.dtype]
    torch.testing.assert_close(torch.complex(output.real, output.imag), expected, **tol)

    grad = torch.randn_like(expected)
    (expected.real * grad.real + expected.imag * grad.imag).sum().backward()
    (output.real * grad.real + output.imag * grad.imag).sum().backward()
    for leaf, part in zip(leaves, (p for p in parts if p is not None)):
        got = part.grad
        if isinstance(got, Cplx):
            got = torch.complex(got.real, got.imag)
        torch.testing.assert_close(got, leaf.grad, **tol)


# linear
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=str)
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear(dtype, strategy, batch, with_bias):
    x, w = random_native((*batch, 7), dtype=dtype), random_native((4, 7), dtype=dtype)
    b = random_native((4,), dtype=dtype) if with_bias else None
    compare(
        lambda x, w, b: cplx.linear(x, w, b, strategy=strategy), F.linear, x, w, b
    )


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_linear_real_weight_and_bias(strategy):
    x = random_native((3, 6), dtype=torch.complex128)
    w, b = torch.randn(5, 6, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    compare(
        lambda x, w, b: cplx.linear(x, w, b, strategy=strategy),
        lambda x, w, b: F.linear(x, w.to(x.dtype), b.to(x.dtype)),
        x, w, b,
    )
    # a real bias with a complex weight
    wc = random_native((5, 6), dtype=torch.complex128)
    compare(
        lambda x, w, b: cplx.linear(x, w, b, strategy=strategy),
        lambda x, w, b: F.linear(x, w, b.to(x.dtype)),
        x, wc, b,
    )


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    batch=st.integers(1, 9), n_in=st.integers(1, 9), n_out=st.integers(1, 9),
    strategy=st.sampled_from(ALL_STRATEGIES),
)
def test_linear_shapes(batch, n_in, n_out, strategy):
    dtype = torch.complex128
    compare(
        lambda x, w, b: cplx.linear(x, w, b, strategy=strategy), F.linear,
        random_native((batch, n_in), dtype=dtype),
        random_native((n_out, n_in), dtype=dtype),
        random_native((n_out,), dtype=dtype),
    )


# bilinear
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize("conjugate", [True, False])
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=str)
def test_bilinear(dtype, strategy, conjugate, batch):
    def reference(x1, x2, w, b):
        x1 = x1.conj() if conjugate else x1
        return torch.einsum("...i,kij,...j->...k", x1, w, x2) + b

    compare(
        lambda x1, x2, w, b: cplx.bilinear(x1, x2, w, b, conjugate, strategy=strategy),
        reference,
        random_native((*batch, 3), dtype=dtype), random_native((*batch, 4), dtype=dtype),
        random_native((2, 3, 4), dtype=dtype), random_native((2,), dtype=dtype),
    )


def test_bilinear_default_conjugates():
    x1, x2, w = (random_native(s, dtype=torch.complex128) for s in [(5, 3), (5, 4), (2, 3, 4)])
    compare(
        lambda x1, x2, w: cplx.bilinear(x1, x2, w),
        lambda x1, x2, w: torch.einsum("bi,kij,bj->bk", x1.conj(), w, x2),
        x1, x2, w,
    )


# einsum
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("i,i->", [(6,), (6,)]),
        ("ii->i", [(4, 4)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("...i,...i->...", [(2, 3, 4), (3, 4)]),
    ],
)
def test_einsum(dtype, equation, shapes):
    operands = [random_native(s, dtype=dtype) for s in shapes]
    compare(lambda *z: cplx.einsum(equation, *z), lambda *z: torch.einsum(equation, *z), *operands)
    # the list form
    compare(lambda *z: cplx.einsum(equation, list(z)), lambda *z: torch.einsum(equation, *z), *operands)


def test_einsum_mixed_real_operand():
    a = random_native((2, 3), dtype=torch.complex128)
    b = torch.randn(3, 4, dtype=torch.float64)
    compare(
        lambda a, b: cplx.einsum("ij,jk->ik", a, b),
        lambda a, b: torch.einsum("ij,jk->ik", a, b.to(a.dtype)),
        a, b,
    )


# convolutions
def conv_module(n, dtype, **kwargs):
    return getattr(torch.nn, f"Conv{n}d")(dtype=dtype, **kwargs)


def reference_conv(n, dtype, in_channels, out_channels, kernel_size, **kwargs):
    """torch's complex ConvNd module (its own padding-mode code) as a function."""
    module = conv_module(
        n, dtype, in_channels=in_channels, out_channels=out_channels,
        kernel_size=kernel_size, bias=True, **kwargs
    )

    def apply(x, w, b):
        return torch.func.functional_call(module, {"weight": w, "bias": b}, (x,))

    return apply


@st.composite
def conv_cases(draw, n):
    groups = draw(st.sampled_from([1, 2]))
    in_channels = groups * draw(st.integers(1, 2))
    out_channels = groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(n))
    padding = draw(st.one_of(
        st.sampled_from(["same", "valid"]),
        st.integers(0, 2),
        st.tuples(*[st.integers(0, 2)] * n),
    ))
    stride = 1 if padding == "same" else tuple(draw(st.integers(1, 2)) for _ in range(n))
    pads = (padding,) * n if isinstance(padding, int) else padding
    # large enough for the kernel and for reflect padding
    size = tuple(
        d * (k - 1) + 3 + draw(st.integers(0, 2))
        for d, k in zip(dilation, kernel)
    )
    if not isinstance(pads, str):
        size = tuple(max(s, p + 1) for s, p in zip(size, pads))
    batch = draw(st.sampled_from([(), (1,), (2,)]))
    return dict(
        groups=groups, in_channels=in_channels, out_channels=out_channels,
        kernel=kernel, dilation=dilation, padding=padding, stride=stride,
        input_shape=(*batch, in_channels, *size),
    )


def check_conv(n, case, padding_mode, strategy, dtype):
    reference = reference_conv(
        n, dtype, case["in_channels"], case["out_channels"], case["kernel"],
        stride=case["stride"], padding=case["padding"], dilation=case["dilation"],
        groups=case["groups"], padding_mode=padding_mode,
    )

    def ours(x, w, b):
        return getattr(cplx, f"conv{n}d")(
            x, w, b, case["stride"], case["padding"], case["dilation"],
            case["groups"], padding_mode, strategy=strategy,
        )

    weight_shape = (case["out_channels"], case["in_channels"] // case["groups"], *case["kernel"])
    compare(
        ours, reference, random_native(case["input_shape"], dtype=dtype),
        random_native(weight_shape, dtype=dtype),
        random_native((case["out_channels"],), dtype=dtype),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv(n, strategy, dtype):
    @settings(max_examples=8 if n == 3 else 15, deadline=None, derandomize=True)
    @given(case=conv_cases(n), padding_mode=st.sampled_from(PADDING_MODES))
    def check(case, padding_mode):
        check_conv(n, case, padding_mode, strategy, dtype)

    check()


@pytest.mark.parametrize("padding", ["same", "valid", 1, "tuple"])
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_padding_modes(n, padding_mode, padding):
    # every mode with every kind of padding, an even kernel and dilation
    kernel = (2, 3, 2)[:n]
    case = dict(
        groups=2, in_channels=4, out_channels=2, kernel=kernel,
        dilation=(1, 2, 2)[:n], stride=1,
        padding=(2, 1, 0)[:n] if padding == "tuple" else padding,
        input_shape=(2, 4, *(7, 6, 5)[:n]),
    )
    check_conv(n, case, padding_mode, None, torch.complex128)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_conv2d_real_weight_no_bias(strategy):
    x, w = random_native((2, 3, 6, 5), dtype=torch.complex128), torch.randn(4, 3, 3, 2, dtype=torch.float64)
    compare(
        lambda x, w: cplx.conv2d(x, w, padding=1, strategy=strategy),
        lambda x, w: F.conv2d(x, w.to(x.dtype), padding=1),
        x, w,
    )


@st.composite
def conv_transpose_cases(draw, n):
    groups = draw(st.sampled_from([1, 2]))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(n))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(n))
    # torch needs output_padding < max(stride, dilation)
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    return dict(
        groups=groups,
        in_channels=groups * draw(st.integers(1, 2)),
        out_per_group=draw(st.integers(1, 2)),
        kernel=tuple(draw(st.integers(1, 3)) for _ in range(n)),
        stride=stride, dilation=dilation, output_padding=output_padding,
        padding=tuple(draw(st.integers(0, 1)) for _ in range(n)),
        size=tuple(draw(st.integers(3, 4)) for _ in range(n)),
        batch=draw(st.sampled_from([(), (2,)])),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_transpose(n, strategy, dtype):
    ours_conv = getattr(cplx, f"conv_transpose{n}d")
    theirs_conv = getattr(F, f"conv_transpose{n}d")

    @settings(max_examples=6 if n == 3 else 12, deadline=None, derandomize=True)
    @given(case=conv_transpose_cases(n))
    def check(case):
        args = (case["stride"], case["padding"], case["output_padding"], case["groups"], case["dilation"])
        out_channels = case["out_per_group"] * case["groups"]
        compare(
            lambda x, w, b: ours_conv(x, w, b, *args, strategy=strategy),
            lambda x, w, b: theirs_conv(x, w, b, *args),
            random_native((*case["batch"], case["in_channels"], *case["size"]), dtype=dtype),
            random_native((case["in_channels"], case["out_per_group"], *case["kernel"]), dtype=dtype),
            random_native((out_channels,), dtype=dtype),
        )

    check()


# pooling
def reference_pool(n, return_indices, **kwargs):
    pool = getattr(F, f"max_pool{n}d")

    def apply(x):
        _, indices = pool(x.abs().detach(), return_indices=True, **kwargs)
        output = x.flatten(-n).gather(-1, indices.flatten(-n)).view_as(indices)
        return (output, indices) if return_indices else output

    return apply


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_pool(n, dtype):
    ours_pool = getattr(cplx, f"max_pool{n}d")

    @HYPOTHESIS
    @given(
        kernel=st.integers(1, 3), stride=st.sampled_from([None, 1, 2]),
        dilation=st.integers(1, 2), ceil_mode=st.booleans(),
        batch=st.sampled_from([(), (2,)]), channels=st.sampled_from([3, 9]), data=st.data(),
    )
    def check(kernel, stride, dilation, ceil_mode, batch, channels, data):
        # from 8 channels on, the modulus is pooled with its channels innermost
        padding = data.draw(st.integers(0, kernel // 2))
        size = (dilation * (kernel - 1) + 1 + data.draw(st.integers(0, 3)),) * n
        kwargs = dict(kernel_size=kernel, stride=stride, padding=padding,
                      dilation=dilation, ceil_mode=ceil_mode)
        x = random_native((*batch, channels, *size), dtype=dtype)
        compare(lambda z: ours_pool(z, **kwargs), reference_pool(n, False, **kwargs), x)

        output, indices = ours_pool(cplx.from_complex(x), return_indices=True, **kwargs)
        expected, expected_indices = reference_pool(n, True, **kwargs)(x)
        torch.testing.assert_close(indices, expected_indices)
        torch.testing.assert_close(cplx.to_complex(output), expected)

    check()


@pytest.mark.parametrize("channels", [1, 8])
def test_max_pool_ties_and_nan_as_torch(channels):
    # ties go to the first element of the window and NaN wins, as in torch's
    # max pooling, in either memory layout of the modulus
    real = torch.tensor([3.0, 0.0, 1.0, float("nan"), 0.0, 2.0]).repeat(2, channels, 1)
    imag = torch.tensor([4.0, 5.0, 0.0, 0.0, 0.0, 0.0]).repeat(2, channels, 1)
    out, indices = cplx.max_pool1d(Cplx(real, imag), 2, return_indices=True)
    _, expected = F.max_pool1d(torch.hypot(real, imag), 2, return_indices=True)
    assert torch.equal(indices, expected)
    assert indices.is_contiguous()
    torch.testing.assert_close(out.real, real.gather(-1, expected), rtol=0, atol=0, equal_nan=True)


def test_max_pool_keeps_phase():
    # the parts of the largest-modulus element, not the largest parts
    z = Cplx(torch.tensor([[[3.0, 0.0, -1.0, 2.5]]]), torch.tensor([[[0.0, -4.0, 2.0, 2.5]]]))
    out = cplx.max_pool1d(z, 2)
    torch.testing.assert_close(out.real, torch.tensor([[[0.0, 2.5]]]))
    torch.testing.assert_close(out.imag, torch.tensor([[[-4.0, 2.5]]]))


# bad input
def cplx_randn(*shape):
    return cplx.randn(*shape)


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: cplx.linear(torch.randn(2, 3), cplx_randn(4, 3)), TypeError, "`input`"),
        (lambda: cplx.linear(cplx_randn(2, 3), [[1.0]]), TypeError, "`weight`"),
        (lambda: cplx.linear(cplx_randn(2, 3), cplx_randn(4, 3), 1.0), TypeError, "`bias`"),
        (lambda: cplx.linear(cplx_randn(2, 3), cplx_randn(4, 3), strategy="4m"), ValueError, "`strategy`"),
        (lambda: cplx.linear(cplx_randn(2, 3), cplx_randn(4, 2)), ValueError, "`input`"),
        (lambda: cplx.linear(cplx_randn(2, 3), cplx_randn(4, 3, 1)), ValueError, "`weight`"),
        (lambda: cplx.linear(cplx_randn(2, 3), cplx_randn(4, 3), cplx_randn(3)), ValueError, "`bias`"),
        (lambda: cplx.bilinear(cplx_randn(2, 3), cplx_randn(2, 2), cplx_randn(1, 3, 2), cplx_randn(2)), ValueError, "`bias`"),
        (lambda: cplx.bilinear(cplx_randn(2, 2), cplx_randn(2, 2), cplx_randn(1, 3, 2)), ValueError, "`input1`"),
        (lambda: cplx.bilinear(cplx_randn(2, 3), cplx_randn(2, 3), cplx_randn(1, 3, 2)), ValueError, "`input2`"),
        (lambda: cplx.conv1d(cplx_randn(1, 2, 4), cplx_randn(3, 2, 2), cplx_randn(2)), ValueError, "`bias`"),
        (lambda: cplx.conv_transpose1d(cplx_randn(1, 2, 4), cplx_randn(2, 3, 2), cplx_randn(2), groups=2), ValueError, "`bias`"),
        (lambda: cplx.bilinear(cplx_randn(2, 3), "x", cplx_randn(1, 3, 2)), TypeError, "`input2`"),
        (lambda: cplx.bilinear(1, cplx_randn(2, 2), cplx_randn(1, 3, 2)), TypeError, "`input1`"),
        (lambda: cplx.bilinear(cplx_randn(2, 3), cplx_randn(2, 2), cplx_randn(3, 2)), ValueError, "`weight`"),
        (lambda: cplx.einsum(1, cplx_randn(2)), TypeError, "`equation`"),
        (lambda: cplx.einsum("i,i->", cplx_randn(2), [1.0, 2.0]), TypeError, "`tensors[1]`"),
        (lambda: cplx.conv2d(torch.randn(1, 1, 4, 4), cplx_randn(1, 1, 2, 2)), TypeError, "`input`"),
        (lambda: cplx.conv2d(cplx_randn(1, 1, 4, 4), None), TypeError, "`weight`"),
        (lambda: cplx.conv2d(cplx_randn(1, 1, 4, 4), cplx_randn(1, 1, 2, 2), "b"), TypeError, "`bias`"),
        (lambda: cplx.conv2d(cplx_randn(1, 1, 4, 4), cplx_randn(1, 1, 2, 2), padding_mode="mirror"), ValueError, "`padding_mode`"),
        (lambda: cplx.conv2d(cplx_randn(1, 1, 4, 4), cplx_randn(1, 1, 2, 2), padding="full"), ValueError, "`padding`"),
        (lambda: cplx.conv2d(cplx_randn(1, 1, 4, 4), cplx_randn(1, 1, 2, 2), stride=2, padding="same", padding_mode="reflect"), ValueError, "`padding`"),
        (lambda: cplx.conv1d(cplx_randn(1, 1, 4), cplx_randn(1, 1, 2), stride=(2,), padding="same"), ValueError, "`padding`"),
        (lambda: cplx.conv2d(cplx_randn(4, 4), cplx_randn(1, 1, 2, 2)), ValueError, "`input`"),
        (lambda: cplx.conv1d(cplx_randn(1, 1, 4), cplx_randn(1, 1, 2), strategy="fast"), ValueError, "`strategy`"),
        (lambda: cplx.conv_transpose2d(torch.randn(1, 1, 4, 4), cplx_randn(1, 1, 2, 2)), TypeError, "`input`"),
        (lambda: cplx.conv_transpose3d(cplx_randn(1, 4, 4), cplx_randn(1, 1, 2, 2, 2)), ValueError, "`input`"),
        (lambda: cplx.max_pool2d(torch.randn(1, 1, 4, 4), 2), TypeError, "`input`"),
    ],
)
def test_bad_input(call, error, name):
    # the error names the argument (checked before any computation)
    with pytest.raises(error, match=name.replace("[", r"\[").replace("]", r"\]")):
        call()


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_gradcheck_second_order(strategy):
    # numerical derivatives, first and second order, through the in-place sums
    def as_parts(f):
        def g(xr, xi, wr, wi, br, bi):
            out = f(Cplx(xr, xi), Cplx(wr, wi), Cplx(br, bi))
            return out.real, out.imag
        return g

    parts = [torch.randn(*s, dtype=torch.float64, requires_grad=True)
             for s in [(2, 3), (2, 3), (4, 3), (4, 3), (4,), (4,)]]
    linear = as_parts(lambda x, w, b: cplx.linear(x, w, b, strategy=strategy))
    torch.autograd.gradcheck(linear, parts)
    torch.autograd.gradgradcheck(linear, parts)

    parts = [torch.randn(*s, dtype=torch.float64, requires_grad=True)
             for s in [(1, 2, 4), (1, 2, 4), (2, 1, 2), (2, 1, 2), (2,), (2,)]]
    conv = as_parts(lambda x, w, b: cplx.conv1d(x, w, b, padding=1, groups=2, strategy=strategy))
    torch.autograd.gradcheck(conv, parts)
    torch.autograd.gradgradcheck(conv, parts)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape", [(70, 5, 3), (1, 200, 100), (2048, 64, 32)], ids=["small", "small-wide", "rows"]
)
def test_linear_default_both_regimes(shape, dtype):
    # small maps ("native"), and many rows: 3M in float32, "naive" in float64
    batch, n_in, n_out = shape
    compare(
        lambda x, w, b: cplx.linear(x, w, b), F.linear,
        random_native((batch, n_in), dtype=dtype),
        random_native((n_out, n_in), dtype=dtype),
        random_native((n_out,), dtype=dtype),
    )


@pytest.mark.inductor
@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_traces_without_graph_breaks(strategy):
    # dynamo traces the whole product (the inductor backend is too slow here)
    x, w, b = cplx.randn(40, 5), cplx.randn(3, 5), cplx.randn(3)
    image, kernel = cplx.randn(2, 4, 6, 6), cplx.randn(6, 2, 3, 3)

    def f(x, w, b, image, kernel):
        y = cplx.linear(x, w, b, strategy=strategy)
        z = cplx.conv2d(image, kernel, None, 1, "same", 1, 2, "reflect", strategy=strategy)
        return y, z

    compiled = torch.compile(f, backend="eager", fullgraph=True)
    y, z = compiled(x, w, b, image, kernel)
    native_args = [cplx.to_complex(t) for t in (x, w, b, image, kernel)]
    xc, wc, bc, imagec, kernelc = native_args
    torch.testing.assert_close(cplx.to_complex(y), F.linear(xc, wc, bc), **TOL[torch.complex64])
    padded = F.pad(imagec, (1, 1, 1, 1), mode="reflect")
    torch.testing.assert_close(
        cplx.to_complex(z), F.conv2d(padded, kernelc, groups=2), **TOL[torch.complex64]
    )


# the zero-copy hand-off between products
def test_native_output_repacks_to_the_computed_tensor():
    # the parts of a "native" product view one complex tensor: the next
    # product takes that tensor back, with no copy and no new view
    x, w1, w2 = cplx.randn(4, 5), cplx.randn(6, 5), cplx.randn(3, 6)
    hidden = cplx.linear(x, w1, strategy="native")
    packed = cplx.to_complex(hidden)
    assert packed.is_complex() and packed._base is None
    assert packed.untyped_storage().data_ptr() == hidden.real.untyped_storage().data_ptr()
    assert hidden.real._base is packed and hidden.imag._base is packed
    out = cplx.linear(hidden, w2, strategy="native")
    expected = F.linear(F.linear(*map(cplx.to_complex, (x, w1))), cplx.to_complex(w2))
    torch.testing.assert_close(cplx.to_complex(out), expected)


def test_repacked_chain_passes_gradients():
    # gradients through the re-packed tensor reach both parts of every leaf
    xs = [random_native(s, dtype=torch.complex128) for s in [(4, 5), (6, 5), (6,), (3, 6)]]
    compare(
        lambda x, w1, b1, w2: cplx.linear(
            cplx.linear(x, w1, b1, strategy="native"), w2, strategy="native"
        ),
        lambda x, w1, b1, w2: F.linear(F.linear(x, w1, b1), w2),
        *xs,
    )


def _aliases(tensor, *others):
    ptr = tensor.untyped_storage().data_ptr()
    return any(ptr == t.untyped_storage().data_ptr() for t in others)


def test_repack_never_aliases_what_it_must_not():
    c, d = (torch.randn(3, 4, dtype=torch.complex64) for _ in range(2))
    cases = {
        # the imaginary part of a conjugate view is negated lazily: its memory
        # holds the opposite values
        "conjugate": (Cplx(c.conj().real, c.conj().imag), c.conj().resolve_conj()),
        "swapped": (Cplx(c.imag, c.real), torch.complex(c.imag, c.real)),
        "two tensors": (Cplx(c.real, d.imag), torch.complex(c.real, d.imag)),
        "one part shifted": (Cplx(c.real[1:], c.imag[:-1]), torch.complex(c.real[1:], c.imag[:-1])),
    }
    for name, (z, expected) in cases.items():
        packed = cplx.to_complex(z)
        assert torch.equal(packed, expected), name
        assert not _aliases(packed, c, d), name
    # a view where one is correct: a strided slice of both parts
    z = Cplx(c.real[:, ::2], c.imag[:, ::2])
    packed = cplx.to_complex(z)
    assert torch.equal(packed, c[:, ::2]) and _aliases(packed, c)
