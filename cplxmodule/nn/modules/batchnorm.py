r"""Complex batch normalisation: :math:`2 \times 2` whitening per channel."""

import torch

from ... import cplx
from ...cplx._shared import check_shape
from ...cplx.normalization import _whiten_parts
from .base import CplxToCplx, _check_cplx
from .parameter import _factory_kwargs

__all__ = [
    "CplxBatchNorm1d",
    "CplxBatchNorm2d",
    "CplxBatchNorm3d",
    "whiten2x2",
    "whitendxd",
    "cplx_batch_norm",
    "CplxNaiveBatchNorm1d",
    "CplxNaiveBatchNorm2d",
    "CplxNaiveBatchNorm3d",
    "CplxMagnitudeBatchNorm1d",
    "CplxMagnitudeBatchNorm2d",
    "CplxMagnitudeBatchNorm3d",
]

_WHITEN_ARGUMENTS = """tensor : torch.Tensor
        Real tensor of shape :math:`({d}, N, C, *)`.
    training : bool
        Normalise by the batch statistics and update the running ones;
        otherwise by the running statistics (by the batch ones if
        ``running_mean`` is ``None``).
    running_mean, running_cov : torch.Tensor, optional
        :math:`({d}, C)` and :math:`({d}, {d}, C)` running statistics, updated
        in place when training.
    momentum : float
        Weight of the batch in the running-average update.
    nugget : float
        Added to the diagonal of the covariance.

    Returns
    -------
    torch.Tensor
        The whitened tensor, of the shape of ``tensor``."""

_RUNNING_NOTE = """As in :func:`cplxmodule.cplx.batch_norm`, the running covariance
    holds torch's unbiased estimate and ``{eps}`` is added when normalising,
    not stored (the published package stored the biased estimate plus
    ``{eps}``): batch-mode outputs are the same, running statistics differ by
    :math:`n / (n - 1)` and :math:`\\epsilon`."""


def _eye_(tensor):
    """Fill a ``(2, 2, C)`` tensor with identity matrices, in place."""
    tensor.zero_()
    tensor.diagonal(dim1=0, dim2=1).fill_(1)


class _CplxNormBase(CplxToCplx):
    r"""State shared by the complex batch normalisation layers.

    The layout and names of the parameters and buffers are those of the
    published cplxmodule, so its checkpoints load: ``weight`` is a real
    :math:`(2, 2, C)` tensor (one :math:`2 \times 2` map per channel),
    ``bias`` a real :math:`(2, C)` tensor (real parts in row 0),
    ``running_mean`` is :math:`(2, C)`, ``running_var`` the :math:`(2, 2, C)`
    running covariance, and ``num_batches_tracked`` counts the batches.
    """

    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    # version 2 added ``num_batches_tracked``, as in torch's ``_NormBase``
    _version = 2

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
    ):
        factory_kwargs = _factory_kwargs(device, dtype)
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = torch.nn.Parameter(
                torch.empty(2, 2, num_features, **factory_kwargs)
            )
            self.bias = torch.nn.Parameter(torch.empty(2, num_features, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

        if track_running_stats:
            self.register_buffer(
                "running_mean", torch.zeros(2, num_features, **factory_kwargs)
            )
            self.register_buffer(
                "running_var", torch.empty(2, 2, num_features, **factory_kwargs)
            )
            self.register_buffer(
                "num_batches_tracked",
                torch.tensor(0, dtype=torch.long, device=device),
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Reset the running mean to zero and the running covariance to identity."""
        if self.track_running_stats:
            self.running_mean.zero_()
            _eye_(self.running_var)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Reset the running statistics, and the affine map to the identity."""
        self.reset_running_stats()
        if self.affine:
            with torch.no_grad():
                _eye_(self.weight)
                torch.nn.init.zeros_(self.bias)

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
    ):
        # Checkpoints before version 2 have no ``num_batches_tracked``: keep
        # the module's count (0 unless it has run), as torch's _NormBase does.
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                tracked = self.num_batches_tracked
                if tracked is None or tracked.device.type == "meta":
                    tracked = torch.tensor(0, dtype=torch.long)
                state_dict[key] = tracked
        super()._load_from_state_dict(
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )

    #: The input shapes a subclass accepts, by number of dimensions.
    _input_shapes = {}

    def _check_input_dim(self, input):
        if input.dim() not in self._input_shapes:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape"
                f" {' or '.join(self._input_shapes.values())}, got {tuple(input.shape)}"
            )

    def _check_input(self, input):
        name = type(self).__name__
        # half-precision input with float32 statistics, as torch's norms take it
        input = _check_cplx(self, input, half_input=True)
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{name}: `input` must have shape (N, {self.num_features}, *)"
                f" (num_features at dim 1), got {tuple(input.shape)}"
            )

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class _CplxBatchNorm(_CplxNormBase):
    def forward(self, input):
        self._check_input(input)
        tracking = self.training and self.track_running_stats
        if self.momentum is not None:
            factor = self.momentum
        elif tracking:
            # cumulative moving average over the batches seen so far
            factor = 1.0 / float(self.num_batches_tracked + 1)
        else:
            factor = 0.0

        # Batch statistics while training, and in eval mode without running ones.
        use_batch_stats = self.training or self.running_mean is None
        pass_running = not self.training or self.track_running_stats
        output = cplx.batch_norm(
            input,
            self.running_mean if pass_running else None,
            self.running_var if pass_running else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )
        # counted only once the batch went through: a rejected one changes nothing
        if tracking:
            self.num_batches_tracked.add_(1)
        return output


