"""The :class:`Cplx` type: a complex tensor stored as two real tensors."""

from __future__ import annotations

import math
import numbers

import numpy
import torch
import torch.utils._pytree as pytree

from ._dtypes import real_dtype
from ._views import _complex_view
from typing import Any, Callable, Iterator, Optional, Sequence, Union
from ._typing import CplxLike, Device, Index

__all__ = ["Cplx"]


def _operand_parts(other):
    """Split ``other`` into ``(real, imag)``; ``imag`` is ``None`` for reals.

    Returns ``None`` for types that have no complex meaning here, so the
    caller can return ``NotImplemented`` and let Python raise ``TypeError``.
    """
    if isinstance(other, Cplx):
        return other.real, other.imag
    if isinstance(other, torch.Tensor):
        if other.is_complex():
            return other.real, other.imag
        return other, None
    if isinstance(other, bool):
        return None
    if isinstance(other, numbers.Real):
        return other, None
    if isinstance(other, numbers.Complex):
        return other.real, other.imag
    return None


def _broadcast_like(part, other):
    """A fresh tensor with ``part``'s values in the shape and dtype of ``other``."""
    return torch.broadcast_to(part, other.shape).to(other.dtype, copy=True)


def _pair(real, imag):
    """``Cplx(real, imag)`` without the checks of ``Cplx.__init__``, a real cost at small sizes.

    For parts that agree in shape, dtype and device by construction (the
    outputs of one op, or the halves of one tensor).
    """
    z = Cplx.__new__(Cplx)
    z._real, z._imag = real, imag
    return z


def _map_parts(z, f, *args, **kwargs):
    """``Cplx(f(z.real, ...), f(z.imag, ...))``.

    :meth:`Cplx.apply` is public and may be overridden (a
    :class:`~cplxmodule.nn.CplxParameter` is also a module, whose ``apply``
    is :meth:`torch.nn.Module.apply`), so the methods here use this instead.
    """
    return Cplx(f(z.real, *args, **kwargs), f(z.imag, *args, **kwargs))


