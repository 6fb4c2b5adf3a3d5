"""The published module path of :class:`CplxDropout`.

Code written against the published package imports
``cplxmodule.nn.modules.extra.CplxDropout``; the layer lives with the other
dropout layers in :mod:`cplxmodule.nn.modules.dropout`.
"""

from .dropout import CplxDropout

__all__ = ["CplxDropout"]