_DOC_TEMPLATE = r"""Complex batch normalisation over a {shape} input.

    Each channel's (real, imaginary) pair is centred and multiplied by the
    inverse square root of its :math:`2 \times 2` covariance (Trabelsi et al.
    2018), then mapped by a learnable real :math:`2 \times 2` ``weight`` and
    shifted by a complex ``bias``:

    .. math::

        y = W_c \, V_c^{{-1/2}} (u - \mu_c) + \beta_c,
        \qquad u = (\Re z, \Im z).

    Statistics are computed over the batch and every non-channel dimension;
    running estimates are kept as in :class:`torch.nn.{torch_name}`. See
    :func:`cplxmodule.cplx.batch_norm` for the computation.

    Parameters
    ----------
    num_features : int
        The number of channels :math:`C`.
    eps : float
        Added to the diagonal of the covariance for numerical stability.
    momentum : float or None
        Weight of the current batch in the running statistics; ``None`` for a
        cumulative moving average.
    affine : bool
        Learn ``weight`` (initialised to the identity) and ``bias`` (zero).
    track_running_stats : bool
        Keep running statistics and normalise by them in eval mode; if
        ``False``, batch statistics are used in both modes.
    device, dtype
        Factory arguments for the parameters and buffers.

    Shape
    -----
    - Input: {shape}.
    - Output: the input's shape.

    Attributes
    ----------
    weight : torch.nn.Parameter
        Real :math:`(2, 2, C)` affine maps.
    bias : torch.nn.Parameter
        Real :math:`(2, C)` shifts, real parts in row 0.
    running_mean : torch.Tensor
        :math:`(2, C)` running mean.
    running_var : torch.Tensor
        :math:`(2, 2, C)` running covariance (unbiased estimates, as torch).
    num_batches_tracked : torch.Tensor
        The number of training batches seen.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input is not {shape}, or has not ``num_features`` channels.

    Examples
    --------
    >>> bn = {name}(3)
    >>> bn(cplx.randn({example})).shape
    torch.Size([{example}])
    """


class CplxBatchNorm1d(_CplxBatchNorm):
    __doc__ = _DOC_TEMPLATE.format(
        name="CplxBatchNorm1d",
        torch_name="BatchNorm1d",
        shape=":math:`(N, C)` or :math:`(N, C, L)`",
        example="8, 3, 5",
    )
    _input_shapes = {2: "(N, C)", 3: "(N, C, L)"}


class CplxBatchNorm2d(_CplxBatchNorm):
    __doc__ = _DOC_TEMPLATE.format(
        name="CplxBatchNorm2d",
        torch_name="BatchNorm2d",
        shape=":math:`(N, C, H, W)`",
        example="8, 3, 4, 4",
    )
    _input_shapes = {4: "(N, C, H, W)"}


class CplxBatchNorm3d(_CplxBatchNorm):
    __doc__ = _DOC_TEMPLATE.format(
        name="CplxBatchNorm3d",
        torch_name="BatchNorm3d",
        shape=":math:`(N, C, D, H, W)`",
        example="4, 3, 2, 4, 4",
    )
    _input_shapes = {5: "(N, C, D, H, W)"}


