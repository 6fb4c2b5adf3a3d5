"""How :func:`~cplxmodule.nn.masked.compact` removes whole channels along a chain.

The chain of a :class:`torch.nn.Sequential` (exactly that class, or
:class:`~cplxmodule.nn.CplxSequential`; nested ones used once are read
through) is a list of modules, each applied to the output of the one
before. A *producer* (a linear, convolution or transposed convolution
layer of one of the package's families, ungrouped and used once) feeds a
*consumer* of the same kind through *steps*, modules whose output channel
``c`` depends on their input channel ``c`` alone, as their classes declare
(``cplxmodule.nn._kinds``):

- elementwise modules (activations, dropout, identity), which apply the
  same scalar function everywhere;
- channelwise modules (batch norms, ``PReLU(C)``, a per-channel modReLU),
  whose parameters are sliced with the channels;
- depthwise convolutions (``groups == in_channels == out_channels``), which
  lose the same channels;
- pooling of the producer's spatial dimensions;
- a ``Flatten(1, -1)`` behind a convolution, whose channel ``c`` becomes
  the features ``c * S ... (c + 1) * S - 1`` of the linear consumer, ``S``
  the spatial size left (``in_features / C``).

Behind a linear producer only elementwise steps are taken: its features
are the last dimension of an input that may be ``(N, *, F)``, while a
batch norm or a pooling layer reads dimension 1. Convolutions' channels are
dimension 1 of a batched ``(N, C, *)`` input.

A producer's output channel goes, with the consumer's matching inputs, when
the consumer never reads it (its columns are all zero), or when the
producer's row is all zero and its output is a known constant after the
steps (its bias, mapped by each step in eval mode). A constant zero adds
nothing. Other constants are added to the consumer's bias where it reads
them the same at every position (a linear layer, a convolution without
zero padding); before zero padding or a transposed convolution, whose
borders read fewer taps, each constant channel is a fixed multiple of
the largest one, which stays and carries them all: their kernels,
scaled, are added to its kernel.
"""

import math
import operator

import torch
import torch.nn.functional as F

from ... import cplx
from ...cplx import Cplx
from ...cplx.conversions import _ELEMENTWISE
from .. import _kinds
from . import _dataflow
from ..modules.activation import CplxModulus
from ..modules.base import _RECIPES, CplxToCplx
from ..modules.casting import CplxToConcatenatedReal
from ..modules.container import CplxSequential

__all__ = []

# torch's layers, declared here (this package's declare their kinds in their
# class statements, see ``cplxmodule.nn._kinds``). Its elementwise layers
# and functions are the one table that the split layers' fast path reads
# too (``cplxmodule.cplx.conversions._ELEMENTWISE``): each maps every
# element alone, with no state and no randomness, so a channel holding a
# constant comes out holding its image, which compact computes.
for _cls in _ELEMENTWISE:
    if isinstance(_cls, type) and _cls is not torch.nn.Identity:
        _kinds.declare(_cls, _kinds.ELEMENTWISE)
for _cls in (
    torch.nn.Identity, torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d,
    torch.nn.Dropout3d, torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout,
):
    _kinds.declare(_cls, _kinds.IDENTITY_IN_EVAL)
for _n in (1, 2, 3):
    for _name in ("MaxPool", "AdaptiveMaxPool", "AdaptiveAvgPool"):
        _kinds.declare(getattr(torch.nn, f"{_name}{_n}d"), _kinds.Pooling(_n))
    _kinds.declare(getattr(torch.nn, f"AvgPool{_n}d"), _kinds.Pooling(_n, padded_mean=True))
    _kinds.declare(getattr(torch.nn, f"BatchNorm{_n}d"), _kinds.Channelwise("num_features", _n))
    _kinds.declare(getattr(torch.nn, f"InstanceNorm{_n}d"), _kinds.Channelwise("num_features", _n))
_kinds.declare(
    torch.nn.PReLU,
    _kinds.Elementwise(when=lambda module: bool(module.num_parameters == 1)),
    _kinds.Channelwise("num_parameters", None),
)
_kinds.declare(torch.nn.Flatten, _kinds.FLATTEN)
_kinds.declare(CplxToConcatenatedReal, _kinds.Readout(
    (operator.attrgetter("real"), operator.attrgetter("imag")),
    when=lambda module: module.dim in (1, -1),
))
_MODULI = _kinds.Readout((abs,))
_kinds.declare(CplxModulus, _MODULI)

