"""The explicit weight cache ``cplxmodule.nn.cached``, against native complex layers."""

import contextlib
import copy
import importlib
import threading

import pytest
import torch
import torch.nn.functional as F
from torch.nn.parallel import replicate

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.cplx._product import STRATEGIES, Packed
from cplxmodule.nn import (
    CplxConv2d,
    CplxLinear,
    cached,
)
from cplxmodule.nn.cache import _stores
from cplxmodule.nn.masked import (
    CplxConv2dMasked,
    CplxConvTranspose2dMasked,
    CplxLinearMasked,
    LinearMasked,
)
from ..helpers import as_native, detached_native

replicate_module = importlib.import_module("torch.nn.parallel.replicate")

MODES = {
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
    "autograd": contextlib.nullcontext,
}


def parts(z):
    return (z.real, z.imag) if isinstance(z, Cplx) else (z,)


def effective_weight(layer):
    weight = detached_native(layer.weight)
    mask = getattr(layer, "mask", None)
    return weight if mask is None else weight * mask


# (layer factory, input factory, reference: (layer, native input) -> native output)
def _linear_reference(layer, x):
    bias = None if layer.bias is None else detached_native(layer.bias)
    return F.linear(x, effective_weight(layer), bias)


def _conv2d_reference(layer, x):
    bias = None if layer.bias is None else detached_native(layer.bias)
    return F.conv2d(x, effective_weight(layer), bias, padding=layer.padding, groups=layer.groups)


def _conv_transpose2d_reference(layer, x):
    bias = None if layer.bias is None else detached_native(layer.bias)
    return F.conv_transpose2d(x, effective_weight(layer), bias, stride=layer.stride)


def _masked(layer):
    shape = layer.weight.real.shape if isinstance(layer.weight, Cplx) else layer.weight.shape
    layer.mask = torch.rand(shape, generator=torch.Generator().manual_seed(1)) > 0.4
    return layer


LAYERS = {
    "real-linear-masked": (lambda: _masked(LinearMasked(6, 4)), lambda: torch.randn(3, 6), _linear_reference),
    "linear": (lambda: CplxLinear(6, 4), lambda: cplx.randn(3, 6), _linear_reference),
    "linear-masked": (lambda: _masked(CplxLinearMasked(6, 4)), lambda: cplx.randn(3, 6), _linear_reference),
    # large enough for the packed default to take Gauss's trick, not "native"
    "linear-masked-3m": (
        lambda: _masked(CplxLinearMasked(256, 128)), lambda: cplx.randn(130, 256), _linear_reference
    ),
    "conv2d-masked": (
        lambda: _masked(CplxConv2dMasked(4, 6, 3, padding=1, groups=2)),
        lambda: cplx.randn(2, 4, 5, 5),
        _conv2d_reference,
    ),
    "conv2d": (
        lambda: CplxConv2d(4, 6, 3, padding=1, bias=False),
        lambda: cplx.randn(2, 4, 5, 5),
        _conv2d_reference,
    ),
    "conv-transpose2d-masked": (
        lambda: _masked(CplxConvTranspose2dMasked(4, 3, 3, stride=2)),
        lambda: cplx.randn(1, 4, 2, 2),
        _conv_transpose2d_reference,
    ),
}


def make(name):
    torch.manual_seed(0)
    layer_fn, input_fn, reference = LAYERS[name]
    return layer_fn(), input_fn(), reference


def check(layer, x, reference):
    # Gauss's trick sums parts: its rounding differs from torch's complex product
    expected = reference(layer, as_native(x))
    torch.testing.assert_close(detached_native(layer(x)), expected, rtol=1e-4, atol=1e-4)


def tensors(layer):
    """Every tensor a forward pass reads: weight parts, bias parts, mask."""
    out = [*parts(layer.weight)]
    if layer.bias is not None:
        out += parts(layer.bias)
    if getattr(layer, "mask", None) is not None:
        out.append(layer.mask)
    return out


def broadcast_like_write(tensor, value):
    """Write as DDP's buffer broadcast does: in place, version counter restored."""
    version = tensor._version
    tensor.data.copy_(value)
    torch._C._autograd._unsafe_set_version_counter((tensor,), (version,))


# ------------------------------------------------------------ outside the context


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", LAYERS)
def test_outside_the_context_every_write_is_seen(name, mode):
    layer, x, reference = make(name)
    with MODES[mode]():
        check(layer, x, reference)
        for tensor in tensors(layer):
            tensor.data.mul_(-2.0)  # bypasses the version counter
            check(layer, x, reference)
            broadcast_like_write(tensor, torch.randn_like(tensor))
            check(layer, x, reference)
    assert not _stores()


