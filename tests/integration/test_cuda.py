"""Real CUDA devices: complex, masked and Bayesian models moved with ``.cuda()`` compute as on the CPU.

Every test here needs a GPU and is skipped without one; the same properties
are tested without a GPU elsewhere (the meta device, a patched broadcast of
``replicate``, gloo on the CPU).
"""

import copy

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.nn import (
    CplxBatchNorm2d,
    CplxConv2d,
    CplxDataParallel,
    CplxGRU,
    CplxLinear,
    CplxMaxPool2d,
    CplxModReLU,
    CplxSequential,
    CplxToReal,
    RealToCplx,
)
from cplxmodule.nn.masked import compact, to_masked
from cplxmodule.nn.relevance import compute_ard_masks, penalties, to_bayesian

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _convnet():
    torch.manual_seed(0)
    return CplxSequential(
        CplxConv2d(2, 8, 3, padding=1, padding_mode="circular"),
        CplxBatchNorm2d(8),
        CplxModReLU(0.1),
        CplxMaxPool2d(2),
        CplxConv2d(8, 4, 3),
    )


def _native_input(*shape, device="cpu"):
    generator = torch.Generator().manual_seed(1)
    return torch.randn(*shape, dtype=torch.complex64, generator=generator).to(device)


def _close(a, b, **kwargs):
    a, b = cplx.to_complex(a), cplx.to_complex(b)
    torch.testing.assert_close(a.cpu(), b.cpu(), rtol=1e-4, atol=1e-5, **kwargs)


def test_a_complex_convnet_moved_to_cuda_computes_as_on_the_cpu():
    model = _convnet().eval()
    x = _native_input(4, 2, 16, 16)
    expected = model(x)
    gpu = copy.deepcopy(model).cuda()
    assert all(p.is_cuda for p in gpu.parameters()) and all(b.is_cuda for b in gpu.buffers())
    _close(gpu(x.cuda()), expected)


def test_training_on_cuda_takes_the_gradient_of_the_cpu():
    model, x = _convnet(), _native_input(4, 2, 16, 16)
    gpu = copy.deepcopy(model).cuda()
    for m, inp in ((model, x), (gpu, x.cuda())):
        abs(m(inp)).sum().backward()
    for p, q in zip(model.parameters(), gpu.parameters()):
        torch.testing.assert_close(p.grad, q.grad.cpu(), rtol=1e-3, atol=1e-4)


def test_a_native_complex_leaf_on_cuda_gets_its_gradient():
    x = _native_input(3, 5, device="cuda").requires_grad_()
    layer = CplxLinear(5, 2).cuda()
    abs(layer(x)).sum().backward()
    assert x.grad is not None and x.grad.is_cuda and x.grad.dtype == torch.complex64


def test_masks_follow_their_weights_to_cuda_and_back():
    dense = CplxSequential(CplxLinear(6, 5), CplxModReLU(), CplxLinear(5, 3))
    masked = to_masked(dense)
    for layer in (masked[0], masked[2]):
        layer.mask = torch.rand(layer.weight.shape) > 0.3
    x = _native_input(4, 6)
    expected = masked(x)
    masked.cuda()
    assert all(layer.mask.is_cuda for layer in (masked[0], masked[2]))
    _close(masked(x.cuda()), expected)
    # a mask set from the CPU lands on the weight's device, and back
    masked[0].mask = torch.ones(5, 6)
    assert masked[0].mask.is_cuda
    assert not masked.cpu()[0].mask.is_cuda


def test_data_parallel_on_one_gpu_splits_a_cplx_batch_and_keeps_masks():
    masked = to_masked(CplxSequential(CplxLinear(6, 5)))
    masked[0].mask = torch.rand(5, 6) > 0.5
    x = cplx.randn(8, 6)
    expected = masked(x)
    parallel = CplxDataParallel(copy.deepcopy(masked).cuda(), device_ids=[0])
    _close(parallel(Cplx(x.real.cuda(), x.imag.cuda())), expected)


def test_the_sparsification_pipeline_runs_on_cuda_as_on_the_cpu():
    model = CplxSequential(CplxLinear(8, 16), CplxModReLU(), CplxLinear(16, 4))
    bayes = to_bayesian(model, "vd").cuda()
    optimizer = torch.optim.Adam(bayes.parameters(), lr=1e-2)
    x = _native_input(32, 8, device="cuda")
    for _ in range(3):
        optimizer.zero_grad()
        loss = abs(bayes(x)).pow(2).mean() + 1e-3 * sum(penalties(bayes))
        loss.backward()
        optimizer.step()
    masks = compute_ard_masks(bayes, threshold=-3.0)
    assert all(m.is_cuda for m in masks.values())
    masked = to_masked(bayes, masks).eval()
    small = compact(masked)
    _close(small(x), masked(x))


def test_a_recurrent_layer_on_cuda_computes_as_on_the_cpu():
    torch.manual_seed(0)
    gru = CplxGRU(4, 6, num_layers=2, bidirectional=True)
    x = _native_input(7, 3, 4)
    expected, h = gru(x)
    out, h_gpu = copy.deepcopy(gru).cuda()(x.cuda())
    _close(out, expected)
    _close(h_gpu, h)


@pytest.mark.inductor
def test_compiled_on_cuda_equals_eager():
    model = torch.nn.Sequential(
        RealToCplx(), CplxLinear(16, 32), CplxModReLU(0.1), CplxLinear(32, 4), CplxToReal()
    ).cuda()
    x = torch.randn(64, 32, device="cuda")
    compiled = torch.compile(model, fullgraph=True)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
