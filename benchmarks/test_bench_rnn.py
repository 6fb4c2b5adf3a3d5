"""A complex GRU, ours against the same recurrence written in torch's native complex64.

One layer, input and hidden size 128, sequence length 128, batch 32, on one
thread: a training step (forward, a loss on the output, backward) and
inference (under :func:`torch.inference_mode`). The reference is written
here with ``torch.nn.Parameter``\\ s of dtype complex64 and the equations of
:class:`~cplxmodule.nn.CplxGRU` (split gates and gating products, the input
projection of the whole sequence computed at once, one complex product of
the hidden state per step, split functions applied on
:func:`torch.view_as_real`). Run with::

    python -m pytest benchmarks/test_bench_rnn.py --benchmark-enable

A third group times masked inference (the GRU's projections swapped for
their masked twins, half of each weight masked) against the dense GRU: the
masked projections are called as modules at every step, outside and inside
:func:`~cplxmodule.nn.cached`.

A fourth group times hidden-unit sparsity: the GRU made a
:class:`~cplxmodule.nn.relevance.CplxGRUUnitL0` with three quarters of its
unit gates closed (96 of 128 units), its masked twin from
:func:`~cplxmodule.nn.relevance.compute_ard_masks` and
:func:`~cplxmodule.nn.masked.to_masked` (``masked``, the reference; also
inside :func:`~cplxmodule.nn.cached`, ``masked-cached``), and
:func:`~cplxmodule.nn.masked.compact` of it (``compact``, a
:class:`~cplxmodule.nn.masked.CompactRecurrent` of 32 units), with the
dense GRU of all 128 units for scale.

The training step and inference also run under ``torch.compile``
(``benchmarks/_compiling.py``: inductor, the default mode,
``fullgraph=True``; ``cplxmodule-compiled`` and
``torch-complex64-compiled``). Only the model is compiled; the loss and
``backward`` stay eager. The recurrence is a Python loop, which dynamo
unrolls: a graph of all 128 steps, long to compile (the first call's
wall-clock time is kept in ``extra_info["first_call_s"]``). Inductor has no
complex kernels, so the native model runs torch's eager complex ops inside
its compiled graph.

``benchmarks/conftest.py`` prints each time over the reference's
(``torch-complex64``; ``dense`` for masked inference; ``masked`` for unit
sparsity). On a busy machine add
``--benchmark-timer=time.process_time``.
"""

import contextlib

import pytest
import torch
import torch.nn.functional as F
from _compiling import NATIVE, VARIANTS, compiled, warm_up

from cplxmodule import cplx
from cplxmodule.nn import CplxGRU, cached
from cplxmodule.nn.masked import compact, to_masked
from cplxmodule.nn.relevance import compute_ard_masks, to_bayesian

pytestmark = pytest.mark.usefixtures("one_thread")

LENGTH, BATCH, INPUT, HIDDEN = 128, 32, 128, 128


def _split(f, z):
    return torch.view_as_complex(f(torch.view_as_real(z)))


def _split_mul(a, b):
    return torch.view_as_complex(torch.view_as_real(a) * torch.view_as_real(b))


class _NativeGRU(torch.nn.Module):
    """torch's GRU equations on complex64, every gate and gating product split."""

    def __init__(self, gru):
        super().__init__()
        for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
            value = getattr(gru, name)
            self.register_parameter(
                name, torch.nn.Parameter(torch.complex(value.real, value.imag).detach().clone())
            )

    def forward(self, x):
        input_gates = F.linear(x, self.weight_ih_l0, self.bias_ih_l0)
        h = x.new_zeros(x.shape[1], self.weight_hh_l0.shape[1])
        outputs = []
        for gates in input_gates:
            hidden_gates = F.linear(h, self.weight_hh_l0, self.bias_hh_l0)
            i_r, i_z, i_n = gates.chunk(3, -1)
            h_r, h_z, h_n = hidden_gates.chunk(3, -1)
            r = _split(torch.sigmoid, i_r + h_r)
            z = _split(torch.sigmoid, i_z + h_z)
            n = _split(torch.tanh, i_n + _split_mul(r, h_n))
            h = _split_mul(_split(lambda t: 1 - t, z), n) + _split_mul(z, h)
            outputs.append(h)
        return torch.stack(outputs)


