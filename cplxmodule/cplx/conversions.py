"""Conversions between :class:`Cplx` and real or native complex layouts."""

import torch

from ._shared import NATIVE_DTYPES, checked_cplx, checked_even_dim, checked_real, describe
from .tensor import Cplx

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


def from_interleaved_real(input, copy=True, dim=-1):
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
    real, imag = input.unflatten(dim, (-1, 2)).unbind(dim + 1)
    return Cplx(real.clone(), imag.clone()) if copy else Cplx(real, imag)


def from_concatenated_real(input, copy=True, dim=-1):
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


def to_interleaved_real(input, flatten=True, dim=-1):
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


def to_concatenated_real(input, flatten=None, dim=-1):
    """Write ``input`` as a real tensor, all real parts before all imaginary parts along ``dim``.

    ``flatten`` is there for the published signature and must be ``None``
    (a ``ValueError`` otherwise): the halves are always joined along ``dim``.
    """
    if flatten is not None:
        raise ValueError(f"`flatten` must be None for to_concatenated_real, got {flatten!r}")
    input = checked_cplx(input, where="to_concatenated_real")
    return torch.cat([input.real, input.imag], dim=dim)


from_real = from_interleaved_real
to_real = to_interleaved_real


def from_view_as_real(input, copy=True):
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


def to_view_as_real(input):
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


def from_complex(input):
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


def to_complex(input):
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


def _complex_view(real, imag):
    """The complex tensor whose parts are ``real`` and ``imag``, if one views them.

    The parts of a complex tensor ``c`` (``c.real`` and ``c.imag``, as every
    product of the strategy ``"native"`` returns) give back ``c`` itself: no
    new tensor at all, and autograd sees the tensor that was computed. Other
    interleaved parts (``from_interleaved_real(t, copy=False)``, a slice of
    such parts) give a view of the buffer both are views of. Parts whose
    values are not what their memory holds (the lazily negated imaginary
    part of a conjugate view) and parts that require grad while the buffer
    they view does not carry it to them are never viewed.
    """
    offset = real.storage_offset()
    # the cheap tests first: separate parts fail them at no cost
    if (
        real.dtype not in NATIVE_DTYPES
        or imag.storage_offset() != offset + 1
        or offset % 2
        or real.stride() != imag.stride()
        or any(s % 2 for s in real.stride())
        or real.is_neg()
        or imag.is_neg()
    ):
        return None
    base = real._base
    if base is not None and imag._base is base and base.is_complex():
        if base.is_conj() or base.is_neg():
            return None
        if (
            real.shape == base.shape
            and offset == 2 * base.storage_offset()
            and real.stride() == tuple(2 * s for s in base.stride())
            and real.requires_grad == base.requires_grad
        ):
            return base
    buffer = _interleaved_buffer(real, imag, base)
    return None if buffer is None else torch.view_as_complex(buffer)


def _interleaved_buffer(real, imag, base):
    """The ``(..., 2)`` real view holding ``real`` and ``imag``, if there is one.

    The view is taken of ``base``, the tensor both parts are views of, so
    that autograd routes the gradient of either half to it; a view of
    ``real`` alone would silently drop the gradient of ``imag``.
    """
    if base is None or imag._base is not base:
        # Without autograd any alias of the memory serves, such as detached parts.
        if real.requires_grad or imag.requires_grad or not _same_memory(real, imag):
            return None
        base = real
    if base.requires_grad != real.requires_grad:
        # parts taken under ``no_grad`` from a tensor that requires grad: a
        # view of that tensor would make them differentiable
        return None
    if base.is_complex():
        if base.is_conj() or base.is_neg():
            return None
        base = torch.view_as_real(base)
    if base.dtype != real.dtype or base.is_neg():
        return None
    return base.as_strided((*real.shape, 2), (*real.stride(), 1), real.storage_offset())


def _same_memory(real, imag):
    if real.device.type == "meta" or real.numel() == 0:
        return False
    return real.untyped_storage().data_ptr() == imag.untyped_storage().data_ptr()
