"""Complex linear, bilinear, identity and phase-shift layers."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._kinds import IDENTITY_IN_EVAL
from ... import cplx
from ...cplx import Cplx
from ...cplx import _product
from ...cplx._shared import check_features, check_non_negative_int
from .._families import Family, FamilyDoc
from ._weighted import WeightedLayer
from .base import BaseCplxToReal, CplxToCplx, _check_cplx
from .parameter import CplxParameter, _factory_kwargs
from typing import Any, Optional
from ...cplx._typing import CplxLike, Device

__all__ = [
    "CplxLinear",
    "CplxBilinear",
    "CplxIdentity",
    "CplxPhaseShift",
    "CplxReal",
    "CplxImag",
]


def _linear_family(**kwargs):
    return Family(
        ("in_features", "out_features"),
        features=("out_features", "in_features"),
        doc=FamilyDoc("linear layer", "4, 3", "{randn}(2, 4)", "2, 3", "3", "4", "input features"),
        **kwargs,
    )


def _bilinear_family(args=(), **kwargs):
    return Family(
        ("in1_features", "in2_features", "out_features", *args),
        features=("out_features", "in1_features"),
        shrinkable=False,
        doc=FamilyDoc(
            "bilinear layer", "3, 4, 5", "{randn}(2, 3), {randn}(2, 4)", "2, 5", "5", "3",
            "features of the first input",
        ),
        **kwargs,
    )


def _add_weight_and_bias(layer, weight_shape, out_features, bias, device, dtype):
    """Register uninitialised complex ``weight`` and ``bias`` (``None`` if not ``bias``)."""
    kwargs = _factory_kwargs(device, dtype)
    layer.weight = CplxParameter(Cplx.empty(*weight_shape, **kwargs))
    if bias:
        layer.bias = CplxParameter(Cplx.empty(out_features, **kwargs))
    else:
        layer.register_module("bias", None)


def _reset_weight_and_bias(weight, bias, fan_in):
    r"""Complex analogue of torch's default initialisation of linear maps.

    All parts of the weight and of the bias are independent and uniform on
    :math:`\pm 1/\sqrt{2\,\text{fan\_in}}`, so that
    :math:`\mathbb{E}|W|^2 = 1 / (3\,\text{fan\_in})`, the variance torch's
    default (``kaiming_uniform_(a=sqrt(5))``, or uniform on
    :math:`\pm 1/\sqrt{\text{fan\_in}}`) gives a real weight, and likewise
    for the bias. ``fan_in`` is explicit because a bilinear map takes it from
    its first input alone, as :class:`torch.nn.Bilinear` does.
    """
    bound = 1 / math.sqrt(2 * fan_in) if fan_in > 0 else 0.0
    parts = [weight.real, weight.imag]
    if bias is not None:
        parts += [bias.real, bias.imag]
    with torch.no_grad():
        for part in parts:
            torch.nn.init.uniform_(part, -bound, bound)


class CplxLinear(WeightedLayer, CplxToCplx, family=_linear_family(native=torch.nn.Linear)):
    r"""Complex affine map :math:`y = x W^T + b`, the twin of :class:`torch.nn.Linear`.

    Parameters
    ----------
    in_features : int
        Size of each input sample.
    out_features : int
        Size of each output sample.
    bias : bool, default True
        Whether to learn an additive complex bias.
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of each part, and a
        complex dtype (``torch.complex64``) stands for its parts' dtype.

    Shape
    -----
    - Input: ``(*, in_features)``, any number of leading dimensions.
    - Output: ``(*, out_features)``.

    Attributes
    ----------
    weight : CplxParameter
        Shape ``(out_features, in_features)``; state_dict keys
        ``weight.real``, ``weight.imag``.
    bias : CplxParameter or None
        Shape ``(out_features,)``.

    Notes
    -----
    :meth:`reset_parameters` draws independent uniform real and imaginary
    parts with :math:`\mathbb{E}|W|^2 = 1/(3\,\text{in\_features})`, the
    variance of torch's default ``kaiming_uniform_(a=sqrt(5))``, so a complex
    layer preserves the signal's power as its real twin does.
    Trabelsi et al.'s initialisations are options of
    :mod:`cplxmodule.nn.init`, e.g.
    ``init.cplx_kaiming_rayleigh_(layer.weight)``; :doc:`/api/init`
    measures them against this default.

    A checkpoint of :class:`torch.nn.Linear` loads with zero imaginary
    parts (see :class:`CplxParameter`).

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxLinear(3, 5)
    >>> layer(cplx.randn(8, 3)).shape
    torch.Size([8, 5])
    """

    # registered by ``_add_weight_and_bias`` (``bias`` None without a bias)
    weight: CplxParameter
    bias: Optional[CplxParameter]

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        in_features, out_features = _checked_features(self, in_features, out_features)
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        shape = (out_features, in_features)
        _add_weight_and_bias(self, shape, out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the weight and bias as described in the class Notes."""
        _reset_weight_and_bias(self.weight, self.bias, self.in_features)

    def forward(self, input: CplxLike) -> Cplx:
        input = self._check_inputs(input)
        return self._weighted_forward(input)

    def _check_inputs(self, input):
        return _check_features(self, input, self.in_features)

    def _dense_forward(self, input, *, weight, bias):
        # the one place where a weight meets the math: ``forward`` checked
        # the input, the weight is the layer's, so the op runs unchecked
        return _product.linear(input, weight, bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class CplxBilinear(WeightedLayer, CplxToCplx, family=_bilinear_family(("conjugate",))):
    r"""Complex bilinear map, the twin of :class:`torch.nn.Bilinear`.

    .. math::

        y_k = \sum_{ij} \overline{x_{1i}} W_{kij} x_{2j} + b_k

    with the conjugation of :math:`x_1` only when ``conjugate`` is true
    (a sesquilinear form, the published default).

    Parameters
    ----------
    in1_features, in2_features : int
        Sizes of the two inputs.
    out_features : int
        Size of the output.
    bias : bool, default True
        Whether to learn an additive complex bias.
    conjugate : bool, default True
        Conjugate the first input.
    device, dtype : optional
        Factory kwargs (a complex ``dtype`` names its parts' dtype).

    Shape
    -----
    - Inputs: ``(*, in1_features)`` and ``(*, in2_features)``, the same
      leading dimensions.
    - Output: ``(*, out_features)``.

    Notes
    -----
    Initialised like :class:`CplxLinear` with ``fan_in = in1_features``, as
    :class:`torch.nn.Bilinear` does.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxBilinear(3, 4, 2)
    >>> layer(cplx.randn(8, 3), cplx.randn(8, 4)).shape
    torch.Size([8, 2])
    """

    # registered by ``_add_weight_and_bias`` (``bias`` None without a bias)
    weight: CplxParameter
    bias: Optional[CplxParameter]

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        conjugate: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        in1_features, in2_features, out_features = _checked_features(
            self, in1_features, in2_features, out_features
        )
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features, self.conjugate = out_features, conjugate
        shape = (out_features, in1_features, in2_features)
        _add_weight_and_bias(self, shape, out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the weight and bias as :class:`CplxLinear` does."""
        _reset_weight_and_bias(self.weight, self.bias, self.in1_features)

    def forward(self, input1: CplxLike, input2: CplxLike) -> Cplx:
        input1, input2 = self._check_inputs(input1, input2)
        return self._weighted_forward(input1, input2)

    def _check_inputs(self, input1, input2):
        return (
            _check_features(self, input1, self.in1_features, "input1"),
            _check_features(self, input2, self.in2_features, "input2"),
        )

    def _dense_forward(self, input1, input2, *, weight, bias):
        return _product.bilinear(input1, input2, weight, bias, self.conjugate)

    def extra_repr(self):
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}, "
            f"conjugate={self.conjugate}"
        )


# Real twins: torch's layers with the entry point of the complex ones, for
# the real masked and Bayesian layers (torch's have none).
class _RealLinear(WeightedLayer, torch.nn.Linear, family=_linear_family(dense=torch.nn.Linear)):
    """:class:`torch.nn.Linear` with the dense entry point ``_dense_forward``."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        in_features, out_features = _checked_features(self, in_features, out_features)
        super().__init__(in_features, out_features, bias, device, dtype)

    def _check_inputs(self, input):
        """torch's functional op checks the input."""
        return input

    def _dense_forward(self, input, *, weight, bias):
        return F.linear(input, weight, bias)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self._weighted_forward(input)


class _RealBilinear(
    WeightedLayer, torch.nn.Bilinear, family=_bilinear_family(dense=torch.nn.Bilinear)
):
    """:class:`torch.nn.Bilinear` with the dense entry point ``_dense_forward``."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        in1, in2, out = _checked_features(self, in1_features, in2_features, out_features)
        super().__init__(in1, in2, out, bias, device, dtype)

    def _check_inputs(self, input1, input2):
        """torch's functional op checks the inputs."""
        return input1, input2

    def _dense_forward(self, input1, input2, *, weight, bias):
        if torch.onnx.is_in_onnx_export():
            # the TorchScript ONNX exporter has no aten::bilinear (torch.nn.Bilinear
            # does not export there): the same sum, written as an einsum
            output = torch.einsum("...i,kij,...j->...k", input1, weight, input2)
            return output if bias is None else output + bias
        return F.bilinear(input1, input2, weight, bias)

    def forward(self, input1: CplxLike, input2: CplxLike) -> torch.Tensor:
        return self._weighted_forward(input1, input2)


class CplxIdentity(CplxToCplx, compact=IDENTITY_IN_EVAL):
    """The identity on :class:`Cplx`, the twin of :class:`torch.nn.Identity`.

    Any constructor arguments are accepted and ignored, as torch's does.

    Shape
    -----
    - Input and output: any shape, the same.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> z = cplx.randn(2, 3)
    >>> CplxIdentity()(z) is z
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: CplxLike) -> Cplx:
        return _check_cplx(self, input)


class CplxPhaseShift(CplxToCplx):
    r"""Learnable rotation :math:`z e^{i\phi}` by real angles :math:`\phi`.

    Parameters
    ----------
    *dim : int
        Shape of the angle parameter ``phi``, broadcast against the trailing
        dimensions of the input (one angle if omitted).
    device, dtype : optional
        Factory kwargs.

    Shape
    -----
    - Input: any shape that ``phi`` broadcasts against.
    - Output: the input's shape.

    Notes
    -----
    ``phi`` is initialised from :math:`\mathcal{N}(0, 0.02^2)`, close to the
    identity, as in the published package.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = CplxPhaseShift(4)
    >>> layer(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def __init__(
        self, *dim: int, device: Device = None, dtype: Optional[torch.dtype] = None
    ) -> None:
        super().__init__()
        shape = dim or (1,)
        self.phi = torch.nn.Parameter(torch.empty(*shape, **_factory_kwargs(device, dtype)))
        self.reset_parameters()

    def reset_parameters(self):
        """Draw ``phi`` from :math:`\\mathcal{N}(0, 0.02^2)`."""
        with torch.no_grad():
            torch.nn.init.normal_(self.phi, std=0.02)

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        return cplx.phaseshift(input, self.phi)

    def extra_repr(self):
        return ", ".join(map(str, self.phi.shape))


class CplxReal(BaseCplxToReal):
    """The real part of a :class:`Cplx`.

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` of any shape.
    - Output: a real tensor of the same shape.

    Examples
    --------
    >>> CplxReal()(Cplx(torch.tensor([1.0]), torch.tensor([2.0])))
    tensor([1.])
    """

    def forward(self, input: CplxLike) -> torch.Tensor:
        return _check_cplx(self, input).real


class CplxImag(BaseCplxToReal):
    """The imaginary part of a :class:`Cplx`.

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` of any shape.
    - Output: a real tensor of the same shape.

    Examples
    --------
    >>> CplxImag()(Cplx(torch.tensor([1.0]), torch.tensor([2.0])))
    tensor([2.])
    """

    def forward(self, input: CplxLike) -> torch.Tensor:
        return _check_cplx(self, input).imag


def _checked_features(layer, *features):
    """The feature sizes of ``layer``, named by its family's first arguments, as ints ``>= 0``."""
    names, where = layer._family.args, type(layer).__name__
    return [check_non_negative_int(n, name, where) for n, name in zip(features, names)]


def _check_features(layer, input, features, name="input"):
    """``input`` as a :class:`Cplx` with ``features`` in its last dimension, else raise."""
    if type(input) is Cplx:
        # the common case, passed at the cost of a few attribute reads: a
        # Cplx of the weight's dtype with the right number of features
        real, weight = input.real, layer._modules.get("weight")
        if (
            real.dim()
            and real.shape[-1] == features
            and isinstance(weight, Cplx)
            and weight.real.dtype == real.dtype
        ):
            return input
    input = _check_cplx(layer, input, f"(..., {features})", name)
    check_features(input, features, name, layer._get_name())
    return input
