"""Bayesian sparsification: variational dropout and ARD, real and complex.

Each layer is its dense twin plus one Gaussian base
(:class:`GaussianMixin`) with a penalty: the KL divergence of
Molchanov et al. (2017) and Kharitonov et al. (2018) for real layers, of
Nazarov & Burnaev (2020) for complex ones. The whole-model helpers collect
penalties for the loss and turn relevance into masks for the masked twins
(:mod:`cplxmodule.nn.masked`); :func:`to_bayesian` builds a model's twin.
"""

from . import functional  # noqa: F401  (a public submodule: nn.relevance.functional)
from .base import *  # noqa: F401,F403
from .base import __all__ as _base_all
from .real import *  # noqa: F401,F403
from .real import __all__ as _real_all
from .complex import *  # noqa: F401,F403
from .complex import __all__ as _complex_all
from .bits import FixedPoint, bit_precision, named_bit_precision
from .extensions import LinearL0, LinearLASSO
from .recurrent import (
    CplxGRUUnitARD,
    CplxGRUUnitL0,
    CplxGRUUnitVD,
    CplxLSTMUnitARD,
    CplxLSTMUnitL0,
    CplxLSTMUnitVD,
    CplxRNNUnitARD,
    CplxRNNUnitL0,
    CplxRNNUnitVD,
)
from .structured import GateGroup
from .twins import to_bayesian

__all__ = (
    _base_all
    + [name for name in _real_all if not name.endswith("Mixin")]
    + [name for name in _complex_all if not name.endswith("Mixin")]
    + ["LinearL0", "LinearLASSO", "CplxRNNUnitL0", "CplxGRUUnitL0", "CplxLSTMUnitL0",
       "CplxRNNUnitVD", "CplxGRUUnitVD", "CplxLSTMUnitVD", "CplxRNNUnitARD", "CplxGRUUnitARD",
       "CplxLSTMUnitARD", "GateGroup", "to_bayesian", "FixedPoint", "named_bit_precision",
       "bit_precision"]
)
