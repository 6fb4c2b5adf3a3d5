"""compact(): a masked model becomes a plain inference model with the same outputs.

The reference is always the masked model itself in eval mode (weight * mask
through the dense product), or the dense torch layer on ``weight * mask``.
"""

import copy
import io

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule import Cplx
from cplxmodule.nn import CplxLinear, CplxModReLU, CplxSequential
from cplxmodule.nn.masked import (
    Conv2dMasked,
    CplxConv1dMasked,
    CplxLinearMasked,
    CplxSparseLinear,
    LinearMasked,
    SparseLinear,
    compact,
    compact_report,
)

RTOL = 1e-5


def assert_same(actual, expected):
    if isinstance(expected, Cplx):
        assert isinstance(actual, Cplx)
        actual = torch.complex(actual.real, actual.imag)
        expected = torch.complex(expected.real, expected.imag)
    torch.testing.assert_close(actual, expected, rtol=RTOL, atol=1e-6)


def masked_mlp(complex_, bias=True, sizes=(6, 8, 7, 3), act=None, seed=0):
    """An MLP of masked layers with random masks, some whole rows and columns zero."""
    gen = torch.Generator().manual_seed(seed)
    Layer = CplxLinearMasked if complex_ else LinearMasked
    act = act or (CplxModReLU(0.1) if complex_ else torch.nn.ReLU())
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        layer = Layer(n_in, n_out, bias=bias)
        mask = (torch.rand(n_out, n_in, generator=gen) < 0.6).float()
        mask[1] = 0  # a dead output row
        mask[:, 2] = 0  # an input column nobody reads
        layer.mask = mask
        layers += [layer, copy.deepcopy(act)]
    Sequential = CplxSequential if complex_ else torch.nn.Sequential
    return Sequential(*layers[:-1]).eval()


def sample(complex_, *shape):
    return cplx.randn(*shape) if complex_ else torch.randn(*shape)


def sparse_mlp(complex_):
    """A masked MLP, its compact copy with every linear layer in CSR, an input."""
    model = masked_mlp(complex_)
    return model, compact(model, max_density=1.0), sample(complex_, 4, 6)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("max_density", [0.0, 1.0])
def test_compact_mlp_matches_masked_model(complex_, bias, max_density):
    model = masked_mlp(complex_, bias)
    small = compact(model, max_density=max_density)
    x = sample(complex_, 5, 6)
    with torch.no_grad():
        assert_same(small(x), model(x))
    with torch.inference_mode():
        assert_same(small(x), model(x))
    sparse = CplxSparseLinear if complex_ else SparseLinear
    kinds = {type(m) for m in small.modules()}
    assert (sparse in kinds) == (max_density == 1.0)
    assert not any(hasattr(m, "mask") for m in small.modules())


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_unused_columns_remove_the_producers_rows(complex_):
    model = masked_mlp(complex_)
    small = compact(model, max_density=0.0)
    # column 2 of every later layer is unused: the layer before loses row 2,
    # and without bias-free dead rows nothing else is guaranteed to go
    widths = [m.out_features for m in small.modules() if hasattr(m, "out_features")]
    assert widths[0] <= 7 and widths[1] <= 6 and widths[2] == 3
    assert small[2].in_features == widths[0]


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_dead_rows_with_bias_fold_into_the_next_bias(complex_):
    act = cplx_tanh() if complex_ else torch.nn.Tanh()
    model = masked_mlp(complex_, bias=True, act=act, sizes=(4, 5, 3))
    model[0].mask = torch.ones(5, 4)
    model[0].mask[3] = 0  # row 3 outputs tanh(bias[3]), a nonzero constant
    model[2].mask = torch.ones(3, 5)
    small = compact(model, max_density=0.0)
    assert small[0].out_features == 4 and small[2].in_features == 4
    x = sample(complex_, 6, 4)
    with torch.no_grad():
        assert_same(small(x), model(x))


