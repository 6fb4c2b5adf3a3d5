"""One message format for bad input: "{where}: `{argument}` must be ..., got ...".

``where`` is the function's name in the functional core and the class name
in a layer; the same mistake gets the same words from both.
"""

import re

import numpy
import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.nn.masked import CplxLinearMasked, LinearMasked, deploy_masks, magnitude_masks
from cplxmodule.utils import (
    acpr_calc, bandwidth_power, complex_view, fftshift, fix_dim, pwelch, window_view,
)

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
    ("CplxConv1d", "groups", lambda: cnn.CplxConv1d(3, 4, 3, groups=2)),
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
    ("CplxModReLU", "threshold", lambda: cnn.CplxModReLU("0.1")),
    ("magnitude_masks", "module", lambda: magnitude_masks(torch.nn.ReLU(), 0.5)),
    ("magnitude_masks", "keep", lambda: magnitude_masks(torch.nn.Linear(2, 2), 2.0)),
    ("deploy_masks", "state_dict", lambda: deploy_masks(LinearMasked(3, 2), state_dict={"x.mask": torch.ones(1)}, strict=True)),
    ("LinearMasked", "mask", lambda: LinearMasked(3, 2).mask_([1.0])),
    ("CplxLinearMasked", "mask", lambda: CplxLinearMasked(3, 2).mask_(torch.ones(4))),
]

# cplxmodule.utils: every raise site, reached from each public function whose
# private helpers it lives in (the message names the function the user called)
t = torch.randn(8)
xc = torch.randn(2, 64, dtype=torch.complex64)


def bw(x=xc, **kwargs):
    return bandwidth_power(x, **{"fs": 1.0, "bands": [(0.1, 0.2)], **kwargs})


def acpr(signal=xc, sample_rate=1.0, mcf=0.0, mcb=0.1, **kwargs):
    return acpr_calc(signal, sample_rate, mcf, mcb, **kwargs)


UTILS_CASES = [
    ("fix_dim", "dim", lambda: fix_dim(3, 3)),
    ("fix_dim", "dim", lambda: fix_dim(1.0, 3)),
    ("fix_dim", "dim", lambda: fix_dim(True, 3)),
    ("fix_dim", "n_dim", lambda: fix_dim(0, "3")),
    ("complex_view", "x", lambda: complex_view([1.0, 2.0])),
    ("complex_view", "x", lambda: complex_view(xc)),
    ("complex_view", "dim", lambda: complex_view(t, dim=1)),
    ("window_view", "x", lambda: window_view(numpy.zeros(8), 0, 2, 1)),
    ("window_view", "dim", lambda: window_view(t, 1, 2, 1)),
    ("window_view", "dim", lambda: window_view(t, "0", 2, 1)),
    ("window_view", "size", lambda: window_view(t, 0, 9, 1)),
    ("window_view", "size", lambda: window_view(t, 0, 2.0, 1)),
    ("window_view", "stride", lambda: window_view(t, 0, 2, 0)),
    ("window_view", "at", lambda: window_view(t, 0, 2, 1, at=2)),
    ("pwelch", "x", lambda: pwelch([1.0, 2.0])),
    ("pwelch", "x", lambda: pwelch(torch.tensor(1.0))),
    ("pwelch", "dim", lambda: pwelch(xc, dim=2)),
    ("pwelch", "fs", lambda: pwelch(xc, fs=0)),
    ("pwelch", "nperseg", lambda: pwelch(xc, nperseg=32.0)),
    ("pwelch", "nperseg", lambda: pwelch(xc, nperseg=0)),
    ("pwelch", "nperseg", lambda: pwelch(xc, nperseg=128)),
    ("pwelch", "nperseg", lambda: pwelch(xc, window=torch.ones(10), nperseg=12)),
    ("pwelch", "window", lambda: pwelch(xc, window="foo")),
    ("pwelch", "window", lambda: pwelch(xc, window=["a", "b"])),
    ("pwelch", "window", lambda: pwelch(xc, window=torch.ones(2, 5))),
    ("pwelch", "n_overlap", lambda: pwelch(xc, nperseg=32, n_overlap=32)),
    ("pwelch", "n_overlap", lambda: pwelch(xc, nperseg=32, n_overlap=1.5)),
    ("pwelch", "nfft", lambda: pwelch(xc, nperseg=32, nfft=16)),
    ("pwelch", "nfft", lambda: pwelch(xc, nperseg=32, nfft="64")),
    ("pwelch", "return_onesided", lambda: pwelch(xc, return_onesided=True)),
    ("pwelch", "average", lambda: pwelch(xc, average="max")),
    ("pwelch", "scaling", lambda: pwelch(xc, scaling="psd")),
    ("pwelch", "detrend", lambda: pwelch(xc, detrend="cubic")),
    ("fftshift", "x", lambda: fftshift([1.0])),
    ("fftshift", "dim", lambda: fftshift(t, dim=1)),
    ("fftshift", "dim", lambda: fftshift(t, dim=(0, 1))),
    ("fftshift", "dim", lambda: fftshift(t, dim=0.5)),
    ("bandwidth_power", "x", lambda: bw("signal")),
    ("bandwidth_power", "x", lambda: bw(torch.randn(64))),
    ("bandwidth_power", "x", lambda: bw(torch.tensor(1j))),
    ("bandwidth_power", "dim", lambda: bw(torch.randn(64, 2), dim=-1)),
    ("bandwidth_power", "dim", lambda: bw(dim=2)),
    ("bandwidth_power", "fs", lambda: bw(fs=-1.0)),
    ("bandwidth_power", "nperseg", lambda: bw(nperseg=0)),
    ("bandwidth_power", "nperseg", lambda: bw(nperseg=2.5)),
    ("bandwidth_power", "nperseg", lambda: bw(nperseg=128)),
    ("bandwidth_power", "nperseg", lambda: bw(window="hann", nperseg=-1)),
    ("bandwidth_power", "window", lambda: bw(window="foo")),
    ("bandwidth_power", "window", lambda: bw(window=torch.ones(2, 2))),
    ("bandwidth_power", "bands", lambda: bw(bands=5)),
    ("bandwidth_power", "bands", lambda: bw(bands=[("a", "b")])),
    ("bandwidth_power", "bands", lambda: bw(bands=[(0.1, 0.2, 0.3)])),
    ("bandwidth_power", "bands", lambda: bw(bands=[(0.2, 0.1)])),
    ("bandwidth_power", "n_overlap", lambda: bw(n_overlap=64)),
    ("bandwidth_power", "scaling", lambda: bw(scaling="psd")),
    ("acpr_calc", "signal", lambda: acpr("signal")),
    ("acpr_calc", "signal", lambda: acpr(torch.randn(64))),
    ("acpr_calc", "signal", lambda: acpr(torch.tensor(1j))),
    ("acpr_calc", "dim", lambda: acpr(torch.randn(64, 2), dim=-1)),
    ("acpr_calc", "dim", lambda: acpr(dim=2)),
    ("acpr_calc", "sample_rate", lambda: acpr(sample_rate=0.0)),
    ("acpr_calc", "mcf", lambda: acpr(mcf="near")),
    ("acpr_calc", "mcf", lambda: acpr(mcf=[0.1])),
    ("acpr_calc", "mcb", lambda: acpr(mcb=0.0)),
    ("acpr_calc", "acf", lambda: acpr(acf="near")),
    ("acpr_calc", "acb", lambda: acpr(acf=[0.2], acb={"a": 1})),
    ("acpr_calc", "acb", lambda: acpr(acf=[0.2, -0.2], acb=[0.1] * 3)),
    ("acpr_calc", "acb", lambda: acpr(acf=[0.2], acb=-0.1)),
    ("acpr_calc", "nperseg", lambda: acpr(nperseg=0)),
    ("acpr_calc", "nperseg", lambda: acpr(nperseg=2.5)),
    ("acpr_calc", "nperseg", lambda: acpr(nperseg=128)),
]
CASES += UTILS_CASES


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


