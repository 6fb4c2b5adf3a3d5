"""Drop-in compatibility with the published cplxmodule 2022.6.

The published package is not installed here: what it exposes and what it
returned were recorded once with it (``tests/data``, see its README) and
every behaviour below is checked against an independent reference (torch's
native complex tensors, numpy, the recorded outputs).
"""

import ast
import doctest
import importlib
import inspect
import json
import pathlib
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from cplxmodule.nn import masked
from ..helpers import random_native

DATA = pathlib.Path(__file__).parents[1] / "data"
PUBLISHED = json.loads((DATA / "published_names.json").read_text())

# Published signatures we differ from on purpose (docs/guides/migrating.rst).
DELIBERATE = {
    # groups=0 raised in torch; padding_mode is new and only "zeros" there
    **{
        f"cplxmodule.cplx.conv_transpose{n}d": "groups defaults to 1 (0 raised)"
        for n in (1, 2, 3)
    },
    # torch's argument order and bias=True (published: bias=None, no bias)
    **{
        f"{path}.CplxConvTranspose{n}d": "torch's argument order and bias default"
        for path in ("cplxmodule.nn", "cplxmodule.nn.modules", "cplxmodule.nn.modules.conv")
        for n in (1, 2, 3)
    },
}
# A default of None that stands for the published default.
NONE_DEFAULTS = {
    ("cplxmodule.utils.spectrum.acpr_calc", "dim"),
    ("cplxmodule.utils.spectrum.bandwidth_power", "dim"),
}
TORCH_GENERIC = [["args", "VAR_POSITIONAL", None], ["kwargs", "VAR_KEYWORD", None]]


