"""The small-size path: parts that are the halves of one buffer pass from op to op without copies.

Every value is compared with the same computation on torch's native complex
dtype (forward and gradients); the zero-copy claims are checked on storage
(the data pointer of the packed tensor against the buffer's).
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear, CplxSequential, CplxToCplx
from cplxmodule.nn.masked import CplxLinearMasked
from cplxmodule.nn.relevance import CplxLinearVD
from cplxmodule.nn.relevance import functional as relevance_functional

TOL = dict(rtol=1e-5, atol=1e-6)


def _native_mlp(model):
    """The weights of ``model`` (linear, split ReLU, linear) as torch complex64 leaves."""
    return [
        torch.complex(layer.weight.real, layer.weight.imag).detach().requires_grad_()
        for layer in (model[0], model[2])
    ] + [
        torch.complex(layer.bias.real, layer.bias.imag).detach().requires_grad_()
        for layer in (model[0], model[2])
    ]


def _native_forward(x, w1, w2, b1, b2):
    hidden = F.linear(x, w1, b1)
    hidden = torch.view_as_complex(F.relu(torch.view_as_real(hidden)))
    return F.linear(hidden, w2, b2)


def test_mlp_matches_native_forward_and_gradients():
    torch.manual_seed(0)
    model = CplxSequential(CplxLinear(6, 8), CplxToCplx[torch.nn.ReLU](), CplxLinear(8, 3))
    x = cplx.randn(5, 6)
    native = _native_mlp(model)
    target = torch.randint(0, 3, (5,))
    F.cross_entropy(abs(model(x)), target).backward()
    expected = _native_forward(cplx.to_complex(x), *native)
    F.cross_entropy(expected.abs(), target).backward()
    torch.testing.assert_close(cplx.to_complex(model(x)).detach(), expected.detach(), **TOL)
    for layer, w, b in ((model[0], native[0], native[2]), (model[2], native[1], native[3])):
        torch.testing.assert_close(torch.complex(layer.weight.real.grad, layer.weight.imag.grad),
                                   w.grad, **TOL)
        torch.testing.assert_close(torch.complex(layer.bias.real.grad, layer.bias.imag.grad),
                                   b.grad, **TOL)


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
def test_activation_output_is_packed_without_copy(mode):
    context = {"grad": torch.enable_grad, "no_grad": torch.no_grad,
               "inference_mode": torch.inference_mode}[mode]
    layer, relu = CplxLinear(4, 6), CplxToCplx[torch.nn.ReLU]()
    with context():
        hidden = relu(layer(cplx.randn(3, 4)))
        packed = cplx.to_complex(hidden)
    # the parts are the two halves of one buffer, which the packed tensor views
    assert packed.data_ptr() == hidden.real.data_ptr()
    assert hidden.imag.data_ptr() == hidden.real.data_ptr() + hidden.real.element_size()
    expected = torch.complex(hidden.real, hidden.imag)
    assert torch.equal(packed, expected)


def test_split_function_on_buffer_matches_parts():
    # an elementwise function runs once on the buffer, a non-elementwise one
    # (softmax over the features) on each part, as before
    z = CplxLinear(4, 5)(cplx.randn(3, 4))
    native = cplx.to_complex(z).detach()
    tanh = CplxToCplx[torch.tanh]()(z)
    softmax = CplxToCplx[F.softmax](dim=-1)(z)
    torch.testing.assert_close(cplx.to_complex(tanh).detach(),
                               torch.complex(native.real.tanh(), native.imag.tanh()))
    torch.testing.assert_close(
        cplx.to_complex(softmax).detach(),
        torch.complex(native.real.softmax(-1), native.imag.softmax(-1)),
    )


def test_modulus_of_buffer_matches_torch_with_zero_gradient_at_zero():
    weight = torch.zeros(3, 2, dtype=torch.complex64)
    weight[0] = torch.tensor([3 + 4j, -1e30 + 1e30j])
    layer = CplxLinear(2, 3, bias=False)
    with torch.no_grad():
        layer.weight.real.copy_(weight.real)
        layer.weight.imag.copy_(weight.imag)
    x = Cplx(torch.eye(2))
    modulus = abs(layer(x))
    modulus.sum().backward()
    expected = weight.t().abs()
    torch.testing.assert_close(modulus.detach(), expected)
    # rows 1 and 2 of the weight are zero: their outputs are 0, the gradient too
    grad = torch.complex(layer.weight.real.grad, layer.weight.imag.grad)
    assert torch.all(grad[1:] == 0)
    assert torch.isfinite(layer.weight.real.grad).all()


def test_vd_sample_draws_the_numbers_of_the_functional_form():
    torch.manual_seed(0)
    layer = CplxLinearVD(5, 3)
    with torch.no_grad():
        layer.log_sigma2.fill_(-1.0)
    x = cplx.randn(4, 5)
    torch.manual_seed(1)
    out = layer(x)
    # independent reference: the mean by four real products, the variance by
    # hand, the sample by the public functional form
    mean = cplx.linear(x, layer.weight, layer.bias, strategy="naive")
    var = F.linear(x.real ** 2 + x.imag ** 2, layer.log_sigma2.exp())
    torch.manual_seed(1)
    expected = relevance_functional.local_reparameterization(mean, var)
    torch.testing.assert_close(cplx.to_complex(out).detach(), cplx.to_complex(expected).detach(),
                               **TOL)


def test_masked_inference_matches_native():
    torch.manual_seed(0)
    layer = CplxLinearMasked(6, 4)
    layer.mask = (torch.rand(4, 6) < 0.5).float()
    x = cplx.randn(3, 6)
    weight = torch.complex(layer.weight.real, layer.weight.imag).detach() * layer.mask
    bias = torch.complex(layer.bias.real, layer.bias.imag).detach()
    with torch.inference_mode():
        out = layer(x)
    torch.testing.assert_close(cplx.to_complex(out), F.linear(cplx.to_complex(x), weight, bias))


def test_buffer_halves_never_alias_what_they_must_not():
    buffer = torch.randn(3, 4, 2)
    real, imag = buffer.unbind(-1)
    cases = {
        "swapped": Cplx(imag, real),
        "one half twice": Cplx(real, real),
        "shifted": Cplx(real[1:], imag[:-1]),
    }
    for name, z in cases.items():
        packed = cplx.to_complex(z)
        assert torch.equal(packed, torch.complex(z.real, z.imag)), name
        assert packed.data_ptr() != buffer.data_ptr(), name
    # parts taken without autograd from a buffer that requires grad are cut
    # from its graph: they are packed by a copy, never a view of the buffer
    leaf = torch.randn(3, 4, 2, requires_grad=True)
    with torch.no_grad():
        z = Cplx(*leaf.unbind(-1))
    assert cplx.to_complex(z).data_ptr() != leaf.data_ptr()
    # the halves of a buffer that requires grad: gradients reach the buffer
    z = Cplx(*leaf.unbind(-1))
    cplx.to_complex(z).abs().sum().backward()
    torch.testing.assert_close(leaf.grad, leaf.detach() / leaf.detach().norm(dim=-1, keepdim=True))