# The containers whose ``forward`` is known: each child, in order, on the
# output of the one before.
SEQUENTIAL = (torch.nn.Sequential, CplxSequential)


# --- the kinds of step ------------------------------------------------------


def _kinds_of(module):
    """The kinds of ``module``, and whether it takes ``Cplx`` (``None``: either)."""
    cls = type(module)
    kinds = _kinds.kinds_of(cls)
    if kinds:
        return kinds, None if cls is torch.nn.Identity else issubclass(cls, CplxToCplx)
    # ``CplxToCplx[base]``: the kinds of torch's ``base``, on each part
    base = _RECIPES.get(cls)
    if base in _ELEMENTWISE and not isinstance(base, type):
        return (_kinds.ELEMENTWISE,), True
    return _kinds.kinds_of(base), True


def _step_kind(module, spatial, complex_, flat, uses):
    """``(step, kind)``: the step ``module`` is behind a producer, or ``(None, None)``."""
    kinds, takes_complex = _kinds_of(module)
    if takes_complex not in (None, complex_):
        return None, None
    for kind in kinds:
        if isinstance(kind, _kinds.Elementwise):
            if kind.applies(module):
                return "elementwise", kind
        elif spatial == 0 or flat:
            continue
        elif isinstance(kind, _kinds.Pooling):
            if kind.spatial == spatial and not getattr(module, "return_indices", False):
                return "pool", kind
        elif isinstance(kind, _kinds.Flattening):
            if module.start_dim == 1 and module.end_dim == -1:
                return "flatten", kind
        elif isinstance(kind, _kinds.Channelwise) and uses[id(module)] == 1 and (
                kind.takes(module, spatial)):
            return "channelwise", kind
    return None, None


def _pool_keeps_constants(module, kind):
    """Whether a channel holding one value everywhere comes out of the pooling unchanged.

    Max pooling never selects its padding; average pooling divides by the
    window's size, so a constant stays constant unless the zero padding
    enters the mean or the divisor is overridden.
    """
    if not kind.padded_mean:
        return True
    if getattr(module, "divisor_override", None) is not None:
        return False
    padding = module.padding
    padding = padding if isinstance(padding, tuple) else (padding,)
    return not module.count_include_pad or not any(padding)


# --- a layer with a weight, while channels are removed ------------------------


def _parts(x):
    return (x.real, x.imag) if isinstance(x, Cplx) else (x,)


def _select(x, dim, index):
    """``x.index_select(dim, index)``, for a tensor or a :class:`Cplx` alike."""
    return x[(slice(None),) * dim + (index,)]


def _zeros(like, size):
    """Zeros of ``size``, a :class:`Cplx` if ``like`` is one, of its dtype and device."""
    if isinstance(like, Cplx):
        return Cplx.zeros(size, dtype=like.dtype, device=like.device)
    return like.new_zeros(size)


def _linear(input, weight):
    return cplx.linear(input, weight) if isinstance(weight, Cplx) else F.linear(input, weight)


def shrinkable(family, layer):
    """Whether channels of the family member ``layer`` may be removed."""
    if family.grouped and layer.groups != 1:
        return False
    return family.spatial is not None or _transposed(family)


def _transposed(family):
    return "output_padding" in family.args


def depthwise(family, layer):
    """Whether the family member ``layer`` is a depthwise convolution: channel c from c alone."""
    return (
        family.grouped
        and not _transposed(family)
        and layer.groups == layer.in_channels == layer.out_channels
    )


