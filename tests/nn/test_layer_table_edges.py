"""Numeric edges of every layer of the table: special points, empty sizes, half precision, size.

Each test runs over :data:`~tests.nn.layer_table.LAYERS` and makes
several checks per layer; a check is named in :data:`EDGE_SKIPS` and
:data:`EDGE_XFAILS` by ``(layer id, check)``, the checks being
:data:`CHECKS`. An expected failure is strict: a listed check that passes
fails the test. The references are independent of the float32 code under
test: the float64 computation of the same layer at the same point (whose
rounding errors are some nine orders of magnitude smaller), and torch's
native complex twin of the layer (``LayerInfo.reference``).

- ``grad_zeros``, ``grad_tiny20``, ``grad_tiny38``, ``grad_cancel``: the
  float32 gradient with respect to the inputs and the parameters agrees
  with the float64 gradient at the same point (relative to its scale): at
  inputs of exact zeros, of moduli near 1e-20 and 1e-38 (the squares
  underflow in float32), and at inputs whose results cancel (a constant
  input, equal inputs). An ``isfinite`` check cannot catch a gradient
  of 7e36 where the true one is 1.
- ``empty_batch`` (eval mode) and ``empty_batch_train``: an input of no
  examples gives what torch's twin gives (or a ``ValueError`` naming the
  layer); a train-mode step leaves the parameters and buffers finite.
- ``zero_length``: a size of zero in any dimension after the batch
  dimension gives torch's behaviour (its output, or an error) or a
  ``ValueError`` naming the layer; never an output where torch raises.
- ``float16``, ``bfloat16``: the module and its inputs in half precision
  (on the CPU, outside autocast) give, in that dtype, the float32 result
  of the same (rounded) parameters and inputs within that dtype's
  tolerance; ``autocast_bf16``: the float32 module under
  ``torch.autocast("cpu", dtype=torch.bfloat16)`` likewise.
- ``large``: float32 inputs of standard deviation 1e10 give finite outputs
  wherever the float64 computation does (and fits float32), close to it.

Layers are in train mode, except those that draw random numbers in train
mode (``LayerInfo.stochastic``), which are in eval mode.
"""

import copy
import functools
import math

import pytest
import torch

from cplxmodule import Cplx

from .layer_table import LAYERS, map_parts

pytestmark = pytest.mark.usefixtures("one_thread")

CHECKS = (
    "grad_zeros", "grad_tiny20", "grad_tiny38", "grad_cancel",
    "empty_batch", "empty_batch_train", "zero_length",
    "float16", "bfloat16", "autocast_bf16",
    "large",
)

_NO_EMPTY_FFT = ("torch.fft raises on an empty input on the CPU (MKL: 'Inconsistent "
                 "configuration parameters'), so torch's twin gives no empty output")
_NO_HALF_FFT = "torch.fft has no float16 or bfloat16 on the CPU ('Unsupported dtype')"
_RESHAPE = ("the table's reference reshapes with -1, which torch cannot resolve for 0 "
            "elements; the layer returns the empty output that torch's twin returns")

#: ``{(layer id, check): reason}``: a check that does not apply to the layer
EDGE_SKIPS = {
    **{(layer, "empty_batch"): _NO_EMPTY_FFT
       for layer in ("CplxSpectralPool1d", "CplxSpectralPool2d", "CplxSpectralPool3d",
                     "CplxAnalytic", "CplxAnalyticSignalLoss")},
    **{(layer, "zero_length"): _NO_EMPTY_FFT
       for layer in ("CplxSpectralPool1d", "CplxSpectralPool2d", "CplxSpectralPool3d")},
    ("InterleavedRealToCplx", "empty_batch"): _RESHAPE,
    ("InterleavedRealToCplx", "zero_length"): _RESHAPE,
    ("CplxGroupNorm", "empty_batch"): _RESHAPE,
    **{(layer, "zero_length"): "torch's conv1d error for an input shorter than the kernel, "
                               "as torch.nn.Conv1d raises"
       for layer in ("CplxGaborConv1d", "CplxMorletConv1d")},
    ("CplxLogErrorLoss", "grad_zeros"): "log|x| is -inf at zero (documented): no gradient",
    **{(layer, dtype): _NO_HALF_FFT
       for layer in ("CplxSpectralPool1d", "CplxSpectralPool2d", "CplxSpectralPool3d",
                     "CplxFFT", "CplxIFFT", "CplxSTFT", "CplxISTFT", "CplxAnalytic", "CplxS4D",
                     "CplxAnalyticSignalLoss")
       for dtype in ("float16", "bfloat16")},
    **{("CplxAvgPool3d", dtype): "torch's avg_pool3d has no float16 or bfloat16 CPU kernel"
       for dtype in ("float16", "bfloat16")},
    **{(layer, dtype): "torch's sparse CSR matmul has no float16 or bfloat16 CPU kernel"
       for layer in ("SparseLinear", "CplxSparseLinear") for dtype in ("float16", "bfloat16")},
}

