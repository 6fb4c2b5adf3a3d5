"""One record per public layer class: how to build it, feed it and check it.

The generic tests (``tests/nn/test_layer_table_generic.py`` and others)
run over :data:`LAYERS`, in the manner of torch's ``ModuleInfo``: a
property is tested on every layer, not on two named classes.

Interface (kept stable; other test modules build on it):

``LAYERS``
    A list of :class:`LayerInfo`, one per public ``torch.nn.Module``
    subclass of ``cplxmodule.nn`` (with ``cplxmodule.nn.losses``),
    ``cplxmodule.nn.masked``, ``cplxmodule.nn.relevance``,
    ``cplxmodule.nn.relevance.extensions`` and the reference models of
    ``cplxmodule.models``; :data:`NOT_LAYERS` names the
    public classes that are not layers of their own, with the reason.
``LayerInfo.make(dtype=torch.float32, device="cpu", sample=0, seed=0)``
    A new module of constructor sample ``sample`` (index into
    ``LayerInfo.samples``), its parameters drawn from ``seed`` (the same
    seed gives the same module), then set up (a masked layer gets a mask,
    a gated layer gates that are not all open) and cast to ``dtype``.
``LayerInfo.inputs(batch=2, dtype=torch.float32, device="cpu", generator=None, sample=0,``
``unbatched=False)``
    The forward's positional arguments for sample ``sample``: a
    :class:`~cplxmodule.Cplx` (or a real tensor for the real twins of
    torch's layers) of real dtype ``dtype``; ``batch`` examples, or none
    with ``unbatched=True`` (only where ``LayerInfo.unbatched``: torch's
    twin takes an unbatched input). ``generator`` defaults to one seeded
    with 0.
``LayerInfo.id``
    The test id: the class name.
``LayerInfo.kind``
    ``cplxmodule.nn._kinds.kinds_of(cls)``: what the layer does to
    channels, as the class declares it.
``LayerInfo.reference``
    ``None`` (then ``LayerInfo.no_reference`` says why) or a callable
    ``reference(module, *inputs)`` computing the module's eval-mode output
    independently: in torch's native complex dtype (a complex tensor where
    the module returns a ``Cplx``), with torch's real functional ops or
    numpy; never with ``cplxmodule.cplx``.
``LayerInfo.train_reference``
    ``None`` (then ``LayerInfo.no_train_reference`` says why) or a callable
    ``train_reference(module, *inputs) -> (output, state)``: the train-mode
    output of ``module`` (left as it is: the module before the step) and
    ``{buffer name: value}``, the buffers the step changes (running mean and
    covariance, ``num_batches_tracked``) as they must be after it; every
    other buffer must be unchanged. Independent of the code under test, as
    ``reference``. A row that is not ``stochastic`` and has a ``reference``
    gets, unless it names its own, the eval-mode reference and no change of
    state: it computes in training mode as in eval mode.
``LayerInfo.train_invariant``
    ``None`` or, for a ``stochastic`` layer, a callable
    ``train_invariant(module, output, *inputs)`` that asserts what every
    train-mode draw must satisfy (dropout: each element, or each channel,
    zero in both parts or scaled by ``1 / (1 - p)``).
``LayerInfo.half_ulps``
    The half-precision output (``test_half_reference``, float16 and
    bfloat16) may differ from the float64 reference of the same rounded
    parameters and inputs by this many units of the dtype's machine epsilon
    times the output's largest value: 1.5 by default (a computation of a
    few steps, rounded); 0.6 for the norms, computed in float32 and rounded
    once (half an epsilon), which a reduction in half precision exceeds;
    larger for several rounded half-precision steps: :data:`HALF_ULPS`,
    with the reasons.
``LayerInfo.skips``, ``LayerInfo.xfails``
    ``{test name: reason}``: a generic test named there is skipped, or
    expected to fail (strictly), for this layer. :data:`TESTS` lists the
    names; :data:`EXPORTS` those of the exporters
    (``tests/integration/test_layer_table_export.py``).
``LayerInfo.stochastic``
    Whether the train-mode forward draws random numbers (Bayesian layers,
    dropout): such layers are compared in eval mode or under a fixed seed.
``LayerInfo.complex_input``
    Whether the forward takes complex inputs (``False`` for the real
    twins of torch's layers).
``LayerInfo.bad_inputs(batch=2, dtype=torch.float32, generator=None, sample=0)``
    Inputs of a shape the layer must refuse, or ``None`` (then
    ``test_bad_shape`` is skipped with the reason in ``skips``).
``LayerInfo.batch_dim``
    The batch dimension of the inputs (1 for a sequence-first recurrent
    layer).

What the tests found is kept as data at the end of this module:
:data:`HALF_ULPS` (per layer id: the half-precision tolerance, with the
reason),
:data:`KNOWN` (per class: skips and strict expected failures, each with its
reason) and :data:`BAD_SHAPES` (per class: inputs of a wrong shape; the
family members build theirs from their constructor arguments).
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import numpy as np
import pytest
import scipy.signal
import torch
import torch.nn.functional as F

import cplxmodule.nn as cnn
import cplxmodule.nn.masked as masked
import cplxmodule.nn.relevance as relevance
import cplxmodule.nn.relevance.extensions as extensions
import cplxmodule.models as models
from cplxmodule import Cplx
from cplxmodule.nn import _families
from cplxmodule.nn._kinds import kinds_of
from tests import helpers

__all__ = ["LAYERS", "NOT_LAYERS", "TESTS", "EXPORTS", "KNOWN", "BAD_SHAPES", "HALF_ULPS", "LayerInfo", "Sample",
           "PACKAGES", "native", "params", "map_parts"]

#: the packages whose public layer classes the table covers
PACKAGES = (cnn, cnn.losses, masked, relevance, extensions, models)

#: the generic tests that ``skips`` and ``xfails`` may name
TESTS = (
    "test_reference",
    "test_gradcheck",
    "test_gradcheck_train",
    "test_unbatched",
    "test_native_complex",
    "test_duck_complex",
    "test_to_float64",
    "test_meta_to_empty",
    "test_deepcopy",
    "test_pickle",
    "test_state_dict",
    "test_hooks",
    "test_bad_input",
    "test_bad_dtype",
    "test_bad_shape",
    "test_eval_deterministic",
    # tests/nn/test_layer_table_modes.py
    "test_train_reference",
    "test_train_invariant",
    "test_half_reference",
    "test_reference_boundaries",
    "test_options_kept",
) + (EXPORTS := (
    # tests/integration/test_layer_table_export.py: the layer between real
    # tensors, exported with a dynamic batch
    "test_torch_export",
    "test_onnx_torchscript",
    "test_onnx_dynamo",
))


@dataclass(frozen=True)
class Sample:
    """Constructor arguments of one sample of a layer; ``note`` goes into the test id."""

    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def arg(self, index, name, default=None):
        """The argument passed at position ``index`` or as ``name``."""
        if index < len(self.args):
            return self.args[index]
        return self.kwargs.get(name, default)


def _cplx(g, dtype, *shape):
    return Cplx(torch.randn(shape, generator=g, dtype=dtype),
                torch.randn(shape, generator=g, dtype=dtype))


def _real(g, dtype, *shape):
    return torch.randn(shape, generator=g, dtype=dtype)


def native(value):
    """A :class:`Cplx` (or a complex parameter read as one) as torch's complex dtype; else as is."""
    if isinstance(value, Cplx):
        return torch.complex(value.real, value.imag)
    return value


def _as_in_eval(reference):
    """The train reference of a layer that computes in training mode as in eval mode."""
    def train_reference(module, *inputs):
        return reference(module, *inputs), {}
    return train_reference


@dataclass
class LayerInfo:
    """What the generic tests need to know of one public layer class (see the module docstring)."""

    cls: type
    samples: tuple
    #: ``builder(sample, batch or None, dtype, generator) -> tuple``: the forward's arguments
    builder: Callable
    reference: Optional[Callable] = None
    no_reference: str = ""
    #: ``setup(module, generator)``, in place after construction (mask, gates)
    setup: Optional[Callable] = None
    unbatched: bool = False
    stochastic: bool = False
    complex_input: bool = True
    skips: Mapping[str, str] = field(default_factory=dict)
    xfails: Mapping[str, str] = field(default_factory=dict)
    #: tolerance of the comparison with the reference in float64
    atol: float = 1e-10
    #: the batch dimension of the inputs (1 for a sequence-first recurrent layer)
    batch_dim: int = 0
    #: a builder (as ``builder``) of inputs of a shape the layer refuses, or None
    bad_shape: Optional[Callable] = None
    #: ``train_reference(module, *inputs) -> (output, {buffer: value after})``, or None
    train_reference: Optional[Callable] = None
    no_train_reference: str = ""
    #: ``train_invariant(module, output, *inputs)``: asserts what any train-mode draw satisfies
    train_invariant: Optional[Callable] = None
    #: the half-precision tolerance, in machine epsilons of the output's scale (HALF_ULPS)
    half_ulps: float = 1.5

    def __post_init__(self):
        assert (self.reference is None) == bool(self.no_reference), self.id
        if self.train_reference is None and not self.no_train_reference:
            if self.stochastic:
                self.no_train_reference = ("draws random numbers in training mode: compared in "
                                           "eval mode, and by its train_invariant if it has one")
            elif self.reference is None:
                self.no_train_reference = self.no_reference
            else:
                self.train_reference = _as_in_eval(self.reference)
        assert (self.train_reference is None) == bool(self.no_train_reference), self.id
        unknown = (set(self.skips) | set(self.xfails)) - set(TESTS)
        assert not unknown, f"{self.id}: unknown tests {unknown}"
        # the tests that do not apply, with the reason
        skips = {}
        if self.reference is None:
            skips["test_reference"] = self.no_reference
        if not self.unbatched:
            skips["test_unbatched"] = "takes batched inputs only, as its torch twin"
        if not self.complex_input:
            skips["test_native_complex"] = skips["test_duck_complex"] = "takes real inputs"
        if not self.stochastic:
            skips["test_eval_deterministic"] = "deterministic in training mode too"
            skips["test_gradcheck_train"] = "computes in training mode as in eval mode"
        if self.train_reference is None:
            skips["test_train_reference"] = self.no_train_reference
        if self.train_invariant is None:
            skips["test_train_invariant"] = ("no train-mode draws to check" if not self.stochastic
                                             else "no invariant of its train-mode draws given")
        if self.reference is None:
            skips["test_half_reference"] = skips["test_reference_boundaries"] = self.no_reference
        if not self.complex_input:
            skips["test_reference_boundaries"] = "takes real inputs: no complex special points"
        if not any(s.args or s.kwargs for s in self.samples):
            skips["test_options_kept"] = "built without arguments"
        self._not_applicable = skips
        self.skips = {**skips, **self.skips}

    @property
    def id(self):
        return self.cls.__name__

    @property
    def kind(self):
        return kinds_of(self.cls)

    def make(self, dtype=torch.float32, device="cpu", sample=0, seed=0):
        s = self.samples[sample]
        with torch.random.fork_rng(devices=[]):
            # the CPU generator alone: torch.manual_seed also queues a CUDA seed, slowly
            torch.default_generator.manual_seed(seed)
            with torch.device(device):
                module = _construct(self.cls, s)
        if self.setup is not None:
            self.setup(module, torch.Generator().manual_seed(seed + 1))
        return module.to(dtype)

    def inputs(self, batch=2, dtype=torch.float32, device="cpu", generator=None, sample=0,
               unbatched=False):
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        args = self.builder(self.samples[sample], None if unbatched else batch, dtype, generator)
        return tuple(a.to(device) if isinstance(a, (Cplx, torch.Tensor)) else a for a in args)

    def bad_inputs(self, batch=2, dtype=torch.float32, generator=None, sample=0):
        """Inputs of a shape the layer refuses (``bad_shape``), else ``None``."""
        if self.bad_shape is None:
            return None
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        return self.bad_shape(self.samples[sample], batch, dtype, generator)


