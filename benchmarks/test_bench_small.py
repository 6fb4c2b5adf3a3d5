"""A small complex MLP, ours against the same model in torch's native complex64.

The sizes of the published package's examples (an MLP 32 -> 64 -> 10 on
sklearn's digits, batch 64), on one and on two threads: a dense training step, a
variational dropout training step and masked inference (outside
:func:`cplxmodule.nn.cached`, under :func:`torch.inference_mode`). The
reference is written here in torch's complex dtype
(``torch.nn.Linear(..., dtype=torch.complex64)``, with the same variational
dropout math: local reparameterisation and the complex VD penalty), so no
peer package is needed. Both sides take real data promoted to complex, a
split ReLU, and cross-entropy on the output's modulus; a training step is
``zero_grad``, forward, loss, backward and an SGD step.

The reference (``torch-complex64``) is what complextorch runs: its split
ReLU applies ReLU to ``.real`` and ``.imag`` and joins them with
``torch.complex``. A faster native split ReLU, one ReLU on the
``view_as_real`` of the tensor, is timed too
(``torch-complex64-view-relu``), so the tables show where we stand against
the best that native complex does. Run with::

    python -m pytest benchmarks/test_bench_small.py --benchmark-enable

``benchmarks/conftest.py`` prints each time over the reference's. On a
busy machine add ``--benchmark-timer=time.process_time``.

Each model is also timed under ``torch.compile`` (inductor, the default
mode, ``fullgraph=True``, ``benchmarks/_compiling.py``): ours (``cplxmodule-compiled``) and the reference
(``torch-complex64-compiled``). Only the model is compiled, as a user
would: the modulus, the loss, the VD penalty, the backward call and the
SGD step stay eager (the backward graph is compiled with the forward by
AOTAutograd). Compilation happens before timing, in warm-up calls whose
first call's wall-clock time, compilation included, is kept in the
benchmark's ``extra_info["first_call_s"]`` (``--benchmark-json``). Inductor
has no complex kernels: in the native model it falls back to torch's
eager complex ops, which is part of what is measured. Should the native
model fail to compile, its compiled variant is skipped with the error as
the reason, rather than failing the run.

Masked inference is also timed compiled as one deploys a model for
inference on the CPU (``-compiled-frozen``): inductor's ``freezing``, which
folds the parameters and what is computed from them alone (the masked
weights; ours, the block matrices of its products) into constants, and
its ``cpp_wrapper`` (``benchmarks/_compiling.py``).
"""

import pytest
import torch
import torch.nn.functional as F
from _compiling import (
    NATIVE,
    NATIVE_COMPILED,
    NATIVE_FROZEN,
    OURS,
    OURS_COMPILED,
    OURS_FROZEN,
    compiled,
    settings,
    warm_up,
)

from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear, CplxSequential, CplxToCplx
from cplxmodule.nn.masked import CplxLinearMasked
from cplxmodule.nn.relevance import CplxLinearVD
from cplxmodule.nn.relevance.functional import kl_cplx_vd


NATIVE_VIEW = "torch-complex64-view-relu"
VARIANTS = [NATIVE, NATIVE_VIEW, NATIVE_COMPILED, OURS, OURS_COMPILED]
SIZES = (32, 64, 10)
BATCH = 64
KL_WEIGHT = 1e-3


class _NativeSplitReLU(torch.nn.Module):
    """complextorch's split ReLU (``CVSplitReLU``): ReLU on each part, then ``torch.complex``.

    Its default ``inplace=True`` fails here (the ReLU of the imaginary part
    overwrites what the backward pass of the real part's needs), so the
    out-of-place form it takes with ``inplace=False``.
    """

    def forward(self, input):
        return torch.complex(F.relu(input.real), F.relu(input.imag))


class _NativeViewReLU(torch.nn.Module):
    """A split ReLU faster than complextorch's: one ReLU on the ``(..., 2)`` real view."""

    def forward(self, input):
        return torch.view_as_complex(F.relu(torch.view_as_real(input)))


class _NativeLinearVD(torch.nn.Linear):
    """Complex variational dropout on torch's complex64: the math of ``CplxLinearVD``."""

    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features, dtype=torch.complex64)
        self.log_sigma2 = torch.nn.Parameter(torch.full((out_features, in_features), -10.0))

    def forward(self, input):
        mean = F.linear(input, self.weight, self.bias)
        if not self.training:
            return mean
        modulus2 = torch.view_as_real(input).square().sum(-1)
        var = F.linear(modulus2, torch.exp(self.log_sigma2))
        std = var.add_(torch.finfo(var.dtype).tiny).sqrt_()
        # complex randn: each part of variance 1/2
        return mean + std * torch.randn(var.shape, dtype=mean.dtype)

    @property
    def penalty(self):
        modulus2 = torch.view_as_real(self.weight).square().sum(-1)
        return kl_cplx_vd(self.log_sigma2 - torch.log(modulus2 + 1e-24))


