"""Structured (channel) Bayesian layers and the dense -> channel VD -> masked pipeline under DDP: gloo, two CPU processes."""

import pytest
import torch
import torch.distributed as dist

from .._ddp import gathered, run_two_ranks

from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxConv1d
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
        self.real = torch.nn.Conv1d(2, 4, 3)
        self.cplx = CplxConv1d(2, 3, 3)
        self.head = torch.nn.Linear(3, 2)

    def forward(self, x):
        h = self.real(x)
        z = self.cplx(Cplx(h[:, :2], h[:, 2:]))
        return self.head((z.real.square() + z.imag.square()).mean(-1))


def worker(rank):
    trained = {}
    for kind in ("channel_vd", "channel_l0"):
        torch.manual_seed(0)
        trained[kind] = model = R.to_bayesian(Model(), kind=kind)
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        # each rank its own data and its own gates; gradients are averaged
        torch.manual_seed(rank)
        x = torch.randn(8, 2, 9)
        for _ in range(2):
            optimizer.zero_grad()
            loss = ddp(x).square().mean() + 1e-2 * sum(R.penalties(model))
            loss.backward()
            optimizer.step()
        for param in model.parameters():
            first, second = gathered(param.detach())
            assert torch.equal(first, second)

    # the channel masks agree across ranks; the masked twin under DDP gives
    # the dense output with the dropped channels' weights zeroed
    vd = trained["channel_vd"]
    with torch.no_grad():
        vd.real.log_sigma2.copy_(torch.tensor([5.0, -5.0, 5.0, -5.0]))
    masks = R.compute_ard_masks(vd, threshold=3.0)
    for mask in masks.values():
        first, second = gathered(mask)
        assert torch.equal(first, second)
    assert masks["real.mask"][:, 0, 0].tolist() == [0.0, 1.0, 0.0, 1.0]
    masked = to_masked(vd, masks=masks)
    ddp_masked = torch.nn.parallel.DistributedDataParallel(masked)
    with torch.no_grad():
        out = ddp_masked(x)
        reference = Model()
        reference.load_state_dict(vd.state_dict(), strict=False)
        reference.real.weight[[0, 2]] = 0
        torch.testing.assert_close(out, reference(x))


def test_ddp_trains_structured_models_and_deploys_channel_masks():
    run_two_ranks(worker)
