r"""Activations in polar form: a real function of the modulus, the phase kept or mapped.

:func:`phase_sigmoid` is :math:`\sigma(|z|) \, e^{i \arg z}`;
:func:`polar_activation` is the general :math:`f(|z|) \, e^{i g(\arg z)}` for
real functions :math:`f` and :math:`g`; :func:`magnitude_minmax_norm` maps
the moduli onto :math:`[0, 1]` by their extremes. All are defined at
:math:`z = 0`, where the phase is not, and have a finite gradient there.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from ._shared import check_int, checked_cplx, describe
from .tensor import Cplx, _phasor_parts, _rescaled
from ._typing import CplxLike

__all__ = ["phase_sigmoid", "polar_activation", "magnitude_minmax_norm"]


def phase_sigmoid(input: CplxLike) -> Cplx:
    r"""The sigmoid of the modulus with the phase kept: :math:`\sigma(|z|) \, e^{i \arg z}`.

    The modulus goes into :math:`[1/2, 1)`, the phase is kept. At
    :math:`z = 0`, where the phase is undefined and the limit of the modulus
    is :math:`1/2`, the value is zero, as in complextorch's ``PhaseSigmoid``,
    and so is the gradient (complextorch's is :math:`\sigma(0) / 10^{-12}`
    there).

    Parameters
    ----------
    input : Cplx

    Returns
    -------
    Cplx
        Of the input's shape.

    References
    ----------
    A. Hirose, "Complex-valued neural networks: theories and applications",
    World Scientific, 2003 (amplitude-phase type activations); the
    ``PhaseSigmoid`` (or ``ComplexRatioMask``) of J. Smith, complextorch,
    2023.

    Examples
    --------
    >>> z = Cplx(torch.tensor([3.0, 0.0]), torch.tensor([4.0, 0.0]))
    >>> phase_sigmoid(z).real, phase_sigmoid(z).imag
    (tensor([0.5960, 0.0000]), tensor([0.7946, 0.0000]))
    """
    input = checked_cplx(input, where="phase_sigmoid")
    unit, _, _ = _unit(input)
    gate = torch.sigmoid(abs(input))
    return Cplx(gate * unit[0], gate * unit[1])


def _unit(input):
    r"""``(z / |z|, 0 at zero)`` as parts, the parts scaled by a power of two; also ``zero`` and the scaled parts.

    ``z / |z|`` of the parts as they are has a gradient of the order of
    :math:`1 / |z|` made of terms of the order of :math:`1 / |z|^2`, which
    overflow in single precision below a modulus of about :math:`10^{-19}`
    (and the square underflows); on parts scaled near one (see
    :func:`~cplxmodule.cplx.tensor._rescaled`) the terms are of the order of one, and the gradient is finite wherever
    :math:`1 / |z|` is. Where the modulus is zero the direction is zero,
    with a zero gradient.
    """
    re, im, _ = _rescaled(input.real, input.imag)
    unit_re, unit_im, modulus = _phasor_parts(re, im)
    return (unit_re, unit_im), modulus == 0, (re, im)


def _applied(fn, value, name, where):
    """``fn(value)``, checked to be a floating tensor of the same shape."""
    out = fn(value)
    if not isinstance(out, torch.Tensor) or not out.is_floating_point():
        raise TypeError(
            f"{where}: `{name}` must return a real floating tensor, got {describe(out)}"
        )
    if out.shape != value.shape:
        raise ValueError(
            f"{where}: `{name}` must return a tensor of its input's shape"
            f" {tuple(value.shape)}, got shape {tuple(out.shape)}"
        )
    return out


def polar_activation(
    input: CplxLike,
    modulus_fn: Callable[[torch.Tensor], torch.Tensor],
    phase_fn: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
) -> Cplx:
    r"""The polar activation :math:`f(|z|) \, e^{i g(\arg z)}`.

    Parameters
    ----------
    input : Cplx
    modulus_fn : callable
        :math:`f`: a real tensor of moduli to a real tensor of the same
        shape (a torch function or a module, e.g. :func:`torch.tanh` or
        :class:`torch.nn.Softplus`). It is called once per call.
    phase_fn : callable, optional
        :math:`g`: a real tensor of phases in :math:`[-\pi, \pi]` to a real
        tensor of the same shape; ``None`` keeps the phase
        (:math:`g(\theta) = \theta`) without computing it.

    Returns
    -------
    Cplx
        Of the input's shape.

    Raises
    ------
    TypeError
        If ``input`` is not complex, or a function returns no real floating
        tensor.
    ValueError
        If a function changes the shape.

    Notes
    -----
    At :math:`z = 0` the phase is taken to be zero, as :func:`torch.angle`
    gives it, so the value there is :math:`f(0) \, e^{i g(0)}`: the limit of
    the map where :math:`f(0) = 0`. The gradient there is finite. With the
    phase kept and :math:`f(0) = 0` the map is tangent to
    :math:`f'(0) \, z` at zero and its gradient there is that of
    :math:`f'(0) \, z` (so ``polar_activation(z, torch.tanh)`` equals
    :func:`~cplxmodule.cplx.modtanh`, gradient included); otherwise the map
    jumps at zero (or, with a phase map, has no derivative there) and the
    gradient with respect to :math:`z` is zero there, while the gradient
    with respect to the parameters of :math:`f` is that of :math:`f(0)`.
    complextorch's ``GeneralizedPolarActivation`` gives the same values;
    with the phase kept its gradient at zero is zero whatever :math:`f`.

    References
    ----------
    A. Hirose, "Complex-valued neural networks: theories and applications",
    World Scientific, 2003 (amplitude-phase type activations); G. M.
    Georgiou, C. Koutsougeras, "Complex domain backpropagation", IEEE Trans.
    Circuits and Systems II 39(5), 1992.

    Examples
    --------
    >>> z = Cplx(torch.tensor([3.0]), torch.tensor([4.0]))
    >>> w = polar_activation(z, torch.sqrt, lambda phase: 2 * phase)
    >>> abs(w), w.angle / z.angle
    (tensor([2.2361]), tensor([2.]))
    """
    return _polar_activation(input, modulus_fn, phase_fn, "polar_activation")


def _polar_activation(input, modulus_fn, phase_fn, where):
    """:func:`polar_activation`, its errors naming ``where`` (a layer's name)."""
    input = checked_cplx(input, where=where)
    modulus = abs(input)
    unit, zero, (re, im) = _unit(input)
    if phase_fn is not None:
        # atan2(0, 1) = 0 at zero, whose gradient there is zero, not 0 / 0;
        # of the scaled parts, whose squares neither underflow nor overflow
        phase = torch.atan2(torch.where(zero, 0, im), torch.where(zero, 1, re))
        # f(0) itself at zero, but no gradient back through it there: an
        # infinite f'(0) (a square root) times the zero of the modulus's
        # gradient would be nan
        radius = _applied(
            modulus_fn, torch.where(zero, modulus.detach(), modulus), "modulus_fn", where
        )
        phase = _applied(phase_fn, phase, "phase_fn", where)
        return Cplx(radius * torch.cos(phase), radius * torch.sin(phase))

    # f on the modulus, zero nudged to the smallest normal number: there
    # f(tiny) / tiny is f'(0) where f(0) = 0 (the slope of the tangent
    # f'(0) z), and otherwise huge, which marks a jump; the divisor is a
    # constant, so the quotient's gradient is finite where it is dropped
    tiny = torch.finfo(modulus.dtype).tiny
    radius = _applied(modulus_fn, torch.where(zero, tiny, modulus), "modulus_fn", where)
    slope = torch.where(zero, radius / tiny, 0)
    jump = zero & ~(slope.abs() * torch.finfo(modulus.dtype).eps <= 1)
    slope = torch.where(jump, 0, slope)
    return Cplx(
        torch.where(zero, input.real * slope + torch.where(jump, radius, 0), radius * unit[0]),
        torch.where(zero, input.imag * slope, radius * unit[1]),
    )


def magnitude_minmax_norm(input: CplxLike, dim: Optional[int] = None) -> Cplx:
    r"""The moduli mapped onto :math:`[0, 1]` by their extremes, the phases kept.

    .. math::

        \frac{|z| - \min |z|}{\max |z| - \min |z|} \, e^{i \arg z},

    the minimum and the maximum over every element (``dim=None``) or along
    ``dim``. Where they are equal the output is zero; so it is at
    :math:`z = 0`, with a zero gradient.

    Parameters
    ----------
    input : Cplx
    dim : int, optional
        The dimension of the extremes; all of them if ``None``.

    Returns
    -------
    Cplx
        Of the input's shape.

    Raises
    ------
    TypeError
        If ``input`` is not complex or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range.

    Notes
    -----
    The values are those of complextorch's ``MagMinMaxNorm``, which divides
    by zero where the extremes agree.

    Examples
    --------
    >>> z = Cplx(torch.tensor([3.0, 0.0, -1.0]), torch.tensor([4.0, 1.0, 0.0]))
    >>> w = magnitude_minmax_norm(z)
    >>> abs(w), w.real
    (tensor([1., 0., 0.]), tensor([0.6000, 0.0000, -0.0000]))
    """
    where = "magnitude_minmax_norm"
    input = checked_cplx(input, where=where)
    check_int(dim, "dim", where, optional=True)
    modulus = abs(input)
    if dim is None:
        low, high = modulus.min(), modulus.max()
    else:
        if not -modulus.dim() <= dim < max(modulus.dim(), 1):
            raise IndexError(
                f"{where}: `dim` must be in [{-modulus.dim()}, {modulus.dim() - 1}], got {dim}"
            )
        low = modulus.amin(dim=dim, keepdim=True)
        high = modulus.amax(dim=dim, keepdim=True)
    span = high - low
    # a divisor of one where the extremes agree, for the dropped branch
    flat = span == 0
    ratio = torch.where(flat, 0, (modulus - low) / torch.where(flat, 1, span))
    unit, _, _ = _unit(input)
    return Cplx(ratio * unit[0], ratio * unit[1])
