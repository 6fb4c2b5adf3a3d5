"""Structured (channel) variational dropout, ARD and L0 layers, real and complex.

References: the KL divergences integrated with scipy (tests/helpers.py),
the root of the hard-concrete gate found with scipy.optimize, Monte Carlo of
the weight-noise model with the dense torch ops (numpy complex arithmetic
for complex layers), and torch's dense layers for outputs and masks.
"""

import re

import numpy as np
import pytest
import torch
from scipy import optimize, special
from torch.nn.parallel import replicate

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxConv1d, CplxGRU, CplxLinear, CplxSequential, CplxToCplx, _families
from cplxmodule.nn import relevance as R
from cplxmodule.nn.masked import compact, convert_layers, to_masked
from cplxmodule.nn.relevance import functional as F
from cplxmodule.nn.utils import named_sparsity

from ...helpers import (
    COMPLEX, KINDS, LOG_ALPHAS, REFERENCES, assert_training_gradcheck, dense_family_models,
    dense_twin, fake_broadcast, inputs_of, parts, replicate_module, set_gates,
)

FAMILIES = {
    "Linear": ((5, 3), (4, 5)),
    "Bilinear": ((5, 2, 3), ((4, 5), (4, 2))),
    "Conv1d": ((2, 4, 3), (2, 2, 7)),
    "Conv2d": ((2, 4, 3), (2, 2, 5, 5)),
    "Conv3d": ((2, 4, 2), (1, 2, 3, 4, 4)),
    "ConvTranspose1d": ((2, 4, 3), (2, 2, 5)),
    "ConvTranspose2d": ((2, 4, 3), (2, 2, 4, 4)),
    "ConvTranspose3d": ((2, 4, 2), (1, 2, 3, 3, 3)),
}


def make(family, kind, complex_, **kwargs):
    args, shape = FAMILIES[family]
    cls = getattr(R, ("Cplx" if complex_ else "") + family + kind)
    return cls(*args, **kwargs).double(), inputs_of(shape, complex_)


# ----------------------------------------------------------------- structure and penalties


@pytest.mark.parametrize("kind", KINDS)
@COMPLEX
def test_keys_shapes_and_initial_values(kind, complex_):
    layer, _ = make("Conv2d", kind, complex_)
    dense = {"weight", "bias"} if not complex_ else {"weight.real", "weight.imag", "bias.real", "bias.imag"}
    own = "log_alpha" if kind == "ChannelL0" else "log_sigma2"
    assert set(layer.state_dict()) == dense | {own}
    assert getattr(layer, own).shape == (4,) and layer.penalty.shape == (4,)
    expected = np.log(0.1 / 0.9) if kind == "ChannelL0" else -10.0
    np.testing.assert_allclose(getattr(layer, own).detach().numpy(), expected)
    assert isinstance(layer, R.BaseARD)


@pytest.mark.parametrize("kind, complex_, reference, tol", REFERENCES)
def test_penalty_is_the_kl_of_each_gate(kind, complex_, reference, tol):
    # the gate is N(1, alpha) (complex: CN(1, alpha)): the KL of a weight of mean 1
    layer = getattr(R, ("Cplx" if complex_ else "") + "Linear" + kind)(3, len(LOG_ALPHAS)).double()
    set_gates(layer, LOG_ALPHAS)
    expected = np.array([reference(la) for la in LOG_ALPHAS])
    np.testing.assert_allclose(layer.penalty.detach().numpy(), expected, rtol=tol, atol=tol)


def open_probability(la, beta=2 / 3, gamma=-0.1, zeta=1.1):
    """P(gate > 0): the uniform draw above the root of the stretched gate."""

    def gate(u):
        s = special.expit((np.log(u) - np.log1p(-u) - la) / beta)
        return s * (zeta - gamma) + gamma

    return 1 - optimize.brentq(gate, 1e-300, 1 - 1e-16, xtol=1e-300, rtol=1e-14)