def cplx_tanh():
    from cplxmodule.nn import CplxToCplx

    return CplxToCplx[torch.tanh]()


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_all_zero_layer(complex_, bias):
    model = masked_mlp(complex_, bias, sizes=(4, 5, 3, 2))
    model[2].mask = torch.zeros(3, 5)  # the middle layer outputs its bias alone
    model[4].mask = torch.zeros(2, 3)  # and the last one too
    small = compact(model)
    x = sample(complex_, 3, 4)
    with torch.no_grad():
        assert_same(small(x), model(x))
    # everything before the last layer is gone
    assert small[0].out_features == 0 and small[4].in_features == 0


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_all_one_mask_gives_the_dense_twin(complex_):
    model = masked_mlp(complex_, sizes=(4, 3))
    model[0].mask = torch.ones(3, 4)
    small = compact(model)
    assert type(small[0]) is (CplxLinear if complex_ else torch.nn.Linear)
    weight = model[0].weight
    assert_same(small[0].weight, weight)


def test_conv_channels_are_removed_and_outputs_match():
    model = torch.nn.Sequential(
        Conv2dMasked(2, 4, 3, padding=1, padding_mode="reflect", bias=False),
        torch.nn.ReLU(),
        Conv2dMasked(4, 3, 3, padding=1),
    ).eval()
    model[0].mask = torch.ones(4, 2, 3, 3)
    model[0].mask[1] = 0  # a dead channel with no bias: relu(0) = 0
    model[2].mask = torch.ones(3, 4, 3, 3)
    model[2].mask[:, 3] = 0  # a channel nobody reads
    small = compact(model)
    assert (small[0].out_channels, small[2].in_channels) == (2, 2)
    assert small[0].padding_mode == "reflect"
    x = torch.randn(2, 2, 5, 5)
    with torch.no_grad():
        assert_same(small(x), model(x))


def test_conv_dead_channel_with_bias_stays():
    # zero padding would meet a constant channel: the constant cannot be folded
    model = torch.nn.Sequential(
        CplxConv1dMasked(2, 3, 3, padding=1), CplxModReLU(0.0), CplxConv1dMasked(3, 2, 3, padding=1)
    ).eval()
    with torch.no_grad():
        model[0].bias.real.fill_(1.0)
    model[0].mask = torch.ones(3, 2, 3)
    model[0].mask[0] = 0
    model[2].mask = torch.ones(2, 3, 3)
    small = compact(model)
    assert small[0].out_channels == 3
    x = cplx.randn(2, 2, 6)
    with torch.no_grad():
        assert_same(small(x), model(x))


def test_no_proof_no_removal():
    class Custom(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = LinearMasked(4, 3), LinearMasked(3, 2)

        def forward(self, x):
            return self.b(torch.relu(self.a(x))) + self.a(x)[..., :2]

    model = Custom().eval()
    model.a.mask = torch.ones(3, 4)
    model.a.mask[0] = 0
    model.b.mask = torch.ones(2, 3)
    model.b.mask[:, 1] = 0
    small = compact(model)
    assert small.a.out_features == 3
    x = torch.randn(2, 4)
    with torch.no_grad():
        assert_same(small(x), model(x))


def test_a_layer_used_twice_keeps_its_features():
    shared = LinearMasked(3, 3)
    shared.mask = torch.ones(3, 3)
    shared.mask[:, 0] = 0
    model = torch.nn.Sequential(LinearMasked(3, 3), shared, torch.nn.ReLU(), shared).eval()
    model[0].mask = torch.ones(3, 3)
    small = compact(model)
    assert small[0].out_features == 3 and small[1] is small[3]
    x = torch.randn(2, 3)
    with torch.no_grad():
        assert_same(small(x), model(x))


def test_a_bare_masked_layer_compacts_too():
    layer = LinearMasked(8, 4)
    layer.mask = torch.rand(4, 8) < 0.1
    small = compact(layer.eval(), max_density=1.0)
    assert isinstance(small, SparseLinear)
    x = torch.randn(3, 2, 8)
    with torch.no_grad():
        assert_same(small(x), layer(x))


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_saves_loads_moves_copies(complex_):
    model, small, x = sparse_mlp(complex_)
    with torch.no_grad():
        expected = small(x)
        again = compact(model, max_density=1.0)
        for module in again.modules():
            for name, buffer in module.named_buffers(recurse=False):
                if buffer.is_floating_point():
                    buffer.zero_()
        again.load_state_dict(small.state_dict())
        assert_same(again(x), expected)
        buffer = io.BytesIO()
        torch.save(small, buffer)
        buffer.seek(0)
        assert_same(torch.load(buffer, weights_only=False)(x), expected)
        assert_same(copy.deepcopy(small)(x), expected)
        double = copy.deepcopy(small).double()
        x64 = x.to(torch.float64) if complex_ else x.double()
        assert_same(double(x64), cplx_to_double(expected) if complex_ else expected.double())


def cplx_to_double(z):
    return Cplx(z.real.double(), z.imag.double())


def test_the_original_model_is_unchanged():
    model = masked_mlp(False)
    state = copy.deepcopy(model.state_dict())
    compact(model)
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key])