class Cplx:
    r"""A complex-valued tensor stored as a pair of real tensors.

    Every operation is composed of real torch operations, so autograd,
    devices and dtypes work exactly as for real tensors.

    Parameters
    ----------
    real : torch.Tensor, Cplx, float or complex
        The real part. A Python ``complex`` number, a :class:`Cplx`, or a
        tensor of torch's native complex dtype supplies both parts, and
        then ``imag`` must be omitted.
    imag : torch.Tensor or float, optional
        The imaginary part, of the same shape, dtype and device as ``real``
        (a float with a float ``real``). Zeros if omitted.

    Raises
    ------
    TypeError
        If ``real`` or ``imag`` is not a tensor or a float (an ``int`` is
        refused, as in the published package: ``Cplx(0)`` is more likely a
        mistake than a zero), or if ``imag`` is given together with a value
        that already holds both parts.
    ValueError
        If ``real`` and ``imag`` differ in shape, dtype or device.

    Notes
    -----
    The operators ``+ - * / @`` accept a :class:`Cplx`, a real or native
    complex tensor, or a Python number on either side, and return a
    :class:`Cplx`; anything else raises ``TypeError``. A real tensor on the
    left reaches :class:`Cplx` through :meth:`__torch_function__`, which is
    also how :func:`torch.compile` traces mixed arithmetic without a graph
    break. Under :func:`torch.compile`, ``@`` is not traced (dynamo does not
    trace a user-defined ``__matmul__``): use :func:`cplxmodule.cplx.linear`
    or :func:`cplxmodule.cplx.einsum` in compiled code.

    Examples
    --------
    >>> z = Cplx(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]))
    >>> (z * z.conj).real
    tensor([1., 1.])
    """

    __slots__ = ("_real", "_imag")

    # numpy defers to the reflected operators below instead of building an
    # object array of Cplx elements (``numpy.float64(2) * z`` is a Cplx).
    __array_ufunc__ = None

    def __init__(
        self,
        real: Union[CplxLike, float, complex],
        imag: Optional[Union[torch.Tensor, float]] = None,
    ) -> None:
        if isinstance(real, numbers.Number):
            real, imag = _number_parts(real, imag)

        elif isinstance(real, Cplx) or (
            isinstance(real, torch.Tensor) and real.is_complex()
        ):
            if imag is not None:
                raise TypeError(
                    f"`imag` must be omitted when `real` is a {type(real).__name__}"
                    " with both parts"
                )
            real, imag = real.real, real.imag

        if not isinstance(real, torch.Tensor):
            raise TypeError(
                f"`real` must be a torch.Tensor, got {type(real).__name__}"
            )

        if imag is None:
            imag = torch.zeros_like(real)

        elif not isinstance(imag, torch.Tensor):
            raise TypeError(
                f"`imag` must be a torch.Tensor, got {type(imag).__name__}"
            )

        for attr in ("shape", "dtype", "device"):
            if getattr(real, attr) != getattr(imag, attr):
                raise ValueError(
                    f"`real` and `imag` must have the same {attr}, got "
                    f"{getattr(real, attr)} (real) and {getattr(imag, attr)} (imag)"
                )

        self._real, self._imag = real, imag

    @property
    def real(self) -> torch.Tensor:
        """torch.Tensor: the real part."""
        return self._real

    @property
    def imag(self) -> torch.Tensor:
        """torch.Tensor: the imaginary part."""
        return self._imag

    # construction
    @classmethod
    def empty(
        cls,
        *size: Union[int, Sequence[int]],
        dtype: Optional[torch.dtype] = None,
        device: Device = None,
        requires_grad: bool = False
    ) -> Cplx:
        """An uninitialised :class:`Cplx` of the given size.

        Parameters
        ----------
        *size : int or sequence of int
            The shape, as for :func:`torch.empty`.
        dtype : torch.dtype, optional
            The real dtype of the parts; a complex dtype means its real
            counterpart. Default: :func:`torch.get_default_dtype`.
        device : torch.device, optional
        requires_grad : bool, default False

        Returns
        -------
        Cplx
        """
        return cls._full(torch.empty, torch.empty, size, dtype, device, requires_grad)

    @classmethod
    def zeros(
        cls,
        *size: Union[int, Sequence[int]],
        dtype: Optional[torch.dtype] = None,
        device: Device = None,
        requires_grad: bool = False
    ) -> Cplx:
        """A :class:`Cplx` of zeros of the given size.

        Takes the arguments of :meth:`Cplx.empty`.

        Examples
        --------
        >>> Cplx.zeros(2, 3, dtype=torch.complex128).dtype
        torch.float64
        """
        return cls._full(torch.zeros, torch.zeros, size, dtype, device, requires_grad)

    @classmethod
    def ones(
        cls,
        *size: Union[int, Sequence[int]],
        dtype: Optional[torch.dtype] = None,
        device: Device = None,
        requires_grad: bool = False
    ) -> Cplx:
        """A :class:`Cplx` of ones (``1 + 0j``) of the given size.

        Takes the arguments of :meth:`Cplx.empty`.
        """
        return cls._full(torch.ones, torch.zeros, size, dtype, device, requires_grad)

    @classmethod
    def _full(cls, fill_real, fill_imag, size, dtype, device, requires_grad):
        kwargs = dict(
            dtype=real_dtype(dtype), device=device, requires_grad=requires_grad
        )
        return cls(fill_real(*size, **kwargs), fill_imag(*size, **kwargs))

    @staticmethod
    def from_numpy(array: Any) -> Cplx:
        """A :class:`Cplx` with the values of a numpy array.

        Parameters
        ----------
        array : array_like
            Complex or real values; a complex array's parts are viewed without
            a copy where torch can (see :func:`torch.from_numpy`).

        Returns
        -------
        Cplx
        """
        array = numpy.asarray(array)
        if not numpy.iscomplexobj(array):
            return Cplx(torch.from_numpy(array))
        return Cplx(torch.from_numpy(array.real), torch.from_numpy(array.imag))

    def numpy(self) -> numpy.ndarray:
        """The values as a complex :class:`numpy.ndarray` (a copy).

        Returns
        -------
        numpy.ndarray
            complex64 for float32 parts, complex128 for float64 parts. The
            parts are copied exactly (signed zeros, infinities and NaNs too).

        Raises
        ------
        RuntimeError
            As :meth:`torch.Tensor.numpy`, if a part requires grad or is not
            on the CPU.
        """
        real, imag = self._real.numpy(), self._imag.numpy()
        # Assign the parts: ``real + 1j * imag`` would turn ``-0.0`` into
        # ``0.0`` and an infinite ``imag`` into a NaN real part.
        out = numpy.empty(real.shape, numpy.result_type(real, numpy.complex64))
        out.real, out.imag = real, imag
        return out

    def item(self) -> complex:
        """The value of a one-element :class:`Cplx` as a Python ``complex``.

        Raises
        ------
        ValueError
            If there is not exactly one element, as for a numpy array.
        """
        if self._real.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self._real.item(), self._imag.item())

    def __complex__(self) -> complex:
        return self.item()

    # copy and serialisation: the two parts fully describe the value
    def __reduce__(self) -> tuple[Any, ...]:
        return Cplx, (self._real, self._imag)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(\n  real={self._real},\n  imag={self._imag}\n)"

    # torch-like attributes
    @property
    def shape(self) -> torch.Size:
        """torch.Size: the shape of either part."""
        return self._real.shape

    def size(self, dim: Optional[int] = None) -> Union[torch.Size, int]:
        """The size of the tensor, or of dimension ``dim``."""
        return self._real.size() if dim is None else self._real.size(dim)

    def __len__(self) -> int:
        return len(self._real)

    def dim(self) -> int:
        """The number of dimensions."""
        return self._real.dim()

    @property
    def ndim(self) -> int:
        """int: the number of dimensions."""
        return self._real.dim()

    def numel(self) -> int:
        """The number of complex elements."""
        return self._real.numel()

    @property
    def dtype(self) -> torch.dtype:
        """torch.dtype: the real dtype of each part."""
        return self._real.dtype

    def is_complex(self) -> bool:
        """``True``, as :meth:`torch.Tensor.is_complex` of a complex tensor (published).

        ``dtype`` is the parts' real dtype; this says that the values are
        complex, so code that asks a tensor ``x.is_complex()`` gets the right
        answer for a :class:`Cplx`.
        """
        return True

    @property
    def device(self) -> torch.device:
        """torch.device: the device both parts live on."""
        return self._real.device

    @property
    def requires_grad(self) -> bool:
        """bool: whether either part requires a gradient."""
        return self._real.requires_grad or self._imag.requires_grad

    @property
    def grad(self) -> Optional[Cplx]:
        """Cplx or None: the gradients of the parts, ``None`` if neither has one."""
        re, im = self._real.grad, self._imag.grad
        if re is None and im is None:
            return None
        return Cplx(
            torch.zeros_like(self._real) if re is None else re,
            torch.zeros_like(self._imag) if im is None else im,
        )

    def apply(self, f: Callable[..., torch.Tensor], *args: Any, **kwargs: Any) -> Cplx:
        """Apply the real function ``f`` to each part separately."""
        return _map_parts(self, f, *args, **kwargs)

    # moves
    def to(self, *args: Any, **kwargs: Any) -> Cplx:
        """Move or cast both parts, with the arguments of :meth:`torch.Tensor.to`.

        A complex ``dtype`` is taken to mean its real counterpart, so
        ``z.to(torch.complex128)`` gives float64 parts.
        """
        args = tuple(_to_argument(a) for a in args)
        if "dtype" in kwargs:
            kwargs["dtype"] = real_dtype(kwargs["dtype"])
        return _map_parts(self, torch.Tensor.to, *args, **kwargs)

    def cuda(self, device: Device = None, non_blocking: bool = False) -> Cplx:
        """Move both parts to a CUDA device."""
        return _map_parts(self, torch.Tensor.cuda, device, non_blocking=non_blocking)

    def cpu(self) -> Cplx:
        """Move both parts to the CPU."""
        return _map_parts(self, torch.Tensor.cpu)

    def float(self) -> Cplx:
        """Both parts cast to float32."""
        return self.to(torch.float32)

    def double(self) -> Cplx:
        """Both parts cast to float64."""
        return self.to(torch.float64)

    def half(self) -> Cplx:
        """Both parts cast to float16."""
        return self.to(torch.float16)

    def detach(self) -> Cplx:
        """A :class:`Cplx` sharing storage, cut from the autograd graph."""
        return _map_parts(self, torch.Tensor.detach)

    def clone(self) -> Cplx:
        """A copy of both parts (differentiable)."""
        return _map_parts(self, torch.Tensor.clone)

    def contiguous(self) -> Cplx:
        """Both parts made contiguous."""
        return _map_parts(self, torch.Tensor.contiguous)

    def requires_grad_(self, requires_grad: bool = True) -> Cplx:
        """Set ``requires_grad`` on both parts in place; returns ``self``."""
        self._real.requires_grad_(requires_grad)
        self._imag.requires_grad_(requires_grad)
        return self

    # indexing and iteration
    def __getitem__(self, key: Index) -> Cplx:
        return Cplx(self._real[key], self._imag[key])

    def __setitem__(self, key: Index, value: CplxLike) -> None:
        parts = _operand_parts(value)
        if parts is None:
            raise TypeError(
                f"cannot assign a {type(value).__name__} to a part of a Cplx"
            )
        re, im = parts
        self._real[key] = re
        self._imag[key] = 0.0 if im is None else im

    def __iter__(self) -> Iterator[Cplx]:
        return map(Cplx, self._real, self._imag)

    def __reversed__(self) -> Cplx:
        # a Cplx flipped along its first dimension, as published (and iterable)
        if not self.dim():
            return self
        return _map_parts(self, torch.flip, (0,))

    # shape
    def view(self, *shape: Union[int, Sequence[int]]) -> Cplx:
        """A view with another shape, as :meth:`torch.Tensor.view`."""
        return _map_parts(self, torch.Tensor.view, *shape)

    def view_as(self, other: Union[Cplx, torch.Tensor]) -> Cplx:
        """A view with the shape of ``other``."""
        return self.view(other.shape)

    def reshape(self, *shape: Union[int, Sequence[int]]) -> Cplx:
        """Reshape both parts, as :meth:`torch.Tensor.reshape`."""
        return _map_parts(self, torch.Tensor.reshape, *shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Cplx:
        """Flatten dimensions ``start_dim..end_dim``."""
        return _map_parts(self, torch.flatten, start_dim, end_dim)

    def permute(self, *dims: Union[int, Sequence[int]]) -> Cplx:
        """Permute the dimensions, as :meth:`torch.Tensor.permute`."""
        return _map_parts(self, torch.Tensor.permute, *dims)

    def transpose(self, dim0: int, dim1: int) -> Cplx:
        """Swap dimensions ``dim0`` and ``dim1``."""
        return _map_parts(self, torch.transpose, dim0, dim1)

    def squeeze(self, dim: Optional[int] = None) -> Cplx:
        """Remove dimensions of size one (all, or just ``dim``)."""
        if dim is None:
            return _map_parts(self, torch.squeeze)
        return _map_parts(self, torch.squeeze, dim)

    def unsqueeze(self, dim: int) -> Cplx:
        """Insert a dimension of size one at ``dim``."""
        return _map_parts(self, torch.unsqueeze, dim)

    def t(self) -> Cplx:
        """The transpose of a tensor of at most two dimensions."""
        return _map_parts(self, torch.t)

    def h(self) -> Cplx:
        """The Hermitian (conjugate) transpose of a tensor of at most two dimensions."""
        return self.conj.t()

    # complex structure
    @property
    def conj(self) -> Cplx:
        """Cplx: the complex conjugate (a read-only property, as in cplxmodule)."""
        return Cplx(self._real, -self._imag)

    def conjugate(self) -> Cplx:
        """The complex conjugate."""
        return self.conj

    @property
    def angle(self) -> torch.Tensor:
        """torch.Tensor: the argument, in :math:`[-\\pi, \\pi]` (:func:`torch.atan2` of the parts)."""
        # ``atan2``'s gradient divides by ``real^2 + imag^2``, which underflows
        # (an infinite gradient) below a modulus of about 1e-19 in single
        # precision and overflows (a zero one) above 1e19; the parts scaled
        # by a power of two have the same argument and a square near 1
        real, imag, _ = _rescaled(self._real, self._imag)
        return torch.atan2(imag, real)

    def abs(self) -> torch.Tensor:
        """torch.Tensor: the modulus :math:`|z|`, as ``abs(z)``."""
        return abs(self)

    def sum(self, dim: Optional[int] = None, keepdim: bool = False) -> Cplx:
        """The sum over ``dim`` (all elements if ``None``), as :meth:`torch.Tensor.sum`."""
        return _map_parts(self, torch.sum, dim=dim, keepdim=keepdim)

    def mean(self, dim: Optional[int] = None, keepdim: bool = False) -> Cplx:
        """The mean over ``dim`` (all elements if ``None``), as :meth:`torch.Tensor.mean`."""
        return _map_parts(self, torch.mean, dim=dim, keepdim=keepdim)

    def __abs__(self) -> torch.Tensor:
        return _modulus(self._real, self._imag)

    @classmethod
    def __torch_function__(
        cls, func: Callable[..., Any], types: Any, args: Any = (), kwargs: Any = None,
    ) -> Any:
        """Route torch's arithmetic between a real tensor and a Cplx to Cplx.

        ``tensor + z`` reaches here through ``torch.Tensor.__add__``, and under
        :func:`torch.compile` dynamo rewrites ``z + tensor`` into such calls
        (``torch.Tensor.add(tensor, z)`` for commutative operators, the
        reflected method otherwise); every other torch function is refused.
        """
        methods = _TORCH_OPERATORS.get(getattr(func, "__name__", None))
        if methods is None or kwargs or len(args) != 2:
            return NotImplemented
        left, right = args
        if isinstance(left, Cplx):
            return getattr(left, methods[0])(right)
        return getattr(right, methods[1])(left)

    # arithmetic
    def __pos__(self) -> Cplx:
        return self

    def __neg__(self) -> Cplx:
        return Cplx(-self._real, -self._imag)

    def __add__(self, other: Union[CplxLike, complex]) -> Cplx:
        return _add(self, other, 1)

    def __radd__(self, other: Union[CplxLike, complex]) -> Cplx:
        return _add(self, other, 1)

    def __sub__(self, other: Union[CplxLike, complex]) -> Cplx:
        return _add(self, other, -1)

    def __rsub__(self, other: Union[CplxLike, complex]) -> Cplx:
        return -self + other

    def __mul__(self, other: Union[CplxLike, complex]) -> Cplx:
        parts = _operand_parts(other)
        if parts is None:
            return NotImplemented
        re, im = parts
        if im is None:
            return Cplx(self._real * re, self._imag * re)
        return Cplx(
            self._real * re - self._imag * im,
            self._real * im + self._imag * re,
        )

    __rmul__ = __mul__

    def __truediv__(self, other: Union[CplxLike, complex]) -> Cplx:
        parts = _operand_parts(other)
        if parts is None:
            return NotImplemented
        re, im = parts
        if im is None:
            return Cplx(self._real / re, self._imag / re)
        a, b = self._real, self._imag
        denom = re * re + im * im
        return Cplx((a * re + b * im) / denom, (b * re - a * im) / denom)

    def __rtruediv__(self, other: Union[CplxLike, complex]) -> Cplx:
        if _operand_parts(other) is None:
            return NotImplemented
        denom = self._real * self._real + self._imag * self._imag
        return other * self.conj / denom

    def __matmul__(self, other: Union[CplxLike, complex]) -> Cplx:
        parts = _operand_parts(other)
        if parts is None or not isinstance(other, (Cplx, torch.Tensor)):
            return NotImplemented
        re, im = parts
        if im is None:
            return Cplx(self._real @ re, self._imag @ re)
        return Cplx(
            self._real @ re - self._imag @ im,
            self._real @ im + self._imag @ re,
        )

    def __rmatmul__(self, other: Union[CplxLike, complex]) -> Cplx:
        parts = _operand_parts(other)
        if parts is None or not isinstance(other, torch.Tensor):
            return NotImplemented
        re, im = parts
        if im is None:
            return Cplx(re @ self._real, re @ self._imag)
        return Cplx(
            re @ self._real - im @ self._imag,
            re @ self._imag + im @ self._real,
        )


def _number_parts(real, imag):
    """The parts, as tensors, of a Python number ``real`` and an optional float ``imag``."""
    if isinstance(real, numbers.Integral):
        raise TypeError(
            f"`real` must be a torch.Tensor, a float or a complex number, got "
            f"{type(real).__name__}: write Cplx({float(real)!r}) for a number"
        )
    if not isinstance(real, numbers.Real):
        if imag is not None:
            raise TypeError("`imag` must be omitted when `real` is a complex number")
        value = complex(real)
        return torch.tensor(value.real), torch.tensor(value.imag)
    if imag is not None and (
        not isinstance(imag, numbers.Real) or isinstance(imag, numbers.Integral)
    ):
        raise TypeError(
            f"`imag` must be a float when `real` is a float, got {type(imag).__name__}"
        )
    return torch.tensor(float(real)), torch.tensor(0.0 if imag is None else float(imag))


def _to_argument(arg):
    """A positional argument of :meth:`Cplx.to` as :meth:`torch.Tensor.to` takes it."""
    if isinstance(arg, torch.dtype):
        return real_dtype(arg)
    if isinstance(arg, Cplx):
        return arg.real
    return arg


def _operator_table():
    """The torch functions :meth:`Cplx.__torch_function__` implements.

    Maps a function name to the Cplx methods computing ``func(left, right)``
    when the Cplx is ``left`` and when it is ``right``. ``matmul`` is left
    out on purpose: dynamo hands ``z @ tensor`` over as ``matmul(tensor, z)``,
    which cannot be told apart from ``tensor @ z``.
    """
    table = {}
    for name, function_name in [
        ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("matmul", None),
    ]:
        forward, reflected = f"__{name}__", f"__r{name}__"
        table[forward] = (forward, reflected)
        table[reflected] = (reflected, forward)
        if function_name is not None:
            table[function_name] = (forward, reflected)
    # torch.Tensor.__rtruediv__ is named __rdiv__
    table["__rdiv__"] = table["__rtruediv__"]
    return table


_TORCH_OPERATORS = _operator_table()


def _modulus(real, imag):
    """The modulus of ``real + i imag`` on the parts, with torch's subgradient 0 at zero.

    Never through a copy into a native complex tensor, nor through one
    under :func:`torch.compile` (inductor cannot compile them): there it is
    :func:`torch.hypot` (one fused, exact kernel) with the gradient of
    :class:`_Hypot`, and eagerly too unless the parts already view one
    complex tensor; ONNX has no ``hypot``, so for an export it is
    :func:`_scaled_modulus`, made of ops every exporter knows.
    """
    if torch.onnx.is_in_onnx_export() or torch.compiler.is_exporting():
        return _scaled_modulus(real, imag)
    if torch.compiler.is_compiling() or torch._C._are_functorch_transforms_active():
        return _Hypot.apply(real, imag)
    view = _complex_view(real, imag) if not torch._C._get_tracing_state() else None
    if view is not None:
        # the parts of one complex tensor (the output of a "native" product,
        # of a split activation on one): torch's complex ``abs`` on it, as
        # exact as ``hypot``, with the same gradient, and no slower, while a
        # function of our own would cost more than the kernel at small sizes
        return torch.abs(view)
    # the form of the function that skips the binding of default arguments
    # which ``apply`` does for a separate ``setup_context``
    return _HypotEager.apply(real, imag)


def _hypot_grads(grad, real, imag, modulus):
    # ``part / modulus`` before ``grad``: a subnormal modulus would make
    # ``grad / modulus`` overflow; 0 where the modulus is, as torch's ``abs``
    zero = modulus == 0
    return (
        torch.where(zero, 0, real / modulus) * grad,
        torch.where(zero, 0, imag / modulus) * grad,
    )


class _Hypot(torch.autograd.Function):
    """``hypot`` whose gradient ``part / modulus`` is 0 at zero, as torch's complex ``abs``'s.

    ``torch.hypot``'s own gradient there is NaN (0 / 0). This form, with a
    separate ``setup_context``, is the one :mod:`torch.func` transforms take.
    """

    @staticmethod
    def forward(real, imag):
        return torch.hypot(real, imag)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs, output)

    @staticmethod
    def backward(ctx, grad):
        return _hypot_grads(grad, *ctx.saved_tensors)


