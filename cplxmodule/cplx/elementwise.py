"""Elementwise complex functions on :class:`~cplxmodule.cplx.Cplx`.

Each function takes a :class:`Cplx` and returns one, computed from real torch
operations on the parts so that autograd differentiates it; values and
gradients agree with torch's functions on native complex tensors.
"""

from __future__ import annotations

import torch

from ._dtypes import HALF_DTYPES
from ._shared import checked_cplx
from .tensor import Cplx, _modulus, _phasor_parts, _rescaled
from typing import Union
from ._typing import CplxLike

__all__ = [
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "modrelu",
    "phaseshift",
    "zrelu",
    "cardioid",
    "sigmoid",
    "modtanh",
    "modsquash",
    "modlog",
    "zabsrelu",
    "zleakyrelu",
    "phase_softmax",
    "ratio_mask",
]


def exp(input: CplxLike) -> Cplx:
    r"""The complex exponential :math:`e^{a}(\cos b + i \sin b)` of :math:`a + ib`.

    Parameters
    ----------
    input : Cplx

    Returns
    -------
    Cplx

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx` (the same for every function here).
    """
    input = checked_cplx(input, where="exp")
    re, im = input.real, input.imag
    scale = torch.exp(re)
    return Cplx(scale * torch.cos(im), scale * torch.sin(im))


def log(input: CplxLike) -> Cplx:
    r"""The principal logarithm :math:`\log|z| + i \arg z`.

    The imaginary part lies in :math:`(-\pi, \pi]`, with the branch cut on the
    negative real axis, as :func:`torch.log`.
    """
    input = checked_cplx(input, where="log")
    # log|z| = log|z / d| + log d on the rescaled parts: the gradient of
    # log|z / d|, of size one, does not overflow as ``1 / |z|`` times the
    # modulus's gradient would for a tiny z. The sum cancels where |z| is
    # near 1 but d is not, which half precision feels: there it is taken in
    # float32 and cast back
    wide = input.float() if input.dtype in HALF_DTYPES else input
    re, im, scale = _rescaled(wide.real, wide.imag)
    modulus = torch.log(_modulus(re, im)) + torch.log(scale)
    return Cplx(modulus.to(input.dtype), input.angle)


def sin(input: CplxLike) -> Cplx:
    r"""The complex sine :math:`\sin a \cosh b + i \cos a \sinh b`."""
    input = checked_cplx(input, where="sin")
    re, im = input.real, input.imag
    return Cplx(torch.sin(re) * torch.cosh(im), torch.cos(re) * torch.sinh(im))


def cos(input: CplxLike) -> Cplx:
    r"""The complex cosine :math:`\cos a \cosh b - i \sin a \sinh b`."""
    input = checked_cplx(input, where="cos")
    re, im = input.real, input.imag
    return Cplx(torch.cos(re) * torch.cosh(im), -torch.sin(re) * torch.sinh(im))


def sinh(input: CplxLike) -> Cplx:
    r"""The complex hyperbolic sine :math:`\sinh a \cos b + i \cosh a \sin b`."""
    input = checked_cplx(input, where="sinh")
    re, im = input.real, input.imag
    return Cplx(torch.sinh(re) * torch.cos(im), torch.cosh(re) * torch.sin(im))


def cosh(input: CplxLike) -> Cplx:
    r"""The complex hyperbolic cosine :math:`\cosh a \cos b + i \sinh a \sin b`."""
    input = checked_cplx(input, where="cosh")
    re, im = input.real, input.imag
    return Cplx(torch.cosh(re) * torch.cos(im), torch.sinh(re) * torch.sin(im))


def tanh(input: CplxLike) -> Cplx:
    r"""The complex hyperbolic tangent.

    .. math::

        \tanh(a + ib) = \frac{\sinh 2a + i \sin 2b}{\cosh 2a + \cos 2b}

    Notes
    -----
    Computed with numerator and denominator divided by :math:`\cosh 2a`, so
    that it tends to :math:`\pm 1` for large :math:`|a|` (where
    :math:`\cosh 2a` overflows) with a finite gradient, as torch's does.
    """
    input = checked_cplx(input, where="tanh")
    return Cplx(*_tanh_parts(input.real, input.imag))


