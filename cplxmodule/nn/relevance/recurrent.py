r"""Hidden-unit sparsity of the recurrent layers: one gate per hidden unit, L0 or Gaussian.

A recurrent layer's hidden unit :math:`j` of one layer and direction owns
a row of every gate in both projections, ``ih`` and ``hh`` (the GRU's
:math:`r, z, n`, the LSTM's :math:`i, f, g, o`), and is read through a
column of ``hh`` and of the next layer's ``ih`` (of ``hr`` with
``proj_size``). A per-weight or per-row gate prunes these weights one by
one, which rarely empties a whole unit; the layers here put one gate
:math:`z_j` on the unit instead. It scales the unit's pre-activations,
biases included, in both projections:

.. math::

    a_{g,j} = z_j \left( (W_{ig} x + b_{ig})_j + (W_{hg} h + b_{hg})_j \right)
    \quad \text{for every gate } g,

so that a closed gate, :math:`z_j = 0`, makes the candidate of the unit
zero at every step and its state zero from a zero initial state: the unit
is *dead* in the sense of :class:`~cplxmodule.nn.masked.CompactRecurrent`,
its columns read a zero, and :func:`~cplxmodule.nn.masked.compact` removes
it. The gate is real for the complex layers (a phase-invariant scale) and
drawn once per forward call in training (it is a parameter of the network,
as the weights it scales). Two gates share this geometry
(``_UnitGates``):

- :class:`UnitL0Mixin`, the hard-concrete gate of L0 regularisation
  (Louizos, Welling & Kingma, 2018, who gate neurons so), the one mechanism
  of the structured layers
  (:class:`~cplxmodule.nn.relevance.structured.ChannelL0Mixin`): its
  deterministic value in :math:`[0, 1]` in eval mode, exactly 0 when
  closed. ``kind="unit_l0"``.
- :class:`UnitGaussianMixin`, the Gaussian gate
  :math:`z_j \sim \mathcal{N}(1, \alpha_j)` of variational dropout
  (``kind="unit_vd"``, Molchanov et al., 2017) or ARD (``kind="unit_ard"``,
  Kharitonov et al., 2018), penalised by the real KL of each gate. Its
  eval-mode value is its mean, 1, so a unit that a threshold on
  :math:`\log\alpha` drops is not closed by the gate: the masks of
  :func:`~cplxmodule.nn.relevance.compute_ard_masks` zero its rows and
  columns, and its biases, which would keep its state alive, are zeroed by
  :func:`~cplxmodule.nn.masked.to_masked` (and by
  :func:`~cplxmodule.nn.masked.compact` with ``threshold``). The masked
  model then does not compute what the Bayesian one does in eval mode on
  the dropped units: pruning them is the point, as for the weights of a
  per-weight VD layer.

The pipeline is that of every layer: :func:`~cplxmodule.nn.relevance.to_bayesian`
with ``kind="unit_l0"`` turns :class:`~cplxmodule.nn.CplxRNN`,
:class:`~cplxmodule.nn.CplxGRU` and :class:`~cplxmodule.nn.CplxLSTM` into
:class:`CplxRNNUnitL0`, :class:`CplxGRUUnitL0` and :class:`CplxLSTMUnitL0`
(``"unit_vd"``: :class:`CplxRNNUnitVD`, ...; ``"unit_ard"``:
:class:`CplxRNNUnitARD`, ...; the model's other layers have no such twin
and stay); :func:`~cplxmodule.nn.relevance.penalties` collects their
expected number of open units or their KL;
:func:`~cplxmodule.nn.relevance.compute_ard_masks` gives the masks of their
projections, ``<layer>.ih_l0.mask`` and so on, whose zeros are whole units
(rows of every gate, the columns that read the unit);
:func:`~cplxmodule.nn.masked.to_masked` gives the plain recurrent layer with
masked projections (an L0 layer's eval-mode gates folded into their weights
and biases, which then computes in eval mode what the gated layer does; a
Gaussian layer's dropped units' biases zeroed); and
:func:`~cplxmodule.nn.masked.compact` of either gives a
:class:`~cplxmodule.nn.masked.CompactRecurrent` with fewer hidden units.
"""

from __future__ import annotations

import inspect

import torch

