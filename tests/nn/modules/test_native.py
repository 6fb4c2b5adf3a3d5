"""Lossless conversion between complex layers and torch layers of complex dtype."""

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.nn.modules.native import from_native, to_native

from ...helpers import cplx_to_native


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
    assert torch.allclose(cplx_to_native(layer(x)), converted(cplx_to_native(x)), atol=tol)


def test_from_native_starts_from_torch():
    torch.manual_seed(1)
    reference = torch.nn.Conv2d(2, 3, 3, padding=1, dtype=torch.complex64)
    layer = from_native(reference)
    x = torch.randn(1, 2, 5, 5, dtype=torch.complex64)
    assert torch.allclose(cplx_to_native(layer(cplx.from_complex(x))), reference(x), atol=1e-5)
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


class _Net(torch.nn.Module):
    """A custom model whose forward works on Cplx and on native complex tensors."""

    def __init__(self):
        super().__init__()
        self.conv = cnn.CplxConv1d(2, 3, 3)
        self.body = cnn.CplxSequential(cnn.CplxLinear(12, 5), cnn.CplxIdentity(), cnn.CplxLinear(5, 4))
        self.heads = torch.nn.ModuleList([cnn.CplxLinear(4, 2), cnn.CplxLinear(4, 1, bias=False)])

    def forward(self, x):
        x = self.body(self.conv(x).flatten(-2))
        return self.heads[0](x), self.heads[1](x)


def test_whole_model_round_trip():
    torch.manual_seed(0)
    model = _Net().double()
    model.heads[1].eval()
    converted = to_native(model)
    assert isinstance(converted, _Net) and type(converted.body) is torch.nn.Sequential
    assert type(converted.body[1]) is torch.nn.Identity
    assert all(p.dtype == torch.complex128 for p in converted.parameters())
    assert not converted.heads[1].training and converted.heads[0].training
    x = cplx.randn(3, 2, 6, dtype=torch.float64)
    for ours, theirs in zip(model(x), converted(cplx_to_native(x))):
        torch.testing.assert_close(cplx_to_native(ours), theirs)
    back = from_native(converted)
    assert type(back.body) is cnn.CplxSequential and type(back.body[1]) is cnn.CplxIdentity
    for (name, a), (_, b) in zip(model.named_parameters(), back.named_parameters()):
        assert torch.equal(a, b), name
    # copies: the original model shares nothing with the conversions
    with torch.no_grad():
        converted.conv.weight.zero_()
        back.conv.weight.real.zero_()
    assert model.conv.weight.real.abs().sum() > 0


def test_whole_model_names_the_unsupported_layer():
    from cplxmodule.nn.masked import CplxLinearMasked

    model = torch.nn.Sequential(cnn.CplxSequential(cnn.CplxLinear(2, 2), cnn.CplxModReLU()))
    with pytest.raises(TypeError, match=r"got CplxModReLU at `0\.1`$"):
        to_native(model)
    with pytest.raises(TypeError, match=r"got CplxLinearMasked at `1`$"):
        to_native(cnn.CplxSequential(cnn.CplxLinear(2, 2), CplxLinearMasked(2, 2)))
    native_model = torch.nn.Sequential(torch.nn.Linear(2, 2, dtype=torch.complex64), torch.nn.Tanh())
    with pytest.raises(TypeError, match=r"got Tanh at `1`$"):
        from_native(native_model)


def test_from_native_keeps_real_layers_inside_a_model():
    model = torch.nn.Sequential(torch.nn.Linear(2, 3, dtype=torch.complex64), torch.nn.Linear(3, 1))
    converted = from_native(model)
    assert type(converted[0]) is cnn.CplxLinear and type(converted[1]) is torch.nn.Linear
    assert torch.equal(converted[1].weight, model[1].weight)
    assert converted[1].weight is not model[1].weight
