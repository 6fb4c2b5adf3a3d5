"""compact() is never wrong: random models from a grammar, compact or refused.

Hypothesis builds small models of real or complex layers: dense, masked and
Bayesian Linear, Conv1-3d (grouped and depthwise included) and
ConvTranspose layers (masks often zeroing whole output channels), batch
norms (real, complex whitening, naive and magnitude; by running or by
batch statistics), pooling (max, average over zero padding or not,
adaptive), per-channel activations (PReLU, a per-channel modReLU),
elementwise and non-elementwise activations, dropout, flatten into a
linear layer, nested Sequentials, Sequential subclasses with their
own ``forward`` (residual blocks, concatenations of the input and the
children's output, torch functions between children, one that skips a
child), a layer used
twice, a bilinear layer inside a custom module, and users' subclasses of
dense, masked and activation layers. For each, ``compact(model)`` must
compute what the model computes in eval mode, or refuse with a clear error
naming the layer; and so on a second input where ``compact`` followed one
forward call on the first (``example_inputs``).

The reference is the model itself in eval mode (float64). For variational
dropout and ARD layers, which ``compact`` sparsifies by
``relevance(threshold=0)``, each ``log_sigma2`` is set to
``log|w|^2 +- 6`` so that the kept weights are known without asking the
layer, and the reference multiplies them into its weights.
"""

import copy
import functools
import warnings

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import HealthCheck, given, settings

import cplxmodule.nn.masked as masked
import cplxmodule.nn.relevance as relevance
import cplxmodule.nn.relevance.extensions as extensions
from cplxmodule import Cplx, cplx
from cplxmodule import nn as cnn
from cplxmodule.nn import _families

# layers this small gain nothing from a second thread
pytestmark = pytest.mark.usefixtures("one_thread")

DTYPE = torch.float64


# --- users' layers: subclasses with a forward of their own ------------------


@functools.lru_cache(maxsize=None)
def user_subclass(base):
    """``base`` with a forward of its own: the output scaled and shifted."""

    def forward(self, *args, **kwargs):
        return base.forward(self, *args, **kwargs) * -1.5 + 0.25

    return type(f"User{base.__name__}", (base,), {"forward": forward})


class Flip(torch.nn.ReLU):
    """A user's activation: ReLU, then the features in reverse order."""

    def forward(self, input):
        return super().forward(input).flip(1)


class CplxFlip(cnn.CplxIdentity):
    """A user's complex activation: the features in reverse order."""

    def forward(self, input):
        return Cplx(input.real.flip(1), input.imag.flip(1))


class Residual(torch.nn.Sequential):
    """A residual block: its own forward over the Sequential's children."""

    def forward(self, input):
        return input + super().forward(input)


class Concat(torch.nn.Sequential):
    """Its input and its children's output, joined along dimension 1 (the channels or features)."""

    def forward(self, input):
        join = cplx.cat if isinstance(input, Cplx) else torch.cat
        return join([input, super().forward(input)], dim=1)


class Functional(torch.nn.Sequential):
    """Its two children with an elementwise torch function between, on each part of a Cplx."""

    def forward(self, input):
        h = self[0](input)
        if isinstance(h, Cplx):
            h = Cplx(torch.nn.functional.leaky_relu(h.real, 0.3), h.imag.tanh())
        else:
            h = torch.nn.functional.leaky_relu(h, 0.3)
        return self[1](h)


class SkipMiddle(torch.nn.Sequential):
    """Applies its first and last children only."""

    def forward(self, input):
        return self[-1](self[0](input))


class SelfBilinear(torch.nn.Module):
    def __init__(self, bilinear):
        super().__init__()
        self.bilinear = bilinear

    def forward(self, input):
        return self.bilinear(input, input)


# --- the grammar ------------------------------------------------------------


class Context:
    """What building a model records for the reference and the verdict."""

    def __init__(self, complex_, size):
        self.complex_, self.size = complex_, size
        self.keep = {}  # id(Gaussian layer) -> the weights relevance(0) keeps
        self.bad = []  # masked layers given a non-binary mask


def real_shape(weight):
    return (weight.real if isinstance(weight, Cplx) else weight).shape