def test_outside_the_context_each_access_computes_the_product():
    layer, _, _ = make("linear-masked")
    with torch.no_grad():
        first = layer.weight_masked
        assert layer.weight_masked is not first
        first.real.add_(1.0)  # writing into a returned product changes nothing
        torch.testing.assert_close(as_native(layer.weight_masked), effective_weight(layer))


# ------------------------------------------------------------ inside the context


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", LAYERS)
def test_inside_the_context_outputs_match_and_products_are_reused(name, mode):
    layer, x, reference = make(name)
    masked = hasattr(layer, "mask")
    with MODES[mode]():
        expected = reference(layer, as_native(x))
        with cached(layer) as held:
            assert held is layer
            outputs = [layer(x), layer(x)]
            if masked:
                # the context promised a fixed mask: ``weight * mask`` is reused
                layer.mask.data.zero_()
                outputs.append(layer(x))
        for out in outputs:
            torch.testing.assert_close(detached_native(out), expected, rtol=1e-4, atol=1e-4)
        check(layer, x, reference)  # on exit everything is dropped
    assert not _stores()


@pytest.mark.parametrize("name", ["linear", "linear-masked-3m", "conv2d"])
def test_packed_forms_are_computed_once(name):
    layer, x, _ = make(name)
    with torch.no_grad(), cached(layer):
        layer(x)
        store = _stores()[layer]
        packed = [v for v in store.values() if isinstance(v, Packed)]
        forms = [dict(p._forms) for p in packed]
        assert packed and any(forms)
        layer(x)
        assert [v for v in store.values() if isinstance(v, Packed)] == packed
        for p, before in zip(packed, forms):
            assert all(p._forms[key] is form for key, form in before.items())


def test_weight_masked_is_computed_once_per_grad_mode():
    layer, x, _ = make("linear-masked")
    with cached(layer):
        with torch.no_grad():
            inference = layer.weight_masked
            assert layer.weight_masked is inference
            assert isinstance(inference, Cplx) and not inference.real.requires_grad
        # a value computed without autograd is never used with it
        trained = layer.weight_masked
        assert trained is not inference and trained.real.requires_grad
        assert layer.weight_masked is trained


@pytest.mark.parametrize("name", ["linear-masked", "linear-masked-3m", "conv2d-masked", "linear"])
def test_autograd_inside_the_context_matches_outside(name):
    layer, x, _ = make(name)

    def loss():
        out = layer(x)
        return sum(p.sum() for p in parts(out)) + sum((p ** 2).sum() for p in parts(out))

    expected = torch.autograd.grad(loss(), list(layer.parameters()))
    with torch.no_grad(), cached(layer):
        layer(x)  # fills the no-grad entries, which autograd must not use
    with cached(layer):
        with torch.no_grad():
            layer(x)
        # two passes share the cached weights; the graph is back-propagated once
        got = torch.autograd.grad((loss() + loss()) / 2, list(layer.parameters()))
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)


def test_a_weight_used_twice_in_one_step_gets_both_gradients():
    torch.manual_seed(0)
    layer = _masked(CplxLinearMasked(4, 4))
    x = cplx.randn(3, 4)

    def loss():
        out = layer(layer(x))
        return out.real.sum() + out.imag.sum()

    expected = torch.autograd.grad(loss(), list(layer.parameters()))
    with cached(layer):
        got = torch.autograd.grad(loss(), list(layer.parameters()))
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)


# ------------------------------------------------------------ nesting and errors


def test_nested_contexts_keep_the_cache_until_the_outermost_exits():
    model = torch.nn.Sequential(_masked(CplxLinearMasked(4, 4)), _masked(CplxLinearMasked(4, 2)))
    x = cplx.randn(3, 4)
    with torch.no_grad():
        expected = detached_native(model(x))
        with cached(model):
            with cached(model[1]), cached(model):
                model(x)
            model[1].mask.data.zero_()
            # the inner contexts' exit kept the outer one's cache
            torch.testing.assert_close(detached_native(model(x)), expected)
        # the outermost exit dropped it
        hidden = _linear_reference(model[0], as_native(x))
        torch.testing.assert_close(detached_native(model(x)), _linear_reference(model[1], hidden))
    assert not _stores()


