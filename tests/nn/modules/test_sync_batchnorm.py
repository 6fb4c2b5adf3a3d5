"""CplxSyncBatchNorm: the complex batch norm over the batches of all the processes.

- Under DDP (gloo, two CPU processes, float64), its output, input gradient,
  parameter gradients and running statistics are those of one
  :class:`CplxBatchNorm2d` on the whole batch, for batches of different
  sizes, an empty one, and inputs of any rank.
- Without a process group it is :class:`CplxBatchNorm1d` (2d, 3d), to the bit.
- The reduction hook of the functional core, fed a stand-in sum over two
  identical processes, gives the statistics of the batch taken twice.
- ``convert_sync_batchnorm`` keeps the state, the output, the mode and the
  parameter objects, and leaves the other norms alone.
- Bad arguments are refused naming the layer and the argument.
"""

import copy
import os
import re
import tempfile

import pytest
import torch
import torch.distributed as dist

from cplxmodule import Cplx
from cplxmodule.cplx import normalization
from cplxmodule.nn import (
    CplxBatchNorm1d,
    CplxBatchNorm2d,
    CplxBatchNorm3d,
    CplxConv2d,
    CplxMagnitudeBatchNorm2d,
    CplxModReLU,
    CplxNaiveBatchNorm2d,
    CplxSequential,
    CplxSyncBatchNorm,
)

from ..._ddp import gathered, run_two_ranks

pytestmark = pytest.mark.usefixtures("one_thread")

DOUBLE = dict(dtype=torch.float64)


def randc(*shape, seed=0, mean=0.0):
    generator = torch.Generator().manual_seed(seed)
    parts = torch.randn(2, *shape, generator=generator, **DOUBLE)
    # correlated parts with a mean, so that whitening is not a mere scaling
    return Cplx(parts[0] + mean, 0.5 * parts[0] + parts[1] - mean)


def randomise(bn, seed=1):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in bn.parameters():
            param.add_(torch.randn(param.shape, generator=generator, **DOUBLE) * 0.3)


def leaf(z):
    return Cplx(z.real.clone().requires_grad_(), z.imag.clone().requires_grad_())


def loss(out, weights):
    return (out.real * weights.real).sum() + (out.imag * weights.imag).sum()


def rows(z, start, stop):
    return Cplx(z.real[start:stop], z.imag[start:stop])


def cat(*zs):
    return Cplx(torch.cat([z.real for z in zs]), torch.cat([z.imag for z in zs]))


def grads(z):
    return Cplx(z.real.grad, z.imag.grad)


def assert_cplx_close(actual, expected, **kwargs):
    torch.testing.assert_close(actual.real, expected.real, **kwargs)
    torch.testing.assert_close(actual.imag, expected.imag, **kwargs)


def assert_same_state(module, reference):
    assert module.state_dict().keys() == reference.state_dict().keys()
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(module.state_dict()[name], value, msg=name)


def assert_same_grads(module, reference, factor=1):
    for (name, param), expected in zip(module.named_parameters(), reference.parameters()):
        torch.testing.assert_close(param.grad * factor, expected.grad, msg=name)


# --- two processes ----------------------------------------------------------------------------
# the whole batch's shape; where rank 0's rows end, and rank 1's (from there)
SPLITS = [
    ((6, 3, 3, 2), (2, 6)),     # batches of different sizes, under DDP
    ((5, 3), (0, 5)),           # an empty batch on rank 0, a 2d input
    ((4, 3, 2, 2, 2), (2, 4)),  # a 5d input
]


# the batch norm of one process that takes an input of that many dimensions
BY_RANK = {2: CplxBatchNorm1d, 3: CplxBatchNorm1d, 4: CplxBatchNorm2d, 5: CplxBatchNorm3d}


def _step(bn, z, weights, ddp):
    x = leaf(z)
    # the wrapper lives until the backward pass is over: its hooks average the gradients
    model = torch.nn.parallel.DistributedDataParallel(bn) if ddp else bn
    out = model(x)
    loss(out, weights).backward()
    return out, x


