r"""Structured Bayesian sparsification: one gate per output or input channel, real and complex.

A structured layer is its dense twin with a random gate on each of its
channels, drawn once per example. By default (``gated="output"``) the
gate :math:`z_c` scales output channel :math:`c` (a row of a linear
layer's weight, a filter of a convolution's): the weight-noise model
:math:`W_{c,:} \mapsto z_c W_{c,:}`. With ``gated="input"`` it scales
input channel :math:`j` instead, :math:`x_j \mapsto z_j x_j`: the model
:math:`W_{:,j} \mapsto z_j W_{:,j}` on a weight column (a linear layer's
input feature, a convolution's input channel through its ``groups``, row
:math:`j` of a transposed convolution's ``(in, out / groups, *kernel)``
weight, the first input's features of a bilinear layer). What the gates
learn drops whole rows or whole columns, so
:func:`~cplxmodule.nn.relevance.compute_ard_masks` gives masks of the
weight's real shape whose zeros are whole channels, every consumer of a
mask takes them, and :func:`~cplxmodule.nn.masked.compact` turns them into
smaller layers: a dropped output channel goes with the next layer's
matching inputs, a column that a consumer never reads takes the producer's
channel with it.

One mechanism, :class:`ChannelGateMixin`, maps the gated channels onto the
weight and the input or output of every family (Linear, Bilinear,
Conv1-3d, ConvTranspose1-3d, grouped included) and owns the forward pass;
the axis is the one setting ``gated``, an argument of every structured
layer (and of :func:`~cplxmodule.nn.relevance.to_bayesian`'s kinds
``"channel_*"`` and ``"input_*"``). Two gates derive from it, the same
for either axis:

- :class:`ChannelGaussianMixin`, the Gaussian gate
  :math:`z_c = 1 + \sqrt{\alpha_c}\,\varepsilon` of group variational
  dropout (Kingma, Salimans & Welling, 2015; Molchanov et al., 2017, with
  one :math:`\alpha` per channel), on the base of every Gaussian layer,
  :class:`~cplxmodule.nn.relevance.GaussianMixin`; its penalty is that
  of the per-weight layers, one term per channel: the KL of variational
  dropout (``*ChannelVD``) or of ARD (``*ChannelARD``, Kharitonov et al.,
  2018). A complex layer's gate has the real mean 1 and complex-circular
  noise, the posterior of complex variational dropout (Nazarov & Burnaev,
  2020) on the channel's scale, so it is phase-invariant and its KL is the
  complex one.
- :class:`ChannelL0Mixin`, the hard-concrete gate of L0 regularisation
  (Louizos, Welling & Kingma, 2018), real for real and complex layers.

Layers that write one group of channels (the residual stream of a ResNet
stage: its stem and every block's last convolution) can share their gates
(:class:`GateGroup`, which ``to_bayesian(..., example_inputs=...)`` sets
up): one parameter, one draw per forward call, one penalty, so that what
the gates learn is what :func:`~cplxmodule.nn.masked.compact` can remove.
"""

from __future__ import annotations

import math

import torch

from ...cplx import Cplx
from ...cplx._shared import check_choice
from ..cache import _cached_attr
from ..modules._weighted import _KindMixin
from ..utils.sparsity import SparsityStats, _weight_counts
from . import functional as F
from .._families import twin_fields
from .base import (
    BaseARD, GaussianMixin, _check_no_nan, _kept, _real,
)
from typing import TYPE_CHECKING, Any, Optional, Sequence

# GateGroup is documented, and published, at cplxmodule.nn.relevance
__all__ = ["ChannelGateMixin", "ChannelGaussianMixin", "ChannelL0Mixin", "channel_layer_doc"]


