"""Complex-valued neural networks and weight sparsification for PyTorch."""

__version__ = "2026.12.0"

from .cplx import Cplx, from_real, to_real
from . import nn

__all__ = ["Cplx", "from_real", "to_real", "nn", "__version__"]
