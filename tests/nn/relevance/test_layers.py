"""Variational dropout and ARD layers, the whole-model helpers and model twins.

References: numpy complex arithmetic and torch's own dense layers for
outputs and variances, scipy.integrate (tests/helpers.py) for the
penalties.
"""

import importlib

import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from torch.nn.parallel import replicate

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxConv1d, CplxConvTranspose2d, CplxLinear
from cplxmodule.nn import relevance as R
from cplxmodule.nn.masked import (
    binarize_masks,
    convert_layers,
    deploy_masks,
    magnitude_masks,
    to_masked,
)
from cplxmodule.nn.relevance import extensions as E
from cplxmodule.nn.utils import named_sparsity, sparsity

from ...helpers import (
    ard_kl, as_data_parallel, cplx_log_modulus2, cplx_vd_kl, fake_broadcast, real_vd_kl,
    replicate_module,
)

REAL_LAYERS = {
    "Linear": ((5, 3), (4, 5)),
    "Bilinear": ((5, 2, 3), ((4, 5), (4, 2))),
    "Conv1d": ((2, 3, 3), (2, 2, 7)),
    "Conv2d": ((2, 3, 3), (2, 2, 5, 5)),
    "Conv3d": ((2, 3, 2), (1, 2, 3, 4, 4)),
    "ConvTranspose1d": ((2, 3, 3), (2, 2, 5)),
    "ConvTranspose2d": ((2, 3, 3), (2, 2, 4, 4)),
    "ConvTranspose3d": ((2, 3, 2), (1, 2, 3, 3, 3)),
}
KINDS = ["VD", "ARD"]


def real_input(shape, generator=None):
    if isinstance(shape[0], tuple):
        return tuple(torch.randn(s, generator=generator, dtype=torch.float64) for s in shape)
    return (torch.randn(shape, generator=generator, dtype=torch.float64),)


def cplx_input(shape):
    if isinstance(shape[0], tuple):
        return tuple(cplx.randn(*s, dtype=torch.float64) for s in shape)
    return (cplx.randn(*shape, dtype=torch.float64),)


def make(family, kind, complex_, **kwargs):
    args, shape = REAL_LAYERS[family]
    module = R.complex if complex_ else R.real
    cls = getattr(module, ("Cplx" if complex_ else "") + family + kind)
    return cls(*args, **kwargs).double(), (cplx_input if complex_ else real_input)(shape)


def dense_of(layer):
    """The dense torch layer (real) with the same weights, or None for complex."""
    return getattr(torch.nn, type(layer).__name__.replace("VD", "").replace("ARD", ""), None)


# ----------------------------------------------------------------- structure


@pytest.mark.parametrize("family", list(REAL_LAYERS))
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_layers_keep_the_dense_twins_keys_and_add_log_sigma2(family, complex_):
    layer, _ = make(family, "VD", complex_)
    dense_keys = (
        {"weight", "bias"}
        if not complex_
        else {"weight.real", "weight.imag", "bias.real", "bias.imag"}
    )
    assert set(layer.state_dict()) == dense_keys | {"log_sigma2"}
    weight = layer.weight.real if complex_ else layer.weight
    assert layer.log_sigma2.shape == weight.shape
    assert torch.all(layer.log_sigma2 == -10)
    assert isinstance(layer, R.BaseARD) and isinstance(layer, R.GaussianMixin)


