"""Complex initialisations: the variances they promise, checked statistically.

Every check on a sample mean allows five standard errors of that mean, the
standard error being estimated from the same sample; seeds are fixed.
"""

import math

import numpy as np
import pytest
import scipy.stats
import torch

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import init

SHAPES = [(256, 128), (32, 16, 3, 3)]


def fans(shape):
    """Fan in and fan out, as torch documents them."""
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


def parameter_weight(shape):
    return Cplx(torch.nn.Parameter(torch.empty(shape)), torch.nn.Parameter(torch.empty(shape)))


def assert_mean_close(sample, target):
    """The mean of ``sample`` is ``target`` within five standard errors."""
    sample = np.asarray(sample, dtype=np.float64).ravel()
    se = sample.std(ddof=1) / math.sqrt(sample.size)
    assert abs(sample.mean() - target) < 5 * se, (sample.mean(), target, se)


def modulus_squared(w):
    return (w.real.detach().double() ** 2 + w.imag.detach().double() ** 2).numpy()


def leaky_gain_squared(nonlinearity, a):
    return {"relu": 2.0, "linear": 1.0, "leaky_relu": 2.0 / (1 + a * a)}[nonlinearity]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fill", [init.cplx_kaiming_normal_, init.cplx_kaiming_uniform_])
@pytest.mark.parametrize(
    "nonlinearity, a, mode",
    [("leaky_relu", 0.0, "fan_in"), ("leaky_relu", 0.2, "fan_out"), ("relu", 0.0, "fan_in"),
     ("linear", 0.0, "fan_out")],
)
def test_kaiming_variance(shape, fill, nonlinearity, a, mode):
    torch.manual_seed(0)
    w = fill(parameter_weight(shape), a=a, mode=mode, nonlinearity=nonlinearity)
    fan = dict(zip(("fan_in", "fan_out"), fans(shape)))[mode]
    target = leaky_gain_squared(nonlinearity, a) / fan
    assert_mean_close(modulus_squared(w), target)
    # the real and imaginary parts share the variance equally
    assert_mean_close(w.real.detach().double().numpy() ** 2, target / 2)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fill", [init.cplx_xavier_normal_, init.cplx_xavier_uniform_])
@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_xavier_variance(shape, fill, gain):
    torch.manual_seed(1)
    w = fill(parameter_weight(shape), gain=gain)
    fan_in, fan_out = fans(shape)
    assert_mean_close(modulus_squared(w), 2 * gain**2 / (fan_in + fan_out))


def test_normal_and_uniform_part_distributions():
    torch.manual_seed(2)
    shape = (128, 64)
    std = math.sqrt(2 / 64) / math.sqrt(2)  # per part, He with relu
    w = init.cplx_kaiming_normal_(Cplx.empty(*shape), nonlinearity="relu")
    for part in (w.real, w.imag):
        assert scipy.stats.kstest(part.ravel().numpy(), "norm", args=(0, std)).pvalue > 1e-3
    # the two parts are independent draws
    assert abs(np.corrcoef(w.real.ravel(), w.imag.ravel())[0, 1]) < 5 / math.sqrt(w.numel())

    w = init.cplx_kaiming_uniform_(Cplx.empty(*shape), nonlinearity="relu")
    bound = math.sqrt(3) * std
    for part in (w.real, w.imag):
        test = scipy.stats.kstest(part.ravel().numpy(), "uniform", args=(-bound, 2 * bound))
        assert test.pvalue > 1e-3


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["glorot", "xavier", "he", "Kaiming"])
def test_trabelsi_standard_rayleigh_modulus_uniform_phase(shape, kind):
    torch.manual_seed(3)
    w = init.cplx_trabelsi_standard_(parameter_weight(shape), kind=kind)
    fan_in, fan_out = fans(shape)
    variance = 2 / fan_in if kind.lower() in ("he", "kaiming") else 2 / (fan_in + fan_out)
    assert_mean_close(modulus_squared(w), variance)

    modulus = np.sqrt(modulus_squared(w)).ravel()
    sigma = math.sqrt(variance / 2)
    assert scipy.stats.kstest(modulus, "rayleigh", args=(0, sigma)).pvalue > 1e-3
    phase = np.arctan2(w.imag.detach().numpy(), w.real.detach().numpy()).ravel()
    assert scipy.stats.kstest(phase, "uniform", args=(-math.pi, 2 * math.pi)).pvalue > 1e-3


def assert_rayleigh_uniform_phase(w, variance):
    """Modulus Rayleigh of scale sqrt(variance / 2) (KS test), phase uniform, independent."""
    modulus = np.sqrt(modulus_squared(w)).ravel()
    scale = math.sqrt(variance / 2)
    assert scipy.stats.kstest(modulus, "rayleigh", args=(0, scale)).pvalue > 1e-3
    phase = np.arctan2(w.imag.detach().numpy(), w.real.detach().numpy()).ravel()
    assert scipy.stats.kstest(phase, "uniform", args=(-math.pi, 2 * math.pi)).pvalue > 1e-3
    # modulus and phase are independent draws: no linear trace of one in the other
    assert abs(np.corrcoef(modulus, phase)[0, 1]) < 5 / math.sqrt(modulus.size)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "nonlinearity, a, mode",
    [("leaky_relu", 0.0, "fan_in"), ("leaky_relu", 0.2, "fan_out"), ("relu", 0.0, "fan_in"),
     ("linear", 0.0, "fan_out")],
)
def test_kaiming_rayleigh_variance_and_distribution(shape, nonlinearity, a, mode):
    torch.manual_seed(6)
    w = init.cplx_kaiming_rayleigh_(
        parameter_weight(shape), a=a, mode=mode, nonlinearity=nonlinearity
    )
    fan = dict(zip(("fan_in", "fan_out"), fans(shape)))[mode]
    variance = leaky_gain_squared(nonlinearity, a) / fan
    assert_mean_close(modulus_squared(w), variance)
    assert_rayleigh_uniform_phase(w, variance)