def pattern(draw, shape):
    """A random binary pattern, some whole rows and columns zero."""
    density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0, 1.0]))
    keep = torch.rand(shape) < density
    if draw(st.booleans()):
        # whole output channels (structured sparsity), on either weight axis
        # of the two (a transposed convolution's outputs are its axis 1)
        axis = draw(st.sampled_from([0, 0, 1])) if len(shape) > 2 else 0
        rows = torch.rand(shape[axis]) < draw(st.sampled_from([0.3, 0.7]))
        keep[(slice(None),) * axis + (rows,)] = False
    if len(shape) > 1 and draw(st.integers(0, 3)):
        keep[:, torch.randint(shape[1], (1,))] = False
    return keep


def layer_class(family, d, complex_, kind):
    name = family if family.endswith(("Linear", "Bilinear")) else f"{family}{d}d"
    if complex_:
        name = "Cplx" + name
    if kind == "dense":
        return getattr(cnn, name) if complex_ else getattr(torch.nn, name)
    if kind in ("masked", "user_masked"):
        cls = getattr(masked, name + "Masked")
        return user_subclass(cls) if kind == "user_masked" else cls
    if kind == "user":
        return user_subclass(getattr(cnn, name) if complex_ else getattr(torch.nn, name))
    if kind in ("vd", "ard"):
        return getattr(relevance, name + kind.upper())
    if kind == "l0":
        return extensions.LinearL0
    if kind == "lasso":
        return extensions.LinearLASSO
    return getattr(extensions, name + kind)  # "VDScaleFree", "VDApprox", "VDBogus"


def kinds(family, complex_):
    found = ["dense", "dense", "masked", "masked", "masked", "masked", "vd", "ard", "user",
             "user_masked"]
    if family == "Linear" and not complex_:
        found += ["l0", "lasso"]
    if complex_:
        found += ["VDScaleFree", "VDApprox", "VDBogus"]
    return found


def sparsify(draw, layer, kind, ctx):
    """Masks, relevance or gates for ``layer``, some biases zero."""
    weight = layer.weight
    shape = real_shape(weight)
    with torch.no_grad():
        bias = getattr(layer, "bias", None)
        if bias is not None and draw(st.booleans()):
            for part in (bias.real, bias.imag) if isinstance(bias, Cplx) else (bias,):
                part[torch.rand(part.shape) < 0.5] = 0.0
        if kind in ("masked", "user_masked"):
            mask = pattern(draw, shape).to(DTYPE)
            if kind == "masked" and draw(st.integers(0, 24)) == 0:
                mask.view(-1)[0] = 0.5
                ctx.bad.append(layer)
            layer.mask = mask
        elif hasattr(layer, "log_sigma2"):
            keep = pattern(draw, shape)
            parts = (weight.real, weight.imag) if isinstance(weight, Cplx) else (weight,)
            power = sum(part.detach() ** 2 for part in parts)
            layer.log_sigma2.copy_(torch.log(power) + torch.where(keep, -6.0, 6.0))
            ctx.keep[id(layer)] = keep
        elif kind == "l0":
            layer.log_alpha.uniform_(-3.0, 8.0)
            if draw(st.booleans()):
                layer.log_alpha[torch.randint(layer.log_alpha.shape[0], (1,))] = 20.0
        elif kind == "lasso":
            # relevance(0) keeps log|w| > 0: the kept weights get |w| > 1, the rest 0
            keep = pattern(draw, shape)
            weight.copy_(torch.where(keep, weight.sign() * (1 + weight.abs()), 0.0))


def weighted(draw, ctx, d, c, out=None, ungrouped=False, masked_=False):
    """A layer with a weight: ``(module, output features)``; ``masked_``: a masked one."""
    family = "Linear" if d == 0 else draw(st.sampled_from(["Conv"] * 3 + ["ConvTranspose"]))
    kind = "masked" if masked_ else draw(st.sampled_from(kinds(family, ctx.complex_)))
    cls = layer_class(family, d, ctx.complex_, kind)
    bias = draw(st.booleans())
    if family == "Linear":
        out = out or draw(st.integers(1, 5))
        if kind == "l0":
            group = draw(st.sampled_from([None, "input", "output"]))
            layer = cls(c, out, bias=bias, group=group, dtype=DTYPE)
        else:
            layer = cls(c, out, bias=bias, dtype=DTYPE)
    else:
        groups = 1
        if not ungrouped and draw(st.booleans()):
            groups = draw(st.sampled_from([g for g in range(2, c + 1) if c % g == 0] or [1]))
        if out is None:
            out = groups * draw(st.integers(1, 2 if groups > 1 else 5))
        elif out % groups:
            groups = 1
        kernel = draw(st.sampled_from([1, 3]))
        mode = "zeros"
        if family == "Conv" and kernel == 3:
            mode = draw(st.sampled_from(["zeros", "zeros", "reflect", "circular"]))
        layer = cls(c, out, kernel, padding=kernel // 2, groups=groups, bias=bias,
                    padding_mode=mode, dtype=DTYPE)
    sparsify(draw, layer, kind, ctx)
    return layer, out


