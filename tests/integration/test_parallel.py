"""Masked layers under DataParallel's replicate and scatter, emulated on CPU.

torch's ``replicate`` is run for real; only its broadcast step is patched so
that replica 0 lives on the CPU (sharing the source tensors, as torch does
on the source device) and replica 1 on ``torch.device("meta")``, which
makes any device mix-up an error.
"""

import pytest
import torch
from torch.nn.parallel import replicate

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxDataParallel, CplxLinear
from cplxmodule.nn.masked import (
    Conv2dMasked,
    CplxConv2dMasked,
    CplxLinearMasked,
    LinearMasked,
    named_masks,
)

from ..helpers import as_data_parallel, fake_broadcast, replicate_module


class CplxFlatten(torch.nn.Module):
    def forward(self, input):
        return input.flatten(1)


def real_model():
    model = torch.nn.Sequential(Conv2dMasked(2, 3, 3), torch.nn.Flatten(), LinearMasked(12, 4))
    model[0].mask = torch.rand(3, 2, 3, 3) > 0.5
    model[2].mask = torch.rand(4, 12) > 0.5
    return model


def complex_model():
    model = torch.nn.Sequential(CplxConv2dMasked(2, 3, 3), CplxFlatten(), CplxLinearMasked(12, 4))
    model[0].mask = torch.rand(3, 2, 3, 3) > 0.5
    model[2].mask = torch.rand(4, 12) > 0.5
    return model


def run(model, x):
    out = model(x)
    return out


def inputs_like(model, device="cpu"):
    x = torch.randn(2, 2, 4, 4, device=device)
    if isinstance(model[0].weight, Cplx):
        return Cplx(x, torch.randn_like(x))
    return x


@pytest.mark.parametrize("make", [real_model, complex_model], ids=["real", "complex"])
@pytest.mark.parametrize("detach", [False, True], ids=["train", "eval"])
def test_replicate_masks_follow_each_replica(monkeypatch, make, detach):
    torch.manual_seed(0)
    model = make()
    originals = {name: (mask, mask.clone()) for name, mask in named_masks(model)}
    monkeypatch.setattr(replicate_module, "_broadcast_coalesced_reshape", fake_broadcast(torch.device("meta")))

    replicas = replicate(model, [0, 1], detach=detach)

    for replica, device in zip(replicas, ["cpu", "meta"]):
        for layer in (replica[0], replica[2]):
            assert layer.mask.device.type == device
            target = layer.weight.real if isinstance(layer.weight, Cplx) else layer.weight
            assert target.device.type == device
    # the source module is untouched: same mask objects, same values
    for name, mask in named_masks(model):
        assert mask is originals[name][0] and torch.equal(mask, originals[name][1])
    x = inputs_like(model)
    out = replicas[1](inputs_like(model, "meta"))
    assert out.device.type == "meta" and out.shape == (2, 4)
    torch.testing.assert_close(replicas[0](x).real, model(x).real)


@pytest.mark.parametrize("make", [real_model, complex_model], ids=["real", "complex"])
def test_replicate_mask_follows_weight_when_broadcast_lags(monkeypatch, make):
    # buffers broadcast to the wrong device (the published bug's situation):
    # each replica's mask is still moved next to its weight. A real layer's
    # mask moves when ``replicate`` assigns it; a complex weight's parts live
    # in a child that ``replicate`` fills after the layer's buffers, so there
    # the mask moves at the replica's first forward pass.
    model = make()
    broadcast = fake_broadcast(torch.device("meta"), buffers_device=torch.device("cpu"))
    monkeypatch.setattr(replicate_module, "_broadcast_coalesced_reshape", broadcast)
    replica = replicate(model, [0, 1], detach=True)[1]
    if make is real_model:
        assert replica[0].mask.is_meta and replica[2].mask.is_meta
    out = replica(inputs_like(model, "meta"))
    assert out.shape == (2, 4)
    assert replica[0].mask.is_meta and replica[2].mask.is_meta
    assert not model[0].mask.is_meta and not model[2].mask.is_meta


def test_reading_a_missing_weight_is_an_error_outside_replicate():
    # only a replica may not have its weight yet; elsewhere the error shows
    layer = CplxLinearMasked(3, 2)
    del layer.weight
    with pytest.raises(AttributeError, match="weight"):
        layer.mask = torch.ones(2, 3)


