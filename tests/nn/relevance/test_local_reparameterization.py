"""Every Gaussian layer draws its training output by the one functional draw.

The layers of :mod:`cplxmodule.nn.relevance` whose weight has a Gaussian
posterior (variational dropout, ARD and the complex VD variants, for every
family, real and complex) are found by walking the package, so a new one is
covered without editing this file. In training mode, with a fixed seed,
each must give exactly what
:func:`~cplxmodule.nn.relevance.functional.local_reparameterization` gives
for the output's mean and variance computed here independently: with
torch's functional ops on torch's complex dtype (the mean) and on the
squared modulus of the input and :math:`\\sigma^2` (the variance).
The draw itself is checked against ``mean + sqrt(var) * noise`` with the
noise drawn here, for real means and for complex means whose parts are the
halves of one buffer and whose parts are separate tensors.
"""

import importlib
import inspect
import pkgutil

import pytest
import torch
import torch.nn.functional as tF

import cplxmodule.nn.relevance as R
from cplxmodule.cplx import Cplx
from cplxmodule.nn.relevance.base import GaussianMixin
from cplxmodule.nn.relevance.functional import local_reparameterization
from cplxmodule.nn.relevance.structured import ChannelGateMixin

from ...helpers import as_native


def _gaussian_layers():
    classes = set()
    for info in pkgutil.walk_packages(R.__path__, R.__name__ + "."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, GaussianMixin)
                and not issubclass(cls, ChannelGateMixin)
                and hasattr(cls, "_family")
                and cls.__module__.startswith(R.__name__)
            ):
                classes.add(cls)
    return sorted(classes, key=lambda cls: (cls.__module__, cls.__name__))


LAYERS = _gaussian_layers()

# constructor arguments, keyword arguments and input shapes per family
_CONV = {"stride": 2, "padding": 1}
SETUPS = {
    "Linear": ((3, 2), {}, [(4, 3)]),
    "Bilinear": ((3, 2, 4), {}, [(5, 3), (5, 2)]),
    "Conv1d": ((2, 3, 3), _CONV, [(2, 2, 7)]),
    "Conv2d": ((2, 3, 3), _CONV, [(2, 2, 5, 5)]),
    "Conv3d": ((2, 3, 3), _CONV, [(1, 2, 4, 4, 4)]),
    "ConvTranspose1d": ((2, 3, 3), _CONV, [(2, 2, 5)]),
    "ConvTranspose2d": ((2, 3, 3), _CONV, [(2, 2, 4, 4)]),
    "ConvTranspose3d": ((2, 3, 3), _CONV, [(1, 2, 3, 3, 3)]),
}


def _reference_op(name, layer):
    """torch's functional op of the family with the layer's geometry: ``op(*inputs, w, b)``."""
    if name == "Linear":
        return lambda x, w, b: tF.linear(x, w, b)
    if name == "Bilinear":
        conjugate = getattr(layer, "conjugate", False)

        def bilinear(x1, x2, w, b):
            out = torch.einsum("bi,oij,bj->bo", x1.conj() if conjugate else x1, w, x2)
            return out if b is None else out + b

        return bilinear
    op = getattr(tF, name.replace("Conv", "conv").replace("Transpose", "_transpose"))
    return lambda x, w, b: op(x, w, b, stride=2, padding=1)


def test_the_package_has_gaussian_layers_of_every_family():
    names = {cls._family.name for cls in LAYERS}
    assert names == set(SETUPS)
    assert any(cls.__name__.startswith("Cplx") for cls in LAYERS)
    assert any(not cls.__name__.startswith("Cplx") for cls in LAYERS)


@pytest.mark.parametrize("cls", LAYERS, ids=lambda cls: cls.__name__)
def test_training_output_is_the_functional_draw(cls):
    name = cls._family.name
    args, kwargs, shapes = SETUPS[name]
    torch.manual_seed(0)
    layer = cls(*args, **kwargs).double().train()
    with torch.no_grad():
        layer.log_sigma2.uniform_(-3.0, 1.0)
    complex_ = cls.__name__.startswith("Cplx")
    gen = torch.Generator().manual_seed(1)
    if complex_:
        inputs = [
            torch.randn(shape, dtype=torch.complex128, generator=gen) for shape in shapes
        ]
        args_in = [Cplx(x.real.clone(), x.imag.clone()) for x in inputs]
    else:
        inputs = [torch.randn(shape, dtype=torch.float64, generator=gen) for shape in shapes]
        args_in = inputs

    op = _reference_op(name, layer)
    weight = as_native(layer.weight).detach()
    bias = None if layer.bias is None else as_native(layer.bias).detach()
    mean = op(*inputs, weight, bias)
    var = op(*(abs(x) ** 2 for x in inputs), layer.log_sigma2.detach().exp(), None)
    if complex_:
        mean = Cplx(mean.real.clone(), mean.imag.clone())

    torch.manual_seed(2)
    output = layer(*args_in)
    torch.manual_seed(2)
    expected = local_reparameterization(mean, var)
    assert type(output) is type(expected)
    torch.testing.assert_close(
        as_native(output).detach(), as_native(expected), rtol=1e-10, atol=1e-10
    )
    # the draw is noisy: the output is not the mean
    assert not torch.allclose(as_native(output).detach(), as_native(mean))


def _noise(shape, seed):
    torch.manual_seed(seed)
    return torch.randn((2, *shape), dtype=torch.float64)


def test_the_real_draw_is_mean_plus_std_times_noise():
    mean, var = torch.randn(3, 4, dtype=torch.float64), torch.rand(3, 4, dtype=torch.float64)
    torch.manual_seed(3)
    noise = torch.randn(3, 4, dtype=torch.float64)
    torch.manual_seed(3)
    out = local_reparameterization(mean, var.clone())
    torch.testing.assert_close(out, mean + var.sqrt() * noise)


@pytest.mark.parametrize("layout", ["one buffer", "separate parts"])
def test_the_complex_draw_is_circular_noise_of_half_the_variance_per_part(layout):
    native = torch.randn(3, 4, dtype=torch.complex128)
    if layout == "one buffer":
        mean = Cplx(native.real, native.imag)
    else:
        mean = Cplx(native.real.clone(), native.imag.clone())
    var = torch.rand(3, 4, dtype=torch.float64)
    noise = _noise((3, 4), seed=4)
    torch.manual_seed(4)
    out = local_reparameterization(mean, var.clone())
    std = (var / 2).sqrt()
    torch.testing.assert_close(out.real, native.real + std * noise[0])
    torch.testing.assert_close(out.imag, native.imag + std * noise[1])


def test_the_draw_is_differentiable_in_mean_and_variance_and_finite_at_zero_variance():
    mean = Cplx(torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True))
    var = torch.tensor([0.0, 1.0, 2.0, 0.5], requires_grad=True)
    out = local_reparameterization(mean, var * 1.0)
    (out.real.sum() + out.imag.sum()).backward()
    assert torch.equal(mean.real.grad, torch.ones(4))
    assert torch.isfinite(var.grad).all()
