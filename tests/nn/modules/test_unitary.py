"""The unitary RNN cell and layer and cplx.matrix_exp, against native complex128."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import cplxmodule.nn as nn
from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn.masked import to_masked
from ...helpers import detached_native

pytestmark = pytest.mark.usefixtures("one_thread")


def as_numpy(z):
    return z.real.detach().numpy() + 1j * z.imag.detach().numpy()


def reference_unitary(layer):
    g = detached_native(layer.generator, torch.complex128)
    return torch.linalg.matrix_exp((g - g.mH) / 2)


def reference_step(layer, x, h, u):
    """modReLU(U h + W x + c) in complex128, from the layer's raw parameters."""
    w = detached_native(layer.input_proj.weight, torch.complex128)
    z = h @ u.T + x @ w.T
    if layer.input_proj.bias is not None:
        z = z + detached_native(layer.input_proj.bias, torch.complex128)
    b = layer.threshold.detach().double()
    return z * torch.relu(1 - b / z.abs())


def random_cell(cls, input_size, hidden_size, seed, **kwargs):
    torch.manual_seed(seed)
    layer = cls(input_size, hidden_size, dtype=torch.float64, **kwargs)
    with torch.no_grad():
        layer.threshold.uniform_(-0.2, 0.5)
    return layer


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), batch=st.sampled_from([(), (3,)]), seed=st.integers(0, 2**16))
def test_matrix_exp_matches_torch_complex(n, batch, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*batch, n, n, dtype=torch.complex128, generator=g)
    got = cplx.matrix_exp(cplx.from_complex(a))
    np.testing.assert_allclose(as_numpy(got), torch.linalg.matrix_exp(a).numpy(),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 24), seed=st.integers(0, 2**16))
def test_weight_hh_is_unitary(dtype, tol, n, seed):
    # the rounding of sums of n products grows with n
    tol = max(tol, 10 * n * torch.finfo(dtype).eps)
    torch.manual_seed(seed)
    cell = nn.CplxUnitaryRNNCell(2, n, dtype=dtype)
    with torch.no_grad():
        # any generator, not only the initial one
        cell.generator.real.normal_(std=2.0)
        cell.generator.imag.normal_(std=2.0)
    u = detached_native(cell.weight_hh, torch.complex128)
    np.testing.assert_allclose((u.mH @ u).numpy(), np.eye(n), atol=tol)
    h = torch.randn(5, n, dtype=torch.complex128)
    np.testing.assert_allclose((h @ u.T).norm(dim=-1).numpy(), h.norm(dim=-1).numpy(),
                               rtol=tol)
    np.testing.assert_allclose(u.numpy(), reference_unitary(cell).numpy(), atol=10 * tol)


def test_initial_unitary_has_spread_eigenvalues():
    torch.manual_seed(0)
    u = detached_native(nn.CplxUnitaryRNNCell(2, 64).weight_hh, torch.complex128)
    phases = torch.linalg.eigvals(u).angle()
    # the eigenphases are theta, uniform on (-pi, pi): not clustered at 1
    assert phases.abs().mean() > 1.0


