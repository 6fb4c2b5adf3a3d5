"""Tests of cplxmodule.utils views: fix_dim, complex_view, window_view."""

import numpy
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cplxmodule.utils import complex_view, fix_dim, window_view


def same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# fix_dim
@pytest.mark.parametrize("n_dim", [1, 2, 5])
def test_fix_dim_matches_python_indexing(n_dim):
    positions = list(range(n_dim))
    for dim in range(-n_dim, n_dim):
        assert fix_dim(dim, n_dim) == positions[dim]


@pytest.mark.parametrize("dim, n_dim", [(3, 3), (-4, 3), (0, 0), (7, 2)])
def test_fix_dim_out_of_range(dim, n_dim):
    with pytest.raises(IndexError, match="^fix_dim: `dim`"):
        fix_dim(dim, n_dim)
    # the published package raised ValueError: that still catches it
    with pytest.raises(ValueError, match="^fix_dim: `dim`"):
        fix_dim(dim, n_dim)


@pytest.mark.parametrize("dim", [1.0, "0", None, True])
def test_fix_dim_not_an_integer(dim):
    with pytest.raises(TypeError, match="^fix_dim: `dim`"):
        fix_dim(dim, 3)


def test_fix_dim_accepts_numpy_integers():
    assert fix_dim(numpy.int64(-1), 3) == 2


# complex_view
def reference_parts(x, dim):
    """Real and imaginary parts by an independent route: numpy slicing."""
    a = x.detach().numpy()
    index = [slice(None)] * a.ndim
    index[dim] = slice(0, None, 2)
    real = a[tuple(index)]
    index[dim] = slice(1, None, 2)
    return real, a[tuple(index)]


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
def test_complex_view_values_and_shape(dim):
    x = torch.randn(4, 6, 8, dtype=torch.float64)
    real, imag = complex_view(x, dim=dim)
    ref_real, ref_imag = reference_parts(x, dim)
    numpy.testing.assert_array_equal(real.numpy(), ref_real)
    numpy.testing.assert_array_equal(imag.numpy(), ref_imag)


def test_complex_view_matches_torch_native_layout():
    # a contiguous (..., 2n) tensor is torch's complex memory layout
    x = torch.randn(3, 10)
    z = torch.view_as_complex(x.reshape(3, 5, 2))
    real, imag = complex_view(x)
    assert torch.equal(real, z.real) and torch.equal(imag, z.imag)


def test_complex_view_is_zero_copy_and_writes_through():
    x = torch.randn(5, 6)
    real, imag = complex_view(x, dim=1)
    assert same_storage(real, x) and same_storage(imag, x)
    assert real.stride() == (6, 2) and imag.storage_offset() == 1
    real[2, 1] = 100.0
    imag[0, 2] = -100.0
    assert x[2, 2] == 100.0 and x[0, 5] == -100.0


def test_complex_view_of_noncontiguous_input():
    base = torch.randn(8, 12)
    x = base.t()[:, ::2]  # strides (1, 24): not contiguous
    real, imag = complex_view(x, dim=0)
    ref_real, ref_imag = reference_parts(x, 0)
    numpy.testing.assert_array_equal(real.numpy(), ref_real)
    numpy.testing.assert_array_equal(imag.numpy(), ref_imag)
    assert same_storage(real, base)


@pytest.mark.parametrize("squeeze, shape", [(True, (3, 4)), (False, (3, 1, 4))])
def test_complex_view_squeeze_single_pair(squeeze, shape):
    x = torch.randn(3, 2, 4)
    real, imag = complex_view(x, dim=1, squeeze=squeeze)
    assert real.shape == imag.shape == shape
    assert torch.equal(real.reshape(3, 4), x[:, 0]) and torch.equal(
        imag.reshape(3, 4), x[:, 1]
    )


def test_complex_view_squeeze_only_for_size_two():
    real, _ = complex_view(torch.randn(3, 4), dim=1, squeeze=True)
    assert real.shape == (3, 2)