def test_kaiming_rayleigh_defaults_are_trabelsi_he():
    # Trabelsi et al.'s He criterion, E|W|^2 = 2 / fan_in, from torch's default arguments
    torch.manual_seed(7)
    shape = (64, 16, 5)
    w = init.cplx_kaiming_rayleigh_(parameter_weight(shape))
    assert_mean_close(modulus_squared(w), 2 / fans(shape)[0])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_xavier_rayleigh_variance_and_distribution(shape, gain):
    torch.manual_seed(8)
    w = init.cplx_xavier_rayleigh_(parameter_weight(shape), gain=gain)
    fan_in, fan_out = fans(shape)
    variance = 2 * gain**2 / (fan_in + fan_out)
    assert_mean_close(modulus_squared(w), variance)
    assert_rayleigh_uniform_phase(w, variance)


def test_rayleigh_rejects_bad_mode():
    w = Cplx.zeros(3, 3)
    with pytest.raises(ValueError, match="cplx_kaiming_rayleigh_: `mode` must be"):
        init.cplx_kaiming_rayleigh_(w, mode="fan_avg")
    assert not w.real.any() and not w.imag.any()


@pytest.mark.parametrize("shape", [(64, 32), (32, 64), (8, 4, 3, 3), (6, 5, 1)])
@pytest.mark.parametrize("kind", ["glorot", "he"])
def test_trabelsi_independent_is_scaled_semi_unitary(shape, kind):
    torch.manual_seed(4)
    w = init.cplx_trabelsi_independent_(parameter_weight(shape), kind=kind)
    fan_in, fan_out = fans(shape)
    variance = 2 / fan_in if kind == "he" else 2 / (fan_in + fan_out)
    # the scale is set exactly, not in expectation
    np.testing.assert_allclose(modulus_squared(w).mean(), variance, rtol=1e-5)

    rows = shape[0] * shape[1] if len(shape) > 2 else shape[0]
    m = (w.real.detach().double().numpy() + 1j * w.imag.detach().double().numpy())
    m = m.reshape(rows, -1)
    gram = m @ m.conj().T if rows <= m.shape[1] else m.conj().T @ m
    scale = gram.trace().real / len(gram)
    np.testing.assert_allclose(gram / scale, np.eye(len(gram)), atol=1e-5)


def test_uniform_independent_bounds_and_mean():
    torch.manual_seed(5)
    w = init.cplx_uniform_independent_(Cplx.empty(200, 100), a=-2.0, b=1.0)
    for part in (w.real, w.imag):
        assert part.min() >= -2.0 and part.max() < 1.0
        assert_mean_close(part.numpy(), -0.5)
    assert not torch.equal(w.real, w.imag)


ALL = [
    init.cplx_kaiming_normal_,
    init.cplx_kaiming_uniform_,
    init.cplx_xavier_normal_,
    init.cplx_xavier_uniform_,
    init.cplx_kaiming_rayleigh_,
    init.cplx_xavier_rayleigh_,
    init.cplx_trabelsi_standard_,
    init.cplx_trabelsi_independent_,
    init.cplx_uniform_independent_,
]


@pytest.mark.parametrize("fill", ALL)
def test_fills_parameters_in_place_without_history(fill):
    nan = torch.full((6, 4), math.nan)
    re, im = torch.nn.Parameter(nan.clone()), torch.nn.Parameter(nan.clone())
    w = Cplx(re, im)
    assert fill(w) is w
    assert w.real is re and w.imag is im
    assert re.requires_grad and re.grad_fn is None and im.grad_fn is None
    assert torch.isfinite(re).all() and torch.isfinite(im).all()


@pytest.mark.parametrize("fill", ALL)
def test_generator_makes_it_reproducible(fill):
    draws = [fill(Cplx.empty(5, 3), generator=torch.Generator().manual_seed(7)) for _ in "ab"]
    assert torch.equal(draws[0].real, draws[1].real)
    assert torch.equal(draws[0].imag, draws[1].imag)


def test_float64_and_layer_weight_shapes():
    w = init.cplx_trabelsi_independent_(Cplx.empty(4, 3, dtype=torch.float64))
    assert w.dtype == torch.float64
    w = init.cplx_kaiming_uniform_(cplx.randn(3, 2, 5), a=math.sqrt(5))
    assert w.shape == (3, 2, 5)


@pytest.mark.parametrize("fill", ALL)
def test_rejects_real_tensor(fill):
    # the argument's published name: `tensor` for Kaiming/Xavier, `cplx` for the rest
    with pytest.raises(TypeError, match=rf"{fill.__name__}: `(tensor|cplx)` must be a Cplx"):
        fill(torch.empty(3, 3))


@pytest.mark.parametrize("fill", ALL[:-1])
def test_rejects_vectors(fill):
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fill(Cplx.empty(5))


def test_rejects_bad_mode_and_kind():
    with pytest.raises(ValueError, match="`mode`"):
        init.cplx_kaiming_normal_(Cplx.empty(3, 3), mode="fan_avg")
    with pytest.raises(ValueError, match="`kind`"):
        init.cplx_trabelsi_standard_(Cplx.empty(3, 3), kind="lecun")
    with pytest.raises(ValueError, match="`kind`"):
        init.cplx_trabelsi_independent_(Cplx.empty(3, 3), kind=None)