from ..modules.rnn import _GATES, CplxGRU, CplxLSTM, CplxRNN, _CplxRNNBase
from ...cplx._shared import check_choice
from .. import _families
from . import functional as F
from ..modules._weighted import _KindMixin
from .base import BaseARD, _kept, _real
from .structured import _HardConcreteGates
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Optional

if TYPE_CHECKING:
    # a mixin of the plain layers, before them (and before the gate's mechanism) in the MRO
    _RecurrentMixin = _CplxRNNBase
else:
    _RecurrentMixin = object

# the layers are documented at ``cplxmodule.nn.relevance``, as the structured ones
__all__ = ["UnitL0Mixin", "UnitGaussianMixin"]


class _Scaled:
    """A projection of the recurrence whose output is scaled by ``scale`` (``(rows, 1)``, pairs layout)."""

    def __init__(self, projection, scale):
        self.projection, self.scale = projection, scale

    def __call__(self, x):
        return self.projection(x) * self.scale


class _UnitGates(_RecurrentMixin):
    """The hidden-unit geometry of every unit gate: the scaled projections, the twins, the masks.

    A gate mixin derives from it and defines ``log_alpha`` (through
    ``_make_log_alpha``), ``gate()`` (drawn in training, the eval-mode
    value otherwise), ``relevance(**kwargs)`` (the units to keep) and
    ``_folded_gates(**kwargs)`` (what :meth:`plain_twin` multiplies each
    unit's rows and biases by, ``None`` for nothing); the table at the end
    of this module names each layer's plain class and kind, one of the
    mixin's ``_unit_kinds``.
    """

    _unit_kind: str
    _unit_kinds: ClassVar[tuple[str, ...]]
    _gate_name: str

    if TYPE_CHECKING:
        # what the gate mixin defines (not here: it comes after this class in the MRO)
        def _make_log_alpha(self, empty: torch.Tensor) -> None: ...

        def gate(self) -> torch.Tensor: ...

        relevance: Callable[..., torch.Tensor]

        def _folded_gates(self, **kwargs: Any) -> Optional[torch.Tensor]: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        real = _real(self.ih_l0.weight)
        units = len(self._suffixes()), self.hidden_size
        self._make_log_alpha(torch.empty(units, dtype=real.dtype, device=real.device))

    def _projections(self):
        gates = self.gate()
        repeat = _GATES[self.mode]
        projections = []
        for (ih, hh, hr, bias), gate in zip(super()._projections(), gates):
            scale = gate.repeat(repeat).unsqueeze(-1)
            projections.append((_Scaled(ih, scale), _Scaled(hh, scale), hr, bias))
        return projections

    # the twins
    @classmethod
    def _plain_class(cls):
        return _families.lookup_composite(cls).dense

    @classmethod
    def from_plain(cls, layer: _CplxRNNBase) -> "_UnitGates":
        """The gated twin of the plain recurrent layer ``layer``: its weights, the gates at their initial values.

        Parameters
        ----------
        layer : CplxRNN, CplxGRU or CplxLSTM
            Of exactly this class's plain class, with dense projections.

        Returns
        -------
        torch.nn.Module
            The twin, of this class, in ``layer``'s training mode.
        """
        twin = _built_like(cls, layer, cls._plain_class())
        twin.load_state_dict(layer.state_dict(), strict=False)
        return twin.train(layer.training)

    def plain_twin(self, **kwargs: Any) -> _CplxRNNBase:
        """The plain recurrent layer of this one's weights, each unit's rows and biases times its folded gate.

        Parameters
        ----------
        **kwargs
            What the gate folds in by (``threshold`` for a Gaussian gate);
            see the gate mixin.

        Returns
        -------
        CplxRNN, CplxGRU or CplxLSTM
            In this layer's training mode; the modulus gates' real biases
            are kept, as the gates do not scale them.
        """
        plain_class = self._plain_class()
        plain = _built_like(plain_class, self, plain_class)
        state = {key: value for key, value in self.state_dict().items() if key != "log_alpha"}
        plain.load_state_dict(state)
        gates = self._folded_gates(**kwargs)
        if gates is not None:
            _scale_units(plain, gates)
        return plain.train(self.training)

    # the masks
    def projection_relevance(self, **kwargs: Any) -> Iterator[tuple[str, torch.Tensor]]:
        """The masks of the projections, whole units zero: what :func:`compute_ard_masks` gives.

        Parameters
        ----------
        **kwargs
            As for the layer's ``relevance``.

        Yields
        ------
        name : str
            The projection's name, ``ih_l0``, ``hh_l0_reverse``, ``hr_l1``, ...
        mask : torch.Tensor
            Of its weight's real shape and dtype: a unit's rows of every
            gate and (in ``hh``, the next layer's ``ih`` or ``hr``) its
            columns carry its value.
        """
        units = self.relevance(**kwargs)
        directions = 2 if self.bidirectional else 1
        repeat = _GATES[self.mode]
        for k, suffix in enumerate(self._suffixes()):
            rows = units[k].repeat(repeat)
            below = k // directions - 1
            if below < 0 or self.proj_size:
                ih = getattr(self, "ih" + suffix)
                columns = units.new_ones(ih.in_features)
            else:
                columns = units[below * directions : (below + 1) * directions].flatten()
            yield "ih" + suffix, torch.outer(rows, columns)
            if self.proj_size:
                yield "hh" + suffix, rows.unsqueeze(-1).expand(-1, self.proj_size).clone()
                yield "hr" + suffix, units[k].expand(self.proj_size, -1).clone()
            else:
                yield "hh" + suffix, torch.outer(rows, units[k])

    def sparsity(self, **kwargs):
        """The projections' weight entries that the masks drop, for :func:`named_sparsity`.

        Parameters
        ----------
        **kwargs
            As for the layer's ``relevance``; ``hard=False`` of an L0 gate
            sums ``1 - mask``.

        Returns
        -------
        list of (int, float)
        """
        counts = []
        for name, mask in self.projection_relevance(**kwargs):
            dropped = float(torch.sum(1 - mask))
            counts += [(id(part), dropped) for part in _parts(getattr(self, name).weight)]
        return counts

    def extra_repr(self) -> str:
        return super().extra_repr() + f", unit gates: {self._gate_name}"


