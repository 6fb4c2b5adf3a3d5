"""Users' subclasses that mix the published Bayesian bases with mixins of their own.

Research code (the deep weight prior experiments) derives from the
published ``cplxmodule.nn.relevance.real.base.Conv2dGaussian`` and a mixin
of its own that derives from ``BaseARD`` and whose ``__init__`` takes no
arguments. What the published cplxmodule 2022.6 does with such classes was
recorded with it (in its own process) and is the expectation here:

- the class constructs, and the user's ``__init__`` runs exactly once,
  called by torch's layer without arguments (in the MRO, the user's
  ``Module`` mixin comes after torch's layer, with ``BaseARD`` after it);
- a cooperative mixin (``__init__(self, *args, **kwargs)``) constructs
  whether it goes before or after the library's class;
- the state_dict holds the dense layer's keys and ``log_sigma2`` (-10);
- in eval mode the output is the dense layer's with the same weights;
- the penalty is the user's for a Gaussian base, and the layer's own
  (VD or ARD) for a VD or ARD base, which come first in the MRO;
- ``penalties`` and ``compute_ard_masks`` find the layer.

Reference outputs come from torch's functional ops (complex layers: on
torch's complex dtype).
"""

import inspect

import pytest
import torch
import torch.nn.functional as tF

import cplxmodule.nn.relevance as R
import cplxmodule.nn.relevance.complex.base as complex_gaussian
import cplxmodule.nn.relevance.real.base as real_gaussian
from cplxmodule.cplx import Cplx
from cplxmodule.nn import _families
from cplxmodule.nn.relevance.base import BaseARD

from ...helpers import as_native, package_families, published_member

PACKAGE_FAMILIES = package_families()
# the families tested, real and complex, by their dense class's name without
# ``Cplx``: constructor args, input shape, torch's functional op and its settings
SIZES = {
    "Linear": ((3, 2), (4, 3), tF.linear, {}),
    "Conv1d": ((2, 3, 3), (4, 2, 7), tF.conv1d, {"stride": 2, "padding": 1}),
    "Conv2d": ((2, 3, 3), (2, 2, 6, 6), tF.conv2d, {"stride": 1, "padding": 1}),
}
#: the published bases a user derives from: the Gaussian layers (no penalty
#: of their own), and the VD and ARD layers
KINDS = ["gaussian", "vd", "ard"]


def family_named(name, complex_):
    """The package's real or complex family whose dense class is ``[Cplx]<name>``."""
    found = [f for f in PACKAGE_FAMILIES if f.name == name and f.complex == complex_]
    if len(found) != 1:
        raise LookupError(f"the library's table has {len(found)} {'complex' if complex_ else 'real'} "
                          f"families {name!r}")
    return found[0]


def base_class(family, kind):
    """The published ``kind`` member of ``family``, as the library's table records it."""
    if kind != "gaussian":
        return _families.twin_class(family.dense, kind)
    # no conversion makes a Gaussian base: it is found at its published path
    return published_member(complex_gaussian if family.complex else real_gaussian, family, kind)


def bases(kinds, names=tuple(SIZES)):
    """``(base, family, kind)`` of ``kinds`` of the real and complex families ``names``, by class name."""
    cases = []
    for name in names:
        for kind in kinds:
            for complex_ in (False, True):
                family = family_named(name, complex_)
                base = base_class(family, kind)
                cases.append(pytest.param(base, family, kind, id=base.__name__))
    return cases


class Freezable(torch.nn.Module):
    """The user's mixin: its ``__init__`` takes no arguments and registers a buffer."""

    inits = 0

    def __init__(self):
        super().__init__()
        Freezable.inits += 1
        self.unfreeze()

    def freeze(self):
        with torch.no_grad():
            sample = torch.normal(_real(self.weight), torch.exp(self.log_sigma2 / 2))
        self.register_buffer("weight_frozen", sample)
        self.requires_grad_(False)

    def unfreeze(self):
        self.register_buffer("weight_frozen", None)
        self.requires_grad_(True)


class Penalized(Freezable, BaseARD):
    """A KL penalty of the user's own, against a standard Gaussian prior."""

    @property
    def penalty(self):
        mean = _real(self.weight)
        return 0.5 * (mean * mean + torch.exp(self.log_sigma2) - self.log_sigma2 - 1)


