"""One record per public layer class: how to build it, feed it and check it.

The generic tests (``tests/nn/test_layer_table_generic.py`` and others)
run over :data:`LAYERS`, in the manner of torch's ``ModuleInfo``: a
property is tested on every layer, not on two named classes.

Interface (kept stable; other test modules build on it):

``LAYERS``
    A list of :class:`LayerInfo`, one per public ``torch.nn.Module``
    subclass of ``cplxmodule.nn`` (with ``cplxmodule.nn.losses``),
    ``cplxmodule.nn.masked``, ``cplxmodule.nn.relevance`` and
    ``cplxmodule.nn.relevance.extensions``; :data:`NOT_LAYERS` names the
    public classes that are not layers of their own, with the reason.
``LayerInfo.make(dtype=torch.float32, device="cpu", sample=0, seed=0)``
    A new module of constructor sample ``sample`` (index into
    ``LayerInfo.samples``), its parameters drawn from ``seed`` (the same
    seed gives the same module), then set up (a masked layer gets a mask,
    a gated layer gates that are not all open) and cast to ``dtype``.
``LayerInfo.inputs(batch=2, dtype=torch.float32, device="cpu", generator=None, sample=0, unbatched=False)``
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
``LayerInfo.skips``, ``LayerInfo.xfails``
    ``{test name: reason}``: a generic test named there is skipped, or
    expected to fail (strictly), for this layer. :data:`TESTS` lists the
    names.
``LayerInfo.stochastic``
    Whether the train-mode forward draws random numbers (Bayesian layers,
    dropout): such layers are compared in eval mode or under a fixed seed.
``LayerInfo.complex_input``
    Whether the forward takes complex inputs (``False`` for the real
    twins of torch's layers).
"""

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import torch
import torch.nn.functional as F

import cplxmodule.nn as cnn
import cplxmodule.nn.masked as masked
import cplxmodule.nn.relevance as relevance
import cplxmodule.nn.relevance.extensions as extensions
from cplxmodule import Cplx
from cplxmodule.nn import _families
from cplxmodule.nn._kinds import kinds_of

__all__ = ["LAYERS", "NOT_LAYERS", "TESTS", "LayerInfo", "Sample", "PACKAGES", "native"]

#: the packages whose public layer classes the table covers
PACKAGES = (cnn, cnn.losses, masked, relevance, extensions)

#: the generic tests that ``skips`` and ``xfails`` may name
TESTS = (
    "test_reference",
    "test_gradcheck",
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
    "test_eval_deterministic",
)


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
    return Cplx(torch.randn(shape, generator=g, dtype=dtype), torch.randn(shape, generator=g, dtype=dtype))


def _real(g, dtype, *shape):
    return torch.randn(shape, generator=g, dtype=dtype)


def native(value):
    """A :class:`Cplx` (or a complex parameter read as one) as torch's complex dtype; else as is."""
    if isinstance(value, Cplx):
        return torch.complex(value.real, value.imag)
    return value


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

    def __post_init__(self):
        assert (self.reference is None) == bool(self.no_reference), self.id
        unknown = (set(self.skips) | set(self.xfails)) - set(TESTS)
        assert not unknown, f"{self.id}: unknown tests {unknown}"

    @property
    def id(self):
        return self.cls.__name__

    @property
    def kind(self):
        return kinds_of(self.cls)

    def make(self, dtype=torch.float32, device="cpu", sample=0, seed=0):
        s = self.samples[sample]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            with torch.device(device):
                module = self.cls(*s.args, **s.kwargs)
        if self.setup is not None:
            self.setup(module, torch.Generator().manual_seed(seed + 1))
        return module.to(dtype)

    def inputs(self, batch=2, dtype=torch.float32, device="cpu", generator=None, sample=0,
               unbatched=False):
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        args = self.builder(self.samples[sample], None if unbatched else batch, dtype, generator)
        return tuple(a.to(device) if isinstance(a, (Cplx, torch.Tensor)) else a for a in args)


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


def _family_samples(member, complex_):
    family = member.family
    stem = family.name.rstrip("123d")
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
    stem = member.family.name.rstrip("123d")
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
    stem = family.name.rstrip("123d")
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


def _family_entry(cls, **extra):
    member = _families.lookup(cls)
    complex_ = member.family.dense.__name__.startswith("Cplx")
    stem = member.family.name.rstrip("123d")
    return LayerInfo(
        cls,
        samples=_family_samples(member, complex_),
        builder=_family_builder(member, complex_),
        reference=_family_reference(member),
        setup=_family_setup(member),
        # torch's Linear takes any leading dimensions, its convolutions an
        # unbatched input; its Bilinear too
        unbatched=True,
        stochastic=member.kind not in ("dense", "masked"),
        complex_input=complex_,
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
    relevance.BaseARD: "abstract base of the layers with a relevance",
}

_FAMILY_CLASSES = [cls for cls in _public_classes()
                   if cls not in NOT_LAYERS and _families.lookup(cls) is not None]

LAYERS = [_family_entry(cls) for cls in _FAMILY_CLASSES]
