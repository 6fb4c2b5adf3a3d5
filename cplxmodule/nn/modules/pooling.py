"""Complex pooling: (adaptive) max pooling by modulus, (adaptive) average pooling."""

from __future__ import annotations

import torch

from .._kinds import Pooling
from ... import cplx
from ...cplx._shared import check_spatial_dims
from .base import CplxToCplx, _check_cplx
from typing import Any, ClassVar, Optional, Union
from ...cplx._typing import CplxLike, ModuleMixin
from torch.nn.common_types import _size_any_t
from ...cplx.tensor import Cplx

__all__ = [
    "CplxMaxPoolNd",
    "CplxMaxPool1d",
    "CplxMaxPool2d",
    "CplxMaxPool3d",
    "CplxAdaptiveMaxPool1d",
    "CplxAdaptiveMaxPool2d",
    "CplxAdaptiveMaxPool3d",
    "CplxAvgPool1d",
    "CplxAvgPool2d",
    "CplxAvgPool3d",
    "CplxAdaptiveAvgPool1d",
    "CplxAdaptiveAvgPool2d",
    "CplxAdaptiveAvgPool3d",
]


class CplxMaxPoolNd(CplxToCplx):
    """Dimension-generic base of :class:`CplxMaxPool1d`, ``2d`` and ``3d``.

    Holds the arguments of :class:`torch.nn.MaxPool1d` (``stride`` defaults
    to ``kernel_size``); a subclass sets ``_max_pool``, the functional op of
    its dimension, e.g. :func:`cplxmodule.cplx.max_pool2d`, and may set
    ``_n``, the number of spatial dimensions, for the layer to check the
    input's shape under its own name.

    Examples
    --------
    >>> class Pool(CplxMaxPoolNd):
    ...     _max_pool = staticmethod(cplx.max_pool1d)
    >>> Pool(2)(cplx.randn(1, 3, 8)).shape
    torch.Size([1, 3, 4])
    """

    _max_pool: ClassVar[Any] = None
    _n: ClassVar[Any] = None

    __constants__ = [
        "kernel_size",
        "stride",
        "padding",
        "dilation",
        "return_indices",
        "ceil_mode",
    ]

    def __init__(
        self,
        kernel_size: _size_any_t,
        stride: Optional[_size_any_t] = None,
        padding: _size_any_t = 0,
        dilation: _size_any_t = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: CplxLike) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
        """The pooled input, and the indices of the selected elements if ``return_indices``."""
        input = _check_cplx(self, input)
        if self._max_pool is None:
            raise NotImplementedError(
                f"{self._get_name()} is dimension-generic: use CplxMaxPool1d, "
                "2d or 3d, or set `_max_pool` in a subclass"
            )
        if self._n is not None:
            check_spatial_dims(input, self._n, self._get_name())
        return self._max_pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"ceil_mode={self.ceil_mode}"
        )


_DOC_TEMPLATE = r"""Complex {n}d max pooling: each window yields its element of largest modulus.

    Pooling the real and imaginary parts separately would combine parts of
    different elements; selecting by :math:`|z|` keeps each value whole. The
    arguments are those of :class:`torch.nn.MaxPool{n}d`; see
    :func:`cplxmodule.cplx.max_pool{n}d`.

    Parameters
    ----------
    kernel_size : int or tuple of int
        The size of the window.
    stride : int or tuple of int, optional
        The stride of the window; ``kernel_size`` by default.
    padding : int or tuple of int
        Implicit padding, never selected.
    dilation : int or tuple of int
        The spacing between window elements.
    return_indices : bool
        Also return the flat indices of the selected elements.
    ceil_mode : bool
        Use ceil instead of floor for the output shape.

    Shape
    -----
    - Input and output: as for :class:`torch.nn.MaxPool{n}d`.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> pool = CplxMaxPool{n}d(2)
    >>> pool(cplx.randn({example})).shape
    torch.Size([{pooled}])
    """


class CplxMaxPool1d(CplxMaxPoolNd, compact=Pooling(1)):
    __doc__ = _DOC_TEMPLATE.format(n=1, example="1, 3, 8", pooled="1, 3, 4")
    _max_pool, _n = staticmethod(cplx.max_pool1d), 1


class CplxMaxPool2d(CplxMaxPoolNd, compact=Pooling(2)):
    __doc__ = _DOC_TEMPLATE.format(n=2, example="1, 3, 8, 8", pooled="1, 3, 4, 4")
    _max_pool, _n = staticmethod(cplx.max_pool2d), 2


