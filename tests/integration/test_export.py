"""Whole complex models under torch.compile(fullgraph=True) and torch.export, train and eval.

The reference is the same model run eagerly (a deep copy, so that batch-norm
statistics start equal). Compilation is slow on small CPUs: one model, few
compilations, and the cheap ``aot_eager`` backend (what inductor needs, real
operators only on the modulus path, is tested in ``test_export_modulus.py``).
"""

import copy

import pytest
import torch

from cplxmodule.nn import (
    CplxBatchNorm1d,
    CplxLinear,
    CplxMaxPool1d,
    CplxModReLU,
    CplxModulus,
    CplxToReal,
    RealToCplx,
)
from cplxmodule.nn.masked import CplxConv1dMasked, CplxLinearMasked, LinearMasked
from cplxmodule.nn.relevance import CplxLinearVD, LinearARD


class Net(torch.nn.Module):
    """Real interleaved input -> complex conv, batchnorm, modReLU, pool, masked and
    Bayesian layers -> real."""

    def __init__(self):
        super().__init__()
        self.to_cplx = RealToCplx()
        self.conv = CplxConv1dMasked(2, 4, 3, padding=1)
        self.bn = CplxBatchNorm1d(4)
        self.act = CplxModReLU(0.1)
        self.pool = CplxMaxPool1d(2)
        self.linear = CplxLinear(8, 6)
        self.vd = CplxLinearVD(6, 6)
        self.masked = CplxLinearMasked(6, 4)
        self.to_real = CplxToReal()
        self.modulus = CplxModulus()
        self.ard = LinearARD(12, 5)
        self.head = LinearMasked(5, 3)

    def forward(self, x):
        z = self.pool(self.act(self.bn(self.conv(self.to_cplx(x)))))
        z = self.masked(self.act(self.vd(self.linear(z.flatten(1)))))
        h = self.ard(torch.cat([self.to_real(z), self.modulus(z)], dim=-1))
        return self.head(torch.relu(h))


def make_net():
    torch.manual_seed(0)
    net = Net()
    net.conv.mask = torch.rand(4, 2, 3) < 0.7
    net.masked.mask = torch.rand(4, 6) < 0.6
    net.head.mask = torch.rand(3, 5) < 0.8
    with torch.no_grad():  # noise of the local reparameterisation that shows
        net.vd.log_sigma2.uniform_(-4, 0)
        net.ard.log_sigma2.uniform_(-4, 0)
    return net


def run(model, x, module):
    """Output, gradients and buffers of ``module`` after one call of ``model`` (its wrapper).

    The Bayesian layers draw noise in training: every run starts from one seed.
    """
    torch.manual_seed(1)
    output = model(x)
    grads = {}
    if module.training:
        output.square().sum().backward()
        grads = {name: p.grad for name, p in module.named_parameters()}
    buffers = {name: b.clone() for name, b in module.named_buffers()}
    return output.detach(), grads, buffers


def assert_same_run(actual, expected):
    # compiled code computes the complex products by another strategy than
    # eager code (it cannot choose the form of Gauss's trick by value): the
    # two agree to float32's rounding of different sums
    for got, want in zip(actual, expected):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.inductor
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_no_graph_breaks(training):
    net = make_net().train(training)
    explanation = torch._dynamo.explain(net)(torch.randn(3, 2, 8))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1


@pytest.mark.inductor
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_compiled_matches_eager(training):
    torch._dynamo.reset()
    net = make_net().train(training)
    eager = copy.deepcopy(net)
    compiled = torch.compile(net, fullgraph=True, backend="aot_eager")
    x = torch.randn(3, 2, 8)
    assert_same_run(run(compiled, x, net), run(eager, x, eager))


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_torch_export_matches_eager(training):
    net = make_net().train(training)
    eager = copy.deepcopy(net)
    x = torch.randn(3, 2, 8)
    program = torch.export.export(copy.deepcopy(net), (x,))
    exported = program.module()
    # the exported module has no train/eval switch: it runs the traced mode
    torch.manual_seed(1)
    output = exported(x)
    torch.manual_seed(1)
    torch.testing.assert_close(output, eager(x), rtol=1e-5, atol=1e-6)
    if training:
        # batch-norm statistics were updated as in eager mode
        torch.testing.assert_close(exported.bn.running_mean, eager.bn.running_mean)
