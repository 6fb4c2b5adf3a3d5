r"""Complex normalisation: whitening of the (real, imaginary) pair.

A complex value :math:`z = x + iy` is treated as the real 2-vector
:math:`(x, y)`. Normalising it means centring it and multiplying by the
inverse square root of its :math:`2 \times 2` covariance matrix, so that real
and imaginary parts come out uncorrelated with unit variance (Trabelsi et al.
2018). Scaling the two parts separately would not decorrelate them, nor
preserve the complex structure under rotation.
"""

import math

import torch

from ._dtypes import HALF_DTYPES
from ._shared import check_shape, check_trailing_shape, checked_cplx
from .tensor import Cplx

__all__ = [
    "batch_norm",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "rms_norm",
    "magnitude_batch_norm",
]


def _in_float32(input):
    """``input`` in float32 if it is in half precision, with the dtype to return.

    The statistics and the closed-form inverse square root of the
    covariance (a difference of products) lose most of their digits in half
    precision: as torch's own norms, which accumulate in float32, compute in
    float32 and return the input's dtype. Nothing here is on autocast's
    lists, so the computation stays in float32 under autocast too.
    """
    if input.dtype in HALF_DTYPES:
        return input.float(), input.dtype
    return input, None


def _restore(output, dtype):
    return output if dtype is None else output.to(dtype)


def _covariance(xr, xi, dims):
    """Biased covariance entries ``(var_rr, cov_ri, var_ii)`` of centred parts."""
    return (
        (xr * xr).mean(dims, keepdim=True),
        (xr * xi).mean(dims, keepdim=True),
        (xi * xi).mean(dims, keepdim=True),
    )


def _whiten(xr, xi, var_rr, cov_ri, var_ii, eps):
    r"""Multiply the centred pair by the inverse square root of its covariance.

    For a symmetric positive definite :math:`V = [[a, b], [b, d]]` with
    :math:`s = \sqrt{\det V}` and :math:`t = \sqrt{a + d + 2s}`,
    :math:`\sqrt{V} = (V + sI) / t`, hence
    :math:`V^{-1/2} = [[d + s, -b], [-b, a + s]] / (st)` in closed form:
    cheaper than a batched eigendecomposition and differentiable everywhere
    the covariance is positive definite, which ``eps`` guarantees.
    """
    a, d = var_rr + eps, var_ii + eps
    # det(V + eps I), with the part that Cauchy-Schwarz keeps non-negative
    # clamped: rounding must not turn nearly collinear parts into a NaN
    det = (var_rr * var_ii - cov_ri * cov_ri).clamp(min=0) + eps * (a + var_ii)
    s = torch.sqrt(det)
    inv = torch.rsqrt(a + d + 2 * s) / s
    p, q, r = (d + s) * inv, -cov_ri * inv, (a + s) * inv
    return p * xr + q * xi, q * xr + r * xi


def _affine(zr, zi, weight, bias, shape):
    """Apply the real 2x2 map ``weight`` and the shift ``bias`` to each value."""
    if weight is not None:
        w = weight.reshape(2, 2, *shape)
        zr, zi = w[0, 0] * zr + w[0, 1] * zi, w[1, 0] * zr + w[1, 1] * zi
    if bias is not None:
        if isinstance(bias, Cplx):
            zr, zi = zr + bias.real.reshape(shape), zi + bias.imag.reshape(shape)
        else:
            b = bias.reshape(2, *shape)
            zr, zi = zr + b[0], zi + b[1]
    return Cplx(zr, zi)


def _check_affine_bias(bias, shape, where):
    """A Cplx bias has ``shape``; a real one holds both parts, ``(2, *shape)``."""
    check_shape(bias, shape if isinstance(bias, Cplx) else (2, *shape), "bias", where)


