r"""Complex batch normalisation: :math:`2 \times 2` whitening per channel."""

from __future__ import annotations

import torch

from .._kinds import Channelwise
from ... import cplx
from ...cplx import normalization
from ...cplx._shared import (
    ArgumentTypeError,
    check_non_negative_int,
    check_real,
    check_shape,
)
from .base import CplxToCplx, _check_cplx
from .parameter import _factory_kwargs
from typing import Any, Callable, ClassVar, Optional
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx

__all__ = [
    "CplxBatchNorm1d",
    "CplxBatchNorm2d",
    "CplxBatchNorm3d",
    "CplxSyncBatchNorm",
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


def _identity_(tensor, parts):
    """Fill a per-feature tensor with identities, in place: 2x2 for the pair, 1 for the modulus."""
    if parts == 1:
        tensor.fill_(1)
    else:
        tensor.zero_()
        tensor.diagonal(dim1=0, dim2=1).fill_(1)


def _check_options(layer, eps, momentum, eps_optional=False):
    """Check the ``eps`` (``None`` if ``eps_optional``) and ``momentum`` of a norm layer."""
    where = type(layer).__name__
    check_real(eps, "eps", where, low=0, optional=eps_optional)
    check_real(momentum, "momentum", where, low=0, high=1, optional=True)


def _check_channel_input(layer, input, num_features):
    """Raise unless ``input`` has one of ``layer._input_shapes`` and ``num_features`` channels.

    The shapes name the channel dimension ``C``: ``"(N, C, L)"``, and an
    unbatched ``"(C, L)"`` for the instance norms.
    """
    shapes, name = layer._input_shapes, layer._get_name()
    if input.dim() not in shapes:
        raise ValueError(
            f"{name}: `input` must have shape {' or '.join(shapes.values())},"
            f" got {tuple(input.shape)}"
        )
    if input.shape[shapes[input.dim()].strip("()").split(", ").index("C")] != num_features:
        leads = sorted({shape[1 : shape.index("C")] for shape in shapes.values()}, reverse=True)
        expected = " or ".join(f"({lead}{num_features}, *)" for lead in leads)
        raise ValueError(f"{name}: `input` must have shape {expected}, got {tuple(input.shape)}")


class _CplxNormBase(CplxToCplx):
    r"""What every complex norm layer shares: its state, its checks, its forward pass.

    A norm normalises per feature either the (real, imaginary) pair
    (``_parts = 2``: a real :math:`(2, 2, *F)` ``weight``, one
    :math:`2 \times 2` map per feature, a real :math:`(2, *F)` ``bias``,
    real parts in row 0, and running statistics ``running_mean``
    :math:`(2, *F)` and ``running_var``, the :math:`(2, 2, *F)`
    covariance) or the modulus alone (``_parts = 1``: real scale, shift,
    mean and variance of shape :math:`F`). These are the published
    package's layouts and names, so its checkpoints load.

    As torch's ``_NormBase``, absent state is ``None`` (``affine=False``,
    ``track_running_stats=False``); a layer without running statistics at
    all (group, layer and RMS norms) has none of their attributes. The
    forward pass checks the input (type, dtype: half precision with float32
    parameters passes, as into torch's norms; shape, the one thing a
    subclass overrides per dimension), chooses the statistics as torch's
    ``_BatchNorm`` and ``_InstanceNorm`` do, and calls the functional core,
    whose errors then name the layer.
    """

    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    # version 2 added ``num_batches_tracked``, as in torch's ``_NormBase``
    _version = 2

    #: The values normalised per feature: 2, the pair; 1, the modulus.
    _parts = 2
    #: The input shapes a layer takes, by number of dimensions.
    _input_shapes: ClassVar[dict[int, str]] = {}
    #: Whether ``eps=None`` stands for the machine epsilon of the input's
    #: dtype, as in :class:`torch.nn.RMSNorm`.
    _eps_optional = False
    #: Whether a training batch counts in ``num_batches_tracked``, which
    #: ``momentum=None`` averages over (batch norms; not instance norms).
    _counts_batches = True
    #: The core function (``input, running_mean, running_var, weight, bias,
    #: use_input_stats, momentum, eps, where``) of a norm with running statistics.
    _function: ClassVar[Any] = None
    #: The attributes :meth:`extra_repr` shows: by value, then by name.
    _repr_values: ClassVar[tuple[str, ...]] = ("num_features",)
    _repr_names: ClassVar[tuple[str, ...]] = ("eps", "momentum", "affine", "track_running_stats")

    # The state, as torch's ``_NormBase`` declares it (None where absent). A
    # layer without running statistics (group, layer, RMS norms) has no
    # ``running_*`` nor ``num_batches_tracked``, and ``bias=None`` no ``bias``:
    # the methods that run on every norm read these with ``getattr``.
    weight: Optional[torch.Tensor]
    bias: Optional[torch.Tensor]
    running_mean: Optional[torch.Tensor]
    running_var: Optional[torch.Tensor]
    num_batches_tracked: Optional[torch.Tensor]

    def __init__(
        self,
        features,
        eps,
        momentum=None,
        weight=True,
        bias=True,
        track_running_stats=None,
        device=None,
        dtype=None,
    ):
        """Build the state for the feature shape ``features``.

        ``bias=None`` gives no ``bias`` attribute, ``track_running_stats=None``
        no running statistics, nor ``momentum`` (group, layer, RMS norms).
        """
        _check_options(self, eps, momentum, self._eps_optional)
        factory_kwargs = _factory_kwargs(device, dtype)
        super().__init__()
        features = tuple(features)
        self.eps = eps
        for name, wanted, k in (("weight", weight, 2), ("bias", bias, 1)):
            if wanted:
                value = torch.empty(self._shape(features, k), **factory_kwargs)
                self.register_parameter(name, torch.nn.Parameter(value))
            elif wanted is not None:
                self.register_parameter(name, None)
        if track_running_stats is not None:
            self.momentum = momentum
            self.track_running_stats = track_running_stats
            for name, k in (("running_mean", 1), ("running_var", 2)):
                value = torch.empty(self._shape(features, k), **factory_kwargs)
                self.register_buffer(name, value if track_running_stats else None)
            count = torch.tensor(0, dtype=torch.long, device=device)
            self.register_buffer("num_batches_tracked", count if track_running_stats else None)
        self.reset_parameters()

    def _shape(self, features, k):
        """A per-feature tensor's shape: ``k`` leading 2s for the pair, none for the modulus."""
        return (2,) * (k if self._parts == 2 else 0) + features

    def reset_running_stats(self):
        """Reset the running statistics: mean 0, covariance (variance) the identity, count 0.

        A layer without running statistics has nothing to reset.
        """
        running_mean: Optional[torch.Tensor] = getattr(self, "running_mean", None)
        if running_mean is not None:
            running_mean.zero_()
            _identity_(self.running_var, self._parts)
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Reset the running statistics, the affine map to the identity and the shift to zero."""
        self.reset_running_stats()
        with torch.no_grad():
            if self.weight is not None:
                _identity_(self.weight, self._parts)
            bias: Optional[torch.Tensor] = getattr(self, "bias", None)
            if bias is not None:
                bias.zero_()

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
        if (version is None or version < 2) and getattr(self, "track_running_stats", False):
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

    def _check_input_dim(self, input):
        _check_channel_input(self, input, self.num_features)

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input, half_input=True)
        self._check_input_dim(input)
        return self._normalize(input)

    def _normalize(self, input):
        """Normalise by the statistics torch's batch or instance norm would use; count the batch."""
        counted = self.training and self.track_running_stats
        if self._counts_batches:
            # torch's _BatchNorm: running statistics in eval mode if there are any
            use_input_stats = self.training or self.running_mean is None
        else:
            # torch's _InstanceNorm: running statistics in eval mode if tracked
            use_input_stats = self.training or not self.track_running_stats
        momentum = self.momentum
        tracked = self.num_batches_tracked  # a tensor where ``counted``
        if momentum is None:
            # a cumulative average over the batches counted, this one included
            counts = counted and self._counts_batches
            momentum = 1.0 / float(tracked + 1) if counts and tracked is not None else 0.0
        passed = counted or not use_input_stats
        output = self._function(
            input,
            self.running_mean if passed else None,
            self.running_var if passed else None,
            self.weight,
            self.bias,
            use_input_stats,
            momentum,
            self.eps,
            self._get_name(),
        )
        # counted only once the batch went through: a rejected one changes nothing
        if counted and self._counts_batches and tracked is not None:
            tracked.add_(1)
        return output

    def extra_repr(self):
        values = [f"{getattr(self, name)}" for name in self._repr_values]
        values += [f"{name}={getattr(self, name)}" for name in self._repr_names]
        return ", ".join(values)


class _CplxBatchNorm(_CplxNormBase):
    _function: ClassVar[Callable[..., Cplx]] = staticmethod(normalization._batch_norm)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        num_features = check_non_negative_int(num_features, "num_features", type(self).__name__)
        super().__init__(
            (num_features,), eps, momentum, affine, affine, track_running_stats, device, dtype
        )
        self.num_features = num_features
        self.affine = affine


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


class CplxBatchNorm1d(_CplxBatchNorm, compact=Channelwise("num_features", 1)):
    __doc__ = _DOC_TEMPLATE.format(
        name="CplxBatchNorm1d",
        torch_name="BatchNorm1d",
        shape=":math:`(N, C)` or :math:`(N, C, L)`",
        example="8, 3, 5",
    )
    _input_shapes = {2: "(N, C)", 3: "(N, C, L)"}


class CplxBatchNorm2d(_CplxBatchNorm, compact=Channelwise("num_features", 2)):
    __doc__ = _DOC_TEMPLATE.format(
        name="CplxBatchNorm2d",
        torch_name="BatchNorm2d",
        shape=":math:`(N, C, H, W)`",
        example="8, 3, 4, 4",
    )
    _input_shapes = {4: "(N, C, H, W)"}


class CplxBatchNorm3d(_CplxBatchNorm, compact=Channelwise("num_features", 3)):
    __doc__ = _DOC_TEMPLATE.format(
        name="CplxBatchNorm3d",
        torch_name="BatchNorm3d",
        shape=":math:`(N, C, D, H, W)`",
        example="4, 3, 2, 4, 4",
    )
    _input_shapes = {5: "(N, C, D, H, W)"}


def _check_process_group(process_group, where):
    """Raise unless ``process_group`` is ``None`` or a :class:`torch.distributed.ProcessGroup`."""
    dist = torch.distributed
    kind = getattr(dist, "ProcessGroup", None) if dist.is_available() else None
    if process_group is not None and (kind is None or not isinstance(process_group, kind)):
        raise ArgumentTypeError(
            f"{where}: `process_group` must be a torch.distributed.ProcessGroup or None,"
            f" got {process_group!r}"
        )


class CplxSyncBatchNorm(_CplxBatchNorm, compact=Channelwise("num_features", None)):
    r"""Complex batch normalisation over the batches of all the processes of a group.

    :class:`CplxBatchNorm1d` (2d, 3d) whose statistics, when training, are
    the mean and :math:`2 \times 2` covariance of the (real, imaginary)
    pairs of each channel over the batches of every process in
    ``process_group``, as :class:`torch.nn.SyncBatchNorm` is
    :class:`torch.nn.BatchNorm2d` over them. Every process then whitens by
    the same statistics and updates its running ones alike (the unbiased
    covariance of all the values, as :class:`CplxBatchNorm2d`), and
    gradients flow through the statistics to the inputs of every process,
    as if one process had normalised the whole batch. The batches of the
    processes may differ in size; one may even be empty.

    Outside a process group (none initialised, or one process in it), and
    in eval mode (by the running statistics, or, without them, each
    process by its own batch, as torch's), it computes exactly what
    :class:`CplxBatchNorm2d` does, for an input of any rank.

    Every process of the group must call it in the same order, as any
    collective: a process with nothing to normalise still calls it, with an
    empty batch, and the backward pass, which sums gradients over the
    processes too, must run on all of them. Build it from a model with
    :meth:`convert_sync_batchnorm`.

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
    process_group : torch.distributed.ProcessGroup, optional
        The processes whose batches are normalised together; ``None`` for
        the default group.
    device, dtype
        Factory arguments for the parameters and buffers.

    Shape
    -----
    - Input: :math:`(N, C, *)`.
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
    process_group : torch.distributed.ProcessGroup or None
        As given.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`, or
        ``process_group`` not a process group.
    ValueError
        If the input has fewer than two dimensions or not ``num_features``
        channels, or, when training, if the batches of all the processes
        hold one value per channel between them.

    Notes
    -----
    The statistics are summed over the processes by a differentiable
    all-reduce: two in the forward pass (the sums, then the centred
    products, as precise as one process's two passes) and two in the
    backward pass. Unlike torch's, it synchronises inputs on the CPU too
    (over ``gloo``).

    Examples
    --------
    Without a process group it is :class:`CplxBatchNorm2d` (or 1d, 3d):

    >>> bn = CplxSyncBatchNorm(3)
    >>> bn(cplx.randn(8, 3, 5, 5)).shape
    torch.Size([8, 3, 5, 5])

    In each process of a :class:`~torch.nn.parallel.DistributedDataParallel`
    run, convert the model's complex batch norms before wrapping it:

    >>> model = torch.nn.Sequential(CplxBatchNorm2d(3))
    >>> model = CplxSyncBatchNorm.convert_sync_batchnorm(model)
    >>> model
    Sequential(
      (0): CplxSyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
    )
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        _check_process_group(process_group, type(self).__name__)
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2 or input.shape[1] != self.num_features:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape (N, {self.num_features}, *),"
                f" got {tuple(input.shape)}"
            )

    def _function(self, input, running_mean, running_var, weight, bias, use_input_stats,
                  momentum, eps, where):
        # Over the processes only when training, as torch's: in eval mode
        # without running statistics each process normalises its own batch.
        reduce = normalization._process_sum(self.process_group) if self.training else None
        return normalization._batch_norm(input, running_mean, running_var, weight, bias,
                                         use_input_stats, momentum, eps, where, reduce=reduce)

    @classmethod
    def convert_sync_batchnorm(
        cls, module: torch.nn.Module, process_group: Any = None
    ) -> torch.nn.Module:
        """Replace every complex batch norm in ``module`` by a :class:`CplxSyncBatchNorm`.

        Each :class:`CplxBatchNorm1d`, :class:`CplxBatchNorm2d`,
        :class:`CplxBatchNorm3d` and :class:`CplxSyncBatchNorm` (``module``
        itself or any submodule) is replaced by one of this class over
        ``process_group``, with the same settings, holding the same
        parameters and buffers (the objects themselves, so their
        ``requires_grad``, device and dtype are kept) and in the same mode,
        as :meth:`torch.nn.SyncBatchNorm.convert_sync_batchnorm` does for
        torch's. The other norms are left as they are: the naive and
        magnitude batch norms, and torch's real batch norms, which
        :meth:`torch.nn.SyncBatchNorm.convert_sync_batchnorm` converts.

        Parameters
        ----------
        module : torch.nn.Module
            The model, converted in place (its batch norm children
            replaced) unless it is a batch norm itself.
        process_group : torch.distributed.ProcessGroup, optional
            The group the new layers synchronise over; ``None`` for the
            default group.

        Returns
        -------
        torch.nn.Module
            ``module``, or its replacement if it is a complex batch norm.

        Raises
        ------
        TypeError
            If ``module`` is not a :class:`torch.nn.Module`, or
            ``process_group`` not a process group.
        """
        where = f"{cls.__name__}.convert_sync_batchnorm"
        if not isinstance(module, torch.nn.Module):
            raise ArgumentTypeError(
                f"{where}: `module` must be a torch.nn.Module, got {type(module).__name__}"
            )
        _check_process_group(process_group, where)
        return cls._converted(module, process_group)

    @classmethod
    def _converted(cls, module, process_group):
        output = module
        if isinstance(module, _SYNCABLE):
            output = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            # the objects themselves, as torch's converter: an optimiser
            # built on the model before still holds them
            for name in ("weight", "bias"):
                setattr(output, name, getattr(module, name))
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                setattr(output, name, getattr(module, name))
            output.train(module.training)
        for name, child in module.named_children():
            output.add_module(name, cls._converted(child, process_group))
        return output


_SYNCABLE = (CplxBatchNorm1d, CplxBatchNorm2d, CplxBatchNorm3d, CplxSyncBatchNorm)


def whiten2x2(
    tensor: torch.Tensor,
    training: bool = True,
    running_mean: Optional[torch.Tensor] = None,
    running_cov: Optional[torch.Tensor] = None,
    momentum: float = 0.1,
    nugget: float = 1e-5,
) -> torch.Tensor:
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
    training = training or running_mean is None
    return _whitened(tensor, training, running_mean, running_cov, momentum, nugget, where)


def whitendxd(
    tensor: torch.Tensor,
    training: bool = True,
    running_mean: Optional[torch.Tensor] = None,
    running_cov: Optional[torch.Tensor] = None,
    momentum: float = 0.1,
    nugget: float = 1e-5,
) -> torch.Tensor:
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
    The parts are decorrelated whatever their covariance (how this differs
    from the published package: :doc:`/guides/migrating`). {note}

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
    training = training or running_mean is None or running_cov is None
    return _whitened(tensor, training, running_mean, running_cov, momentum, nugget, where)


def _whitened(tensor, training, running_mean, running_cov, momentum, nugget, where):
    d, n_channels = tensor.shape[0], tensor.shape[2]
    check_shape(running_mean, (d, n_channels), "running_mean", where)
    check_shape(running_cov, (d, d, n_channels), "running_cov", where)
    return normalization._whiten_parts(
        tensor, training, running_mean, running_cov, momentum, nugget, where
    )


def cplx_batch_norm(
    input: CplxLike,
    running_mean: Optional[torch.Tensor],
    running_var: Optional[torch.Tensor],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    training: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-05,
) -> Cplx:
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
    return normalization._batch_norm(
        input,
        running_mean,
        running_var,
        weight,
        bias,
        training or running_mean is None,
        momentum,
        eps,
        "cplx_batch_norm",
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
    # Not a _CplxNormBase: its state is that of two torch batch norms, under
    # their own keys, which they check, update and reset themselves.

    #: The torch batch norm applied to each part.
    _base: ClassVar[Any] = None
    _input_shapes: ClassVar[dict[int, str]] = {}

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        num_features = check_non_negative_int(num_features, "num_features", type(self).__name__)
        _check_options(self, eps, momentum)
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

    def forward(self, input: CplxLike) -> Cplx:
        # half precision with float32 statistics passes, as torch's parts take it
        input = _check_cplx(self, input, half_input=True)
        _check_channel_input(self, input, self.real.num_features)
        if self.training or self.real.running_mean is None:
            # torch's parts would raise too, with words that do not name the layer
            normalization._check_values(input.shape, False, self._get_name())
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


class _CplxMagnitudeBatchNorm(_CplxBatchNorm):
    _parts = 1
    _function = staticmethod(normalization._magnitude_batch_norm)


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


_VARIANT_SHAPES = (
    ("1d", ":math:`(N, C)` or :math:`(N, C, L)`", "8, 3, 5", {2: "(N, C)", 3: "(N, C, L)"}),
    ("2d", ":math:`(N, C, H, W)`", "8, 3, 4, 4", {4: "(N, C, H, W)"}),
    ("3d", ":math:`(N, C, D, H, W)`", "4, 3, 2, 4, 4", {5: "(N, C, D, H, W)"}),
)


class CplxNaiveBatchNorm1d(
    _CplxNaiveBatchNorm, compact=Channelwise("num_features", 1, parts=("real", "imag"))
):
    __doc__ = _NAIVE_DOC.format(
        name="CplxNaiveBatchNorm1d",
        torch_name="BatchNorm1d",
        whitened="CplxBatchNorm1d",
        shape=_VARIANT_SHAPES[0][1],
        example=_VARIANT_SHAPES[0][2],
    )
    _base = torch.nn.BatchNorm1d
    _input_shapes = _VARIANT_SHAPES[0][3]


class CplxNaiveBatchNorm2d(
    _CplxNaiveBatchNorm, compact=Channelwise("num_features", 2, parts=("real", "imag"))
):
    __doc__ = _NAIVE_DOC.format(
        name="CplxNaiveBatchNorm2d",
        torch_name="BatchNorm2d",
        whitened="CplxBatchNorm2d",
        shape=_VARIANT_SHAPES[1][1],
        example=_VARIANT_SHAPES[1][2],
    )
    _base = torch.nn.BatchNorm2d
    _input_shapes = _VARIANT_SHAPES[1][3]


class CplxNaiveBatchNorm3d(
    _CplxNaiveBatchNorm, compact=Channelwise("num_features", 3, parts=("real", "imag"))
):
    __doc__ = _NAIVE_DOC.format(
        name="CplxNaiveBatchNorm3d",
        torch_name="BatchNorm3d",
        whitened="CplxBatchNorm3d",
        shape=_VARIANT_SHAPES[2][1],
        example=_VARIANT_SHAPES[2][2],
    )
    _base = torch.nn.BatchNorm3d
    _input_shapes = _VARIANT_SHAPES[2][3]


class CplxMagnitudeBatchNorm1d(_CplxMagnitudeBatchNorm, compact=Channelwise("num_features", 1)):
    __doc__ = _MAGNITUDE_DOC.format(
        name="CplxMagnitudeBatchNorm1d",
        torch_name="BatchNorm1d",
        shape=_VARIANT_SHAPES[0][1],
        example=_VARIANT_SHAPES[0][2],
    )
    _input_shapes = _VARIANT_SHAPES[0][3]


class CplxMagnitudeBatchNorm2d(_CplxMagnitudeBatchNorm, compact=Channelwise("num_features", 2)):
    __doc__ = _MAGNITUDE_DOC.format(
        name="CplxMagnitudeBatchNorm2d",
        torch_name="BatchNorm2d",
        shape=_VARIANT_SHAPES[1][1],
        example=_VARIANT_SHAPES[1][2],
    )
    _input_shapes = _VARIANT_SHAPES[1][3]


class CplxMagnitudeBatchNorm3d(_CplxMagnitudeBatchNorm, compact=Channelwise("num_features", 3)):
    __doc__ = _MAGNITUDE_DOC.format(
        name="CplxMagnitudeBatchNorm3d",
        torch_name="BatchNorm3d",
        shape=_VARIANT_SHAPES[2][1],
        example=_VARIANT_SHAPES[2][2],
    )
    _input_shapes = _VARIANT_SHAPES[2][3]
