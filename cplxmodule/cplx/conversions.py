"""Conversions between :class:`Cplx` and real or native complex layouts."""

from __future__ import annotations

from typing import Optional

import torch

from ._shared import checked_cplx, checked_even_dim, checked_real, describe
from ._views import _complex_view, _eager, _interleaved, _pairs
from .tensor import Cplx, _pair
from ._typing import CplxLike

__all__ = [
    "from_interleaved_real",
    "from_concatenated_real",
    "to_interleaved_real",
    "to_concatenated_real",
    "from_real",
    "to_real",
    "from_complex",
    "to_complex",
    "from_view_as_real",
    "to_view_as_real",
]


def from_interleaved_real(input: torch.Tensor, copy: bool = True, dim: int = -1) -> Cplx:
    """Read a real tensor holding ``re, im, re, im, ...`` along ``dim`` as complex.

    Parameters
    ----------
    input : torch.Tensor
        Real tensor whose size along ``dim`` is even.
    copy : bool, default True
        Return contiguous copies; with ``False`` the parts are strided views
        of ``input``.
    dim : int, default -1
        The dimension holding the interleaved values.
    """
    dim = checked_even_dim(input, dim, "from_interleaved_real")
    real, imag = _pairs(input, dim).unbind(dim + 1)
    return Cplx(real.clone(), imag.clone()) if copy else Cplx(real, imag)


def from_concatenated_real(input: torch.Tensor, copy: bool = True, dim: int = -1) -> Cplx:
    """Read a real tensor holding all real parts, then all imaginary parts, along ``dim``.

    Parameters
    ----------
    input : torch.Tensor
        Real tensor whose size along ``dim`` is even.
    copy : bool, default True
        Return contiguous copies; with ``False`` the parts are views of ``input``.
    dim : int, default -1
        The dimension holding the concatenated parts.
    """
    dim = checked_even_dim(input, dim, "from_concatenated_real")
    real, imag = input.chunk(2, dim=dim)
    return Cplx(real.clone(), imag.clone()) if copy else Cplx(real, imag)


def to_interleaved_real(input: CplxLike, flatten: bool = True, dim: int = -1) -> torch.Tensor:
    """Write ``input`` as a real tensor with ``re, im`` pairs along ``dim``.

    Parameters
    ----------
    input : Cplx
        The complex tensor.
    flatten : bool, default True
        Merge the pairs into ``dim`` (doubling its size); with ``False``
        the pairs form a new dimension of size two right after ``dim``.
    dim : int, default -1
        The dimension to interleave along.
    """
    input = checked_cplx(input, where="to_interleaved_real")
    dim = dim % max(input.dim(), 1)
    pairs = torch.stack([input.real, input.imag], dim=dim + 1 if input.dim() else 0)
    return pairs.flatten(dim, dim + 1) if flatten and input.dim() else pairs


def to_concatenated_real(input: CplxLike, flatten: Optional[bool] = None, dim: int = -1) -> torch.Tensor:
    """Write ``input`` as a real tensor, all real parts before all imaginary parts along ``dim``.

    ``flatten`` is there for the published signature and must be ``None``
    (a ``ValueError`` otherwise): the halves are always joined along ``dim``.
    """
    if flatten is not None:
        raise ValueError(f"to_concatenated_real: `flatten` must be None, got {flatten!r}")
    input = checked_cplx(input, where="to_concatenated_real")
    return torch.cat([input.real, input.imag], dim=dim)


from_real = from_interleaved_real
to_real = to_interleaved_real


def from_view_as_real(input: torch.Tensor, copy: bool = True) -> Cplx:
    """Read torch's ``(..., 2)`` layout (see :func:`torch.view_as_real`) as complex.

    Parameters
    ----------
    input : torch.Tensor
        Real tensor whose last dimension has size two: ``(re, im)``.
    copy : bool, default True
        Return contiguous copies; with ``False`` the parts are views of
        ``input`` where its strides allow.

    Returns
    -------
    Cplx
        Of shape ``input.shape[:-1]``.

    Raises
    ------
    TypeError
        If ``input`` is not a real tensor.
    ValueError
        If the last dimension of ``input`` is not of size two.
    """
    checked_real(input, where="from_view_as_real")
    if input.dim() == 0 or input.shape[-1] != 2:
        raise ValueError(
            "from_view_as_real: `input` must have a last dimension of size 2,"
            f" got {describe(input)}"
        )
    return from_interleaved_real(input.flatten(-2), copy=copy)


