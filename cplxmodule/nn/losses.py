"""Complex losses, as ``torch.nn``'s: the import path ``cplxmodule.nn.losses``.

The classes live in ``cplxmodule/nn/modules/loss.py`` (as torch's in
``torch/nn/modules/loss.py``) and are also importable from
:mod:`cplxmodule.nn`; their math is in :mod:`cplxmodule.cplx.loss`.
"""

from .modules.loss import *  # noqa: F401,F403
from .modules.loss import __all__  # noqa: F401
