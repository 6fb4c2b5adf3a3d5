"""The spectral layers compiled: torch's FFT kernels as operators on real tensors.

Under ``torch.compile`` (not export) each Fourier transform is one opaque
operator of the ``cplxmodule`` namespace taking and returning real tensors
(cplxmodule/cplx/_fft.py), so that no complex tensor appears in the forward
or the backward graph that AOTAutograd hands to inductor. The graphs are
recorded by a backend of AOTAutograd that runs them as they are; values and
gradients (of the parts and of a learnable window) are checked against
torch's own transforms of complex tensors, with a fixed batch in float64 and
a dynamic one in float32.
"""

import numpy as np
import pytest
import torch
from scipy import signal
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from cplxmodule import nn
from cplxmodule.cplx import Cplx, fftn, stft
from ..helpers import cplx_to_native, native_spectral_pool

pytestmark = [pytest.mark.inductor, pytest.mark.usefixtures("one_thread")]


def _analytic_reference(x):
    # scipy's analytic signal is linear: that of each unit vector is a row of the map
    matrix = torch.from_numpy(signal.hilbert(np.eye(x.shape[-1]))).to(x.dtype.to_complex())
    return x.to(matrix.dtype) @ matrix


# id -> (layer factory, the input's shape after the batch, a real input, native reference)
CASES = {
    "STFT": (lambda: nn.CplxSTFT(16, hop_length=4, win_length=12, learnable_window=True),
             (50,), False,
             lambda layer, z: torch.stft(z, 16, 4, 12, window=layer.window, onesided=False,
                                         return_complex=True)),
    "STFT-normalized-constant": (
        lambda: nn.CplxSTFT(8, hop_length=3, normalized=True, pad_mode="constant"), (21,), False,
        lambda layer, z: torch.stft(z, 8, 3, window=layer.window, normalized=True,
                                    pad_mode="constant", onesided=False, return_complex=True)),
    "ISTFT": (lambda: nn.CplxISTFT(16, hop_length=4, learnable_window=True), (16, 9), False,
              lambda layer, z: torch.istft(z, 16, 4, window=layer.window, onesided=False,
                                           return_complex=True)),
    "FFT": (lambda: nn.CplxFFT(dim=1, norm="ortho", n=10), (7, 3), False,
            lambda layer, z: torch.fft.fft(z, n=10, dim=1, norm="ortho")),
    "IFFT": (lambda: nn.CplxIFFT(n=5), (3, 8), False,
             lambda layer, z: torch.fft.ifft(z, n=5)),
    "Analytic": (lambda: nn.CplxAnalytic(), (2, 9), True,
                 lambda layer, x: _analytic_reference(x)),
    # an even length (its Nyquist frequency), along a middle dimension
    "Analytic-even-dim1": (lambda: nn.CplxAnalytic(dim=1), (8, 3), True,
                           lambda layer, x: _analytic_reference(x.transpose(1, 2)).transpose(1, 2)),
    "SpectralPool2d": (lambda: nn.CplxSpectralPool2d((3, 4)), (2, 6, 7), False,
                       lambda layer, z: native_spectral_pool(z, (3, 4))),
}


def _recording_backend(graphs):
    """AOTAutograd's graphs, forward and backward, appended to ``graphs`` and run as they are."""

    def record(graph, example_inputs):
        graphs.append(graph)
        return make_boxed_func(graph.forward)

    return aot_autograd(fw_compiler=record, bw_compiler=record)


def _complex_nodes(graph):
    return [node.format_node() for node in graph.graph.nodes
            if isinstance(node.meta.get("val"), torch.Tensor) and node.meta["val"].is_complex()]


def _run(name, layer, batch, dtype, compiled):
    """The layer's output and the gradients of its input and parameters, and the reference's."""
    _, shape, real, reference = CASES[name]
    generator = torch.Generator().manual_seed(batch)
    parts = [torch.randn((batch,) + shape, dtype=dtype, generator=generator)
             for _ in range(1 if real else 2)]
    ours = [p.clone().requires_grad_() for p in parts]
    native = (parts[0] if real else torch.complex(*parts)).clone().requires_grad_()
    out = compiled(ours[0] if real else Cplx(*ours))
    expected = reference(layer, native)
    weight = torch.randn(expected.shape, dtype=expected.dtype, generator=generator)
    # a real loss: the sum of Re(conj(weight) * output)
    (weight.real * out.real + weight.imag * out.imag).sum().backward()
    params = [p.grad.clone() for p in layer.parameters()]
    layer.zero_grad()
    (torch.view_as_real(weight) * torch.view_as_real(expected)).sum().backward()
    grads = [p.grad for p in ours]
    native_grads = [native.grad] if real else [native.grad.real, native.grad.imag]
    return ((cplx_to_native(out), grads, params),
            (expected, native_grads, [p.grad for p in layer.parameters()]))