def to_view_as_real(input: CplxLike) -> torch.Tensor:
    """Write ``input`` in torch's ``(..., 2)`` layout (see :func:`torch.view_as_real`).

    Parameters
    ----------
    input : Cplx

    Returns
    -------
    torch.Tensor
        Of shape ``(*input.shape, 2)``, the real part at index 0 of the last
        dimension and the imaginary part at index 1.
    """
    return to_interleaved_real(input, flatten=False)


def from_complex(input: torch.Tensor) -> Cplx:
    """A :class:`Cplx` viewing the parts of a native complex tensor (no copy).

    Parameters
    ----------
    input : torch.Tensor
        Of a complex dtype.

    Returns
    -------
    Cplx
        Whose ``.real`` and ``.imag`` view the real and the imaginary parts
        of ``input``, with the strides of :attr:`torch.Tensor.real` and
        :attr:`torch.Tensor.imag`: writes to them write to ``input``, and
        gradients flow back to it.

    Raises
    ------
    TypeError
        If ``input`` is not a complex tensor.
    """
    if not isinstance(input, torch.Tensor) or not input.is_complex():
        raise TypeError(
            f"from_complex: `input` must be a complex torch.Tensor, got {describe(input)}"
        )
    # the two halves of ``view_as_real``, not ``.real``/``.imag``: their backward
    # stacks the two gradients into one complex gradient in a single copy, where
    # that of ``.real`` and ``.imag`` builds a complex gradient for each and adds
    # them (about a quarter of the time of an FFT's forward and backward); and
    # AOT autograd replays ``.real`` wrongly on some views (the transposed output
    # of ``torch.stft``)
    return Cplx(*torch.view_as_real(input).unbind(-1))


class _Parts(torch.autograd.Function):
    """The two halves of ``view_as_real(input)``, their gradients packed by :func:`torch.complex`.

    The backward of ``view_as_real(input).unbind(-1)`` stacks the two
    gradients along a new last dimension: on CPU a strided copy 6 to 10
    times slower than :func:`torch.complex`, which writes the same
    interleaved buffer, and for a large output as slow as the FFT itself.
    """

    @staticmethod
    def forward(ctx, input):
        return torch.view_as_real(input).unbind(-1)

    @staticmethod
    def backward(ctx, grad_real, grad_imag):
        # grads are materialized: an unused part brings zeros, not None
        return torch.complex(grad_real, grad_imag)


def _from_complex(input):
    """:func:`from_complex` of a complex tensor, unchecked, with the cheaper backward of
    :class:`_Parts` where autograd records it eagerly."""
    if not (input.requires_grad and torch.is_grad_enabled() and _eager()):
        # compiled and traced graphs, and torch.func transforms, keep the
        # plain views: they differentiate those without a custom Function
        return Cplx(*torch.view_as_real(input).unbind(-1))
    return Cplx(*_Parts.apply(input))


def to_complex(input: CplxLike) -> torch.Tensor:
    """A native complex tensor with the values of ``input``.

    Parameters
    ----------
    input : Cplx
        A complex tensor with float32 or float64 parts.

    Returns
    -------
    torch.Tensor
        Of dtype complex64 or complex128. If the parts are the two halves of
        one interleaved buffer (as after :func:`from_complex`, or
        :func:`from_interleaved_real` with ``copy=False``), the result views
        that buffer and shares its memory; otherwise (and always under
        :func:`torch.compile`) the values are copied.

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.

    Examples
    --------
    >>> w = torch.randn(3, dtype=torch.complex64)
    >>> to_complex(from_complex(w)).data_ptr() == w.data_ptr()
    True
    """
    input = checked_cplx(input, where="to_complex")
    return _to_complex(input.real, input.imag)


