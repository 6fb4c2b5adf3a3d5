"""Structured layers gating input channels (``gated="input"``), real and complex.

References: the KL divergences integrated with scipy (tests/helpers.py),
the hard-concrete gate's mean integrated with scipy, Monte Carlo of the
weight-noise model with weight columns scaled in numpy (numpy complex
arithmetic for complex layers), and torch's dense layers fed inputs whose
channels are zeroed or scaled, for outputs and masks.
"""

import numpy as np
import pytest
import torch
from scipy import integrate, special

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxBatchNorm1d, CplxConv1d, CplxLinear, CplxSequential, CplxToCplx
from cplxmodule.nn import relevance as R
from cplxmodule.nn.masked import compact, convert_layers, to_masked
from cplxmodule.nn.utils import named_sparsity

from ...helpers import (
    COMPLEX, KINDS, LOG_ALPHAS, REFERENCES, assert_training_gradcheck, dense_family_models,
    dense_twin, inputs_of, parts, set_gates,
)

# arguments (input channels: 4, or 5 features) and input shapes; convolutions
# are built with groups=2 where a test says so
FAMILIES = {
    "Linear": ((5, 3), (4, 5)),
    "Bilinear": ((5, 2, 3), ((4, 5), (4, 2))),
    "Conv1d": ((4, 2, 3), (2, 4, 7)),
    "Conv2d": ((4, 2, 3), (2, 4, 5, 5)),
    "Conv3d": ((4, 2, 2), (1, 4, 3, 3, 3)),
    "ConvTranspose1d": ((4, 2, 3), (2, 4, 5)),
    "ConvTranspose2d": ((4, 2, 3), (2, 4, 4, 4)),
    "ConvTranspose3d": ((4, 2, 2), (1, 4, 3, 3, 3)),
}


def make(family, kind, complex_, **kwargs):
    args, shape = FAMILIES[family]
    cls = getattr(R, ("Cplx" if complex_ else "") + family + kind)
    if family.startswith("Conv"):
        kwargs.setdefault("groups", 2)
    return cls(*args, gated="input", **kwargs).double(), inputs_of(shape, complex_)


def scale_channels(x, scale):
    """``x`` with its channel ``j`` (dimension 1, or the last of a linear input) times ``scale[j]``."""
    scale = torch.as_tensor(scale, dtype=torch.float64)
    view = scale.view(-1, *(1,) * (parts(x)[0].dim() - 2)) if parts(x)[0].dim() > 2 else scale
    if isinstance(x, Cplx):
        return Cplx(x.real * view, x.imag * view)
    return x * view


# ----------------------------------------------------------------- structure and penalties


@pytest.mark.parametrize("kind", KINDS)
@COMPLEX
def test_one_gate_per_input_channel(kind, complex_):
    layer, _ = make("Conv2d", kind, complex_)
    own = "log_alpha" if kind == "ChannelL0" else "log_sigma2"
    assert layer.n_channels == 4 and getattr(layer, own).shape == (4,) and layer.penalty.shape == (4,)
    assert layer.gated == "input" and layer.extra_repr().endswith(", gated='input'")
    assert "gated" not in type(layer)(2, 4, 3).extra_repr()  # the default is not shown


@pytest.mark.parametrize("kind, complex_, reference, tol", REFERENCES)
def test_penalty_is_the_kl_of_each_input_gate(kind, complex_, reference, tol):
    cls = getattr(R, ("Cplx" if complex_ else "") + "Linear" + kind)
    layer = cls(len(LOG_ALPHAS), 3, gated="input").double()
    set_gates(layer, LOG_ALPHAS)
    expected = np.array([reference(la) for la in LOG_ALPHAS])
    np.testing.assert_allclose(layer.penalty.detach().numpy(), expected, rtol=tol, atol=tol)


# ----------------------------------------------------------------- forward


N_SAMPLES = 20000


