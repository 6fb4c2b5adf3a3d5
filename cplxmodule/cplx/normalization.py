r"""Complex normalisation: whitening of the (real, imaginary) pair.

A complex value :math:`z = x + iy` is treated as the real 2-vector
:math:`(x, y)`. Normalising it means centring it and multiplying by the
inverse square root of its :math:`2 \times 2` covariance matrix, so that real
and imaginary parts come out uncorrelated with unit variance (Trabelsi et al.
2018). Scaling the two parts separately would not decorrelate them, nor
preserve the complex structure under rotation.

Every norm here follows one skeleton: the input is taken in float32 if it is
in half precision (as torch's norms accumulate in float32), its real parts
(the pair, or the modulus alone) are centred and whitened by their own
statistics or by running ones, which their own update in place, and the
affine map and the input's dtype are applied last.
"""

from __future__ import annotations

import functools
import math

import torch

from ._dtypes import HALF_DTYPES
from ._shared import (
    check_divides,
    check_positive_int,
    check_shape,
    check_trailing_shape,
    checked_cplx,
    ntuple,
)
from .tensor import Cplx
from typing import Optional, Sequence, Union
from ._typing import CplxLike

__all__ = [
    "batch_norm",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "rms_norm",
    "magnitude_batch_norm",
]


# --- the dtype policy ---------------------------------------------------------
def _in_float32(input):
    """``input`` (Cplx or tensor) in float32 if it is in half precision, and the dtype to return.

    The statistics and the closed-form inverse square root of the
    covariance (a difference of products) lose most of their digits in half
    precision, and the squares of values past 256 overflow float16: as
    torch's own norms, which accumulate in float32, compute in float32 and
    return the input's dtype. Nothing here is on autocast's lists of
    lower-precision ops, so the computation stays in float32 under autocast
    too.
    """
    if input.dtype in HALF_DTYPES:
        return input.float(), input.dtype
    return input, None


def _restore(output, dtype):
    return output if dtype is None else output.to(dtype)


# --- statistics and whitening of d real parts ---------------------------------
def _upper(d):
    """The index pairs ``(i, j)``, ``i <= j``, of a symmetric ``d x d`` matrix, row by row."""
    return [(i, j) for i in range(d) for j in range(i, d)]