def resolve(path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def test_names_were_recorded():
    # every public name outside nn.relevance: defined at, or re-exported by, its path
    assert len(PUBLISHED) == 208


@pytest.mark.parametrize("path", sorted(PUBLISHED))
def test_published_name_imports_from_its_path(path):
    resolve(path)


def _same_default(ours, published):
    try:
        return ours == ast.literal_eval(published)
    except ValueError:  # not a literal: compare the spelling
        return repr(ours) == published


def signature_problems(path, published):
    """What a call written for the published signature would trip on."""
    parameters = inspect.signature(resolve(path)).parameters
    ours, problems = list(parameters.values()), []
    for position, (name, kind, default) in enumerate(published):
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            if not any(p.kind.name == kind for p in ours):
                problems.append(f"no {kind} for {name}")
            continue
        if kind == "POSITIONAL_OR_KEYWORD":
            ok = position < len(ours) and ours[position].name == name
            if not ok:
                problems.append(f"{name} is not argument {position}")
                continue
        elif name not in parameters:
            problems.append(f"no keyword {name}")
            continue
        param = parameters[name]
        if default is None:
            continue
        if param.default is param.empty:
            problems.append(f"{name} has no default")
        elif not _same_default(param.default, default):
            if not (param.default is None and (path, name) in NONE_DEFAULTS):
                problems.append(f"{name}={param.default!r}, published {default}")
    # arguments of ours beyond the published ones must be optional
    names = {name for name, *_ in published}
    for param in ours:
        required = param.default is param.empty and param.kind.name not in (
            "VAR_POSITIONAL",
            "VAR_KEYWORD",
        )
        if required and param.name not in names:
            problems.append(f"extra required argument {param.name}")
    return problems


@pytest.mark.parametrize(
    "path",
    sorted(
        path
        for path, sig in PUBLISHED.items()
        if sig is not None and sig != TORCH_GENERIC and path not in DELIBERATE
    ),
)
def test_published_signature_is_accepted(path):
    assert signature_problems(path, PUBLISHED[path]) == []


@pytest.mark.parametrize("path", sorted(DELIBERATE))
def test_deliberate_signature_changes_are_still_changes(path):
    # once the difference disappears, it must leave DELIBERATE and the docs
    assert signature_problems(path, PUBLISHED[path]) != []


# --- a checkpoint written by the published package --------------------------
def published_layers():
    return {
        "linear": cnn.CplxLinear(4, 3),
        "bilinear": cnn.CplxBilinear(3, 2, 4),
        "conv1d": cnn.CplxConv1d(2, 3, 3, padding=1),
        "conv2d": cnn.CplxConv2d(2, 2, 3, stride=2, bias=False),
        "batchnorm": cnn.CplxBatchNorm1d(3),
        "linear_masked": masked.CplxLinearMasked(4, 3),
        "conv2d_masked": masked.CplxConv2dMasked(2, 3, 3),
        "real_linear_masked": masked.LinearMasked(4, 3),
        "real_conv2d_masked": masked.Conv2dMasked(2, 3, 3),
    }


def unpack(value):
    return Cplx(*value) if isinstance(value, (tuple, list)) else value


def test_published_checkpoint_loads_and_gives_the_published_outputs():
    recorded = torch.load(DATA / "published_checkpoint.pt", weights_only=True)
    layers = published_layers()
    model = torch.nn.ModuleDict(layers).eval()
    model.load_state_dict(recorded["state_dict"], strict=True)
    for name, layer in layers.items():
        with torch.no_grad():
            output = layer(*map(unpack, recorded["inputs"][name]))
        expected = unpack(recorded["outputs"][name])
        # batch norm: the published running covariance already holds eps,
        # which ours adds when normalising (torch's convention): O(eps) apart
        tol = {"atol": 1e-4, "rtol": 1e-4} if name == "batchnorm" else {}
        if isinstance(expected, Cplx):
            torch.testing.assert_close(cplx.to_complex(output), cplx.to_complex(expected), **tol)
        else:
            torch.testing.assert_close(output, expected)
    assert all(layers[name].mask is not None for name in layers if "masked" in name)


# --- published names outside the functional core ----------------------------
def test_module_predicates():
    from cplxmodule.nn.modules.base import is_cplx_to_cplx, is_from_cplx, is_to_cplx

    seq = torch.nn.Sequential
    # (module, from, to), as the published package answers
    cases = [
        (cnn.CplxLinear(2, 2), True, True),
        (cnn.CplxLinear, True, True),
        (cnn.CplxToReal(), True, False),
        (cnn.RealToCplx(), False, True),
        (cnn.AsTypeCplx(), False, True),
        (torch.nn.Linear(2, 2), False, False),
        (cnn.CplxSequential(), True, True),
        (seq(cnn.RealToCplx(), cnn.CplxLinear(1, 1)), False, True),
        (seq(seq(cnn.CplxLinear(1, 1)), torch.nn.ReLU()), True, False),
        (seq(cnn.CplxToReal(), cnn.RealToCplx()), True, True),
        (torch.nn.ModuleList([cnn.CplxLinear(1, 1)]), False, False),
        (seq(), False, False),  # published: IndexError
        (3, False, False),
    ]
    for module, from_cplx, to_cplx in cases:
        assert is_from_cplx(module) is from_cplx, module
        assert is_to_cplx(module) is to_cplx, module
        assert is_cplx_to_cplx(module) is (from_cplx and to_cplx), module


def test_parameter_accessor_subclass_written_for_the_published_package():
    from cplxmodule.nn.modules.base import CplxParameterAccessor

    class Scale(CplxParameterAccessor, torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = cnn.CplxParameter(cplx.randn(3))

        def forward(self, input):
            return input * self.weight

    layer, z = Scale(), cplx.randn(2, 3)
    assert sorted(layer.state_dict()) == ["weight.imag", "weight.real"]
    expected = cplx.to_complex(z) * cplx.to_complex(layer.weight)
    torch.testing.assert_close(cplx.to_complex(layer(z)), expected)
    assert isinstance(cnn.CplxLinear(2, 2), CplxParameterAccessor)


def test_tensor_to_cplx_and_back_match_view_as_real():
    from cplxmodule.nn.modules.casting import CplxToTensor, TensorToCplx

    x = torch.randn(4, 3, 2)
    z = TensorToCplx()(x)
    assert torch.equal(cplx.to_complex(z), torch.view_as_complex(x))
    assert z.real.data_ptr() == x.data_ptr()  # views, as published
    assert torch.equal(CplxToTensor()(z), x)
    with pytest.raises(ValueError, match="`input` must have shape \\(\\.\\.\\., 2\\)"):
        TensorToCplx()(torch.randn(4, 3))
    with pytest.raises(TypeError, match="`input` must be a Cplx"):
        CplxToTensor()(x)


def test_cplx_to_real_takes_dim_first():
    z = cplx.randn(2, 3)
    expected = torch.view_as_real(cplx.to_complex(z)).reshape(2, 6)
    assert torch.equal(cnn.CplxToReal(-1)(z), expected)
    assert torch.equal(cnn.CplxToReal(0)(z), cnn.CplxToReal(dim=0)(z))
    assert cnn.CplxToReal(0)(z).shape == (4, 3)


def test_real_imag_and_dropout_at_published_paths():
    from cplxmodule.nn.modules.extra import CplxDropout
    from cplxmodule.nn.modules.linear import CplxImag, CplxReal

    z = cplx.randn(3)
    native = cplx.to_complex(z)
    assert torch.equal(CplxReal()(z), native.real)
    assert torch.equal(CplxImag()(z), native.imag)
    assert CplxDropout is cnn.CplxDropout


def test_max_pool_nd_base():
    from cplxmodule.nn.modules.pooling import CplxMaxPoolNd

    class Pool(CplxMaxPoolNd):
        _max_pool = staticmethod(cplx.max_pool1d)

    z = cplx.randn(1, 2, 6)
    out = Pool(2)(z)
    # reference: the element of largest modulus in each window
    native = cplx.to_complex(z).reshape(1, 2, 3, 2)
    expected = torch.gather(native, -1, native.abs().argmax(-1, keepdim=True))[..., 0]
    torch.testing.assert_close(cplx.to_complex(out), expected)
    with pytest.raises(NotImplementedError, match="CplxMaxPool1d"):
        CplxMaxPoolNd(2)(z)


def test_get_fans_as_torch():
    from cplxmodule.nn.init import get_fans

    w = cplx.randn(5, 3, 2, 2)
    assert get_fans(w) == torch.nn.init._calculate_fan_in_and_fan_out(w.real)
    assert get_fans(torch.empty(4, 3)) == (3, 4)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        get_fans(cplx.randn(5))


def test_sparsity_stats_subclass_is_counted():
    from cplxmodule.nn.utils import named_sparsity, sparsity
    from cplxmodule.nn.utils.sparsity import SparsityStats

    class Pruned(SparsityStats, torch.nn.Linear):
        def sparsity(self, **kwargs):
            self.seen = kwargs
            return [(id(self.weight), int((self.weight.abs() < kwargs["below"]).sum()))]

    layer = Pruned(4, 3)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(12.0).reshape(3, 4))
    model = torch.nn.Sequential(layer, torch.nn.Linear(3, 2))
    stats = dict(named_sparsity(model, below=5))
    assert stats["0.weight"] == (5, 12) and stats["0.bias"] == (0, 3) and layer.seen == {"below": 5}
    assert sparsity(model, below=5) == pytest.approx(5 / (15 + 8))
    with pytest.raises(NotImplementedError, match="sparsity"):
        SparsityStats().sparsity()


def test_complex_view_odd_size_warns_as_published():
    from cplxmodule.utils import complex_view

    x = torch.arange(10.0).reshape(2, 5)
    with pytest.warns(RuntimeWarning, match="Odd dimension size"):
        real, imag = complex_view(x)
    assert torch.equal(real, x[:, 0:4:2]) and torch.equal(imag, x[:, 1:4:2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        complex_view(torch.randn(2, 4))


# --- published batch-norm functions against a numpy whitening ----------------
def np_whiten(parts, mean, cov, eps):
    """Whiten the (d, n) columns of ``parts`` by ``(cov + eps I)^(-1/2)``."""
    lam, q = np.linalg.eigh(cov + eps * np.eye(len(cov)))
    return (q / np.sqrt(lam)) @ q.T @ (parts - mean[:, None])


def np_reference(x, eps, mean=None, cov=None):
    """Per-channel whitening of ``x`` (d, N, C, *), by batch statistics if not given."""
    out = np.empty_like(x)
    for c in range(x.shape[2]):
        parts = np.moveaxis(x[:, :, c], 0, -1).reshape(-1, x.shape[0]).T
        if mean is None:
            m, v = parts.mean(1), np.cov(parts, bias=True)
        else:
            m, v = mean[:, c], cov[:, :, c]
        white = np_whiten(parts, m, v, eps).T.reshape(*x.shape[1:2], *x.shape[3:], -1)
        out[:, :, c] = np.moveaxis(white, -1, 0)
    return out


@pytest.mark.parametrize("name, d", [("whiten2x2", 2), ("whitendxd", 2), ("whitendxd", 3)])
def test_whitening_functions(name, d):
    from cplxmodule.nn.modules import batchnorm

    whiten = getattr(batchnorm, name)
    torch.manual_seed(0)
    x = torch.randn(d, 16, 3, 5, dtype=torch.float64)
    x[1] += 0.7 * x[0]  # correlated parts
    running_mean = torch.zeros(d, 3, dtype=torch.float64)
    running_cov = torch.eye(d, dtype=torch.float64).unsqueeze(-1).repeat(1, 1, 3)
    out = whiten(x, True, running_mean, running_cov, 1.0, 1e-5)
    np.testing.assert_allclose(out.numpy(), np_reference(x.numpy(), 1e-5), atol=1e-10)
    # momentum 1: the running statistics are this batch's (unbiased covariance)
    n = 16 * 5
    flat = x.permute(2, 0, 1, 3).reshape(3, d, n).numpy()
    np.testing.assert_allclose(running_mean.numpy(), flat.mean(-1).T)
    expected_cov = np.stack([np.cov(f) for f in flat], -1)
    np.testing.assert_allclose(running_cov.numpy(), expected_cov, atol=1e-12)
    # eval: by the running statistics; without them, by the batch ones
    out = whiten(x, False, running_mean, running_cov, 0.1, 1e-5)
    reference = np_reference(x.numpy(), 1e-5, running_mean.numpy(), running_cov.numpy())
    np.testing.assert_allclose(out.numpy(), reference, atol=1e-10)
    out = whiten(x, False, None, None)
    np.testing.assert_allclose(out.numpy(), np_reference(x.numpy(), 1e-5), atol=1e-8)


def test_whitening_functions_reject_bad_shapes():
    from cplxmodule.nn.modules.batchnorm import whiten2x2, whitendxd

    with pytest.raises(ValueError, match="`tensor` must have shape \\(2, N, C"):
        whiten2x2(torch.randn(3, 4, 2))
    with pytest.raises(ValueError, match="`tensor` must have shape \\(d, N, C"):
        whitendxd(torch.randn(3, 4))
    with pytest.raises(ValueError, match="`running_cov` must have shape"):
        whitendxd(torch.randn(3, 4, 2), True, torch.zeros(3, 2), torch.zeros(2, 2, 2))


def test_cplx_batch_norm_published_defaults():
    from cplxmodule.nn.modules.batchnorm import cplx_batch_norm

    torch.manual_seed(0)
    z = cplx.randn(16, 3, 4, dtype=torch.float64)
    weight = torch.randn(2, 2, 3, dtype=torch.float64)
    bias = torch.randn(2, 3, dtype=torch.float64)
    out = cplx_batch_norm(z, None, None, weight, bias)  # training by default
    parts = torch.stack([z.real, z.imag]).numpy()
    white = np_reference(parts, 1e-5)
    expected = np.einsum("ijc,jncl->incl", weight.numpy(), white) + bias.numpy()[:, None, :, None]
    np.testing.assert_allclose(out.real.numpy(), expected[0], atol=1e-10)
    np.testing.assert_allclose(out.imag.numpy(), expected[1], atol=1e-10)
    # no running statistics in eval mode: the batch's, as published
    out = cplx_batch_norm(z, None, None, training=False)
    np.testing.assert_allclose(out.real.numpy(), white[0], atol=1e-10)


# --- docstring examples of the names added for compatibility -----------------
DOCUMENTED = [
    "cplxmodule.nn.modules.base.CplxParameterAccessor",
    "cplxmodule.nn.modules.base.is_from_cplx",
    "cplxmodule.nn.modules.base.is_to_cplx",
    "cplxmodule.nn.modules.base.is_cplx_to_cplx",
    "cplxmodule.nn.modules.casting.TensorToCplx",
    "cplxmodule.nn.modules.casting.CplxToTensor",
    "cplxmodule.nn.modules.linear.CplxReal",
    "cplxmodule.nn.modules.linear.CplxImag",
    "cplxmodule.nn.modules.pooling.CplxMaxPoolNd",
    "cplxmodule.nn.modules.batchnorm.whiten2x2",
    "cplxmodule.nn.modules.batchnorm.whitendxd",
    "cplxmodule.nn.modules.batchnorm.cplx_batch_norm",
    "cplxmodule.nn.init.get_fans",
    "cplxmodule.nn.utils.sparsity.SparsityStats",
]


@pytest.mark.parametrize("path", DOCUMENTED)
def test_docstring_examples(path):
    module = importlib.import_module(path.rsplit(".", 1)[0])
    globs = {**vars(module), "torch": torch, "cplx": cplx}
    runner = doctest.DocTestRunner()
    tests = doctest.DocTestFinder().find(resolve(path), path, globs=globs)
    assert any(test.examples for test in tests)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_migration_guide_examples():
    guide = pathlib.Path(__file__).parents[2] / "docs" / "guides" / "migrating.rst"
    result = doctest.testfile(str(guide), module_relative=False, verbose=False)
    assert result.attempted and not result.failed


# --- the published spellings of the functional core, against torch ------------
def close(z, expected):
    torch.testing.assert_close(cplx.to_complex(z), expected)


@pytest.mark.parametrize("name", ["linear_naive", "linear_cat", "linear_3m"])
def test_linear_strategies(name):
    x, w, b = random_native(5, 4), random_native(3, 4), random_native(3)
    f = getattr(cplx, name)
    close(f(*map(cplx.from_complex, (x, w, b))), F.linear(x, w, b))
    close(f(cplx.from_complex(x), cplx.from_complex(w)), F.linear(x, w))


@pytest.mark.parametrize("name", ["bilinear_naive", "bilinear_cat"])
@pytest.mark.parametrize("conjugate", [True, False])
def test_bilinear_strategies(name, conjugate):
    x1, x2, w, b = random_native(5, 3), random_native(5, 2), random_native(4, 3, 2), random_native(4)
    left = x1.conj() if conjugate else x1
    expected = torch.einsum("ni,kij,nj->nk", left, w, x2) + b
    args = map(cplx.from_complex, (x1, x2, w, b))
    close(getattr(cplx, name)(*args, conjugate=conjugate), expected)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("n", [1, 2])
def test_convnd_every_padding_mode(n, mode):
    conv = [F.conv1d, F.conv2d][n - 1]
    x, w, b = random_native(2, 4, *[7] * n), random_native(6, 2, *[3] * n), random_native(6)
    padded = x if mode == "zeros" else F.pad(x, [1, 1] * n, mode=mode)
    expected = conv(padded, w, b, 1, 1 if mode == "zeros" else 0, 1, 2)
    z = cplx.convnd(conv, *map(cplx.from_complex, (x, w, b)), 1, 1, 1, 2, mode)
    close(z, expected)


@pytest.mark.parametrize("name", ["convnd_naive", "convnd_3m", "convnd_quick"])
def test_convnd_strategies(name):
    x, w = random_native(2, 4, 6, 6), random_native(4, 4, 3, 3)
    args = (F.conv2d, cplx.from_complex(x), cplx.from_complex(w), 2, 1, 1)
    close(getattr(cplx, name)(*args), F.conv2d(x, w, None, 2, 1, 1))
    if name != "convnd_quick":  # it takes no groups
        wg = random_native(4, 2, 3, 3)
        z = getattr(cplx, name)(F.conv2d, cplx.from_complex(x), cplx.from_complex(wg), 1, 0, 1, 2)
        close(z, F.conv2d(x, wg, groups=2))


def test_conv_transposend_keeps_the_published_output_padding():
    x, w, b = random_native(2, 4, 5), random_native(4, 3, 3), random_native(3)
    z = cplx.conv_transposend(F.conv_transpose1d, *map(cplx.from_complex, (x, w, b)), stride=2)
    close(z, F.conv_transpose1d(x, w, b, stride=2, output_padding=1))
    with pytest.raises(ValueError, match="`padding_mode`"):
        cplx.conv_transposend(
            F.conv_transpose1d, *map(cplx.from_complex, (x, w)), padding_mode="reflect"
        )


@pytest.mark.parametrize("name", ["conv_transposend_naive", "conv_transposend_3m"])
def test_conv_transposend_strategies(name):
    x, w = random_native(2, 4, 5, 5), random_native(4, 3, 3, 3)
    args = (F.conv_transpose2d, cplx.from_complex(x), cplx.from_complex(w), 2, 1, 1, 2, 1)
    close(getattr(cplx, name)(*args), F.conv_transpose2d(x, w, None, 2, 1, 1, 2, 1))


def test_conv_transpose_accepts_the_published_padding_mode():
    x, w = random_native(1, 2, 5), random_native(2, 3, 3)
    xz, wz = cplx.from_complex(x), cplx.from_complex(w)
    z = cplx.conv_transpose1d(xz, wz, None, 1, 0, 0, 1, 1, "zeros")
    close(z, F.conv_transpose1d(x, w))
    with pytest.raises(ValueError, match="`padding_mode` must be 'zeros' for a transposed"):
        cplx.conv_transpose1d(cplx.from_complex(x), cplx.from_complex(w), padding_mode="circular")


def test_max_poolnd_and_symmetric_circular_padding():
    x = random_native(1, 2, 4, 6)
    z = cplx.max_poolnd(F.max_pool2d, cplx.from_complex(x), 2)
    windows = x.unfold(2, 2, 2).unfold(3, 2, 2).reshape(1, 2, 2, 3, 4)
    expected = torch.gather(windows, -1, windows.abs().argmax(-1, keepdim=True))[..., 0]
    close(z, expected)
    with pytest.raises(ValueError, match="`pool`"):
        cplx.max_poolnd(F.avg_pool2d, cplx.from_complex(x), 2)
    padded = cplx.symmetric_circular_padding(cplx.from_complex(x), (1, 2))
    close(padded, F.pad(x, (2, 2, 1, 1), mode="circular"))


def test_published_defaults_of_phaseshift_and_to_concatenated_real():
    z = cplx.randn(3, 2)
    close(cplx.phaseshift(z), cplx.to_complex(z))
    native_z = cplx.to_complex(z)
    expected = torch.cat([native_z.real, native_z.imag], 0)
    assert torch.equal(cplx.to_concatenated_real(z, None, 0), expected)
    with pytest.raises(ValueError, match="`flatten` must be None"):
        cplx.to_concatenated_real(z, True)


# --- Cplx behaviours ---------------------------------------------------------
def test_cplx_construction_from_numbers_as_published():
    for args in [(0,), (0, None), (torch.ones(2), 0), (True,), (1.0, 2)]:
        with pytest.raises(TypeError):
            Cplx(*args)
    assert Cplx(0.0).item() == 0j and Cplx(-1 + 1j).item() == -1 + 1j
    assert Cplx(1.5, -2.0).item() == 1.5 - 2j


def test_reversed_is_a_flipped_cplx():
    z = cplx.randn(3, 2)
    r = reversed(z)
    assert isinstance(r, Cplx)
    close(r, cplx.to_complex(z).flip(0))
    rows = [cplx.to_complex(row) for row in r]
    assert all(torch.equal(a, b) for a, b in zip(rows, reversed(list(cplx.to_complex(z)))))


def test_item_of_many_elements_is_a_value_error():
    with pytest.raises(ValueError, match="only one element tensors"):
        cplx.randn(2).item()
    assert Cplx(torch.tensor([2.0]), torch.tensor([3.0])).item() == 2 + 3j


@pytest.mark.parametrize(
    "equation, shapes",
    [("ii->i", [(2, 3)]), ("ijk->k", [(2, 3)]), ("i,i->", [(4,)]), ("ij,j->i", [(2, 3), (4,)]),
     ("i1->i", [(4,)]), ("i->j", [(4,)])],
)
def test_einsum_errors_are_torchs(equation, shapes):
    operands = [random_native(*s) for s in shapes]
    with pytest.raises(RuntimeError) as expected:
        torch.einsum(equation, *operands)
    with pytest.raises(RuntimeError) as ours:
        cplx.einsum(equation, *map(cplx.from_complex, operands))
    assert str(ours.value) == str(expected.value)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True), ((0, 2), False)])
