"""The recurrent layers with ``gates="modulus"``: phase equivariant, against their equations.

Rotating the input sequence and the initial states by one phase rotates
every output and final state by it; the split gates do not (the test of the
property fails on them). The reference computes the equations of the
layers' Notes in torch's complex dtype, one step at a time.
"""

import cmath

import pytest
import torch
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

from cplxmodule import cplx
from cplxmodule.nn import CplxGRU, CplxGRUCell, CplxLSTM, CplxLSTMCell, CplxRNN, CplxRNNCell
from cplxmodule.nn.masked import compact, to_masked
from cplxmodule.nn.relevance import compute_ard_masks, to_bayesian

from ...helpers import detached_native, native_linear, native_modulus_step

INPUT, HIDDEN, LENGTH, BATCH = 3, 4, 6, 2
LAYERS = [
    (CplxRNN, {}),
    (CplxRNN, dict(nonlinearity="relu")),
    (CplxGRU, {}),
    (CplxLSTM, {}),
    (CplxLSTM, dict(proj_size=2)),
    (CplxGRU, dict(num_layers=2, bidirectional=True)),
    (CplxLSTM, dict(bidirectional=True, batch_first=True)),
]
CELLS = [(CplxRNNCell, {}), (CplxRNNCell, dict(nonlinearity="relu")), (CplxGRUCell, {}),
         (CplxLSTMCell, {})]
ANGLES = [0.3, 2.0, -2.9]


def _ids(cases):
    return [cls.__name__ + "".join(f"-{k}={v}" for k, v in kw.items()) for cls, kw in cases]


def make(cls, kwargs, gates="modulus", seed=0):
    """A float64 layer whose gate biases are drawn too (they start at zero)."""
    torch.manual_seed(seed)
    layer = cls(INPUT, HIDDEN, gates=gates, **kwargs).double()
    with torch.no_grad():
        for name, parameter in layer.named_parameters():
            if "gate_bias" in name:
                parameter.uniform_(-1, 1)
    return layer


def states_of(layer, batch, seed):
    """Random initial states in the layer's format, ``hx`` or ``(h_0, c_0)``."""
    g = torch.Generator().manual_seed(seed)
    stacked = layer.num_layers * (2 if layer.bidirectional else 1)
    sizes = [getattr(layer, "proj_size", 0) or HIDDEN] + ([HIDDEN] if layer.mode == "LSTM" else [])
    states = [cplx.from_complex(torch.randn(stacked, batch, s, dtype=torch.complex128, generator=g))
              for s in sizes]
    return tuple(states) if layer.mode == "LSTM" else states[0]


def rotated(value, phase):
    if isinstance(value, tuple):
        return tuple(rotated(v, phase) for v in value)
    return value * phase


def flat(output):
    """The outputs and states of a layer as one list of complex tensors."""
    out, states = output
    states = states if isinstance(states, tuple) else (states,)
    return [detached_native(z) for z in (out, *states)]


@pytest.mark.parametrize("theta", ANGLES)
@pytest.mark.parametrize("cls, kwargs", LAYERS, ids=_ids(LAYERS))
def test_layers_are_phase_equivariant(cls, kwargs, theta):
    layer, phase = make(cls, kwargs), cmath.exp(1j * theta)
    shape = (BATCH, LENGTH) if layer.batch_first else (LENGTH, BATCH)
    x = cplx.from_complex(torch.randn(*shape, INPUT, dtype=torch.complex128))
    hx = states_of(layer, BATCH, seed=1)
    expected = [t * phase for t in flat(layer(x, hx))]
    for ours, theirs in zip(flat(layer(x * phase, rotated(hx, phase))), expected):
        torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls, kwargs", LAYERS[:5], ids=_ids(LAYERS[:5]))
