"""The modulus computed on the two real parts, against torch's complex ``abs``.

It is what every modulus-based layer (modReLU, cardioid, ``CplxModulus``)
runs on, and what ONNX and inductor see, so it must use real ops only and
still agree with torch's native complex ``abs`` in value and gradient. Both
of its forms are checked: ``hypot`` with its own gradient (eager and
compiled) and the scaled form of real ops that exports take.
"""

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import given, settings

from cplxmodule import Cplx
from cplxmodule.cplx.tensor import _scaled_modulus

FORMS = {"eager": lambda re, im: abs(Cplx(re, im)), "export": _scaled_modulus}

# the whole finite float32 range, where naive squares overflow or underflow
parts = st.floats(allow_nan=False, allow_infinity=False, width=32) | st.sampled_from(
    [0.0, -0.0, 2e-38, -3e-39, 1e-45, 3e38]
)


def _leaf(values, dtype):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


def _both(re, im, dtype, complex_dtype, form="eager"):
    """abs and its gradient by one form of ours and by torch's native complex tensor."""
    zr, zi = _leaf(re, dtype), _leaf(im, dtype)
    ours = FORMS[form](zr, zi)
    ours.sum().backward()
    native = torch.complex(
        torch.tensor(re, dtype=dtype), torch.tensor(im, dtype=dtype)
    ).to(complex_dtype).requires_grad_()
    theirs = native.abs()
    theirs.sum().backward()
    return ours, torch.complex(zr.grad, zi.grad), theirs, native.grad


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=60, deadline=None)
@given(re=st.lists(parts, min_size=1, max_size=8), data=st.data())
def test_modulus_matches_native_value_and_gradient(form, re, data):
    im = data.draw(st.lists(parts, min_size=len(re), max_size=len(re)))
    ours, grad, theirs, native_grad = _both(re, im, torch.float32, torch.complex64, form)
    torch.testing.assert_close(ours, theirs, rtol=2e-7, atol=0)
    # torch's own gradient is NaN where the modulus is subnormal on some
    # CPUs, and meaningless where it overflows
    defined = native_grad.isfinite() & theirs.isfinite()
    if form == "export":
        # the inference graph of an exporter: its gradient underflows with
        # the halving of the smallest subnormals by ``sqrt``'s derivative
        defined &= theirs >= torch.finfo(theirs.dtype).tiny
    torch.testing.assert_close(grad[defined], native_grad[defined], rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("form", FORMS)
def test_modulus_subgradient_is_zero_at_zero_in_every_part(form):
    ours, grad, theirs, native_grad = _both(
        [0.0, -0.0, 0.0, 3.0], [0.0, 0.0, -0.0, 4.0], torch.float64, torch.complex128, form
    )
    assert torch.equal(ours, theirs)
    # exact zeros at zero; elsewhere torch's kernel may round differently
    assert torch.equal(grad[:3], torch.zeros(3, dtype=grad.dtype))
    torch.testing.assert_close(grad, native_grad, rtol=1e-15, atol=0)


@pytest.mark.parametrize("form", FORMS)
def test_modulus_of_infinite_and_nan_parts_matches_native(form):
    inf, nan = float("inf"), float("nan")
    re, im = [inf, -inf, 1.0, nan, nan], [1.0, nan, -inf, 0.0, 1.0]
    native = torch.complex(torch.tensor(re), torch.tensor(im)).abs()
    ours = FORMS[form](torch.tensor(re), torch.tensor(im))
    torch.testing.assert_close(ours, native, equal_nan=True)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_modulus_in_half_precision_does_not_overflow(dtype, form):
    # 300 ** 2 overflows float16: a naive sqrt(re^2 + im^2) returns inf
    re, im = torch.tensor([300.0, 1e-4], dtype=dtype), torch.tensor([400.0, 0.0], dtype=dtype)
    expected = torch.complex(re.double(), im.double()).abs()
    torch.testing.assert_close(FORMS[form](re, im).double(), expected, rtol=1e-2, atol=0)


def test_modulus_second_derivative_matches_native():
    z = torch.randn(5, dtype=torch.complex128)
    re, im = z.real.clone().requires_grad_(), z.imag.clone().requires_grad_()
    torch.autograd.gradcheck(lambda a, b: abs(Cplx(a, b)), (re, im))
    torch.autograd.gradgradcheck(lambda a, b: abs(Cplx(a, b)), (re, im))


class _Modulus(torch.nn.Module):
    def forward(self, re, im):
        return abs(Cplx(re, im))


def test_export_takes_the_scaled_form():
    # hypot has no ONNX export: an export must never meet it
    program = torch.export.export(_Modulus(), (torch.randn(3), torch.randn(3)))
    targets = {str(node.target) for node in program.graph.nodes}
    assert not any("hypot" in target for target in targets)
    assert any("sqrt" in target for target in targets)


def test_modulus_graph_has_no_complex_tensor():
    # a native complex intermediate is what inductor and ONNX cannot take
    z = Cplx(torch.randn(3), torch.randn(3))
    graph = torch.fx.experimental.proxy_tensor.make_fx(lambda a, b: abs(Cplx(a, b)))(
        z.real, z.imag
    )
    dtypes = {
        node.meta["val"].dtype
        for node in graph.graph.nodes
        if isinstance(node.meta.get("val"), torch.Tensor)
    }
    assert not any(dtype.is_complex for dtype in dtypes)


def test_gradient_at_subnormal_modulus_is_the_unit_direction():
    # ``grad / modulus`` overflows there: the direction ``part / modulus`` must come first
    re = _leaf([1.4e-45, -3e-39, 0.0], torch.float32)
    im = _leaf([0.0, 4e-39, -1.4e-45], torch.float32)
    abs(Cplx(re, im)).sum().backward()
    expected = torch.tensor([[1.0, 0.0], [-0.6, 0.8], [0.0, -1.0]])
    torch.testing.assert_close(torch.stack([re.grad, im.grad], -1), expected, rtol=1e-6, atol=0)
