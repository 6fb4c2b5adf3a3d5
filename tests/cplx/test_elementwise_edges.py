"""Values and gradients of the elementwise functions and activations at the edges of float32.

At zero, at tiny moduli (down to the subnormal ``1e-38``) and at huge ones
(up to ``3e38``), in float32, against each definition computed in torch's
complex128 with its own autograd: wherever the reference value or gradient
is a float32 number, ours must be that number to float32 accuracy.
"""

import math

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule import Cplx

pytestmark = pytest.mark.usefixtures("one_thread")

# the moduli of the probe: zero, tiny (1e-38 is subnormal in float32), huge
MODULI = [0.0, 1e-20, 1e-30, 1e-38, 1e10, 3e38]
PHASES = [1.0, complex(0.6, 0.8), complex(-0.28, -0.96)]
# another element, so that softmax-like functions mix the probe with it
OTHER = complex(0.7, -0.2)
# the loss's complex weights: the gradient is that of Re(sum(conj(w) f(z)))
WEIGHTS = (complex(0.3, 0.9), complex(-0.5, 0.4))
FLOAT32_MAX = torch.finfo(torch.float32).max


def _unit(z):
    """``z / |z|``, 0 at zero, with torch's gradient (that of :func:`torch.sgn`)."""
    return torch.sgn(z)


def _radial(f, slope_at_zero):
    """``f(|z|) z / |z|`` as ``z h(|z|)``, ``h(r) = f(r) / r`` continued by its limit at zero."""

    def reference(z):
        r = z.abs()
        zero = r == 0
        safe = torch.where(zero, torch.ones_like(r), r)
        return z * torch.where(zero, slope_at_zero, f(safe) / safe)

    return reference


def _modrelu(threshold):
    # ReLU(|z| - b) z / |z|, the output 0 at zero
    return lambda z: torch.relu(z.abs() - threshold) * _unit(z)


def _split(f):
    return lambda z: torch.complex(f(z.real), f(z.imag))


def _first_quadrant(z):
    return (z.real >= 0) & (z.imag >= 0)


def _phase_softmax(z):
    # the phase of zero is taken as zero: the unit phasor there is 1
    unit = torch.where(z == 0, torch.ones_like(z), _unit(z))
    return torch.softmax(z.abs(), dim=-1) * unit


