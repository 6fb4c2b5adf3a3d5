"""What the sparsification pipeline refuses, and how it names where.

The whole-model helpers (conversions, relevance masks, sparsity counts,
:func:`~cplxmodule.nn.masked.compact`) refuse a layer whose parameters hold
NaN or an infinity, rather than count its entries as pruned; their errors
name the layer; and a masked or Bayesian layer that refuses a checkpoint
leaves every tensor of its own, its children's included, as it was.
"""

import contextlib

import torch

from ..cplx._shared import ArgumentTypeError, is_real

__all__ = []


def non_finite(tensor):
    """Whether a tensor with values (not on the meta device) holds NaN or an infinity."""
    return (
        isinstance(tensor, torch.Tensor)
        and (tensor.is_floating_point() or tensor.is_complex())
        and tensor.device.type != "meta"
        and not bool(torch.isfinite(tensor).all())
    )


def check_threshold(threshold, where):
    """A real number, or a 0-dim float tensor (a threshold that is itself learnt or scheduled)."""
    if is_real(threshold) or (
        isinstance(threshold, torch.Tensor)
        and threshold.dim() == 0
        and threshold.is_floating_point()
    ):
        if bool(threshold != threshold):
            # a NaN threshold drops every weight: ``log_alpha <= nan`` is false
            raise ValueError(f"{where}: `threshold` must not be NaN, got {threshold!r}")
        return
    raise ArgumentTypeError(
        f"{where}: `threshold` must be a real number or a 0-dim float tensor, got {threshold!r}"
    )


def layer_label(where, name, module):
    """``"<where>: layer '<name>' (<class>)"``: how a helper's message names a layer of the model."""
    return f"{where}: layer {name!r} ({type(module).__name__})"


def check_finite(module, where, name):
    """Raise unless every parameter of ``module`` (submodules included) is finite.

    ``where`` is the helper's name and ``name`` the layer's in the model
    (``""`` for the model itself), which the message quotes.
    """
    for key, parameter in module.named_parameters():
        if non_finite(parameter):
            raise ValueError(
                f"{layer_label(where, name, module)} must have finite parameters, got NaN"
                f" or infinite values in `{key}`: they are refused, never counted as pruned"
            )


@contextlib.contextmanager
def naming(where):
    """Put ``where`` in front of the message of an error raised inside.

    A layer's own errors name its class; the whole-model helper that called
    it adds the layer's name in the model (or a key), keeping the type of
    the error and chaining the original.
    """
    try:
        yield
    except (TypeError, ValueError, RuntimeError) as error:
        raise renamed(error, f"{where}: {error}") from error


def renamed(error, message):
    """An error of the type of ``error`` with ``message`` (a ``RuntimeError`` if it takes none)."""
    try:
        return type(error)(message)
    except TypeError:  # an error class that takes other arguments
        return RuntimeError(message)


def keep_current(module, state_dict, prefix):
    """Make loading ``state_dict`` into ``module`` and its children change nothing.

    For a layer's ``_load_from_state_dict`` that refuses its entries and
    returns early: torch's loader then loads the children from the same
    copy of the state_dict, which must hold their current tensors (the very
    objects, so that ``assign=True`` assigns them back), and nothing else.
    """
    for key in [key for key in state_dict if key.startswith(prefix)]:
        del state_dict[key]
    state_dict.update(
        {prefix + key: value for key, value in module.state_dict(keep_vars=True).items()}
    )


def refuse_bad_entries(module, state_dict, prefix, error_msgs, unchecked_shapes=()):
    """Report a non-finite or misshapen entry of ``module`` in ``state_dict``; whether one was found.

    Every entry under ``prefix`` must be finite, and every one of the
    module's own tensors (its children's included; but those named in
    ``unchecked_shapes``) must come in its shape. When one does not, the
    error is added to ``error_msgs`` (torch's loader raises it with the
    others once the load ends) and ``module`` keeps all its tensors
    (:func:`keep_current`), rather than loading those before or after the
    bad one: the caller returns without loading.
    """
    shapes = {
        prefix + name: tensor.shape
        for name, tensor in module.state_dict(keep_vars=True).items()
        if name not in unchecked_shapes
    }
    for key, value in state_dict.items():
        if not key.startswith(prefix) or not isinstance(value, torch.Tensor):
            continue
        if non_finite(value):
            problem = ("a masked or Bayesian layer must load finite values, got NaN or"
                       " infinite ones (refused, never counted as pruned)")
        elif key in shapes and value.shape != shapes[key]:
            problem = (f"size mismatch: copying a tensor of shape {tuple(value.shape)} from"
                       f" the checkpoint, the shape in the current model is {tuple(shapes[key])}")
        else:
            continue
        error_msgs.append(
            f"While loading {key!r}: {type(module).__name__}: {problem}; the layer is left as it was"
        )
        keep_current(module, state_dict, prefix)
        return True
    return False