def test_an_exception_inside_still_clears_the_cache():
    layer, x, reference = make("linear-masked")
    with torch.no_grad():
        with pytest.raises(ZeroDivisionError):
            with cached(layer), cached(layer):
                layer(x)
                1 / 0
        assert not _stores()
        layer.mask.data.zero_()
        check(layer, x, reference)


def test_a_module_added_inside_is_not_held():
    model = torch.nn.Sequential(_masked(CplxLinearMasked(4, 4)))
    x = cplx.randn(3, 4)
    with torch.no_grad(), cached(model):
        model.append(_masked(CplxLinearMasked(4, 2)))
        model(x)
        assert model[1] not in _stores()
    assert not _stores()


def test_cached_rejects_a_non_module():
    with pytest.raises(TypeError, match="cached: `module` must be a torch.nn.Module"):
        cached(cplx.randn(2))
    assert not _stores()


def test_one_context_object_entered_twice():
    layer, x, reference = make("linear-masked")
    context = cached(layer)
    with torch.no_grad():
        expected = reference(layer, as_native(x))
        with context:
            with context:
                layer(x)
            layer.mask.data.zero_()
            torch.testing.assert_close(detached_native(layer(x)), expected)
        check(layer, x, reference)
    assert not _stores()


# ------------------------------------------------------------ threads


def _in_thread(target):
    """Run ``target`` in a new thread and return its result, or raise its error."""
    result = {}

    def run():
        try:
            result["value"] = target()
        except BaseException as e:  # re-raised in the calling thread
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    if "error" in result:
        raise result["error"]
    return result["value"]


def test_another_thread_outside_the_context_reads_its_own_weights():
    # thread B runs the layer with new parameters while this thread holds
    # the layer's cached masked weight and bias
    layer = _masked(LinearMasked(6, 4))
    x = torch.randn(3, 6)
    weight, bias = torch.randn(4, 6), torch.randn(4)
    with torch.no_grad(), cached(layer):
        layer(x)
        assert layer in _stores()

        def other():  # grad mode is per thread: the same as this thread's
            with torch.no_grad():
                return not _stores(), torch.func.functional_call(
                    layer, {"weight": weight, "bias": bias}, (x,)
                )

        output = _in_thread(other)
    torch.testing.assert_close(output[1], F.linear(x, weight * layer.mask, bias))
    assert output[0]  # B holds nothing


def test_a_context_of_another_thread_neither_shares_nor_drops_the_store():
    layer, x, reference = make("linear-masked")
    with torch.no_grad(), cached(layer):
        expected = reference(layer, as_native(x))
        layer(x)
        store = dict(_stores()[layer])

        def other():
            with cached(layer):
                fresh = not _stores()[layer]  # its own store, empty on entry
                layer(x)
            return fresh, not _stores()

        assert _in_thread(other) == (True, True)
        # B's exit dropped its own store only: this thread's values are reused
        assert _stores()[layer] == store
        layer.mask.data.zero_()
        torch.testing.assert_close(detached_native(layer(x)), expected)
    assert not _stores()


