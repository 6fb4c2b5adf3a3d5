"""Chains and groups of layers in the dataflow of one forward call, whatever the ``forward``.

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

Where several layers write or read one set of channels, the record proves
a *group* (:func:`groups`): values that layers give, that steps (modules,
and elementwise torch functions called on each part), sums of two values
of one shape (a residual addition) and nothing else carry on,
and that layers read, whole or as one segment of a ``torch.cat``. Each
tensor is followed both ways, to the node that gave it and to every node
that takes it; one use of any other kind leaves the group out.

The record holds for every input on which the ``forward`` takes the same
path: a ``forward`` whose dataflow depends on the values or sizes of its
input may route other inputs otherwise (as a graph that ``torch.export``
captures holds for the inputs its guards admit).
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple

import torch
from torch.overrides import TorchFunctionMode

from ...cplx import Cplx
from ...cplx.conversions import _ELEMENTWISE

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
        self.arguments = []  # (args, kwargs) of each call
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
            self.arguments.append((args, kwargs))
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
    "data_ptr", "get_device", "_base",
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
    output: List[Any]  # the values the model returns
    arguments: List[Any]  # (args, kwargs) of each call


def record(model, modules, inputs):
    """One forward call of ``model`` on ``inputs``, in eval mode under :func:`torch.no_grad`."""
    recorder = _Recorder(modules)
    with torch.no_grad(), recorder:
        output = model(*inputs)
    uses: Dict[Tuple[int, Any], int] = {}
    returned = recorder.taken(output)
    taken = [ins for _, ins, _ in recorder.calls] + [ins for ins, *_ in recorder.glue]
    for values in taken + [returned]:
        for key in values:
            uses[key] = uses.get(key, 0) + 1
    shapes = {id(t): tuple(t.shape) for t in recorder.kept}
    return Record(recorder.calls, recorder.glue, uses, shapes, returned, recorder.arguments)


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


Value = Tuple[Any, ...]  # the values of a tensor's parts (a Cplx's two)


class Read(NamedTuple):
    """A layer that reads a group's ``value``: whole, or joined with others along ``dim``.

    ``segments`` are the values that ``torch.cat`` joined, in order, the
    group's at ``position``; ``None`` for a layer that takes ``value`` itself.
    """

    consumer: Any
    value: Value
    segments: Optional[Tuple[Value, ...]]
    position: int
    dim: Optional[int]
    #: the number of dimensions of the value
    ndim: int
    #: each segment's size along ``dim``, as recorded
    sizes: Tuple[int, ...] = ()


class Group(NamedTuple):
    """Values whose channel ``c`` is one channel throughout.

    Producers write them, steps (modules that map channel ``c`` to channel
    ``c``) and sums (additions and subtractions of two of them) carry them
    on, and layers read them. Nothing else touches them.
    """

    values: FrozenSet[Value]
    writers: List[Tuple[Any, Value]]  # (producer, the value it gives)
    steps: List[Tuple[Any, Value, Value]]  # (module, the value taken, the value given)
    sums: List[Tuple[int, Value, Value, Value]]  # (sign, left, right, their sum)
    reads: List[Read]


_SUMS = {torch.add: 1, torch.Tensor.add: 1, torch.sub: -1, torch.Tensor.sub: -1}


def _functions():
    """The elementwise functions of ``_ELEMENTWISE``, and the tensor methods of torch's among them."""
    functions: Set[Any] = {f for f in _ELEMENTWISE if not isinstance(f, type)}
    methods = set()
    for function in functions:
        name = function.__name__
        if getattr(torch, name, None) is function:
            methods.add(getattr(torch.Tensor, name))
    return frozenset(functions | methods)


#: the functions a ``forward`` may call on a group's value, as a step
_FUNCTIONS = _functions()


class Function(NamedTuple):
    """The elementwise functions that the ``forward`` calls on the parts of a value: a step.

    ``parts`` holds one ``(function, arguments after the tensor, keyword
    arguments)`` per part (a Cplx's real part's, then its imaginary part's).
    """

    parts: Tuple[Tuple[Any, Tuple[Any, ...], Dict[str, Any]], ...]

    def __call__(self, value):
        values = (value.real, value.imag) if isinstance(value, Cplx) else (value,)
        out = [func(v, *args, **kwargs) for v, (func, args, kwargs) in zip(values, self.parts)]
        return Cplx(*out) if isinstance(value, Cplx) else out[0]


class Modulus(NamedTuple):
    """``torch.hypot`` of a ``Cplx`` value's two parts (``abs(z)`` in a ``forward``): a read-out to the moduli."""


class PositionMean(NamedTuple):
    """A mean over every dimension after the channels (the positions): channel ``c`` is feature ``c``."""


_MEANS = (torch.mean, torch.Tensor.mean)


