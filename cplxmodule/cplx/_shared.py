"""Argument checks, the conversion of complex operands and docstring templates of the functional core.

One definition of each, shared by the modules of :mod:`cplxmodule.cplx` and
by the layers of :mod:`cplxmodule.nn`, so that a mistake gets one message
wherever it is made. Not public API: the names here may change.
"""

from __future__ import annotations

import math
import numbers
from typing import Literal, Mapping, NoReturn, Optional, TypeGuard, Union, overload

import torch

from .tensor import Cplx, _pair

#: A checked operand of a product: complex as a :class:`Cplx`, or a real tensor.
Operand = Union[Cplx, torch.Tensor]

#: The names ``padding_mode=`` accepts, as :class:`torch.nn.Conv2d` does.
PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def describe(value):
    """What ``value`` is, for an error message."""
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    return type(value).__name__


def _prefix(where):
    return f"{where}: " if where else ""


def as_cplx(value: object) -> Cplx | None:
    """``value`` as a :class:`Cplx` if it holds complex values, else ``None``.

    A :class:`Cplx` is returned as it is. A tensor of torch's complex dtype,
    and any object whose ``.real`` and ``.imag`` are real tensors of one
    shape, dtype and device (duck typing, as the published package took
    them), become a :class:`Cplx` of those parts: views, never copies, so
    gradients reach a complex leaf. A real tensor is not complex: ``None``.
    """
    if isinstance(value, Cplx):
        return value
    if isinstance(value, torch.Tensor):
        return _pair(value.real, value.imag) if value.is_complex() else None
    real, imag = getattr(value, "real", None), getattr(value, "imag", None)
    if _are_parts(real, imag):
        return _pair(real, imag)
    return None


def _are_parts(real, imag):
    """Whether ``real`` and ``imag`` can be the two parts of one :class:`Cplx`."""
    return (
        isinstance(real, torch.Tensor)
        and isinstance(imag, torch.Tensor)
        and not real.is_complex()
        and (real.shape, real.dtype, real.device) == (imag.shape, imag.dtype, imag.device)
    )


def _describe_complex(value):
    """:func:`describe`, which also says why an object with ``.real``/``.imag`` is not complex."""
    if isinstance(value, torch.Tensor):
        return describe(value)
    real, imag = getattr(value, "real", None), getattr(value, "imag", None)
    if not isinstance(real, torch.Tensor):
        return describe(value)
    return f"{type(value).__name__} with .real {describe(real)} and .imag {describe(imag)}"


# Every message reads "{where}: `{argument}` must be ..., got ...", where
# ``where`` names the function or the layer (its class name).
def checked_cplx(
    input: object, name: str = "input", where: str | None = None, shape: object = None
) -> Cplx:
    """``input`` as a :class:`Cplx` (see :func:`as_cplx`), else raise a ``TypeError``.

    The message names the argument ``name``, starts with ``where`` (the
    function's or the layer's name) and describes the expected ``shape``
    when given, e.g. ``"CplxConv2d: `input` must be a Cplx or a complex
    tensor of shape (N, 3, *, *) or (3, *, *), got ..."``.
    """
    if type(input) is Cplx:
        # the common case, at the cost of one test
        return input
    value = as_cplx(input)
    if value is None:
        expected = "a Cplx or a complex tensor" + (f" of shape {shape}" if shape else "")
        raise TypeError(
            f"{_prefix(where)}`{name}` must be {expected}, got {_describe_complex(input)}"
        )
    return value


@overload
def check_operand(
    value: object, name: str, optional: Literal[False] = False, where: Optional[str] = None
) -> Operand: ...


@overload
def check_operand(
    value: object, name: str, optional: bool, where: Optional[str] = None
) -> Optional[Operand]: ...


