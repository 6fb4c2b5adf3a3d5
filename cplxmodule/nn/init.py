r"""Initialisation of complex parameters.

Each function takes a :class:`~cplxmodule.cplx.Cplx` whose parts are tensors
(typically the two real parameters of a complex layer's ``weight``), fills
both parts in place without recording gradients, and returns it.

The variance of a complex weight is :math:`\operatorname{Var}(W) =
\mathbb{E}|W|^2 = \operatorname{Var}(\Re W) + \operatorname{Var}(\Im W)`.
The He (Kaiming) and Glorot (Xavier) criteria ask for the same
:math:`\operatorname{Var}(W)` as for a real weight, so each part gets half of
it (Trabelsi et al. 2018, section 3.6). Fans are computed from the shape of
one part exactly as :mod:`torch.nn.init` does.

The ``*_normal_`` and ``*_uniform_`` functions draw the two parts
independently; the ``*_rayleigh_`` functions draw Trabelsi's polar form, a
Rayleigh modulus and a uniform phase, with the same variance and torch's
arguments. Complex layers keep the complex analogue of torch's default
initialisation, measured against Trabelsi's He initialisation in
:doc:`/api/init`, which also shows how to start a model from another one.

References
----------
C. Trabelsi et al., "Deep Complex Networks", ICLR 2018.
"""

import math

import torch

from ..cplx._shared import check_choice, checked_cplx

__all__ = [
    "cplx_kaiming_normal_",
    "cplx_kaiming_uniform_",
    "cplx_xavier_normal_",
    "cplx_xavier_uniform_",
    "cplx_kaiming_rayleigh_",
    "cplx_xavier_rayleigh_",
    "cplx_trabelsi_standard_",
    "cplx_trabelsi_independent_",
    "cplx_uniform_independent_",
    "get_fans",
]

_KINDS = {"glorot": "glorot", "xavier": "glorot", "he": "he", "kaiming": "he"}


def _checked(tensor, where, name="tensor"):
    return checked_cplx(tensor, name, where)


def _fans(tensor, where):
    """``(fan_in, fan_out)`` of a weight, as :mod:`torch.nn.init` computes them."""
    if tensor.dim() < 2:
        raise ValueError(
            f"{where}: `tensor` must have at least 2 dimensions for fan in and fan out,"
            f" got shape {tuple(tensor.shape)}"
        )
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def get_fans(cplxtensor):
    r"""``(fan_in, fan_out)`` of a complex weight, as :mod:`torch.nn.init` counts them.

    Parameters
    ----------
    cplxtensor : Cplx or torch.Tensor
        A weight of at least two dimensions, ``(out, in, *kernel)``; the fans
        of a :class:`~cplxmodule.cplx.Cplx` are those of either part.

    Returns
    -------
    fan_in, fan_out : int
        ``in * prod(kernel)`` and ``out * prod(kernel)``.

    Raises
    ------
    TypeError
        If ``cplxtensor`` is neither a :class:`~cplxmodule.cplx.Cplx` nor a tensor.
    ValueError
        If it has fewer than two dimensions.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> get_fans(cplx.randn(5, 3, 2, 2))
    (12, 20)
    """
    where = "get_fans"
    if not isinstance(cplxtensor, torch.Tensor):
        cplxtensor = checked_cplx(cplxtensor, "cplxtensor", where)
    return _fans(cplxtensor, where)


def _kaiming_std(tensor, a, mode, nonlinearity, where):
    """The standard deviation of :math:`W` under He's criterion."""
    fans = dict(zip(("fan_in", "fan_out"), _fans(tensor, where)))
    check_choice(mode, "mode", where, fans)
    gain = torch.nn.init.calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fans[mode])


def _xavier_std(tensor, gain, where):
    """The standard deviation of :math:`W` under Glorot's criterion."""
    fan_in, fan_out = _fans(tensor, where)
    return gain * math.sqrt(2.0 / (fan_in + fan_out))


def _fill_normal(tensor, std, generator):
    r"""Independent normal parts with :math:`\mathbb{E}|W|^2 = \text{std}^2`."""
    with torch.no_grad():
        for part in (tensor.real, tensor.imag):
            part.normal_(0.0, std / math.sqrt(2), generator=generator)
    return tensor


def _fill_uniform(tensor, std, generator):
    r"""Independent uniform parts with :math:`\mathbb{E}|W|^2 = \text{std}^2`."""
    # U(-b, b) has variance b^2 / 3
    bound = math.sqrt(3.0) * std / math.sqrt(2)
    with torch.no_grad():
        for part in (tensor.real, tensor.imag):
            part.uniform_(-bound, bound, generator=generator)
    return tensor