def _built_like(cls, layer, plain_class):
    """A new ``cls`` of ``layer``'s arguments of ``plain_class``'s constructor, device and dtype."""
    real = _real(layer.ih_l0.weight)
    names = inspect.signature(plain_class.__init__).parameters
    kwargs = {name: getattr(layer, name) for name in names if name not in ("self", "device", "dtype")}
    return cls(**kwargs, device=real.device, dtype=real.dtype)


def _scale_units(plain, gates, weights=True):
    """Multiply each unit's rows of every gate of ``plain``'s projections by its gate.

    The biases' rows always, the weights' rows if ``weights``.
    """
    with torch.no_grad():
        for suffix, gate in zip(plain._suffixes(), gates):
            rows = gate.repeat(_GATES[plain.mode])
            for name in ("ih", "hh"):
                projection = getattr(plain, name + suffix)
                for part in _parts(projection.weight) if weights else ():
                    part.mul_(rows.unsqueeze(-1))
                for part in _parts(projection.bias):
                    part.mul_(rows)


class UnitL0Mixin(_UnitGates, _HardConcreteGates, _CplxRNNBase):
    r"""Hard-concrete L0 gates on the hidden units of a recurrent layer.

    Goes before the plain recurrent layer, :class:`BaseARD` after it
    (``class CplxGRUUnitL0(UnitL0Mixin, CplxGRU, BaseARD)``). ``log_alpha``,
    of shape ``(num_layers * D, hidden_size)`` (``D`` directions, in
    torch's order of the layers and directions), is each gate's log-odds of
    being closed, :math:`\log(0.1 / 0.9)` to start; the gate scales every
    pre-activation of its unit, biases included (see
    :mod:`cplxmodule.nn.relevance.recurrent`).

    In training one draw of the gates serves the whole call (every example
    and step: the gate is a parameter of the network, as the weights it
    scales); in eval mode the gates are their deterministic values,
    :func:`~cplxmodule.nn.relevance.functional.hard_concrete_gate`, which
    ``plain_twin()`` folds into the plain layer's weights and biases.
    ``penalty`` is the probability of each gate being open,
    :func:`~cplxmodule.nn.relevance.functional.l0_penalty`: the expected
    number of live units.

    Shape
    -----
    - Input, states and output: as for the plain layer.
    - ``log_alpha``, ``penalty`` and ``relevance()``:
      ``(num_layers * D, hidden_size)``.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import CplxLSTMUnitL0
    >>> layer = CplxLSTMUnitL0(4, 8, bidirectional=True)
    >>> layer.log_alpha.shape, layer.penalty.sum().item() > 14
    (torch.Size([2, 8]), True)
    """

    _unit_kinds, _gate_name = ("unit_l0",), "L0"

    def _folded_gates(self, **kwargs):
        return self._eval_gates()

    def relevance(self, *, hard: bool = True, **kwargs: Any) -> torch.Tensor:
        """The units to keep: 1 where a gate is open at all (``hard``), else the gates' values.

        Parameters
        ----------
        hard : bool, default True
        **kwargs
            Ignored (e.g. ``threshold``).

        Returns
        -------
        torch.Tensor
            Detached, ``(num_layers * D, hidden_size)``; the masks of the
            projections are ``projection_relevance()``'s.
        """
        return self._gate_relevance(hard)


