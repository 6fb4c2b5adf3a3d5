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
from cplxmodule.demo.data import generate
from cplxmodule.demo.model import ModulationNet, as_input
from cplxmodule.nn import _families, masked
from cplxmodule.nn import relevance
from cplxmodule.nn.relevance import extensions

from ... import helpers

BF16 = torch.bfloat16
pytestmark = pytest.mark.usefixtures("one_thread")


def autocast(dtype=BF16):
    return torch.autocast("cpu", dtype=dtype)


PACKAGE_FAMILIES = helpers.package_families()
#: the kinds of twin tested here: the dense layer, masked and Bayesian
KINDS = ("dense", "masked", "vd", "ard")
# the extensions differ from VD in their penalty only: one family of each
EXTENSIONS = [extensions.CplxLinearVDScaleFree, extensions.CplxConv1dVDApprox,
              extensions.CplxBilinearVDBogus]


def _is_bilinear(family):
    return family.args[:2] == ("in1_features", "in2_features")


def _sizes(family):
    """Constructor args and input shapes of a member of ``family``, from its geometry."""
    n = family.kernel_dims
    if n == 0:
        return ((3, 4, 2), [(5, 3), (5, 4)]) if _is_bilinear(family) else ((5, 3), [(4, 5)])
    # 2 -> 3 channels; a smaller kernel, batch and input in three dimensions
    side = (5, 4, 3)[n - 1] if family.transposed else (7, 5, 4)[n - 1]
    return (2, 3, 3 if n < 3 else 2), [(2 if n < 3 else 1, 2) + (side,) * n]


def _dtype_twin(family):
    """The torch layer whose dtypes under autocast the members of the complex ``family`` follow."""
    # the complex bilinear map is a linear map followed by a matmul, both on
    # autocast's lists; torch's real Bilinear is not (it stays in float32)
    return torch.nn.Linear if _is_bilinear(family) else getattr(torch.nn, family.name)


def _complex_cases():
    # (class, args, input shapes, torch twin, the twin's input shapes)
    for family in PACKAGE_FAMILIES:
        if not family.complex:
            continue
        args, shapes = _sizes(family)
        classes = [_families.twin_class(family.dense, kind) for kind in KINDS]
        classes += [cls for cls in EXTENSIONS if _families.lookup(cls).family is family]
        twin = _dtype_twin(family)
        if _is_bilinear(family):
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
    (_families.twin_class(family.dense, kind), *_sizes(family), getattr(torch.nn, family.name))
    for family in PACKAGE_FAMILIES if not family.complex
    for kind in ("masked", "vd", "ard")
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
        if twin is torch.nn.Bilinear and input_dtype == BF16:
            # torch's Bilinear (not on autocast's lists) refuses a bfloat16
            # input with float32 weights, and so does its twin
            for module in (reference, layer):
                with pytest.raises(RuntimeError, match="same dtype"):
                    module(*inputs)
            return
        expected = reference(*inputs)
        output = layer(*inputs)
        penalty = getattr(layer, "penalty", None)
    assert output.dtype == expected.dtype
    torch.testing.assert_close(output, expected, rtol=0, atol=0)
    if penalty is not None:
        assert penalty.dtype == torch.float32


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("cls, shape", [(cnn.CplxBatchNorm1d, (16, 3, 5)), (cnn.CplxLayerNorm, (4, 5))])
def test_norm_computes_half_input_in_float32(cls, shape, training):
    # torch's norms take a half-precision input with float32 parameters, in
    # or out of autocast, accumulate in float32 and round the output once
    torch.manual_seed(3)
    half = _build(cls, shape[1:2] if cls is cnn.CplxBatchNorm1d else shape[-1:]).train(training)
    full = _build(cls, shape[1:2] if cls is cnn.CplxBatchNorm1d else shape[-1:]).train(training)
    with torch.no_grad():
        for p_half, p_full in zip(half.parameters(), full.parameters()):
            p_half.normal_()
            p_full.copy_(p_half)
    z = cplx.randn(*shape).to(BF16)
    for context in (contextlib.nullcontext(), autocast()):
        with context:
            output = half(z)
        expected = full(z.float())
        assert output.dtype == BF16
        assert torch.equal(output.real, expected.real.to(BF16))
        assert torch.equal(output.imag, expected.imag.to(BF16))
        for (name, b_half), b_full in zip(half.named_buffers(), full.buffers()):
            assert b_half.dtype == b_full.dtype and torch.equal(b_half, b_full), name