def _sync_matches_whole_batch(rank, shape, split, ddp):
    start, stop = (0, split[0]) if rank == 0 else split
    whole, weights = randc(*shape, seed=2, mean=3.0), randc(*shape, seed=3)

    reference = BY_RANK[len(shape)](3, momentum=None, **DOUBLE)
    randomise(reference)
    sync = CplxSyncBatchNorm(3, momentum=None, **DOUBLE)
    sync.load_state_dict(reference.state_dict())

    expected, x_all = _step(reference, whole, weights, False)
    out, x = _step(sync, rows(whole, start, stop), rows(weights, start, stop), ddp)

    assert_cplx_close(out, rows(expected, start, stop))
    assert_cplx_close(grads(x), rows(grads(x_all), start, stop))
    # DDP averages the parameter gradients over the processes; without it each
    # holds its batch's share of the whole batch's gradient
    assert_same_state(sync, reference)
    if ddp:
        assert_same_grads(sync, reference, factor=dist.get_world_size())
    else:
        for param, expected in zip(sync.parameters(), reference.parameters()):
            torch.testing.assert_close(sum(gathered(param.grad)), expected.grad)

    # eval mode: the running statistics, alike on both
    sync.eval(), reference.eval()
    with torch.no_grad():
        assert_cplx_close(sync(rows(whole, start, stop)), rows(reference(whole), start, stop))


def _one_value_in_all(rank):
    bn = CplxSyncBatchNorm(3, **DOUBLE)
    before = copy.deepcopy(bn.state_dict())
    z = randc(1 - rank, 3)
    with pytest.raises(ValueError, match=r"CplxSyncBatchNorm: `input` must have more than 1 value"
                                         r" per channel when training, over the batches of all"):
        bn(z)
    for name, value in bn.state_dict().items():
        assert torch.equal(value, before[name]), name


def _eval_without_running_statistics_is_per_process(rank):
    # as torch's: only training synchronises
    bn = CplxSyncBatchNorm(3, track_running_stats=False, **DOUBLE).eval()
    z = randc(4, 3, 2, seed=rank)
    expected = CplxBatchNorm1d(3, track_running_stats=False, **DOUBLE).eval()(z)
    assert_cplx_close(bn(z), expected, rtol=0, atol=0)


def worker(rank):
    torch.set_num_threads(1)
    for index, (shape, split) in enumerate(SPLITS):
        _sync_matches_whole_batch(rank, shape, split, ddp=index == 0)
    _one_value_in_all(rank)
    _eval_without_running_statistics_is_per_process(rank)


@pytest.mark.slow
@pytest.mark.distributed
@pytest.mark.skipif(not dist.is_available(), reason="needs torch.distributed")
def test_two_processes_normalise_as_one_on_the_whole_batch():
    run_two_ranks(worker)


