"""Bayesian layers and the dense -> VD -> masked pipeline under DDP: gloo, two CPU processes."""

import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear
from cplxmodule.nn import relevance as R
from cplxmodule.nn.masked import to_masked

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="needs torch.distributed")


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.real = torch.nn.Linear(6, 4)
        self.cplx = CplxLinear(4, 2)

    def forward(self, x):
        z = self.cplx(Cplx(self.real(x)))
        return z.real.square() + z.imag.square()


def gathered(tensor):
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor.contiguous())
    return parts


def worker(rank, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        torch.manual_seed(0)
        dense = Model()
        bayesian = R.to_bayesian(dense, kind="vd")
        ddp = torch.nn.parallel.DistributedDataParallel(bayesian)
        optimizer = torch.optim.SGD(bayesian.parameters(), lr=0.1)
        # each rank its own data and its own noise; gradients are averaged
        torch.manual_seed(rank)
        x = torch.randn(8, 6)
        for _ in range(2):
            optimizer.zero_grad()
            loss = ddp(x).mean() + 1e-2 * sum(R.penalties(bayesian))
            loss.backward()
            optimizer.step()
        for param in bayesian.parameters():
            first, second = gathered(param.detach())
            assert torch.equal(first, second)

        # sparsify: the masks agree across ranks, and the masked twin under
        # DDP gives the dense output with the dropped weights zeroed
        masks = R.compute_ard_masks(bayesian, threshold=-5.0)
        for mask in masks.values():
            first, second = gathered(mask)
            assert torch.equal(first, second)
        masked = to_masked(bayesian, masks=masks)
        ddp_masked = torch.nn.parallel.DistributedDataParallel(masked)
        with torch.no_grad():
            out = ddp_masked(x)
            reference = Model()
            reference.load_state_dict(bayesian.state_dict(), strict=False)
            reference.real.weight.mul_(masks["real.mask"])
            reference.cplx.weight.real.mul_(masks["cplx.mask"])
            reference.cplx.weight.imag.mul_(masks["cplx.mask"])
            torch.testing.assert_close(out, reference(x))
    finally:
        dist.destroy_process_group()


def test_ddp_trains_bayesian_model_and_deploys_masks():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # spawn, not fork: forking a process that has imported torch._dynamo can deadlock
    mp.spawn(worker, args=(port,), nprocs=2)
