"""Reference models built from the library's layers alone.

Each follows a paper of complex-valued deep learning at a small default
size, and sparsifies, compacts, compiles and exports as any model of the
library's layers does (:doc:`/guides/models`).
"""

from .resnet import CplxResNet
from .unet import CplxUNet
from .vit import CplxVisionTransformer

__all__ = ["CplxResNet", "CplxUNet", "CplxVisionTransformer"]
