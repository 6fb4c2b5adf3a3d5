"""Edge cases of the complex recurrent layers and cells, against torch's twins.

Each complex layer is loaded with the real weights of its torch twin
(``torch.nn.RNN``, ``GRU``, ``LSTM`` and their cells; the state_dict loads,
imaginary parts zero), so that on real inputs its output is the twin's
(the layers' gates are split, see :class:`~cplxmodule.nn.CplxGRU`). The
cases: an empty batch (torch returns empty outputs), a sequence of no step
(torch raises; ours is a ValueError that names the layer and the
argument), unbatched inputs, ``batch_first``, the LSTM's ``proj_size``,
float16 and bfloat16 (parameters and inputs, and float32 layers inside
autocast), inputs of standard deviation 1e10 in float32, gradients at exact
zero inputs (against the native complex reference of tests/helpers.py, with
complex weights), and dropout between layers in eval mode.
"""

import pytest
import torch

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import CplxGRU, CplxGRUCell, CplxLSTM, CplxLSTMCell, CplxRNN, CplxRNNCell

from ...helpers import native_rnn, native_rnn_step

pytestmark = pytest.mark.usefixtures("one_thread")

INPUT = 3
# name -> (ours, torch's twin), each built from the same arguments
LAYERS = {
    "RNN": (lambda *a, **k: CplxRNN(*a, nonlinearity="relu", **k),
            lambda *a, **k: torch.nn.RNN(*a, nonlinearity="relu", **k)),
    "GRU": (CplxGRU, torch.nn.GRU),
    "LSTM": (CplxLSTM, torch.nn.LSTM),
    "LSTM-proj": (lambda *a, **k: CplxLSTM(*a, proj_size=2, **k),
                  lambda *a, **k: torch.nn.LSTM(*a, proj_size=2, **k)),
}
CELLS = {
    "RNNCell": (lambda *a, **k: CplxRNNCell(*a, nonlinearity="tanh", **k),
                lambda *a, **k: torch.nn.RNNCell(*a, nonlinearity="tanh", **k)),
    "GRUCell": (CplxGRUCell, torch.nn.GRUCell),
    "LSTMCell": (CplxLSTMCell, torch.nn.LSTMCell),
}
TWINS = {**LAYERS, **CELLS}


def pair(name, dtype=torch.float64, hidden=5, **kwargs):
    """Ours and torch's twin with the same real weights, in eval mode."""
    ours, theirs = TWINS[name]
    torch.manual_seed(0)
    theirs = theirs(INPUT, hidden, **kwargs).to(dtype).eval()
    ours = ours(INPUT, hidden, **kwargs).to(dtype).eval()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def is_cell(module):
    return module.__class__.__name__.endswith("Cell")


def states(theirs, batch, dtype, generator, batched=True):
    """Random initial states of ``theirs`` (a tensor, or a tuple for an LSTM)."""
    if is_cell(theirs):
        shapes = [(theirs.hidden_size,)] * (2 if isinstance(theirs, torch.nn.LSTMCell) else 1)
    else:
        stacked = theirs.num_layers * (2 if theirs.bidirectional else 1)
        shapes = [(stacked, theirs.proj_size or theirs.hidden_size), (stacked, theirs.hidden_size)]
        shapes = shapes if isinstance(theirs, torch.nn.LSTM) else shapes[:1]
        shapes = [(s[0], batch, s[1]) if batched else s for s in shapes]
    if is_cell(theirs) and batched:
        shapes = [(batch, *s) for s in shapes]
    out = [torch.randn(s, generator=generator, dtype=torch.float64).to(dtype) for s in shapes]
    return tuple(out) if len(out) == 2 else out[0]


def cplx_of(value):
    """Real tensors (nested in tuples) as Cplx of zero imaginary parts."""
    if isinstance(value, tuple):
        return tuple(cplx_of(v) for v in value)
    return None if value is None else Cplx(value)


def flat(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat(v)]
    return [value]


def assert_twin_output(ours, theirs, **tolerance):
    """Our outputs have the twin's values as real parts, zero imaginary parts, its shapes."""
    ours, theirs = flat(ours), flat(theirs)
    assert len(ours) == len(theirs)
    for z, t in zip(ours, theirs):
        assert z.shape == t.shape and z.dtype == t.dtype
        torch.testing.assert_close(z.real, t, **tolerance)
        assert not z.imag.any()