class _HypotEager(torch.autograd.Function):
    """:class:`_Hypot` in the form whose ``apply`` is cheaper, outside :mod:`torch.func`."""

    @staticmethod
    def forward(ctx, real, imag):
        modulus = torch.hypot(real, imag)
        ctx.save_for_backward(real, imag, modulus)
        return modulus

    backward = _Hypot.backward


def _rescaled(real, imag, bounded=False):
    r"""``(real / d, imag / d, d)``: the parts divided by a detached power of two ``d`` near their size.

    ``d`` is near ``max(|real|, |imag|)`` (1 where that is 0 or not finite),
    so the larger part comes into :math:`[1/2, 2]`. The division is exact
    (but for parts far smaller than the other, which may round to a
    subnormal), so a function of the parts that does not change under
    scaling, such as the phase or ``z / |z|``, is computed from parts near
    one: its value and gradient neither square a tiny part to zero nor a
    huge one to infinity (the chain rule then divides the gradient by
    ``d``). ``bounded`` keeps ``d`` within :math:`[s, 1 / s]`,
    :math:`s = \sqrt{tiny} \cdot eps`, for a caller that also divides a
    number of its own by ``d`` (modReLU's threshold) and multiplies its
    result by ``d``: the one overflows for the ``d`` of a subnormal part,
    the other's gradient for that of a huge one. The smallest subnormal
    divided by :math:`s` is :math:`\sqrt{tiny}`, whose square is still
    normal, and the largest number divided by :math:`1 / s` squares to a
    finite one. Made of ops every exporter knows (``frexp`` and ``exp2``
    have no ONNX symbolic in the TorchScript exporter); the floor of
    ``log2`` may be one too high just below a power of two, which the upper
    bound keeps from overflowing at the top of the range. Integer parts,
    which have no gradient, are divided by 1.
    """
    if not real.is_floating_point():
        return real, imag, 1
    big = torch.maximum(real.abs(), imag.abs()).detach()
    info = torch.finfo(big.dtype)
    least, greatest = None, math.frexp(info.max)[1] - 1
    if bounded:
        least = math.frexp(math.sqrt(info.tiny) * info.eps)[1] - 1
        greatest = -least
    regular = (big > 0) & torch.isfinite(big)
    exponent = torch.floor(torch.log2(torch.where(regular, big, 1)))
    exponent = exponent.clamp(least, greatest)
    scale = torch.pow(2.0, exponent)
    return real / scale, imag / scale, scale


