"""Conversion between complex layers and torch's layers of native complex dtype."""

import torch

from ...cplx._shared import COMPLEX_OF
from .conv import (
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
)
from .linear import CplxLinear

__all__ = ["to_native", "from_native"]

_CONV = ("in_channels", "out_channels", "kernel_size", "stride", "padding",
         "dilation", "groups", "padding_mode")
_CONV_TRANSPOSE = _CONV + ("output_padding",)

# (complex layer, native twin, constructor arguments both store as attributes)
_TWINS = (
    (CplxLinear, torch.nn.Linear, ("in_features", "out_features")),
    (CplxConv1d, torch.nn.Conv1d, _CONV),
    (CplxConv2d, torch.nn.Conv2d, _CONV),
    (CplxConv3d, torch.nn.Conv3d, _CONV),
    (CplxConvTranspose1d, torch.nn.ConvTranspose1d, _CONV_TRANSPOSE),
    (CplxConvTranspose2d, torch.nn.ConvTranspose2d, _CONV_TRANSPOSE),
    (CplxConvTranspose3d, torch.nn.ConvTranspose3d, _CONV_TRANSPOSE),
)
_TO_NATIVE = {ours: (native, args) for ours, native, args in _TWINS}
_FROM_NATIVE = {native: (ours, args) for ours, native, args in _TWINS}


def to_native(module):
    """The torch layer of native complex dtype computing the same map as ``module``.

    Parameters
    ----------
    module : CplxLinear, CplxConv1d/2d/3d or CplxConvTranspose1d/2d/3d
        The layer to convert (exactly one of these classes: a subclass such as
        a masked layer computes something else and is refused).

    Returns
    -------
    torch.nn.Module
        A :class:`torch.nn.Linear`, ``Conv*d`` or ``ConvTranspose*d`` with the
        same settings, on the same device, of dtype ``complex64`` for float32
        parts (``complex128`` for float64), holding an exact copy of the
        parameters and ``module``'s training mode.

    Raises
    ------
    TypeError
        If ``module`` is not one of the classes above.

    Notes
    -----
    The conversion is lossless both ways: ``from_native(to_native(m))`` has
    bit-identical parameters.  Use it to run a trained model with torch's
    complex kernels, or to start from a torch complex model.

    Examples
    --------
    >>> layer = CplxLinear(3, 2)
    >>> to_native(layer).weight.dtype
    torch.complex64
    """
    native_cls, names = _lookup(module, _TO_NATIVE, "to_native")
    weight = module.weight
    native = torch.nn.utils.skip_init(
        native_cls,
        **{name: getattr(module, name) for name in names},
        bias=module.bias is not None,
        device=weight.device,
        dtype=COMPLEX_OF[weight.dtype],
    )
    with torch.no_grad():
        for name in ("weight", "bias"):
            part = getattr(module, name)
            if part is not None:
                getattr(native, name).copy_(torch.complex(part.real, part.imag))
    return native.train(module.training)


def from_native(module):
    """The complex layer computing the same map as a torch layer of complex dtype.

    Parameters
    ----------
    module : torch.nn.Linear, Conv1d/2d/3d or ConvTranspose1d/2d/3d
        A layer with complex parameters (a real one is promoted, imaginary
        parts zero).

    Returns
    -------
    CplxLinear, CplxConv1d/2d/3d or CplxConvTranspose1d/2d/3d
        The twin with the same settings and device, parts of the matching
        real dtype, an exact copy of the parameters and the training mode.

    Raises
    ------
    TypeError
        If ``module`` is not exactly one of the classes above.

    Examples
    --------
    >>> native = torch.nn.Conv2d(2, 4, 3, dtype=torch.complex64)
    >>> type(from_native(native)).__name__
    'CplxConv2d'
    """
    ours, names = _lookup(module, _FROM_NATIVE, "from_native")
    weight = module.weight
    layer = torch.nn.utils.skip_init(
        ours,
        **{name: getattr(module, name) for name in names},
        bias=module.bias is not None,
        device=weight.device,
        dtype=weight.real.dtype,
    )
    with torch.no_grad():
        for name in ("weight", "bias"):
            value = getattr(module, name)
            if value is not None:
                part = getattr(layer, name)
                part.real.copy_(value.real)
                part.imag.copy_(value.imag if value.is_complex() else torch.zeros_like(value))
    return layer.train(module.training)


def _lookup(module, table, where):
    if type(module) not in table:
        known = ", ".join(sorted(cls.__name__ for cls in table))
        raise TypeError(
            f"{where}: `module` must be one of {known}, got {type(module).__name__}"
        )
    return table[type(module)]
