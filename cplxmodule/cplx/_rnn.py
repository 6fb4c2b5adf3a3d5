"""The complex recurrences: cell updates and the sequence loop, on torch's ``(..., 2)`` real layout.

The recurrent layers of :mod:`cplxmodule.nn.modules.rnn` keep their gates and
states as real tensors whose last dimension holds the real and the imaginary
part (the layout of :func:`torch.view_as_real`): every gate, activation and
gating product of these cells is *split* (applied to each part on its own,
see the Notes of :class:`~cplxmodule.nn.CplxGRU`), so each update is a few
real elementwise ops on one tensor, and a state in this layout views a
native complex tensor, which the next step's complex product takes without
a copy.

``input_gates`` and ``hidden_gates`` are the outputs of the input and the
hidden projections, ``(..., gates * hidden_size, 2)``, in torch's order of
the gates; states are ``(..., hidden_size, 2)``.

With ``gates="modulus"`` the updates are those of the *modulus* gates
instead: every gate is the sigmoid of the
modulus of its pre-activation plus a real bias, and every activation of a
state scales its modulus and keeps its phase, so that a global phase of the
inputs and the initial state passes to every state (see the Notes of
:class:`~cplxmodule.nn.CplxGRU`).

:func:`rnn` runs the layers over a sequence, padded or packed, as torch's
``_VF.rnn_tanh``/``gru``/``lstm`` do for its real layers: the layers and
directions, the dropout between layers, the time steps, and the rows of a
packed batch that join or leave it. The layers give it their projections
as callables on this layout.

Only eagerly do the layouts meet torch's complex dtype (:func:`pairs`, and
the layers' products): compiled, exported and traced code takes real ops
only, which every exporter knows; there a projection is one real product
on the layout (:func:`interleaved`).
"""

from typing import Optional

import torch
import torch.nn.functional as F

from ._dtypes import NATIVE_DTYPES
from ._views import _eager
from .conversions import _to_complex
from .tensor import Cplx, _modulus

_ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu}


# the layouts: a Cplx and torch's ``(..., 2)`` real layout of the same values
def pairs(z):
    """``z`` in the ``(..., 2)`` layout: a view of its parts where they allow one.

    Eagerly, the parts of one complex tensor (the output of a native
    complex product) give that tensor's real view, with no copy; otherwise
    the parts are stacked.
    """
    if z.dtype in NATIVE_DTYPES and _eager():
        return torch.view_as_real(_to_complex(z.real, z.imag))
    return torch.stack([z.real, z.imag], dim=-1)


def from_pairs(pairs: torch.Tensor) -> Cplx:
    """The :class:`Cplx` whose parts view ``pairs``, ``(..., 2)``."""
    return Cplx(pairs[..., 0], pairs[..., 1])


def interleaved(weight, bias):
    """Real weight and bias mapping the flattened ``(..., 2)`` layout as ``weight`` and ``bias`` map complex vectors.

    A complex ``(out, in)`` weight becomes the real ``(2 out, 2 in)`` matrix
    of its ``2 x 2`` blocks ``[[wr, -wi], [wi, wr]]``, in the order of the
    layout's flattened features (``re, im`` of each): one real product does
    the four of a complex one, and takes and gives the layout without a copy.
    """
    wr, wi = weight.real, weight.imag
    blocks = torch.stack([torch.stack([wr, -wi], dim=-1), torch.stack([wi, wr], dim=-1)], dim=1)
    if bias is not None:
        bias = torch.stack([bias.real, bias.imag], dim=-1).flatten()
    return blocks.flatten(2).flatten(0, 1), bias


def interleaved_linear(pairs, weight, bias):
    """The linear map of ``pairs`` (``(..., in, 2)``) by an `interleaved` weight and bias."""
    # the bias is added apart, where inductor fuses it into the gates; in
    # ``addmm`` it is first copied into every row of the output (a compiled
    # GRU's inference 1.3 % faster at the benchmark's size)
    output = F.linear(pairs.flatten(-2), weight)
    return (output if bias is None else output + bias).unflatten(-1, (-1, 2))


