r"""L0 layers to masked twins: the eval-mode gates folded into the weight, the relevance as the mask.

References: the hard-concrete eval gate from its formula (Louizos et al.,
2018: :math:`\min(1, \max(0, \sigma(-\log\alpha)(\zeta - \gamma) + \gamma))`,
:math:`\gamma = -0.1`, :math:`\zeta = 1.1`) in numpy, mapped onto the
weight by an index computation of its own, and the dense layer of the
family (torch's, or the complex one) computing with that weight.
"""

import io
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxSequential, CplxToCplx
from cplxmodule.nn import modules as M
from cplxmodule.nn import relevance as R
from cplxmodule.nn.masked import compact, convert_layers, magnitude_masks, to_masked
from cplxmodule.nn.relevance.extensions import LinearL0
from cplxmodule.nn.utils import named_sparsity

# a mask that names no masked layer of the twin is a UserWarning: none here
pytestmark = pytest.mark.filterwarnings("error::UserWarning")

# arguments (at least 4 gated channels on either axis, divisible by 2 for
# groups) and input shapes
FAMILIES = {
    "Linear": ((5, 4), ((3, 5),)),
    "Bilinear": ((5, 2, 4), ((3, 5), (3, 2))),
    "Conv1d": ((4, 6, 3), ((2, 4, 7),)),
    "Conv2d": ((4, 6, 3), ((2, 4, 5, 5),)),
    "Conv3d": ((4, 6, 2), ((1, 4, 3, 4, 4),)),
    "ConvTranspose1d": ((4, 6, 3), ((2, 4, 5),)),
    "ConvTranspose2d": ((4, 6, 3), ((2, 4, 4, 4),)),
    "ConvTranspose3d": ((4, 6, 2), ((1, 4, 3, 3, 3),)),
}
CONVS = [family for family in FAMILIES if family.startswith("Conv")]
CASES = [(family, 1) for family in FAMILIES] + [(family, 2) for family in CONVS]
# log-odds of a closed gate: gates 1, soft, 0, soft, 0, soft
LOG_ALPHAS = [-5.0, 0.5, 5.0, -0.3, 8.0, 0.0]
COMPLEX = pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
GATED = pytest.mark.parametrize("gated", ["output", "input"])


def eval_gate(log_alpha):
    """The hard-concrete eval gate, from its formula."""
    gamma, zeta = -0.1, 1.1
    opening = special.expit(-np.asarray(log_alpha, dtype=np.float64))
    return np.clip(opening * (zeta - gamma) + gamma, 0, 1)


def parts(x):
    return (x.real, x.imag) if isinstance(x, Cplx) else (x,)