@pytest.mark.parametrize("order", ["weight-first", "mask-first"])
def test_replica_assignment_order_does_not_matter(order):
    layer = LinearMasked(3, 2)
    layer.mask = torch.tensor([1.0, 0.0, 1.0])
    replica = layer._replicate_for_data_parallel()
    weight, bias, mask = (t.detach().to("meta") for t in (layer.weight, layer.bias, layer.mask))
    if order == "weight-first":
        replica.weight, replica.bias, replica.mask = weight, bias, mask
    else:
        replica.mask, replica.weight, replica.bias = mask, weight, bias
    out = replica(torch.randn(4, 3, device="meta"))
    assert out.is_meta and out.shape == (4, 2)
    assert replica.mask.is_meta and not layer.mask.is_meta


# ---------------------------------------------------------------- CplxDataParallel


def test_cplx_data_parallel_end_to_end(two_fake_devices):
    torch.manual_seed(0)
    model = complex_model()
    x = inputs_like(model)
    out = model(x)
    (out.real.sum() + out.imag.sum()).backward()
    expected_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()

    parallel = as_data_parallel(CplxDataParallel, model)
    out_parallel = parallel(x)
    assert isinstance(out_parallel, Cplx)
    torch.testing.assert_close(out_parallel.real, out.real)
    torch.testing.assert_close(out_parallel.imag, out.imag)
    # both parts of the input were split across the two replicas
    assert two_fake_devices[:2] == [torch.Size([2, 2, 4, 4])] * 2
    (out_parallel.real.sum() + out_parallel.imag.sum()).backward()
    for param, grad in zip(model.parameters(), expected_grads):
        torch.testing.assert_close(param.grad, grad)
    with torch.no_grad():
        torch.testing.assert_close(parallel(x).real, out.real)


def test_cplx_data_parallel_nested_inputs_and_kwargs(two_fake_devices):
    class Pair(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = CplxLinear(3, 2)

        def forward(self, inputs, *, shift):
            first, second = inputs["pair"]
            assert inputs["tag"] == "t"  # non-tensors reach every replica whole
            return {"sum": self.linear(first + second) + shift}

    torch.manual_seed(0)
    model = Pair()
    inputs = {"pair": [cplx.randn(4, 3), cplx.randn(4, 3)], "tag": "t"}
    shift = cplx.randn(4, 2)
    parallel = as_data_parallel(CplxDataParallel, model)
    out = parallel(inputs, shift=shift)
    expected = model(inputs, shift=shift)
    torch.testing.assert_close(out["sum"].real, expected["sum"].real)
    torch.testing.assert_close(out["sum"].imag, expected["sum"].imag)


def test_plain_data_parallel_does_not_split_cplx(two_fake_devices):
    # why CplxDataParallel exists: torch hands the whole Cplx to every replica
    model = torch.nn.Sequential(CplxLinear(3, 2))
    parallel = as_data_parallel(torch.nn.DataParallel, model)
    with pytest.raises((TypeError, AttributeError, AssertionError)):
        parallel(cplx.randn(4, 3))


# ---------------------------------------------------------------- real GPUs


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@cuda
@pytest.mark.parametrize("make", [real_model, complex_model], ids=["real", "complex"])
def test_cuda_masks_follow_the_weight(make):
    model = make().cuda()
    for _, mask in named_masks(model):
        assert mask.is_cuda
    model[2].mask = torch.ones(1)  # a CPU tensor lands on the weight's GPU
    assert model[2].mask.is_cuda
    x = inputs_like(model, "cuda")
    replica = replicate(model, [0])[0]
    torch.testing.assert_close(replica(x).real, model(x).real)


@cuda
@pytest.mark.parametrize("make", [real_model, complex_model], ids=["real", "complex"])
def test_cuda_data_parallel(make):
    torch.manual_seed(0)
    model = make().cuda()
    x = inputs_like(model, "cuda")
    expected = model(x)
    parallel = CplxDataParallel(model)
    out = parallel(x)
    torch.testing.assert_close(out.real, expected.real)
    cpu_and_gpu = replicate(model.cpu().cuda(), list(range(torch.cuda.device_count())))
    for index, replica in enumerate(cpu_and_gpu):
        assert all(mask.device.index == index for _, mask in named_masks(replica))
