"""The variational dropout and ARD twins of whole models.

Every Bayesian layer class declares its family and kind in its class
statement (see ``cplxmodule.nn._families``): the VD, ARD and structured
layers as twins that :func:`~cplxmodule.nn.masked.convert_layers` converts
to and from, :class:`~cplxmodule.nn.relevance.LinearL0` as a member it
converts from (its gates folded into the weight), the Gaussian bases and
the other extensions' layers as members known to
:func:`~cplxmodule.nn.masked.compact` only.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from ...cplx._shared import check_choice
from .. import _families
from ..masked.base import BaseMasked
from ..masked.quantized import BaseQuantized
from ..masked.compact import writer_groups
from ..masked.twins import Selection, _convert_model
from .base import BaseARD, GaussianMixin
from .complex import CplxARDMixin, CplxVDMixin
from .real import RealARDMixin, RealVDMixin
from .structured import ChannelGateMixin, ChannelGaussianMixin, ChannelL0Mixin, GateGroup

__all__ = ["to_bayesian"]

# The table of kinds: the bases that make a dense class (a family's, or a
# user's subclass of one) into its twin of each kind, real and complex. The
# published twins of the package's families are these bases around their
# dense class, written out as class statements; the quantized twins are
# made of them, unpublished.
_families.declare_kind("masked", "Masked", (BaseMasked,))
_families.declare_kind("quantized", "Quantized", (BaseQuantized,), lossy=True)
for _kind, _real, _complex in (("vd", RealVDMixin, CplxVDMixin),
                               ("ard", RealARDMixin, CplxARDMixin)):
    _suffix = _kind.upper()
    _families.declare_kind(_kind, _suffix, (_real, GaussianMixin), (BaseARD,), complex=False)
    _families.declare_kind(_kind, _suffix, (_complex, GaussianMixin), (BaseARD,), complex=True)
    for _axis, _gated in (("channel", "output"), ("input", "input")):
        _families.declare_kind(f"{_axis}_{_kind}", f"Channel{_suffix}",
                               (_real, ChannelGaussianMixin), complex=False, gated=_gated)
        _families.declare_kind(f"{_axis}_{_kind}", f"Channel{_suffix}",
                               (_complex, ChannelGaussianMixin), complex=True, gated=_gated)
for _axis, _gated in (("channel", "output"), ("input", "input")):
    _families.declare_kind(f"{_axis}_l0", "ChannelL0", (ChannelL0Mixin,), gated=_gated)


def to_bayesian(
    module: torch.nn.Module, kind: str = "vd", *, layers: Selection = None,
    exclude: Selection = None, example_inputs: Optional[Sequence[Any]] = None,
) -> torch.nn.Module:
    """The variational dropout, ARD or structured twin of ``module``.

    Every dense, masked or Bayesian layer, real or complex, is swapped for
    its twin of ``kind``, weights kept (a masked layer's with its mask
    folded in, so that pruned weights stay pruned) and the variational
    parameters at their initial values; ``requires_grad`` flags, hooks and
    modes carry over, and layers with non-finite parameters are refused
    (see :func:`~cplxmodule.nn.masked.convert_layers`, which says what
    each conversion keeps, refuses and warns of); ``module`` is not
    changed. The first step of the train, sparsify, fine-tune pipeline.

    Parameters
    ----------
    module : torch.nn.Module
    kind : {"vd", "ard", "channel_vd", "channel_ard", "channel_l0", "input_vd", "input_ard", \
"input_l0", "unit_ard", "unit_l0", "unit_vd"}
        Variational dropout or automatic relevance determination of each
        weight; or, structured (:mod:`~cplxmodule.nn.relevance.structured`),
        of whole output channels (``*ChannelVD``, ``*ChannelARD``), or L0
        gates of whole output channels (``*ChannelL0``); ``"input_*"``: the
        same layers with ``gated="input"``, gating whole input channels (a
        linear layer's input features, a bilinear layer's first input's).
        An L0 layer converts back, to a masked (``to_masked``) or any
        other twin, with its eval-mode gates folded into the weight: the
        masked twin with the masks of ``compute_ard_masks`` computes what
        it computes in eval mode, and so does its
        :func:`~cplxmodule.nn.masked.compact` (which also takes the L0
        model itself). ``"unit_l0"``: an L0 gate on each hidden unit of
        every :class:`~cplxmodule.nn.CplxRNN`, :class:`~cplxmodule.nn.CplxGRU`
        and :class:`~cplxmodule.nn.CplxLSTM`
        (:mod:`~cplxmodule.nn.relevance.recurrent`), the other layers kept
        as they are; ``"unit_vd"``, ``"unit_ard"``: a Gaussian gate of
        variational dropout or ARD on each hidden unit of those layers,
        whose masked twin and ``compact`` drop the units that the
        threshold drops. A layer already of ``kind`` is kept as it is.
    layers, exclude : optional
        The layers to convert, and those not to: names, classes or a
        predicate, as for :func:`~cplxmodule.nn.masked.convert_layers`
        (``exclude=["head"]`` keeps a 1-channel output layer, whose single
        channel gate could cut off the whole output, dense).
    example_inputs : tuple, optional
        With a kind of output-channel gates (``"channel_vd"``,
        ``"channel_ard"``, ``"channel_l0"``): the inputs of one call of the
        model, which is recorded (on a copy, in eval mode) to find the layers
        that write one group of channels, as
        :func:`~cplxmodule.nn.masked.compact` finds them (the stem and the
        blocks' last convolutions that add into a residual stream, say);
        each group then shares one gate per channel
        (:class:`~cplxmodule.nn.relevance.GateGroup`: one parameter, one
        draw, one penalty), so that training learns what ``compact`` can
        remove. Without it each layer gates its own channels.

    Returns
    -------
    torch.nn.Module

    Raises
    ------
    ValueError
        If ``kind`` is none of these, a name in ``layers`` or ``exclude``
        names no module, a layer has non-finite parameters, or
        ``example_inputs`` comes with a kind that does not gate output
        channels.
    RuntimeError, TypeError
        If ``module`` cannot be copied (see
        :func:`~cplxmodule.nn.masked.convert_layers`), or ``layers`` or
        ``exclude`` is of another form.

    Warns
    -----
    UserWarning
        For each subclass or parametrized layer left as it is, naming it.

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear
    >>> model = torch.nn.Sequential(CplxLinear(4, 3))
    >>> type(to_bayesian(model, kind="ard")[0]).__name__
    'CplxLinearARD'
    >>> type(to_bayesian(model, kind="channel_vd")[0]).__name__
    'CplxLinearChannelVD'
    >>> twin = to_bayesian(model, kind="input_l0")[0]
    >>> type(twin).__name__, twin.gated, twin.log_alpha.shape
    ('CplxLinearChannelL0', 'input', torch.Size([4]))
    >>> from cplxmodule.nn import CplxGRU
    >>> type(to_bayesian(CplxGRU(4, 3), kind="unit_l0")).__name__
    'CplxGRUUnitL0'
    """
    check_choice(kind, "kind", "to_bayesian", _families.bayesian_kinds())
    if example_inputs is not None and kind not in _GROUPED_KINDS:
        raise ValueError(
            f"to_bayesian: `example_inputs` groups the gates of output channels, of kinds"
            f" {', '.join(map(repr, _GROUPED_KINDS))}; kind {kind!r} has none"
        )
    twin = _convert_model(module, kind, "to_bayesian", layers, exclude)
    if example_inputs is not None:
        _share_gates(twin, example_inputs)
    return twin


_GROUPED_KINDS = ("channel_vd", "channel_ard", "channel_l0")


def _share_gates(model, example_inputs):
    """Give the gated layers that write one group of channels of ``model`` one :class:`GateGroup` each."""
    for writers in writer_groups(model, example_inputs):
        # a writer left dense or used twice cannot share: its channel stays alive
        gated = [(name, layer) for name, layer in writers
                 if isinstance(layer, ChannelGateMixin) and layer.gated == "output"
                 and "gate_group" not in layer.__dict__]
        if len(gated) > 1:
            names, layers = zip(*gated)
            GateGroup(layers, names)
