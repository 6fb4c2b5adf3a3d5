"""Two-process gloo runs on the CPU, shared by the DDP tests."""

import contextlib
import datetime
import faulthandler
import functools
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

_WORLD_SIZE = 2


def gathered(tensor):
    """``tensor`` from every rank, in rank order."""
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor.contiguous())
    return parts


# How long a rank whose body raised waits for the others to finish theirs.
_FAILED_RANK_WAIT = datetime.timedelta(seconds=60)


def _leave_together(store, rank, timeout=None):
    # gloo tears a pair down as soon as one side destroys its context, and a
    # rank still draining the last collective then fails or aborts
    # (pytorch/gloo#155), which spawn may report instead of the rank that
    # failed first: every rank waits, through the store rather than gloo,
    # until all ranks are past their last collective.
    store.set(f"done/{rank}", "1")
    keys = [f"done/{other}" for other in range(_WORLD_SIZE)]
    store.wait(keys, store.timeout if timeout is None else timeout)


def _run(rank, store_path, body):
    # a crash in C++ prints the Python stack of every thread
    faulthandler.enable()
    # a file store has no host rank that could leave before the others
    store = dist.FileStore(store_path, _WORLD_SIZE)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=_WORLD_SIZE)
    try:
        body(rank)
    except Exception:
        # A store timeout here: the others are stuck in a collective that
        # waits for this rank, and only its leaving frees them. The group is
        # left as it is: its connections close as the process ends, after
        # spawn holds this rank's error, which it then reports rather than
        # the errors the closing causes in the others.
        with contextlib.suppress(RuntimeError):
            _leave_together(store, rank, _FAILED_RANK_WAIT)
        raise
    _leave_together(store, rank)
    dist.destroy_process_group()
    _exit_now()


def _exit_now():
    # Reached only when the body succeeded: a failure raised above, and spawn
    # reports it. gloo's threads can still abort the process ("terminate
    # called without an active exception") in C++ static destructors at
    # interpreter exit, after every Python frame is gone; leaving with
    # ``os._exit`` skips those destructors. The streams are flushed first,
    # since ``os._exit`` does not flush them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_two_ranks(body):
    """Run ``body(rank)`` in two spawned processes joined by a gloo process group.

    ``body`` must be a module-level function (spawn pickles it by name).
    """
    with tempfile.TemporaryDirectory() as folder:
        # spawn, not fork: forking a process that has imported torch._dynamo
        # (any earlier torch.compile) can deadlock the children
        mp.spawn(
            functools.partial(_run, body=body),
            args=(os.path.join(folder, "store"),),
            nprocs=_WORLD_SIZE,
        )
