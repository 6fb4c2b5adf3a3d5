"""Data consistency for MRI reconstruction (``cplxmodule.nn.modules.reconstruction``), against numpy.

The reference is numpy's FFT (and its shifts for centred k-space): the
image's k-space with the measured entries put in (hard) or blended by the
weight (soft), transformed back. Properties checked besides: the output's
k-space equals the measured one where sampled and the estimate's elsewhere,
the layer is idempotent, its soft weight learns.
"""

import numpy as np
import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.cplx import spectral
from cplxmodule.nn import CplxDataConsistency
from tests.helpers import Duck

pytestmark = pytest.mark.usefixtures("one_thread")


def numpy_signal(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def as_cplx(z):
    return Cplx(torch.from_numpy(np.ascontiguousarray(z.real)),
                torch.from_numpy(np.ascontiguousarray(z.imag)))


def as_numpy(z):
    return cplx.to_complex(z).detach().numpy()


def numpy_dc(x, k0, mask, weight=None, axes=(-2, -1), norm="ortho", centered=False):
    def fft(z, inverse=False):
        f = np.fft.ifftn if inverse else np.fft.fftn
        if centered:
            return np.fft.fftshift(f(np.fft.ifftshift(z, axes=axes), axes=axes, norm=norm),
                                   axes=axes)
        return f(z, axes=axes, norm=norm)
    k = fft(x)
    if weight is None and mask.dtype == bool:
        k = np.where(mask, k0, k)
    else:
        factor = mask * (1.0 if weight is None else weight)
        k = k - factor * (k - k0)
    return fft(k, inverse=True)


def cartesian_mask(width):
    """Every fourth column and the four in the middle, as 4x Cartesian undersampling."""
    mask = np.zeros(width, dtype=bool)
    mask[::4] = True
    mask[width // 2 - 2: width // 2 + 2] = True
    return mask


@pytest.fixture(params=["eager", "real_ops"])
def path(request, monkeypatch):
    if request.param == "real_ops":
        monkeypatch.setattr(spectral, "_exporting", lambda: True)
    return request.param


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("norm", ["ortho", None, "forward"])
def test_hard_data_consistency_is_numpys(path, centered, norm):
    x, k0 = numpy_signal(2, 3, 8, 7), numpy_signal(2, 3, 8, 7, seed=1)
    mask = cartesian_mask(7)
    layer = CplxDataConsistency(norm=norm, centered=centered).double()
    out = layer(as_cplx(x), as_cplx(k0), torch.from_numpy(mask))
    expected = numpy_dc(x, k0, mask, norm=norm, centered=centered)
    np.testing.assert_allclose(as_numpy(out), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dim", [-1, (1, 3), (-3, -2, -1)])
def test_soft_data_consistency_with_real_masks_is_numpys(path, dim):
    x, k0 = numpy_signal(2, 3, 6, 5), numpy_signal(2, 3, 6, 5, seed=2)
    density = np.random.default_rng(3).uniform(size=(1, 1, 6, 5))
    layer = CplxDataConsistency(soft=True, weight=0.3, dim=dim, dtype=torch.float64)
    out = layer(as_cplx(x), as_cplx(k0), torch.from_numpy(density))
    axes = dim if isinstance(dim, tuple) else (dim,)
    np.testing.assert_allclose(as_numpy(out), numpy_dc(x, k0, density, 0.3, axes),
                               rtol=1e-12, atol=1e-12)


def test_the_sampled_entries_are_the_measured_ones_and_the_rest_the_estimates():
    x, k0 = numpy_signal(1, 1, 16, 16), numpy_signal(1, 1, 16, 16, seed=4)
    mask = cartesian_mask(16)
    out = cplx.data_consistency(as_cplx(x), as_cplx(k0), torch.from_numpy(mask))
    k = np.fft.fftn(as_numpy(out), axes=(-2, -1), norm="ortho")
    estimate = np.fft.fftn(x, axes=(-2, -1), norm="ortho")
    np.testing.assert_allclose(k[..., mask], k0[..., mask], atol=1e-12)
    np.testing.assert_allclose(k[..., ~mask], estimate[..., ~mask], atol=1e-12)
    # consistent already: a second pass changes nothing
    again = cplx.data_consistency(out, as_cplx(k0), torch.from_numpy(mask))
    np.testing.assert_allclose(as_numpy(again), as_numpy(out), atol=1e-12)


def test_weights_zero_and_one_are_no_consistency_and_the_hard_form():
    x, k0 = numpy_signal(2, 1, 8, 8), numpy_signal(2, 1, 8, 8, seed=5)
    mask = torch.from_numpy(cartesian_mask(8))
    hard = cplx.data_consistency(as_cplx(x), as_cplx(k0), mask)
    one = cplx.data_consistency(as_cplx(x), as_cplx(k0), mask, weight=1.0)
    zero = cplx.data_consistency(as_cplx(x), as_cplx(k0), mask, weight=torch.tensor(0.0))
    np.testing.assert_allclose(as_numpy(one), as_numpy(hard), atol=1e-12)
    np.testing.assert_allclose(as_numpy(zero), x, atol=1e-12)


def test_the_soft_weight_learns():
    # the estimate is noise, the data exact: the weight should grow toward the data
    torch.manual_seed(0)
    image = cplx.randn(4, 1, 8, 8, dtype=torch.float64)
    mask = torch.from_numpy(cartesian_mask(8))
    measured = cplx.fftn(image, dim=(-2, -1), norm="ortho") * mask
    layer = CplxDataConsistency(soft=True, weight=0.2).double()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.05)
    for _ in range(5):
        out = layer(cplx.randn(4, 1, 8, 8, dtype=torch.float64), measured, mask)
        loss = cplx.mse_loss(out, image)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert layer.weight.item() > 0.3


def test_duck_and_native_operands_equal_cplx_ones_gradients_included():
    x, k0 = (cplx.randn(2, 1, 6, 6, dtype=torch.float64) for _ in range(2))
    mask = torch.from_numpy(cartesian_mask(6))
    layer = CplxDataConsistency(soft=True, weight=0.7).double()
    leaves = [t.clone().requires_grad_() for t in (x.real, x.imag, k0.real, k0.imag)]
    reference = layer(Cplx(*leaves[:2]), Cplx(*leaves[2:]), mask)
    weights = cplx.randn(2, 1, 6, 6, dtype=torch.float64)
    (reference.real * weights.real + reference.imag * weights.imag).sum().backward()
    ducks = [t.detach().clone().requires_grad_() for t in leaves]
    out = layer(Duck(*ducks[:2]), Duck(*ducks[2:]), mask)
    (out.real * weights.real + out.imag * weights.imag).sum().backward()
    torch.testing.assert_close(cplx.to_complex(out), cplx.to_complex(reference))
    for a, b in zip(ducks, leaves):
        torch.testing.assert_close(a.grad, b.grad)
    native = [torch.complex(x.real, x.imag).requires_grad_(),
              torch.complex(k0.real, k0.imag).requires_grad_()]
    out = layer(*native, mask)
    (out.real * weights.real + out.imag * weights.imag).sum().backward()
    torch.testing.assert_close(native[0].grad, torch.complex(leaves[0].grad, leaves[1].grad))


def test_half_precision_is_computed_in_float32():
    x, k0 = (cplx.randn(1, 1, 8, 8) for _ in range(2))
    mask = torch.from_numpy(cartesian_mask(8))
    out = cplx.data_consistency(x.to(torch.bfloat16), k0.to(torch.bfloat16), mask)
    assert out.dtype == torch.bfloat16
    expected = cplx.data_consistency(x.to(torch.bfloat16).float(),
                                     k0.to(torch.bfloat16).float(), mask)
    torch.testing.assert_close(out.real.float(), expected.real, rtol=1e-2, atol=2e-2)


def test_repr():
    assert repr(CplxDataConsistency()) == "CplxDataConsistency()"
    assert repr(CplxDataConsistency(soft=True, dim=-1, norm=None, centered=True)) == (
        "CplxDataConsistency(soft=True, dim=(-1,), norm=None, centered=True)")
    assert CplxDataConsistency().weight is None
    assert CplxDataConsistency(soft=True, weight=0.25).weight.item() == 0.25


@pytest.mark.parametrize("call, error, message", [
    (lambda: CplxDataConsistency(weight=0.5), ValueError,
     "CplxDataConsistency: `weight` must be 1 without `soft=True`"),
    (lambda: CplxDataConsistency(soft=True, weight=1.5), ValueError,
     r"CplxDataConsistency: `weight` must be a number in \[0, 1\]"),
    (lambda: CplxDataConsistency(dim=()), ValueError, "CplxDataConsistency: `dim` must be"),
    (lambda: CplxDataConsistency(norm="unitary"), ValueError, "CplxDataConsistency: `norm`"),
    (lambda: CplxDataConsistency(centered=1), TypeError, "CplxDataConsistency: `centered`"),
    (lambda: CplxDataConsistency()(cplx.randn(2, 4, 4), cplx.randn(2, 4, 5), torch.ones(4)),
     ValueError, r"CplxDataConsistency: `kspace` must have the shape of `input`, \(2, 4, 4\)"),
    (lambda: CplxDataConsistency()(cplx.randn(2, 4, 4), cplx.randn(2, 4, 4), torch.ones(3)),
     ValueError, "CplxDataConsistency: `mask` must broadcast to the shape of `kspace`"),
    (lambda: CplxDataConsistency()(cplx.randn(2, 4, 4), cplx.randn(2, 4, 4),
                                   torch.ones(4, dtype=torch.int64)),
     TypeError, "CplxDataConsistency: `mask` must be a bool or real floating-point tensor"),
    (lambda: CplxDataConsistency(dim=(0, 3))(cplx.randn(2, 4, 4), cplx.randn(2, 4, 4),
                                             torch.ones(4)),
     ValueError, "CplxDataConsistency: `input` must have dimension 3"),
    (lambda: cplx.data_consistency(cplx.randn(4, 4), cplx.randn(4, 4), torch.ones(4),
                                   weight=torch.ones(3)),
     ValueError, "data_consistency: `weight` must broadcast"),
    (lambda: cplx.data_consistency(cplx.randn(4, 4), cplx.randn(4, 4), torch.ones(4),
                                   weight="soft"),
     TypeError, "data_consistency: `weight` must be None, a finite number or a real tensor"),
    (lambda: cplx.data_consistency(cplx.randn(4, 4), cplx.randn(4, 4), torch.ones(4),
                                   dim=(0, -2)),
     ValueError, "data_consistency: `dim` must not name a dimension twice"),
    (lambda: cplx.data_consistency(torch.randn(4, 4), cplx.randn(4, 4), torch.ones(4)),
     TypeError, "data_consistency: `input` must be a Cplx or a complex tensor"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()