def check_operand(
    value: object, name: str, optional: bool = False, where: Optional[str] = None
) -> Optional[Operand]:
    """``value`` as a :class:`Cplx` if it is complex, a real tensor as it is (or ``None`` if ``optional``)."""
    if value is None and optional:
        return value
    if isinstance(value, torch.Tensor) and not value.is_complex():
        return value
    operand = as_cplx(value)
    if operand is None:
        kinds = "a Cplx, a complex or real torch.Tensor" + (" or None" if optional else "")
        raise TypeError(f"{_prefix(where)}`{name}` must be {kinds}, got {_describe_complex(value)}")
    return operand


def _all_cplx(values: tuple[object, ...]) -> TypeGuard[tuple[Cplx, ...]]:
    return all(type(x) is Cplx for x in values)


def _all_real(values: tuple[object, ...]) -> TypeGuard[tuple[torch.Tensor, ...]]:
    return all(isinstance(x, torch.Tensor) and not x.is_complex() for x in values)


def check_operands(
    inputs: Mapping[str, object], weight: object, bias: object, where: Optional[str]
) -> tuple[tuple[Operand, ...], Operand, Optional[Operand]]:
    """Check the operands of a product; return ``(inputs, weight, bias)``, ``inputs`` a tuple.

    ``inputs`` maps argument names to inputs. Either every input is complex
    (and ``weight``, ``bias`` are each complex or a real tensor), or all
    operands are real tensors: then the product is one real product, as a
    Bayesian layer computes its output variance from ``|x|^2``. Complex
    operands come back as :class:`Cplx` (see :func:`as_cplx`).
    """
    weight_ = check_operand(weight, "weight", where=where)
    bias_ = check_operand(bias, "bias", optional=True, where=where)
    values = tuple(inputs.values())
    if _all_cplx(values):
        # the common case, decided at the cost of one test per input
        return values, weight_, bias_
    if _all_real(values) and _all_real((weight_,) + (() if bias_ is None else (bias_,))):
        return values, weight_, bias_
    converted = []
    for name, value in zip(inputs, values):
        operand = as_cplx(value)
        if operand is None:
            raise TypeError(
                f"{_prefix(where)}`{name}` must be a Cplx or a complex tensor, or a real"
                f" torch.Tensor with real inputs, `weight` and `bias`,"
                f" got {_describe_complex(value)}"
            )
        converted.append(operand)
    return tuple(converted), weight_, bias_


def check_shape(value, shape, name, where=None):
    """Raise a ``ValueError`` unless ``value`` is ``None`` or has ``shape``.

    ``shape`` is one shape, or a list of the shapes allowed.
    """
    shapes = [tuple(s) for s in shape] if isinstance(shape, list) else [tuple(shape)]
    if value is not None and tuple(value.shape) not in shapes:
        raise ValueError(
            f"{_prefix(where)}`{name}` must have shape {' or '.join(map(str, shapes))},"
            f" got {tuple(value.shape)}"
        )


def check_features(input, features, name, where):
    """Raise a ``ValueError`` unless ``input`` has shape ``(..., features)``."""
    if input.dim() == 0 or input.shape[-1] != features:
        raise ValueError(
            f"{_prefix(where)}`{name}` must have shape (..., {features}),"
            f" got {tuple(input.shape)}"
        )


def conv_input_shape(channels, n):
    """The shape an ``n``-d convolution with ``channels`` input channels takes."""
    stars = ", ".join("*" * n)
    return f"(N, {channels}, {stars}) or ({channels}, {stars})"


def check_conv_input(input, channels, n, where):
    """Raise a ``ValueError`` unless ``input`` fits an ``n``-d convolution."""
    if input.dim() not in (n + 1, n + 2) or input.shape[-n - 1] != channels:
        raise ValueError(
            f"{_prefix(where)}`input` must have shape {conv_input_shape(channels, n)},"
            f" got {tuple(input.shape)}"
        )


# what each padding mode asks of the input, besides holding the kernel
_PADDING_MODE_RULES = {
    "zeros": "",
    "reflect": " and each side's padding be smaller than the input",
    "replicate": " and the input be non-empty",
    "circular": " and each side's padding be at most the input's size",
}


