"""Complex convolutions and transposed convolutions in one, two and three dimensions."""

import math

from ... import cplx
from ...cplx.linalg import _check_padding, _ntuple
from .base import CplxToCplx, _check_cplx
from .linear import _add_weight_and_bias, _reset_weight_and_bias

__all__ = [
    "CplxConv1d",
    "CplxConv2d",
    "CplxConv3d",
    "CplxConvTranspose1d",
    "CplxConvTranspose2d",
    "CplxConvTranspose3d",
]

class _CplxConvNd(CplxToCplx):
    """Dimension-generic base of the complex (transposed) convolutions.

    Checks the arguments, creates and initialises the parameters and writes
    ``extra_repr`` once, like :class:`torch.nn.modules.conv._ConvNd`.
    Subclasses set the number of spatial dimensions ``_n`` and the functional
    op ``_conv``; ``_conv_forward(input, weight, bias)`` is the single place
    where a weight meets the op, so a masked or Bayesian subclass passes its
    own weight.  Padding modes are handled by the functional op.
    """

    _n = None
    _conv = None

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bias,
        padding_mode,
        device=None,
        dtype=None,
    ):
        super().__init__()
        n, name = self._n, type(self).__name__
        if not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"{name}: `groups` must be a positive integer, got {groups!r}")
        for arg, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
            if channels % groups:
                raise ValueError(
                    f"{name}: `{arg}`={channels} must be divisible by `groups`={groups}"
                )
        stride = _ntuple(stride, n, "stride")
        _check_padding(padding, padding_mode, stride, n, where=name)
        if transposed and padding_mode != "zeros":
            raise ValueError(f'{name}: only "zeros" `padding_mode` is supported')
        if not isinstance(padding, str):
            padding = _ntuple(padding, n, "padding")

        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n, "kernel_size")
        self.stride, self.padding = stride, padding
        self.dilation = _ntuple(dilation, n, "dilation")
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n, "output_padding")
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

    def _check_input(self, input):
        n, channels = self._n, self.in_channels
        shape = f"(N, {channels}, {', '.join('*' * n)}) or ({channels}, {', '.join('*' * n)})"
        _check_cplx(self, input, shape)
        if input.dim() not in (n + 1, n + 2) or input.shape[-n - 1] != channels:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape {shape}, "
                f"got {tuple(input.shape)}"
            )

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


class _CplxConv(_CplxConvNd):
    """Shared ``__init__`` and forward of :class:`CplxConv1d`, ``2d`` and ``3d``."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
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

    def _conv_forward(self, input, weight, bias):
        self._check_input(input)
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

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class _CplxConvTranspose(_CplxConvNd):
    """Shared ``__init__`` and forward of :class:`CplxConvTranspose1d`, ``2d`` and ``3d``."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
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

    def _output_padding(self, input, output_size):
        """The output padding that yields ``output_size``, as torch computes it."""
        if output_size is None:
            return self.output_padding
        n, batched = self._n, input.dim() == self._n + 2
        output_size = tuple(output_size)[-n:] if len(output_size) > n else tuple(output_size)
        if len(output_size) != n:
            raise ValueError(
                f"{self._get_name()}: `output_size` must have {n} or {n + 1 + batched}"
                f" elements, got {len(output_size)}"
            )
        spatial = input.shape[-n:]
        smallest = [
            (size - 1) * s - 2 * p + d * (k - 1) + 1
            for size, s, p, d, k in zip(
                spatial, self.stride, self.padding, self.dilation, self.kernel_size
            )
        ]
        largest = [m + s - 1 for m, s in zip(smallest, self.stride)]
        if any(not lo <= o <= hi for o, lo, hi in zip(output_size, smallest, largest)):
            raise ValueError(
                f"{self._get_name()}: requested `output_size` {list(output_size)}, but"
                f" valid sizes range from {smallest} to {largest} for an input of"
                f" spatial size {list(spatial)}"
            )
        return tuple(o - lo for o, lo in zip(output_size, smallest))

    def _conv_forward(self, input, weight, bias, output_size=None):
        self._check_input(input)
        return self._conv(
            input,
            weight,
            bias,
            self.stride,
            self.padding,
            self._output_padding(input, output_size),
            self.groups,
            self.dilation,
        )

    def forward(self, input, output_size=None):
        return self._conv_forward(input, self.weight, self.bias, output_size)


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
    ``fan_in = in_channels / groups * prod(kernel_size)``.

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

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxConvTranspose{n}d(2, 4, 3, stride=2)
    >>> layer(cplx.randn(1, 2, {spatial})).shape[:2]
    torch.Size([1, 4])
    """


class CplxConv1d(_CplxConv):
    __doc__ = _CONV_DOC.format(n=1, spatial="5")
    _n, _conv = 1, staticmethod(cplx.conv1d)


class CplxConv2d(_CplxConv):
    __doc__ = _CONV_DOC.format(n=2, spatial="5, 5")
    _n, _conv = 2, staticmethod(cplx.conv2d)


class CplxConv3d(_CplxConv):
    __doc__ = _CONV_DOC.format(n=3, spatial="5, 5, 5")
    _n, _conv = 3, staticmethod(cplx.conv3d)


class CplxConvTranspose1d(_CplxConvTranspose):
    __doc__ = _CONV_TRANSPOSE_DOC.format(n=1, spatial="5")
    _n, _conv = 1, staticmethod(cplx.conv_transpose1d)


class CplxConvTranspose2d(_CplxConvTranspose):
    __doc__ = _CONV_TRANSPOSE_DOC.format(n=2, spatial="5, 5")
    _n, _conv = 2, staticmethod(cplx.conv_transpose2d)


class CplxConvTranspose3d(_CplxConvTranspose):
    __doc__ = _CONV_TRANSPOSE_DOC.format(n=3, spatial="5, 5, 5")
    _n, _conv = 3, staticmethod(cplx.conv_transpose3d)