def tan(input: CplxLike) -> Cplx:
    r"""The complex tangent.

    .. math::

        \tan(a + ib) = \frac{\sin 2a + i \sinh 2b}{\cos 2a + \cosh 2b}

    Notes
    -----
    Computed as :math:`-i \tanh(iz)`, so it inherits the stability of
    :func:`tanh` for large :math:`|b|`.
    """
    input = checked_cplx(input, where="tan")
    re, im = input.real, input.imag
    # tanh(-b + ia) = u + iv gives tan(a + ib) = v - iu.
    u, v = _tanh_parts(-im, re)
    return Cplx(v, -u)


def _tanh_parts(a, b):
    """The parts of :math:`\\tanh(a + ib)`, finite for any finite ``a``."""
    # With t = tanh a, w = sech^2 a = 1 - t^2, c = cos b, s = sin b:
    # tanh(a + ib) = (t + i s c w) / (t^2 + c^2 w). Both terms of the
    # denominator are non-negative, so nothing cancels near the poles
    # (a = 0, cos b = 0), where the form 1 + cos 2b sech 2a loses the
    # precision torch's native tanh keeps.
    t = torch.tanh(a)
    # sech a = 2 e^{-|a|} / (1 + e^{-2|a|}) underflows to zero (with a zero
    # gradient) where 1 / cosh a would differentiate to inf * 0 = nan.
    decay = torch.exp(-a.abs())
    sech = 2 * decay / (1 + decay * decay)
    w = sech * sech
    c, s = torch.cos(b), torch.sin(b)
    denom = t * t + c * c * w
    return t / denom, s * c * w / denom


# the least fixed modReLU threshold whose square is a normal float32 number
_SHRINK_FLOOR = 1e-18


def modrelu(input: CplxLike, threshold: Union[float, torch.Tensor] = 0.5) -> Cplx:
    r"""The modulus ReLU of Arjovsky et al. (2016).

    .. math::

        \operatorname{modReLU}(z) = z \max\Bigl(0, 1 - \frac{b}{|z|}\Bigr),

    which shrinks the modulus by ``threshold`` :math:`b` and keeps the phase.
    A negative :math:`b` lifts the modulus instead, to :math:`|z| + |b|`,
    which is the bias form :math:`\operatorname{ReLU}(|z| + \beta) \, z / |z|`
    of the paper with :math:`\beta = -b`; the output at :math:`z = 0` is 0.
    The result is exact for any modulus, and its gradient finite wherever
    the exact one is. A float16 or bfloat16 input is computed in float32
    and keeps its dtype.

    Parameters
    ----------
    input : Cplx
    threshold : float or torch.Tensor, default 0.5
        The shrinkage :math:`b`; a tensor broadcasts against ``input``.

    Returns
    -------
    Cplx

    References
    ----------
    M. Arjovsky, A. Shah, Y. Bengio, "Unitary evolution recurrent neural
    networks", ICML 2016.

    Examples
    --------
    >>> modrelu(Cplx(torch.tensor([0.0, 3.0]), torch.tensor([0.2, 4.0]))).real
    tensor([0.0000, 2.7000])
    """
    input = checked_cplx(input, where="modrelu")
    # ``1 - b / |z|`` cancels near the threshold, which half precision
    # feels: there the output is computed in float32 and cast back, which a
    # float32 ``threshold`` (a layer's parameter under autocast) then does
    # not promote
    wide = input.float() if input.dtype in HALF_DTYPES else input
    if isinstance(threshold, (int, float)) and threshold >= _SHRINK_FLOOR:
        # the common fixed threshold b > 0, at the cost of the published
        # form: |z| clamped at b is exact (the scale is 0 below b), and the
        # gradient's b / |z|^2 has |z|^2 >= b^2, a normal number
        scale = torch.relu(1.0 - threshold / torch.clamp(abs(wide), min=threshold))
        return input * (scale if wide is input else scale.to(input.dtype))
    # ReLU(|z| - b) z / |z| on the parts divided by d, where it reads
    # ReLU(|z / d| - b / d) (z / d) / |z / d| d: exact for any modulus and
    # any sign of b (a negative one lifts the modulus of a tiny z to |b|),
    # and neither the value nor the gradient divides by a tiny modulus or
    # its square; d last, so that a part stays finite where |z| is not
    re, im, scale = _rescaled(wide.real, wide.imag, bounded=True)
    unit_re, unit_im, modulus = _phasor_parts(re, im)
    magnitude = torch.relu(modulus - threshold / scale)
    out = Cplx(unit_re * magnitude * scale, unit_im * magnitude * scale)
    return out if out.dtype == input.dtype else out.to(input.dtype)