def test_split_gates_are_not(cls, kwargs):
    # the property test can fail: the split gates act on each part
    layer, phase = make(cls, kwargs, gates="split"), cmath.exp(1j * 0.3)
    x = cplx.from_complex(torch.randn(LENGTH, BATCH, INPUT, dtype=torch.complex128))
    ours, theirs = flat(layer(x * phase))[0], flat(layer(x))[0] * phase
    assert not torch.allclose(ours, theirs, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("theta", ANGLES)
@pytest.mark.parametrize("cls, kwargs", LAYERS[:5], ids=_ids(LAYERS[:5]))
def test_packed_sequences_are_phase_equivariant(cls, kwargs, theta):
    layer, phase = make(cls, kwargs), cmath.exp(1j * theta)
    sequences = [torch.randn(n, INPUT, dtype=torch.complex128) for n in (5, 2, 4)]
    hx = states_of(layer, len(sequences), seed=2)

    def run(seqs, states):
        data = [cplx.to_interleaved_real(cplx.from_complex(s)) for s in seqs]
        out, final = layer(pack_sequence(data, enforce_sorted=False), states)
        padded, _ = pad_packed_sequence(out)
        return flat((cplx.from_interleaved_real(padded), final))

    expected = [t * phase for t in run(sequences, hx)]
    for ours, theirs in zip(run([s * phase for s in sequences], rotated(hx, phase)), expected):
        torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls, kwargs", LAYERS[:5], ids=_ids(LAYERS[:5]))
def test_layers_match_their_equations(cls, kwargs):
    layer = make(cls, kwargs)
    x = torch.randn(LENGTH, BATCH, INPUT, dtype=torch.complex128)
    hx = states_of(layer, BATCH, seed=3)
    states = [detached_native(s)[0] for s in (hx if isinstance(hx, tuple) else (hx,))]
    h, c = states[0], states[1] if len(states) > 1 else None
    bias, hr = layer.gate_bias_l0.detach(), getattr(layer, "hr_l0", None)
    outputs = []
    for t in range(LENGTH):
        h, c_new = native_modulus_step(layer.mode, x[t], h, c, layer.ih_l0, layer.hh_l0, bias)
        c = c if c_new is None else c_new
        h = h if hr is None else native_linear(hr, h)
        outputs.append(h)
    ours = flat(layer(cplx.from_complex(x), hx))
    expected = [torch.stack(outputs), h[None]] + ([c[None]] if c is not None else [])
    for got, want in zip(ours, expected):
        torch.testing.assert_close(got.detach(), want.detach(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls, kwargs", CELLS, ids=_ids(CELLS))
def test_cells_match_their_equations_and_are_equivariant(cls, kwargs):
    cell, phase = make(cls, kwargs), cmath.exp(0.9j)
    x = torch.randn(BATCH, INPUT, dtype=torch.complex128)
    h, c = (torch.randn(BATCH, HIDDEN, dtype=torch.complex128) for _ in range(2))
    lstm = cell.mode == "LSTM"
    hx = (cplx.from_complex(h), cplx.from_complex(c)) if lstm else cplx.from_complex(h)
    out = cell(cplx.from_complex(x), hx)
    ours = [detached_native(z) for z in (out if lstm else (out,))]
    h_new, c_new = native_modulus_step(cell.mode, x, h, c, cell.ih, cell.hh, cell.gate_bias.detach())
    for got, want in zip(ours, [h_new, c_new]):
        torch.testing.assert_close(got, want.detach(), rtol=1e-10, atol=1e-12)
    turned = cell(cplx.from_complex(x * phase), rotated(hx, phase))
    for got, want in zip(turned if lstm else (turned,), ours):
        torch.testing.assert_close(detached_native(got), want * phase, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", [CplxRNN, CplxGRU, CplxLSTM])
def test_gradcheck(cls):
    layer = make(cls, {})
    x = torch.randn(3, 1, INPUT, dtype=torch.complex128, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: cplx.to_complex(layer(x)[0]), (x,))
    # the gate biases get gradients too
    cplx.to_complex(layer(x)[0]).abs().sum().backward()
    assert layer.gate_bias_l0.grad.abs().sum() > 0


def test_gradient_is_finite_at_zero_input_and_state():
    layer = make(CplxGRU, {})
    x = cplx.from_complex(torch.zeros(3, 1, INPUT, dtype=torch.complex128)).requires_grad_()
    out, _ = layer(x)
    (abs(out) ** 2).sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in layer.parameters() if p.grad is not None)


def test_parameters_and_repr():
    layer = CplxGRU(INPUT, HIDDEN, gates="modulus", bidirectional=True)
    names = dict(layer.named_parameters())
    # no complex bias (it would fix a phase): real gate biases, zero to start
    assert layer.ih_l0.bias is None and layer.hh_l0_reverse.bias is None
    assert names["gate_bias_l0_reverse"].shape == (3 * HIDDEN,)
    assert not names["gate_bias_l0"].is_complex() and not names["gate_bias_l0"].any()
    assert "gates='modulus'" in repr(layer)
    assert "gate_bias" not in str(dict(CplxGRU(INPUT, HIDDEN, gates="modulus", bias=False)
                                       .named_parameters()))
    assert "gates" not in repr(CplxGRU(INPUT, HIDDEN))


@pytest.mark.parametrize("gates, error", [("phase", ValueError), (1, TypeError), (None, TypeError)])
@pytest.mark.parametrize("cls", [CplxGRU, CplxLSTMCell])
def test_bad_gates_are_refused(cls, gates, error):
    with pytest.raises(error, match=rf"{cls.__name__}.*`gates`"):
        cls(INPUT, HIDDEN, gates=gates)


def test_sparsify_mask_and_compact():
    layer = make(CplxGRU, {})
    x = cplx.from_complex(torch.randn(LENGTH, BATCH, INPUT, dtype=torch.complex128))
    vd = to_bayesian(layer).eval()
    with torch.no_grad():
        for name, p in vd.named_parameters():
            if name.endswith("log_sigma2"):
                p.uniform_(-12, 8)
    masks = compute_ard_masks(vd, threshold=3.0)
    masked = to_masked(vd, masks).eval()
    assert masked.gates == "modulus"
    small = compact(masked)
    torch.testing.assert_close(detached_native(small(x)[0]), detached_native(masked(x)[0]))
    # the masked model keeps the property
    phase = cmath.exp(1.1j)
    torch.testing.assert_close(detached_native(masked(x * phase)[0]), detached_native(masked(x)[0]) * phase)