# --- the layer families: dense, masked, Bayesian and structured twins ----------------------------
# spatial size per number of kernel dimensions: small, and odd and even
_LENGTH = {1: 6, 2: 5, 3: 4}

_FAMILY_SAMPLES = {
    "Linear": (Sample((3, 4)), Sample((3, 4), {"bias": False}, "nobias")),
    "Bilinear": (Sample((3, 2, 4)), Sample((3, 2, 4), {"bias": False}, "nobias")),
    "Conv": (
        Sample((4, 2, 3)),
        Sample((4, 2, 3), {"padding": 1, "padding_mode": "circular", "bias": False}, "circular"),
        Sample((4, 2, 3), {"padding": 1, "padding_mode": "reflect", "stride": 2}, "reflect"),
        Sample((4, 2, 2), {"groups": 2, "dilation": 2, "padding": "same"}, "groups"),
    ),
    "ConvTranspose": (
        Sample((4, 2, 3)),
        Sample((4, 2, 3), {"stride": 2, "output_padding": 1, "groups": 2, "bias": False},
               "groups"),
    ),
}


def _family_stem(family):
    """The family's name without its dimensions (``"Conv"``), which keys its samples and reference op."""
    stem = family.name.rstrip("123d")
    if stem not in _FAMILY_SAMPLES:
        raise KeyError(f"the layer table has no samples and reference op of the family {family.name}:"
                       f" add them to _FAMILY_SAMPLES and _family_reference")
    return stem


def _family_samples(member, complex_):
    family = member.family
    stem = _family_stem(family)
    samples = _FAMILY_SAMPLES[stem]
    if stem == "Bilinear" and complex_:
        samples += (Sample((3, 2, 4), {"conjugate": False}, "noconj"),)
    if stem == "Conv" and family.kernel_dims == 3:
        # a 3d reflection pad of complex tensors is slow and adds nothing
        samples = samples[:2] + samples[3:]
    if member.kind in ("channel_vd", "channel_ard", "channel_l0"):
        samples += tuple(
            Sample(s.args, {**s.kwargs, "gated": "input"}, (s.note + "-input").lstrip("-"))
            for s in samples[:2]
        )
    if member.kind == "l0":
        samples += (Sample((3, 4), {"group": "input"}, "group-input"),)
    return samples


def _family_builder(member, complex_):
    draw = _cplx if complex_ else _real
    stem = _family_stem(member.family)
    dims = member.family.kernel_dims

    def build(s, n, dtype, g):
        lead = () if n is None else (n,)
        if stem == "Linear":
            return (draw(g, dtype, *lead, s.arg(0, "in_features")),)
        if stem == "Bilinear":
            return (draw(g, dtype, *lead, s.arg(0, "in1_features")),
                    draw(g, dtype, *lead, s.arg(1, "in2_features")))
        return (draw(g, dtype, *lead, s.arg(0, "in_channels"), *[_LENGTH[dims]] * dims),)

    return build


def _channel_gate(module, shape, axis):
    """The eval-mode hard-concrete gates of ``module.log_alpha`` along ``axis`` of ``shape``."""
    gate = torch.clamp(torch.sigmoid(-module.log_alpha) * (module.zeta - module.gamma)
                       + module.gamma, 0, 1)
    view = [1] * len(shape)
    view[axis] = -1
    return gate.reshape(view)


def _family_reference(member):
    """The eval-mode output, by torch's functional op on native (complex) tensors."""
    family, kind = member.family, member.kind
    stem = _family_stem(family)
    dims = family.kernel_dims

    def op(module, x, weight):
        if stem == "Linear":
            return x @ weight.transpose(0, 1)
        if stem == "Bilinear":
            if getattr(module, "conjugate", False):
                x = x[0].conj(), x[1]
            return torch.einsum("...i,kij,...j->...k", x[0], weight, x[1])
        if stem == "Conv":
            conv = getattr(F, f"conv{dims}d")
            padding = module.padding
            if module.padding_mode != "zeros":
                pad = tuple(p for p in reversed(module.padding) for _ in range(2))
                x = F.pad(x, pad, mode=module.padding_mode)
                padding = 0
            return conv(x, weight, None, module.stride, padding, module.dilation, module.groups)
        conv = getattr(F, f"conv_transpose{dims}d")
        return conv(x, weight, None, module.stride, module.padding, module.output_padding,
                    module.groups, module.dilation)

    def reference(module, *inputs):
        x = tuple(native(t) for t in inputs)
        x = x[0] if len(x) == 1 else x
        weight = native(module.weight).detach()
        bias = None if module.bias is None else native(module.bias).detach()
        if kind == "masked":
            weight = weight * module.mask
        if kind == "l0":
            weight = weight * torch.clamp(
                torch.sigmoid(-module.log_alpha) * (module.zeta - module.gamma) + module.gamma,
                0, 1)
        gated = getattr(module, "gated", None)
        if kind == "channel_l0" and gated == "input":
            first = x[0] if stem == "Bilinear" else x
            gate = _channel_gate(module, first.shape, -1 if stem == "Bilinear" else -1 - dims)
            x = (first * gate, x[1]) if stem == "Bilinear" else x * gate
        out = op(module, x, weight)
        if kind == "channel_l0" and gated == "output":
            out = out * _channel_gate(module, out.shape, -1 if stem in ("Linear", "Bilinear")
                                      else -1 - dims)
        if bias is not None:
            out = out + bias.reshape(-1, *[1] * (dims if stem.startswith("Conv") else 0))
        return out

    return reference


def _family_setup(member):
    kind = member.kind
    if kind == "masked":
        def setup(module, g):
            module.mask = torch.rand(module.weight.shape, generator=g) > 0.3
        return setup
    if kind in ("l0", "channel_l0"):
        def setup(module, g):
            with torch.no_grad():
                # gates open, partly open and closed
                module.log_alpha.copy_(3 * torch.randn(module.log_alpha.shape, generator=g))
        return setup
    return None


def _family_bad_shape(member, complex_):
    """Inputs with one feature or channel too many (the first input of a bilinear layer)."""
    build = _family_builder(member, complex_)

    def bad(s, n, dtype, g):
        first = 0 if s.args else None
        args = (s.args[0] + 1, *s.args[1:]) if first == 0 else s.args
        return build(Sample(args, s.kwargs), n, dtype, g)
    return bad


def _family_entry(cls, member=None, **extra):
    member = member or _families.lookup(cls)
    complex_ = member.family.dense.__name__.startswith("Cplx")
    skips = dict(extra.pop("skips", {}))
    if not complex_:
        for test in ("test_bad_input", "test_bad_dtype", "test_bad_shape"):
            skips.setdefault(test, "the real twin of a torch layer: torch's input checks")
    return LayerInfo(
        cls,
        samples=_family_samples(member, complex_),
        builder=_family_builder(member, complex_),
        reference=_family_reference(member),
        setup=_family_setup(member),
        # torch's Linear takes any leading dimensions, its convolutions an
        # unbatched input; its Bilinear too
        unbatched=True,
        stochastic=member.kind not in ("dense", "masked", "quantized"),
        complex_input=complex_,
        bad_shape=_family_bad_shape(member, complex_),
        skips=skips,
        **extra,
    )


def _public_classes():
    seen = {}
    for package in PACKAGES:
        for name in package.__all__:
            obj = getattr(package, name)
            if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
                seen.setdefault(obj, name)
    return seen


#: public classes that are not layers of their own, with the reason
NOT_LAYERS = {
    cnn.CplxToCplx: "abstract base of the complex-to-complex layers",
    cnn.BaseRealToCplx: "abstract base of the real-to-complex layers",
    cnn.BaseCplxToReal: "abstract base of the complex-to-real layers",
    cnn.CplxConvNd: "dimension-generic base of CplxConv1d/2d/3d",
    cnn.CplxConvTransposeNd: "dimension-generic base of CplxConvTranspose1d/2d/3d",
    cnn.CplxMaxPoolNd: "dimension-generic base of CplxMaxPool1d/2d/3d",
    masked.BaseMasked: "abstract masking base; each masked layer has a row",
    masked.BaseQuantized: "abstract quantizing base; each family's quantized twin has a row",
    relevance.BaseARD: "abstract base of the layers with a relevance",
    cnn.CplxParameter: "a complex parameter (a module holding its two parts), no forward",
    masked.CompactRecurrent: "built only by compact() from a masked recurrent layer and its "
                             "live units; checked against that layer in "
                             "tests/nn/masked/test_compact_rnn_units.py",
}

_FAMILY_CLASSES = [cls for cls in _public_classes()
                   if cls not in NOT_LAYERS and _families.lookup(cls) is not None]


# --- builders and references of the other layers ------------------------------------------------
def _inputs(*specs, sequence_first=False):
    """A builder of inputs ``(kind, shape)``: kind ``"c"`` a Cplx, ``"r"`` a real tensor.

    The batch dimension goes first, or second with ``sequence_first`` (a
    layer that takes ``(L, N, *)`` unless built with ``batch_first``);
    ``shape`` may be a callable of the sample.
    """
    def build(s, n, dtype, g):
        shapes = [(kind, shape(s) if callable(shape) else shape) for kind, shape in specs]
        second = sequence_first and not s.kwargs.get("batch_first")
        out = []
        for kind, shape in shapes:
            if n is not None:
                shape = (shape[0], n, *shape[1:]) if second else (n, *shape)
            out.append((_cplx if kind == "c" else _real)(g, dtype, *shape))
        return tuple(out)
    return build


def _c(*shape):
    return _inputs(("c", shape))


def _r(*shape):
    return _inputs(("r", shape))


def _sequence(features, length=5):
    """Inputs of a recurrent layer: ``(L, N, features)``, batch first ``(N, L, features)``."""
    def build(s, n, dtype, g):
        if n is None:
            return (_cplx(g, dtype, length, features),)
        if s.kwargs.get("batch_first"):
            return (_cplx(g, dtype, n, length, features),)
        return (_cplx(g, dtype, length, n, features),)
    return build


def _unary(f):
    """The reference of a layer without state: ``f`` of its native input."""
    return lambda module, x: f(native(x))


def _polar(f):
    """``f(|z|) z / |z|``: a function of the modulus, the phase kept."""
    def apply(z):
        r = z.abs()
        return torch.where(r > 0, f(r) / r, 0) * z
    return apply


def _phasor(z):
    """``z / |z|``, and 1 (phase zero) at zero, the convention of the layers that keep a phase
    on a modulus that need not vanish at zero (phase softmax, magnitude batch norm)."""
    r = z.abs()
    return torch.where(r > 0, z / torch.where(r > 0, r, 1), 1)


def _modrelu(z, b):
    r = z.abs()
    return torch.where(r > 0, torch.relu(1 - b / r), 0) * z


def _value_of(module, name):
    """A modReLU's, zAbsReLU's or leaky zReLU's value, against an ``(N, C, L)`` input if per
    channel."""
    value = getattr(module, name)
    if not isinstance(value, torch.Tensor):
        return value
    per_channel = getattr(module, "num_parameters", 1) > 1
    return value.detach()[:, None] if per_channel else value.detach()