def sequence(theirs, length, batch, dtype=torch.float64, generator=None, scale=1.0):
    """A real input of ``theirs``: ``(L, N, in)``, ``(N, L, in)`` or ``(L, in)`` (batch None)."""
    generator = generator or torch.Generator().manual_seed(1)
    if is_cell(theirs):
        shape = (INPUT,) if batch is None else (batch, INPUT)
    elif batch is None:
        shape = (length, INPUT)
    else:
        shape = (batch, length, INPUT) if theirs.batch_first else (length, batch, INPUT)
    return (scale * torch.randn(shape, generator=generator, dtype=torch.float64)).to(dtype)


# empty batches and empty sequences
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("name", TWINS)
def test_empty_batch_as_torch(name, batch_first):
    kwargs = {} if name in CELLS else dict(num_layers=2, bidirectional=True,
                                           batch_first=batch_first)
    ours, theirs = pair(name, **kwargs)
    x = sequence(theirs, 4, 0)
    assert_twin_output(ours(Cplx(x)), theirs(x))
    hx = states(theirs, 0, torch.float64, torch.Generator().manual_seed(2))
    assert_twin_output(ours(Cplx(x), cplx_of(hx)), theirs(x, hx))


@pytest.mark.parametrize("layout", ["batched", "batch_first", "unbatched"])
@pytest.mark.parametrize("name", LAYERS)
def test_sequence_of_no_step_is_a_clear_error(name, layout):
    ours, theirs = pair(name, batch_first=layout == "batch_first")
    x = sequence(theirs, 0, None if layout == "unbatched" else 2)
    with pytest.raises(RuntimeError):  # torch's own behaviour
        theirs(x)
    where = ours._get_name()
    with pytest.raises(ValueError, match=f"{where}: `input` must have at least one time step"):
        ours(Cplx(x))


