"""Generic properties of every layer of the table off the eval-mode path (``layer_table.py``).

- ``test_train_reference``: the train-mode output, and the buffers after
  the step (running mean and covariance, Bessel's ``n / (n - 1)``,
  ``momentum=None``'s cumulative average, ``num_batches_tracked``), against
  the row's ``train_reference``; two steps, where the first changes state.
- ``test_train_invariant``: a stochastic layer's train-mode draw satisfies
  its row's ``train_invariant`` (dropout: whole elements or channels, both
  parts alike, scaled by ``1 / (1 - p)``).
- ``test_half_reference``: float16 and bfloat16 against the float64
  reference of the same rounded parameters and inputs, within
  ``half_ulps`` machine epsilons of the output's scale (train mode where
  the row has a train reference): a layer that is computed in float32 and
  rounded once errs by half an epsilon at most, one that reduces
  (statistics, softmax, sums) in half precision by several.
- ``test_reference_boundaries``: the eval-mode output against the
  reference at inputs on the quadrant boundaries (parts exactly zero, of
  either sign, both at once) and of phasors that cancel (each value next
  to its negative).
- ``test_options_kept``: every plain constructor argument of every sample
  is the layer's attribute of that name, where it has one: the references
  read the options there, so an option the constructor dropped would go
  unseen by them.

An entry skips or expects to fail (strictly) a test by its name in
``LayerInfo.skips`` or ``LayerInfo.xfails``; the half-precision test also
skips the dtypes that ``EDGE_SKIPS`` of ``test_layer_table_edges.py``
lists for the layer (torch has no kernel).
"""

import copy
import inspect

import pytest
import torch

from cplxmodule import Cplx
from tests.helpers import flat_outputs
from tests.nn.layer_table import map_parts, params
from tests.nn.test_layer_table_edges import EDGE_SKIPS

pytestmark = pytest.mark.usefixtures("one_thread")


def _close(actual, expected, atol, rtol=1e-7, what="output"):
    actual, expected = flat_outputs(actual), flat_outputs(expected)
    assert len(actual) == len(expected), f"{len(actual)} outputs, the reference's {len(expected)}"
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert a.shape == e.shape, f"{what} {k}: shape {tuple(a.shape)}, {tuple(e.shape)}"
        if a.is_floating_point() or a.is_complex():
            torch.testing.assert_close(a, e.to(a.dtype), atol=atol, rtol=rtol, equal_nan=True,
                                       msg=lambda m, k=k: f"{what} {k}: {m}")
        else:
            assert torch.equal(a, e.to(a.dtype)), f"{what} {k}"


# --- training mode -----------------------------------------------------------------------------
@pytest.mark.parametrize("info, sample", params("test_train_reference", samples=True))
def test_train_reference(info, sample):
    module = info.make(torch.float64, sample=sample).train()
    for step in range(2):
        before = copy.deepcopy(module)
        inputs = info.inputs(dtype=torch.float64, sample=sample,
                             generator=torch.Generator().manual_seed(step))
        output = module(*inputs)
        expected, state = info.train_reference(before, *inputs)
        _close(output, expected, atol=info.atol, what=f"step {step}: output")
        buffers, old = dict(module.named_buffers()), dict(before.named_buffers())
        assert set(state) <= set(buffers), sorted(set(state) - set(buffers))
        for name, value in buffers.items():
            want = state.get(name, old[name])
            _close(value, want, atol=info.atol, what=f"step {step}: buffer {name}")
        if not state:
            # a step that changes nothing: the next would check the same
            break


@pytest.mark.parametrize("info, sample", params("test_train_invariant", samples=True))
def test_train_invariant(info, sample):
    module = info.make(torch.float64, sample=sample).train()
    inputs = info.inputs(dtype=torch.float64, sample=sample)
    originals = copy.deepcopy(inputs)
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(0)
        with torch.no_grad():
            output = module(*inputs)
    info.train_invariant(module, output, *originals)


# --- half precision ----------------------------------------------------------------------------
@pytest.mark.parametrize("info, sample, dtype",
                         params("test_half_reference", dtypes=(torch.float16, torch.bfloat16),
                                dtype_skips=EDGE_SKIPS))
