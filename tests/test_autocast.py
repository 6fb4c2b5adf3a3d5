"""Every layer under :func:`torch.autocast`, as its torch twin runs there.

Autocast leaves torch's complex dtypes alone; the parts of a ``Cplx`` are
real tensors, so it runs the complex products in bfloat16 (float16). The
references: the output dtype is the one torch's twin layer gives under
autocast for an input of the same dtype (``torch.nn.Linear`` for a
product, ``torch.nn.BatchNorm1d`` for a norm...), the values are the layer's
float64 eager output (itself tested against torch's native complex dtype
elsewhere) within bfloat16's rounding, and a real masked or Bayesian layer
gives exactly what its torch base class gives under autocast.
"""

import contextlib
import functools
import math

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import _product
from cplxmodule.demo.data import MODULATIONS, generate
from cplxmodule.demo.model import ModulationNet, as_input
from cplxmodule.nn import masked
from cplxmodule.nn import relevance
from cplxmodule.nn.relevance import extensions

BF16 = torch.bfloat16


def autocast(dtype=BF16):
    return torch.autocast("cpu", dtype=dtype)


# family: constructor args, input shapes, the torch layer whose dtypes it follows
FAMILIES = {
    "Linear": ((5, 3), [(4, 5)], torch.nn.Linear),
    # the complex bilinear map is a linear map followed by a matmul, both on
    # autocast's lists; torch's real Bilinear is not (it stays in float32)
    "Bilinear": ((3, 4, 2), [(5, 3), (5, 4)], torch.nn.Linear),
    "Conv1d": ((2, 3, 3), [(2, 2, 7)], torch.nn.Conv1d),
    "Conv2d": ((2, 3, 3), [(2, 2, 5, 5)], torch.nn.Conv2d),
    "Conv3d": ((2, 3, 2), [(1, 2, 4, 4, 4)], torch.nn.Conv3d),
    "ConvTranspose1d": ((2, 3, 3), [(2, 2, 5)], torch.nn.ConvTranspose1d),
    "ConvTranspose2d": ((2, 3, 3), [(2, 2, 4, 4)], torch.nn.ConvTranspose2d),
    "ConvTranspose3d": ((2, 3, 2), [(1, 2, 3, 3, 3)], torch.nn.ConvTranspose3d),
}
BAYESIAN = [(relevance, "VD"), (relevance, "ARD")]
# the extensions differ from VD in their penalty only: one family of each
EXTENSIONS = [extensions.CplxLinearVDScaleFree, extensions.CplxConv1dVDApprox,
              extensions.CplxBilinearVDBogus]