def _fill_rayleigh(tensor, std, generator):
    r"""Rayleigh modulus and uniform phase with :math:`\mathbb{E}|W|^2 = \text{std}^2`."""
    with torch.no_grad():
        # rho^2 / (2 s^2) ~ Exp(1) for a Rayleigh rho of scale s, and E rho^2 = 2 s^2
        exp = torch.empty_like(tensor.real).exponential_(generator=generator)
        rho = torch.sqrt(exp) * std
        theta = torch.empty_like(tensor.real).uniform_(-math.pi, math.pi, generator=generator)
        tensor.real.copy_(rho * torch.cos(theta))
        tensor.imag.copy_(rho * torch.sin(theta))
    return tensor


def cplx_kaiming_normal_(
    tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None
):
    r"""He initialisation with independent normal real and imaginary parts.

    :math:`\Re W, \Im W \sim \mathcal{N}(0, \sigma^2 / 2)` with
    :math:`\sigma = \text{gain} / \sqrt{\text{fan}}`, so that
    :math:`\mathbb{E}|W|^2 = \text{gain}^2 / \text{fan}`, the variance
    :func:`torch.nn.init.kaiming_normal_` gives a real weight.

    Parameters
    ----------
    tensor : Cplx
        The complex weight, of at least two dimensions.
    a : float
        The negative slope of the rectifier (``leaky_relu`` only).
    mode : {'fan_in', 'fan_out'}
        Preserve the variance in the forward or the backward pass.
    nonlinearity : str
        As for :func:`torch.nn.init.calculate_gain`.
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``tensor``, filled in place.

    Raises
    ------
    TypeError
        If ``tensor`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``tensor`` has fewer than two dimensions or ``mode`` is unknown.

    Examples
    --------
    >>> w = cplx.Cplx.empty(64, 32)
    >>> w = cplx_kaiming_normal_(w, nonlinearity="relu")
    """
    where = "cplx_kaiming_normal_"
    std = _kaiming_std(_checked(tensor, where), a, mode, nonlinearity, where)
    return _fill_normal(tensor, std, generator)


def cplx_kaiming_uniform_(
    tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None
):
    r"""He initialisation with independent uniform real and imaginary parts.

    :math:`\Re W, \Im W \sim \mathcal{U}(-b, b)` with
    :math:`b = \sqrt{3/2}\,\text{gain} / \sqrt{\text{fan}}`, so that
    :math:`\mathbb{E}|W|^2 = \text{gain}^2 / \text{fan}`, the variance
    :func:`torch.nn.init.kaiming_uniform_` gives a real weight.

    Parameters
    ----------
    tensor : Cplx
        The complex weight, of at least two dimensions.
    a : float
        The negative slope of the rectifier (``leaky_relu`` only).
    mode : {'fan_in', 'fan_out'}
        Preserve the variance in the forward or the backward pass.
    nonlinearity : str
        As for :func:`torch.nn.init.calculate_gain`.
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``tensor``, filled in place.

    Raises
    ------
    TypeError
        If ``tensor`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``tensor`` has fewer than two dimensions or ``mode`` is unknown.

    Notes
    -----
    ``a=math.sqrt(5)`` gives each part :math:`\mathcal{U}(\pm 1/\sqrt{2\,\text{fan\_in}})`,
    :math:`\mathbb{E}|W|^2 = 1/(3\,\text{fan\_in})`: the complex analogue of
    torch's default for :class:`torch.nn.Linear` and the convolutions, and
    the default of the complex linear and convolution layers (here and in
    the published package).

    Examples
    --------
    >>> w = cplx_kaiming_uniform_(cplx.Cplx.empty(64, 32), a=math.sqrt(5))
    """
    where = "cplx_kaiming_uniform_"
    std = _kaiming_std(_checked(tensor, where), a, mode, nonlinearity, where)
    return _fill_uniform(tensor, std, generator)


def cplx_xavier_normal_(tensor, gain=1.0, generator=None):
    r"""Glorot initialisation with independent normal real and imaginary parts.

    :math:`\mathbb{E}|W|^2 = 2\,\text{gain}^2 / (\text{fan\_in} + \text{fan\_out})`,
    the variance :func:`torch.nn.init.xavier_normal_` gives a real weight.

    Parameters
    ----------
    tensor : Cplx
        The complex weight, of at least two dimensions.
    gain : float
        The scaling factor.
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``tensor``, filled in place.

    Raises
    ------
    TypeError
        If ``tensor`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``tensor`` has fewer than two dimensions.

    Examples
    --------
    >>> w = cplx_xavier_normal_(cplx.Cplx.empty(64, 32))
    """
    where = "cplx_xavier_normal_"
    std = _xavier_std(_checked(tensor, where), gain, where)
    return _fill_normal(tensor, std, generator)


