r"""L0 regularisation with hard-concrete gates (Louizos, Welling & Kingma, 2018)."""

import math

import torch

from ...base import BaseARD
from ....modules.linear import _RealLinear
from ....utils.sparsity import SparsityStats  # noqa: F401  (published import path)

__all__ = ["BaseARD", "LinearL0"]

_GROUPS = {
    None: lambda out, in_: (out, in_),
    "input": lambda out, in_: (1, in_),
    "output": lambda out, in_: (out, 1),
}


class LinearL0(BaseARD, _RealLinear):
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
    - Input and output: as for :class:`torch.nn.Linear`; in training mode
      the gates are drawn anew at each call, in eval mode they are fixed.
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

    def __init__(self, in_features, out_features, bias=True, group=None, device=None, dtype=None):
        if group not in _GROUPS:
            raise ValueError(
                f"LinearL0: `group` must be None, 'input' or 'output', got {group!r}."
            )
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
        return self._gate(sample=self.training)

    def _gate(self, *, sample):
        logit = -self.log_alpha
        if sample:
            u = torch.rand_like(logit).clamp_(1e-6, 1 - 1e-6)
            logit = (torch.log(u) - torch.log1p(-u) + logit) / self.beta
        s = torch.sigmoid(logit)
        return torch.clamp(s * (self.zeta - self.gamma) + self.gamma, 0.0, 1.0)

    def _eval_weight(self):
        """The weight the eval-mode forward computes with: gates folded in.

        :func:`~cplxmodule.nn.masked.compact` stores it in the dense twin.
        """
        return self.weight * self._gate(sample=False)

    @property
    def penalty(self):
        """torch.Tensor: the probability of each gate being non-zero."""
        return torch.sigmoid(-self.log_alpha - self.beta * math.log(-self.gamma / self.zeta))

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
            logit = -self.log_alpha
            gate = torch.clamp(
                torch.sigmoid(logit) * (self.zeta - self.gamma) + self.gamma, 0.0, 1.0
            )
            gate = torch.broadcast_to(gate, self.weight.shape)
            return torch.gt(gate, 0).to(gate.dtype) if hard else gate.clone()

    def forward(self, input):
        return self._dense_forward(input, weight=self.weight * self.gate(), bias=self.bias)

    def extra_repr(self):
        return super().extra_repr() + ("" if self.group is None else f", group={self.group!r}")
