r"""Torch's complex FFT kernels as operators on real tensors, for compiled graphs.

Inductor has no complex kernels: a native complex tensor in a compiled graph
makes every op and view around it fall back to eager kernels, and each change
of layout between the split parts and the complex tensor a copy. Under
:func:`torch.compile` the transforms of :mod:`~cplxmodule.cplx.spectral` call
instead the operators below, each opaque to the compiler, whose inputs and
outputs are real tensors in torch's ``(..., 2)`` layout (see
:func:`torch.view_as_real`): the kernel is torch's own FFT, and everything
around it (stacking the parts, padding, framing, windows, overlap-add) is
real ops that inductor fuses. Their gradients are again such operators (the
adjoint transform), so no complex tensor appears in a compiled graph, nor in
its backward.
"""

import torch

__all__: list[str] = []

# the scaling of the adjoint transform: that of ``fftn(norm="backward")``
# (none) is ``ifftn(norm="forward")`` (none), and so on
_ADJOINT_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _as_complex(input):
    """The complex tensor viewing a real ``(..., 2)`` tensor, made contiguous first."""
    return torch.view_as_complex(input.contiguous())


@torch.library.custom_op("cplxmodule::fft_c2c", mutates_args=())
def fft_c2c(input: torch.Tensor, dim: list[int], norm: str, forward: bool) -> torch.Tensor:
    """:func:`torch.fft.fftn` (``ifftn`` unless ``forward``) of ``input`` in the ``(..., 2)`` layout.

    ``dim`` counts the complex dimensions from the front (none is the trailing
    pair). The output is contiguous, of the input's shape.
    """
    transform = torch.fft.fftn if forward else torch.fft.ifftn
    return torch.view_as_real(transform(_as_complex(input), dim=dim, norm=norm)).contiguous()


@fft_c2c.register_fake
def _(input, dim, norm, forward):
    return input.new_empty(input.shape)


def _c2c_setup(ctx, inputs, output):
    _, ctx.dim, ctx.norm, ctx.forward = inputs


def _c2c_backward(ctx, grad):
    # the gradient of a linear map is its adjoint: the transform the other way
    return fft_c2c(grad, ctx.dim, _ADJOINT_NORM[ctx.norm], not ctx.forward), None, None, None


fft_c2c.register_autograd(_c2c_backward, setup_context=_c2c_setup)


@torch.library.custom_op("cplxmodule::fft_r2c", mutates_args=())
def fft_r2c(input: torch.Tensor, dim: list[int], norm: str) -> torch.Tensor:
    """:func:`torch.fft.fftn` of a real ``input`` (both halves of the spectrum), ``(..., 2)``.

    Torch transforms a real input at about half the cost of a complex one.
    """
    return torch.view_as_real(torch.fft.fftn(input.contiguous(), dim=dim, norm=norm)).contiguous()


@fft_r2c.register_fake
def _(input, dim, norm):
    return input.new_empty(input.shape + (2,))


def _r2c_setup(ctx, inputs, output):
    _, ctx.dim, ctx.norm = inputs


def _r2c_backward(ctx, grad):
    # the real part of the adjoint: the input has no imaginary part to receive the rest
    return fft_c2c(grad, ctx.dim, _ADJOINT_NORM[ctx.norm], False)[..., 0], None, None


fft_r2c.register_autograd(_r2c_backward, setup_context=_r2c_setup)