def channel_of_weight(family, shape, gated, groups):
    """For each entry of a weight of ``shape``, the gated channel it belongs to.

    A layer's weight is ``(out, in / groups, *kernel)``, a transposed
    convolution's ``(in, out / groups, *kernel)``, a bilinear layer's
    ``(out, in1, in2)``; the input of group ``g`` is channels
    ``g * (in / groups) ...`` and so is the output.
    """
    index = np.indices(shape)
    rows, columns = index[0], index[1]
    per_group_rows = shape[0] // groups
    transposed = family.startswith("ConvTranspose")
    if (gated == "input") == transposed:
        return rows  # a row per gated channel
    return (rows // per_group_rows) * shape[1] + columns


class Holder(torch.nn.Module):
    """A model of one layer taking any number of inputs (a bilinear layer takes two)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, *inputs):
        return self.layer(*inputs)


def make(family, complex_, gated, groups=1):
    args, shapes = FAMILIES[family]
    cls = getattr(R, ("Cplx" if complex_ else "") + family + "ChannelL0")
    kwargs = {"groups": groups} if family.startswith("Conv") else {}
    layer = cls(*args, gated=gated, **kwargs).double()
    with torch.no_grad():
        layer.log_alpha.copy_(torch.tensor(LOG_ALPHAS[: layer.n_channels], dtype=torch.float64))
        for part in parts(layer.bias):
            part.normal_()
    if complex_:
        inputs = tuple(cplx.randn(*s, dtype=torch.float64) for s in shapes)
    else:
        inputs = tuple(torch.randn(s, dtype=torch.float64) for s in shapes)
    return layer, inputs


def reference_weight_and_mask(layer, family, gated, groups):
    """The L0 weight times its eval gates, and the 0/1 mask of the open channels (numpy)."""
    gate = eval_gate(layer.log_alpha.detach().numpy())
    weight = [p.detach().numpy() for p in parts(layer.weight)]
    channel = channel_of_weight(family, weight[0].shape, gated, groups)
    return [w * gate[channel] for w in weight], (gate > 0)[channel].astype(np.float64)


def dense_reference(layer, family, complex_, weight, groups):
    """The family's dense layer computing with ``weight`` (numpy parts) and ``layer``'s bias."""
    args = FAMILIES[family][0]
    kwargs = {"groups": groups} if family.startswith("Conv") else {}
    cls = getattr(M, "Cplx" + family) if complex_ else getattr(torch.nn, family)
    dense = cls(*args, **kwargs)
    dense = dense.double().eval()
    with torch.no_grad():
        for part, value in zip(parts(dense.weight), weight):
            part.copy_(torch.from_numpy(value))
        for part, value in zip(parts(dense.bias), parts(layer.bias)):
            part.copy_(value)
    return dense


def assert_same(a, b):
    for p, q in zip(parts(a), parts(b)):
        torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("family, groups", CASES, ids=[f"{f}-g{g}" for f, g in CASES])
@GATED
@COMPLEX
def test_masked_twin_computes_what_the_l0_layer_computes(family, groups, gated, complex_):
    torch.manual_seed(0)
    layer, inputs = make(family, complex_, gated, groups)
    model = Holder(layer).eval()
    gate = eval_gate(LOG_ALPHAS[: layer.n_channels])
    assert (gate == 0).any() and (gate == 1).any() and ((gate > 0) & (gate < 1)).any()

    masks = R.compute_ard_masks(model)
    masked = to_masked(model, masks).eval()
    twin = masked.layer
    assert type(twin).__name__ == ("Cplx" if complex_ else "") + family + "Masked"
    weight, mask = reference_weight_and_mask(layer, family, gated, groups)
    # the mask: the open channels, whole rows or columns of the weight
    np.testing.assert_array_equal(masks["layer.mask"].numpy(), mask)
    np.testing.assert_array_equal(twin.mask.numpy(), mask)
    for part, value in zip(parts(twin.weight_masked), weight):
        np.testing.assert_allclose(part.detach().numpy(), value, rtol=1e-12, atol=0)

    with torch.no_grad():
        output = masked(*inputs)
        assert_same(output, model(*inputs))
        assert_same(output, dense_reference(layer, family, complex_, weight, groups)(*inputs))
    assert dict(named_sparsity(masked)) == dict(named_sparsity(model))
    # the L0 model is not changed
    np.testing.assert_array_equal(layer.log_alpha.detach().numpy(), LOG_ALPHAS[: layer.n_channels])

    # the masked twin's state_dict round-trips, into a fresh masked twin and through torch.save
    fresh = to_masked(convert_layers(model, "dense")).double().eval()
    buffer = io.BytesIO()
    torch.save(masked.state_dict(), buffer)
    buffer.seek(0)
    fresh.load_state_dict(torch.load(buffer))
    with torch.no_grad():
        assert_same(fresh(*inputs), output)
    for key, value in masked.state_dict().items():
        assert torch.equal(fresh.state_dict()[key], value)


@pytest.mark.parametrize("family, groups", CASES, ids=[f"{f}-g{g}" for f, g in CASES])
@COMPLEX
def test_every_kind_takes_the_folded_weight(family, groups, complex_):
    torch.manual_seed(0)
    layer, inputs = make(family, complex_, "output", groups)
    model = Holder(layer).eval()
    weight, _ = reference_weight_and_mask(layer, family, "output", groups)
    reference = dense_reference(layer, family, complex_, weight, groups)
    with torch.no_grad():
        expected = reference(*inputs)
        # the dense layer it computes as, and a VD twin (its eval mode: the mean weight)
        for kind in ("dense", "vd"):
            assert_same(convert_layers(model, kind).eval()(*inputs), expected)
        # the other axis's gates start afresh, on the folded weight
        other = R.to_bayesian(model, kind="input_l0").layer
        assert other.gated == "input"
        for part, value in zip(parts(other.weight), weight):
            np.testing.assert_allclose(part.numpy(), value, rtol=1e-12, atol=0)
        np.testing.assert_allclose(other.log_alpha.numpy(), np.log(0.1 / 0.9))
    # a layer already of the kind is kept: its gates are not folded twice
    same = R.to_bayesian(model, kind="channel_l0").layer
    assert type(same) is type(layer) and torch.equal(same.log_alpha, layer.log_alpha)
    for p, q in zip(parts(same.weight), parts(layer.weight)):
        assert torch.equal(p, q)


def chain(complex_, gated):
    conv = M.CplxConv1d if complex_ else torch.nn.Conv1d
    relu = CplxToCplx[torch.nn.ReLU]() if complex_ else torch.nn.ReLU()
    sequential = CplxSequential if complex_ else torch.nn.Sequential
    dense = sequential(conv(3, 6, 3), relu, conv(6, 4, 3))
    kind = "channel_l0" if gated == "output" else "input_l0"
    return R.to_bayesian(dense, kind=kind).double().eval()


@GATED
@COMPLEX
def test_compact_of_the_masked_chain_computes_the_same(gated, complex_):
    torch.manual_seed(0)
    model = chain(complex_, gated)
    # the producer's output gates, or the consumer's input gates, of its 6 channels
    gated_layer, other = (model[0], model[2]) if gated == "output" else (model[2], model[0])
    with torch.no_grad():
        gated_layer.log_alpha.copy_(torch.tensor(LOG_ALPHAS, dtype=torch.float64))
        other.log_alpha.fill_(-5.0)  # open
    closed = int((eval_gate(LOG_ALPHAS) == 0).sum())
    x = cplx.randn(4, 3, 11, dtype=torch.float64) if complex_ else torch.randn(4, 3, 11, dtype=torch.float64)

    masked = to_masked(model, R.compute_ard_masks(model)).eval()
    assert all(type(m).__name__.endswith("Masked") for m in (masked[0], masked[2]))
    small = compact(masked)
    # the closed channels go: the producer's rows with the consumer's columns
    assert small[0].out_channels == small[2].in_channels == 6 - closed
    with torch.no_grad():
        expected = model(x)
        assert_same(masked(x), expected)
        assert_same(small(x), expected)
        assert_same(compact(model)(x), expected)


# --------------------------------------------------------------------- LinearL0 (extensions)


@pytest.mark.parametrize("group", [None, "input", "output"])
def test_linear_l0_converts_the_same_way(group):
    torch.manual_seed(0)
    layer = LinearL0(6, 4, group=group).double()
    log_alpha = np.resize(LOG_ALPHAS, layer.log_alpha.numel()).reshape(layer.log_alpha.shape)
    with torch.no_grad():
        layer.log_alpha.copy_(torch.from_numpy(log_alpha))
    model = torch.nn.Sequential(layer).eval()
    x = torch.randn(5, 6, dtype=torch.float64)
    gate = np.broadcast_to(eval_gate(log_alpha), (4, 6))
    weight = layer.weight.detach().numpy() * gate

    masks = R.compute_ard_masks(model)
    np.testing.assert_array_equal(masks["0.mask"].numpy(), (gate > 0).astype(np.float64))
    masked = to_masked(model, masks).eval()
    assert type(masked[0]).__name__ == "LinearMasked"
    reference = torch.nn.functional.linear(x, torch.from_numpy(weight), layer.bias.detach())
    with torch.no_grad():
        torch.testing.assert_close(masked(x), reference, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(model(x), reference, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(compact(masked)(x), reference, rtol=1e-10, atol=1e-12)

    # magnitude pruning ranks the weight the twin takes, gates folded in
    kept = magnitude_masks(model, keep=0.25)["0.mask"].numpy().astype(bool)
    order = np.sort(np.abs(weight).ravel())[::-1]
    assert kept.sum() == 6 and np.abs(weight)[kept].min() == order[5]


# --------------------------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None)
@given(
    log_alpha=st.lists(st.floats(-8.0, 8.0), min_size=4, max_size=4),
    gated=st.sampled_from(["output", "input"]),
    complex_=st.booleans(),
)
def test_any_gates_fold_into_an_equal_masked_twin(log_alpha, gated, complex_):
    torch.manual_seed(0)
    family = "Conv1d"
    layer, inputs = make(family, complex_, gated, groups=2)
    with torch.no_grad():
        layer.log_alpha.copy_(torch.tensor(np.resize(log_alpha, layer.n_channels)))
    model = Holder(layer).eval()
    with warnings.catch_warnings():
        # every gate closed: compute_ard_masks says so, rightly
        warnings.simplefilter("ignore", UserWarning)
        masked = to_masked(model, R.compute_ard_masks(model)).eval()
    weight, mask = reference_weight_and_mask(layer, family, gated, 2)
    np.testing.assert_array_equal(masked.layer.mask.numpy(), mask)
    with torch.no_grad():
        reference = dense_reference(layer, family, complex_, weight, 2)(*inputs)
        assert_same(masked(*inputs), reference)
        assert_same(model(*inputs), reference)


# --------------------------------------------------------------------------------- bad input


def test_bad_input_raises_as_before_and_changes_nothing():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        R.Conv1dChannelL0(3, 6, 3), torch.nn.ReLU(), R.Conv1dChannelVD(6, 4, 3)
    ).eval()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(TypeError, match="`threshold`"):
        R.compute_ard_masks(model, threshold="3")
    masks = R.compute_ard_masks(model, threshold=3.0)
    with pytest.raises(RuntimeError):
        to_masked(model, {**masks, "0.mask": torch.ones(5, 3, 3)})
    with pytest.raises(ValueError, match="`kind`"):
        R.to_bayesian(model, kind="l0")
    assert [type(m) for m in model] == [R.Conv1dChannelL0, torch.nn.ReLU, R.Conv1dChannelVD]
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key])
