"""Every L0 layer gates by the one hard-concrete mechanism (Louizos, Welling & Kingma, 2018).

The layers with hard-concrete gates (``LinearL0`` with each ``group``, and
every ``*ChannelL0``, real and complex, gating outputs or inputs) are
found by walking :mod:`cplxmodule.nn.relevance`. For each, computed here
from the paper's formulas with numpy and torch's functional ops (complex
layers on torch's complex dtype):

- training: ``gate()`` lies in [0, 1], and the output is the dense output
  with the gates drawn from the same uniform numbers,
  :math:`z = \\min(1, \\max(0, \\sigma((\\log u - \\log(1 - u) - \\log\\alpha)
  / \\beta)(\\zeta - \\gamma) + \\gamma))`, per weight once per call
  (``LinearL0(group=None)``) or per example and channel;
- eval: ``gate()`` is :math:`\\min(1, \\max(0, \\sigma(-\\log\\alpha)(\\zeta -
  \\gamma) + \\gamma))` and the output is the dense output with those gates
  on the weight;
- the penalty is the expected L0 norm,
  :math:`\\sigma(-\\log\\alpha - \\beta \\log(-\\gamma / \\zeta))`.
"""

import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest
import torch
import torch.nn.functional as tF

import cplxmodule.nn.relevance as R
from cplxmodule.cplx import Cplx
from cplxmodule.nn.relevance.structured import ChannelGateMixin, _HardConcreteGates

from ...helpers import as_native

BETA, GAMMA, ZETA = 2.0 / 3.0, -0.1, 1.1


def _l0_layers():
    classes = set()
    for info in pkgutil.walk_packages(R.__path__, R.__name__ + "."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, _HardConcreteGates) and hasattr(cls, "_family"):
                classes.add(cls)
    return sorted(classes, key=lambda cls: cls.__name__)


CLASSES = _l0_layers()
_CONV = {"stride": 2, "padding": 1}
SETUPS = {
    "Linear": ((3, 4), {}, [(5, 3)]),
    "Bilinear": ((3, 2, 4), {}, [(5, 3), (5, 2)]),
    "Conv1d": ((3, 3, 3), _CONV, [(2, 3, 7)]),
    "Conv2d": ((3, 3, 3), _CONV, [(2, 3, 5, 5)]),
    "Conv3d": ((3, 3, 3), _CONV, [(2, 3, 4, 4, 4)]),
    "ConvTranspose1d": ((3, 3, 3), _CONV, [(2, 3, 5)]),
    "ConvTranspose2d": ((3, 3, 3), _CONV, [(2, 3, 4, 4)]),
    "ConvTranspose3d": ((3, 3, 3), _CONV, [(2, 3, 3, 3, 3)]),
}


def _cases():
    for cls in CLASSES:
        if issubclass(cls, ChannelGateMixin):
            for gated in ("output", "input"):
                yield pytest.param(cls, {"gated": gated}, gated, id=f"{cls.__name__}-{gated}")
        else:
            for group in (None, "input", "output"):
                yield pytest.param(cls, {"group": group}, group, id=f"{cls.__name__}-{group}")


CASES = list(_cases())


def _op(name, layer):
    """torch's functional op of the family with the layer's geometry: ``op(*inputs, w, b)``."""
    if name == "Linear":
        return tF.linear
    if name == "Bilinear":
        conjugate = getattr(layer, "conjugate", False)

        def bilinear(x1, x2, w, b):
            out = torch.einsum("bi,oij,bj->bo", x1.conj() if conjugate else x1, w, x2)
            return out if b is None else out + b

        return bilinear
    op = getattr(tF, name.replace("Conv", "conv").replace("Transpose", "_transpose"))
    return lambda x, w, b: op(x, w, b, stride=2, padding=1)


def _build(cls, kwargs):
    name = cls._family.name
    args, geometry, shapes = SETUPS[name]
    torch.manual_seed(0)
    layer = cls(*args, **geometry, **kwargs).double()
    with torch.no_grad():
        # gates open, closed and in between (every layer has 3 or more)
        values = torch.linspace(-4.0, 4.0, layer.log_alpha.numel())
        layer.log_alpha.copy_(values.view_as(layer.log_alpha))
    complex_ = cls.__name__.startswith("Cplx")
    gen = torch.Generator().manual_seed(1)
    dtype = torch.complex128 if complex_ else torch.float64
    inputs = [torch.randn(shape, dtype=dtype, generator=gen) for shape in shapes]
    args_in = [Cplx(x.real.clone(), x.imag.clone()) if complex_ else x for x in inputs]
    return layer, inputs, args_in


