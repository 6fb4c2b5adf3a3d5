r"""Unitary recurrent layers: a norm-preserving complex RNN cell and its sequence layer."""

from __future__ import annotations

import math

import torch

from ... import cplx
from ...cplx import Cplx
from ...cplx._shared import check_dtype, check_positive_int, describe
from ..cache import _cached_attr
from .base import CplxToCplx, _check_cplx
from .linear import CplxLinear
from .parameter import CplxParameter, _factory_kwargs
from typing import Optional
from ...cplx._typing import CplxLike, Device

__all__ = ["CplxUnitaryRNNCell", "CplxUnitaryRNN"]


class _CplxUnitaryBase(CplxToCplx):
    """The parameters, the unitary matrix and the one step shared by the cell and the layer."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        name = type(self).__name__
        check_positive_int(input_size, "input_size", name)
        check_positive_int(hidden_size, "hidden_size", name)
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        kwargs = _factory_kwargs(device, dtype)
        self.input_proj = CplxLinear(input_size, hidden_size, bias=bias, **kwargs)
        self.generator = CplxParameter(Cplx.empty(hidden_size, hidden_size, **kwargs))
        self.threshold = torch.nn.Parameter(torch.empty(hidden_size, **kwargs))
        self.reset_parameters()

    def reset_parameters(self):
        r"""Draw a random unitary :math:`U`, and set modReLU's thresholds to zero.

        The generator is :math:`S = Q \operatorname{diag}(i\theta) Q^H`, with
        :math:`Q` the unitary factor of the QR decomposition of a complex
        Gaussian matrix and :math:`\theta_j` uniform on :math:`(-\pi, \pi)`:
        :math:`U = Q \operatorname{diag}(e^{i\theta}) Q^H` has its eigenvalues
        spread over the unit circle, in a random basis. The input map gets
        :class:`~cplxmodule.nn.CplxLinear`'s initialisation.
        """
        n = self.hidden_size
        gaussian = torch.randn(n, n, dtype=torch.complex128)
        q, _ = torch.linalg.qr(gaussian)
        theta = torch.empty(n, dtype=torch.float64).uniform_(-math.pi, math.pi)
        skew = (q * (1j * theta)) @ q.mH
        with torch.no_grad():
            self.generator.real.copy_(skew.real)
            self.generator.imag.copy_(skew.imag)
            self.threshold.zero_()
        self.input_proj.reset_parameters()

    @property
    def weight_hh(self):
        r"""Cplx: the unitary :math:`U = \exp\bigl((G - G^H) / 2\bigr)`, read-only.

        Of shape ``(hidden_size, hidden_size)``, computed on each read.
        """
        g = self.generator
        skew = Cplx(g.real - g.real.T, g.imag + g.imag.T) * 0.5
        return cplx.matrix_exp(skew)

    def _check_input(self, input: object, name: str, shape: str, dims: tuple[int, ...], size: int) -> Cplx:
        input = _check_cplx(self, input, shape=shape, name=name)
        check_dtype(input, self.threshold.dtype, name, self._get_name())
        if input.dim() not in dims or input.shape[-1] != size:
            raise ValueError(
                f"{self._get_name()}: `{name}` must have shape {shape},"
                f" got {describe(input.real)}"
            )
        return input

    def _step(self, projected, hx, weight_hh):
        """:math:`\\sigma(U h + W x + b)` from the projected input ``W x + b``."""
        return cplx.modrelu(cplx.linear(hx, weight_hh) + projected, self.threshold)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.input_proj.bias is None:
            s += ", bias=False"
        return s


_CELL_MATH = r"""
    .. math::

        h' = \operatorname{modReLU}_b(U h + W x + c), \qquad
        \operatorname{modReLU}_b(z) = z \max\Bigl(0, 1 - \frac{b}{|z|}\Bigr),

    with :math:`U` unitary (:math:`U^H U = I`), so that the recurrent map
    keeps the norm of the state exactly and gradients through a long
    sequence neither explode nor vanish through it (Arjovsky et al., 2016).
    :math:`U` is the matrix exponential of the skew-Hermitian part of a free
    complex matrix :math:`G` (``generator``): :math:`U = \exp\bigl((G -
    G^H)/2\bigr)` (:func:`~cplxmodule.cplx.matrix_exp`), the parametrisation
    of Lezcano-Casado and Martínez-Rubio (2019). It reaches every unitary
    matrix (the exponential map of the unitary group is onto), where the
    product of diagonal, reflection,
    permutation and Fourier factors of Arjovsky et al. reaches only a
    subset; an unconstrained optimiser steps on :math:`G`, and :math:`U`
    stays unitary to rounding. :math:`W x + c` is the
    :class:`~cplxmodule.nn.CplxLinear` submodule ``input_proj``, which
    masking and variational dropout convert (``to_masked``,
    ``to_bayesian``) like any other; :math:`U`, being unitary, is not
    sparsified. modReLU's thresholds :math:`b` (``threshold``, one per
    hidden unit, :func:`~cplxmodule.cplx.modrelu`; the bias of Arjovsky et
    al. is :math:`-b`) start at zero, where the step is linear.