def phaseshift(input: CplxLike, phi: Union[float, torch.Tensor] = 0.0) -> Cplx:
    r"""Rotate ``input`` by the angle ``phi``: :math:`z e^{i \phi}`.

    Parameters
    ----------
    input : Cplx
    phi : float or torch.Tensor, default 0.0
        The real angle (radians), broadcast against ``input``.

    Returns
    -------
    Cplx
    """
    input = checked_cplx(input, where="phaseshift")
    phi = torch.as_tensor(phi, dtype=input.dtype, device=input.device)
    return input * Cplx(torch.cos(phi), torch.sin(phi))


def zrelu(input: CplxLike) -> Cplx:
    r"""zReLU: :math:`z` where :math:`0 \le \arg z \le \pi/2`, zero elsewhere.

    That is, :math:`z` is kept in the closed first quadrant
    (:math:`\Re z \ge 0` and :math:`\Im z \ge 0`); see Guberman, "On
    complex valued convolutional neural networks", 2016.
    """
    input = checked_cplx(input, where="zrelu")
    re, im = input.real, input.imag
    keep = (re >= 0) & (im >= 0)
    return Cplx(re * keep, im * keep)


def cardioid(input: CplxLike) -> Cplx:
    r"""The complex cardioid :math:`z \, (1 + \cos \arg z) / 2`.

    The scale is one on the positive real axis and vanishes on the negative
    one, so on real inputs it is the ReLU; see Virtue, Yu, Lustig, "Better
    than real: complex-valued neural nets for MRI fingerprinting", ICIP 2017.
    """
    input = checked_cplx(input, where="cardioid")
    # cos(arg z) = Re z / |z|, from the rescaled parts: exact for tiny
    # moduli; 0 at zero, where the scale 1/2 averages the ReLU's slopes
    re, im, _ = _rescaled(input.real, input.imag)
    cos, _, _ = _phasor_parts(re, im)
    return input * (0.5 * (1 + cos))


def sigmoid(input: CplxLike) -> Cplx:
    r"""The holomorphic logistic sigmoid :math:`\sigma(z) = 1 / (1 + e^{-z})`.

    It is meromorphic, with simple poles at :math:`z = i (2k + 1) \pi`,
    :math:`k \in \mathbb{Z}`, where :math:`e^{-z} = -1`; near them the
    values and gradients are unbounded.

    Notes
    -----
    Computed as :math:`(1 + \tanh(z / 2)) / 2`, which stays finite (tending
    to 0 or 1) for large :math:`|\Re z|` where :math:`e^{-z}` overflows.

    Examples
    --------
    >>> out = sigmoid(Cplx(torch.tensor([0.0]), torch.tensor([torch.pi / 2])))
    >>> out.real, out.imag
    (tensor([0.5000]), tensor([0.5000]))
    """
    input = checked_cplx(input, where="sigmoid")
    re, im = input.real, input.imag
    u, v = _tanh_parts(re / 2, im / 2)
    return Cplx(0.5 + 0.5 * u, 0.5 * v)


def _radial(input, f, ratio):
    r"""The radial map :math:`f(|z|) \, z / |z|` of an :math:`f` with :math:`f(0) = 0`.

    Below :math:`|z| = 1` it is :math:`z \cdot` ``ratio`` :math:`(|z|)`,
    ``ratio`` :math:`= f(r) / r` (continued at zero by :math:`f'(0)`, which
    is then the gradient there); above, :math:`f(|z|)` times the unit
    phasor of the rescaled parts, whose gradient :math:`f(|z|) / |z|` the
    chain rule does not form from a huge and a tiny factor. Each branch
    sees a harmless modulus where the other is taken, so the one discarded
    adds no ``0 * inf`` to the gradient.
    """
    modulus = abs(input)
    large = modulus > 1
    small = torch.clamp(torch.where(large, 1, modulus), min=torch.finfo(modulus.dtype).tiny)
    scale = ratio(small)
    value = f(torch.where(large, modulus, 2))
    re, im, _ = _rescaled(input.real, input.imag)
    unit_re, unit_im, _ = _phasor_parts(re, im)
    return Cplx(
        torch.where(large, unit_re * value, input.real * scale),
        torch.where(large, unit_im * value, input.imag * scale),
    )