def whiten2x2(
    tensor, training=True, running_mean=None, running_cov=None, momentum=0.1, nugget=1e-5
):
    r"""Whiten the (real, imaginary) pairs of a stacked tensor per channel.

    The published package's layout of :func:`cplxmodule.cplx.batch_norm`
    without the affine map: ``tensor[0]`` holds the real parts and
    ``tensor[1]`` the imaginary parts of a :math:`(N, C, *)` input.

    Parameters
    ----------
    {arguments}

    Raises
    ------
    ValueError
        If ``tensor`` is not :math:`(2, N, C, *)`, or a statistic does not
        match the number of channels.

    Notes
    -----
    {note}

    Examples
    --------
    >>> x = torch.randn(2, 64, 3)
    >>> y = whiten2x2(x)
    >>> cov = torch.einsum("inc,jnc->cij", y, y) / 64
    >>> torch.allclose(cov, torch.eye(2).expand(3, 2, 2), atol=1e-3)
    True
    """
    where = "whiten2x2"
    if not isinstance(tensor, torch.Tensor) or tensor.dim() < 3 or tensor.shape[0] != 2:
        raise ValueError(f"{where}: `tensor` must have shape (2, N, C, *), got {_shape(tensor)}")
    output = cplx.batch_norm(
        cplx.Cplx(tensor[0], tensor[1]),
        running_mean,
        running_cov,
        training=training or running_mean is None,
        momentum=momentum,
        eps=nugget,
    )
    return torch.stack([output.real, output.imag])


def whitendxd(
    tensor, training=True, running_mean=None, running_cov=None, momentum=0.1, nugget=1e-5
):
    r"""Whiten the :math:`d` stacked real parts of a tensor per channel.

    :func:`whiten2x2` for :math:`d` parts: each channel's :math:`d`-vector is
    centred and multiplied by the inverse symmetric square root of its
    :math:`d \times d` covariance (plus ``nugget`` on the diagonal), so that
    the parts come out uncorrelated with unit variance; for :math:`d = 2` the
    result is :func:`whiten2x2`'s.

    Parameters
    ----------
    {arguments}

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than three dimensions, or a statistic does
        not match its shape.

    Notes
    -----
    The published function multiplied by the inverse of the upper Cholesky
    factor, which does not decorrelate the parts unless they are
    uncorrelated already; this one does. {note}

    Examples
    --------
    >>> x = torch.randn(3, 256, 2, dtype=torch.float64)
    >>> y = whitendxd(x)
    >>> cov = torch.einsum("inc,jnc->cij", y, y) / 256
    >>> torch.allclose(cov, torch.eye(3, dtype=x.dtype).expand(2, 3, 3), atol=1e-3)
    True
    """
    where = "whitendxd"
    if not isinstance(tensor, torch.Tensor) or tensor.dim() < 3:
        raise ValueError(f"{where}: `tensor` must have shape (d, N, C, *), got {_shape(tensor)}")
    d, n_channels = tensor.shape[0], tensor.shape[2]
    check_shape(running_mean, (d, n_channels), "running_mean", where)
    check_shape(running_cov, (d, d, n_channels), "running_cov", where)
    training = training or running_mean is None or running_cov is None
    return _whiten_parts(tensor, training, running_mean, running_cov, momentum, nugget)


def cplx_batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=True,
    momentum=0.1,
    eps=1e-05,
):
    r"""Complex batch normalisation, at its published path and with its defaults.

    :func:`cplxmodule.cplx.batch_norm` (which the layers call), except
    that ``training`` defaults to ``True`` and that without running
    statistics the batch ones are used in either mode, as published.

    Parameters
    ----------
    input : Cplx
        Input of shape :math:`(N, C, *)`.
    running_mean, running_var : torch.Tensor or None
        :math:`(2, C)` running mean and :math:`(2, 2, C)` running covariance.
    weight : torch.Tensor, optional
        Real :math:`(2, 2, C)` affine maps.
    bias : torch.Tensor, optional
        Real :math:`(2, C)` shifts, real parts in row 0.
    training : bool
    momentum : float
    eps : float
        See :func:`cplxmodule.cplx.batch_norm`.

    Returns
    -------
    Cplx
        The normalised input.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        As :func:`cplxmodule.cplx.batch_norm`.

    Notes
    -----
    {note}

    Examples
    --------
    >>> z = cplx.randn(16, 3, 4)
    >>> cplx_batch_norm(z, None, None).shape
    torch.Size([16, 3, 4])
    """
    return cplx.batch_norm(
        input,
        running_mean,
        running_var,
        weight,
        bias,
        training or running_mean is None,
        momentum,
        eps,
    )


def _shape(tensor):
    if isinstance(tensor, torch.Tensor):
        return tuple(tensor.shape)
    return type(tensor).__name__