def test_l0_penalty_is_the_probability_of_an_open_gate():
    las = [-4.0, -1.0, 0.0, 1.0, 3.0]
    layer = R.Conv1dChannelL0(2, len(las), 3).double()
    set_gates(layer, las)
    expected = [open_probability(la) for la in las]
    np.testing.assert_allclose(layer.penalty.detach().numpy(), expected, rtol=1e-10)
    # and the drawn gates are open as often
    torch.manual_seed(0)
    drawn = F.hard_concrete(torch.tensor(las, dtype=torch.float64), (40000, len(las)))
    freq = (drawn > 0).double().mean(0).numpy()
    assert np.all(np.abs(freq - expected) < 5 * np.sqrt(0.25 / 40000))


# ----------------------------------------------------------------- forward


@pytest.mark.parametrize("kind", KINDS)
@COMPLEX
def test_training_output_gradcheck(kind, complex_):
    cls = getattr(R, ("Cplx" if complex_ else "") + "Conv1d" + kind)
    assert_training_gradcheck(cls(2, 2, 2).double(), inputs_of((2, 2, 3), complex_), kind, complex_)


N_SAMPLES = 20000


def test_moments_match_the_weight_noise_model_real():
    torch.manual_seed(0)
    layer = R.Conv1dChannelVD(2, 3, 3, padding=1).double()
    set_gates(layer, [-2.0, -0.5, 0.5])
    x = torch.randn(1, 2, 5, dtype=torch.float64)
    out = layer(x.expand(N_SAMPLES, 2, 5)).detach().numpy()
    # the weight-noise model in numpy: each sample a filter bank scaled by
    # its own z ~ N(1, alpha), correlated with the zero-padded input
    rng = np.random.default_rng(1)
    alpha = np.exp([-2.0, -0.5, 0.5])
    z = 1 + np.sqrt(alpha) * rng.standard_normal((N_SAMPLES, 3))
    weights = layer.weight.detach().numpy() * z[..., None, None]
    padded = np.pad(x[0].numpy(), ((0, 0), (1, 1)))
    columns = np.stack([padded[:, p : p + 3] for p in range(5)], axis=-1)  # (in, k, position)
    reference = np.einsum("scik,ikp->scp", weights, columns) + layer.bias.detach().numpy()[:, None]
    se = reference.std(0) / np.sqrt(N_SAMPLES)
    assert np.all(np.abs(out.mean(0) - reference.mean(0)) < 5 * np.sqrt(2) * se)
    np.testing.assert_allclose(out.var(0), reference.var(0), rtol=0.1)
    # one gate per example and channel: the positions of a channel move together
    for sample in (out, reference):
        assert np.all(np.abs([np.corrcoef(sample[:, c, 0], sample[:, c, 3])[0, 1] for c in range(3)]) > 0.99)