def test_half_reference(info, sample, dtype):
    train = info.train_reference is not None
    module = info.make(dtype, sample=sample).train(train)
    inputs = map_parts(info.inputs(sample=sample), lambda t: t.to(dtype))
    # the same rounded parameters and inputs, exactly, in float64
    wide = copy.deepcopy(module).double()
    wide_inputs = map_parts(inputs, torch.Tensor.double)
    with torch.no_grad():
        want = (info.train_reference(wide, *wide_inputs)[0] if train
                else info.reference(wide, *wide_inputs))
        got = module(*inputs)
    got, want = _real_values(got), _real_values(want)
    assert len(got) == len(want), f"{len(got)} outputs, the reference's {len(want)}"
    eps = torch.finfo(dtype).eps
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.shape == b.shape, f"output {k}: shape {tuple(a.shape)}, {tuple(b.shape)}"
        if not a.is_floating_point():
            assert torch.equal(a, b.to(a.dtype)), f"output {k}"
            continue
        assert a.dtype == dtype, f"output {k} in {a.dtype}, not {dtype}"
        scale = b.abs().max().item() if b.numel() else 0.0
        error = (a.double() - b.double()).abs().nan_to_num(float("inf"))
        worst = error.max().item() if error.numel() else 0.0
        assert worst <= info.half_ulps * eps * scale, (
            f"output {k}: off by {worst / (eps * scale) if scale else worst:.3g} epsilons of "
            f"{dtype} times its scale {scale:.3g}; {info.half_ulps} allowed")


def _real_values(output):
    """The tensors of an output, a Cplx or complex tensor as its two parts, flattened."""
    if isinstance(output, Cplx):
        return [output.real, output.imag]
    if isinstance(output, torch.Tensor):
        return [output.real, output.imag] if output.is_complex() else [output]
    if isinstance(output, (tuple, list)):
        return [t for value in output for t in _real_values(value)]
    return []


# --- special inputs ----------------------------------------------------------------------------
def _boundaries(x):
    """Parts exactly zero (+0 and -0) in a pattern of eight along the flattened values: the
    axes, zero itself; then each second half of the last dimension the first half negated."""
    def special(re, im):
        re, im = re.clone(), im.clone()
        flat_re, flat_im = re.view(-1), im.view(-1)
        k = torch.arange(flat_re.numel()) % 8
        flat_re[k == 1] = 0.0
        flat_im[k == 2] = 0.0
        flat_re[k == 3] = -0.0
        flat_im[k == 4] = -0.0
        flat_re[k == 5] = flat_im[k == 5] = 0.0
        return re, im

    if not isinstance(x, Cplx):
        return x
    re, im = special(x.real, x.imag)
    return Cplx(re, im)


def _cancelling(x):
    """Each value of the second half of the last dimension the negative of one of the first."""
    if not isinstance(x, Cplx) or x.shape[-1] < 2:
        return x
    half = x.shape[-1] // 2

    def negate(t):
        t = t.clone()
        t[..., t.shape[-1] - half:] = -t[..., :half]
        return t
    return Cplx(negate(x.real), negate(x.imag))


@pytest.mark.parametrize("info, sample", params("test_reference_boundaries"))
def test_reference_boundaries(info, sample):
    module = info.make(torch.float64, sample=sample).eval()
    inputs = info.inputs(dtype=torch.float64, sample=sample)
    for name, special in (("quadrant boundaries", _boundaries), ("cancelling", _cancelling)):
        x = tuple(special(t) for t in inputs)
        with torch.no_grad():
            _close(module(*x), info.reference(module, *x), atol=info.atol, what=name)


# --- constructor options -----------------------------------------------------------------------
_PLAIN = (bool, int, float, str, type(None))


def _same_option(value, attribute):
    """Whether an attribute holds a plain constructor argument (an int as torch's n-tuple too)."""
    if isinstance(attribute, tuple) and not isinstance(value, tuple):
        return all(a == value for a in attribute)
    if isinstance(attribute, (tuple, list)) and isinstance(value, (tuple, list)):
        return tuple(attribute) == tuple(value)
    return attribute == value and type(attribute) is not bool or attribute is value


@pytest.mark.parametrize("info, sample", params("test_options_kept", samples=True))
def test_options_kept(info, sample):
    # the references read a layer's options from its attributes: an option the
    # constructor dropped would go unseen there, so each plain argument of the
    # sample must be the attribute of its name, where the layer has one
    s = info.samples[sample]
    bound = inspect.signature(info.cls).bind_partial(*s.args, **s.kwargs).arguments
    module = info.make(sample=sample)
    for name, value in bound.items():
        attribute = getattr(module, name, None)
        if (not isinstance(value, _PLAIN + (tuple,))
                or isinstance(attribute, (torch.Tensor, torch.nn.Module))
                or attribute is None and value is not None):
            continue
        assert _same_option(value, attribute), f"{name}={value!r}, the attribute {attribute!r}"