def test_reset_parameters_resets_log_sigma2_and_meta_construction():
    layer = R.CplxConv2dVD(2, 3, 3, device="meta")
    assert layer.log_sigma2.is_meta and layer.weight.real.is_meta
    layer = layer.to_empty(device="cpu")
    layer.reset_parameters()
    assert torch.all(layer.log_sigma2 == -10)
    out = layer(cplx.randn(1, 2, 4, 4))
    assert out.shape == (1, 3, 2, 2)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_log_alpha_and_relevance(complex_):
    layer, _ = make("Linear", "VD", complex_)
    w = layer.weight
    modulus = (
        np.abs(w.real.detach().numpy() + 1j * w.imag.detach().numpy())
        if complex_
        else np.abs(w.detach().numpy())
    )
    with torch.no_grad():
        layer.log_sigma2.copy_(torch.randn(3, 5, dtype=torch.float64) * 4)
    log_alpha = layer.log_sigma2.detach().numpy() - 2 * np.log(modulus + 1e-12)
    np.testing.assert_allclose(layer.log_alpha.detach().numpy(), log_alpha, atol=1e-9)
    mask = layer.relevance(threshold=1.0)
    assert torch.equal(layer.relevance(threshold=torch.tensor(1.0)), mask)
    np.testing.assert_array_equal(mask.numpy(), (log_alpha <= 1.0).astype(float))
    assert not mask.requires_grad and mask.dtype == torch.float64
    n_dropped = int((log_alpha > 1.0).sum())
    counts = [n for _, n in layer.sparsity(threshold=1.0)]
    assert counts == [n_dropped] * (2 if complex_ else 1)


# ----------------------------------------------------------------- penalties


def set_unit_weight(layer, log_alphas):
    """Weights of modulus 1, so that log_alpha = log_sigma2."""
    with torch.no_grad():
        for part in (
            (layer.weight.real, layer.weight.imag)
            if isinstance(layer.weight, Cplx)
            else (layer.weight,)
        ):
            part.zero_()
        (layer.weight.real if isinstance(layer.weight, Cplx) else layer.weight).fill_(1.0)
        layer.log_sigma2.copy_(torch.tensor(log_alphas, dtype=torch.float64).view(1, -1))


LAS = [-4.0, -1.0, 0.0, 1.5, 5.0]
PENALTY_REFERENCES = [
    (R.LinearVD, real_vd_kl, 0.01),
    (R.LinearARD, lambda la: ard_kl(la, 1), 1e-6),
    (R.CplxLinearVD, cplx_vd_kl, 1e-8),
    (R.CplxLinearARD, lambda la: ard_kl(la, 2), 1e-6),
    (E.CplxLinearVDApprox, cplx_vd_kl, 0.011),
    (E.CplxLinearVDScaleFree, lambda la: 0.5 * (cplx_log_modulus2(la) - la) - la + 0.5 * la, 1e-8),
]


@pytest.mark.parametrize(
    "cls, reference, tol", PENALTY_REFERENCES, ids=lambda v: getattr(v, "__name__", "")
)
def test_layer_penalty_is_the_kl(cls, reference, tol):
    # ScaleFree at |w| = 1: -log sigma^2 + E log|w|^2 / 2, with no constant
    layer = cls(len(LAS), 1).double()
    set_unit_weight(layer, LAS)
    expected = np.array([reference(la) for la in LAS])
    np.testing.assert_allclose(layer.penalty.detach().numpy()[0], expected, atol=tol, rtol=0)


def test_bogus_penalty_value_and_gradient():
    layer = E.CplxLinearVDBogus(len(LAS), 1).double()
    set_unit_weight(layer, LAS)
    penalty = layer.penalty
    np.testing.assert_allclose(penalty.detach().numpy()[0], -np.array(LAS), atol=1e-9)
    penalty.sum().backward()
    h = 1e-4
    numeric = [(cplx_vd_kl(la + h) - cplx_vd_kl(la - h)) / (2 * h) for la in LAS]
    np.testing.assert_allclose(layer.log_sigma2.grad.numpy()[0], numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "cls",
    [
        R.LinearVD,
        R.LinearARD,
        R.CplxLinearVD,
        R.CplxLinearARD,
        E.CplxLinearVDApprox,
        E.CplxLinearVDScaleFree,
    ],
)
def test_layer_penalty_gradcheck(cls):
    layer = cls(3, 2).double()

    def penalty(log_sigma2, weight):
        # the layer's penalty with these tensors in place of its parameters
        original = layer.log_sigma2, layer.weight
        del layer.log_sigma2
        object.__setattr__(layer, "log_sigma2", log_sigma2)
        try:
            return layer.penalty
        finally:
            del layer.__dict__["log_sigma2"]
            layer.log_sigma2 = original[0]

    log_sigma2 = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda ls2: penalty(ls2, None), (log_sigma2,))