def test_norm_refuses_what_torch_refuses():
    # float64 input to float32 statistics: torch's BatchNorm1d refuses it too
    bn = cnn.CplxBatchNorm1d(3)
    with pytest.raises(RuntimeError):
        torch.nn.BatchNorm1d(3)(torch.randn(4, 3, dtype=torch.float64))
    before = {k: v.clone() for k, v in bn.state_dict().items()}
    with autocast(), pytest.raises(TypeError, match="CplxBatchNorm1d: `input` must have the dtype"):
        bn(cplx.randn(4, 3, dtype=torch.float64))
    assert all(torch.equal(v, before[k]) for k, v in bn.state_dict().items())


def test_products_take_mixed_dtypes_only_under_autocast():
    layer, z = cnn.CplxLinear(3, 2), cplx.randn(4, 3).to(BF16)
    with pytest.raises(RuntimeError):
        torch.nn.Linear(3, 2)(torch.randn(4, 3, dtype=BF16))
    with pytest.raises(TypeError, match=r"CplxLinear: `input` must have the dtype.*torch.autocast"):
        layer(z)
    with autocast():
        assert layer(z).dtype == BF16
        # autocast leaves float64 alone, and torch's Linear then refuses it
        with pytest.raises(TypeError, match="CplxLinear: `input` must have the dtype"):
            layer(z.double())


@pytest.mark.parametrize("strategy", [None, *_product.STRATEGIES])
@pytest.mark.parametrize("op, x_shape, w_shape", [
    (cplx.linear, (6, 5), (4, 5)),
    (cplx.conv1d, (2, 3, 9), (4, 3, 3)),
    (cplx.conv_transpose2d, (2, 3, 4, 4), (3, 2, 3, 3)),
], ids=["linear", "conv1d", "conv_transpose2d"])
def test_every_strategy_under_autocast(op, x_shape, w_shape, strategy):
    torch.manual_seed(4)
    x, w = cplx.randn(*x_shape), cplx.randn(*w_shape)
    expected = op(x.double(), w.double())
    for input_dtype in (torch.float32, BF16):
        with autocast():
            output = op(x.to(input_dtype), w, strategy=strategy)
        # autocast leaves torch's complex dtypes alone: "native" stays complex64
        assert output.dtype == (torch.float32 if strategy == "native" else BF16)
        for part, ref in zip(_parts(output), _parts(expected)):
            # the input itself is rounded to bfloat16 in either case
            assert (part.double() - ref).abs().max() <= 0.03 * ref.abs().max()


def test_default_strategy_under_autocast_rounds_once():
    # "cat" accumulates each output part in float32 and rounds it once, as
    # torch's Linear under autocast; "naive" rounds three times (its four
    # products, then their sums) and 3M's sums cancel
    torch.manual_seed(8)
    x, w = cplx.randn(64, 256), cplx.randn(128, 256)
    layout = _product.Layout(channel_dim=1, weight_out=0, weight_in=1)
    assert _product.default_strategy(x, w, layout) != "cat"
    with autocast():
        assert _product.default_strategy(x, w, layout) == "cat"
    # the exact product of the operands as autocast rounds them
    exact = cplx.linear(x.to(BF16).double(), w.to(BF16).double())
    errors = {}
    for strategy in _product.STRATEGIES[:3]:
        with autocast():
            output = cplx.linear(x, w, strategy=strategy)
        errors[strategy] = sum(
            (part.double() - ref).square().mean() for part, ref in zip(_parts(output), _parts(exact))
        ).sqrt() / sum(ref.square().mean() for ref in _parts(exact)).sqrt()
    # bfloat16's unit roundoff is 2**-9: one rounding of each part
    assert errors["cat"] < 2**-9 < errors["naive"] < errors["3m"]


BAYESIAN_LAYERS = [
    relevance.LinearVD, relevance.LinearARD, relevance.CplxLinearVD, relevance.CplxConv1dARD,
    extensions.CplxLinearVDScaleFree, extensions.CplxLinearVDApprox, extensions.CplxLinearVDBogus,
    relevance.LinearL0, relevance.LinearLASSO,
]


@pytest.mark.parametrize("cls", BAYESIAN_LAYERS, ids=lambda cls: cls.__name__)
def test_penalty_is_float32_under_autocast(cls):
    # the KL terms (Ei included) take float32 parameters and no product:
    # nothing in them is on autocast's lists, so they are float32 and the
    # same as without autocast
    layer = _build(cls, (3, 2, 3) if "Conv" in cls.__name__ else (3, 2))
    if hasattr(layer, "log_sigma2"):
        with torch.no_grad():
            layer.log_sigma2.uniform_(-8, 4)
    expected = layer.penalty
    with autocast():
        penalty = layer.penalty
        log_alpha = getattr(layer, "log_alpha", None)
    assert penalty.dtype == torch.float32 and torch.equal(penalty, expected)
    if log_alpha is not None:
        assert log_alpha.dtype == torch.float32 and torch.equal(log_alpha, layer.log_alpha)


