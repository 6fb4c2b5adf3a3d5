"""Chains of layers in the dataflow of one forward call, whatever the model's ``forward``.

:func:`~cplxmodule.nn.masked.compact` removes channels along chains: a
producer, steps that map channel ``c`` to channel ``c``, a consumer, each
handing its whole output to the next and to nothing else. A
:class:`torch.nn.Sequential` states such a chain; a model's own
``forward`` (a residual block, a U-Net) hides it. Here one forward call on
example inputs is recorded: every call of a module of interest (a layer of
a family, a step) with the tensors it takes and gives, and every torch
function called outside those modules (the ``forward``'s own glue: an
addition, a concatenation, a view), with its tensors. A link from call
``a`` to call ``b`` is proven when ``b`` takes exactly the tensors ``a``
gives and nothing else uses them: no glue function, no other call, not the
model's output. Each module must be called once.

The record holds for every input on which the ``forward`` takes the same
path: a ``forward`` whose dataflow depends on the values or sizes of its
input may route other inputs otherwise (as a graph that ``torch.export``
captures holds for the inputs its guards admit).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import torch
from torch.overrides import TorchFunctionMode

from ...cplx import Cplx

__all__ = []


def _tensors(value):
    """The tensors of ``value``, in order: a Cplx as its two parts, containers flattened."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, Cplx):
        return [value.real, value.imag]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


class _Recorder(TorchFunctionMode):
    """Records the calls of ``modules`` and the torch functions called outside them.

    A value is a tensor as a node left it: ``(id, node)``, so that a module
    that hands its input on as its output (dropout in eval mode, the
    identity) gives a new value of the same tensor.
    """

    def __init__(self, modules):
        super().__init__()
        self.modules = {id(m): m for m in modules}
        self.calls = []  # [module, input values, output values]
        self.glue = []  # (input values, output values)
        self.kept = []  # every tensor seen: their ids must not be reused
        self.producer = {}  # tensor id -> the node that gave it last
        self.depth = 0
        self.handles = []

    def __enter__(self):
        for module in self.modules.values():
            self.handles.append(module.register_forward_pre_hook(self._enter, with_kwargs=True))
            self.handles.append(module.register_forward_hook(self._leave, with_kwargs=True,
                                                             always_call=True))
        return super().__enter__()

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        return super().__exit__(*exc)

    def taken(self, value):
        """The values of the tensors of ``value``, as a node takes them."""
        tensors = _tensors(value)
        self.kept += tensors
        return [(id(t), self.producer.get(id(t))) for t in tensors]

    def given(self, value, node):
        """The values of the tensors of ``value``, as ``node`` gives them."""
        tensors = _tensors(value)
        self.kept += tensors
        for t in tensors:
            self.producer[id(t)] = node
        return [(id(t), node) for t in tensors]

    def _enter(self, module, args, kwargs):
        if self.depth == 0:
            self.calls.append([module, self.taken((args, kwargs)), None])
        self.depth += 1

    def _leave(self, module, args, kwargs, output):
        self.depth -= 1
        if self.depth == 0:
            self.calls[-1][2] = self.given(output, ("call", len(self.calls) - 1))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        output = func(*args, **kwargs)
        if self.depth == 0:
            taken = self.taken((args, kwargs))
            self.glue.append((taken, self.given(output, ("glue", len(self.glue)))))
        return output


def chains(model, modules, inputs):
    """The chains of ``modules`` proven by one forward call of ``model`` on ``inputs``.

    Returns a list of lists of modules, each handing its whole output to
    the next alone. ``model`` is called in eval mode under
    :func:`torch.no_grad`.
    """
    recorder = _Recorder(modules)
    with torch.no_grad(), recorder:
        output = model(*inputs)
    consumers: Dict[Tuple[int, Any], int] = {}  # value -> the number of its uses
    for values in [ins for _, ins, _ in recorder.calls] + [ins for ins, _ in recorder.glue]:
        for key in values:
            consumers[key] = consumers.get(key, 0) + 1
    for key in recorder.taken(output):
        consumers[key] = consumers.get(key, 0) + 1
    calls: Dict[int, List[Any]] = {}
    for module, ins, outs in recorder.calls:
        calls.setdefault(id(module), []).append((module, ins, outs))
    once = [found[0] for found in calls.values() if len(found) == 1]
    taking = {tuple(ins): module for module, ins, _ in once if ins}
    after = {}
    for module, _, outs in once:
        follower = taking.get(tuple(outs))
        if outs and follower is not None and all(consumers[key] == 1 for key in outs):
            after[id(module)] = follower
    starts = set(after) - {id(m) for m in after.values()}
    found = []
    for module, _, _ in once:
        if id(module) not in starts:
            continue
        chain = [module]
        while id(chain[-1]) in after:
            chain.append(after[id(chain[-1])])
        found.append(chain)
    return found
