"""Layers converting between real tensors and :class:`Cplx`."""

from __future__ import annotations

import torch

from ... import cplx
from ...cplx import Cplx
from ...cplx._shared import as_cplx, check_features, checked_even_dim, checked_real
from .base import BaseCplxToReal, BaseRealToCplx, _check_cplx
from ...cplx._typing import CplxLike

__all__ = [
    "InterleavedRealToCplx",
    "ConcatenatedRealToCplx",
    "CplxToInterleavedReal",
    "CplxToConcatenatedReal",
    "RealToCplx",
    "CplxToReal",
    "AsTypeCplx",
    "TensorToCplx",
    "CplxToTensor",
]


class InterleavedRealToCplx(BaseRealToCplx):
    """Read a real tensor holding ``re, im, re, im, ...`` along ``dim`` as a :class:`Cplx`.

    Parameters
    ----------
    copy : bool, default False
        Copy the parts; by default they are strided views of the input.
    dim : int, default -1
        The dimension holding the interleaved pairs; its size must be even.

    Shape
    -----
    - Input: real, of size ``2 n`` along ``dim``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, of size ``n`` along ``dim``.

    See Also
    --------
    cplxmodule.cplx.from_interleaved_real

    Examples
    --------
    >>> InterleavedRealToCplx()(torch.randn(8, 6)).shape
    torch.Size([8, 3])
    """

    def __init__(self, copy: bool = False, dim: int = -1) -> None:
        super().__init__()
        self.copy, self.dim = copy, dim

    def forward(self, input: torch.Tensor) -> Cplx:
        checked_even_dim(input, self.dim, self._get_name())
        return cplx.from_interleaved_real(input, self.copy, self.dim)

    def extra_repr(self):
        return f"copy={self.copy}, dim={self.dim}"


class ConcatenatedRealToCplx(BaseRealToCplx):
    """Read a real tensor holding all real parts, then all imaginary parts, along ``dim``.

    Parameters
    ----------
    copy : bool, default False
        Copy the parts; by default they are views of the input.
    dim : int, default -1
        The dimension holding the two halves; its size must be even.

    Shape
    -----
    - Input: real, of size ``2 n`` along ``dim``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, of size ``n`` along ``dim``.

    See Also
    --------
    cplxmodule.cplx.from_concatenated_real

    Examples
    --------
    >>> ConcatenatedRealToCplx()(torch.randn(8, 6)).shape
    torch.Size([8, 3])
    """

    def __init__(self, copy: bool = False, dim: int = -1) -> None:
        super().__init__()
        self.copy, self.dim = copy, dim

    def forward(self, input: torch.Tensor) -> Cplx:
        checked_even_dim(input, self.dim, self._get_name())
        return cplx.from_concatenated_real(input, self.copy, self.dim)

    def extra_repr(self):
        return f"copy={self.copy}, dim={self.dim}"


class CplxToInterleavedReal(BaseCplxToReal):
    """Write a :class:`Cplx` as a real tensor of ``re, im`` pairs along ``dim``.

    Parameters
    ----------
    dim : int, default -1
        The published package's only argument, hence first.
    flatten : bool, default True
        Merge the pairs into ``dim``, doubling its size; otherwise the pairs
        form a new dimension of size two after ``dim``.

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, of size ``n`` along ``dim``.
    - Output: real, of size ``2 n`` along ``dim`` (or a new dimension of
      size 2 after ``dim`` with ``flatten=False``).

    See Also
    --------
    cplxmodule.cplx.to_interleaved_real

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxToInterleavedReal()(cplx.randn(8, 3)).shape
    torch.Size([8, 6])
    """

    def __init__(self, dim: int = -1, flatten: bool = True) -> None:
        super().__init__()
        self.dim, self.flatten = dim, flatten

    def forward(self, input: CplxLike) -> torch.Tensor:
        return cplx.to_interleaved_real(_check_cplx(self, input), self.flatten, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}, flatten={self.flatten}"


class CplxToConcatenatedReal(BaseCplxToReal):
    """Write a :class:`Cplx` as a real tensor: all real parts, then all imaginary parts.

    Parameters
    ----------
    dim : int, default -1
        The dimension along which the parts are concatenated.

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, of size ``n`` along ``dim``.
    - Output: real, of size ``2 n`` along ``dim``.

    See Also
    --------
    cplxmodule.cplx.to_concatenated_real

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxToConcatenatedReal()(cplx.randn(8, 3)).shape
    torch.Size([8, 6])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: CplxLike) -> torch.Tensor:
        return cplx.to_concatenated_real(_check_cplx(self, input), dim=self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


RealToCplx = InterleavedRealToCplx
CplxToReal = CplxToInterleavedReal


class AsTypeCplx(BaseRealToCplx):
    """Promote a real tensor to a :class:`Cplx` with zero imaginary part.

    A complex value of any kind (a :class:`Cplx`, which is returned as it
    is, a tensor of torch's native complex dtype, an object with tensor
    ``.real`` and ``.imag``) keeps both of its parts, as published.

    Shape
    -----
    - Input: a real or complex tensor of any shape.
    - Output: a :class:`~cplxmodule.cplx.Cplx` of the same shape.

    Examples
    --------
    >>> z = AsTypeCplx()(torch.ones(2))
    >>> z.real, z.imag
    (tensor([1., 1.]), tensor([0., 0.]))
    """

    def forward(self, input: CplxLike) -> Cplx:
        value = as_cplx(input)
        if value is not None:
            return value
        if not isinstance(input, torch.Tensor):
            raise TypeError(
                f"{self._get_name()}: `input` must be a torch.Tensor or a complex value, "
                f"got {type(input).__name__}"
            )
        return Cplx(input)


class TensorToCplx(BaseRealToCplx):
    """Read a real tensor of shape ``(..., 2)`` as a :class:`Cplx` of shape ``(...)``.

    The layout of :func:`torch.view_as_real`: the last dimension holds the
    real and the imaginary part. The parts are views of the input. A tensor
    of torch's complex dtype, the other layout of the same values, gives its
    real and imaginary parts, also views (as :class:`AsTypeCplx` does).

    Shape
    -----
    - Input: real, ``(*, 2)``; or complex, ``(*)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*)``.

    Raises
    ------
    TypeError
        If the input is not a tensor.
    ValueError
        If a real input's last dimension does not have size 2.

    See Also
    --------
    CplxToTensor : the inverse.

    Examples
    --------
    >>> z = TensorToCplx()(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> z.real, z.imag
    (tensor([1., 3.]), tensor([2., 4.]))
    """

    def forward(self, input: CplxLike) -> Cplx:
        if isinstance(input, torch.Tensor) and input.is_complex():
            return Cplx(input)
        where = self._get_name()
        pairs = checked_real(input, where=where)
        check_features(pairs, 2, "input", where)
        real, imag = pairs.unbind(-1)
        return Cplx(real, imag)


class CplxToTensor(BaseCplxToReal):
    """Write a :class:`Cplx` of shape ``(...)`` as a real tensor of shape ``(..., 2)``.

    The layout of :func:`torch.view_as_real`; the inverse of :class:`TensorToCplx`.

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, ``(*)``.
    - Output: real, ``(*, 2)``.

    Raises
    ------
    TypeError
        If the input is not a :class:`Cplx`.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> z = cplx.Cplx(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 4.0]))
    >>> CplxToTensor()(z)
    tensor([[1., 2.],
            [3., 4.]])
    """

    def forward(self, input: CplxLike) -> torch.Tensor:
        return cplx.to_interleaved_real(_check_cplx(self, input), False, -1)
