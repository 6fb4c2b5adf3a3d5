"""How :func:`~cplxmodule.nn.masked.compact` removes the heads of an attention layer.

A head of :class:`~cplxmodule.nn.CplxMultiheadAttention` is a block of
``head_dim`` output features of the query, key and value projections and
the same block of input features of the output projection. A head computes
nothing that is used when the output projection never reads it (its
columns are all zero), or when its values are zero whatever the input (the
value projection's rows and bias are zero there, and so is ``bias_v``):
the attention of zero values is zero, whatever the weights, the appended
zero key included. Such a head goes from all four projections.

The attention weights that the layer returns are averaged over its heads,
so a head may go only where nothing reads them: one recorded call of the
model (``example_inputs``) must show the weights unused (or not computed),
and no per-head mask, ``(N * num_heads, L, S)``, which would not fit fewer
heads.
"""

import torch

from ..modules.attention import CplxMultiheadAttention
from ._channels import _parts

__all__ = []


def attentions(model, rec):
    """The attention layers of ``model`` whose every recorded call leaves its weights unused."""
    calls: dict = {}
    for (module, _, outs), (args, kwargs) in zip(rec.calls, rec.arguments):
        if type(module) is CplxMultiheadAttention:
            mask = kwargs.get("attn_mask", args[5] if len(args) > 5 else None)
            # the output's two parts, then the weights unless they were not computed
            unused = len(outs) == 2 or len(outs) == 3 and rec.uses.get(outs[2], 0) == 0
            per_head = isinstance(mask, torch.Tensor) and mask.dim() == 3
            calls.setdefault(id(module), []).append(unused and not per_head)
    return [m for m in model.modules() if all(calls.get(id(m), [False]))]


def shrink(attention, units):
    """Remove the heads of ``attention`` that compute nothing used; ``True`` if any."""
    projections = [units.get(id(p)) for p in (
        attention.q_proj, attention.k_proj, attention.v_proj, attention.out_proj)]
    if any(unit is None or unit.shared for unit in projections):
        return False
    q, k, v, out = projections
    heads = attention.num_heads
    size = attention.head_dim
    unread = out.zero_inputs().view(heads, size).all(1)
    silent = v.zero_outputs() & _zero(v.bias, size * heads) & _zero(attention.bias_v, size * heads)
    dead = unread | silent.view(heads, size).all(1)
    if dead.all():
        dead[0] = False  # a layer of no heads cannot be built
    if not dead.any():
        return False
    features = (~dead).repeat_interleave(size).nonzero().squeeze(1)
    for unit in (q, k, v):
        unit.keep_outputs(features)
    out.keep_inputs(features)
    attention.num_heads = int((~dead).sum())
    for extra in (attention.bias_k, attention.bias_v):
        if extra is not None:
            for name, param in list(extra._parameters.items()):
                sliced = param.detach().index_select(-1, features)
                extra._parameters[name] = torch.nn.Parameter(sliced, param.requires_grad)
    return True


def _zero(bias, features):
    """Where a bias (``None``: zero everywhere) is zero, along its last dimension."""
    if bias is None:
        return torch.ones(features, dtype=torch.bool)
    parts = [part.detach().reshape(-1, features) == 0 for part in _parts(bias)]
    return torch.stack(parts).all(1).all(0)