def batch_norm(
    input,
    running_mean,
    running_cov,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    r"""Complex batch normalisation by :math:`2 \times 2` whitening per channel.

    For each channel :math:`c` the pair :math:`u = (\Re z, \Im z)` is centred
    and whitened,

    .. math::

        \hat{u} = V_c^{-1/2} (u - \mu_c), \qquad
        y = W_c \hat{u} + \beta_c,

    where :math:`\mu_c` and :math:`V_c` (plus :math:`\epsilon I`) are the mean
    and the :math:`2 \times 2` covariance of the pair over the batch and all
    non-channel dimensions, :math:`W_c` is a real :math:`2 \times 2` matrix and
    :math:`\beta_c` a complex shift. This is :func:`torch.nn.functional.batch_norm`
    with the variance replaced by the covariance matrix.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(N, C, *)`.
    running_mean : torch.Tensor or None
        Running mean of shape :math:`(2, C)` (real parts in row 0, imaginary
        in row 1). Updated in place when ``training``; used for normalisation
        otherwise.
    running_cov : torch.Tensor or None
        Running covariance of shape :math:`(2, 2, C)`, as ``running_mean``.
    weight : torch.Tensor, optional
        Real :math:`2 \times 2` affine map per channel, shape :math:`(2, 2, C)`.
    bias : torch.Tensor or Cplx, optional
        Complex shift per channel: a real tensor of shape :math:`(2, C)`
        (real parts in row 0) or a :class:`Cplx` of shape :math:`(C,)`.
    training : bool
        Normalise by the batch statistics (and update the running ones)
        rather than by the running statistics.
    momentum : float
        Weight of the batch statistics in the running-average update
        ``running = (1 - momentum) * running + momentum * batch``.
    eps : float
        Added to the diagonal of the covariance for numerical stability.

    Returns
    -------
    Cplx
        The normalised input, of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has fewer than two dimensions, if a statistic or affine
        parameter does not match the number of channels, if the running
        statistics are missing when not ``training``, or if ``training`` with
        only one value per channel.

    Notes
    -----
    As in torch, the batch covariance normalises with the biased estimate
    while the running covariance accumulates the unbiased one, and
    ``eps`` is added at normalisation time, not stored. Gradients flow
    through the batch statistics, never into the running ones. A float16
    or bfloat16 input is normalised in float32 (with float32 or its own
    dtype's statistics and parameters) and the output has its dtype, as
    with :func:`torch.nn.functional.batch_norm`.

    References
    ----------
    C. Trabelsi et al., "Deep Complex Networks", ICLR 2018.

    Examples
    --------
    >>> z = cplx.randn(64, 3, 8)
    >>> out = cplx.batch_norm(z, None, None, training=True)
    >>> out.shape
    torch.Size([64, 3, 8])
    """
    where = "batch_norm"
    input = checked_cplx(input, where=where)
    if input.dim() < 2:
        raise ValueError(
            f"{where}: `input` must have shape (N, C, *), got {tuple(input.shape)}"
        )
    n_channels = input.shape[1]
    check_shape(running_mean, (2, n_channels), "running_mean", where)
    check_shape(running_cov, (2, 2, n_channels), "running_cov", where)
    check_shape(weight, (2, 2, n_channels), "weight", where)
    _check_affine_bias(bias, (n_channels,), where)

    input, half = _in_float32(input)
    dims = [0, *range(2, input.dim())]
    shape = (n_channels, *[1] * (input.dim() - 2))
    if training:
        n_values = input.numel() // max(n_channels, 1)
        if n_values < 2:
            raise ValueError(
                f"{where}: `input` must have more than 1 value per channel when"
                f" training, got shape {tuple(input.shape)}"
            )
        mean_r = input.real.mean(dims, keepdim=True)
        mean_i = input.imag.mean(dims, keepdim=True)
        xr, xi = input.real - mean_r, input.imag - mean_i
        cov = _covariance(xr, xi, dims)
        if running_mean is not None:
            _update_running(running_mean, [mean_r, mean_i], momentum)
        if running_cov is not None:
            # torch's convention: running statistics hold the unbiased estimate
            rr, ri, ii = (c * (n_values / (n_values - 1)) for c in cov)
            _update_running(running_cov, [rr, ri, ri, ii], momentum)
    else:
        for name, value in (("running_mean", running_mean), ("running_cov", running_cov)):
            if value is None:
                raise ValueError(f"{where}: `{name}` must be given when not training, got None")
        mean = running_mean.reshape(2, *shape)
        xr, xi = input.real - mean[0], input.imag - mean[1]
        cov = running_cov.reshape(2, 2, *shape)
        cov = cov[0, 0], (cov[0, 1] + cov[1, 0]) / 2, cov[1, 1]

    return _restore(_affine(*_whiten(xr, xi, *cov, eps), weight, bias, shape), half)


def _update_running(running, entries, momentum):
    """Blend per-channel batch statistics (in ``running``'s order) into it in place."""
    with torch.no_grad():
        batch = torch.stack([e.reshape(-1) for e in entries]).reshape(running.shape)
        running.lerp_(batch.to(running.dtype), momentum)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    r"""Complex layer normalisation by :math:`2 \times 2` whitening.

    Each sample is centred and whitened (as in :func:`batch_norm`) with the
    mean and :math:`2 \times 2` covariance of its (real, imaginary) pairs over
    the trailing ``normalized_shape`` dimensions, then mapped elementwise by
    the real :math:`2 \times 2` ``weight`` and shifted by ``bias``.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(*, \text{normalized\_shape})`.
    normalized_shape : int or sequence of int
        The trailing shape to normalise over, as in
        :func:`torch.nn.functional.layer_norm`.
    weight : torch.Tensor, optional
        Real affine map of shape :math:`(2, 2, \text{normalized\_shape})`.
    bias : torch.Tensor or Cplx, optional
        Complex shift: a real tensor of shape :math:`(2, \text{normalized\_shape})`
        or a :class:`Cplx` of shape ``normalized_shape``.
    eps : float
        Added to the diagonal of each covariance for numerical stability.

    Returns
    -------
    Cplx
        The normalised input, of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If the trailing shape of ``input``, ``weight`` or ``bias`` does not
        match ``normalized_shape``.

    Notes
    -----
    A float16 or bfloat16 input is normalised in float32 and the output
    has its dtype, as with :func:`torch.nn.functional.layer_norm`.

    Examples
    --------
    >>> z = cplx.randn(4, 10, 16)
    >>> cplx.layer_norm(z, 16).shape
    torch.Size([4, 10, 16])
    """
    where = "layer_norm"
    input = checked_cplx(input, where=where)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    check_trailing_shape(input, normalized_shape, "input", where)
    check_shape(weight, (2, 2, *normalized_shape), "weight", where)
    _check_affine_bias(bias, normalized_shape, where)

    input, half = _in_float32(input)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    xr = input.real - input.real.mean(dims, keepdim=True)
    xi = input.imag - input.imag.mean(dims, keepdim=True)
    cov = _covariance(xr, xi, dims)
    return _restore(_affine(*_whiten(xr, xi, *cov, eps), weight, bias, normalized_shape), half)


def _whiten_parts(parts, training, running_mean, running_cov, momentum, eps):
    r"""Whiten ``d`` real parts per channel by the inverse square root of their covariance.

    ``parts`` has shape :math:`(d, N, C, *)`; each channel's :math:`d`-vector
    is centred and multiplied by :math:`(V_c + \epsilon I)^{-1/2}`, the
    symmetric root, so for :math:`d = 2` this is :func:`batch_norm` without
    the affine map. The running statistics, :math:`(d, C)` and
    :math:`(d, d, C)`, follow :func:`batch_norm`'s conventions; an
    eigendecomposition replaces its closed form, which exists for
    :math:`d = 2` only.
    """
    d, n_channels = parts.shape[0], parts.shape[2]
    if training:
        mean = parts.mean([1, *range(3, parts.dim())], keepdim=True)
        centred = parts - mean
        n_values = parts.numel() // (d * n_channels)
        cov = torch.einsum("inc...,jnc...->cij", centred, centred) / n_values
        with torch.no_grad():
            if running_mean is not None:
                running_mean.lerp_(mean.reshape(d, n_channels), momentum)
            if running_cov is not None:
                # torch's convention, as in batch_norm: the unbiased estimate
                unbiased = cov * (n_values / max(n_values - 1, 1))
                running_cov.lerp_(unbiased.permute(1, 2, 0), momentum)
    else:
        shape = (d, 1, n_channels, *[1] * (parts.dim() - 3))
        centred = parts - running_mean.reshape(shape)
        cov = running_cov.permute(2, 0, 1)
    eye = torch.eye(d, dtype=cov.dtype, device=cov.device)
    values, vectors = torch.linalg.eigh(cov + eps * eye)
    root = (vectors * values.rsqrt().unsqueeze(-2)) @ vectors.mT
    return torch.einsum("cij,jnc...->inc...", root, centred)


def _check_channels(input, where):
    """``input`` as an ``(N, C, *)`` Cplx, and its number of channels."""
    input = checked_cplx(input, where=where)
    if input.dim() < 2:
        raise ValueError(
            f"{where}: `input` must have shape (N, C, *), got {tuple(input.shape)}"
        )
    return input, input.shape[1]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    r"""Complex group normalisation by :math:`2 \times 2` whitening per sample and group.

    The channels are split into ``num_groups`` groups; in each sample, the
    (real, imaginary) pairs of a group (its channels and all their positions)
    are centred and whitened by the inverse square root of their
    :math:`2 \times 2` covariance, as in :func:`batch_norm`, then each
    channel is mapped by its real :math:`2 \times 2` ``weight`` and shifted
    by ``bias``. No statistic is taken across the batch, so the output of a
    sample does not depend on the others. This is
    :func:`torch.nn.functional.group_norm` with the variance replaced by the
    covariance matrix.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(N, C, *)`.
    num_groups : int
        The number of groups; it must divide :math:`C`.
    weight : torch.Tensor, optional
        Real :math:`2 \times 2` affine map per channel, shape :math:`(2, 2, C)`.
    bias : torch.Tensor or Cplx, optional
        Complex shift per channel: a real :math:`(2, C)` tensor (real parts in
        row 0) or a :class:`Cplx` of shape :math:`(C,)`.
    eps : float
        Added to the diagonal of each covariance for numerical stability.

    Returns
    -------
    Cplx
        The normalised input, of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has fewer than two dimensions, if ``num_groups`` does
        not divide its number of channels, or if an affine parameter does
        not match it.

    Examples
    --------
    >>> z = cplx.randn(4, 6, 10)
    >>> cplx.group_norm(z, 3).shape
    torch.Size([4, 6, 10])
    """
    where = "group_norm"
    input, n_channels = _check_channels(input, where)
    if (
        not isinstance(num_groups, int)
        or num_groups < 1
        or n_channels % num_groups != 0
    ):
        raise ValueError(
            f"{where}: `num_groups` must be a positive divisor of the number of"
            f" channels {n_channels}, got {num_groups!r}"
        )
    check_shape(weight, (2, 2, n_channels), "weight", where)
    _check_affine_bias(bias, (n_channels,), where)

    grouped = (input.shape[0], num_groups, -1)
    xr, xi = input.real.reshape(grouped), input.imag.reshape(grouped)
    xr = xr - xr.mean(-1, keepdim=True)
    xi = xi - xi.mean(-1, keepdim=True)
    zr, zi = _whiten(xr, xi, *_covariance(xr, xi, -1), eps)
    shape = (n_channels, *[1] * (input.dim() - 2))
    return _affine(zr.reshape(input.shape), zi.reshape(input.shape), weight, bias, shape)


def instance_norm(
    input,
    running_mean=None,
    running_cov=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    r"""Complex instance normalisation by :math:`2 \times 2` whitening per sample and channel.

    With ``use_input_stats``, each channel of each sample is centred and
    whitened (as in :func:`batch_norm`) by the mean and :math:`2 \times 2`
    covariance of its (real, imaginary) pairs over the spatial dimensions,
    and the running statistics, if given, are updated with their averages
    over the batch; otherwise the running statistics normalise, as in
    :func:`batch_norm`'s evaluation mode. This is
    :func:`torch.nn.functional.instance_norm` with the variance replaced by
    the covariance matrix.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(N, C, *)`.
    running_mean : torch.Tensor, optional
        Running mean of shape :math:`(2, C)` (real parts in row 0).
    running_cov : torch.Tensor, optional
        Running covariance of shape :math:`(2, 2, C)`.
    weight : torch.Tensor, optional
        Real :math:`2 \times 2` affine map per channel, shape :math:`(2, 2, C)`.
    bias : torch.Tensor or Cplx, optional
        Complex shift per channel, as in :func:`batch_norm`.
    use_input_stats : bool
        Normalise by each instance's statistics (and update the running
        ones) rather than by the running statistics.
    momentum : float
        Weight of the batch-averaged statistics in the running-average update.
    eps : float
        Added to the diagonal of each covariance for numerical stability.

    Returns
    -------
    Cplx
        The normalised input, of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has fewer than two dimensions, if a statistic or affine
        parameter does not match its channels, if the running statistics are
        missing without ``use_input_stats``, or if with it there is only one
        spatial value per channel.

    Notes
    -----
    As in torch, the running covariance accumulates the batch average of the
    unbiased per-instance estimates, and ``eps`` is not stored in it.

    Examples
    --------
    >>> z = cplx.randn(4, 3, 16)
    >>> cplx.instance_norm(z).shape
    torch.Size([4, 3, 16])
    """
    where = "instance_norm"
    input, n_channels = _check_channels(input, where)
    check_shape(running_mean, (2, n_channels), "running_mean", where)
    check_shape(running_cov, (2, 2, n_channels), "running_cov", where)
    check_shape(weight, (2, 2, n_channels), "weight", where)
    _check_affine_bias(bias, (n_channels,), where)

    dims = list(range(2, input.dim()))
    shape = (n_channels, *[1] * (input.dim() - 2))
    if use_input_stats:
        n_values = math.prod(input.shape[2:])
        if n_values < 2:
            raise ValueError(
                f"{where}: `input` must have more than 1 spatial value per channel,"
                f" got shape {tuple(input.shape)}"
            )
        mean_r = input.real.mean(dims, keepdim=True)
        mean_i = input.imag.mean(dims, keepdim=True)
        xr, xi = input.real - mean_r, input.imag - mean_i
        cov = _covariance(xr, xi, dims)
        if running_mean is not None:
            _update_running(running_mean, [m.mean(0) for m in (mean_r, mean_i)], momentum)
        if running_cov is not None:
            rr, ri, ii = (c.mean(0) * (n_values / (n_values - 1)) for c in cov)
            _update_running(running_cov, [rr, ri, ri, ii], momentum)
    else:
        for name, value in (("running_mean", running_mean), ("running_cov", running_cov)):
            if value is None:
                raise ValueError(
                    f"{where}: `{name}` must be given without `use_input_stats`, got None"
                )
        mean = running_mean.reshape(2, *shape)
        xr, xi = input.real - mean[0], input.imag - mean[1]
        cov = running_cov.reshape(2, 2, *shape)
        cov = cov[0, 0], (cov[0, 1] + cov[1, 0]) / 2, cov[1, 1]

    return _affine(*_whiten(xr, xi, *cov, eps), weight, bias, shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    r"""Phase-preserving complex RMS normalisation over the trailing dimensions.

    .. math::

        y = \frac{z}{\sqrt{\operatorname{mean} |z|^2 + \epsilon}} \, w,

    the mean taken over the trailing ``normalized_shape`` dimensions of each
    sample. Only the modulus is rescaled: the real ``weight`` :math:`w`
    multiplies both parts alike, so the phase of every value is kept (turned
    by :math:`\pi` where :math:`w` is negative). This is
    :func:`torch.nn.functional.rms_norm` with :math:`x^2` replaced by
    :math:`|z|^2`; unlike :func:`layer_norm` it neither centres nor
    decorrelates the parts.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(*, \text{normalized\_shape})`.
    normalized_shape : int or sequence of int
        The trailing shape to normalise over.
    weight : torch.Tensor, optional
        Real scale of shape ``normalized_shape``.
    eps : float, optional
        Added to the mean square; ``None`` means the machine epsilon of the
        input's dtype, as in torch.

    Returns
    -------
    Cplx
        The normalised input, of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If the trailing shape of ``input`` or the shape of ``weight`` is not
        ``normalized_shape``.

    Examples
    --------
    >>> z = cplx.randn(4, 16)
    >>> out = cplx.rms_norm(z, 16)
    >>> torch.allclose(out.angle, z.angle, atol=1e-5)
    True
    """
    where = "rms_norm"
    input = checked_cplx(input, where=where)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    check_trailing_shape(input, normalized_shape, "input", where)
    check_shape(weight, normalized_shape, "weight", where)
    if eps is None:
        eps = torch.finfo(input.real.dtype).eps

    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    power = (input.real * input.real + input.imag * input.imag).mean(dims, keepdim=True)
    scale = torch.rsqrt(power + eps)
    if weight is not None:
        scale = scale * weight
    return Cplx(input.real * scale, input.imag * scale)


def magnitude_batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    r"""Batch normalisation of the modulus per channel, keeping the phase.

    The moduli :math:`r = |z|` go through
    :func:`torch.nn.functional.batch_norm` (statistics over the batch and
    every non-channel dimension, real per-channel ``weight`` and ``bias``)
    and multiply the unit phasors :math:`z / |z|`:

    .. math::

        y = \operatorname{BN}(|z|) \, \frac{z}{|z|}.

    A zero value takes phase zero (its output is finite, but the modulus
    has no derivative there, so neither has the output). The normalised modulus is centred, so it
    is negative for values below the mean modulus (with ``bias`` zero): such
    outputs point opposite to the input, the phase kept modulo :math:`\pi`.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(N, C, *)`.
    running_mean, running_var : torch.Tensor or None
        Real :math:`(C,)` running mean and variance of the modulus, as in
        :func:`torch.nn.functional.batch_norm`.
    weight, bias : torch.Tensor, optional
        Real :math:`(C,)` affine parameters of the modulus.
    training : bool
        Normalise by the batch statistics (and update the running ones).
    momentum : float
        Weight of the batch in the running-average update.
    eps : float
        Added to the variance of the modulus.

    Returns
    -------
    Cplx
        The normalised input, of the shape of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.
    ValueError
        If ``input`` has fewer than two dimensions or a statistic or affine
        parameter does not match its channels.

    Examples
    --------
    >>> z = cplx.randn(8, 3, 5)
    >>> cplx.magnitude_batch_norm(z, None, None, training=True).shape
    torch.Size([8, 3, 5])
    """
    where = "magnitude_batch_norm"
    input, n_channels = _check_channels(input, where)
    for name, value in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        check_shape(value, (n_channels,), name, where)

    # not torch.hypot, which ONNX lacks
    modulus = torch.sqrt(input.real * input.real + input.imag * input.imag)
    normed = torch.nn.functional.batch_norm(
        modulus, running_mean, running_var, weight, bias, training, momentum, eps
    )
    # a zero value has no phase: give it phase zero rather than 0 / 0
    nonzero = modulus > 0
    safe = torch.where(nonzero, modulus, torch.ones_like(modulus))
    cos = torch.where(nonzero, input.real / safe, torch.ones_like(modulus))
    sin = torch.where(nonzero, input.imag / safe, torch.zeros_like(modulus))
    return Cplx(normed * cos, normed * sin)