# --- one process ------------------------------------------------------------------------------
CASES = [
    (CplxBatchNorm1d, (8, 3)),
    (CplxBatchNorm1d, (8, 3, 5)),
    (CplxBatchNorm2d, (4, 3, 3, 2)),
    (CplxBatchNorm3d, (2, 3, 2, 3, 2)),
]
OPTIONS = [
    {},
    {"momentum": None},
    {"affine": False},
    {"track_running_stats": False},
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("cls, shape", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_without_a_process_group_it_is_the_batch_norm_to_the_bit(cls, shape, options):
    reference = cls(3, **options, **DOUBLE)
    randomise(reference)
    sync = CplxSyncBatchNorm(3, **options, **DOUBLE)
    sync.load_state_dict(reference.state_dict())
    for step in range(2):
        z, weights = randc(*shape, seed=step, mean=1.0), randc(*shape, seed=10 + step)
        expected, x_ref = _step(reference, z, weights, False)
        out, x = _step(sync, z, weights, False)
        assert_cplx_close(out, expected, rtol=0, atol=0)
        assert_cplx_close(grads(x), grads(x_ref), rtol=0, atol=0)
        assert_same_state(sync, reference)
        assert_same_grads(sync, reference)
    sync.eval(), reference.eval()
    z = randc(*shape, seed=5)
    assert_cplx_close(sync(z), reference(z), rtol=0, atol=0)


def test_a_group_of_one_process_is_no_group():
    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=0, world_size=1)
    try:
        assert normalization._process_sum() is None
        z = randc(4, 3, 2)
        sync = CplxSyncBatchNorm(3, process_group=dist.group.WORLD, **DOUBLE)
        assert_cplx_close(sync(z), CplxBatchNorm1d(3, **DOUBLE)(z), rtol=0, atol=0)
    finally:
        dist.destroy_process_group()


def test_the_reduction_hook_gives_the_statistics_of_all_the_processes():
    # A stand-in sum over two processes holding the same batch: the
    # statistics are those of the batch taken twice. Gradients: the backward
    # of the sum doubles what reaches the statistics, as the other process's
    # loss would add the same; the reference, whose two copies of the batch
    # are one leaf, gets both copies' gradients, twice this process's.
    bn = CplxBatchNorm2d(3, **DOUBLE)
    randomise(bn)
    reference = copy.deepcopy(bn)
    z, weights = randc(3, 3, 2, 2, seed=4, mean=2.0), randc(3, 3, 2, 2, seed=5)

    x = leaf(z)
    out = normalization._batch_norm(
        x, bn.running_mean, bn.running_var, bn.weight, bn.bias, True, 0.1, 1e-5, "sync",
        reduce=lambda t: t * 2,
    )
    loss(out, weights).backward()
    x_ref = leaf(z)
    expected = reference(cat(x_ref, x_ref))
    loss(expected, cat(weights, weights)).backward()

    assert_cplx_close(out, rows(expected, 0, 3))
    assert_cplx_close(grads(x), grads(x_ref) / 2)
    # (the functional core counts no batches)
    for name in ("running_mean", "running_var"):
        torch.testing.assert_close(getattr(bn, name), getattr(reference, name))
    assert_same_grads(bn, reference, factor=2)


def test_large_means_keep_their_digits():
    # parts with a mean of 1e4 and unit spread, in float32: from raw moments
    # (mean of squares less square of means, each near 1e8, whose float32
    # spacing is 8) the covariance would lose every digit
    z = randc(4, 3, 16, seed=6, mean=1e4)
    z32 = Cplx(z.real.float(), z.imag.float())
    out = normalization._batch_norm(
        z32, None, None, None, None, True, 0.1, 1e-5, "sync", reduce=lambda t: t * 2
    )
    exact = Cplx(z32.real.double(), z32.imag.double())
    expected = CplxBatchNorm1d(3, affine=False, track_running_stats=False, **DOUBLE)(exact)
    assert_cplx_close(out, Cplx(expected.real.float(), expected.imag.float()),
                      rtol=1e-2, atol=1e-2)


# --- conversion -------------------------------------------------------------------------------
def _model():
    torch.manual_seed(0)
    cplx_part = CplxSequential(
        CplxConv2d(2, 3, 3),
        CplxBatchNorm2d(3),
        CplxModReLU(0.1),
        CplxSequential(CplxBatchNorm2d(3, affine=False), CplxNaiveBatchNorm2d(3)),
        CplxMagnitudeBatchNorm2d(3),
    )
    return torch.nn.ModuleDict({"cplx": cplx_part, "real": torch.nn.BatchNorm1d(3)}).double()


def test_convert_sync_batchnorm_keeps_state_output_and_mode():
    model = _model()
    net = model["cplx"]
    for step in range(2):
        net(randc(4, 2, 5, 5, seed=step))
    net[1].bias.requires_grad_(False)
    net[3][0].eval()
    state = copy.deepcopy(model.state_dict())
    params = dict(model.named_parameters())
    reference = copy.deepcopy(net)

    converted = CplxSyncBatchNorm.convert_sync_batchnorm(model)

    assert converted is model and model["cplx"] is net
    assert type(net[1]) is CplxSyncBatchNorm and type(net[3][0]) is CplxSyncBatchNorm
    for index, cls in ((0, CplxConv2d), (4, CplxMagnitudeBatchNorm2d)):
        assert type(net[index]) is cls
    assert type(net[3][1]) is CplxNaiveBatchNorm2d
    assert type(model["real"]) is torch.nn.BatchNorm1d  # torch's converter's
    assert net[3][0].weight is None and not net[3][0].training and net[1].training
    assert net[1].process_group is None
    assert dict(model.named_parameters()) == params  # the objects themselves
    assert not net[1].bias.requires_grad and net[1].weight.requires_grad
    assert state.keys() == model.state_dict().keys()
    for name, value in model.state_dict().items():
        assert torch.equal(value, state[name]), name

    z = randc(4, 2, 5, 5, seed=7)
    assert_cplx_close(net(z), reference(z), rtol=0, atol=0)
    net.eval(), reference.eval()
    assert_cplx_close(net(z), reference(z), rtol=0, atol=0)


def test_convert_sync_batchnorm_replaces_a_batch_norm_given_alone():
    bn = CplxBatchNorm1d(4, eps=1e-3, momentum=None, **DOUBLE).eval()
    sync = CplxSyncBatchNorm.convert_sync_batchnorm(bn)
    assert type(sync) is CplxSyncBatchNorm and not sync.training
    settings = (sync.eps, sync.momentum, sync.affine, sync.track_running_stats)
    assert settings == (1e-3, None, True, True)
    assert sync.weight is bn.weight and sync.running_var is bn.running_var
    assert sync.weight.dtype == torch.float64


# --- bad arguments ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, words", [
    ({"process_group": "world"}, TypeError,
     "`process_group` must be a torch.distributed.ProcessGroup"),
    ({"num_features": -1}, ValueError, "`num_features` must be an int >= 0"),
    ({"eps": -1.0}, ValueError, "`eps` must be"),
    ({"momentum": 2.0}, ValueError, "`momentum` must be"),
])
def test_bad_arguments_are_refused_naming_them(kwargs, error, words):
    kwargs = {"num_features": 3, **kwargs}
    with pytest.raises(error, match=f"CplxSyncBatchNorm: {words}"):
        CplxSyncBatchNorm(**kwargs)


