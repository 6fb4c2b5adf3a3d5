r"""Per-channel maps: a complex scale per channel and efficient channel attention.

The channels are dim 1 of an ``(N, C, *)`` input. :func:`scale_channels`
multiplies channel :math:`c` by a complex :math:`s_c`;
:func:`efficient_channel_attention` multiplies it by a gate computed from the
channel means of the input by a short convolution across channels (Wang et
al. 2020).
"""

from __future__ import annotations

import math

import torch

from ._shared import check_choice, check_positive_int, checked_cplx
from .conv import conv1d
from .polar import phase_sigmoid
from .tensor import Cplx
from ._typing import CplxLike

__all__ = ["scale_channels", "efficient_channel_attention", "eca_kernel_size"]

#: The gates of :func:`efficient_channel_attention`.
GATES = ("phase", "modulus")


def _check_channels(input, weight, weight_shape, where):
    if input.dim() < 2:
        raise ValueError(f"{where}: `input` must have shape (N, C, *), got {tuple(input.shape)}")
    if tuple(weight.shape) != weight_shape:
        raise ValueError(
            f"{where}: `weight` must have shape {weight_shape}, got {tuple(weight.shape)}"
        )


def _per_channel(value, input):
    """``value`` of shape ``(C,)`` or ``(N, C)`` shaped to broadcast along dim 1 of ``input``."""
    return value.reshape(*value.shape, *(1,) * (input.dim() - 2))


def scale_channels(input: CplxLike, scale: CplxLike) -> Cplx:
    r"""Each channel times its complex scale: :math:`y_{n c \ldots} = s_c \, x_{n c \ldots}`.

    Parameters
    ----------
    input : Cplx
        Of shape :math:`(N, C, *)`.
    scale : Cplx
        Of shape :math:`(C,)`.

    Returns
    -------
    Cplx
        Of the input's shape.

    Raises
    ------
    TypeError
        If ``input`` or ``scale`` is not complex.
    ValueError
        If ``scale`` is not of shape ``(C,)``.

    Examples
    --------
    >>> z = Cplx(torch.ones(1, 2, 3), torch.zeros(1, 2, 3))
    >>> s = Cplx(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0]))
    >>> scale_channels(z, s).imag[0, :, 0]
    tensor([0., 2.])
    """
    where = "scale_channels"
    input = checked_cplx(input, where=where)
    scale = checked_cplx(scale, "scale", where=where)
    if input.dim() < 2:
        raise ValueError(f"{where}: `input` must have shape (N, C, *), got {tuple(input.shape)}")
    _check_channels(input, scale, (input.shape[1],), where)
    return input * _per_channel(scale, input)


def eca_kernel_size(channels: int, gamma: int = 2, b: int = 1) -> int:
    r"""The kernel size :math:`k = |\log_2(C) / \gamma + b / \gamma|_\text{odd}` of Wang et al.

    The nearest odd integer at or above the integer part of
    :math:`(\log_2 C + b) / \gamma` (the rule of the paper's code, which
    complextorch follows).

    Examples
    --------
    >>> [eca_kernel_size(c) for c in (16, 64, 256, 1024)]
    [3, 3, 5, 5]
    """
    where = "eca_kernel_size"
    check_positive_int(channels, "channels", where)
    check_positive_int(gamma, "gamma", where)
    t = int(abs((math.log2(channels) + b) / gamma))
    return t if t % 2 else t + 1


def efficient_channel_attention(
    input: CplxLike, weight: CplxLike, gate: str = "phase"
) -> Cplx:
    r"""Efficient channel attention: each channel times a gate from the channel means.

    The input's mean over every dimension past the channel one,
    :math:`m_{nc}`, is convolved across channels with the complex kernel
    :math:`w` of odd size :math:`k` (zero padded, no bias) into
    :math:`a_{nc} = \sum_j w_j \, m_{n, c + j - (k-1)/2}`, and channel
    :math:`c` of sample :math:`n` is multiplied by the gate

    - ``"phase"``: :math:`\sigma(|a|) \, e^{i \arg a}`
      (:func:`~cplxmodule.cplx.phase_sigmoid`, complextorch's gate), which
      scales the modulus by a factor in :math:`[1/2, 1)` and rotates the
      phase; or
    - ``"modulus"``: the real :math:`\sigma(|a|)`, which keeps the phase.

    Parameters
    ----------
    input : Cplx
        Of shape :math:`(N, C, *)`.
    weight : Cplx
        The kernel, of shape :math:`(k,)`, :math:`k` odd.
    gate : {"phase", "modulus"}, default "phase"

    Returns
    -------
    Cplx
        Of the input's shape.

    Raises
    ------
    TypeError
        If ``input`` or ``weight`` is not complex.
    ValueError
        If the shapes do not fit, ``k`` is even, or ``gate`` is unknown.

    References
    ----------
    Q. Wang, B. Wu, P. Zhu, P. Li, W. Zuo, Q. Hu, "ECA-Net: efficient channel
    attention for deep convolutional neural networks", CVPR 2020.

    Examples
    --------
    >>> z = cplx.randn(2, 8, 5, 5)
    >>> w = Cplx(torch.tensor([0.0, 1.0, 0.0]), torch.zeros(3))
    >>> out = efficient_channel_attention(z, w, gate="modulus")
    >>> gate = torch.sigmoid(abs(z.mean(dim=(2, 3))))[..., None, None]
    >>> bool(torch.allclose(out.real, z.real * gate))
    True
    """
    where = "efficient_channel_attention"
    input = checked_cplx(input, where=where)
    weight = checked_cplx(weight, "weight", where=where)
    check_choice(gate, "gate", where, GATES)
    if input.dim() < 2:
        raise ValueError(f"{where}: `input` must have shape (N, C, *), got {tuple(input.shape)}")
    if weight.dim() != 1 or weight.shape[0] % 2 == 0:
        raise ValueError(
            f"{where}: `weight` must have shape (k,) with k odd, got {tuple(weight.shape)}"
        )
    # the size of the trailing dimensions spelt out: -1 is ambiguous for an empty batch
    means = input.reshape(*input.shape[:2], math.prod(input.shape[2:])).mean(dim=-1)
    k = weight.shape[0]
    scores = conv1d(means.unsqueeze(1), weight.reshape(1, 1, k), padding=k // 2).squeeze(1)
    if gate == "phase":
        return input * _per_channel(phase_sigmoid(scores), input)
    return input * _per_channel(torch.sigmoid(abs(scores)), input)