def test_non_binary_mask_is_refused_naming_the_layer():
    model = masked_mlp(False)
    model[2].mask = torch.full((7, 8), 0.5)
    with pytest.raises(ValueError, match=r"binary masks .*binarize_masks.*, got another on `2` \(LinearMasked\)$"):
        compact(model)


def test_missing_mask_is_refused_naming_the_layer():
    model = torch.nn.Sequential(torch.nn.Identity(), CplxLinearMasked(3, 2))
    with pytest.raises(RuntimeError, match=r"got none on `1` \(CplxLinearMasked\)$"):
        compact(model)


def test_bad_max_density():
    with pytest.raises(ValueError, match="max_density"):
        compact(masked_mlp(False), max_density=1.5)


class _StandInVD(torch.nn.Linear):
    """A user's Bayesian layer: a weight and ``relevance(threshold=...)``, its own class."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log_alpha = torch.nn.Parameter(torch.randn(self.weight.shape) * 3)

    def relevance(self, *, threshold):
        return self.log_alpha <= threshold


def test_a_users_bayesian_layer_is_kept_as_it_is_with_a_warning():
    model = torch.nn.Sequential(_StandInVD(5, 4), torch.nn.ReLU(), LinearMasked(4, 2)).eval()
    model[2].mask = torch.ones(2, 4)
    model[2].mask[:, 1] = 0  # a column nobody reads: the opaque producer keeps its row
    with pytest.warns(UserWarning, match=r"compact: kept `0` \(_StandInVD\) as it is"):
        small = compact(model, threshold=1.0, max_density=1.0)
    assert type(small[0]) is _StandInVD and small[2].in_features == 4
    x = torch.randn(3, 5)
    with torch.no_grad():
        hidden = torch.relu(x @ model[0].weight.T + model[0].bias)
        expected = hidden @ (model[2].weight * model[2].mask).T + model[2].bias
        assert_same(small(x), expected)


@pytest.mark.parametrize("name", ["LinearVD", "CplxConv1dARD", "LinearLASSO"])
def test_a_bayesian_layer_without_threshold_is_refused_naming_it(name):
    import cplxmodule.nn.relevance as relevance

    Layer = getattr(relevance, name)
    args = (3, 2, 1) if "Conv" in name else (3, 2)
    model = torch.nn.Sequential(torch.nn.Identity(), Layer(*args))
    with pytest.raises(ValueError, match=rf"`threshold` must be .* `1` \({name}\), got None$"):
        compact(model)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_variational_dropout_and_ard_layers_compact_by_threshold(complex_):
    from cplxmodule.nn.relevance import (
        Conv1dARD,
        Conv1dVD,
        CplxConv1dARD,
        CplxConv1dVD,
        CplxLinearARD,
        CplxLinearVD,
        LinearARD,
        LinearVD,
    )

    torch.manual_seed(0)
    if complex_:
        layers = [CplxConv1dVD(2, 4, 3), CplxModReLU(0.1), CplxConv1dARD(4, 3, 1)]
        head = [CplxLinearVD(12, 6), CplxModReLU(0.1), CplxLinearARD(6, 2)]
        Sequential, x = CplxSequential, cplx.randn(5, 2, 6)
    else:
        layers = [Conv1dVD(2, 4, 3), torch.nn.ReLU(), Conv1dARD(4, 3, 1)]
        head = [LinearVD(12, 6), torch.nn.ReLU(), LinearARD(6, 2)]
        Sequential, x = torch.nn.Sequential, torch.randn(5, 2, 6)
    model = torch.nn.Sequential(Sequential(*layers), torch.nn.Flatten(-2), Sequential(*head))
    bayesian = [model[0][0], model[0][2], model[2][0], model[2][2]]
    with torch.no_grad():
        for layer in bayesian:
            layer.log_sigma2.uniform_(-6, 6)  # about half of log alpha above 1
        model[2][0].log_sigma2[1] = 10.0  # a whole output row dropped
    model.eval()
    small = compact(model, threshold=1.0, max_density=0.6)
    assert not any(hasattr(m, "log_sigma2") for m in small.modules())
    assert small[2][0].out_features <= 5 and small[2][2].in_features == small[2][0].out_features
    # the reference: every Bayesian layer's eval output with weight * relevance
    masked = copy.deepcopy(model)
    with torch.no_grad():
        for layer in [masked[0][0], masked[0][2], masked[2][0], masked[2][2]]:
            mask = layer.relevance(threshold=1.0)
            weight = layer.weight
            if isinstance(weight, Cplx):
                weight.real.mul_(mask)
                weight.imag.mul_(mask)
            else:
                weight.mul_(mask)
        assert_same(small(x), masked(x))


def test_report_lists_changes_and_times_both_models():
    model = masked_mlp(True)
    small = compact(model, max_density=1.0)
    report = compact_report(model, small, (cplx.randn(2, 6),), min_run_time=0.01)
    names = [row[0] for row in report.layers]
    assert names == ["0", "2", "4"]
    assert report.layers[0][1] == "CplxLinearMasked weight 8x6"
    assert report.layers[0][2].startswith("CplxSparseLinear")
    assert all(0 <= row[3] <= 1 for row in report.layers)
    assert report.speedup > 0 and f"speedup {report.speedup:.2f}x" in str(report)
    assert compact_report(model, small).speedup is None


def test_sparse_linear_matches_dense_product():
    weight = torch.randn(7, 9) * (torch.rand(7, 9) < 0.3)
    bias = torch.randn(7)
    x = torch.randn(2, 3, 9)
    assert_same(SparseLinear(weight, bias)(x), torch.nn.functional.linear(x, weight, bias))
    assert_same(SparseLinear(weight)(x), torch.nn.functional.linear(x, weight))
    zc = cplx.randn(7, 9)
    mask = torch.rand(7, 9) < 0.3
    w = Cplx(zc.real * mask, zc.imag * mask)
    b = cplx.randn(7)
    xc = cplx.randn(4, 9)
    assert_same(CplxSparseLinear(w, mask, b)(xc), cplx.linear(xc, w, b))


def test_masked_layer_without_known_dense_twin_is_kept_with_a_warning():
    from cplxmodule.nn.masked import BaseMasked

    class Scale(BaseMasked, torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(3))

        def forward(self, x):
            return x * self.weight_masked

    model = torch.nn.Sequential(Scale())
    model[0].mask = torch.tensor([1.0, 0.0, 1.0])
    with pytest.warns(UserWarning, match=r"compact: kept `0` \(Scale\) as it is"):
        small = compact(model)
    assert type(small[0]) is Scale
    x = torch.randn(2, 3)
    with torch.no_grad():
        assert_same(small(x), x * torch.tensor([1.0, 0.0, 1.0]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_compact_model_moves_to_cuda(complex_):
    model, small, x = sparse_mlp(complex_)
    small = small.to("cuda")
    with torch.no_grad():
        expected = model(x)
        output = small(x.cuda() if not complex_ else x.to("cuda"))
    assert_same(output.cpu() if not complex_ else output.to("cpu"), expected)


def test_traced_sparse_product_matches_with_empty_rows(monkeypatch):
    # what exports run: the gathered and scattered product, against the CSR one
    weight = torch.randn(6, 5) * (torch.rand(6, 5) < 0.5)
    weight[[0, 2, 3, 5]] = 0  # empty first, middle (two) and last rows
    weight[1, 4] = weight[4, 0] = 1.5
    zc = cplx.randn(6, 5)
    cweight = Cplx(zc.real * (weight != 0), zc.imag * (weight != 0))
    layers = [SparseLinear(weight, torch.randn(6)), CplxSparseLinear(cweight, None, cplx.randn(6))]
    inputs = [torch.randn(3, 5), cplx.randn(3, 5)]
    expected = [layer(x) for layer, x in zip(layers, inputs)]
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)
    for layer, x, want in zip(layers, inputs, expected):
        assert_same(layer(x), want)


@pytest.mark.inductor
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_compact_sparse_model_exports_and_compiles(complex_):
    model, small, x = sparse_mlp(complex_)
    with torch.no_grad():
        expected = model(x)
    if not complex_:
        # torch.export takes tensors; the complex model is compiled instead
        program = torch.export.export(small, (x,))
        assert_same(program.module()(x), expected)
    torch._dynamo.reset()
    compiled = torch.compile(small, fullgraph=True, backend="aot_eager")
    with torch.no_grad():
        assert_same(compiled(x), expected)


def test_bilinear_and_transposed_layers_become_dense_twins():
    from cplxmodule.nn.masked import CplxBilinearMasked, ConvTranspose2dMasked

    class Pair(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bilinear = CplxBilinearMasked(3, 4, 2, conjugate=False)
            self.up = torch.nn.Sequential(ConvTranspose2dMasked(2, 3, 3, stride=2), torch.nn.ReLU())

        def forward(self, z1, z2, image):
            return self.bilinear(z1, z2), self.up(image)

    model = Pair().eval()
    model.bilinear.mask = torch.rand(2, 3, 4) < 0.5
    model.up[0].mask = torch.rand(2, 3, 3, 3) < 0.5
    small = compact(model)
    assert type(small.bilinear).__name__ == "CplxBilinear" and not small.bilinear.conjugate
    assert type(small.up[0]) is torch.nn.ConvTranspose2d and small.up[0].stride == (2, 2)
    inputs = cplx.randn(5, 3), cplx.randn(5, 4), torch.randn(1, 2, 4, 4)
    with torch.no_grad():
        for got, want in zip(small(*inputs), model(*inputs)):
            assert_same(got, want)


# --- compact() is never wrong: the defects of issue #14 -------------------


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("groups", [2, 4], ids=["grouped", "depthwise"])
def test_grouped_convolutions_compact_to_their_dense_twin(complex_, groups):
    from cplxmodule.nn import CplxConv2d
    from cplxmodule.nn.masked import Conv1dMasked, CplxConv2dMasked

    if complex_:
        layer, dense, x = CplxConv2dMasked(4, 8, 3, groups=groups), CplxConv2d, cplx.randn(2, 4, 5, 5)
    else:
        layer, dense, x = Conv1dMasked(4, 8, 3, groups=groups), torch.nn.Conv1d, torch.randn(2, 4, 6)
    model = torch.nn.Sequential(layer, torch.nn.Identity()).eval()
    model[0].mask = torch.rand(model[0].weight.real.shape if complex_ else model[0].weight.shape) < 0.5
    small = compact(model)
    assert type(small[0]) is dense and small[0].groups == groups
    assert (small[0].in_channels, small[0].out_channels) == (4, 8)
    with torch.no_grad():
        assert_same(small(x), model(x))


class Scaled(torch.nn.Linear):
    """A user's dense layer with its own forward: compact must leave it alone."""

    def forward(self, input):
        return 3.0 * super().forward(input) + 1.0