class Unit:
    """A layer's weight (mask applied), mask and bias while channels are removed."""

    def __init__(self, layer, family, weight, mask, shared):
        # a layer used twice has two neighbourhoods: its channels stay
        self.layer, self.family, self.shared = layer, family, shared
        self.mask = None if mask is None else mask.expand(weight.shape).clone()
        keep = 1 if self.mask is None else self.mask.to(weight.dtype)
        self.weight = weight.detach() * keep
        bias = layer.bias
        self.bias = None if bias is None else bias.detach().clone()
        self.transposed = _transposed(family)
        # a transposed convolution's weight is (in, out, *kernel)
        self.out_dim, self.in_dim = (1, 0) if self.transposed else (0, 1)
        self.spatial = weight.dim() - 2
        self.depthwise = depthwise(family, layer)
        self.changed = mask is not None
        self.shrunk = False

    def kind(self):
        """``(spatial dims, complex)`` if channels can be removed, else ``None``."""
        if self.shared or not shrinkable(self.family, self.layer):
            return None
        return self.spatial, isinstance(self.weight, Cplx)

    def density(self):
        return 1.0 if self.mask is None else self.mask.float().mean().item()

    def size(self, dim):
        return self.weight.shape[dim]

    def _grouped(self, x, group):
        """``x`` (weight-shaped) with its input features grouped ``group`` per channel."""
        if group is None:
            return x
        shape, dim = x.shape, self.in_dim
        return x.reshape(*shape[:dim], shape[dim] // group, group, *shape[dim + 1:])

    def zero_outputs(self):
        """Output channels whose weights are all zero."""
        return _all_zero(self.weight, self.out_dim)

    def zero_inputs(self, group=None):
        """Input channels (of ``group`` features each) that no output reads."""
        return _all_zero(self._grouped(self.weight, group), self.in_dim)

    def reads_constants(self):
        """Whether a channel of one value everywhere adds a constant to every output."""
        if self.spatial == 0:
            return True
        if self.transposed:
            return False  # the borders of a transposed convolution sum fewer taps
        padding = self.layer.padding
        if self.layer.padding_mode != "zeros" or padding == "valid":
            return True  # padded with copies of the channel itself
        return not isinstance(padding, str) and not any(padding)

    def add_constants(self, values, channels, group=None):
        """Add what the input ``channels`` holding ``values`` contribute to the bias."""
        weight = _select(self._grouped(self.weight, group), self.in_dim, channels)
        sums = weight.reshape(*weight.shape[:2], math.prod(weight.shape[2:])).sum(2)
        contribution = _linear(values.unsqueeze(0), sums)[0]
        self.bias = contribution if self.bias is None else self.bias + contribution
        self.changed = True

    def merge_inputs(self, carrier, value, values, channels):
        """Read the input ``channels`` through the input channel ``carrier``.

        They hold ``values`` everywhere where the carrier holds ``value``,
        so each is ``values[i] / value`` times the carrier, zero padding
        included: its kernel, scaled, moves into the carrier's.
        """
        shape = [1] * self.weight.dim()
        shape[self.in_dim] = -1
        ratio = (values / value).view(shape)
        moved = (_select(self.weight, self.in_dim, channels) * ratio).sum(
            self.in_dim, keepdim=True
        )
        at = carrier.view(1)
        columns = (slice(None),) * self.in_dim + (at,)
        self.weight[columns] = self.weight[columns] + moved
        if self.mask is not None:
            reads = self.mask.index_select(self.in_dim, channels).any(self.in_dim, keepdim=True)
            self.mask.index_copy_(self.in_dim, at, self.mask.index_select(self.in_dim, at) | reads)
        self.changed = True

    def keep_outputs(self, index):
        self._keep(self.out_dim, index, None)
        if self.bias is not None:
            self.bias = self.bias[index]

    def keep_inputs(self, index, group=None):
        self._keep(self.in_dim, index, group)

    def _keep(self, dim, index, group):
        def keep(x):
            x = _select(self._grouped(x, group), dim, index)
            return x if group is None else x.flatten(dim, dim + 1)

        self.weight = keep(self.weight)
        if self.mask is not None:
            self.mask = keep(self.mask)
        self.changed = self.shrunk = True

    def sizes(self):
        """The constructor's output and input sizes (and groups) of the shrunk layer."""
        if self.depthwise:
            channels = self.size(0)
            return dict(in_channels=channels, out_channels=channels, groups=channels)
        names = ("out_features", "in_features") if self.spatial == 0 else (
            "out_channels", "in_channels")
        return dict(zip(names, (self.size(self.out_dim), self.size(self.in_dim))))


def _all_zero(weight, dim):
    flat = [part.transpose(0, dim).flatten(1) for part in _parts(weight)]
    return torch.stack([(part == 0).all(1) for part in flat]).all(0)


# --- chains -----------------------------------------------------------------


def chain(sequential, uses):
    """The modules ``sequential`` applies in order, nested Sequentials read through."""
    modules = []
    # not ``children()``, which yields a module used twice (a shared
    # activation, say) once only and so would hide it from a later pair
    for child in sequential._modules.values():
        if child is None:
            continue
        if type(child) in SEQUENTIAL and uses[id(child)] == 1:
            modules += chain(child, uses)
        else:
            modules.append(child)
    return modules


def shrink_chain(modules, units, uses):
    """Remove channels between the layers of the chain ``modules`` until nothing changes."""
    changed = True
    while changed:
        changed = False
        for i in range(len(modules)):
            link = _link(modules, i, units, uses)
            if link is not None:
                steps, consumer, group = link
                producer = units[id(modules[i])]
                changed |= _shrink([producer], steps, [_Read(consumer, group)],
                                   lambda: [_constants(producer, steps)])


def shrink_groups(groups, units, uses):
    """Remove channels of the groups of values that one record proved, until nothing changes.

    A group (``_dataflow.Group``) is written by several producers, whose
    sums, steps and layers all see one set of channels: a channel goes
    where every reader drops it (its columns unused), or where every
    writer's row is zero and each reader takes the constant it then holds,
    as along a chain.
    """
    owner = {value: group for group in groups for value in group.values}
    changed = True
    while changed:
        changed = False
        for group in groups:
            plan = _group_plan(group, owner, units, uses)
            if plan is not None:
                changed |= _shrink(*plan)


def _group_plan(group, owner, units, uses):
    """``_shrink``'s arguments for ``group``, if its writers, steps and readers allow; else ``None``."""
    writers = [units.get(id(module)) for module, _ in group.writers]
    kinds = {None if w is None else w.kind() for w in writers}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind is None:
        return None
    channels = writers[0].size(writers[0].out_dim)
    if any(w.size(w.out_dim) != channels for w in writers):
        return None
    walked = _walk(group, kind, channels, units, uses)
    if walked is None:
        return None
    layouts, steps = walked
    reads = []
    for read in group.reads:
        found = _group_reads(read, layouts[read.value], kind, channels, owner, units)
        if found is None:
            return None
        reads += found
    return writers, steps, reads, lambda: _group_constants(group, writers, steps, reads)


#: the layout of a group's value: its channels along dimension 1 (or the
#: last, behind a linear layer), flattened into features, or read out as
#: real features, block after block (``(READOUT, kind)``); read out before
#: its positions go (``(CHANNEL_READOUT, kind)``)
CHANNELS, FLAT, READOUT, CHANNEL_READOUT = "channels", "flat", "readout", "channel-readout"


def _walk(group, kind, channels, units, uses):
    """``(layout of each value, step of each of the group's steps)``, or ``None`` where a step does not map channels."""
    layouts = {value: CHANNELS for _, value in group.writers}
    steps = [None] * len(group.steps)
    pending = True
    while pending:
        pending = False
        for i, (module, taken, given) in enumerate(group.steps):
            if taken in layouts and steps[i] is None:
                step = _group_step(module, kind, channels, units, uses, layouts[taken])
                if step is None:
                    return None
                steps[i], layouts[given] = step, _layout_after(step, layouts[taken])
                pending = True
        for _, left, right, given in group.sums:
            if left in layouts and right in layouts and given not in layouts:
                if layouts[left] != layouts[right]:
                    return None
                layouts[given] = layouts[left]
                pending = True
    if None in steps or any(value not in layouts for value in group.values):
        return None
    return layouts, steps


def _layout_after(step, layout):
    if step[0] == "flatten":
        return (READOUT, layout[1]) if isinstance(layout, tuple) else FLAT
    if step[0] == "readout":
        return (CHANNEL_READOUT if layout == CHANNELS else READOUT), step[2]
    return layout


def _group_step(module, kind, channels, units, uses, layout):
    """``(step, module, kind)`` of a module (or a function) inside a group, or ``None``.

    On channels, every step that maps channel ``c`` to channel ``c``, and
    a flatten behind a convolution; on flattened features, elementwise
    steps and a read-out to real features; on those, steps that are the
    identity in eval mode.
    """
    spatial, complex_ = kind
    read_out = isinstance(layout, tuple)
    if isinstance(module, _dataflow.Modulus):
        return ("readout", module, _MODULI) if layout == CHANNELS and complex_ else None
    if isinstance(module, _dataflow.PositionMean):
        # each channel's mean: a feature, whose constant is the channel's
        on_channels = layout == CHANNELS or read_out and layout[0] == CHANNEL_READOUT
        return ("flatten", module, None) if on_channels and spatial else None
    if read_out and layout[0] == CHANNEL_READOUT:
        return None
    if isinstance(module, _dataflow.Function):
        # behind a read-out the constants are still the complex features' (each read
        # takes its block's part of them): a function of the real ones cannot map them
        return None if read_out else ("elementwise", module, _kinds.ELEMENTWISE)
    if read_out:
        step, step_kind = _step_kind(module, 0, False, True, uses)
        return (step, module, step_kind) if step == "elementwise" and (
            step_kind.identity_in_eval) else None
    readout = _readout(module, complex_)
    # behind a linear layer, features are the last dimension of any number
    if readout is not None and (layout == FLAT or spatial == 0 and getattr(module, "dim", -1) == -1):
        return "readout", module, readout
    if layout == FLAT:
        step, step_kind = _step_kind(module, 0, complex_, True, uses)
        return (step, module, step_kind) if step == "elementwise" else None
    unit = units.get(id(module))
    if unit is not None:
        if unit.depthwise and not unit.shared and (unit.spatial, isinstance(
                unit.weight, Cplx)) == kind and unit.size(0) == channels:
            return "depthwise", unit, None
        return None
    step, step_kind = _step_kind(module, spatial, complex_, False, uses)
    if step is None or step == "channelwise" and step_kind.channels(module) != channels:
        return None
    return step, module, step_kind


def _readout(module, complex_):
    """The :class:`~cplxmodule.nn._kinds.Readout` of ``module`` from complex features, or ``None``."""
    if not complex_:
        return None
    kind = next((k for k in _kinds.kinds_of(type(module)) if isinstance(k, _kinds.Readout)), None)
    return kind if kind is not None and kind.applies(module) else None


def _group_reads(read, layout, kind, channels, owner, units):
    """The :class:`_Read` of a layer that reads a group's value, one per block of a read-out; or ``None``."""
    if layout == CHANNELS:
        found = _group_read(read, kind, channels, owner, units)
        return None if found is None else [found]
    if isinstance(layout, tuple) and layout[0] == CHANNEL_READOUT:
        return None  # moduli at each position: no layer reads them as channels here
    consumer = units.get(id(read.consumer))
    blocks = layout[1].parts if isinstance(layout, tuple) else (None,)
    complex_ = kind[1] and not isinstance(layout, tuple)
    if consumer is None or consumer.kind() != (0, complex_) or read.segments is not None:
        return None
    # channel c is the features c * S ... (c + 1) * S - 1 of each block
    features = consumer.size(consumer.in_dim)
    size = features // (len(blocks) * channels) if channels else 0
    if not size or size * len(blocks) * channels != features:
        return None
    # the last block first: its inputs go before the offsets of the others move
    return [_Read(consumer, size, k * channels if len(blocks) > 1 else None, read.value, part)
            for k, part in reversed(list(enumerate(blocks)))]


def _group_read(read, kind, channels, owner, units):
    """The :class:`_Read` of a layer that reads a group's channels, or ``None``."""
    consumer = units.get(id(read.consumer))
    if consumer is None or consumer.kind() != kind:
        return None
    spatial = kind[0]
    if read.segments is None:
        offset, total = None, channels
    else:
        if read.dim % read.ndim != (1 if spatial else read.ndim - 1) or (
                spatial and read.ndim != spatial + 2):
            return None  # joined along another dimension, or an unbatched input
        sizes = [_segment_size(value, read, owner, units) for value in read.segments]
        if None in sizes:
            return None
        offset, total = sum(sizes[:read.position]), sum(sizes)
    if total != consumer.size(consumer.in_dim):
        return None
    return _Read(consumer, None, offset, read.value)


def _segment_size(value, read, owner, units):
    """The channels of one value joined by a concatenation: its group's now, or as recorded."""
    group = owner.get(value)
    if group is None:
        return read.sizes[read.segments.index(value)]
    writer = units.get(id(group.writers[0][0])) if group.writers else None
    return None if writer is None else writer.size(writer.out_dim)


def _link(modules, i, units, uses):
    """``(steps, consumer, group)``: what reads the channels of ``modules[i]``, if proven."""
    producer = units.get(id(modules[i]))
    kind = None if producer is None else producer.kind()
    if kind is None:
        return None
    spatial, complex_ = kind
    channels = producer.size(producer.out_dim)
    steps, flat = [], False
    for module in modules[i + 1:]:
        unit = units.get(id(module))
        if unit is not None and unit.depthwise and not (unit.shared or flat) and (
                unit.spatial, isinstance(unit.weight, Cplx)) == kind and unit.size(0) == channels:
            # a depthwise convolution maps channel c to channel c alone
            steps.append(("depthwise", unit, None))
            continue
        if unit is not None:
            if not flat:
                return (steps, unit, None) if unit.kind() == kind else None
            # channel c is the features c * S ... (c + 1) * S - 1 of the linear layer
            features = unit.size(unit.in_dim)
            if unit.kind() != (0, complex_) or features % channels:
                return None
            return steps, unit, features // channels
        step, step_kind = _step_kind(module, spatial, complex_, flat, uses)
        if step is None or step == "channelwise" and step_kind.channels(module) != channels:
            return None
        flat |= step == "flatten"
        steps.append((step, module, step_kind))
    return None


class _Read:
    """How a consumer reads channels: ``group`` features each, from ``offset`` on.

    ``offset`` is ``None`` for a consumer whose whole input is the
    channels (a chain's), else the first of its input channels that hold
    them (a concatenation's segment). ``value`` names the group's value it
    reads (``None`` along a chain), and ``part`` the function of it that
    one block of a read-out to real features holds (``None``: the value).
    """

    def __init__(self, consumer, group=None, offset=None, value=None, part=None):
        self.consumer, self.group, self.offset = consumer, group, offset
        self.value, self.part = value, part

    def _shift(self, channels):
        return channels if self.offset is None else channels + self.offset

    def unused(self, channels):
        zero = self.consumer.zero_inputs(self.group)
        return zero if self.offset is None else zero[self.offset:self.offset + channels]

    def add_constants(self, values, channels):
        self.consumer.add_constants(values, self._shift(channels), self.group)

    def merge_inputs(self, carrier, value, values, channels):
        self.consumer.merge_inputs(self._shift(carrier), value, values, self._shift(channels))

    def keep_inputs(self, index, channels):
        if self.offset is not None:
            total = self.consumer.size(self.consumer.in_dim) // (self.group or 1)
            index = torch.cat([torch.arange(self.offset), index + self.offset,
                               torch.arange(self.offset + channels, total)])
        self.consumer.keep_inputs(index, self.group)


def _shrink(writers, steps, reads, constants):
    """Remove the channels that the ``reads`` never see; ``True`` if any.

    ``writers`` (units) give the channels, ``steps`` carry them on, and
    ``constants()`` is the value each read sees of every channel were the
    writers' weights zero (``None`` where a step makes it unknown).
    """
    channels = writers[0].size(writers[0].out_dim)
    if not channels:
        return False  # a layer of no channels has none to lose
    unused = torch.ones(channels, dtype=torch.bool)
    for read in reads:
        unused &= read.unused(channels)
    dead = ~unused
    for writer in writers:
        dead &= writer.zero_outputs()
    seen = constants() if dead.any() else None
    if seen is None or any(value is None for value in seen):
        dead[:] = False
        seen = [_zeros(writers[0].weight, channels)] * len(reads)
    # per read, the dead channels whose constant is not zero there: they
    # must still reach it
    nonzero = [dead & _nonzero(value) for value in seen]
    moved = torch.zeros_like(dead)
    for some in nonzero:
        moved |= some
    drop = unused | dead
    carrier = None
    if moved.any() and not all(read.consumer.reads_constants()
                               for read, some in zip(reads, nonzero) if some.any()):
        # zero padding meets the constants, so they cannot go into the bias;
        # they all go through one of them, scaled into its kernel, which must
        # not be zero where any of them is not: the largest such
        sizes = [sum(part * part for part in _parts(value)) for value, some in zip(seen, nonzero)
                 if some.any()]
        size = torch.stack(sizes).min(0).values
        if (moved & (size > 0)).any():
            carrier = torch.where(moved & (size > 0), size, -1.0).argmax()
            drop[carrier] = moved[carrier] = False
        else:
            drop &= ~moved  # no channel carries them all: they stay
            moved[:] = False
    if drop.all() and (any(w.spatial for w in writers) or any(
            step in ("channelwise", "depthwise") for step, *_ in steps)):
        # torch refuses convolutions and norms of no channels: one stays,
        # an unused one if any, else a dead one, then not added
        keep = (unused if unused.any() else dead).nonzero()[0, 0]
        drop[keep] = moved[keep] = False
    if not drop.any():
        return False
    moving = moved.nonzero().squeeze(1)
    for read, value, some in zip(reads, seen, nonzero):
        if not (some & moved).any():
            continue  # the constants it would see are all zero, or stay
        if carrier is None:
            read.add_constants(value[moving], moving)
        else:
            read.merge_inputs(carrier, value[carrier], value[moving], moving)
    index = (~drop).nonzero().squeeze(1)
    for writer in writers:
        writer.keep_outputs(index)
    for read in reads:
        read.keep_inputs(index, channels)
    for step, module, kind in steps:
        if step == "channelwise":
            kind.slice(module, index)
        elif step == "depthwise":
            module.keep_outputs(index)
    return True


def _nonzero(value):
    return torch.stack([part != 0 for part in _parts(value)]).any(0)


def _writer_constants(producer):
    """The producer's output, shaped ``(1, C, 1, ...)``, were its weights zero: its bias."""
    if producer.bias is None:
        value = _zeros(producer.weight, producer.size(producer.out_dim))
    else:
        value = producer.bias
    return value.view(1, -1, *(1,) * producer.spatial)


def _group_constants(group, writers, steps, reads):
    """The value each of ``reads`` sees of every channel were the writers' weights zero."""
    known = {value: _writer_constants(w) for w, (_, value) in zip(writers, group.writers)}
    spatial = writers[0].spatial
    pending = True
    while pending:
        pending = False
        for step, (_, taken, given) in zip(steps, group.steps):
            if taken in known and given not in known:
                known[given] = _step_constants(known[taken], step, spatial)
                if known[given] is None:
                    return None
                pending = True
        for sign, left, right, given in group.sums:
            if left in known and right in known and given not in known:
                known[given] = known[left] + known[right] if sign > 0 else (
                    known[left] - known[right])
                pending = True
    if any(read.value not in known for read in reads):
        return None
    return [(known[read.value] if read.part is None else read.part(known[read.value])).flatten()
            for read in reads]


def _constants(producer, steps):
    """Each output channel's value after ``steps`` were its weights zero, or ``None``.

    ``None`` if a step maps a constant channel to something not known
    exactly in eval mode.
    """
    value = _writer_constants(producer)
    for step in steps:
        value = _step_constants(value, step, producer.spatial)
        if value is None:
            return None
    return value.flatten()


def _step_constants(value, step, spatial):
    """What the ``step`` gives of channels of one value each (``(1, C, 1, ...)``), or ``None``."""
    step, module, kind = step
    if step == "pool":
        return value if _pool_keeps_constants(module, kind) else None
    if step == "channelwise":
        return module(value) if kind.exact(module) else None
    if step == "depthwise":
        if not module.reads_constants():
            return None
        shape = (1, -1) + (1,) * spatial
        value = value * module.weight.flatten(1).sum(1).view(shape)
        return value if module.bias is None else value + module.bias.view(shape)
    if step == "elementwise" and not kind.identity_in_eval:
        return module(value)
    return value  # a flatten keeps each channel's value on its features