# the cell updates
def rnn_update(input_gates, hidden_gates, nonlinearity):
    """``act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, split."""
    return _ACTIVATIONS[nonlinearity](input_gates + hidden_gates)


def gru_update(input_gates, hidden_gates, hx):
    """torch's GRU update, every gate and product split.

    ``r, z = sigmoid(gi_rz + gh_rz)``, ``n = tanh(gi_n + r * gh_n)``,
    ``h' = (1 - z) * n + z * h``, the last one as ``lerp(n, h, z)``.
    """
    # ``split``, not slices: the backward of a split is one concatenation,
    # that of each slice a zero tensor of the whole and a copy
    hidden = hx.shape[-2]
    input_rz, input_n = input_gates.split([2 * hidden, hidden], dim=-2)
    hidden_rz, hidden_n = hidden_gates.split([2 * hidden, hidden], dim=-2)
    r, z = torch.sigmoid(input_rz + hidden_rz).split(hidden, dim=-2)
    n = torch.tanh(torch.addcmul(input_n, r, hidden_n))
    return torch.lerp(n, hx, z)


def lstm_update(input_gates, hidden_gates, cx):
    """torch's LSTM update, every gate and product split: returns ``(h', c')``.

    ``i, f, o = sigmoid(.)``, ``g = tanh(.)`` of the summed gates (order
    ``i, f, g, o``), ``c' = f * c + i * g``, ``h' = o * tanh(c')``.
    """
    hidden = cx.shape[-2]
    gates_if, gates_g, gates_o = (input_gates + hidden_gates).split(
        [2 * hidden, hidden, hidden], dim=-2
    )
    i, f = torch.sigmoid(gates_if).split(hidden, dim=-2)
    cy = torch.addcmul(f * cx, i, torch.tanh(gates_g))
    return torch.sigmoid(gates_o) * torch.tanh(cy), cy


# the modulus gates: functions of moduli, so of no phase
def _moduli(pairs):
    return _modulus(pairs[..., 0], pairs[..., 1])


def _gate(pairs, bias):
    """``sigmoid(|a| + b)``: a real gate in ``(sigmoid(b), 1)``, broadcast over both parts."""
    moduli = _moduli(pairs)
    return torch.sigmoid(moduli if bias is None else moduli + bias).unsqueeze(-1)


def _bias_parts(bias, sizes):
    """``bias`` split as the gates are; Nones where the layer has no bias."""
    return [None] * len(sizes) if bias is None else bias.split(sizes)


def _radial(pairs, bias, activation):
    """``activation(relu(|u| + b)) e^{i arg u}``: modReLU's threshold, then ``activation`` of the modulus.

    0 at ``u = 0``, where the phase is undefined (the modulus is clamped
    there, so that the scale and its gradient stay finite).
    """
    modulus = _moduli(pairs)
    shifted = modulus if bias is None else torch.relu(modulus + bias)
    scale = activation(shifted) / modulus.clamp_min(torch.finfo(modulus.dtype).tiny)
    return pairs * scale.unsqueeze(-1)


def _identity(x):
    return x


def rnn_modulus_update(input_gates, hidden_gates, nonlinearity, bias):
    """``f(relu(|u| + b)) e^{i arg u}`` of ``u = x W_ih^T + h W_hh^T``, ``f`` tanh or identity (relu)."""
    activation = torch.tanh if nonlinearity == "tanh" else _identity
    return _radial(input_gates + hidden_gates, bias, activation)


def gru_modulus_update(input_gates, hidden_gates, hx, bias):
    """The GRU with modulus gates.

    ``r, z = sigmoid(|gi_rz + gh_rz| + b_rz)``,
    ``n = tanh(relu(|u| + b_n)) e^{i arg u}`` of ``u = gi_n + r * gh_n``,
    ``h' = (1 - z) * n + z * h``.
    """
    hidden = hx.shape[-2]
    input_rz, input_n = input_gates.split([2 * hidden, hidden], dim=-2)
    hidden_rz, hidden_n = hidden_gates.split([2 * hidden, hidden], dim=-2)
    bias_rz, bias_n = _bias_parts(bias, [2 * hidden, hidden])
    r, z = _gate(input_rz + hidden_rz, bias_rz).split(hidden, dim=-2)
    n = _radial(torch.addcmul(input_n, r, hidden_n), bias_n, torch.tanh)
    return torch.lerp(n, hx, z)


