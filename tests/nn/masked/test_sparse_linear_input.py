"""SparseLinear checks its input: a clear error naming the layer and the argument."""

import pytest
import torch

from cplxmodule.nn.masked import SparseLinear


@pytest.mark.parametrize("bad, error", [
    ("a string", TypeError),  # was AttributeError: 'str' object has no attribute 'dim'
    (torch.ones(2, 3, dtype=torch.int64), TypeError),  # was NotImplementedError from the CSR mm
    (torch.ones(2, 3, dtype=torch.complex64), TypeError),
    (torch.ones(2, 5), ValueError),
])
def test_sparse_linear_refuses_bad_input(bad, error):
    layer = SparseLinear(torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    with pytest.raises(error, match=r"SparseLinear: `input`"):
        layer(bad)


def test_sparse_linear_takes_good_input():
    layer = SparseLinear(torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    x = torch.randn(4, 3)
    torch.testing.assert_close(layer(x), x @ torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]).T)