"""

_REFERENCES = r"""
    M. Arjovsky, A. Shah, Y. Bengio, "Unitary Evolution Recurrent Neural
    Networks", ICML 2016.

    M. Lezcano-Casado, D. Martínez-Rubio, "Cheap Orthogonal Constraints in
    Neural Networks: A Simple Parametrization of the Orthogonal and Unitary
    Group", ICML 2019.
"""

_ATTRIBUTES = r"""
    Attributes
    ----------
    input_proj : CplxLinear
        :math:`W` and :math:`c`, from ``input_size`` to ``hidden_size``.
    generator : CplxParameter
        :math:`G`, of shape ``(hidden_size, hidden_size)``.
    threshold : torch.nn.Parameter
        :math:`b`, real, of shape ``(hidden_size,)``.
    weight_hh : Cplx
        :math:`U`, read-only, of shape ``(hidden_size, hidden_size)``,
        computed on each read (once per call of the layer;
        :func:`~cplxmodule.nn.cached` computes it once for many calls of
        the cell).
"""


class CplxUnitaryRNNCell(_CplxUnitaryBase):
    __doc__ = (
        r"""A unitary complex RNN cell, a norm-preserving twin of :class:`torch.nn.RNNCell`.
"""
        + _CELL_MATH
        + r"""
    Parameters
    ----------
    input_size, hidden_size : int
        The numbers of input and hidden features.
    bias : bool, default True
        Whether ``input_proj`` has a bias :math:`c`.
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of the parameters.
"""
        + _ATTRIBUTES
        + r"""
    Raises
    ------
    ValueError
        If ``input_size`` or ``hidden_size`` is not a positive int.

    Shape
    -----
    - Input: ``(N, input_size)`` or ``(input_size,)``, a
      :class:`~cplxmodule.cplx.Cplx`.
    - ``hx``: ``(N, hidden_size)`` or ``(hidden_size,)``; zeros if omitted.
    - Output: ``(N, hidden_size)`` or ``(hidden_size,)``.

    References
    ----------"""
        + _REFERENCES
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> cell = CplxUnitaryRNNCell(4, 16)
    >>> x = cplx.randn(10, 3, 4)  # (length, batch, features)
    >>> h = None
    >>> for x_t in x:
    ...     h = cell(x_t, h)
    >>> h.shape
    torch.Size([3, 16])
    >>> u = cell.weight_hh
    >>> torch.allclose((u.h() @ u).real, torch.eye(16), atol=1e-5)
    True
    """
    )

    def forward(self, input: CplxLike, hx: Optional[CplxLike] = None) -> Cplx:
        """One step: the next hidden state.

        Parameters
        ----------
        input : Cplx
        hx : Cplx, optional

        Returns
        -------
        Cplx
        """
        input = self._check_input(
            input, "input", f"(N, {self.input_size}) or ({self.input_size},)", (1, 2),
            self.input_size,
        )
        state_shape = (*input.shape[:-1], self.hidden_size)
        if hx is None:
            hx = Cplx.zeros(*state_shape, dtype=input.dtype, device=input.device)
        hx = self._check_input(hx, "hx", str(state_shape), (input.dim(),), self.hidden_size)
        if hx.shape != state_shape:
            raise ValueError(
                f"{self._get_name()}: `hx` must have shape {state_shape},"
                f" got {describe(hx.real)}"
            )
        return self._step(self.input_proj(input), hx, _cached_attr(self, "weight_hh"))