#: samples of a zAbsReLU and a leaky zReLU: the learnable value (scalar, then per
#: channel of the inputs' 3) and the fixed one
_VALUE_SAMPLES = (
    Sample((), {"learnable": True}, "learnable"),
    Sample((), note="fixed"),
    Sample((), {"learnable": True, "num_parameters": 3}, "per-channel"),
    # a value of its own, not the default (a threshold of 0.9 keeps about two thirds of
    # the inputs' moduli; a slope past 1 amplifies)
    Sample((0.9,), note="value"),
    Sample((1.5,), note="value-past-1"),
)


def _split(f):
    return lambda z: torch.complex(f(z.real), f(z.imag))


def _first_quadrant(z):
    return (z.real >= 0) & (z.imag >= 0)


def _whiten(z, mean, vrr, vri, vii, eps):
    """``(z - mean)`` whitened by the inverse square root of the 2x2 covariance (+ eps I)."""
    c = z - mean
    vrr, vii = vrr + eps, vii + eps
    det = (vrr * vii - vri * vri).sqrt()
    trace = (vrr + vii + 2 * det).sqrt()
    re = ((vii + det) * c.real - vri * c.imag) / (det * trace)
    im = ((vrr + det) * c.imag - vri * c.real) / (det * trace)
    return re, im


def _affine2x2(module, re, im, shape):
    if getattr(module, "weight", None) is None:
        return torch.complex(re, im)
    w = module.weight.detach().reshape(2, 2, *shape)
    bias = getattr(module, "bias", None)
    b = (0, 0) if bias is None else bias.detach().reshape(2, *shape)
    return torch.complex(w[0, 0] * re + w[0, 1] * im + b[0], w[1, 0] * re + w[1, 1] * im + b[1])


def _batch_norm_reference(module, x):
    """Eval mode: whitening by the running mean and covariance, then the 2x2 affine map; by the
    batch's statistics without running ones (``track_running_stats=False``), as torch's."""
    if module.running_mean is None:
        return _batch_norm_train(module, x)[0]
    z = native(x)
    shape = (-1,) + (1,) * (z.dim() - 2)
    mean = torch.complex(module.running_mean[0], module.running_mean[1]).reshape(shape)
    v = module.running_var
    re, im = _whiten(z, mean, v[0, 0].reshape(shape), v[0, 1].reshape(shape),
                     v[1, 1].reshape(shape), module.eps)
    return _affine2x2(module, re, im, shape)


def _momentum(module, counts=True):
    """The weight of this batch in the running statistics: ``momentum``, or with ``None`` the
    cumulative average's ``1 / (batches + 1)`` (a batch norm; an instance norm keeps them)."""
    if module.momentum is not None:
        return module.momentum
    return 1.0 / (module.num_batches_tracked.item() + 1) if counts else 0.0


def _blend(running, batch, momentum):
    return (1 - momentum) * running + momentum * batch


def _covariance(c, dims):
    """The biased 2x2 covariance of the centred complex ``c`` over ``dims``, kept: vrr, vri, vii."""
    return ((c.real ** 2).mean(dims, keepdim=True), (c.real * c.imag).mean(dims, keepdim=True),
            (c.imag ** 2).mean(dims, keepdim=True))


def _pair_norm_train(module, x, per_instance):
    """Train mode of a whitening batch (or instance) norm: the output by the batch's (each
    instance's) statistics, and the running mean and covariance blended with the batch's (the
    average of the instances'), the covariance unbiased by n / (n - 1), n the values per channel
    (per instance); a batch norm counts the batch."""
    z = native(x)
    dims = tuple(range(2, z.dim())) if per_instance else (0, *range(2, z.dim()))
    n = int(np.prod([z.shape[d] for d in dims]))
    mean = z.mean(dims, keepdim=True)
    vrr, vri, vii = _covariance(z - mean, dims)
    re, im = _whiten(z, mean, vrr, vri, vii, module.eps)
    shape = (-1,) + (1,) * (z.dim() - 2)
    out = _affine2x2(module, re, im, shape)
    if module.running_mean is None:
        return out, {}
    m = _momentum(module, counts=not per_instance)
    channels = z.shape[1]
    batch_mean = torch.stack([mean.real, mean.imag]).reshape(2, -1, channels).mean(1)
    cov = [t.reshape(-1, channels).mean(0) * n / (n - 1) for t in (vrr, vri, vii)]
    batch_cov = torch.stack([torch.stack(cov[:2]), torch.stack(cov[1:])])
    state = {"running_mean": _blend(module.running_mean, batch_mean, m),
             "running_var": _blend(module.running_var, batch_cov, m)}
    if not per_instance:
        state["num_batches_tracked"] = module.num_batches_tracked + 1
    return out, state


def _batch_norm_train(module, x):
    return _pair_norm_train(module, x, per_instance=False)


def _scalar_batch_norm(x, norm, training, prefix=""):
    """torch's real batch norm of ``x`` (N, C, *) with the state of ``norm`` (a torch
    BatchNorm, or a magnitude norm), written out: the output and the updated state."""
    dims = (0, *range(2, x.dim()))
    shape = (-1,) + (1,) * (x.dim() - 2)
    if training or norm.running_mean is None:
        mean, var = x.mean(dims), x.var(dims, unbiased=False)
    else:
        mean, var = norm.running_mean, norm.running_var
    out = (x - mean.reshape(shape)) / (var.reshape(shape) + norm.eps).sqrt()
    if norm.weight is not None:
        out = out * norm.weight.detach().reshape(shape) + norm.bias.detach().reshape(shape)
    state = {}
    if training and norm.running_mean is not None:
        n = x.numel() // x.shape[1]
        m = _momentum(norm)
        state = {prefix + "running_mean": _blend(norm.running_mean, mean, m),
                 prefix + "running_var": _blend(norm.running_var, var * n / (n - 1), m),
                 prefix + "num_batches_tracked": norm.num_batches_tracked + 1}
    return out, state


def _naive_batch_norm_train(module, x):
    """Train mode: each part by its batch statistics, each part's state updated."""
    z = native(x)
    (re, a), (im, b) = (_scalar_batch_norm(p, m, True, name + ".")
                        for p, m, name in ((z.real, module.real, "real"),
                                           (z.imag, module.imag, "imag")))
    return torch.complex(re, im), {**a, **b}


def _magnitude_batch_norm_train(module, x):
    """Train mode: the modulus by its batch statistics, times the unit phasor."""
    z = native(x)
    r = z.abs()
    normed, state = _scalar_batch_norm(r, module, True)
    return normed * _phasor(z), state


def _statistics_norm(z, dims, eps):
    mean = z.mean(dims, keepdim=True)
    c = z - mean
    vrr = (c.real ** 2).mean(dims, keepdim=True)
    vii = (c.imag ** 2).mean(dims, keepdim=True)
    vri = (c.real * c.imag).mean(dims, keepdim=True)
    return _whiten(z, mean, vrr, vri, vii, eps)


def _layer_norm_reference(module, x):
    z = native(x)
    shape = tuple(module.normalized_shape)
    dims = tuple(range(-len(shape), 0))
    re, im = _statistics_norm(z, dims, module.eps)
    return _affine2x2(module, re, im, shape)


def _group_norm_reference(module, x):
    z = native(x)
    n, c = z.shape[:2]
    grouped = z.reshape(n, module.num_groups, -1)
    re, im = _statistics_norm(grouped, (-1,), module.eps)
    re, im = re.reshape(z.shape), im.reshape(z.shape)
    return _affine2x2(module, re, im, (-1,) + (1,) * (z.dim() - 2))


def _instance_norm_reference(dims):
    """Eval mode: each instance by its own statistics, or by the running ones if tracked."""
    def reference(module, x):
        z = native(x)
        if module.track_running_stats:
            if z.dim() == dims + 1:
                return _batch_norm_reference(module, z[None])[0]
            return _batch_norm_reference(module, z)
        re, im = _statistics_norm(z, tuple(range(-dims, 0)), module.eps)
        return _affine2x2(module, re, im, (-1,) + (1,) * dims)
    return reference


def _instance_norm_train(dims):
    """Train mode: each instance by its own statistics; the running ones, if tracked, blended
    with their batch averages (never counted, as torch's instance norms)."""
    def reference(module, x):
        z = native(x)
        if z.dim() == dims + 1:
            out, state = _pair_norm_train(module, z[None], per_instance=True)
            return out[0], state
        return _pair_norm_train(module, z, per_instance=True)
    return reference


def _naive_batch_norm_reference(module, x):
    """Eval mode: torch's real functional batch norm of each part by its running statistics;
    by the batch's without them."""
    if module.real.running_mean is None:
        return _naive_batch_norm_train(module, x)[0]
    z = native(x)
    parts = [F.batch_norm(p, m.running_mean, m.running_var, m.weight, m.bias, False, 0.0, m.eps)
             for p, m in ((z.real, module.real), (z.imag, module.imag))]
    return torch.complex(*parts)


def _magnitude_batch_norm_reference(module, x):
    if module.running_mean is None:
        return _magnitude_batch_norm_train(module, x)[0]
    z = native(x)
    r = z.abs()
    normed = F.batch_norm(r, module.running_mean, module.running_var, module.weight,
                          module.bias, False, 0.0, module.eps)
    return normed * _phasor(z)


def _rms_norm_reference(module, x):
    z = native(x)
    dims = tuple(range(-len(module.normalized_shape), 0))
    eps = torch.finfo(z.real.dtype).eps if module.eps is None else module.eps
    out = z / ((z.abs() ** 2).mean(dims, keepdim=True) + eps).sqrt()
    return out if module.weight is None else out * module.weight.detach()


#: a batch norm's choices: the affine map or none, the cumulative average (``momentum=None``)
#: and another ``eps``, no running statistics (the batch's in eval mode too)
_BATCH_NORM_SAMPLES = (
    (3,),
    Sample((3,), {"affine": False}, "noaffine"),
    Sample((3,), {"momentum": None, "eps": 0.1}, "cumulative-eps"),
    Sample((3,), {"track_running_stats": False, "momentum": 0.3}, "untracked"),
)
#: the same for the norms of real values (the parts, the modulus)
_SCALAR_NORM_SAMPLES = (
    (3,),
    Sample((3,), {"affine": False, "momentum": None, "eps": 0.1}, "noaffine-cumulative-eps"),
    Sample((3,), {"track_running_stats": False}, "untracked"),
)


def _norm_setup(module, g):
    """Random affine maps and running statistics (a valid covariance), so that they count."""
    with torch.no_grad():
        for name, value in module.named_parameters():
            value.copy_(torch.randn(value.shape, generator=g))
        for name, value in module.named_buffers():
            if name.endswith("running_var") and value is not None and value.dim() == 3:
                a = torch.randn(2, 2, value.shape[-1], generator=g)
                value.copy_(torch.einsum("ikc,jkc->ijc", a, a) + torch.eye(2)[..., None])
            elif name.endswith("running_var") and value is not None:
                value.copy_(torch.rand(value.shape, generator=g) + 0.5)
            elif name.endswith("running_mean") and value is not None:
                value.copy_(torch.randn(value.shape, generator=g))
            elif name.endswith("num_batches_tracked") and value is not None:
                # batches seen before: the cumulative average (momentum=None) weighs 1 / 4
                value.fill_(3)


def _parameters_setup(module, g):
    with torch.no_grad():
        for value in module.parameters():
            value.copy_(torch.rand(value.shape, generator=g))


