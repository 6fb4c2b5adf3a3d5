"""Weight masking for real and complex layers.

Every masked layer is its dense twin plus :class:`BaseMasked`, which holds
the mask and multiplies it into the weight; the helpers walk whole models, and
:func:`compact` turns a masked model into a compact inference model
(``compact`` does the surgery, ``sparse_linear`` holds the CSR layers,
``report`` the :func:`compact_report`, ``quantized`` the quantized twins,
:func:`quantize` and :func:`compressed_size`).
"""

from .base import *  # noqa: F401,F403
from .base import __all__ as _base_all
from .real import *  # noqa: F401,F403
from .real import __all__ as _real_all
from .complex import *  # noqa: F401,F403
from .complex import __all__ as _complex_all
from .twins import *  # noqa: F401,F403
from .twins import __all__ as _twins_all
from .compact import *  # noqa: F401,F403
from .compact import __all__ as _compact_all
from .quantized import *  # noqa: F401,F403
from .quantized import __all__ as _quantized_all

__all__ = _base_all + _real_all + _complex_all + _twins_all + _compact_all + _quantized_all