@pytest.mark.slow
@pytest.mark.inductor
def test_complex_vd_layer_and_penalty_compile_fullgraph():
    layer = R.CplxLinearVD(4, 3)
    x = cplx.randn(2, 4)

    def step(x):
        out = layer(x)
        return out.real, out.imag, layer.penalty.sum()

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    real, imag, penalty = compiled(x)  # training: sampled
    assert real.shape == (2, 3) and torch.isfinite(real).all()
    penalty.backward()
    assert layer.log_sigma2.grad is not None
    layer.eval()
    for got, expected in zip(compiled(x), step(x)):
        torch.testing.assert_close(got, expected)


# ----------------------------------------------------------------- forward


@pytest.mark.parametrize("family", list(REAL_LAYERS))
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_eval_output_is_the_dense_output(family, complex_):
    layer, inputs = make(family, "ARD", complex_)
    layer.eval()
    out = layer(*inputs)
    expected = layer._dense_forward(*inputs, weight=layer.weight, bias=layer.bias)
    if not complex_:
        dense = dense_of(layer)(*REAL_LAYERS[family][0]).double()
        dense.load_state_dict(layer.state_dict(), strict=False)
        expected = dense(*inputs)
        torch.testing.assert_close(out, expected)
    else:
        torch.testing.assert_close(out.real, expected.real)


N_SAMPLES = 20000


def test_local_reparameterisation_moments_real():
    torch.manual_seed(0)
    layer = R.Conv1dVD(2, 3, 3, padding=1, padding_mode="circular").double()
    with torch.no_grad():
        layer.log_sigma2.uniform_(-3, 0)
    x = torch.randn(1, 2, 5, dtype=torch.float64)
    out = layer(x.expand(N_SAMPLES, 2, 5))
    mean = tF.conv1d(tF.pad(x, (1, 1), mode="circular"), layer.weight, layer.bias).detach()
    var = tF.conv1d(tF.pad(x * x, (1, 1), mode="circular"), layer.log_sigma2.exp()).detach()
    se = (var / N_SAMPLES).sqrt()
    assert torch.all((out.mean(0) - mean[0]).abs() < 5 * se[0])
    torch.testing.assert_close(out.var(0), var[0], rtol=0.06, atol=0)


def test_local_reparameterisation_moments_complex_circular():
    torch.manual_seed(0)
    layer = R.CplxLinearVD(4, 3).double()
    with torch.no_grad():
        layer.log_sigma2.uniform_(-3, 0)
    x = cplx.randn(1, 4, dtype=torch.float64)
    out = layer(Cplx(x.real.expand(N_SAMPLES, 4), x.imag.expand(N_SAMPLES, 4)))
    w = layer.weight.real.detach().numpy() + 1j * layer.weight.imag.detach().numpy()
    b = layer.bias.real.detach().numpy() + 1j * layer.bias.imag.detach().numpy()
    xn = x.real.numpy()[0] + 1j * x.imag.numpy()[0]
    mean = w @ xn + b
    var = layer.log_sigma2.exp().detach().numpy() @ np.abs(xn) ** 2
    re, im = out.real.detach().numpy(), out.imag.detach().numpy()
    se = np.sqrt(var / 2 / N_SAMPLES)
    assert np.all(np.abs(re.mean(0) - mean.real) < 5 * se)
    assert np.all(np.abs(im.mean(0) - mean.imag) < 5 * se)
    np.testing.assert_allclose(re.var(0), var / 2, rtol=0.06)
    np.testing.assert_allclose(im.var(0), var / 2, rtol=0.06)
    # circular: real and imaginary noise uncorrelated
    covariance = ((re - re.mean(0)) * (im - im.mean(0))).mean(0)
    assert np.all(np.abs(covariance) < 5 * var / 2 / np.sqrt(N_SAMPLES))


@pytest.mark.parametrize("family", list(REAL_LAYERS))
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_training_variance_goes_through_the_dense_entry_point(family, complex_):
    # sigma^2 = 0 (log_sigma2 = -inf): the training output is the mean
    layer, inputs = make(family, "VD", complex_)
    with torch.no_grad():
        layer.log_sigma2.fill_(-float("inf"))
    out, mean = layer.train()(*inputs), layer.eval()(*inputs)
    for a, b in ((out.real, mean.real), (out.imag, mean.imag)) if complex_ else ((out, mean),):
        torch.testing.assert_close(a, b)
    layer.train()
    loss = layer(*inputs)
    (loss.real.sum() if complex_ else loss.sum()).backward()
    assert all(torch.isfinite(p.grad).all() for p in layer.parameters() if p.grad is not None)


