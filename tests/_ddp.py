"""Two-process gloo runs on the CPU, shared by the DDP tests."""

import functools
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def gathered(tensor):
    """``tensor`` from every rank, in rank order."""
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor.contiguous())
    return parts


def _run(rank, port, body):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        body(rank)
        # Rank 0 hosts the store: leaving before rank 1 is done with it makes
        # gloo abort the process on a loaded machine.
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_two_ranks(body):
    """Run ``body(rank)`` in two spawned processes joined by a gloo process group.

    ``body`` must be a module-level function (spawn pickles it by name).
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # spawn, not fork: forking a process that has imported torch._dynamo
    # (any earlier torch.compile) can deadlock the children
    mp.spawn(functools.partial(_run, body=body), args=(port,), nprocs=2)
