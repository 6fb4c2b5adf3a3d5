"""Complex recurrent layers: the twins of torch's RNN, GRU and LSTM and of their cells.

Every weight lives in a :class:`~cplxmodule.nn.CplxLinear` submodule, one
input projection ``ih_l{k}`` and one hidden projection ``hh_l{k}`` per layer
and direction, so that masking (:func:`~cplxmodule.nn.masked.to_masked`),
variational dropout and ARD (:func:`~cplxmodule.nn.relevance.to_bayesian`),
:func:`~cplxmodule.nn.masked.compact` and :func:`~cplxmodule.nn.cached`
apply to the recurrent weights as to any linear layer. The layers check
their arguments and give their projections to the recurrence of the
functional core (``cplxmodule.cplx._rnn``), which runs the sequence.
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence

from ...cplx import _rnn
from ...cplx._dtypes import NATIVE_DTYPES, real_dtype
from ...cplx._rnn import from_pairs, pairs
from ...cplx._shared import (
    ArgumentTypeError,
    check_choice,
    check_dtype,
    check_positive_int,
    check_probability,
    checked_cplx,
    describe,
    is_int,
)
from ...cplx._views import _as_complex, _eager
from ...cplx.conversions import _to_complex
from ._rnn_names import _TorchNames
from .base import CplxToCplx
from .linear import CplxLinear, _reset_weight_and_bias
from typing import Any, ClassVar, Optional, Union
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx

__all__ = [
    "CplxRNNCell",
    "CplxGRUCell",
    "CplxLSTMCell",
    "CplxRNN",
    "CplxGRU",
    "CplxLSTM",
]

# number of gates stacked in the projections' outputs, per mode
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}

GATES = ("split", "modulus")


_NONLINEARITIES = ("tanh", "relu")
_DTYPE_HINT = "cast one to the other, e.g. `layer.to(input.dtype)`"


def _check_state(where, name, state, shape):
    """``state`` as a Cplx of ``shape``, else raise."""
    state = checked_cplx(state, name, where, shape=tuple(shape))
    if tuple(state.shape) != tuple(shape):
        raise ValueError(
            f"{where}: `{name}` must have shape {tuple(shape)}, got {tuple(state.shape)}"
        )
    return state


def _weights_dtype(projection, value):
    """The dtype ``value`` must have: that of ``projection``'s weight.

    A projection that :func:`~cplxmodule.nn.masked.compact` made sparse has
    no ``weight`` and checks the dtype in its own forward: then ``value``'s.
    """
    weight = getattr(projection, "weight", None)
    return value.dtype if weight is None else weight.dtype


def _has_hooks(module):
    """Whether calling ``module`` runs hooks, which the packed product would skip (torch's test)."""
    hooks = torch.nn.modules.module
    return bool(
        module._forward_hooks or module._forward_pre_hooks
        or module._backward_hooks or module._backward_pre_hooks
        or hooks._global_forward_hooks or hooks._global_forward_pre_hooks
        or hooks._global_backward_hooks or hooks._global_backward_pre_hooks
    )


class _Projection:
    """A projection ``x W^T + b`` of the layers, on the ``(..., 2)`` layout.

    Eagerly, a plain :class:`~cplxmodule.nn.CplxLinear` (exactly that
    class) gives its weight and bias, packed into torch's native complex
    dtype once per call of the recurrent layer: each product is then one
    complex GEMM on an operand that views a complex tensor, whose output
    views one too, the layout the gates are computed in (for the input
    projection of a whole sequence this also beats the default product
    followed by a copy into that layout, see
    ``benchmarks/test_bench_rnn.py``), unless hooks are registered on it
    (or globally), which a call must run. Compiled, exported or traced,
    where complex tensors are not to appear, the same layer gives the real
    block matrix of its weight instead (``cplx._rnn.interleaved``):
    each product is one real product on the layout, no copy of the parts
    (a compiled GRU's inference 0.89x the time of the layer called as a
    module, two real products on concatenated parts, per step). Any other
    module (masked, Bayesian, made sparse by
    :func:`~cplxmodule.nn.masked.compact`, or a user's) is called, so that
    its own ``forward`` computes the product: the hidden projection of a
    Bayesian layer in training draws its noise at every step. Inside
    :func:`~cplxmodule.nn.cached` such a layer computes its weight once.
    """

    def __init__(self, layer):
        self.layer = layer
        self.packed = self.interleaved = None
        if type(layer) is not CplxLinear or _has_hooks(layer):
            return
        weight, bias = layer.weight, layer.bias
        if not _eager():
            self.interleaved = _rnn.interleaved(weight, bias)
        elif weight.dtype in NATIVE_DTYPES:
            self.packed = (
                _to_complex(weight.real, weight.imag),
                None if bias is None else _to_complex(bias.real, bias.imag),
            )

    def __call__(self, x):
        if self.packed is not None:
            weight, bias = self.packed
            return torch.view_as_real(F.linear(_as_complex(x), weight, bias))
        if self.interleaved is not None:
            return _rnn.interleaved_linear(x, *self.interleaved)
        return pairs(self.layer(from_pairs(x)))


class _CplxRecurrentBase(_TorchNames, CplxToCplx):
    """What the layers and the cells share: torch's names, the recurrence's mode, the gates."""

    #: the mode of the class (``GRU``, ``LSTM``); None for the RNNs, whose
    #: ``nonlinearity`` tells it
    _mode: ClassVar[Any] = None

    def _projection_kwargs(self, bias, device, dtype):
        # with modulus gates a complex bias would fix a phase: the
        # projections have none, the real gate biases take their place
        return dict(bias=bias and self.gates == "split", device=device, dtype=dtype)

    def _register_gate_bias(self, name, gates, bias, device, dtype):
        """The real biases of the modulus gates, zero to start (None with split gates)."""
        if self.gates == "modulus" and bias:
            dtype = real_dtype(dtype)
            self.register_parameter(
                name, torch.nn.Parameter(torch.zeros(gates, device=device, dtype=dtype))
            )
        else:
            self.register_parameter(name, None)

    @property
    def mode(self):
        """torch's name of the recurrence: ``RNN_TANH``, ``RNN_RELU``, ``GRU`` or ``LSTM``."""
        if self._mode is None:
            return "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._mode


class _CplxRNNBase(_CplxRecurrentBase):
    """Arguments, projections and initialisation of the layers; the core runs the sequence."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        nonlinearity=None,
        gates="split",
        device=None,
        dtype=None,
    ):
        where = type(self).__name__
        check_choice(gates, "gates", where, GATES)
        check_positive_int(input_size, "input_size", where)
        check_positive_int(hidden_size, "hidden_size", where)
        check_positive_int(num_layers, "num_layers", where)
        check_probability(dropout, "dropout", where)
        if not is_int(proj_size) or not 0 <= proj_size < hidden_size:
            error = ValueError if is_int(proj_size) else ArgumentTypeError
            raise error(
                f"{where}: `proj_size` must be an int in [0, hidden_size) = [0, {hidden_size}),"
                f" got {proj_size!r}"
            )
        if nonlinearity is not None:
            check_choice(nonlinearity, "nonlinearity", where, _NONLINEARITIES)
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"{where}: dropout applies between recurrent layers, so a non-zero"
                f" `dropout` ({dropout}) with num_layers=1 does nothing",
                stacklevel=3,
            )
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.bidirectional = bool(bidirectional)
        self.dropout, self.proj_size = float(dropout), int(proj_size)
        if nonlinearity is not None:
            self.nonlinearity = nonlinearity
        self.gates = gates
        gates = _GATES[self.mode] * hidden_size
        directions = 2 if bidirectional else 1
        # the size of the state h (and of each direction's output): the
        # projection's with ``proj_size``, as torch's LSTM
        state_size = self._state_size
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else state_size * directions
            for suffix in self._suffixes()[layer * directions : (layer + 1) * directions]:
                kwargs = self._projection_kwargs(bias, device, dtype)
                self.register_module("ih" + suffix, CplxLinear(layer_input, gates, **kwargs))
                self.register_module("hh" + suffix, CplxLinear(state_size, gates, **kwargs))
                self._register_gate_bias("gate_bias" + suffix, gates, bias, device, dtype)
                if self.proj_size:
                    self.register_module(
                        "hr" + suffix,
                        CplxLinear(hidden_size, proj_size, bias=False, device=device, dtype=dtype),
                    )
        self.reset_parameters()

    @property
    def _state_size(self):
        return self.proj_size or self.hidden_size

    def _suffixes(self):
        """The name suffixes, ``_l{k}`` and ``_l{k}_reverse``, in torch's order."""
        directions = ("", "_reverse") if self.bidirectional else ("",)
        return [f"_l{k}{d}" for k in range(self.num_layers) for d in directions]

    def reset_parameters(self):
        r"""Draw every weight and bias as torch does, made complex.

        torch draws them uniform on :math:`\pm 1/\sqrt{\text{hidden\_size}}`;
        here each part is uniform on :math:`\pm 1/\sqrt{2\,\text{hidden\_size}}`,
        which gives :math:`\mathbb{E}|w|^2` the variance of torch's real ones.
        """
        names = ("ih", "hh", "hr") if self.proj_size else ("ih", "hh")
        for suffix in self._suffixes():
            for name in names:
                layer = getattr(self, name + suffix)
                _reset_weight_and_bias(layer.weight, layer.bias, self.hidden_size)

    def flatten_parameters(self):
        """Do nothing: there is no fused cuDNN weight buffer to compact.

        Present so that code written for torch's layers, which calls it
        after moving or replicating a model, runs unchanged.
        """

    @property
    def all_weights(self):
        """``[[weight_ih, weight_hh(, bias_ih, bias_hh)(, weight_hr)], ...]``.

        As torch's, per layer and direction; the tensors are the
        projections' weights and biases.
        """
        names = ("weight",) + (("bias",) if self.bias and self.gates == "split" else ())
        return [
            [getattr(getattr(self, kind + suffix), name) for name in names for kind in ("ih", "hh")]
            + ([getattr(self, "hr" + suffix).weight] if self.proj_size else [])
            for suffix in self._suffixes()
        ]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self._mode is None and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity!r}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.gates != "split":
            s += f", gates={self.gates!r}"
        return s

    # forward
    def forward(
        self,
        input: Union[CplxLike, PackedSequence],
        hx: Optional[Union[CplxLike, tuple[CplxLike, CplxLike]]] = None,
    ) -> tuple[Union[Cplx, PackedSequence], Union[Cplx, tuple[Cplx, Cplx]]]:
        """The output sequence (packed if ``input`` is) and the final state, ``(h_n, c_n)`` for an LSTM."""
        where = self._get_name()
        packed = isinstance(input, PackedSequence)
        if packed:
            x, batch_sizes, sorted_indices, unsorted_indices = self._check_packed(where, input)
            batch, batched = int(batch_sizes[0]), True
        else:
            x, batched = self._check_padded(where, input)
            batch_sizes = sorted_indices = unsorted_indices = None
            batch = x.shape[1]
        h0, c0 = self._initial_states(where, hx, batch, batched, x)
        output, h_n, c_n = _rnn.rnn(
            self.mode, x, h0, c0, self._projections(), self.bidirectional,
            self.dropout, self.training, batch_sizes, sorted_indices, unsorted_indices,
            gates=self.gates,
        )
        sequence: Union[Cplx, PackedSequence]
        if packed:
            sequence = PackedSequence(output.flatten(-2), batch_sizes, sorted_indices,
                                      unsorted_indices)
        else:
            if not batched:
                output = output.squeeze(1)
            elif self.batch_first:
                output = output.transpose(0, 1)
            sequence = from_pairs(output)
        states = [from_pairs(state if batched else state.squeeze(1)) for state in (h_n, c_n)
                  if state is not None]
        if self.mode == "LSTM":
            return sequence, (states[0], states[1])
        return sequence, states[0]

    def _check_packed(self, where, input):
        """The packed sequence's data in the pairs layout, and its bookkeeping."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if (
            not isinstance(data, torch.Tensor)
            or data.is_complex()
            or data.dim() != 2
            or data.shape[-1] != 2 * self.input_size
        ):
            raise TypeError(
                f"{where}: `input` must be a PackedSequence whose data is the interleaved"
                f" real layout (N, {2 * self.input_size}) of a complex (N,"
                f" {self.input_size}) (see cplxmodule.cplx.to_interleaved_real),"
                f" got data {describe(data)}"
            )
        check_dtype(data, _weights_dtype(self.ih_l0, data), "input", where,
                    owner="the layer's weights", hint=_DTYPE_HINT)
        x = data.reshape(-1, self.input_size, 2)
        return x, batch_sizes, sorted_indices, unsorted_indices

    def _check_padded(self, where, input):
        """The input as pairs ``(L, N, input_size, 2)``, and whether it was batched."""
        shape = f"(L, N, {self.input_size}) or (L, {self.input_size})"
        input = checked_cplx(input, where=where, shape=shape)
        if input.dim() not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(
                f"{where}: `input` must have shape {shape}, got {tuple(input.shape)}"
            )
        batched = input.dim() == 3
        if input.shape[1 if batched and self.batch_first else 0] == 0:
            raise ValueError(
                f"{where}: `input` must have at least one time step, got shape"
                f" {tuple(input.shape)}"
            )
        check_dtype(input, _weights_dtype(self.ih_l0, input), "input", where,
                    owner="the layer's weights", hint=_DTYPE_HINT)
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        return pairs(input), batched

    def _initial_states(self, where, hx, batch, batched, like):
        """``h_0`` (and ``c_0``) as ``(layers * directions, N, size, 2)`` pairs.

        ``h`` has the projection's size with ``proj_size``, ``c`` always ``hidden_size``.
        """
        lstm = self.mode == "LSTM"
        stacked = self.num_layers * (2 if self.bidirectional else 1)
        sizes = (self._state_size, self.hidden_size) if lstm else (self.hidden_size,)
        if hx is None:
            zeros = [like.new_zeros(stacked, batch, size, 2) for size in sizes]
            return zeros[0], zeros[1] if lstm else None
        if lstm:
            if not isinstance(hx, tuple) or len(hx) != 2:
                raise TypeError(
                    f"{where}: `hx` must be a tuple (h_0, c_0) of Cplx, got {describe(hx)}"
                )
            states = [("h_0", hx[0]), ("c_0", hx[1])]
        else:
            states = [("hx", hx)]
        out = []
        for (name, state), size in zip(states, sizes):
            shape = (stacked, batch, size) if batched else (stacked, size)
            state = _check_state(where, name, state, shape)
            check_dtype(state, _weights_dtype(self.ih_l0, state), name, where,
                        owner="the layer's weights", hint=_DTYPE_HINT)
            out.append(pairs(state if batched else state.unsqueeze(1)))
        return out[0], out[1] if lstm else None

    def _projections(self):
        """``(ih, hh, hr)`` per layer and direction, as :func:`cplxmodule.cplx._rnn.rnn` takes them."""
        return [
            (
                _Projection(getattr(self, "ih" + suffix)),
                _Projection(getattr(self, "hh" + suffix)),
                _Projection(getattr(self, "hr" + suffix)) if self.proj_size else None,
                getattr(self, "gate_bias" + suffix),
            )
            for suffix in self._suffixes()
        ]


class _CplxCellBase(_CplxRecurrentBase):
    """Arguments, projections ``ih`` and ``hh`` and the step of the cells."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity=None, gates="split",
                 device=None, dtype=None):
        where = type(self).__name__
        check_choice(gates, "gates", where, GATES)
        check_positive_int(input_size, "input_size", where)
        check_positive_int(hidden_size, "hidden_size", where)
        if nonlinearity is not None:
            check_choice(nonlinearity, "nonlinearity", where, _NONLINEARITIES)
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bool(bias)
        if nonlinearity is not None:
            self.nonlinearity = nonlinearity
        self.gates = gates
        gates = _GATES[self.mode] * hidden_size
        kwargs = self._projection_kwargs(bias, device, dtype)
        self.ih = CplxLinear(input_size, gates, **kwargs)
        self.hh = CplxLinear(hidden_size, gates, **kwargs)
        self._register_gate_bias("gate_bias", gates, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        r"""Draw the weights and biases as :meth:`CplxRNN.reset_parameters` does."""
        for layer in (self.ih, self.hh):
            _reset_weight_and_bias(layer.weight, layer.bias, self.hidden_size)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if self._mode is None and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity!r}"
        if self.gates != "split":
            s += f", gates={self.gates!r}"
        return s

    def _check_step(self, input, states):
        """Check the input and states; return them batched, and whether the input was."""
        where = self._get_name()
        shape = f"(N, {self.input_size}) or ({self.input_size},)"
        input = checked_cplx(input, where=where, shape=shape)
        if input.dim() not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{where}: `input` must have shape {shape}, got {tuple(input.shape)}")
        check_dtype(input, _weights_dtype(self.ih, input), "input", where,
                    owner="the layer's weights", hint=_DTYPE_HINT)
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        state_shape = (input.shape[0], self.hidden_size) if batched else (self.hidden_size,)
        out = []
        for name, state in states:
            if state is None:
                out.append(input.real.new_zeros(input.shape[0], self.hidden_size, 2))
                continue
            state = _check_state(where, name, state, state_shape)
            check_dtype(state, _weights_dtype(self.ih, state), name, where,
                        owner="the layer's weights", hint=_DTYPE_HINT)
            out.append(pairs(state if batched else state.unsqueeze(0)))
        return input, out, batched

    def _step(self, input, hx, cx=None):
        """The cell's update of the checked ``input`` and states: ``(h', c')`` as pairs."""
        input_gates, hidden_gates = pairs(self.ih(input)), pairs(self.hh(from_pairs(hx)))
        return _rnn.step(self.mode, input_gates, hidden_gates, hx, cx, self.gates, self.gate_bias)