#: ``{(layer id, check): reason}``: a known failure, expected strictly
EDGE_XFAILS = {
}

_unknown = {key for key in {**EDGE_SKIPS, **EDGE_XFAILS} if key[1] not in CHECKS}
assert not _unknown, f"unknown checks {_unknown}"
_ids = {info.id for info in LAYERS}
_stale = {key for key in {**EDGE_SKIPS, **EDGE_XFAILS} if key[0] not in _ids}
assert not _stale, f"layers not in the table {_stale}"

# float32 against float64: the rounding of float32 (6e-8) times the
# condition of the small layers here, with room
GRAD_RTOL = 1e-3
# below float32's smallest normal number a value keeps few digits: a float32
# gradient there may be off by that much
GRAD_ATOL = torch.finfo(torch.float32).tiny
HALF_RTOL = {torch.float16: 1e-2, torch.bfloat16: 5e-2}
LARGE_RTOL = 1e-3

# a float32 gradient that is zero in exact arithmetic (by a symmetry of the
# point) comes out as rounding noise: a few float32 ulps of the largest
# gradient, at the point or at ordinary inputs
GRAD_FLOOR = 1e-6

_TINY = {"grad_tiny20": 1e-20, "grad_tiny38": 1e-38}

#: the constructor sample the gradient checks use, where sample 0 does not fit them
GRAD_SAMPLE = {
    # eps=None is the dtype's machine epsilon, as in torch.nn.RMSNorm: near zero
    # the float32 and float64 layers differ by design
    "CplxRMSNorm": 1,
}


class _Checks:
    """Run named checks of one layer; failures, skips and strict expected failures by name."""

    def __init__(self, info):
        self.info, self.errors, self.expected, self.ran = info, [], [], 0

    def __call__(self, name, check, *args):
        key = (self.info.id, name)
        if key in EDGE_SKIPS:
            return
        self.ran += 1
        try:
            check(*args)
        except Exception as error:  # a check fails by any exception, reported below
            failure = f"{name}: {type(error).__name__}: {error}"
        else:
            failure = None
        if key in EDGE_XFAILS:
            if failure is None:
                self.errors.append(f"{name}: passes, but is listed in EDGE_XFAILS (strict): "
                                   f"{EDGE_XFAILS[key]}")
            else:
                self.expected.append(f"{name}: {EDGE_XFAILS[key]}")
        elif failure is not None:
            self.errors.append(failure)

    def finish(self):
        if self.errors:
            pytest.fail("\n".join(self.errors), pytrace=False)
        if self.expected:
            pytest.xfail("; ".join(self.expected))
        if not self.ran:
            pytest.skip("; ".join(f"{name}: {reason}" for (layer, name), reason
                                  in EDGE_SKIPS.items() if layer == self.info.id))


def _each_layer():
    return [pytest.param(info, id=info.id) for info in LAYERS]


# --- inputs ------------------------------------------------------------------------------------


def _parts(inputs):
    """The floating tensors of ``inputs``, in order."""
    out = []
    for value in inputs:
        if isinstance(value, Cplx):
            out += [value.real, value.imag]
        elif isinstance(value, torch.Tensor) and value.is_floating_point():
            out.append(value)
    return out