def test_moments_match_the_weight_noise_model_complex():
    torch.manual_seed(0)
    layer = R.CplxLinearChannelVD(4, 3).double()
    set_gates(layer, [-2.0, -0.5, 0.5])
    x = cplx.randn(1, 4, dtype=torch.float64)
    out = layer(Cplx(x.real.expand(N_SAMPLES, 4), x.imag.expand(N_SAMPLES, 4)))
    sample = out.real.detach().numpy() + 1j * out.imag.detach().numpy()
    w = layer.weight.real.detach().numpy() + 1j * layer.weight.imag.detach().numpy()
    b = layer.bias.real.detach().numpy() + 1j * layer.bias.imag.detach().numpy()
    xn = x.real.numpy()[0] + 1j * x.imag.numpy()[0]
    # weight-noise model: W_c z_c, z ~ CN(1, alpha) (circular noise)
    rng = np.random.default_rng(1)
    alpha = np.exp([-2.0, -0.5, 0.5])
    eps = (rng.standard_normal((N_SAMPLES, 3)) + 1j * rng.standard_normal((N_SAMPLES, 3))) / np.sqrt(2)
    z = 1 + np.sqrt(alpha) * eps
    reference = np.einsum("sc,ci,i->sc", z, w, xn) + b
    for got, ref in ((sample.real, reference.real), (sample.imag, reference.imag)):
        se = ref.std(0) / np.sqrt(N_SAMPLES)
        assert np.all(np.abs(got.mean(0) - ref.mean(0)) < 5 * np.sqrt(2) * se)
        np.testing.assert_allclose(got.var(0), ref.var(0), rtol=0.1)
    # the variance alpha |Wx|^2 is split evenly, the parts uncorrelated
    half = alpha * np.abs(w @ xn) ** 2 / 2
    np.testing.assert_allclose(sample.real.var(0), half, rtol=0.06)
    np.testing.assert_allclose(sample.imag.var(0), half, rtol=0.06)
    cov = ((sample.real - sample.real.mean(0)) * (sample.imag - sample.imag.mean(0))).mean(0)
    assert np.all(np.abs(cov) < 5 * half / np.sqrt(N_SAMPLES))


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("kind", KINDS)
@COMPLEX
def test_eval_output_is_the_dense_output_with_the_gated_weight(family, kind, complex_):
    layer, inputs = make(family, kind, complex_)
    set_gates(layer, [-3.0, 0.0, 1.0, 5.0][: layer.n_channels] + [2.0] * (layer.n_channels - 4))
    dense = dense_twin(layer, FAMILIES)
    if kind == "ChannelL0":
        # Louizos et al.'s test-time gate, weight rows scaled
        la = layer.log_alpha.detach().numpy()
        gate = np.clip(1 / (1 + np.exp(la)) * 1.2 - 0.1, 0, 1)
        with torch.no_grad():
            for part in parts(dense.weight):
                dim = 1 if family.startswith("ConvTranspose") else 0
                shape = [1] * part.dim()
                shape[dim] = -1
                part.mul_(torch.from_numpy(gate).view(shape))
    out, expected = layer.eval()(*inputs), dense(*inputs)
    for a, b in zip(parts(out), parts(expected)):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("family", list(FAMILIES))
@COMPLEX
def test_masks_are_whole_output_channels(family, complex_):
    kwargs = {"groups": 2} if family.startswith("Conv") else {}
    layer, inputs = make(family, "ChannelARD", complex_, **kwargs)
    dropped = torch.tensor([False, True, False, True][: layer.n_channels] + [True] * (layer.n_channels - 4))
    set_gates(layer, torch.where(dropped, 4.0, -4.0))
    mask = layer.relevance(threshold=3.0)
    assert mask.shape == parts(layer.weight)[0].shape and set(mask.unique().tolist()) <= {0.0, 1.0}
    # the dense layer with the masked weight: dropped channels give their bias
    # alone, kept ones the dense output (mask 1 on everything they read)
    dense = dense_twin(layer, FAMILIES)
    full = dense(*inputs)
    with torch.no_grad():
        for part in parts(dense.weight):
            part.mul_(mask)
    out = dense(*inputs)
    dim = -1 if family in ("Linear", "Bilinear") else 1
    for o, f, b in zip(parts(out), parts(full), parts(dense.bias)):
        o, f = o.movedim(dim, 0), f.movedim(dim, 0)
        for c in range(layer.n_channels):
            torch.testing.assert_close(o[c], (torch.full_like(o[c], b[c].item()) if dropped[c] else f[c]))
    n = parts(layer.weight)[0].numel() // layer.n_channels
    assert int((mask == 0).sum()) == n * int(dropped.sum())
    counts = [c for _, c in layer.sparsity(threshold=3.0)]
    assert counts == [n * int(dropped.sum())] * len(parts(layer.weight))


