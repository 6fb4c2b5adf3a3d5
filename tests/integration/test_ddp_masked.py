"""Masked layers under DistributedDataParallel: gloo, two CPU processes."""

import pytest
import torch
import torch.distributed as dist

from .._ddp import gathered, run_two_ranks

from cplxmodule.cplx import Cplx
from cplxmodule.nn.masked import CplxLinearMasked, LinearMasked, named_masks

pytestmark = [
    pytest.mark.slow,
    pytest.mark.distributed,
    pytest.mark.skipif(not dist.is_available(), reason="needs torch.distributed"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.real = LinearMasked(6, 4)
        self.cplx = CplxLinearMasked(4, 2)

    def forward(self, x):
        z = self.cplx(Cplx(self.real(x)))
        return z.real.square() + z.imag.square()


def rank_masks(rank, seed=100):
    generator = torch.Generator().manual_seed(seed + rank)
    return {
        "real": (torch.rand(4, 6, generator=generator) > 0.5).float(),
        "cplx": (torch.rand(2, 4, generator=generator) > 0.5).float(),
    }


def set_masks(model, masks):
    model.real.mask, model.cplx.mask = masks["real"], masks["cplx"]


def assert_masks(model, expected, rank):
    for name, mask in named_masks(model):
        assert torch.equal(mask, expected[name]), (rank, name)


def worker(rank):
    torch.manual_seed(0)
    model = Model()
    # DDP decides when wrapping whether the model has buffers to keep in
    # sync (an unset mask is a None buffer, which does not count): masks
    # are set first, and made equal by the construction.
    set_masks(model, rank_masks(rank, seed=10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    assert_masks(model, rank_masks(0, seed=10), rank)

    # masks re-set differently on each rank (fresh buffers): the forward
    # pass broadcasts rank 0's before computing
    set_masks(model, rank_masks(rank))
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(rank))
    with torch.no_grad():
        out = ddp(x)
    assert_masks(model, rank_masks(0), rank)
    assert rank == 0 or not torch.equal(rank_masks(0)["real"], rank_masks(1)["real"])
    with torch.no_grad():
        reference = Model()
        reference.load_state_dict(model.state_dict())
        torch.testing.assert_close(out, reference(x))

    # a training step: masked-out weights get no gradient, ranks agree
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ddp(x).sum().backward()
    for grad in (model.real.weight.grad, model.cplx.weight.real.grad, model.cplx.weight.imag.grad):
        assert grad is not None
    assert torch.all(model.real.weight.grad[model.real.mask == 0] == 0)
    assert torch.all(model.cplx.weight.real.grad[model.cplx.mask == 0] == 0)
    optimizer.step()
    for param in model.parameters():
        first, second = gathered(param.detach())
        assert torch.equal(first, second)


def test_ddp_broadcasts_masks_and_trains():
    run_two_ranks(worker)


def failing_worker(rank):
    # both ranks take part in a collective, then one of them fails
    gathered(torch.tensor([rank]))
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")


def test_a_failing_rank_fails_the_run():
    with pytest.raises(Exception, match="rank 1 fails on purpose"):
        run_two_ranks(failing_worker)
