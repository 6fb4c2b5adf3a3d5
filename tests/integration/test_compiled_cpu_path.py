"""The compiled CPU path: a split ReLU's backward, complex convolutions, mid-size linear maps.

Inductor (CPU) stores and loads boolean tensors element by element; the
partitioner of a compiled training step would keep ReLU's mask as one
wherever the ReLU's output is not kept anyway (before a max pooling by
modulus, as in the demo's network). The tests run AOTAutograd with
inductor's decompositions and partitioner and no code generation, which is
fast. A compiled complex convolution is one real convolution on the block
matrix, a call of twice the channels, where eager training takes 3M
(``cplxmodule/cplx/_product.py``); a linear map large enough that eager
code takes 3M takes it compiled too, not four real products; a small one,
compiled for inference with inductor's ``freezing``, is one real product on
the block matrix.
"""

import functools

import pytest
import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch._inductor import compile_fx  # noqa: F401  (loads the lowerings the decompositions consult)
from torch._inductor import config as inductor_config
from torch._inductor.decomposition import select_decomp_table

from cplxmodule import nn
from cplxmodule.cplx import Cplx
from cplxmodule.nn.masked import CplxLinearMasked
from cplxmodule.nn.relevance import CplxLinearChannelVD, CplxLinearVD, LinearVD

pytestmark = [pytest.mark.inductor, pytest.mark.usefixtures("one_thread")]


def _saved_dtypes(model, *inputs):
    """The dtypes of the tensors the compiled forward keeps for the backward, and the compiled output."""
    saved = []

    def forward_compiler(graph, example_inputs):
        outputs = next(iter(reversed(graph.graph.nodes))).args[0]
        saved.extend(node.meta["val"].dtype for node in outputs if isinstance(node, torch.fx.Node))
        return make_boxed_func(graph.forward)

    backend = aot_autograd(
        fw_compiler=forward_compiler,
        bw_compiler=lambda graph, example_inputs: make_boxed_func(graph.forward),
        partition_fn=functools.partial(min_cut_rematerialization_partition, compiler="inductor"),
        decompositions=select_decomp_table(),
    )
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend, fullgraph=True)
    return saved, compiled(*inputs)


def _captured(model, *inputs, grad=False):
    """The graph dynamo captures of ``model`` (whole), and its output."""
    graphs = []

    def backend(graph, example_inputs):
        graphs.append(graph)
        return graph.forward

    torch._dynamo.reset()
    with torch.set_grad_enabled(grad):
        output = torch.compile(model, backend=backend, fullgraph=True)(*inputs)
    return graphs[0], output


def _pooled(relu):
    return nn.CplxSequential(nn.CplxConv1d(2, 3, 3), relu, nn.CplxMaxPool1d(2))


@pytest.mark.parametrize("relu", [
    nn.CplxToCplx[torch.nn.ReLU](),
    nn.CplxToCplx[torch.relu](),
    nn.CplxToCplx[torch.nn.functional.relu](),
], ids=["module", "torch.relu", "F.relu"])
def test_compiled_split_relu_saves_no_boolean_mask(relu):
    torch.manual_seed(0)
    model = _pooled(relu)
    x = Cplx(torch.randn(4, 2, 12), torch.randn(4, 2, 12))
    saved, output = _saved_dtypes(model, x)
    assert saved and torch.bool not in saved
    (output.real.sum() + output.imag.sum()).backward()


def test_compiled_split_relu_gradient_is_eagers():
    torch.manual_seed(0)
    model = _pooled(nn.CplxToCplx[torch.nn.ReLU]())
    # exact zeros before the ReLU: its gradient there is zero, as torch's
    with torch.no_grad():
        model[0].bias.real.zero_()
        model[0].bias.imag.zero_()
    x = Cplx(torch.randn(4, 2, 12), torch.randn(4, 2, 12))
    x.real[0] = x.imag[0] = 0
    weights = torch.randn(4, 3, 5), torch.randn(4, 3, 5)

    def loss(model):
        output = model(x)
        return (output.real * weights[0] + output.imag * weights[1]).sum()

    eager = loss(model)
    expected = torch.autograd.grad(eager, list(model.parameters()))
    torch._dynamo.reset()
    compiled = torch.compile(functools.partial(loss, model), backend="aot_eager", fullgraph=True)
    value = compiled()
    got = torch.autograd.grad(value, list(model.parameters()))
    torch.testing.assert_close(value, eager)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)


def test_eager_inplace_split_relu_still_writes_the_input():
    # the eager path is torch's own: in place stays in place
    z = Cplx(torch.tensor([-1.0, 2.0]), torch.tensor([3.0, -4.0]))
    out = nn.CplxToCplx[torch.nn.ReLU](inplace=True)(z)
    assert torch.equal(z.real, torch.tensor([0.0, 2.0])) and torch.equal(out.imag, z.imag)