def test_l0_relevance_hard_and_soft():
    layer = R.CplxConv1dChannelL0(2, 3, 3)
    set_gates(layer, torch.tensor([-5.0, 0.0, 5.0], dtype=torch.float32))
    soft = layer.relevance(hard=False)
    gate = np.clip(1 / (1 + np.exp([-5.0, 0.0, 5.0])) * 1.2 - 0.1, 0, 1)
    np.testing.assert_allclose(soft[:, 0, 0].numpy(), gate, rtol=1e-6)
    assert torch.equal(layer.relevance(threshold=3.0), (soft > 0).float())


# ----------------------------------------------------------------- model twins


@pytest.mark.parametrize("kind", ["channel_vd", "channel_ard", "channel_l0"])
def test_to_bayesian_converts_every_family(kind):
    dense = dense_family_models(2, 4, 3)
    twin = R.to_bayesian(dense, kind=kind)
    suffix = {"channel_vd": "ChannelVD", "channel_ard": "ChannelARD", "channel_l0": "ChannelL0"}[kind]
    for a, b in zip(dense, twin):
        assert type(b).__name__ == type(a).__name__ + suffix
        for p, q in zip(parts(a.weight), parts(b.weight)):
            assert torch.equal(p, q)
    back = convert_layers(twin, "masked")
    # every gate converts back (L0 gates folded into the weight: see
    # test_relevance_structured_l0_masked.py)
    assert all(type(layer).__name__ == type(a).__name__ + "Masked" for a, layer in zip(dense, back))


def structured_model():
    return CplxSequential(
        CplxConv1d(1, 6, 3), CplxToCplx[torch.nn.ReLU](), CplxConv1d(6, 4, 3), CplxToCplx[torch.nn.ReLU](), CplxLinear(8, 2)
    )


def test_state_dict_dense_to_structured_to_masked():
    torch.manual_seed(0)
    dense = structured_model().double().eval()
    x = cplx.randn(3, 1, 12, dtype=torch.float64)
    structured = R.to_bayesian(structured_model(), kind="channel_vd").double().eval()
    result = structured.load_state_dict(dense.state_dict(), strict=False)
    assert not result.unexpected_keys and sorted(result.missing_keys) == ["0.log_sigma2", "2.log_sigma2", "4.log_sigma2"]
    for a, b in zip(parts(structured(x)), parts(dense(x))):
        torch.testing.assert_close(a, b)
    # a per-weight VD checkpoint: its log_sigma2 is not the channels'
    per_weight = R.to_bayesian(dense, kind="vd").state_dict()
    result = structured.load_state_dict(per_weight, strict=False)
    assert sorted(result.missing_keys) == ["0.log_sigma2", "2.log_sigma2", "4.log_sigma2"]

    set_gates(structured[0], [5.0, -5.0, 5.0, -5.0, -5.0, 5.0])
    set_gates(structured[2], [-5.0, 5.0, -5.0, -5.0])
    masks = R.compute_ard_masks(structured, threshold=3.0)
    masked = to_masked(structured, masks=masks).eval()
    state = {**structured.state_dict(), **masks}
    fresh = to_masked(structured_model()).double().eval()
    fresh.load_state_dict(state, strict=False)
    with torch.no_grad():
        for name, mask in masks.items():
            for part in parts(dense.get_submodule(name[: -len(".mask")]).weight):
                part.mul_(mask)
    for model in (masked, fresh):
        for a, b in zip(parts(model(x)), parts(dense(x))):
            torch.testing.assert_close(a, b)
    # the figures count whole channels of the weights
    zeros = dict(named_sparsity(structured, threshold=3.0))
    assert zeros == dict(named_sparsity(masked))