def cplx_xavier_uniform_(tensor, gain=1.0, generator=None):
    r"""Glorot initialisation with independent uniform real and imaginary parts.

    :math:`\mathbb{E}|W|^2 = 2\,\text{gain}^2 / (\text{fan\_in} + \text{fan\_out})`,
    the variance :func:`torch.nn.init.xavier_uniform_` gives a real weight.

    Parameters
    ----------
    tensor : Cplx
        The complex weight, of at least two dimensions.
    gain : float
        The scaling factor.
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``tensor``, filled in place.

    Raises
    ------
    TypeError
        If ``tensor`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``tensor`` has fewer than two dimensions.

    Examples
    --------
    >>> w = cplx_xavier_uniform_(cplx.Cplx.empty(64, 32))
    """
    where = "cplx_xavier_uniform_"
    std = _xavier_std(_checked(tensor, where), gain, where)
    return _fill_uniform(tensor, std, generator)


def cplx_kaiming_rayleigh_(
    tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None
):
    r"""He initialisation in Trabelsi's polar form: Rayleigh modulus, uniform phase.

    :math:`W = \rho e^{i\theta}` with :math:`\theta \sim \mathcal{U}(-\pi, \pi)`
    and :math:`\rho` Rayleigh-distributed with scale
    :math:`s = \text{gain} / \sqrt{2\,\text{fan}}`, so that
    :math:`\mathbb{E}|W|^2 = 2s^2 = \text{gain}^2 / \text{fan}`, the variance
    :func:`torch.nn.init.kaiming_normal_` gives a real weight. The defaults
    (``leaky_relu`` with ``a=0``, ``fan_in``) give Trabelsi et al.'s He
    criterion :math:`\mathbb{E}|W|^2 = 2/\text{fan\_in}`.

    Parameters
    ----------
    tensor : Cplx
        The complex weight, of at least two dimensions.
    a : float
        The negative slope of the rectifier (``leaky_relu`` only).
    mode : {'fan_in', 'fan_out'}
        Preserve the variance in the forward or the backward pass.
    nonlinearity : str
        As for :func:`torch.nn.init.calculate_gain`.
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``tensor``, filled in place.

    Raises
    ------
    TypeError
        If ``tensor`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``tensor`` has fewer than two dimensions or ``mode`` is unknown.

    See Also
    --------
    cplx_trabelsi_standard_ : the same distribution, criterion chosen by name.

    References
    ----------
    C. Trabelsi et al., "Deep Complex Networks", ICLR 2018, section 3.6.

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear
    >>> layer = CplxLinear(32, 64)
    >>> w = cplx_kaiming_rayleigh_(layer.weight)
    """
    where = "cplx_kaiming_rayleigh_"
    std = _kaiming_std(_checked(tensor, where), a, mode, nonlinearity, where)
    return _fill_rayleigh(tensor, std, generator)


def cplx_xavier_rayleigh_(tensor, gain=1.0, generator=None):
    r"""Glorot initialisation in Trabelsi's polar form: Rayleigh modulus, uniform phase.

    As :func:`cplx_kaiming_rayleigh_`, with
    :math:`\mathbb{E}|W|^2 = 2\,\text{gain}^2 / (\text{fan\_in} + \text{fan\_out})`,
    the variance :func:`torch.nn.init.xavier_normal_` gives a real weight;
    ``gain=1`` is Trabelsi et al.'s Glorot criterion.

    Parameters
    ----------
    tensor : Cplx
        The complex weight, of at least two dimensions.
    gain : float
        The scaling factor.
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``tensor``, filled in place.

    Raises
    ------
    TypeError
        If ``tensor`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``tensor`` has fewer than two dimensions.

    References
    ----------
    C. Trabelsi et al., "Deep Complex Networks", ICLR 2018, section 3.6.

    Examples
    --------
    >>> w = cplx_xavier_rayleigh_(cplx.Cplx.empty(64, 32))
    """
    where = "cplx_xavier_rayleigh_"
    std = _xavier_std(_checked(tensor, where), gain, where)
    return _fill_rayleigh(tensor, std, generator)


def _trabelsi_variance(tensor, kind, where):
    r""":math:`\mathbb{E}|W|^2`: :math:`2/\text{fan\_in}` (He) or
    :math:`2/(\text{fan\_in} + \text{fan\_out})` (Glorot)."""
    # any case, as the published package took it
    kind = check_choice(kind.lower() if isinstance(kind, str) else kind, "kind", where, _KINDS)
    fan_in, fan_out = _fans(tensor, where)
    if _KINDS[kind] == "he":
        return 2.0 / fan_in
    return 2.0 / (fan_in + fan_out)