class Cooperative(torch.nn.Module):
    """A cooperative mixin with a keyword of its own."""

    def __init__(self, *args, scale=2.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.scale = scale


def _real(weight):
    return weight.real if isinstance(weight, Cplx) else weight


def user_class(base, mixin, first=False):
    bases = (mixin, base) if first else (base, mixin)
    return type(f"User{base.__name__}", bases, {})


def dense_output(layer, input, op, settings):
    """The dense layer's output, by torch's functional op (complex: on torch's complex dtype)."""
    weight, bias = as_native(layer.weight), as_native(layer.bias)
    return op(as_native(input), weight, bias, **settings)


def make_input(shape, complex_):
    if complex_:
        return Cplx(torch.randn(shape, dtype=torch.float64), torch.randn(shape, dtype=torch.float64))
    return torch.randn(shape, dtype=torch.float64)


@pytest.mark.parametrize("base, family, kind", bases(KINDS))
def test_a_user_mixin_deriving_from_BaseARD_constructs_and_runs(base, family, kind):
    args, shape, op, settings = SIZES[family.name]
    complex_ = family.complex
    cls = user_class(base, Penalized)
    Freezable.inits = 0
    layer = cls(*args, **settings).double()

    assert Freezable.inits == 1 and "weight_frozen" in layer._buffers
    mro = cls.__mro__
    assert mro.index(family.dense) < mro.index(Penalized) < mro.index(BaseARD)

    parts = ["weight.real", "weight.imag", "bias.real", "bias.imag"] if complex_ else ["weight", "bias"]
    assert sorted(layer.state_dict()) == sorted(parts + ["log_sigma2"])
    assert torch.all(layer.log_sigma2 == -10.0)

    input = make_input(shape, complex_)
    output = layer.eval()(input)
    torch.testing.assert_close(as_native(output), dense_output(layer, input, op, settings))
    assert layer.train()(input).shape == output.shape

    # the user's penalty on a Gaussian base; a VD or ARD base's own comes first
    if kind == "gaussian":
        mean = _real(layer.weight)
        expected = 0.5 * (mean**2 + torch.exp(layer.log_sigma2) - layer.log_sigma2 - 1)
        torch.testing.assert_close(layer.penalty, expected)
    else:
        assert inspect.getattr_static(layer, "penalty") is inspect.getattr_static(base, "penalty")
    (total,) = R.penalties(torch.nn.Sequential(layer))
    torch.testing.assert_close(total, layer.penalty.sum())
    assert sorted(R.compute_ard_masks(torch.nn.Sequential(layer), threshold=3.0)) == ["0.mask"]

    # gradients reach the mean and the variance through output and penalty
    (as_native(layer(input)).abs().sum() + total).backward()
    assert _real(layer.weight).grad is not None and layer.log_sigma2.grad is not None


@pytest.mark.parametrize("base, family, kind", bases(["gaussian"]))
def test_the_users_freeze_reads_the_weight_and_log_sigma2(base, family, kind):
    args = SIZES[family.name][0]
    layer = user_class(base, Penalized)(*args)
    layer.freeze()
    assert layer.weight_frozen.shape == _real(layer.weight).shape
    assert not any(p.requires_grad for p in layer.parameters())
    layer.unfreeze()
    assert layer.weight_frozen is None and all(p.requires_grad for p in layer.parameters())


@pytest.mark.parametrize("first", [False, True], ids=["after", "before"])
@pytest.mark.parametrize("base, family, kind", bases(KINDS))
def test_a_cooperative_mixin_constructs_on_either_side(base, family, kind, first):
    args, shape, op, settings = SIZES[family.name]
    complex_ = family.complex
    layer = user_class(base, Cooperative, first)(*args, **settings)
    assert layer.scale == 2.0 and layer.log_sigma2.shape == _real(layer.weight).shape
    input = make_input(shape, complex_)
    output = layer.double().eval()(input)
    torch.testing.assert_close(as_native(output), dense_output(layer, input, op, settings))


@pytest.mark.parametrize("base, family, kind", bases(["gaussian"], ["Linear"]))
def test_a_gaussian_layer_without_a_penalty_names_itself_in_penalties(base, family, kind):
    # published: a *Gaussian layer is no BaseARD and `penalties` passes it
    # by, leaving its KL term out of the loss without a word; here it is one
    # (BaseARD after the dense twin), and the missing penalty is an error
    layer = user_class(base, Freezable)(*SIZES[family.name][0])
    with pytest.raises(NotImplementedError, match=f"{type(layer).__name__} must define"):
        list(R.penalties(torch.nn.Sequential(layer)))
