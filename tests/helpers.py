"""Helpers shared by the test modules: one definition each (test modules do not import each other)."""

import math

import torch
import torch.nn.functional as F

from cplxmodule import Cplx
from cplxmodule.nn import CplxLayerNorm


class Duck:
    """A user's own complex type: nothing but tensor attributes ``.real`` and ``.imag``."""

    def __init__(self, real, imag):
        self.real, self.imag = real, imag


# --- torch's native complex dtype: the independent reference of most tests ----------------------
# Built from the parts with torch's own ops, never with the conversions under test.
def cplx_to_native(z):
    """The :class:`Cplx` ``z`` (a complex parameter too) in torch's complex dtype, in the graph."""
    return torch.complex(z.real, z.imag)


def as_native(value):
    """``value`` in torch's complex dtype if it is a :class:`Cplx`, else unchanged."""
    return cplx_to_native(value) if isinstance(value, Cplx) else value


def detached_native(value, dtype=None):
    """:func:`as_native` of ``value``, detached, and cast to ``dtype`` if given."""
    value = as_native(value).detach()
    return value if dtype is None else value.to(dtype)


def random_native(*shape, dtype=torch.complex128, seed=None, generator=None):
    """A standard normal tensor of torch's complex ``dtype``.

    Drawn from ``generator``, or from a new generator seeded with ``seed``,
    or else from torch's global one.
    """
    if seed is not None:
        generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=dtype, generator=generator)


def flat_outputs(output):
    """The tensors of an output (Cplx as torch's complex dtype; tuples, lists and dicts flattened)."""
    if isinstance(output, Cplx):
        return [as_native(output)]
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, dict):
        return [t for value in output.values() for t in flat_outputs(value)]
    if isinstance(output, (tuple, list)):
        return [t for value in output for t in flat_outputs(value)]
    if output is None:
        return []
    raise TypeError(f"unexpected output {type(output).__name__}")


def weighted_sum(output, generator):
    """A real scalar that depends on every floating value of ``output``, with random weights.

    Weights drawn from ``generator``, in order: the same generator state
    gives the same scalar function for outputs of the same structure.
    """
    total = 0.0
    for tensor in flat_outputs(output):
        if not (tensor.is_floating_point() or tensor.is_complex()):
            continue
        parts = (tensor.real, tensor.imag) if tensor.is_complex() else (tensor,)
        for part in parts:
            weights = torch.randn(part.shape, generator=generator, dtype=torch.float64)
            total = total + (part.to(torch.float64) * weights).sum()
    return torch.as_tensor(total)


# --- attention in torch's native complex128 (tests of attention and transformers) ---------------
DOUBLE = dict(rtol=1e-10, atol=1e-10)


def randc(*shape, seed=0):
    """A float64 :class:`Cplx` of standard normal parts, drawn from its own generator."""
    g = torch.Generator().manual_seed(seed)
    return Cplx(torch.randn(*shape, generator=g, dtype=torch.float64),
                torch.randn(*shape, generator=g, dtype=torch.float64))


def native_linear(proj, x):
    """The complex linear layer ``proj`` applied to the native complex ``x``."""
    out = x @ detached_native(proj.weight).T
    return out if proj.bias is None else out + detached_native(proj.bias)


def native_scores(q, k, score):
    """The real scores of the Hermitian products ``q @ k^H``, scaled by 1/sqrt(head size)."""
    product = q @ k.conj().transpose(-2, -1)
    return (product.real if score == "real" else product.abs()) / math.sqrt(q.shape[-1])


def native_softmax(scores):
    """The softmax over the keys; zero weights where every key is masked, as torch's SDPA."""
    empty = torch.isneginf(scores).all(-1, keepdim=True)
    return torch.where(empty, 0.0, torch.softmax(scores, dim=-1))


def layer_mask(mask):
    """torch's layer convention (bool True: not allowed; float: added) as an additive mask."""
    if mask is None or mask.is_floating_point():
        return mask
    return torch.zeros(mask.shape, dtype=torch.float64).masked_fill(mask, -math.inf)


def native_mha(layer, query, key, value, key_padding_mask=None, attn_mask=None,
               is_causal=False, average=True):
    """``layer``'s forward in native complex128, batch first ``(N, L, E)``; eval mode."""
    n, length, _ = query.shape
    size, h = key.shape[1], layer.num_heads
    d = layer.embed_dim // h

    def heads(x):
        return x.reshape(n, -1, h, d).transpose(1, 2)

    q = heads(native_linear(layer.q_proj, query))
    k = heads(native_linear(layer.k_proj, key))
    v = heads(native_linear(layer.v_proj, value))
    mask = torch.zeros(n, h, length, size, dtype=torch.float64)
    if attn_mask is not None:
        extra = layer_mask(attn_mask)
        mask = mask + (extra if extra.dim() == 2 else extra.reshape(n, h, length, size))
    if key_padding_mask is not None:
        mask = mask + layer_mask(key_padding_mask).reshape(n, 1, 1, size)
    if is_causal and attn_mask is None:
        mask = mask.masked_fill(torch.ones(length, size, dtype=torch.bool).triu(1), -math.inf)
    # the appended keys: bias_k then a zero key, open to every query
    appended = []
    if layer.bias_k is not None:
        appended.append((detached_native(layer.bias_k), detached_native(layer.bias_v)))
    if layer.add_zero_attn:
        appended.append((torch.zeros(d * h, dtype=k.dtype),) * 2)
    for bias_k, bias_v in appended:
        k = torch.cat([k, bias_k.reshape(1, h, 1, d).expand(n, h, 1, d)], dim=2)
        v = torch.cat([v, bias_v.reshape(1, h, 1, d).expand(n, h, 1, d)], dim=2)
        mask = F.pad(mask, (0, 1))
    weights = native_softmax(native_scores(q, k, layer.score) + mask)
    out = (weights.to(v.dtype) @ v).transpose(1, 2).reshape(n, length, layer.embed_dim)
    return native_linear(layer.out_proj, out), weights.mean(1) if average else weights