for _function, _eps, _d in (
    (whiten2x2, "nugget", "2"),
    (whitendxd, "nugget", "d"),
    (cplx_batch_norm, "eps", None),
):
    if _function.__doc__:  # not under python -OO
        _function.__doc__ = _function.__doc__.format(
            note=_RUNNING_NOTE.format(eps=_eps),
            arguments=_d and _WHITEN_ARGUMENTS.format(d=_d),
        )


# --- batch norm variants: split parts and modulus --------------------------


class _CplxNaiveBatchNorm(CplxToCplx):
    #: The torch batch norm applied to each part.
    _base = None
    _input_shapes = {}

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
    ):
        factory_kwargs = _factory_kwargs(device, dtype)
        super().__init__()
        arguments = (num_features, eps, momentum, affine, track_running_stats)
        self.real = self._base(*arguments, **factory_kwargs)
        self.imag = self._base(*arguments, **factory_kwargs)

    def reset_running_stats(self):
        """Reset both parts' running statistics."""
        self.real.reset_running_stats()
        self.imag.reset_running_stats()

    def reset_parameters(self):
        """Reset both parts' running statistics and affine parameters."""
        self.real.reset_parameters()
        self.imag.reset_parameters()

    def forward(self, input):
        input = _check_cplx(self, input)
        _check_batch_input(self, input, self.real.num_features)
        return cplx.Cplx(self.real(input.real), self.imag(input.imag))


_NAIVE_DOC = r"""Naive complex batch normalisation over a {shape} input: parts apart.

    The real and the imaginary parts go through two independent
    :class:`torch.nn.{torch_name}` layers, ``real`` and ``imag``, each with
    its own statistics and affine parameters. Unlike
    :class:`{whitened}`, the parts are scaled separately and not
    decorrelated, so the output depends on the input's phase reference.

    Parameters
    ----------
    num_features : int
        The number of channels :math:`C`.
    eps, momentum, affine, track_running_stats
        As in :class:`torch.nn.{torch_name}`, for both parts.
    device, dtype
        Factory arguments for the parameters and buffers.

    Shape
    -----
    - Input: {shape}.
    - Output: the input's shape.

    Attributes
    ----------
    real, imag : torch.nn.{torch_name}
        The layers of the real and of the imaginary parts: the state dict
        holds ``real.weight``, ``real.bias``, ``real.running_mean``,
        ``real.running_var``, ``real.num_batches_tracked`` and the same
        keys under ``imag.``, each of torch's shape.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input is not {shape}, or has not ``num_features`` channels.

    Examples
    --------
    >>> bn = {name}(3)
    >>> bn(cplx.randn({example})).shape
    torch.Size([{example}])
    """


