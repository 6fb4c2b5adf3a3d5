"""LASSO: an L1 penalty on the weights, with the helpers of :mod:`cplxmodule.nn.relevance`."""

import torch

from ...base import BaseARD, _check_threshold
from ....modules.linear import _RealLinear
from ....utils.sparsity import SparsityStats  # noqa: F401  (published import path)

__all__ = ["BaseARD", "LinearLASSO"]


class LinearLASSO(BaseARD, _RealLinear):
    r"""Linear layer with an L1 penalty on its weight (Tibshirani, 1996).

    A deterministic baseline for the Bayesian layers: ``penalty`` is
    :math:`|w|` per weight, ``relevance(threshold=t)`` keeps the weights
    with :math:`|w| > t`. Takes the arguments of :class:`torch.nn.Linear`.

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
    >>> layer.relevance(threshold=0.0).sum().item()
    6.0
    """

    @property
    def penalty(self):
        """torch.Tensor: :math:`|w|`, per weight."""
        return torch.abs(self.weight)

    def relevance(self, *, threshold):
        """The 0/1 mask of the weights with :math:`|w|` above ``threshold``.

        Parameters
        ----------
        threshold : float

        Returns
        -------
        torch.Tensor
            Detached, of the weight's shape and dtype.

        Raises
        ------
        TypeError
            If ``threshold`` is not a real number.
        """
        _check_threshold(threshold, type(self).__name__)
        with torch.no_grad():
            return torch.gt(torch.abs(self.weight), threshold).to(self.weight.dtype)