class CplxMaxPool3d(CplxMaxPoolNd, compact=Pooling(3)):
    __doc__ = _DOC_TEMPLATE.format(
        n=3, example="1, 3, 4, 8, 8", pooled="1, 3, 2, 4, 4"
    )
    _max_pool, _n = staticmethod(cplx.max_pool3d), 3


class _PoolMixin(ModuleMixin):
    """The pooling layers built on torch's: the layer's checks, then ``_op``.

    ``_n`` is the number of spatial dimensions; ``_arguments`` the names of
    the torch layer's attributes that the functional op ``_op`` takes after
    the input. Goes before torch's pooling layer in the bases, by way of
    :class:`_AvgPoolMixin` or :class:`_MaxPoolMixin`, which give ``forward``.
    """

    _n: ClassVar[Any] = None
    _op: ClassVar[Any] = None
    _arguments: ClassVar[tuple[str, ...]] = ()

    def _pool(self, input: CplxLike) -> Any:
        input = _check_cplx(self, input)
        check_spatial_dims(input, self._n, self._get_name())
        return self._op(input, *(getattr(self, name) for name in self._arguments))


class _AvgPoolMixin(_PoolMixin):
    def forward(self, input: CplxLike) -> Cplx:
        return self._pool(input)


class _MaxPoolMixin(_PoolMixin):
    def forward(self, input: CplxLike) -> Union[Cplx, tuple[Cplx, torch.Tensor]]:
        """The pooled input, and the indices of the selected elements if ``return_indices``."""
        return self._pool(input)


_SHAPE = {
    1: ("L", "L_{out}"),
    2: ("H, W", "H_{out}, W_{out}"),
    3: ("D, H, W", "D_{out}, H_{out}, W_{out}"),
}

_ADAPTIVE_MAX_DOC = r"""Complex {n}d adaptive max pooling by modulus.

    The windows are those of :class:`torch.nn.AdaptiveMaxPool{n}d`, which
    splits the input into ``output_size`` nearly equal, possibly overlapping
    ranges along each dimension; each yields its element of largest
    :math:`|z|`, whole, so the phase is kept. The arguments are those of
    :class:`torch.nn.AdaptiveMaxPool{n}d`; see
    :func:`cplxmodule.cplx.adaptive_max_pool{n}d`.

    Parameters
    ----------
    output_size : int or tuple of int
        The output's spatial size (``None`` keeps the input's along a dimension).
    return_indices : bool
        Also return the indices of the selected elements, flat within each
        plane (sample and channel), as :func:`torch.nn.functional.max_unpool{n}d` takes.

    Shape
    -----
    - Input: ``(N, C, {dims})`` or ``(C, {dims})``.
    - Output: ``(N, C, {out})`` or ``(C, {out})``, with ``{out}`` = ``output_size``.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input has the wrong number of dimensions.

    Examples
    --------
    >>> pool = CplxAdaptiveMaxPool{n}d(2, return_indices=True)
    >>> out, indices = pool(cplx.randn({example}))
    >>> out.shape, indices.shape
    (torch.Size([{pooled}]), torch.Size([{pooled}]))
    """

_AVG_DOC = r"""Complex {n}d average pooling: the mean of each window.

    The mean is linear, so it is taken part by part. The arguments are
    those of :class:`torch.nn.AvgPool{n}d`; see :func:`cplxmodule.cplx.avg_pool{n}d`.

    Parameters
    ----------
    kernel_size : int or tuple of int
        The size of the window.
    stride : int or tuple of int, optional
        The stride of the window; ``kernel_size`` by default.
    padding : int or tuple of int
        Implicit zero padding on both sides.
    ceil_mode : bool
        Use ceil instead of floor for the output shape.
    count_include_pad : bool
        Count the zero padding in the mean's divisor.{divisor}

    Shape
    -----
    - Input: ``(N, C, {dims})`` or ``(C, {dims})``.
    - Output: ``(N, C, {out})`` or ``(C, {out})``, as for :class:`torch.nn.AvgPool{n}d`.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input has the wrong number of dimensions.

    Examples
    --------
    >>> pool = CplxAvgPool{n}d(2)
    >>> pool(cplx.randn({example})).shape
    torch.Size([{halved}])
    """

_ADAPTIVE_AVG_DOC = r"""Complex {n}d adaptive average pooling: the mean of each window.

    The windows are those of :class:`torch.nn.AdaptiveAvgPool{n}d` for the
    requested ``output_size``; the mean is linear, so it is taken part by
    part. See :func:`cplxmodule.cplx.adaptive_avg_pool{n}d`.

    Parameters
    ----------
    output_size : int or tuple of int
        The output's spatial size (``None`` keeps the input's along a dimension).

    Shape
    -----
    - Input: ``(N, C, {dims})`` or ``(C, {dims})``.
    - Output: ``(N, C, {out})`` or ``(C, {out})``, with ``{out}`` = ``output_size``.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input has the wrong number of dimensions.

    Examples
    --------
    >>> pool = CplxAdaptiveAvgPool{n}d(2)
    >>> pool(cplx.randn({example})).shape
    torch.Size([{pooled}])
    """