def _to_complex(real, imag):
    """:func:`to_complex` of the parts, unchecked: a view where there is one, else a copy."""
    # Storage addresses cannot be traced by torch.compile, which plans the
    # memory of its graphs anyway: there the values are always copied.
    if not torch.compiler.is_compiling():
        view = _complex_view(real, imag)
        if view is not None:
            return view
    return torch.complex(real, imag)


def _split_apply(z, f, args=(), kwargs=None, compiled=None):
    """``Cplx(f(z.real, *args, **kwargs), f(z.imag, ...))`` for an elementwise ``f``, in one call where it can.

    Where the parts are the halves of one buffer (the output of a
    ``"native"`` product, or of this function), ``f`` runs once on the
    buffer: one kernel instead of two, and the output's parts are again the
    halves of one buffer, which the next product packs for free. ``f`` must
    act on each element alone (see ``_ELEMENTWISE``). ``compiled``, if not
    None, is what compiled code calls instead (``_COMPILED[f]``).
    """
    kwargs = kwargs or {}
    if compiled is not None and torch.compiler.is_compiling() and not torch.compiler.is_exporting():
        f, args, kwargs = compiled, (), {}
    buffer = _interleaved(z.real, z.imag)
    if buffer is None:
        return Cplx(f(z.real, *args, **kwargs), f(z.imag, *args, **kwargs))
    return _pair(*f(buffer, *args, **kwargs).unbind(-1))


class _ReLU(torch.autograd.Function):
    """``torch.relu`` whose backward multiplies by the sign of the output, a float.

    Compiled, autograd's ReLU saves its mask ``output <= 0`` as a boolean
    tensor wherever the output itself is not kept for the backward (before
    a max pooling, say): the partitioner keeps the smallest tensor. Inductor
    (torch 2.13, CPU) stores and loads boolean tensors about 40 times
    slower than floats, which made the demo's compiled training step 1.8x
    slower than eager; the sign of the output (0 or 1) is a float that the
    backward reads as fast as any. The gradient is torch's (zero at zero)
    for every finite gradient and input.
    """

    @staticmethod
    def forward(input):
        return torch.relu(input)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        (output,) = ctx.saved_tensors
        return grad * torch.sign(output)


def _compiled_relu(input):
    """ReLU for compiled graphs: :class:`_ReLU` where autograd tracks ``input``."""
    if torch.is_grad_enabled() and input.requires_grad:
        return _ReLU.apply(input)
    return torch.relu(input)


#: what compiled code calls instead of an elementwise function or module (see `_split_apply`)
_COMPILED = {
    torch.relu: _compiled_relu,
    torch.nn.functional.relu: _compiled_relu,
    torch.nn.ReLU: _compiled_relu,
}


def _elementwise_table():
    nn, functional = torch.nn, torch.nn.functional
    modules = (
        "ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish",
        "Sigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish", "Softplus", "Softsign",
        "Softshrink", "Hardshrink", "Tanhshrink", "LogSigmoid", "Threshold", "Identity",
    )
    functions = [getattr(functional, name) for name in (
        "relu", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "silu", "mish",
        "sigmoid", "tanh", "hardtanh", "hardsigmoid", "hardswish", "softplus", "softsign",
        "softshrink", "hardshrink", "tanhshrink", "logsigmoid", "threshold",
    )]
    functions += [getattr(torch, name) for name in (
        "relu", "sigmoid", "tanh", "sin", "cos", "exp", "abs", "square", "clamp", "sign",
    )]
    return frozenset(getattr(nn, name) for name in modules) | frozenset(functions)


#: torch's activation layers and functions (and a few elementwise functions)
#: that act on each element alone, with no state and no randomness, so that
#: a split layer may apply them to both parts at once (see `_split_apply`).
_ELEMENTWISE = _elementwise_table()