def _eval_gate(log_alpha):
    s = 1 / (1 + np.exp(log_alpha))
    return np.clip(s * (ZETA - GAMMA) + GAMMA, 0.0, 1.0)


def _drawn_gate(u, log_alpha):
    u = np.clip(u, 1e-6, 1 - 1e-6)
    s = 1 / (1 + np.exp(-(np.log(u) - np.log1p(-u) - log_alpha) / BETA))
    return np.clip(s * (ZETA - GAMMA) + GAMMA, 0.0, 1.0)


def _weight_gate_shape(layer, axis):
    """The shape that puts one gate per ``axis`` channel onto the weight."""
    weight = as_native(layer.weight)
    transposed = layer._family.transposed
    dim = 0 if (axis == "output") != transposed else 1
    shape = [1] * weight.dim()
    shape[dim] = -1
    return shape


def test_the_package_has_l0_layers_of_every_family():
    assert {cls._family.name for cls in CLASSES} == set(SETUPS)
    assert any(cls.__name__.startswith("Cplx") for cls in CLASSES)
    assert R.LinearL0 in CLASSES


@pytest.mark.parametrize("cls, kwargs, axis", CASES)
def test_penalty_is_the_expected_l0_norm(cls, kwargs, axis):
    layer, _, _ = _build(cls, kwargs)
    log_alpha = layer.log_alpha.detach().numpy()
    expected = 1 / (1 + np.exp(log_alpha + BETA * math.log(-GAMMA / ZETA)))
    np.testing.assert_allclose(layer.penalty.detach().numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("cls, kwargs, axis", CASES)
def test_eval_gates_and_output_follow_the_deterministic_formula(cls, kwargs, axis):
    layer, inputs, args_in = _build(cls, kwargs)
    layer.eval()
    log_alpha = layer.log_alpha.detach().numpy()
    gate = _eval_gate(log_alpha)
    assert (gate == 0).any() and (gate == 1).any() and ((gate > 0) & (gate < 1)).any()
    np.testing.assert_allclose(layer.gate().detach().numpy(), gate, rtol=1e-12, atol=1e-15)
    weight = as_native(layer.weight).detach()
    gates = torch.from_numpy(gate)
    if axis is not None:
        gates = gates.reshape(_weight_gate_shape(layer, axis))
    bias = None if layer.bias is None else as_native(layer.bias).detach()
    expected = _op(cls._family.name, layer)(*inputs, weight * gates, bias)
    output = as_native(layer(*args_in)).detach()
    torch.testing.assert_close(output, expected, rtol=1e-10, atol=1e-10)
    # compact and the masked twins store this weight
    torch.testing.assert_close(as_native(layer._eval_weight()).detach(), weight * gates)


@pytest.mark.parametrize("cls, kwargs, axis", CASES)
def test_training_gates_are_hard_concrete_draws(cls, kwargs, axis):
    layer, inputs, args_in = _build(cls, kwargs)
    layer.train()
    samples = torch.stack([layer.gate() for _ in range(200)]).detach()
    assert samples.shape[1:] == layer.log_alpha.shape
    assert samples.min() >= 0 and samples.max() <= 1
    assert (samples == 0).any() and (samples == 1).any()

    name = cls._family.name
    op = _op(name, layer)
    weight = as_native(layer.weight).detach()
    bias = None if layer.bias is None else as_native(layer.bias).detach()
    log_alpha = layer.log_alpha.detach().numpy()
    spatial = layer._family.kernel_dims
    torch.manual_seed(5)
    output = as_native(layer(*args_in)).detach()
    torch.manual_seed(5)
    if axis is None:
        # one gate per weight, drawn once for the call
        u = torch.rand(layer.log_alpha.shape, dtype=torch.float64).numpy()
        z = torch.from_numpy(_drawn_gate(u, log_alpha))
        expected = op(*inputs, weight * z, bias)
    elif axis == "input":
        first, *others = inputs
        shape = (*first.shape[: first.dim() - spatial], *(1,) * spatial)
        u = torch.rand(shape, dtype=torch.float64).numpy()
        channels = log_alpha.reshape(-1, *(1,) * spatial)
        z = torch.from_numpy(_drawn_gate(u, channels))
        expected = op(first * z, *others, weight, bias)
    else:
        mean = op(*inputs, weight, None)
        shape = (*mean.shape[: mean.dim() - spatial], *(1,) * spatial)
        u = torch.rand(shape, dtype=torch.float64).numpy()
        channels = log_alpha.reshape(-1, *(1,) * spatial)
        z = torch.from_numpy(_drawn_gate(u, channels))
        expected = mean * z
        if bias is not None:
            expected = expected + bias.view(-1, *(1,) * spatial)
    torch.testing.assert_close(output, expected, rtol=1e-10, atol=1e-10)
