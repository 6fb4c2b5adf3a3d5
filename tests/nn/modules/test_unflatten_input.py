"""CplxUnflatten refuses an input it cannot unflatten with a clear error."""

import pytest
import torch

from cplxmodule import Cplx
from cplxmodule.nn import CplxUnflatten


def cplx(*shape):
    return Cplx(torch.randn(shape), torch.randn(shape))


@pytest.mark.parametrize("layer, shape", [
    (CplxUnflatten(1, (2, 2)), (3, 5)),  # was RuntimeError from torch.unflatten
    (CplxUnflatten(1, (2, -1)), (3, 5)),
    (CplxUnflatten(2, (2, 2)), (3, 4)),  # no such dimension
])
def test_unflatten_refuses_a_size_it_cannot_split(layer, shape):
    with pytest.raises(ValueError, match=r"CplxUnflatten: `input`"):
        layer(cplx(*shape))


@pytest.mark.parametrize("layer, shape, out", [
    (CplxUnflatten(1, (2, 2)), (3, 4), (3, 2, 2)),
    (CplxUnflatten(-1, (2, -1)), (3, 6), (3, 2, 3)),
    (CplxUnflatten(0, (1, -1)), (0, 4), (1, 0, 4)),
])
def test_unflatten_takes_a_size_it_can_split(layer, shape, out):
    x = cplx(*shape)
    y = layer(x)
    assert y.shape == out
    torch.testing.assert_close(y.real, x.real.reshape(out))
