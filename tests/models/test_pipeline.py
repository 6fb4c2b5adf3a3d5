"""Every reference model through the library's mechanisms: sparsification, export, compile.

Each model, at a small size, goes through the pipeline of
docs/guides/sparsifying.rst (``to_bayesian``, ``compute_ard_masks``,
``to_masked``, ``compact``); exports with ``torch.export`` and a dynamic
batch; compiles with ``torch.compile(fullgraph=True)``; and passes
gradients to every parameter. The reference is always the same model run
eagerly (the compacted model's is the masked model's).
"""

import copy

import pytest
import torch

from cplxmodule import Cplx
from cplxmodule.models import CplxResNet, CplxUNet, CplxVisionTransformer
from cplxmodule.nn.masked import BaseMasked, compact, to_masked
from cplxmodule.nn.relevance import BaseARD, compute_ard_masks, penalties, to_bayesian

pytestmark = pytest.mark.usefixtures("one_thread")

# id -> (a small model, the shape of one input without the batch, odd sizes where allowed)
MODELS = {
    "CplxResNet": (lambda: CplxResNet(1, 3, widths=(3, 4), blocks=(1, 1)), (1, 7, 5)),
    "CplxUNet": (lambda: CplxUNet(channels=(2, 3)), (1, 7, 5)),
    "CplxVisionTransformer": (
        lambda: CplxVisionTransformer(1, 3, (4, 6), 2, d_model=4, num_layers=1), (1, 4, 6)
    ),
}


def make(name, seed=0):
    torch.manual_seed(seed)
    return MODELS[name][0]()


def batch(name, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    shape = (n, *MODELS[name][1])
    return Cplx(torch.randn(shape, generator=g), torch.randn(shape, generator=g))


def parts(output):
    """The real tensors of an output: the logits, or the parts of a spectrogram."""
    return (output,) if isinstance(output, torch.Tensor) else (output.real, output.imag)


def loss_of(output):
    return sum(p.square().mean() for p in parts(output))


@pytest.mark.parametrize("name", MODELS)
def test_sparsifies_and_compacts_exactly(name):
    x = batch(name, 4)
    vd = to_bayesian(make(name))
    bayesian = [m for m in vd.modules() if isinstance(m, BaseARD)]
    assert bayesian, "to_bayesian converted no layer"
    # a step of the Bayesian objective runs through the model
    optimizer = torch.optim.SGD(vd.parameters(), lr=1e-2)
    (loss_of(vd.train()(x)) + sum(penalties(vd)) / len(x)).backward()
    optimizer.step()
    # log-alphas on both sides of the threshold, as after a longer training
    with torch.no_grad():
        for layer in bayesian:
            layer.log_sigma2.uniform_(-8, 8)
    masks = compute_ard_masks(vd, threshold=3.0)
    kept = torch.cat([m.flatten() for m in masks.values()])
    assert 0 < kept.mean() < 1
    masked = to_masked(vd, masks)
    assert sum(isinstance(m, BaseMasked) for m in masked.modules()) == len(masks)
    # a fine-tuning step keeps the masked weights out
    optimizer = torch.optim.SGD(masked.parameters(), lr=1e-2)
    loss_of(masked.train()(x)).backward()
    optimizer.step()
    masked.eval()
    small = compact(masked)
    assert not any(isinstance(m, (BaseMasked, BaseARD)) for m in small.modules())
    with torch.no_grad():
        for got, want in zip(parts(small(x)), parts(masked(x))):
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", MODELS)
def test_gradients_reach_every_parameter(name):
    model = make(name).train()
    loss_of(model(batch(name, 3))).backward()
    for param_name, p in model.named_parameters():
        assert p.grad is not None, param_name
        assert p.grad.isfinite().all(), param_name
        assert p.grad.abs().sum() > 0, param_name


@pytest.mark.parametrize("name", MODELS)
def test_torch_export_with_a_dynamic_batch(name):
    model = make(name).eval()
    dim = torch.export.Dim("batch", min=2)
    # a Cplx input is a pytree of its two parts
    program = torch.export.export(model, (batch(name, 3),),
                                  dynamic_shapes={"input": [{0: dim}] * 2})
    exported = program.module()
    for n in (2, 5):
        x = batch(name, n, seed=n)
        with torch.no_grad():
            for got, want in zip(parts(exported(x)), parts(model(x))):
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


# dynamo's capture and the joint forward-backward graph: 4 to 10 s a model on a busy core
@pytest.mark.slow
@pytest.mark.inductor
@pytest.mark.parametrize("name", MODELS)
def test_compiled_training_step_matches_eager(name):
    torch._dynamo.reset()
    model = make(name).train()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    x = batch(name, 3)
    got, want = compiled(x), eager(x)
    # compiled code may take another complex-product strategy: float32 rounding of other sums
    for a, b in zip(parts(got), parts(want)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    loss_of(got).backward()
    loss_of(want).backward()
    # against each gradient's scale: in float64 the two agree to 1e-16, in float32
    # the attention's softmax and the layer norms amplify the rounding to about 1e-4
    for (param_name, p), q in zip(model.named_parameters(), eager.parameters()):
        error = (p.grad - q.grad).abs().max().item()
        assert error <= 1e-3 * q.grad.abs().max().item() + 1e-7, (param_name, error)
    # the batch norms' running statistics moved as in eager mode
    for (buffer_name, b), c in zip(model.named_buffers(), eager.buffers()):
        torch.testing.assert_close(b, c, rtol=1e-5, atol=1e-6, msg=lambda m: f"{buffer_name}: {m}")
