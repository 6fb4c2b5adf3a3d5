"""Tensor views and spectral helpers.

:mod:`cplxmodule.utils.views` has zero-copy views into real tensors
(:func:`fix_dim`, :func:`complex_view`, :func:`window_view`);
:mod:`cplxmodule.utils.spectrum` has Welch spectral estimation and channel
power measurements for complex baseband signals (:func:`pwelch`,
:func:`fftshift`, :func:`bandwidth_power`, :func:`acpr_calc`).
"""

from .views import *  # noqa: F401,F403
from .views import __all__ as _views_all
from .spectrum import *  # noqa: F401,F403
from .spectrum import __all__ as _spectrum_all

__all__ = _views_all + _spectrum_all