class UnitGaussianMixin(_KindMixin, _UnitGates, _CplxRNNBase):
    r"""Gaussian gates :math:`z_j \sim \mathcal{N}(1, \alpha_j)` on the hidden units of a recurrent layer.

    Variational dropout (``kind="unit_vd"``, Molchanov et al., 2017) or
    ARD (``kind="unit_ard"``, Kharitonov et al., 2018) of whole units: goes
    before the plain recurrent layer, :class:`BaseARD` after it, and the
    table of twins at the end of this module names the kind
    (``(CplxGRUUnitVD, CplxGRU, "unit_vd")``). ``log_alpha``, of
    shape ``(num_layers * D, hidden_size)``, is :math:`\log\alpha_j`, -10
    to start, as the per-weight layers' :math:`\log\sigma^2`; the gate is
    real, also for the complex layers (a phase-invariant scale), and
    scales every pre-activation of its unit, biases included (see
    :mod:`cplxmodule.nn.relevance.recurrent`).

    In training one draw of the gates,
    :math:`z_j = 1 + \sqrt{\alpha_j}\,\varepsilon_j`, serves the whole
    call (every example and step, as for
    :class:`~cplxmodule.nn.relevance.recurrent.UnitL0Mixin`); in eval mode
    the gates are their mean, 1, and the layer computes as its plain twin.
    ``penalty`` is the KL of real variational dropout or ARD of each gate,
    :func:`~cplxmodule.nn.relevance.functional.kl_real_vd` or
    :func:`~cplxmodule.nn.relevance.functional.kl_real_ard`;
    ``relevance(threshold=t)`` keeps the units with
    :math:`\log\alpha_j \leq t`.

    Pruning is the point, as for the weights of a per-weight VD layer:
    the masked twin (:func:`~cplxmodule.nn.masked.to_masked` with the masks
    of :func:`~cplxmodule.nn.relevance.compute_ard_masks`) and
    ``compact(threshold=t)`` drop the units. Their rows and columns are
    masked and :meth:`fold_masks` zeroes their biases, so they are dead and
    :func:`~cplxmodule.nn.masked.compact` removes them; the layer itself in
    eval mode still computes them (with their gate's mean 1), so the
    masked model differs from it there.

    Shape
    -----
    - Input, states and output: as for the plain layer.
    - ``log_alpha``, ``penalty`` and ``relevance(threshold=t)``:
      ``(num_layers * D, hidden_size)``.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import CplxGRUUnitARD
    >>> layer = CplxGRUUnitARD(4, 8, num_layers=2)
    >>> layer.log_alpha.shape, layer.relevance(threshold=3.0).sum().item()
    (torch.Size([2, 8]), 16.0)
    """

    __sparsity_ignore__: ClassVar[tuple[str, ...]] = ("log_alpha",)
    _variational = "log_alpha"
    _KL = {"unit_vd": F.kl_real_vd, "unit_ard": F.kl_real_ard}
    _unit_kinds, _gate_name = tuple(_KL), "Gaussian"

    def _make_log_alpha(self, empty):
        self.log_alpha = torch.nn.Parameter(empty)
        self.reset_variational_parameters()

    def reset_variational_parameters(self):
        """Set every gate's :math:`\\log\\alpha` to -10: the gates start nearly deterministic."""
        with torch.no_grad():
            self.log_alpha.fill_(-10.0)

    @property
    def penalty(self):
        """torch.Tensor: the KL of each unit's gate, of real variational dropout or ARD."""
        return self._KL[self._unit_kind](self.log_alpha)

    def gate(self):
        r"""The gates: :math:`1 + \sqrt\alpha\,\varepsilon` drawn in training, their mean 1 in eval mode.

        Returns
        -------
        torch.Tensor
            Of ``log_alpha``'s shape.
        """
        ones = torch.ones_like(self.log_alpha)
        if not self.training:
            return ones
        return F.gaussian_gate(ones, self.log_alpha, self.log_alpha.shape)

    def relevance(self, *, threshold: Any, **kwargs: Any) -> torch.Tensor:
        r"""The units to keep: :math:`\log\alpha_j \leq` ``threshold``.

        Parameters
        ----------
        threshold : float or 0-dim float tensor
        **kwargs
            Ignored (e.g. ``hard``).

        Returns
        -------
        torch.Tensor
            A detached 0/1 tensor ``(num_layers * D, hidden_size)``; the
            masks of the projections are ``projection_relevance()``'s.

        Raises
        ------
        TypeError
            If ``threshold`` is not a real number.
        """
        return _kept(self.log_alpha, threshold, type(self).__name__)

    def _folded_gates(self, *, threshold=None, **kwargs):
        # the eval-mode gates are 1; a threshold drops the units it drops
        return None if threshold is None else self.relevance(threshold=threshold)

    def plain_twin(self, *, threshold: Any = None, **kwargs: Any) -> _CplxRNNBase:
        """The plain recurrent layer of this one's weights; with ``threshold``, the dropped units dead.

        Parameters
        ----------
        threshold : float, optional
            Without it the plain layer computes what this one does in eval
            mode; with it, the rows (weights and biases) of the units that
            ``relevance(threshold=threshold)`` drops are zero, so that the
            units are dead (what :func:`~cplxmodule.nn.masked.compact`
            builds on).
        **kwargs
            Ignored.

        Returns
        -------
        CplxRNN, CplxGRU or CplxLSTM
            In this layer's training mode.
        """
        return super().plain_twin(threshold=threshold)

    @classmethod
    def fold_masks(cls, plain: _CplxRNNBase) -> None:
        """Zero the biases of the units that the masks of ``plain``'s projections drop: they die.

        :func:`~cplxmodule.nn.masked.to_masked` calls it on the masked plain
        twin of such a layer once the masks are deployed. A unit is dropped
        when the masks of ``ih`` and ``hh`` zero its rows of every gate (as
        those of ``projection_relevance()`` do); each unit's rows of
        every gate's bias are multiplied by whether it is kept.

        Parameters
        ----------
        plain : CplxRNN, CplxGRU or CplxLSTM
            With masked projections; changed in place.
        """
        gates = _GATES[plain.mode]
        kept, real = [], _real(plain.ih_l0.weight)
        for suffix in plain._suffixes():
            unit = torch.zeros(plain.hidden_size, dtype=torch.bool, device=real.device)
            for name in ("ih", "hh"):
                projection = getattr(plain, name + suffix)
                mask = getattr(projection, "mask", None)
                if mask is None:
                    unit[:] = True
                    continue
                full = torch.broadcast_to(mask.detach(), _real(projection.weight).shape)
                unit |= full.reshape(gates, plain.hidden_size, -1).ne(0).any(2).any(0)
            kept.append(unit.to(real.dtype))
        _scale_units(plain, kept, weights=False)