@pytest.mark.parametrize("dead_row_bias", [0.0, 0.7])
def test_a_user_subclass_of_a_dense_layer_is_opaque(dead_row_bias):
    model = torch.nn.Sequential(LinearMasked(4, 5), torch.nn.Tanh(), Scaled(5, 3)).eval()
    model[0].mask = torch.ones(5, 4)
    model[0].mask[2] = 0  # a dead row: foldable into a plain Linear's bias, not into Scaled
    with torch.no_grad():
        model[0].bias[2] = dead_row_bias
    small = compact(model)
    assert type(small[2]) is Scaled and small[2].in_features == 5
    assert small[0].out_features == 5
    x = torch.randn(6, 4)
    with torch.no_grad():
        expected = 3.0 * (torch.tanh(x @ (model[0].weight * model[0].mask).T + model[0].bias)
                          @ model[2].weight.T + model[2].bias) + 1.0
        assert_same(small(x), expected)


def test_a_user_subclass_of_an_activation_is_not_elementwise():
    class Reversed(torch.nn.ReLU):
        def forward(self, input):
            return super().forward(input).flip(-1)

    model = torch.nn.Sequential(LinearMasked(4, 5), Reversed(), LinearMasked(5, 3)).eval()
    model[0].mask = torch.ones(5, 4)
    model[2].mask = torch.ones(3, 5)
    model[2].mask[:, 1] = 0  # a column nobody reads, seen through the reversal
    small = compact(model)
    x = torch.randn(6, 4)
    with torch.no_grad():
        assert_same(small(x), model(x))