def test_moments_match_the_weight_noise_model_grouped_conv():
    torch.manual_seed(0)
    layer = R.Conv1dChannelVD(4, 2, 3, padding=1, groups=2, gated="input").double()
    log_alpha = np.array([-2.0, -0.5, 0.5, -1.0])
    set_gates(layer, log_alpha)
    x = torch.randn(1, 4, 5, dtype=torch.float64)
    out = layer(x.expand(N_SAMPLES, 4, 5)).detach().numpy()
    # the weight-noise model in numpy: output c reads input channels 2c, 2c + 1
    # through weight[c, 0] and weight[c, 1], each column scaled by its z ~ N(1, alpha)
    rng = np.random.default_rng(1)
    z = 1 + np.sqrt(np.exp(log_alpha)) * rng.standard_normal((N_SAMPLES, 4))
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    padded = np.pad(x[0].numpy(), ((0, 0), (1, 1)))
    columns = np.stack([padded[:, p : p + 3] for p in range(5)], axis=-1)  # (in, k, position)
    reference = np.empty((N_SAMPLES, 2, 5))
    for c in range(2):
        reads = [2 * c, 2 * c + 1]
        reference[:, c] = np.einsum("ik,sik,ikp->sp", w[c], z[:, reads, None], columns[reads]) + b[c]
    se = reference.std(0) / np.sqrt(N_SAMPLES)
    assert np.all(np.abs(out.mean(0) - reference.mean(0)) < 5 * np.sqrt(2) * se)
    np.testing.assert_allclose(out.var(0), reference.var(0), rtol=0.1)
    # one gate per example and input channel, shared by its positions: the
    # output's positions move together as the reference's do
    for p, q in ((0, 2), (1, 4)):
        got = [np.corrcoef(out[:, c, p], out[:, c, q])[0, 1] for c in range(2)]
        ref = [np.corrcoef(reference[:, c, p], reference[:, c, q])[0, 1] for c in range(2)]
        np.testing.assert_allclose(got, ref, atol=0.05)


def test_moments_match_the_weight_noise_model_complex():
    torch.manual_seed(0)
    layer = R.CplxLinearChannelVD(4, 3, gated="input").double()
    log_alpha = np.array([-2.0, -0.5, 0.5, 0.0])
    set_gates(layer, log_alpha)
    x = cplx.randn(1, 4, dtype=torch.float64)
    out = layer(Cplx(x.real.expand(N_SAMPLES, 4), x.imag.expand(N_SAMPLES, 4)))
    sample = out.real.detach().numpy() + 1j * out.imag.detach().numpy()
    w = layer.weight.real.detach().numpy() + 1j * layer.weight.imag.detach().numpy()
    b = layer.bias.real.detach().numpy() + 1j * layer.bias.imag.detach().numpy()
    xn = x.real.numpy()[0] + 1j * x.imag.numpy()[0]
    # weight-noise model: column j of W times z_j ~ CN(1, alpha_j)
    rng = np.random.default_rng(1)
    eps = (rng.standard_normal((N_SAMPLES, 4)) + 1j * rng.standard_normal((N_SAMPLES, 4))) / np.sqrt(2)
    z = 1 + np.sqrt(np.exp(log_alpha)) * eps
    reference = np.einsum("cj,sj,j->sc", w, z, xn) + b
    for got, ref in ((sample.real, reference.real), (sample.imag, reference.imag)):
        se = ref.std(0) / np.sqrt(N_SAMPLES)
        assert np.all(np.abs(got.mean(0) - ref.mean(0)) < 5 * np.sqrt(2) * se)
        np.testing.assert_allclose(got.var(0), ref.var(0), rtol=0.1)
    # the gates are shared by the outputs: their covariance is the reference's
    # (an output gate would leave them uncorrelated)
    for a, c in ((0, 1), (0, 2), (1, 2)):
        got = np.mean((sample[:, a] - sample[:, a].mean()) * np.conj(sample[:, c] - sample[:, c].mean()))
        ref = np.mean((reference[:, a] - reference[:, a].mean()) * np.conj(reference[:, c] - reference[:, c].mean()))
        scale = np.sqrt(sample[:, a].var() * sample[:, c].var())
        assert abs(got - ref) < 0.05 * scale


def hard_concrete_mean(la, beta=2 / 3, gamma=-0.1, zeta=1.1):
    """E[z] of Louizos et al.'s hard-concrete gate, integrated over its uniform draw."""

    def gate(u):
        s = special.expit((np.log(u) - np.log1p(-u) - la) / beta)
        return np.clip(s * (zeta - gamma) + gamma, 0, 1)

    return integrate.quad(gate, 0, 1, limit=200)[0]