def _unbatch(state, batched):
    return from_pairs(state if batched else state.squeeze(0))


_GATES_DOC = r"""
    Notes
    -----
    With ``gates="split"`` (the default) every gate, activation and gating
    product is *split*: it acts on the real and the imaginary part
    separately, :math:`\sigma(a + ib) = \sigma(a) + i\,\sigma(b)` and
    :math:`r \odot m = r_\Re m_\Re + i\, r_\Im m_\Im`: the split form
    of complex-valued networks, applied to the gates. Wolter & Yao
    (2018) discuss the choice of gates for complex recurrent cells: real
    gates that multiply complex states, and the modReLU of Arjovsky et al.
    (2016) for the candidate state. ``gates="modulus"`` takes that form with
    gates that see no phase: each gate is :math:`\sigma(|a| + b)` of its
    complex pre-activation :math:`a` and a real bias :math:`b`, each
    activation of a state :math:`u` is
    :math:`f(\mathrm{{relu}}(|u| + b))\, e^{{i \arg u}}` (``f`` the tanh, or
    the identity for the ReLU RNN; the LSTM's :math:`\tanh(c_t)` with no
    bias), and the projections have no bias (``gate_bias_l{{k}}`` holds the
    real biases, zero to start), so that rotating the input and the initial
    states by :math:`e^{{i\theta}}` rotates every output and state by it.
    The linear maps (:math:`W x + b`) are complex products. Split gating, rather
    than complex products with the gates, keeps a real network exactly
    real: with zero imaginary parts in the input, the weights and the
    initial state, the output equals torch's real layer with the same real
    weights (:math:`\sigma(0) = 1/2` would otherwise reach the imaginary
    part through a complex product).

    Inside :func:`torch.autocast` the products may run in the lower
    precision; the states keep their dtype (that of the input), so every
    output has it, as torch's GRU returns float32 there.

    Eagerly the complex products of the recurrence run in torch's native
    complex dtype (one complex GEMM per step); compiled, exported or traced,
    on the real parts, so that the layers export to ONNX with both of
    torch's exporters.

    The weights live in :class:`~cplxmodule.nn.CplxLinear` submodules, so
    that one masking and one Bayesian mechanism serve every layer: the
    state_dict keys are ``{keys}`` (not torch's flat ``weight_ih_l0``),
    masks go on ``{mask}``, and
    :func:`~cplxmodule.nn.relevance.to_bayesian`,
    :func:`~cplxmodule.nn.masked.to_masked` and
    :func:`~cplxmodule.nn.masked.compact` apply with no new mechanism.
    torch's names (``{torch_names}``) read the same tensors, and a state_dict
    with torch's names (a checkpoint of the real torch layer) loads, promoted
    to complex with zero imaginary parts.

    References
    ----------
    M. Wolter, A. Yao, "Complex gated recurrent neural networks", NeurIPS 2018.
    M. Arjovsky, A. Shah, Y. Bengio, "Unitary evolution recurrent neural
    networks", ICML 2016.
"""

