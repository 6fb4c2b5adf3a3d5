"""Real-valued masked layers: torch's dense layers plus :class:`BaseMasked`.

Each layer subclasses its dense torch twin, so it takes the same arguments
and has the same state_dict keys (plus ``mask``): a trained dense checkpoint
loads with ``load_state_dict(state_dict, strict=False)``. The twin is a
private subclass of torch's layer (``isinstance(layer, torch.nn.Linear)``
holds) that adds the entry point ``_dense_forward`` which
``BaseMasked._weighted_forward`` calls with ``self.weight_masked``.
"""

import torch

from ..modules.conv import (
    _RealConv1d,
    _RealConv2d,
    _RealConv3d,
    _RealConvTranspose1d,
    _RealConvTranspose2d,
    _RealConvTranspose3d,
)
from ..modules.linear import _RealBilinear, _RealLinear
from .base import BaseMasked

__all__ = [
    "LinearMasked",
    "BilinearMasked",
    "Conv1dMasked",
    "Conv2dMasked",
    "Conv3dMasked",
    "ConvTranspose1dMasked",
    "ConvTranspose2dMasked",
    "ConvTranspose3dMasked",
]


class LinearMasked(BaseMasked, _RealLinear, family=torch.nn.Linear, kind="masked"):
    pass


class BilinearMasked(BaseMasked, _RealBilinear, family=torch.nn.Bilinear, kind="masked"):
    pass


class Conv1dMasked(BaseMasked, _RealConv1d, family=torch.nn.Conv1d, kind="masked"):
    pass


class Conv2dMasked(BaseMasked, _RealConv2d, family=torch.nn.Conv2d, kind="masked"):
    pass


class Conv3dMasked(BaseMasked, _RealConv3d, family=torch.nn.Conv3d, kind="masked"):
    pass


class ConvTranspose1dMasked(
    BaseMasked, _RealConvTranspose1d, family=torch.nn.ConvTranspose1d, kind="masked"
):
    pass


class ConvTranspose2dMasked(
    BaseMasked, _RealConvTranspose2d, family=torch.nn.ConvTranspose2d, kind="masked"
):
    pass


class ConvTranspose3dMasked(
    BaseMasked, _RealConvTranspose3d, family=torch.nn.ConvTranspose3d, kind="masked"
):
    pass
