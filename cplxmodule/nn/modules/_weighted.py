"""The dense entry point shared by every layer with a weight, dense, masked or Bayesian.

Every family's dense layer (``Linear``, ``Bilinear``, the convolutions, real
and complex) computes through one method, ``_dense_forward(*inputs, weight=,
bias=)``; the masking base and the Gaussian base supply another weight to
it by overriding ``_weighted_forward`` alone, and the table of families is
declared in the class statements of these layers.
"""

import sys
from typing import Any, ClassVar

import torch

from .. import _families
from .. import cache
from ..cache import _cached_attr
from .base import CplxToCplx


class _WeightedForward:
    """The step of a dense layer's ``forward`` after its input check.

    Every dense layer's ``forward`` has its torch twin's signature (``input``;
    ``input1, input2``; ``input, output_size=None``), which ``torch.export``
    and the ONNX exporters read to name the inputs, checks its inputs
    (``_check_inputs``) and calls :meth:`_weighted_forward`. The masking and
    Gaussian bases override this method alone, so a masked or Bayesian layer
    keeps its dense twin's ``forward`` and signature.

    A class statement declares the class's place in the table of families
    (``cplxmodule.nn._families``) with keywords: ``family=Family(...)`` for
    a dense layer, ``family=<dense class>, kind=<kind>`` for a twin (with
    ``twin=False`` or ``convertible=False`` where
    :func:`~cplxmodule.nn.masked.convert_layers` does not convert to or
    from it). The class and its subclasses then read the family's geometry
    from ``_family``; only the declaring class is a member.
    """

    _family: ClassVar[Any] = None

    def __init_subclass__(cls, family=None, kind=None, twin=True, convertible=True, **kwargs):
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


def _check_forward_calls_base(cls, base):
    """Refuse a subclass of ``base`` whose ``forward`` would bypass ``base._weighted_forward``.

    The bases supply the weight through ``_weighted_forward``; a ``forward``
    that does not call it (a torch layer's, as in ``class M(BaseMasked,
    torch.nn.Linear)``) would silently run the dense layer. ``forward`` must
    come from a dense layer of this package, or from a subclass of ``base``
    (the user's own).
    """
    owner = next(c for c in cls.__mro__ if "forward" in vars(c))
    if owner is torch.nn.Module or issubclass(owner, (base, _WeightedForward)):
        return
    raise TypeError(
        f"{cls.__name__}: `forward` must come from a dense layer of cplxmodule (it calls"
        f" `_weighted_forward`) or from the class itself, got the `forward` of"
        f" {owner.__name__}, which would bypass {base.__name__}"
    )
