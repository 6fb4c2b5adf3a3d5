"""Per-channel layers: a learnable complex scale per channel and efficient channel attention."""

from __future__ import annotations

import math
from typing import Optional

import torch

from .._kinds import Channelwise
from ... import cplx
from ...cplx._shared import check_choice, check_positive_int, conv_input_shape
from ...cplx._typing import CplxLike, Device
from ...cplx.channel import GATES
from ...cplx.tensor import Cplx
from .base import CplxToCplx, _check_cplx
from .parameter import CplxParameter, _factory_kwargs

__all__ = ["CplxScaling", "CplxECA1d", "CplxECA2d", "CplxECA3d"]


class _ComplexChannelwise(Channelwise):
    """A channelwise kind whose per-channel state is the complex parameter ``weight``."""

    def slice(self, module, index):
        setattr(module, self.count, len(index))
        weight = module.weight
        module.weight = CplxParameter(
            Cplx(weight.real.detach().index_select(-1, index),
                 weight.imag.detach().index_select(-1, index)),
            requires_grad=weight.real.requires_grad,
        )


def _check_channels(layer, input, channels, spatial=None):
    """The input as a :class:`Cplx` of shape ``(N, channels, *)`` (``spatial`` trailing dims)."""
    shape = f"(N, {channels}, *)" if spatial is None else conv_input_shape(channels, spatial)
    if spatial is not None:
        shape = shape.split(" or ")[0]
    input = _check_cplx(layer, input, shape=shape)
    if (
        input.dim() < 2
        or input.shape[1] != channels
        or (spatial is not None and input.dim() != spatial + 2)
    ):
        raise ValueError(
            f"{layer._get_name()}: `input` must have shape {shape}, got {tuple(input.shape)}"
        )
    return input


class CplxScaling(CplxToCplx, compact=_ComplexChannelwise("num_features", None)):
    r"""A learnable complex scale per channel: :math:`y_{n c \ldots} = s_c \, x_{n c \ldots}`.

    Each channel (dim 1) is scaled in modulus and rotated in phase by its
    own complex weight, whatever the number of trailing dimensions. See
    :func:`cplxmodule.cplx.scale_channels`.

    Parameters
    ----------
    num_features : int
        :math:`C`, the size of the input's dim 1.
    device, dtype : optional
        Factory kwargs.

    Raises
    ------
    TypeError
        If ``num_features`` is not an int.
    ValueError
        If ``num_features`` is not positive.

    Shape
    -----
    - Input: :math:`(N, C, *)`.
    - Output: the input's shape.

    Notes
    -----
    The weight starts at :math:`1 + 0i`, where the layer is the identity.
    complextorch's ``ComplexScaling``, the same map, draws the real and
    imaginary parts of its scale from :math:`U(0, 1)` and keeps them as two
    parameters, ``alpha`` and ``beta``; here they are ``weight.real`` and
    ``weight.imag``.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxScaling(3)
    >>> layer(cplx.randn(8, 3, 5)).shape
    torch.Size([8, 3, 5])
    >>> sorted(layer.state_dict())
    ['weight.imag', 'weight.real']
    """

    def __init__(
        self, num_features: int, device: Device = None, dtype: Optional[torch.dtype] = None,
    ) -> None:
        check_positive_int(num_features, "num_features", "CplxScaling")
        super().__init__()
        self.num_features = num_features
        kwargs = _factory_kwargs(device, dtype)
        self.weight = CplxParameter(
            Cplx(torch.empty(num_features, **kwargs), torch.empty(num_features, **kwargs))
        )
        self.reset_parameters()

    def reset_parameters(self):
        """Set the weight to :math:`1 + 0i`."""
        with torch.no_grad():
            self.weight.real.fill_(1.0)
            self.weight.imag.zero_()

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_channels(self, input, self.num_features)
        return cplx.scale_channels(input, self.weight)

    def extra_repr(self):
        return f"{self.num_features}"