def cplx_trabelsi_standard_(cplx, kind="glorot", generator=None):
    r"""Trabelsi's standard initialisation: Rayleigh modulus, uniform phase.

    :math:`W = \rho e^{i\theta}` with :math:`\theta \sim \mathcal{U}(-\pi, \pi)`
    and :math:`\rho` Rayleigh-distributed with scale :math:`\sigma`, so that
    :math:`\mathbb{E}|W|^2 = 2\sigma^2` equals :math:`2/\text{fan\_in}`
    (He) or :math:`2/(\text{fan\_in} + \text{fan\_out})` (Glorot).

    Parameters
    ----------
    cplx : Cplx
        The complex weight, of at least two dimensions.
    kind : {'glorot', 'xavier', 'he', 'kaiming'}
        The variance criterion (case-insensitive).
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``cplx``, filled in place.

    Raises
    ------
    TypeError
        If ``cplx`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``cplx`` has fewer than two dimensions or ``kind`` is unknown.

    Examples
    --------
    >>> w = cplx_trabelsi_standard_(cplx.Cplx.empty(64, 32), kind="he")
    """
    where = "cplx_trabelsi_standard_"
    variance = _trabelsi_variance(_checked(cplx, where, "cplx"), kind, where)
    return _fill_rayleigh(cplx, math.sqrt(variance), generator)


def cplx_trabelsi_independent_(cplx, kind="glorot", generator=None):
    r"""Trabelsi's independent-filters initialisation: a scaled semi-unitary matrix.

    The weight, viewed as a matrix of shape ``(out * in, prod(kernel))`` (or
    ``(out, in)`` for a linear layer), is set to :math:`cQ` where :math:`Q`
    has orthonormal rows or columns (the polar factor :math:`UV^H` of a
    random complex Gaussian matrix), so that the filters are independent,
    and :math:`c` makes :math:`\mathbb{E}|W|^2` over the entries exactly
    :math:`2/\text{fan\_in}` (He) or :math:`2/(\text{fan\_in} + \text{fan\_out})`
    (Glorot).

    Parameters
    ----------
    cplx : Cplx
        The complex weight, of at least two dimensions.
    kind : {'glorot', 'xavier', 'he', 'kaiming'}
        The variance criterion (case-insensitive).
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``cplx``, filled in place.

    Raises
    ------
    TypeError
        If ``cplx`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``cplx`` has fewer than two dimensions or ``kind`` is unknown.

    Notes
    -----
    One common scale, from the Frobenius norm of :math:`Q`, gives the weight
    exactly the variance its criterion asks for (how this differs from the
    published package: :doc:`/guides/migrating`).

    Examples
    --------
    >>> w = cplx_trabelsi_independent_(cplx.Cplx.empty(16, 8, 3, 3))
    """
    where = "cplx_trabelsi_independent_"
    variance = _trabelsi_variance(_checked(cplx, where, "cplx"), kind, where)
    shape = cplx.shape
    rows = shape[0] * shape[1] if len(shape) > 2 else shape[0]
    cols = cplx.numel() // max(rows, 1)
    dtype = torch.complex128 if cplx.dtype == torch.float64 else torch.complex64
    with torch.no_grad():
        gauss = torch.randn(
            rows, cols, dtype=dtype, device=cplx.device, generator=generator
        )
        u, _, vh = torch.linalg.svd(gauss, full_matrices=False)
        # |Q|_F^2 = min(rows, cols): the number of unit singular values
        scale = math.sqrt(variance * rows * cols / min(rows, cols))
        unitary = (u @ vh).reshape(shape) * scale
        cplx.real.copy_(unitary.real)
        cplx.imag.copy_(unitary.imag)
    return cplx


def cplx_uniform_independent_(cplx, a=0.0, b=1.0, generator=None):
    r"""Fill the real and imaginary parts independently from :math:`\mathcal{U}(a, b)`.

    Parameters
    ----------
    cplx : Cplx
        The complex tensor to fill.
    a, b : float
        The bounds of the uniform distribution.
    generator : torch.Generator, optional
        The source of randomness.

    Returns
    -------
    Cplx
        ``cplx``, filled in place.

    Raises
    ------
    TypeError
        If ``cplx`` is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> w = cplx_uniform_independent_(cplx.Cplx.empty(4, 3), -1.0, 1.0)
    """
    _checked(cplx, "cplx_uniform_independent_", "cplx")
    with torch.no_grad():
        cplx.real.uniform_(a, b, generator=generator)
        cplx.imag.uniform_(a, b, generator=generator)
    return cplx
