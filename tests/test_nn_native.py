"""Lossless conversion between complex layers and torch layers of complex dtype."""

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.nn.modules.native import from_native, to_native


def native(z):
    return torch.complex(z.real, z.imag)


LAYERS = [
    (lambda **kw: cnn.CplxLinear(4, 3, **kw), (5, 4)),
    (lambda **kw: cnn.CplxLinear(4, 3, bias=False, **kw), (5, 4)),
    (lambda **kw: cnn.CplxConv1d(2, 4, 3, padding=1, padding_mode="circular", **kw), (2, 2, 7)),
    (lambda **kw: cnn.CplxConv2d(2, 4, 3, stride=2, groups=2, padding_mode="reflect",
                                 padding=1, **kw), (2, 2, 6, 6)),
    (lambda **kw: cnn.CplxConv3d(2, 2, 3, padding="same", **kw), (1, 2, 4, 4, 4)),
    (lambda **kw: cnn.CplxConvTranspose1d(2, 4, 3, stride=2, output_padding=1, **kw), (2, 2, 5)),
    (lambda **kw: cnn.CplxConvTranspose2d(2, 4, 3, dilation=2, bias=False, **kw), (1, 2, 4, 4)),
    (lambda **kw: cnn.CplxConvTranspose3d(2, 2, 2, stride=2, **kw), (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("make, shape", LAYERS)
def test_round_trip_bit_exact(make, shape, dtype):
    torch.manual_seed(0)
    layer = make(dtype=dtype).eval()
    converted = to_native(layer)
    assert converted.weight.dtype == {torch.float32: torch.complex64,
                                      torch.float64: torch.complex128}[dtype]
    assert not converted.training
    assert torch.equal(converted.weight.real, layer.weight.real)
    assert torch.equal(converted.weight.imag, layer.weight.imag)

    back = from_native(converted)
    assert type(back) is type(layer) and back.weight.dtype == dtype
    assert repr(back) == repr(layer)
    for (k, a), (_, b) in zip(layer.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), k

    x = cplx.randn(*shape, dtype=dtype)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert torch.allclose(native(layer(x)), converted(native(x)), atol=tol)


def test_from_native_starts_from_torch():
    torch.manual_seed(1)
    reference = torch.nn.Conv2d(2, 3, 3, padding=1, dtype=torch.complex64)
    layer = from_native(reference)
    x = torch.randn(1, 2, 5, 5, dtype=torch.complex64)
    assert torch.allclose(native(layer(cplx.from_complex(x))), reference(x), atol=1e-5)
    assert torch.equal(to_native(layer).weight, reference.weight)


def test_from_real_layer_zero_imaginary():
    real = torch.nn.Linear(3, 2)
    layer = from_native(real)
    assert torch.equal(layer.weight.real, real.weight)
    assert torch.equal(layer.weight.imag, torch.zeros(2, 3))


def test_parameters_are_copies():
    layer = cnn.CplxLinear(3, 2)
    converted = to_native(layer)
    with torch.no_grad():
        converted.weight.zero_()
    assert layer.weight.real.abs().sum() > 0


@pytest.mark.parametrize("module", [cnn.CplxBilinear(2, 2, 2), torch.nn.ReLU(), cnn.CplxModReLU()])
def test_unsupported(module):
    with pytest.raises(TypeError, match="`module` must be one of"):
        to_native(module)
    with pytest.raises(TypeError, match="`module` must be one of"):
        from_native(module)