def conv_smallest_input(kernel_size, padding, dilation, padding_mode):
    """The smallest spatial sizes a convolution takes, as torch computes them.

    The padded input must be at least the dilated kernel,
    ``dilation * (kernel_size - 1) + 1``, in every dimension, the input
    padded by ``padding`` on both sides (an int per dimension), by none for
    ``"valid"``, or, for ``"same"``, by ``dilation * (kernel_size - 1)`` in
    all, the larger half on the right. :func:`torch.nn.functional.pad`
    asks more of the other modes: a "reflect" padding smaller than the
    input, a "circular" one at most its size, and an input of at least one
    entry for "replicate".

    Parameters
    ----------
    kernel_size, dilation : tuple of int
        One per spatial dimension.
    padding : tuple of int or {"same", "valid"}
    padding_mode : {"zeros", "reflect", "replicate", "circular"}

    Returns
    -------
    tuple of int
        The smallest size of each spatial dimension.
    """
    smallest = []
    for i, (k, d) in enumerate(zip(kernel_size, dilation)):
        total = d * (k - 1)
        if padding == "same":
            side = total - total // 2
        else:
            side = 0 if padding == "valid" else padding[i]
            total = 2 * side
        # the padded input, ``size + total``, holds the dilated kernel, ``d * (k - 1) + 1``
        size = d * (k - 1) + 1 - total
        if padding_mode == "reflect":
            size = max(size, side + 1)
        elif padding_mode == "circular":
            size = max(size, side)
        elif padding_mode == "replicate":
            size = max(size, 1)
        smallest.append(max(size, 0))
    return tuple(smallest)


def check_conv_input_size(input, kernel_size, padding, dilation, padding_mode, where):
    """Raise a ``ValueError`` unless ``input``'s spatial sizes fit a convolution.

    A few integer comparisons on the shape, no tensor op: the sizes must be
    at least those of :func:`conv_smallest_input` (same arguments), e.g.
    ``"CplxConv2d: `input` must have spatial sizes of at least (9, 9) for
    kernel_size=(9, 9), dilation=(1, 1), padding=(0, 0) and
    padding_mode='zeros' (the padded input must hold the dilated kernel),
    got shape (1, 2, 5, 5)"``; and, as torch's kernels require, none of
    them zero unless the batch or the channels are, and at least one
    channel for the "reflect" and "replicate" modes.
    """
    smallest = conv_smallest_input(kernel_size, padding, dilation, padding_mode)
    shape = input.shape
    leading = len(shape) - len(smallest)
    for size, least in zip(shape[leading:], smallest):
        if size < least:
            raise ValueError(
                f"{_prefix(where)}`input` must have spatial sizes of at least {smallest}"
                f" for kernel_size={tuple(kernel_size)}, dilation={tuple(dilation)},"
                f" padding={padding!r} and padding_mode={padding_mode!r} (the padded"
                f" input must hold the dilated kernel{_PADDING_MODE_RULES[padding_mode]}),"
                f" got shape {tuple(shape)}"
            )
        if size == 0 and math.prod(shape[:leading]):
            raise ValueError(
                f"{_prefix(where)}`input` must have no spatial size 0 unless its batch or"
                f" channel size is 0, as torch's convolutions require, got shape {tuple(shape)}"
            )
    if padding_mode in ("reflect", "replicate") and shape[leading - 1] == 0:
        raise ValueError(
            f"{_prefix(where)}`input` must have at least one channel for"
            f" padding_mode={padding_mode!r}, as torch's padding requires,"
            f" got shape {tuple(shape)}"
        )


def check_spatial_dims(input, n, where):
    """Raise a ``ValueError`` unless ``input`` is ``(N, C, *spatial)`` or ``(C, *spatial)``."""
    if input.dim() not in (n + 1, n + 2):
        raise ValueError(
            f"{_prefix(where)}`input` must have shape {conv_input_shape('C', n)},"
            f" got {tuple(input.shape)}"
        )


