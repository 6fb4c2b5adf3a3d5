"""CplxS4D and the state-space math of cplx.sequence, against recurrences in native complex128."""

import copy
import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import cplxmodule.nn as nn
from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.cplx.sequence import _fast_size
from cplxmodule.nn.masked import to_masked
from cplxmodule.nn.relevance import to_bayesian
from ...helpers import detached_native

pytestmark = pytest.mark.usefixtures("one_thread")


def as_numpy(z):
    return z.real.detach().numpy() + 1j * z.imag.detach().numpy()


def reference_system(layer):
    """ZOH-discretised (abar, bbar, c, d) of the layer, from its raw parameters, in complex128."""
    a = torch.complex(-torch.exp(layer.log_A_real.detach()), layer.A_imag.detach())
    a = a.to(torch.complex128)
    dt = torch.exp(layer.log_dt.detach()).double().unsqueeze(-1)
    abar = torch.exp(dt * a)
    bbar = (abar - 1) / a * detached_native(layer.B, torch.complex128)
    return abar, bbar, detached_native(layer.C, torch.complex128), detached_native(layer.D, torch.complex128)


def reference_recurrence(layer, u):
    """x_k = abar x_{k-1} + bbar u_k, y_k = C x_k + D u_k over u of shape (N, H, L), complex128."""
    abar, bbar, c, d = reference_system(layer)
    x = torch.zeros(*u.shape[:-1], abar.shape[-1], dtype=torch.complex128)
    ys = []
    for k in range(u.shape[-1]):
        x = abar * x + bbar * u[..., k, None]
        ys.append((c * x).sum(-1) + d * u[..., k])
    return torch.stack(ys, -1)


def random_layer(d_model, d_state, seed, init="lin", **kwargs):
    torch.manual_seed(seed)
    layer = nn.CplxS4D(d_model, d_state, init=init, dt_min=0.01, dt_max=0.5,
                       dtype=torch.float64, **kwargs)
    with torch.no_grad():
        # a generic point, away from the initial B = 1 and Re(A) = -1/2
        layer.log_A_real.add_(0.3 * torch.randn_like(layer.log_A_real))
        layer.B.real.normal_()
        layer.B.imag.normal_()
    return layer


# the functional core


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5000))
def test_fast_size_is_the_least_5_smooth_number_not_below(n):
    def smooth(m):
        for p in (2, 3, 5):
            while m % p == 0:
                m //= p
        return m == 1

    size = _fast_size(n)
    assert size >= n and smooth(size)
    assert not any(smooth(m) for m in range(n, size))