def _dropout_invariant(channel):
    """A train-mode dropout: each element (each channel of each sample, ``channel``) zero in both
    parts, or the input scaled by ``1 / (1 - p)``; some dropped, some kept."""
    def check(module, output, x):
        z, out = native(x), native(output)
        kept = out != 0
        scaled = z / (1 - module.p)
        torch.testing.assert_close(torch.where(kept, out, 0), torch.where(kept, scaled, 0),
                                   atol=1e-12, rtol=1e-12)
        assert kept.any() and not kept.all(), "all kept or all dropped"
        per_channel = kept.flatten(2)
        uniform = (per_channel == per_channel[..., :1]).all(-1)
        if channel:
            assert uniform.all(), "a channel partly dropped"
        else:
            assert not uniform.all(), "whole channels dropped"
    return check


def _max_pool_reference(dims, adaptive=False):
    def reference(module, x):
        z = native(x)
        r = z.abs()
        if adaptive:
            pool = getattr(F, f"adaptive_max_pool{dims}d")
            _, index = pool(r, module.output_size, return_indices=True)
        else:
            pool = getattr(F, f"max_pool{dims}d")
            _, index = pool(r, module.kernel_size, module.stride, module.padding,
                            module.dilation, module.ceil_mode, return_indices=True)
        flat = z.flatten(-dims)
        out = flat.gather(-1, index.flatten(-dims)).reshape(index.shape)
        return (out, index) if getattr(module, "return_indices", False) else out
    return reference


def _split_module_reference(make_real):
    """Torch's real layer (built from the module by ``make_real``) on each part."""
    def reference(module, x):
        z = native(x)
        real = make_real(module)
        return torch.complex(real(z.real), real(z.imag))
    return reference


def _rnn_reference(module, x, hx=None):
    z = native(x)
    unbatched = z.dim() == 2
    if unbatched:
        z = z.unsqueeze(1)
    elif module.batch_first:
        z = z.transpose(0, 1)
    out, h, c = helpers.native_rnn(module, z)
    if unbatched:
        out, h, c = out.squeeze(1), h.squeeze(1), c.squeeze(1)
    elif module.batch_first:
        out = out.transpose(0, 1)
    return out, ((h, c) if module.mode == "LSTM" else h)