@pytest.mark.parametrize("grad", [False, True], ids=["inference", "training"])
def test_compiled_convolution_is_one_real_convolution(grad):
    # compiled on the CPU, a complex convolution is one real convolution on
    # the block matrix ("cat"), and computes what torch's complex one does
    torch.manual_seed(0)
    layer = nn.CplxConv1d(3, 4, 5, padding=2)
    x = Cplx(torch.randn(2, 3, 16), torch.randn(2, 3, 16))
    graph, output = _captured(layer, x, grad=grad)
    convolutions = [node for node in graph.graph.nodes if node.target is torch.conv1d]
    assert len(convolutions) == 1
    weight = torch.complex(layer.weight.real, layer.weight.imag)
    bias = torch.complex(layer.bias.real, layer.bias.imag)
    want = torch.nn.functional.conv1d(torch.complex(x.real, x.imag), weight, bias, padding=2)
    torch.testing.assert_close(torch.complex(output.real, output.imag), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("grad", [False, True], ids=["inference", "training"])
def test_compiled_mid_size_linear_is_three_real_products(grad):
    # where eager code takes Gauss's three products (rows times weight
    # elements above 4M, float32 on the CPU), compiled code does too, its
    # form chosen without a branch, instead of four products
    torch.manual_seed(0)
    layer = nn.CplxLinear(256, 128)
    x = Cplx(torch.randn(256, 256), torch.randn(256, 256))
    graph, output = _captured(layer, x, grad=grad)
    # in training, the forward's products are in the body of its autograd function
    forward = [module for name, module in graph.named_modules()
               if isinstance(module, torch.fx.GraphModule) and not name.startswith("bwd_body")]
    products = [node for module in forward for node in module.graph.nodes
                if node.target in (torch.mm, torch.addmm, torch.nn.functional.linear, "addmm_")]
    assert len(products) == 3
    weight = torch.complex(layer.weight.real, layer.weight.imag)
    bias = torch.complex(layer.bias.real, layer.bias.imag)
    want = torch.nn.functional.linear(torch.complex(x.real, x.imag), weight, bias)
    torch.testing.assert_close(torch.complex(output.real, output.imag), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("freezing, grad, products", [
    (False, False, 2), (True, False, 1), (True, True, 2),
], ids=["inference", "frozen-inference", "frozen-training"])
def test_compiled_small_linear_under_freezing_is_one_real_product(freezing, grad, products):
    # compiled for inference with inductor's freezing, a small linear map is
    # one real product on the block matrix, which freezing makes a constant;
    # otherwise two products of the weight's parts on both parts of the input
    torch.manual_seed(0)
    layer = nn.CplxLinear(5, 3)
    x = Cplx(torch.randn(4, 5), torch.randn(4, 5))
    with inductor_config.patch(freezing=freezing):
        graph, output = _captured(layer, x, grad=grad)
    targets = [node.target for node in graph.graph.nodes]
    assert targets.count(torch._C._nn.linear) == products
    weight = torch.complex(layer.weight.real, layer.weight.imag)
    bias = torch.complex(layer.bias.real, layer.bias.imag)
    want = torch.nn.functional.linear(torch.complex(x.real, x.imag), weight, bias)
    torch.testing.assert_close(torch.complex(output.real, output.imag), want)


@pytest.mark.slow
def test_frozen_masked_model_computes_what_eager_does():
    # inductor with freezing folds the masked block matrices into constants
    torch.manual_seed(0)
    model = nn.CplxSequential(CplxLinearMasked(5, 6), nn.CplxToCplx[torch.nn.ReLU](),
                              CplxLinearMasked(6, 3))
    for layer in model[0], model[2]:
        layer.mask = (torch.rand(layer.weight.shape) < 0.5).float()
    x = Cplx(torch.randn(4, 5), torch.randn(4, 5))
    with torch.no_grad():
        want = model(x)
        torch._dynamo.reset()
        with inductor_config.patch(freezing=True):
            got = torch.compile(model, fullgraph=True)(x)
    torch.testing.assert_close(got.real, want.real)
    torch.testing.assert_close(got.imag, want.imag)


def test_compiled_recurrence_takes_one_real_product_per_step():
    # compiled, a recurrent layer's plain projections are one real product
    # each on the (..., 2) layout of its states (the interleaved block
    # weight): no per-step concatenation of parts, no second product
    torch.manual_seed(0)
    layer = nn.CplxGRU(3, 4)
    x = Cplx(torch.randn(5, 2, 3), torch.randn(5, 2, 3))
    graph, (output, _) = _captured(layer, x)
    with torch.no_grad():
        want, _ = layer(x)
    targets = [node.target for node in graph.graph.nodes]
    assert targets.count(torch._C._nn.linear) == 1 + 5
    assert torch.cat not in targets
    torch.testing.assert_close(output.real, want.real)
    torch.testing.assert_close(output.imag, want.imag)


@pytest.mark.parametrize("cls", [LinearVD, CplxLinearVD, CplxLinearChannelVD],
                         ids=lambda cls: cls.__name__)
def test_compiled_gaussian_noise_is_torchs_own_draw(cls):
    # inductor's own normal draws on the CPU are ten times slower than
    # torch's kernel: compiled, the layers draw by torch's kernel, the same
    # numbers as eager code from the same seed, and each call its own
    torch.manual_seed(0)
    layer = cls(5, 3).train()
    x = torch.randn(4, 5) if cls is LinearVD else Cplx(torch.randn(4, 5), torch.randn(4, 5))
    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True)
    twice = torch.compile(lambda x: layer(x) - layer(x), fullgraph=True)
    torch.manual_seed(1)
    want = layer(x)
    torch.manual_seed(1)
    got = compiled(x)
    for a, b in zip(_parts(got), _parts(want)):
        torch.testing.assert_close(a, b)
    assert all(part.abs().min() > 0 for part in _parts(twice(x)))


def _parts(z):
    return (z.real, z.imag) if isinstance(z, Cplx) else (z,)
