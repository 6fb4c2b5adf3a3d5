"""Complex sinusoidal and rotary positional encodings, against numpy complex128."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import cplxmodule.nn as nn
from cplxmodule import cplx

pytestmark = pytest.mark.usefixtures("one_thread")


def as_numpy(z):
    return z.real.detach().numpy() + 1j * z.imag.detach().numpy()


def numpy_phases(length, features, base=10000.0, offset=0):
    """e^{i p omega_k}, omega_k = base^(-k / features), for p = offset, offset + 1, ..."""
    p = np.arange(offset, offset + length)[:, None]
    return np.exp(1j * p * base ** (-np.arange(features) / features))


def random(*shape, dtype=torch.float64):
    return cplx.randn(*shape, dtype=dtype)


@settings(max_examples=20, deadline=None)
@given(length=st.integers(0, 50), features=st.integers(1, 12),
       base=st.sampled_from([10000.0, 100, 2.5]), offset=st.integers(0, 1000))
def test_sinusoid_matches_numpy(length, features, base, offset):
    got = cplx.sinusoid(length, features, base, offset, dtype=torch.float64)
    np.testing.assert_allclose(as_numpy(got), numpy_phases(length, features, base, offset),
                               atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(shape=st.sampled_from([(7, 4), (7, 3, 4), (2, 7, 4), (2, 7, 3, 4)]),
       dim=st.integers(0, 1), offset=st.integers(0, 100))
def test_rotary_matches_numpy(shape, dim, offset):
    if len(shape) == 2:
        dim = 0
    z = random(*shape)
    got = cplx.rotary(z, dim=dim, offset=offset)
    phases = numpy_phases(shape[dim], shape[-1], offset=offset)
    phases = phases.reshape(shape[dim], *[1] * (len(shape) - dim - 2), shape[-1])
    np.testing.assert_allclose(as_numpy(got), as_numpy(z) * phases, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(0, 200), n=st.integers(0, 200), shift=st.integers(0, 10**5),
       seed=st.integers(0, 2**16))
def test_rotary_scores_depend_on_the_relative_position_only(m, n, shift, seed):
    torch.manual_seed(seed)
    d = 16
    q, k = random(d), random(d)
    rope = nn.CplxRotaryPositionalEncoding(d)

    def score(i, j):
        # a sequence holding q at position i and k at position j
        length = max(i, j) + 1
        seq_q, seq_k = cplx.Cplx.zeros(length, d, dtype=torch.float64), cplx.Cplx.zeros(
            length, d, dtype=torch.float64)
        seq_q[i], seq_k[j] = q, k
        rq, rk = as_numpy(rope(seq_q))[i], as_numpy(rope(seq_k))[j]
        return np.real(np.sum(rq * np.conj(rk)))

    expected = np.real(np.sum(as_numpy(q) * np.conj(as_numpy(k))
                              * np.exp(1j * (m - n) * 10000.0 ** (-np.arange(d) / d))))
    np.testing.assert_allclose(score(m, n), expected, atol=1e-10)
    # the same pair shifted by ``shift`` positions, through ``offset``
    shifted = np.real(np.sum(
        as_numpy(rope(q.unsqueeze(0), offset=m + shift))[0]
        * np.conj(as_numpy(rope(k.unsqueeze(0), offset=n + shift))[0])
    ))
    np.testing.assert_allclose(shifted, expected, atol=1e-9)


def test_rotary_keeps_float32_precision_at_far_positions():
    # the phases are reduced modulo 2 pi in float64 before the float32 sine
    z = random(3, 8, dtype=torch.float32)
    got = as_numpy(cplx.rotary(z, offset=10**7))
    expected = as_numpy(z).astype(np.complex128) * numpy_phases(3, 8, offset=10**7)
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("mode", ["add", "multiply"])
def test_sinusoidal_layer_matches_numpy(batch_first, mode):
    layer = nn.CplxSinusoidalPositionalEncoding(
        6, dropout=0.0, max_len=40, batch_first=batch_first, mode=mode, dtype=torch.float64
    )
    z = random(2, 9, 6) if batch_first else random(9, 2, 6)
    pe = numpy_phases(40, 6)[3:12]
    pe = pe[None] if batch_first else pe[:, None]
    expected = as_numpy(z) + pe if mode == "add" else as_numpy(z) * pe
    np.testing.assert_allclose(as_numpy(layer(z, offset=3)), expected, atol=1e-12)
    # unbatched (L, E)
    z = random(9, 6)
    expected = as_numpy(z) + pe.squeeze() if mode == "add" else as_numpy(z) * pe.squeeze()
    np.testing.assert_allclose(as_numpy(layer(z, offset=3)), expected, atol=1e-12)


def test_sinusoidal_layer_dropout_and_state():
    layer = nn.CplxSinusoidalPositionalEncoding(8, dropout=0.5, max_len=20)
    z = random(10, 3, 8, dtype=torch.float32)
    out = layer(z)
    dropped = (out.real == 0) & (out.imag == 0)
    assert 0 < dropped.float().mean() < 1
    kept = as_numpy(out)[~dropped.numpy()]
    full = (as_numpy(z) + numpy_phases(10, 8)[:, None]) * 2
    np.testing.assert_allclose(kept, full[~dropped.numpy()], rtol=1e-5, atol=1e-5)
    layer.eval()
    np.testing.assert_allclose(as_numpy(layer(z)), full / 2, atol=1e-6)
    # the table is a non-persistent buffer: it moves with the layer, is not saved
    assert layer.state_dict() == {}
    assert layer.double().pe.dtype == torch.float64


def test_sinusoidal_table_refilled_after_meta_init():
    layer = nn.CplxSinusoidalPositionalEncoding(5, max_len=30, base=100.0, device="meta",
                                                dtype=torch.float64)
    layer.to_empty(device="cpu")
    layer.pe_real.fill_(float("nan"))
    layer.reset_parameters()
    np.testing.assert_allclose(as_numpy(layer.pe), numpy_phases(30, 5, base=100.0), atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
def test_rotary_layer_with_heads(batch_first):
    rope = nn.CplxRotaryPositionalEncoding(4, base=100.0, batch_first=batch_first)
    z = random(2, 5, 3, 4) if batch_first else random(5, 2, 3, 4)
    phases = numpy_phases(7, 4, base=100.0)[2:]
    phases = phases[None, :, None] if batch_first else phases[:, None, None]
    np.testing.assert_allclose(as_numpy(rope(z, offset=2)), as_numpy(z) * phases, atol=1e-12)


@pytest.mark.parametrize(
    "cls, kwargs, message",
    [
        (nn.CplxSinusoidalPositionalEncoding, dict(d_model=0),
         r"CplxSinusoidalPositionalEncoding: `d_model` must be a positive int, got 0"),
        (nn.CplxSinusoidalPositionalEncoding, dict(d_model=4, max_len=0),
         r"`max_len` must be a positive int, got 0"),
        (nn.CplxSinusoidalPositionalEncoding, dict(d_model=4, dropout=1.5),
         r"`dropout` must be a number in \[0, 1\], got 1.5"),
        (nn.CplxSinusoidalPositionalEncoding, dict(d_model=4, mode="concat"),
         r"`mode` must be 'add' or 'multiply', got 'concat'"),
        (nn.CplxSinusoidalPositionalEncoding, dict(d_model=4, base=-1.0),
         r"`base` must be a positive number, got -1.0"),
        (nn.CplxRotaryPositionalEncoding, dict(d_model=True),
         r"CplxRotaryPositionalEncoding: `d_model` must be a positive int, got True"),
        (nn.CplxRotaryPositionalEncoding, dict(d_model=4, base=0),
         r"CplxRotaryPositionalEncoding: `base` must be a positive number, got 0"),
    ],
)
def test_bad_arguments(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls(**kwargs)


def test_bad_inputs():
    pos = nn.CplxSinusoidalPositionalEncoding(4, max_len=10)
    rope = nn.CplxRotaryPositionalEncoding(4)
    for layer in (pos, rope):
        name = type(layer).__name__
        with pytest.raises(TypeError, match=rf"{name}: `input` must be a Cplx or a complex tensor of shape \(L, "):
            layer(torch.randn(5, 4))
        with pytest.raises(ValueError, match=rf"{name}: `input` must have shape .* E = 4"):
            layer(cplx.randn(5, 3))
        with pytest.raises(ValueError, match=rf"{name}: `offset` must be an int >= 0, got -1"):
            layer(cplx.randn(5, 4), offset=-1)
    with pytest.raises(ValueError, match=r"`input` must have at most max_len=10 positions"):
        pos(cplx.randn(8, 4), offset=3)
    with pytest.raises(ValueError, match=r"rotary: `dim` must be a dimension of `input` other"):
        cplx.rotary(cplx.randn(3, 4), dim=1)
    with pytest.raises(ValueError, match=r"sinusoid: `features` must be a positive int, got 0"):
        cplx.sinusoid(3, 0)
