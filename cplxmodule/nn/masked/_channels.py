"""How :func:`~cplxmodule.nn.masked.compact` removes whole channels along a chain.

The chain of a :class:`torch.nn.Sequential` (exactly that class, or
:class:`~cplxmodule.nn.CplxSequential`; nested ones used once are read
through) is a list of modules, each applied to the output of the one
before. A *producer* (a linear, convolution or transposed convolution
layer of one of the package's families, ungrouped and used once) feeds a
*consumer* of the same kind through *steps*, modules whose output channel
``c`` depends on their input channel ``c`` alone:

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

import numbers

import torch
import torch.nn.functional as F

from ... import cplx
from ...cplx import Cplx
from ..modules import activation as _act
from ..modules import batchnorm as _bn
from ..modules import pooling as _pool
from ..modules.base import _RECIPES
from ..modules.container import CplxSequential
from ..modules.dropout import CplxDropout, CplxDropout1d, CplxDropout2d, CplxDropout3d
from ..modules.flatten import CplxFlatten
from ..modules.linear import CplxIdentity

__all__ = []

# Modules applying one scalar function to every element, the same for all
# channels in eval mode. Exact classes: a subclass may do anything in its
# ``forward``. The real ones take real tensors, the complex ones ``Cplx``.
_REAL_ELEMENTWISE = frozenset({
    torch.nn.Identity,
    torch.nn.ReLU,
    torch.nn.ReLU6,
    torch.nn.LeakyReLU,
    torch.nn.ELU,
    torch.nn.SELU,
    torch.nn.CELU,
    torch.nn.GELU,
    torch.nn.SiLU,
    torch.nn.Mish,
    torch.nn.Sigmoid,
    torch.nn.Tanh,
    torch.nn.Hardtanh,
    torch.nn.Hardswish,
    torch.nn.Hardsigmoid,
    torch.nn.Softplus,
    torch.nn.Softsign,
    torch.nn.Tanhshrink,
    torch.nn.Hardshrink,
    torch.nn.Softshrink,
    torch.nn.LogSigmoid,
    torch.nn.Dropout,
    torch.nn.Dropout1d,
    torch.nn.Dropout2d,
    torch.nn.Dropout3d,
    torch.nn.AlphaDropout,
    torch.nn.FeatureAlphaDropout,
})
_CPLX_ELEMENTWISE = frozenset({
    CplxIdentity,
    _act.CplxZReLU,
    _act.CplxCardioid,
    _act.CplxSplitReLU,
    _act.CplxSplitELU,
    _act.CplxSplitGELU,
    _act.CplxSplitTanh,
    _act.CplxSplitSigmoid,
    _act.CplxTanh,
    _act.CplxSigmoid,
    _act.CplxModTanh,
    _act.CplxModSquash,
    _act.CplxModLog,
    _act.CplxZAbsReLU,
    _act.CplxZLeakyReLU,
    CplxDropout,
    CplxDropout1d,
    CplxDropout2d,
    CplxDropout3d,
})
# the identity in eval mode: no need to run them on the constants (the
# channel dropouts would warn about the constants' shape)
_EVAL_IDENTITY = frozenset({
    torch.nn.Identity,
    torch.nn.Dropout,
    torch.nn.Dropout1d,
    torch.nn.Dropout2d,
    torch.nn.Dropout3d,
    torch.nn.AlphaDropout,
    torch.nn.FeatureAlphaDropout,
    CplxIdentity,
    CplxDropout,
    CplxDropout1d,
    CplxDropout2d,
    CplxDropout3d,
})
_ELEMENTWISE_FUNCTIONS = (torch.tanh, torch.sigmoid, torch.relu, F.relu, F.gelu, F.silu, F.elu)

# The containers whose ``forward`` is known: each child, in order, on the
# output of the one before.
SEQUENTIAL = (torch.nn.Sequential, CplxSequential)

# pooling layer -> its number of spatial dimensions
_POOLS = {}
for _n in (1, 2, 3):
    for _name in ("MaxPool", "AvgPool", "AdaptiveMaxPool", "AdaptiveAvgPool"):
        _POOLS[getattr(torch.nn, f"{_name}{_n}d")] = _n
        _POOLS[getattr(_pool, f"Cplx{_name}{_n}d")] = _n
_CPLX_POOLS = frozenset(cls for cls in _POOLS if cls.__name__.startswith("Cplx"))
_AVG_POOLS = frozenset(
    cls for cls in _POOLS if cls.__name__.removeprefix("Cplx").startswith("AvgPool")
)


class _Channelwise:
    """How to slice a module with per-channel state, and when it maps constants exactly.

    The per-channel parameters and buffers (``weight``, ``bias``,
    ``running_mean``, ``running_var``, ``threshold``; channels along their
    last dimension) of the module, or of each of its submodules named in
    ``parts``, are sliced, and the attribute named ``count`` holds the new
    number of channels. ``spatial`` is the number of spatial dimensions of
    the input the module takes (``None``: any); ``complex_`` whether it
    takes ``Cplx``.
    """

    def __init__(self, count, spatial, complex_, parts=()):
        self.count, self.spatial, self.complex_, self.parts = count, spatial, complex_, parts

    def channels(self, module):
        return getattr(self._parts(module)[0], self.count)

    def takes(self, module, spatial, complex_):
        return (
            complex_ == self.complex_
            and self.spatial in (None, spatial)
            and all(_running(part) is not False for part in self._parts(module))
        )

    def exact(self, module):
        """Whether eval mode maps a channel holding a constant to a known constant."""
        # a norm by batch (or instance) statistics maps a constant channel to
        # its bias up to rounding of its mean and variance: not exactly
        return all(_running(part) is not None for part in self._parts(module))

    def slice(self, module, index):
        for part in self._parts(module):
            setattr(part, self.count, len(index))
            for name in ("weight", "bias", "running_mean", "running_var", "threshold"):
                value = getattr(part, name, None)
                if not isinstance(value, torch.Tensor):
                    continue
                sliced = value.detach().index_select(-1, index)
                if name in part._parameters:
                    part._parameters[name] = torch.nn.Parameter(sliced, value.requires_grad)
                else:
                    part._buffers[name] = sliced

    def _parts(self, module):
        return [getattr(module, name) for name in self.parts] or [module]


_INSTANCE_NORMS = (torch.nn.InstanceNorm1d, torch.nn.InstanceNorm2d, torch.nn.InstanceNorm3d)


def _running(norm):
    """What a channelwise module normalises by in eval mode.

    ``True``: running statistics, or none at all (PReLU, a modReLU);
    ``None``: statistics of the batch or instance; ``False``: a mix of
    buffers that torch's and this package's norms never hold.
    """
    if not hasattr(norm, "running_mean"):
        return True
    if isinstance(norm, _INSTANCE_NORMS):
        if norm.track_running_stats and norm.running_mean is not None:
            return True
        return None
    if (norm.running_mean is None) != (norm.running_var is None):
        return False
    return None if norm.running_mean is None else True


_CHANNELWISE = {}
for _n in (1, 2, 3):
    _CHANNELWISE[getattr(torch.nn, f"BatchNorm{_n}d")] = _Channelwise("num_features", _n, False)
    _CHANNELWISE[_INSTANCE_NORMS[_n - 1]] = _Channelwise("num_features", _n, False)
    _CHANNELWISE[getattr(_bn, f"CplxBatchNorm{_n}d")] = _Channelwise("num_features", _n, True)
    _CHANNELWISE[getattr(_bn, f"CplxMagnitudeBatchNorm{_n}d")] = _Channelwise(
        "num_features", _n, True
    )
    # the count lives in the parts: ``real`` and ``imag`` are torch batch norms
    _CHANNELWISE[getattr(_bn, f"CplxNaiveBatchNorm{_n}d")] = _Channelwise(
        "num_features", _n, True, parts=("real", "imag")
    )
_CHANNELWISE[torch.nn.PReLU] = _Channelwise("num_parameters", None, False)
_CHANNELWISE[_act.CplxChannelModReLU] = _Channelwise("num_channels", None, True)


# --- the kinds of step ------------------------------------------------------


def _elementwise(module, complex_):
    """Whether ``module`` applies one scalar function to every element of its input."""
    cls = type(module)
    if cls is torch.nn.PReLU:
        return not complex_ and module.num_parameters == 1
    if cls is _act.CplxModReLU:
        # a threshold per feature would not follow the features removed
        threshold = module.threshold
        return complex_ and (
            isinstance(threshold, numbers.Real) or torch.as_tensor(threshold).numel() == 1
        )
    if cls in _REAL_ELEMENTWISE:
        return not complex_ or cls is torch.nn.Identity
    if cls in _CPLX_ELEMENTWISE:
        return complex_
    base = _RECIPES.get(cls)
    return complex_ and base is not None and (
        base in _ELEMENTWISE_FUNCTIONS or base in _REAL_ELEMENTWISE
    )


def _pooling(module, spatial, complex_):
    cls = type(module)
    base = _RECIPES.get(cls, cls) if complex_ else cls
    n = _POOLS.get(base)
    if n is None or n != spatial or getattr(module, "return_indices", False):
        return False
    return complex_ == (base in _CPLX_POOLS or cls is not base)


def _pool_keeps_constants(module):
    """Whether a channel holding one value everywhere comes out of the pooling unchanged.

    Max pooling never selects its padding; average pooling divides by the
    window's size, so a constant stays constant unless the zero padding
    enters the mean or the divisor is overridden.
    """
    if _RECIPES.get(type(module), type(module)) not in _AVG_POOLS:
        return True
    if getattr(module, "divisor_override", None) is not None:
        return False
    padding = module.padding
    padding = padding if isinstance(padding, tuple) else (padding,)
    return not module.count_include_pad or not any(padding)


def _flattening(module, complex_):
    cls = type(module)
    if complex_:
        known = cls is CplxFlatten or _RECIPES.get(cls) is torch.nn.Flatten
    else:
        known = cls is torch.nn.Flatten
    return known and module.start_dim == 1 and module.end_dim == -1


def _step(module, spatial, complex_, flat, uses):
    """The kind of step ``module`` is behind a producer, or ``None`` if it is a barrier."""
    if _elementwise(module, complex_):
        return "elementwise"
    if spatial == 0 or flat:
        return None
    if _pooling(module, spatial, complex_):
        return "pool"
    if _flattening(module, complex_):
        return "flatten"
    spec = _CHANNELWISE.get(type(module))
    if spec is not None and uses[id(module)] == 1 and spec.takes(module, spatial, complex_):
        return "channelwise"
    return None


# --- a layer with a weight, while channels are removed ------------------------


def _parts(x):
    return (x.real, x.imag) if isinstance(x, Cplx) else (x,)


def _map(x, fn):
    return Cplx(fn(x.real), fn(x.imag)) if isinstance(x, Cplx) else fn(x)


def _multiply(x, y):
    if isinstance(x, Cplx):
        return Cplx(x.real * y.real - x.imag * y.imag, x.real * y.imag + x.imag * y.real)
    return x * y


def _divide(x, y):
    if isinstance(x, Cplx):
        size = y.real * y.real + y.imag * y.imag
        return Cplx((x.real * y.real + x.imag * y.imag) / size,
                    (x.imag * y.real - x.real * y.imag) / size)
    return x / y


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
        real = _parts(weight)[0]
        self.mask = mask.expand(real.shape).clone() if mask is not None else None
        keep = 1 if mask is None else self.mask.to(real.dtype)
        self.weight = _map(weight, lambda part: part.detach() * keep)
        bias = layer.bias
        self.bias = None if bias is None else _map(bias, lambda part: part.detach().clone())
        self.transposed = _transposed(family)
        # a transposed convolution's weight is (in, out, *kernel)
        self.out_dim, self.in_dim = (1, 0) if self.transposed else (0, 1)
        self.spatial = real.dim() - 2
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
        return _parts(self.weight)[0].shape[dim]

    def _grouped(self, x, group):
        """``x`` (weight-shaped) with its input features grouped ``group`` per channel."""
        return x if group is None else x.unflatten(self.in_dim, (-1, group))

    def zero_outputs(self):
        """Output channels whose weights are all zero."""
        return _all_zero(self.weight, self.out_dim)

    def zero_inputs(self, group=None):
        """Input channels (of ``group`` features each) that no output reads."""
        return _all_zero(_map(self.weight, lambda part: self._grouped(part, group)), self.in_dim)

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
        def sums(part):
            part = self._grouped(part, group).index_select(self.in_dim, channels)
            return part.reshape(*part.shape[:2], -1).sum(2)

        contribution = _linear(_map(values, lambda part: part.unsqueeze(0)),
                               _map(self.weight, sums))
        contribution = _map(contribution, lambda part: part[0])
        self.bias = contribution if self.bias is None else self.bias + contribution
        self.changed = True

    def merge_inputs(self, carrier, value, values, channels):
        """Read the input ``channels`` through the input channel ``carrier``.

        They hold ``values`` everywhere where the carrier holds ``value``,
        so each is ``values[i] / value`` times the carrier, zero padding
        included: its kernel, scaled, moves into the carrier's.
        """
        shape = [1] * _parts(self.weight)[0].dim()
        shape[self.in_dim] = -1
        ratio = _map(_divide(values, value), lambda part: part.view(shape))
        moved = _map(self.weight, lambda part: part.index_select(self.in_dim, channels))
        moved = _map(_multiply(moved, ratio), lambda part: part.sum(self.in_dim, keepdim=True))
        at = carrier.view(1)
        for part, add in zip(_parts(self.weight), _parts(moved)):
            part.index_add_(self.in_dim, at, add)
        if self.mask is not None:
            reads = self.mask.index_select(self.in_dim, channels).any(self.in_dim, keepdim=True)
            self.mask.index_copy_(self.in_dim, at, self.mask.index_select(self.in_dim, at) | reads)
        self.changed = True

    def keep_outputs(self, index):
        self._keep(self.out_dim, index, None)
        if self.bias is not None:
            self.bias = _map(self.bias, lambda part: part.index_select(0, index))

    def keep_inputs(self, index, group=None):
        self._keep(self.in_dim, index, group)

    def _keep(self, dim, index, group):
        def keep(x):
            x = self._grouped(x, group).index_select(dim, index)
            return x if group is None else x.flatten(dim, dim + 1)

        self.weight = _map(self.weight, keep)
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
                changed |= _shrink(units[id(modules[i])], *link)


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
            steps.append(("depthwise", unit))
            continue
        if unit is not None:
            if not flat:
                return (steps, unit, None) if unit.kind() == kind else None
            # channel c is the features c * S ... (c + 1) * S - 1 of the linear layer
            features = unit.size(unit.in_dim)
            if unit.kind() != (0, complex_) or features % channels:
                return None
            return steps, unit, features // channels
        step = _step(module, spatial, complex_, flat, uses)
        if step == "channelwise" and _CHANNELWISE[type(module)].channels(module) != channels:
            return None
        if step is None:
            return None
        flat |= step == "flatten"
        steps.append((step, module))
    return None


def _shrink(producer, steps, consumer, group):
    """Remove the producer's channels that the consumer never sees; ``True`` if any."""
    unused = consumer.zero_inputs(group)
    dead = producer.zero_outputs() & ~unused
    constants = _constants(producer, steps) if dead.any() else None
    if constants is None:
        dead[:] = False
        moved = dead.clone()
    else:
        # the constants that are not zero must still reach the consumer
        moved = dead & torch.stack([part != 0 for part in _parts(constants)]).any(0)
    drop = unused | dead
    carrier = None
    if moved.any() and not consumer.reads_constants():
        # zero padding meets the constants, so they cannot go into the bias;
        # they all go through one of them, the largest, scaled into its kernel
        size = sum(part * part for part in _parts(constants))
        carrier = torch.where(moved, size, -1.0).argmax()
        drop[carrier] = False
        moved[carrier] = False
    elif drop.all() and (producer.spatial or any(
            kind in ("channelwise", "depthwise") for kind, _ in steps)):
        # torch refuses convolutions and norms of no channels: one stays,
        # an unused one if any, else a constant one, then not added
        keep = (unused if unused.any() else dead).nonzero()[0, 0]
        drop[keep] = moved[keep] = False
    if not drop.any():
        return False
    if moved.any():
        channels = moved.nonzero().squeeze(1)
        values = _map(constants, lambda part: part[channels])
        if carrier is None:
            consumer.add_constants(values, channels, group)
        else:
            consumer.merge_inputs(carrier, _map(constants, lambda part: part[carrier]), values,
                                  channels)
    index = (~drop).nonzero().squeeze(1)
    producer.keep_outputs(index)
    consumer.keep_inputs(index, group)
    for kind, module in steps:
        if kind == "channelwise":
            _CHANNELWISE[type(module)].slice(module, index)
        elif kind == "depthwise":
            module.keep_outputs(index)
    return True


def _constants(producer, steps):
    """Each output channel's value after ``steps`` were its weights zero, or ``None``.

    ``None`` if a step maps a constant channel to something not known
    exactly in eval mode.
    """
    if producer.bias is None:
        value = _map(producer.weight, lambda part: part.new_zeros(producer.size(producer.out_dim)))
    else:
        value = producer.bias
    value = _map(value, lambda part: part.view(1, -1, *(1,) * producer.spatial))
    for kind, module in steps:
        if kind == "pool":
            if not _pool_keeps_constants(module):
                return None
        elif kind == "channelwise":
            if not _CHANNELWISE[type(module)].exact(module):
                return None
            value = module(value)
        elif kind == "depthwise":
            if not module.reads_constants():
                return None
            shape = (1, -1) + (1,) * producer.spatial
            sums = _map(module.weight, lambda part: part.flatten(1).sum(1).view(shape))
            value = _multiply(value, sums)
            if module.bias is not None:
                value = value + _map(module.bias, lambda part: part.view(shape))
        elif kind == "elementwise":
            if _RECIPES.get(type(module), type(module)) not in _EVAL_IDENTITY:
                value = module(value)
        # a flatten keeps each channel's value on its features
    return _map(value, lambda part: part.flatten())