def _models():
    torch.manual_seed(0)
    ours = CplxGRU(INPUT, HIDDEN)
    return ours, _NativeGRU(ours)


def _input():
    torch.manual_seed(1)
    return cplx.randn(LENGTH, BATCH, INPUT)


def _run(variant):
    """The model and its ``forward()`` in ``variant``, returning a native complex output."""
    ours, native = _models()
    x = _input()
    if variant.startswith(NATIVE):
        x = cplx.to_complex(x)
        model = compiled(native, variant)
        return native, lambda: model(x)
    model = compiled(ours, variant)
    return ours, lambda: cplx.to_complex(model(x)[0])


@pytest.mark.parametrize("variant", VARIANTS)
def test_training_step(benchmark, variant):
    model, forward = _run(variant)

    def step():
        model.zero_grad(set_to_none=True)
        torch.view_as_real(forward()).square().mean().backward()

    benchmark.group = f"gru {INPUT}-{HIDDEN} length {LENGTH} batch {BATCH}: training step"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    warm_up(benchmark, variant, step)
    benchmark(step)


@pytest.mark.parametrize("variant", VARIANTS)
def test_inference(benchmark, variant):
    _, forward = _run(variant)

    def run():
        with torch.inference_mode():
            return forward()

    benchmark.group = f"gru {INPUT}-{HIDDEN} length {LENGTH} batch {BATCH}: inference"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    warm_up(benchmark, variant, run)
    benchmark(run)


def _inference(model, in_cached):
    """A call of ``model`` on the input in inference mode, inside ``cached`` if asked."""
    x = _input()

    def run():
        with torch.inference_mode(), cached(model) if in_cached else contextlib.nullcontext():
            return model(x)

    return run


@pytest.mark.parametrize("variant", ["dense", "masked", "masked-cached"])
def test_masked_inference(benchmark, variant):
    model, _ = _models()
    if variant != "dense":
        torch.manual_seed(2)
        model = to_masked(model)
        for layer in (model.ih_l0, model.hh_l0):
            layer.mask = torch.rand(layer.weight.shape) < 0.5
    run = _inference(model, variant == "masked-cached")
    benchmark.group = f"gru {INPUT}-{HIDDEN} length {LENGTH} batch {BATCH}: masked inference"
    benchmark.extra_info.update(variant=variant, reference="dense")
    benchmark(run)


def _unit_sparse(variant):
    """The GRU with 96 of its 128 units closed: dense (all units), masked or compact."""
    dense, _ = _models()
    if variant == "dense":
        return dense
    gated = to_bayesian(dense, "unit_l0").eval()
    with torch.no_grad():
        gated.log_alpha[:, HIDDEN // 4 :] = 20.0
    masked = to_masked(gated, compute_ard_masks(gated)).eval()
    return compact(masked) if variant == "compact" else masked


@pytest.mark.parametrize("variant", ["dense", "masked", "masked-cached", "compact"])
def test_unit_sparse_inference(benchmark, variant):
    model = _unit_sparse("masked" if variant == "masked-cached" else variant)
    run = _inference(model, variant == "masked-cached")
    benchmark.group = (f"gru {INPUT}-{HIDDEN} length {LENGTH} batch {BATCH}: "
                       f"{HIDDEN // 4} of {HIDDEN} units kept")
    benchmark.extra_info.update(variant=variant, reference="masked")
    benchmark(run)


def test_unit_sparse_models_agree():
    masked, small = _unit_sparse("masked"), _unit_sparse("compact")
    assert small.hidden_size == HIDDEN // 4
    x = _input()
    with torch.no_grad():
        torch.testing.assert_close(cplx.to_complex(small(x)[0]), cplx.to_complex(masked(x)[0]),
                                   rtol=1e-4, atol=1e-5)


def test_models_agree():
    ours, native = _models()
    x = _input()
    output = ours(x)[0]
    expected = native(cplx.to_complex(x))
    torch.testing.assert_close(cplx.to_complex(output), expected, rtol=1e-4, atol=1e-5)
    torch.view_as_real(cplx.to_complex(output)).square().mean().backward()
    torch.view_as_real(expected).square().mean().backward()
    torch.testing.assert_close(
        cplx.to_complex(ours.hh_l0.weight.grad),
        native.weight_hh_l0.grad,
        rtol=1e-3,
        atol=1e-6,
    )