_LAYER_PARAMETERS = r"""
    Parameters
    ----------
    input_size : int
        Number of complex features of the input.
    hidden_size : int
        Number of complex features of the hidden state.
    num_layers : int, default 1
        Number of stacked recurrent layers.{nonlinearity}
    bias : bool, default True
        Whether the projections have biases (``bias_ih`` and ``bias_hh``, as
        torch); with ``gates="modulus"``, whether the gates have real biases.
    batch_first : bool, default False
        Inputs and outputs are ``(N, L, *)`` instead of ``(L, N, *)``
        (not the states, as torch).
    dropout : float, default 0
        Complex dropout (one mask for both parts, as
        :class:`~cplxmodule.nn.CplxDropout`) on the output of every layer but
        the last, in training.
    bidirectional : bool, default False
        Run every layer forwards and backwards and concatenate the outputs.{proj_size}
    gates : {{"split", "modulus"}}, default "split"
        ``"modulus"``: gates of the moduli, phase equivariant (see the Notes).
    device, dtype : optional
        Factory kwargs (a complex ``dtype`` names its parts' dtype).

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` ``(L, N, input_size)``
      (``(N, L, input_size)`` with ``batch_first``) or unbatched
      ``(L, input_size)``; or a :class:`torch.nn.utils.rnn.PackedSequence`
      of the complex sequences in the interleaved real layout (its data
      ``(sum of lengths, 2 * input_size)``, see
      :func:`~cplxmodule.cplx.to_interleaved_real`), as
      :func:`~torch.nn.utils.rnn.pack_padded_sequence` makes of
      ``cplx.to_interleaved_real(x)``.
    - {state_in}: ``(D * num_layers, N, hidden_size)`` or unbatched
      ``(D * num_layers, hidden_size)``, zeros if omitted, where ``D`` is 2
      if ``bidirectional`` else 1.
    - Output: ``(L, N, D * hidden_size)`` (``(N, L, ...)`` with
      ``batch_first``), or a ``PackedSequence`` in the interleaved layout
      for a packed input; and {state_out} of the states' shape, the last
      step of every sequence.
"""


