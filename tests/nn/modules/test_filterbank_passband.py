"""The learnable filterbanks pass a complex tone at +f_c, where their documentation puts the band."""

import numpy as np
import pytest
import torch

import cplxmodule.nn as cnn
from cplxmodule import Cplx

pytestmark = pytest.mark.usefixtures("one_thread")


def _tone(frequency, length=256):
    t = torch.arange(length, dtype=torch.float64)
    phase = 2 * np.pi * frequency * t
    return Cplx(torch.cos(phase), torch.sin(phase)).reshape(1, 1, length)


@pytest.mark.parametrize("layer", [cnn.CplxGaborConv1d, cnn.CplxMorletConv1d])
def test_a_tone_at_the_centre_passes_and_its_mirror_does_not(layer):
    bank = layer(1, 1, 65, dtype=torch.float64)
    with torch.no_grad():
        bank.center.fill_(0.1)  # cycles per sample
        bank.width.fill_(8.0)  # samples: a response of width 1 / (2 pi 8) = 0.02
    passed = abs(bank(_tone(0.1))).mean().item()
    mirrored = abs(bank(_tone(-0.1))).mean().item()
    # the gain at the centre: the envelope's sum, sqrt(2 pi) sigma (the
    # Morlet's correction is exp(-2 pi^2 0.8^2) ~ 3e-6 of it)
    np.testing.assert_allclose(passed, np.sqrt(2 * np.pi) * 8.0, rtol=1e-3)
    # not zero: the envelope is truncated at 4 sigma
    assert mirrored < 1e-4 * passed


def test_the_output_is_the_inner_product_with_the_filter():
    # numpy's reference: y[n] = sum_k x[n + k] conj(g[k]) with g the documented filter
    bank = cnn.CplxGaborConv1d(1, 1, 9, dtype=torch.float64)
    with torch.no_grad():
        bank.center.fill_(0.2)
        bank.width.fill_(2.0)
    t = np.arange(9) - 4.0
    g = np.exp(-(t**2) / (2 * 2.0**2)) * np.exp(2j * np.pi * 0.2 * t)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(20) + 1j * rng.standard_normal(20)
    expected = np.array([np.vdot(g, x[n : n + 9]) for n in range(12)])
    with torch.no_grad():
        out = bank(Cplx(torch.tensor(x.real), torch.tensor(x.imag)).reshape(1, 1, 20))
    got = out.real.reshape(-1).numpy() + 1j * out.imag.reshape(-1).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
