"""Which linear layers compact() stores as CSR by default: only where CSR was measured faster.

The rule (``_csr_pays`` in ``cplxmodule/nn/masked/compact.py``) comes from
``benchmarks/csr_study.py``: on the CPU, at most 3 % of the weight kept and
at least 2**20 entries (2**18 complex); dense on other devices. Tested here on
either side of each threshold, and on whole models: a small recurrent
classifier at 87 % sparsity, whose CSR layers made it slower than its masked
original, compacts to dense layers; a large, very sparse layer to CSR.
Timings are in ``benchmarks/test_bench_compact.py``, not here.
"""

import pytest
import torch

from cplxmodule.nn import CplxGRU, CplxLinear
from cplxmodule.nn.masked import (
    CplxLinearMasked,
    CplxSparseLinear,
    LinearMasked,
    SparseLinear,
    compact,
    to_masked,
)
from cplxmodule.nn.masked.compact import _csr_pays

CPU, META = torch.device("cpu"), torch.device("meta")


@pytest.mark.parametrize("complex_, shape, density, pays", [
    # real: 2**20 entries and 3 % density are the thresholds
    (False, (1024, 1024), 0.03, True),
    (False, (4096, 256), 0.01, True),
    (False, (1024, 1023), 0.03, False),
    (False, (512, 1024), 0.01, False),
    (False, (1024, 1024), 0.031, False),
    (False, (4096, 4096), 0.1, False),
    # complex: 2**18 entries
    (True, (512, 512), 0.03, True),
    (True, (2048, 128), 0.0, True),
    (True, (512, 511), 0.03, False),
    (True, (256, 256), 0.01, False),
    (True, (512, 512), 0.04, False),
])
def test_csr_only_where_measured_to_pay(complex_, shape, density, pays):
    assert _csr_pays(shape, density, complex_, CPU) is pays


def test_csr_never_pays_off_the_cpu():
    for device in (torch.device("cuda", 0), META):
        assert not _csr_pays((4096, 4096), 0.001, True, device)
        assert not _csr_pays((4096, 4096), 0.001, False, device)


class GRUClassifier(torch.nn.Module):
    """A small complex GRU and a read-out, as a new user builds one."""

    def __init__(self, hidden=64, classes=5):
        super().__init__()
        self.gru = CplxGRU(8, hidden, batch_first=True)
        self.head = CplxLinear(hidden, classes)

    def forward(self, input):
        output, _ = self.gru(input)
        return self.head(output[:, -1])


def with_random_masks(model, density, seed=0):
    generator = torch.Generator().manual_seed(seed)
    for layer in model.modules():
        if isinstance(layer, (LinearMasked, CplxLinearMasked)):
            shape = layer.weight.real.shape if isinstance(layer, CplxLinearMasked) else (
                layer.weight.shape)
            layer.mask = torch.rand(shape, generator=generator) < density
    return model.eval()


def stored_as_csr(model):
    return [name for name, m in model.named_modules()
            if isinstance(m, (SparseLinear, CplxSparseLinear))]


def test_a_small_gru_classifier_compacts_to_dense_layers():
    masked = with_random_masks(to_masked(GRUClassifier()), density=0.13)
    small = compact(masked)
    assert stored_as_csr(small) == []
    assert all(type(m) is CplxLinear for m in (small.gru.ih_l0, small.gru.hh_l0, small.head))
    # forced by ``max_density``, the same layers are CSR
    assert len(stored_as_csr(compact(masked, max_density=0.2))) == 3


@pytest.mark.parametrize("cls, size, dense", [
    (LinearMasked, 1024, torch.nn.Linear), (CplxLinearMasked, 512, CplxLinear),
])
def test_a_large_very_sparse_layer_compacts_to_csr(cls, size, dense):
    model = with_random_masks(torch.nn.Sequential(cls(size, size)), density=0.01)
    assert stored_as_csr(compact(model)) == ["0"]
    # three times denser, it stays dense
    model = with_random_masks(torch.nn.Sequential(cls(size, size)), density=0.05)
    assert type(compact(model)[0]) is dense


def test_max_density_none_or_a_fraction():
    model = with_random_masks(torch.nn.Sequential(LinearMasked(4, 3)), density=0.5)
    for bad in (-0.1, 1.5, True, "0.1"):
        with pytest.raises(ValueError, match=r"^compact: `max_density` must be a number in \[0, 1\] or None, got "):
            compact(model, max_density=bad)