# layouts and options, against the twin's values
@pytest.mark.parametrize("with_state", [False, True], ids=["zeros", "hx"])
@pytest.mark.parametrize("layout", ["batched", "batch_first", "unbatched"])
@pytest.mark.parametrize("name", TWINS)
def test_layouts_as_torch(name, layout, with_state):
    kwargs = {} if name in CELLS else dict(num_layers=2, bidirectional=True,
                                           batch_first=layout == "batch_first")
    ours, theirs = pair(name, **kwargs)
    batch = None if layout == "unbatched" else 3
    x = sequence(theirs, 4, batch)
    hx = states(theirs, batch, torch.float64, torch.Generator().manual_seed(2),
                batched=batch is not None) if with_state else None
    assert_twin_output(ours(Cplx(x), cplx_of(hx)), theirs(x, hx), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", LAYERS)
def test_dropout_between_layers_in_eval_as_torch(name):
    ours, theirs = pair(name, num_layers=3, dropout=0.5)
    x = sequence(theirs, 4, 2)
    expected = theirs(x)
    assert_twin_output(ours(Cplx(x)), expected, rtol=1e-12, atol=1e-12)
    assert_twin_output(ours(Cplx(x)), expected, rtol=1e-12, atol=1e-12)


# precisions
HALF = {torch.float16: dict(rtol=1e-2, atol=2e-3), torch.bfloat16: dict(rtol=5e-2, atol=2e-2)}


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("name", TWINS)
def test_half_precision_as_torch(name, dtype):
    ours, theirs = pair(name, dtype=dtype)
    x = sequence(theirs, 4, 3, dtype=dtype)
    hx = states(theirs, 3, dtype, torch.Generator().manual_seed(2))
    assert_twin_output(ours(Cplx(x), cplx_of(hx)), theirs(x, hx), **HALF[dtype])
    # complex inputs too: against the float32 layer on the same (rounded) values
    z = Cplx(x, sequence(theirs, 4, 3, dtype=dtype, generator=torch.Generator().manual_seed(3)))
    expected = flat(ours.float()(z.to(torch.float32)))
    for actual, reference in zip(flat(ours.to(dtype)(z)), expected):
        assert actual.dtype == dtype
        torch.testing.assert_close(cplx.to_complex(actual.to(torch.float32)),
                                   cplx.to_complex(reference), **HALF[dtype])


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("name", TWINS)
def test_autocast_keeps_the_state_dtype(name, dtype):
    """Inside autocast the products may run in ``dtype``; the states stay float32.

    torch's twins differ among themselves here: the GRU and the GRU and LSTM
    cells return float32, the RNN and its cell ``dtype``, the LSTM fails on
    the CPU. Ours return the state's dtype, float32, and the values of the
    float32 layer (to the precision of ``dtype``), as torch's twin does
    where it runs.
    """
    ours, theirs = pair(name, dtype=torch.float32)
    x = sequence(theirs, 4, 3, dtype=torch.float32)
    z = Cplx(x, sequence(theirs, 4, 3, dtype=torch.float32,
                         generator=torch.Generator().manual_seed(3)))
    expected = flat(ours(z))
    with torch.autocast("cpu", dtype=dtype):
        actual = flat(ours(z))
        try:
            twin = flat(theirs(x))
        except RuntimeError:  # torch's LSTM under CPU autocast
            twin = None
    for a, e in zip(actual, expected):
        assert a.dtype == torch.float32
        torch.testing.assert_close(cplx.to_complex(a), cplx.to_complex(e), **HALF[dtype])
    if twin is not None:
        real = flat(ours(Cplx(x)))
        for a, t in zip(real, twin):
            torch.testing.assert_close(a.real, t.float(), **HALF[dtype])


@pytest.mark.parametrize("name", TWINS)
def test_large_magnitudes_are_finite_where_torch_is(name):
    kwargs = {} if name in CELLS else dict(num_layers=2, bidirectional=True)
    ours, theirs = pair(name, dtype=torch.float32, **kwargs)
    x = sequence(theirs, 4, 3, dtype=torch.float32, scale=1e10)
    expected = flat(theirs(x))
    assert all(t.isfinite().all() for t in expected)
    # real inputs: the twin's values (relu grows with the input: relative)
    for z, t in zip(flat(ours(Cplx(x))), expected):
        torch.testing.assert_close(z.real, t, rtol=1e-5, atol=1e-6 * t.abs().max().item())
    # complex inputs of the same scale
    y = sequence(theirs, 4, 3, dtype=torch.float32, scale=1e10,
                 generator=torch.Generator().manual_seed(4))
    for z in flat(ours(Cplx(x, y))):
        assert z.real.isfinite().all() and z.imag.isfinite().all()


@pytest.mark.parametrize("name", TWINS)
def test_gradients_at_zero_inputs_match_native_reference(name):
    """At exact zeros (inputs and states), with complex weights: finite gradients, the reference's."""
    ours = TWINS[name][0](INPUT, 4, **({} if name in CELLS else dict(bidirectional=True)))
    torch.manual_seed(5)
    ours = ours.double().train()
    shape = (3, INPUT) if name in CELLS else (4, 3, INPUT)
    parts = [torch.zeros(shape, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    leaf = torch.zeros(shape, dtype=torch.complex128, requires_grad=True)
    if name in CELLS:
        hidden = torch.zeros(3, 4, dtype=torch.complex128)
        expected = native_rnn_step(ours.mode, leaf, hidden, hidden, ours.ih, ours.hh)
    else:
        expected = native_rnn(ours, leaf)
    actual = flat(ours(Cplx(*parts)))
    expected = [e for e in flat(expected) if e is not None][: len(actual)]
    generator = torch.Generator().manual_seed(6)
    weights = [torch.randn(e.shape, dtype=torch.complex128, generator=generator) for e in expected]
    # the same real loss of both: sum of Re(conj(w) z) = w_re z_re + w_im z_im
    loss = sum((w.real * a.real + w.imag * a.imag).sum() for w, a in zip(weights, actual))
    grad_real, grad_imag = torch.autograd.grad(loss, parts)
    loss = sum((w.conj() * e).real.sum() for w, e in zip(weights, expected))
    (grad,) = torch.autograd.grad(loss, leaf)
    assert grad_real.isfinite().all() and grad_imag.isfinite().all()
    # torch's complex gradient of a real loss is dL/dRe + i dL/dIm
    torch.testing.assert_close(grad_real, grad.real, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(grad_imag, grad.imag, rtol=1e-10, atol=1e-12)
