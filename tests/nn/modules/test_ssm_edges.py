"""``CplxS4D`` and ``causal_fftconv`` at empty sizes, against a direct convolution."""

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import nn


@pytest.mark.parametrize("channels_last, shape", [(False, (2, 3, 0)), (False, (3, 0)),
                                                  (True, (2, 0, 3)), (True, (0, 3))])
def test_s4d_refuses_an_empty_sequence_naming_itself_and_input(channels_last, shape):
    layer = nn.CplxS4D(3, d_state=4, channels_last=channels_last)
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    with pytest.raises(ValueError, match=r"^CplxS4D: `input` must have a length L of at least 1"):
        layer(cplx.randn(*shape))
    assert all(torch.equal(before[k], v) for k, v in layer.state_dict().items())


@pytest.mark.parametrize("out_proj", [False, True])
def test_s4d_on_an_empty_batch(out_proj):
    layer = nn.CplxS4D(3, d_state=4, out_proj=out_proj)
    x = cplx.randn(0, 3, 5)
    x.real.requires_grad_()
    output = layer(x)
    assert output.shape == (0, 3, 5)
    output.real.sum().backward()
    assert x.real.grad.shape == (0, 3, 5)


def direct(input, kernel):
    """The causal convolution as a sum of shifted products, in complex128."""
    u = torch.complex(input.real.double(), input.imag.double())
    k = torch.complex(kernel.real.double(), kernel.imag.double())
    length = u.shape[-1]
    shape = torch.broadcast_shapes(u.shape[:-1], k.shape[:-1]) + (length,)
    out = torch.zeros(shape, dtype=torch.complex128)
    for tap in range(min(k.shape[-1], length)):
        out[..., tap:] += k[..., tap:tap + 1] * u[..., :length - tap]
    return out


@pytest.mark.parametrize("input_shape, kernel_shape", [
    ((0, 3, 5), (3, 4)), ((2, 3, 0), (3, 4)), ((2, 3, 5), (3, 0)), ((5,), (0,)), ((2, 3, 5), (3, 4)),
])
def test_causal_fftconv_at_empty_sizes(input_shape, kernel_shape):
    input, kernel = cplx.randn(*input_shape), cplx.randn(*kernel_shape)
    output = cplx.causal_fftconv(input, kernel)
    expected = direct(input, kernel)
    assert output.shape == expected.shape
    torch.testing.assert_close(torch.complex(output.real, output.imag),
                               expected.to(torch.complex64), rtol=1e-5, atol=1e-5)