class CplxUnitaryRNN(_CplxUnitaryBase):
    __doc__ = (
        r"""A unitary complex RNN over whole sequences, twin of a one-layer :class:`torch.nn.RNN`.

    Runs :class:`CplxUnitaryRNNCell`'s step along the sequence, with the
    same parameters (the two load each other's state_dict):
"""
        + _CELL_MATH
        + r"""
    :math:`U` is computed once per call and the input map is applied to the
    whole sequence at once; the recurrence itself is a loop over positions.

    Parameters
    ----------
    input_size, hidden_size : int
        The numbers of input and hidden features.
    bias : bool, default True
        Whether ``input_proj`` has a bias :math:`c`.
    batch_first : bool, default False
        Whether the input and output are ``(N, L, *)`` rather than
        ``(L, N, *)``, as for :class:`torch.nn.RNN`.
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of the parameters.
"""
        + _ATTRIBUTES
        + r"""
    Raises
    ------
    ValueError
        If ``input_size`` or ``hidden_size`` is not a positive int.

    Shape
    -----
    - Input: ``(L, N, input_size)``, ``(N, L, input_size)`` with
      ``batch_first``, or ``(L, input_size)``, a
      :class:`~cplxmodule.cplx.Cplx` of at least one step (:math:`L \geq 1`).
    - ``hx``: ``(1, N, hidden_size)`` or ``(1, hidden_size)``, as for
      :class:`torch.nn.RNN` with one layer; zeros if omitted.
    - Output: ``output`` of shape ``(L, N, hidden_size)`` (``(N, L,
      hidden_size)`` with ``batch_first``, ``(L, hidden_size)`` unbatched),
      the hidden state at every position, and ``h_n`` of ``hx``'s shape,
      the last one.

    References
    ----------"""
        + _REFERENCES
        + r"""
    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> rnn = CplxUnitaryRNN(4, 16, batch_first=True)
    >>> output, h_n = rnn(cplx.randn(3, 10, 4))
    >>> output.shape, h_n.shape
    (torch.Size([3, 10, 16]), torch.Size([1, 3, 16]))
    """
    )

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        batch_first: bool = False,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, device=device, dtype=dtype)
        self.batch_first = batch_first

    def forward(self, input: CplxLike, hx: Optional[CplxLike] = None) -> tuple[Cplx, Cplx]:
        """Run the recurrence over the sequence.

        Parameters
        ----------
        input : Cplx
        hx : Cplx, optional

        Returns
        -------
        output : Cplx
        h_n : Cplx
        """
        layout = "(N, L, {0}) or (L, {0})" if self.batch_first else "(L, N, {0}) or (L, {0})"
        input = self._check_input(
            input, "input", layout.format(self.input_size), (2, 3), self.input_size
        )
        batched = input.dim() == 3
        steps = input.shape[1 if batched and self.batch_first else 0]
        if steps == 0:
            # as CplxRNN (and torch's RNN): no output of no steps to stack
            raise ValueError(
                f"{self._get_name()}: `input` must have at least one time step,"
                f" got shape {tuple(input.shape)}"
            )
        if batched and self.batch_first:
            input = input.transpose(0, 1)
        if not batched:
            input = input.unsqueeze(1)
        state_shape = (1, input.shape[1], self.hidden_size) if batched else (1, self.hidden_size)
        if hx is None:
            hx = Cplx.zeros(*state_shape, dtype=input.dtype, device=input.device)
        hx = self._check_input(hx, "hx", str(state_shape), (len(state_shape),), self.hidden_size)
        if hx.shape != state_shape:
            raise ValueError(
                f"{self._get_name()}: `hx` must have shape {state_shape},"
                f" got {describe(hx.real)}"
            )
        projected = self.input_proj(input)
        weight_hh = _cached_attr(self, "weight_hh")
        h = hx.reshape(input.shape[1], self.hidden_size)
        outputs = []
        for step in projected:
            h = self._step(step, h, weight_hh)
            outputs.append(h)
        output = cplx.stack(outputs, 0)
        h_n = h.reshape(state_shape)
        if not batched:
            output = output.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, h_n
