"""Group, instance and RMS norms, naive and magnitude batch norms, against numpy.

The references whiten with numpy's eigendecomposition (the code under test
uses a closed form), compute moduli and phases with numpy's complex128, and
the naive batch norm is checked against two of torch's own batch norms.
"""

import copy
import io
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx

EPS = 1e-5


# --- numpy references --------------------------------------------------------
def to_np(z):
    return z.real.detach().numpy() + 1j * z.imag.detach().numpy()


def from_np(a):
    return Cplx(torch.from_numpy(a.real.copy()), torch.from_numpy(a.imag.copy()))


def np_whiten(values, mean=None, cov=None, eps=EPS):
    """Whiten complex ``values`` as real 2-vectors, by their own or given statistics."""
    pairs = np.stack([values.real.ravel(), values.imag.ravel()])
    if mean is None:
        mean, cov = pairs.mean(1), np.cov(pairs, bias=True)
    lam, q = np.linalg.eigh(cov + eps * np.eye(2))
    u = ((q / np.sqrt(lam)) @ q.T) @ (pairs - mean[:, None])
    return (u[0] + 1j * u[1]).reshape(values.shape)


def np_affine(z, weight, bias):
    """Per-channel real 2x2 ``weight`` and shift ``bias`` of a complex (N, C, *) array."""
    if weight is None:
        return z
    view = (1, -1) + (1,) * (z.ndim - 2)
    w = [[weight[i, j].reshape(view) for j in range(2)] for i in range(2)]
    re = w[0][0] * z.real + w[0][1] * z.imag + bias[0].reshape(view)
    im = w[1][0] * z.real + w[1][1] * z.imag + bias[1].reshape(view)
    return re + 1j * im


def np_group_norm(z, groups, weight=None, bias=None, eps=EPS):
    out = np.empty_like(z)
    size = z.shape[1] // groups
    for n in range(z.shape[0]):
        for g in range(groups):
            block = slice(g * size, (g + 1) * size)
            out[n, block] = np_whiten(z[n, block], eps=eps)
    return np_affine(out, weight, bias)


def np_instance_norm(z, weight=None, bias=None, mean=None, cov=None, eps=EPS):
    out = np.empty_like(z)
    for n in range(z.shape[0]):
        for c in range(z.shape[1]):
            stats = (None, None) if mean is None else (mean[:, c], cov[:, :, c])
            out[n, c] = np_whiten(z[n, c], *stats, eps=eps)
    return np_affine(out, weight, bias)


def np_instance_stats(z):
    """Batch averages of the per-instance means (2, C) and unbiased covariances (2, 2, C)."""
    means = np.zeros((2, z.shape[1]))
    covs = np.zeros((2, 2, z.shape[1]))
    for n in range(z.shape[0]):
        for c in range(z.shape[1]):
            pairs = np.stack([z[n, c].real.ravel(), z[n, c].imag.ravel()])
            means[:, c] += pairs.mean(1) / z.shape[0]
            covs[:, :, c] += np.cov(pairs) / z.shape[0]
    return means, covs


def np_rms_norm(z, k, weight=None, eps=None):
    eps = np.finfo(z.real.dtype).eps if eps is None else eps
    axes = tuple(range(z.ndim - k, z.ndim))
    out = z / np.sqrt((np.abs(z) ** 2).mean(axes, keepdims=True) + eps)
    return out if weight is None else out * weight


def np_magnitude_batch_norm(z, weight, bias, mean=None, var=None, eps=EPS):
    axes = (0, *range(2, z.ndim))
    view = (1, -1) + (1,) * (z.ndim - 2)
    r = np.abs(z)
    if mean is None:
        mean, var = r.mean(axes), r.var(axes)
    m = (r - mean.reshape(view)) / np.sqrt(var.reshape(view) + eps)
    m = m * weight.reshape(view) + bias.reshape(view)
    return m * np.exp(1j * np.angle(z))