def _scaled_modulus(real, imag):
    """The modulus by real elementwise ops that every exporter knows.

    The parts are divided by the larger of their magnitudes, so the squares
    neither overflow nor underflow, in half precision too. That scale is
    detached: the modulus does not depend on it, so the gradient is exactly
    ``part / modulus``; at zero (and at an infinite part) every ``where``
    routes the gradient to a constant, which gives 0 as torch's complex
    ``abs`` does.
    """
    inf = float("inf")
    big = torch.maximum(real.abs(), imag.abs()).detach()
    # an infinite part wins over a NaN one, as in C's ``hypot``; a NaN
    # otherwise passes as regular and propagates through the scale
    big = torch.where(torch.isinf(real) | torch.isinf(imag), inf, big)
    regular = (big != 0) & (big != inf)
    scale = torch.where(regular, big, 1)
    u, v = real / scale, imag / scale
    modulus = scale * torch.sqrt(torch.where(regular, u * u + v * v, 1))
    return torch.where(regular, modulus, big)


def _phasor_parts(re, im):
    """The parts of ``z / |z|`` (0 at zero) and ``|z|``, of parts scaled near modulus one.

    The parts come from :func:`_rescaled`. On them the modulus is about
    one, so the gradient of the quotient is that of ``z / |z|`` without a
    square of a tiny modulus.
    """
    modulus = _modulus(re, im)
    zero = modulus == 0
    # the quotient's gradient at zero must not be 0 * inf: it divides by one there
    safe = torch.where(zero, 1, modulus)
    return torch.where(zero, 0, re / safe), torch.where(zero, 0, im / safe), modulus


def _add(z, other, sign):
    """``z + sign * other`` with broadcasting of the part ``other`` lacks."""
    parts = _operand_parts(other)
    if parts is None:
        return NotImplemented
    re, im = parts
    real = z.real + re if sign > 0 else z.real - re
    if im is None:
        # ``imag`` takes the shape and the promoted dtype of ``real``.
        return Cplx(real, _broadcast_like(z.imag, real))
    imag = z.imag + im if sign > 0 else z.imag - im
    return Cplx(real, imag)


def _flatten_with_keys(z):
    return [(pytree.GetAttrKey("real"), z.real), (pytree.GetAttrKey("imag"), z.imag)], None


pytree.register_pytree_node(
    Cplx,
    lambda z: ([z.real, z.imag], None),
    lambda parts, _: Cplx(*parts),
    serialized_type_name="cplxmodule.cplx.Cplx",
    flatten_with_keys_fn=_flatten_with_keys,
)