def test_float16_modulus_does_not_overflow():
    # |z|^2 of 300 + 400j overflows float16 (max 65504); the modulus must not
    z = cplx.Cplx(torch.tensor([300.0, 3.0]), torch.tensor([400.0, 4.0])).half()
    with autocast(torch.float16):
        assert torch.equal(cnn.CplxModulus()(z), torch.tensor([500.0, 5.0], dtype=torch.float16))
        pooled = cnn.CplxMaxPool1d(2)(cplx.Cplx(torch.tensor([[[300.0, 400.0]]]),
                                                torch.tensor([[[400.0, 0.0]]])).half())
    assert pooled.real.item() == 300.0 and pooled.imag.item() == 400.0


def _small_net():
    return torch.nn.Sequential(
        cnn.CplxLinear(8, 8), cnn.CplxBatchNorm1d(8), cnn.CplxModReLU(0.1),
        cnn.CplxLinear(8, 8), cnn.CplxModulus(), torch.nn.Linear(8, 3),
    )


def test_float16_autocast_trains_with_grad_scaler():
    # float16's range is narrow: torch.amp.GradScaler scales the loss so
    # that small gradients survive, and unscales them before the step
    torch.manual_seed(5)
    z = cplx.randn(128, 8)
    label = (z.real[:, 0] > 0).long() + (z.imag[:, 1] > 0).long()
    losses = {}
    for dtype in (None, torch.float16):
        torch.manual_seed(6)
        net = _small_net()
        optimizer = torch.optim.Adam(net.parameters(), lr=3e-2)
        scaler = torch.amp.GradScaler("cpu", enabled=dtype is not None, init_scale=2.0**10)
        context = autocast(dtype) if dtype else contextlib.nullcontext()
        for _ in range(30):
            with context:
                loss = F.cross_entropy(net(z), label)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        losses[dtype] = loss.item()
        assert all(p.dtype == torch.float32 and p.isfinite().all() for p in net.parameters())
    assert losses[None] < 0.1 * math.log(3)
    # the same model trained in float16 ends near the float32 loss
    assert abs(losses[torch.float16] - losses[None]) < 0.05


def _train_demo_model(dtype, steps=150):
    """The demo's model trained on three constellations; its test accuracy."""
    classes = ("BPSK", "QPSK", "16QAM")
    kwargs = dict(snr_db=(20.0, 30.0), classes=classes, length=32)
    train, test = generate(100, seed=(0, 0), **kwargs), generate(200, seed=(0, 1), **kwargs)
    x, y = as_input(train.signal), torch.from_numpy(train.label)
    torch.manual_seed(0)
    model = ModulationNet(len(classes), width=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = torch.randint(len(y), (steps, 32), generator=torch.Generator().manual_seed(1))
    context = autocast(dtype) if dtype else contextlib.nullcontext()
    for index in batches:
        with context:
            loss = F.cross_entropy(model(x[index]), y[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        prediction = model(as_input(test.signal)).argmax(-1)
    return (prediction == torch.from_numpy(test.label)).double().mean().item()


def test_demo_model_trains_under_bfloat16_as_in_float32():
    # the same initialisation and batches, the forward pass and the loss
    # under bfloat16 autocast: the test accuracy (600 bursts, chance 1/3)
    # within 2 points of float32's. At this size one accuracy's standard
    # error is about 2 points; the products guide gives the demo's
    # full-size figures, within 1 point.
    accuracy = _train_demo_model(None)
    assert accuracy > 0.45
    assert abs(_train_demo_model(BF16) - accuracy) <= 0.02


@pytest.mark.parametrize("input_dtype", [torch.float32, BF16], ids=["float32", "bfloat16"])
def test_compact_sparse_layers_under_autocast(input_dtype):
    # torch's CSR product has no half-precision CPU kernel: the compact
    # layers run it in float32 under autocast, as autocast's float32 list
    torch.manual_seed(7)
    weight = cplx.randn(3, 5)
    weight = cplx.Cplx(weight.real * (torch.rand(3, 5) > 0.5), weight.imag)
    with pytest.raises(RuntimeError), autocast():
        torch.sparse.mm(weight.real.to_sparse_csr(), torch.randn(5, 2))
    real, complex_ = masked.SparseLinear(weight.real, torch.ones(3)), masked.CplxSparseLinear(weight)
    x, z = torch.randn(4, 5).to(input_dtype), cplx.randn(4, 5).to(input_dtype)
    with autocast():
        y, w = real(x), complex_(z)
    assert y.dtype == w.dtype == torch.float32
    torch.testing.assert_close(y, F.linear(x.float(), weight.real, torch.ones(3)))
    expected = cplx.linear(z.double(), weight.double())
    # the float32 product, not a bfloat16 one (which would miss by 1e-2)
    torch.testing.assert_close(w.real.double(), expected.real, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(w.imag.double(), expected.imag, rtol=1e-5, atol=1e-5)