_LAYER_KEYS = dict(keys="ih_l0.weight.real, hh_l0.bias.imag, ...", mask="ih_l0.mask",
                   torch_names="weight_ih_l0, bias_hh_l1_reverse, ...",
                   gate_bias="gate_bias_l{k}")


class CplxRNN(_CplxRNNBase):
    __doc__ = (
        r"""A multi-layer complex Elman RNN, the twin of :class:`torch.nn.RNN`.

    Each layer computes, for each time step,

    .. math::

        h_t = \phi(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})

    with the split ``tanh`` or ``relu`` as :math:`\phi`.
"""
        + _LAYER_PARAMETERS.format(
            nonlinearity="\n    nonlinearity : {'tanh', 'relu'}, default 'tanh'\n"
            "        The split activation.",
            proj_size="",
            state_in="``hx``",
            state_out="``h_n``",
        )
        + _GATES_DOC.format(**_LAYER_KEYS)
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> rnn = CplxRNN(4, 8, num_layers=2)
    >>> output, h_n = rnn(cplx.randn(10, 3, 4))
    >>> output.shape, h_n.shape
    (torch.Size([10, 3, 8]), torch.Size([2, 3, 8]))
    """
    )

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        gates: str = "split",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, nonlinearity=nonlinearity, gates=gates, device=device,
                         dtype=dtype)


class CplxGRU(_CplxRNNBase):
    __doc__ = (
        r"""A multi-layer complex gated recurrent unit, the twin of :class:`torch.nn.GRU`.

    Each layer computes, for each time step, torch's equations

    .. math::

        r_t &= \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) \\
        z_t &= \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\
        n_t &= \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})) \\
        h_t &= (1 - z_t) \odot n_t + z_t \odot h_{t-1}

    with split :math:`\sigma`, :math:`\tanh` and :math:`\odot` (see the
    Notes). The input projection of a whole sequence is one product; the
    hidden projection is one complex product per step.