class _ChannelGeometry(_KindMixin, SparsityStats):
    """Gates on a layer's input or output channels, mapped onto its weight, and the forward pass.

    The one mechanism of every gated layer: the structured layers
    (:class:`ChannelGateMixin`) and ``LinearL0``, whose gates of whole
    input or output features are the same and whose gates of single
    weights override the training forward. The layer says which channels
    carry the gates (``gated``) and how to draw them (``_draw_gates``);
    gates stored in another shape (``LinearL0``'s, broadcastable to the
    weight) override ``_channel_view``.
    """

    if TYPE_CHECKING:
        # what the gate mixin and the layer define
        gated: Optional[str]
        groups: int

        def _gated_weight(self) -> Any: ...

        def _draw_gates(self, tensor: Any, shape: Any) -> Any: ...

        def _channel_relevance(self, **kwargs: Any) -> torch.Tensor: ...

    def _channel_view(self, vector):
        """``vector`` over the gated channels as a view that broadcasts to the weight's real shape.

        The weight is ``(out, in / groups, *kernel)``, a transposed
        convolution's ``(in, out / groups, *kernel)`` (a bilinear layer's
        ``(out, in1, in2)``): its channels of dimension 1, ``g * size + j``
        of group ``g``, are column ``j`` of the rows of group ``g``.
        """
        real = _real(self.weight)
        if (self.gated == "input") == self._family.transposed:
            return vector.view(-1, *(1,) * (real.dim() - 1))
        spatial = (1,) * (real.dim() - 2)
        groups = self.groups if self._family.grouped else 1
        rows, columns = real.shape[0], real.shape[1]
        if groups == 1:
            return vector.view(1, columns, *spatial)
        per_group = vector.view(groups, 1, columns).expand(groups, rows // groups, columns)
        return per_group.reshape(rows, columns, *spatial)

    def _expand(self, vector):
        """``vector`` over the channels as a fresh tensor of the weight's real shape."""
        return self._channel_view(vector).expand(_real(self.weight).shape).clone()

    def _along_channels(self, vector):
        """``vector`` over the channels as a view that broadcasts along an input's or output's channels."""
        return vector.view(-1, *(1,) * self._family.positions)

    def _gate_shape(self, tensor):
        """The shape of one draw of the gates on ``tensor``: per example and channel, 1 along positions."""
        spatial = self._family.positions
        return (*tensor.shape[: tensor.dim() - spatial], *(1,) * spatial)

    def _noise(self, shape, like, draw):
        """``draw()``: the noise of this call's gates, or the draw its group shares (see :class:`GateGroup`)."""
        group = self.__dict__.get("gate_group")
        if group is None:
            return draw()
        return group._take(self.__dict__["_gate_leader"], (like.device, tuple(shape)), draw)

    def _add_bias(self, output, bias):
        if bias is None:
            return output
        if isinstance(bias, Cplx):
            return output + Cplx(self._along_channels(bias.real), self._along_channels(bias.imag))
        return output + self._along_channels(bias)

    def _weighted_forward(self, *inputs, **kwargs):
        """The dense twin's forward pass with the gates: drawn in training, fixed in eval mode."""
        if not self.training:
            bias = _cached_attr(self, "bias")
            return self._dense_forward(*inputs, weight=self._gated_weight(), bias=bias, **kwargs)
        weight, bias = _cached_attr(self, "weight"), _cached_attr(self, "bias")
        if self.gated == "input":
            # a bilinear layer's gates are on its first input
            first, *others = inputs
            gated = self._draw_gates(first, self._gate_shape(first))
            return self._dense_forward(gated, *others, weight=weight, bias=bias, **kwargs)
        output = self._dense_forward(*inputs, weight=weight, bias=None, **kwargs)
        return self._add_bias(self._draw_gates(output, self._gate_shape(output)), bias)

    def relevance(self, **kwargs):
        """The mask of the channels to keep, of the weight's real shape.

        Parameters
        ----------
        **kwargs
            As the gate takes them (``threshold=`` for a Gaussian gate,
            ``hard=`` for an L0 gate); the others are ignored, so one call
            serves a model that mixes the layers.

        Returns
        -------
        torch.Tensor
            Detached, of the weight's real shape and dtype, constant along
            everything but the gated channels: its zeros are whole rows
            (output channels) or whole columns (input channels).
        """
        with torch.no_grad():
            return self._expand(self._channel_relevance(**kwargs))

    def sparsity(self, **kwargs):
        """The weight entries the relevance mask drops, for :func:`~cplxmodule.nn.utils.named_sparsity`.

        Parameters
        ----------
        **kwargs
            As for :meth:`relevance`.

        Returns
        -------
        list of (int, float)
            ``id`` of the weight (of each part of a complex weight) and the count.
        """
        return _weight_counts(self, 1 - self.relevance(**kwargs))


class ChannelGateMixin(_ChannelGeometry):
    r"""The channel geometry and forward pass shared by every structured layer.

    A gate per output channel (``gated="output"``, the layer's
    ``out_features`` or ``out_channels``) or per input channel
    (``gated="input"``: ``in_features``, ``in_channels``, or a bilinear
    layer's ``in1_features``). In training mode the layer's output is
    :math:`z \odot (W x) + b` or :math:`W (z \odot x) + b`, the gates drawn
    by ``_draw_gates`` once per example and channel (per row of the input
    of a linear layer, per sample of a convolution's batch, shared by the
    channel's positions: the weight-noise model itself, so a channel whose
    gate is noise cannot hide it by averaging over positions); in eval mode
    it is the dense twin's output with ``_gated_weight()``. The bias is not
    gated.

    Subclasses define ``_draw_gates(tensor, shape)`` (``tensor`` times the
    drawn gates), ``_gated_weight()`` (the weight times the eval-mode
    gates) and ``_channel_relevance(**kwargs)`` (a vector over the
    channels).

    Parameters
    ----------
    *args, **kwargs
        The dense twin's.
    gated : {"output", "input"}, default "output"
        The channels that carry the gates, keyword only.

    Raises
    ------
    ValueError
        If ``gated`` is neither.
    """

    _AXES = ("output", "input")

    @classmethod
    def _member_doc(cls, kind):
        return channel_layer_doc(cls, kind)

    def __init__(self, *args: Any, gated: str = "output", **kwargs: Any) -> None:
        # before the dense twin's ``__init__``: the gates' parameter, made
        # inside it by a Gaussian base, is shaped by the gated channels
        self._set_gated(gated)
        super().__init__(*args, **kwargs)

    def _set_gated(self, gated):
        check_choice(gated, "gated", type(self).__name__, self._AXES)
        self.gated = gated

    def _attach_kind(self, **kwargs):
        self._set_gated(kwargs.pop("gated", "output"))
        super()._attach_kind(**kwargs)

    def _detach_kind(self):
        super()._detach_kind()
        del self.gated
        self.__dict__.pop("gate_group", None)
        self.__dict__.pop("_gate_leader", None)

    @property
    def n_channels(self):
        """int: the number of gated channels, one gate each."""
        return getattr(self, self._family.features[self._AXES.index(self.gated)])

    def _empty_gate(self):
        real = _real(self.weight)
        return torch.empty(self.n_channels, dtype=real.dtype, device=real.device)

    def extra_repr(self):
        extra = super().extra_repr()
        if self.gated == "input":
            extra = f"{extra}, gated='input'"
        group = self.__dict__.get("gate_group")
        # the group by its leader's name, which holds the gates
        return extra if group is None else f"{extra}, gate_group={group.names[0]!r}"


class GateGroup:
    r"""One gate for each channel that several structured layers write.

    Where layers write one group of channels (summed into a residual
    stream, say, so that channel :math:`c` of each is channel :math:`c` of
    the model), the group is one random gate :math:`z_c` per channel and
    example: the first layer that a forward call reaches, the leader, holds
    the gates' parameter (``log_sigma2``, or L0's ``log_alpha``), which the
    others take as theirs (the same :class:`~torch.nn.Parameter`, so an
    optimizer sees it once); in training it draws the gates, and the others
    take its draw of the same shape on their device (one that finds none,
    when called without the leader, draws its own). The leader alone counts
    the group's penalty in :func:`~cplxmodule.nn.relevance.named_penalties`
    and :func:`~cplxmodule.nn.relevance.penalties`: one KL term (or L0
    norm) per channel of the model. The layers' relevance masks are then
    alike, and a channel that the gates drop is dead in every layer that
    writes it, which :func:`~cplxmodule.nn.masked.compact` removes.

    Each layer holds the group as its ``gate_group`` attribute (not in its
    ``state_dict``, which holds the shared parameter under each layer's
    name and loads into layers without a group as well). A conversion to
    another kind leaves the group.
    :func:`~cplxmodule.nn.relevance.to_bayesian` makes the groups of a model
    from one call on ``example_inputs``.

    Parameters
    ----------
    layers : sequence of torch.nn.Module
        Two or more structured layers with output gates (``gated="output"``)
        of one class of gate, Gaussian or L0, with as many channels each, in
        the order a forward call reaches them; none already in a group.
    names : sequence of str
        Their names in the model.

    Attributes
    ----------
    names : tuple of str
        The layers' names, the leader's first.

    Raises
    ------
    ValueError
        If fewer than two layers are given, or as many names, or a layer's
        gates differ from the leader's (axis, class, channels) or are already
        in a group.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import CplxLinearChannelVD, penalties
    >>> first, second = CplxLinearChannelVD(4, 3), CplxLinearChannelVD(5, 3)
    >>> group = GateGroup([first, second], ["first", "second"])
    >>> second.log_sigma2 is first.log_sigma2, second.gate_group.names
    (True, ('first', 'second'))
    >>> len(list(penalties(torch.nn.ModuleList([first, second]))))
    1
    """

    def __init__(self, layers: Sequence[torch.nn.Module], names: Sequence[str]) -> None:
        layers, self.names = list(layers), tuple(names)
        if len(layers) < 2 or len(self.names) != len(layers):
            raise ValueError(
                f"GateGroup: `layers` must be two or more, with as many `names`,"
                f" got {len(layers)} layers and {len(self.names)} names"
            )
        leader = layers[0]
        for name, layer in zip(self.names, layers):
            _check_joins(leader, name, layer)
        variational: str = getattr(leader, "_variational")  # checked: a gated layer's
        for layer in layers[1:]:
            setattr(layer, variational, getattr(leader, variational))
        for layer in layers:
            layer.__dict__["gate_group"] = self
            layer.__dict__["_gate_leader"] = layer is leader
        # per device: (the shape of the leader's last draw, the draw)
        self._drawn: dict[torch.device, tuple[tuple[int, ...], torch.Tensor]] = {}

    def _take(self, leader, key, draw):
        device, shape = key
        if leader:
            noise = draw()
            self._drawn[device] = shape, noise
            return noise
        drawn = self._drawn.get(device)
        return drawn[1] if drawn is not None and drawn[0] == shape else draw()

    def __repr__(self) -> str:
        return f"GateGroup({list(self.names)!r})"


def _check_joins(leader, name, layer):
    """Refuse ``layer`` (called ``name``) in a group led by ``leader``, naming what differs."""
    problem = None
    if not isinstance(layer, (ChannelGaussianMixin, ChannelL0Mixin)) or (
        type(layer).penalty is not type(leader).penalty
    ):
        problem = f"its gates are not of the kind of the leader's ({type(leader).__name__})"
    elif layer.gated != "output":
        problem = "it gates its inputs"
    elif layer.n_channels != leader.n_channels:
        problem = f"it has {layer.n_channels} channels, the leader {leader.n_channels}"
    else:
        ours, theirs = (getattr(m, m._variational) for m in (layer, leader))
        if (ours.dtype, ours.device) != (theirs.dtype, theirs.device):
            problem = f"its gates are {ours.dtype} on {ours.device}, the leader's {theirs.dtype} on {theirs.device}"
        elif "gate_group" in layer.__dict__:
            problem = f"it is in {layer.gate_group!r} already"
    if problem is not None:
        raise ValueError(f"GateGroup: layer {name!r} ({type(layer).__name__}) cannot join: {problem}")


class ChannelGaussianMixin(ChannelGateMixin, GaussianMixin, BaseARD):
    r"""The Gaussian channel gate :math:`z_c = 1 + \sqrt{\alpha_c}\,\varepsilon` of group variational dropout.

    ``log_sigma2`` (:math:`\log\sigma^2`, the variance of the gate, whose
    mean is 1) has one entry per gated channel, so
    :math:`\log\alpha = \log\sigma^2`. The output of channel :math:`c` has
    the mean :math:`(Wx)_c` and the variance :math:`\alpha_c |(Wx)_c|^2`
    (complex: split evenly over the parts, see
    :func:`~cplxmodule.nn.relevance.functional.gaussian_gate`); gated
    inputs likewise, :math:`z_j x_j` of mean :math:`x_j` and variance
    :math:`\alpha_j |x_j|^2`, mixed by the weight; in eval mode
    the gate is its mean, 1, and the layer computes as its dense twin.
    ``relevance(threshold=t)`` keeps the channels with
    :math:`\log\alpha \leq t`. The penalty is a per-weight layer's, one
    term per channel (a mixin such as
    :class:`~cplxmodule.nn.relevance.real.RealVDMixin` goes first).

    ``log_sigma2`` starts at -10, as in the per-weight layers. A
    ``log_sigma2`` of another shape in a loaded state_dict (a per-weight VD
    or ARD layer's, the gates of the other axis) is not this layer's: it is
    left out, and reported missing. Gates of the other axis of the same
    size (a square layer's) load: a state_dict does not say which axis
    they gated.

    Shape
    -----
    - Input and output: as for the dense twin.
    - ``log_sigma2``, ``log_alpha`` and ``penalty``: ``(n_channels,)``;
      ``relevance(threshold=t)``: the weight's real shape.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import Conv1dChannelVD
    >>> layer = Conv1dChannelVD(2, 3, 5)
    >>> layer.log_sigma2.shape, layer.relevance(threshold=3.0).shape
    (torch.Size([3]), torch.Size([3, 2, 5]))
    """

    def _empty_log_sigma2(self):
        return self._empty_gate()

    @property
    def log_alpha(self):
        r"""torch.Tensor: :math:`\log\alpha = \log\sigma^2` per channel: the gate's mean is 1."""
        return self.log_sigma2

    def _draw_gates(self, tensor, shape):
        noise = self._noise(shape, tensor, lambda: F.gaussian_noise(tensor, shape))
        return F.gaussian_gate(tensor, self._along_channels(self.log_alpha), shape, noise=noise)

    def _gated_weight(self):
        # no ``_eval_weight``: ``compact`` then sparsifies by ``relevance(threshold)``
        return _cached_attr(self, "weight")

    def _channel_relevance(self, *, threshold=None, **kwargs):
        return _kept(self.log_alpha, threshold, type(self).__name__)

    def relevance(self, *, threshold=None, **kwargs):
        r"""The mask of the channels to keep: :math:`\log\alpha_c \leq` ``threshold``.

        Parameters
        ----------
        threshold : float or 0-dim float tensor
        **kwargs
            Accepted and ignored (e.g. ``hard``).

        Returns
        -------
        torch.Tensor
            A detached 0/1 tensor of the weight's real shape and dtype whose
            zeros are whole gated channels.

        Raises
        ------
        TypeError
            If ``threshold`` is not a real number.
        """
        return super().relevance(threshold=threshold, **kwargs)

    def sparsity(self, *, threshold=None, **kwargs):
        """The weight entries of the dropped channels, for :func:`~cplxmodule.nn.utils.named_sparsity`.

        Parameters
        ----------
        threshold : float
            As for :meth:`relevance`.
        **kwargs
            Ignored.

        Returns
        -------
        list of (int, float)
        """
        return super().sparsity(threshold=threshold, **kwargs)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        key = prefix + "log_sigma2"
        value = state_dict.get(key)
        if value is not None and value.shape != self.log_sigma2.shape:
            state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


class _HardConcreteGates(_KindMixin, SparsityStats):
    r"""The one L0 gate mechanism: hard-concrete gates (Louizos, Welling & Kingma, 2018).

    ``log_alpha``, the gates' log-odds of being closed, starts at
    :math:`\log(0.1 / 0.9)`. In training the gates are drawn by
    :func:`~cplxmodule.nn.relevance.functional.hard_concrete` (``gate()``;
    on the channels of a weight, ``_draw_gates`` of
    ``_HardConcreteChannels``), in eval mode they are
    :func:`~cplxmodule.nn.relevance.functional.hard_concrete_gate`
    (``_eval_gates``), which a channel layer folds into its weight
    (``_gated_weight``, which ``_eval_weight`` gives
    :func:`~cplxmodule.nn.masked.compact`); the penalty is
    :func:`~cplxmodule.nn.relevance.functional.l0_penalty`. The gate is
    real, also for a complex layer (a phase-invariant scale). The hidden-unit
    gates of the recurrent layers (:mod:`cplxmodule.nn.relevance.recurrent`)
    are these gates too.
    """

    beta, gamma, zeta = 2.0 / 3.0, -0.1, 1.1
    __sparsity_ignore__ = ("log_alpha",)
    _variational = "log_alpha"

    def _make_log_alpha(self, empty):
        self.log_alpha = torch.nn.Parameter(empty)
        self.reset_variational_parameters()

    def _detach_kind(self):
        super()._detach_kind()
        del self.log_alpha

    def reset_variational_parameters(self):
        """Open every gate with probability about 0.9."""
        with torch.no_grad():
            self.log_alpha.fill_(math.log(0.1 / 0.9))

    @property
    def penalty(self):
        """torch.Tensor: the probability of each gate being non-zero, the expected L0 norm."""
        return F.l0_penalty(self.log_alpha, self.beta, self.gamma, self.zeta)

    def gate(self):
        """The gates: a hard-concrete sample in training, their deterministic value in eval mode.

        Returns
        -------
        torch.Tensor
            Of ``log_alpha``'s shape, in :math:`[0, 1]`.
        """
        if self.training:
            return F.hard_concrete(
                self.log_alpha, self.log_alpha.shape, self.beta, self.gamma, self.zeta
            )
        return self._eval_gates()

    def _eval_gates(self):
        return F.hard_concrete_gate(self.log_alpha, self.gamma, self.zeta)

    def _gate_relevance(self, hard):
        """1 where an eval-mode gate is open at all (``hard``), else the gates' values; detached.

        A NaN ``log_alpha`` gives a closed hard gate: it is refused instead.
        """
        with torch.no_grad():
            _check_no_nan(self.log_alpha, type(self).__name__)
            gate = self._eval_gates()
            return torch.gt(gate, 0).to(gate.dtype) if hard else gate


class _HardConcreteChannels(_HardConcreteGates):
    """Hard-concrete gates on the channels of a layer's weight, which the geometry maps."""

    if TYPE_CHECKING:
        # the channel geometry's, which comes before it in a layer's bases
        def _along_channels(self, vector: torch.Tensor) -> torch.Tensor: ...

        def _channel_view(self, vector: torch.Tensor) -> torch.Tensor: ...

        def _noise(self, shape: Any, like: Any, draw: Any) -> torch.Tensor: ...

    def _draw_gates(self, tensor, shape):
        log_alpha = self._along_channels(self.log_alpha)
        noise = self._noise(shape, tensor, lambda: F.uniform_noise(shape, log_alpha))
        return tensor * F.hard_concrete(log_alpha, shape, self.beta, self.gamma, self.zeta, noise=noise)

    def _gated_weight(self):
        return _cached_attr(self, "weight") * self._channel_view(self._eval_gates())

    def _eval_weight(self):
        """The weight the eval-mode forward computes with: the gates folded in.

        :func:`~cplxmodule.nn.masked.compact` stores it in the dense twin.
        """
        return self._gated_weight()

    def _channel_relevance(self, *, hard=True, **kwargs):
        return self._gate_relevance(hard)


class ChannelL0Mixin(ChannelGateMixin, _HardConcreteChannels, BaseARD):
    r"""The hard-concrete channel gate of L0 regularisation (Louizos, Welling & Kingma, 2018).

    ``log_alpha`` (one entry per gated channel, the gate's log-odds of
    being closed) is learned; in training each gate is drawn by
    :func:`~cplxmodule.nn.relevance.functional.hard_concrete` per example
    and channel, in eval mode it is
    :func:`~cplxmodule.nn.relevance.functional.hard_concrete_gate`, in
    :math:`[0, 1]`, folded into the weight (``_eval_weight``, which
    :func:`~cplxmodule.nn.masked.compact` stores). The gate is real, also
    for a complex layer (a phase-invariant scale). ``penalty`` is the
    probability of each gate being non-zero,
    :func:`~cplxmodule.nn.relevance.functional.l0_penalty`: the expected
    number of channels kept. ``log_alpha`` starts at
    :math:`\log(0.1 / 0.9)`, as in
    :class:`~cplxmodule.nn.relevance.LinearL0`.

    The layer converts (:func:`~cplxmodule.nn.masked.to_masked`,
    :func:`~cplxmodule.nn.masked.convert_layers`,
    :func:`~cplxmodule.nn.relevance.to_bayesian`) as the dense layer it
    computes as in eval mode: its twin's weight is ``_eval_weight()``, the
    gates' values in :math:`[0, 1]` folded in, and the gates stay behind.
    Its masked twin with the mask of ``relevance()`` (``hard=True``: 1 on
    the channels whose gate is open at all, the mask that
    :func:`~cplxmodule.nn.relevance.compute_ard_masks` gives by default)
    therefore computes in eval mode what the layer does, and
    :func:`~cplxmodule.nn.masked.compact` of either removes the closed
    channels. Masks of ``relevance(hard=False)`` hold the gates' values,
    which that weight holds already: deployed, they would scale it twice.

    Shape
    -----
    - Input and output: as for the dense twin.
    - ``log_alpha``, ``gate()`` and ``penalty``: ``(n_channels,)``;
      ``relevance()``: the weight's real shape.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import CplxLinearChannelL0
    >>> layer = CplxLinearChannelL0(4, 3)
    >>> layer.log_alpha.shape, layer.relevance().shape
    (torch.Size([3]), torch.Size([3, 4]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._make_log_alpha(self._empty_gate())

    def _attach_kind(self, **kwargs):
        super()._attach_kind(**kwargs)
        self._make_log_alpha(self._empty_gate())

    def relevance(self, *, hard=True, **kwargs):
        """The eval-mode gates of the channels, of the weight's real shape.

        Parameters
        ----------
        hard : bool, default True
            ``1`` where a gate is open at all, ``0`` where it is exactly
            closed; ``False`` gives the gates' values.
        **kwargs
            Ignored (e.g. ``threshold``): a hard-concrete gate is exactly 0 or not.

        Returns
        -------
        torch.Tensor
            Detached, of the weight's real shape and dtype.
        """
        return super().relevance(hard=hard)

    def sparsity(self, *, hard=True, **kwargs):
        """The weight entries the gates close, for :func:`~cplxmodule.nn.utils.named_sparsity`.

        Parameters
        ----------
        hard : bool, default True
            Count the closed gates; ``False`` sums ``1 - gate``.
        **kwargs
            Ignored.

        Returns
        -------
        list of (int, float)
        """
        return super().sparsity(hard=hard)


_METHODS = {
    "channel_vd": ("variational dropout of whole channels", "ChannelGaussianMixin"),
    "channel_ard": ("ARD of whole channels", "ChannelGaussianMixin"),
    "channel_l0": ("L0 gates of whole channels", "ChannelL0Mixin"),
}

_TEMPLATE = """{What} with {method}.

    See :class:`~cplxmodule.nn.relevance.structured.{base}` for the gates.

    Parameters
    ----------
    *args, **kwargs
        The arguments of :class:`{twin}`.
    gated : {{"output", "input"}}, default "output"
        Keyword only: gate the output channels (the weight's rows), or the
        {inputs_what} (its columns).

    Shape
    -----
    - Input and output: as for :class:`{twin}`.
    - ``penalty``: ``(n_channels,)``, one term per gated channel;
      ``relevance(...)``: the {weight} shape, whole channels zero.

    Examples
    --------
    >>> layer = {name}({arguments})
    >>> layer({inputs}).shape
    torch.Size([{output}])
    >>> layer.penalty.shape
    torch.Size([{channels}])
    >>> {name}({arguments}, gated="input").penalty.shape
    torch.Size([{in_channels}])
    """


def channel_layer_doc(cls, kind):
    """The docstring of the structured layer class ``cls``, e.g. ``CplxConv2dChannelVD``.

    Parameters
    ----------
    cls : type
        A class that declares its family.
    kind : {"channel_vd", "channel_ard", "channel_l0"}
        Its kind.

    Returns
    -------
    str
    """
    fields = twin_fields(cls)
    fields.pop("complex")
    method, base = _METHODS[kind]
    doc = cls._family.doc
    return _TEMPLATE.format(
        What=fields.pop("what"),
        method=method,
        base=base,
        channels=doc.out_channels,
        in_channels=doc.in_channels,
        inputs_what=doc.inputs_what,
        **fields,
    )