def test_reductions(reduction, dim, keepdim):
    x = random_native(2, 3, 4)
    z = getattr(cplx.from_complex(x), reduction)(dim=dim, keepdim=keepdim)
    kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    close(z, getattr(x, reduction)(**kwargs))


def test_abs_method_and_casts():
    x = random_native(3, 2)
    z = cplx.from_complex(x)
    torch.testing.assert_close(z.abs(), x.abs())
    assert z.float().dtype == torch.float32 and z.double().dtype == torch.float64
    assert z.half().dtype == torch.float16
    layer = cnn.CplxLinear(3, 2)  # the masking guide's ``layer.weight.abs()``
    torch.testing.assert_close(layer.weight.abs(), cplx.to_complex(layer.weight).abs())


# --- complex parameters and checkpoints ---------------------------------------
def test_cplx_parameter_loads_directly_and_promotes_a_real_tensor():
    par = cnn.CplxParameter(cplx=cplx.randn(3))
    real, imag = torch.randn(3), torch.randn(3)
    par.load_state_dict({"real": real, "imag": imag})
    assert torch.equal(par.real, real) and torch.equal(par.imag, imag)
    par.load_state_dict({"": real})
    assert torch.equal(par.real, real) and not par.imag.any()


def test_one_part_checkpoint_reports_what_is_missing_and_changes_nothing():
    layer = cnn.CplxLinear(3, 2)
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    state = {"weight.real": torch.zeros(2, 3)}
    state.update({"bias.real": torch.zeros(2), "bias.imag": torch.zeros(2)})
    with pytest.raises(RuntimeError) as error:
        layer.load_state_dict(state)
    message = str(error.value)
    assert "Complex parameter requires both" in message
    assert 'Missing key(s) in state_dict: "weight.imag".' in message
    assert all(torch.equal(v, before[k]) for k, v in layer.state_dict().items())
    state["weight.imag"] = torch.zeros(5)  # misshapen: nothing is missing
    with pytest.raises(RuntimeError, match="size mismatch for weight.imag") as error:
        layer.load_state_dict(state)
    assert "Missing" not in str(error.value)
    assert all(torch.equal(v, before[k]) for k, v in layer.state_dict().items())