def test_a_sequential_subclass_with_its_own_forward_is_opaque():
    class SkipActivation(torch.nn.Sequential):
        def forward(self, input):
            return self[2](self[0](input))  # the tanh between is not applied

    model = SkipActivation(LinearMasked(4, 5), torch.nn.Tanh(), LinearMasked(5, 3)).eval()
    model[0].mask = torch.ones(5, 4)
    model[0].mask[2] = 0  # a dead row whose bias compact would fold through tanh
    model[2].mask = torch.ones(3, 5)
    with torch.no_grad():
        model[0].bias[2] = 2.0
    small = compact(model)
    assert type(small) is SkipActivation
    x = torch.randn(6, 4)
    with torch.no_grad():
        hidden = x @ (model[0].weight * model[0].mask).T + model[0].bias
        expected = hidden @ model[2].weight.T + model[2].bias
        assert_same(small(x), expected)


def test_a_residual_sequential_keeps_its_features():
    class Residual(torch.nn.Sequential):
        def forward(self, input):
            return input + super().forward(input)

    model = torch.nn.Sequential(Residual(LinearMasked(4, 4), torch.nn.ReLU(), LinearMasked(4, 4)))
    model = model.eval()
    model[0][0].mask = torch.ones(4, 4)
    model[0][2].mask = torch.ones(4, 4)
    model[0][2].mask[:, 3] = 0
    small = compact(model)
    assert type(small[0]) is Residual
    x = torch.randn(3, 4)
    with torch.no_grad():
        assert_same(small(x), model(x))


