"""Real sparsification layers beyond variational dropout: L0 gates and LASSO."""

from .ell_zero import LinearL0
from .lasso import LinearLASSO

__all__ = ["LinearL0", "LinearLASSO"]
