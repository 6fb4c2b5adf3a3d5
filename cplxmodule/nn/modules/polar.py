"""Polar maps: a real map of the modulus, the phase kept or mapped; the min-max norm of the moduli."""

from __future__ import annotations

from typing import Callable, Optional

import torch

from .._kinds import ELEMENTWISE
from ... import cplx
from ...cplx._shared import check_int, describe
from ...cplx._typing import CplxLike
from ...cplx.polar import _polar_activation
from ...cplx.tensor import Cplx
from .base import CplxToCplx, _check_cplx

__all__ = ["CplxPhaseSigmoid", "CplxPolar", "CplxMagMinMaxNorm"]


class CplxPhaseSigmoid(CplxToCplx, compact=ELEMENTWISE):
    r"""The sigmoid of the modulus with the phase kept: :math:`\sigma(|z|) \, e^{i \arg z}`.

    The modulus goes into :math:`[1/2, 1)`, the phase is kept; zero maps to
    zero, with a zero gradient. The values are those of complextorch's
    ``PhaseSigmoid``; its gradient at zero is not finite in practice (about
    :math:`5 \cdot 10^{11}`). See :func:`cplxmodule.cplx.phase_sigmoid`.

    Shape
    -----
    - Input and output: any shape, the same.

    See Also
    --------
    CplxPolar : the same map as ``CplxPolar(torch.sigmoid)`` away from zero.

    References
    ----------
    A. Hirose, "Complex-valued neural networks: theories and applications",
    World Scientific, 2003 (amplitude-phase type activations).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> z = cplx.Cplx(torch.tensor([3.0, 0.0]), torch.tensor([4.0, 0.0]))
    >>> abs(CplxPhaseSigmoid()(z))
    tensor([0.9933, 0.0000])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.phase_sigmoid(_check_cplx(self, input))


def _callable(value, name):
    if value is not None and not callable(value):
        raise TypeError(f"CplxPolar: `{name}` must be callable, got {describe(value)}")
    return value


class CplxPolar(CplxToCplx):
    r"""A polar activation :math:`f(|z|) \, e^{i g(\arg z)}` made of real maps.

    The polar counterpart of the split ``CplxToCplx[torch.nn.Tanh]``: the
    modulus goes through :math:`f` and the phase through :math:`g` (or is
    kept), see :func:`cplxmodule.cplx.polar_activation` for the value and
    the gradient at zero. Modules given as maps are submodules: their
    parameters train with the layer and their state follows it.

    Parameters
    ----------
    modulus_fn : callable
        :math:`f`, e.g. :func:`torch.tanh` or ``torch.nn.Softplus()``.
    phase_fn : callable, optional
        :math:`g` on phases in :math:`[-\pi, \pi]`; ``None`` keeps the phase.

    Raises
    ------
    TypeError
        If a map is not callable.

    Shape
    -----
    - Input and output: any shape, the same.

    Notes
    -----
    :func:`~cplxmodule.nn.masked.compact` does not see through this layer:
    the maps may do anything, e.g. mix channels.
    ``CplxPolar(torch.tanh)`` is :class:`~cplxmodule.nn.CplxModTanh`. It
    gives the values of complextorch's ``GeneralizedPolarActivation``.

    References
    ----------
    A. Hirose, "Complex-valued neural networks: theories and applications",
    World Scientific, 2003 (amplitude-phase type activations).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxPolar(torch.nn.Softplus(), lambda phase: 2 * phase)
    >>> layer(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def __init__(
        self,
        modulus_fn: Callable[[torch.Tensor], torch.Tensor],
        phase_fn: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
    ) -> None:
        if modulus_fn is None:
            raise TypeError("CplxPolar: `modulus_fn` must be callable, got None")
        _callable(modulus_fn, "modulus_fn")
        _callable(phase_fn, "phase_fn")
        super().__init__()
        self.modulus_fn = modulus_fn
        self.phase_fn = phase_fn

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        return _polar_activation(input, self.modulus_fn, self.phase_fn, self._get_name())

    def extra_repr(self):
        parts = []
        for name in ("modulus_fn", "phase_fn"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, torch.nn.Module):
                parts.append(f"{name}={getattr(value, '__name__', value)}")
        return ", ".join(parts)


class CplxMagMinMaxNorm(CplxToCplx):
    r"""Min-max normalisation of the moduli, the phases kept.

    .. math::

        \frac{|z| - \min |z|}{\max |z| - \min |z|} \, e^{i \arg z},

    the extremes over every element of the input (``dim=None``) or along
    ``dim``; zero where they agree. See
    :func:`cplxmodule.cplx.magnitude_minmax_norm`.

    Parameters
    ----------
    dim : int, optional
        The dimension of the extremes; all of them if ``None``.

    Raises
    ------
    TypeError
        If ``dim`` is neither an int nor ``None``.

    Shape
    -----
    - Input and output: any shape, the same.

    Notes
    -----
    complextorch's ``MagMinMaxNorm`` computes the same map; it divides by
    zero where the extremes agree.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> out = CplxMagMinMaxNorm(dim=-1)(cplx.randn(8, 4))
    >>> bool(torch.allclose(abs(out).amax(dim=-1), torch.ones(8)))
    True
    """

    def __init__(self, dim: Optional[int] = None) -> None:
        check_int(dim, "dim", "CplxMagMinMaxNorm", optional=True)
        super().__init__()
        self.dim = dim

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        if self.dim is not None and not -input.dim() <= self.dim < max(input.dim(), 1):
            raise IndexError(
                f"{self._get_name()}: `dim` must be in [{-input.dim()}, {input.dim() - 1}]"
                f" for an input of shape {tuple(input.shape)}, got {self.dim}"
            )
        return cplx.magnitude_minmax_norm(input, self.dim)

    def extra_repr(self):
        return "" if self.dim is None else f"dim={self.dim}"
