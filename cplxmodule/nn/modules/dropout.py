"""Complex dropout: one mask shared by the real and the imaginary part."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Optional

import torch

from .._kinds import IDENTITY_IN_EVAL
from ... import cplx
from ...cplx._shared import check_probability, check_spatial_dims
from .base import CplxToCplx, _check_cplx
from ...cplx._typing import CplxLike
from ...cplx.tensor import Cplx

__all__ = ["CplxDropout", "CplxDropout1d", "CplxDropout2d", "CplxDropout3d"]


if TYPE_CHECKING:
    # the mixin is mixed into torch's dropout layers only
    _DropoutNd = torch.nn.modules.dropout._DropoutNd
else:
    _DropoutNd = object


class _DropoutMixin(_DropoutNd):
    """The checks of the dropout layers, then torch's layer, and ``forward`` by the op ``_dropout``.

    ``_n`` is the number of spatial dimensions of a channel dropout, ``None``
    for element-wise dropout. Goes before torch's dropout layer in the bases.
    """

    _n: ClassVar[Optional[int]] = None
    _dropout: ClassVar[Any] = None

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        # torch's own check names neither the layer nor the argument
        super().__init__(check_probability(p, "p", type(self).__name__), inplace)

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        if self._n is not None:
            check_spatial_dims(input, self._n, self._get_name())
        return self._dropout(input, self.p, self.training, self.inplace)


class CplxDropout(_DropoutMixin, torch.nn.Dropout, CplxToCplx, compact=IDENTITY_IN_EVAL):
    r"""Zero complex elements with probability ``p``, the same in both parts.

    Kept elements are scaled by :math:`1/(1-p)` during training; in eval
    mode the layer is the identity. The arguments are those of
    :class:`torch.nn.Dropout`; see :func:`cplxmodule.cplx.dropout`.

    Parameters
    ----------
    p : float
        Probability of an element to be zeroed.
    inplace : bool
        Modify the parts of the input in place.

    Shape
    -----
    - Input and output: any shape, the same.

    Raises
    ------
    ValueError
        If ``p`` is not in :math:`[0, 1]`.
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> z = CplxDropout(0.5)(cplx.randn(4, 8))
    >>> bool(((z.real == 0) == (z.imag == 0)).all())
    True
    """

    _dropout = staticmethod(cplx.dropout)


_DOC_TEMPLATE = r"""Zero whole channels of a complex {n}d input, the same in both parts.

    Each channel of each sample is dropped with probability ``p`` and the
    kept ones are scaled by :math:`1/(1-p)` during training; in eval mode the
    layer is the identity. The arguments are those of
    :class:`torch.nn.Dropout{n}d`; see :func:`cplxmodule.cplx.dropout{n}d`.

    Parameters
    ----------
    p : float
        Probability of a channel to be zeroed.
    inplace : bool
        Modify the parts of the input in place.

    Shape
    -----
    - Input: ``(N, C, {dims})`` or ``(C, {dims})``.
    - Output: the input's shape.

    Raises
    ------
    ValueError
        If ``p`` is not in :math:`[0, 1]`, or the input is not
        :math:`(N, C, {dims})` or :math:`(C, {dims})`.
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.

    Examples
    --------
    >>> CplxDropout{n}d(0.5)(cplx.randn({example})).shape
    torch.Size([{example}])
    """


class CplxDropout1d(_DropoutMixin, torch.nn.Dropout1d, CplxToCplx, compact=IDENTITY_IN_EVAL):
    __doc__ = _DOC_TEMPLATE.format(n=1, dims="L", example="2, 3, 5")
    _n, _dropout = 1, staticmethod(cplx.dropout1d)


class CplxDropout2d(_DropoutMixin, torch.nn.Dropout2d, CplxToCplx, compact=IDENTITY_IN_EVAL):
    __doc__ = _DOC_TEMPLATE.format(n=2, dims="H, W", example="2, 3, 4, 4")
    _n, _dropout = 2, staticmethod(cplx.dropout2d)


class CplxDropout3d(_DropoutMixin, torch.nn.Dropout3d, CplxToCplx, compact=IDENTITY_IN_EVAL):
    __doc__ = _DOC_TEMPLATE.format(n=3, dims="D, H, W", example="2, 3, 2, 4, 4")
    _n, _dropout = 3, staticmethod(cplx.dropout3d)