def check_trailing_shape(input, shape, name, where):
    """Raise a ``ValueError`` unless ``input`` has shape ``(*, *shape)``."""
    k = len(shape)
    if k == 0 or tuple(input.shape[input.dim() - k :]) != tuple(shape):
        raise ValueError(
            f"{_prefix(where)}`{name}` must have shape (*, {', '.join(map(str, shape))}),"
            f" got {tuple(input.shape)}"
        )


def checked_real(input: object, name: str = "input", where: Optional[str] = None) -> torch.Tensor:
    """Return ``input`` if it is a real tensor, else raise a ``TypeError``."""
    if not isinstance(input, torch.Tensor) or input.is_complex():
        raise TypeError(
            f"{_prefix(where)}`{name}` must be a real torch.Tensor, got {describe(input)}"
        )
    return input


def checked_even_dim(input, dim, where):
    """Check that the real ``input`` has an even size along ``dim``; return ``dim``, wrapped."""
    checked_real(input, where=where)
    if input.dim() == 0:
        raise ValueError(f"{where}: `input` must have at least one dimension, got shape ()")
    dim = dim % input.dim()
    if input.shape[dim] % 2:
        raise ValueError(
            f"{where}: `input` must have an even size along dimension {dim},"
            f" got shape {tuple(input.shape)}"
        )
    return dim


