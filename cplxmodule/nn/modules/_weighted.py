"""The dense entry point shared by every layer with a weight, dense, masked or Bayesian.

Every family's dense layer (``Linear``, ``Bilinear``, the convolutions, real
and complex) computes through one method, ``_dense_forward(*inputs, weight=,
bias=)``; the masking base and the Gaussian base supply another weight to
it by overriding ``_weighted_forward`` alone, and the table of families is
declared in the class statements of these layers.
"""

import sys
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional

import torch

from .. import _families
from .. import cache
from ..cache import _cached_attr
from .base import CplxToCplx


class WeightedLayer:
    r"""The dense entry point: the one place where a layer's weight meets its input.

    Every layer with a weight (the linear, bilinear and convolution layers,
    real and complex, and a layer of your own) computes its product in one
    method, ``_dense_forward(*inputs, weight, bias)``, which its
    ``forward`` reaches through ``_weighted_forward``. The masking base
    and the Gaussian base override ``_weighted_forward`` alone, giving
    another weight (``weight * mask``; the posterior mean, then
    :math:`\sigma^2` on :math:`|x|^2` for the variance), so every kind of
    twin keeps the layer's ``forward`` and signature.

    A new dense layer becomes a *family* with one declaration in its class
    statement, ``family=Family(args, ...)`` (see :class:`Family`): its
    masked, variational dropout, ARD and structured twins are then made by
    the table of kinds, and :func:`~cplxmodule.nn.relevance.to_bayesian`,
    :func:`~cplxmodule.nn.relevance.compute_ard_masks`,
    :func:`~cplxmodule.nn.masked.to_masked` and
    :func:`~cplxmodule.nn.masked.compact` take it (``compact`` keeps such a
    layer as it is, its mask folded into its weight). The layer must

    - derive from this class (and from :class:`CplxToCplx` for a complex
      layer) and hold its weight as ``weight`` (a :class:`CplxParameter`
      or a real :class:`torch.nn.Parameter`) and its bias as ``bias`` (or
      ``None``);
    - define ``_dense_forward(self, *inputs, weight, bias)``, computing
      each output entry as a sum of products of one input entry and one
      weight entry (as linear maps and convolutions do): the Gaussian base
      calls it on :math:`|x|^2` with :math:`\sigma^2`, two real tensors,
      to get the (real) variance of the output;
    - have a ``forward`` that returns ``self._weighted_forward(*inputs)``,
      after any input check of its own.

    A subclass of a dense layer needs nothing of this: its twins are
    instances of it (see :func:`~cplxmodule.nn.masked.convert_layers`).

    Class keywords: ``family=Family(...)`` declares a family whose dense
    class is the class being defined; the package's own twins declare
    ``family=<dense class>, kind=<kind>`` (with ``twin=False`` or
    ``convertible=False`` where :func:`~cplxmodule.nn.masked.convert_layers`
    does not convert to or from them). The class and its subclasses read
    the family's geometry from ``_family``; only the declaring class is a
    member.

    Examples
    --------
    A complex layer that mixes time steps (the second-to-last dimension)
    rather than features:

    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn import CplxParameter, CplxToCplx, Family
    >>> class CplxStepMixer(WeightedLayer, CplxToCplx, family=Family(
    ...         ("in_steps", "out_steps"), features=("out_steps", "in_steps"), positions=1)):
    ...     def __init__(self, in_steps, out_steps, bias=True, device=None, dtype=None):
    ...         super().__init__()
    ...         self.in_steps, self.out_steps = in_steps, out_steps
    ...         self.weight = CplxParameter(cplx.randn(out_steps, in_steps, dtype=dtype) / 4)
    ...         self.bias = CplxParameter(cplx.Cplx.zeros(out_steps, 1)) if bias else None
    ...     def _dense_forward(self, input, *, weight, bias):
    ...         # real for the variance: sigma^2 on |x|^2
    ...         einsum = torch.einsum if isinstance(input, torch.Tensor) else cplx.einsum
    ...         output = einsum("oi,...if->...of", weight, input)
    ...         return output if bias is None else output + bias
    ...     def forward(self, input):
    ...         return self._weighted_forward(input)
    >>> from cplxmodule.nn.relevance import to_bayesian
    >>> vd = to_bayesian(torch.nn.Sequential(CplxStepMixer(5, 3)))
    >>> type(vd[0]).__name__, vd[0].log_sigma2.shape
    ('CplxStepMixerVD', torch.Size([3, 5]))
    >>> vd(cplx.randn(2, 5, 4)).shape
    torch.Size([2, 3, 4])
    """

    _family: ClassVar[Any] = None

    if TYPE_CHECKING:
        # what a dense layer of a family holds and defines (see the class)
        weight: Any
        bias: Any
        _dense_forward: Callable[..., Any]

    def __init_subclass__(
        cls,
        family: Any = None,
        kind: Optional[str] = None,
        twin: bool = True,
        convertible: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if family is not None:
            cls._family = _families.declare(
                cls, family, kind, twin=twin, convertible=convertible,
                complex=issubclass(cls, CplxToCplx),
            )
        # under python -OO every class lacks its docstring, and none is made
        if kind is not None and cls.__doc__ is None and sys.flags.optimize < 2:
            cls.__doc__ = cls._member_doc(kind)

    @classmethod
    def _member_doc(cls, kind):
        """The docstring of a declared twin of ``kind`` that has none of its own, or ``None``."""
        return None

    def _attach_kind(self, **kwargs: Any) -> None:
        """Add what a kind's bases add to a built dense layer (its class already the twin's).

        A conversion changes a layer's class to its twin's and calls this;
        each kind base adds its state (a mask, ``log_sigma2``, gates) and
        calls on, taking its own keyword arguments (``gated``). The
        constructor of a twin adds the same state.
        """
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {sorted(kwargs)}")

    def _detach_kind(self) -> None:
        """Remove what the kind's bases added: the inverse of :meth:`_attach_kind`."""

    def _weighted_forward(self, *inputs, **kwargs):
        """The entry point ``_dense_forward`` with the layer's weight and bias.

        Both are read once inside :func:`~cplxmodule.nn.cached`.
        """
        weight, bias = _weight_and_bias(self)
        return self._dense_forward(*inputs, weight=weight, bias=bias, **kwargs)


def _weight_and_bias(layer):
    """``layer.weight`` and ``layer.bias``, packed once inside :func:`~cplxmodule.nn.cached`."""
    if cache._ACTIVE:
        return _cached_attr(layer, "weight"), _cached_attr(layer, "bias")
    return _registered(layer, "weight"), _registered(layer, "bias")


def _registered(layer, name):
    """``getattr(layer, name)``, read from the registered parameters and modules first.

    ``Module.__getattr__`` costs more than a small product's kernel; a
    name that is neither (a property, a plain attribute) takes the usual way.
    """
    value = layer._modules.get(name)
    if value is None:
        value = layer._parameters.get(name)
    if value is None:
        value = getattr(layer, name)
    return value


def _check_forward_calls_base(cls):
    """Refuse a twin whose ``forward`` would bypass its kind's ``_weighted_forward``.

    A kind's base (the masking base, the Gaussian base, the channel gates)
    supplies the weight through ``_weighted_forward``; a ``forward`` that
    does not call it (a torch layer's, as in ``class M(BaseMasked,
    torch.nn.Linear)``) would silently run the dense layer. ``forward``
    must come from a dense layer of this package, or from a subclass of a
    kind's base (the user's own), or from a class followed in the MRO by
    such a dense layer (a user's subclass of torch's layer in a twin that
    the table of kinds made, whose ``super().forward`` reaches it).
    """
    mro = cls.__mro__
    base = next(
        (c for c in mro if issubclass(c, _KindMixin) and "_weighted_forward" in vars(c)), None
    )
    owner = next(c for c in mro if "forward" in vars(c))
    if base is None or owner is torch.nn.Module or issubclass(owner, (_KindMixin, WeightedLayer)) or any(
        issubclass(c, WeightedLayer) and "forward" in vars(c) for c in mro[mro.index(owner) + 1:]
    ):
        return
    raise TypeError(
        f"{cls.__name__}: `forward` must come from a dense layer of cplxmodule (it calls"
        f" `_weighted_forward`) or from the class itself, got the `forward` of"
        f" {owner.__name__}, which would bypass {base.__name__}"
    )


if TYPE_CHECKING:
    class _Dense(WeightedLayer, torch.nn.Module):
        """What a kind's base sees of the dense layer it goes before in a twin's bases."""

        def reset_parameters(self) -> None: ...
else:
    _Dense = object


class _KindMixin(_Dense):
    """The root of every kind's base: the masking base, the Gaussian base, the gates.

    A kind's base goes before the dense layer in a twin's bases (to mypy it
    is that layer). Its ``reset_parameters`` resets the dense layer's
    parameters, then the kind's own (named by ``_variational``, reset by
    ``reset_variational_parameters``), which do not exist yet while the
    dense layer's ``__init__`` runs. A class deriving from a kind base that
    supplies the weight is checked where it is made: its ``forward`` must
    reach that base.
    """

    _variational: ClassVar[Optional[str]] = None

    if TYPE_CHECKING:
        def reset_variational_parameters(self) -> None: ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the kind's bases themselves are checked where they meet a layer
        if issubclass(cls, torch.nn.Module):
            _check_forward_calls_base(cls)

    def reset_parameters(self) -> None:
        """Reset the dense layer's parameters, then the kind's own once they exist."""
        # a user's dense layer need not define reset_parameters
        reset = getattr(super(), "reset_parameters", None)
        if reset is not None:
            reset()
        if self._variational is not None and self._variational in self._parameters:
            self.reset_variational_parameters()
