r"""Complex positional encodings: sinusoidal (added or multiplied) and rotary."""

from __future__ import annotations

import torch

from ... import cplx
from ...cplx._shared import (
    check_choice,
    check_non_negative_int,
    check_positive,
    check_positive_int,
    check_probability,
    describe,
)
from .base import CplxToCplx, _check_cplx
from .parameter import _factory_kwargs
from typing import Optional
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx

__all__ = ["CplxSinusoidalPositionalEncoding", "CplxRotaryPositionalEncoding"]

_MODES = ("add", "multiply")


def _positions_dim(
    layer: torch.nn.Module,
    input: CplxLike,
    batch_first: bool,
    d_model: int,
    shape: str,
    dims: Optional[tuple[int, ...]] = None,
) -> tuple[Cplx, int]:
    """``input`` as a Cplx and its dimension of positions, after checking its features and ``dims``."""
    input = _check_cplx(layer, input, shape=shape)
    if (
        input.dim() < 2
        or input.shape[-1] != d_model
        or (dims is not None and input.dim() not in dims)
    ):
        raise ValueError(
            f"{layer._get_name()}: `input` must have shape {shape},"
            f" got {describe(input.real)}"
        )
    return input, 1 if batch_first and input.dim() > 2 else 0


class CplxSinusoidalPositionalEncoding(CplxToCplx):
    r"""Complex sinusoidal positional encoding, added to or multiplying the input.

    Position :math:`p` has the encoding
    :math:`e_{pk} = e^{i p \omega_k}`, :math:`\omega_k =
    \text{base}^{-k / d_{model}}` (:func:`~cplxmodule.cplx.sinusoid`): one
    complex sinusoid per feature, carrying the cosine and the sine of the
    real encoding of Vaswani et al. (2017) at once. With ``mode="add"`` (the
    transformer's form) the output is :math:`x_{pk} + e_{pk}`; with
    ``mode="multiply"`` it is :math:`x_{pk} e_{pk}`, a rotation that keeps
    the modulus (the rotary embedding of the whole input, as
    :class:`CplxRotaryPositionalEncoding` does for queries and keys alone).
    Dropout (:func:`~cplxmodule.cplx.dropout`: whole complex elements) is
    applied to the result, as in torch's transformer tutorial.

    Parameters
    ----------
    d_model : int
        The number of complex features.
    dropout : float, default 0.1
        The probability of zeroing an element of the output in training.
    max_len : int, default 5000
        The most positions (``offset`` included) an input may have.
    batch_first : bool, default False
        Whether the input is ``(N, L, E)`` rather than ``(L, N, E)``, as for
        :class:`torch.nn.TransformerEncoderLayer`.
    mode : {"add", "multiply"}, default "add"
        How the encoding meets the input.
    base : float, default 10000.0
        The ratio of the fastest to (about) the slowest frequency.
    device, dtype : optional
        Factory kwargs of the table; ``dtype`` is the real dtype of its parts.

    Raises
    ------
    ValueError
        If ``d_model`` or ``max_len`` is not a positive int, ``dropout`` is
        not in :math:`[0, 1]`, ``mode`` is not one of the two or ``base``
        is not a positive number; in the forward, if the input's shape is
        not one of the Shape's, or it has
        more than ``max_len`` positions from ``offset`` on (a non-negative
        int).
    TypeError
        If the input is not complex (a :class:`~cplxmodule.cplx.Cplx` or a
        tensor of torch's complex dtype).

    Shape
    -----
    - Input: ``(L, N, E)``, ``(N, L, E)`` with ``batch_first``, or ``(L, E)``,
      a :class:`~cplxmodule.cplx.Cplx` with ``E = d_model``, :math:`L` at
      most ``max_len - offset``; no other number of dimensions (the encoding
      of one position is shared by the ``N`` elements of a batch, never by
      more dimensions: :class:`CplxRotaryPositionalEncoding` takes them).
    - Output: the input's shape.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> pos = CplxSinusoidalPositionalEncoding(16, dropout=0.0, batch_first=True)
    >>> pos(cplx.randn(2, 10, 16)).shape
    torch.Size([2, 10, 16])
    >>> z = cplx.Cplx.zeros(10, 16)
    >>> torch.equal(pos(z).real, pos.pe.real[:10])
    True
    """

    # the table's parts, non-persistent buffers
    pe_real: torch.Tensor
    pe_imag: torch.Tensor

    def __init__(
        self,
        d_model: int,
        dropout: float = 0.1,
        max_len: int = 5000,
        batch_first: bool = False,
        mode: str = "add",
        base: float = 10000.0,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        name = type(self).__name__
        check_positive_int(d_model, "d_model", name)
        check_positive_int(max_len, "max_len", name)
        check_probability(dropout, "dropout", name)
        check_choice(mode, "mode", name, _MODES)
        check_positive(base, "base", name)
        super().__init__()
        self.d_model, self.max_len, self.dropout = d_model, max_len, float(dropout)
        self.batch_first, self.mode, self.base = batch_first, mode, base
        kwargs = _factory_kwargs(device, dtype)
        kwargs["dtype"] = kwargs["dtype"] or torch.get_default_dtype()
        self.register_buffer("pe_real", torch.empty(max_len, d_model, **kwargs),
                             persistent=False)
        self.register_buffer("pe_imag", torch.empty(max_len, d_model, **kwargs),
                             persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        """Fill the table :attr:`pe` (after ``to_empty()``, as for torch's meta-device init)."""
        if self.pe_real.is_meta:
            return
        table = cplx.sinusoid(self.max_len, self.d_model, self.base, dtype=torch.float64)
        with torch.no_grad():
            self.pe_real.copy_(table.real)
            self.pe_imag.copy_(table.imag)

    @property
    def pe(self) -> Cplx:
        """Cplx: the table :math:`e_{pk}`, of shape ``(max_len, d_model)``, read-only.

        Computed in float64, cast to the layer's dtype and held in the
        non-persistent buffers ``pe_real`` and ``pe_imag``: not in the
        state_dict, so a checkpoint loads into any ``max_len``.
        """
        return cplx.Cplx(self.pe_real, self.pe_imag)

    def forward(self, input: CplxLike, offset: int = 0) -> Cplx:
        """Add or multiply the encodings of positions ``offset, offset + 1, ...``.

        Parameters
        ----------
        input : Cplx
            As in the class's Shape.
        offset : int, default 0
            The position of the first element (for decoding a step at a time).

        Returns
        -------
        Cplx
        """
        shape = "(N, L, E)" if self.batch_first else "(L, N, E)"
        input, dim = _positions_dim(self, input, self.batch_first, self.d_model,
                                    f"{shape} or (L, E) with E = {self.d_model}", dims=(2, 3))
        check_non_negative_int(offset, "offset", self._get_name())
        length = input.shape[dim]
        if offset + length > self.max_len:
            raise ValueError(
                f"{self._get_name()}: `input` must have at most max_len={self.max_len}"
                f" positions (offset {offset} included), got {length}"
            )
        pe = self.pe[offset : offset + length]
        if dim == 0 and input.dim() == 3:
            pe = pe.unsqueeze(1)
        output = input + pe if self.mode == "add" else input * pe
        return cplx.dropout(output, self.dropout, self.training)

    def extra_repr(self):
        s = f"{self.d_model}, dropout={self.dropout}, max_len={self.max_len}"
        if self.batch_first:
            s += ", batch_first=True"
        if self.mode != "add":
            s += f", mode={self.mode!r}"
        if self.base != 10000.0:
            s += f", base={self.base}"
        return s


class CplxRotaryPositionalEncoding(CplxToCplx):
    r"""Rotary positional encoding as a phase rotation: :func:`~cplxmodule.cplx.rotary`.

    Feature :math:`k` of position :math:`p` is multiplied by
    :math:`e^{i p \theta_k}`, :math:`\theta_k = \text{base}^{-k / d}`: the
    rotary position embedding of Su et al. (2021), whose rotated pairs of
    real features are here the complex features themselves. Applied to the
    queries and the keys of an attention layer, it makes the score of a
    query :math:`q` at position :math:`m` and a key :math:`k` at position
    :math:`n`,

    .. math::

        \Re \sum_k q_k e^{i m \theta_k} \, \overline{k_k e^{i n \theta_k}}
        = \Re \sum_k q_k \overline{k_k} \, e^{i (m - n) \theta_k},

    depend on the positions through :math:`m - n` alone, exactly (the
    moduli are kept). No parameters and no table: the phases are computed
    for each call in float64, reduced modulo :math:`2\pi`, so any length
    works and far positions keep their precision.

    Parameters
    ----------
    d_model : int
        The number of complex features :math:`d` (per head).
    base : float, default 10000.0
        The ratio of the fastest to (about) the slowest frequency.
    batch_first : bool, default False
        Whether positions are the input's second dimension rather than its
        first, as for :class:`torch.nn.MultiheadAttention`.

    Raises
    ------
    ValueError
        If ``d_model`` is not a positive int or ``base`` not a positive
        number.

    Shape
    -----
    - Input: ``(L, *, E)``, ``(N, L, *, E)`` with ``batch_first``, or
      ``(L, E)``, a :class:`~cplxmodule.cplx.Cplx` with ``E = d_model``;
      ``*`` is any number of dimensions (heads, say) sharing the rotation.
    - Output: the input's shape.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> rope = CplxRotaryPositionalEncoding(8, batch_first=True)
    >>> q = cplx.randn(2, 5, 4, 8)  # (batch, positions, heads, features)
    >>> rope(q).shape
    torch.Size([2, 5, 4, 8])
    >>> torch.allclose(abs(rope(q)), abs(q))
    True
    """

    def __init__(self, d_model: int, base: float = 10000.0, batch_first: bool = False) -> None:
        name = type(self).__name__
        check_positive_int(d_model, "d_model", name)
        check_positive(base, "base", name)
        super().__init__()
        self.d_model, self.base, self.batch_first = d_model, base, batch_first

    def forward(self, input: CplxLike, offset: int = 0) -> Cplx:
        """Rotate positions ``offset, offset + 1, ...`` of ``input``.

        Parameters
        ----------
        input : Cplx
            As in the class's Shape.
        offset : int, default 0
            The position of the first element (for decoding a step at a time).

        Returns
        -------
        Cplx
        """
        shape = "(N, L, *, E)" if self.batch_first else "(L, *, E)"
        input, dim = _positions_dim(self, input, self.batch_first, self.d_model,
                                    f"{shape} or (L, E) with E = {self.d_model}")
        check_non_negative_int(offset, "offset", self._get_name())
        return cplx.rotary(input, dim=dim, base=self.base, offset=offset)

    def extra_repr(self):
        s = f"{self.d_model}"
        if self.base != 10000.0:
            s += f", base={self.base}"
        if self.batch_first:
            s += ", batch_first=True"
        return s