def test_convert_sync_batchnorm_refuses_bad_arguments():
    where = "CplxSyncBatchNorm.convert_sync_batchnorm"
    with pytest.raises(TypeError, match=f"{where}: `module` must be a torch.nn.Module, got int"):
        CplxSyncBatchNorm.convert_sync_batchnorm(3)
    model = CplxSequential(CplxBatchNorm2d(3))
    with pytest.raises(TypeError, match=f"{where}: `process_group` must be"):
        CplxSyncBatchNorm.convert_sync_batchnorm(model, process_group=0)
    assert type(model[0]) is CplxBatchNorm2d


@pytest.mark.parametrize("shape", [(3,), (4, 2), (4, 2, 5)])
def test_bad_inputs_are_refused_leaving_the_layer_unchanged(shape):
    bn = CplxSyncBatchNorm(3, **DOUBLE)
    before = copy.deepcopy(bn.state_dict())
    words = f"CplxSyncBatchNorm: `input` must have shape (N, 3, *), got {shape}"
    with pytest.raises(ValueError, match=re.escape(words)):
        bn(randc(*shape))
    for name, value in bn.state_dict().items():
        assert torch.equal(value, before[name]), name
    with pytest.raises(TypeError, match="CplxSyncBatchNorm"):
        bn(torch.randn(4, 3))
