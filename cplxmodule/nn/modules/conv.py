"""Complex convolutions and transposed convolutions in one, two and three dimensions."""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F

from ...cplx._product import conv_transposend, convnd
from ...cplx._shared import (
    check_conv_input,
    check_conv_input_size,
    check_divides,
    check_non_negative_int,
    check_output_padding,
    check_padding,
    check_positive_int,
    check_transposed_padding_mode,
    conv_input_shape,
    ntuple,
)
from .._families import Family, FamilyDoc
from .base import CplxToCplx, _check_cplx
from ._weighted import WeightedLayer
from .linear import _add_weight_and_bias, _reset_weight_and_bias
from .parameter import CplxParameter
from typing import Any, Callable, ClassVar, Literal, Optional, Sequence
from ...cplx._typing import CplxLike, Device
from torch.nn.common_types import _size_any_t
from ...cplx.tensor import Cplx

__all__ = [
    "CplxConvNd",
    "CplxConvTransposeNd",
    "CplxConv1d",
    "CplxConv2d",
    "CplxConv3d",
    "CplxConvTranspose1d",
    "CplxConvTranspose2d",
    "CplxConvTranspose3d",
]

_CONV = ("in_channels", "out_channels", "kernel_size", "stride", "padding",
         "dilation", "groups", "padding_mode")


def _conv_family(n, transposed=False, **kwargs):
    """The family of the ``n``-d (transposed) convolutions; ``kwargs`` as :class:`Family` takes them."""
    # the docstrings' example: 2 -> 4 channels, kernel 3, an input of
    # ``size`` per dimension, whose output is 2 larger (transposed) or smaller
    size = ((8, 3, 2) if transposed else (8, 5, 4))[n - 1]
    output = size + 2 if transposed else size - 2
    kind = "transposed convolution" if transposed else "convolution"
    doc = FamilyDoc(
        f"{n}d {kind}", "2, 4, 3",
        "{randn}(2, 2, " + ", ".join([str(size)] * n) + ")",
        "2, 4, " + ", ".join([str(output)] * n), "4", "2",
    )
    args = _CONV + ("output_padding",) if transposed else _CONV
    return Family(
        args, kernel_dims=n, transposed=transposed, shrinkable=not transposed, doc=doc, **kwargs
    )