# name -> (ours on a Cplx, the complex128 reference on torch's complex dtype)
CASES = {
    "exp": (cplx.exp, torch.exp),
    "log": (cplx.log, torch.log),
    "sin": (cplx.sin, torch.sin),
    "cos": (cplx.cos, torch.cos),
    "tan": (cplx.tan, torch.tan),
    "sinh": (cplx.sinh, torch.sinh),
    "cosh": (cplx.cosh, torch.cosh),
    "tanh": (cplx.tanh, torch.tanh),
    "sigmoid": (cplx.sigmoid, torch.sigmoid),
    "modrelu": (lambda z: cplx.modrelu(z, 0.5), _modrelu(0.5)),
    "modrelu-tiny": (lambda z: cplx.modrelu(z, 1e-7), _modrelu(1e-7)),
    "modrelu-zero": (lambda z: cplx.modrelu(z, 0.0), _modrelu(0.0)),
    "modrelu-negative": (lambda z: cplx.modrelu(z, -0.02), _modrelu(-0.02)),
    "phaseshift": (
        lambda z: cplx.phaseshift(z, 0.3), lambda z: z * complex(math.cos(0.3), math.sin(0.3))
    ),
    "zrelu": (cplx.zrelu, lambda z: z * _first_quadrant(z)),
    # cos(arg z) = Re sgn(z), 0 at zero: the scale 1/2 there
    "cardioid": (cplx.cardioid, lambda z: z * 0.5 * (1 + _unit(z).real)),
    "modtanh": (cplx.modtanh, _radial(torch.tanh, 1.0)),
    "modsquash": (cplx.modsquash, _radial(lambda r: r * r / (1 + r * r), 0.0)),
    "modlog": (cplx.modlog, _radial(torch.log1p, 1.0)),
    "zabsrelu": (lambda z: cplx.zabsrelu(z, 0.5), lambda z: z * (z.abs() >= 0.5)),
    "zleakyrelu": (
        lambda z: cplx.zleakyrelu(z, 0.1),
        lambda z: torch.where(_first_quadrant(z), z, 0.1 * z),
    ),
    "phase_softmax": (lambda z: cplx.phase_softmax(z, -1), _phase_softmax),
    "ratio_mask": (
        lambda z: cplx.ratio_mask(z, Cplx(torch.ones(2), torch.ones(2))),
        lambda z: _radial(torch.tanh, 1.0)(z) * complex(1, 1),
    ),
    # the activation layers, each against the definition of its docstring
    "CplxModReLU": (cnn.CplxModReLU(0.25), _modrelu(0.25)),
    "CplxCardioid": (cnn.CplxCardioid(), lambda z: z * 0.5 * (1 + _unit(z).real)),
    "CplxZReLU": (cnn.CplxZReLU(), lambda z: z * _first_quadrant(z)),
    "CplxModulus": (cnn.CplxModulus(), torch.abs),
    "CplxAngle": (cnn.CplxAngle(), torch.angle),
    "CplxSplitReLU": (cnn.CplxSplitReLU(), _split(torch.relu)),
    "CplxSplitELU": (cnn.CplxSplitELU(), _split(torch.nn.functional.elu)),
    "CplxSplitGELU": (cnn.CplxSplitGELU(), _split(torch.nn.functional.gelu)),
    "CplxSplitTanh": (cnn.CplxSplitTanh(), _split(torch.tanh)),
    "CplxSplitSigmoid": (cnn.CplxSplitSigmoid(), _split(torch.sigmoid)),
    "CplxTanh": (cnn.CplxTanh(), torch.tanh),
    "CplxSigmoid": (cnn.CplxSigmoid(), torch.sigmoid),
    "CplxModTanh": (cnn.CplxModTanh(), _radial(torch.tanh, 1.0)),
    "CplxModSquash": (cnn.CplxModSquash(), _radial(lambda r: r * r / (1 + r * r), 0.0)),
    "CplxModLog": (cnn.CplxModLog(), _radial(torch.log1p, 1.0)),
    "CplxZAbsReLU": (cnn.CplxZAbsReLU(0.5), lambda z: z * (z.abs() >= 0.5)),
    "CplxZLeakyReLU": (
        cnn.CplxZLeakyReLU(0.1), lambda z: torch.where(_first_quadrant(z), z, 0.1 * z)
    ),
    "CplxPhaseSoftmax": (cnn.CplxPhaseSoftmax(dim=-1), _phase_softmax),
    "CplxMagSoftmax": (cnn.CplxMagSoftmax(dim=-1), lambda z: torch.softmax(z.abs(), -1)),
}


def _adaptive(threshold):
    layer = cnn.CplxAdaptiveModReLU(2)
    with torch.no_grad():
        layer.threshold.copy_(torch.tensor(threshold))
    return layer


def _channel(threshold):
    layer = cnn.CplxChannelModReLU(2)
    with torch.no_grad():
        layer.threshold.copy_(torch.tensor(threshold))
    # the layer takes (N, C, *): the probes are samples of two channels
    return layer


CASES["CplxAdaptiveModReLU"] = (
    _adaptive([-0.02, 0.25]),
    lambda z: torch.relu(z.abs() - torch.tensor([-0.02, 0.25], dtype=torch.float64)) * _unit(z),
)
CASES["CplxChannelModReLU"] = (
    _channel([-0.02, 0.25]),
    lambda z: torch.relu(z.abs() - torch.tensor([-0.02, 0.25], dtype=torch.float64)) * _unit(z),
)


def _as_native(value):
    if isinstance(value, Cplx):
        return torch.complex(value.real, value.imag)
    return value


def _loss(output, weights):
    """``Re(sum(conj(w) f))``, or ``sum(w.real f)`` for a real output."""
    if output.is_complex():
        return (output.real * weights.real + output.imag * weights.imag).sum()
    return (output * weights.real).sum()