def activation(draw, ctx):
    if ctx.complex_:
        choices = [
            lambda: cnn.CplxModReLU(0.3),
            lambda: cnn.CplxToCplx[torch.tanh](),
            lambda: cnn.CplxToCplx[torch.nn.ReLU](),
            lambda: cnn.CplxDropout(0.5),
            cnn.CplxIdentity,
            CplxFlip,
            CplxFlip,
        ]
    else:
        choices = [
            torch.nn.ReLU,
            torch.nn.Tanh,
            lambda: torch.nn.LeakyReLU(0.1),
            lambda: torch.nn.Dropout(0.5),
            torch.nn.Identity,
            torch.nn.Sigmoid,
            Flip,
            Flip,
        ]
    return draw(st.sampled_from(choices))()


def batchnorm(draw, ctx, d, c):
    name = f"BatchNorm{max(d, 1)}d"
    running = draw(st.sampled_from([True, True, False]))
    if ctx.complex_:
        variant = draw(st.sampled_from(["", "", "Naive", "Magnitude"]))
        layer = getattr(cnn, f"Cplx{variant}{name}")(c, track_running_stats=running)
    else:
        layer = getattr(torch.nn, name)(c, track_running_stats=running)
    layer = layer.to(DTYPE)
    with torch.no_grad():  # running statistics away from the initial ones
        for _ in range(2):
            layer(sample(ctx, 4, c, d) * 3 + 1)
    return layer


