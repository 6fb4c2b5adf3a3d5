"""Complex activations and complex-to-real reductions."""

from __future__ import annotations

import numbers

import torch

from .._kinds import ELEMENTWISE, Channelwise, Elementwise
from ... import cplx
from ...cplx._shared import (
    check_bool,
    check_choice,
    check_int,
    check_positive_int,
    check_real,
)
from .base import BaseCplxToReal, CplxToCplx, _check_cplx
from .parameter import _factory_kwargs
from typing import Optional, Union
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx

__all__ = [
    "CplxModReLU",
    "CplxAdaptiveModReLU",
    "CplxZReLU",
    "CplxCardioid",
    "CplxModulus",
    "CplxAngle",
    "CplxSplitReLU",
    "CplxSplitELU",
    "CplxSplitGELU",
    "CplxSplitTanh",
    "CplxSplitSigmoid",
    "CplxTanh",
    "CplxSigmoid",
    "CplxModTanh",
    "CplxModSquash",
    "CplxModLog",
    "CplxZAbsReLU",
    "CplxZLeakyReLU",
    "CplxChannelModReLU",
    "CplxPhaseSoftmax",
    "CplxMagSoftmax",
    "CplxRatioMask",
]


def _scalar_threshold(module):
    """Whether a modReLU has one threshold: one per feature would not follow removed features."""
    threshold = module.threshold
    return isinstance(threshold, numbers.Real) or torch.as_tensor(threshold).numel() == 1


class CplxModReLU(CplxToCplx, compact=Elementwise(when=_scalar_threshold)):
    r"""The modulus ReLU :math:`z \max(0, 1 - b / |z|)` with a fixed or learnable threshold.

    Parameters
    ----------
    threshold : float or None, default 0.5
        The shrinkage :math:`b` of the modulus. ``None`` makes it a
        learnable parameter of shape ``(1,)``, drawn from :math:`U(0, 0.25)`
        as in the published package.

    Raises
    ------
    TypeError
        If ``threshold`` is neither a real number nor ``None`` (a string
        such as ``"0.1"`` included).
    ValueError
        If ``threshold`` is NaN or infinite.

    Shape
    -----
    - Input and output: any shape, the same.

    See Also
    --------
    cplxmodule.cplx.modrelu, CplxAdaptiveModReLU

    References
    ----------
    M. Arjovsky, A. Shah, Y. Bengio, "Unitary evolution recurrent neural
    networks", ICML 2016.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxModReLU(threshold=0.1)(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    >>> [(name, p.shape) for name, p in CplxModReLU(threshold=None).named_parameters()]
    [('threshold', torch.Size([1]))]
    """

    #: A number, or a learnable parameter of shape ``(1,)``.
    threshold: Union[float, torch.nn.Parameter]

    def __init__(self, threshold: Optional[float] = 0.5) -> None:
        check_real(threshold, "threshold", type(self).__name__, optional=True)
        super().__init__()
        if threshold is None:
            self.threshold = torch.nn.Parameter(torch.empty(1))
            self.reset_parameters()
        else:
            self.threshold = float(threshold)

    def reset_parameters(self):
        """Draw a learnable threshold from :math:`U(0, 0.25)`; a fixed one stays."""
        if isinstance(self.threshold, torch.nn.Parameter):
            with torch.no_grad():
                torch.nn.init.uniform_(self.threshold, 0.0, 0.25)

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.modrelu(_check_cplx(self, input), self.threshold)

    def extra_repr(self):
        if isinstance(self.threshold, torch.nn.Parameter):
            return "threshold=learnable"
        return f"threshold={self.threshold}"