def test_transposed_output_size_reaches_both_products():
    layer = R.CplxConvTranspose2dVD(2, 3, 3, stride=2).double()
    out = layer(cplx.randn(1, 2, 4, 4, dtype=torch.float64), output_size=(10, 10))
    assert out.shape == (1, 3, 10, 10)


def test_zero_input_gives_finite_gradients():
    layer = R.LinearVD(3, 2)
    out = layer(torch.zeros(4, 3))
    out.sum().backward()
    assert torch.isfinite(layer.log_sigma2.grad).all() and torch.isfinite(layer.weight.grad).all()


# ----------------------------------------------------------------- helpers


def real_model():
    return torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(12, 4)
    )


class CplxFlatten(torch.nn.Module):
    def forward(self, input):
        return input.flatten(1)


def complex_model():
    return torch.nn.Sequential(
        CplxConv1d(2, 3, 3), CplxFlatten(), torch.nn.Sequential(CplxLinear(9, 4), CplxLinear(4, 2))
    )


def model_input(model):
    if isinstance(model[0], torch.nn.Conv2d):
        return torch.randn(5, 2, 4, 4)
    return cplx.randn(5, 2, 5)


def as_tuple(out):
    return (out.real, out.imag) if isinstance(out, Cplx) else (out,)


def test_named_penalties_and_reductions():
    model = R.to_bayesian(complex_model(), kind="vd")
    names = [name for name, _ in R.named_penalties(model)]
    assert names == ["0", "2.0", "2.1"]
    per_weight = dict(R.named_penalties(model, reduction=None))
    assert per_weight["2.0"].shape == (4, 9)
    for reduction, fn in (("sum", torch.sum), ("mean", torch.mean)):
        for name, value in R.named_penalties(model, reduction=reduction, prefix="m"):
            torch.testing.assert_close(value, fn(per_weight[name[2:]]))
    total = sum(R.penalties(model))
    torch.testing.assert_close(total, sum(v.sum() for v in per_weight.values()))


def test_compute_ard_masks_keys_load_into_the_masked_twin():
    torch.manual_seed(0)
    model = R.to_bayesian(real_model(), kind="ard")
    with torch.no_grad():
        for layer in (model[0], model[3]):
            layer.log_sigma2.normal_(0, 3)
    masks = R.compute_ard_masks(model, threshold=0.5)
    assert sorted(masks) == ["0.mask", "3.mask"]
    masked = to_masked(model)
    result = masked.load_state_dict(masks, strict=False)
    assert not result.unexpected_keys
    for name in ("0", "3"):
        layer = model.get_submodule(name)
        expected = (layer.log_alpha <= 0.5).to(torch.float32)
        assert torch.equal(masked.get_submodule(name).mask, expected)
    state, binary = binarize_masks(masked.state_dict(), masks)
    assert sorted(binary) == sorted(masks)
    expected_zeros = sum(int((m == 0).sum()) for m in masks.values())
    assert sparsity(masked) == pytest.approx(
        expected_zeros / sum(p.numel() for p in masked.parameters())
    )
    # the Bayesian model reports the same figures (log_sigma2 is left out, as published)
    assert dict(named_sparsity(model, threshold=0.5)) == dict(named_sparsity(masked))