@settings(max_examples=30, deadline=None)
@given(
    length=st.integers(1, 40),
    taps=st.integers(1, 50),
    batch=st.sampled_from([(), (3,), (2, 3)]),
    seed=st.integers(0, 2**16),
)
def test_causal_fftconv_matches_numpy_convolve(length, taps, batch, seed):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(*batch, length)) + 1j * rng.normal(size=(*batch, length))
    k = rng.normal(size=(3, taps)) + 1j * rng.normal(size=(3, taps)) if batch else (
        rng.normal(size=taps) + 1j * rng.normal(size=taps))
    z = lambda v: cplx.from_complex(torch.tensor(v))  # noqa: E731
    got = cplx.causal_fftconv(z(u), z(k))
    kb = np.broadcast_to(k, (*batch, taps)) if batch else k
    expected = np.zeros((*batch, length), complex)
    for index in np.ndindex(*batch):
        expected[index] = np.convolve(u[index], kb[index])[:length]
    np.testing.assert_allclose(as_numpy(got), expected, atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(
    length=st.integers(1, 300),
    modes=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_ssm_kernel_matches_vandermonde(length, modes, seed):
    rng = np.random.default_rng(seed)
    # a real part of either sign: the formula holds for any nonzero a
    a = rng.uniform(-1, 0.01, (2, modes)) + 1j * rng.uniform(-4, 4, (2, modes))
    b = rng.normal(size=(2, modes)) + 1j * rng.normal(size=(2, modes))
    c = rng.normal(size=(2, modes)) + 1j * rng.normal(size=(2, modes))
    d = rng.normal(size=2) + 1j * rng.normal(size=2)
    step = rng.uniform(0.01, 0.2, 2)
    z = lambda v: cplx.from_complex(torch.tensor(v))  # noqa: E731
    got = cplx.ssm_kernel(z(a), z(b), z(c), torch.tensor(step), length, d=z(d))
    abar = np.exp(step[:, None] * a)
    bbar = (abar - 1) / a * b
    powers = abar[..., None] ** np.arange(length)
    expected = np.einsum("hn,hnl->hl", c * bbar, powers)
    expected[:, 0] += d
    np.testing.assert_allclose(as_numpy(got), expected, rtol=1e-9, atol=1e-9)


def test_zoh_matches_the_exact_solution_of_a_held_input():
    # x' = a x + b with x(0) = 0 has x(t) = b (e^{a t} - 1) / a
    a = np.array([-0.5 + 2j, -0.1 - 1j])
    b = np.array([1.0 + 0.5j, -2.0j])
    abar, bbar = cplx.zoh(cplx.from_complex(torch.tensor(a)), cplx.from_complex(torch.tensor(b)),
                          torch.tensor(0.3, dtype=torch.float64))
    t = np.linspace(0, 0.3, 20001)
    x = np.trapezoid(np.exp(a[:, None] * (0.3 - t)) * b[:, None], t, axis=-1)
    np.testing.assert_allclose(as_numpy(abar), np.exp(0.3 * a), rtol=1e-12)
    np.testing.assert_allclose(as_numpy(bbar), x, rtol=1e-8)


def test_functional_errors():
    z = cplx.randn(2, 3)
    with pytest.raises(TypeError, match=r"ssm_kernel: `b` must be a Cplx"):
        cplx.ssm_kernel(z, torch.ones(2, 3), z, 0.1, 4)
    with pytest.raises(ValueError, match=r"ssm_kernel: `length` must be a positive int, got 0"):
        cplx.ssm_kernel(z, z, z, 0.1, 0)
    with pytest.raises(TypeError, match=r"causal_fftconv: `kernel` must be a Cplx"):
        cplx.causal_fftconv(z, torch.ones(3))
    with pytest.raises(TypeError, match=r"zoh: `a` must be a Cplx"):
        cplx.zoh(torch.ones(3), z, 0.1)


# the layer


@pytest.mark.parametrize("init", ["lin", "inv"])
@settings(max_examples=6, deadline=None)
@given(d_model=st.integers(1, 4), d_state=st.sampled_from([2, 8]),
       length=st.integers(1, 70), seed=st.integers(0, 2**16))
def test_kernel_is_the_impulse_response_of_the_recurrence(init, d_model, d_state, length, seed):
    layer = random_layer(d_model, d_state, seed, init)
    impulse = torch.zeros(d_model, length, dtype=torch.complex128)
    impulse[:, 0] = 1
    expected = reference_recurrence(layer, impulse)
    np.testing.assert_allclose(as_numpy(layer.kernel(length)), expected.numpy(),
                               rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("out_proj", [False, True])
def test_forward_matches_the_recurrence(channels_last, out_proj):
    layer = random_layer(3, 6, 0, out_proj=out_proj, channels_last=channels_last)
    u = torch.randn(2, 3, 50, dtype=torch.complex128)
    expected = reference_recurrence(layer, u)
    if out_proj:
        w = detached_native(layer.out_proj.weight, torch.complex128)
        b = detached_native(layer.out_proj.bias, torch.complex128)
        expected = (expected.transpose(-1, -2) @ w.T + b).transpose(-1, -2)
    x = cplx.from_complex(u.transpose(-1, -2) if channels_last else u)
    got = layer(x)
    if channels_last:
        got = got.transpose(-1, -2)
    np.testing.assert_allclose(as_numpy(got), expected.numpy(), rtol=1e-9, atol=1e-10)
    # unbatched input: the batch's first sequence
    np.testing.assert_allclose(as_numpy(layer(x[0])), as_numpy(layer(x)[0]), atol=1e-12)


def test_forward_in_float32_matches_float64():
    layer = random_layer(4, 16, 1)
    u = cplx.randn(2, 4, 300, dtype=torch.float64)
    expected = as_numpy(layer(u))
    got = as_numpy(layer.float()(u.to(torch.float32)))
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max()


@pytest.mark.parametrize("out_proj", [False, True])
def test_step_mode_gives_the_convolution_outputs(out_proj):
    layer = random_layer(3, 8, 2, out_proj=out_proj)
    u = cplx.randn(2, 3, 40, dtype=torch.float64)
    state, outputs = None, []
    for t in range(u.shape[-1]):
        out, state = layer.step(u[..., t], state)
        outputs.append(out)
    assert state.shape == (2, 3, 4)
    np.testing.assert_allclose(as_numpy(cplx.stack(outputs, -1)), as_numpy(layer(u)), atol=1e-10)
    # and the state is the reference recurrence's
    abar, bbar, _, _ = reference_system(layer)
    x = torch.zeros(2, 3, 4, dtype=torch.complex128)
    for t in range(u.shape[-1]):
        x = abar * x + bbar * detached_native(u[..., t], torch.complex128).unsqueeze(-1)
    np.testing.assert_allclose(as_numpy(state), x.numpy(), atol=1e-10)


def test_gradcheck():
    layer = random_layer(2, 4, 3, out_proj=True)
    names = [name for name, _ in layer.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in layer.parameters()]
    u = cplx.randn(1, 2, 9, dtype=torch.float64)
    parts = [u.real.clone().requires_grad_(), u.imag.clone().requires_grad_()]

    def fn(re, im, *values):
        out = torch.func.functional_call(layer, dict(zip(names, values)), (Cplx(re, im),))
        return out.real, out.imag

    assert torch.autograd.gradcheck(fn, (*parts, *params), fast_mode=True)


def test_parameters_initialisation_and_stability():
    layer = nn.CplxS4D(5, 8, dt_min=0.01, dt_max=0.02)
    dt = torch.exp(layer.log_dt)
    assert ((dt >= 0.01 - 1e-6) & (dt <= 0.02 + 1e-6)).all()
    a = layer.A
    torch.testing.assert_close(a.real, torch.full((5, 4), -0.5))
    torch.testing.assert_close(a.imag, torch.pi * torch.arange(4.0).expand(5, 4))
    inv = nn.CplxS4D(1, 8, init="inv").A.imag[0].double()
    n = torch.arange(4, dtype=torch.float64)
    torch.testing.assert_close(inv, 8 / torch.pi * (8 / (2 * n + 1) - 1), check_dtype=False)
    with torch.no_grad():
        layer.log_A_real.fill_(5.0)  # any value: the real part stays negative
    assert (layer.A.real < 0).all()
    assert sorted(layer.state_dict()) == [
        "A_imag", "B.imag", "B.real", "C.imag", "C.real", "D.imag", "D.real",
        "log_A_real", "log_dt",
    ]


def test_masking_and_variational_dropout_reach_the_output_map_only():
    layer = nn.CplxS4D(4, 8, out_proj=True)
    masked = to_masked(layer)
    assert isinstance(masked.out_proj, nn.masked.CplxLinearMasked)
    bayes = to_bayesian(layer)
    assert isinstance(bayes.out_proj, nn.relevance.CplxLinearVD)
    for model in (masked, bayes):
        torch.testing.assert_close(model.B.real, layer.B.real)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(d_model=0), r"CplxS4D: `d_model` must be a positive int, got 0"),
        (dict(d_model=2.0), r"`d_model` must be a positive int, got 2.0"),
        (dict(d_model=2, d_state=5), r"CplxS4D: `d_state` must be a positive even int, got 5"),
        (dict(d_model=2, d_state=0), r"`d_state` must be a positive even int, got 0"),
        (dict(d_model=2, dt_min=0), r"CplxS4D: `dt_min` must be a positive number, got 0"),
        (dict(d_model=2, dt_min=0.5, dt_max=0.1), r"`dt_min` must be at most `dt_max`"),
        (dict(d_model=2, init="legs"), r"CplxS4D: `init` must be 'lin' or 'inv', got 'legs'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        nn.CplxS4D(**kwargs)


def test_bad_inputs_leave_the_layer_unchanged():
    layer = nn.CplxS4D(3, 4, out_proj=True)
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    bad = [
        (TypeError, r"CplxS4D: `input` must be a Cplx or a complex tensor of shape \(N, 3, L\)", torch.randn(2, 3, 5)),
        (ValueError, r"CplxS4D: `input` must have shape \(N, 3, L\) or \(3, L\), got",
         cplx.randn(2, 4, 5)),
        (ValueError, r"`input` must have shape", cplx.randn(3)),
        (TypeError, r"CplxS4D: `input` must have the dtype of the layer's parameters",
         cplx.randn(2, 3, 5, dtype=torch.float64)),
    ]
    for error, message, value in bad:
        with pytest.raises(error, match=message):
            layer(value)
    with pytest.raises(ValueError, match=r"CplxS4D: `state` must have shape \(2, 3, 2\)"):
        layer.step(cplx.randn(2, 3), cplx.randn(2, 3, 3))
    with pytest.raises(ValueError, match=r"CplxS4D: `input` must have shape \(N, 3\)"):
        layer.step(cplx.randn(2, 5))
    after = layer.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_state_dict_pickle_and_deepcopy_round_trip():
    layer = random_layer(3, 4, 4, out_proj=True)
    u = cplx.randn(2, 3, 12, dtype=torch.float64)
    fresh = nn.CplxS4D(3, 4, out_proj=True, dtype=torch.float64)
    fresh.load_state_dict(layer.state_dict())
    for other in (fresh, copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        np.testing.assert_array_equal(as_numpy(other(u)), as_numpy(layer(u)))
