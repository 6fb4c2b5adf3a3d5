"""The variational dropout and ARD twins of whole models.

At import, every Bayesian layer class of :mod:`cplxmodule.nn.relevance` joins
its dense layer's family in the one table of families
(``cplxmodule.nn._families``): the VD, ARD and structured layers as twins
that :func:`~cplxmodule.nn.masked.convert_layers` converts to and from,
:class:`~cplxmodule.nn.relevance.LinearL0` as a member it converts from
(its gates folded into the weight), the Gaussian bases and the other
extensions' layers as members known to :func:`~cplxmodule.nn.masked.compact`
only.
"""

import functools

import torch

from .._families import register as _register
from ..masked.twins import convert_layers
from ..modules.conv import (
    CplxConv1d,
    CplxConv2d,
    CplxConv3d,
    CplxConvTranspose1d,
    CplxConvTranspose2d,
    CplxConvTranspose3d,
)
from ..modules.linear import CplxBilinear, CplxLinear
from . import complex as _complex
from . import real as _real
from .complex import base as _complex_base
from .extensions import LinearL0, LinearLASSO
from .extensions import complex as _extensions
from .real import base as _real_base
from .complex import structured as _complex_structured
from .real import structured as _real_structured

__all__ = ["to_bayesian"]

_FAMILIES = [
    (torch.nn.Linear, "Linear"),
    (torch.nn.Bilinear, "Bilinear"),
    (torch.nn.Conv1d, "Conv1d"),
    (torch.nn.Conv2d, "Conv2d"),
    (torch.nn.Conv3d, "Conv3d"),
    (torch.nn.ConvTranspose1d, "ConvTranspose1d"),
    (torch.nn.ConvTranspose2d, "ConvTranspose2d"),
    (torch.nn.ConvTranspose3d, "ConvTranspose3d"),
]
_CPLX_FAMILIES = [
    (CplxLinear, "CplxLinear"),
    (CplxBilinear, "CplxBilinear"),
    (CplxConv1d, "CplxConv1d"),
    (CplxConv2d, "CplxConv2d"),
    (CplxConv3d, "CplxConv3d"),
    (CplxConvTranspose1d, "CplxConvTranspose1d"),
    (CplxConvTranspose2d, "CplxConvTranspose2d"),
    (CplxConvTranspose3d, "CplxConvTranspose3d"),
]
for _families, _module in ((_FAMILIES, _real), (_CPLX_FAMILIES, _complex)):
    for _dense, _name in _families:
        for _kind in ("VD", "ARD"):
            _register(_dense, _kind.lower(), getattr(_module, _name + _kind))
# the Gaussian bases and the extensions' layers: known to ``compact``, not
# converted to or from
for _families, _module in ((_FAMILIES, _real_base), (_CPLX_FAMILIES, _complex_base)):
    for _dense, _name in _families:
        _register(
            _dense, "gaussian", getattr(_module, _name + "Gaussian"), twin=False, convertible=False
        )
# the structured layers: twins of every family, one class per gate for
# both axes, so each kind is its class with ``gated`` bound (also for the
# output: a layer gating its inputs converts to the output kind) and the
# class itself is the member that ``compact`` looks up; the L0 gates
# compute with more than their weight: ``convert_layers`` converts them
# from their ``_eval_weight()``, the gates folded in
_STRUCTURED_KINDS = {
    "channel_vd": ("ChannelVD", "output"),
    "channel_ard": ("ChannelARD", "output"),
    "channel_l0": ("ChannelL0", "output"),
    "input_vd": ("ChannelVD", "input"),
    "input_ard": ("ChannelARD", "input"),
    "input_l0": ("ChannelL0", "input"),
}
for _families, _module in ((_FAMILIES, _real_structured), (_CPLX_FAMILIES, _complex_structured)):
    for _dense, _name in _families:
        for _kind, (_suffix, _gated) in _STRUCTURED_KINDS.items():
            _cls = getattr(_module, _name + _suffix)
            if _gated == "output":
                _register(_dense, _kind, _cls, twin=False)
            _register(_dense, _kind, functools.partial(_cls, gated=_gated))
_register(torch.nn.Linear, "l0", LinearL0, twin=False)
_register(torch.nn.Linear, "lasso", LinearLASSO, twin=False, convertible=False)
for _dense, _name in _CPLX_FAMILIES:
    for _variant in ("ScaleFree", "Approx", "Bogus"):
        _register(
            _dense,
            f"vd_{_variant.lower()}",
            getattr(_extensions, f"{_name}VD{_variant}"),
            twin=False,
            convertible=False,
        )


_KINDS = ("vd", "ard", *_STRUCTURED_KINDS)


def to_bayesian(module, kind="vd"):
    """The variational dropout, ARD or structured twin of ``module``.

    Every dense, masked or Bayesian layer, real or complex, is swapped for
    its twin of ``kind``, weights kept and the variational parameters at
    their initial values (see :func:`~cplxmodule.nn.masked.convert_layers`);
    ``module`` is not changed. The first step of the train, sparsify,
    fine-tune pipeline.

    Parameters
    ----------
    module : torch.nn.Module
    kind : {"vd", "ard", "channel_vd", "channel_ard", "channel_l0", "input_vd", "input_ard", \
"input_l0"}
        Variational dropout or automatic relevance determination of each
        weight; or, structured (:mod:`~cplxmodule.nn.relevance.structured`),
        of whole output channels (``*ChannelVD``, ``*ChannelARD``), or L0
        gates of whole output channels (``*ChannelL0``); ``"input_*"``: the
        same layers with ``gated="input"``, gating whole input channels (a
        linear layer's input features, a bilinear layer's first input's).
        An L0 layer converts back, to a masked (``to_masked``) or any
        other twin, with its eval-mode gates folded into the weight: the
        masked twin with the masks of ``compute_ard_masks`` computes what
        it computes in eval mode, and so does its
        :func:`~cplxmodule.nn.masked.compact` (which also takes the L0
        model itself). A layer already of ``kind`` is kept as it is.

    Returns
    -------
    torch.nn.Module

    Raises
    ------
    ValueError
        If ``kind`` is none of these.

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear
    >>> model = torch.nn.Sequential(CplxLinear(4, 3))
    >>> type(to_bayesian(model, kind="ard")[0]).__name__
    'CplxLinearARD'
    >>> type(to_bayesian(model, kind="channel_vd")[0]).__name__
    'CplxLinearChannelVD'
    >>> twin = to_bayesian(model, kind="input_l0")[0]
    >>> type(twin).__name__, twin.gated, twin.log_alpha.shape
    ('CplxLinearChannelL0', 'input', torch.Size([4]))
    """
    if kind not in _KINDS:
        raise ValueError(f"to_bayesian: `kind` must be one of {list(_KINDS)}, got {kind!r}.")
    return convert_layers(module, kind)
