"""Helpers shared by the test modules: one definition each (test modules do not import each other)."""

import functools
import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy import integrate

import cplxmodule
import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.nn import CplxGRU, CplxLayerNorm, CplxLinear, _families, modules, relevance


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


def native_spectral_pool(z, sizes):
    """Spectral pooling of the native complex ``z`` to ``sizes`` over its last dimensions, by torch.fft.

    The centred ``sizes`` bins of the spectrum (normalised as the layers' mean-keeping transform).
    """
    dims = tuple(range(-len(sizes), 0))
    spectrum = torch.fft.fftshift(torch.fft.fftn(z, dim=dims, norm="forward"), dim=dims)
    for dim, m in zip(dims, sizes):
        spectrum = spectrum.narrow(dim, z.shape[dim] // 2 - m // 2, m)
    return torch.fft.ifftn(torch.fft.ifftshift(spectrum, dim=dims), dim=dims, norm="forward")


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
        return x.reshape(n, x.shape[1], h, d).transpose(1, 2)

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


def _radial(u, bias, f):
    """``f(|u| + bias) u / |u|`` (``bias`` None: ``f(|u|)``), zero at zero."""
    modulus = u.abs()
    shifted = modulus if bias is None else torch.relu(modulus + bias)
    return torch.where(modulus == 0, 0, f(shifted) / modulus) * u


def _modulus_gate(a, bias):
    return torch.sigmoid(a.abs() + bias)


def native_modulus_step(mode, x, h, c, ih, hh, bias):
    """One step of ``mode`` with modulus gates (the Notes of the layers), ``bias`` the real gate biases."""
    gi, gh = native_linear(ih, x), native_linear(hh, h)
    if mode.startswith("RNN"):
        return _radial(gi + gh, bias, torch.tanh if mode == "RNN_TANH" else torch.relu), None
    if mode == "GRU":
        (ir, iz, in_), (hr, hz, hn) = gi.chunk(3, -1), gh.chunk(3, -1)
        br, bz, bn = bias.chunk(3)
        r, z = _modulus_gate(ir + hr, br), _modulus_gate(iz + hz, bz)
        n = _radial(in_ + r * hn, bn, torch.tanh)
        return (1 - z) * n + z * h, None
    (i, f, g, o), (bi, bf, bg, bo) = (gi + gh).chunk(4, -1), bias.chunk(4)
    c = _modulus_gate(f, bf) * c + _modulus_gate(i, bi) * _radial(g, bg, torch.tanh)
    return _modulus_gate(o, bo) * _radial(c, None, torch.tanh), c


def native_rnn_step(mode, x, h, c, ih, hh, gate_bias=None):
    """One step of ``mode`` (torch's ``RNN_TANH``, ``RNN_RELU``, ``GRU``, ``LSTM``): ``(h', c')``.

    From the equations of the layers' docstrings: complex products, split
    gates, activations and gating products; ``ih`` and ``hh`` are the
    projections (complex linear layers). With the real ``gate_bias`` of
    modulus gates, those (`native_modulus_step`).
    """
    if gate_bias is not None:
        return native_modulus_step(mode, x, h, c, ih, hh, gate_bias)
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


def gate_bias(layer, suffix=""):
    """The real biases of a layer's (or cell's) modulus gates, detached; None with split gates."""
    if getattr(layer, "gates", "split") != "modulus":
        return None
    bias = getattr(layer, "gate_bias" + suffix)
    return None if bias is None else bias.detach().double()


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
            bias = gate_bias(layer, suffix)
            h, c = h0[k * directions + d], c0[k * directions + d]
            out = [None] * len(x)
            for t in reversed(range(len(x))) if d else range(len(x)):
                h, c_new = native_rnn_step(layer.mode, x[t], h, c, ih, hh, bias)
                c = c if c_new is None else c_new
                h = h if hr is None else native_linear(hr, h)
                out[t] = h
            outputs.append(torch.stack(out))
            h_n.append(h)
            c_n.append(c)
        x = torch.cat(outputs, -1)
    return x, torch.stack(h_n), torch.stack(c_n)


# --- the public API (tests of the API and of the docs) ------------------------------------------
@functools.cache
def public_modules():
    """The names of every public module of cplxmodule, the package included.

    Every module whose dotted name has no component that starts with an
    underscore, found by walking the package, so a new module is covered as
    soon as it exists.
    """
    names = ["cplxmodule"]
    for info in pkgutil.walk_packages(cplxmodule.__path__, "cplxmodule."):
        # private modules include ``__main__``, which runs a program on import
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return tuple(names)


def public_objects():
    """``(qualified name, object)`` for every class and function in an ``__all__``."""
    for module in public_modules():
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            if inspect.isclass(obj) or inspect.isroutine(obj):
                yield f"{module}.{name}", obj


# --- DataParallel's machinery emulated on the CPU (tests of replication) ------------------------
# the package attributes of these names are functions, not the modules
replicate_module = importlib.import_module("torch.nn.parallel.replicate")
data_parallel = importlib.import_module("torch.nn.parallel.data_parallel")
scatter_gather = importlib.import_module("torch.nn.parallel.scatter_gather")


def fake_broadcast(second_device, buffers_device=None):
    """A stand-in for ``_broadcast_coalesced_reshape``: replica 0 on the source
    tensors, replica 1 on ``second_device``."""

    def broadcast(tensors, devices, detach=False):
        tensors = list(tensors)
        if not tensors:
            return []
        first = list(tensors) if detach else [t.view_as(t) for t in tensors]
        device = second_device
        if buffers_device is not None and detach and not any(t.requires_grad for t in tensors):
            device = buffers_device
        second = [(t.detach() if detach else t).to(device) for t in tensors]
        if device == torch.device("cpu"):
            second = [t.clone() for t in second]
        return [first, second][: len(devices)]

    return broadcast


class FakeGather(torch.autograd.Function):
    """DataParallel's gather on one device: a concatenation, and its split backward."""

    @staticmethod
    def forward(ctx, target_device, dim, *inputs):
        ctx.dim, ctx.sizes = dim, [t.shape[dim] for t in inputs]
        return torch.cat(inputs, dim)

    @staticmethod
    def backward(ctx, grad):
        return (None, None) + grad.split(ctx.sizes, ctx.dim)


def fake_scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None):
    """torch's ``comm.scatter`` on one device: equal chunks along ``dim``."""
    return tensor.chunk(len(devices), dim)