def test_complex_view_gradient_reaches_input():
    x = torch.randn(4, 6, requires_grad=True)
    real, imag = complex_view(x)
    (2 * real.sum() + 3 * imag.sum()).backward()
    expected = torch.tensor([2.0, 3.0]).repeat(4, 3)
    assert torch.equal(x.grad, expected)


def test_complex_view_odd_size_warns_and_leaves_the_last_value_out():
    x = torch.arange(15.0).reshape(3, 5)
    with pytest.warns(RuntimeWarning, match="Odd dimension"):
        real, imag = complex_view(x)
    assert torch.equal(real, x[:, [0, 2]]) and torch.equal(imag, x[:, [1, 3]])
    # three values along dim 0: one pair is left, kept as a dimension of size one
    with pytest.warns(RuntimeWarning, match="Odd dimension"):
        real, imag = complex_view(x, dim=0)
    assert torch.equal(real, x[:1]) and torch.equal(imag, x[1:2])


def test_complex_view_errors_name_the_argument():
    with pytest.raises(IndexError, match="^complex_view: `dim`"):
        complex_view(torch.randn(3, 4), dim=2)
    with pytest.raises(TypeError, match="^complex_view: `x`"):
        complex_view(numpy.zeros((3, 4)))
    with pytest.raises(TypeError, match="^complex_view: `x`"):
        complex_view(torch.randn(3, 4, dtype=torch.complex64))


# window_view
@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 7), min_size=1, max_size=3),
    data=st.data(),
)
def test_window_view_matches_unfold_and_numpy(shape, data):
    x = torch.randn(shape, dtype=torch.float64)
    n_dim = len(shape)
    dim = data.draw(st.integers(-n_dim, n_dim - 1))
    size = data.draw(st.integers(1, shape[dim]))
    stride = data.draw(st.integers(1, 4))
    at = data.draw(st.integers(-n_dim - 1, n_dim))

    view = window_view(x, dim, size, stride, at=at)
    expected = x.unfold(dim, size, stride)  # window axis last
    assert torch.equal(view, torch.movedim(expected, -1, at))
    assert same_storage(view, x)

    # numpy's sliding_window_view with every window, then every stride-th
    windows = numpy.lib.stride_tricks.sliding_window_view(x.numpy(), size, axis=dim)
    index = [slice(None)] * n_dim
    index[dim] = slice(None, None, stride)
    numpy.testing.assert_array_equal(
        torch.movedim(view, at, -1).numpy(), windows[tuple(index)]
    )


def test_window_view_default_at_follows_dim():
    x = torch.arange(2 * 10 * 3).reshape(2, 10, 3)
    view = window_view(x, 1, size=4, stride=3)
    assert view.shape == (2, 3, 4, 3)
    k, j = 2, 1
    assert torch.equal(view[:, k, j, :], x[:, k * 3 + j, :])


def test_window_view_is_zero_copy_and_differentiable():
    x = torch.randn(12, requires_grad=True)
    view = window_view(x, 0, size=4, stride=2)
    assert same_storage(view, x)
    view.sum().backward()
    # each sample counted once per window that covers it
    counts = torch.zeros(12)
    for start in range(0, 12 - 4 + 1, 2):
        counts[start : start + 4] += 1
    assert torch.equal(x.grad, counts)


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(dim=0, size=0, stride=1), ValueError, "`size`"),
        (dict(dim=0, size=9, stride=1), ValueError, "`size`"),
        (dict(dim=0, size=2, stride=0), ValueError, "`stride`"),
        (dict(dim=0, size=2.5, stride=1), TypeError, "`size`"),
        (dict(dim=2, size=2, stride=1), IndexError, "`dim`"),
        (dict(dim=0, size=2, stride=1, at=3), IndexError, "`at`"),
    ],
)
def test_window_view_errors_name_the_argument(kwargs, error, name):
    with pytest.raises(error, match=f"^window_view: {name}"):
        window_view(torch.randn(8, 3), **kwargs)