"""
        + _LAYER_PARAMETERS.format(
            nonlinearity="", proj_size="", state_in="``hx``", state_out="``h_n``"
        )
        + _GATES_DOC.format(**_LAYER_KEYS)
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> gru = CplxGRU(4, 8, batch_first=True, bidirectional=True)
    >>> output, h_n = gru(cplx.randn(3, 10, 4))
    >>> output.shape, h_n.shape
    (torch.Size([3, 10, 16]), torch.Size([2, 3, 8]))
    >>> gru.weight_ih_l0.shape  # torch's name reads ih_l0.weight
    torch.Size([24, 4])
    """
    )

    _mode = "GRU"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        gates: str = "split",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, gates=gates, device=device, dtype=dtype)


class CplxLSTM(_CplxRNNBase):
    __doc__ = (
        r"""A multi-layer complex long short-term memory, the twin of :class:`torch.nn.LSTM`.

    Each layer computes, for each time step, torch's equations

    .. math::

        i_t, f_t, o_t &= \sigma(W_{i\cdot} x_t + b_{i\cdot} + W_{h\cdot} h_{t-1} + b_{h\cdot}) \\
        g_t &= \tanh(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg}) \\
        c_t &= f_t \odot c_{t-1} + i_t \odot g_t \\
        h_t &= o_t \odot \tanh(c_t)

    with split :math:`\sigma`, :math:`\tanh` and :math:`\odot` (see the
    Notes), the gates in torch's order ``i, f, g, o``. With ``proj_size``
    :math:`> 0`, as torch's, :math:`h_t` is then projected,
    :math:`h_t = W_{hr} h_t`, a complex product with no bias.
"""
        + _LAYER_PARAMETERS.format(
            nonlinearity="",
            proj_size="\n    proj_size : int, default 0\n"
            "        If positive (and below ``hidden_size``), project every ``h_t`` to\n"
            "        ``proj_size`` features with a :class:`~cplxmodule.nn.CplxLinear`\n"
            "        ``hr_l{k}`` (torch's ``weight_hr_l{k}``, no bias) per layer and\n"
            "        direction: ``h_0``, ``h_n`` and each direction's output then have\n"
            "        ``proj_size`` features instead of ``hidden_size`` (``c_0`` and\n"
            "        ``c_n`` keep ``hidden_size``), and so have the inputs of the hidden\n"
            "        projections and of the layers above the first.",
            state_in="``hx``, a tuple ``(h_0, c_0)``, each",
            state_out="``(h_n, c_n)``, each",
        )
        + _GATES_DOC.format(**_LAYER_KEYS)
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> lstm = CplxLSTM(4, 8)
    >>> output, (h_n, c_n) = lstm(cplx.randn(10, 3, 4))
    >>> output.shape, h_n.shape, c_n.shape
    (torch.Size([10, 3, 8]), torch.Size([1, 3, 8]), torch.Size([1, 3, 8]))
    >>> lstm = CplxLSTM(4, 8, proj_size=2)
    >>> output, (h_n, c_n) = lstm(cplx.randn(10, 3, 4))
    >>> output.shape, h_n.shape, c_n.shape, lstm.weight_hr_l0.shape
    (torch.Size([10, 3, 2]), torch.Size([1, 3, 2]), torch.Size([1, 3, 8]), torch.Size([2, 8]))
    """
    )

    _mode = "LSTM"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        gates: str = "split",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, gates=gates, device=device, dtype=dtype)


_CELL_PARAMETERS = r"""
    Parameters
    ----------
    input_size : int
        Number of complex features of the input.
    hidden_size : int
        Number of complex features of the hidden state.
    bias : bool, default True
        Whether the projections ``ih`` and ``hh`` have biases; with
        ``gates="modulus"``, whether the gates have real biases.{nonlinearity}
    gates : {{"split", "modulus"}}, default "split"
        ``"modulus"``: gates of the moduli, phase equivariant (see the Notes).
    device, dtype : optional
        Factory kwargs (a complex ``dtype`` names its parts' dtype).

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` ``(N, input_size)`` or
      unbatched ``(input_size,)``.
    - {state}: ``(N, hidden_size)`` or ``(hidden_size,)``, zeros if omitted.
    - Output: {output} of the state's shape.
"""
_CELL_KEYS = dict(keys="ih.weight.real, hh.bias.imag, ...", mask="ih.mask",
                  torch_names="weight_ih, bias_hh", gate_bias="gate_bias")


class CplxRNNCell(_CplxCellBase):
    __doc__ = (
        r"""A complex Elman RNN cell, the twin of :class:`torch.nn.RNNCell`.

    .. math::

        h' = \phi(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})

    with the split ``tanh`` or ``relu`` as :math:`\phi`.
"""
        + _CELL_PARAMETERS.format(
            nonlinearity="\n    nonlinearity : {'tanh', 'relu'}, default 'tanh'\n"
            "        The split activation.",
            state="State ``hx``",
            output="``h'``",
        )
        + _GATES_DOC.format(**_CELL_KEYS)
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> cell = CplxRNNCell(4, 8)
    >>> cell(cplx.randn(3, 4)).shape
    torch.Size([3, 8])
    """
    )

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        gates: str = "split",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, nonlinearity, gates, device, dtype)

    def forward(self, input: CplxLike, hx: Optional[CplxLike] = None) -> Cplx:
        input, (hx,), batched = self._check_step(input, [("hx", hx)])
        h, _ = self._step(input, hx)
        return _unbatch(h, batched)


class CplxGRUCell(_CplxCellBase):
    __doc__ = (
        r"""A complex gated recurrent unit cell, the twin of :class:`torch.nn.GRUCell`.

    One step of :class:`CplxGRU`'s equations.
"""
        + _CELL_PARAMETERS.format(nonlinearity="", state="State ``hx``", output="``h'``")
        + _GATES_DOC.format(**_CELL_KEYS)
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> cell = CplxGRUCell(4, 8)
    >>> h = cell(cplx.randn(3, 4))
    >>> cell(cplx.randn(3, 4), h).shape
    torch.Size([3, 8])
    """
    )

    _mode = "GRU"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        gates: str = "split",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, None, gates, device, dtype)

    def forward(self, input: CplxLike, hx: Optional[CplxLike] = None) -> Cplx:
        input, (hx,), batched = self._check_step(input, [("hx", hx)])
        h, _ = self._step(input, hx)
        return _unbatch(h, batched)


class CplxLSTMCell(_CplxCellBase):
    __doc__ = (
        r"""A complex long short-term memory cell, the twin of :class:`torch.nn.LSTMCell`.

    One step of :class:`CplxLSTM`'s equations.
"""
        + _CELL_PARAMETERS.format(
            nonlinearity="", state="States ``hx = (h, c)``, each", output="``(h', c')``, each"
        )
        + _GATES_DOC.format(**_CELL_KEYS)
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> cell = CplxLSTMCell(4, 8)
    >>> h, c = cell(cplx.randn(3, 4))
    >>> h.shape, c.shape
    (torch.Size([3, 8]), torch.Size([3, 8]))
    """
    )

    _mode = "LSTM"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        gates: str = "split",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, None, gates, device, dtype)

    def forward(
        self, input: CplxLike, hx: Optional[tuple[CplxLike, CplxLike]] = None
    ) -> tuple[Cplx, Cplx]:
        where = self._get_name()
        states: tuple[Optional[CplxLike], Optional[CplxLike]] = (None, None)
        if hx is not None:
            if not isinstance(hx, tuple) or len(hx) != 2:
                raise TypeError(f"{where}: `hx` must be a tuple (h, c) of Cplx, got {describe(hx)}")
            states = hx
        input, (h, c), batched = self._check_step(input, [("h", states[0]), ("c", states[1])])
        h, c = self._step(input, h, c)
        return _unbatch(h, batched), _unbatch(c, batched)