def _special(info, name):
    """The float32 inputs of the check ``name``, exactly representable in float32."""
    x = info.inputs(batch=2, dtype=torch.float64, sample=GRAD_SAMPLE.get(info.id, 0))
    if name == "grad_zeros":
        x = map_parts(x, torch.zeros_like)
    elif name in _TINY:
        x = map_parts(x, lambda t: t * _TINY[name])
    elif name == "grad_cancel":
        shapes = {tuple(t.shape) for t in _parts(x)}
        if len(x) > 1 and len(shapes) == 1:
            # equal inputs: differences (of a loss, of keys and queries) cancel
            x = tuple(x[0] for _ in x)
        else:
            # a constant input: deviations from the mean, frequencies cancel
            x = tuple(_constant(v) for v in x)
    return map_parts(x, lambda t: t.to(torch.float32))


def _constant(value):
    if isinstance(value, Cplx):
        return Cplx(torch.full_like(value.real, 0.75), torch.full_like(value.imag, -0.5))
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return torch.full_like(value, 0.75)
    return value


def _leaves(inputs, dtype):
    """``inputs`` in ``dtype`` as new leaves that require grad, and those leaves."""
    leaves = []

    def leaf(t):
        t = t.detach().to(dtype).requires_grad_(True)
        leaves.append(t)
        return t
    return map_parts(inputs, leaf), leaves


def _mode(module, info):
    return module.train(not info.stochastic)


def _values(output):
    """The tensors of an output, in order: a Cplx as its two parts, containers flattened."""
    if isinstance(output, Cplx):
        return [output.real, output.imag]
    if isinstance(output, torch.Tensor):
        return [output.real, output.imag] if output.is_complex() else [output]
    if isinstance(output, dict):
        return [t for value in output.values() for t in _values(value)]
    if isinstance(output, (tuple, list)):
        return [t for value in output for t in _values(value)]
    if output is None:
        return []
    raise TypeError(f"unexpected output {type(output).__name__}")


def _cplx_values(output):
    if isinstance(output, Cplx):
        return [output]
    if isinstance(output, (tuple, list)):
        return [z for value in output for z in _cplx_values(value)]
    return []


def _floats(output):
    """The floating tensors of an output (a Cplx or complex tensor as its two parts)."""
    return [t for t in _values(output) if t.is_floating_point()]


# --- gradients at special points ---------------------------------------------------------------
def _gradients(module, inputs, dtype):
    """``(name, gradient)`` of a weighted sum of the outputs, w.r.t. the inputs and parameters."""
    x, leaves = _leaves(inputs, dtype)
    params = [p for p in module.parameters() if p.requires_grad]
    out = _floats(module(*x))
    g = torch.Generator().manual_seed(1)
    loss = sum((t * torch.randn(t.shape, generator=g, dtype=torch.float64).to(dtype)).sum()
               for t in out)
    wrt = leaves + params
    grads = torch.autograd.grad(loss, wrt, allow_unused=True) if loss.requires_grad \
        else [None] * len(wrt)
    names = [f"input part {i}" for i in range(len(leaves))] + \
            [name for name, p in module.named_parameters() if p.requires_grad]
    return [(n, torch.zeros_like(w) if g is None else g) for n, w, g in zip(names, wrt, grads)]


def _largest(gradients):
    return max((g.abs().max().item() for _, g in gradients if g.numel()), default=0.0)


def _gradient_errors(single, double, floor):
    """What is wrong with the float32 gradients ``single`` against the float64 ``double``."""
    for (label, g32), (_, g64) in zip(single, double):
        if not g64.isfinite().all():
            return f"the float64 gradient w.r.t. {label} is not finite"
        # where the true gradient is beyond float32's range, float32 cannot
        # hold it: an infinity there is as good as any value
        fits = g64.abs() <= torch.finfo(torch.float32).max
        g32, g64 = g32[fits], g64[fits]
        scale = g64.abs().max().item() if g64.numel() else 0.0
        error = (g32.double() - g64).abs().nan_to_num(math.inf)
        worst = error.max().item() if error.numel() else 0.0
        if worst > GRAD_RTOL * scale + floor + GRAD_ATOL:
            return (f"float32 gradient w.r.t. {label} off by {worst:.3g} (float64 gradient's "
                    f"scale {scale:.3g}; float32 max {g32.abs().max().item():.3g})")
    return None


