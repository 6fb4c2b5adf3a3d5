r"""L0 regularisation with hard-concrete gates (Louizos, Welling & Kingma, 2018)."""

from __future__ import annotations

import math

import torch

from .....cplx._shared import check_choice
from ... import functional as F
from ...base import BaseARD
from ....modules.linear import _RealLinear
from ....utils.sparsity import SparsityStats, _weight_counts
from typing import Optional
from .....cplx._typing import Device

__all__ = ["BaseARD", "LinearL0"]

_GROUPS = {
    None: lambda out, in_: (out, in_),
    "input": lambda out, in_: (1, in_),
    "output": lambda out, in_: (out, 1),
}


class LinearL0(
    SparsityStats, _RealLinear, BaseARD, family=torch.nn.Linear, kind="l0", twin=False
):
    r"""Linear layer whose weights pass through stochastic hard-concrete gates.

    Each weight (or each input column, or output row, with ``group``) is
    multiplied by a gate :math:`z \in [0, 1]` that is exactly 0 or 1 with
    positive probability (Louizos, Welling & Kingma, 2018). In training
    :math:`z = \min(1, \max(0, s (\zeta - \gamma) + \gamma))` with
    :math:`s = \sigma((\log u - \log(1 - u) - \log\alpha) / \beta)`,
    :math:`u \sim U(0, 1)`; in eval mode :math:`s = \sigma(-\log\alpha)`.
    The sign follows the other layers: a large ``log_alpha`` drops the
    weight. ``penalty`` is the probability that a gate is non-zero, the
    expected L0 norm.

    Parameters
    ----------
    in_features, out_features, bias
        As for :class:`torch.nn.Linear`.
    group : {None, "input", "output"}
        One gate per weight, per input feature or per output feature.
    device, dtype : optional
        Factory kwargs.

    Attributes
    ----------
    log_alpha : torch.nn.Parameter
        The gates' log-odds of being closed; initialised to
        :math:`\log(0.1 / 0.9)` (open with probability about 0.9).
    beta, gamma, zeta : float
        The hard-concrete temperature and stretch interval.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.Linear`. In training mode
      the gates are drawn anew at each call: grouped gates for each example
      (each row of the input), as Louizos et al. draw them, gates of single
      weights once for the whole call (per example they would make a
      weight matrix per example); in eval mode they are fixed.
    - ``log_alpha`` and ``penalty``: ``(out_features, in_features)``, or
      ``(1, in_features)`` with ``group="input"``, ``(out_features, 1)``
      with ``group="output"``; ``relevance()``: the weight's shape.

    Examples
    --------
    >>> layer = LinearL0(4, 3, group="input")
    >>> layer(torch.randn(2, 4)).shape
    torch.Size([2, 3])
    >>> layer.log_alpha.shape
    torch.Size([1, 4])
    >>> layer.relevance().shape
    torch.Size([3, 4])
    """

    beta, gamma, zeta = 2.0 / 3.0, -0.1, 1.1
    __sparsity_ignore__ = ("log_alpha",)

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        group: Optional[str] = None,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        check_choice(group, "group", type(self).__name__, ("input", "output"), optional=True)
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.group = group
        shape = _GROUPS[group](out_features, in_features)
        self.log_alpha = torch.nn.Parameter(torch.empty(shape, device=device, dtype=dtype))
        self.reset_variational_parameters()

    def reset_variational_parameters(self):
        """Open every gate with probability about 0.9."""
        with torch.no_grad():
            self.log_alpha.fill_(math.log(0.1 / 0.9))

    def gate(self):
        """The gates: a hard-concrete sample in training, their deterministic value in eval mode.

        Returns
        -------
        torch.Tensor
            Of ``log_alpha``'s shape, in :math:`[0, 1]`.
        """
        if self.training:
            return self._sample_gates(self.log_alpha, self.log_alpha.shape)
        return self._eval_gate()

    def _eval_gate(self):
        return F.hard_concrete_gate(self.log_alpha, self.gamma, self.zeta)

    def _sample_gates(self, log_alpha, shape):
        """Independent hard-concrete gates of ``shape``, ``log_alpha`` broadcast to it."""
        return F.hard_concrete(log_alpha, shape, self.beta, self.gamma, self.zeta)

    def _eval_weight(self):
        """The weight the eval-mode forward computes with: gates folded in.

        :func:`~cplxmodule.nn.masked.compact` stores it in the dense twin.
        """
        return self.weight * self._eval_gate()

    @property
    def penalty(self):
        """torch.Tensor: the probability of each gate being non-zero."""
        return F.l0_penalty(self.log_alpha, self.beta, self.gamma, self.zeta)

    def relevance(self, *, hard=True, **kwargs):
        """The eval-mode gates of the weights, broadcast to the weight's shape.

        Parameters
        ----------
        hard : bool
            Return ``1`` where the gate is open at all, ``0`` where it is
            exactly closed; ``False`` returns the gate values.
        **kwargs
            Ignored (e.g. the ``threshold`` that :func:`compute_ard_masks`
            passes to every layer): a hard-concrete gate is exactly 0 or not.

        Returns
        -------
        torch.Tensor
            Detached, of the weight's shape and dtype.
        """
        with torch.no_grad():
            gate = torch.broadcast_to(self._eval_gate(), self.weight.shape)
            return torch.gt(gate, 0).to(gate.dtype) if hard else gate.clone()

    def sparsity(self, *, hard=True, **kwargs):
        """The weight entries the gates close, for :func:`~cplxmodule.nn.utils.named_sparsity`.

        Parameters
        ----------
        hard : bool, default True
            Count the closed gates; ``False`` sums ``1 - gate``.
        **kwargs
            Ignored (e.g. ``threshold``).

        Returns
        -------
        list of (int, float)
            ``id`` of the weight and the count.
        """
        return _weight_counts(self, 1 - self.relevance(hard=hard))

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if not self.training or self.group is None:
            # gates of single weights are drawn once per call: per example
            # they would make a weight matrix per example
            return self._dense_forward(input, weight=self.weight * self.gate(), bias=self.bias)
        # grouped gates are drawn per example (per row of the input), as
        # Louizos et al. do: a gate of an input feature scales that feature,
        # one of an output feature scales that output before the bias
        rows = input.shape[:-1]
        if self.group == "input":
            gates = self._sample_gates(self.log_alpha[0], (*rows, self.in_features))
            return self._dense_forward(input * gates, weight=self.weight, bias=self.bias)
        gates = self._sample_gates(self.log_alpha[:, 0], (*rows, self.out_features))
        output = self._dense_forward(input, weight=self.weight, bias=None) * gates
        return output if self.bias is None else output + self.bias

    def extra_repr(self):
        return super().extra_repr() + ("" if self.group is None else f", group={self.group!r}")
