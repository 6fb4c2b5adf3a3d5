"""The complex tensor type :class:`Cplx` and the functional operations on it.

The functional core of cplxmodule, as :mod:`torch.nn.functional` is torch's:
layers in :mod:`cplxmodule.nn` hold parameters and call these functions.
"""

from .tensor import *  # noqa: F401,F403
from .tensor import __all__ as _tensor_all
from .elementwise import *  # noqa: F401,F403
from .elementwise import __all__ as _elementwise_all
from .linalg import *  # noqa: F401,F403
from .linalg import __all__ as _linalg_all
from .normalization import *  # noqa: F401,F403
from .normalization import __all__ as _normalization_all
from .dropout import *  # noqa: F401,F403
from .dropout import __all__ as _dropout_all

# Pickles made with the published package name the class by this path.
Cplx.__module__ = __name__  # noqa: F405

__all__ = (
    _tensor_all + _elementwise_all + _linalg_all + _normalization_all + _dropout_all
)
