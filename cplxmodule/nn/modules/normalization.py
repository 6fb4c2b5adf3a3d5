r"""Complex layer normalisation: :math:`2 \times 2` whitening per sample."""

import numbers

import torch

from ... import cplx
from ...cplx._shared import check_trailing_shape
from .base import CplxToCplx, _check_cplx
from .parameter import _factory_kwargs
from .batchnorm import _eye_

__all__ = ["CplxLayerNorm"]


class CplxLayerNorm(CplxToCplx):
    r"""Complex layer normalisation over the trailing ``normalized_shape`` dims.

    Each sample's (real, imaginary) pairs are centred and multiplied by the
    inverse square root of their :math:`2 \times 2` covariance over the
    trailing dimensions, then mapped elementwise by a learnable real
    :math:`2 \times 2` ``weight`` and shifted by a complex ``bias``; see
    :func:`cplxmodule.cplx.layer_norm`. The arguments are those of
    :class:`torch.nn.LayerNorm`.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The trailing shape to normalise over.
    eps : float
        Added to the diagonal of each covariance for numerical stability.
    elementwise_affine : bool
        Learn ``weight`` (initialised to identity maps) and ``bias`` (zero).
    bias : bool
        Learn ``bias`` too (only with ``elementwise_affine``).
    device, dtype
        Factory arguments for the parameters.

    Shape
    -----
    - Input: ``(*, *normalized_shape)``.
    - Output: the input's shape.

    Attributes
    ----------
    weight : torch.nn.Parameter or None
        Real :math:`(2, 2, \text{normalized\_shape})` affine maps.
    bias : torch.nn.Parameter or None
        Real :math:`(2, \text{normalized\_shape})` shifts, real parts in row 0.

    Raises
    ------
    TypeError
        If the input is not a :class:`~cplxmodule.cplx.Cplx`.
    ValueError
        If the input's trailing shape is not ``normalized_shape``.

    Examples
    --------
    >>> ln = CplxLayerNorm(16)
    >>> ln(cplx.randn(4, 10, 16)).shape
    torch.Size([4, 10, 16])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        factory_kwargs = _factory_kwargs(device, dtype)
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(
                torch.empty(2, 2, *self.normalized_shape, **factory_kwargs)
            )
        else:
            self.register_parameter("weight", None)
        if elementwise_affine and bias:
            self.bias = torch.nn.Parameter(
                torch.empty(2, *self.normalized_shape, **factory_kwargs)
            )
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Reset the affine map to the identity and the shift to zero."""
        with torch.no_grad():
            if self.weight is not None:
                _eye_(self.weight)
            if self.bias is not None:
                torch.nn.init.zeros_(self.bias)

    def forward(self, input):
        _check_cplx(self, input, half_input=True)
        check_trailing_shape(input, self.normalized_shape, "input", self._get_name())
        return cplx.layer_norm(
            input, self.normalized_shape, self.weight, self.bias, self.eps
        )

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}"
        )
