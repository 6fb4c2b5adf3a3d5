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

from typing import Any, Dict, List, NamedTuple, Tuple

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
        if self.depth == 0 and not _metadata(func):
            taken = self.taken((args, kwargs))
            given = self.given(output, ("glue", len(self.glue)))
            self.glue.append((taken, given, func, args, kwargs))
        return output


# what a tensor says of itself without its values: reading it is no use of them
_METADATA = frozenset({
    "shape", "dtype", "device", "ndim", "layout", "requires_grad", "is_cuda", "is_meta",
    "is_sparse", "is_quantized", "names", "dim", "size", "stride", "storage_offset",
    "is_complex", "is_floating_point", "is_contiguous", "numel", "element_size", "nelement",
    "data_ptr", "get_device",
})


def _metadata(func):
    """Whether ``func`` reads a tensor's metadata only (a property getter or a method)."""
    name = getattr(func, "__name__", None)
    if name == "__get__":
        name = getattr(getattr(func, "__self__", None), "__name__", None)
    return name in _METADATA


class Record(NamedTuple):
    """One forward call: the module calls, the glue between them, and each value's uses."""

    calls: List[Any]  # [module, input values, output values]
    glue: List[Any]  # (input values, output values, func, args, kwargs)
    uses: Dict[Tuple[int, Any], int]  # value -> the number of nodes (and outputs) taking it
    shapes: Dict[int, Tuple[int, ...]]  # id(tensor) -> its shape


def record(model, modules, inputs):
    """One forward call of ``model`` on ``inputs``, in eval mode under :func:`torch.no_grad`."""
    recorder = _Recorder(modules)
    with torch.no_grad(), recorder:
        output = model(*inputs)
    uses: Dict[Tuple[int, Any], int] = {}
    taken = [ins for _, ins, _ in recorder.calls] + [ins for ins, *_ in recorder.glue]
    for values in taken + [recorder.taken(output)]:
        for key in values:
            uses[key] = uses.get(key, 0) + 1
    shapes = {id(t): tuple(t.shape) for t in recorder.kept}
    return Record(recorder.calls, recorder.glue, uses, shapes)


def _called_once(rec):
    """The calls of the modules called once: ``[(module, input values, output values)]``."""
    calls: Dict[int, List[Any]] = {}
    for module, ins, outs in rec.calls:
        calls.setdefault(id(module), []).append((module, ins, outs))
    return [found[0] for found in calls.values() if len(found) == 1]


def _links(rec):
    """``id(module) -> the module`` it hands its whole output to, and to nothing else."""
    once = _called_once(rec)
    taking = {tuple(ins): module for module, ins, _ in once if ins}
    after = {}
    for module, _, outs in once:
        follower = taking.get(tuple(outs))
        if outs and follower is not None and all(rec.uses[key] == 1 for key in outs):
            after[id(module)] = follower
    return once, after


def chains(rec):
    """The chains of the record's modules: lists of modules, each handing its whole output to the next alone."""
    once, after = _links(rec)
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


class Read(NamedTuple):
    """A module that reads a producer's channels: its input is ``segments`` joined along ``dim``.

    Each segment is a producer module (its channels after its steps) or a
    fixed number of channels; the producer read is ``segments[position]``.
    ``dim`` is ``None`` for an input that is the producer's value itself.
    """

    consumer: Any
    segments: Tuple[Any, ...]
    position: int
    dim: Any
    #: the number of dimensions of the value
    ndim: int


def fan_outs(rec, producers):
    """What reads each of ``producers`` (modules) beyond a chain: ``{id: (steps, reads)}``.

    A producer's value, after the steps its links lead through (modules
    that are not producers), may go to several modules, whole or
    concatenated with others by ``torch.cat``; each such use is a
    :class:`Read`. A producer whose value goes anywhere else (another
    function of the ``forward``, the model's output) is left out.
    """
    once, after = _links(rec)
    called = {id(module): (ins, outs) for module, ins, outs in once}
    ids = {id(m) for m in producers}
    taking: Dict[Tuple[Any, ...], Any] = {}
    for module, ins, _ in once:
        taking.setdefault(tuple(ins), module)
    ends = {}  # id(producer) -> (step modules, its value, whether a chain goes on)
    for producer in producers:
        if id(producer) not in called:
            continue
        steps, module = [], producer
        while id(module) in after and id(after[id(module)]) not in ids:
            module = after[id(module)]
            steps.append(module)
        ends[id(producer)] = steps, tuple(called[id(module)][1]), id(module) in after
    owner = {value: id_ for id_, (_, value, _) in ends.items()}
    cats = _cats(rec)
    found = {}
    modules = {id(m): m for m in producers}
    for id_, (steps, value, chained) in ends.items():
        if not value or chained:
            continue  # a chain says it all
        reads = _reads(rec, value, taking, cats, owner, modules)
        if reads:
            found[id_] = steps, reads
    return found


def _cats(rec):
    """The ``torch.cat`` calls of the glue: ``{output value: (input values, dim)}``."""
    cats = {}
    for taken, given, func, args, kwargs in rec.glue:
        if func not in (torch.cat, torch.concat) or len(given) != 1:
            continue
        dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        if isinstance(dim, int):
            cats[given[0]] = tuple(taken), dim
    return cats


def _reads(rec, value, taking, cats, owner, modules):
    """The reads of ``value`` (a tuple of tensor values: a Cplx's two), or ``[]`` if one is unknown."""
    uses = rec.uses[value[0]]
    if any(rec.uses[part] != uses for part in value):
        return []
    reads, seen = [], 0
    consumer = taking.get(value)
    if consumer is not None:
        reads.append(Read(consumer, (modules[owner[value]],), 0, None, len(rec.shapes[value[0][0]])))
        seen += 1
    joined = [(out, inputs, dim) for out, (inputs, dim) in cats.items() if value[0] in inputs]
    by_part = [[(out, inputs, dim) for out, (inputs, dim) in cats.items() if part in inputs]
               for part in value]
    if any(len(found) != len(joined) for found in by_part):
        return []
    for k in range(len(joined)):
        outs = tuple(found[k][0] for found in by_part)
        inputs = [found[k][1] for found in by_part]
        dims = {found[k][2] for found in by_part}
        position = inputs[0].index(value[0])
        if len(dims) != 1 or any(len(i) != len(inputs[0]) or i.index(part) != position
                                 for i, part in zip(inputs, value)):
            return []
        reader = taking.get(outs)
        if reader is None or any(rec.uses[out] != 1 for out in outs):
            return []
        dim = dims.pop()
        segments = []
        for parts in zip(*inputs):
            if parts in owner:
                segments.append(modules[owner[parts]])
            elif parts[0][0] in rec.shapes:
                segments.append(rec.shapes[parts[0][0]][dim])
            else:
                return []
        reads.append(Read(reader, tuple(segments), position, dim, len(rec.shapes[value[0][0]])))
        seen += 1
    return reads if seen == uses else []