@pytest.mark.parametrize("log_alpha", [-3.0, 1.0, 3.0])
def test_l0_layers_fold_their_eval_gates(log_alpha):
    from cplxmodule.nn.relevance.extensions import LinearL0

    torch.manual_seed(0)
    model = torch.nn.Sequential(LinearL0(4, 5), torch.nn.ReLU(), LinearL0(5, 3, group="input"))
    with torch.no_grad():
        model[0].log_alpha.fill_(log_alpha)
        model[0].log_alpha[1] = 20.0  # a closed row
        model[2].log_alpha.uniform_(-4, 4)
    model.eval()
    small = compact(model)  # no threshold: L0 gates need none
    assert compact(model, threshold=-100.0)[0].out_features == small[0].out_features
    x = torch.randn(6, 4)
    with torch.no_grad():
        gate = torch.clamp(torch.sigmoid(-model[0].log_alpha) * 1.2 - 0.1, 0, 1)
        hidden = torch.relu(x @ (model[0].weight * gate).T + model[0].bias)
        gate = torch.clamp(torch.sigmoid(-model[2].log_alpha) * 1.2 - 0.1, 0, 1)
        expected = hidden @ (model[2].weight * gate).T + model[2].bias
        assert_same(model(x), expected)  # the reference is the layer's eval forward
        assert_same(small(x), expected)