# --- masks ----------------------------------------------------------------------
def test_mask_broadcast_error_carries_torchs_message():
    layer = masked.LinearMasked(3, 2)
    layer.mask = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="does not broadcast.*The expanded size of the tensor"):
        layer.mask = torch.ones(3, 3)
    assert torch.equal(layer.mask, torch.ones(2, 3))


@pytest.mark.parametrize(
    "bad, error",
    [(torch.tensor([1.0, float("nan"), 1.0]), ValueError),
     (torch.tensor([1.0, float("inf"), 1.0]), ValueError),
     (torch.ones(3, dtype=torch.complex64), TypeError)],
)
def test_non_finite_and_complex_masks_are_refused(bad, error):
    layer = masked.CplxLinearMasked(3, 2)
    layer.mask = torch.ones(2, 3)
    old = layer.mask
    with pytest.raises(error, match="`mask`"):
        layer.mask = bad
    assert layer.mask is old
    layer.mask = torch.tensor([-0.5, 0.0, 2.0])  # relevance scores stay allowed
    assert torch.equal(layer.mask[0], torch.tensor([-0.5, 0.0, 2.0]))


@pytest.mark.parametrize("with_mask", [False, True])
def test_strict_loading_reports_a_missing_mask(with_mask):
    dense = torch.nn.Linear(3, 2)
    layer = masked.LinearMasked(3, 2)
    if with_mask:
        layer.mask = torch.ones(2, 3)
    old = layer.mask
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "mask"'):
        layer.load_state_dict(dense.state_dict(), strict=True)
    result = layer.load_state_dict(dense.state_dict(), strict=False)
    assert result.missing_keys == ["mask"] and layer.mask is old
    assert torch.equal(layer.weight, dense.weight)