class _CplxECANd(CplxToCplx):
    _n: int

    def __init__(
        self,
        channels: int,
        kernel_size: Optional[int] = None,
        gamma: int = 2,
        b: int = 1,
        gate: str = "phase",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        where = self._get_name()
        check_positive_int(channels, "channels", where)
        check_choice(gate, "gate", where, GATES)
        if kernel_size is None:
            check_positive_int(gamma, "gamma", where)
            check_positive_int(b, "b", where)
            kernel_size = cplx.eca_kernel_size(channels, gamma, b)
        else:
            check_positive_int(kernel_size, "kernel_size", where)
            if kernel_size % 2 == 0:
                raise ValueError(f"{where}: `kernel_size` must be odd, got {kernel_size!r}")
        super().__init__()
        self.channels, self.kernel_size, self.gate = channels, kernel_size, gate
        kwargs = _factory_kwargs(device, dtype)
        self.weight = CplxParameter(
            Cplx(torch.empty(kernel_size, **kwargs), torch.empty(kernel_size, **kwargs))
        )
        self.reset_parameters()

    def reset_parameters(self):
        r"""Draw every part of the kernel from :math:`U(\pm 1 / \sqrt{2k})`, as a complex convolution's."""
        bound = 1 / math.sqrt(2 * self.kernel_size)
        with torch.no_grad():
            self.weight.real.uniform_(-bound, bound)
            self.weight.imag.uniform_(-bound, bound)

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_channels(self, input, self.channels, self._n)
        return cplx.efficient_channel_attention(input, self.weight, self.gate)

    def extra_repr(self):
        return f"{self.channels}, kernel_size={self.kernel_size}, gate={self.gate!r}"


_ECA_DOC = r"""Efficient channel attention for {n}d complex inputs (ECA-Net).

    The channel means of the input (over the {n} spatial dimensions) are
    convolved across channels by a complex kernel of odd size :math:`k`
    (zero padded, no bias); their gate multiplies each channel. See
    :func:`cplxmodule.cplx.efficient_channel_attention` for the gates.

    Parameters
    ----------
    channels : int
        :math:`C`, the size of the input's dim 1.
    kernel_size : int, optional
        :math:`k`, odd; by default the paper's
        :func:`~cplxmodule.cplx.eca_kernel_size` of ``channels``, ``gamma``
        and ``b``.
    gamma, b : int, default 2 and 1
        The constants of the paper's rule for ``kernel_size``.
    gate : {{"phase", "modulus"}}, default "phase"
        :math:`\sigma(|a|) e^{{i \arg a}}` (complextorch's gate, which rotates
        the channel's phase) or the real :math:`\sigma(|a|)` (which keeps it).
    device, dtype : optional
        Factory kwargs.

    Raises
    ------
    TypeError
        If an int argument is not an int.
    ValueError
        If ``channels`` is not positive, ``kernel_size`` is even or not
        positive, or ``gate`` is unknown.

    Shape
    -----
    - Input: :math:`{shape}`.
    - Output: the input's shape.

    Notes
    -----
    The kernel is the complex parameter ``weight`` of shape :math:`(k,)`.
    complextorch's ``EfficientChannelAttention{n}d`` with its default mask
    computes the same map with ``gate="phase"``; its kernel is the weight of
    a complex ``Conv1d(1, 1, k)``.

    References
    ----------
    Q. Wang, B. Wu, P. Zhu, P. Li, W. Zuo, Q. Hu, "ECA-Net: efficient channel
    attention for deep convolutional neural networks", CVPR 2020.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxECA{n}d(64)
    >>> layer.kernel_size
    3
    >>> layer(cplx.randn(2, 64, {example})).shape
    torch.Size([2, 64, {example}])
    """


class CplxECA1d(_CplxECANd):
    __doc__ = _ECA_DOC.format(n=1, shape="(N, C, L)", example="5")
    _n = 1


class CplxECA2d(_CplxECANd):
    __doc__ = _ECA_DOC.format(n=2, shape="(N, C, H, W)", example="5, 5")
    _n = 2


class CplxECA3d(_CplxECANd):
    __doc__ = _ECA_DOC.format(n=3, shape="(N, C, D, H, W)", example="5, 5, 5")
    _n = 3
