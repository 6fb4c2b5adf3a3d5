"""Complex losses against the same formulas in torch's native complex128, and SSIM in numpy.

Values and gradients: for a real loss of a complex tensor, torch's native
autograd gives ``dL/dRe + i dL/dIm``, which the gradients of the two parts
must match.
"""

import copy
import io
import math
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from cplxmodule.nn import losses


def _reduce(loss, reduction):
    return {"mean": loss.mean, "sum": loss.sum, "none": lambda: loss}[reduction]()


# loss name -> (class, kwargs, native per-element formula)
NATIVE = {
    "mse": (losses.CplxMSELoss, {}, lambda x, y: (x - y).abs() ** 2),
    "l1": (losses.CplxL1Loss, {}, lambda x, y: (x - y).abs()),
    "l1_split": (losses.CplxL1Loss, {"split": True},
                 lambda x, y: (x - y).real.abs() + (x - y).imag.abs()),
    "cauchy": (losses.CplxCauchyLoss, {"c": 0.7},
               lambda x, y: 0.7 ** 2 / 2 * torch.log(1 + (x - y).abs() ** 2 / 0.7 ** 2)),
    "log_cosh": (losses.CplxLogCoshLoss, {}, lambda x, y: torch.log(torch.cosh((x - y).abs()))),
    "log_error": (losses.CplxLogErrorLoss, {},
                  lambda x, y: (torch.log(x) - torch.log(y)).abs() ** 2),
    "phase_aware": (losses.CplxPhaseAwareLoss, {"modulus_weight": 0.3, "phase_weight": 2.0},
                    lambda x, y: 0.3 * (x.abs() - y.abs()) ** 2
                    + 2.0 * (1 - torch.cos(x.angle() - y.angle()))),
}


def pair(shape, seed):
    g = torch.Generator().manual_seed(seed)
    x, y = (torch.randn(tuple(shape), dtype=torch.complex128, generator=g) for _ in range(2))
    return x, y


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(NATIVE)),
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    scale=st.sampled_from([1e-3, 1.0, 30.0]),
    seed=st.integers(0, 2**16),
)
def test_loss_and_gradient_match_native_complex(name, shape, reduction, scale, seed):
    cls, kwargs, formula = NATIVE[name]
    x, y = pair(shape, seed)
    x, y = x * scale, y * scale
    xn = x.clone().requires_grad_()
    expected = _reduce(formula(xn, y), reduction)
    expected.sum().backward()

    re, im = x.real.clone().requires_grad_(), x.imag.clone().requires_grad_()
    loss = cls(**kwargs, reduction=reduction)(Cplx(re, im), cplx.from_complex(y))
    assert loss.dtype == torch.float64 and loss.shape == expected.shape
    torch.testing.assert_close(loss, expected.detach(), rtol=1e-10, atol=1e-12)
    loss.sum().backward()
    torch.testing.assert_close(torch.complex(re.grad, im.grad), xn.grad, rtol=1e-8, atol=1e-12)


def test_l1_is_torch_l1_on_native_complex():
    x, y = pair((3, 5), 1)
    for reduction in ("mean", "sum", "none"):
        ours = cplx.l1_loss(cplx.from_complex(x), cplx.from_complex(y), reduction=reduction)
        torch.testing.assert_close(ours, F.l1_loss(x, y, reduction=reduction))


def test_mse_is_twice_torch_mse_on_the_real_view():
    x, y = pair((3, 5), 2)
    ours = cplx.mse_loss(cplx.from_complex(x), cplx.from_complex(y))
    torch.testing.assert_close(ours, 2 * F.mse_loss(torch.view_as_real(x), torch.view_as_real(y)))


def test_log_cosh_does_not_overflow():
    x = Cplx(torch.tensor([1e4, 0.0]), torch.tensor([0.0, 0.0]))
    loss = cplx.log_cosh_loss(x, Cplx.zeros(2), reduction="none")
    torch.testing.assert_close(loss, torch.tensor([1e4 - math.log(2), 0.0]))


def test_phase_aware_at_zero_has_no_phase_term_and_finite_gradient():
    re = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    im = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    target = Cplx(torch.tensor([1.0, 0.0], dtype=torch.float64), torch.zeros(2, dtype=torch.float64))
    loss = cplx.phase_aware_loss(Cplx(re, im), target, reduction="none")
    torch.testing.assert_close(loss, torch.tensor([1.0, 1.0], dtype=torch.float64))
    loss.sum().backward()
    assert torch.isfinite(re.grad).all() and torch.isfinite(im.grad).all()


@pytest.mark.parametrize("name", sorted(NATIVE))
def test_loss_gradcheck(name):
    cls, kwargs, _ = NATIVE[name]
    x, y = pair((2, 3), 3)
    parts = [x.real.clone().requires_grad_(), x.imag.clone().requires_grad_()]
    target = cplx.from_complex(y)
    loss = cls(**kwargs)
    assert torch.autograd.gradcheck(lambda re, im: loss(Cplx(re, im), target), parts)