def test_unknown_masked_subclass_is_kept_with_a_warning():
    class Doubled(LinearMasked):
        def forward(self, input):
            return 2.0 * super().forward(input)

    model = torch.nn.Sequential(Doubled(4, 3), torch.nn.ReLU(), LinearMasked(3, 2)).eval()
    model[0].mask = torch.ones(3, 4)
    model[0].mask[1] = 0
    model[2].mask = torch.ones(2, 3)
    with pytest.warns(UserWarning, match=r"compact: kept `0` \(Doubled\) as it is"):
        small = compact(model)
    assert type(small[0]) is Doubled and small[2].in_features == 3
    x = torch.randn(5, 4)
    with torch.no_grad():
        assert_same(small(x), model(x))


def test_the_sparse_beta_warning_does_not_reach_the_user():
    import subprocess
    import sys

    code = (
        "import torch\n"
        "from cplxmodule.nn.masked import LinearMasked, compact\n"
        "layer = LinearMasked(8, 4)\n"
        "layer.mask = torch.eye(4, 8)\n"
        "compact(layer, max_density=1.0)(torch.randn(2, 8))\n"
    )
    result = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_report_shows_weight_shapes_and_why_conv_zeros_stay():
    model = torch.nn.Sequential(
        CplxConv1dMasked(1, 16, 7), CplxModReLU(0.1), CplxConv1dMasked(16, 2, 3)
    ).eval()
    model[0].mask = torch.rand(16, 1, 7) < 0.5
    model[0].mask[:, :, 3] = True  # no dead channel: nothing structured to remove
    model[2].mask = torch.ones(2, 16, 3)
    report = compact_report(model, compact(model))
    assert report.layers[0][1] == "CplxConv1dMasked weight 16x1x7"
    assert report.layers[0][2] == "CplxConv1d weight 16x1x7"
    assert str(report).splitlines()[-1].endswith(
        "unstructured zeros inside convolution kernels cannot be removed"
    )


def _public_layer_classes():
    """Every public masked or Bayesian layer class of the package."""
    import importlib
    import inspect
    import pkgutil

    import cplxmodule
    from cplxmodule.nn.masked import BaseMasked
    from cplxmodule.nn.relevance import BaseARD

    found = {}
    for info in pkgutil.walk_packages(cplxmodule.__path__, "cplxmodule."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, (BaseMasked, BaseARD)) and hasattr(
                obj, "_dense_forward"
            ):
                found[obj.__name__] = obj
    return found


_LAYERS = _public_layer_classes()


def test_every_public_masked_and_bayesian_layer_is_in_the_one_table():
    from cplxmodule.nn import _families

    assert len(_LAYERS) > 80
    unknown = [name for name, cls in _LAYERS.items() if _families.lookup(cls) is None]
    assert not unknown
    for name, cls in _LAYERS.items():
        family = _families.lookup(cls).family
        assert issubclass(cls, family.dense) or issubclass(cls, family.native or family.dense), name


def _small(cls):
    """A small layer of ``cls``'s family and inputs for it."""
    complex_ = cls.__name__.startswith("Cplx")
    rand = cplx.randn if complex_ else torch.randn
    dims = next((int(c) for c in cls.__name__ if c.isdigit()), 0)
    if "Bilinear" in cls.__name__:
        return cls(3, 2, 2), (rand(4, 3), rand(4, 2))
    if "Conv" in cls.__name__:
        return cls(2, 3, 3), (rand(1, 2, *(4,) * dims),)
    return cls(3, 2), (rand(4, 3),)


