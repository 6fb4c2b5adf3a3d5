"""Argument checks, the conversion of complex operands and docstring templates of the functional core.

One definition of each, shared by the modules of :mod:`cplxmodule.cplx` and
by the layers of :mod:`cplxmodule.nn`, so that a mistake gets one message
wherever it is made. Not public API: the names here may change.
"""

import torch

from .tensor import Cplx, _pair

#: The names ``padding_mode=`` accepts, as :class:`torch.nn.Conv2d` does.
PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def describe(value):
    """What ``value`` is, for an error message."""
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    return type(value).__name__


def _prefix(where):
    return f"{where}: " if where else ""


def as_cplx(value):
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
def checked_cplx(input, name="input", where=None, shape=None):
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


def check_operand(value, name, optional=False, where=None):
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


def check_operands(inputs, weight, bias, where):
    """Check the operands of a product; return ``(inputs, weight, bias)``, ``inputs`` a tuple.

    ``inputs`` maps argument names to inputs. Either every input is complex
    (and ``weight``, ``bias`` are each complex or a real tensor), or all
    operands are real tensors: then the product is one real product, as a
    Bayesian layer computes its output variance from ``|x|^2``. Complex
    operands come back as :class:`Cplx` (see :func:`as_cplx`).
    """
    weight = check_operand(weight, "weight", where=where)
    bias = check_operand(bias, "bias", optional=True, where=where)
    values = tuple(inputs.values())
    if all(type(x) is Cplx for x in values):
        # the common case, decided at the cost of one test per input
        return values, weight, bias
    operands = (*values, weight) + (() if bias is None else (bias,))
    if all(isinstance(x, torch.Tensor) and not x.is_complex() for x in operands):
        return values, weight, bias
    converted = tuple(map(as_cplx, values))
    for name, value, operand in zip(inputs, values, converted):
        if operand is None:
            raise TypeError(
                f"{_prefix(where)}`{name}` must be a Cplx or a complex tensor, or a real"
                f" torch.Tensor with real inputs, `weight` and `bias`,"
                f" got {_describe_complex(value)}"
            )
    return converted, weight, bias


def check_shape(value, shape, name, where=None):
    """Raise a ``ValueError`` unless ``value`` is ``None`` or has ``shape``."""
    if value is not None and tuple(value.shape) != tuple(shape):
        raise ValueError(
            f"{_prefix(where)}`{name}` must have shape {tuple(shape)},"
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


def checked_real(input, name="input", where=None):
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


def ntuple(value, n, name, where=None):
    """``value`` as a tuple of ``n`` ints; the error names the argument ``name``."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(
            f"{_prefix(where)}`{name}` must be an int or a tuple of {n} ints, got {value}"
        )
    return value


def check_padding(padding, padding_mode, stride, n, where=None):
    """Check ``padding_mode`` and a string ``padding`` of an ``n``-d convolution.

    ``padding`` must be an int, a tuple (checked by the caller or the op),
    ``"same"`` (only with stride 1) or ``"valid"``. ``where``, when given,
    starts the messages (the layer's name).
    """
    prefix = _prefix(where)
    if padding_mode not in PADDING_MODES:
        raise ValueError(
            f"{prefix}`padding_mode` must be one of {PADDING_MODES}, got {padding_mode!r}"
        )
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(
                f"{prefix}`padding` must be an int, a tuple, 'same' or 'valid',"
                f" got {padding!r}"
            )
        if padding == "same" and any(s != 1 for s in ntuple(stride, n, "stride", where)):
            raise ValueError(
                f"{prefix}`stride` must be 1 for `padding`='same', got {stride}"
            )


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
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        raise ValueError(
            f"{_prefix(where)}`reduction` must be one of {REDUCTIONS}, got {reduction!r}"
        )
    return reduction


def check_positive(value, name, where):
    """Raise a ``ValueError`` unless ``value`` is a positive real number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{_prefix(where)}`{name}` must be a positive number, got {value!r}")
    return value


def check_positive_int(value, name, where):
    """Raise a ``ValueError`` unless ``value`` is a positive ``int`` (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{_prefix(where)}`{name}` must be a positive int, got {value!r}")
    return value


def check_weights(where, **weights):
    """Raise a ``ValueError`` unless every keyword is a real number ``>= 0``."""
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"{_prefix(where)}`{name}` must be a number >= 0, got {value!r}")


def check_ssim_options(window_size, sigma, data_range, k1, k2, where):
    """Raise a ``ValueError`` unless the options of :func:`ssim_loss` are in range."""
    if (isinstance(window_size, bool) or not isinstance(window_size, int)
            or window_size < 1 or window_size % 2 == 0):
        raise ValueError(
            f"{_prefix(where)}`window_size` must be an odd positive int, got {window_size!r}"
        )
    for name, value in (("sigma", sigma), ("data_range", data_range), ("k1", k1), ("k2", k2)):
        check_positive(value, name, where)
