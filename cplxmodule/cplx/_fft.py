r"""Torch's complex FFT kernels as operators on real tensors, for compiled graphs.

Inductor has no complex kernels: a native complex tensor in a compiled graph
makes every op and view around it fall back to eager kernels, and each change
of layout between the split parts and the complex tensor a copy. Under
:func:`torch.compile` the transforms of :mod:`~cplxmodule.cplx.spectral` call
instead the operators below, each opaque to the compiler, whose inputs are
the two real parts, or the ``(..., 2)`` layout of torch (see
:func:`torch.view_as_real`) when the graph computes the input, and whose
outputs are real: the transform in that layout, or its two parts. The
kernel is torch's own FFT, and everything around it (padding, framing,
windows, overlap-add) is real ops that inductor fuses. Their gradients are
again such operators (the adjoint transform), so no complex tensor appears
in a compiled graph, nor in its backward.
"""

import torch

from ._views import _as_complex, _complex_view

__all__: list[str] = []

# the scaling of the adjoint transform: that of ``fftn(norm="backward")``
# (none) is ``ifftn(norm="forward")`` (none), and so on
_ADJOINT_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _c2c(real, imag, dim, norm, forward):
    """:func:`torch.fft.fftn` (``ifftn`` unless ``forward``) of ``real + i imag``, complex.

    Parts that are the halves of one buffer are read in place; others are interleaved by
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
    *_, ctx.dim, ctx.norm, ctx.forward = inputs


def _c2c_backward(ctx, grad):
    # the gradient of a linear map is its adjoint: the transform the other way
    grad = fft_interleaved(grad, ctx.dim, _ADJOINT_NORM[ctx.norm], not ctx.forward)
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


# The same transforms of an interleaved ``(..., 2)`` input, for an input that
# the graph computes (a cropped spectrum, the gradient of an interleaved
# output): inductor then writes it into one buffer, which the FFT reads as a
# complex tensor with no copy. Passed as two parts, the parts would be two
# buffers of that layout, each half empty, and interleaved again by a copy.
def _interleaved_c2c(input, dim, norm, forward):
    """:func:`torch.fft.fftn` (``ifftn`` unless ``forward``) of the ``(..., 2)`` ``input``, complex."""
    transform = torch.fft.fftn if forward else torch.fft.ifftn
    return transform(_as_complex(input), dim=dim, norm=norm)


@torch.library.custom_op("cplxmodule::fft_interleaved", mutates_args=())
def fft_interleaved(
    input: torch.Tensor, dim: list[int], norm: str, forward: bool,
) -> torch.Tensor:
    """The transform of the ``(..., 2)`` ``input``, interleaved: ``(..., 2)``, contiguous."""
    return torch.view_as_real(_interleaved_c2c(input, dim, norm, forward)).contiguous()


@fft_interleaved.register_fake
def _(input, dim, norm, forward):
    return input.new_empty(input.shape)


def _interleaved_backward(ctx, grad):
    return fft_interleaved(grad, ctx.dim, _ADJOINT_NORM[ctx.norm], not ctx.forward), None, None, None


fft_interleaved.register_autograd(_interleaved_backward, setup_context=_c2c_setup)


@torch.library.custom_op("cplxmodule::fft_interleaved_split", mutates_args=())
def fft_interleaved_split(
    input: torch.Tensor, dim: list[int], norm: str, forward: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The transform of the ``(..., 2)`` ``input``, its two parts, each contiguous (see ``fft_c2c_split``)."""
    spectrum = _interleaved_c2c(input, dim, norm, forward)
    return spectrum.real.contiguous(), spectrum.imag.contiguous()


@fft_interleaved_split.register_fake
def _(input, dim, norm, forward):
    return input.new_empty(input.shape[:-1]), input.new_empty(input.shape[:-1])


def _interleaved_split_backward(ctx, grad_real, grad_imag):
    grad = fft_c2c(grad_real, grad_imag, ctx.dim, _ADJOINT_NORM[ctx.norm], not ctx.forward)
    return grad, None, None, None


fft_interleaved_split.register_autograd(_interleaved_split_backward, setup_context=_c2c_setup)