def lstm_modulus_update(input_gates, hidden_gates, cx, bias):
    """The LSTM with modulus gates: returns ``(h', c')``.

    ``i, f, o = sigmoid(|.| + b)``, ``g = tanh(relu(|.| + b_g)) e^{i arg .}``
    (order ``i, f, g, o``), ``c' = f * c + i * g``,
    ``h' = o * tanh(|c'|) e^{i arg c'}``.
    """
    hidden = cx.shape[-2]
    sizes = [2 * hidden, hidden, hidden]
    gates_if, gates_g, gates_o = (input_gates + hidden_gates).split(sizes, dim=-2)
    bias_if, bias_g, bias_o = _bias_parts(bias, sizes)
    i, f = _gate(gates_if, bias_if).split(hidden, dim=-2)
    cy = torch.addcmul(f * cx, i, _radial(gates_g, bias_g, torch.tanh))
    return _gate(gates_o, bias_o) * _radial(cy, None, torch.tanh), cy


def step(mode, input_gates, hidden_gates, hx, cx=None, gates="split", gate_bias=None):
    """One update of ``mode`` (``RNN_TANH``, ``RNN_RELU``, ``GRU`` or ``LSTM``): ``(h', c')``.

    The split update, or with ``gates="modulus"`` the modulus one, whose
    real ``gate_bias`` (``(gates * hidden_size,)``) may be None. The state keeps its dtype: gates that a product under
    autocast returns in a lower precision are brought to it, so that every
    step of a recurrence (and the cell's output) has the state's dtype.
    """
    if input_gates.dtype != hx.dtype or hidden_gates.dtype != hx.dtype:
        input_gates, hidden_gates = input_gates.to(hx.dtype), hidden_gates.to(hx.dtype)
    nonlinearity = "relu" if mode == "RNN_RELU" else "tanh"
    if gates == "modulus":
        if gate_bias is not None:
            gate_bias = gate_bias.to(hx.dtype)
        if mode == "LSTM":
            return lstm_modulus_update(input_gates, hidden_gates, cx, gate_bias)
        if mode == "GRU":
            return gru_modulus_update(input_gates, hidden_gates, hx, gate_bias), None
        return rnn_modulus_update(input_gates, hidden_gates, nonlinearity, gate_bias), None
    if mode == "LSTM":
        return lstm_update(input_gates, hidden_gates, cx)
    if mode == "GRU":
        return gru_update(input_gates, hidden_gates, hx), None
    return rnn_update(input_gates, hidden_gates, nonlinearity), None