def modtanh(input: CplxLike) -> Cplx:
    r"""The polar tanh :math:`\tanh(|z|) \, e^{i \arg z}`.

    The modulus is squashed into :math:`[0, 1)`, the phase kept.

    Zero maps to zero, where the map is tangent to the identity.

    Examples
    --------
    >>> z = Cplx(torch.tensor([3.0]), torch.tensor([4.0]))
    >>> abs(modtanh(z)), modtanh(z).angle - z.angle
    (tensor([0.9999]), tensor([0.]))

    References
    ----------
    A. Hirose, "Complex-valued neural networks: theories and applications",
    World Scientific, 2003 (amplitude-phase type activations).
    """
    input = checked_cplx(input, where="modtanh")
    return _radial(input, torch.tanh, lambda r: torch.tanh(r) / r)


def modsquash(input: CplxLike) -> Cplx:
    r"""The capsule squash :math:`\frac{|z|^2}{1 + |z|^2} e^{i \arg z} = \frac{|z|}{1 + |z|^2} z`.

    The modulus goes into :math:`[0, 1)`, the phase is kept.

    Examples
    --------
    >>> z = Cplx(torch.tensor([3.0]), torch.tensor([4.0]))
    >>> abs(modsquash(z))  # 25 / 26
    tensor([0.9615])

    References
    ----------
    S. Sabour, N. Frosst, G. E. Hinton, "Dynamic routing between capsules",
    NeurIPS 2017 (eq. 1, here with the modulus of a complex number).
    """
    input = checked_cplx(input, where="modsquash")
    # r^2 / (1 + r^2) as 1 / (1 + r^-2) above r = 1, where r^2 overflows
    return _radial(input, lambda r: 1 / (1 + (1 / r) ** 2), lambda r: r / (1 + r * r))


def modlog(input: CplxLike) -> Cplx:
    r"""The polar log :math:`\log(1 + |z|) \, e^{i \arg z}`: the modulus compressed, the phase kept.

    Zero maps to zero, where the map is tangent to the identity.

    Examples
    --------
    >>> z = Cplx(torch.tensor([3.0]), torch.tensor([4.0]))
    >>> abs(modlog(z))  # log 6
    tensor([1.7918])
    """
    input = checked_cplx(input, where="modlog")
    return _radial(input, torch.log1p, lambda r: torch.log1p(r) / r)


def zabsrelu(input: CplxLike, threshold: Union[float, torch.Tensor] = 0.5) -> Cplx:
    r"""The modulus hard threshold: :math:`z` where :math:`|z| \ge b`, zero elsewhere.

    Unlike :func:`modrelu` the kept values are not shrunk. The output is a
    step function of :math:`b`, so its derivative in :math:`b` is zero
    wherever it exists: a threshold tensor that requires a gradient gets
    an exact zero one (not none), and a learnable threshold does not learn
    from the loss.

    Parameters
    ----------
    input : Cplx
    threshold : float or torch.Tensor, default 0.5
        The threshold :math:`b` on the modulus; a tensor broadcasts against
        ``input``.

    Returns
    -------
    Cplx

    References
    ----------
    The "zAbsReLU" of the complextorch documentation (J. Smith,
    complextorch, 2023), a modulus variant of zReLU (N. Guberman, "On
    complex valued convolutional neural networks", 2016).

    Examples
    --------
    >>> zabsrelu(Cplx(torch.tensor([0.3, 3.0]), torch.tensor([0.0, 4.0])), 1.0).real
    tensor([0., 3.])
    """
    input = checked_cplx(input, where="zabsrelu")
    re, im = input.real, input.imag
    keep = abs(input) >= threshold
    if not (torch.is_grad_enabled() and isinstance(threshold, torch.Tensor)
            and threshold.requires_grad):
        return Cplx(re * keep, im * keep)
    # the zero derivative enters the graph: DDP refuses a parameter that
    # gets no gradient at all (unless told to look for unused ones)
    scale = keep.to(re.dtype) + (0 * threshold).to(re.dtype)
    return Cplx(re * scale, im * scale)


