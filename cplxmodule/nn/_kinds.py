"""What a layer does to channels, declared at its class: read by :func:`~cplxmodule.nn.masked.compact`.

Between a producer (a layer of a family, see ``cplxmodule.nn._families``)
and its consumer, :func:`~cplxmodule.nn.masked.compact` may walk through
modules whose output channel ``c`` depends on their input channel ``c``
alone, and remove the channels the consumer never reads. Which modules
those are is a fact of each class, declared once in its class statement
(``class CplxTanh(CplxToCplx, compact=ELEMENTWISE)``, or a list of kinds
of which the first that applies wins, read by
:class:`~cplxmodule.nn.CplxToCplx`'s ``__init_subclass__``); torch's own
layers are declared in ``cplxmodule.nn.masked._channels``. Membership is by
exact class: a subclass may compute anything in its ``forward``, so it is
opaque unless it declares a kind itself.

The kinds:

- :class:`Elementwise`: one scalar function on every element, the same for
  every channel in eval mode (activations, dropout, the identity);
- :class:`Channelwise`: per-channel parameters or statistics, sliced with
  the channels (batch norms, a per-channel modReLU, ``PReLU(C)``);
- :class:`Pooling`: pooling of the spatial dimensions;
- :data:`FLATTEN`: ``Flatten(1, -1)`` behind a convolution.
"""

from typing import Callable, NamedTuple, Optional

import torch

__all__ = []


class Elementwise(NamedTuple):
    """One scalar function on every element (where ``when(module)``, if given)."""

    #: whether eval mode leaves the input as it is (dropout, the identity)
    identity_in_eval: bool = False
    #: a condition on the module, e.g. a scalar threshold
    when: Optional[Callable[[torch.nn.Module], bool]] = None

    def applies(self, module):
        return self.when is None or self.when(module)


class Pooling(NamedTuple):
    """Pooling of ``spatial`` dimensions; ``padded_mean`` for a mean over windows that may hold padding."""

    spatial: int
    #: whether a constant input may come out changed: a mean over windows
    #: that zero padding or a divisor override may enter (not the maximum,
    #: nor an adaptive mean, which has no padding)
    padded_mean: bool = False


class Flattening(NamedTuple):
    """``Flatten(start_dim, end_dim)``: a step only as ``Flatten(1, -1)``."""


class Readout(NamedTuple):
    """Complex features ``(N, F)`` to real ones: each of ``parts`` of every feature, block after block.

    ``CplxToConcatenatedReal(dim=-1)``'s blocks are the real parts, then the
    imaginary parts; ``CplxModulus``'s one block the moduli. A group's
    channels reach a linear read-out through it behind a flatten.
    """

    #: a function per block, of the complex features to its real ones
    parts: tuple
    #: a condition on the module, e.g. on the dimension it joins along
    when: Optional[Callable[[torch.nn.Module], bool]] = None

    def applies(self, module):
        return self.when is None or self.when(module)


FLATTEN = Flattening()
ELEMENTWISE = Elementwise()
IDENTITY_IN_EVAL = Elementwise(identity_in_eval=True)


class Channelwise:
    """How to slice a module with per-channel state, and when it maps constants exactly.

    The per-channel parameters and buffers (``weight``, ``bias``,
    ``running_mean``, ``running_var``, ``threshold``, ``negative_slope``;
    channels along their last dimension) of the module, or of each of its
    submodules named in ``parts``, are sliced, and the attribute named
    ``count`` holds the new number of channels. ``spatial`` is the number of
    spatial dimensions of the input the module takes (``None``: any).
    """

    def __init__(self, count, spatial, parts=()):
        self.count, self.spatial, self.parts = count, spatial, parts

    def channels(self, module):
        return getattr(self._parts(module)[0], self.count)

    def takes(self, module, spatial):
        return self.spatial in (None, spatial) and all(
            _running(part) is not False for part in self._parts(module)
        )

    def exact(self, module):
        """Whether eval mode maps a channel holding a constant to a known constant."""
        # a norm by batch (or instance) statistics maps a constant channel to
        # its bias up to rounding of its mean and variance: not exactly
        return all(_running(part) is not None for part in self._parts(module))

    def slice(self, module, index):
        for part in self._parts(module):
            setattr(part, self.count, len(index))
            for name in ("weight", "bias", "running_mean", "running_var", "threshold",
                         "negative_slope"):
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


_DECLARED: dict[type, tuple[object, ...]] = {}  # exact class -> its kinds, tried in order


def declare(cls, *kinds):
    """Record the kinds of the exact class ``cls`` (several: the first that applies wins)."""
    _DECLARED[cls] = kinds


def kinds_of(cls):
    """The declared kinds of the exact class ``cls``: ``()`` for an opaque one."""
    return _DECLARED.get(cls, ())
