r"""L0 regularisation with hard-concrete gates (Louizos, Welling & Kingma, 2018)."""

from __future__ import annotations

from typing import Optional

import torch

from .....cplx._shared import check_choice
from .....cplx._typing import Device
from ...base import BaseARD
from ...structured import _ChannelGeometry, _HardConcreteChannels
from ....modules.linear import _RealLinear
# at its published path
from ....utils.sparsity import SparsityStats  # noqa: F401

__all__ = ["BaseARD", "LinearL0"]

_GROUPS = {
    None: lambda out, in_: (out, in_),
    "input": lambda out, in_: (1, in_),
    "output": lambda out, in_: (out, 1),
}


class LinearL0(
    _HardConcreteChannels,
    _ChannelGeometry,
    _RealLinear,
    BaseARD,
    family=torch.nn.Linear,
    kind="l0",
    twin=False,
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
        # the features that carry grouped gates, for the channel geometry
        self.group = self.gated = group
        shape = _GROUPS[group](out_features, in_features)
        self._make_log_alpha(torch.empty(shape, device=device, dtype=dtype))

    def _detach_kind(self):
        super()._detach_kind()
        del self.group, self.gated

    def _channel_view(self, vector):
        # the gates are stored broadcastable to the weight, as published
        return vector

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
        return super().relevance(hard=hard)

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
        return super().sparsity(hard=hard)

    def _weighted_forward(self, input: torch.Tensor) -> torch.Tensor:
        if self.training and self.group is None:
            # gates of single weights are drawn once per call: per example
            # they would make a weight matrix per example
            return self._dense_forward(input, weight=self.weight * self.gate(), bias=self.bias)
        # grouped gates are drawn per example (per row of the input), as
        # Louizos et al. do, on the input or output features
        return super()._weighted_forward(input)

    def extra_repr(self):
        return super().extra_repr() + ("" if self.group is None else f", group={self.group!r}")