@pytest.mark.parametrize("make_model", [real_model, complex_model], ids=["real", "complex"])
def test_dense_to_bayesian_to_masked_reproduces_outputs(make_model):
    torch.manual_seed(0)
    dense = make_model().eval()
    x = model_input(dense)
    bayesian = R.to_bayesian(dense, kind="vd").eval()
    # the same by hand: a dense checkpoint loads into the VD twin with strict=False
    result = bayesian.load_state_dict(dense.state_dict(), strict=False)
    assert not result.unexpected_keys and all(k.endswith("log_sigma2") for k in result.missing_keys)
    for a, b in zip(as_tuple(bayesian(x)), as_tuple(dense(x))):
        torch.testing.assert_close(a, b)

    with torch.no_grad():
        for layer in bayesian.modules():
            if isinstance(layer, R.BaseARD):
                layer.log_sigma2.normal_(-2, 3)
    masks = R.compute_ard_masks(bayesian, threshold=0.0)
    masked = to_masked(bayesian, masks=masks).eval()
    # reference: the dense model with each weight zeroed where log_alpha > 0
    reference = dense
    with torch.no_grad():
        for name, mask in masks.items():
            layer = reference.get_submodule(name[: -len(".mask")])
            for part in as_tuple(layer.weight):
                part.mul_(mask)
    for a, b in zip(as_tuple(masked(x)), as_tuple(reference(x))):
        torch.testing.assert_close(a, b)


def test_convert_layers_keeps_shared_layers_and_leaves_the_source():
    shared = torch.nn.Linear(3, 3)
    model = torch.nn.Sequential(shared, torch.nn.Tanh(), shared)
    twin = R.to_bayesian(model)
    assert twin[0] is twin[2] and type(twin[0]) is R.LinearVD
    assert type(model[0]) is torch.nn.Linear
    back = convert_layers(twin, "dense")
    assert type(back[0]) is torch.nn.Linear and torch.equal(back[0].weight, shared.weight)
    transposed = convert_layers(
        torch.nn.Sequential(CplxConvTranspose2d(2, 3, 3, stride=2, output_padding=1)), "ard"
    )
    assert type(transposed[0]) is R.CplxConvTranspose2dARD and transposed[0].output_padding == (
        1,
        1,
    )


@pytest.mark.parametrize("scope", ["global", "layer"])
def test_magnitude_masks(scope):
    torch.manual_seed(0)
    model = complex_model()
    masks = magnitude_masks(model, keep=0.3, scope=scope)
    assert sorted(masks) == ["0.mask", "2.0.mask", "2.1.mask"]
    layers = {name[: -len(".mask")]: model.get_submodule(name[: -len(".mask")]) for name in masks}
    moduli = {
        name: np.abs(layer.weight.real.detach().numpy() + 1j * layer.weight.imag.detach().numpy())
        for name, layer in layers.items()
    }
    if scope == "global":
        everything = np.concatenate([m.ravel() for m in moduli.values()])
        cut = np.sort(everything)[::-1][round(0.3 * everything.size) - 1]
        for name, m in moduli.items():
            np.testing.assert_array_equal(
                masks[name + ".mask"].numpy(), (m >= cut).astype(np.float32)
            )
    else:
        for name, m in moduli.items():
            cut = np.sort(m.ravel())[::-1][max(1, round(0.3 * m.size)) - 1]
            np.testing.assert_array_equal(
                masks[name + ".mask"].numpy(), (m >= cut).astype(np.float32)
            )
    deploy_masks(to_masked(model), state_dict=masks)


# ----------------------------------------------------------------- DataParallel


@pytest.mark.parametrize("make_model", [real_model, complex_model], ids=["real", "complex"])
def test_replicate_bayesian_and_masked_twins(monkeypatch, make_model):
    torch.manual_seed(0)
    monkeypatch.setattr(
        replicate_module, "_broadcast_coalesced_reshape", fake_broadcast(torch.device("meta"))
    )
    dense = make_model()
    x = model_input(dense)
    bayesian = R.to_bayesian(dense, kind="ard")
    replicas = replicate(bayesian, [0, 1])
    assert all(p.is_meta for p in replicas[1].parameters())
    # the meta replica runs end to end, training and eval, penalty included
    out = replicas[1](
        x.to("meta") if isinstance(x, torch.Tensor) else Cplx(x.real.to("meta"), x.imag.to("meta"))
    )
    assert all(t.is_meta for t in as_tuple(out))
    assert sum(R.penalties(replicas[1])).is_meta
    # replica 0 shares the source's parameters: gradients reach them
    sum(R.penalties(replicas[0])).backward()
    assert all(
        layer.log_sigma2.grad is not None
        for layer in bayesian.modules()
        if isinstance(layer, R.BaseARD)
    )

    masked = to_masked(bayesian, masks=R.compute_ard_masks(bayesian, threshold=3.0)).eval()
    replicas = replicate(masked, [0, 1], detach=True)
    for a, b in zip(as_tuple(replicas[0](x)), as_tuple(masked(x))):
        torch.testing.assert_close(a, b)


