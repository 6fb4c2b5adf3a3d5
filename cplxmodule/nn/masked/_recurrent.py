"""How :func:`~cplxmodule.nn.masked.compact` removes the dead hidden units of the recurrent layers.

Which units are dead is told in the Notes of :class:`CompactRecurrent`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence

from ...cplx import Cplx
from ...cplx._shared import checked_cplx, describe
from .. import _families
from ..modules.linear import CplxLinear
from ..modules.rnn import _GATES, CplxGRU, CplxLSTM, CplxRNN, _CplxRNNBase
from ._channels import _all_zero, _parts
from collections.abc import Mapping
from typing import Any, Optional, Union, cast

from ...cplx._typing import CplxLike

__all__ = ["CompactRecurrent"]

#: the recurrent layers whose units :func:`compact` removes, exactly these classes
RECURRENT = (CplxRNN, CplxGRU, CplxLSTM)


def _map(x, fn):
    """``fn`` on a tensor, or on each part of a :class:`Cplx`."""
    return Cplx(fn(x.real), fn(x.imag)) if isinstance(x, Cplx) else fn(x)


# the candidate's place among the gates, in torch's order
_CANDIDATE = {"RNN_TANH": 0, "RNN_RELU": 0, "GRU": 2, "LSTM": 2}


class CompactRecurrent(_CplxRNNBase):
    r"""A recurrent layer that :func:`compact` freed of its dead hidden units.

    It runs the recurrence of the layer it replaces (a
    :class:`~cplxmodule.nn.CplxRNN`, :class:`~cplxmodule.nn.CplxGRU` or
    :class:`~cplxmodule.nn.CplxLSTM`, whose attributes and projections it
    keeps) on the live units only. It takes and returns outputs and
    states of the original shapes, a dead unit's output and state zero as
    they are in the original layer (see the Notes), unless its read-out
    was declared to :func:`compact` (``readouts``): then outputs and states
    hold the computed units only, and the read-out lost the dead units'
    columns. Built by :func:`compact`, not by hand.

    Parameters
    ----------
    layer : torch.nn.Module
        The :class:`~cplxmodule.nn.CplxRNN`, :class:`~cplxmodule.nn.CplxGRU`
        or :class:`~cplxmodule.nn.CplxLSTM` replaced, its projections and gate biases already reduced to
        ``len(slots[k])`` units per layer and direction ``k``; its modules
        and parameters become this layer's.
    slots : list of torch.Tensor
        Per layer and direction, in torch's order, the original index of
        each unit kept (ascending), then that of a dead unit filling each
        remaining place.
    live : list of int
        Per layer and direction, how many of ``slots`` are live units.
    full_width : bool, default True
        Whether outputs and states have the original width (the dead
        units' entries zero), or hold the computed units only.

    Attributes
    ----------
    full_size : int
        The original ``hidden_size``; ``hidden_size`` is the number of
        units computed.
    full_width : bool
        As given.

    Shape
    -----
    - Input, states and output: those of the layer replaced, ``full_size``
      standing for its ``hidden_size``; with ``full_width=False``,
      ``hidden_size`` (the units of layer and direction ``k`` in the order
      of ``slots[k]``, whose places past ``live[k]`` hold zeros).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn import CplxGRU
    >>> from cplxmodule.nn.masked import compact, to_masked
    >>> gru = to_masked(CplxGRU(4, 8)).eval()
    >>> for projection in (gru.ih_l0, gru.hh_l0):  # the candidate n of units 0-4
    ...     projection.mask = torch.ones(24, projection.in_features)
    ...     projection.mask[16:21] = 0
    ...     _ = torch.nn.init.zeros_(projection.bias.real[16:21])
    ...     _ = torch.nn.init.zeros_(projection.bias.imag[16:21])
    >>> small = compact(gru)
    >>> small.hidden_size, small.hh_l0.weight.shape
    (3, torch.Size([9, 3]))
    >>> x = cplx.randn(5, 2, 4)
    >>> output, h_n = small(x)
    >>> output.shape, bool(output[..., :5].real.abs().max() == 0)
    (torch.Size([5, 2, 8]), True)
    >>> torch.allclose(output.real, gru(x)[0].real, atol=1e-6)
    True

    Notes
    -----
    A hidden unit ``j`` of one layer and direction of a
    :class:`~cplxmodule.nn.CplxRNN`, :class:`~cplxmodule.nn.CplxGRU` or
    :class:`~cplxmodule.nn.CplxLSTM` is *dead* when its state is exactly zero at
    every step of every sequence, whatever the input, from a zero initial state.
    That holds exactly when its *candidate* pre-activation (the RNN's only
    gate, the GRU's :math:`n`, the LSTM's :math:`g`) is zero at every step:

    - its candidate row ``j`` of ``ih`` and of ``hh`` reads no live input: every
      entry is zero (masked) but those of columns that read dead units of the
      layer below or, through ``hh``, of its own layer and direction;
    - with split gates, the candidate biases of ``ih`` and ``hh`` are zero
      there: :math:`\tanh(0) = \mathrm{relu}(0) = 0`, so the RNN's state is
      0; the GRU's :math:`n = 0` makes :math:`h' = z \odot h = 0` whatever
      :math:`r` and :math:`z`; the LSTM's :math:`g = 0` makes
      :math:`c' = f \odot c = 0` and :math:`h' = o \odot \tanh(0) = 0`
      whatever :math:`i, f, o`;
    - with modulus gates the radial activation maps 0 to 0 whatever its real
      bias, so no condition on ``gate_bias`` but for the ReLU RNN, whose
      :math:`\mathrm{relu}(b) / \text{tiny}` must be finite (else the masked
      layer computes :math:`0 \cdot \infty`).

    Its other gates' rows are then read by nothing (they gate a zero state)
    and go with it; so do its columns of ``hh`` and of the next layer's ``ih``
    (or of the LSTM's ``hr`` with ``proj_size``), which read a zero. A unit
    that is only *unread* (its columns zero everywhere, its rows not) is not
    dead: its state still appears in ``h_n`` (and ``c_n``), so it stays.

    One ``hidden_size`` serves every layer and direction: the compact layer
    has the largest number of live units of any of them (at least 1, and above
    ``proj_size``); a layer and direction with fewer fills its places with
    copies of one of its dead units, which stay zero.

    An initial state's entries of dead units are not read (the compact
    layer has no place for them): the output equals the original layer's
    when those are zero, as they are in every state either layer returns
    and in the default zero state.
    """

    def __init__(
        self, layer: _CplxRNNBase, slots: list, live: list, full_width: bool = True
    ) -> None:
        torch.nn.Module.__init__(self)
        for name, child in layer._modules.items():
            self.add_module(name, child)
        for name, parameter in layer._parameters.items():
            self.register_parameter(name, parameter)
        for name in ("input_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size", "gates", "nonlinearity"):
            if hasattr(layer, name):
                setattr(self, name, getattr(layer, name))
        # the mode is the replaced layer's: its class's, kept per instance here
        self.__dict__["_mode"] = type(layer)._mode
        self._kind, self.full_width = type(layer).__name__, full_width
        self.full_size, self.hidden_size = layer.hidden_size, len(slots[0])
        full, size = self.full_size, self.hidden_size
        # each index reads one place past the end for a zero: the state
        # into the layer, the states and the output out of it
        into = torch.full((len(slots), size), full)
        out = torch.full((len(slots), full), size)
        for k, (slot, count) in enumerate(zip(slots, live)):
            into[k, :count] = slot[:count]
            out[k, slot[:count]] = torch.arange(count)
        directions = 2 if self.bidirectional else 1
        last = out[-directions:] + size * torch.arange(directions)[:, None]
        last[out[-directions:] == size] = directions * size
        # where the projections are (a CSR one holds buffers only)
        device = next(iter(layer.state_dict().values())).device
        self.register_buffer("state_into", into.to(device))
        self.register_buffer("state_out", out.to(device))
        self.register_buffer("output_out", last.flatten().to(device))

    def extra_repr(self) -> str:
        width = "" if self.full_width else ", full_width=False"
        return f"{self._kind} {super().extra_repr()} (of {self.full_size} hidden units{width})"

    def forward(
        self,
        input: Union[CplxLike, PackedSequence],
        hx: Optional[Union[CplxLike, tuple[CplxLike, CplxLike]]] = None,
    ) -> tuple[Union[Cplx, PackedSequence], Union[Cplx, tuple[Cplx, Cplx]]]:
        if not self.full_width:
            return super().forward(input, hx)
        where = self._get_name()
        lstm = self.mode == "LSTM"
        if hx is not None:
            if lstm:
                if not isinstance(hx, tuple) or len(hx) != 2:
                    raise TypeError(
                        f"{where}: `hx` must be a tuple (h_0, c_0) of Cplx, got {describe(hx)}"
                    )
                h0 = self._into(where, "h_0", hx[0]) if not self.proj_size else hx[0]
                hx = (h0, self._into(where, "c_0", hx[1]))
            else:
                hx = self._into(where, "hx", hx)
        # the base's annotation names one state; an LSTM's is a pair
        output, states = super().forward(input, cast(Any, hx))
        if self.proj_size:
            pass  # the output is the projection's, which keeps its features
        elif isinstance(output, PackedSequence):
            data = output.data.unflatten(-1, (-1, 2))
            data = F.pad(data, (0, 0, 0, 1)).index_select(-2, self.output_out).flatten(-2)
            output = PackedSequence(data, *output[1:])
        else:
            output = _map(output, lambda part: F.pad(part, (0, 1)).index_select(
                -1, self.output_out))
        if lstm:
            h, c = states
            return output, (h if self.proj_size else self._gather(h, self.state_out),
                            self._gather(c, self.state_out))
        return output, self._gather(states, self.state_out)

    def _into(self, where, name, state):
        state = checked_cplx(state, name, where)
        stacked = self.state_into.shape[0]
        if state.dim() not in (2, 3) or state.shape[0] != stacked or (
                state.shape[-1] != self.full_size):
            raise ValueError(
                f"{where}: `{name}` must have shape ({stacked}, N, {self.full_size}) or"
                f" ({stacked}, {self.full_size}), got {tuple(state.shape)}"
            )
        return self._gather(state, self.state_into)

    @staticmethod
    def _gather(state, index):
        """``state`` ``(K, [N,] S)`` at ``index`` ``(K, M)``, which reads ``S`` as a zero."""
        view = index.view(index.shape[0], *(1,) * (state.dim() - 2), index.shape[1])
        view = view.expand(*state.shape[:-1], index.shape[1])
        return _map(state, lambda part: torch.gather(F.pad(part, (0, 1)), -1, view))


def readout_ids(model, readouts, uses):
    """``{id(layer): id(read-out)}`` of the names ``readouts`` maps, checked.

    ``readouts`` is :func:`compact`'s argument, ``model`` the copy being
    compacted, ``uses`` the number of places of each module (by ``id``).
    """
    if readouts is None:
        return {}
    if not isinstance(readouts, Mapping):
        raise TypeError(
            "compact: `readouts` must be a mapping of a recurrent layer's name to its "
            f"read-out's, got {type(readouts).__name__}"
        )
    modules = dict(model.named_modules())
    found: dict[int, int] = {}  # id(recurrent layer) -> id(read-out)
    for name, reader in readouts.items():
        layer, readout = modules.get(name), modules.get(reader)
        if layer is None or type(layer) not in RECURRENT:
            got = "no module" if layer is None else type(layer).__name__
            raise ValueError(
                f"compact: `readouts` key `{name}` must name a CplxRNN, CplxGRU or CplxLSTM "
                f"of `module`, got {got}"
            )
        if layer.proj_size:
            raise ValueError(
                f"compact: `readouts` key `{name}` has proj_size={layer.proj_size}: its output "
                "is the projection's, whose features stay"
            )
        member = None if readout is None else _families.lookup(type(readout))
        width = layer.hidden_size * (2 if layer.bidirectional else 1)
        if readout is None or member is None or member.family.spatial != 0 or (
                uses[id(readout)] != 1) or (
                readout.in_features != width) or id(readout) in found.values() or (
                reader.startswith(name + ".")):
            got = "no module" if readout is None else repr(readout)
            raise ValueError(
                f"compact: `readouts['{name}']` must name a linear layer of `module` outside "
                f"`{name}`, used once and by no other recurrent layer, with "
                f"in_features={width} (the output's), got {got}"
            )
        found[id(layer)] = id(readout)
    return found


def shrink(model, units, readers):
    """Remove the dead units of every recurrent layer of ``model`` from its projections' units.

    ``units`` maps ``id(layer)`` to :class:`~cplxmodule.nn.masked._channels.Unit`,
    ``readers`` a recurrent layer's ``id`` to its read-out's (:func:`readout_ids`).
    Returns ``{id(layer): (layer, slots, live, full_width)}`` for each layer that
    loses units; the layers' gate biases are sliced here, their projections'
    and read-outs' units in ``units``.
    """
    linear = _families.lookup(CplxLinear).family
    found = {}
    for layer in model.modules():
        if type(layer) not in RECURRENT or id(layer) in found:
            continue
        names = ("ih", "hh", "hr") if layer.proj_size else ("ih", "hh")
        projections = [[units.get(id(getattr(layer, name + suffix))) for name in names]
                       for suffix in layer._suffixes()]
        if any(unit is None or unit.shared or unit.family is not linear
               for row in projections for unit in row):
            continue
        plan = _plan(layer, projections)
        if plan is None:
            continue
        reader = units.get(readers.get(id(layer)))
        if reader is not None:
            _slice_readout(layer, plan[0], reader)
        found[id(layer)] = (layer, *plan, reader is None)
    return found


def _slice_readout(layer, slots, reader):
    """Keep the columns of ``reader`` that read the units of the last layer's ``slots``."""
    directions = 2 if layer.bidirectional else 1
    if reader.size(reader.in_dim) != directions * layer.hidden_size:
        raise ValueError(
            f"compact: the read-out {reader.layer!r} of a recurrent layer in `readouts` "
            "lost input features as a consumer of another layer: it must read the "
            "recurrent layer's output only"
        )
    last = slots[-directions:]
    columns = torch.cat([d * layer.hidden_size + s for d, s in enumerate(last)])
    reader.keep_inputs(columns.to(_device(reader)))


def _plan(layer, projections):
    """Find the dead units of ``layer``; slice its units and gate biases; ``(slots, live)``."""
    size, directions = layer.hidden_size, 2 if layer.bidirectional else 1
    gates, candidate = _GATES[layer.mode], _CANDIDATE[layer.mode]
    rows = slice(candidate * size, (candidate + 1) * size)
    suffixes = layer._suffixes()
    # the largest set of units whose candidate biases allow a zero and whose
    # candidate rows read units of the set only: zero at the start, they stay
    # zero (a unit reading its own state included)
    dead = [_zero_biases(layer, suffix, units, rows) for suffix, units in
            zip(suffixes, projections)]
    changed = True
    while changed:
        changed = False
        for k, (ih, hh, *_) in enumerate(projections):
            reads = [(ih, _input_dead(layer, dead, k)), (hh, None if layer.proj_size else dead[k])]
            now = dead[k].clone()
            for unit, ignore in reads:
                weight = _map(unit.weight, lambda part: part[rows])
                if ignore is not None:
                    weight = _map(weight, lambda part: part[:, ~ignore.to(part.device)])
                now &= _all_zero(weight, 0).cpu()
            if bool((dead[k] & ~now).any()):
                dead[k] = now
                changed = True
    live = [int((~d).sum()) for d in dead]
    new = max(max(live), layer.proj_size + 1, 1)
    if new == size:
        return None
    slots = []
    for d, count in zip(dead, live):
        filler = d.nonzero()[:1].squeeze(1).expand(new - count)
        slots.append(torch.cat([(~d).nonzero().squeeze(1), filler]))
    for k, (suffix, units) in enumerate(zip(suffixes, projections)):
        index = torch.cat([g * size + slots[k] for g in range(gates)])
        ih, hh = units[:2]
        ih.keep_outputs(index.to(_device(ih)))
        hh.keep_outputs(index.to(_device(hh)))
        bias = getattr(layer, "gate_bias" + suffix)
        if bias is not None:
            sliced = bias.detach().index_select(0, index.to(bias.device))
            layer.register_parameter("gate_bias" + suffix, torch.nn.Parameter(
                sliced, bias.requires_grad))
        if layer.proj_size:
            units[2].keep_inputs(slots[k].to(_device(units[2])))
            continue
        hh.keep_inputs(slots[k].to(_device(hh)))
        if k // directions + 1 < layer.num_layers and k % directions == directions - 1:
            layer_slots = slots[k + 1 - directions : k + 1]
            columns = torch.cat([d * size + s for d, s in enumerate(layer_slots)])
            for above in projections[k + 1 : k + 1 + directions]:
                above[0].keep_inputs(columns.to(_device(above[0])))
    return slots, live


def _device(unit):
    return _parts(unit.weight)[0].device


def _input_dead(layer, dead, k):
    """The input features of ``ih`` of layer and direction ``k`` that hold a dead unit."""
    directions = 2 if layer.bidirectional else 1
    below = k // directions - 1
    if below < 0 or layer.proj_size:
        return None
    return torch.cat(dead[below * directions : (below + 1) * directions])


def _zero_biases(layer, suffix, units, rows):
    """Whether each unit's candidate biases let a zero pre-activation give a zero state."""
    size = rows.stop - rows.start
    zero = torch.ones(size, dtype=torch.bool)
    if layer.gates == "split":
        for unit in units[:2]:
            if unit.bias is not None:
                zero &= torch.stack([part[rows] == 0 for part in _parts(unit.bias)]).all(0).cpu()
        return zero
    bias = getattr(layer, "gate_bias" + suffix)
    if layer.mode == "RNN_RELU" and bias is not None:
        # the radial ReLU scales a zero by relu(b) / tiny: finite, or 0 * inf
        bias = bias.detach()[rows]
        zero &= (torch.relu(bias) / torch.finfo(bias.dtype).tiny).isfinite().cpu()
    return zero
