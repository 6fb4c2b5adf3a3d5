"""The one table of layer families: each dense layer, how to rebuild it, and its twins.

A family is a dense layer class (``torch.nn.Linear``, ``CplxConv2d``, ...)
together with every layer class of this package that computes with the same
weight and takes the same constructor arguments: its masked, variational
dropout and ARD twins and the extensions' Bayesian layers. Whatever needs
to know "which dense layer is the twin of which, built with which arguments"
reads it here: :func:`~cplxmodule.nn.to_native` and
:func:`~cplxmodule.nn.from_native`, :func:`~cplxmodule.nn.masked.convert_layers`
and :func:`~cplxmodule.nn.masked.compact`.

Membership is by exact class: a user's subclass may compute anything in its
own ``forward``, so it belongs to no family.

The dense families are defined here; :mod:`cplxmodule.nn.masked` and
:mod:`cplxmodule.nn.relevance` register their layers into them at import.
"""

from typing import NamedTuple

import torch

from .modules.conv import (
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
)
from .modules.linear import CplxBilinear, CplxLinear

__all__ = []


class Family:
    """A dense layer class and the layer classes of the same weight and arguments.

    Attributes
    ----------
    dense : type
        The public dense class.
    args : tuple of str
        Its constructor arguments besides ``bias``, ``device`` and ``dtype``;
        each is stored as an attribute of the same name, on every member.
    spatial : int or None
        For a family whose features can be removed (weight ``(out, in,
        *kernel)``, input feature ``j`` read through column ``j`` alone):
        the number of kernel dimensions; ``None`` otherwise.
    sizes : tuple of str or None
        The names of the output and input sizes among ``args`` of such a
        family.
    grouped : bool
        Whether ``args`` has ``groups``: a member with ``groups != 1`` does
        not map input feature ``j`` through column ``j``.
    native : type or None
        torch's layer computing the same in torch's complex dtype, for a
        complex family.
    twins : dict of str to type
        The member of each kind that :func:`convert_layers` converts to
        (``"dense"``, ``"masked"``, ``"vd"``, ``"ard"``).
    """

    def __init__(self, dense, args, *, spatial=None, native=None):
        self.dense, self.args, self.spatial, self.native = dense, args, spatial, native
        self.grouped = "groups" in args
        if spatial is None:
            self.sizes = None
        elif spatial == 0:
            self.sizes = ("out_features", "in_features")
        else:
            self.sizes = ("out_channels", "in_channels")
        self.twins = {"dense": dense}

    def init_kwargs(self, layer):
        """The constructor arguments (but ``bias``, ``device``, ``dtype``) that rebuild ``layer``."""
        return {name: getattr(layer, name) for name in self.args}

    def shrinkable(self, layer):
        """Whether features of the member ``layer`` may be removed."""
        return self.spatial is not None and not (self.grouped and layer.groups != 1)

    def __repr__(self):
        return f"Family({self.dense.__name__})"


class Member(NamedTuple):
    """What the table knows of one layer class."""

    family: Family
    kind: str
    #: whether the class converts to its family's twins keeping what it
    #: computes with in eval mode (its ``weight``, up to a mask or posterior
    #: variance, or for a layer with gates of its own its ``_eval_weight()``,
    #: the gates folded in): :func:`convert_layers` and
    #: :func:`magnitude_masks` take it
    convertible: bool = True


_FAMILIES = {}  # dense class -> Family
_MEMBERS = {}  # exact member class -> Member


def _define(dense, args, *, spatial=None, native=None):
    _FAMILIES[dense] = family = Family(dense, args, spatial=spatial, native=native)
    _MEMBERS[dense] = Member(family, "dense")


def register(dense, kind, cls, *, twin=True, convertible=True):
    """Make ``cls`` the member of kind ``kind`` in the family of the dense class ``dense``.

    ``twin=False`` registers a member that :func:`convert_layers` does not
    convert to (the extensions' layers, with arguments of their own);
    ``convertible=False`` one that it does not convert from either (the
    Gaussian bases, the extensions' LASSO and complex VD variants).
    """
    family = _FAMILIES[dense]
    if twin:
        family.twins[kind] = cls
    _MEMBERS[cls] = Member(family, kind, convertible)


def lookup(cls):
    """The :class:`Member` record of the exact class ``cls``, or ``None``."""
    return _MEMBERS.get(cls)


def families():
    """Every family, in definition order."""
    return list(_FAMILIES.values())


def kinds():
    """The kinds :func:`convert_layers` converts to, sorted."""
    return sorted({kind for family in _FAMILIES.values() for kind in family.twins})


_LINEAR = ("in_features", "out_features")
_BILINEAR = ("in1_features", "in2_features", "out_features")
_CONV = ("in_channels", "out_channels", "kernel_size", "stride", "padding",
         "dilation", "groups", "padding_mode")
_CONV_TRANSPOSE = _CONV + ("output_padding",)

_define(torch.nn.Linear, _LINEAR, spatial=0)
_define(torch.nn.Bilinear, _BILINEAR)
_define(torch.nn.Conv1d, _CONV, spatial=1)
_define(torch.nn.Conv2d, _CONV, spatial=2)
_define(torch.nn.Conv3d, _CONV, spatial=3)
_define(torch.nn.ConvTranspose1d, _CONV_TRANSPOSE)
_define(torch.nn.ConvTranspose2d, _CONV_TRANSPOSE)
_define(torch.nn.ConvTranspose3d, _CONV_TRANSPOSE)
_define(CplxLinear, _LINEAR, spatial=0, native=torch.nn.Linear)
_define(CplxBilinear, _BILINEAR + ("conjugate",))
_define(CplxConv1d, _CONV, spatial=1, native=torch.nn.Conv1d)
_define(CplxConv2d, _CONV, spatial=2, native=torch.nn.Conv2d)
_define(CplxConv3d, _CONV, spatial=3, native=torch.nn.Conv3d)
_define(CplxConvTranspose1d, _CONV_TRANSPOSE, native=torch.nn.ConvTranspose1d)
_define(CplxConvTranspose2d, _CONV_TRANSPOSE, native=torch.nn.ConvTranspose2d)
_define(CplxConvTranspose3d, _CONV_TRANSPOSE, native=torch.nn.ConvTranspose3d)