def test_cplx_data_parallel_runs_the_bayesian_twin(two_fake_devices):  # noqa: F811 (the fixture)
    from cplxmodule.nn import CplxDataParallel

    torch.manual_seed(0)
    model = R.to_bayesian(complex_model(), kind="vd").eval()
    x = cplx.randn(4, 2, 5)
    parallel = as_data_parallel(CplxDataParallel, model)
    out, expected = parallel(x), model(x)
    torch.testing.assert_close(out.real, expected.real)
    torch.testing.assert_close(out.imag, expected.imag)
    # training: each replica samples; the loss with the KL reaches every parameter
    model.train()
    out = parallel(x)
    ((out.real.square() + out.imag.square()).mean() + sum(R.penalties(model))).backward()
    assert [n for n, p in model.named_parameters() if p.grad is None] == []


# ----------------------------------------------------------------- extensions


def test_l0_gates():
    torch.manual_seed(0)
    layer = E.LinearL0(5, 1)
    with torch.no_grad():
        layer.log_alpha.copy_(torch.tensor([[-3.0, -1.0, 0.0, 1.0, 3.0]]))
    beta, gamma, zeta = 2 / 3, -0.1, 1.1
    gate = np.clip(
        1 / (1 + np.exp(layer.log_alpha.detach().numpy())) * (zeta - gamma) + gamma, 0, 1
    )
    np.testing.assert_allclose(layer.relevance(hard=False).numpy(), gate, rtol=1e-6)
    np.testing.assert_array_equal(
        layer.relevance(threshold=3.0).numpy(), (gate > 0).astype(np.float32)
    )
    expected_penalty = 1 / (
        1 + np.exp(layer.log_alpha.detach().numpy() + beta * np.log(-gamma / zeta))
    )
    np.testing.assert_allclose(layer.penalty.detach().numpy(), expected_penalty, rtol=1e-6)
    x = torch.randn(4, 5)
    layer.eval()
    torch.testing.assert_close(
        layer(x), tF.linear(x, layer.weight * torch.tensor(gate, dtype=torch.float32), layer.bias)
    )
    layer.train()
    samples = torch.stack([layer.gate() for _ in range(4000)])
    assert samples.min() >= 0 and samples.max() <= 1
    # P(gate != 0) is the penalty
    np.testing.assert_allclose((samples > 0).float().mean(0).numpy(), expected_penalty, atol=0.03)
    assert E.LinearL0(4, 3, group="output").log_alpha.shape == (3, 1)


def _hard_concrete_cdf(value, log_alpha, beta=2 / 3, gamma=-0.1, zeta=1.1):
    """P(z <= value) of a hard-concrete gate, 0 <= value < 1 (Louizos et al., 2018).

    z = clip(s (zeta - gamma) + gamma, 0, 1) with s = sigmoid((L - log_alpha) / beta),
    L standard logistic: s <= t iff L <= log_alpha + beta logit(t).
    """
    t = (value - gamma) / (zeta - gamma)
    return 1 / (1 + np.exp(-(log_alpha + beta * np.log(t / (1 - t)))))