@pytest.mark.parametrize("bias", [True, False])
def test_cell_matches_reference(bias):
    cell = random_cell(nn.CplxUnitaryRNNCell, 3, 5, 0, bias=bias)
    x, h = cplx.randn(4, 3, dtype=torch.float64), cplx.randn(4, 5, dtype=torch.float64)
    x128, h128 = detached_native(x, torch.complex128), detached_native(h, torch.complex128)
    expected = reference_step(cell, x128, h128, reference_unitary(cell))
    np.testing.assert_allclose(as_numpy(cell(x, h)), expected.numpy(), atol=1e-12)
    # no hx: zeros; unbatched: the batch's first row
    zero = torch.zeros(4, 5, dtype=torch.complex128)
    np.testing.assert_allclose(
        as_numpy(cell(x)), reference_step(cell, x128, zero, reference_unitary(cell)).numpy(),
        atol=1e-12)
    np.testing.assert_allclose(as_numpy(cell(x[0], h[0])), as_numpy(cell(x, h)[0]), atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
def test_rnn_matches_the_looped_reference(batch_first):
    rnn = random_cell(nn.CplxUnitaryRNN, 3, 5, 1, batch_first=batch_first)
    x = cplx.randn(2, 7, 3, dtype=torch.float64)  # (N, L, H_in)
    h0 = cplx.randn(1, 2, 5, dtype=torch.float64)
    output, h_n = rnn(x if batch_first else x.transpose(0, 1), h0)
    if not batch_first:
        output = output.transpose(0, 1)
    u, h = reference_unitary(rnn), detached_native(h0, torch.complex128)[0]
    expected = []
    for t in range(7):
        h = reference_step(rnn, detached_native(x, torch.complex128)[:, t], h, u)
        expected.append(h)
    expected = torch.stack(expected, 1)
    np.testing.assert_allclose(as_numpy(output), expected.numpy(), atol=1e-12)
    assert h_n.shape == (1, 2, 5)
    np.testing.assert_allclose(as_numpy(h_n)[0], expected[:, -1].numpy(), atol=1e-12)
    # unbatched (L, H_in), hx (1, H)
    output, h_n = rnn(x[0], h0[:, 0])
    assert output.shape == (7, 5) and h_n.shape == (1, 5)
    np.testing.assert_allclose(as_numpy(output), expected[0].numpy(), atol=1e-12)


def test_cell_and_rnn_share_parameters_and_load_each_other():
    rnn = random_cell(nn.CplxUnitaryRNN, 3, 4, 2, batch_first=True)
    cell = nn.CplxUnitaryRNNCell(3, 4, dtype=torch.float64)
    cell.load_state_dict(rnn.state_dict())
    x = cplx.randn(2, 6, 3, dtype=torch.float64)
    output, _ = rnn(x)
    h, steps = None, []
    for t in range(6):
        h = cell(x[:, t], h)
        steps.append(h)
    np.testing.assert_allclose(as_numpy(cplx.stack(steps, 1)), as_numpy(output), atol=1e-12)
    with nn.cached(cell):
        np.testing.assert_allclose(as_numpy(cell(x[:, 0])), as_numpy(steps[0]), atol=1e-12)


def test_norm_is_kept_over_a_long_sequence():
    # no input and zero thresholds: h_L = U^L h_0, of the norm of h_0
    rnn = nn.CplxUnitaryRNN(2, 8, bias=False, dtype=torch.float64)
    h0 = cplx.randn(1, 3, 8, dtype=torch.float64)
    _, h_n = rnn(Cplx.zeros(500, 3, 2, dtype=torch.float64), h0)
    np.testing.assert_allclose(np.linalg.norm(as_numpy(h_n), axis=-1),
                               np.linalg.norm(as_numpy(h0), axis=-1), rtol=1e-10)


def test_gradcheck():
    cell = random_cell(nn.CplxUnitaryRNNCell, 2, 3, 3)
    names = [name for name, _ in cell.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in cell.parameters()]
    x, h = cplx.randn(2, 2, dtype=torch.float64), cplx.randn(2, 3, dtype=torch.float64)
    parts = [t.clone().requires_grad_() for t in (x.real, x.imag, h.real, h.imag)]

    def fn(xr, xi, hr, hi, *values):
        out = torch.func.functional_call(cell, dict(zip(names, values)),
                                         (Cplx(xr, xi), Cplx(hr, hi)))
        return out.real, out.imag

    assert torch.autograd.gradcheck(fn, (*parts, *params), fast_mode=True)


def test_masking_reaches_the_input_map():
    masked = to_masked(nn.CplxUnitaryRNN(3, 4))
    assert isinstance(masked.input_proj, nn.masked.CplxLinearMasked)


@pytest.mark.parametrize("cls", [nn.CplxUnitaryRNNCell, nn.CplxUnitaryRNN])
def test_bad_arguments(cls):
    name = cls.__name__
    with pytest.raises(ValueError, match=rf"{name}: `input_size` must be a positive int, got 0"):
        cls(0, 3)
    with pytest.raises(ValueError, match=rf"{name}: `hidden_size` must be a positive int, got"):
        cls(2, 3.0)


def test_bad_inputs_leave_the_layers_unchanged():
    cell, rnn = nn.CplxUnitaryRNNCell(3, 4), nn.CplxUnitaryRNN(3, 4)
    before = [{k: v.clone() for k, v in m.state_dict().items()} for m in (cell, rnn)]
    with pytest.raises(TypeError, match=r"CplxUnitaryRNNCell: `input` must be a Cplx or a complex tensor of shape"):
        cell(torch.randn(2, 3))
    with pytest.raises(ValueError, match=r"CplxUnitaryRNNCell: `input` must have shape"
                                         r" \(N, 3\) or \(3,\)"):
        cell(cplx.randn(2, 5))
    with pytest.raises(ValueError, match=r"CplxUnitaryRNNCell: `hx` must have shape"
                                         r" \(2, 4\)"):
        cell(cplx.randn(2, 3), cplx.randn(3, 4))
    with pytest.raises(TypeError, match=r"CplxUnitaryRNNCell: `input` must have the dtype"):
        cell(cplx.randn(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"CplxUnitaryRNN: `input` must have shape"
                                         r" \(L, N, 3\) or \(L, 3\)"):
        rnn(cplx.randn(3))
    with pytest.raises(ValueError, match=r"CplxUnitaryRNN: `hx` must have shape"
                                         r" \(1, 2, 4\)"):
        rnn(cplx.randn(5, 2, 3), cplx.randn(2, 4))
    for module, state in zip((cell, rnn), before):
        after = module.state_dict()
        assert all(torch.equal(state[k], after[k]) for k in state)


def test_float32_matrix_exp_of_rotations_keeps_the_modulus():
    # exp(i theta) for 2000 angles in [0, 3) in float32: modulus 1 to within
    # float32's rounding, as torch's complex64 matrix_exp gives (its real
    # float32 one erred by up to 3.4e-5 near theta = 0.575)
    theta = torch.rand(2000, 1, 1, generator=torch.Generator().manual_seed(0)) * 3
    got = cplx.matrix_exp(Cplx(torch.zeros_like(theta), theta))
    modulus = torch.complex(got.real, got.imag).to(torch.complex128).abs()
    native = torch.linalg.matrix_exp(torch.complex(torch.zeros_like(theta), theta))
    bound = max(4 * float((native.to(torch.complex128).abs() - 1).abs().max()), 2 * torch.finfo().eps)
    assert float((modulus - 1).abs().max()) <= bound
