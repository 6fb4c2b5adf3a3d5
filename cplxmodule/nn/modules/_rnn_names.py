"""torch's parameter names (``weight_ih_l0``...) on the complex recurrent layers and cells.

The layers of :mod:`cplxmodule.nn.modules.rnn` hold their weights in
projection submodules (``ih_l0.weight``...); the mixin ``_TorchNames`` lets code
and checkpoints written for torch's layers read and load them by torch's
flat names.
"""

import re

from ...cplx._typing import ModuleMixin

_TORCH_NAME = re.compile(r"(weight|bias)_(ih|hh|hr)(_l\d+(?:_reverse)?)?")


def _torch_name(name):
    """The match of torch's name ``name``, or None; the projection ``hr`` has no bias."""
    match = _TORCH_NAME.fullmatch(name)
    return None if match is None or match.group(1, 2) == ("bias", "hr") else match


def _projection_name(match):
    return match.group(2) + (match.group(3) or "")


class _TorchNames(ModuleMixin):
    """Read-only access to the weights by torch's names (``weight_ih_l0``...), a mixin.

    A torch name, ``{weight,bias}_{ih,hh}{suffix}`` (and the LSTM's
    ``weight_hr{suffix}``), reads the ``weight`` or ``bias`` of the
    projection ``{ih,hh,hr}{suffix}``; a state_dict that holds
    torch's names (a checkpoint of the torch layer) is loaded under ours,
    real tensors promoted to complex with zero imaginary parts.
    """

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            match = _torch_name(name)
            modules = self.__dict__.get("_modules", {})
            projection = match and modules.get(_projection_name(match))
            if projection is None:
                raise
            return getattr(projection, match.group(1))

    def __setattr__(self, name, value):
        match = _torch_name(name)
        if match:
            raise AttributeError(
                f"{self._get_name()}: `{name}` is read-only; assign"
                f" `{_projection_name(match)}.{match.group(1)}` instead"
            )
        super().__setattr__(name, value)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        for key in [key for key in state_dict if key.startswith(prefix)]:
            match = _torch_name(key[len(prefix):])
            if match is not None:
                target = f"{prefix}{_projection_name(match)}.{match.group(1)}"
                state_dict[target] = state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
