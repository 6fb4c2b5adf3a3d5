r"""The fixed-point precision that the surviving weights of a Bayesian model need.

Louizos, Ullrich & Welling (2017) read the bit precision of a layer off the
posterior: a weight known only up to a standard deviation :math:`\sigma`
gains nothing from being stored more finely than :math:`\sigma`, so the unit
round-off of the layer's number format is set by the posterior variances of
its weights, and its range by their largest magnitude.

.. rubric:: Definition

Let :math:`S` be the real numbers that a layer stores for its surviving
weights (those its relevance mask keeps at ``threshold``): one per real
weight, two per complex weight, its real and imaginary parts. Each has the
marginal posterior variance :math:`v_k` and the posterior mean :math:`w_k`
(the layer's weight). The layer's format is signed fixed point, in two's
complement, with step :math:`2^{-f}`:

.. math::

    \bar\sigma^2 = \frac{1}{|S|} \sum_{k \in S} v_k, \qquad
    f = \Bigl\lceil -\log_2 \bar\sigma - 1 \Bigr\rceil, \qquad
    b = 1 + \max\Bigl(1,\ \operatorname{bitlength}
        \bigl\lfloor 2^{f} \max_{k \in S} |w_k| + \tfrac12 \bigr\rfloor\Bigr),

so that the unit round-off of rounding to the nearest step,
:math:`u = 2^{-f-1}`, is the largest power of two with
:math:`u \leq \bar\sigma` (:math:`\bar\sigma / 2 < u \leq \bar\sigma`), and
:math:`b` bits, the sign bit included, hold every surviving weight rounded
to that step, at least one bit besides the sign. :math:`f` may be negative
(a step above 1) and exceed :math:`b` (weights below :math:`1/2`): the
binary point is a power-of-two scale, free in hardware. A layer without a
surviving weight, or whose survivors are all zero, has nothing to store:
:math:`b = 0`.

The marginal variances are those of the weight the layer multiplies by,
:math:`V(z w) = V(z)\,(\mathbb{E}[w]^2 + V(w)) + V(w)\,\mathbb{E}[z]^2`
(Louizos et al., 2017: the marginal variance of a weight :math:`w` scaled
by a gate :math:`z`, under their group normal-Jeffreys prior):

- per-weight variational dropout and ARD: :math:`z = 1`, so
  :math:`v = \sigma^2`, ``exp(log_sigma2)``;
- channel and input gates (``*ChannelVD``, ``*ChannelARD``, with
  ``gated="output"`` or ``"input"``) and the hidden-unit gates of the
  recurrent layers (``*UnitVD``, ``*UnitARD``): a deterministic weight and a
  gate of mean 1 and variance :math:`\alpha`, so :math:`v = \alpha |w|^2`
  for every weight that the gate scales.

A complex weight's posterior variance :math:`\mathbb{E}|w - \mu|^2` is
split over its two parts: each has half of it on average (exactly half under
the complex-circular posterior :math:`\mathcal{CN}(\mu, \sigma^2)` of the
per-weight and channel layers; a recurrent layer's real unit gate gives
them :math:`\alpha \operatorname{Re}(w)^2` and
:math:`\alpha \operatorname{Im}(w)^2`), so :math:`\bar\sigma^2` is the mean of
:math:`v / 2` over the complex survivors. Both parts share one format, one
step and one width, the largest magnitude being that of either part: a
fixed-point complex multiplier takes its operands' real and imaginary parts
in one format (and a phase rotation mixes them, so neither may be coarser).
A complex weight then takes :math:`2b` bits.

.. rubric:: Assumptions, and where this departs from the paper

- One format per weight tensor; the bias, which has no posterior here, is
  not counted. Layers without a Gaussian posterior (L0 gates, LASSO) have no
  variance to read and are left out; so is the ``hr`` projection of a
  recurrent layer with ``proj_size``, which its unit gates do not scale.
- The mean variance over the layer, as Louizos et al. (2017) average over a
  layer (their reference code, ``compression.py`` of
  github.com/KarenUllrich/Tutorial_BayesianCompressionForDL, averages the
  bit counts of the single weights instead). The mean is dominated by the
  least certain survivors: a few noisy weights among precise ones make the
  format coarser than the precise ones' posterior (the minimum variance
  would be the conservative choice).
- The round-off is matched to the standard deviation, a length as the step
  is, where the reference code matches the step to twice the variance: so
  a layer whose weights and posterior are scaled by :math:`2^k` needs the
  same :math:`b`, its binary point :math:`k` places over.
- The posterior is read as trained: survivors whose :math:`\log\alpha` is
  near ``threshold`` are noisy (at 3.0, :math:`\sigma = 4.5 |w|`) and make
  :math:`\bar\sigma` large; a lower threshold keeps fewer, more precise
  weights.

References
----------
C. Louizos, K. Ullrich and M. Welling, "Bayesian Compression for Deep
Learning", Advances in Neural Information Processing Systems 30 (NeurIPS
2017), pp. 3288-3298, arXiv:1705.08665.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterator, NamedTuple, Union

import torch

from ...cplx import Cplx
from ...cplx._shared import ArgumentTypeError
from .._guards import check_finite, check_threshold, layer_label, naming
from ..modules.rnn import _GATES
from .base import GaussianMixin, _modulus2
from .recurrent import UnitGaussianMixin
from .structured import ChannelGaussianMixin

__all__ = ["FixedPoint", "named_bit_precision", "bit_precision"]


class FixedPoint(NamedTuple):
    r"""A signed fixed-point format (two's complement): ``bits`` in all, ``fraction`` after the point.

    It stores the numbers :math:`k \cdot 2^{-\text{fraction}}`, for the
    integers :math:`-2^{\text{bits} - 1} \leq k < 2^{\text{bits} - 1}`;
    ``bits`` counts the sign bit, and ``fraction`` may be negative or exceed
    ``bits`` (the binary point is a power-of-two scale). ``FixedPoint(0, 0)``
    stores nothing (a layer without a surviving weight).

    Examples
    --------
    Weights rounded to the step of a format:

    >>> fmt = FixedPoint(bits=5, fraction=3)
    >>> step = 2.0 ** -fmt.fraction
    >>> torch.round(torch.tensor([1.5, -0.26]) / step) * step
    tensor([ 1.5000, -0.2500])
    """

    bits: int
    fraction: int


_NOTHING = FixedPoint(0, 0)


def named_bit_precision(
    module: torch.nn.Module, *, threshold: Union[float, torch.Tensor], prefix: str = "",
) -> Iterator[tuple[str, FixedPoint]]:
    r"""Iterate over the Gaussian layers of ``module`` and the fixed-point format of their surviving weights.

    The format is that of the module docstring
    (:mod:`cplxmodule.nn.relevance.bits`): step :math:`2^{-f}` with
    :math:`f = \lceil -\log_2 \bar\sigma - 1 \rceil`, :math:`\bar\sigma^2`
    the mean marginal posterior variance of the real numbers the surviving
    weights store (Louizos, Ullrich & Welling, 2017), and as many bits as
    the largest surviving weight needs on that grid, the sign bit included.
    A complex layer's real and imaginary parts share the format.

    Parameters
    ----------
    module : torch.nn.Module
        The model to walk, in the order of :meth:`torch.nn.Module.named_modules`.
    threshold : float or 0-dim float tensor
        Keyword only: the weights that survive are those each layer's
        ``relevance(threshold=threshold)`` keeps (:math:`\log\alpha \leq`
        ``threshold``); the threshold of the masks that are deployed.
    prefix : str, optional
        Prepended to every name.

    Returns
    -------
    iterator of (str, FixedPoint)
        The name and format of every layer with a Gaussian posterior
        (variational dropout or ARD, per weight, channel or hidden unit); for a
        recurrent layer with hidden-unit gates, of its projections that the
        gates scale, ``gru.ih_l0``, ``gru.hh_l0``, ... L0 and LASSO layers
        have no posterior variance and are left out.

    Raises
    ------
    TypeError
        If ``module`` is not a :class:`torch.nn.Module` or ``threshold`` not a
        real number (raised at the call).
    ValueError
        If ``threshold`` is NaN or ``module`` has no layer with a Gaussian
        posterior (raised at the call); naming the layer, if a layer's
        parameters are not finite.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import CplxLinearVD
    >>> layer = CplxLinearVD(2, 1)
    >>> with torch.no_grad():
    ...     _ = layer.weight.real.copy_(torch.tensor([[0.75, -0.5]]))
    ...     _ = layer.weight.imag.copy_(torch.tensor([[0.0, 0.25]]))
    ...     _ = layer.log_sigma2.fill_(math.log(2 * 0.01**2))  # each part's std: 0.01
    >>> list(named_bit_precision(torch.nn.Sequential(layer), threshold=3.0))
    [('0', FixedPoint(bits=7, fraction=6))]
    """
    where = "named_bit_precision"
    _check_arguments(module, threshold, where)
    return _named_bit_precision(module, threshold, prefix, where)


def bit_precision(
    module: torch.nn.Module, *, threshold: Union[float, torch.Tensor], prefix: str = "",
) -> dict[str, int]:
    """The number of bits, sign included, of each Gaussian layer's surviving weights.

    The widths of :func:`named_bit_precision`'s formats: a real weight
    takes that many bits, a complex weight twice as many (its two parts
    share one format). A layer without a surviving weight takes 0.

    Parameters
    ----------
    module : torch.nn.Module
    threshold : float or 0-dim float tensor
        Keyword only, as for :func:`named_bit_precision`.
    prefix : str, optional
        Prepended to every name.

    Returns
    -------
    dict of str to int
        Keyed by layer name (a recurrent layer's projections: ``gru.ih_l0``, ...).

    Raises
    ------
    TypeError
        If ``module`` is not a module or ``threshold`` not a real number.
    ValueError
        If ``threshold`` is NaN, ``module`` has no layer with a Gaussian
        posterior, or a layer's parameters are not finite.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import LinearVD
    >>> layer = LinearVD(3, 1)
    >>> with torch.no_grad():
    ...     _ = layer.weight.copy_(torch.tensor([[1.5, 0.25, 0.0]]))
    ...     _ = layer.log_sigma2.fill_(2 * math.log(0.1))  # std 0.1; the zero weight is pruned
    >>> bit_precision(torch.nn.Sequential(layer, torch.nn.ReLU()), threshold=3.0)
    {'0': 5}
    """
    where = "bit_precision"
    _check_arguments(module, threshold, where)
    return {name: fmt.bits for name, fmt in _named_bit_precision(module, threshold, prefix, where)}


# the layers whose posterior has a variance: L0 and LASSO layers have none
_GAUSSIAN = (GaussianMixin, UnitGaussianMixin)


def _check_arguments(module, threshold, where):
    if not isinstance(module, torch.nn.Module):
        raise ArgumentTypeError(
            f"{where}: `module` must be a torch.nn.Module, got {type(module).__name__}"
        )
    check_threshold(threshold, where)
    if not any(isinstance(layer, _GAUSSIAN) for layer in module.modules()):
        raise ValueError(
            f"{where}: `module` must have a layer with a Gaussian posterior (variational"
            f" dropout or ARD, per weight, channel or hidden unit), got none in"
            f" {type(module).__name__}: L0 and LASSO layers have no posterior variance"
        )


def _named_bit_precision(module, threshold, prefix, where):
    with torch.no_grad():
        for name, layer in module.named_modules(prefix=prefix):
            if not isinstance(layer, _GAUSSIAN):
                continue
            check_finite(layer, where, name)
            with naming(layer_label(where, name, layer)):
                posteriors = list(_posteriors(layer, threshold))
            for sub, weight, log_variance, kept in posteriors:
                yield ".".join(part for part in (name, sub) if part), _format(weight, log_variance, kept)


def _posteriors(layer, threshold):
    """``(name, weight, log of its marginal variance, 0/1 mask of the survivors)`` of each weight of ``layer``.

    ``name`` is the weight's module under ``layer``, ``""`` for ``layer``'s
    own. The variances stay logs: ``exp(log_sigma2)`` underflows long before
    the precision it asks for stops being a number of bits.
    """
    if isinstance(layer, UnitGaussianMixin):
        yield from _unit_posteriors(layer, threshold)
        return
    kept = layer.relevance(threshold=threshold)
    if isinstance(layer, ChannelGaussianMixin):
        # a gate of mean 1 and variance alpha on a deterministic weight
        log_variance = layer._expand(layer.log_alpha) + torch.log(_modulus2(layer.weight))
    else:
        log_variance = layer.log_sigma2
    yield "", layer.weight, log_variance, kept


def _unit_posteriors(layer, threshold):
    """The projections that the hidden-unit gates scale: a unit's gate on its rows of every gate."""
    masks = dict(layer.projection_relevance(threshold=threshold))
    for k, suffix in enumerate(layer._suffixes()):
        log_alpha = layer.log_alpha[k].repeat(_GATES[layer.mode]).unsqueeze(-1)
        # ``hr`` (with ``proj_size``) is not gated: a point estimate, no variance
        for name in ("ih" + suffix, "hh" + suffix):
            weight = getattr(layer, name).weight
            yield name, weight, log_alpha + torch.log(_modulus2(weight)), masks[name]


def _format(weight, log_variance, kept):
    """The fixed-point format of the entries of ``weight`` that ``kept`` keeps (see the module docstring)."""
    kept = kept.bool()
    if not kept.any():
        return _NOTHING
    parts = (weight.real, weight.imag) if isinstance(weight, Cplx) else (weight,)
    largest = max(float(part[kept].abs().max()) for part in parts)
    if largest == 0.0:
        return _NOTHING
    # the mean over the stored real numbers: a complex weight's variance
    # is split over its two parts, which share the format
    count = int(kept.sum()) * len(parts)
    log_mean = float(torch.logsumexp(log_variance[kept].double(), 0)) - math.log(count)
    fraction = math.ceil(-log_mean / (2 * math.log(2)) - 1)
    # exact: the largest weight rounded to the nearest step, in steps
    levels = math.floor(Fraction(largest) * Fraction(2) ** fraction + Fraction(1, 2))
    return FixedPoint(1 + max(levels.bit_length(), 1), fraction)
