"""A variational-dropout complex transformer: sparsified, and trained under DDP and FSDP2.

A small encoder (2 layers, d_model 16, 2 heads) with a complex readout is
made Bayesian with ``to_bayesian(model, "vd")``. The single-process
reference takes each step on the two halves of the batch, each after the
seed its rank uses (the layers' noise included), and averages the two
losses: what DDP's and FSDP's averaged gradients compute, written without
a process group. DDP and FSDP2 (``fully_shard``: every real part of each
complex parameter sharded along its first dimension) run on gloo, two CPU
processes; the FSDP2 run is saved with :mod:`torch.distributed.checkpoint`
and loaded into a fresh sharded model and into a plain one.
"""

import os
import tempfile

import pytest
import torch
import torch.distributed as dist

from .._ddp import gathered, run_two_ranks

from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear, CplxTransformerEncoder, CplxTransformerEncoderLayer
from cplxmodule.nn import relevance as R
from cplxmodule.nn.masked import to_masked

pytestmark = [
    pytest.mark.skipif(not dist.is_available(), reason="needs torch.distributed"),
    pytest.mark.usefixtures("one_thread"),
]

STEPS, LR, KL = 3, 0.05, 1e-4
TOL = dict(rtol=1e-4, atol=1e-5)


class Net(torch.nn.Module):
    """Encoder + readout; ``forward`` returns the loss, penalty included.

    The penalty is computed inside ``forward``: under FSDP2 the parameters
    are whole only there (outside, they are sharded DTensors).
    """

    def __init__(self):
        super().__init__()
        layer = CplxTransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0,
                                            batch_first=True)
        self.encoder = CplxTransformerEncoder(layer, 2)
        self.head = CplxLinear(16, 1)

    def forward(self, x, y):
        out = self.head(self.encoder(x))
        error = (out.real - y.real).square() + (out.imag - y.imag).square()
        return error.mean() + KL * sum(R.penalties(self))


def bayesian():
    torch.manual_seed(0)
    return R.to_bayesian(Net(), "vd")


def data(rank=None):
    g = torch.Generator().manual_seed(1)
    x = Cplx(torch.randn(8, 6, 16, generator=g), torch.randn(8, 6, 16, generator=g))
    y = Cplx(torch.randn(8, 6, 1, generator=g), torch.randn(8, 6, 1, generator=g))
    if rank is None:
        return x, y
    return x[4 * rank: 4 * rank + 4], y[4 * rank: 4 * rank + 4]


def seed(step, rank):
    torch.manual_seed(1000 * step + rank)


