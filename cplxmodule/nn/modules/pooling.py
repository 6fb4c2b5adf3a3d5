"""Complex max pooling by modulus."""


from ... import cplx
from .base import CplxToCplx, _check_cplx

__all__ = ["CplxMaxPoolNd", "CplxMaxPool1d", "CplxMaxPool2d", "CplxMaxPool3d"]


class CplxMaxPoolNd(CplxToCplx):
    """Dimension-generic base of :class:`CplxMaxPool1d`, ``2d`` and ``3d``.

    Holds the arguments of :class:`torch.nn.MaxPool1d` (``stride`` defaults
    to ``kernel_size``); a subclass sets ``_max_pool``, the functional op of
    its dimension, e.g. :func:`cplxmodule.cplx.max_pool2d`.

    Examples
    --------
    >>> class Pool(CplxMaxPoolNd):
    ...     _max_pool = staticmethod(cplx.max_pool1d)
    >>> Pool(2)(cplx.randn(1, 3, 8)).shape
    torch.Size([1, 3, 4])
    """

    _max_pool = None

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
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices=False,
        ceil_mode=False,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        _check_cplx(self, input)
        if self._max_pool is None:
            raise NotImplementedError(
                f"{self._get_name()} is dimension-generic: use CplxMaxPool1d, "
                "2d or 3d, or set `_max_pool` in a subclass"
            )
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


class CplxMaxPool1d(CplxMaxPoolNd):
    __doc__ = _DOC_TEMPLATE.format(n=1, example="1, 3, 8", pooled="1, 3, 4")
    _max_pool = staticmethod(cplx.max_pool1d)


class CplxMaxPool2d(CplxMaxPoolNd):
    __doc__ = _DOC_TEMPLATE.format(n=2, example="1, 3, 8, 8", pooled="1, 3, 4, 4")
    _max_pool = staticmethod(cplx.max_pool2d)


class CplxMaxPool3d(CplxMaxPoolNd):
    __doc__ = _DOC_TEMPLATE.format(
        n=3, example="1, 3, 4, 8, 8", pooled="1, 3, 2, 4, 4"
    )
    _max_pool = staticmethod(cplx.max_pool3d)