def _complex_cases():
    # (class, args, input shapes, torch twin, the twin's input shapes)
    for family, (args, shapes, twin) in FAMILIES.items():
        classes = [getattr(cnn, "Cplx" + family), getattr(masked, f"Cplx{family}Masked")]
        classes += [getattr(module, f"Cplx{family}{suffix}") for module, suffix in BAYESIAN]
        classes += [cls for cls in EXTENSIONS if cls.__name__.startswith(f"Cplx{family}VD")]
        if family == "Bilinear":
            twin, twin_shapes = functools.partial(twin, args[0], args[-1]), shapes[:1]
        else:
            twin, twin_shapes = functools.partial(twin, *args), shapes
        for cls in classes:
            yield cls, args, shapes, twin, twin_shapes
    norms = [
        (cnn.CplxBatchNorm1d, (3,), [(8, 3, 5)], torch.nn.BatchNorm1d),
        (cnn.CplxBatchNorm2d, (3,), [(8, 3, 2, 2)], torch.nn.BatchNorm2d),
        (cnn.CplxBatchNorm3d, (3,), [(4, 3, 2, 2, 2)], torch.nn.BatchNorm3d),
        (cnn.CplxLayerNorm, (5,), [(4, 5)], torch.nn.LayerNorm),
        (cnn.CplxMaxPool1d, (2,), [(4, 3, 6)], torch.nn.MaxPool1d),
        (cnn.CplxMaxPool2d, (2,), [(4, 3, 4, 4)], torch.nn.MaxPool2d),
        # torch's CPU autocast lists max_pool3d (alone of the pools, and not
        # on CUDA) in float32; selecting values gains no precision, so the
        # complex pools all keep their input's dtype, as max_pool2d does
        (cnn.CplxMaxPool3d, (2,), [(2, 3, 4, 4, 4)], torch.nn.Identity),
    ]
    for cls, args, shapes, twin in norms:
        twin_args = () if twin is torch.nn.Identity else args
        yield cls, args, shapes, functools.partial(twin, *twin_args), shapes
    elementwise = [
        (cnn.CplxModReLU, (), [(4, 5)], torch.nn.ReLU),
        # an elementwise map with a parameter keeps its input's dtype (torch's
        # CPU list puts PReLU, for its weight, in bfloat16 even from float32)
        (cnn.CplxAdaptiveModReLU, (5,), [(4, 5)], torch.nn.ReLU),
        (cnn.CplxZReLU, (), [(4, 5)], torch.nn.ReLU),
        (cnn.CplxCardioid, (), [(4, 5)], torch.nn.ReLU),
        (cnn.CplxModulus, (), [(4, 5)], torch.nn.ReLU),
        (cnn.CplxAngle, (), [(4, 5)], torch.nn.Tanh),
        (cnn.CplxPhaseShift, (5,), [(4, 5)], torch.nn.Identity),
        (cnn.CplxIdentity, (), [(4, 5)], torch.nn.Identity),
        (cnn.CplxReal, (), [(4, 5)], torch.nn.Identity),
        (cnn.CplxImag, (), [(4, 5)], torch.nn.Identity),
        (cnn.CplxDropout, (), [(4, 5)], torch.nn.Dropout),
        (cnn.CplxDropout1d, (), [(4, 3, 5)], torch.nn.Dropout1d),
        (cnn.CplxDropout2d, (), [(4, 3, 5, 5)], torch.nn.Dropout2d),
        (cnn.CplxDropout3d, (), [(4, 3, 2, 5, 5)], torch.nn.Dropout3d),
        (cnn.CplxToCplx[torch.nn.ReLU], (), [(4, 5)], torch.nn.ReLU),
        (cnn.CplxToCplx[torch.tanh], (), [(4, 5)], torch.nn.Tanh),
        (cnn.CplxToInterleavedReal, (), [(4, 3)], torch.nn.Identity),
        (cnn.CplxToConcatenatedReal, (), [(4, 3)], torch.nn.Identity),
        (cnn.CplxToTensor, (), [(4, 3)], torch.nn.Identity),
    ]
    for cls, args, shapes, twin in elementwise:
        yield cls, args, shapes, twin, shapes


COMPLEX_CASES = list(_complex_cases())


def _build(cls, args, dtype=torch.float32):
    torch.manual_seed(0)
    layer = cls(*args)
    if isinstance(layer, masked.BaseMasked):
        layer.mask = (torch.rand(layer.weight.shape) > 0.3).float()
    return layer.to(dtype)


def _parts(output):
    return [output.real, output.imag] if isinstance(output, cplx.Cplx) else [output]


def _twin_dtype(twin, shapes, dtype):
    """The dtype torch's twin layer gives under autocast for a real input of ``dtype``."""
    layer = twin()
    with autocast():
        return layer(*(torch.randn(shape, dtype=dtype) for shape in shapes)).dtype