def _check_gradients(info, modules, name, natural):
    inputs = _special(info, name)
    single = _gradients(modules[torch.float32], inputs, torch.float32)
    double = _gradients(modules[torch.float64], inputs, torch.float64)
    error = _gradient_errors(single, double, GRAD_FLOOR * _largest(double))
    if error is not None:
        # at a point where the gradient is zero by symmetry, float32 leaves
        # rounding noise of the gradient's scale at ordinary inputs
        error = _gradient_errors(single, double, GRAD_FLOOR * max(_largest(double), natural()))
    assert error is None, error


@pytest.mark.parametrize("info", _each_layer())
def test_gradients_at_special_points(info):
    checks = _Checks(info)
    sample = GRAD_SAMPLE.get(info.id, 0)
    # one module per dtype for all the points (train-mode statistics are the batch's)
    modules = {dtype: _mode(info.make(dtype=dtype, sample=sample), info)
               for dtype in (torch.float32, torch.float64)}

    @functools.lru_cache(maxsize=None)
    def natural():
        x = info.inputs(batch=2, dtype=torch.float64, sample=sample)
        return _largest(_gradients(modules[torch.float64], x, torch.float64))

    for name in ("grad_zeros", "grad_tiny20", "grad_tiny38", "grad_cancel"):
        checks(name, _check_gradients, info, modules, name, natural)
    checks.finish()


# --- empty batches and zero-length sizes -------------------------------------------------------
def _names_layer(module, error):
    """Whether ``error`` is a ValueError naming the module's class or one of its submodules'."""
    names = {type(m).__name__ for m in module.modules()}
    return isinstance(error, ValueError) and any(f"{name}:" in str(error) for name in names)


def _run(f, *args):
    try:
        return f(*args), None
    except Exception as error:  # the behaviour under test: which error, if any
        return None, error


def _same_outcome(info, module, inputs):
    """The module does what torch's twin (the reference) does on ``inputs``, or raises clearly."""
    got, error = _run(module, *inputs)
    if error is not None and _names_layer(module, error):
        return
    if info.reference is None:
        assert error is None, f"raised {type(error).__name__}: {error} (not a ValueError " \
                              f"naming {info.id})"
        return
    want, ref_error = _run(info.reference, module, *inputs)
    if ref_error is not None:
        assert error is not None, (f"returned an output where torch raises "
                                   f"{type(ref_error).__name__}: {ref_error}")
        assert isinstance(error, (RuntimeError, type(ref_error))), (
            f"raised {type(error).__name__}: {error}; torch raises "
            f"{type(ref_error).__name__}: {ref_error}")
        return
    assert error is None, f"raised {type(error).__name__}: {error}; torch returns an output"
    got, want = _values(got), _values(want)
    assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want], \
        f"shapes {[tuple(t.shape) for t in got]}, torch's {[tuple(t.shape) for t in want]}"
    for a, b in zip(got, want):
        if a.is_floating_point() or a.is_complex():
            torch.testing.assert_close(a.to(b.dtype), b, equal_nan=True, atol=info.atol,
                                       rtol=1e-7)


def _check_empty_eval(info, module):
    _same_outcome(info, module, info.inputs(batch=0, dtype=torch.float64))


def _check_empty_train(info, evaluated):
    """Train mode does what eval mode does (checked above) and keeps the state finite."""
    module = info.make(dtype=torch.float64).train()
    x = info.inputs(batch=0, dtype=torch.float64)
    want, eval_error = _run(evaluated, *x)
    got, error = _run(module, *x)
    if error is not None and not _names_layer(module, error):
        assert eval_error is not None and type(error) is type(eval_error), (
            f"raised {type(error).__name__}: {error}; eval mode "
            + (f"raises {type(eval_error).__name__}" if eval_error else "returns an output"))
    if error is None and eval_error is None:
        shapes = [tuple(t.shape) for t in _floats(got)]
        expected = [tuple(t.shape) for t in _floats(want)]
        assert shapes == expected, f"shapes {shapes}, eval mode's {expected}"
    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        if t.is_floating_point():
            assert t.isfinite().all(), f"{name} is not finite after an empty batch"