def zleakyrelu(input: CplxLike, negative_slope: Union[float, torch.Tensor] = 0.01) -> Cplx:
    r"""Leaky zReLU: :math:`z` in the closed first quadrant, :math:`a z` elsewhere.

    The leak ``negative_slope`` :math:`a` keeps a gradient outside the
    first quadrant, where :func:`zrelu` has none. Its own gradient is
    :math:`z` outside the quadrant and zero inside.

    Parameters
    ----------
    input : Cplx
    negative_slope : float or torch.Tensor, default 0.01
        The leak :math:`a`; a tensor broadcasts against ``input``.

    Returns
    -------
    Cplx

    References
    ----------
    N. Guberman, "On complex valued convolutional neural networks", 2016
    (zReLU); the leak as in A. L. Maas, A. Y. Hannun, A. Y. Ng, "Rectifier
    nonlinearities improve neural network acoustic models", ICML 2013.

    Examples
    --------
    >>> zleakyrelu(Cplx(torch.tensor([1.0, -2.0]), torch.tensor([1.0, 1.0])), 0.5).real
    tensor([ 1., -1.])
    """
    input = checked_cplx(input, where="zleakyrelu")
    re, im = input.real, input.imag
    keep = (re >= 0) & (im >= 0)
    # one real scale for both parts: two products forward and two backward,
    # where a ``where`` per part costs a product and a select each way; a
    # slope tensor of another dtype (a parameter) does not promote the output
    scale = negative_slope + (1 - negative_slope) * keep.to(re.dtype)
    scale = scale.to(re.dtype)
    return Cplx(re * scale, im * scale)


def phase_softmax(input: CplxLike, dim: int) -> Cplx:
    r"""The softmax of the moduli along ``dim``, with the phases kept.

    .. math::

        \operatorname{softmax}(|z|)_k \, e^{i \arg z_k}
        = \frac{e^{|z_k|}}{\sum_j e^{|z_j|}} \frac{z_k}{|z_k|},

    so the moduli along ``dim`` sum to one. The phase of zero is taken as
    zero (the output there is real). The gradient of the phase, of size
    :math:`1 / |z_k|`, is exact for tiny moduli and 0 at zero, as that of
    :func:`torch.sgn`.

    Parameters
    ----------
    input : Cplx
    dim : int
        The dimension to normalise along.

    Returns
    -------
    Cplx

    Examples
    --------
    >>> z = Cplx(torch.tensor([[3.0, 0.0]]), torch.tensor([[4.0, -1.0]]))
    >>> abs(phase_softmax(z, dim=1)).sum(1)
    tensor([1.])
    """
    input = checked_cplx(input, where="phase_softmax")
    weight = torch.softmax(abs(input), dim=dim)
    re, im, _ = _rescaled(input.real, input.imag)
    unit_re, unit_im, modulus = _phasor_parts(re, im)
    # where z == 0 the unit phasor z / |z| is taken as 1, with gradient 0
    unit_re = torch.where(modulus == 0, 1, unit_re)
    return Cplx(weight * unit_re, weight * unit_im)


def ratio_mask(mask: CplxLike, input: CplxLike, bounded: bool = True) -> Cplx:
    r"""Apply a complex ratio mask :math:`M` to ``input`` :math:`Y`.

    Unbounded (``bounded=False``) it is the complex product :math:`M Y` of the
    cRM of Williamson et al.; bounded, the mask's modulus is first squashed
    by :math:`\tanh`, as in DCCRN-E:

    .. math::

        \hat S = \tanh(|M|) \, e^{i \arg M} \, Y
        = |Y| \tanh(|M|) \, e^{i (\arg Y + \arg M)}.

    Parameters
    ----------
    mask : Cplx
        The (unbounded) mask estimate :math:`M`, broadcast against ``input``.
    input : Cplx
        The noisy spectrum :math:`Y`.
    bounded : bool, default True

    Returns
    -------
    Cplx

    References
    ----------
    D. S. Williamson, Y. Wang, D. Wang, "Complex ratio masking for monaural
    speech separation", IEEE/ACM TASLP 24(3), 2016; Y. Hu et al., "DCCRN:
    deep complex convolution recurrent network for phase-aware speech
    enhancement", Interspeech 2020.

    Examples
    --------
    >>> mask = Cplx(torch.tensor([0.0]), torch.tensor([2.0]))  # times 2i
    >>> out = ratio_mask(mask, Cplx(torch.tensor([1.0]), torch.tensor([0.0])), bounded=False)
    >>> out.real, out.imag
    (tensor([0.]), tensor([2.]))
    """
    mask = checked_cplx(mask, name="mask", where="ratio_mask")
    input = checked_cplx(input, where="ratio_mask")
    if bounded:
        mask = modtanh(mask)
    return mask * input