def test_deploy_masks_strict_and_reset():
    model = torch.nn.Sequential(masked.LinearMasked(3, 2), masked.LinearMasked(2, 2))
    model[1].mask = torch.ones(2, 2)
    with pytest.raises(ValueError, match="'2.mask'"):
        masks = {"0.mask": torch.ones(2, 3), "2.mask": torch.ones(1)}
        masked.deploy_masks(model, state_dict=masks, strict=True)
    assert model[0].mask is None  # nothing set
    masked.deploy_masks(model, state_dict={"0.mask": torch.ones(2, 3)}, reset=True)
    assert model[0].mask is not None and model[1].mask is None


def test_published_masked_names():
    from cplxmodule.nn.masked.base import MaskedWeightMixin
    from cplxmodule.nn.utils.sparsity import SparsityStats

    layer = masked.CplxLinearMasked(3, 2)
    assert isinstance(layer, MaskedWeightMixin) and isinstance(layer, SparsityStats)
    layer.mask = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    assert layer.sparsity() == [(id(layer.weight.real), 3), (id(layer.weight.imag), 3)]


def test_conv_bases_at_published_paths():
    from cplxmodule.nn.modules.conv import CplxConvNd, CplxConvTransposeNd

    assert isinstance(cnn.CplxConv2d(2, 2, 3), CplxConvNd)
    layer = cnn.CplxConvTranspose1d(2, 3, 3)
    assert isinstance(layer, CplxConvTransposeNd) and isinstance(layer, CplxConvNd)