@pytest.mark.parametrize("input_dtype", [torch.float32, BF16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize(
    "cls, args, shapes, twin, twin_shapes", COMPLEX_CASES, ids=[case[0].__name__ for case in COMPLEX_CASES]
)
def test_complex_layer_under_autocast(cls, args, shapes, twin, twin_shapes, input_dtype):
    layer = _build(cls, args).eval()
    reference = _build(cls, args, torch.float64).eval()
    torch.manual_seed(1)
    inputs = [cplx.randn(*shape).to(input_dtype) for shape in shapes]
    with autocast():
        output = layer(*inputs)
    expected = reference(*(z.double() for z in inputs))
    dtype = _twin_dtype(twin, twin_shapes, input_dtype)
    for part, ref in zip(_parts(output), _parts(expected)):
        assert part.dtype == dtype
        # bfloat16 keeps 8 bits: each value within a few of its roundings
        # of the output's scale (a float32 product would pass this too; a
        # wrong product, or an input cast twice, would not)
        scale = ref.abs().max().clamp(min=1)
        assert (part.double() - ref).abs().max() <= 0.04 * scale


@pytest.mark.parametrize(
    "cls, args, shapes, twin, twin_shapes", COMPLEX_CASES, ids=[case[0].__name__ for case in COMPLEX_CASES]
)
def test_complex_layer_trains_under_autocast(cls, args, shapes, twin, twin_shapes):
    # training mode (batch statistics, noise, dropout) and backward: the
    # gradients reach every parameter, in its own dtype, finite, as torch's
    layer = _build(cls, args).train()
    torch.manual_seed(2)
    inputs = [cplx.randn(*shape).requires_grad_() for shape in shapes]
    with autocast():
        output = layer(*inputs)
        penalty = getattr(layer, "penalty", None)
    loss = sum(part.float().square().sum() for part in _parts(output))
    if penalty is not None:
        assert penalty.dtype == torch.float32
        loss = loss + penalty.sum()
    loss.backward()
    for name, parameter in layer.named_parameters():
        assert parameter.grad is not None, name
        assert parameter.grad.dtype == parameter.dtype and parameter.grad.isfinite().all(), name
    grads = [part.grad for z in inputs for part in (z.real, z.imag) if part.grad is not None]
    assert grads and all(g.dtype == torch.float32 and g.isfinite().all() for g in grads)


# real masked and Bayesian layers: their torch base class is the reference
REAL_CASES = [
    (getattr(module, f"{family}{suffix}"), args, shapes, getattr(torch.nn, family))
    for family, (args, shapes, _) in FAMILIES.items()
    for module, suffix in [(masked, "Masked"), (relevance, "VD"), (relevance, "ARD")]
] + [(relevance.LinearL0, (5, 3), [(4, 5)], torch.nn.Linear),
     (relevance.LinearLASSO, (5, 3), [(4, 5)], torch.nn.Linear)]


@pytest.mark.parametrize("input_dtype", [torch.float32, BF16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("cls, args, shapes, twin", REAL_CASES, ids=[case[0].__name__ for case in REAL_CASES])
def test_real_layer_under_autocast_is_its_torch_twin(cls, args, shapes, twin, input_dtype):
    layer = _build(cls, args).eval()
    reference = twin(*args)
    weight = layer.weight * layer.mask if isinstance(layer, masked.BaseMasked) else layer.weight
    if isinstance(layer, relevance.LinearL0):
        weight = layer.weight * layer.gate()
    state = {"weight": weight.detach(), "bias": layer.bias.detach()}
    reference.load_state_dict(state)
    torch.manual_seed(1)
    inputs = [torch.randn(shape, dtype=input_dtype) for shape in shapes]
    with autocast():
        try:
            expected = reference(*inputs)
        except RuntimeError:
            # torch's Bilinear refuses a bfloat16 input with float32 weights
            with pytest.raises(RuntimeError):
                layer(*inputs)
            return
        output = layer(*inputs)
        penalty = getattr(layer, "penalty", None)
    assert output.dtype == expected.dtype
    torch.testing.assert_close(output, expected, rtol=0, atol=0)
    if penalty is not None:
        assert penalty.dtype == torch.float32