def test_odd_size_warning_keeps_the_published_words_and_names_the_function():
    # code written for the published package filters the warning by its start
    with pytest.warns(RuntimeWarning) as record:
        complex_view(torch.randn(3, 5))
    (message,) = [str(w.message) for w in record]
    assert message.startswith("Odd dimension size for the complex data unpacking")
    assert "complex_view: `x`" in message and "`dim` = 1" in message


# Where the published package raised with its own words, ours start with them
# (compared with the published package: "`Cplx.einsum` does not support more
# than 2 tensors. Got 3.", "`einsum()` requires at least one tensor." and
# "Complex parameter disallows redundant key(s) in state_dict: ['foo']."), so
# that code matching on them keeps working.


def test_einsum_with_too_many_operands_keeps_the_published_words():
    with pytest.raises(RuntimeError) as info:
        cplx.einsum("ij,jk->ik", z.t(), z, z)
    assert str(info.value).startswith("`Cplx.einsum` does not support more")
    assert "3" in str(info.value) and "'ij,jk->ik'" in str(info.value)
    with pytest.raises(RuntimeError) as info:
        cplx.einsum("ij->ji")
    assert str(info.value).startswith("`einsum()` requires at least one tensor")


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("extra", ["", "foo"])
def test_redundant_parameter_keys_keep_the_published_words(strict, extra):
    par = cnn.CplxParameter(cplx.randn(3))
    before = par.real.clone(), par.imag.clone()
    state = {"real": torch.ones(3), "imag": torch.ones(3), extra: torch.ones(3)}
    with pytest.raises(RuntimeError) as info:
        par.load_state_dict(state, strict=strict)
    (line,) = [s for s in str(info.value).splitlines() if "redundant" in s]
    assert line.strip().startswith("Complex parameter disallows redundant key(s) in state_dict: ")
    assert repr(extra) in line
    assert torch.equal(par.real, before[0]) and torch.equal(par.imag, before[1])
    layer = cnn.CplxLinear(3, 2)
    state = {**layer.state_dict(), "weight.foo": torch.ones(1)}
    with pytest.raises(RuntimeError, match=r"disallows redundant key\(s\) in state_dict: \['weight.foo'\]"):
        layer.load_state_dict(state, strict=strict)