@pytest.mark.parametrize("name", CASES)
def test_compiled_graphs_hold_no_complex_tensor(name):
    torch._dynamo.reset()
    layer = CASES[name][0]().double()
    graphs = []
    compiled = torch.compile(layer, backend=_recording_backend(graphs), fullgraph=True)
    (out, grads, params), (expected, native_grads, native_params) = _run(
        name, layer, 3, torch.float64, compiled)
    assert len(graphs) == 2, "a forward and a backward graph"
    for graph in graphs:
        assert _complex_nodes(graph) == []
        # the transforms are the operators on real tensors, forward and backward
        assert any(str(node.target).startswith("cplxmodule.") for node in graph.graph.nodes)
    torch.testing.assert_close(out, expected)
    for got, want in zip(grads + params, native_grads + native_params):
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("name", CASES)
def test_compiled_with_dynamic_batch_matches_native(name):
    torch._dynamo.reset()
    layer = CASES[name][0]()
    compiled = torch.compile(layer, backend="aot_eager", fullgraph=True, dynamic=True)
    for batch in (2, 5):
        (out, grads, params), (expected, native_grads, native_params) = _run(
            name, layer, batch, torch.float32, compiled)
        torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
        for got, want in zip(grads + params, native_grads + native_params):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
        layer.zero_grad()


@pytest.mark.parametrize("op, args", [
    ("fft_c2c", lambda: (torch.randn(2, 3, 4), torch.randn(2, 3, 4), [1, 2], "ortho", True)),
    ("fft_c2c_split", lambda: (torch.randn(3, 4), torch.randn(3, 4), [1], "backward", False)),
    ("fft_interleaved", lambda: (torch.randn(2, 5, 2), [1], "forward", True)),
    ("fft_interleaved_split", lambda: (torch.randn(3, 4, 2), [0], "backward", False)),
    ("hilbert_transform", lambda: (torch.randn(3, 6), 1)),
    ("hilbert_transform", lambda: (torch.randn(5, 2), 0)),
])
def test_operators_fake_and_autograd_agree_with_their_kernels(op, args):
    # torch's checks of a custom operator: its fake implementation (shapes,
    # strides) against its kernel, its autograd registration, and its
    # gradients under AOTAutograd against eager ones (the gradients' values
    # are checked against torch's complex transforms by the cases above)
    args = [a.double().requires_grad_() if isinstance(a, torch.Tensor) else a for a in args()]
    torch.library.opcheck(getattr(torch.ops.cplxmodule, op), args)


@pytest.mark.parametrize("layout", ["odd offset", "transposed"])
def test_an_interleaved_input_without_a_complex_view_is_copied(layout):
    # a contiguous tensor at an odd offset, and pairs strided across the
    # batch, view no complex tensor: the operator reads a copy
    base = torch.randn(2 * 3 * 4 + 1, dtype=torch.float64)
    pairs = base[1:].view(3, 4, 2) if layout == "odd offset" else base[1:].view(4, 3, 2)
    if layout == "transposed":
        pairs = pairs.transpose(0, 1)
    expected = torch.fft.fft(torch.complex(pairs[..., 0], pairs[..., 1]), dim=1)
    got = torch.ops.cplxmodule.fft_interleaved(pairs, [1], "backward", True)
    torch.testing.assert_close(torch.view_as_complex(got), expected)


@pytest.mark.parametrize("s, dim", [(None, None), ((3, -1), None), ((6, 2), (0, -2)),
                                    (None, (3, 1))])
def test_compiled_fftn_matches_native(s, dim):
    torch._dynamo.reset()
    z = torch.randn(2, 3, 4, 5, dtype=torch.complex128)
    compiled = torch.compile(lambda x: fftn(x, s=s, dim=dim, norm="forward"),
                             backend="aot_eager", fullgraph=True)
    expected = torch.fft.fftn(z, s=s, dim=dim, norm="forward")
    torch.testing.assert_close(cplx_to_native(compiled(Cplx(z.real, z.imag))), expected)


def test_compiled_fftn_names_a_dimension_out_of_range():
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: fftn(x, dim=(4,)), backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match=r"fftn: `dim` must be in \[-4, 3\] for a 4-d input"):
        compiled(Cplx(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)))


def test_compiled_stft_of_a_single_signal_matches_native():
    torch._dynamo.reset()
    z = torch.randn(40, dtype=torch.complex128)
    window = torch.hann_window(10, dtype=torch.float64)
    compiled = torch.compile(lambda x: stft(x, 12, 5, 10, window, center=False),
                             backend="aot_eager", fullgraph=True)
    expected = torch.stft(z, 12, 5, 10, window, center=False, onesided=False,
                          return_complex=True)
    torch.testing.assert_close(cplx_to_native(compiled(Cplx(z.real, z.imag))), expected)


def test_compiled_istft_checks_the_window_envelope():
    # a Hann window at a hop of n_fft vanishes at the frames' edges, as torch.istft refuses
    torch._dynamo.reset()
    layer = nn.CplxISTFT(8, hop_length=8)
    compiled = torch.compile(layer, backend="aot_eager", fullgraph=True)
    spectrum = Cplx(torch.randn(2, 8, 5), torch.randn(2, 8, 5))
    with pytest.raises(RuntimeError, match="CplxISTFT: the overlap-added squared window vanishes"):
        compiled(spectrum)