def correlated(shape, seed=0):
    """A complex float64 input with correlated parts and a non-zero mean."""
    g = torch.Generator().manual_seed(seed)
    raw = torch.randn(2, *shape, generator=g, dtype=torch.float64)
    return Cplx(raw[0] + 1.0, 0.6 * raw[0] + 0.8 * raw[1] - 2.0)


def randomise(module, seed=1):
    """Random parameters (and running statistics) away from their initial values."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
        for name, b in module.named_buffers():
            if name.endswith("running_var") and b.dim() == 3:  # (2, 2, C) covariance
                a = torch.randn(2, 2, b.shape[-1], generator=g, dtype=b.dtype)
                b.copy_(torch.einsum("ijc,kjc->ikc", a, a) + torch.eye(2, dtype=b.dtype)[..., None])
            elif name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=g, dtype=b.dtype) + 0.5)
            elif name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=g, dtype=b.dtype))
    return module


def np_params(module):
    return (
        None if module.weight is None else module.weight.detach().numpy(),
        None if module.bias is None else module.bias.detach().numpy(),
    )


# --- group norm -----------------------------------------------------------
@pytest.mark.parametrize(
    "groups, shape", [(1, (3, 4, 5)), (2, (2, 4, 3, 2)), (4, (2, 4, 6)), (3, (2, 6, 2, 2, 2))]
)
def test_group_norm_matches_numpy(groups, shape):
    z = correlated(shape)
    layer = randomise(cnn.CplxGroupNorm(groups, shape[1], dtype=torch.float64))
    expected = np_group_norm(to_np(z), groups, *np_params(layer))
    np.testing.assert_allclose(to_np(layer(z)), expected, rtol=1e-9, atol=1e-9)
    # no running statistics: evaluation mode is the same computation
    np.testing.assert_allclose(to_np(layer.eval()(z)), expected, rtol=1e-9, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(
    groups=st.integers(1, 3),
    per_group=st.integers(1, 3),
    batch=st.integers(1, 3),
    length=st.integers(2, 4),
    seed=st.integers(0, 2**16),
)
def test_group_norm_functional_property(groups, per_group, batch, length, seed):
    z = correlated((batch, groups * per_group, length), seed)
    out = cplx.group_norm(z, groups, eps=1e-3)
    np.testing.assert_allclose(
        to_np(out), np_group_norm(to_np(z), groups, eps=1e-3), rtol=1e-8, atol=1e-8
    )


# --- instance norm --------------------------------------------------------
INSTANCE = [
    (cnn.CplxInstanceNorm1d, (3, 2, 7)),
    (cnn.CplxInstanceNorm2d, (3, 2, 3, 4)),
    (cnn.CplxInstanceNorm3d, (2, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("cls, shape", INSTANCE)
@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm_matches_numpy_in_both_modes_without_tracking(cls, shape, affine):
    z = correlated(shape)
    layer = cls(2, affine=affine, dtype=torch.float64)
    if affine:
        randomise(layer)
    assert layer.running_mean is None
    expected = np_instance_norm(to_np(z), *np_params(layer))
    np.testing.assert_allclose(to_np(layer(z)), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(to_np(layer.eval()(z)), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls, shape", INSTANCE)
def test_instance_norm_running_stats_and_eval(cls, shape):
    z1, z2 = correlated(shape, 1), correlated(shape, 2)
    layer = randomise(
        cls(2, affine=True, track_running_stats=True, momentum=0.3, dtype=torch.float64)
    )
    mean0, cov0 = layer.running_mean.numpy().copy(), layer.running_var.numpy().copy()
    out = layer(z1)
    # training normalises by each instance's own statistics, not the running ones
    expected = np_instance_norm(to_np(z1), *np_params(layer))
    np.testing.assert_allclose(to_np(out), expected, rtol=1e-9, atol=1e-9)
    mean, cov = np_instance_stats(to_np(z1))
    np.testing.assert_allclose(layer.running_mean.numpy(), 0.7 * mean0 + 0.3 * mean, atol=1e-12)
    np.testing.assert_allclose(layer.running_var.numpy(), 0.7 * cov0 + 0.3 * cov, atol=1e-12)
    # torch's instance norms never count batches
    assert int(layer.num_batches_tracked) == 0

    layer.eval()
    stats = layer.running_mean.numpy().copy(), layer.running_var.numpy().copy()
    expected = np_instance_norm(to_np(z2), *np_params(layer), *stats)
    np.testing.assert_allclose(to_np(layer(z2)), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(layer.running_mean.numpy(), stats[0])


@pytest.mark.parametrize("cls, shape", INSTANCE)
def test_instance_norm_unbatched_is_a_batch_of_one(cls, shape):
    z = correlated(shape)
    layer = randomise(cls(2, affine=True, dtype=torch.float64))
    out = layer(z[0])
    assert out.shape == z[0].shape
    np.testing.assert_allclose(to_np(out), to_np(layer(z))[0], rtol=1e-12, atol=1e-12)


def test_instance_norm_momentum_none_keeps_running_stats():
    # torch's InstanceNorm passes momentum 0 when it is None
    layer = cnn.CplxInstanceNorm1d(2, momentum=None, track_running_stats=True)
    layer(cplx.randn(3, 2, 5) * 3 + 1)
    torch.testing.assert_close(layer.running_mean, torch.zeros(2, 2))
    torch.testing.assert_close(layer.running_var, torch.eye(2)[..., None].expand(2, 2, 2))


# --- per-sample independence -------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: cnn.CplxGroupNorm(2, 4),
        lambda: cnn.CplxInstanceNorm1d(4, track_running_stats=True),
        lambda: cnn.CplxRMSNorm(6),
    ],
    ids=["group", "instance", "rms"],
)
def test_per_sample_normalisation_ignores_the_rest_of_the_batch(make):
    layer = make().double()
    z = correlated((3, 4, 6))
    other = correlated((3, 4, 6), seed=5) * 10
    mixed = cplx.cat([z[:1], other[1:]], dim=0)
    np.testing.assert_allclose(to_np(layer(mixed))[0], to_np(layer(z))[0], rtol=1e-12, atol=1e-12)


# --- RMS norm -------------------------------------------------------------
@pytest.mark.parametrize("shape, normalized", [((4, 6), 6), ((2, 3, 4, 5), (4, 5))])
@pytest.mark.parametrize("eps", [None, 0.1])
def test_rms_norm_matches_complex128(shape, normalized, eps):
    z = correlated(shape)
    layer = randomise(cnn.CplxRMSNorm(normalized, eps=eps, dtype=torch.float64))
    k = 1 if isinstance(normalized, int) else len(normalized)
    expected = np_rms_norm(to_np(z), k, layer.weight.detach().numpy(), eps)
    np.testing.assert_allclose(to_np(layer(z)), expected, rtol=1e-12, atol=1e-12)


def test_rms_norm_keeps_the_phase_and_the_default_eps_is_the_dtypes():
    z = cplx.randn(5, 8)
    out = cnn.CplxRMSNorm(8)(z)
    torch.testing.assert_close(out.angle, z.angle, atol=1e-5, rtol=0)
    native = z.real.double() + 1j * z.imag.double()
    scale = torch.rsqrt((native.abs() ** 2).mean(-1, keepdim=True) + torch.finfo(torch.float32).eps)
    got = out.real.double() + 1j * out.imag.double()
    torch.testing.assert_close(got, native * scale, rtol=1e-5, atol=1e-6)
    assert cnn.CplxRMSNorm(8, elementwise_affine=False).weight is None


# --- naive batch norm -------------------------------------------------------
NAIVE = [
    (cnn.CplxNaiveBatchNorm1d, torch.nn.BatchNorm1d, (6, 3)),
    (cnn.CplxNaiveBatchNorm1d, torch.nn.BatchNorm1d, (4, 3, 5)),
    (cnn.CplxNaiveBatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 2, 3)),
    (cnn.CplxNaiveBatchNorm3d, torch.nn.BatchNorm3d, (2, 3, 2, 2, 3)),
]


@pytest.mark.parametrize("cls, base, shape", NAIVE)
@pytest.mark.parametrize("momentum", [0.2, None])
def test_naive_batch_norm_is_torchs_on_each_part(cls, base, shape, momentum):
    layer = randomise(cls(3, momentum=momentum, dtype=torch.float64))
    ref_re = base(3, momentum=momentum, dtype=torch.float64)
    ref_im = base(3, momentum=momentum, dtype=torch.float64)
    state = layer.state_dict()
    ref_re.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("real.")})
    ref_im.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("imag.")})
    for seed in (1, 2):
        z = correlated(shape, seed)
        out = layer(z)
        torch.testing.assert_close(out.real, ref_re(z.real))
        torch.testing.assert_close(out.imag, ref_im(z.imag))
    for module in (layer, ref_re, ref_im):
        module.eval()
    z = correlated(shape, 3)
    out = layer(z)
    torch.testing.assert_close(out.real, ref_re(z.real))
    torch.testing.assert_close(out.imag, ref_im(z.imag))
    torch.testing.assert_close(layer.real.running_var, ref_re.running_var)
    torch.testing.assert_close(layer.imag.running_mean, ref_im.running_mean)


def test_naive_batch_norm_state_dict_keys():
    keys = set(cnn.CplxNaiveBatchNorm2d(3).state_dict())
    names = {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}
    assert keys == {f"{part}.{name}" for part in ("real", "imag") for name in names}
    bare = cnn.CplxNaiveBatchNorm2d(3, affine=False, track_running_stats=False)
    assert not bare.state_dict()


# --- magnitude batch norm ---------------------------------------------------
MAGNITUDE = [
    (cnn.CplxMagnitudeBatchNorm1d, (8, 3)),
    (cnn.CplxMagnitudeBatchNorm1d, (4, 3, 5)),
    (cnn.CplxMagnitudeBatchNorm2d, (3, 3, 2, 3)),
    (cnn.CplxMagnitudeBatchNorm3d, (2, 3, 2, 2, 3)),
]


@pytest.mark.parametrize("cls, shape", MAGNITUDE)
def test_magnitude_batch_norm_matches_numpy(cls, shape):
    layer = randomise(cls(3, momentum=0.25, dtype=torch.float64))
    mean0, var0 = layer.running_mean.numpy().copy(), layer.running_var.numpy().copy()
    z = correlated(shape, 1)
    a = to_np(z)
    expected = np_magnitude_batch_norm(a, *np_params(layer))
    np.testing.assert_allclose(to_np(layer(z)), expected, rtol=1e-9, atol=1e-9)
    axes = (0, *range(2, a.ndim))
    r = np.abs(a)
    np.testing.assert_allclose(layer.running_mean.numpy(), 0.75 * mean0 + 0.25 * r.mean(axes))
    np.testing.assert_allclose(layer.running_var.numpy(), 0.75 * var0 + 0.25 * r.var(axes, ddof=1))

    layer.eval()
    z = correlated(shape, 2)
    stats = layer.running_mean.numpy(), layer.running_var.numpy()
    expected = np_magnitude_batch_norm(to_np(z), *np_params(layer), *stats)
    np.testing.assert_allclose(to_np(layer(z)), expected, rtol=1e-9, atol=1e-9)


def test_magnitude_batch_norm_keeps_the_phase_where_the_modulus_stays_positive():
    z = cplx.randn(16, 2, 4, dtype=torch.float64)
    layer = cnn.CplxMagnitudeBatchNorm1d(2, dtype=torch.float64)
    with torch.no_grad():
        layer.bias.fill_(10.0)  # every normalised modulus positive
    out = layer(z)
    torch.testing.assert_close(out.angle, z.angle)
    zero = Cplx(torch.zeros(4, 2), torch.zeros(4, 2))
    out = cnn.CplxMagnitudeBatchNorm1d(2).eval()(zero)
    assert torch.isfinite(out.real).all() and (out.imag == 0).all()


def test_magnitude_batch_norm_without_running_stats_uses_the_batch_in_eval():
    layer = cnn.CplxMagnitudeBatchNorm1d(3, track_running_stats=False, dtype=torch.float64)
    z = correlated((6, 3, 4))
    expected = np_magnitude_batch_norm(to_np(z), *np_params(layer))
    np.testing.assert_allclose(to_np(layer.eval()(z)), expected, rtol=1e-9, atol=1e-9)


# --- every layer: gradients, copies, state, compile, export ------------------
TRACKED = {"affine": True, "track_running_stats": True}


def all_layers():
    """(id, factory, input shape): every new layer, with affine parameters."""
    return [
        ("group", lambda: cnn.CplxGroupNorm(2, 4), (3, 4, 3)),
        ("instance1d", lambda: cnn.CplxInstanceNorm1d(4, **TRACKED), (3, 4, 5)),
        ("instance2d", lambda: cnn.CplxInstanceNorm2d(4, **TRACKED), (2, 4, 2, 3)),
        ("instance3d", lambda: cnn.CplxInstanceNorm3d(4, affine=True), (2, 4, 2, 2, 2)),
        ("rms", lambda: cnn.CplxRMSNorm((2, 3)), (3, 4, 2, 3)),
        ("naive1d", lambda: cnn.CplxNaiveBatchNorm1d(4), (5, 4)),
        ("naive2d", lambda: cnn.CplxNaiveBatchNorm2d(4), (3, 4, 2, 2)),
        ("naive3d", lambda: cnn.CplxNaiveBatchNorm3d(4), (2, 4, 2, 2, 2)),
        ("magnitude1d", lambda: cnn.CplxMagnitudeBatchNorm1d(4), (5, 4, 2)),
        ("magnitude2d", lambda: cnn.CplxMagnitudeBatchNorm2d(4), (3, 4, 2, 2)),
        ("magnitude3d", lambda: cnn.CplxMagnitudeBatchNorm3d(4), (2, 4, 2, 2, 2)),
    ]


LAYERS = all_layers()
IDS = [name for name, _, _ in LAYERS]


@pytest.mark.parametrize("name, make, shape", LAYERS, ids=IDS)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_gradcheck(name, make, shape, training):
    layer = randomise(make().double()).train(training)
    z = correlated(shape)
    re, im = z.real.requires_grad_(), z.imag.requires_grad_()
    params = [p for _, p in layer.named_parameters()]
    names = [n for n, _ in layer.named_parameters()]
    # the running statistics must not move between gradcheck's evaluations
    buffers = {n: b.clone() for n, b in layer.named_buffers()}

    def f(re, im, *values):
        state = {**dict(zip(names, values)), **{n: b.clone() for n, b in buffers.items()}}
        out = torch.func.functional_call(layer, state, (Cplx(re, im),))
        return out.real, out.imag

    assert torch.autograd.gradcheck(f, (re, im, *params), fast_mode=True)


@pytest.mark.parametrize("name, make, shape", LAYERS, ids=IDS)
def test_to_deepcopy_and_state_dict_round_trip(name, make, shape):
    layer = randomise(make())
    layer(cplx.randn(*shape))  # running statistics move
    layer.eval()
    z = correlated(shape)
    expected = layer.double()(z)
    assert all(p.dtype == torch.float64 for p in layer.parameters())
    assert all(b.dtype == torch.float64 for b in layer.buffers() if b.is_floating_point())
    twin = copy.deepcopy(layer)
    torch.testing.assert_close(twin(z).real, expected.real)
    fresh = make().double().eval()
    fresh.load_state_dict(layer.state_dict())
    out = fresh(z)
    torch.testing.assert_close(out.real, expected.real, rtol=0, atol=0)
    torch.testing.assert_close(out.imag, expected.imag, rtol=0, atol=0)


class Stack(torch.nn.Module):
    """One layer of each new kind on real parts in and out (for compile and export)."""

    def __init__(self):
        super().__init__()
        self.layers = cnn.CplxSequential(
            cnn.CplxGroupNorm(2, 4),
            cnn.CplxInstanceNorm2d(4, affine=True, track_running_stats=True),
            cnn.CplxRMSNorm((3, 3)),
            cnn.CplxNaiveBatchNorm2d(4),
            cnn.CplxMagnitudeBatchNorm2d(4),
        )

    def forward(self, re, im):
        out = self.layers(Cplx(re, im))
        return out.real, out.imag


@pytest.mark.inductor
def test_compile_fullgraph_matches_eager_in_both_modes():
    torch.manual_seed(0)
    eager = randomise(Stack())
    compiled_model = copy.deepcopy(eager)
    compiled = torch.compile(compiled_model, fullgraph=True, backend="aot_eager")
    x = torch.randn(2, 4, 4, 3, 3)
    for a, b in zip(eager(*x), compiled(*x)):
        torch.testing.assert_close(a, b)
    for (name, a), b in zip(eager.named_buffers(), compiled_model.buffers()):
        torch.testing.assert_close(a, b, msg=name)
    # evaluation mode: the running statistics normalise (a recompilation)
    eager.eval(), compiled_model.eval()
    x = torch.randn(2, 3, 4, 3, 3)
    for a, b in zip(eager(*x), compiled(*x)):
        torch.testing.assert_close(a, b)


@pytest.mark.onnx
def test_onnx_export_in_eval_mode():
    onnx = pytest.importorskip("onnx")  # noqa: F841
    ort = pytest.importorskip("onnxruntime")
    torch.manual_seed(0)
    model = randomise(Stack())
    with torch.no_grad():
        model(*torch.randn(2, 4, 4, 3, 3))
    model.eval()
    x = torch.randn(2, 3, 4, 3, 3)
    with torch.no_grad():
        expected = model(*x)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(x), buffer, dynamo=False, input_names=["re", "im"])
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    outputs = session.run(None, {"re": x[0].numpy(), "im": x[1].numpy()})
    for got, want in zip(outputs, expected):
        torch.testing.assert_close(torch.from_numpy(got), want, rtol=1e-4, atol=1e-5)


# --- bad input ------------------------------------------------------------
@pytest.mark.parametrize("name, make, shape", LAYERS, ids=IDS)
def test_bad_input_is_rejected_and_leaves_the_layer_unchanged(name, make, shape):
    layer = make()
    state = copy.deepcopy(layer.state_dict())
    wrong = list(shape)
    wrong[1 if name != "rms" else -1] += 1
    with pytest.raises(ValueError, match=rf"^{type(layer).__name__}: `input` must have shape"):
        layer(cplx.randn(*wrong))
    with pytest.raises(TypeError, match=rf"^{type(layer).__name__}: `input` must be a Cplx"):
        layer(torch.randn(*shape))
    for key, value in layer.state_dict().items():
        torch.testing.assert_close(value, state[key], rtol=0, atol=0)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"^CplxGroupNorm: `num_groups` must divide `num_channels` \(4\), got 3$"):
        cnn.CplxGroupNorm(3, 4)
    with pytest.raises(ValueError, match=r"^group_norm: `num_groups` must"):
        cplx.group_norm(cplx.randn(2, 4, 3), 0)
    with pytest.raises(ValueError, match=r"^rms_norm: `weight` must have shape \(3,\)"):
        cplx.rms_norm(cplx.randn(2, 3), 3, torch.ones(4))
    with pytest.raises(ValueError, match=r"^instance_norm: `input` must have more than 1 spatial"):
        cplx.instance_norm(cplx.randn(2, 4, 1))
    with pytest.raises(ValueError, match=r"^instance_norm: `running_mean` must be given"):
        cplx.instance_norm(cplx.randn(2, 4, 3), use_input_stats=False)
    with pytest.raises(ValueError, match=r"^magnitude_batch_norm: `weight` must have shape \(4,\)"):
        cplx.magnitude_batch_norm(cplx.randn(2, 4), None, None, torch.ones(3), training=True)
