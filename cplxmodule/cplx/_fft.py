r"""Torch's complex FFT kernels as operators on real tensors, for compiled graphs.

Inductor has no complex kernels: a native complex tensor in a compiled graph
makes every op and view around it fall back to eager kernels, and each change
of layout between the split parts and the complex tensor a copy. Under
:func:`torch.compile` the transforms of :mod:`~cplxmodule.cplx.spectral` call
instead the operators below, each opaque to the compiler, whose inputs are
the two real parts and whose output is real, in torch's ``(..., 2)`` layout
(see :func:`torch.view_as_real`): the kernel is torch's own FFT, and
everything around it (padding, framing, windows, overlap-add) is real ops
that inductor fuses. Their gradients are again such operators (the adjoint
transform), so no complex tensor appears in a compiled graph, nor in its
backward.
"""

import torch

from ._views import _complex_view

__all__: list[str] = []

# the scaling of the adjoint transform: that of ``fftn(norm="backward")``
# (none) is ``ifftn(norm="forward")`` (none), and so on
_ADJOINT_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


@torch.library.custom_op("cplxmodule::fft_c2c", mutates_args=())
def fft_c2c(
    real: torch.Tensor, imag: torch.Tensor, dim: list[int], norm: str, forward: bool,
) -> torch.Tensor:
    """:func:`torch.fft.fftn` (``ifftn`` unless ``forward``) of ``real + i imag``, ``(..., 2)``.

    The output is contiguous. Parts that are the halves of one buffer (the
    gradient of such an output) are read in place; others are interleaved by
    :func:`torch.complex`, faster than any compiled kernel of inductor, into a
    contiguous tensor whatever their strides (transposed parts, the gradient
    of a short-time spectrum, would otherwise give a transposed tensor that
    the FFT copies again, slowly).
    """
    input = _complex_view(real, imag)
    if input is None:
        input = torch.empty(real.shape, dtype=real.dtype.to_complex(), device=real.device)
        torch.complex(real, imag, out=input)
    transform = torch.fft.fftn if forward else torch.fft.ifftn
    return torch.view_as_real(transform(input, dim=dim, norm=norm)).contiguous()


@fft_c2c.register_fake
def _(real, imag, dim, norm, forward):
    return real.new_empty(real.shape + (2,))


def _c2c_setup(ctx, inputs, output):
    _, _, ctx.dim, ctx.norm, ctx.forward = inputs


def _c2c_backward(ctx, grad):
    # the gradient of a linear map is its adjoint: the transform the other way
    grad = fft_c2c(grad[..., 0], grad[..., 1], ctx.dim, _ADJOINT_NORM[ctx.norm], not ctx.forward)
    return grad[..., 0], grad[..., 1], None, None, None


fft_c2c.register_autograd(_c2c_backward, setup_context=_c2c_setup)


@torch.library.custom_op("cplxmodule::fft_r2c", mutates_args=())
def fft_r2c(input: torch.Tensor, dim: list[int], norm: str) -> torch.Tensor:
    """:func:`torch.fft.fftn` of a real ``input`` (both halves of the spectrum), ``(..., 2)``.

    Torch transforms a real input at about half the cost of a complex one.
    """
    return torch.view_as_real(torch.fft.fftn(input, dim=dim, norm=norm)).contiguous()


@fft_r2c.register_fake
def _(input, dim, norm):
    return input.new_empty(input.shape + (2,))


def _r2c_setup(ctx, inputs, output):
    _, ctx.dim, ctx.norm = inputs


def _r2c_backward(ctx, grad):
    # the real part of the adjoint: the input has no imaginary part to receive the rest
    grad = fft_c2c(grad[..., 0], grad[..., 1], ctx.dim, _ADJOINT_NORM[ctx.norm], False)
    return grad[..., 0], None, None


fft_r2c.register_autograd(_r2c_backward, setup_context=_r2c_setup)


def parts(spectrum, *dims):
    """The real and imaginary parts of an operator's ``(..., 2)`` output, each dense.

    The parts are the two halves of one planar buffer ``(2, ...)``, written
    by one vectorised kernel of inductor; ``dims`` then permute each (as a
    view: a transposition copy fused with the split of the interleaved
    parts runs about four times slower than the two passes). Dense outputs
    of a compiled graph take their gradients as they come, where views of
    the interleaved buffer would have them copied into their own strides
    first.
    """
    real, imag = spectrum.movedim(-1, 0).contiguous().unbind(0)
    return (real.permute(*dims), imag.permute(*dims)) if dims else (real, imag)