def fake_parallel_apply(replicas, inputs, kwargs_tup=None, devices=None):
    """torch's ``parallel_apply`` run one replica after the other."""
    kwargs_tup = kwargs_tup or ({},) * len(replicas)
    return [module(*args, **kwargs) for module, args, kwargs in zip(replicas, inputs, kwargs_tup)]


def as_data_parallel(cls, module):
    """``cls(module)`` (a DataParallel class) set up for two devices, 0 and 1, on the CPU."""
    parallel = cls(module)  # no accelerator: torch leaves device_ids empty
    parallel.device_ids, parallel.output_device = [0, 1], 0
    parallel.src_device_obj = torch.device("cpu")
    parallel.dim = 0
    return parallel


# --- the KL divergences of the Bayesian layers, integrated with scipy (tests of relevance) -------
GAMMA = np.euler_gamma
LOG_ALPHAS = [-6.0, -3.0, -1.0, 0.0, 0.5, 2.0, 4.0, 8.0]


def real_vd_kl(la):
    """KL(N(mu, alpha mu^2) || p(w) ~ 1/|w|), zero at alpha = infinity:
    (gamma + log 2) / 2 - log(alpha) / 2 + E log|1 + sqrt(alpha) eps|."""
    root = np.sqrt(np.exp(la))

    def f(e):
        return np.log(abs(1 + root * e)) * np.exp(-e * e / 2) / np.sqrt(2 * np.pi)

    pole = -1 / root
    expectation = sum(
        integrate.quad(f, a, b, limit=200)[0] for a, b in [(-np.inf, pole), (pole, np.inf)]
    )
    return (GAMMA + np.log(2)) / 2 - la / 2 + expectation


def cplx_log_modulus2(la):
    """E log|1 + sqrt(alpha) eps|^2 for eps ~ CN(0, 1), integrating the phase
    out by Jensen's formula: the mean over the circle is 2 log max(1, sqrt(alpha) r)."""
    root = np.sqrt(np.exp(la))

    def f(r):
        return 4 * r * np.exp(-r * r) * np.log(root * r)

    return integrate.quad(f, 1 / root, np.inf, limit=200)[0]


def cplx_vd_kl(la):
    """KL(CN(mu, alpha |mu|^2) || p(w) ~ 1/|w|^2), zero at alpha = infinity."""
    return GAMMA - la + cplx_log_modulus2(la)


def gaussian_kl_numeric(mean, var, prior_var):
    """KL(N(mean, var) || N(0, prior_var)) by quadrature of q log(q / p)."""

    def log_density(x, m, v):
        return -0.5 * np.log(2 * np.pi * v) - (x - m) ** 2 / (2 * v)

    def f(x):
        lq = log_density(x, mean, var)
        return np.exp(lq) * (lq - log_density(x, 0.0, prior_var))

    sd = np.sqrt(var)
    return integrate.quad(f, mean - 40 * sd, mean + 40 * sd, limit=400, points=[mean])[0]


def ard_kl(la, n_parts):
    """Empirical-Bayes ARD KL at mean 1 (complex, ``n_parts=2``: 1 + 0j), the
    prior variance being |mu|^2 + sigma^2; a complex weight is two real parts
    of half the variance each."""
    var, prior_var = np.exp(la) / n_parts, (1.0 + np.exp(la)) / n_parts
    return sum(gaussian_kl_numeric(mean, var, prior_var) for mean in [1.0, 0.0][:n_parts])


