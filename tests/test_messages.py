"""One message format for bad input: "{where}: `{argument}` must be ..., got ...".

``where`` is the function's name in the functional core and the class name
in a layer; the same mistake gets the same words from both.
"""

import re

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.nn.masked import CplxLinearMasked, LinearMasked, deploy_masks, magnitude_masks
from cplxmodule.nn.relevance import compute_ard_masks

FORMAT = re.compile(r"^(?P<where>[\w.\[\]]+): `(?P<arg>[\w\[\]]+)` must .*, got .*[^.]$", re.S)

z, w = cplx.randn(2, 3), cplx.randn(4, 3)
CASES = [
    ("linear", "input", lambda: cplx.linear(torch.randn(2, 3), w)),
    ("linear", "input", lambda: cplx.linear(cplx.randn(2, 5), w)),
    ("linear", "bias", lambda: cplx.linear(z, w, cplx.randn(5))),
    ("linear", "strategy", lambda: cplx.linear(z, w, strategy="fast")),
    ("bilinear", "input2", lambda: cplx.bilinear(z, cplx.randn(2, 2), cplx.randn(4, 3, 3))),
    ("conv2d", "input", lambda: cplx.conv2d(cplx.randn(1, 2, 5, 5), cplx.randn(4, 3, 3, 3))),
    ("conv2d", "padding_mode", lambda: cplx.conv2d(cplx.randn(1, 3, 5, 5), cplx.randn(4, 3, 3, 3), padding_mode="mirror")),
    ("conv_transpose1d", "input", lambda: cplx.conv_transpose1d(cplx.randn(2, 5), cplx.randn(3, 2, 3))),
    ("einsum", "equation", lambda: cplx.einsum(1, z)),
    ("max_pool2d", "input", lambda: cplx.max_pool2d(torch.randn(1, 1, 4, 4), 2)),
    ("exp", "input", lambda: cplx.exp(torch.randn(3))),
    ("to_complex", "input", lambda: cplx.to_complex(torch.randn(3))),
    ("from_interleaved_real", "input", lambda: cplx.from_interleaved_real(torch.randn(3))),
    ("CplxLinear", "input", lambda: cnn.CplxLinear(5, 4)(z)),
    ("CplxLinear", "input", lambda: cnn.CplxLinear(3, 4)(torch.randn(2, 3))),
    ("CplxConv2d", "input", lambda: cnn.CplxConv2d(2, 4, 3)(cplx.randn(1, 3, 5, 5))),
    ("CplxConv1d", "in_channels", lambda: cnn.CplxConv1d(3, 4, 3, groups=2)),
    ("CplxConvTranspose2d", "padding_mode", lambda: cnn.CplxConvTranspose2d(2, 2, 3, padding_mode="reflect")),
    ("CplxConvTranspose1d", "output_size", lambda: cnn.CplxConvTranspose1d(2, 2, 3)(cplx.randn(1, 2, 4), output_size=[30])),
    ("CplxBatchNorm2d", "input", lambda: cnn.CplxBatchNorm2d(3)(cplx.randn(2, 3, 4))),
    ("CplxLayerNorm", "input", lambda: cnn.CplxLayerNorm(3)(cplx.randn(2, 4))),
    ("dropout2d", "input", lambda: cplx.dropout2d(cplx.randn(2, 3), 0.5)),
    ("layer_norm", "input", lambda: cplx.layer_norm(cplx.randn(2, 4), 3)),
    ("batch_norm", "input", lambda: cplx.batch_norm(cplx.randn(1, 3), None, None, training=True)),
    ("CplxDropout2d", "input", lambda: cnn.CplxDropout2d()(cplx.randn(2, 3))),
    ("CplxLinear", "input", lambda: cnn.CplxLinear(3, 4)(cplx.randn(2, 3, dtype=torch.float64))),
    ("InterleavedRealToCplx", "input", lambda: cnn.InterleavedRealToCplx()(cplx.randn(2))),
    ("InterleavedRealToCplx", "input", lambda: cnn.InterleavedRealToCplx()(torch.randn(2, 5))),
    ("TensorToCplx", "input", lambda: cnn.TensorToCplx()(torch.randn(2, 3))),
    ("AsTypeCplx", "input", lambda: cnn.AsTypeCplx()([1.0])),
    ("batch_norm", "running_cov", lambda: cplx.batch_norm(cplx.randn(2, 3), torch.zeros(2, 3), None)),
    ("compute_ard_masks", "module", lambda: compute_ard_masks(torch.nn.ReLU())),
    ("magnitude_masks", "module", lambda: magnitude_masks(torch.nn.ReLU(), 0.5)),
    ("magnitude_masks", "keep", lambda: magnitude_masks(torch.nn.Linear(2, 2), 2.0)),
    ("deploy_masks", "state_dict", lambda: deploy_masks(LinearMasked(3, 2), state_dict={"x.mask": torch.ones(1)}, strict=True)),
    ("LinearMasked", "mask", lambda: LinearMasked(3, 2).mask_([1.0])),
    ("CplxLinearMasked", "mask", lambda: CplxLinearMasked(3, 2).mask_(torch.ones(4))),
]


@pytest.mark.parametrize("where, arg, call", CASES, ids=[f"{w}-{a}" for w, a, _ in CASES])
def test_message_format(where, arg, call):
    with pytest.raises((TypeError, ValueError, RuntimeError)) as info:
        call()
    match = FORMAT.match(str(info.value))
    assert match, str(info.value)
    assert (match["where"], match["arg"]) == (where, arg)


def test_layer_and_core_say_the_same_for_one_mistake():
    x = cplx.randn(4, 7)
    layer = cnn.CplxLinear(8, 8)
    messages = []
    for call, where in ((lambda: layer(x), "CplxLinear"), (lambda: cplx.linear(x, layer.weight), "linear")):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert message.startswith(f"{where}: ")
        messages.append(message[len(where) + 2:])
    assert messages[0] == messages[1] == "`input` must have shape (..., 8), got (4, 7)"
