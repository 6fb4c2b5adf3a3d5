"""Complex-valued layers, complex parameters and their initialisation."""

from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import init

__all__ = _modules_all + ["init"]