# --- arguments ----------------------------------------------------------------
# A wrong value raises a ValueError; a value of the wrong type (a bool or a
# float for an int, a string for a number) an ArgumentTypeError, which is
# both a TypeError and a ValueError.
class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type, e.g. ``2.5`` or ``True`` for an int.

    A :class:`TypeError`, as Python and torch raise for a wrong type, and a
    :class:`ValueError`, which the argument checks of the layers raised for
    any bad value: code that catches either still catches it.
    """


def _fail(
    value: object,
    name: str,
    where: Optional[str],
    expected: str,
    error: type[Exception] = ValueError,
) -> NoReturn:
    raise error(f"{_prefix(where)}`{name}` must be {expected}, got {value!r}")


def is_int(value):
    """Whether ``value`` is an integer (a Python or numpy int), and not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value):
    """Whether ``value`` is a real number (an int or a float, numpy's too), and not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _int_kind(minimum):
    if minimum is None:
        return "an int"
    return "a positive int" if minimum == 1 else f"an int >= {minimum}"


def _or_none(expected, optional):
    return f"{expected} or None" if optional else expected


def check_int(value, name, where, minimum=None, optional=False):
    """``value`` as a Python int, else raise; ``None`` passes if ``optional``.

    ``value`` must be an integer (a numpy integer too, never a bool) and at
    least ``minimum`` if given, e.g. ``"CplxConv2d: `groups` must be a
    positive int, got 0"``.
    """
    if value is None and optional:
        return value
    if not is_int(value) or (minimum is not None and value < minimum):
        error = ValueError if is_int(value) else ArgumentTypeError
        _fail(value, name, where, _or_none(_int_kind(minimum), optional), error)
    return int(value)


def check_positive_int(value, name, where, optional=False):
    """``value`` as a Python int if it is an int ``>= 1``, else raise; see :func:`check_int`."""
    return check_int(value, name, where, 1, optional)


def check_non_negative_int(value, name, where, optional=False):
    """``value`` as a Python int if it is an int ``>= 0``, else raise; see :func:`check_int`."""
    return check_int(value, name, where, 0, optional)


def _interval(low, high, open_low, open_high):
    """The words for a finite real number within the bounds given."""
    if low is None and high is None:
        return "a number"
    if high is None:
        if low == 0 and open_low:
            return "a positive number"
        return f"a number {'>' if open_low else '>='} {low}"
    if low is None:
        return f"a number {'<' if open_high else '<='} {high}"
    return f"a number in {'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"


def check_real(value, name, where, low=None, high=None, *, open_low=False, open_high=False,
               optional=False):
    """Return ``value`` if it is a finite real number within the bounds, else raise.

    A number is an int or a float (numpy's too), never a bool; NaN and the
    infinities are not numbers here. ``low`` and ``high`` bound it, closed
    unless ``open_low``, ``open_high``; ``None`` passes if ``optional``.
    E.g. ``"CplxDropout: `p` must be a number in [0, 1], got 1.5"``.
    """
    if value is None and optional:
        return value
    expected = _or_none(_interval(low, high, open_low, open_high), optional)
    if not is_real(value):
        _fail(value, name, where, expected, ArgumentTypeError)
    if not (
        (isinstance(value, numbers.Integral) or math.isfinite(value))
        and (low is None or (value > low if open_low else value >= low))
        and (high is None or (value < high if open_high else value <= high))
    ):
        _fail(value, name, where, expected)
    return value


def check_positive(value, name, where, optional=False):
    """Return ``value`` if it is a finite number ``> 0``, else raise; see :func:`check_real`."""
    return check_real(value, name, where, low=0, open_low=True, optional=optional)


def check_probability(value, name, where):
    """Return ``value`` if it is a number in ``[0, 1]``, else raise; see :func:`check_real`."""
    return check_real(value, name, where, low=0, high=1)


def _alternatives(choices, optional):
    """``'a' or 'b'``, ``None, 'a' or 'b'``, or ``one of ('a', 'b', 'c')`` (``None or`` before)."""
    names = [repr(choice) for choice in choices]
    if len(names) > 2:
        return ("None or " if optional else "") + f"one of ({', '.join(names)})"
    names = ["None"] * optional + names
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def check_choice(value, name, where, choices, optional=False):
    """Return ``value`` if it is one of the strings ``choices``, else raise.

    ``None`` passes if ``optional``. E.g. ``"CplxMultiheadAttention:
    `score` must be 'real' or 'modulus', got 'imag'"``.
    """
    if value is None and optional:
        return value
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        error = ValueError if isinstance(value, str) else ArgumentTypeError
        _fail(value, name, where, _alternatives(choices, optional), error)
    return value


def check_bool(value, name, where):
    """Return ``value`` if it is a bool, else raise an :class:`ArgumentTypeError`."""
    if not isinstance(value, bool):
        _fail(value, name, where, "a bool", ArgumentTypeError)
    return value


def check_divides(value, name, total, total_name, where):
    """Raise a ``ValueError`` unless the int ``value`` divides ``total``.

    ``total_name`` says what ``total`` is, e.g. ``"`embed_dim`"``: the
    message reads ``"`num_heads` must divide `embed_dim` (8), got 3"``.
    """
    if total % value:
        raise ValueError(
            f"{_prefix(where)}`{name}` must divide {total_name} ({total}), got {value!r}"
        )


def ntuple(
    value: object,
    n: Optional[int],
    name: str,
    where: Optional[str] = None,
    minimum: Optional[int] = None,
) -> tuple[int, ...]:
    """``value`` as a tuple of ``n`` ints (of any length if ``n`` is ``None``), else raise.

    An int stands for ``n`` copies of itself (a tuple of one if ``n`` is
    ``None``); every int must be at least ``minimum`` if given. A wrong type
    raises an :class:`ArgumentTypeError`, a wrong length or value a
    ``ValueError``; either names the argument ``name``.
    """
    kind = _int_kind(minimum)
    expected = f"{kind} or a tuple of {'them' if n is None else f'{n} of them'}"
    values: tuple[object, ...]
    if is_int(value):
        values = (value,) * (1 if n is None else n)
    elif isinstance(value, (tuple, list, torch.Size)):
        values = tuple(value)
    else:
        _fail(value, name, where, expected, ArgumentTypeError)
    ints = []
    for v in values:
        # is_int, spelt out so that the type checker sees an int
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            _fail(value, name, where, expected, ArgumentTypeError)
        ints.append(int(v))
    if (n is not None and len(ints) != n) or (
        minimum is not None and any(v < minimum for v in ints)
    ):
        _fail(value, name, where, expected)
    return tuple(ints)


def check_dtype(value, dtype, name, where, owner="the layer's parameters", hint=""):
    """Raise a ``TypeError`` unless the tensor ``value`` has ``dtype``, that of ``owner``.

    E.g. ``"CplxLinear: `input` must have the dtype of the layer's weight,
    torch.float32, got torch.float64 (hint)"``.
    """
    if value.dtype != dtype:
        raise TypeError(
            f"{_prefix(where)}`{name}` must have the dtype of {owner}, {dtype},"
            f" got {value.dtype}" + (f" ({hint})" if hint else "")
        )


def check_padding(padding, padding_mode, stride, n, where=None):
    """Check ``padding_mode`` and a string ``padding`` of an ``n``-d convolution.

    ``padding`` must be an int, a tuple (checked by the caller or the op),
    ``"same"`` (only with stride 1) or ``"valid"``. ``where``, when given,
    starts the messages (the layer's name).
    """
    check_choice(padding_mode, "padding_mode", where, PADDING_MODES)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            _fail(padding, "padding", where, "an int, a tuple, 'same' or 'valid'")
        if padding == "same" and any(s != 1 for s in ntuple(stride, n, "stride", where)):
            _fail(stride, "stride", where, "1 for `padding`='same'")


def check_output_padding(output_padding, stride, dilation, where):
    """Raise a ``ValueError`` unless each ``output_padding`` is smaller than its stride or dilation.

    torch's transposed convolutions require it of each dimension, e.g.
    ``"CplxConvTranspose2d: `output_padding` must be smaller than `stride`
    (1, 1) or `dilation` (1, 1) in each dimension, got (3, 3)"``; all three
    are tuples of one int per dimension.
    """
    if any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation)):
        expected = (
            f"smaller than `stride` {tuple(stride)} or `dilation` {tuple(dilation)}"
            " in each dimension"
        )
        _fail(output_padding, "output_padding", where, expected)


def check_transposed_padding_mode(padding_mode, where):
    """Raise a ``ValueError`` unless ``padding_mode`` is ``"zeros"``, as in torch."""
    if padding_mode != "zeros":
        expected = "'zeros' for a transposed convolution, as in torch"
        _fail(padding_mode, "padding_mode", where, expected)


# the fields of the ``n``-d docstring templates (conv, pooling, dropout)
_DIMS = {1: ("L", "kL"), 2: ("H, W", "kH, kW"), 3: ("D, H, W", "kD, kH, kW")}


def doc_kwargs(n):
    """Fields of the docstring templates of the ``n``-d functions (shapes, examples)."""

    def sizes(k):
        return ", ".join([str(k)] * n)

    return dict(
        n=n, dims=_DIMS[n][0], kdims=_DIMS[n][1], example=sizes(8),
        kexample=sizes(3), texample=sizes(17), pexample=sizes(4),
    )


# --- losses -------------------------------------------------------------------
REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction, where):
    """Raise a ``ValueError`` unless ``reduction`` is one of torch's three."""
    return check_choice(reduction, "reduction", where, REDUCTIONS)


def check_weights(where, **weights):
    """Raise a ``ValueError`` unless every keyword is a real number ``>= 0``."""
    for name, value in weights.items():
        check_real(value, name, where, low=0)


def check_ssim_options(window_size, sigma, data_range, k1, k2, where):
    """Raise a ``ValueError`` unless the options of :func:`ssim_loss` are in range."""
    if not is_int(window_size) or window_size < 1 or window_size % 2 == 0:
        error = ValueError if is_int(window_size) else ArgumentTypeError
        _fail(window_size, "window_size", where, "an odd positive int", error)
    for name, value in (("sigma", sigma), ("data_range", data_range), ("k1", k1), ("k2", k2)):
        check_positive(value, name, where)


def check_ssim_shape(shape, window_size, where):
    """Raise a ``ValueError`` unless ``shape`` is ``(N, C, H, W)`` with room for the window in H and W."""
    if len(shape) != 4 or min(shape[-2:]) < window_size:
        raise ValueError(
            f"{where}: `input` must have shape (N, C, H, W) with H and W at least"
            f" `window_size`={window_size}, got {tuple(shape)}"
        )