@pytest.mark.parametrize("group", ["input", "output"])
def test_l0_grouped_gates_are_drawn_per_example(group):
    # identity weight, ones in: each output is one example's gate (plus the bias)
    torch.manual_seed(0)
    layer = E.LinearL0(4, 4, group=group)
    log_alpha = np.array([-2.0, -0.5, 0.5, 2.0])
    with torch.no_grad():
        layer.weight.copy_(torch.eye(4))
        layer.bias.fill_(5.0)
        layer.log_alpha.copy_(torch.tensor(log_alpha).view(layer.log_alpha.shape))
    n = 6000
    output = layer(torch.ones(n, 4))
    gates = (output - 5.0).detach().numpy()
    assert gates.min() >= 0 and gates.max() <= 1 + 1e-6
    # one call: the rows are independent draws of the hard-concrete law
    assert len(np.unique(gates[:, 1])) > n // 2
    for value in (0.0, 0.25, 0.5, 0.75, 1 - 1e-6):
        np.testing.assert_allclose(
            (gates <= value).mean(0), _hard_concrete_cdf(value, log_alpha), atol=0.025
        )
    # the features of one example are drawn independently too
    c = np.corrcoef(gates[:, 1], gates[:, 2])[0, 1]
    assert abs(c) < 0.05
    output.sum().backward()
    assert layer.log_alpha.grad is not None and torch.all(layer.log_alpha.grad != 0)
    # unbatched input: one gate per feature
    assert layer(torch.ones(4)).shape == (4,)
    # eval mode: the fixed gates, the same for every row
    layer.eval()
    rows = layer(torch.ones(3, 4))
    torch.testing.assert_close(rows, rows[:1].expand(3, 4))


def test_l0_weight_gates_are_drawn_once_per_call():
    # a gate per weight and example would take a weight matrix per example
    torch.manual_seed(1)
    layer = E.LinearL0(4, 3)
    out = layer(torch.ones(8, 4))
    torch.testing.assert_close(out, out[:1].expand(8, 3))


def test_lasso():
    layer = E.LinearLASSO(4, 3)
    torch.testing.assert_close(layer.penalty, layer.weight.abs())
    # the threshold is on log|w|, as published (log|w| > -1.6: |w| > 0.2)
    weight = layer.weight.detach().numpy()
    np.testing.assert_array_equal(
        layer.relevance(threshold=-1.6).numpy(), (np.log(np.abs(weight)) > -1.6).astype(np.float32)
    )


# ----------------------------------------------------------------- bad input


def test_bad_input_names_the_argument():
    model = R.to_bayesian(real_model())
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match="`reduction`"):
        R.named_penalties(model, reduction="max")
    with pytest.raises(ValueError, match="`reduction`"):
        R.penalties(model, reduction="max")
    with pytest.raises(TypeError, match="`threshold`"):
        R.compute_ard_masks(model, threshold="3")
    with pytest.raises(TypeError, match="`threshold`"):
        model[0].relevance(threshold=None)
    with pytest.raises(TypeError, match="`threshold`"):
        model[0].relevance(threshold=torch.ones(2))
    assert R.compute_ard_masks(real_model(), threshold=3.0) == {}  # as published
    with pytest.raises(ValueError, match="`kind`"):
        R.to_bayesian(model, kind="l0")
    with pytest.raises(ValueError, match="`keep`"):
        magnitude_masks(model, keep=1.5)
    with pytest.raises(ValueError, match="`scope`"):
        magnitude_masks(model, keep=0.5, scope="row")
    with pytest.raises(ValueError, match="`group`"):
        E.LinearL0(3, 2, group="rows")
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key])


# ----------------------------------------------------------------- published names