_DIVISOR = """
    divisor_override : int, optional
        The divisor of every window's sum, instead of the window's size."""


def _doc(template, n):
    example = {1: "1, 3, 8", 2: "1, 3, 8, 8", 3: "1, 3, 4, 8, 8"}[n]
    halved = {1: "1, 3, 4", 2: "1, 3, 4, 4", 3: "1, 3, 2, 4, 4"}[n]
    pooled = ", ".join(["1", "3"] + ["2"] * n)
    return template.format(
        n=n, dims=_SHAPE[n][0], out=_SHAPE[n][1], example=example, halved=halved,
        pooled=pooled, divisor="" if n == 1 else _DIVISOR,
    )


class CplxAdaptiveMaxPool1d(
    _MaxPoolMixin, torch.nn.AdaptiveMaxPool1d, CplxToCplx, compact=Pooling(1)
):
    __doc__ = _doc(_ADAPTIVE_MAX_DOC, 1)
    _n, _op = 1, staticmethod(cplx.adaptive_max_pool1d)
    _arguments = ("output_size", "return_indices")


class CplxAdaptiveMaxPool2d(
    _MaxPoolMixin, torch.nn.AdaptiveMaxPool2d, CplxToCplx, compact=Pooling(2)
):
    __doc__ = _doc(_ADAPTIVE_MAX_DOC, 2)
    _n, _op = 2, staticmethod(cplx.adaptive_max_pool2d)
    _arguments = ("output_size", "return_indices")


class CplxAdaptiveMaxPool3d(
    _MaxPoolMixin, torch.nn.AdaptiveMaxPool3d, CplxToCplx, compact=Pooling(3)
):
    __doc__ = _doc(_ADAPTIVE_MAX_DOC, 3)
    _n, _op = 3, staticmethod(cplx.adaptive_max_pool3d)
    _arguments = ("output_size", "return_indices")


_AVG_ARGUMENTS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")


class CplxAvgPool1d(
    _AvgPoolMixin, torch.nn.AvgPool1d, CplxToCplx, compact=Pooling(1, padded_mean=True)
):
    __doc__ = _doc(_AVG_DOC, 1)
    _n, _op, _arguments = 1, staticmethod(cplx.avg_pool1d), _AVG_ARGUMENTS


class CplxAvgPool2d(
    _AvgPoolMixin, torch.nn.AvgPool2d, CplxToCplx, compact=Pooling(2, padded_mean=True)
):
    __doc__ = _doc(_AVG_DOC, 2)
    _n, _op = 2, staticmethod(cplx.avg_pool2d)
    _arguments = _AVG_ARGUMENTS + ("divisor_override",)


class CplxAvgPool3d(
    _AvgPoolMixin, torch.nn.AvgPool3d, CplxToCplx, compact=Pooling(3, padded_mean=True)
):
    __doc__ = _doc(_AVG_DOC, 3)
    _n, _op = 3, staticmethod(cplx.avg_pool3d)
    _arguments = _AVG_ARGUMENTS + ("divisor_override",)


class CplxAdaptiveAvgPool1d(
    _AvgPoolMixin, torch.nn.AdaptiveAvgPool1d, CplxToCplx, compact=Pooling(1)
):
    __doc__ = _doc(_ADAPTIVE_AVG_DOC, 1)
    _n, _op, _arguments = 1, staticmethod(cplx.adaptive_avg_pool1d), ("output_size",)


class CplxAdaptiveAvgPool2d(
    _AvgPoolMixin, torch.nn.AdaptiveAvgPool2d, CplxToCplx, compact=Pooling(2)
):
    __doc__ = _doc(_ADAPTIVE_AVG_DOC, 2)
    _n, _op, _arguments = 2, staticmethod(cplx.adaptive_avg_pool2d), ("output_size",)


class CplxAdaptiveAvgPool3d(
    _AvgPoolMixin, torch.nn.AdaptiveAvgPool3d, CplxToCplx, compact=Pooling(3)
):
    __doc__ = _doc(_ADAPTIVE_AVG_DOC, 3)
    _n, _op, _arguments = 3, staticmethod(cplx.adaptive_avg_pool3d), ("output_size",)