class _NativeLinearMasked(torch.nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features, dtype=torch.complex64)
        self.register_buffer("mask", None)

    def forward(self, input):
        return F.linear(input, self.weight * self.mask, self.bias)


_NATIVE_RELU = {NATIVE: _NativeSplitReLU, NATIVE_VIEW: _NativeViewReLU,
                NATIVE_COMPILED: _NativeSplitReLU, NATIVE_FROZEN: _NativeSplitReLU}


def _mlp(sequential, linear, relu):
    n_in, n_hidden, n_out = SIZES
    return sequential(linear(n_in, n_hidden), relu(), linear(n_hidden, n_out))


def _models(kind, native_relu=_NativeSplitReLU):
    """Ours and the native twin, with the same parameters and masks."""
    torch.manual_seed(0)
    ours_linear, native_linear = {
        "dense": (CplxLinear, lambda i, o: torch.nn.Linear(i, o, dtype=torch.complex64)),
        "vd": (CplxLinearVD, _NativeLinearVD),
        "masked": (CplxLinearMasked, _NativeLinearMasked),
    }[kind]
    ours = _mlp(CplxSequential, ours_linear, CplxToCplx[torch.nn.ReLU])
    native = _mlp(torch.nn.Sequential, native_linear, native_relu)
    with torch.no_grad():
        for a, b in zip(ours, native):
            if hasattr(a, "weight"):
                b.weight.copy_(torch.complex(a.weight.real, a.weight.imag))
                b.bias.copy_(torch.complex(a.bias.real, a.bias.imag))
            if kind == "masked" and hasattr(a, "weight"):
                mask = (torch.rand(a.weight.shape) < 0.5).float()
                a.mask = mask
                b.mask = mask
    return ours, native


def _group(what, threads):
    return f"mlp {'-'.join(map(str, SIZES))} batch {BATCH}: {what}, {threads} thread(s)"


def _data():
    torch.manual_seed(1)
    x = torch.randn(BATCH, SIZES[0])
    return x, torch.randint(0, SIZES[-1], (BATCH,))


def _step(model, forward, input, target, modulus, vd):
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(modulus(forward(input)), target)
        if vd:
            loss = loss + KL_WEIGHT * sum(m.penalty.sum() for m in model if hasattr(m, "penalty"))
        loss.backward()
        optimizer.step()

    return step


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", ["dense", "vd"])
def test_training_step(benchmark, threads, kind, variant):
    ours, native = _models(kind, _NATIVE_RELU.get(variant, _NativeSplitReLU))
    x, target = _data()
    if variant in _NATIVE_RELU:
        model, input, modulus = native, x.to(torch.complex64), torch.abs
    else:
        model, input, modulus = ours, Cplx(x), abs
    step = _step(model, compiled(model, variant), input, target, modulus, kind == "vd")
    benchmark.group = _group(f"{kind} training step", threads)
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    warm_up(benchmark, variant, step)
    benchmark(step)


@pytest.mark.parametrize("variant", VARIANTS + [NATIVE_FROZEN, OURS_FROZEN])
def test_masked_inference(benchmark, threads, variant):
    ours, native = _models("masked", _NATIVE_RELU.get(variant, _NativeSplitReLU))
    x, _ = _data()
    if variant in _NATIVE_RELU:
        model, input = native, x.to(torch.complex64)
    else:
        model, input = ours, Cplx(x)
    model = compiled(model, variant)
    benchmark.group = _group("masked inference", threads)
    benchmark.extra_info.update(variant=variant, reference=NATIVE)

    def forward():
        with torch.inference_mode():
            return model(input)

    with settings(variant):
        warm_up(benchmark, variant, forward)
        benchmark(forward)


def test_models_agree():
    # the two sides compute the same map: dense and masked outputs, and the
    # VD layer's mean and penalty
    x, _ = _data()
    for kind, relu in [("dense", _NativeSplitReLU), ("dense", _NativeViewReLU),
                       ("masked", _NativeSplitReLU), ("vd", _NativeSplitReLU)]:
        ours, native = _models(kind, relu)
        ours.eval()
        native.eval()
        with torch.no_grad():
            out = ours(Cplx(x))
            expected = native(x.to(torch.complex64))
        torch.testing.assert_close(torch.complex(out.real, out.imag), expected)
        if kind == "vd":
            torch.testing.assert_close(
                sum(m.penalty.sum() for m in ours if hasattr(m, "penalty")),
                sum(m.penalty.sum() for m in native if hasattr(m, "penalty")),
            )