def test_l0_training_mean_is_the_mean_gate_on_each_input_channel():
    # a grouped transposed convolution: input channel j is row j of its weight
    torch.manual_seed(0)
    layer = R.ConvTranspose1dChannelL0(4, 2, 3, groups=2, gated="input").double()
    log_alpha = [-3.0, 0.0, 1.0, -1.0]
    set_gates(layer, log_alpha)
    x = torch.randn(1, 4, 5, dtype=torch.float64)
    out = layer(x.expand(N_SAMPLES, 4, 5)).detach()
    mean_gate = [hard_concrete_mean(la) for la in log_alpha]
    expected = torch.nn.functional.conv_transpose1d(
        scale_channels(x, mean_gate), layer.weight, layer.bias, groups=2
    )[0]
    se = out.std(0) / np.sqrt(N_SAMPLES)
    assert torch.all((out.mean(0) - expected).abs() < 5 * se + 1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("family", ["Conv1d", "ConvTranspose1d", "Bilinear"])
@COMPLEX
def test_training_output_gradcheck(kind, family, complex_):
    layer, inputs = make(family, kind, complex_)
    assert_training_gradcheck(layer, inputs, kind, complex_)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("kind", KINDS)
@COMPLEX
def test_eval_output_is_the_dense_output_on_gated_inputs(family, kind, complex_):
    layer, inputs = make(family, kind, complex_)
    set_gates(layer, [-3.0, 0.0, 1.0, 5.0, 2.0][: layer.n_channels])
    gate = np.ones(layer.n_channels)
    if kind == "ChannelL0":
        gate = np.clip(special.expit(-layer.log_alpha.detach().numpy()) * 1.2 - 0.1, 0, 1)
    first, *others = inputs
    out = layer.eval()(*inputs)
    expected = dense_twin(layer, FAMILIES)(scale_channels(first, gate), *others)
    for a, b in zip(parts(out), parts(expected)):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("family", list(FAMILIES))
@COMPLEX
def test_masks_are_whole_input_channels(family, complex_):
    layer, inputs = make(family, "ChannelARD", complex_)
    dropped = torch.tensor([False, True, True, False, True][: layer.n_channels])
    set_gates(layer, torch.where(dropped, 4.0, -4.0))
    mask = layer.relevance(threshold=3.0)
    assert mask.shape == parts(layer.weight)[0].shape and set(mask.unique().tolist()) <= {0.0, 1.0}
    # the dense layer with the masked weight computes as on inputs whose
    # dropped channels are zero: the mask drops exactly what reads them
    dense = dense_twin(layer, FAMILIES)
    first, *others = inputs
    expected = dense(scale_channels(first, (~dropped).double()), *others)
    with torch.no_grad():
        for part in parts(dense.weight):
            part.mul_(mask)
    for a, b in zip(parts(dense(*inputs)), parts(expected)):
        torch.testing.assert_close(a, b)
    n = parts(layer.weight)[0].numel() // layer.n_channels
    assert int((mask == 0).sum()) == n * int(dropped.sum())
    counts = [c for _, c in layer.sparsity(threshold=3.0)]
    assert counts == [n * int(dropped.sum())] * len(parts(layer.weight))


# ----------------------------------------------------------------- model twins


def size(layer, side):
    """A layer's number of output or input channels (features; a bilinear layer's first input's)."""
    names = ("out_channels", "out_features") if side == "out" else ("in_channels", "in_features", "in1_features")
    return next(getattr(layer, name) for name in names if hasattr(layer, name))


@pytest.mark.parametrize("kind", ["input_vd", "input_ard", "input_l0"])
def test_to_bayesian_converts_every_family(kind):
    dense = dense_family_models(4, 2, 3, groups=2)
    twin = R.to_bayesian(dense, kind=kind)
    suffix = {"input_vd": "ChannelVD", "input_ard": "ChannelARD", "input_l0": "ChannelL0"}[kind]
    for a, b in zip(dense, twin):
        assert type(b).__name__ == type(a).__name__ + suffix and b.gated == "input"
        assert b.n_channels == size(a, "in")
        for p, q in zip(parts(a.weight), parts(b.weight)):
            assert torch.equal(p, q)
    back = convert_layers(twin, "masked")
    assert all(type(layer).__name__ == type(a).__name__ + "Masked" for a, layer in zip(dense, back))
    # and to the output gates, the same classes
    output = R.to_bayesian(twin, kind=kind.replace("input", "channel"))
    assert all(type(b) is type(a) and b.gated == "output" for a, b in zip(twin, output))
    assert all(b.n_channels == size(a, "out") for a, b in zip(dense, output))


def conv_chain():
    return CplxSequential(
        CplxConv1d(2, 6, 3), CplxBatchNorm1d(6), CplxToCplx[torch.nn.ReLU](), CplxConv1d(6, 4, 3)
    )


def test_state_dict_dense_to_input_gated_to_masked():
    torch.manual_seed(0)
    dense = conv_chain().double()
    x = cplx.randn(5, 2, 12, dtype=torch.float64)
    dense(x)  # batch norm statistics
    dense.eval()
    structured = R.to_bayesian(conv_chain(), kind="input_vd").double().eval()
    result = structured.load_state_dict(dense.state_dict(), strict=False)
    assert not result.unexpected_keys and sorted(result.missing_keys) == ["0.log_sigma2", "3.log_sigma2"]
    for a, b in zip(parts(structured(x)), parts(dense(x))):
        torch.testing.assert_close(a, b)
    dead = [1, 3, 4]
    set_gates(structured[3], [5.0 if c in dead else -5.0 for c in range(6)])
    masks = R.compute_ard_masks(structured, threshold=3.0)
    assert masks["0.mask"].all() and (masks["3.mask"][:, dead] == 0).all()
    masked = to_masked(structured, masks=masks).eval()
    fresh = to_masked(conv_chain()).double().eval()
    fresh.load_state_dict({**structured.state_dict(), **masks}, strict=False)
    # the reference: the dense model with the dead channels zeroed before the consumer
    head = dense[:3](x)
    reference = dense[3](scale_channels(head, [0.0 if c in dead else 1.0 for c in range(6)]))
    for model in (masked, fresh):
        for a, b in zip(parts(model(x)), parts(reference)):
            torch.testing.assert_close(a, b)
    assert dict(named_sparsity(structured, threshold=3.0)) == dict(named_sparsity(masked))


def real_conv_chain():
    return torch.nn.Sequential(
        torch.nn.Conv1d(2, 6, 3), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Conv1d(6, 4, 3)
    )


@pytest.mark.parametrize("chain", ["conv", "linear"])
@COMPLEX
def test_compact_removes_the_channels_the_consumer_never_reads(chain, complex_):
    torch.manual_seed(0)
    if chain == "conv":
        dense = conv_chain() if complex_ else real_conv_chain()
        x = cplx.randn(5, 2, 12) if complex_ else torch.randn(5, 2, 12)
        dense(x)  # batch norm statistics, so that slicing them matters
        consumer = 3
    else:
        relu = CplxToCplx[torch.nn.ReLU]() if complex_ else torch.nn.ReLU()
        linear = CplxLinear if complex_ else torch.nn.Linear
        dense = (CplxSequential if complex_ else torch.nn.Sequential)(linear(5, 6), relu, linear(6, 3))
        x = cplx.randn(5, 5) if complex_ else torch.randn(5, 5)
        consumer = 2
    dead = [0, 2, 3]
    structured = R.to_bayesian(dense, kind="input_ard").eval()
    set_gates(structured[consumer], [5.0 if c in dead else -5.0 for c in range(6)])
    masked = to_masked(structured, R.compute_ard_masks(structured, threshold=3.0)).eval()
    small = compact(masked)
    assert small[0].weight.shape[0] == 3 and small[consumer].weight.shape[1] == 3
    if chain == "conv":
        assert small[1].num_features == 3
    with torch.no_grad():
        for a, b in zip(parts(small(x)), parts(masked(x))):
            torch.testing.assert_close(a, b)
    # L0 input gates fold into the weight: compact removes the same channels
    gated = R.to_bayesian(dense, kind="input_l0").eval()
    set_gates(gated[consumer], [9.0 if c in dead else -9.0 for c in range(6)])
    small = compact(gated)
    assert small[0].weight.shape[0] == 3 and small[consumer].weight.shape[1] == 3
    with torch.no_grad():
        for a, b in zip(parts(small(x)), parts(gated(x))):
            torch.testing.assert_close(a, b)


def test_bad_gated_names_the_argument():
    for bad in ("inputs", None, ["input"], 1):
        with pytest.raises(ValueError, match=r"Conv2dChannelVD: `gated` must be 'output' or 'input', got"):
            R.Conv2dChannelVD(2, 3, 3, gated=bad)
    with pytest.raises(ValueError, match="`kind`.*input_l0"):
        R.to_bayesian(torch.nn.Linear(2, 3), kind="inputs_vd")
