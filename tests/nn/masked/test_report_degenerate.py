"""compact_report() on degenerate models: layers whose weight has no entries.

The expected fractions are counted here from the weights' shapes and masks,
never read from the report's own helpers.
"""

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxLinear
from cplxmodule.nn.masked import compact, compact_report, to_masked

# torch warns that initialising the empty weights does nothing
pytestmark = pytest.mark.filterwarnings("ignore:Initializing zero-element tensors:UserWarning")


def empty_model(complex_):
    """``Linear(4, 0) -> Linear(0, 3) -> Linear(3, 5)``, masked, the last mask a random half."""
    Linear = CplxLinear if complex_ else torch.nn.Linear
    torch.manual_seed(0)
    model = to_masked(torch.nn.Sequential(Linear(4, 0), Linear(0, 3), Linear(3, 5)))
    for layer in model:
        layer.mask = torch.ones(tuple(layer.weight.shape))
    model[2].mask = torch.tensor([[1.0, 0, 1], [0, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    return model


@pytest.mark.parametrize("complex_", [True, False], ids=["complex", "real"])
@pytest.mark.parametrize("max_density", [None, 1.0], ids=["default", "sparse-allowed"])
def test_report_of_a_model_with_empty_layers(complex_, max_density):
    model = empty_model(complex_)
    kwargs = {} if max_density is None else dict(max_density=max_density)
    small = compact(model, **kwargs)
    x = cplx.randn(2, 4) if complex_ else torch.randn(2, 4)
    report = compact_report(model, small, (x,), min_run_time=0.01)
    kept = {name: fraction for name, _, _, fraction in report.layers}
    # an empty weight kept all of its (no) entries, by the documented convention
    assert kept["0"] == 1.0 and kept["1"] == 1.0
    # the last layer: its input is empty, so no entry of its weight is read
    stored = small[2].weight.real.numel() if complex_ else small[2].weight.numel()
    assert kept["2"] == stored / 15
    text = str(report)
    assert "100.0%" in text and "speedup" in text
    # the same without timing
    assert compact_report(model, small).layers == report.layers