# The real-to-complex transform (:func:`torch.fft.rfft`) of real frames and
# its inverse (:func:`torch.fft.irfft`), for the one-sided short-time
# transforms: half the work of the complex transform of the same frames. The
# adjoint of the one-sided transform of length ``n`` is the inverse real
# transform of the gradient with its interior bins (all but the zero and the
# Nyquist frequency) halved, and that of the inverse is the one-sided
# transform with them doubled: an inverse real transform counts each interior
# bin twice (for itself and its conjugate) and reads only the real part of
# the other two, which the gradient of a real signal's transform has alone.
def _bin_weights(n, like, interior):
    """``interior`` at the bins ``0 < k < n / 2`` of a one-sided spectrum of length ``n``, else 1."""
    k = torch.arange(n // 2 + 1, device=like.device)
    return torch.where((k > 0) & (2 * k < n), interior, 1.0).to(like.dtype)


def _along(weights, dim, ndim):
    """``weights`` shaped to broadcast along dimension ``dim`` of an ``ndim``-d tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return weights.view(shape)


@torch.library.custom_op("cplxmodule::fft_r2c_split", mutates_args=())
def fft_r2c_split(
    input: torch.Tensor, dim: int, norm: str,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The one-sided transform of the real ``input`` along ``dim``, its two parts, each contiguous."""
    spectrum = torch.fft.rfft(input, dim=dim, norm=norm)
    return spectrum.real.contiguous(), spectrum.imag.contiguous()


@fft_r2c_split.register_fake
def _(input, dim, norm):
    shape = list(input.shape)
    shape[dim] = shape[dim] // 2 + 1
    return input.new_empty(shape), input.new_empty(shape)


def _r2c_setup(ctx, inputs, output):
    input, ctx.dim, ctx.norm = inputs
    ctx.n = input.shape[ctx.dim]


def _r2c_backward(ctx, grad_real, grad_imag):
    weights = _along(_bin_weights(ctx.n, grad_real, 0.5), ctx.dim, grad_real.dim())
    grad = fft_c2r(grad_real * weights, grad_imag * weights, ctx.dim, ctx.n,
                   _ADJOINT_NORM[ctx.norm])
    return grad, None, None


fft_r2c_split.register_autograd(_r2c_backward, setup_context=_r2c_setup)


@torch.library.custom_op("cplxmodule::fft_c2r", mutates_args=())
def fft_c2r(
    real: torch.Tensor, imag: torch.Tensor, dim: int, n: int, norm: str,
) -> torch.Tensor:
    """The real signal of length ``n`` of the one-sided spectrum ``real + i imag`` along ``dim``."""
    spectrum = _complex_view(real, imag)
    if spectrum is None:
        spectrum = torch.complex(real, imag)
    return torch.fft.irfft(spectrum, n=n, dim=dim, norm=norm).contiguous()


@fft_c2r.register_fake
def _(real, imag, dim, n, norm):
    shape = list(real.shape)
    shape[dim] = n
    return real.new_empty(shape)


def _c2r_setup(ctx, inputs, output):
    *_, ctx.dim, ctx.n, ctx.norm = inputs


def _c2r_backward(ctx, grad):
    real, imag = fft_r2c_split(grad, ctx.dim, _ADJOINT_NORM[ctx.norm])
    weights = _along(_bin_weights(ctx.n, grad, 2.0), ctx.dim, grad.dim())
    return real * weights, imag * weights, None, None, None


fft_c2r.register_autograd(_c2r_backward, setup_context=_c2r_setup)


def analytic_gain(n, like):
    """The gain of the analytic signal on the spectrum of length ``n``, of ``like``'s dtype."""
    # 1 at the zero (and an even length's Nyquist) frequency, 2 at the
    # positive ones, 0 at the negative ones
    k = torch.arange(n, device=like.device)
    gain = torch.where((k == 0) | (2 * k == n), 1.0, torch.where(2 * k < n, 2.0, 0.0))
    return gain.to(like.dtype)


def analytic_signal(input, dim):
    """The analytic signal of a native (real or complex) tensor along ``dim``: complex."""
    shape = [1] * input.dim()
    shape[dim] = input.shape[dim]
    gain = analytic_gain(input.shape[dim], input.real if input.is_complex() else input)
    return torch.fft.ifft(torch.fft.fft(input, dim=dim) * gain.view(shape), dim=dim)


# Compiled, the analytic signal of a real x is x + i H(x), with H the Hilbert
# transform: the real part of F^-1 diag(h) F x is x itself (h doubles the
# positive frequencies and zeroes the negative ones), and H(x) is real, the
# inverse real FFT of -i times the half spectrum, zero at the zero and the
# Nyquist frequencies: two real transforms, whose outputs are the dense parts
# as they come, where the complex transforms of eager code, the product by h
# and a copy of each part cost about twice as much (forward and backward:
# 0.43 - 0.50 of torch's complex time, eager 0.85 - 1.06,
# benchmarks/test_bench_spectral.py). H is antisymmetric (its adjoint is -H),
# so its gradient is -H.
def hilbert_gain(n, like):
    """The factor of the Hilbert transform on the half spectrum of length ``n``, complex."""
    k = torch.arange(n // 2 + 1, device=like.device)
    positive = (k > 0) & (2 * k < n)
    return torch.complex(torch.zeros_like(k, dtype=like.dtype), -positive.to(like.dtype))


@torch.library.custom_op("cplxmodule::hilbert_transform", mutates_args=())
def hilbert_transform(input: torch.Tensor, dim: int) -> torch.Tensor:
    """The Hilbert transform of the real ``input`` along ``dim``: real, contiguous."""
    n = input.shape[dim]
    shape = [1] * input.dim()
    shape[dim] = n // 2 + 1
    spectrum = torch.fft.rfft(input, dim=dim)
    spectrum *= hilbert_gain(n, input).view(shape)
    return torch.fft.irfft(spectrum, n=n, dim=dim).contiguous()


@hilbert_transform.register_fake
def _(input, dim):
    return input.new_empty(input.shape)


def _hilbert_setup(ctx, inputs, output):
    ctx.dim = inputs[-1]


def _hilbert_backward(ctx, grad):
    return -hilbert_transform(grad, ctx.dim), None


hilbert_transform.register_autograd(_hilbert_backward, setup_context=_hilbert_setup)
