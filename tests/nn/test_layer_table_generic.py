"""Generic properties of every public layer, driven by the layer table (``layer_table.py``).

Each test runs on every entry of :data:`~tests.nn.layer_table.LAYERS`; an
entry skips a test only with the reason its record gives, and an expected
failure is strict (the day it passes, the entry must be updated).
"""

import copy
import inspect
import pickle

import pytest
import torch

from cplxmodule import Cplx
from cplxmodule.nn import CplxParameter
from tests.helpers import Duck, flat_outputs, weighted_sum
from tests.nn.layer_table import params

pytestmark = pytest.mark.usefixtures("one_thread")


def _close(actual, expected, atol=1e-10, rtol=1e-7):
    actual, expected = flat_outputs(actual), flat_outputs(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape, (a.shape, e.shape)
        if a.is_floating_point() or a.is_complex():
            torch.testing.assert_close(a, e.to(a.dtype), atol=atol, rtol=rtol)
        else:
            assert torch.equal(a, e)


def _run(info, module, inputs, seed=0):
    """The output under a fixed seed (a stochastic layer in training mode draws from it)."""
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)
        return module(*inputs)


def _leaves(inputs):
    """Inputs with leaf parts that require gradients, and those leaves."""
    out, leaves = [], []
    for x in inputs:
        if isinstance(x, Cplx):
            re, im = x.real.clone().requires_grad_(), x.imag.clone().requires_grad_()
            out.append(Cplx(re, im))
            leaves += [re, im]
        elif isinstance(x, torch.Tensor) and x.is_floating_point():
            leaf = x.clone().requires_grad_()
            out.append(leaf)
            leaves.append(leaf)
        else:
            out.append(x)
    return out, leaves


def _grads(output, leaves):
    loss = weighted_sum(output, torch.Generator().manual_seed(1))
    grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    return [torch.zeros_like(t) if g is None else g for g, t in zip(grads, leaves)]


def _arguments(module):
    """The names of the forward's arguments."""
    return list(inspect.signature(type(module).forward).parameters)[1:]


@pytest.mark.parametrize("info, sample", params("test_reference", samples=True))
def test_reference(info, sample):
    module = info.make(torch.float64, sample=sample).eval()
    inputs = info.inputs(dtype=torch.float64, sample=sample)
    with torch.no_grad():
        _close(module(*inputs), info.reference(module, *inputs), atol=info.atol)


@pytest.mark.parametrize("info, sample", params("test_unbatched"))
def test_unbatched(info, sample):
    module = info.make(torch.float64, sample=sample).eval()
    inputs = info.inputs(dtype=torch.float64, sample=sample, unbatched=True)
    with torch.no_grad():
        output = module(*inputs)
        if info.reference is not None:
            _close(output, info.reference(module, *inputs), atol=info.atol)
        else:
            batched = module(*(x.unsqueeze(info.batch_dim) for x in inputs))
            expected = [t.squeeze(info.batch_dim if t.dim() > u.dim() else None)
                        for t, u in zip(flat_outputs(batched), flat_outputs(output))]
            _close(output, expected, atol=info.atol)


_MAX_PARAMETERS = 16


def _gradcheck(info, sample, train):
    """gradcheck of the output in the inputs and the parameters (float64, a fixed seed)."""
    module = info.make(torch.float64, sample=sample).train(train)
    inputs = info.inputs(dtype=torch.float64, sample=sample)
    params = dict(module.named_parameters())
    if len(params) > _MAX_PARAMETERS or isinstance(module, torch.nn.DataParallel):
        # a composite's parts are checked each on its own; DataParallel
        # refuses torch.func.functional_call
        params = {}
    flat = []
    for x in inputs:
        flat += [x.real, x.imag] if isinstance(x, Cplx) else [x]

    def f(*parts):
        it, args = iter(parts), []
        for x in inputs:
            args.append(Cplx(next(it), next(it)) if isinstance(x, Cplx) else next(it))
        weights = dict(zip(params, it))
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(0)
            output = (torch.func.functional_call(module, weights, tuple(args)) if weights
                      else module(*args))
        outputs = [t for t in flat_outputs(output) if t.is_floating_point() or t.is_complex()]
        return tuple(torch.view_as_real(t) if t.is_complex() else t for t in outputs)

    leaves = [t.detach().clone().requires_grad_(t.is_floating_point())
              for t in [*flat, *params.values()]]
    assert torch.autograd.gradcheck(f, leaves, fast_mode=True)