class CplxConvNd(WeightedLayer, CplxToCplx):
    """Dimension-generic base of the complex (transposed) convolutions.

    Checks the arguments, creates and initialises the parameters and writes
    ``extra_repr`` once, like :class:`torch.nn.modules.conv._ConvNd`.
    Subclasses set the number of spatial dimensions ``_n`` and the functional
    op ``_conv``, called as :func:`cplxmodule.cplx.conv2d` (or
    :func:`~cplxmodule.cplx.conv_transpose2d`) is. ``forward`` checks the
    input (``_check_inputs``: its shape and, but for a transposed
    convolution, that it fits the kernel) and calls ``_weighted_forward``,
    which passes the weight and bias to ``_dense_forward(input, *, weight, bias)``
    (transposed: also ``output_size=``), the single place where a weight
    meets the op, so a masked or Bayesian subclass passes its own weight,
    or a real weight with a real input, and keeps ``forward``. The layers of this package
    set the op without its argument checks (the layer checks its input,
    and owns its weight); padding modes are handled by the op.

    Parameters
    ----------
    in_channels, out_channels, kernel_size, stride, padding, dilation
        As for :class:`torch.nn.Conv1d`, all required (the subclasses give
        the defaults).
    transposed : bool
        Lay the weight out as a transposed convolution's,
        ``(in_channels, out_channels / groups, *kernel_size)``.
    output_padding, groups, bias, padding_mode
        As for :class:`torch.nn.ConvTranspose1d`.
    device, dtype : optional
        Factory kwargs.

    Examples
    --------
    >>> class Conv4(CplxConvNd):  # a 1d convolution with a fixed kernel size
    ...     _n, _conv = 1, staticmethod(cplx.conv1d)
    ...     def forward(self, input):
    ...         return self._conv(input, self.weight, self.bias)
    >>> layer = Conv4(2, 3, 4, 1, 0, 1, False, 0, 1, True, "zeros")
    >>> layer(cplx.randn(1, 2, 9)).shape
    torch.Size([1, 3, 6])
    """

    _n: ClassVar[Any] = None
    _conv: ClassVar[Any] = None
    # registered by ``_add_weight_and_bias`` (``bias`` None without a bias)
    weight: CplxParameter
    bias: Optional[CplxParameter]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_any_t,
        stride: _size_any_t,
        padding: _size_any_t,
        dilation: _size_any_t,
        transposed: bool,
        output_padding: _size_any_t,
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        n, name = self._n, type(self).__name__
        in_channels = check_non_negative_int(in_channels, "in_channels", name)
        out_channels = check_non_negative_int(out_channels, "out_channels", name)
        groups = check_positive_int(groups, "groups", name)
        check_divides(groups, "groups", in_channels, "`in_channels`", name)
        check_divides(groups, "groups", out_channels, "`out_channels`", name)
        kernel_size = ntuple(kernel_size, n, "kernel_size", name, minimum=1)
        stride = ntuple(stride, n, "stride", name, minimum=1)
        dilation = ntuple(dilation, n, "dilation", name, minimum=1)
        output_padding = ntuple(output_padding, n, "output_padding", name, minimum=0)
        check_padding(padding, padding_mode, stride, n, where=name)
        if transposed:
            check_transposed_padding_mode(padding_mode, name)
            check_output_padding(output_padding, stride, dilation, name)
        if not isinstance(padding, str):
            padding = ntuple(padding, n, "padding", name, minimum=0)
        super().__init__()

        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.transposed = dilation, transposed
        self.output_padding = output_padding
        self.groups, self.padding_mode = groups, padding_mode

        if transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        _add_weight_and_bias(self, shape, out_channels, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Complex analogue of torch's default; see :class:`CplxLinear`."""
        fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
        _reset_weight_and_bias(self.weight, self.bias, fan_in)

    def _check_inputs(self, input):
        n, channels, name = self._n, self.in_channels, self._get_name()
        input = _check_cplx(self, input, conv_input_shape(channels, n))
        check_conv_input(input, channels, n, name)
        if not self.transposed:
            # torch's kernel would refuse it without naming the layer
            check_conv_input_size(
                input, self.kernel_size, self.padding, self.dilation, self.padding_mode, name
            )
        return input

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * self._n:
            s += ", padding={padding}"
        if self.dilation != (1,) * self._n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * self._n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _CplxConv(CplxConvNd):
    """Shared ``__init__`` and forward of :class:`CplxConv1d`, ``2d`` and ``3d``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_any_t,
        stride: _size_any_t = 1,
        padding: _size_any_t = 0,
        dilation: _size_any_t = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            0,
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _dense_forward(self, input, *, weight, bias):
        return self._conv(
            input,
            weight,
            bias,
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
            self.padding_mode,
        )

    def forward(self, input: CplxLike) -> Cplx:
        input = self._check_inputs(input)
        return self._weighted_forward(input)


def _transposed_dense_forward(self, input, *, weight, bias, output_size=None):
    """The entry point of every transposed convolution, real and complex: ``self._conv`` is its op."""
    return self._conv(
        input,
        weight,
        bias,
        self.stride,
        self.padding,
        _output_padding(self, input, output_size),
        self.groups,
        self.dilation,
    )


class CplxConvTransposeNd(CplxConvNd):
    """Dimension-generic base of the complex transposed convolutions.

    :class:`CplxConvNd` with the forward pass of a transposed convolution,
    ``forward(input, output_size=None)``, resolving ``output_size`` as
    :class:`torch.nn.ConvTranspose1d` does. It takes :class:`CplxConvNd`'s
    arguments, as published; :class:`CplxConvTranspose1d`, ``2d`` and
    ``3d`` take torch's.

    Examples
    --------
    >>> class Up(CplxConvTransposeNd):
    ...     _n, _conv = 1, staticmethod(cplx.conv_transpose1d)
    >>> layer = Up(2, 3, 3, 2, 0, 1, True, 0, 1, True, "zeros")
    >>> layer(cplx.randn(1, 2, 4)).shape
    torch.Size([1, 3, 9])
    """

    _dense_forward = _transposed_dense_forward

    def forward(self, input: CplxLike, output_size: Optional[Sequence[int]] = None) -> Cplx:
        input = self._check_inputs(input)
        return self._weighted_forward(input, output_size=output_size)


class _CplxConvTranspose(CplxConvTransposeNd):
    """Shared ``__init__`` of :class:`CplxConvTranspose1d`, ``2d`` and ``3d``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_any_t,
        stride: _size_any_t = 1,
        padding: _size_any_t = 0,
        output_padding: _size_any_t = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: _size_any_t = 1,
        padding_mode: str = "zeros",
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            True,
            output_padding,
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )


_CONV_DOC = """Complex {n}d convolution, the twin of :class:`torch.nn.Conv{n}d`.

    Takes the arguments of :class:`torch.nn.Conv{n}d`, with the same defaults:
    ``in_channels, out_channels, kernel_size, stride=1, padding=0,
    dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
    dtype=None``. Every ``padding_mode`` ("zeros", "reflect", "replicate",
    "circular") and ``padding`` "same"/"valid" behave as torch's. ``dtype``
    is the real dtype of each part (a complex dtype names its parts' dtype).

    The input is a :class:`~cplxmodule.cplx.Cplx` of shape
    ``(N, in_channels, *spatial)`` or ``(in_channels, *spatial)``.
    Initialisation: see :class:`CplxLinear`, with
    ``fan_in = in_channels / groups * prod(kernel_size)``; Trabelsi et al.'s
    are options (``init.cplx_kaiming_rayleigh_(layer.weight)``), measured
    in :doc:`/api/init`.

    Raises
    ------
    ValueError
        At the call, naming the layer and ``input``, if the input, padded,
        is smaller than the dilated kernel, ``dilation * (kernel_size - 1)
        + 1``, in a spatial dimension, or torch's padding refuses it (a
        "reflect" padding not smaller than the input, a "circular" one
        larger than it, an empty dimension), as torch's kernel would
        without naming the layer.

    Shape
    -----
    - Input: ``(N, C_in, *spatial_in)`` or ``(C_in, *spatial_in)``, where
      ``spatial_in`` has {n} sizes.
    - Output: ``(N, C_out, *spatial_out)`` or ``(C_out, *spatial_out)``,
      the sizes computed as for :class:`torch.nn.Conv{n}d`.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConv{n}d(2, 4, 3, padding=1)
    >>> layer(cplx.randn(1, 2, {spatial})).shape[:2]
    torch.Size([1, 4])
    """

_CONV_TRANSPOSE_DOC = """Complex {n}d transposed convolution.

    The twin of :class:`torch.nn.ConvTranspose{n}d`, with its arguments and
    defaults: ``in_channels, out_channels, kernel_size, stride=1, padding=0,
    output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
    device=None, dtype=None`` (only the "zeros" padding mode, as in torch).
    ``forward(input, output_size=None)`` resolves ``output_size`` as torch
    does.

    Raises
    ------
    ValueError
        At construction, naming the layer and ``output_padding``, if an
        ``output_padding`` is neither smaller than its ``stride`` nor than
        its ``dilation`` (torch's kernel refuses it at the call); at the
        call, naming ``output_size``, if ``output_size`` is out of the
        range the input allows.

    Shape
    -----
    - Input: ``(N, C_in, *spatial_in)`` or ``(C_in, *spatial_in)``, where
      ``spatial_in`` has {n} sizes.
    - Output: ``(N, C_out, *spatial_out)`` or ``(C_out, *spatial_out)``,
      the sizes computed as for :class:`torch.nn.ConvTranspose{n}d`.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConvTranspose{n}d(2, 4, 3, stride=2)
    >>> layer(cplx.randn(1, 2, {spatial})).shape[:2]
    torch.Size([1, 4])
    """


class CplxConv1d(_CplxConv, family=_conv_family(1, native=torch.nn.Conv1d)):
    __doc__ = _CONV_DOC.format(n=1, spatial="5")
    _n, _conv = 1, staticmethod(functools.partial(convnd, 1, F.conv1d))


class CplxConv2d(_CplxConv, family=_conv_family(2, native=torch.nn.Conv2d)):
    __doc__ = _CONV_DOC.format(n=2, spatial="5, 5")
    _n, _conv = 2, staticmethod(functools.partial(convnd, 2, F.conv2d))


class CplxConv3d(_CplxConv, family=_conv_family(3, native=torch.nn.Conv3d)):
    __doc__ = _CONV_DOC.format(n=3, spatial="5, 5, 5")
    _n, _conv = 3, staticmethod(functools.partial(convnd, 3, F.conv3d))


class CplxConvTranspose1d(
    _CplxConvTranspose, family=_conv_family(1, True, native=torch.nn.ConvTranspose1d)
):
    __doc__ = _CONV_TRANSPOSE_DOC.format(n=1, spatial="5")
    _n, _conv = 1, staticmethod(functools.partial(conv_transposend, 1, F.conv_transpose1d))


class CplxConvTranspose2d(
    _CplxConvTranspose, family=_conv_family(2, True, native=torch.nn.ConvTranspose2d)
):
    __doc__ = _CONV_TRANSPOSE_DOC.format(n=2, spatial="5, 5")
    _n, _conv = 2, staticmethod(functools.partial(conv_transposend, 2, F.conv_transpose2d))


class CplxConvTranspose3d(
    _CplxConvTranspose, family=_conv_family(3, True, native=torch.nn.ConvTranspose3d)
):
    __doc__ = _CONV_TRANSPOSE_DOC.format(n=3, spatial="5, 5, 5")
    _n, _conv = 3, staticmethod(functools.partial(conv_transposend, 3, F.conv_transpose3d))