@pytest.mark.parametrize(
    "name", sorted(n for n, c in _LAYERS.items() if not n.endswith("Masked"))
)
def test_every_bayesian_layer_compacts_to_its_eval_forward(name):
    cls = _LAYERS[name]
    torch.manual_seed(0)
    layer, inputs = _small(cls)
    weight = layer.weight
    parts = (weight.real, weight.imag) if isinstance(weight, Cplx) else (weight,)
    power = sum(part.detach() ** 2 for part in parts)
    with torch.no_grad():
        if hasattr(layer, "log_sigma2") and layer.log_sigma2.shape != power.shape:
            # a gate per output channel (log alpha = log sigma2), some dropped
            layer.log_sigma2.copy_(torch.tensor([-6.0, 6.0, -6.0])[: layer.log_sigma2.numel()])
            keep, threshold = layer.relevance(threshold=0.0).bool(), 0.0
        elif hasattr(layer, "log_sigma2"):
            # log alpha = log sigma2 - log |w|^2 is -6 or +6: the mask at 0 is known
            offset = torch.where(torch.rand(power.shape) < 0.5, -6.0, 6.0)
            layer.log_sigma2.copy_(torch.log(power) + offset)
            keep, threshold = offset < 0, 0.0
        elif name == "LinearLASSO":
            # as published, LASSO keeps the weights with log|w| above the threshold
            threshold = power.sqrt().log().median().item()
            keep = power.sqrt().log() > threshold
        else:  # L0: its own gates, some closed
            layer.log_alpha.uniform_(-3, 8)
            keep, threshold = None, None
    layer.eval()
    reference = copy.deepcopy(layer)
    if keep is not None:
        with torch.no_grad():
            for part in (reference.weight.real, reference.weight.imag) if isinstance(
                weight, Cplx
            ) else (reference.weight,):
                part.mul_(keep)
    small = compact(layer, threshold=threshold, max_density=0.5)
    assert not any(isinstance(m, type(layer)) for m in small.modules())
    with torch.no_grad():
        expected = reference(*inputs)
        assert_same(small(*inputs), expected)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_convolutions_with_every_channel_unused_keep_one(complex_):
    Conv = CplxConv1dMasked if complex_ else masked_conv1d()
    act = CplxModReLU(0.1) if complex_ else torch.nn.ReLU()
    Sequential = CplxSequential if complex_ else torch.nn.Sequential
    model = Sequential(Conv(2, 3, 3, padding=1), act, Conv(3, 2, 1)).eval()
    model[0].mask = torch.ones(3, 2, 3)
    model[2].mask = torch.zeros(2, 3, 1)  # reads none of the three channels
    small = compact(model)
    assert (small[0].out_channels, small[2].in_channels) == (1, 1)
    x = sample(complex_, 2, 2, 5)
    with torch.no_grad():
        assert_same(small(x), model(x))


def masked_conv1d():
    from cplxmodule.nn.masked import Conv1dMasked

    return Conv1dMasked


def test_an_activation_used_twice_is_seen_at_both_places():
    act = torch.nn.ReLU()
    model = torch.nn.Sequential(
        LinearMasked(3, 3), act, LinearMasked(3, 3), act, LinearMasked(3, 2)
    ).eval()
    model[0].mask = torch.ones(3, 3)
    model[2].mask = torch.ones(3, 3)
    model[2].mask[1] = 0  # a dead row of negative bias: relu makes it 0, not -2
    model[4].mask = torch.ones(2, 3)
    with torch.no_grad():
        model[2].bias[1] = -2.0
    small = compact(model)
    assert small[4].in_features == 2
    x = torch.randn(4, 3)
    with torch.no_grad():
        assert_same(small(x), model(x))
