"""LASSO: an L1 penalty on the weights, with the helpers of :mod:`cplxmodule.nn.relevance`."""

import torch

from ...._guards import check_threshold
from ...base import BaseARD
from ....modules.linear import _RealLinear
from ....utils.sparsity import SparsityStats, _weight_counts

__all__ = ["BaseARD", "LinearLASSO"]


class LinearLASSO(
    SparsityStats,
    _RealLinear,
    BaseARD,
    family=torch.nn.Linear,
    kind="lasso",
    twin=False,
    convertible=False,
):
    r"""Linear layer with an L1 penalty on its weight (Tibshirani, 1996).

    A deterministic baseline for the Bayesian layers: ``penalty`` is
    :math:`|w|` per weight, ``relevance(threshold=t)`` keeps the weights
    with :math:`\log|w| > t`, as published: the threshold is on a log
    scale, like that of :math:`\log\alpha`, so one ``threshold`` serves a
    model that mixes the layers. Takes the arguments of
    :class:`torch.nn.Linear`.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.Linear`.
    - ``penalty`` and ``relevance(threshold=t)``: the weight's shape.

    Examples
    --------
    >>> layer = LinearLASSO(3, 2)
    >>> layer(torch.randn(4, 3)).shape
    torch.Size([4, 2])
    >>> bool((layer.penalty == layer.weight.abs()).all())
    True
    >>> layer.relevance(threshold=-100.0).sum().item()  # keeps every non-zero weight
    6.0
    """

    @property
    def penalty(self):
        """torch.Tensor: :math:`|w|`, per weight."""
        return torch.abs(self.weight)

    def relevance(self, *, threshold, **kwargs):
        """The 0/1 mask of the weights with :math:`\\log|w|` above ``threshold``.

        Parameters
        ----------
        threshold : float
            On the log scale: ``threshold=0.0`` keeps the weights of
            modulus above 1.
        **kwargs
            Accepted and ignored (e.g. ``hard``).

        Returns
        -------
        torch.Tensor
            Detached, of the weight's shape and dtype.

        Raises
        ------
        TypeError
            If ``threshold`` is not a real number.
        """
        check_threshold(threshold, type(self).__name__)
        with torch.no_grad():
            return torch.gt(torch.log(torch.abs(self.weight)), threshold).to(self.weight.dtype)

    def sparsity(self, *, threshold, **kwargs):
        """The weight entries :meth:`relevance` drops, for :func:`~cplxmodule.nn.utils.named_sparsity`.

        Parameters
        ----------
        threshold : float
            As for :meth:`relevance`.
        **kwargs
            Ignored (e.g. ``hard``).

        Returns
        -------
        list of (int, float)
            ``id`` of the weight and the count.
        """
        return _weight_counts(self, 1 - self.relevance(threshold=threshold))
