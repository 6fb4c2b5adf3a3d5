"""The state updates of the complex recurrent cells, on torch's ``(..., 2)`` real layout.

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
"""

import torch

_ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu}


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
