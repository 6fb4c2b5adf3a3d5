"""Where the two parts of a :class:`Cplx` are the halves of one buffer, and that buffer.

A product of the strategy ``"native"`` returns the parts of one complex
tensor, and a split activation on such parts returns the halves of one real
``(..., 2)`` tensor; the next product packs them with no copy, and the next
elementwise op runs once on the buffer instead of once per part. Only the
memory layout is read here (never the values), and only eagerly: compiled
and traced code cannot see storage, and plans its memory anyway.
"""

import torch

from ._dtypes import NATIVE_DTYPES


def _eager():
    """Whether autograd runs eagerly: not compiling, tracing, nor under :mod:`torch.func`.

    Only then are storage and custom autograd functions what they seem:
    compiled and traced code plans its own memory, and the transforms
    differentiate plain views without a custom Function.
    """
    return not (
        torch.compiler.is_compiling()
        or torch._C._get_tracing_state() is not None
        or torch._C._are_functorch_transforms_active()
    )


def _as_complex(pairs):
    """The complex tensor that the ``(..., 2)`` ``pairs`` views, or a copy's where it views none."""
    if pairs.stride(-1) != 1 or pairs.storage_offset() % 2 or any(
        stride % 2 for stride in pairs.stride()[:-1]
    ):
        # a copy, not ``contiguous()``: a contiguous tensor at an odd offset has no view
        pairs = pairs.clone(memory_format=torch.contiguous_format)
    return torch.view_as_complex(pairs)


def _complex_view(real, imag):
    """The complex tensor whose parts are ``real`` and ``imag``, if one views them."""
    view = _pair_view(real, imag)
    return view if view is None or view.is_complex() else torch.view_as_complex(view)


def _pair_view(real, imag):
    """A complex tensor whose parts are ``real`` and ``imag``, or a real ``(..., 2)`` one whose
    halves they are, if they view one buffer.

    The parts of a complex tensor ``c`` (``c.real`` and ``c.imag``, as every
    product of the strategy ``"native"`` returns) give back ``c`` itself: no
    new tensor at all, and autograd sees the tensor that was computed. Other
    interleaved parts (``from_interleaved_real(t, copy=False)``, a slice of
    such parts) give a view of the buffer both are views of. Parts whose
    values are not what their memory holds (the lazily negated imaginary
    part of a conjugate view) and parts that require grad while the buffer
    they view does not carry it to them are never viewed.
    """
    base = real._base
    if base is not None and imag._base is base and _carries_grad(real, imag, base):
        # the two common layouts first, recognised without a new view: the
        # parts of a complex tensor, and the halves of a real ``(..., 2)``
        # one (the output of a split activation on such parts)
        if base.is_complex():
            if _parts_of(real, imag, base):
                return base
        elif _halves_of(real, imag, base):
            return base
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
    return _interleaved_buffer(real, imag, base)


def _carries_grad(real, imag, base):
    """Whether autograd carries the gradients of ``real`` and ``imag`` to ``base``, their base.

    Parts taken under ``no_grad`` from a tensor that requires grad say they
    require grad too, but are cut from its graph: a view of that tensor
    would make them differentiable.
    """
    if not base.requires_grad:
        return not real.requires_grad
    return real.grad_fn is not None and imag.grad_fn is not None


def _parts_of(real, imag, base):
    """Whether ``real`` and ``imag`` are ``base.real`` and ``base.imag``, values included."""
    offset = 2 * base.storage_offset()
    stride = real.stride()
    return (
        real.storage_offset() == offset
        and imag.storage_offset() == offset + 1
        and real.shape == base.shape
        and stride == imag.stride()
        and all(a == 2 * b for a, b in zip(stride, base.stride()))
        and real.dtype in NATIVE_DTYPES
        and not (base.is_conj() or base.is_neg() or real.is_neg() or imag.is_neg())
    )


def _halves_of(real, imag, base):
    """Whether the real ``base`` is ``(*real.shape, 2)`` holding ``real`` and ``imag``."""
    offset = base.storage_offset()
    stride = real.stride()
    return (
        real.storage_offset() == offset
        and imag.storage_offset() == offset + 1
        and base.dim() == real.dim() + 1
        and base.stride(-1) == 1
        and base.shape[-1] == 2
        and base.shape[:-1] == real.shape
        and base.stride()[:-1] == stride
        and stride == imag.stride()
        and real.dtype in NATIVE_DTYPES
        and not (base.is_neg() or real.is_neg() or imag.is_neg())
    )


def _interleaved(real, imag):
    """The real ``(..., 2)`` tensor whose halves are ``real`` and ``imag``, or ``None``.

    Its ``[..., 0]`` is ``real`` and its ``[..., 1]`` is ``imag``, in memory
    and for autograd, so that an elementwise op on it is the op on each part,
    in one call; ``None`` where the parts are not the halves of one buffer
    (then the caller works on the parts) and under compilation, tracing
    and :mod:`torch.func` transforms, which do not see storage.
    """
    if not _eager():
        return None
    view = _pair_view(real, imag)
    return view if view is None or not view.is_complex() else torch.view_as_real(view)


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
    if not _carries_grad(real, imag, base):
        return None
    if base.is_complex():
        if base.is_conj() or base.is_neg():
            return None
        base = torch.view_as_real(base)
    if base.dtype != real.dtype or base.is_neg():
        return None
    return base.as_strided((*real.shape, 2), (*real.stride(), 1), real.storage_offset())


def _same_memory(real, imag):
    # the caller checked that ``imag`` starts one element after ``real`` in
    # its storage: then it does in memory exactly when the storages are one
    # (meta and empty tensors have no memory: their pointers are 0)
    return real.data_ptr() != 0 and imag.data_ptr() == real.data_ptr() + real.element_size()


def _pairs(input, dim):
    """``input`` with dimension ``dim`` (of even size) split into ``(size / 2, 2)``: a view.

    Splitting one dimension in two is a view for any strides.
    """
    if torch.jit.is_tracing():
        # torch's TorchScript ONNX exporter types the result of ``unflatten``
        # with the trace's sizes, and then bakes the batch size into every
        # size read downstream; ``view`` with the sizes keeps it symbolic
        shape = input.shape
        return input.view(*shape[:dim], shape[dim] // 2, 2, *shape[dim + 1:])
    return input.unflatten(dim, (-1, 2))