def _mismatches(inputs, ours, reference, rtol):
    """The inputs where ours is not the reference, which is a finite float32 number."""
    ours, reference = ours.to(torch.complex128), reference.to(torch.complex128)
    magnitude = reference.abs()
    regular = torch.isfinite(magnitude) & (magnitude < FLOAT32_MAX / 2)
    # the float32 input is exact, so its image is right to a few ulps (plus
    # the absolute error of a subnormal result)
    wrong = regular & ((ours - reference).abs() > rtol * magnitude + 1e-37)
    return [
        f"at {z}: {got} instead of {want}"
        for z, got, want in zip(inputs[wrong].tolist(), ours[wrong].tolist(),
                                reference[wrong].tolist())
    ]


# torch's own kernel: GELU(x) = x (1 + erf(x / sqrt 2)) / 2 overflows above
# half the float32 range
TORCH_OVERFLOWS = {"CplxSplitGELU"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_gradient_at_the_edges(name):
    ours, reference = CASES[name]
    # one row per probe: (modulus * phase, OTHER)
    probes = [modulus * phase for modulus in MODULI for phase in PHASES]
    z = torch.tensor([[probe, OTHER] for probe in probes], dtype=torch.complex64)
    weights = torch.tensor(WEIGHTS, dtype=torch.complex128)

    exact = z.to(torch.complex128).requires_grad_()
    expected = reference(exact).reshape(z.shape)
    _loss(expected, weights).backward()

    re, im = z.real.clone().requires_grad_(), z.imag.clone().requires_grad_()
    output = _as_native(ours(Cplx(re, im))).reshape(z.shape)
    _loss(output, weights.to(torch.complex64)).backward()
    gradient = torch.complex(re.grad, im.grad)

    wrong = _mismatches(z, output.detach(), expected.detach(), rtol=1e-5)
    assert not wrong, f"{name}: values " + "; ".join(wrong)
    wrong = _mismatches(z, gradient, exact.grad, rtol=1e-4)
    assert not wrong, f"{name}: gradients " + "; ".join(wrong)
    finite = torch.isfinite(expected.detach())
    if name not in TORCH_OVERFLOWS:
        assert torch.isfinite(output[finite]).all(), f"{name}: not finite where the definition is"
        assert torch.isfinite(gradient[torch.isfinite(exact.grad)]).all()


@pytest.mark.parametrize("modulus", [0.0, 1e-20, 1e-38])
def test_phase_softmax_gradient_in_float32_is_that_in_float64(modulus):
    z = torch.tensor([[modulus * complex(0.6, 0.8), 0.3 + 0.1j, -1.0 + 0.0j]])
    gradients = {}
    for dtype in (torch.float32, torch.float64):
        re = z.real.to(dtype).requires_grad_()
        im = z.imag.to(dtype).requires_grad_()
        out = cnn.CplxPhaseSoftmax(dim=-1)(Cplx(re, im))
        (out.real * 0.3 + out.imag * 0.9).sum().backward()
        gradients[dtype] = torch.complex(re.grad, im.grad).to(torch.complex128)
    assert torch.isfinite(gradients[torch.float32]).all()
    torch.testing.assert_close(
        gradients[torch.float32], gradients[torch.float64], rtol=1e-5, atol=1e-6
    )


def test_modrelu_with_a_negative_threshold_lifts_a_tiny_modulus():
    # ReLU(|z| + 0.02) z / |z| for |z| = 1e-6: the modulus 0.020001
    out = cplx.modrelu(Cplx(torch.tensor([6e-7]), torch.tensor([8e-7])), -0.02)
    torch.testing.assert_close(abs(out), torch.tensor([0.020001]))
    torch.testing.assert_close(out.angle, torch.tensor([math.atan2(0.8, 0.6)]))


def test_adaptive_modrelu_starts_with_non_negative_thresholds():
    torch.manual_seed(0)
    threshold = cnn.CplxAdaptiveModReLU(4096).threshold
    assert (threshold >= 0).all()
    # the published scale: the moduli of N(0, 0.02^2) draws, of mean 0.02 sqrt(2 / pi)
    assert abs(threshold.mean().item() - 0.02 * math.sqrt(2 / math.pi)) < 1e-3
