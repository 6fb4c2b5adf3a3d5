"""The split SSIM loss against SSIM computed in numpy, window by window.

The reference is Wang et al.'s formula evaluated at every position where a
normalised Gaussian window fits, on the real parts and on the imaginary
parts of complex128 images, each as a real image.
"""

import numpy as np
import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx


def _from_native(z):
    return Cplx(z.real, z.imag)


pytestmark = pytest.mark.usefixtures("one_thread")


def _numpy_ssim(a, b, size, sigma, data_range, k1=0.01, k2=0.03):
    offsets = np.arange(size) - (size - 1) / 2
    line = np.exp(-offsets ** 2 / (2 * sigma ** 2))
    window = np.outer(line, line) / line.sum() ** 2
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    n, c, h, w = a.shape
    out = np.empty((n, c, h - size + 1, w - size + 1))
    for i in range(h - size + 1):
        for j in range(w - size + 1):
            pa, pb = a[..., i:i + size, j:j + size], b[..., i:i + size, j:j + size]
            mu_a, mu_b = (pa * window).sum((-2, -1)), (pb * window).sum((-2, -1))
            var_a = (pa ** 2 * window).sum((-2, -1)) - mu_a ** 2
            var_b = (pb ** 2 * window).sum((-2, -1)) - mu_b ** 2
            cov = (pa * pb * window).sum((-2, -1)) - mu_a * mu_b
            out[..., i, j] = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / (
                (mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return out


def _images(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 2, 9, 10, generator=g, dtype=torch.complex128)
    return x, x + 0.5 * torch.randn(2, 2, 9, 10, generator=g, dtype=torch.complex128)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_split_ssim_matches_numpy(reduction):
    x, y = _images(0)
    layer = cnn.losses.CplxSSIMLoss(window_size=5, sigma=1.2, data_range=4.0,
                                    reduction=reduction, split=True)
    loss = layer(_from_native(x), _from_native(y))
    real = _numpy_ssim(x.real.numpy(), y.real.numpy(), 5, 1.2, 4.0)
    imag = _numpy_ssim(x.imag.numpy(), y.imag.numpy(), 5, 1.2, 4.0)
    expected = 1 - (real + imag) / 2
    np.testing.assert_allclose(loss.numpy(), expected if reduction == "none" else expected.mean(),
                               rtol=1e-10, atol=1e-12)


def test_split_ssim_sees_the_phase_the_modulus_form_does_not():
    x, _ = _images(1)
    z = _from_native(x)
    rotated = _from_native(x * 1j)
    assert float(cplx.ssim_loss(z, rotated, 5)) < 1e-12
    assert float(cplx.ssim_loss(z, rotated, 5, split=True)) > 0.5
    assert float(cplx.ssim_loss(z, z, 5, split=True)) < 1e-12


def test_split_ssim_refuses_a_non_bool_naming_the_layer():
    with pytest.raises(TypeError, match=r"CplxSSIMLoss: `split`"):
        cnn.losses.CplxSSIMLoss(split=1)
    with pytest.raises(TypeError, match=r"ssim_loss: `split`"):
        cplx.ssim_loss(cplx.randn(1, 1, 11, 11), cplx.randn(1, 1, 11, 11), split="yes")
    assert "split=True" in repr(cnn.losses.CplxSSIMLoss(split=True))
