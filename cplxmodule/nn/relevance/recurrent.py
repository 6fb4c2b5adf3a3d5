r"""Hidden-unit sparsity of the recurrent layers: one L0 gate per hidden unit.

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
it. The gate is the hard-concrete gate of L0 regularisation (Louizos,
Welling & Kingma, 2018, who gate neurons so), the one mechanism of the
structured layers (:class:`~cplxmodule.nn.relevance.structured.ChannelL0Mixin`),
real for the complex layers (a phase-invariant scale): drawn once per
forward call in training, its deterministic value in :math:`[0, 1]` in eval
mode, exactly 0 when closed.

The pipeline is that of every layer: :func:`~cplxmodule.nn.relevance.to_bayesian`
with ``kind="unit_l0"`` turns :class:`~cplxmodule.nn.CplxRNN`,
:class:`~cplxmodule.nn.CplxGRU` and :class:`~cplxmodule.nn.CplxLSTM` into
:class:`CplxRNNUnitL0`, :class:`CplxGRUUnitL0` and :class:`CplxLSTMUnitL0`
(the model's other layers have no such twin and stay);
:func:`~cplxmodule.nn.relevance.penalties` collects their expected number
of open units; :func:`~cplxmodule.nn.relevance.compute_ard_masks` gives the
masks of their projections, ``<layer>.ih_l0.mask`` and so on, whose zeros
are whole units (rows of every gate, the columns that read the unit);
:func:`~cplxmodule.nn.masked.to_masked` gives the plain recurrent layer with
masked projections, the eval-mode gates folded into their weights and
biases, which computes in eval mode what the gated layer does; and
:func:`~cplxmodule.nn.masked.compact` of either gives a
:class:`~cplxmodule.nn.masked.CompactRecurrent` with fewer hidden units.

Why no Gaussian (variational dropout, ARD) gate of units: its eval-mode
value is its mean, 1, so a unit dropped by a threshold on :math:`\log\alpha`
still has its biases, whose candidate makes its state non-zero; a mask of
weights cannot kill it, and compact could not remove it.
"""

from __future__ import annotations

import inspect

import torch

from ..modules.rnn import _GATES, CplxGRU, CplxLSTM, CplxRNN, _CplxRNNBase
from .. import _families
from .base import BaseARD, _real
from .structured import _HardConcreteGates
from typing import Any, Iterator

# the layers are documented at ``cplxmodule.nn.relevance``, as the structured ones
__all__ = ["UnitL0Mixin"]


class _Scaled:
    """A projection of the recurrence whose output is scaled by ``scale`` (``(rows, 1)``, pairs layout)."""

    def __init__(self, projection, scale):
        self.projection, self.scale = projection, scale

    def __call__(self, x):
        return self.projection(x) * self.scale


