"""Complex-valued layers, complex parameters and their initialisation."""

from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import *  # noqa: F401,F403
from .parallel import __all__ as _parallel_all
from .cache import cached
from ._families import Family
from .modules._weighted import WeightedLayer
from .serialization import safe_globals
from . import init, losses
# the twins of every family, so that the table of families and kinds is
# complete whatever part of the package was imported first
from . import masked, relevance  # noqa: E402,F401

__all__ = _modules_all + _parallel_all + [
    "cached", "Family", "WeightedLayer", "safe_globals", "init", "losses",
]