def pooling(draw, ctx, d):
    """A pooling layer that keeps the spatial size (the grammar's sizes are fixed)."""
    kind = draw(st.sampled_from(["MaxPool", "AvgPool", "AdaptiveMaxPool", "AdaptiveAvgPool"]))
    cls = getattr(cnn if ctx.complex_ else torch.nn, f"{'Cplx' if ctx.complex_ else ''}{kind}{d}d")
    if kind.startswith("Adaptive"):
        return cls(ctx.size)
    # torch's pooling wants windows no larger than the input
    kernel = 3 if ctx.size >= 3 else 1
    if kind == "MaxPool":
        return cls(kernel, stride=1, padding=kernel // 2)
    return cls(kernel, stride=1, padding=kernel // 2, count_include_pad=draw(st.booleans()))


def channel_activation(ctx, c):
    if ctx.complex_:
        layer = cnn.CplxChannelModReLU(c, dtype=DTYPE)
        parameter = layer.threshold
    else:
        layer = torch.nn.PReLU(c, dtype=DTYPE)
        parameter = layer.weight
    with torch.no_grad():
        parameter.uniform_(-0.5, 0.5)
    return layer


def sequential(ctx, *modules, cls=None):
    if cls is None:
        cls = cnn.CplxSequential if ctx.complex_ else torch.nn.Sequential
    return cls(*modules)


def sample(ctx, n, c, d):
    shape = (n, c) + (ctx.size,) * d
    if ctx.complex_:
        return Cplx(torch.randn(shape, dtype=DTYPE), torch.randn(shape, dtype=DTYPE))
    return torch.randn(shape, dtype=DTYPE)


def block(draw, ctx, d, c, depth):
    """One block of the grammar: ``(module, spatial dims, features)`` after it."""
    # mostly layers and activations: chains of them are where features go
    options = ["weighted"] * 4 + ["activation"] * 3 + ["batchnorm", "shared", "shared", "chain",
                                                       "batchnorm", "channel_activation"]
    if d > 0:
        options += ["pooling", "pooling"] + ["channels"] * 6
    if depth < 2:
        options += ["sequential", "residual", "skip", "skip", "concat", "functional"]
    if d == 0:
        options.append("bilinear")
    elif c * ctx.size**d <= 24:
        options.append("flatten")
    option = draw(st.sampled_from(options))
    if option == "weighted":
        layer, out = weighted(draw, ctx, d, c)
        return layer, d, out
    if option == "activation":
        return activation(draw, ctx), d, c
    if option == "batchnorm":
        return batchnorm(draw, ctx, d, c), d, c
    if option == "pooling":
        return pooling(draw, ctx, d), d, c
    if option == "channel_activation":
        return channel_activation(ctx, c), d, c
    if option == "shared":
        # a layer used twice after another layer, or an activation used twice
        first, hidden = weighted(draw, ctx, d, c)
        act = activation(draw, ctx)
        if not draw(st.integers(0, 2)):
            layer, _ = weighted(draw, ctx, d, hidden, out=hidden, ungrouped=True)
            return sequential(ctx, first, layer, act, layer), d, hidden
        second, hidden2 = weighted(draw, ctx, d, hidden)
        last, out = weighted(draw, ctx, d, hidden2)
        return sequential(ctx, first, act, second, act, last), d, out
    if option == "channels":
        # a convolution, steps that keep channel c on channel c, then a
        # convolution or a flatten into a linear layer: where channels go
        first, hidden = weighted(draw, ctx, d, c, ungrouped=True, masked_=draw(st.booleans()))
        steps = []
        for _ in range(draw(st.integers(1, 3))):
            step = draw(st.sampled_from(["batchnorm", "activation", "pooling", "channel",
                                         "depthwise"]))
            if step == "depthwise":
                kind = draw(st.sampled_from(["dense", "masked", "vd"]))
                kernel = draw(st.sampled_from([1, 3]))
                mode = draw(st.sampled_from(["zeros", "reflect"])) if kernel == 3 else "zeros"
                layer = layer_class("Conv", d, ctx.complex_, kind)(
                    hidden, hidden, kernel, padding=kernel // 2, groups=hidden,
                    padding_mode=mode, dtype=DTYPE)
                sparsify(draw, layer, kind, ctx)
                steps.append(layer)
            elif step == "batchnorm":
                steps.append(batchnorm(draw, ctx, d, hidden))
            elif step == "pooling":
                steps.append(pooling(draw, ctx, d))
            elif step == "channel":
                steps.append(channel_activation(ctx, hidden))
            else:
                steps.append(activation(draw, ctx))
        if hidden * ctx.size**d <= 24 and draw(st.booleans()):
            flatten, _, features = block_flatten(draw, ctx, d, hidden)
            last, out = weighted(draw, ctx, 0, features)
            return sequential(ctx, first, *steps, flatten, last), 0, out
        last, out = weighted(draw, ctx, d, hidden, ungrouped=True, masked_=draw(st.booleans()))
        return sequential(ctx, first, *steps, last), d, out
    if option == "flatten":
        return block_flatten(draw, ctx, d, c)
    if option == "bilinear":
        kind = draw(st.sampled_from(["dense", "masked", "vd", "ard"]))
        cls = layer_class("Bilinear", 0, ctx.complex_, kind)
        out = draw(st.integers(1, 4))
        layer = cls(c, c, out, bias=draw(st.booleans()), dtype=DTYPE)
        sparsify(draw, layer, kind, ctx)
        return SelfBilinear(layer), 0, out
    if option == "functional":
        first, hidden = weighted(draw, ctx, d, c)
        last, out = weighted(draw, ctx, d, hidden)
        return Functional(first, last), d, out
    if option == "concat":
        first, hidden = weighted(draw, ctx, d, c)
        last, out = weighted(draw, ctx, d, hidden)
        return Concat(first, activation(draw, ctx), last), d, c + out
    if option in ("chain", "residual", "skip"):
        # a layer, an activation, a layer: where features are removed
        first, hidden = weighted(draw, ctx, d, c)
        last, out = weighted(draw, ctx, d, hidden, out=c if option == "residual" else None)
        cls = {"chain": None, "residual": Residual, "skip": SkipMiddle}[option]
        return sequential(ctx, first, activation(draw, ctx), last, cls=cls), d, out
    modules = []
    for _ in range(draw(st.integers(1, 2))):
        module, d, c = block(draw, ctx, d, c, depth + 1)
        modules.append(module)
    return sequential(ctx, *modules), d, c


def block_flatten(draw, ctx, d, c):
    if ctx.complex_:
        flatten = draw(st.sampled_from([cnn.CplxFlatten, cnn.CplxToCplx[torch.nn.Flatten]]))(1)
    else:
        flatten = torch.nn.Flatten(1)
    return flatten, 0, c * ctx.size**d


@st.composite
def models(draw):
    """``(model, input, context)``: a random model in eval mode and an input for it.

    The context's ``other`` is a second input of the same shape.
    """
    torch.manual_seed(draw(st.integers(0, 2**16)))
    d = draw(st.sampled_from([0, 0, 1, 2, 3]))
    ctx = Context(draw(st.booleans()), 3 if d < 3 else 2)
    c = draw(st.integers(1, 4))
    x = sample(ctx, 2, c, d)
    ctx.other = sample(ctx, 2, c, d)
    modules = []
    for _ in range(draw(st.integers(1, 6))):
        module, d, c = block(draw, ctx, d, c, depth=1)
        modules.append(module)
    if ctx.complex_ and (d == 0 or c * ctx.size**d <= 24) and draw(st.booleans()):
        modules += read_out(draw, ctx, d, c)
    return sequential(ctx, *modules).eval(), x, ctx


def read_out(draw, ctx, d, c):
    """A classifier's head: a flatten, the complex features read out as real ones, a real layer."""
    head = []
    if d > 0:
        flatten, d, c = block_flatten(draw, ctx, d, c)
        head.append(flatten)
    parts = draw(st.booleans())
    head.append(cnn.CplxToConcatenatedReal(dim=-1) if parts else cnn.CplxModulus())
    ctx.complex_ = False  # the layers after the read-out are real
    layer, _ = weighted(draw, ctx, 0, 2 * c if parts else c)
    ctx.complex_ = True
    return head + [layer]


def reference(model, ctx):
    """The model with each Gaussian layer's dropped weights zeroed."""
    result = copy.deepcopy(model)
    with torch.no_grad():
        for original, layer in zip(model.modules(), result.modules()):
            keep = ctx.keep.get(id(original))
            if keep is not None:
                weight = layer.weight
                for part in (weight.real, weight.imag) if isinstance(weight, Cplx) else (weight,):
                    part.mul_(keep)
    return result


def as_complex(z):
    return torch.complex(z.real, z.imag) if isinstance(z, Cplx) else z


def name_of(model, layer):
    return next(name for name, module in model.named_modules() if module is layer)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(models(), st.sampled_from([0.0, 0.5, 1.0]), st.booleans())
def test_compact_computes_what_the_model_computes_or_refuses(built, max_density, recorded):
    """With ``recorded``, compact follows one forward call on the input, and must hold on another."""
    model, x, ctx = built
    with torch.no_grad():
        expected = [as_complex(reference(model, ctx)(z)) for z in (x, ctx.other)]
    state = {key: value.clone() for key, value in model.state_dict().items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            small = compact_or_refusal(model, max_density, (x,) if recorded else None)
        finally:
            for key, value in model.state_dict().items():  # refused or not: unchanged
                assert torch.equal(value, state[key]), key
    if isinstance(small, ValueError):
        named = [f"`{name_of(model, layer)}` ({layer._get_name()})" for layer in ctx.bad]
        assert str(small).startswith("compact: `module` must have binary masks")
        assert any(str(small).endswith(f"got another on {name}") for name in named)
        return
    assert not ctx.bad, "a non-binary mask compacted"
    # users' masked layers stay, with a warning naming each; nothing else warns
    for warning in caught:
        assert str(warning.message).startswith("compact: kept `"), warning.message
    left = [m for m in small.modules() if getattr(_families.lookup(type(m)), "kind", "dense")
            != "dense"]
    assert not left, left
    for z, want in zip((x, ctx.other), expected):
        with torch.no_grad():
            got = as_complex(small(z))
        scale = max(1.0, want.abs().max().item())
        torch.testing.assert_close(got, want, rtol=1e-7, atol=1e-9 * scale)


def compact_or_refusal(model, max_density, example_inputs):
    try:
        return masked.compact(model, threshold=0.0, max_density=max_density,
                              example_inputs=example_inputs)
    except ValueError as error:
        return error
