"""Sparsity statistics against counts made by hand."""

import pytest
import torch

from cplxmodule.nn import CplxLinear
from cplxmodule.nn.masked import Conv2dMasked, CplxLinearMasked, LinearMasked
from cplxmodule.nn.utils import named_sparsity, sparsity


def model():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        LinearMasked(6, 4),
        torch.nn.Sequential(CplxLinearMasked(4, 3, bias=False), CplxLinear(3, 2)),
        Conv2dMasked(2, 2, 3),
        torch.nn.ReLU(),
    )
    net[0].mask = torch.rand(4, 6) > 0.5
    net[1][0].mask = torch.rand(3, 4) > 0.5
    return net


def test_named_sparsity_counts_zeroed_parameters():
    net = model()
    stats = dict(named_sparsity(net))
    # a real layer: zero mask entries; all its parameters (bias included)
    assert stats["0"] == (int((net[0].mask == 0).sum()), 6 * 4 + 4)
    # a complex layer: each zeroed entry removes a real and an imaginary part
    assert stats["1.0"] == (2 * int((net[1][0].mask == 0).sum()), 2 * 3 * 4)
    assert "1.0.weight" not in stats  # counted with its layer
    # dense parameters
    assert stats["1.1.weight"] == (0, 2 * 2 * 3) and stats["1.1.bias"] == (0, 2 * 2)
    # a masked layer without a mask is dense
    assert stats["2"] == (0, 2 * 2 * 9 + 2)
    assert "3" not in stats
    assert [name for name, _ in named_sparsity(net, prefix="net")][0] == "net.0"


def test_sparsity_is_the_overall_fraction():
    net = model()
    total = sum(p.numel() for p in net.parameters())
    zeroed = int((net[0].mask == 0).sum()) + 2 * int((net[1][0].mask == 0).sum())
    assert sparsity(net) == pytest.approx(zeroed / total)
    net[0].mask = torch.zeros(1)
    assert sparsity(net) == pytest.approx((24 + 2 * int((net[1][0].mask == 0).sum())) / total)
    assert sparsity(torch.nn.ReLU()) == 0.0


def test_relevance_layers_are_counted():
    class Relevant(torch.nn.Linear):
        def relevance(self, *, threshold):
            return torch.abs(self.weight) > threshold

    layer = Relevant(5, 4)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(20.0).reshape(4, 5))
    assert dict(named_sparsity(layer, threshold=9.5)) == {"": (10, 24)}
