"""Bayesian layers and the dense -> VD -> masked pipeline under DDP: gloo, two CPU processes."""

import pytest
import torch
import torch.distributed as dist

from .._ddp import gathered, run_two_ranks

from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear
from cplxmodule.nn import relevance as R
from cplxmodule.nn.masked import to_masked

pytestmark = [
    pytest.mark.slow,
    pytest.mark.distributed,
    pytest.mark.skipif(not dist.is_available(), reason="needs torch.distributed"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.real = torch.nn.Linear(6, 4)
        self.cplx = CplxLinear(4, 2)

    def forward(self, x):
        z = self.cplx(Cplx(self.real(x)))
        return z.real.square() + z.imag.square()


def worker(rank):
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


def test_ddp_trains_bayesian_model_and_deploys_masks():
    run_two_ranks(worker)