def groups(rec, producers, passes):
    """The groups of values that ``producers`` (modules) write, as far as the record proves them.

    ``passes`` holds the ids of the producers that map channel ``c`` to
    channel ``c`` alone (depthwise convolutions): steps, not writers or
    readers. A value used otherwise (by another function of the
    ``forward``, a module called twice, the model's output) leaves its
    group out.
    """
    users: Dict[Any, List[Tuple[str, int]]] = {}
    for i, (_, ins, _) in enumerate(rec.calls):
        for key in ins:
            users.setdefault(key, []).append(("call", i))
    for j, (taken, *_) in enumerate(rec.glue):
        for key in taken:
            users.setdefault(key, []).append(("glue", j))
    for key in rec.output:
        users.setdefault(key, []).append(("output", 0))
    counts: Dict[int, int] = {}
    for module, *_ in rec.calls:
        counts[id(module)] = counts.get(id(module), 0) + 1
    graph = _Graph(rec, users, counts, {id(m) for m in producers}, passes)
    found, seen = [], set()
    for module, _, outs in rec.calls:
        value = tuple(outs)
        if id(module) in graph.producers and id(module) not in passes and value not in seen:
            group, values = graph.group(value)
            seen |= values
            if group is not None:
                found.append(group)
    return found


class _Abort(Exception):
    """A value of the group is used otherwise: the group is not proven."""


