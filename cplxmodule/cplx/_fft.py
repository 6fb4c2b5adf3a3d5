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


def _c2c(real, imag, dim, norm, forward):
    """:func:`torch.fft.fftn` (``ifftn`` unless ``forward``) of ``real + i imag``, complex.

    Parts that are the halves of one buffer (the gradient of an interleaved
    output) are read in place; others are interleaved by
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
    return transform(input, dim=dim, norm=norm)


@torch.library.custom_op("cplxmodule::fft_c2c", mutates_args=())
def fft_c2c(
    real: torch.Tensor, imag: torch.Tensor, dim: list[int], norm: str, forward: bool,
) -> torch.Tensor:
    """The transform of ``real + i imag`` (see ``_c2c``), interleaved: ``(..., 2)``, contiguous."""
    return torch.view_as_real(_c2c(real, imag, dim, norm, forward)).contiguous()


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


@torch.library.custom_op("cplxmodule::fft_c2c_split", mutates_args=())
def fft_c2c_split(
    real: torch.Tensor, imag: torch.Tensor, dim: list[int], norm: str, forward: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The transform of ``real + i imag`` (see ``_c2c``), its two parts, each contiguous.

    For the outputs of a transform: dense parts take their gradients as they
    come (a compiled graph copies a gradient into the strides of its output,
    those of a view of an interleaved buffer), and the gradients go to the
    adjoint transform with no copy.
    """
    spectrum = _c2c(real, imag, dim, norm, forward)
    return spectrum.real.contiguous(), spectrum.imag.contiguous()


@fft_c2c_split.register_fake
def _(real, imag, dim, norm, forward):
    return real.new_empty(real.shape), real.new_empty(real.shape)


def _c2c_split_backward(ctx, grad_real, grad_imag):
    grad = fft_c2c(grad_real, grad_imag, ctx.dim, _ADJOINT_NORM[ctx.norm], not ctx.forward)
    return grad[..., 0], grad[..., 1], None, None, None


fft_c2c_split.register_autograd(_c2c_split_backward, setup_context=_c2c_setup)


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
