"""Complex-valued layers, complex parameters and their initialisation."""

from typing import TYPE_CHECKING

from .modules import *  # noqa: F401,F403
from .parallel import *  # noqa: F401,F403
from .parallel import __all__ as _parallel_all
from .cache import cached
from ._families import Family
from .modules._weighted import WeightedLayer
from .serialization import safe_globals
from . import init, losses, modules
# the twins of every family, so that the table of families and kinds is
# complete whatever part of the package was imported first
from . import masked, relevance  # noqa: E402,F401

if not TYPE_CHECKING:
    # mypy reads a literal ``__all__`` only; without one it takes the names
    # imported above as this package's
    __all__ = modules.__all__ + _parallel_all + [
        "cached", "Family", "WeightedLayer", "safe_globals", "init", "losses",
    ]