class CplxAdaptiveModReLU(CplxToCplx):
    r"""The modulus ReLU with a learnable threshold per feature.

    Parameters
    ----------
    *dim : int
        Shape of the learnable ``threshold``, broadcast against the trailing
        dimensions of the input; a single shared threshold if omitted.
    device, dtype : optional
        Factory kwargs.

    Shape
    -----
    - Input: any shape that ``threshold`` broadcasts against.
    - Output: the input's shape.

    Notes
    -----
    The threshold is initialised to the moduli of draws from
    :math:`\mathcal{N}(0, 0.02^2)`: the published package's scale, but
    non-negative, so that every feature starts as a (slight) shrinkage, as
    modReLU is meant. The published package kept the signs, which starts
    half the features lifting the modulus of a tiny :math:`z` to
    :math:`|b|` with an arbitrary phase.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxAdaptiveModReLU(4)(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def __init__(
        self, *dim: int, device: Device = None, dtype: Optional[torch.dtype] = None
    ) -> None:
        dim = tuple(check_positive_int(d, "dim", type(self).__name__) for d in dim)
        super().__init__()
        self.dim = dim if dim else (1,)
        kwargs = _factory_kwargs(device, dtype)
        self.threshold = torch.nn.Parameter(torch.empty(*self.dim, **kwargs))
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the threshold as the moduli of :math:`\\mathcal{N}(0, 0.02^2)` draws."""
        with torch.no_grad():
            torch.nn.init.normal_(self.threshold, std=0.02).abs_()

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        shape, k = tuple(input.shape), len(self.dim)
        if len(shape) < k or any(
            d != 1 and d != n for d, n in zip(self.dim, shape[len(shape) - k :])
        ):
            raise ValueError(
                f"{self._get_name()}: `input` must have trailing dimensions that the"
                f" threshold's {tuple(self.dim)} broadcasts against, got shape {shape}"
            )
        return cplx.modrelu(input, self.threshold)

    def extra_repr(self):
        return ", ".join(map(str, self.dim))


class CplxZReLU(CplxToCplx, compact=ELEMENTWISE):
    r"""zReLU: passes :math:`z` where :math:`0 \le \arg z \le \pi/2`, else zero.

    That is, :math:`z` is kept in the closed first quadrant
    (:math:`\Re z \ge 0` and :math:`\Im z \ge 0`).

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    N. Guberman, "On complex valued convolutional neural networks", 2016.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxZReLU()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.zrelu(_check_cplx(self, input))


class CplxCardioid(CplxToCplx, compact=ELEMENTWISE):
    r"""The complex cardioid :math:`z \, (1 + \cos \arg z) / 2`.

    Scales by a factor that is one on the positive real axis and vanishes on
    the negative one; on real inputs it is the ReLU.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    P. Virtue, S. X. Yu, M. Lustig, "Better than real: complex-valued neural
    nets for MRI fingerprinting", ICIP 2017.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxCardioid()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.cardioid(_check_cplx(self, input))


