"""Symmetric fixed point with one scale per output channel: the one quantizer of the package.

The quantized twins store what :func:`codes` computes (one scale per
output channel, or a fixed-point format's power of two); the masked layers,
trained with the quantizer in the loop, compute with :func:`fake_quantized`,
the same numbers with a straight-through gradient.
"""

import torch

from ...cplx import Cplx


def _real(weight):
    """A weight's real tensor: a complex weight's parts stacked on a last axis."""
    return torch.stack([weight.real, weight.imag], -1) if isinstance(weight, Cplx) else weight


def channel_codes(weight, bits, axis):
    """``(q, scale)``: integer-valued codes ``|q| <= 2**(bits-1) - 1`` and the scale of each channel.

    ``weight`` (a tensor, or a :class:`Cplx` whose parts share their
    channel's scale) is ``q * scale`` up to rounding; ``axis`` is its output
    channels'. ``q`` has the weight's real shape (a last axis of 2 for a
    complex weight) and its floating dtype; ``scale`` broadcasts against it.
    A channel of zeros has scale 0 and codes 0.
    """
    real = _real(weight).detach()
    # every axis but the channels', a complex weight's parts' included
    dims = [d for d in range(real.dim()) if d != axis]
    largest = real.abs().amax(dim=dims, keepdim=True) if dims else real.abs()
    levels = 2 ** (bits - 1) - 1
    scale = largest / levels
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    return (real / safe).round().clamp(-levels, levels), scale


def power_of_two_codes(weight, bits, fraction):
    """``(q, scale)`` of the fixed-point format of ``bits`` bits, ``fraction`` of them after the point.

    One scale for the whole weight, ``2**-fraction`` (a shift in hardware);
    codes beyond ``2**(bits-1) - 1`` in magnitude saturate.
    """
    real = _real(weight).detach()
    scale = real.new_full((1,) * real.dim(), 2.0 ** -fraction)
    levels = 2 ** (bits - 1) - 1
    return (real / scale).round().clamp(-levels, levels), scale


def codes(weight, bits, axis, fraction=None):
    """:func:`channel_codes`, or with a ``fraction`` :func:`power_of_two_codes`."""
    if fraction is None:
        return channel_codes(weight, bits, axis)
    return power_of_two_codes(weight, bits, fraction)


def fake_quantized(weight, bits, axis, fraction=None):
    """``weight`` rounded to its :func:`codes`, with the identity's gradient (straight through)."""
    q, scale = codes(weight, bits, axis, fraction)
    if isinstance(weight, Cplx):
        delta = (q * scale - _real(weight)).detach()
        return Cplx(weight.real + delta[..., 0], weight.imag + delta[..., 1])
    return weight + (q * scale - weight).detach()


def output_axis(layer):
    """The axis of the output channels of ``layer``'s weight (a transposed convolution's is 1)."""
    return 1 if layer._family.transposed else 0
