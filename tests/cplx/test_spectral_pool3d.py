"""3d spectral pooling against a crop of torch's native complex128 spectrum, bin by bin."""

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import cplxmodule.cplx as cplx
from cplxmodule import nn
from cplxmodule.cplx import Cplx
from ..helpers import cplx_to_native


def native_spectral_pool3d(z, output_size):
    """Keep the bins -(m // 2) .. m - m // 2 - 1 of each of the last three axes."""
    dims = (-3, -2, -1)
    spectrum = torch.fft.fftn(z, dim=dims) / z.shape[-3:].numel()
    out = torch.zeros(*z.shape[:-3], *output_size, dtype=z.dtype)
    grids = torch.meshgrid(
        *[torch.arange(-(m // 2), m - m // 2) for m in output_size], indexing="ij"
    )
    # bin k of a size-n spectrum lies at index k mod n
    source = tuple(k % n for k, n in zip(grids, z.shape[-3:]))
    target = tuple(k % m for k, m in zip(grids, output_size))
    out[(..., *target)] = spectrum[(..., *source)]
    return torch.fft.ifftn(out, dim=dims) * out.shape[-3:].numel()


@settings(max_examples=20, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 4)), min_size=3, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_spectral_pool3d_matches_native_complex(sizes, seed):
    torch.manual_seed(seed)
    spatial = tuple(m + extra for m, extra in sizes)
    output_size = tuple(m for m, _ in sizes)
    x = cplx.randn(2, *spatial, dtype=torch.float64)
    expected = native_spectral_pool3d(cplx_to_native(x), output_size)
    got = cplx.spectral_pool3d(x, output_size)
    torch.testing.assert_close(cplx_to_native(got), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.slow
def test_spectral_pool3d_layer_copies_and_gradcheck():
    layer = nn.CplxSpectralPool3d((2, 3, 4))
    x = cplx.randn(2, 3, 4, 5, 6, dtype=torch.float64)
    expected = native_spectral_pool3d(cplx_to_native(x), (2, 3, 4))
    for candidate in (layer, copy.deepcopy(layer), layer.to(torch.float64)):
        torch.testing.assert_close(cplx_to_native(candidate(x)), expected, rtol=1e-10, atol=1e-12)
    assert layer.state_dict() == {}
    assert repr(layer) == "CplxSpectralPool3d(output_size=(2, 3, 4))"

    re, im = x.real[:1, :1].clone().requires_grad_(), x.imag[:1, :1].clone().requires_grad_()

    def parts(re, im):
        y = layer(Cplx(re, im))
        return y.real, y.imag

    assert torch.autograd.gradcheck(parts, (re, im))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cplx.spectral_pool3d(cplx.randn(4, 4), 2), "`input` must have at least 3"),
        (lambda: cplx.spectral_pool3d(cplx.randn(3, 3, 3), (2, 2)), "`output_size` must"),
        (lambda: cplx.spectral_pool3d(cplx.randn(3, 3, 3), (2, 2, 4)), "`output_size` must"),
        (lambda: nn.CplxSpectralPool3d(2)(torch.randn(3, 3, 3)), "must be a Cplx"),
    ],
)
def test_spectral_pool3d_rejects_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
