"""Sparsity statistics."""

from .sparsity import *  # noqa: F401,F403
from .sparsity import __all__ as _sparsity_all

__all__ = _sparsity_all
