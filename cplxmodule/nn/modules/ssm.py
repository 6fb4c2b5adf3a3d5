r"""Complex diagonal state-space layers (S4D)."""

from __future__ import annotations

import math

import torch

from ... import cplx
from ...cplx import Cplx
from ...cplx._shared import (
    ArgumentTypeError,
    check_choice,
    check_dtype,
    check_positive,
    check_positive_int,
    describe,
    is_int,
)
from .base import CplxToCplx, _check_cplx
from .linear import CplxLinear
from .parameter import CplxParameter, _factory_kwargs
from typing import Optional
from ...cplx._typing import CplxLike, Device

__all__ = ["CplxS4D"]

_INITS = ("lin", "inv")


class CplxS4D(CplxToCplx):
    r"""A complex diagonal state-space layer, S4D (Gu et al., 2022), complex in and out.

    Each of the ``d_model`` channels :math:`h` is a linear time-invariant
    system of :math:`M = d_{state} / 2` complex modes,

    .. math::

        x'(t) = \Lambda x(t) + B u(t), \qquad y(t) = C^\top x(t) + D u(t),

    with a diagonal :math:`\Lambda \in \mathbb{C}^M` of negative real part,
    :math:`B, C \in \mathbb{C}^M` and :math:`D \in \mathbb{C}`, discretised
    by a zero-order hold at a learnable step :math:`\Delta`
    (:func:`~cplxmodule.cplx.zoh`): :math:`x_l = \bar\Lambda x_{l-1} + \bar B
    u_l`, :math:`y_l = C^\top x_l + D u_l`. Over a whole sequence this is
    the causal convolution :math:`y = K * u` with the kernel
    :math:`K_j = \sum_n C_n \bar B_n \bar\Lambda_n^j + D [j = 0]`
    (:meth:`kernel`, :func:`~cplxmodule.cplx.ssm_kernel`, computed in closed
    form), which ``forward`` applies by FFT
    (:func:`~cplxmodule.cplx.causal_fftconv`) in :math:`O(L \log L)`;
    :meth:`step` runs the recurrence one step at a time instead, for
    generation, with the same outputs.

    Unlike the real S4D, whose output is :math:`2 \Re` of the complex
    system's (so conjugate modes pair up), the input and the output here are
    complex, so :math:`y` is the complex :math:`C^\top x + D u` itself. There
    is no nonlinearity: compose the layer with an activation (and, as the
    paper does, a position-wise output map: ``out_proj=True``).

    Parameters
    ----------
    d_model : int
        The number of channels :math:`H`.
    d_state : int, default 64
        The state size :math:`N` of each channel, counted in real numbers,
        as in the paper: :math:`N / 2` complex modes. Even.
    dt_min, dt_max : float, default 0.001, 0.1
        The range of the initial steps: :math:`\log \Delta` is drawn
        uniformly between their logarithms, one per channel.
    init : {"lin", "inv"}, default "lin"
        The initial :math:`\Lambda_n`, :math:`n = 0, \dots, N/2 - 1`:
        S4D-Lin, :math:`-\frac12 + i \pi n`, or S4D-Inv,
        :math:`-\frac12 + i \frac N\pi (\frac N{2n + 1} - 1)`.
    out_proj : bool, default False
        Whether to follow the layer by a :class:`~cplxmodule.nn.CplxLinear`
        from ``d_model`` to ``d_model`` features, applied at each position.
    channels_last : bool, default False
        Whether the input is ``(N, L, H)`` (the layout of
        :class:`torch.nn.RNN` with ``batch_first=True`` and of transformers)
        rather than ``(N, H, L)`` (that of :class:`torch.nn.Conv1d`).
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of the parameters.

    Attributes
    ----------
    log_dt : torch.nn.Parameter
        :math:`\log \Delta`, real, of shape ``(H,)``.
    log_A_real, A_imag : torch.nn.Parameter
        :math:`\log(-\Re\Lambda)` and :math:`\Im \Lambda`, real, of shape
        ``(H, N/2)``: the real part of :math:`\Lambda` stays negative, so the
        system stays stable whatever the optimiser does.
    B, C : CplxParameter
        Of shape ``(H, N/2)``; :math:`B = 1` and :math:`C` complex standard
        normal (:math:`\mathbb{E}|C_n|^2 = 1`) at initialisation.
    D : CplxParameter
        The skip, of shape ``(H,)``, complex standard normal.
    out_proj : CplxLinear or None
        The output map, if ``out_proj``.

    Raises
    ------
    ValueError
        If ``d_model`` is not a positive int, ``d_state`` not a positive even
        int, ``dt_min`` and ``dt_max`` are not positive numbers with
        ``dt_min <= dt_max``, or ``init`` is not one of the two.

    Shape
    -----
    - Input: ``(N, H, L)`` or ``(H, L)``, or ``(N, L, H)`` or ``(L, H)`` with
      ``channels_last``, a :class:`~cplxmodule.cplx.Cplx` with
      ``H = d_model`` and ``L >= 1``.
    - Output: the input's shape.

    Notes
    -----
    Sparsification. The per-mode vectors :math:`B`, :math:`C` and the
    diagonal :math:`\Lambda` are not weights of a dense map, so masking and
    variational dropout (:func:`~cplxmodule.nn.masked.to_masked`,
    :func:`~cplxmodule.nn.relevance.to_bayesian`) leave them dense; the
    optional ``out_proj`` is an ordinary :class:`~cplxmodule.nn.CplxLinear`
    submodule, which they convert like any other.

    The kernel is computed in torch's native complex dtype (as the FFTs are),
    so the parameters must be float32 or float64.

    References
    ----------
    A. Gu, A. Gupta, K. Goel, C. Ré, "On the Parameterization and
    Initialization of Diagonal State Space Models", NeurIPS 2022.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxS4D(8, d_state=16)
    >>> u = cplx.randn(2, 8, 100)  # (batch, channels, length)
    >>> y = layer(u)
    >>> y.shape
    torch.Size([2, 8, 100])

    The recurrence gives the same outputs a step at a time:

    >>> state, steps = None, []
    >>> for t in range(100):
    ...     out, state = layer.step(u[..., t], state)
    ...     steps.append(out)
    >>> torch.allclose(cplx.stack(steps, -1).real, y.real, atol=1e-4)
    True
    """

    def __init__(
        self,
        d_model: int,
        d_state: int = 64,
        dt_min: float = 0.001,
        dt_max: float = 0.1,
        init: str = "lin",
        out_proj: bool = False,
        channels_last: bool = False,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        name = type(self).__name__
        check_positive_int(d_model, "d_model", name)
        # the modes come in conjugate pairs
        if not is_int(d_state) or d_state < 2 or d_state % 2:
            error = ValueError if is_int(d_state) else ArgumentTypeError
            raise error(f"{name}: `d_state` must be a positive even int, got {d_state!r}")
        check_positive(dt_min, "dt_min", name)
        check_positive(dt_max, "dt_max", name)
        if dt_min > dt_max:
            raise ValueError(
                f"{name}: `dt_min` must be at most `dt_max`, got {dt_min!r} > {dt_max!r}"
            )
        check_choice(init, "init", name, _INITS)
        super().__init__()
        self.d_model, self.d_state = d_model, d_state
        self.dt_min, self.dt_max, self.init = dt_min, dt_max, init
        self.channels_last = channels_last
        kwargs = _factory_kwargs(device, dtype)
        modes = (d_model, d_state // 2)
        self.log_dt = torch.nn.Parameter(torch.empty(d_model, **kwargs))
        self.log_A_real = torch.nn.Parameter(torch.empty(modes, **kwargs))
        self.A_imag = torch.nn.Parameter(torch.empty(modes, **kwargs))
        self.B = CplxParameter(Cplx.empty(*modes, **kwargs))
        self.C = CplxParameter(Cplx.empty(*modes, **kwargs))
        self.D = CplxParameter(Cplx.empty(d_model, **kwargs))
        if out_proj:
            self.out_proj = CplxLinear(d_model, d_model, **kwargs)
        else:
            self.register_module("out_proj", None)
        self.reset_parameters()

    def reset_parameters(self):
        r"""Draw the parameters as described in the class's Attributes (S4D-Lin or -Inv)."""
        n = torch.arange(self.d_state // 2, dtype=torch.float64)
        if self.init == "lin":
            imag = math.pi * n
        else:
            size = self.d_state
            imag = size / math.pi * (size / (2 * n + 1) - 1)
        with torch.no_grad():
            torch.nn.init.uniform_(self.log_dt, math.log(self.dt_min), math.log(self.dt_max))
            self.log_A_real.fill_(math.log(0.5))
            self.A_imag.copy_(imag.expand_as(self.A_imag))
            self.B.real.fill_(1.0)
            self.B.imag.zero_()
            for part in (self.C.real, self.C.imag, self.D.real, self.D.imag):
                torch.nn.init.normal_(part, std=math.sqrt(0.5))
            if self.out_proj is not None:
                self.out_proj.reset_parameters()

    @property
    def A(self):
        r"""Cplx: :math:`\Lambda = -e^{\text{log\_A\_real}} + i \, \text{A\_imag}`, read-only.

        Of shape ``(H, N/2)``; its real part is negative whatever
        ``log_A_real`` holds.
        """
        return Cplx(-torch.exp(self.log_A_real), self.A_imag)

    def kernel(self, length):
        r"""The convolution kernel :math:`K` (the skip :math:`D` in tap 0).

        Parameters
        ----------
        length : int
            The number of taps :math:`L`.

        Returns
        -------
        Cplx
            Of shape ``(H, L)``: the layer's response to a unit impulse at
            position 0 (before ``out_proj``).
        """
        return cplx.ssm_kernel(self.A, self.B, self.C, torch.exp(self.log_dt), length, d=self.D)

    def _check_input(self, input: object, name: str, shape: str) -> Cplx:
        input = _check_cplx(self, input, shape=shape, name=name)
        check_dtype(input, self.log_dt.dtype, name, self._get_name())
        return input

    def forward(self, input: CplxLike) -> Cplx:
        """Apply the layer to whole sequences (by FFT convolution).

        Parameters
        ----------
        input : Cplx
            As in the class's Shape.

        Returns
        -------
        Cplx
        """
        h = self.d_model
        shape = f"(N, L, {h}) or (L, {h})" if self.channels_last else f"(N, {h}, L) or ({h}, L)"
        input = self._check_input(input, "input", shape)
        channel_dim, length_dim = (-1, -2) if self.channels_last else (-2, -1)
        if input.dim() not in (2, 3) or input.shape[channel_dim] != h:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape {shape},"
                f" got {describe(input.real)}"
            )
        if input.shape[length_dim] < 1:
            raise ValueError(
                f"{self._get_name()}: `input` must have a length L of at least 1 in {shape},"
                f" got {describe(input.real)}"
            )
        if self.channels_last:
            input = input.transpose(-1, -2)
        output = cplx.causal_fftconv(input, self.kernel(input.shape[-1]))
        if self.out_proj is None:
            return output.transpose(-1, -2) if self.channels_last else output
        # the projection mixes channels position-wise: features last
        output = self.out_proj(output.transpose(-1, -2))
        return output if self.channels_last else output.transpose(-1, -2)

    def step(self, input, state=None):
        r"""Advance the recurrence by one position.

        Parameters
        ----------
        input : Cplx
            The input :math:`u_l` at one position, of shape ``(N, H)`` or
            ``(H,)``.
        state : Cplx, optional
            The state :math:`x_{l-1}`, of shape ``(N, H, d_state / 2)`` or
            ``(H, d_state / 2)``; zeros (the start of a sequence) by default.

        Returns
        -------
        output : Cplx
            :math:`y_l`, of the input's shape (after ``out_proj``, if any).
        state : Cplx
            :math:`x_l`, of the state's shape.
        """
        h, modes = self.d_model, self.d_state // 2
        input = self._check_input(input, "input", f"(N, {h}) or ({h},)")
        if input.dim() not in (1, 2) or input.shape[-1] != h:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape (N, {h}) or ({h},),"
                f" got {describe(input.real)}"
            )
        state_shape = (*input.shape, modes)
        if state is None:
            state = Cplx.zeros(*state_shape, dtype=input.dtype, device=input.device)
        state = self._check_input(state, "state", str(state_shape))
        if state.shape != state_shape:
            raise ValueError(
                f"{self._get_name()}: `state` must have shape {state_shape},"
                f" got {describe(state.real)}"
            )
        abar, bbar = cplx.zoh(self.A, self.B, torch.exp(self.log_dt))
        state = abar * state + bbar * input.unsqueeze(-1)
        output = (self.C * state).sum(-1) + self.D * input
        if self.out_proj is not None:
            output = self.out_proj(output)
        return output, state

    def extra_repr(self):
        s = f"{self.d_model}, d_state={self.d_state}"
        if (self.dt_min, self.dt_max) != (0.001, 0.1):
            s += f", dt_min={self.dt_min}, dt_max={self.dt_max}"
        if self.init != "lin":
            s += f", init={self.init!r}"
        if self.channels_last:
            s += ", channels_last=True"
        return s