def _check_zero_length(info, module):
    x = info.inputs(batch=2, dtype=torch.float64)
    first = _parts(x)[0]
    for dim in range(1, first.dim()):
        size = first.shape[dim]

        def cut(t, dim=dim, size=size):
            if t.dim() > dim and t.shape[dim] == size:
                return t.narrow(dim, 0, 0)
            return t
        try:
            _same_outcome(info, module, map_parts(x, cut))
        except AssertionError as error:
            raise AssertionError(f"size 0 in dim {dim}: {error}") from None


@pytest.mark.parametrize("info", _each_layer())
def test_empty_sizes(info):
    checks = _Checks(info)
    # eval mode changes no state: one module for all the eval-mode calls
    evaluated = info.make(dtype=torch.float64).eval()
    checks("empty_batch", _check_empty_eval, info, evaluated)
    checks("empty_batch_train", _check_empty_train, info, evaluated)
    checks("zero_length", _check_zero_length, info, evaluated)
    checks.finish()


# --- half precision ----------------------------------------------------------------------------
def _close(got, want, rtol, what):
    got, want = _floats(got), _floats(want)
    assert len(got) == len(want), f"{len(got)} outputs, float32's {len(want)}"
    for i, (a, b) in enumerate(zip(got, want)):
        assert a.shape == b.shape, f"output {i}: shape {tuple(a.shape)}, float32's {tuple(b.shape)}"
        a, b = a.double(), b.double()
        scale = b.abs().max().item() if b.numel() else 0.0
        error = (a - b).abs().nan_to_num(math.inf)
        worst = error.max().item() if error.numel() else 0.0
        assert worst <= rtol * scale, (
            f"output {i}: {what} off by {worst:.3g} (float32 scale {scale:.3g})")


def _check_half(info, dtype):
    x32 = map_parts(info.inputs(batch=2), lambda t: t.to(dtype).float())
    module = _mode(info.make(dtype=dtype), info)
    # the float32 twin of the same (rounded) parameters
    want = copy.deepcopy(module).float()(*x32)
    got = module(*map_parts(x32, lambda t: t.to(dtype)))
    for value in _floats(got):
        assert value.dtype == dtype, f"output in {value.dtype}, not {dtype}"
    _close(got, want, HALF_RTOL[dtype], str(dtype))


def _check_autocast(info):
    x = info.inputs(batch=2)
    module = _mode(info.make(), info)
    want = module(*x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = module(*x)
    for value in _cplx_values(got):
        assert value.real.dtype == value.imag.dtype, "parts of different dtypes"
    _close(got, want, HALF_RTOL[torch.bfloat16], "autocast bfloat16")


@pytest.mark.parametrize("info", _each_layer())
def test_half_precision(info):
    checks = _Checks(info)
    checks("float16", _check_half, info, torch.float16)
    checks("bfloat16", _check_half, info, torch.bfloat16)
    checks("autocast_bf16", _check_autocast, info)
    checks.finish()


# --- large magnitudes --------------------------------------------------------------------------
def _check_large(info):
    x = map_parts(info.inputs(batch=2, dtype=torch.float64), lambda t: (t * 1e10).float())
    single = _floats(_mode(info.make(), info)(*x))
    double = _mode(info.make(dtype=torch.float64), info)
    double = _floats(double(*map_parts(x, torch.Tensor.double)))
    big = torch.finfo(torch.float32).max
    for i, (a, b) in enumerate(zip(single, double)):
        fits = b.isfinite() & (b.abs() < big)
        assert a[fits].isfinite().all(), (
            f"output {i}: {int((~a[fits].isfinite()).sum())} non-finite values where the "
            f"float64 output is finite")
        scale = b[fits].abs().max().item() if fits.any() else 0.0
        worst = (a[fits].double() - b[fits]).abs().max().item() if fits.any() else 0.0
        assert worst <= LARGE_RTOL * scale, (
            f"output {i} off by {worst:.3g} (float64 scale {scale:.3g})")


@pytest.mark.parametrize("info", _each_layer())
def test_large_magnitudes(info):
    checks = _Checks(info)
    checks("large", _check_large, info)
    checks.finish()