def _parts(x):
    return () if x is None else (x.real, x.imag)


_DOC = r"""{what} with {gate} on each hidden unit.

    See :mod:`cplxmodule.nn.relevance.recurrent` for the gates and the
    pipeline and :class:`~cplxmodule.nn.relevance.recurrent.{mixin}`
    for ``log_alpha``; built by
    :func:`~cplxmodule.nn.relevance.to_bayesian` with ``kind="{kind}"``.

    Parameters
    ----------
    *args, **kwargs
        The arguments of :class:`~cplxmodule.nn.{plain}`.

    Shape
    -----
    - Input, states and output: as for :class:`~cplxmodule.nn.{plain}`.
    - ``log_alpha``, ``penalty`` and ``relevance({relevance})``:
      ``(num_layers * D, hidden_size)``.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn.relevance import compute_ard_masks
    >>> layer = {name}(4, 8, num_layers=2)
    >>> output, _ = layer(cplx.randn(10, 3, 4))
    >>> output.shape, layer.penalty.shape
    (torch.Size([10, 3, 8]), torch.Size([2, 8]))
    >>> masks = compute_ard_masks(layer{relevance_call})
    >>> sorted(masks)[:2], masks["ih_l1.mask"].shape
    (['hh_l0.mask', 'hh_l1.mask'], torch.Size([{rows}, 8]))
    """