def test_many_threads_enter_and_exit_concurrently():
    model = torch.nn.Sequential(_masked(CplxLinearMasked(4, 4)), _masked(CplxLinearMasked(4, 2)))
    x = cplx.randn(3, 4)
    with torch.no_grad():
        expected = detached_native(model(x))
    barrier = threading.Barrier(4)

    def worker():
        barrier.wait(timeout=30)
        outputs = []
        for _ in range(20):
            with torch.no_grad(), cached(model), cached(model[1]):
                outputs.append(detached_native(model(x)))
        return outputs, not _stores()

    threads_results = []
    threads = [threading.Thread(target=lambda: threads_results.append(worker())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(threads_results) == 4
    for outputs, empty in threads_results:
        assert empty
        for output in outputs:
            torch.testing.assert_close(output, expected)
    assert not _stores()


def test_exit_in_another_thread_is_an_error():
    layer = CplxLinear(3, 2)
    context = cached(layer)
    with context:
        with pytest.raises(RuntimeError, match="cached: a context must exit in the thread"):
            _in_thread(lambda: context.__exit__(None, None, None))
        assert layer in _stores()
    assert not _stores()


# ------------------------------------------------------------ copies and replicas


def test_copies_made_inside_are_not_cached():
    layer, x, reference = make("linear-masked")
    with torch.no_grad(), cached(layer):
        layer(x)
        twin = copy.deepcopy(layer)
        twin.mask.zero_()
        check(twin, x, reference)  # not cached: the write is seen
        assert twin not in _stores()


def _distinct_copies(tensors, devices, detach=False):
    """``_broadcast_coalesced_reshape`` for two CPU 'devices' with distinct copies."""
    tensors = list(tensors)
    if not tensors:
        return []
    return [[t.detach().clone() if detach else t.clone() for t in tensors] for _ in devices]


def test_replicas_made_inside_compute_their_own_weights(monkeypatch):
    model = torch.nn.Sequential(_masked(CplxConv2dMasked(2, 3, 3)), CplxConv2d(3, 2, 1))
    x = cplx.randn(2, 2, 5, 5)
    monkeypatch.setattr(replicate_module, "_broadcast_coalesced_reshape", _distinct_copies)
    with torch.no_grad(), cached(model):
        expected = detached_native(model(x))
        replicas = replicate(model, [0, 1], detach=True)
        for replica in replicas:
            torch.testing.assert_close(detached_native(replica(x)), expected)
            assert not any(m in _stores() for m in replica.modules())
        # a replica reads its own tensors at every call
        first = replicas[1][0]
        first.mask.zero_()
        hidden = _conv2d_reference(first, as_native(x))
        torch.testing.assert_close(
            detached_native(replicas[1](x)), _conv2d_reference(replicas[1][1], hidden)
        )


# ------------------------------------------------------------ packed operands


def _conv_case(groups):
    def native_op(x, w, b):
        return F.conv2d(x, w, b, padding=1, groups=groups)

    def ours(x, w, b, strategy):
        return cplx.conv2d(x, w, b, padding=1, groups=groups, strategy=strategy)

    return ours, native_op, (2, 4, 5, 5), (6, 4 // groups, 3, 3), (6,)


def _transpose_case():
    def native_op(x, w, b):
        return F.conv_transpose2d(x, w, b, stride=2, groups=2)

    def ours(x, w, b, strategy):
        return cplx.conv_transpose2d(x, w, b, stride=2, groups=2, strategy=strategy)

    return ours, native_op, (2, 4, 3, 3), (4, 3, 3, 3), (6,)


def _linear_case():
    def ours(x, w, b, strategy):
        return cplx.linear(x, w, b, strategy=strategy)

    return ours, F.linear, (3, 2, 5), (4, 5), (4,)


@pytest.mark.parametrize("case", [_linear_case, lambda: _conv_case(1), lambda: _conv_case(2), _transpose_case],
                         ids=["linear", "conv2d", "conv2d-groups", "conv-transpose2d-groups"])
@pytest.mark.parametrize("strategy", (None,) + STRATEGIES)
@pytest.mark.parametrize("bias_kind", ["complex", "real", "none"])
def test_packed_operands_give_the_native_product(case, strategy, bias_kind):
    ours, native_op, x_shape, w_shape, b_shape = case()
    torch.manual_seed(0)
    x, w = cplx.randn(*x_shape), cplx.randn(*w_shape)
    bias = {"complex": cplx.randn(*b_shape), "real": torch.randn(b_shape), "none": None}[bias_kind]
    expected = native_op(as_native(x), as_native(w), None if bias is None else as_native(bias).to(torch.complex64))
    packed_w = Packed(w)
    packed_b = Packed(bias) if isinstance(bias, Cplx) else bias
    for _ in range(2):  # the second call reuses the packed forms
        torch.testing.assert_close(as_native(ours(x, packed_w, packed_b, strategy)), expected)


# ------------------------------------------------------------ compile and docs


@pytest.mark.inductor
def test_dynamo_traces_a_forward_inside_the_context():
    layer, x, reference = make("linear-masked")
    compiled = torch.compile(layer, backend="eager", fullgraph=True)
    with torch.no_grad(), cached(layer):
        torch.testing.assert_close(detached_native(compiled(x)), reference(layer, as_native(x)))


def test_docstring_examples():
    import doctest

    import cplxmodule.nn.cache as cache

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for test in finder.find(cache.cached, "cached", globs={**vars(cache)}):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.attempted and not results.failed


@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
def test_a_bayesian_layer_packs_its_mean_weight(training):
    from cplxmodule.nn.relevance import CplxLinearVD

    torch.manual_seed(0)
    layer = CplxLinearVD(5, 3).train(training)
    x = cplx.randn(4, 5)
    with torch.no_grad():
        torch.manual_seed(1)
        expected = detached_native(layer(x))
        with cached(layer):
            torch.manual_seed(1)
            torch.testing.assert_close(detached_native(layer(x)), expected)
            assert any(isinstance(v, Packed) for v in _stores()[layer].values())