class _CplxMagnitudeBatchNorm(CplxToCplx):
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    _input_shapes = {}

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
    ):
        factory_kwargs = _factory_kwargs(device, dtype)
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = torch.nn.Parameter(torch.empty(num_features, **factory_kwargs))
            self.bias = torch.nn.Parameter(torch.empty(num_features, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features, **factory_kwargs))
            self.register_buffer("running_var", torch.ones(num_features, **factory_kwargs))
            self.register_buffer(
                "num_batches_tracked", torch.tensor(0, dtype=torch.long, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Reset the running mean to zero and the running variance to one."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Reset the running statistics, the scale to one and the shift to zero."""
        self.reset_running_stats()
        if self.affine:
            torch.nn.init.ones_(self.weight)
            torch.nn.init.zeros_(self.bias)

    def forward(self, input):
        input = _check_cplx(self, input)
        _check_batch_input(self, input, self.num_features)
        tracking = self.training and self.track_running_stats
        if self.momentum is not None:
            factor = self.momentum
        elif tracking:
            # cumulative moving average over the batches seen so far
            factor = 1.0 / float(self.num_batches_tracked + 1)
        else:
            factor = 0.0
        pass_running = not self.training or self.track_running_stats
        output = cplx.magnitude_batch_norm(
            input,
            self.running_mean if pass_running else None,
            self.running_var if pass_running else None,
            self.weight,
            self.bias,
            self.training or self.running_mean is None,
            factor,
            self.eps,
        )
        if tracking:
            self.num_batches_tracked.add_(1)
        return output

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


_MAGNITUDE_DOC = r"""Complex batch normalisation of the modulus over a {shape} input.

    The moduli :math:`|z|` of each channel are batch-normalised as by
    :class:`torch.nn.{torch_name}` (real per-channel ``weight`` and
    ``bias``, running mean and variance of the modulus) and multiply the
    unit phasors :math:`z / |z|`; see
    :func:`cplxmodule.cplx.magnitude_batch_norm`. The phase is kept modulo
    :math:`\pi`: a normalised modulus below zero points the output opposite
    to the input.

    Parameters
    ----------
    num_features : int
        The number of channels :math:`C`.
    eps, momentum, affine, track_running_stats
        As in :class:`torch.nn.{torch_name}`.
    device, dtype
        Factory arguments for the parameters and buffers.

    Shape
    -----
    - Input: {shape}.
    - Output: the input's shape.

    Attributes
    ----------
    weight, bias : torch.nn.Parameter or None
        Real :math:`(C,)` scale and shift of the normalised modulus.
    running_mean, running_var : torch.Tensor or None
        Real :math:`(C,)` running mean and (unbiased) variance of the modulus.
    num_batches_tracked : torch.Tensor or None
        The number of training batches seen.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input is not {shape}, or has not ``num_features`` channels.

    Examples
    --------
    >>> bn = {name}(3)
    >>> bn(cplx.randn({example})).shape
    torch.Size([{example}])
    """


def _check_batch_input(layer, input, num_features):
    """Raise unless ``input`` has one of ``layer``'s shapes and ``num_features`` channels."""
    if input.dim() not in layer._input_shapes or input.shape[1] != num_features:
        shapes = " or ".join(layer._input_shapes.values()).replace("C", str(num_features))
        raise ValueError(
            f"{layer._get_name()}: `input` must have shape {shapes}, got {tuple(input.shape)}"
        )


_VARIANT_SHAPES = (
    ("1d", ":math:`(N, C)` or :math:`(N, C, L)`", "8, 3, 5", {2: "(N, C)", 3: "(N, C, L)"}),
    ("2d", ":math:`(N, C, H, W)`", "8, 3, 4, 4", {4: "(N, C, H, W)"}),
    ("3d", ":math:`(N, C, D, H, W)`", "4, 3, 2, 4, 4", {5: "(N, C, D, H, W)"}),
)


class CplxNaiveBatchNorm1d(_CplxNaiveBatchNorm):
    __doc__ = _NAIVE_DOC.format(
        name="CplxNaiveBatchNorm1d",
        torch_name="BatchNorm1d",
        whitened="CplxBatchNorm1d",
        shape=_VARIANT_SHAPES[0][1],
        example=_VARIANT_SHAPES[0][2],
    )
    _base = torch.nn.BatchNorm1d
    _input_shapes = _VARIANT_SHAPES[0][3]


class CplxNaiveBatchNorm2d(_CplxNaiveBatchNorm):
    __doc__ = _NAIVE_DOC.format(
        name="CplxNaiveBatchNorm2d",
        torch_name="BatchNorm2d",
        whitened="CplxBatchNorm2d",
        shape=_VARIANT_SHAPES[1][1],
        example=_VARIANT_SHAPES[1][2],
    )
    _base = torch.nn.BatchNorm2d
    _input_shapes = _VARIANT_SHAPES[1][3]


class CplxNaiveBatchNorm3d(_CplxNaiveBatchNorm):
    __doc__ = _NAIVE_DOC.format(
        name="CplxNaiveBatchNorm3d",
        torch_name="BatchNorm3d",
        whitened="CplxBatchNorm3d",
        shape=_VARIANT_SHAPES[2][1],
        example=_VARIANT_SHAPES[2][2],
    )
    _base = torch.nn.BatchNorm3d
    _input_shapes = _VARIANT_SHAPES[2][3]


class CplxMagnitudeBatchNorm1d(_CplxMagnitudeBatchNorm):
    __doc__ = _MAGNITUDE_DOC.format(
        name="CplxMagnitudeBatchNorm1d",
        torch_name="BatchNorm1d",
        shape=_VARIANT_SHAPES[0][1],
        example=_VARIANT_SHAPES[0][2],
    )
    _input_shapes = _VARIANT_SHAPES[0][3]


class CplxMagnitudeBatchNorm2d(_CplxMagnitudeBatchNorm):
    __doc__ = _MAGNITUDE_DOC.format(
        name="CplxMagnitudeBatchNorm2d",
        torch_name="BatchNorm2d",
        shape=_VARIANT_SHAPES[1][1],
        example=_VARIANT_SHAPES[1][2],
    )
    _input_shapes = _VARIANT_SHAPES[1][3]


class CplxMagnitudeBatchNorm3d(_CplxMagnitudeBatchNorm):
    __doc__ = _MAGNITUDE_DOC.format(
        name="CplxMagnitudeBatchNorm3d",
        torch_name="BatchNorm3d",
        shape=_VARIANT_SHAPES[2][1],
        example=_VARIANT_SHAPES[2][2],
    )
    _input_shapes = _VARIANT_SHAPES[2][3]