# --- SSIM -----------------------------------------------------------------------------
def np_ssim(a, b, window_size, sigma, data_range, k1=0.01, k2=0.03):
    """SSIM map of real images (N, C, H, W) with Wang et al.'s formula, window by window."""
    g = np.exp(-((np.arange(window_size) - window_size // 2) ** 2) / (2 * sigma**2))
    w = np.outer(g, g) / np.outer(g, g).sum()
    windows_a = np.lib.stride_tricks.sliding_window_view(a, w.shape, axis=(2, 3))
    windows_b = np.lib.stride_tricks.sliding_window_view(b, w.shape, axis=(2, 3))
    mean_a = (windows_a * w).sum((-2, -1))
    mean_b = (windows_b * w).sum((-2, -1))
    var_a = (w * (windows_a - mean_a[..., None, None]) ** 2).sum((-2, -1))
    var_b = (w * (windows_b - mean_b[..., None, None]) ** 2).sum((-2, -1))
    cov = (w * (windows_a - mean_a[..., None, None])
           * (windows_b - mean_b[..., None, None])).sum((-2, -1))
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    return ((2 * mean_a * mean_b + c1) * (2 * cov + c2)) / (
        (mean_a**2 + mean_b**2 + c1) * (var_a + var_b + c2)
    )


@settings(max_examples=15, deadline=None)
@given(
    window_size=st.sampled_from([1, 3, 7, 11]),
    sigma=st.sampled_from([0.8, 1.5]),
    data_range=st.sampled_from([1.0, 4.0]),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    seed=st.integers(0, 2**16),
)
def test_ssim_matches_numpy_on_the_modulus(window_size, sigma, data_range, reduction, seed):
    x, y = pair((2, 3, 12, 13), seed)
    y = x + 0.5 * y  # similar images
    loss = losses.CplxSSIMLoss(window_size, sigma, data_range, reduction=reduction)(
        cplx.from_complex(x), cplx.from_complex(y)
    )
    expected = 1 - np_ssim(x.abs().numpy(), y.abs().numpy(), window_size, sigma, data_range)
    expected = {"mean": expected.mean, "sum": expected.sum, "none": lambda: expected}[reduction]()
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-9, atol=1e-12)


@settings(max_examples=6, deadline=None)
@given(
    window_size=st.sampled_from([3, 7]),
    data_range=st.sampled_from([None, 2.0]),
    split=st.booleans(),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    seed=st.integers(0, 2**16),
)
def test_ssim_metric_matches_numpy_per_image(window_size, data_range, split, reduction, seed):
    x, y = pair((3, 1, 9, 8), seed)
    x = y + 0.5 * x
    images = [(x.real, y.real), (x.imag, y.imag)] if split else [(x.abs(), y.abs())]
    expected = []
    for n in range(3):
        # the default range: the image's largest modulus (of a part, split) of the target
        peak = max(float(b[n].abs().max()) for _, b in images) if data_range is None else data_range
        maps = [np_ssim(a[n:n + 1].numpy(), b[n:n + 1].numpy(), window_size, 1.5, peak)
                for a, b in images]
        expected.append(np.mean(sum(maps) / len(maps)))
    expected = np.array(expected)
    expected = {"mean": expected.mean, "sum": expected.sum, "none": lambda: expected}[reduction]()
    value = cplx.ssim(cplx.from_complex(x), y, window_size, data_range=data_range,
                      reduction=reduction, split=split)
    np.testing.assert_allclose(value.numpy(), expected, rtol=1e-9, atol=1e-12)


def test_ssim_metric_needs_a_range_for_an_empty_target():
    y = cplx.randn(2, 1, 12, 12)
    blank = Cplx(torch.stack([y.real[0], torch.zeros_like(y.real[0])]),
                 torch.stack([y.imag[0], torch.zeros_like(y.imag[0])]))
    with pytest.raises(ValueError, match="ssim: an image whose `target` is all zero"):
        cplx.ssim(y, blank)
    assert cplx.ssim(blank, blank, data_range=1.0) == 1
    with pytest.raises(ValueError, match=r"ssim: `input` must have shape \(N, C, H, W\)"):
        cplx.ssim(cplx.randn(12, 12), cplx.randn(12, 12))


def test_ssim_ignores_phase_and_gradcheck():
    x, y = pair((1, 2, 8, 8), 4)
    z, w = cplx.from_complex(x), cplx.from_complex(y)
    rotated = cplx.from_complex(y * torch.exp(1j * torch.rand(y.shape, dtype=torch.float64)))
    torch.testing.assert_close(cplx.ssim_loss(z, w, 5), cplx.ssim_loss(z, rotated, 5))
    parts = [x.real.clone().requires_grad_(), x.imag.clone().requires_grad_()]
    assert torch.autograd.gradcheck(lambda re, im: cplx.ssim_loss(Cplx(re, im), w, 5), parts,
                                    fast_mode=True)


# --- arguments ------------------------------------------------------------------------
ALL = [(cls, kwargs) for cls, kwargs, _ in NATIVE.values()] + [(losses.CplxSSIMLoss, {})]


@pytest.mark.parametrize("cls, kwargs", ALL, ids=lambda v: getattr(v, "__name__", ""))
def test_bad_reduction_and_inputs_are_named(cls, kwargs):
    name = cls.__name__
    with pytest.raises(ValueError, match=rf"{name}: `reduction` must be one of .*got 'avg'"):
        cls(**kwargs, reduction="avg")
    loss = cls(**kwargs)
    z = cplx.randn(1, 1, 12, 12)
    with pytest.raises(TypeError, match=rf"{name}: `input` must be a Cplx"):
        loss(torch.randn(1, 1, 12, 12), z)
    with pytest.raises(TypeError, match=rf"{name}: `target` must be a Cplx"):
        loss(z, torch.randn(1, 1, 12, 12))
    with pytest.raises(ValueError, match=rf"{name}: `target` must have the shape of `input`"):
        loss(z, cplx.randn(1, 1, 12, 11))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: losses.CplxCauchyLoss(c=0), "CplxCauchyLoss: `c` must be a positive number"),
        (lambda: losses.CplxPhaseAwareLoss(phase_weight=-1),
         "CplxPhaseAwareLoss: `phase_weight` must be a number >= 0"),
        (lambda: losses.CplxSSIMLoss(window_size=4),
         "CplxSSIMLoss: `window_size` must be an odd positive int"),
        (lambda: losses.CplxSSIMLoss(sigma=0.0), "CplxSSIMLoss: `sigma` must be a positive"),
        (lambda: losses.CplxSSIMLoss(data_range=-1), "CplxSSIMLoss: `data_range` must be a positive"),
    ],
)
def test_bad_options_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_ssim_rejects_small_or_wrong_shaped_images():
    with pytest.raises(ValueError, match=r"ssim_loss: `input` must have shape \(N, C, H, W\)"):
        cplx.ssim_loss(cplx.randn(1, 1, 8, 8), cplx.randn(1, 1, 8, 8))
    with pytest.raises(ValueError, match=r"ssim_loss: `input` must have shape"):
        cplx.ssim_loss(cplx.randn(16, 16), cplx.randn(16, 16))