def test_compact_removes_the_dropped_channels():
    torch.manual_seed(0)
    model = R.to_bayesian(structured_model(), kind="channel_vd").eval()
    set_gates(model[0], torch.tensor([5.0, -5.0, 5.0, -5.0, -5.0, 5.0]))
    with torch.no_grad():
        model[0].bias.real.zero_()  # dropped channels then carry relu(0) = 0
        model[0].bias.imag.zero_()
    small = compact(model, threshold=3.0)
    assert small[0].out_channels == 3 and small[2].in_channels == 3
    x = cplx.randn(3, 1, 12)
    reference = to_masked(model, R.compute_ard_masks(model, threshold=3.0)).eval()(x)
    for a, b in zip(parts(small(x)), parts(reference)):
        torch.testing.assert_close(a, b)
    # L0 gates are folded into the weights
    gated = R.to_bayesian(structured_model(), kind="channel_l0").eval()
    set_gates(gated[2], torch.tensor([-1.0, 9.0, 0.0, 9.0]))
    small = compact(gated)
    assert small[2].out_channels == 4  # the linear read-out keeps all its inputs here
    for a, b in zip(parts(small(x)), parts(gated(x))):
        torch.testing.assert_close(a, b)


def test_replicate_runs_on_a_meta_replica(monkeypatch):
    torch.manual_seed(0)
    monkeypatch.setattr(
        replicate_module, "_broadcast_coalesced_reshape", fake_broadcast(torch.device("meta"))
    )
    for kind in ("channel_vd", "channel_l0"):
        model = R.to_bayesian(structured_model(), kind=kind)
        replicas = replicate(model, [0, 1])
        assert all(p.is_meta for p in replicas[1].parameters())
        x = cplx.randn(3, 1, 12)
        out = replicas[1](Cplx(x.real.to("meta"), x.imag.to("meta")))
        assert out.real.is_meta and sum(R.penalties(replicas[1])).is_meta
        # replica 0 shares the source's parameters: the loss reaches them all
        out = replicas[0](x)
        ((out.real.square() + out.imag.square()).mean() + sum(R.penalties(replicas[0]))).backward()
        assert [n for n, p in model.named_parameters() if p.grad is None] == []


def test_meta_construction_and_reset():
    layer = R.CplxConv2dChannelVD(2, 3, 3, device="meta").to_empty(device="cpu")
    layer.reset_parameters()
    assert torch.all(layer.log_sigma2 == -10)
    layer = R.ConvTranspose2dChannelL0(2, 3, 3, device="meta").to_empty(device="cpu")
    layer.reset_parameters()
    np.testing.assert_allclose(layer.log_alpha.detach().numpy(), np.log(0.1 / 0.9), rtol=1e-6)


def test_bad_input_names_the_argument():
    model = R.to_bayesian(structured_model(), kind="channel_vd")
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(TypeError, match="`threshold`"):
        R.compute_ard_masks(model, threshold="3")
    with pytest.raises(TypeError, match="`threshold`"):
        model[0].relevance(threshold=None)
    with pytest.raises(ValueError, match="`kind`.*channel_l0"):
        R.to_bayesian(model, kind="channels")
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key])


def test_classes_are_documented_and_exported():
    for kind in KINDS:
        for family in FAMILIES:
            for prefix in ("", "Cplx"):
                name = prefix + family + kind
                assert name in R.__all__ and getattr(R, name).__doc__.strip()


def test_to_bayesian_documents_and_accepts_the_declared_kinds():
    # the kinds are those the layer classes declare: the docstring lists
    # them, each converts a model, and any other kind is refused by name
    documented = re.search(r"kind : \{(.*?)\}", R.to_bayesian.__doc__, re.S).group(1)
    kinds = sorted(re.findall(r'"(\w+)"', documented))
    assert kinds == _families.bayesian_kinds()
    for kind in kinds:
        model = R.to_bayesian(CplxSequential(CplxLinear(3, 2), CplxGRU(2, 2)), kind=kind)
        assert any(isinstance(layer, R.BaseARD) for layer in model)
    with pytest.raises(ValueError, match="to_bayesian: `kind`"):
        R.to_bayesian(CplxLinear(3, 2), kind="masked")
