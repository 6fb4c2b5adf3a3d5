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

DATA = pathlib.Path(__file__).parent / "data"
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
# Waiting for the functional-core refactor to land (removed when done).
PENDING = {
    "cplxmodule.cplx." + name
    for name in (
        "linear_naive linear_cat linear_3m bilinear_naive bilinear_cat convnd "
        "convnd_naive convnd_3m convnd_quick conv_transposend conv_transposend_naive "
        "conv_transposend_3m max_poolnd symmetric_circular_padding phaseshift "
        "to_concatenated_real"
    ).split()
} | {
    "cplxmodule.nn.masked.base.MaskedWeightMixin",
    "cplxmodule.nn.masked.base.deploy_masks",
    "cplxmodule.nn.masked.deploy_masks",
    "cplxmodule.nn.modules.conv.CplxConvNd",
    "cplxmodule.nn.modules.conv.CplxConvTransposeNd",
    "cplxmodule.nn.CplxParameter",
    "cplxmodule.nn.modules.CplxParameter",
    "cplxmodule.nn.modules.base.CplxParameter",
}
TORCH_GENERIC = [["args", "VAR_POSITIONAL", None], ["kwargs", "VAR_KEYWORD", None]]


def resolve(path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def test_names_were_recorded():
    # every public name outside nn.relevance: defined at, or re-exported by, its path
    assert len(PUBLISHED) == 208


@pytest.mark.parametrize("path", sorted(set(PUBLISHED) - PENDING))
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
        if sig is not None and sig != TORCH_GENERIC and path not in DELIBERATE.keys() | PENDING
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
    assert stats["0"] == (5, 15) and layer.seen == {"below": 5}
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
    guide = pathlib.Path(__file__).parents[1] / "docs" / "guides" / "migrating.rst"
    result = doctest.testfile(str(guide), module_relative=False, verbose=False)
    assert result.attempted and not result.failed