# the sequence loop
def rnn(mode, input, hx, cx, projections, bidirectional, dropout=0.0, training=False,
        batch_sizes=None, sorted_indices=None, unsorted_indices=None, gates="split"):
    """The stacked layers of ``mode`` over a padded or a packed sequence, in the pairs layout.

    Parameters
    ----------
    mode : str
        ``RNN_TANH``, ``RNN_RELU``, ``GRU`` or ``LSTM``.
    input : torch.Tensor
        ``(L, N, input_size, 2)``, or the data of a packed sequence
        ``(sum of lengths, input_size, 2)`` with ``batch_sizes``.
    hx, cx : torch.Tensor
        The initial states ``(layers * directions, N, size, 2)``, in the
        order of the batch given (``cx`` None unless ``LSTM``).
    projections : list of tuple
        ``(ih, hh, hr, gate_bias)`` per layer and direction, in torch's
        order: the input, hidden and (``LSTM`` with ``proj_size``, else
        None) state projections, callables on the pairs layout, and the
        real bias of the modulus gates (or None).
    bidirectional : bool
    dropout : float
        The probability of the dropout on the output of every layer but the
        last, one mask for both parts of each element, applied if ``training``.
    batch_sizes, sorted_indices, unsorted_indices : torch.Tensor, optional
        Those of a packed sequence: the states given and returned are in the
        batch's order, the sequences run in the sorted one.
    gates : {"split", "modulus"}
        The gates of the updates.

    Returns
    -------
    tuple
        ``(output, h_n, c_n)`` in the layout of the input and the states
        (``c_n`` None unless ``LSTM``).
    """
    directions = 2 if bidirectional else 1
    if sorted_indices is not None:
        hx = hx.index_select(1, sorted_indices)
        cx = None if cx is None else cx.index_select(1, sorted_indices)
    sizes = None if batch_sizes is None else batch_sizes.tolist()
    x = input
    h_last: list[torch.Tensor] = []
    c_last: list[Optional[torch.Tensor]] = []
    for layer in range(len(projections) // directions):
        if layer and training and dropout:
            # as cplx.dropout: one mask for both parts of each element
            x = x * F.dropout(x.new_ones(x.shape[:-1] + (1,)), dropout, True)
        outputs = []
        for k in range(layer * directions, (layer + 1) * directions):
            input_projection, hidden_projection, state_projection, gate_bias = projections[k]
            output, h, c = recurrence(
                mode, input_projection(x), sizes, hidden_projection, state_projection,
                hx[k], None if cx is None else cx[k], reverse=k % directions == 1,
                gates=gates, gate_bias=gate_bias,
            )
            outputs.append(output)
            h_last.append(h)
            c_last.append(c)
        x = outputs[0] if directions == 1 else torch.cat(outputs, dim=-2)
    h_n = torch.stack(h_last)
    c_n = torch.stack([c for c in c_last if c is not None]) if mode == "LSTM" else None
    if unsorted_indices is not None:
        h_n = h_n.index_select(1, unsorted_indices)
        c_n = None if c_n is None else c_n.index_select(1, unsorted_indices)
    return x, h_n, c_n


def recurrence(mode, input_gates, sizes, hidden_projection, state_projection, h0, c0, reverse,
               gates="split", gate_bias=None):
    """One direction of one layer over the sequence: ``(output, h_n, c_n)`` as pairs.

    ``input_gates`` are ``(L, N, gates, 2)`` where ``sizes`` is None, else
    the rows of a packed sequence, whose time steps have the batch sizes
    ``sizes``; these do not increase, so the rows that leave the batch in a
    forward run hold their final state, and a reverse run takes the rows of
    ``h0`` (and ``c0``) of the sequences that join it. ``state_projection``,
    where not None, projects each new ``h`` (the LSTM's ``proj_size``);
    ``gates`` and ``gate_bias`` are those of :func:`step`.
    """
    # one unbind or split, whose backward is one stack or concatenation: a
    # slice per step would fill a zero gradient of the whole sequence per step
    if sizes is None:
        steps = [(gates, None) for gates in input_gates.unbind(0)]
    else:
        steps = list(zip(input_gates.split(sizes), sizes))
    if reverse:
        steps.reverse()
    h, c = h0, c0
    if sizes is not None:
        first = steps[0][1]
        h, c = h[:first], None if c is None else c[:first]
    outputs: list[torch.Tensor] = []
    finished_h: list[torch.Tensor] = []
    finished_c: list[torch.Tensor] = []
    for input_step, size in steps:
        if size is not None and size != len(h):
            if reverse:
                h = torch.cat([h, h0[len(h) : size]])
                c = None if c is None else torch.cat([c, c0[len(c) : size]])
            else:
                finished_h.append(h[size:])
                h = h[:size]
                if c is not None:
                    finished_c.append(c[size:])
                    c = c[:size]
        h, c = step(mode, input_step, hidden_projection(h), h, c, gates, gate_bias)
        if state_projection is not None:
            h = state_projection(h)
        outputs.append(h)
    if reverse:
        outputs.reverse()
    h_n = torch.cat([h] + finished_h[::-1]) if finished_h else h
    c_n = torch.cat([c] + finished_c[::-1]) if finished_c else c
    output = torch.stack(outputs) if sizes is None else torch.cat(outputs)
    return output, h_n, c_n