class UnitL0Mixin(_HardConcreteGates, _CplxRNNBase):
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
    :func:`~cplxmodule.nn.relevance.functional.hard_concrete_gate`.
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

    __sparsity_ignore__ = ("log_alpha",)

    def __init_subclass__(cls, plain=None, **kwargs):
        # ``class CplxGRUUnitL0(UnitL0Mixin, CplxGRU, BaseARD, plain=CplxGRU)``:
        # the twin of kind ``unit_l0`` of the plain layer, for ``convert_layers``
        super().__init_subclass__(**kwargs)
        if plain is not None:
            _families.declare_composite(cls, plain, "unit_l0")

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

    def _plain_kwargs(self):
        names = inspect.signature(self._plain_class().__init__).parameters
        return {name: getattr(self, name) for name in names
                if name not in ("self", "device", "dtype")}

    @classmethod
    def from_plain(cls, layer: _CplxRNNBase) -> "UnitL0Mixin":
        """The gated twin of the plain recurrent layer ``layer``: its weights, every gate open at 0.9.

        Parameters
        ----------
        layer : CplxRNN, CplxGRU or CplxLSTM
            Of exactly this class's plain class, with dense projections.

        Returns
        -------
        UnitL0Mixin
            In ``layer``'s training mode.
        """
        real = _real(layer.ih_l0.weight)
        names = inspect.signature(cls._plain_class().__init__).parameters
        kwargs = {name: getattr(layer, name) for name in names
                  if name not in ("self", "device", "dtype")}
        twin = cls(**kwargs, device=real.device, dtype=real.dtype)
        twin.load_state_dict(layer.state_dict(), strict=False)
        return twin.train(layer.training)

    def plain_twin(self) -> _CplxRNNBase:
        """The plain recurrent layer that computes what this one does in eval mode.

        Its projections' weights and biases are this layer's times the
        eval-mode gates of their units (closed gates: zero rows and biases);
        the modulus gates' real biases are kept, as the gates do not scale them.

        Returns
        -------
        CplxRNN, CplxGRU or CplxLSTM
            In this layer's training mode.
        """
        real = _real(self.ih_l0.weight)
        plain = self._plain_class()(**self._plain_kwargs(), device=real.device, dtype=real.dtype)
        state = {key: value for key, value in self.state_dict().items() if key != "log_alpha"}
        plain.load_state_dict(state)
        with torch.no_grad():
            gates = self._eval_gates()
            for suffix, gate in zip(self._suffixes(), gates):
                rows = gate.repeat(_GATES[self.mode])
                for name in ("ih", "hh"):
                    projection = getattr(plain, name + suffix)
                    for part in _parts(projection.weight):
                        part.mul_(rows.unsqueeze(-1))
                    for part in _parts(projection.bias):
                        part.mul_(rows)
        return plain.train(self.training)

    # the masks
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
            projections are :meth:`projection_relevance`'s.
        """
        with torch.no_grad():
            gate = self._eval_gates()
            return torch.gt(gate, 0).to(gate.dtype) if hard else gate

    def projection_relevance(self, *, hard: bool = True,
                             **kwargs: Any) -> Iterator[tuple[str, torch.Tensor]]:
        """The masks of the projections, whole units zero: what :func:`compute_ard_masks` gives.

        Parameters
        ----------
        hard : bool, default True
            As for :meth:`relevance`.
        **kwargs
            Ignored.

        Yields
        ------
        name : str
            The projection's name, ``ih_l0``, ``hh_l0_reverse``, ``hr_l1``, ...
        mask : torch.Tensor
            Of its weight's real shape and dtype: a unit's rows of every
            gate and (in ``hh``, the next layer's ``ih`` or ``hr``) its
            columns carry its value.
        """
        units = self.relevance(hard=hard)
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

    def sparsity(self, *, hard=True, **kwargs):
        """The projections' weight entries that the gates switch off, for :func:`named_sparsity`.

        Parameters
        ----------
        hard : bool, default True
            Count the closed units' entries; ``False`` sums ``1 - mask``.
        **kwargs
            Ignored.

        Returns
        -------
        list of (int, float)
        """
        counts = []
        for name, mask in self.projection_relevance(hard=hard):
            dropped = float(torch.sum(1 - mask))
            counts += [(id(part), dropped) for part in _parts(getattr(self, name).weight)]
        return counts

    def extra_repr(self) -> str:
        return super().extra_repr() + ", unit gates: L0"


def _parts(x):
    return () if x is None else (x.real, x.imag)


_DOC = r"""{what} with an L0 gate on each hidden unit.

    See :mod:`cplxmodule.nn.relevance.recurrent` for the gates and the
    pipeline and :class:`~cplxmodule.nn.relevance.recurrent.UnitL0Mixin`
    for ``log_alpha``; built by
    :func:`~cplxmodule.nn.relevance.to_bayesian` with ``kind="unit_l0"``.

    Parameters
    ----------
    *args, **kwargs
        The arguments of :class:`~cplxmodule.nn.{plain}`.

    Shape
    -----
    - Input, states and output: as for :class:`~cplxmodule.nn.{plain}`.
    - ``log_alpha``, ``penalty`` and ``relevance()``:
      ``(num_layers * D, hidden_size)``.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn.relevance import compute_ard_masks
    >>> layer = {name}(4, 8, num_layers=2)
    >>> output, _ = layer(cplx.randn(10, 3, 4))
    >>> output.shape, layer.penalty.shape
    (torch.Size([10, 3, 8]), torch.Size([2, 8]))
    >>> masks = compute_ard_masks(layer)
    >>> sorted(masks)[:2], masks["ih_l1.mask"].shape
    (['hh_l0.mask', 'hh_l1.mask'], torch.Size([{rows}, 8]))
    """


class CplxRNNUnitL0(UnitL0Mixin, CplxRNN, BaseARD, plain=CplxRNN):
    __doc__ = _DOC.format(what="A complex Elman RNN", plain="CplxRNN", name="CplxRNNUnitL0",
                          rows=8)


class CplxGRUUnitL0(UnitL0Mixin, CplxGRU, BaseARD, plain=CplxGRU):
    __doc__ = _DOC.format(what="A complex GRU", plain="CplxGRU", name="CplxGRUUnitL0", rows=24)


class CplxLSTMUnitL0(UnitL0Mixin, CplxLSTM, BaseARD, plain=CplxLSTM):
    __doc__ = _DOC.format(what="A complex LSTM", plain="CplxLSTM", name="CplxLSTMUnitL0",
                          rows=32)