class CplxModulus(BaseCplxToReal):
    """The modulus :math:`|z|`, a real tensor.

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` of any shape.
    - Output: a real tensor of the same shape.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxModulus()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> torch.Tensor:
        return abs(_check_cplx(self, input))


class CplxAngle(BaseCplxToReal):
    r"""The argument :math:`\arg z \in [-\pi, \pi]`, a real tensor, as :func:`torch.atan2` gives it.

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` of any shape.
    - Output: a real tensor of the same shape.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxAngle()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> torch.Tensor:
        return _check_cplx(self, input).angle


# The split family: named subclasses of the ``CplxToCplx[...]`` promotions,
# without torch's ``inplace`` flag, since an in-place activation of a part
# would overwrite a tensor that autograd saved for the backward pass.


class CplxSplitReLU(CplxToCplx[torch.nn.ReLU], compact=ELEMENTWISE):
    r"""The split ReLU :math:`\operatorname{ReLU}(\Re z) + i \operatorname{ReLU}(\Im z)`.

    Also known as :math:`\mathbb{C}\mathrm{ReLU}`. It is
    ``CplxToCplx[torch.nn.ReLU]`` without the ``inplace`` option.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    C. Trabelsi et al., "Deep complex networks", ICLR 2018.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> z = cplx.Cplx(torch.tensor([-1.0, 2.0]), torch.tensor([3.0, -4.0]))
    >>> out = CplxSplitReLU()(z)
    >>> out.real, out.imag
    (tensor([0., 2.]), tensor([3., 0.]))
    """

    def __init__(self) -> None:
        super().__init__(inplace=False)


class CplxSplitELU(CplxToCplx[torch.nn.ELU], compact=ELEMENTWISE):
    r"""The split ELU :math:`\operatorname{ELU}(\Re z) + i \operatorname{ELU}(\Im z)`.

    :math:`\operatorname{ELU}(x) = x` for :math:`x > 0`, else
    :math:`\alpha (e^x - 1)`.

    Parameters
    ----------
    alpha : float, default 1.0

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    D.-A. Clevert, T. Unterthiner, S. Hochreiter, "Fast and accurate deep
    network learning by exponential linear units (ELUs)", ICLR 2016.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxSplitELU(alpha=0.5)(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def __init__(self, alpha: float = 1.0) -> None:
        alpha = float(check_real(alpha, "alpha", type(self).__name__))
        super().__init__(alpha=alpha, inplace=False)


class CplxSplitGELU(CplxToCplx[torch.nn.GELU], compact=ELEMENTWISE):
    r"""The split GELU :math:`\operatorname{GELU}(\Re z) + i \operatorname{GELU}(\Im z)`.

    :math:`\operatorname{GELU}(x) = x \Phi(x)`, with :math:`\Phi` the
    standard normal distribution function.

    Parameters
    ----------
    approximate : {"none", "tanh"}, default "none"
        As in :class:`torch.nn.GELU`.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    D. Hendrycks, K. Gimpel, "Gaussian error linear units (GELUs)", 2016.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxSplitGELU()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def __init__(self, approximate: str = "none") -> None:
        check_choice(approximate, "approximate", type(self).__name__, ("none", "tanh"))
        super().__init__(approximate=approximate)


class CplxSplitTanh(CplxToCplx[torch.nn.Tanh], compact=ELEMENTWISE):
    r"""The split tanh :math:`\tanh(\Re z) + i \tanh(\Im z)`, bounded and pole-free.

    Compare :class:`CplxTanh`, the holomorphic one.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    N. Benvenuto, F. Piazza, "On the complex backpropagation algorithm",
    IEEE Trans. Signal Processing 40(4), 1992.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxSplitTanh()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """


class CplxSplitSigmoid(CplxToCplx[torch.nn.Sigmoid], compact=ELEMENTWISE):
    r"""The split sigmoid :math:`\sigma(\Re z) + i \sigma(\Im z)`, bounded and pole-free.

    Compare :class:`CplxSigmoid`, the holomorphic one.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    N. Benvenuto, F. Piazza, "On the complex backpropagation algorithm",
    IEEE Trans. Signal Processing 40(4), 1992.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxSplitSigmoid()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """


class CplxTanh(CplxToCplx, compact=ELEMENTWISE):
    r"""The holomorphic tanh :math:`\tanh z = (e^{z} - e^{-z}) / (e^{z} + e^{-z})`.

    Unbounded: it has simple poles at :math:`z = i (k + 1/2) \pi`,
    :math:`k \in \mathbb{Z}`, so inputs with large imaginary parts may land
    near one. See :func:`cplxmodule.cplx.tanh`.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    T. Kim, T. Adali, "Approximation by fully complex multilayer
    perceptrons", Neural Computation 15(7), 2003.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxTanh()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.tanh(_check_cplx(self, input))


class CplxSigmoid(CplxToCplx, compact=ELEMENTWISE):
    r"""The holomorphic sigmoid :math:`\sigma(z) = 1 / (1 + e^{-z})`.

    Unbounded: it has simple poles at :math:`z = i (2k + 1) \pi`,
    :math:`k \in \mathbb{Z}`. See :func:`cplxmodule.cplx.sigmoid`.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    T. Kim, T. Adali, "Approximation by fully complex multilayer
    perceptrons", Neural Computation 15(7), 2003.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxSigmoid()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.sigmoid(_check_cplx(self, input))


class CplxModTanh(CplxToCplx, compact=ELEMENTWISE):
    r"""The polar tanh :math:`\tanh(|z|) \, e^{i \arg z}`: modulus into :math:`[0, 1)`, phase kept.

    See :func:`cplxmodule.cplx.modtanh`.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    A. Hirose, "Complex-valued neural networks: theories and applications",
    World Scientific, 2003.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxModTanh()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.modtanh(_check_cplx(self, input))


class CplxModSquash(CplxToCplx, compact=ELEMENTWISE):
    r"""The capsule squash :math:`\frac{|z|^2}{1 + |z|^2} e^{i \arg z}`.

    The modulus goes into :math:`[0, 1)`, the phase is kept.

    See :func:`cplxmodule.cplx.modsquash`.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    S. Sabour, N. Frosst, G. E. Hinton, "Dynamic routing between capsules",
    NeurIPS 2017.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxModSquash()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.modsquash(_check_cplx(self, input))


class CplxModLog(CplxToCplx, compact=ELEMENTWISE):
    r"""The polar log :math:`\log(1 + |z|) \, e^{i \arg z}`: modulus compressed, phase kept.

    See :func:`cplxmodule.cplx.modlog`.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    A. Hirose, "Complex-valued neural networks: theories and applications",
    World Scientific, 2003 (amplitude-phase activations).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxModLog()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.modlog(_check_cplx(self, input))


def _one_value(module):
    """Whether a zAbsReLU or leaky zReLU has one value for every element, not one per channel."""
    return module.num_parameters == 1


class _ValueActivation(CplxToCplx):
    """An activation of one real value, fixed, or learnable (shared or per channel) as PReLU's weight.

    The value is the attribute named ``_value_name``: a float, or a
    parameter of shape ``(num_parameters,)`` filled with its initial value.
    """

    _value_name: str

    def __init__(self, value, learnable, num_parameters, device, dtype):
        where = type(self).__name__
        check_bool(learnable, "learnable", where)
        num_parameters = check_positive_int(num_parameters, "num_parameters", where)
        if num_parameters > 1 and not learnable:
            raise ValueError(
                f"{where}: `num_parameters` above 1 needs `learnable=True` (a fixed"
                f" `{self._value_name}` is one number), got {num_parameters}"
            )
        super().__init__()
        self.num_parameters = num_parameters
        self._init = float(value)
        if learnable:
            empty = torch.empty(num_parameters, **_factory_kwargs(device, dtype))
            setattr(self, self._value_name, torch.nn.Parameter(empty))
            self.reset_parameters()
        else:
            setattr(self, self._value_name, self._init)

    @property
    def learnable(self) -> bool:
        """Whether the value is a parameter."""
        return isinstance(getattr(self, self._value_name), torch.nn.Parameter)

    def reset_parameters(self):
        """Fill a learnable value with its initial one; a fixed one stays."""
        if self.learnable:
            with torch.no_grad():
                torch.nn.init.constant_(getattr(self, self._value_name), self._init)

    def _value(self, input):
        """The value, shaped to broadcast against ``input`` (checked to be a Cplx)."""
        value = getattr(self, self._value_name)
        if not isinstance(value, torch.Tensor):
            return _check_cplx(self, input), value
        if self.num_parameters == 1:
            return _check_cplx(self, input), value.reshape(())
        shape = f"(N, {self.num_parameters}, *)"
        input = _check_cplx(self, input, shape=shape)
        if input.dim() < 2 or input.shape[1] != self.num_parameters:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape {shape},"
                f" got shape {tuple(input.shape)}"
            )
        return input, value.reshape(-1, *(1,) * (input.dim() - 2))

    def extra_repr(self):
        text = f"{self._value_name}={self._init}"
        if self.learnable:
            text += ", learnable=True"
        if self.num_parameters > 1:
            text += f", num_parameters={self.num_parameters}"
        return text


class CplxZAbsReLU(
    _ValueActivation,
    compact=[Elementwise(when=_one_value), Channelwise("num_parameters", None)],
):
    r"""zAbsReLU: :math:`z` where :math:`|z| \ge b`, zero elsewhere; :math:`b` fixed or learnable.

    A hard threshold on the modulus; unlike :class:`CplxModReLU` the kept
    values are not shrunk. See :func:`cplxmodule.cplx.zabsrelu`.

    Parameters
    ----------
    threshold : float, default 0.5
        The threshold :math:`b \ge 0` on the modulus; with ``learnable``,
        the initial value of the parameter.
    learnable : bool, default False
        Whether ``threshold`` is a parameter of shape ``(num_parameters,)``,
        as the weight of :class:`torch.nn.PReLU`.
    num_parameters : int, default 1
        1: one threshold for every element; :math:`C > 1` (with
        ``learnable``): one per channel, along dim 1 of the input.
    device, dtype : optional
        Factory kwargs of a learnable threshold.

    Raises
    ------
    TypeError
        If ``threshold`` is not a real number, ``learnable`` not a bool or
        ``num_parameters`` not an int.
    ValueError
        If ``threshold`` is negative or ``num_parameters`` is not positive,
        or above 1 without ``learnable``.

    Shape
    -----
    - Input: any shape; :math:`(N, C, *)` with ``num_parameters`` :math:`C > 1`.
    - Output: the input's shape.

    Notes
    -----
    The output is a step function of :math:`b`: the exact gradient of a
    learnable threshold is zero wherever it exists, and the loss does not
    move it. It is a parameter that the model saves, loads, casts and
    :func:`~cplxmodule.nn.masked.compact` slices, for values set from
    outside (a schedule, a search); it gets a zero gradient, not none, so
    that DDP takes it, and weight decay then shrinks it: leave it out of
    weight decay, as torch advises for PReLU's weight. A threshold trained
    by the loss needs an output continuous in it: :class:`CplxModReLU`,
    :class:`CplxChannelModReLU`.

    complextorch 2.1.1's ``zAbsReLU`` has the same definition but its
    threshold ``a`` is always one learnable scalar, starting at
    ``a_init=0.0`` (the identity), and gets no gradient at all; here the
    threshold is fixed unless ``learnable``, starts at 0.5, and may be per
    channel.

    References
    ----------
    The "zAbsReLU" of the complextorch documentation (2023), a modulus
    variant of zReLU (N. Guberman, "On complex valued convolutional neural
    networks", 2016).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> z = cplx.Cplx(torch.tensor([0.3, 3.0]), torch.tensor([0.0, 4.0]))
    >>> CplxZAbsReLU(threshold=1.0)(z).real
    tensor([0., 3.])
    >>> CplxZAbsReLU(0.1, learnable=True, num_parameters=3).threshold
    Parameter containing:
    tensor([0.1000, 0.1000, 0.1000], requires_grad=True)
    """

    _value_name = "threshold"

    def __init__(
        self,
        threshold: float = 0.5,
        learnable: bool = False,
        num_parameters: int = 1,
        *,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        check_real(threshold, "threshold", type(self).__name__, low=0)
        super().__init__(threshold, learnable, num_parameters, device, dtype)

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.zabsrelu(*self._value(input))


class CplxZLeakyReLU(
    _ValueActivation,
    compact=[Elementwise(when=_one_value), Channelwise("num_parameters", None)],
):
    r"""Leaky zReLU: :math:`z` where :math:`0 \le \arg z \le \pi/2`, :math:`a z` elsewhere.

    The slope :math:`a` is fixed or learnable. See
    :func:`cplxmodule.cplx.zleakyrelu` and :class:`CplxZReLU`.

    Parameters
    ----------
    negative_slope : float, default 0.01
        The leak :math:`a` outside the first quadrant; with ``learnable``,
        the initial value of the parameter.
    learnable : bool, default False
        Whether ``negative_slope`` is a parameter of shape
        ``(num_parameters,)``, as the weight of :class:`torch.nn.PReLU`.
    num_parameters : int, default 1
        1: one slope for every element; :math:`C > 1` (with ``learnable``):
        one per channel, along dim 1 of the input.
    device, dtype : optional
        Factory kwargs of a learnable slope.

    Raises
    ------
    TypeError
        If ``negative_slope`` is not a real number, ``learnable`` not a bool
        or ``num_parameters`` not an int.
    ValueError
        If ``num_parameters`` is not positive, or above 1 without
        ``learnable``.

    Shape
    -----
    - Input: any shape; :math:`(N, C, *)` with ``num_parameters`` :math:`C > 1`.
    - Output: the input's shape.

    Notes
    -----
    The gradient in :math:`a` is :math:`z` outside the closed first quadrant
    and zero inside it. Weight decay pulls a learnable slope towards zero
    (the zReLU); torch advises leaving PReLU's weight out of it.

    complextorch 2.1.1's ``zLeakyReLU`` takes a fixed ``negative_slope``
    only, and keeps :math:`z` in the open quadrant (:math:`\Re z > 0` and
    :math:`\Im z > 0`): on the positive real and imaginary half-axes and
    at zero it scales by the slope where this layer, as
    :class:`CplxZReLU`, passes :math:`z`.

    References
    ----------
    N. Guberman, "On complex valued convolutional neural networks", 2016;
    A. L. Maas, A. Y. Hannun, A. Y. Ng, "Rectifier nonlinearities improve
    neural network acoustic models", ICML 2013; K. He, X. Zhang, S. Ren,
    J. Sun, "Delving deep into rectifiers", ICCV 2015 (the learnable slope
    of PReLU).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> z = cplx.Cplx(torch.tensor([1.0, -2.0]), torch.tensor([1.0, 1.0]))
    >>> CplxZLeakyReLU(negative_slope=0.5)(z).real
    tensor([ 1., -1.])
    >>> layer = CplxZLeakyReLU(0.25, learnable=True, num_parameters=4)
    >>> layer(cplx.randn(8, 4, 16)).shape, layer.negative_slope.shape
    (torch.Size([8, 4, 16]), torch.Size([4]))
    """

    _value_name = "negative_slope"

    def __init__(
        self,
        negative_slope: float = 0.01,
        learnable: bool = False,
        num_parameters: int = 1,
        *,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        check_real(negative_slope, "negative_slope", type(self).__name__)
        super().__init__(negative_slope, learnable, num_parameters, device, dtype)

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.zleakyrelu(*self._value(input))


class CplxChannelModReLU(CplxToCplx, compact=Channelwise("num_channels", None)):
    r"""The modulus ReLU :math:`z \max(0, 1 - b_c / |z|)` with a learnable threshold per channel.

    Equivalently :math:`\operatorname{ReLU}(|z| + \beta_c) \, e^{i \arg z}`
    with the bias :math:`\beta_c = -b_c` of Arjovsky et al. The threshold
    :math:`b_c` is shared over every dimension but the channel one, dim 1,
    whatever the number of spatial dimensions: unlike
    :class:`CplxAdaptiveModReLU`, whose threshold broadcasts against the
    trailing dimensions, the same layer serves ``(N, C)``, ``(N, C, L)`` and
    ``(N, C, H, W)`` inputs.

    Parameters
    ----------
    num_channels : int
        :math:`C`, the size of the input's dim 1.
    device, dtype : optional
        Factory kwargs.

    Raises
    ------
    TypeError
        If ``num_channels`` is not an int.
    ValueError
        If ``num_channels`` is not positive.

    Shape
    -----
    - Input: :math:`(N, C, *)`.
    - Output: the input's shape.

    Notes
    -----
    The threshold starts at zero, where the layer is the identity.

    See Also
    --------
    cplxmodule.cplx.modrelu, CplxModReLU, CplxAdaptiveModReLU

    References
    ----------
    M. Arjovsky, A. Shah, Y. Bengio, "Unitary evolution recurrent neural
    networks", ICML 2016.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxChannelModReLU(3)(cplx.randn(8, 3, 5, 5)).shape
    torch.Size([8, 3, 5, 5])
    """

    def __init__(
        self, num_channels: int, device: Device = None, dtype: Optional[torch.dtype] = None,
    ) -> None:
        num_channels = check_positive_int(num_channels, "num_channels", type(self).__name__)
        super().__init__()
        self.num_channels = num_channels
        kwargs = _factory_kwargs(device, dtype)
        self.threshold = torch.nn.Parameter(torch.empty(num_channels, **kwargs))
        self.reset_parameters()

    def reset_parameters(self):
        """Set the threshold to zero."""
        with torch.no_grad():
            torch.nn.init.zeros_(self.threshold)

    def forward(self, input: CplxLike) -> Cplx:
        shape = f"(N, {self.num_channels}, *)"
        input = _check_cplx(self, input, shape=shape)
        if input.dim() < 2 or input.shape[1] != self.num_channels:
            raise ValueError(
                f"{self._get_name()}: `input` must have shape {shape},"
                f" got shape {tuple(input.shape)}"
            )
        threshold = self.threshold.reshape(-1, *(1,) * (input.dim() - 2))
        return cplx.modrelu(input, threshold)

    def extra_repr(self):
        return f"{self.num_channels}"


def _check_softmax_input(layer, input):
    """``input`` as a Cplx that has the layer's dimension ``dim``, else raise."""
    input = _check_cplx(layer, input)
    dims = max(input.dim(), 1)  # a 0-dim input has dimensions -1 and 0, as in torch
    if not -dims <= layer.dim < dims:
        raise ValueError(
            f"{layer._get_name()}: `input` must have dimension `dim`={layer.dim},"
            f" got shape {tuple(input.shape)}"
        )
    return input


class CplxPhaseSoftmax(CplxToCplx):
    r"""The softmax of the moduli along ``dim``, the phases kept.

    .. math::

        z_k \mapsto \frac{e^{|z_k|}}{\sum_j e^{|z_j|}} \, e^{i \arg z_k}

    The moduli along ``dim`` sum to one. See
    :func:`cplxmodule.cplx.phase_softmax`.

    Parameters
    ----------
    dim : int
        The dimension to normalise along.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    The "PhaseSoftMax" of the complextorch documentation (2023); the
    phase-preserving scaling as in modReLU (M. Arjovsky, A. Shah, Y. Bengio,
    ICML 2016).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> out = CplxPhaseSoftmax(dim=-1)(cplx.randn(8, 4))
    >>> torch.allclose(abs(out).sum(-1), torch.ones(8))
    True
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = check_int(dim, "dim", type(self).__name__)

    def forward(self, input: CplxLike) -> Cplx:
        return cplx.phase_softmax(_check_softmax_input(self, input), self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class CplxMagSoftmax(BaseCplxToReal):
    r"""The softmax of the moduli along ``dim``, a real tensor: :math:`\operatorname{softmax}(|z|)`.

    Parameters
    ----------
    dim : int
        The dimension to normalise along.

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` of any shape.
    - Output: a real tensor of the same shape.

    References
    ----------
    The "MagSoftMax" of the complextorch documentation (2023).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxMagSoftmax(dim=1)(cplx.randn(8, 4)).sum(1).shape
    torch.Size([8])
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = check_int(dim, "dim", type(self).__name__)

    def forward(self, input: CplxLike) -> torch.Tensor:
        return torch.softmax(abs(_check_softmax_input(self, input)), dim=self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class CplxRatioMask(CplxToCplx):
    r"""Apply a complex ratio mask :math:`M` to a spectrum :math:`Y`: :math:`\hat S = M Y`.

    Bounded (the default), the mask's modulus is squashed by :math:`\tanh`
    first, as in DCCRN-E: :math:`\hat S = \tanh(|M|) \, e^{i \arg M} \, Y`,
    so :math:`|\hat S| < |Y|`; unbounded it is the plain cRM product. See
    :func:`cplxmodule.cplx.ratio_mask`.

    Parameters
    ----------
    bounded : bool, default True

    Raises
    ------
    TypeError
        If ``bounded`` is not a bool.

    Shape
    -----
    - Input: ``mask`` and ``input``, :class:`~cplxmodule.cplx.Cplx` that
      broadcast together.
    - Output: their broadcast shape.

    References
    ----------
    D. S. Williamson, Y. Wang, D. Wang, "Complex ratio masking for monaural
    speech separation", IEEE/ACM TASLP 24(3), 2016; Y. Hu et al., "DCCRN:
    deep complex convolution recurrent network for phase-aware speech
    enhancement", Interspeech 2020.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> mask, spectrum = cplx.randn(2, 257, 100), cplx.randn(2, 257, 100)
    >>> CplxRatioMask()(mask, spectrum).shape
    torch.Size([2, 257, 100])
    """

    def __init__(self, bounded: bool = True) -> None:
        check_bool(bounded, "bounded", type(self).__name__)
        super().__init__()
        self.bounded = bounded

    def forward(self, mask: CplxLike, input: CplxLike) -> Cplx:
        mask = _check_cplx(self, mask, name="mask")
        input = _check_cplx(self, input)
        return cplx.ratio_mask(mask, input, bounded=self.bounded)

    def extra_repr(self):
        return f"bounded={self.bounded}"
