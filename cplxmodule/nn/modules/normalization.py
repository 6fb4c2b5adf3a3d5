r"""Complex layer normalisation: :math:`2 \times 2` whitening per sample."""

from __future__ import annotations

import torch

from ...cplx import normalization
from ...cplx._shared import (
    check_divides,
    check_non_negative_int,
    check_positive_int,
    check_trailing_shape,
    ntuple,
)
from .batchnorm import _CplxNormBase
from typing import Optional, Sequence, Union
from ...cplx._typing import Device

__all__ = [
    "CplxLayerNorm",
    "CplxGroupNorm",
    "CplxInstanceNorm1d",
    "CplxInstanceNorm2d",
    "CplxInstanceNorm3d",
    "CplxRMSNorm",
]


class CplxLayerNorm(_CplxNormBase):
    r"""Complex layer normalisation over the trailing ``normalized_shape`` dims.

    Each sample's (real, imaginary) pairs are centred and multiplied by the
    inverse square root of their :math:`2 \times 2` covariance over the
    trailing dimensions, then mapped elementwise by a learnable real
    :math:`2 \times 2` ``weight`` and shifted by a complex ``bias``; see
    :func:`cplxmodule.cplx.layer_norm`. The arguments are those of
    :class:`torch.nn.LayerNorm`.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The trailing shape to normalise over.
    eps : float
        Added to the diagonal of each covariance for numerical stability.
    elementwise_affine : bool
        Learn ``weight`` (initialised to identity maps) and ``bias`` (zero).
    bias : bool
        Learn ``bias`` too (only with ``elementwise_affine``).
    device, dtype
        Factory arguments for the parameters.

    Shape
    -----
    - Input: ``(*, *normalized_shape)``.
    - Output: the input's shape.

    Attributes
    ----------
    weight : torch.nn.Parameter or None
        Real :math:`(2, 2, \text{normalized\_shape})` affine maps.
    bias : torch.nn.Parameter or None
        Real :math:`(2, \text{normalized\_shape})` shifts, real parts in row 0.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input's trailing shape is not ``normalized_shape``.

    Examples
    --------
    >>> ln = CplxLayerNorm(16)
    >>> ln(cplx.randn(4, 10, 16)).shape
    torch.Size([4, 10, 16])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    _repr_values = ("normalized_shape",)
    _repr_names = ("eps", "elementwise_affine")

    def __init__(
        self,
        normalized_shape: Union[int, Sequence[int]],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        normalized_shape = _checked_shape(self, normalized_shape)
        super().__init__(
            normalized_shape, eps, None, elementwise_affine, elementwise_affine and bias,
            device=device, dtype=dtype,
        )
        self.normalized_shape = normalized_shape
        self.elementwise_affine = elementwise_affine

    def _check_input_dim(self, input):
        check_trailing_shape(input, self.normalized_shape, "input", self._get_name())

    def _normalize(self, input):
        return normalization._layer_norm(
            input, self.normalized_shape, self.weight, self.bias, self.eps, self._get_name()
        )


class CplxGroupNorm(_CplxNormBase):
    r"""Complex group normalisation: :math:`2 \times 2` whitening per sample and group.

    The channels are split into ``num_groups`` groups; within each sample,
    the (real, imaginary) pairs of a group are centred and multiplied by the
    inverse square root of their :math:`2 \times 2` covariance, then each
    channel is mapped by a learnable real :math:`2 \times 2` ``weight`` and
    shifted by a complex ``bias``, as in :class:`CplxBatchNorm1d`; see
    :func:`cplxmodule.cplx.group_norm`. No statistic crosses the batch, in
    training as in evaluation. The arguments are those of
    :class:`torch.nn.GroupNorm`.

    Parameters
    ----------
    num_groups : int
        The number of groups; it must divide ``num_channels``.
    num_channels : int
        The number of channels :math:`C`.
    eps : float
        Added to the diagonal of each covariance for numerical stability.
    affine : bool
        Learn ``weight`` (initialised to identity maps) and ``bias`` (zero).
    device, dtype
        Factory arguments for the parameters.

    Shape
    -----
    - Input: :math:`(N, C, *)`.
    - Output: the input's shape.

    Attributes
    ----------
    weight : torch.nn.Parameter or None
        Real :math:`(2, 2, C)` affine maps.
    bias : torch.nn.Parameter or None
        Real :math:`(2, C)` shifts, real parts in row 0.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If ``num_groups`` does not divide ``num_channels``, or the input has
        not ``num_channels`` channels at dimension 1.

    Examples
    --------
    >>> gn = CplxGroupNorm(2, 6)
    >>> gn(cplx.randn(4, 6, 10)).shape
    torch.Size([4, 6, 10])
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]
    _repr_values = ("num_groups", "num_channels")
    _repr_names = ("eps", "affine")

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        where = type(self).__name__
        num_groups = check_positive_int(num_groups, "num_groups", where)
        num_channels = check_non_negative_int(num_channels, "num_channels", where)
        check_divides(num_groups, "num_groups", num_channels, "`num_channels`", where)
        super().__init__((num_channels,), eps, None, affine, affine, device=device, dtype=dtype)
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.affine = affine

    def _check_input_dim(self, input):
        if input.dim() < 2 or input.shape[1] != self.num_channels:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape (N, {self.num_channels}, *),"
                f" got {tuple(input.shape)}"
            )

    def _normalize(self, input):
        return normalization._group_norm(
            input, self.num_groups, self.weight, self.bias, self.eps, self._get_name()
        )


