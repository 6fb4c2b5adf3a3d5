"""Gauss's product written into one buffer: the same bits as the product of fresh tensors."""

import pytest
import torch

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.cplx._product import _gauss_mm


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("sign", [1, -1])
def test_buffered_gauss_product_is_bitwise_the_unbuffered_one(aligned, sign):
    g = torch.Generator().manual_seed(0)
    ar, ai = torch.randn(33, 17, generator=g), torch.randn(33, 17, generator=g)
    br, bi = torch.randn(17, 9, generator=g), torch.randn(17, 9, generator=g)
    want = _gauss_mm(ar, ai, br, bi, aligned, sign)
    got = _gauss_mm(ar, ai, br, bi, aligned, sign, buffered=True)
    for a, b in zip(got, want):
        assert torch.equal(a, b)
    # and the complex product, against torch's in double precision
    exact = torch.complex(ar.double(), ai.double()) @ torch.complex(br.double(), sign * bi.double())
    torch.testing.assert_close(torch.complex(got[0].double(), got[1].double()), exact, rtol=1e-5, atol=1e-5)


def test_linear_without_autograd_is_bitwise_the_tracked_one():
    # inference takes the buffered form, training the autograd function
    g = torch.Generator().manual_seed(1)
    x = Cplx(torch.randn(512, 64, generator=g), torch.randn(512, 64, generator=g))
    w = Cplx(torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g))
    with torch.no_grad():
        free = cplx.linear(x, w, strategy="3m")
    tracked = cplx.linear(x, Cplx(w.real.requires_grad_(), w.imag.requires_grad_()), strategy="3m")
    assert torch.equal(free.real, tracked.real) and torch.equal(free.imag, tracked.imag)