class _Graph:
    """The record's nodes around a value: where it comes from, where it goes."""

    def __init__(self, rec, users, counts, producers, passes):
        self.rec, self.users, self.counts = rec, users, counts
        self.producers, self.passes = producers, passes
        self.values: Set[Value] = set()
        self.queue: List[Value] = []
        self.done: Set[Any] = set()
        self.writers: List[Tuple[Any, Value]] = []
        self.steps: List[Tuple[Any, Value, Value]] = []
        self.sums: List[Tuple[int, Value, Value, Value]] = []
        self.reads: List[Read] = []

    def group(self, start):
        """``(group or None, every value reached)`` from the value ``start``."""
        self.values, self.queue, self.done = {start}, [start], set()
        self.writers, self.steps, self.sums, self.reads = [], [], [], []
        try:
            while self.queue:
                value = self.queue.pop()
                self._origin(value)
                self._uses(value)
        except _Abort:
            return None, self.values
        group = Group(frozenset(self.values), self.writers, self.steps, self.sums, self.reads)
        return group, self.values

    def _join(self, value):
        if value not in self.values:
            self.values.add(value)
            self.queue.append(value)

    def _first(self, node):
        """Whether ``node`` is met for the first time."""
        new = node not in self.done
        self.done.add(node)
        return new

    def _call(self, i):
        """``(module, taken, given)`` of call ``i``, a module called once."""
        module, ins, outs = self.rec.calls[i]
        if self.counts[id(module)] != 1:
            raise _Abort
        return module, tuple(ins), tuple(outs)

    def _origin(self, value):
        nodes = {key[1] for key in value}
        if None in nodes:
            raise _Abort  # the model's input, or a parameter
        node = next(iter(nodes))
        if node[0] == "call":
            if len(nodes) != 1:
                raise _Abort  # parts of different nodes
            module, taken, given = self._call(node[1])
            if given != value:
                raise _Abort
            if self._first(node):
                if id(module) in self.producers and id(module) not in self.passes:
                    self.writers.append((module, value))
                else:
                    self.steps.append((module, taken, value))
                    self._join(taken)
            return
        # one function per part: a sum, or an elementwise map
        js = [key[1][1] for key in value]
        if all(("glue", j) in self.done for j in js):
            return  # a modulus or a mean this group took as a step
        if self.rec.glue[js[0]][2] in _FUNCTIONS:
            maps = [self._map(j) for j in js]
            if any(given != key for (_, _, given), key in zip(maps, value)):
                raise _Abort
            self._take_map(maps)
            return
        parts = [self._sum(j) for j in js]
        if any(part[3] != key for part, key in zip(parts, value)):
            raise _Abort
        self._take_sum(parts)

    def _map(self, j):
        """``((function, arguments, keywords), taken, given)`` of the glue call ``j``, if elementwise."""
        taken, given, func, args, kwargs = self.rec.glue[j]
        if func not in _FUNCTIONS or len(taken) != 1 or len(given) != 1 or not args:
            raise _Abort
        if not isinstance(args[0], torch.Tensor) or self.rec.shapes[taken[0][0]] != (
                self.rec.shapes[given[0][0]]):
            raise _Abort  # a tensor among the other arguments, or a broadcast
        return (func, tuple(args[1:]), dict(kwargs)), taken[0], given[0]

    def _take_map(self, maps):
        taken, given = (tuple(m[k] for m in maps) for k in (1, 2))
        if self._first(("map", given)):
            self.steps.append((Function(tuple(m[0] for m in maps)), taken, given))
            self._join(taken)
            self._join(given)

    def _sum(self, j):
        """``(sign, left, right, given)`` of the glue call ``j``, a sum of two equal shapes."""
        taken, given, func, args, kwargs = self.rec.glue[j]
        sign = _SUMS.get(func)
        shapes = self.rec.shapes
        if sign is None or len(taken) != 2 or len(given) != 1 or len(args) != 2 or kwargs:
            raise _Abort
        if not shapes[taken[0][0]] == shapes[taken[1][0]] == shapes[given[0][0]]:
            raise _Abort  # broadcast
        return sign, taken[0], taken[1], given[0]

    def _take_sum(self, parts):
        if len({sign for sign, *_ in parts}) != 1:
            raise _Abort
        left, right, given = (tuple(part[k] for part in parts) for k in (1, 2, 3))
        if self._first(("sum", given)):
            self.sums.append((parts[0][0], left, right, given))
            for value in (left, right, given):
                self._join(value)

    def _uses(self, value):
        per_part = [self.users.get(key, []) for key in value]
        calls = [{node for node in nodes if node[0] == "call"} for nodes in per_part]
        glue = [sorted(node[1] for node in nodes if node[0] == "glue") for nodes in per_part]
        if any(node[0] == "output" for nodes in per_part for node in nodes):
            raise _Abort
        if any(c != calls[0] for c in calls) or any(len(g) != len(glue[0]) for g in glue):
            raise _Abort
        for _, i in calls[0]:
            self._read_or_step(i, value)
        for js in zip(*glue):  # the k-th function of each part: one function of the value
            self._glue_use(js, value)

    def _read_or_step(self, i, value):
        module, taken, given = self._call(i)
        if taken != value:
            raise _Abort  # the module takes more than the value
        if id(module) in self.producers and id(module) not in self.passes:
            # a layer may write the group too: its read is another node
            if self._first(("read", i)):
                self.reads.append(Read(module, value, None, 0, None, self._ndim(value)))
        elif self._first(("call", i)):
            self.steps.append((module, value, given))
            self._join(given)

    def _glue_use(self, js, value):
        funcs = {self.rec.glue[j][2] for j in js}
        func = next(iter(funcs)) if len(funcs) == 1 else None
        if funcs <= _FUNCTIONS:  # one elementwise function per part
            self._take_map([self._map(j) for j in js])
        elif func in _SUMS:
            self._take_sum([self._sum(j) for j in js])
        elif func in (torch.cat, torch.concat):
            self._cat(js, value)
        elif func is torch.hypot and len(value) == 2 and js[0] == js[1]:
            self._modulus(js[0], value)
        elif func in _MEANS:
            self._mean(js, value)
        else:
            raise _Abort

    def _modulus(self, j, value):
        """``torch.hypot`` of the value's real and imaginary parts, in order."""
        taken, given, _, args, kwargs = self.rec.glue[j]
        if tuple(taken) != value or len(given) != 1 or len(args) != 2 or kwargs:
            raise _Abort
        if self._first(("glue", j)):
            self.steps.append((Modulus(), value, tuple(given)))
            self._join(tuple(given))

    def _mean(self, js, value):
        """A mean of each part over its positions (every dimension after the channels)."""
        given, ndim = [], self._ndim(value)
        for j, key in zip(js, value):
            taken, out, _, args, kwargs = self.rec.glue[j]
            dim = args[1] if len(args) > 1 else kwargs.get("dim")
            dims = {d % ndim for d in (dim if isinstance(dim, (tuple, list)) else (dim,))
                    if isinstance(d, int)}
            keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
            extra = set(kwargs) - {"dim", "keepdim"} or len(args) > 3 or keepdim
            if list(taken) != [key] or len(out) != 1 or extra or ndim < 3 or (
                    dims != set(range(2, ndim))):
                raise _Abort  # keepdim, a dtype, or another dimension
            given.append(out[0])
        if all(self._first(("glue", j)) for j in js):
            self.steps.append((PositionMean(), value, tuple(given)))
            self._join(tuple(given))

    def _cat(self, js, value):
        """A ``torch.cat`` of each part, its result read whole by one layer."""
        entries = [self.rec.glue[j] for j in js]
        dims = {e[3][1] if len(e[3]) > 1 else e[4].get("dim", 0) for e in entries}
        dim = dims.pop() if len(dims) == 1 else None
        if not isinstance(dim, int) or any(len(e[1]) != 1 or len(e[0]) != len(entries[0][0])
                                           for e in entries):
            raise _Abort
        segments = tuple(zip(*(e[0] for e in entries)))
        if value not in segments:
            raise _Abort  # the parts sit at different positions
        joined = tuple(e[1][0] for e in entries)
        readers = [self.users.get(key, []) for key in joined]
        if any(nodes != readers[0] or len(nodes) != 1 for nodes in readers):
            raise _Abort
        kind, i = readers[0][0]
        if kind != "call":
            raise _Abort
        module, taken, _ = self._call(i)
        if taken != joined or id(module) not in self.producers or id(module) in self.passes:
            raise _Abort
        if self._first(("cat", js)):
            sizes = tuple(self.rec.shapes[segment[0][0]][dim] for segment in segments)
            position = segments.index(value)
            self.reads.append(Read(module, value, segments, position, dim, self._ndim(value), sizes))

    def _ndim(self, value):
        return len(self.rec.shapes[value[0][0]])