class _CplxInstanceNorm(_CplxNormBase):
    _counts_batches = False
    _function = staticmethod(normalization._instance_norm)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        num_features = check_non_negative_int(num_features, "num_features", type(self).__name__)
        super().__init__(
            (num_features,), eps, momentum, affine, affine, track_running_stats, device, dtype
        )
        self.num_features = num_features
        self.affine = affine

    def _normalize(self, input):
        # an unbatched input is a batch of one, as in torch
        if input.dim() == min(self._input_shapes):
            return super()._normalize(input.unsqueeze(0)).squeeze(0)
        return super()._normalize(input)


_INSTANCE_DOC = r"""Complex instance normalisation over a {shape} input.

    Each channel of each sample is centred and multiplied by the inverse
    square root of the :math:`2 \times 2` covariance of its (real,
    imaginary) pairs over the spatial dimensions, then, if ``affine``, mapped
    by a learnable real :math:`2 \times 2` ``weight`` and shifted by a
    complex ``bias``; see :func:`cplxmodule.cplx.instance_norm`. The
    arguments, defaults and modes are those of :class:`torch.nn.{torch_name}`:
    in training, and in evaluation without running statistics, every sample
    is normalised by its own statistics, never the batch's; with
    ``track_running_stats`` the batch averages of the per-instance statistics
    are accumulated and normalise in evaluation mode.

    Parameters
    ----------
    num_features : int
        The number of channels :math:`C`.
    eps : float
        Added to the diagonal of each covariance for numerical stability.
    momentum : float or None
        Weight of the current batch in the running statistics (``None``
        leaves them unchanged, as torch's instance norms do).
    affine : bool
        Learn ``weight`` (initialised to the identity) and ``bias`` (zero).
    track_running_stats : bool
        Keep running statistics and normalise by them in evaluation mode.
    device, dtype
        Factory arguments for the parameters and buffers.

    Shape
    -----
    - Input: {shape}, or without the batch dimension.
    - Output: the input's shape.

    Attributes
    ----------
    weight : torch.nn.Parameter or None
        Real :math:`(2, 2, C)` affine maps.
    bias : torch.nn.Parameter or None
        Real :math:`(2, C)` shifts, real parts in row 0.
    running_mean : torch.Tensor or None
        :math:`(2, C)` running mean.
    running_var : torch.Tensor or None
        :math:`(2, 2, C)` running covariance (unbiased estimates, as torch).
    num_batches_tracked : torch.Tensor or None
        Kept for the layout of torch's instance norms, which never count.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input is not {shape} (batched or not), or has not
        ``num_features`` channels.

    Examples
    --------
    >>> norm = {name}(3, affine=True)
    >>> norm(cplx.randn({example})).shape
    torch.Size([{example}])
    """