_GATE_DOCS = {
    "unit_l0": dict(gate="an L0 gate", mixin="UnitL0Mixin", relevance="", relevance_call=""),
    "unit_vd": dict(gate="a variational dropout gate", mixin="UnitGaussianMixin",
                    relevance="threshold=t", relevance_call=", threshold=3.0"),
    "unit_ard": dict(gate="an ARD gate", mixin="UnitGaussianMixin",
                     relevance="threshold=t", relevance_call=", threshold=3.0"),
}
_PLAIN_DOCS = {
    "RNN": ("A complex Elman RNN", 8), "GRU": ("A complex GRU", 24), "LSTM": ("A complex LSTM", 32),
}


def _layer_doc(cls):
    """The docstring of the gated layer class ``cls``."""
    what, rows = _PLAIN_DOCS[cls._plain_class().__name__.removeprefix("Cplx")]
    return _DOC.format(what=what, plain=cls._plain_class().__name__, name=cls.__name__,
                       rows=rows, kind=cls._unit_kind, **_GATE_DOCS[cls._unit_kind])


def _declare_unit_twin(cls, plain, kind):
    """Record ``cls`` as the ``kind`` twin of the plain recurrent layer ``plain`` (for ``convert_layers``).

    ``kind`` must be one of the gate mixin's ``_unit_kinds``; a class
    without a docstring of its own gets its kind's.
    """
    cls._unit_kind = check_choice(kind, "kind", cls.__name__, cls._unit_kinds)
    _families.declare_composite(cls, plain, kind)
    if cls.__doc__ is None:
        cls.__doc__ = _layer_doc(cls)


class CplxRNNUnitL0(UnitL0Mixin, CplxRNN, BaseARD):
    pass


class CplxGRUUnitL0(UnitL0Mixin, CplxGRU, BaseARD):
    pass


class CplxLSTMUnitL0(UnitL0Mixin, CplxLSTM, BaseARD):
    pass


class CplxRNNUnitVD(UnitGaussianMixin, CplxRNN, BaseARD):
    pass


class CplxGRUUnitVD(UnitGaussianMixin, CplxGRU, BaseARD):
    pass


class CplxLSTMUnitVD(UnitGaussianMixin, CplxLSTM, BaseARD):
    pass


class CplxRNNUnitARD(UnitGaussianMixin, CplxRNN, BaseARD):
    pass


class CplxGRUUnitARD(UnitGaussianMixin, CplxGRU, BaseARD):
    pass


class CplxLSTMUnitARD(UnitGaussianMixin, CplxLSTM, BaseARD):
    pass


# the unit-gated twins of the plain recurrent layers, by kind
for _twin, _plain, _kind in (
    (CplxRNNUnitL0, CplxRNN, "unit_l0"),
    (CplxGRUUnitL0, CplxGRU, "unit_l0"),
    (CplxLSTMUnitL0, CplxLSTM, "unit_l0"),
    (CplxRNNUnitVD, CplxRNN, "unit_vd"),
    (CplxGRUUnitVD, CplxGRU, "unit_vd"),
    (CplxLSTMUnitVD, CplxLSTM, "unit_vd"),
    (CplxRNNUnitARD, CplxRNN, "unit_ard"),
    (CplxGRUUnitARD, CplxGRU, "unit_ard"),
    (CplxLSTMUnitARD, CplxLSTM, "unit_ard"),
):
    _declare_unit_twin(_twin, _plain, _kind)
del _twin, _plain, _kind
