"""Loading a checkpoint all or nothing."""

from __future__ import annotations

import torch

from typing import Any, Mapping

__all__ = ["load_state_dict"]


def load_state_dict(
    module: torch.nn.Module, state_dict: Mapping[str, Any], strict: bool = True,
    assign: bool = False,
) -> Any:
    """:meth:`torch.nn.Module.load_state_dict`, all or nothing.

    torch's loader loads every layer it can and raises at the end: when a
    late key fails (a misshapen weight, a mask that does not broadcast, a
    non-finite value that a masked or Bayesian layer refuses) the layers
    before it are already overwritten. This loads the same way, and on
    failure puts back every parameter and buffer of ``module`` as it was:
    the same tensor objects, registered under the same names, holding
    their old values (a mask that was unset is unset again).

    Parameters
    ----------
    module : torch.nn.Module
    state_dict : Mapping[str, Any]
    strict : bool, default True
        As for :meth:`torch.nn.Module.load_state_dict`.
    assign : bool, default False
        As for :meth:`torch.nn.Module.load_state_dict`.

    Returns
    -------
    NamedTuple
        ``missing_keys`` and ``unexpected_keys``, as torch's method returns.

    Raises
    ------
    RuntimeError
        torch's error, naming every key that failed; ``module`` is then as
        it was before the call.

    Notes
    -----
    It keeps a copy of every parameter and buffer until the load ends: the
    model's size in memory once more.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> model = torch.nn.Sequential(LinearMasked(3, 2), LinearMasked(2, 2))
    >>> checkpoint = {key: value + 1 for key, value in model.state_dict().items()}
    >>> checkpoint.update({"0.mask": torch.ones(2, 3), "1.mask": torch.ones(5, 5)})
    >>> before = model[0].weight.clone()
    >>> load_state_dict(model, checkpoint)
    Traceback (most recent call last):
    ...
    RuntimeError: Error(s) in loading state_dict for Sequential:...
    >>> torch.equal(model[0].weight, before), model[0].mask is None
    (True, True)
    """
    saved = [
        (layer, dict(layer._parameters), dict(layer._buffers), _values(layer))
        for layer in module.modules()
    ]
    try:
        return module.load_state_dict(state_dict, strict=strict, assign=assign)
    except BaseException:
        with torch.no_grad():
            for layer, parameters, buffers, values in saved:
                layer._parameters.clear()
                layer._parameters.update(parameters)
                layer._buffers.clear()
                layer._buffers.update(buffers)
                for tensor, value in values:
                    tensor.copy_(value)
        raise


def _values(layer):
    """``(tensor, copy of its values)`` for each parameter and buffer ``layer`` holds itself."""
    tensors = [*layer._parameters.values(), *layer._buffers.values()]
    return [(t, t.detach().clone()) for t in tensors if t is not None]
