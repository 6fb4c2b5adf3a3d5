"""A complex transformer encoder against the same model in torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_transformer.py --benchmark-enable

The model: :class:`~cplxmodule.nn.CplxTransformerEncoder` of 2 layers,
d_model 128, 4 heads, feed-forward 512, no dropout, batch-first input of
16 sequences of 64 elements. ``torch-complex64`` is what a user of torch's
native complex tensors writes for the same equations, from the layer's own
parameters as complex64 ``Parameter`` s: the projections by complex
``F.linear``, the scores :math:`\\Re(q k^H)/\\sqrt{d}`, a real softmax, the
weights cast to complex and applied to the values, the split ReLU on the
parts, and the :math:`2 \\times 2` whitening layer norm in widely linear
form. Each group is checked for equal outputs before it is timed. Two
groups: ``inference`` (forward under ``torch.no_grad()``, eval mode) and
``train-step`` (forward, squared-error loss, backward, SGD step). Runs on
one thread; ``benchmarks/conftest.py`` prints each time divided by the
native eager time (below 1 is faster). Each group has four variants: ours
(``cplxmodule``) and the native model, eager and under ``torch.compile``
(``-compiled``: inductor, the default mode, ``fullgraph=True``, see
``benchmarks/_compiling.py``). Only the model is compiled; the loss,
``backward`` and the SGD step stay eager. The first call compiles; its
wall-clock time is kept in ``extra_info["first_call_s"]``. Inductor has no
complex kernels: the native model runs torch's eager complex ops inside its
compiled graph. On a busy machine add
``--benchmark-timer=time.process_time``.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from _compiling import NATIVE, OURS, VARIANTS, compiled, warm_up

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxTransformerEncoder, CplxTransformerEncoderLayer

pytestmark = pytest.mark.usefixtures("one_thread")

BATCH, SEQ, D_MODEL, HEADS, FF, LAYERS = 16, 64, 128, 4, 512, 2


def _complex_parameter(z):
    return torch.nn.Parameter(cplx.to_complex(z).detach().clone())


class NativeLinear(torch.nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.weight = _complex_parameter(layer.weight)
        self.bias = _complex_parameter(layer.bias)

    def forward(self, z):
        return F.linear(z, self.weight, self.bias)


class NativeLayerNorm(torch.nn.Module):
    """Whitening of each sample's (real, imaginary) pairs, widely linear on complex64."""

    def __init__(self, norm):
        super().__init__()
        self.eps = norm.eps
        self.weight = torch.nn.Parameter(norm.weight.detach().clone())
        self.bias = torch.nn.Parameter(norm.bias.detach().clone())

    @staticmethod
    def _widely_linear(a, b, c, d, z):
        # the real map [[a, b], [c, d]] as alpha z + beta conj(z)
        alpha = torch.complex((a + d) / 2, (c - b) / 2)
        beta = torch.complex((a - d) / 2, (c + b) / 2)
        return alpha * z + beta * z.conj()

    def forward(self, z):
        centred = z - z.mean(-1, keepdim=True)
        power = (centred.abs() ** 2).mean(-1, keepdim=True)
        square = (centred * centred).mean(-1, keepdim=True)
        a = (power + square.real) / 2 + self.eps
        d = (power - square.real) / 2 + self.eps
        c = square.imag / 2
        s = torch.sqrt(a * d - c * c)
        inv = torch.rsqrt(a + d + 2 * s) / s
        white = self._widely_linear((d + s) * inv, -c * inv, -c * inv, (a + s) * inv, centred)
        w, b = self.weight, self.bias
        return self._widely_linear(w[0, 0], w[0, 1], w[1, 0], w[1, 1], white) + torch.complex(
            b[0], b[1]
        )


class NativeEncoderLayer(torch.nn.Module):
    def __init__(self, layer):
        super().__init__()
        attn = layer.self_attn
        self.heads, self.head_dim = attn.num_heads, attn.head_dim
        self.q, self.k, self.v, self.out = (
            NativeLinear(p) for p in (attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj)
        )
        self.linear1, self.linear2 = NativeLinear(layer.linear1), NativeLinear(layer.linear2)
        self.norm1, self.norm2 = NativeLayerNorm(layer.norm1), NativeLayerNorm(layer.norm2)

    def _attention(self, x):
        n, length, e = x.shape

        def heads(z):
            return z.view(n, length, self.heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        scores = (q @ k.conj().transpose(-2, -1)).real / math.sqrt(self.head_dim)
        weights = torch.softmax(scores, dim=-1)
        out = (weights.to(v.dtype) @ v).transpose(1, 2).reshape(n, length, e)
        return self.out(out)

    def forward(self, x):
        x = self.norm1(x + self._attention(x))
        h = self.linear1(x)
        h = torch.complex(F.relu(h.real), F.relu(h.imag))
        return self.norm2(x + self.linear2(h))


def _models():
    torch.manual_seed(0)
    layer = CplxTransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.0, batch_first=True)
    ours = CplxTransformerEncoder(layer, LAYERS)
    # norms away from their identity initialisation, so the check covers them
    with torch.no_grad():
        for name, param in ours.named_parameters():
            if "norm" in name:
                param.add_(0.1 * torch.randn_like(param))
    native = torch.nn.Sequential(*(NativeEncoderLayer(sub) for sub in ours.layers))
    return ours, native


def _inputs():
    torch.manual_seed(1)
    x = torch.randn(BATCH, SEQ, D_MODEL, dtype=torch.complex64)
    target = torch.randn(BATCH, SEQ, D_MODEL, dtype=torch.complex64)
    return x, target


OURS_MODEL, NATIVE_MODEL = _models()


def _run(variant):
    """The model and its input and target in the variant's representation."""
    x, target = _inputs()
    if variant.startswith(NATIVE):
        return NATIVE_MODEL, x, target
    return OURS_MODEL, cplx.from_complex(x), cplx.from_complex(target)


def _loss(variant, out, target):
    if variant.startswith(NATIVE):
        return (out - target).abs().square().mean()
    error = out - target
    return (error.real.square() + error.imag.square()).mean()


def _check_same_output():
    with torch.no_grad():
        ours = cplx.to_complex(OURS_MODEL.eval()(_run(OURS)[1]))
        native = NATIVE_MODEL.eval()(_run(NATIVE)[1])
    torch.testing.assert_close(ours, native, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("variant", VARIANTS)
def test_inference(benchmark, variant):
    benchmark.group = "encoder-inference"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    _check_same_output()
    model, x, _ = _run(variant)
    forward = compiled(model, variant)

    def step():
        with torch.no_grad():
            return forward(x)

    warm_up(benchmark, variant, step)
    benchmark(step)


@pytest.mark.parametrize("variant", VARIANTS)
def test_train_step(benchmark, variant):
    benchmark.group = "encoder-train-step"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    _check_same_output()
    model, x, target = _run(variant)
    model.train()
    # a tiny learning rate: the timed steps keep the model where it was checked
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-9)
    forward = compiled(model, variant)

    def step():
        optimizer.zero_grad()
        _loss(variant, forward(x), target).backward()
        optimizer.step()

    warm_up(benchmark, variant, step)
    benchmark(step)