@pytest.mark.parametrize("info, sample", params("test_gradcheck"))
def test_gradcheck(info, sample):
    _gradcheck(info, sample, train=False)


@pytest.mark.parametrize("info, sample", params("test_gradcheck_train"))
def test_gradcheck_train(info, sample):
    # the draws of a stochastic layer repeat under the seed: a differentiable function
    _gradcheck(info, sample, train=True)


def _as(kind, x, leaves):
    if not isinstance(x, Cplx):
        return x
    re, im = x.real.detach().clone(), x.imag.detach().clone()
    if kind == "duck":
        re.requires_grad_(), im.requires_grad_()
        leaves += [re, im]
        return Duck(re, im)
    z = torch.complex(re, im).requires_grad_()
    leaves.append(z)
    return z


def _compare_complex_kinds(info, kind, dtype):
    module = info.make(dtype).eval()
    inputs = info.inputs(dtype=dtype)
    as_cplx, cplx_leaves = _leaves(inputs)
    expected = module(*as_cplx)
    expected_grads = _grads(expected, cplx_leaves)
    leaves = []
    converted = [_as(kind, x, leaves) for x in inputs]
    output = module(*converted)
    grads = _grads(output, leaves)
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == torch.float32 else {}
    _close(output, expected, **tol)
    if kind == "duck":
        _close(grads, expected_grads, **tol)
    else:
        # torch's convention: the gradient of a real loss is dL/dre + i dL/dim
        real = [g for g in expected_grads]
        pairs = [torch.complex(real[2 * k], real[2 * k + 1]) for k in range(len(real) // 2)]
        _close(grads, pairs, **tol)


@pytest.mark.parametrize("info, sample", params("test_native_complex"))
def test_native_complex(info, sample):
    # complex64 and complex128
    for dtype in (torch.float32, torch.float64):
        _compare_complex_kinds(info, "native", dtype)


@pytest.mark.parametrize("info, sample", params("test_duck_complex"))
def test_duck_complex(info, sample):
    _compare_complex_kinds(info, "duck", torch.float64)


@pytest.mark.parametrize("info, sample", params("test_to_float64"))
def test_to_float64(info, sample):
    module = info.make(torch.float32).eval()
    inputs = info.inputs(dtype=torch.float32)
    with torch.no_grad():
        expected = _run(info, module, inputs)
        module.to(torch.float64)
        for name, t in [*module.named_parameters(), *module.named_buffers()]:
            if t.is_floating_point():
                assert t.dtype == torch.float64, name
        output = _run(info, module, [x.to(torch.float64) if isinstance(x, (Cplx, torch.Tensor))
                                     else x for x in inputs])
    for t in flat_outputs(output):
        if t.is_floating_point() or t.is_complex():
            assert t.dtype in (torch.float64, torch.complex128)
    _close(output, expected, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("info, sample", params("test_meta_to_empty"))
def test_meta_to_empty(info, sample):
    module = info.make(device="meta")
    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        assert t.device.type == "meta", name
    module.to_empty(device="cpu")
    # torch's meta-device init (as FSDP's): reset every submodule, then load the checkpoint
    for sub in module.modules():
        if hasattr(sub, "reset_parameters"):
            sub.reset_parameters()
    module.load_state_dict(info.make().state_dict())
    module.eval()
    inputs = info.inputs()
    with torch.no_grad():
        _close(_run(info, module, inputs), _run(info, info.make().eval(), inputs), atol=0, rtol=0)


@pytest.mark.parametrize("info, sample", params("test_deepcopy"))
def test_deepcopy(info, sample):
    module = info.make().eval()
    inputs = info.inputs()
    clone = copy.deepcopy(module)
    with torch.no_grad():
        _close(_run(info, clone, inputs), _run(info, module, inputs), atol=0, rtol=0)
        for (name, a), (_, b) in zip(module.state_dict().items(), clone.state_dict().items()):
            assert a.data_ptr() != b.data_ptr() or a.numel() == 0, name


@pytest.mark.parametrize("info, sample", params("test_pickle"))
def test_pickle(info, sample):
    module = info.make().eval()
    inputs = info.inputs()
    clone = pickle.loads(pickle.dumps(module))
    with torch.no_grad():
        _close(_run(info, clone, inputs), _run(info, module, inputs), atol=0, rtol=0)


@pytest.mark.parametrize("info, sample", params("test_state_dict"))
def test_state_dict(info, sample):
    module = info.make(seed=0).eval()
    fresh = info.make(seed=1).eval()
    fresh.load_state_dict(module.state_dict())
    inputs = info.inputs()
    with torch.no_grad():
        _close(_run(info, fresh, inputs), _run(info, module, inputs), atol=0, rtol=0)


@pytest.mark.parametrize("info, sample", params("test_hooks"))
def test_hooks(info, sample):
    # every submodule that computes is called through Module.__call__: no
    # fast path that forward hooks (and so tools built on them) would miss
    module = info.make().eval()
    fired = set()
    for name, sub in module.named_modules():
        if isinstance(sub, CplxParameter):
            continue
        sub.register_forward_hook(lambda m, args, out, name=name: fired.add(name))
    with torch.no_grad():
        module(*info.inputs())
    # parameters and torch's lists of modules are not called
    passive = (CplxParameter, torch.nn.ModuleList, torch.nn.ModuleDict)
    expected = {name for name, sub in module.named_modules() if not isinstance(sub, passive)}
    assert fired == expected, sorted(expected - fired)


@pytest.mark.parametrize("info, sample", params("test_bad_input"))
def test_bad_input(info, sample):
    _refused(info, "str")


@pytest.mark.parametrize("info, sample", params("test_bad_dtype"))
def test_bad_dtype(info, sample):
    _refused(info, "int")


@pytest.mark.parametrize("info, sample", params("test_bad_shape"))
def test_bad_shape(info, sample):
    _refused(info, "shape")


def _refused(info, bad):
    module = info.make().eval()
    names = _arguments(module)
    inputs = info.inputs()
    if bad == "shape":
        cases = [(0, info.bad_inputs())]
    else:
        # each argument in turn: the error names the one refused
        cases = []
        for k, x in enumerate(inputs):
            real = x.real if isinstance(x, Cplx) else x
            wrong = "a string" if bad == "str" else torch.ones(real.shape, dtype=torch.int64)
            cases.append((k, (*inputs[:k], wrong, *inputs[k + 1:])))
    before = {k: v.clone() for k, v in module.state_dict().items()}
    for k, case in cases:
        with pytest.raises((TypeError, ValueError)) as error:
            module(*case)
        message = str(error.value)
        assert type(module).__name__ in message
        assert f"`{names[k]}`" in message
    after = module.state_dict()
    assert before.keys() == after.keys()
    for key in before:
        assert torch.equal(before[key], after[key]), key


@pytest.mark.parametrize("info, sample", params("test_eval_deterministic"))
def test_eval_deterministic(info, sample):
    module = info.make().eval()
    inputs = info.inputs()
    with torch.no_grad():
        _close(_run(info, module, inputs, seed=0), _run(info, module, inputs, seed=1),
               atol=0, rtol=0)
        # in training mode the draws come from torch's generator: a seed repeats them
        module.train()
        _close(_run(info, module, inputs, seed=2), _run(info, module, inputs, seed=2),
               atol=0, rtol=0)