def _unit_l0_reference(module, x, hx=None):
    """The plain layer's reference with each unit's rows and biases times its eval-mode gate."""
    from types import SimpleNamespace
    gate = torch.clamp(torch.sigmoid(-module.log_alpha.detach()) * (module.zeta - module.gamma)
                       + module.gamma, 0, 1)
    folded = SimpleNamespace(**{name: getattr(module, name) for name in (
        "mode", "bidirectional", "num_layers", "hidden_size", "proj_size", "batch_first")})
    suffixes = [f"_l{k}{d}" for k in range(module.num_layers)
                for d in (("", "_reverse") if module.bidirectional else ("",))]
    for suffix, units in zip(suffixes, gate):
        rows = units.repeat(module.ih_l0.out_features // module.hidden_size)
        for name in ("ih", "hh"):
            projection = getattr(module, name + suffix)
            bias = None if projection.bias is None else native(projection.bias).detach() * rows
            setattr(folded, name + suffix, SimpleNamespace(
                weight=native(projection.weight).detach() * rows[:, None], bias=bias))
    return _rnn_reference(folded, x, hx)


def _unit_l0_setup(module, g):
    with torch.no_grad():
        # gates open, partly open and closed
        module.log_alpha.copy_(3 * torch.randn(module.log_alpha.shape, generator=g))


def _gate_bias_setup(module, g):
    """Real biases of modulus gates away from their initial zero, so that their sign counts."""
    with torch.no_grad():
        for name, value in module.named_parameters():
            if name.startswith("gate_bias"):
                value.copy_(torch.randn(value.shape, generator=g))


def _cell_reference(module, x, hx=None):
    z = native(x)
    unbatched = z.dim() == 1
    z = z.reshape(-1, z.shape[-1])
    zeros = torch.zeros(z.shape[0], module.hidden_size, dtype=z.dtype)
    h, c = helpers.native_rnn_step(module.mode, z, zeros, zeros, module.ih, module.hh,
                                   helpers.gate_bias(module))
    if unbatched:
        h, c = h[0], (None if c is None else c[0])
    return (h, c) if module.mode == "LSTM" else h


def _mha_reference(module, query, key, value):
    q, k, v = (native(t) for t in (query, key, value))
    if q.dim() == 2:
        out, weights = helpers.native_mha(module, q[None], k[None], v[None])
        return out[0], weights[0]
    if not module.batch_first:
        q, k, v = (t.transpose(0, 1) for t in (q, k, v))
    out, weights = helpers.native_mha(module, q, k, v)
    return (out if module.batch_first else out.transpose(0, 1)), weights


def _loss(f):
    """The reference of a loss with ``reduction``: ``f(x, y)`` elementwise, then reduced."""
    def reference(module, x, y):
        value = f(module, native(x), native(y))
        if module.reduction == "mean":
            return value.mean()
        return value.sum() if module.reduction == "sum" else value
    return reference


def _reductions(*args, **kwargs):
    return tuple(Sample(args, {**kwargs, "reduction": r}, r) for r in ("mean", "sum", "none"))


def _fft(inverse):
    def reference(module, x):
        if isinstance(module.dim, tuple):
            f = torch.fft.ifftn if inverse else torch.fft.fftn
            return f(native(x), s=module.n, dim=module.dim, norm=module.norm)
        f = torch.fft.ifft if inverse else torch.fft.fft
        return f(native(x), n=module.n, dim=module.dim, norm=module.norm)
    return reference


def _si_sdr_reference(module, x, y):
    """``-10 log10(|a y|^2 / |x - a y|^2)`` with ``a = <y, x> / |y|^2``, stabilised by ``eps``."""
    x, y, dim, eps = native(x), native(y), module.dim, module.eps
    if module.zero_mean:
        x, y = x - x.mean(dim, keepdim=True), y - y.mean(dim, keepdim=True)
    alpha = (((y.conj() * x).sum(dim, keepdim=True) + eps)
             / ((y.abs() ** 2).sum(dim, keepdim=True) + eps))
    signal, rest = (alpha * y).abs() ** 2, (x - alpha * y).abs() ** 2
    value = -10 * torch.log10((signal.sum(dim) + eps) / (rest.sum(dim) + eps))
    if module.reduction == "mean":
        return value.mean()
    return value.sum() if module.reduction == "sum" else value


def _dc_inputs(s, n, dtype, g):
    """An image and a k-space ``(N, 1, 4, 5)``, and a mask of columns ``(N, 1, 1, 5)``: of 0 and
    1 in ``dtype`` (as fastMRI's masks), boolean for the sample noted ``bool``, or real in
    [0, 1] for ``realmask``."""
    shape = (1, 4, 5) if n is None else (n, 1, 4, 5)
    mask_shape = (1, 1, 5) if n is None else (n, 1, 1, 5)
    draw = torch.rand(mask_shape, generator=g, dtype=dtype)
    mask = draw if s.note == "realmask" else draw < 0.5
    mask = mask if s.note in ("realmask", "bool") else mask.to(dtype)
    return _cplx(g, dtype, *shape), _cplx(g, dtype, *shape), mask


def _dc_reference(module, x, kspace, mask):
    """The image's k-space (torch.fft, centred by torch's shifts), the measured entries put
    in (or blended by the weight), back to the image."""
    dims, norm = module.dim, module.norm

    def transform(f, z):
        if module.centered:
            return torch.fft.fftshift(f(torch.fft.ifftshift(z, dims), dim=dims, norm=norm), dims)
        return f(z, dim=dims, norm=norm)

    k, measured = transform(torch.fft.fftn, native(x)), native(kspace)
    if module.weight is None and mask.dtype == torch.bool:
        k = torch.where(mask, measured, k)
    else:
        weight = 1.0 if module.weight is None else module.weight.detach()
        k = k - weight * mask * (k - measured)
    return transform(torch.fft.ifftn, k)


def _stft_inputs(s, n, dtype, g):
    """A complex signal of 16 samples, or a real one for the samples noted ``real``."""
    make = _real if s.note.startswith("real") else _cplx
    return (make(g, dtype, *((16,) if n is None else (n, 16))),)


def _stft_reference(m, x):
    return torch.stft(native(x), m.n_fft, m.hop_length, m.win_length, m.window.detach(),
                      m.center, m.pad_mode, m.normalized, onesided=m.onesided,
                      return_complex=True)


def _istft_inputs(s, n, dtype, g):
    """A two-sided spectrum (8 frequencies, 5 frames), or a one-sided one (5) for ``onesided``."""
    frequencies = 5 if s.note == "onesided" else 8
    return (_cplx(g, dtype, *((frequencies, 5) if n is None else (n, frequencies, 5))),)


def _istft_reference(m, x):
    z = native(x)
    two_sided = z.shape[-2] == m.n_fft
    return_complex = two_sided if m.return_complex is None else m.return_complex
    return torch.istft(z, m.n_fft, m.hop_length, m.win_length, m.window.detach(), m.center,
                       m.normalized, onesided=m.onesided, return_complex=return_complex)


def _spectral_pool_reference(dims):
    """The ``output_size`` lowest frequencies of the DFT, by numpy, scaled to keep the mean."""
    def reference(module, x):
        z = native(x).numpy()
        axes = tuple(range(-dims, 0))
        size = module.output_size
        size = (size,) * dims if isinstance(size, int) else tuple(size)
        spectrum = np.fft.fftshift(np.fft.fft(z, axis=axes[0]) if dims == 1
                                   else np.fft.fftn(z, axes=axes), axes=axes)
        for axis, (n_in, n_out) in zip(axes, zip(z.shape[-dims:], size)):
            start = n_in // 2 - n_out // 2
            spectrum = np.take(spectrum, range(start, start + n_out), axis=axis)
        out = np.fft.ifftn(np.fft.ifftshift(spectrum, axes=axes), axes=axes)
        return torch.from_numpy(out * (np.prod(size) / np.prod(z.shape[-dims:])))
    return reference


class _Lazy:
    """A constructor argument built anew for every module (a submodule, a tensor)."""

    def __init__(self, make):
        self.make = make


def _construct(cls, s):
    args = tuple(a.make() if isinstance(a, _Lazy) else a for a in s.args)
    kwargs = {k: v.make() if isinstance(v, _Lazy) else v for k, v in s.kwargs.items()}
    return cls(*args, **kwargs)


def _sinusoid(x, module, offset=0):
    """``exp(i p w_k)`` of position ``p`` (from ``offset`` on) along the sequence dimension,
    ``w_k = base^(-k/d)``."""
    z = native(x)
    axis = 1 if module.batch_first and z.dim() == 3 else 0
    positions = offset + torch.arange(z.shape[axis], dtype=z.real.dtype)
    omega = module.base ** (-torch.arange(z.shape[-1], dtype=z.real.dtype) / z.shape[-1])
    phase = positions[:, None] * omega
    shape = [1] * z.dim()
    shape[axis], shape[-1] = z.shape[axis], z.shape[-1]
    return torch.exp(1j * phase).reshape(shape)


def _positions(s, n, dtype, g):
    """A sequence ``(L, N, E)`` (``(N, L, E)`` batch first), and the forward's ``offset`` 3 for
    the samples noted ``offset``."""
    x = _inputs(("c", (3, 4)), sequence_first=True)(s, n, dtype, g)
    return x + (3,) if s.note.endswith("offset") else x


def _positional_reference(module, x, offset=0):
    e = _sinusoid(x, module, offset)
    return native(x) + e if module.mode == "add" else native(x) * e


def _sparse_weight(complex_):
    g = torch.Generator().manual_seed(0)
    weight = [torch.randn(4, 3, generator=g) for _ in range(2 if complex_ else 1)]
    weight = [w * (torch.rand(4, 3, generator=g) > 0.4) for w in weight]
    return Cplx(*weight) if complex_ else weight[0]


def _dense(module):
    """The dense weight of a CSR layer, rebuilt by torch from its buffers."""
    values = (module.values if hasattr(module, "values")
              else torch.complex(module.values_real, module.values_imag))
    return torch.sparse_csr_tensor(module.crow_indices, module.col_indices, values,
                                   (module.out_features, module.in_features),
                                   check_invariants=True).to_dense()


def _polar_maps_reference(module, x):
    """``f(|z|) exp(i g(arg z))`` by torch.polar, ``g`` the identity if the layer has none."""
    z = native(x)
    phase = z.angle() if module.phase_fn is None else module.phase_fn(z.angle())
    return torch.polar(module.modulus_fn(z.abs()), phase)


def _minmax_reference(module, x):
    z = native(x)
    r = z.abs()
    if module.dim is None:
        low, high = r.min(), r.max()
    else:
        low, high = r.amin(module.dim, keepdim=True), r.amax(module.dim, keepdim=True)
    return torch.polar((r - low) / (high - low), z.angle())


def _eca_reference(module, x):
    """Channel means, a zero-padded correlation across channels (shifted copies), the gate."""
    z = native(x)
    means = z.flatten(2).mean(-1)
    w = native(module.weight).detach()
    k, c = len(w), z.shape[1]
    padded = torch.cat([torch.zeros_like(means[:, :k // 2]), means,
                        torch.zeros_like(means[:, :k // 2])], 1)
    scores = sum(w[j] * padded[:, j:j + c] for j in range(k))
    # the phase gate is zero where the score is (phase_sigmoid's documented value there)
    gate = (torch.where(scores != 0, torch.polar(torch.sigmoid(scores.abs()), scores.angle()), 0)
            if module.gate == "phase" else torch.sigmoid(scores.abs()).to(z.dtype))
    return z * gate.reshape(*gate.shape, *[1] * (z.dim() - 2))


def _sdpa_reference(module, query, key, value):
    q, k, v = (native(t) for t in (query, key, value))
    product = q @ k.conj().transpose(-2, -1)
    scores = product.real if module.score == "real" else product.abs()
    # torch's default scale, and uniform weights of no features
    features = q.shape[-1]
    scale = module.scale or (features ** -0.5 if features else 1.0)
    return helpers.native_softmax(scores * scale).to(v.dtype) @ v


def _analytic_loss_reference(module, x):
    z = native(x)
    transform = np.imag(scipy.signal.hilbert(z.real.numpy(), axis=module.dim))
    value = (z.imag - torch.from_numpy(transform)) ** 2
    if module.reduction == "mean":
        return value.mean()
    return value.sum() if module.reduction == "sum" else value


_NO_REFERENCE = {
    "composite": "a composition of layers that have references of their own here, "
                 "compared with torch's real layers in tests/nn/modules/test_transformer.py",
    "own": "the layer's own parametrisation; no independent implementation to compare with",
    "model": "a composition of table layers (each compared with its reference here); the "
             "model's own structure is tested in tests/models/",
}

_DEFAULTS = dict(unbatched=False)

_BATCHED_MODEL = {"test_unbatched": "a model takes batches of images (N, C, H, W) only"}


def _entry(cls, samples, builder, reference=None, no_reference="", **extra):
    """An entry; ``samples`` one argument tuple or Sample, or a tuple of them."""
    if (isinstance(samples, Sample) or not samples
            or not all(isinstance(s, (Sample, tuple)) for s in samples)):
        samples = (samples,)
    samples = tuple(s if isinstance(s, Sample) else Sample(s) for s in samples)
    return LayerInfo(cls, samples, builder, reference, no_reference, **extra)


_ELEMENTWISE = [
    # class, constructor samples, native reference
    (cnn.CplxIdentity, (), lambda z: z),
    (cnn.CplxReal, (), lambda z: z.real),
    (cnn.CplxImag, (), lambda z: z.imag),
    (cnn.CplxModulus, (), torch.abs),
    (cnn.CplxAngle, (), torch.angle),
    (cnn.CplxZReLU, (), lambda z: torch.where(_first_quadrant(z), z, 0)),
    (cnn.CplxCardioid, (), lambda z: z * (1 + torch.cos(torch.angle(z))) / 2),
    (cnn.CplxSplitReLU, (), _split(torch.relu)),
    (cnn.CplxSplitTanh, (), _split(torch.tanh)),
    (cnn.CplxSplitSigmoid, (), _split(torch.sigmoid)),
    (cnn.CplxTanh, (), torch.tanh),
    (cnn.CplxSigmoid, (), torch.sigmoid),
    (cnn.CplxModTanh, (), _polar(torch.tanh)),
    (cnn.CplxModSquash, (), _polar(lambda r: r * r / (1 + r * r))),
    (cnn.CplxModLog, (), _polar(torch.log1p)),
    (cnn.CplxPhaseSigmoid, (), _polar(torch.sigmoid)),
]


def _quantized_entries():
    """A row for the quantized twin (made by the table of kinds) of each family of the package."""
    families = [_families.lookup(cls).family for cls in _FAMILY_CLASSES
                if _families.lookup(cls).kind == "dense"]
    return [_family_entry(_families.twin_class(family.dense, "quantized"),
                          _families.Member(family, "quantized", True)) for family in families]


LAYERS = [_family_entry(cls) for cls in _FAMILY_CLASSES] + _quantized_entries() + [
    _entry(cls, Sample(args), _c(3, 4), _unary(f), unbatched=True)
    for cls, args, f in _ELEMENTWISE
] + [
    # --- activations with options: each documented choice one sample
    _entry(cnn.CplxModReLU, ((), Sample((None,), note="learnable"),
                             Sample((-0.5,), note="negative"), Sample((0.0,), note="zero")),
           _c(3, 4), lambda m, x: _modrelu(native(x), _value_of(m, "threshold")),
           unbatched=True),
    _entry(cnn.CplxSplitELU, ((), Sample((0.5,), note="alpha")), _c(3, 4),
           lambda m, x: _split(lambda t: F.elu(t, m.alpha))(native(x)), unbatched=True),
    _entry(cnn.CplxSplitGELU, ((), Sample(("tanh",), note="tanh")), _c(3, 4),
           lambda m, x: _split(lambda t: F.gelu(t, approximate=m.approximate))(native(x)),
           unbatched=True),
    # --- casting layers
    _entry(cnn.InterleavedRealToCplx, ((), Sample((), {"copy": True}, "copy")), _r(3, 6),
           _unary(lambda x: torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())),
           unbatched=True, complex_input=False),
    _entry(cnn.ConcatenatedRealToCplx, ((), Sample((), {"copy": True}, "copy")), _r(3, 6),
           _unary(lambda x: torch.complex(*x.chunk(2, -1))), unbatched=True, complex_input=False),
    _entry(cnn.CplxToInterleavedReal, ((), Sample((), {"flatten": False}, "pairs")), _c(3, 4),
           lambda m, x: torch.view_as_real(native(x)).flatten(-2) if m.flatten
           else torch.view_as_real(native(x)), unbatched=True),
    _entry(cnn.CplxToConcatenatedReal, (), _c(3, 4),
           _unary(lambda z: torch.cat([z.real, z.imag], -1)), unbatched=True),
    _entry(cnn.AsTypeCplx, (), _r(3, 4), _unary(lambda x: torch.complex(x, torch.zeros_like(x))),
           unbatched=True, complex_input=False),
    _entry(cnn.TensorToCplx, (), _r(3, 4, 2), _unary(torch.view_as_complex), unbatched=True,
           complex_input=False),
    _entry(cnn.CplxToTensor, (), _c(3, 4), _unary(torch.view_as_real), unbatched=True),
    # --- layers with parameters of their own
    _entry(cnn.CplxPhaseShift, ((), Sample((4,), note="per-feature")), _c(3, 4),
           lambda m, x: native(x) * torch.exp(1j * m.phi.detach()), unbatched=True,
           setup=_parameters_setup),
    _entry(cnn.CplxAdaptiveModReLU, ((), Sample((4,), note="per-feature")), _c(3, 4),
           lambda m, x: _modrelu(native(x), m.threshold.detach()), unbatched=True,
           setup=_parameters_setup),
    _entry(cnn.CplxZAbsReLU, _VALUE_SAMPLES, _c(3, 4),
           lambda m, x: torch.where(native(x).abs() >= _value_of(m, "threshold"), native(x), 0),
           unbatched=True, setup=_parameters_setup),
    _entry(cnn.CplxZLeakyReLU, _VALUE_SAMPLES, _c(3, 4),
           lambda m, x: torch.where(_first_quadrant(native(x)), native(x),
                                    _value_of(m, "negative_slope") * native(x)),
           unbatched=True, setup=_parameters_setup),
    _entry(cnn.CplxChannelModReLU, (3,), _c(3, 4),
           lambda m, x: _modrelu(native(x), m.threshold.detach()[:, None]),
           setup=_parameters_setup),
    _entry(cnn.CplxPhaseSoftmax, ((-1,), Sample((0,), note="dim0")), _c(3, 4),
           lambda m, x: torch.softmax(native(x).abs(), m.dim) * _phasor(native(x)),
           unbatched=True),
    _entry(cnn.CplxMagSoftmax, (-1,), _c(3, 4),
           lambda m, x: torch.softmax(native(x).abs(), m.dim), unbatched=True),
    _entry(cnn.CplxRatioMask, ((), Sample((False,), note="unbounded")),
           _inputs(("c", (3, 4)), ("c", (3, 4))),
           lambda m, mask, y: (_polar(torch.tanh)(native(mask)) if m.bounded else native(mask))
           * native(y), unbatched=True),
    _entry(cnn.CplxPolar, (Sample((torch.tanh,)),
                           Sample((_Lazy(torch.nn.Softplus), torch.sin), note="softplus-sin")),
           _c(3, 4), _polar_maps_reference, unbatched=True),
    _entry(cnn.CplxMagMinMaxNorm, ((), Sample((-1,), note="dim-1")), _c(3, 4),
           _minmax_reference, unbatched=True),
    _entry(cnn.CplxScaling, (3,), _c(3, 4),
           lambda m, x: native(x) * native(m.weight).detach()[:, None],
           setup=_parameters_setup),
    *[_entry(cls, ((3,), Sample((3,), {"kernel_size": 3, "gate": "modulus"}, "k3-modulus")),
             _c(3, *[4] * d), _eca_reference, setup=_parameters_setup)
      for d, cls in ((1, cnn.CplxECA1d), (2, cnn.CplxECA2d), (3, cnn.CplxECA3d))],
    _entry(cnn.CplxSequential, Sample((_Lazy(lambda: cnn.CplxLinear(3, 4)),
                                       _Lazy(cnn.CplxTanh))), _c(3),
           lambda m, x: torch.tanh(native(x) @ native(m[0].weight).detach().T
                                   + native(m[0].bias).detach()), unbatched=True),
    # --- normalisation
    *[_entry(cls, _BATCH_NORM_SAMPLES, _c(3, *[4] * d), _batch_norm_reference,
             train_reference=_batch_norm_train, setup=_norm_setup)
      for d, cls in ((1, cnn.CplxBatchNorm1d), (2, cnn.CplxBatchNorm2d),
                     (3, cnn.CplxBatchNorm3d))],
    # outside a process group: CplxBatchNorm2d's computation, for any rank
    _entry(cnn.CplxSyncBatchNorm, _BATCH_NORM_SAMPLES, _c(3, 4, 4), _batch_norm_reference,
           train_reference=_batch_norm_train, setup=_norm_setup),
    *[_entry(cls, _SCALAR_NORM_SAMPLES, _c(3, *[4] * d), _naive_batch_norm_reference,
             train_reference=_naive_batch_norm_train, setup=_norm_setup)
      for d, cls in ((1, cnn.CplxNaiveBatchNorm1d), (2, cnn.CplxNaiveBatchNorm2d),
                     (3, cnn.CplxNaiveBatchNorm3d))],
    *[_entry(cls, _SCALAR_NORM_SAMPLES, _c(3, *[4] * d), _magnitude_batch_norm_reference,
             train_reference=_magnitude_batch_norm_train, setup=_norm_setup)
      for d, cls in ((1, cnn.CplxMagnitudeBatchNorm1d), (2, cnn.CplxMagnitudeBatchNorm2d),
                     (3, cnn.CplxMagnitudeBatchNorm3d))],
    _entry(cnn.CplxLayerNorm, ((4,), Sample((4,), {"elementwise_affine": False}, "noaffine"),
                               Sample((4,), {"bias": False, "eps": 0.1}, "nobias-eps")),
           _c(3, 4), _layer_norm_reference, unbatched=True, setup=_norm_setup),
    _entry(cnn.CplxGroupNorm, ((2, 4), Sample((1, 4), {"affine": False}, "noaffine"),
                               Sample((4, 4), {"eps": 0.1}, "pergroup-eps")),
           _c(4, 5), _group_norm_reference, setup=_norm_setup),
    *[_entry(cls, (Sample((3,), {"affine": True}, "affine"),
                   Sample((3,), {"track_running_stats": True, "momentum": 0.3}, "tracked"),
                   Sample((3,), {"affine": True, "track_running_stats": True, "momentum": None,
                                 "eps": 0.1}, "tracked-nomomentum")),
             _c(3, *[4] * d), _instance_norm_reference(d), train_reference=_instance_norm_train(d),
             unbatched=True, setup=_norm_setup)
      for d, cls in ((1, cnn.CplxInstanceNorm1d), (2, cnn.CplxInstanceNorm2d),
                     (3, cnn.CplxInstanceNorm3d))],
    _entry(cnn.CplxRMSNorm, ((4,), Sample((4,), {"eps": 1e-3}, "eps"),
                             Sample((4,), {"elementwise_affine": False}, "noaffine")), _c(3, 4),
           _rms_norm_reference, unbatched=True, setup=_norm_setup),
    # --- dropout: eval mode is the identity
    *[_entry(cls, ((), Sample((0.2,), note="p0.2"),
                   Sample((0.4,), {"inplace": True}, "p0.4-inplace")),
             _c(3, *[4] * d), _unary(lambda z: z), unbatched=True, stochastic=True,
             train_invariant=_dropout_invariant(channel))
      for d, cls, channel in ((1, cnn.CplxDropout, False), (1, cnn.CplxDropout1d, True),
                              (2, cnn.CplxDropout2d, True), (3, cnn.CplxDropout3d, True))],
    # --- pooling and resizing
    *[_entry(cls, ((2,), Sample((3,), {"stride": 1, "padding": 1}, "padded"),
                   Sample((2,), {"return_indices": True, "ceil_mode": True}, "indices")),
             _c(3, *[_LENGTH[d]] * d), _max_pool_reference(d), unbatched=True)
      for d, cls in ((1, cnn.CplxMaxPool1d), (2, cnn.CplxMaxPool2d), (3, cnn.CplxMaxPool3d))],
    *[_entry(cls, ((2,), Sample((3,), {"return_indices": True}, "indices")),
             _c(3, *[_LENGTH[d]] * d), _max_pool_reference(d, adaptive=True), unbatched=True)
      for d, cls in ((1, cnn.CplxAdaptiveMaxPool1d), (2, cnn.CplxAdaptiveMaxPool2d),
                     (3, cnn.CplxAdaptiveMaxPool3d))],
    *[_entry(cls, ((2,), Sample((3,), {"stride": 1, "padding": 1, "count_include_pad": False},
                                "padded")),
             _c(3, *[_LENGTH[d]] * d),
             _split_module_reference(lambda m, d=d: getattr(torch.nn, f"AvgPool{d}d")(
                 m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad)),
             unbatched=True)
      for d, cls in ((1, cnn.CplxAvgPool1d), (2, cnn.CplxAvgPool2d), (3, cnn.CplxAvgPool3d))],
    *[_entry(cls, ((2,), (3,)), _c(3, *[_LENGTH[d]] * d),
             _split_module_reference(lambda m, d=d: getattr(torch.nn, f"AdaptiveAvgPool{d}d")(
                 m.output_size)), unbatched=True)
      for d, cls in ((1, cnn.CplxAdaptiveAvgPool1d), (2, cnn.CplxAdaptiveAvgPool2d),
                     (3, cnn.CplxAdaptiveAvgPool3d))],
    _entry(cnn.CplxUpsample, (Sample((), {"scale_factor": 2}, "nearest"),
                              Sample((), {"scale_factor": 2, "mode": "linear"}, "linear")),
           _c(3, 5), _split_module_reference(lambda m: torch.nn.Upsample(
               scale_factor=m.scale_factor, mode=m.mode))),
    *[_entry(cls, (2,),
             _c(3, *[8] * d), _spectral_pool_reference(d), unbatched=True)
      for d, cls in ((1, cnn.CplxSpectralPool1d), (2, cnn.CplxSpectralPool2d),
                     (3, cnn.CplxSpectralPool3d))],
    _entry(cnn.CplxFlatten, ((), Sample((0, 1), note="dims01")), _c(3, 4, 2),
           lambda m, x: native(x).flatten(m.start_dim, m.end_dim)),
    _entry(cnn.CplxUnflatten, (1, (2, 2)), _c(4, 3),
           lambda m, x: native(x).unflatten(m.dim, m.unflattened_size)),
    # --- losses
    _entry(cnn.CplxMSELoss, _reductions(), _inputs(("c", (3, 4)), ("c", (3, 4))),
           _loss(lambda m, x, y: (x - y).abs() ** 2), unbatched=True),
    _entry(cnn.CplxL1Loss, _reductions() + (Sample((), {"split": True}, "split"),),
           _inputs(("c", (3, 4)), ("c", (3, 4))),
           _loss(lambda m, x, y: ((x - y).real.abs() + (x - y).imag.abs()) if m.split
                 else (x - y).abs()), unbatched=True),
    _entry(cnn.CplxCauchyLoss, _reductions(c=2.0), _inputs(("c", (3, 4)), ("c", (3, 4))),
           _loss(lambda m, x, y: m.c ** 2 / 2 * torch.log1p((x - y).abs() ** 2 / m.c ** 2)),
           unbatched=True),
    _entry(cnn.CplxLogCoshLoss, _reductions(), _inputs(("c", (3, 4)), ("c", (3, 4))),
           _loss(lambda m, x, y: torch.log(torch.cosh((x - y).abs()))), unbatched=True),
    _entry(cnn.CplxLogErrorLoss, _reductions(), _inputs(("c", (3, 4)), ("c", (3, 4))),
           _loss(lambda m, x, y: (torch.log(x.abs()) - torch.log(y.abs())) ** 2
                 + (torch.angle(x) - torch.angle(y)) ** 2), unbatched=True),
    _entry(cnn.CplxPhaseAwareLoss, _reductions(modulus_weight=0.5, phase_weight=2.0),
           _inputs(("c", (3, 4)), ("c", (3, 4))),
           _loss(lambda m, x, y: m.modulus_weight * (x.abs() - y.abs()) ** 2
                 + m.phase_weight * (1 - torch.cos(torch.angle(x) - torch.angle(y)))),
           unbatched=True),
    _entry(cnn.CplxFourthPowerLoss, _reductions(), _inputs(("c", (3, 4)), ("c", (3, 4))),
           _loss(lambda m, x, y: (x - y).abs() ** 4), unbatched=True),
    _entry(cnn.CplxAnalyticSignalLoss, _reductions() + (Sample((), {"dim": 0}, "dim0"),),
           _c(8), _analytic_loss_reference, unbatched=True),
    _entry(cnn.CplxSSIMLoss, _reductions(window_size=3)
           + (Sample((), {"window_size": 3, "split": True}, "split"),),
           _inputs(("c", (2, 6, 6)), ("c", (2, 6, 6))),
           no_reference="SSIM's Gaussian-window statistics: compared with a direct SSIM in "
                        "tests/nn/test_losses.py"),
    _entry(cnn.CplxSISDRLoss, _reductions() + (Sample((), {"dim": 0, "zero_mean": True},
                                                      "dim0-zeromean"),),
           _inputs(("c", (3, 8)), ("c", (3, 8))), _si_sdr_reference, unbatched=True),
    # --- spectral
    _entry(cnn.CplxFFT, ((), Sample((), {"norm": "ortho", "n": 6}, "ortho"),
                         Sample((), {"dim": (-2, -1), "n": (4, 6)}, "2d")), _c(3, 5),
           _fft(False), unbatched=True),
    _entry(cnn.CplxIFFT, ((), Sample((), {"norm": "forward", "dim": 1}, "forward"),
                          Sample((), {"norm": "ortho", "dim": (-1, -2)}, "2d")), _c(3, 5),
           _fft(True), unbatched=True),
    _entry(cnn.CplxFFTShift, ((), Sample((), {"dim": (-2, -1)}, "2d")), _c(3, 5),
           lambda m, x: torch.fft.fftshift(native(x), dim=m.dim), unbatched=True),
    _entry(cnn.CplxIFFTShift, ((), Sample((), {"dim": (-2, -1)}, "2d")), _c(3, 5),
           lambda m, x: torch.fft.ifftshift(native(x), dim=m.dim), unbatched=True),
    _entry(cnn.CplxSTFT, ((8,), Sample((8,), note="real"),
                          Sample((8,), {"onesided": False, "normalized": True, "center": False},
                                 "real-twosided")),
           _stft_inputs, _stft_reference, unbatched=True),
    _entry(cnn.CplxISTFT, ((8,), Sample((8,), note="onesided"),
                           Sample((8,), {"return_complex": False}, "realpart")),
           _istft_inputs, _istft_reference, unbatched=True),
    _entry(cnn.CplxDataConsistency,
           ((), Sample((), note="bool"), Sample((), {"soft": True, "weight": 0.6}, "soft"),
            Sample((), {"centered": True, "norm": None}, "centered"),
            Sample((), {"dim": -1, "norm": "forward"}, "realmask")),
           _dc_inputs, _dc_reference, unbatched=True),
    _entry(cnn.CplxAnalytic, (), _r(8),
           lambda m, x: torch.from_numpy(scipy.signal.hilbert(x.numpy(), axis=m.dim)),
           unbatched=True, complex_input=False),
    # --- attention and transformers
    _entry(cnn.CplxMultiheadAttention, ((4, 2), Sample((4, 2), {"batch_first": True}, "bf")),
           _inputs(("c", (3, 4)), ("c", (3, 4)), ("c", (3, 4)), sequence_first=True),
           _mha_reference, unbatched=True, batch_dim=1),
    _entry(cnn.CplxScaledDotProductAttention,
           ((), Sample((), {"score": "modulus", "scale": 0.3}, "modulus")),
           _inputs(("c", (3, 4)), ("c", (5, 4)), ("c", (5, 2))),
           _sdpa_reference, unbatched=True),
    _entry(cnn.CplxTransformerEncoderLayer, Sample((4, 2, 6), {"dropout": 0.0}),
           _inputs(("c", (3, 4)), sequence_first=True), no_reference=_NO_REFERENCE["composite"],
           stochastic=True, unbatched=True, batch_dim=1),
    _entry(cnn.CplxTransformerDecoderLayer, Sample((4, 2, 6), {"dropout": 0.0}),
           _inputs(("c", (3, 4)), ("c", (3, 4)), sequence_first=True),
           no_reference=_NO_REFERENCE["composite"], stochastic=True, unbatched=True, batch_dim=1),
    # the first sample (the one exported) stacks one layer: the export of a
    # layer is its row's; the second stacks two
    _entry(cnn.CplxTransformerEncoder,
           (Sample((_Lazy(lambda: cnn.CplxTransformerEncoderLayer(4, 2, 6, dropout=0.0)), 1)),
            Sample((_Lazy(lambda: cnn.CplxTransformerEncoderLayer(4, 2, 6, dropout=0.0)), 2),
                   note="two")),
           _inputs(("c", (3, 4)), sequence_first=True), no_reference=_NO_REFERENCE["composite"],
           stochastic=True, unbatched=True, batch_dim=1),
    _entry(cnn.CplxTransformerDecoder,
           (Sample((_Lazy(lambda: cnn.CplxTransformerDecoderLayer(4, 2, 6, dropout=0.0)), 1)),
            Sample((_Lazy(lambda: cnn.CplxTransformerDecoderLayer(4, 2, 6, dropout=0.0)), 2),
                   note="two")),
           _inputs(("c", (3, 4)), ("c", (3, 4)), sequence_first=True),
           no_reference=_NO_REFERENCE["composite"], stochastic=True, unbatched=True, batch_dim=1),
    _entry(cnn.CplxTransformer,
           Sample((), dict(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=6, dropout=0.0)),
           _inputs(("c", (3, 4)), ("c", (3, 4)), sequence_first=True),
           no_reference=_NO_REFERENCE["composite"], stochastic=True, unbatched=True, batch_dim=1),
    # --- filter banks, positions, state spaces
    _entry(cnn.CplxGaborConv1d, (Sample((1, 3, 5), {"padding": 2})), _c(1, 8),
           no_reference=_NO_REFERENCE["own"], unbatched=True),
    _entry(cnn.CplxMorletConv1d, (Sample((1, 3, 5), {"padding": 2})), _c(1, 8),
           no_reference=_NO_REFERENCE["own"], unbatched=True),
    # dropout 0: deterministic in training mode too
    _entry(cnn.CplxSinusoidalPositionalEncoding,
           (Sample((4,), {"dropout": 0.0}),
            Sample((4,), {"dropout": 0.0, "mode": "multiply"}, "multiply"),
            Sample((4,), {"dropout": 0.0, "batch_first": True, "base": 50.0}, "bf-base"),
            Sample((4,), {"dropout": 0.0, "max_len": 9}, "offset"),
            Sample((4,), {"dropout": 0.0, "mode": "multiply", "batch_first": True},
                   "multiply-bf-offset")),
           _positions, _positional_reference, train_reference=_as_in_eval(_positional_reference),
           stochastic=True, batch_dim=1,
           # the table of sinusoids is drawn at construction, in float32
           atol=1e-6),
    _entry(cnn.CplxRotaryPositionalEncoding, (4,), _inputs(("c", (3, 4)), sequence_first=True),
           no_reference="the rotation is the package's own (compared with the rotation of "
                        "feature pairs in tests/nn/modules/test_positional.py)", batch_dim=1),
    _entry(cnn.CplxS4D, (Sample((3,), {"d_state": 4}),), _c(3, 5),
           no_reference=_NO_REFERENCE["own"]),
    # --- recurrent
    *[_entry(cls, (Sample((3, 4), {"bias": False}, "nobias"), (3, 4),
                   Sample((3, 4), {"gates": "modulus"}, "modulus")),
             _c(3), _cell_reference, unbatched=True, setup=_gate_bias_setup)
      for cls in (cnn.CplxRNNCell, cnn.CplxGRUCell, cnn.CplxLSTMCell)],
    *[_entry(cls, ((3, 4), Sample((3, 4), {"num_layers": 2, "bidirectional": True}, "bidir2"),
                   Sample((3, 4), {"batch_first": True}, "batchfirst"),
                   Sample((3, 4), {"gates": "modulus", "bidirectional": True}, "modulus")),
             _sequence(3), _rnn_reference, unbatched=True, batch_dim=1, setup=_gate_bias_setup)
      for cls in (cnn.CplxRNN, cnn.CplxGRU, cnn.CplxLSTM)],
    *[_entry(cls, ((3, 4), Sample((3, 4), {"num_layers": 2, "bidirectional": True}, "bidir2"),
                   Sample((3, 4), {"batch_first": True}, "batchfirst")),
             _sequence(3), _unit_l0_reference, unbatched=True, setup=_unit_l0_setup,
             stochastic=True, batch_dim=1)
      for cls in (relevance.CplxRNNUnitL0, relevance.CplxGRUUnitL0, relevance.CplxLSTMUnitL0)],
    # in eval mode a Gaussian unit gate is its mean 1: the plain layer's reference
    *[_entry(cls, ((3, 4), Sample((3, 4), {"num_layers": 2, "bidirectional": True}, "bidir2"),
                   Sample((3, 4), {"batch_first": True}, "batchfirst")),
             _sequence(3), _rnn_reference, unbatched=True, setup=_unit_l0_setup,
             stochastic=True, batch_dim=1)
      for cls in (relevance.CplxRNNUnitVD, relevance.CplxGRUUnitVD, relevance.CplxLSTMUnitVD,
                  relevance.CplxRNNUnitARD, relevance.CplxGRUUnitARD,
                  relevance.CplxLSTMUnitARD)],
    _entry(cnn.CplxUnitaryRNNCell, (3, 4), _c(3), no_reference=_NO_REFERENCE["own"],
           unbatched=True),
    _entry(cnn.CplxUnitaryRNN, (3, 4), _sequence(3), no_reference=_NO_REFERENCE["own"],
           unbatched=True, batch_dim=1),
    _entry(cnn.CplxDataParallel, Sample((_Lazy(lambda: cnn.CplxLinear(3, 4)),)), _c(3),
           lambda m, x: native(x) @ native(m.module.weight).detach().T
           + native(m.module.bias).detach()),
    # --- sparse linear layers built from a weight
    _entry(masked.SparseLinear, Sample((_Lazy(lambda: _sparse_weight(False)),),
                                       {"bias": _Lazy(lambda: torch.randn(4))}), _r(3),
           lambda m, x: x @ _dense(m).T + m.bias.detach(), complex_input=False),
    _entry(masked.CplxSparseLinear, Sample((_Lazy(lambda: _sparse_weight(True)),)), _c(3),
           lambda m, x: native(x) @ _dense(m).T),
    # --- reference models: compositions of the layers above (tests/models/ checks
    # what they add: the pipeline, compile and export, the paper's structure)
    _entry(models.CplxResNet, (Sample((1, 3), {"widths": (2, 3), "blocks": (1, 1)}),
                               Sample((1, 3), {"widths": (2,), "blocks": (1,),
                                               "readout": "modulus"}, "modulus")),
           _c(1, 5, 4), no_reference=_NO_REFERENCE["model"], skips=_BATCHED_MODEL),
    _entry(models.CplxUNet, (Sample((), {"channels": (2, 3)}),
                             Sample((), {"channels": (2,), "bounded": False}, "unbounded"),
                             Sample((), {"channels": (2, 3), "output": "residual",
                                         "first_stride": 1}, "residual-unstrided"),
                             Sample((), {"channels": (2,), "output": "direct"}, "direct")),
           _c(1, 5, 4), no_reference=_NO_REFERENCE["model"], skips=_BATCHED_MODEL),
    _entry(models.CplxVisionTransformer,
           (Sample((1, 3, 4, 2), {"d_model": 4, "num_layers": 1}),
            Sample((1, 3, 4, 2), {"d_model": 4, "num_layers": 1, "pool": "mean",
                                  "readout": "modulus"}, "mean-modulus")),
           _c(1, 4, 4), no_reference=_NO_REFERENCE["model"], skips=_BATCHED_MODEL),
]

_INT_PARTS = ("reads an integer tensor as integer parts, as the published package's casting "
              "layers do (tests/nn/modules/test_layers.py::test_casting_layers_keep_integer_parts)")
_INT_PROMOTED = ("promotes an integer signal to the default float dtype, as torch.fft does "
                 "(tests/nn/modules/test_layers.py::test_analytic_signal_of_an_integer_signal)")
_CONTAINER = "a container: the error names the layer inside that refuses the input, as torch's"


_TS_ADAPTIVE = ("the TorchScript ONNX exporter pools adaptively only where the output size "
                "divides the input size, here 2 of 5 ('Unsupported: ONNX export of operator "
                "adaptive_{}_pool2d, output size that are not factor of input size'); torch's "
                "Adaptive{}Pool2d fails alike")
_NO_ONNX_FUNCTION = ("the default ONNX exporter has no ONNX function for torch's {} ('No ONNX "
                     "function found for <OpOverload(op='aten.{}', overload='default')>'); "
                     "torch's {} fails alike")
_TS_COMPLEX = ("the TorchScript ONNX exporter has no complex dtype, which the layer computes "
               "in ('Exporting the operator 'aten::complex' to ONNX opset version 20 is not "
               "supported')")
_NO_MATRIX_EXP = ("ONNX has no matrix exponential, which the unitary transition is ('Exporting "
                  "the operator 'aten::linalg_matrix_exp' to ONNX opset version 20 is not "
                  "supported'; the default exporter: 'No ONNX function found for "
                  "<OpOverload(op='aten.linalg_matrix_exp', overload='default')>')")

#: what the generic tests found, per layer: skipped (not applicable) or expected to fail
KNOWN = {
    cnn.CplxAdaptiveMaxPool2d: {"xfails": {
        "test_onnx_torchscript": _TS_ADAPTIVE.format("max", "Max"),
        "test_onnx_dynamo": _NO_ONNX_FUNCTION.format(
            "adaptive_max_pool2d", "adaptive_max_pool2d", "AdaptiveMaxPool2d")}},
    cnn.CplxAdaptiveAvgPool2d: {"xfails": {
        "test_onnx_torchscript": _TS_ADAPTIVE.format("avg", "Avg")}},
    cnn.CplxAdaptiveAvgPool3d: {"xfails": {
        "test_onnx_dynamo": _NO_ONNX_FUNCTION.format(
            "adaptive_avg_pool3d", "_adaptive_avg_pool3d", "AdaptiveAvgPool3d")}},
    **{cls: {"xfails": {"test_onnx_torchscript": _TS_COMPLEX}}
       for cls in (cnn.CplxSpectralPool1d, cnn.CplxSpectralPool2d, cnn.CplxSpectralPool3d)},
    cnn.CplxS4D: {"xfails": {
        "test_onnx_torchscript": (
            "the TorchScript exporter traces the length as a tensor, which cplx.ssm_kernel "
            "refuses ('ssm_kernel: `length` must be a positive int, got tensor(5)'); the kernel "
            "is computed in torch's complex dtype, which that exporter does not have either"),
        "test_onnx_dynamo": (
            "the kernel is computed in torch's complex dtype, for which the default ONNX "
            "exporter lacks ops ('No ONNX function found for <OpOverload(op='aten.unsqueeze', "
            "overload='default')>. Failure message: No decompositions registered for the "
            "complex-valued input')")}},
    cnn.CplxUnitaryRNNCell: {"xfails": dict.fromkeys(
        ("test_onnx_torchscript", "test_onnx_dynamo"), _NO_MATRIX_EXP)},
    cnn.CplxUnitaryRNN: {"xfails": dict.fromkeys(
        ("test_onnx_torchscript", "test_onnx_dynamo"), _NO_MATRIX_EXP)},
    **{cls: {"skips": {"test_reference_boundaries": (
        "cancelling phasors make the channel means zero up to rounding, where the phase gate "
        "jumps from 0 (at an exact zero, phase_sigmoid's documented value) to 1/2 times a "
        "phase of rounding noise: the layer's sums and the reference's round differently")}}
       for cls in (cnn.CplxECA1d, cnn.CplxECA2d, cnn.CplxECA3d)},
    cnn.InterleavedRealToCplx: {"skips": {"test_bad_dtype": _INT_PARTS}},
    cnn.CplxDataConsistency: {"skips": {"test_duck_complex": (
        "its mask is a real floating-point input besides the two complex ones, and the duck "
        "comparison lines up the gradients of the complex inputs only (it counts one too many "
        "on the reference's side); duck operands of the layer are compared with Cplx ones, "
        "gradients included, in tests/nn/modules/test_reconstruction.py")}},
    cnn.ConcatenatedRealToCplx: {"skips": {"test_bad_dtype": _INT_PARTS}},
    cnn.AsTypeCplx: {"skips": {"test_bad_dtype": _INT_PARTS}},
    cnn.TensorToCplx: {"skips": {"test_bad_dtype": _INT_PARTS}},
    cnn.CplxAnalytic: {"skips": {"test_bad_dtype": _INT_PROMOTED}},
    cnn.CplxSequential: {"skips": {"test_bad_input": _CONTAINER, "test_bad_dtype": _CONTAINER}},
    cnn.CplxDataParallel: {"skips": {"test_bad_input": _CONTAINER, "test_bad_dtype": _CONTAINER}},
    masked.SparseLinear: {"skips": {"test_meta_to_empty": (
        "built from a dense weight's nonzeros: a size that depends on the data, which a meta "
        "tensor cannot give")}},
    masked.CplxSparseLinear: {"skips": {"test_meta_to_empty": (
        "built from a dense weight's nonzeros: a size that depends on the data, which a meta "
        "tensor cannot give")}},
}


def _spatial(d, extra):
    """A builder of an input with ``3`` channels and ``d + extra`` spatial dimensions of 4."""
    return _c(3, *[4] * (d + extra))


#: inputs of a shape each layer refuses (the family members have theirs built in)
BAD_SHAPES = {
    cnn.CplxChannelModReLU: _c(),  # no channel dimension
    **{cls: _c() for cls in (cnn.CplxBatchNorm1d, cnn.CplxNaiveBatchNorm1d,
                             cnn.CplxMagnitudeBatchNorm1d)},
    **{cls: _spatial(d, -1) for d, cls in (
        (2, cnn.CplxBatchNorm2d), (3, cnn.CplxBatchNorm3d), (2, cnn.CplxNaiveBatchNorm2d),
        (3, cnn.CplxNaiveBatchNorm3d), (2, cnn.CplxMagnitudeBatchNorm2d),
        (3, cnn.CplxMagnitudeBatchNorm3d))},
    **{cls: _spatial(d, 2) for d, cls in (
        (1, cnn.CplxInstanceNorm1d), (2, cnn.CplxInstanceNorm2d), (3, cnn.CplxInstanceNorm3d),
        (1, cnn.CplxMaxPool1d), (2, cnn.CplxMaxPool2d), (3, cnn.CplxMaxPool3d),
        (1, cnn.CplxAdaptiveMaxPool1d), (2, cnn.CplxAdaptiveMaxPool2d),
        (3, cnn.CplxAdaptiveMaxPool3d), (1, cnn.CplxAvgPool1d), (2, cnn.CplxAvgPool2d),
        (3, cnn.CplxAvgPool3d), (1, cnn.CplxAdaptiveAvgPool1d), (2, cnn.CplxAdaptiveAvgPool2d),
        (3, cnn.CplxAdaptiveAvgPool3d))},
    cnn.CplxSyncBatchNorm: _c(),
    cnn.CplxLayerNorm: _c(3, 5),
    cnn.CplxRMSNorm: _c(3, 5),
    cnn.CplxGroupNorm: _c(5, 5),
    cnn.CplxUpsample: _c(),
    cnn.CplxMultiheadAttention: _inputs(("c", (3, 5)), ("c", (3, 5)), ("c", (3, 5))),
    cnn.CplxRNNCell: _c(4), cnn.CplxGRUCell: _c(4), cnn.CplxLSTMCell: _c(4),
    cnn.CplxUnitaryRNNCell: _c(4),
    cnn.CplxRNN: _sequence(4), cnn.CplxGRU: _sequence(4), cnn.CplxLSTM: _sequence(4),
    relevance.CplxRNNUnitL0: _sequence(4), relevance.CplxGRUUnitL0: _sequence(4),
    relevance.CplxLSTMUnitL0: _sequence(4),
    relevance.CplxRNNUnitVD: _sequence(4), relevance.CplxGRUUnitVD: _sequence(4),
    relevance.CplxLSTMUnitVD: _sequence(4), relevance.CplxRNNUnitARD: _sequence(4),
    relevance.CplxGRUUnitARD: _sequence(4), relevance.CplxLSTMUnitARD: _sequence(4),
    cnn.CplxUnitaryRNN: _sequence(4),
    cnn.CplxS4D: _c(4, 5),
    cnn.CplxGaborConv1d: _c(2, 8), cnn.CplxMorletConv1d: _c(2, 8),
    masked.CplxSparseLinear: _c(4),
    masked.SparseLinear: _r(4),
    cnn.CplxTransformerEncoderLayer: _c(3, 5),
    cnn.CplxTransformerEncoder: _c(3, 5),
    cnn.CplxUnflatten: _c(5, 3),
    cnn.TensorToCplx: _r(3, 4, 3),
    cnn.InterleavedRealToCplx: _r(3, 5),
    cnn.ConcatenatedRealToCplx: _r(3, 5),
    cnn.CplxSTFT: _c(3, 16),
    cnn.CplxMSELoss: _inputs(("c", (3, 4)), ("c", (3, 5))),
    cnn.CplxFourthPowerLoss: _inputs(("c", (3, 4)), ("c", (3, 5))),
    cnn.CplxSISDRLoss: _inputs(("c", (3, 8)), ("c", (3, 7))),
    cnn.CplxDataConsistency: _inputs(("c", (1, 4, 5)), ("c", (1, 4, 4)), ("r", (1, 1, 5))),
    cnn.CplxScaling: _c(),  # no channel dimension
    cnn.CplxECA1d: _spatial(1, 1), cnn.CplxECA2d: _spatial(2, 1), cnn.CplxECA3d: _spatial(3, -1),
    cnn.CplxScaledDotProductAttention: _inputs(("c", (3, 4)), ("c", (5, 3)), ("c", (5, 2))),
    models.CplxResNet: _c(2, 5, 4),
    models.CplxUNet: _c(2, 5, 4),
    models.CplxVisionTransformer: _c(1, 4, 6),
}

_ONCE = ("computed in float32 (statistics, whitening, affine map) and rounded once, as "
         "documented: half an epsilon of each value at most; a reduction in half precision "
         "errs by one to several (measured 0.7 to 2.4 without the upcast)")
_SEVERAL = ("several half-precision roundings in a row (a product, then a gate, an activation "
            "or a second layer; torch's CPU transposed convolutions round partial sums): "
            "measured up to 1.8 epsilons")
_SEVERAL_IDS = {"CplxTanh", "CplxRatioMask", "CplxMagMinMaxNorm", "CplxECA1d", "CplxECA2d",
                "CplxECA3d", "CplxSequential", "CplxRNNUnitL0", "CplxGRUUnitL0",
                "CplxLSTMUnitL0"}

#: ``{layer id: (epsilons, reason)}``: the half-precision tolerance where it is not 1.5 (the
#: float32 computation of a few steps, rounded; measured at most 0.95)
HALF_ULPS = {
    **{info.id: (0.6, _ONCE) for info in LAYERS if info.cls in (
        cnn.CplxBatchNorm1d, cnn.CplxBatchNorm2d, cnn.CplxBatchNorm3d, cnn.CplxSyncBatchNorm,
        cnn.CplxMagnitudeBatchNorm1d, cnn.CplxMagnitudeBatchNorm2d,
        cnn.CplxMagnitudeBatchNorm3d, cnn.CplxLayerNorm, cnn.CplxGroupNorm,
        cnn.CplxInstanceNorm1d, cnn.CplxInstanceNorm2d, cnn.CplxInstanceNorm3d,
        cnn.CplxRMSNorm)},
    **{info.id: (2.5, _SEVERAL) for info in LAYERS
       if info.id in _SEVERAL_IDS or "ConvTranspose" in info.id or "ChannelL0" in info.id},
}

for _info in LAYERS:
    _info.half_ulps = HALF_ULPS.get(_info.id, (1.5, ""))[0]
    if _info.cls in BAD_SHAPES:
        _info.bad_shape = BAD_SHAPES[_info.cls]
    if _info.bad_shape is None:
        _info.skips.setdefault("test_bad_shape", "takes inputs of any shape (elementwise, "
                                                 "or no shape is wrong for it)")
    _known = KNOWN.get(_info.cls, {})
    _info.skips = {**_info.skips, **_known.get("skips", {})}
    _info.xfails = {**_info.xfails, **_known.get("xfails", {})}


def params(test, samples=False, dtypes=None, dtype_skips=None):
    """``pytest.param(info, sample[, dtype])`` of every row for the generic test named ``test``.

    The row's ``skips`` and ``xfails`` of ``test`` mark its cases; with
    ``samples`` every constructor sample is a case (else the first); with
    ``dtypes`` each case runs in each, skipped where ``dtype_skips`` (keyed
    ``(layer id, dtype name)``) says torch has no kernel.
    """
    cases = []
    for info in LAYERS:
        marks = []
        if test in info.skips:
            marks.append(pytest.mark.skip(reason=info.skips[test]))
        elif test in info.xfails:
            marks.append(pytest.mark.xfail(strict=True, reason=info.xfails[test]))
        for i in range(len(info.samples)) if samples else [0]:
            note = info.samples[i].note if samples else ""
            ident = f"{info.id}-{note}" if note else info.id
            if dtypes is None:
                cases.append(pytest.param(info, i, id=ident, marks=marks))
                continue
            for dtype in dtypes:
                name = str(dtype).rpartition(".")[2]
                skip = (dtype_skips or {}).get((info.id, name))
                extra = marks if marks or skip is None else [pytest.mark.skip(reason=skip)]
                cases.append(pytest.param(info, i, dtype, id=f"{ident}-{name}", marks=extra))
    return cases


def map_parts(inputs, f):
    """``inputs`` with ``f`` applied to every floating tensor (both parts of a Cplx)."""
    def apply(value):
        if isinstance(value, Cplx):
            return Cplx(f(value.real), f(value.imag))
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return f(value)
        return value
    return tuple(apply(value) for value in inputs)