def _entry(cov, d, i, j):
    """Entry ``(i, j)`` of the symmetric matrix whose upper triangle is the list ``cov``."""
    i, j = min(i, j), max(i, j)
    return cov[i * d - i * (i - 1) // 2 + j - i]


def _input_statistics(parts, dims, reduce=None):
    """The parts centred by their means over ``dims``, the means, the biased covariance, the count.

    ``reduce``, if given, sums a tensor over the processes that share the
    batch (see :func:`_process_sum`): the statistics are then those of the
    union of their batches, and the count the number of values per channel
    in it.
    """
    if reduce is None:
        means = [p.mean(dims, keepdim=True) for p in parts]
        centred = [p - m for p, m in zip(parts, means)]
        cov = [(centred[i] * centred[j]).mean(dims, keepdim=True) for i, j in _upper(len(parts))]
        return centred, means, cov, math.prod([parts[0].shape[dim] for dim in dims])

    # Two passes, as above, not the raw moments sum x² - n mean² in one
    # reduction: those cancel to noise for a channel whose mean is large
    # against its spread, where the centred products lose nothing. The
    # count travels with the sums, as the batches of the processes may
    # differ in size (or be empty).
    d, shape = len(parts), [1 if dim in dims else size for dim, size in enumerate(parts[0].shape)]
    local = math.prod([parts[0].shape[dim] for dim in dims])
    sums = torch.cat([torch.stack([p.sum(dims) for p in parts]).flatten(),
                      parts[0].new_full((1,), local)])
    sums = reduce(sums)
    count = sums[-1]
    means = list((sums[:-1] / count).reshape(d, *shape))
    centred = [p - m for p, m in zip(parts, means)]
    products = torch.stack([(centred[i] * centred[j]).sum(dims) for i, j in _upper(d)])
    cov = list((reduce(products) / count).reshape(-1, *shape))
    return centred, means, cov, round(count.item())


def _running_statistics(parts, running_mean, running_cov, shape):
    """The parts centred by the running mean, and the running covariance, symmetrised.

    Statistics kept in half precision are read in the parts' dtype (float32).
    """
    d, dtype = len(parts), parts[0].dtype
    mean = running_mean.reshape(d, *shape).to(dtype)
    cov = running_cov.reshape(d, d, *shape).to(dtype)
    centred = [p - m for p, m in zip(parts, mean)]
    return centred, [cov[i, i] if i == j else (cov[i, j] + cov[j, i]) / 2 for i, j in _upper(d)]


def _track(running_mean, running_cov, means, cov, n_values, momentum):
    """Blend the statistics of this input into the running ones, in place.

    The statistics, one per channel (dimension 1) and, for an instance norm,
    per sample, are averaged over the samples. As torch's, the running
    covariance holds the unbiased estimate (``n_values`` values each), and
    gradients never reach the running statistics.
    """
    d, unbiased = len(means), n_values / (n_values - 1)
    full = [_entry(cov, d, i, j) for i in range(d) for j in range(d)]
    with torch.no_grad():
        for running, entries, factor in ((running_mean, means, 1), (running_cov, full, unbiased)):
            if running is not None:
                n_channels = running.shape[-1]
                batch = torch.stack(entries).reshape(len(entries), -1, n_channels).mean(1)
                batch = batch * factor
                running.lerp_(batch.reshape(running.shape).to(running.dtype), momentum)


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
    # Products of two variances overflow float32 from values of about 1e10
    # on, as 1 / (st) underflows: s² = det(V + eps I) = a (d - b² / a) has
    # its root taken factor by factor, and the entries are divided by s
    # before t. The part of d - b² / a that Cauchy-Schwarz keeps
    # non-negative is clamped: rounding must not turn nearly collinear parts
    # into a NaN.
    s = torch.sqrt(a) * torch.sqrt((var_ii - cov_ri * (cov_ri / a)).clamp(min=0) + eps)
    t = torch.rsqrt(a + d + 2 * s)
    p, q, r = (d + s) / s * t, -cov_ri / s * t, (a + s) / s * t
    return [p * xr + q * xi, q * xr + r * xi]


def _whiten_eigh(centred, cov, eps):
    """:func:`_whiten` for ``d > 2`` parts, by an eigendecomposition.

    Elementwise products and sums rather than ``matmul``, which autocast
    would run in half precision.
    """
    d = len(centred)
    rows = [torch.stack([_entry(cov, d, i, j) for j in range(d)], -1) for i in range(d)]
    matrix = torch.stack(rows, -2)
    eye = torch.eye(d, dtype=matrix.dtype, device=matrix.device)
    values, vectors = torch.linalg.eigh(matrix + eps * eye)
    scaled = vectors * values.rsqrt().unsqueeze(-2)
    root = (scaled.unsqueeze(-2) * vectors.unsqueeze(-3)).sum(-1)
    return [sum(root[..., i, j] * centred[j] for j in range(d)) for i in range(d)]


def _whitened(centred, cov, eps):
    """The centred parts times the inverse square root of ``cov + eps I``."""
    if len(centred) == 1:
        return [centred[0] * torch.rsqrt(cov[0] + eps)]
    if len(centred) == 2:
        (xr, xi), (var_rr, cov_ri, var_ii) = centred, cov
        return _whiten(xr, xi, var_rr, cov_ri, var_ii, eps)
    return _whiten_eigh(centred, cov, eps)


def _normalized(parts, dims, eps, running=(None, None), use_input_stats=True, momentum=0.0,
                shape=None, reduce=None, check=None):
    """The real ``parts`` centred and whitened: the one skeleton of every norm here.

    With ``use_input_stats``, by their statistics over ``dims`` (and over the
    processes ``reduce`` sums over, if given), after ``check``, if given,
    has seen the number of values per channel they are taken over; the
    statistics update the ``running`` mean and covariance if given (not for
    an empty input, as in torch). Otherwise by the running statistics,
    reshaped to ``shape`` to broadcast against each part.
    """
    running_mean, running_cov = running
    if not use_input_stats:
        centred, cov = _running_statistics(parts, running_mean, running_cov, shape)
        return _whitened(centred, cov, eps)
    centred, means, cov, n_values = _input_statistics(parts, dims, reduce)
    if check is not None:
        check(n_values)
    # no value at all, or no channel (a mean of shape (1, 0, ...)): nothing to track
    if n_values * means[0].numel() and any(r is not None for r in running):
        _track(running_mean, running_cov, means, cov, n_values, momentum)
    return _whitened(centred, cov, eps)


# --- the checks and the affine maps -------------------------------------------
def _check_channels(input, where):
    """``input`` as an ``(N, C, *)`` Cplx, and its number of channels."""
    input = checked_cplx(input, where=where)
    if input.dim() < 2:
        raise ValueError(
            f"{where}: `input` must have shape (N, C, *), got {tuple(input.shape)}"
        )
    return input, input.shape[1]


def _statistics_dims(n_dims, per_instance):
    """The dimensions of an ``(N, C, *)`` input a channel's statistics are taken over."""
    return [*range(2, n_dims)] if per_instance else [0, *range(2, n_dims)]


def _check_values(shape, per_instance, where, name="input"):
    """Raise unless a channel's statistics are over more than one value, as torch's norms.

    A single value has no variance; none at all gives an empty output.
    """
    if math.prod([shape[dim] for dim in _statistics_dims(len(shape), per_instance)]) == 1:
        kind, mode = ("spatial value", "") if per_instance else ("value", " when training")
        raise ValueError(
            f"{where}: `{name}` must have more than 1 {kind} per channel{mode},"
            f" got shape {tuple(shape)}"
        )


def _check_total(n_values, shape, where, name="input"):
    """:func:`_check_values` on the batches of all the processes: ``n_values`` per channel."""
    if n_values == 1:
        raise ValueError(
            f"{where}: `{name}` must have more than 1 value per channel when training, over"
            f" the batches of all the processes, got 1 (shape {tuple(shape)} in this one)"
        )


def _by_channel(parts, running_mean, running_cov, use_input_stats, momentum, eps, where,
                per_instance=False, name="input", reduce=None):
    """The ``(N, C, *)`` real ``parts`` whitened per channel (and sample, ``per_instance``).

    The statistics and the checks of :func:`batch_norm`,
    :func:`instance_norm`, :func:`magnitude_batch_norm` and ``whitendxd``,
    whose errors name the argument ``name`` of ``where``; statistics over
    the processes ``reduce`` sums over, if given (not ``per_instance``).
    """
    x = parts[0]
    dims = _statistics_dims(x.dim(), per_instance)
    check = None
    if use_input_stats and reduce is None:
        _check_values(x.shape, per_instance, where, name)
    elif use_input_stats:
        # one process may hold a single value, or none, if the others hold more
        check = functools.partial(_check_total, shape=x.shape, where=where, name=name)
    else:
        mode = "without `use_input_stats`" if per_instance else "when not training"
        for running, value in (("running_mean", running_mean), ("running_cov", running_cov)):
            if value is None:
                raise ValueError(f"{where}: `{running}` must be given {mode}, got None")
    shape = (x.shape[1], *[1] * (x.dim() - 2))
    return _normalized(
        parts, dims, eps, (running_mean, running_cov), use_input_stats, momentum, shape,
        reduce, check,
    )


class _SumOverProcesses(torch.autograd.Function):
    """The sum of a tensor over the processes of a group, differentiable.

    Every process's loss depends on the sum, hence on the tensor of every
    process: the gradient of a process's tensor is the sum of the
    gradients of the sum over the processes. This is the reduction the
    backward of torch's synchronised batch norm does by hand (an all-reduce
    of the sums of the gradient and of its products with the centred
    input). :func:`torch.distributed.nn.functional.all_reduce` is this
    function, deprecated (it warns) for a private one.
    """

    @staticmethod
    def forward(ctx, tensor, group):
        ctx.group = group
        tensor = tensor.clone(memory_format=torch.contiguous_format)
        torch.distributed.all_reduce(tensor, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad):
        # by itself again, so that the backward is differentiable too
        return _SumOverProcesses.apply(grad, ctx.group), None


def _process_sum(process_group=None):
    """A function summing a tensor over the processes of ``process_group``, or ``None``.

    ``None`` where there is nothing to sum over, as :class:`torch.nn.SyncBatchNorm`
    decides: no :mod:`torch.distributed`, no process group initialised, or
    one process in it (``None`` stands for the default group).

    Summing by a differentiable function, rather than writing the whole
    synchronised norm as an autograd function with its backward by hand as
    torch does, keeps one forward for both: the backward of the whitening
    (the closed-form inverse square root of a 2x2 covariance) is not spelled
    out a second time. The price is two all-reduces each way (the mean, then
    the covariance: see :func:`_input_statistics`) where torch's takes one.
    """
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        return None
    group = dist.group.WORLD if process_group is None else process_group
    if dist.get_world_size(group) == 1:
        return None
    return functools.partial(_SumOverProcesses.apply, group=group)


def _check_pair_affine(weight, bias, shape, where):
    """Check that ``weight`` is ``(2, 2, *shape)``, ``bias`` a ``shape`` Cplx or ``(2, *shape)``."""
    check_shape(weight, (2, 2, *shape), "weight", where)
    check_shape(bias, shape if isinstance(bias, Cplx) else (2, *shape), "bias", where)


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


def _unit_phasor(real, imag):
    """The cosine and sine of the phase, ``1`` and ``0`` (gradient 0) at zero.

    The parts are divided by the larger of their magnitudes (detached: the
    phase does not depend on it) before the modulus is taken, so that at
    tiny moduli neither the squares underflow nor the gradient, which grows
    as ``1 / |z|`` as that of :func:`torch.sgn`, loses its digits.
    """
    big = torch.maximum(real.abs(), imag.abs()).detach()
    zero = big == 0
    scale = torch.where(zero, 1, big)
    # at zero, the point (1, 0), which no gradient reaches
    u = torch.where(zero, 1, real / scale)
    v = torch.where(zero, 0, imag / scale)
    modulus = torch.sqrt(u * u + v * v)
    return u / modulus, v / modulus


# --- the norms ----------------------------------------------------------------
def batch_norm(
    input: CplxLike,
    running_mean: Optional[torch.Tensor],
    running_cov: Optional[torch.Tensor],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[CplxLike] = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Cplx:
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
    through the batch statistics, never into the running ones. An empty
    batch gives an empty output and leaves the running statistics as they
    are. A float16 or bfloat16 input is normalised in float32 (with float32
    or its own dtype's statistics and parameters) and the output has its
    dtype, as with :func:`torch.nn.functional.batch_norm`.

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
    return _batch_norm(
        input, running_mean, running_cov, weight, bias, training, momentum, eps, "batch_norm"
    )


def _batch_norm(input, running_mean, running_cov, weight, bias, use_input_stats, momentum,
                eps, where, per_instance=False, reduce=None):
    """:func:`batch_norm`, or :func:`instance_norm` ``per_instance``; errors name ``where``.

    With ``reduce`` (see :func:`_process_sum`), the statistics are those of
    the batches of all the processes it sums over: a synchronised batch norm.
    """
    input, n_channels = _check_channels(input, where)
    check_shape(running_mean, (2, n_channels), "running_mean", where)
    check_shape(running_cov, (2, 2, n_channels), "running_cov", where)
    _check_pair_affine(weight, bias, (n_channels,), where)

    input, half = _in_float32(input)
    zr, zi = _by_channel(
        [input.real, input.imag], running_mean, running_cov, use_input_stats, momentum, eps,
        where, per_instance, reduce=reduce,
    )
    shape = (n_channels, *[1] * (input.dim() - 2))
    return _restore(_affine(zr, zi, weight, bias, shape), half)


def _instance_norm(input, running_mean, running_cov, weight, bias, use_input_stats, momentum,
                   eps, where):
    """:func:`instance_norm`, whose errors name ``where``."""
    return _batch_norm(input, running_mean, running_cov, weight, bias, use_input_stats,
                       momentum, eps, where, per_instance=True)


def instance_norm(
    input: CplxLike,
    running_mean: Optional[torch.Tensor] = None,
    running_cov: Optional[torch.Tensor] = None,
    weight: Optional[torch.Tensor] = None,
    bias: Optional[CplxLike] = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Cplx:
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
    unbiased per-instance estimates, and ``eps`` is not stored in it. An
    empty input gives an empty output and leaves the running statistics as
    they are. A float16 or bfloat16 input is normalised in float32 and the
    output has its dtype, as with :func:`torch.nn.functional.instance_norm`.

    Examples
    --------
    >>> z = cplx.randn(4, 3, 16)
    >>> cplx.instance_norm(z).shape
    torch.Size([4, 3, 16])
    """
    return _instance_norm(input, running_mean, running_cov, weight, bias, use_input_stats,
                          momentum, eps, "instance_norm")


def layer_norm(
    input: CplxLike,
    normalized_shape: Union[int, Sequence[int]],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[CplxLike] = None,
    eps: float = 1e-5,
) -> Cplx:
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
    return _layer_norm(input, normalized_shape, weight, bias, eps, "layer_norm")


def _trailing(input, normalized_shape, where):
    """``input`` as a Cplx of shape ``(*, *normalized_shape)``, the shape as a tuple, its dims."""
    input = checked_cplx(input, where=where)
    normalized_shape = ntuple(normalized_shape, None, "normalized_shape", where, minimum=0)
    check_trailing_shape(input, normalized_shape, "input", where)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    return input, normalized_shape, dims


def _layer_norm(input, normalized_shape, weight, bias, eps, where):
    """:func:`layer_norm`, whose errors name ``where``."""
    input, normalized_shape, dims = _trailing(input, normalized_shape, where)
    _check_pair_affine(weight, bias, normalized_shape, where)

    input, half = _in_float32(input)
    zr, zi = _normalized([input.real, input.imag], dims, eps)
    return _restore(_affine(zr, zi, weight, bias, normalized_shape), half)


def group_norm(
    input: CplxLike,
    num_groups: int,
    weight: Optional[torch.Tensor] = None,
    bias: Optional[CplxLike] = None,
    eps: float = 1e-5,
) -> Cplx:
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

    Notes
    -----
    A float16 or bfloat16 input is normalised in float32 and the output
    has its dtype, as with :func:`torch.nn.functional.group_norm`.

    Examples
    --------
    >>> z = cplx.randn(4, 6, 10)
    >>> cplx.group_norm(z, 3).shape
    torch.Size([4, 6, 10])
    """
    return _group_norm(input, num_groups, weight, bias, eps, "group_norm")


def _group_norm(input, num_groups, weight, bias, eps, where):
    """:func:`group_norm`, whose errors name ``where``."""
    input, n_channels = _check_channels(input, where)
    check_positive_int(num_groups, "num_groups", where)
    check_divides(num_groups, "num_groups", n_channels, "the channels of `input`", where)
    _check_pair_affine(weight, bias, (n_channels,), where)

    input, half = _in_float32(input)
    # sizes spelled out: an empty batch has no size to infer
    size = n_channels // num_groups * math.prod(input.shape[2:])
    grouped = (input.shape[0], num_groups, size)
    parts = [input.real.reshape(grouped), input.imag.reshape(grouped)]
    zr, zi = (z.reshape(input.shape) for z in _normalized(parts, [-1], eps))
    shape = (n_channels, *[1] * (input.dim() - 2))
    return _restore(_affine(zr, zi, weight, bias, shape), half)


def rms_norm(
    input: CplxLike,
    normalized_shape: Union[int, Sequence[int]],
    weight: Optional[torch.Tensor] = None,
    eps: Optional[float] = None,
) -> Cplx:
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
        dtype it is computed in (float32 for a half-precision input), as in
        torch.

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

    Notes
    -----
    A float16 or bfloat16 input is normalised in float32 (the mean square
    of values past 256 overflows float16) and the output has its dtype, as
    with :func:`torch.nn.functional.rms_norm`.

    Examples
    --------
    >>> z = cplx.randn(4, 16)
    >>> out = cplx.rms_norm(z, 16)
    >>> torch.allclose(out.angle, z.angle, atol=1e-5)
    True
    """
    return _rms_norm(input, normalized_shape, weight, eps, "rms_norm")


def _rms_norm(input, normalized_shape, weight, eps, where):
    """:func:`rms_norm`, whose errors name ``where``."""
    input, normalized_shape, dims = _trailing(input, normalized_shape, where)
    check_shape(weight, normalized_shape, "weight", where)

    input, half = _in_float32(input)
    if eps is None:
        eps = torch.finfo(input.dtype).eps
    power = (input.real * input.real + input.imag * input.imag).mean(dims, keepdim=True)
    scale = torch.rsqrt(power + eps)
    if weight is not None:
        scale = scale * weight
    return _restore(Cplx(input.real * scale, input.imag * scale), half)


def magnitude_batch_norm(
    input: CplxLike,
    running_mean: Optional[torch.Tensor],
    running_var: Optional[torch.Tensor],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Cplx:
    r"""Batch normalisation of the modulus per channel, keeping the phase.

    The moduli :math:`r = |z|` are batch-normalised as by
    :func:`torch.nn.functional.batch_norm` (statistics over the batch and
    every non-channel dimension, real per-channel ``weight`` and ``bias``)
    and multiply the unit phasors :math:`z / |z|`:

    .. math::

        y = \operatorname{BN}(|z|) \, \frac{z}{|z|}.

    A zero value takes phase zero, and its gradient is zero (the modulus's
    subgradient, and that of :func:`torch.sgn`). The normalised modulus is
    centred, so it is negative for values below the mean modulus (with
    ``bias`` zero): such outputs point opposite to the input, the phase
    kept modulo :math:`\pi`.

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
        If ``input`` has fewer than two dimensions, if a statistic or affine
        parameter does not match its channels, if the running statistics are
        missing when not ``training``, or if ``training`` with only one
        value per channel.

    Notes
    -----
    Near zero the output turns with the input's phase, so its gradient
    grows as :math:`1 / |z|`; it is computed on parts scaled to the larger
    of them, so that it keeps its digits at tiny moduli. A float16 or
    bfloat16 input is normalised in float32 and the output has its dtype.

    Examples
    --------
    >>> z = cplx.randn(8, 3, 5)
    >>> cplx.magnitude_batch_norm(z, None, None, training=True).shape
    torch.Size([8, 3, 5])
    """
    return _magnitude_batch_norm(input, running_mean, running_var, weight, bias, training,
                                 momentum, eps, "magnitude_batch_norm")


def _magnitude_batch_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps, where):
    """:func:`magnitude_batch_norm`, whose errors name ``where``."""
    input, n_channels = _check_channels(input, where)
    for name, value in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        check_shape(value, (n_channels,), name, where)

    input, half = _in_float32(input)
    (normed,) = _by_channel(
        [abs(input)], running_mean, running_var, use_input_stats, momentum, eps, where
    )
    shape = (n_channels, *[1] * (input.dim() - 2))
    if weight is not None:
        normed = normed * weight.reshape(shape)
    if bias is not None:
        normed = normed + bias.reshape(shape)
    cos, sin = _unit_phasor(input.real, input.imag)
    return _restore(Cplx(normed * cos, normed * sin), half)


def _whiten_parts(tensor, training, running_mean, running_cov, momentum, eps, where):
    r"""Whiten the ``d`` stacked real parts of ``tensor``, :math:`(d, N, C, *)`, per channel.

    For :math:`d = 2` this is :func:`batch_norm` without the affine map; the
    running statistics are :math:`(d, C)` and :math:`(d, d, C)`.
    """
    tensor, half = _in_float32(tensor)
    parts = _by_channel(
        list(tensor), running_mean, running_cov, training, momentum, eps, where, name="tensor"
    )
    return _restore(torch.stack(parts), half)