# Every public name of the published package's relevance tree, by module
# (``SparsityStats`` is re-exported from cplxmodule.nn.utils.sparsity where it exists).
_FAMILIES = ["Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d"]
_REAL_VD, _REAL_ARD = ([f + kind for f in _FAMILIES] for kind in ("VD", "ARD"))
_REAL_GAUSSIAN = [f + "Gaussian" for f in _FAMILIES]
_CPLX_VD, _CPLX_ARD, _CPLX_GAUSSIAN = (
    ["Cplx" + n for n in names] for names in (_REAL_VD, _REAL_ARD, _REAL_GAUSSIAN)
)
_VARIANTS = [f"Cplx{f}VD{v}" for f in _FAMILIES for v in ("Approx", "Bogus", "ScaleFree")]
_HELPERS = ["compute_ard_masks", "named_penalties", "named_relevance", "penalties"]
_EXTRA = ["LinearL0", "LinearLASSO"]
PUBLISHED = {
    "cplxmodule.nn.relevance": _REAL_VD + _REAL_ARD + _CPLX_VD + _CPLX_ARD + _EXTRA + _HELPERS,
    "cplxmodule.nn.relevance.base": ["BaseARD"] + _HELPERS,
    "cplxmodule.nn.relevance.real": _REAL_VD + _REAL_ARD,
    "cplxmodule.nn.relevance.real.base": _REAL_GAUSSIAN + ["ConvNdGaussianMixin", "GaussianMixin"],
    "cplxmodule.nn.relevance.real.vd": _REAL_VD
    + _REAL_GAUSSIAN
    + ["BaseARD", "RealVDMixin", "RelevanceMixin", "SparsityStats"],
    "cplxmodule.nn.relevance.real.ard": _REAL_VD + _REAL_ARD + ["RealARDMixin"],
    "cplxmodule.nn.relevance.complex": _CPLX_VD + _CPLX_ARD + ["ExpiFunction"],
    "cplxmodule.nn.relevance.complex.base": _CPLX_GAUSSIAN
    + ["Cplx" + f for f in _FAMILIES]
    + ["CplxConvNdGaussianMixin", "GaussianMixin"],
    "cplxmodule.nn.relevance.complex.vd": _CPLX_VD
    + _CPLX_GAUSSIAN
    + ["BaseARD", "CplxVDMixin", "ExpiFunction", "RelevanceMixin", "SparsityStats", "euler_gamma"],
    "cplxmodule.nn.relevance.complex.ard": _CPLX_VD + _CPLX_ARD + ["CplxARDMixin"],
    "cplxmodule.nn.relevance.extensions": _VARIANTS + _EXTRA,
    "cplxmodule.nn.relevance.extensions.complex": _CPLX_VD
    + _VARIANTS
    + [
        "BogusExpiFunction",
        "CplxVDApproxMixin",
        "CplxVDBogusMixin",
        "CplxVDScaleFreeMixin",
        "ExpiFunction",
    ],
    "cplxmodule.nn.relevance.extensions.real": _EXTRA,
    "cplxmodule.nn.relevance.extensions.real.ell_zero": ["BaseARD", "LinearL0", "SparsityStats"],
    "cplxmodule.nn.relevance.extensions.real.lasso": ["BaseARD", "LinearLASSO", "SparsityStats"],
}


@pytest.mark.parametrize("module", sorted(PUBLISHED))
def test_published_names_exist_at_their_paths(module):
    mod = importlib.import_module(module)
    expected = [
        n
        for n in PUBLISHED[module]
        if n != "SparsityStats"
        or hasattr(importlib.import_module("cplxmodule.nn.utils.sparsity"), n)
    ]
    missing = [name for name in expected if not hasattr(mod, name)]
    assert not missing, f"{module} lacks {missing}"


RELEVANCE_MODULES = sorted(PUBLISHED) + [
    "cplxmodule.nn.relevance.functional",
    "cplxmodule.nn.relevance.twins",
]


@pytest.mark.parametrize("module", RELEVANCE_MODULES)
def test_public_names_have_docstrings(module):
    mod = importlib.import_module(module)
    for name in getattr(mod, "__all__", []):
        obj = getattr(mod, name)
        if callable(obj):
            assert obj.__doc__ and obj.__doc__.strip(), f"{module}.{name}"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_bayesian_twin_on_cuda():
    model = R.to_bayesian(complex_model()).cuda()
    x = cplx.randn(5, 2, 5).cuda()
    out = model(x)
    assert out.real.is_cuda and sum(R.penalties(model)).is_cuda
    masked = to_masked(model, masks=R.compute_ard_masks(model, threshold=3.0)).eval()
    assert masked(x).real.is_cuda


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_training_output_gradcheck(complex_):
    # the same noise at every call: the sample is a smooth function of the parameters
    layer, (x,) = make("Linear", "VD", complex_)
    names = ["log_sigma2", "weight.real", "weight.imag"] if complex_ else ["log_sigma2", "weight"]
    params = {
        name: torch.randn_like(p, requires_grad=True)
        for name, p in layer.named_parameters()
        if name in names
    }

    def sample(*tensors):
        torch.manual_seed(0)
        out = torch.func.functional_call(layer, dict(zip(names, tensors)), (x,))
        return (out.real, out.imag) if complex_ else out

    assert torch.autograd.gradcheck(sample, tuple(params[name] for name in names))
