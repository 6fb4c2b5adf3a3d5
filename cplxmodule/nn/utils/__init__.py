"""Sparsity statistics, and loading a checkpoint all or nothing."""

from .loading import *  # noqa: F401,F403
from .loading import __all__ as _loading_all
from .sparsity import *  # noqa: F401,F403
from .sparsity import __all__ as _sparsity_all

__all__ = _sparsity_all + _loading_all
