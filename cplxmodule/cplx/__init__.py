"""The complex tensor type :class:`Cplx` and the functional operations on it.

The functional core of cplxmodule, as :mod:`torch.nn.functional` is torch's:
layers in :mod:`cplxmodule.nn` hold parameters and call these functions.
Its modules: :mod:`~cplxmodule.cplx.tensor` (the class, its operators and
pytree registration), :mod:`~cplxmodule.cplx.conversions` (real and native
complex layouts), :mod:`~cplxmodule.cplx.creation` (random tensors),
:mod:`~cplxmodule.cplx.shape` (joining, splitting, squeezing),
:mod:`~cplxmodule.cplx.elementwise`, :mod:`~cplxmodule.cplx.linalg` (linear
maps, einsum and the complex-product strategies), :mod:`~cplxmodule.cplx.conv`,
:mod:`~cplxmodule.cplx.pooling`, :mod:`~cplxmodule.cplx.upsampling`,
:mod:`~cplxmodule.cplx.loss`, :mod:`~cplxmodule.cplx.normalization`,
:mod:`~cplxmodule.cplx.attention` (scaled dot-product and multi-head attention),
:mod:`~cplxmodule.cplx.dropout`, :mod:`~cplxmodule.cplx.spectral` (Fourier
transforms), :mod:`~cplxmodule.cplx.filterbank` (Gabor and Morlet kernels),
:mod:`~cplxmodule.cplx.spectral_pooling` and :mod:`~cplxmodule.cplx.sequence`
(positional phases, state-space kernels, the matrix exponential),
:mod:`~cplxmodule.cplx.polar` (activations of the modulus and the phase) and
:mod:`~cplxmodule.cplx.channel` (per-channel scales, channel attention); everything
is importable from here.
"""

from .tensor import *  # noqa: F401,F403
from .tensor import __all__ as _tensor_all
from .conversions import *  # noqa: F401,F403
from .conversions import __all__ as _conversions_all
from .creation import *  # noqa: F401,F403
from .creation import __all__ as _creation_all
from .shape import *  # noqa: F401,F403
from .shape import __all__ as _shape_all
from .elementwise import *  # noqa: F401,F403
from .elementwise import __all__ as _elementwise_all
from .linalg import *  # noqa: F401,F403
from .linalg import __all__ as _linalg_all
from .conv import *  # noqa: F401,F403
from .conv import __all__ as _conv_all
from .pooling import *  # noqa: F401,F403
from .pooling import __all__ as _pooling_all
from .upsampling import *  # noqa: F401,F403
from .upsampling import __all__ as _upsampling_all
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _loss_all
from .normalization import *  # noqa: F401,F403
from .normalization import __all__ as _normalization_all
from .dropout import *  # noqa: F401,F403
from .dropout import __all__ as _dropout_all
from .attention import *  # noqa: F401,F403
from .attention import __all__ as _attention_all
from .spectral import *  # noqa: F401,F403
from .spectral import __all__ as _spectral_all
from .compat import *  # noqa: F401,F403
from .compat import __all__ as _compat_all
from .filterbank import *  # noqa: F401,F403
from .filterbank import __all__ as _filterbank_all
from .spectral_pooling import *  # noqa: F401,F403
from .spectral_pooling import __all__ as _spectral_pooling_all
from .sequence import *  # noqa: F401,F403
from .sequence import __all__ as _sequence_all
from .polar import *  # noqa: F401,F403
from .polar import __all__ as _polar_all
from .channel import *  # noqa: F401,F403
from .channel import __all__ as _channel_all

# Pickles made with the published package name the class by this path.
Cplx.__module__ = __name__  # noqa: F405

__all__ = (
    _tensor_all
    + _conversions_all
    + _creation_all
    + _shape_all
    + _elementwise_all
    + _linalg_all
    + _conv_all
    + _pooling_all
    + _upsampling_all
    + _loss_all
    + _normalization_all
    + _dropout_all
    + _attention_all
    + _spectral_all
    + _compat_all
    + _filterbank_all
    + _spectral_pooling_all
    + _sequence_all
    + _polar_all
    + _channel_all
)
