"""The cost of variational dropout: a training step of a VD layer next to its dense twin.

Run with ``python -m pytest benchmarks/test_bench_relevance.py --benchmark-enable``.
Each group is one layer family (real or complex linear, 256 x 512 -> 512,
one thread) in training mode, forward + backward, with variants

- ``dense``: ``torch.nn.Linear`` or :class:`~cplxmodule.nn.CplxLinear`;
- ``vd``: :class:`~cplxmodule.nn.relevance.LinearVD` or
  :class:`~cplxmodule.nn.relevance.CplxLinearVD` (local reparameterisation:
  one extra real product for the variance and one Gaussian sample per output);
- ``vd+penalty``: the same with the KL penalty summed into the loss, as a
  training loop does.

The floor of ``vd / dense`` is the variance's extra real product (forward
and its weight gradient) plus the sampling: about 2.3 for a real layer and
1.4 for a complex one, whose mean costs three or four real products. The
session prints each variant's time over the dense time of its group.

Each variant also runs with the layer compiled (``-compiled``,
``benchmarks/_compiling.py``: inductor, ``fullgraph=True``; the penalty,
the loss and ``backward`` eager): the compiled VD step over the compiled
dense one is the ratio to hold against the eager one.
"""

import pytest
import torch

from _compiling import compiled, eager, warm_up

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxLinear
from cplxmodule.nn.relevance import CplxLinearVD, LinearVD

SHAPE = (256, 512, 512)  # batch, in_features, out_features
pytestmark = pytest.mark.usefixtures("one_thread")
LAYERS = {
    False: {"dense": torch.nn.Linear, "vd": LinearVD},
    True: {"dense": CplxLinear, "vd": CplxLinearVD},
}


def total(output):
    return output.real.sum() + output.imag.sum() if isinstance(output, cplx.Cplx) else output.sum()


@pytest.mark.parametrize("variant", ["dense", "vd", "vd+penalty", "dense-compiled",
                                     "vd-compiled", "vd+penalty-compiled"])
@pytest.mark.parametrize("is_complex", [False, True], ids=["real", "complex"])
def test_training_step(benchmark, is_complex, variant):
    batch, n_in, n_out = SHAPE
    torch.manual_seed(0)
    kind = eager(variant)
    layer = LAYERS[is_complex][kind.split("+")[0]](n_in, n_out).train()
    forward = compiled(layer, variant)
    x = cplx.randn(batch, n_in) if is_complex else torch.randn(batch, n_in)
    with_penalty = kind.endswith("penalty")

    def step():
        layer.zero_grad(set_to_none=True)
        loss = total(forward(x))
        if with_penalty:
            loss = loss + layer.penalty.sum()
        loss.backward()

    benchmark.group = f"{'cplx-' if is_complex else ''}linear-train"
    benchmark.extra_info.update(variant=variant, reference="dense")
    warm_up(benchmark, variant, step)
    benchmark(step)