# --- the structured (channel) Bayesian layers (tests of tests/nn/relevance) ---------------------
KINDS = ["ChannelVD", "ChannelARD", "ChannelL0"]
COMPLEX = pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])


def inputs_of(shape, complex_):
    """Random float64 inputs of ``shape`` (a tuple of shapes for a bilinear layer)."""
    shapes = shape if isinstance(shape[0], tuple) else (shape,)
    if complex_:
        return tuple(cplx.randn(*s, dtype=torch.float64) for s in shapes)
    return tuple(torch.randn(s, dtype=torch.float64) for s in shapes)


def parts(x):
    """The real tensors of ``x``: its parts if a :class:`Cplx`, else ``x`` alone."""
    return (x.real, x.imag) if isinstance(x, Cplx) else (x,)


def dense_twin(layer, families):
    """The dense layer (torch's, or the complex one) with ``layer``'s weight and bias.

    ``families`` is the table of arguments ``layer`` was built with.
    """
    name = type(layer).__name__
    for kind in KINDS:
        name = name.replace(kind, "")
    module = modules if name.startswith("Cplx") else torch.nn
    kwargs = {k: getattr(layer, k) for k in ("stride", "padding", "groups") if hasattr(layer, k)}
    args = families[name.replace("Cplx", "")][0]
    dense = getattr(module, name)(*args, **kwargs).double()
    dense.load_state_dict(layer.state_dict(), strict=False)
    return dense


def set_gates(layer, values):
    """Set the gates' parameters (``log_alpha`` of L0, else ``log_sigma2``) to ``values``."""
    gates = relevance.structured.ChannelL0Mixin
    with torch.no_grad():
        (layer.log_alpha if isinstance(layer, gates) else layer.log_sigma2).copy_(
            torch.as_tensor(values, dtype=torch.float64)
        )


# (kind, complex, reference KL of one gate, tolerance)
REFERENCES = [
    ("ChannelVD", False, real_vd_kl, 0.01),  # Molchanov et al.'s approximation: 0.01 nats
    ("ChannelVD", True, cplx_vd_kl, 1e-8),
    ("ChannelARD", False, lambda la: ard_kl(la, 1), 1e-6),
    ("ChannelARD", True, lambda la: ard_kl(la, 2), 1e-6),
]


def assert_training_gradcheck(layer, inputs, kind, complex_):
    """gradcheck of a training-mode output in the gates' parameters, the weight and the bias."""
    own = "log_alpha" if kind == "ChannelL0" else "log_sigma2"
    names = [own] + (["weight.real", "weight.imag", "bias.real"] if complex_ else ["weight", "bias"])
    params = dict(layer.named_parameters())
    start = tuple(
        (torch.randn_like(params[n]) - (2.0 if n == own else 0.0)).requires_grad_() for n in names
    )

    def sample(*tensors):
        # the same noise at every call: the sample is a smooth function of the parameters
        torch.manual_seed(0)
        return parts(torch.func.functional_call(layer, dict(zip(names, tensors)), inputs))

    assert torch.autograd.gradcheck(sample, start, fast_mode=True)


class Predictor(torch.nn.Module):
    """A complex GRU and a linear read-out: the next value of a sequence."""

    def __init__(self, hidden=12):
        super().__init__()
        self.gru = CplxGRU(1, hidden, batch_first=True)
        self.head = CplxLinear(hidden, 1)

    def forward(self, x):
        output, _ = self.gru(x)
        return self.head(output)


def dense_family_models(*conv_args, **conv_kwargs):
    """One dense layer of every family with structured twins, torch's real ones then ours.

    ``Linear(5, 3)``, ``Bilinear(5, 2, 3)``, then each convolution built with
    ``conv_args`` and ``conv_kwargs``.
    """
    convs = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
    real = [torch.nn.Linear(5, 3), torch.nn.Bilinear(5, 2, 3)] + [
        getattr(torch.nn, f)(*conv_args, **conv_kwargs) for f in convs
    ]
    complex_ = [CplxLinear(5, 3), modules.CplxBilinear(5, 2, 3)] + [
        getattr(modules, "Cplx" + f)(*conv_args, **conv_kwargs) for f in convs
    ]
    return torch.nn.ModuleList(real + complex_)


def package_families():
    """The package's own families in the library's table (a test module may declare its own)."""
    return [f for f in _families.families() if f.entry.__module__.startswith("cplxmodule.")]


def published_member(module, family, kind):
    """The class of ``module``'s public names that the library's table records as ``family``'s ``kind``."""
    found = [obj for name in module.__all__
             if (member := _families.lookup(obj := getattr(module, name))) is not None
             and member.family is family and member.kind == kind]
    if len(found) != 1:
        raise LookupError(f"{module.__name__} publishes {len(found)} {kind} members of {family}")
    return found[0]
