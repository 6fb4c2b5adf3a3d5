"""What a small layer's call costs for each form of complex input.

``CplxLinear(64, 64)`` on a batch of 8, called with a :class:`~cplxmodule.cplx.Cplx`
(``layer-cplx``, the reference), with a ``torch.complex64`` tensor
(``layer-complex64``: the layer converts it first), and the functional
:func:`cplxmodule.cplx.linear` on the same ``Cplx`` with the layer's weight
and bias (``functional-cplx``: no layer, so no layer check). torch's own
``torch.nn.Linear(64, 64, dtype=torch.complex64)`` on the complex64 tensor
(``torch-complex64``) gives the floor. At this size a call is almost all
dispatch and Python, so the ratios are the per-call cost of each path.
Forward only, under :func:`torch.no_grad`. Run with::

    python -m pytest benchmarks/test_bench_inputs.py --benchmark-enable

``benchmarks/conftest.py`` prints each time over the reference's. On a
busy machine add ``--benchmark-timer=time.process_time``.
"""

import pytest
import torch

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxLinear


REFERENCE = "layer-cplx"
FEATURES = 64
BATCH = 8


def _operands():
    torch.manual_seed(0)
    layer = CplxLinear(FEATURES, FEATURES)
    native = torch.nn.Linear(FEATURES, FEATURES, dtype=torch.complex64)
    with torch.no_grad():
        native.weight.copy_(torch.complex(layer.weight.real, layer.weight.imag))
        native.bias.copy_(torch.complex(layer.bias.real, layer.bias.imag))
    x = Cplx(torch.randn(BATCH, FEATURES), torch.randn(BATCH, FEATURES))
    return layer, native, x, torch.complex(x.real, x.imag)


def _calls():
    layer, native, x, z = _operands()
    return {
        REFERENCE: lambda: layer(x),
        "layer-complex64": lambda: layer(z),
        "functional-cplx": lambda: cplx.linear(x, layer.weight, layer.bias),
        "torch-complex64": lambda: native(z),
    }


@pytest.mark.parametrize("variant", list(_calls()))
def test_linear_call(benchmark, threads, variant):
    call = _calls()[variant]
    benchmark.group = f"CplxLinear({FEATURES}, {FEATURES}) batch {BATCH}: forward, {threads} thread(s)"
    benchmark.extra_info.update(variant=variant, reference=REFERENCE)

    def forward():
        with torch.no_grad():
            return call()

    benchmark(forward)


def test_calls_agree():
    # every path computes the same map
    with torch.no_grad():
        results = [call() for call in _calls().values()]
    results = [torch.complex(y.real, y.imag) if isinstance(y, Cplx) else y for y in results]
    for result in results[1:]:
        torch.testing.assert_close(result, results[0], rtol=1e-5, atol=1e-5)
