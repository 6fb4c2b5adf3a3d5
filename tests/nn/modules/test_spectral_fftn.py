"""The Fourier layers along several dimensions, and fftshift / ifftshift, against numpy.

References: :func:`numpy.fft.fftn`, :func:`numpy.fft.ifftn`,
:func:`numpy.fft.fftshift` and :func:`numpy.fft.ifftshift` on numpy's
complex arrays.
"""

import numpy as np
import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.cplx import spectral
from cplxmodule.nn import CplxFFT, CplxFFTShift, CplxIFFT, CplxIFFTShift
from cplxmodule.utils import fftshift, ifftshift

pytestmark = pytest.mark.usefixtures("one_thread")


def numpy_signal(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def as_cplx(z):
    return cplx.from_complex(torch.from_numpy(np.ascontiguousarray(z)))


def as_numpy(z):
    return cplx.to_complex(z).detach().numpy()


@pytest.fixture(params=["eager", "real_ops"])
def path(request, monkeypatch):
    if request.param == "real_ops":
        monkeypatch.setattr(spectral, "_exporting", lambda: True)
    return request.param


@pytest.mark.parametrize("dim, n", [((-2, -1), None), ((0, 2), (3, 8)), ((1,), (4,)),
                                    ((2, 0, 1), None)])
@pytest.mark.parametrize("norm", [None, "backward", "forward", "ortho"])
def test_fft_layers_along_several_dimensions_are_numpys(path, dim, n, norm):
    z = numpy_signal(2, 5, 6)
    forward = CplxFFT(dim=dim, norm=norm, n=n)(as_cplx(z))
    np.testing.assert_allclose(as_numpy(forward), np.fft.fftn(z, s=n, axes=dim, norm=norm),
                               rtol=1e-12, atol=1e-12)
    inverse = CplxIFFT(dim=dim, norm=norm, n=n)(as_cplx(z))
    np.testing.assert_allclose(as_numpy(inverse), np.fft.ifftn(z, s=n, axes=dim, norm=norm),
                               rtol=1e-12, atol=1e-12)


def test_the_two_dimensional_layers_invert_each_other():
    z = cplx.randn(2, 3, 8, 7, dtype=torch.float64)
    back = CplxIFFT(dim=(-2, -1), norm="ortho")(CplxFFT(dim=(-2, -1), norm="ortho")(z))
    torch.testing.assert_close(cplx.to_complex(back), cplx.to_complex(z))


@pytest.mark.parametrize("shape", [(5,), (6,), (4, 7), (3, 5, 6)])
def test_fftshift_and_ifftshift_are_numpys(shape):
    z = numpy_signal(*shape)
    dims = tuple(range(len(shape)))
    for axes in [None, -1, dims[-2:] if len(dims) > 1 else (0,)]:
        expected = np.fft.fftshift(z, axes=axes)
        torch.testing.assert_close(torch.from_numpy(as_numpy(fftshift(as_cplx(z), axes))),
                                   torch.from_numpy(expected))
        expected = np.fft.ifftshift(z, axes=axes)
        torch.testing.assert_close(torch.from_numpy(as_numpy(ifftshift(as_cplx(z), axes))),
                                   torch.from_numpy(expected))
        # real tensors, and a native complex one
        real = torch.from_numpy(z.real.copy())
        torch.testing.assert_close(ifftshift(real, axes),
                                   torch.from_numpy(np.fft.ifftshift(z.real, axes=axes)))
        native = torch.from_numpy(z)
        torch.testing.assert_close(ifftshift(native, axes),
                                   torch.from_numpy(np.fft.ifftshift(z, axes=axes)))


@pytest.mark.parametrize("chained", [False, True], ids=["separate", "chained"])
def test_shift_layers_are_numpys_and_invert_each_other(chained):
    # the parts of one complex buffer (rolled at once), or two separate tensors
    z = numpy_signal(2, 5, 6)
    x = as_cplx(z) if chained else Cplx(torch.from_numpy(z.real.copy()),
                                        torch.from_numpy(z.imag.copy()))
    shifted = CplxFFTShift(dim=(1, 2))(x)
    np.testing.assert_array_equal(as_numpy(shifted), np.fft.fftshift(z, axes=(1, 2)))
    back = CplxIFFTShift(dim=(1, 2))(shifted)
    np.testing.assert_array_equal(as_numpy(back), z)


def test_shift_gradients_are_the_inverse_shift():
    z = cplx.randn(3, 5, dtype=torch.float64)
    native = cplx.to_complex(z).requires_grad_()
    out = CplxFFTShift(dim=-1)(native)
    weight = torch.randn(3, 5, dtype=torch.complex128)
    (cplx.to_complex(out) * weight.conj()).real.sum().backward()
    torch.testing.assert_close(native.grad, torch.fft.ifftshift(weight, dim=-1))


@pytest.mark.parametrize("call, error, message", [
    (lambda: CplxFFT(dim=(0, 1), n=4), ValueError,
     r"CplxFFT: `n` must be None or a tuple of 2 positive ints"),
    (lambda: CplxFFT(dim=(0, 1), n=(4, 0)), ValueError, "CplxFFT: `n` must be a positive int"),
    (lambda: CplxIFFT(dim=()), ValueError, "CplxIFFT: `dim` must be an int or a non-empty"),
    (lambda: CplxFFT(dim=(0, 1.5)), TypeError, "CplxFFT: `dim` must be an int"),
    (lambda: CplxFFT(dim=(0, -2))(cplx.randn(3, 4)), ValueError,
     "CplxFFT: `dim` must not name a dimension twice"),
    (lambda: CplxFFT(dim=(0, 2))(cplx.randn(3, 4)), ValueError,
     "CplxFFT: `input` must have dimension 2"),
    (lambda: CplxFFT(dim=(0, 1))(torch.randn(3, 4)), TypeError,
     "CplxFFT: `input` must be a Cplx or a complex tensor"),
    (lambda: CplxFFTShift(dim=(0, 3))(cplx.randn(3, 4)), ValueError,
     "CplxFFTShift: `input` must have dimension 3"),
    (lambda: CplxIFFTShift(dim="last"), TypeError, "CplxIFFTShift: `dim` must be an int"),
    (lambda: ifftshift([1, 2]), TypeError, "ifftshift: `x` must be a torch.Tensor or a Cplx"),
    (lambda: ifftshift(torch.ones(3), 1), IndexError, "ifftshift: `dim`"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_repr_shows_the_dimensions():
    assert repr(CplxFFT(dim=(-2, -1), norm="ortho")) == "CplxFFT(dim=(-2, -1), norm='ortho')"
    assert repr(CplxIFFT(dim=[0, 1], n=[4, 4])) == "CplxIFFT(dim=(0, 1), n=(4, 4))"
    assert repr(CplxFFTShift((-2, -1))) == "CplxFFTShift(dim=(-2, -1))"
