"""Complex-valued layers."""

from typing import TYPE_CHECKING

from .parameter import *  # noqa: F401,F403
from .base import *  # noqa: F401,F403
from .casting import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .native import *  # noqa: F401,F403
from .spectral import *  # noqa: F401,F403
from .reconstruction import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .filterbank import *  # noqa: F401,F403
from .positional import *  # noqa: F401,F403
from .ssm import *  # noqa: F401,F403
from .unitary import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .polar import *  # noqa: F401,F403
from .channel import *  # noqa: F401,F403
from . import (  # noqa: F401  (`extra`: the published module path, kept importable)
    parameter,
    base,
    casting,
    linear,
    conv,
    activation,
    container,
    batchnorm,
    normalization,
    dropout,
    pooling,
    upsampling,
    flatten,
    loss,
    native,
    spectral,
    reconstruction,
    attention,
    transformer,
    filterbank,
    positional,
    ssm,
    unitary,
    rnn,
    polar,
    channel,
    extra,
)

if not TYPE_CHECKING:
    # mypy reads only a literal ``__all__``; without one it takes the names
    # imported above as this package's (the layers', and the modules')
    __all__ = [
        name
        for module in (
            parameter,
            base,
            casting,
            linear,
            conv,
            activation,
            container,
            batchnorm,
            normalization,
            dropout,
            pooling,
            upsampling,
            flatten,
            loss,
            native,
            spectral,
            reconstruction,
            attention,
            transformer,
            filterbank,
            positional,
            ssm,
            unitary,
            rnn,
            polar,
            channel,
        )
        for name in module.__all__
    ]