class CplxInstanceNorm1d(_CplxInstanceNorm):
    __doc__ = _INSTANCE_DOC.format(
        name="CplxInstanceNorm1d",
        torch_name="InstanceNorm1d",
        shape=":math:`(N, C, L)`",
        example="4, 3, 8",
    )
    _input_shapes = {2: "(C, L)", 3: "(N, C, L)"}


class CplxInstanceNorm2d(_CplxInstanceNorm):
    __doc__ = _INSTANCE_DOC.format(
        name="CplxInstanceNorm2d",
        torch_name="InstanceNorm2d",
        shape=":math:`(N, C, H, W)`",
        example="4, 3, 5, 5",
    )
    _input_shapes = {3: "(C, H, W)", 4: "(N, C, H, W)"}


class CplxInstanceNorm3d(_CplxInstanceNorm):
    __doc__ = _INSTANCE_DOC.format(
        name="CplxInstanceNorm3d",
        torch_name="InstanceNorm3d",
        shape=":math:`(N, C, D, H, W)`",
        example="2, 3, 2, 4, 4",
    )
    _input_shapes = {4: "(C, D, H, W)", 5: "(N, C, D, H, W)"}


class CplxRMSNorm(_CplxNormBase):
    r"""Phase-preserving complex RMS normalisation over the trailing dimensions.

    .. math::

        y = \frac{z}{\sqrt{\operatorname{mean} |z|^2 + \epsilon}} \, w,

    the mean over the trailing ``normalized_shape`` dimensions of each
    sample; see :func:`cplxmodule.cplx.rms_norm`. The learnable ``weight``
    :math:`w` is real (initialised to one) and scales both parts alike, so
    every value keeps its phase (turned by :math:`\pi` where :math:`w < 0`);
    a complex weight would rotate it. The arguments are those of
    :class:`torch.nn.RMSNorm`.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The trailing shape to normalise over.
    eps : float, optional
        Added to the mean square; ``None`` means the machine epsilon of the
        input's dtype, as in torch.
    elementwise_affine : bool
        Learn the real ``weight``.
    device, dtype
        Factory arguments for the weight.

    Shape
    -----
    - Input: ``(*, *normalized_shape)``.
    - Output: the input's shape.

    Attributes
    ----------
    weight : torch.nn.Parameter or None
        Real scale of shape ``normalized_shape``.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input's trailing shape is not ``normalized_shape``.

    Examples
    --------
    >>> norm = CplxRMSNorm(16)
    >>> z = cplx.randn(4, 16)
    >>> torch.allclose(norm(z).angle, z.angle, atol=1e-5)
    True
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    _parts = 1
    _eps_optional = True
    _repr_values = ("normalized_shape",)
    _repr_names = ("eps", "elementwise_affine")

    def __init__(
        self,
        normalized_shape: Union[int, Sequence[int]],
        eps: Optional[float] = None,
        elementwise_affine: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        normalized_shape = _checked_shape(self, normalized_shape)
        super().__init__(
            normalized_shape, eps, None, elementwise_affine, None, device=device, dtype=dtype
        )
        self.normalized_shape = normalized_shape
        self.elementwise_affine = elementwise_affine

    def _check_input_dim(self, input):
        check_trailing_shape(input, self.normalized_shape, "input", self._get_name())

    def _normalize(self, input):
        return normalization._rms_norm(
            input, self.normalized_shape, self.weight, self.eps, self._get_name()
        )


def _checked_shape(layer, normalized_shape):
    """``normalized_shape`` as a tuple, an int a tuple of one, as torch's norms take it."""
    return ntuple(normalized_shape, None, "normalized_shape", type(layer).__name__, minimum=0)