def test_import_paths_and_repr():
    assert losses.CplxMSELoss is cnn.CplxMSELoss
    assert isinstance(cnn.CplxL1Loss(), torch.nn.modules.loss._Loss)
    assert cnn.is_from_cplx(cnn.CplxL1Loss())
    assert repr(losses.CplxL1Loss(split=True, reduction="sum")) == (
        "CplxL1Loss(split=True, reduction='sum')"
    )
    assert repr(losses.CplxMSELoss()) == "CplxMSELoss()"


@pytest.mark.parametrize("cls, kwargs", ALL, ids=lambda v: getattr(v, "__name__", ""))
def test_loss_moves_copies_pickles_and_round_trips_state(cls, kwargs):
    loss = cls(**kwargs)
    x, y = pair((1, 2, 11, 11), 5)
    z, w = cplx.from_complex(x), cplx.from_complex(y)
    expected = loss(z, w)
    for other in (loss.to(torch.float64), copy.deepcopy(loss), pickle.loads(pickle.dumps(loss))):
        assert torch.equal(other(z, w), expected)
    fresh = cls(**kwargs)
    fresh.load_state_dict(loss.state_dict())
    assert repr(fresh) == repr(loss)


class Objective(torch.nn.Module):
    """Real (N, 2, C, H, W) prediction and target in, one real loss out."""

    def __init__(self):
        super().__init__()
        self.terms = torch.nn.ModuleList([
            losses.CplxMSELoss(), losses.CplxL1Loss(split=True), losses.CplxCauchyLoss(),
            losses.CplxLogCoshLoss(), losses.CplxPhaseAwareLoss(), losses.CplxSSIMLoss(5),
        ])

    def forward(self, x, y):
        x, y = Cplx(x[:, 0], x[:, 1]), Cplx(y[:, 0], y[:, 1])
        return sum(term(x, y) for term in self.terms) + losses.CplxL1Loss()(x, y)


@pytest.mark.inductor
def test_objective_compiles_fullgraph_with_gradients():
    model = Objective()
    x, y = torch.randn(2, 2, 2, 8, 8, requires_grad=True), torch.randn(2, 2, 2, 8, 8)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    expected = model(x, y)
    (grad,) = torch.autograd.grad(expected, x)
    out = compiled(x, y)
    (compiled_grad,) = torch.autograd.grad(out, x)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(compiled_grad, grad)


@pytest.mark.onnx
def test_objective_exports_to_onnx():
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    model = Objective()
    x, y = torch.randn(2, 2, 2, 8, 8), torch.randn(2, 2, 2, 8, 8)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x, y), buffer, dynamo=False)
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    (output,) = session.run(None, dict(zip(names, (x.numpy(), y.numpy()))))
    torch.testing.assert_close(torch.from_numpy(output), model(x, y), rtol=1e-5, atol=1e-5)