def _output_padding(layer, input, output_size):
    """The output padding of a transposed convolution ``layer`` that yields ``output_size``.

    ``output_size`` holds the spatial sizes, optionally preceded by the batch
    and channel sizes (or the channel size, for an unbatched ``input``), as
    torch's transposed convolutions take it; ``None`` gives the layer's own
    ``output_padding``.
    """
    if output_size is None:
        return layer.output_padding
    n = len(layer.kernel_size)
    leading = input.dim() - n
    output_size = tuple(output_size)
    if len(output_size) == leading + n:
        output_size = output_size[leading:]
    if len(output_size) != n:
        raise ValueError(
            f"{layer._get_name()}: `output_size` must have {n} or {leading + n}"
            f" elements for a {input.dim()}d input, got {len(output_size)}"
        )
    spatial = input.shape[-n:]
    smallest = [
        (size - 1) * s - 2 * p + d * (k - 1) + 1
        for size, s, p, d, k in zip(
            spatial, layer.stride, layer.padding, layer.dilation, layer.kernel_size
        )
    ]
    largest = [m + s - 1 for m, s in zip(smallest, layer.stride)]
    if any(not lo <= o <= hi for o, lo, hi in zip(output_size, smallest, largest)):
        raise ValueError(
            f"{layer._get_name()}: `output_size` must be within the valid sizes range"
            f" from {smallest} to {largest} for an input of spatial size"
            f" {list(spatial)}, got {list(output_size)}"
        )
    return tuple(o - lo for o, lo in zip(output_size, smallest))


# Real twins: torch's layers with the entry point ``_dense_forward`` of the
# complex ones, for the real masked and Bayesian layers. torch's own
# ``_conv_forward`` is the convolutions' entry point; its transposed
# convolutions have none (``_ConvNd._conv_forward`` returns ``None`` there).
class _RealConvMixin(WeightedLayer):
    """``forward`` and ``_dense_forward`` of the real (non-transposed) convolutions."""

    # torch's, of the convolution this goes before in the bases
    _conv_forward: Callable[[torch.Tensor, torch.Tensor, Optional[torch.Tensor]], torch.Tensor]

    def _check_inputs(self, input):
        """torch's functional op checks the input."""
        return input

    def _dense_forward(self, input, *, weight, bias):
        return self._conv_forward(input, weight, bias)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self._weighted_forward(input)


class _RealConvTransposeMixin(WeightedLayer):
    """``forward`` and ``_dense_forward`` of the real transposed convolutions."""

    _conv: ClassVar[Any] = None
    # torch's, of the convolution this goes before in the bases
    padding_mode: Literal["zeros", "reflect", "replicate", "circular"]
    _get_name: Callable[[], str]

    def _check_inputs(self, input):
        check_transposed_padding_mode(self.padding_mode, self._get_name())
        return input

    _dense_forward = _transposed_dense_forward

    def forward(
        self, input: torch.Tensor, output_size: Optional[Sequence[int]] = None,
    ) -> torch.Tensor:
        input = self._check_inputs(input)
        return self._weighted_forward(input, output_size=output_size)


class _RealConv1d(
    _RealConvMixin, torch.nn.Conv1d, family=_conv_family(1, dense=torch.nn.Conv1d)
):
    """:class:`torch.nn.Conv1d` with the dense entry point ``_dense_forward``."""


class _RealConv2d(
    _RealConvMixin, torch.nn.Conv2d, family=_conv_family(2, dense=torch.nn.Conv2d)
):
    """:class:`torch.nn.Conv2d` with the dense entry point ``_dense_forward``."""


class _RealConv3d(
    _RealConvMixin, torch.nn.Conv3d, family=_conv_family(3, dense=torch.nn.Conv3d)
):
    """:class:`torch.nn.Conv3d` with the dense entry point ``_dense_forward``."""


class _RealConvTranspose1d(
    _RealConvTransposeMixin,
    torch.nn.ConvTranspose1d,
    family=_conv_family(1, True, dense=torch.nn.ConvTranspose1d),
):
    """:class:`torch.nn.ConvTranspose1d` with the dense entry point ``_dense_forward``."""

    _conv = staticmethod(F.conv_transpose1d)


class _RealConvTranspose2d(
    _RealConvTransposeMixin,
    torch.nn.ConvTranspose2d,
    family=_conv_family(2, True, dense=torch.nn.ConvTranspose2d),
):
    """:class:`torch.nn.ConvTranspose2d` with the dense entry point ``_dense_forward``."""

    _conv = staticmethod(F.conv_transpose2d)


class _RealConvTranspose3d(
    _RealConvTransposeMixin,
    torch.nn.ConvTranspose3d,
    family=_conv_family(3, True, dense=torch.nn.ConvTranspose3d),
):
    """:class:`torch.nn.ConvTranspose3d` with the dense entry point ``_dense_forward``."""

    _conv = staticmethod(F.conv_transpose3d)