# --- casts, dtypes, pickling ---------------------------------------------------
@pytest.mark.parametrize(
    "cast", [lambda m: m.to(torch.complex64), lambda m: m.type(torch.complex128)]
)
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: cnn.CplxLinear(3, 2), "CplxLinear"),
        (lambda: masked.LinearMasked(3, 2), "LinearMasked"),
        (lambda: torch.nn.ModuleDict({"p": cnn.CplxParameter(cplx.randn(2))}), "CplxParameter"),
    ],
)
def test_complex_dtype_casts_are_refused(make, name, cast):
    module = make()
    before = {k: (v.dtype, v.clone()) for k, v in module.state_dict().items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's note on complex modules
        with pytest.raises(TypeError, match=f"{name}.*to_native"):
            cast(module)
    for k, v in module.state_dict().items():
        assert v.dtype == before[k][0] and torch.equal(v, before[k][1])


@pytest.mark.parametrize(
    "layer, x",
    [(cnn.CplxLinear(3, 2), cplx.randn(4, 3, dtype=torch.float64)),
     (cnn.CplxConv1d(2, 2, 3, dtype=torch.float64), cplx.randn(1, 2, 5)),
     (masked.CplxConv2dMasked(2, 2, 3).mask_(torch.ones(1)),
      cplx.randn(1, 2, 5, 5, dtype=torch.float64))],
)
def test_dtype_mismatch_names_the_layer_and_both_dtypes(layer, x):
    expected = (
        f"{type(layer).__name__}: `input` must have the dtype of the layer's weight,"
        f" {layer.weight.dtype}, got {x.dtype}"
    )
    with pytest.raises(TypeError, match=expected):
        layer(x)


def test_whole_masked_model_loads_with_weights_only():
    import io

    model = torch.nn.Sequential(masked.CplxLinearMasked(3, 2), masked.LinearMasked(2, 2))
    model[0].mask = torch.tensor([1.0, 0.0, 1.0])
    model[1].mask = torch.ones(2, 2)
    assert not model[0]._load_state_dict_post_hooks  # nothing per instance to pickle
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    classes = [torch.nn.Sequential, masked.CplxLinearMasked, masked.LinearMasked, cnn.CplxParameter]
    with torch.serialization.safe_globals(classes):
        loaded = torch.load(buffer, weights_only=True)
    x = cplx.randn(4, 3)
    torch.testing.assert_close(cplx.to_complex(loaded[0](x)), cplx.to_complex(model[0](x)))
    assert torch.equal(loaded[1].mask, model[1].mask)


# ---------------------------------------- code written for the published package runs


def test_published_relevance_keywords_are_accepted():
    # the published VD/ARD layers take `hard` and ignore it; LinearL0 reads it
    from cplxmodule.nn import relevance
    from cplxmodule.nn.relevance.extensions import LinearL0
    from cplxmodule.nn.utils import sparsity

    torch.manual_seed(0)
    model = torch.nn.Sequential(relevance.LinearVD(4, 3), relevance.CplxLinearARD(3, 2))
    with torch.no_grad():
        model[0].log_sigma2.normal_(0, 4)
    expected = (model[0].log_alpha <= 1.0).float()
    assert torch.equal(model[0].relevance(hard=True, threshold=1.0), expected)
    assert torch.equal(model[0].relevance(threshold=1.0, hard=False), expected)
    masks = relevance.compute_ard_masks(model, hard=True, threshold=1.0)
    assert sorted(masks) == ["0.mask", "1.mask"] and torch.equal(masks["0.mask"], expected)
    dropped = int((expected == 0).sum())
    total = sum(p.numel() for n, p in model.named_parameters() if "log_sigma2" not in n)
    assert sparsity(model, hard=True, threshold=1.0) == pytest.approx(dropped / total)
    l0 = LinearL0(3, 2)
    assert l0.relevance(hard=True, threshold=1.0).shape == (2, 3)


def test_compute_ard_masks_of_a_dense_model_is_empty():
    # the published MNIST example calls it on the dense model
    from cplxmodule.nn.relevance import compute_ard_masks

    dense = torch.nn.Sequential(torch.nn.Linear(3, 2), cnn.CplxLinear(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compute_ard_masks(dense, hard=True, threshold=3.0) == {}


def test_pruning_every_weight_of_a_layer_warns_with_its_name():
    from cplxmodule.nn.relevance import LinearVD, compute_ard_masks, named_relevance

    model = torch.nn.Sequential(LinearVD(3, 2), LinearVD(2, 2))
    with torch.no_grad():
        model[1].log_sigma2.fill_(20.0)
    with pytest.warns(UserWarning, match=r"compute_ard_masks: layer '1' \(LinearVD\)") as record:
        masks = compute_ard_masks(model, threshold=3.0)
    assert len(record) == 1 and float(masks["1.mask"].sum()) == 0.0
    with pytest.warns(UserWarning, match=r"named_relevance: layer 'net.1'"):
        dict(named_relevance(model, prefix="net", threshold=3.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compute_ard_masks(model, threshold=30.0)  # every weight kept: no warning


def test_modrelu_threshold_none_is_learnable():
    torch.manual_seed(0)
    layer = cnn.CplxModReLU(threshold=None)
    (name, threshold), = layer.named_parameters()
    assert name == "threshold" and threshold.shape == (1,) and threshold.requires_grad
    # drawn from U(0, 0.25), as the published layer draws it
    assert 0.0 <= threshold.detach().item() <= 0.25
    assert list(layer.state_dict()) == ["threshold"]
    z = cplx.randn(4, 5)
    out = layer(z)
    native = cplx.to_complex(z)
    modulus = native.abs()
    expected = torch.clamp(modulus - threshold.detach(), min=0) / modulus * native
    torch.testing.assert_close(cplx.to_complex(out).detach(), expected)
    out.real.sum().backward()
    assert threshold.grad is not None
    fixed = cnn.CplxModReLU(0.3)
    assert not list(fixed.parameters()) and fixed.threshold == 0.3


@pytest.mark.parametrize("threshold", ["0.1", [0.1], True, 1j])
def test_modrelu_refuses_non_number_thresholds(threshold):
    with pytest.raises(TypeError, match="CplxModReLU: `threshold` must be a number or None"):
        cnn.CplxModReLU(threshold)


@pytest.mark.parametrize("layer_cls", [masked.LinearMasked, masked.CplxLinearMasked])
def test_loading_a_none_mask_unsets_it(layer_cls):
    layer = layer_cls(3, 2)
    layer.load_state_dict({"mask": None}, strict=False)
    assert layer.mask is None  # kept unset
    layer.mask = torch.ones(2, 3)
    weight = {k: v.clone() for k, v in layer.state_dict().items() if k != "mask"}
    result = layer.load_state_dict({**weight, "mask": None})
    assert layer.mask is None and not result.missing_keys and not result.unexpected_keys
    assert "mask" not in layer.state_dict()


def test_mask_keys_that_name_no_masked_layer():
    from cplxmodule.nn.masked import to_masked

    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 2))
    typo = {"0.mask": torch.ones(2, 3), "l.mask": torch.ones(2, 2)}
    with pytest.raises(ValueError, match="'l.mask'"):
        to_masked(model, typo, strict=True)
    with pytest.warns(UserWarning, match=r"to_masked: `masks` .*\['l.mask'\]"), \
            pytest.warns(UserWarning, match=r"got none for \['1'\]"):
        twin = to_masked(model, typo)
    assert twin[0].mask is not None and twin[1].mask is None
    with pytest.warns(UserWarning, match="'2.mask'"):
        masked.deploy_masks(twin, state_dict={"1.mask": torch.ones(1), "2.mask": torch.ones(1)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        masked.deploy_masks(twin, state_dict={"1.mask": torch.ones(1), "0.weight": torch.ones(1)})
