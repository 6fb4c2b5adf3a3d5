"""The outputs and the first stage of ``CplxUNet`` (``cplxmodule/models/unet.py``).

A ratio mask of the input (DCUNet, the default), the input plus the
network's map (residual), or the map (direct); the first level strided (the
default) or at full resolution. The map is read with a forward hook on the
last transposed convolution, so each output is checked against what the
network computed, not against the model's own arithmetic.
"""

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.models import CplxUNet
from cplxmodule.nn import CplxRatioMask

pytestmark = pytest.mark.usefixtures("one_thread")


def _map_and_output(model, x):
    """The last transposed convolution's output (the map) and the model's output."""
    seen = {}
    handle = model.decoder[0].register_forward_hook(lambda m, args, out: seen.update(map=out))
    with torch.no_grad():
        out = model(x)
    handle.remove()
    return seen["map"], out


def _native(z):
    return cplx.to_complex(z)


@pytest.mark.parametrize("output", ["mask", "residual", "direct"])
def test_each_output_is_what_the_network_computed(output):
    torch.manual_seed(0)
    model = CplxUNet(channels=(2, 3), output=output, dtype=torch.float64).eval()
    x = cplx.randn(2, 1, 7, 5, dtype=torch.float64)
    h, out = _map_and_output(model, x)
    expected = {
        "mask": lambda: torch.tanh(h_.abs()) * torch.exp(1j * torch.angle(h_)) * _native(x),
        "residual": lambda: _native(x) + h_,
        "direct": lambda: h_,
    }
    h_ = _native(h)
    torch.testing.assert_close(_native(out), expected[output]())
    assert (model.ratio_mask is not None) == (output == "mask")


def test_the_defaults_are_dcunets_unchanged():
    # a ratio mask and strides of 2 everywhere, as before the options existed
    torch.manual_seed(1)
    default = CplxUNet(channels=(2, 3))
    torch.manual_seed(1)
    explicit = CplxUNet(channels=(2, 3), output="mask", first_stride=2)
    for (key, a), (other, b) in zip(default.state_dict().items(), explicit.state_dict().items()):
        assert key == other and torch.equal(a, b)
    assert isinstance(default.ratio_mask, CplxRatioMask)
    assert [m.conv.stride for m in (*default.encoder, *default.decoder)] == [(2, 2)] * 4
    settings = repr(default).splitlines()[1]
    assert settings.strip() == "in_channels=1, channels=(2, 3), kernel_size=3, negative_slope=0.1"


@pytest.mark.parametrize("size", [(7, 5), (16, 16), (1, 3)])
def test_an_unstrided_first_stage_keeps_the_resolution(size):
    model = CplxUNet(channels=(2, 3), output="residual", first_stride=1).eval()
    seen = {}
    model.encoder[0].register_forward_hook(lambda m, args, out: seen.update(first=out))
    x = cplx.randn(2, 1, *size)
    with torch.no_grad():
        assert model(x).shape == x.shape
    assert seen["first"].shape == (2, 2, *size)
    assert model.encoder[0].conv.stride == (1, 1) and model.decoder[0].conv.stride == (1, 1)
    assert model.encoder[1].conv.stride == (2, 2)


def test_a_residual_unet_with_a_zero_last_layer_is_the_identity():
    # residual learning starts from the input: a zero correction returns it exactly
    model = CplxUNet(channels=(2,), output="residual", first_stride=1).eval()
    with torch.no_grad():
        for p in model.decoder[0].parameters():
            p.zero_()
    x = cplx.randn(3, 1, 6, 6)
    with torch.no_grad():
        out = model(x)
    assert torch.equal(out.real, x.real) and torch.equal(out.imag, x.imag)


def test_repr_shows_the_options():
    text = repr(CplxUNet(channels=(2,), output="direct", first_stride=1))
    assert "output='direct', first_stride=1" in text


@pytest.mark.parametrize("kwargs, error, message", [
    ({"output": "ratio"}, ValueError, "CplxUNet: `output` must be one of"),
    ({"first_stride": 3}, ValueError, "CplxUNet: `first_stride` must be 1 or 2"),
    ({"first_stride": 0}, ValueError, "CplxUNet: `first_stride` must be a positive int"),
    ({"output": None}, TypeError, "CplxUNet: `output`"),
])
def test_bad_options_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        CplxUNet(**kwargs)