def train_single(model):
    """The reference: each step averages the two halves' losses, each after its rank's seed."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for step in range(STEPS):
        optimizer.zero_grad()
        losses = []
        for rank in (0, 1):
            seed(step, rank)
            losses.append(model(*data(rank)))
        (sum(losses) / 2).backward()
        optimizer.step()
    return model


def train_rank(module, parameters, rank):
    optimizer = torch.optim.SGD(parameters, lr=LR)
    for step in range(STEPS):
        optimizer.zero_grad()
        seed(step, rank)
        module(*data(rank)).backward()
        optimizer.step()


def test_sparsify_and_fine_tune_single_process():
    model = train_single(bayesian())
    log_alpha = torch.cat([m.log_alpha.flatten() for m in model.modules()
                           if isinstance(m, R.BaseARD)])
    threshold = log_alpha.quantile(0.5).item()  # drop about half the weights
    masks = R.compute_ard_masks(model, threshold=threshold)
    for i in range(2):
        layer = f"encoder.layers.{i}"
        expected = {f"{layer}.self_attn.{p}_proj.mask" for p in ("q", "k", "v", "out")}
        expected |= {f"{layer}.linear1.mask", f"{layer}.linear2.mask"}
        assert expected <= set(masks)
    assert "head.mask" in masks and len(masks) == 13
    masked = to_masked(model, masks=masks)
    kept = sum(int(m.sum()) for m in masks.values())
    total = sum(m.numel() for m in masks.values())
    assert 0.3 < kept / total < 0.7
    optimizer = torch.optim.SGD(masked.parameters(), lr=LR)
    before = masked(*data()).item()
    for _ in range(5):
        optimizer.zero_grad()
        masked(*data()).backward()
        optimizer.step()
    assert masked(*data()).item() < before
    # the dropped weights stay out: the masked weights are zero where the masks are
    for name, mask in masks.items():
        layer = masked.get_submodule(name[: -len(".mask")])
        assert torch.equal(layer.mask, mask)
        assert torch.all(layer.weight_masked.real[mask == 0] == 0)


def ddp_part(rank, reference):
    model = bayesian()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    train_rank(ddp, model.parameters(), rank)
    for (name, param), ref in zip(model.named_parameters(), reference.parameters()):
        first, second = gathered(param.detach())
        assert torch.equal(first, second), name
        torch.testing.assert_close(param, ref, **TOL, msg=name)
    # sparsify on every rank alike, fine-tune the masked model under DDP
    masks = R.compute_ard_masks(model, threshold=-9.5)
    masked = to_masked(model, masks=masks)
    ddp = torch.nn.parallel.DistributedDataParallel(masked)
    train_rank(ddp, masked.parameters(), rank)
    for name, param in masked.named_parameters():
        first, second = gathered(param.detach())
        assert torch.equal(first, second), name


def fsdp_part(rank, reference):
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_model_state_dict
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor

    def sharded(model):
        for layer in model.encoder.layers:
            # kept whole after forward, so that the penalty in ``Net.forward`` reads it whole
            fully_shard(layer, reshard_after_forward=False)
        return fully_shard(model)

    model = sharded(bayesian())
    q_proj = model.encoder.layers[0].self_attn.q_proj
    # a complex parameter's two real parts are sharded like any parameter
    for part in (q_proj.weight.real, q_proj.weight.imag, q_proj.log_sigma2):
        assert isinstance(part, DTensor) and part.to_local().shape == (8, 16)
    train_rank(model, model.parameters(), rank)
    for (name, param), ref in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(param.full_tensor(), ref, **TOL, msg=name)

    # torch.distributed.checkpoint: each rank saves its shards ...
    folder = [tempfile.mkdtemp() if rank == 0 else None]
    dist.broadcast_object_list(folder)
    path = os.path.join(folder[0], "checkpoint")
    dcp.save(get_model_state_dict(model), checkpoint_id=path)
    # ... and they load into a fresh sharded model ...
    fresh = sharded(bayesian())
    state = get_model_state_dict(fresh)
    dcp.load(state, checkpoint_id=path)
    fresh.load_state_dict(state)
    for (name, param), ref in zip(fresh.named_parameters(), reference.parameters()):
        torch.testing.assert_close(param.full_tensor(), ref, **TOL, msg=name)
    # ... and, gathered, into a plain model of the same keys (masks need no gathering)
    plain = bayesian()
    state = plain.state_dict()
    dcp.load(state, checkpoint_id=path)
    plain.load_state_dict(state)
    for (name, param), ref in zip(plain.named_parameters(), reference.parameters()):
        torch.testing.assert_close(param, ref, **TOL, msg=name)
    # a masked twin shards too: the masks are buffers, whole on every rank
    masked = to_masked(plain, masks=R.compute_ard_masks(plain, threshold=-9.5))
    mask = masked.encoder.layers[0].linear1.mask
    sharded(masked)
    train_rank(masked, masked.parameters(), rank)
    assert masked.encoder.layers[0].linear1.mask is mask or torch.equal(
        masked.encoder.layers[0].linear1.mask, mask
    )
    first, second = gathered(mask)
    assert torch.equal(first, second)
    dist.barrier()
    if rank == 0:
        import shutil

        shutil.rmtree(folder[0])


def worker(rank):
    # two ranks on a busy machine: a second thread per rank only waits
    torch.set_num_threads(1)
    reference = train_single(bayesian())
    ddp_part(rank, reference)
    fsdp_part(rank, reference)


@pytest.mark.slow
@pytest.mark.distributed
def test_ddp_and_fsdp2_train_and_checkpoint_like_single_process():
    # one pair of processes for both: starting them is most of the time
    run_two_ranks(worker)