def load_torch_transformer(ours, theirs):
    """Load the real weights of torch's transformer module ``theirs`` into ``ours`` (imag 0).

    Every entry but the layer norms' goes through ``load_state_dict`` (a real
    tensor gets a zero imaginary part; torch's packed in-projections are split
    among ``q_proj``, ``k_proj`` and ``v_proj``). A norm's weight and bias go to
    ``weight[0, 0]`` and ``bias[0]`` of the complex norm's affine map, all that
    a real input meets: its whitening is a division by the standard deviation.
    """
    state = theirs.state_dict()
    norms = {
        key: state.pop(key)
        for key in list(state)
        if isinstance(ours.get_submodule(key.rpartition(".")[0]), CplxLayerNorm)
    }
    missing, unexpected = ours.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) == set(norms), (missing, unexpected)
    with torch.no_grad():
        for key, value in norms.items():
            prefix, _, name = key.rpartition(".")
            part = (0, 0) if name == "weight" else 0
            getattr(ours.get_submodule(prefix), name)[part].copy_(value)


# --- the recurrent layers in torch's native complex dtype (tests of the RNN layers) -------------
def _split(f, z):
    return torch.complex(f(z.real), f(z.imag))


def _split_mul(a, b):
    return torch.complex(a.real * b.real, a.imag * b.imag)


def native_rnn_step(mode, x, h, c, ih, hh):
    """One step of ``mode`` (torch's ``RNN_TANH``, ``RNN_RELU``, ``GRU``, ``LSTM``): ``(h', c')``.

    From the equations of the layers' docstrings: complex products, split
    gates, activations and gating products; ``ih`` and ``hh`` are the
    projections (complex linear layers).
    """
    gi, gh = native_linear(ih, x), native_linear(hh, h)
    if mode in ("RNN_TANH", "RNN_RELU"):
        return _split(torch.tanh if mode == "RNN_TANH" else torch.relu, gi + gh), None
    if mode == "GRU":
        (ir, iz, in_), (hr, hz, hn) = gi.chunk(3, -1), gh.chunk(3, -1)
        r, z = _split(torch.sigmoid, ir + hr), _split(torch.sigmoid, iz + hz)
        n = _split(torch.tanh, in_ + _split_mul(r, hn))
        # the split ``1 - z``: one minus each part
        return _split_mul(_split(lambda t: 1 - t, z), n) + _split_mul(z, h), None
    i, f, g, o = (gi + gh).chunk(4, -1)
    i, f, o = (_split(torch.sigmoid, t) for t in (i, f, o))
    c = _split_mul(f, c) + _split_mul(i, _split(torch.tanh, g))
    return _split_mul(o, _split(torch.tanh, c)), c


def native_rnn(layer, x, h0=None, c0=None):
    """``layer``'s (eval) output and final states on the native complex ``(L, N, in)`` ``x``.

    One step at a time from the equations, each direction of each layer over
    the whole sequence (the reverse one from its end), the LSTM's
    ``proj_size`` as a product of each new ``h``; states zeros if omitted.
    """
    directions = 2 if layer.bidirectional else 1
    stacked, batch = layer.num_layers * directions, x.shape[1]
    state_size = getattr(layer, "proj_size", 0) or layer.hidden_size
    if h0 is None:
        h0 = torch.zeros(stacked, batch, state_size, dtype=x.dtype)
    if c0 is None:
        c0 = torch.zeros(stacked, batch, layer.hidden_size, dtype=x.dtype)
    h_n, c_n = [], []
    for k in range(layer.num_layers):
        outputs = []
        for d in range(directions):
            suffix = f"_l{k}" + ("_reverse" if d else "")
            ih, hh = getattr(layer, "ih" + suffix), getattr(layer, "hh" + suffix)
            hr = getattr(layer, "hr" + suffix, None)
            h, c = h0[k * directions + d], c0[k * directions + d]
            out = [None] * len(x)
            for t in reversed(range(len(x))) if d else range(len(x)):
                h, c_new = native_rnn_step(layer.mode, x[t], h, c, ih, hh)
                c = c if c_new is None else c_new
                h = h if hr is None else native_linear(hr, h)
                out[t] = h
            outputs.append(torch.stack(out))
            h_n.append(h)
            c_n.append(c)
        x = torch.cat(outputs, -1)
    return x, torch.stack(h_n), torch.stack(c_n)
