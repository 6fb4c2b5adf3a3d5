"""Pooling, resizing and losses against the same computation in torch's native complex64.

Run with::

    python -m pytest benchmarks/test_bench_pool_loss.py --benchmark-enable

Each group is one operation on a ``(8, 16, 64, 64)`` complex input, forward
only (``fwd``) or forward and backward (``fwd+bwd``), with four variants:
``cplxmodule``, the layer of :mod:`cplxmodule.nn` on a :class:`~cplxmodule.cplx.Cplx`,
and ``torch-complex64``, what a user of torch's native complex tensors
writes for the same result, each eager and compiled (``-compiled``, see
``benchmarks/_compiling.py``). torch has no complex pooling or interpolation
kernels, so the native variant pools or resizes ``z.real`` and ``z.imag``
(views into the complex tensor) and joins them with :func:`torch.complex`;
modulus pooling gathers by the indices of the pooled :func:`torch.abs`;
polar resizing interpolates ``abs`` and :func:`torch.sgn`; the losses are
their formulas on native tensors (``F.l1_loss`` for the L1 loss). Runs on
one thread; ``benchmarks/conftest.py`` prints each variant's time divided by
the native time of its group (below 1 is faster). On a busy machine add
``--benchmark-timer=time.process_time``.
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.nn as cnn
from cplxmodule.nn import losses
from _compiling import NATIVE, VARIANTS, compiled, eager, warm_up
from _operands import parts_sum, separate_parts

pytestmark = pytest.mark.usefixtures("one_thread")

SHAPE = (8, 16, 64, 64)


def _split(op):
    return lambda z: torch.complex(op(z.real), op(z.imag))


def _by_modulus(pool):
    def native(z):
        _, indices = pool(z.abs())
        return z.flatten(-2).gather(-1, indices.flatten(-2)).view_as(indices)

    return native


def _polar(resize):
    def native(z):
        phasor = torch.sgn(z)
        return resize(z.abs()) * torch.sgn(torch.complex(resize(phasor.real), resize(phasor.imag)))

    return native


def _bilinear(part):
    return F.interpolate(part, scale_factor=2, mode="bilinear")


# name -> (layer, native function of the input); layers take one Cplx
LAYERS = {
    "avg_pool2d": (cnn.CplxAvgPool2d(2), _split(lambda p: F.avg_pool2d(p, 2))),
    "adaptive_avg_pool2d": (cnn.CplxAdaptiveAvgPool2d(7),
                            _split(lambda p: F.adaptive_avg_pool2d(p, 7))),
    "max_pool2d": (cnn.CplxMaxPool2d(2),
                   _by_modulus(lambda m: F.max_pool2d(m, 2, return_indices=True))),
    "adaptive_max_pool2d": (cnn.CplxAdaptiveMaxPool2d(7),
                            _by_modulus(lambda m: F.adaptive_max_pool2d(m, 7, return_indices=True))),
    "upsample": (cnn.CplxUpsample(scale_factor=2, mode="bilinear"), _split(_bilinear)),
    "upsample_polar": (cnn.CplxUpsample(scale_factor=2, mode="bilinear", polar=True),
                       _polar(_bilinear)),
}


def _real_ssim_loss(a, b, size=11, sigma=1.5, c1=0.01**2, c2=0.03**2):
    """1 - mean SSIM of real images (N, C, H, W): separable Gaussian filters, no padding."""
    g = torch.exp(-((torch.arange(size, dtype=a.dtype) - size // 2) ** 2) / (2 * sigma**2))
    g = g / g.sum()
    channels = a.shape[1]
    rows = g.view(1, 1, -1, 1).repeat(channels, 1, 1, 1)

    def blur(t):
        t = F.conv2d(t, rows, groups=channels)
        return F.conv2d(t, rows.transpose(2, 3), groups=channels)

    mu_a, mu_b = blur(a), blur(b)
    var_a, var_b = blur(a * a) - mu_a**2, blur(b * b) - mu_b**2
    cov = blur(a * b) - mu_a * mu_b
    ssim = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / (
        (mu_a**2 + mu_b**2 + c1) * (var_a + var_b + c2)
    )
    return 1 - ssim.mean()


# name -> (loss, native function of (x, y) giving the mean loss)
LOSSES = {
    "mse": (losses.CplxMSELoss(), lambda x, y: ((x - y).abs() ** 2).mean()),
    "l1": (losses.CplxL1Loss(), F.l1_loss),
    "l1_split": (losses.CplxL1Loss(split=True),
                 lambda x, y: ((x - y).real.abs() + (x - y).imag.abs()).mean()),
    "cauchy": (losses.CplxCauchyLoss(), lambda x, y: (torch.log1p((x - y).abs() ** 2) / 2).mean()),
    "log_cosh": (losses.CplxLogCoshLoss(),
                 lambda x, y: torch.log(torch.cosh((x - y).abs())).mean()),
    "log_error": (losses.CplxLogErrorLoss(),
                  lambda x, y: ((torch.log(x) - torch.log(y)).abs() ** 2).mean()),
    "phase_aware": (losses.CplxPhaseAwareLoss(),
                    lambda x, y: ((x.abs() - y.abs()) ** 2
                                  + (1 - torch.cos(x.angle() - y.angle()))).mean()),
    "ssim": (losses.CplxSSIMLoss(), lambda x, y: _real_ssim_loss(x.abs(), y.abs())),
}


def _inputs(variant, backward):
    torch.manual_seed(0)
    native = torch.randn(SHAPE, dtype=torch.complex64)
    if variant == NATIVE:
        return native.requires_grad_(backward)
    return separate_parts(native, backward)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwd+bwd"])
def test_layer(benchmark, name, backward, variant):
    layer, native = LAYERS[name]
    benchmark.group = f"{name}-{'fwd+bwd' if backward else 'fwd'}"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    z = _inputs(eager(variant), backward)
    fn = compiled(native if eager(variant) == NATIVE else layer, variant)
    _time(benchmark, variant, (lambda: parts_sum(fn(z)).backward()) if backward else (lambda: fn(z)),
          backward)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwd+bwd"])
def test_loss(benchmark, name, backward, variant):
    loss, native = LOSSES[name]
    benchmark.group = f"{name}-{'fwd+bwd' if backward else 'fwd'}"
    benchmark.extra_info.update(variant=variant, reference=NATIVE)
    x = _inputs(eager(variant), backward)
    y = _inputs(eager(variant), False) * 0.5 + 0.1
    fn = compiled(native if eager(variant) == NATIVE else loss, variant)
    _time(benchmark, variant, (lambda: fn(x, y).backward()) if backward else (lambda: fn(x, y)),
          backward)


def _time(benchmark, variant, call, backward):
    """Time ``call``, without autograd unless it runs a ``backward``."""
    with torch.set_grad_enabled(backward):
        warm_up(benchmark, variant, call)
        benchmark(call)
