"""What each layer does to channels is declared at its class, and every declaration holds.

:func:`~cplxmodule.nn.masked.compact` walks through the modules between a
producer and its consumer by their declared kind (``cplxmodule.nn._kinds``).
A public layer either declares one or is opaque for a reason written here,
and each declaration is checked against what the layer computes: an
elementwise layer commutes with any permutation of the elements, a
channelwise or pooling layer with taking a subset of channels (after the
channelwise layer is sliced to it), in eval mode.
"""

import copy
import inspect
import re

import pytest
import torch

import cplxmodule.nn
from cplxmodule import Cplx
from cplxmodule.nn import _kinds
from cplxmodule.nn.modules.base import CplxToCplx

# Public complex-to-complex layers that compact() treats as opaque, and why.
OPAQUE = {
    "CplxToCplx": "the base class",
    "CplxSequential": "a container: compact walks its children",
    "CplxLinear": "a producer or consumer (a family member), not a step",
    "CplxBilinear": "a family member, not a step",
    "CplxConvNd": "a family member's base",
    "CplxConvTransposeNd": "a family member's base",
    "CplxPhaseShift": "its phases are per feature of the last dimension, not per channel",
    "CplxAdaptiveModReLU": "its thresholds are per feature of the last dimension",
    "CplxPhaseSoftmax": "normalises across a dimension: channels mix",
    "CplxRatioMask": "takes two inputs",
    "CplxMaxPoolNd": "the published dimension-generic base",
    "CplxUnflatten": "reshapes the channels",
    "CplxUpsample": "resizes; kept opaque (no producer chain seen in practice)",
    "CplxLayerNorm": "normalises across the features: channels mix",
    "CplxGroupNorm": "normalises across groups of channels: channels mix",
    "CplxInstanceNorm1d": "by instance statistics: a constant channel is not mapped exactly",
    "CplxInstanceNorm2d": "by instance statistics: a constant channel is not mapped exactly",
    "CplxInstanceNorm3d": "by instance statistics: a constant channel is not mapped exactly",
    "CplxRMSNorm": "normalises across the features: channels mix",
    "CplxConv1d": "a family member (producer or consumer), not a step",
    "CplxConv2d": "a family member (producer or consumer), not a step",
    "CplxConv3d": "a family member (producer or consumer), not a step",
    "CplxConvTranspose1d": "a family member (producer or consumer), not a step",
    "CplxConvTranspose2d": "a family member (producer or consumer), not a step",
    "CplxConvTranspose3d": "a family member (producer or consumer), not a step",
    "CplxFFT": "mixes positions (and channels, along its dim)",
    "CplxIFFT": "mixes positions",
    "CplxSTFT": "changes the layout",
    "CplxISTFT": "changes the layout",
    "CplxFFTShift": "permutes positions along its dims",
    "CplxIFFTShift": "permutes positions, as CplxFFTShift",
    "CplxDataConsistency": "takes three inputs; mixes positions by Fourier transforms",
    "CplxGaborConv1d": "its weight is made from centres and widths: no family",
    "CplxMorletConv1d": "its weight is made from centres and widths: no family",
    "CplxSpectralPool1d": "resizes by a Fourier transform; kept opaque",
    "CplxSpectralPool2d": "kept opaque, as the 1d one",
    "CplxSpectralPool3d": "kept opaque, as the 1d one",
    "CplxRNN": "recurrent: its projections feed gates, not a next layer",
    "CplxGRU": "recurrent",
    "CplxLSTM": "recurrent",
    "CplxRNNCell": "recurrent",
    "CplxGRUCell": "recurrent",
    "CplxLSTMCell": "recurrent",
    "CplxUnitaryRNN": "recurrent",
    "CplxUnitaryRNNCell": "recurrent",
    "CplxMultiheadAttention": "mixes positions and features",
    "CplxScaledDotProductAttention": "mixes positions and features",
    "CplxTransformer": "mixes positions and features",
    "CplxTransformerEncoder": "mixes positions and features",
    "CplxTransformerDecoder": "mixes positions and features",
    "CplxTransformerEncoderLayer": "mixes positions and features",
    "CplxTransformerDecoderLayer": "mixes positions and features",
    "CplxS4D": "mixes positions (a causal convolution) and, with a projection, features",
    "CplxSinusoidalPositionalEncoding": "adds a table over positions and features",
    "CplxRotaryPositionalEncoding": "rotates pairs of features by position",
    "CplxPolar": "its maps may do anything, e.g. mix channels",
    "CplxMagMinMaxNorm": "normalises by the extremes across elements: channels mix",
    "CplxECA1d": "each channel's gate reads its neighbouring channels",
    "CplxECA2d": "each channel's gate reads its neighbouring channels",
    "CplxECA3d": "each channel's gate reads its neighbouring channels",
}


def _public_cplx_layers():
    return {
        name: obj for name in cplxmodule.nn.__all__
        if inspect.isclass(obj := getattr(cplxmodule.nn, name)) and issubclass(obj, CplxToCplx)
    }


def test_every_public_complex_layer_declares_a_kind_or_is_opaque_for_a_reason():
    undeclared = sorted(
        name for name, cls in _public_cplx_layers().items()
        if not _kinds.kinds_of(cls) and name not in OPAQUE
    )
    assert not undeclared, f"declare compact= in the class statements of {undeclared}"


def _declared():
    for name, cls in sorted(_public_cplx_layers().items()):
        for kind in _kinds.kinds_of(cls):
            yield pytest.param(cls, kind, id=f"{name}-{type(kind).__name__}")


def _build(cls, kind):
    if isinstance(kind, _kinds.Channelwise):
        if kind.count == "num_parameters":
            # PReLU's way: learnable values, one per channel, each its own
            module = cls(learnable=True, num_parameters=6)
            with torch.no_grad():
                for value in module.parameters():
                    value.copy_(torch.linspace(0.2, 1.2, 6))
            return module
        return cls(6) if kind.count != "num_channels" else cls(num_channels=6)
    if isinstance(kind, _kinds.Pooling):
        name = cls.__name__
        return cls(2) if "Adaptive" not in name else cls(2 if kind.spatial else 1)
    return cls()


def _input(cls, kind, generator):
    # a channel dropout of n dimensions takes (N, C, *n)
    n = re.search(r"(\d)d$", cls.__name__)
    spatial = getattr(kind, "spatial", None) or (int(n.group(1)) if n else 1)
    shape = (3, 6) + (4,) * spatial
    parts = torch.randn(2, *shape, generator=generator, dtype=torch.float64)
    return Cplx(parts[0], parts[1])


@pytest.mark.parametrize("cls, kind", list(_declared()))
def test_a_declared_kind_holds(cls, kind):
    generator = torch.Generator().manual_seed(0)
    module = _build(cls, kind).double()
    if isinstance(kind, _kinds.Channelwise):
        # statistics of some batches, so that eval mode differs per channel
        module.train()
        for _ in range(3):
            module(_input(cls, kind, generator))
    module.eval()
    x = _input(cls, kind, generator)
    with torch.no_grad():
        output = module(x)
        if isinstance(kind, _kinds.Elementwise):
            perm = torch.randperm(x.real.numel(), generator=generator)
            shuffled = Cplx(*(part.flatten()[perm].view_as(part) for part in (x.real, x.imag)))
            permuted = module(shuffled)
            torch.testing.assert_close(permuted.real.flatten(), output.real.flatten()[perm])
            torch.testing.assert_close(permuted.imag.flatten(), output.imag.flatten()[perm])
            if kind.identity_in_eval:
                torch.testing.assert_close(output.real, x.real)
            return
        index = torch.tensor([0, 2, 5])
        if isinstance(kind, _kinds.Flattening):
            # channel c becomes the features c * S ... (c + 1) * S - 1
            part = module(Cplx(x.real[:, index], x.imag[:, index]))
            blocks = output.real.view(len(x), x.shape[1], -1)[:, index].flatten(1)
            torch.testing.assert_close(part.real, blocks)
            return
        if isinstance(kind, _kinds.Channelwise):
            module = copy.deepcopy(module)
            kind.slice(module, index)
            assert kind.channels(module) == len(index)
        part = module(Cplx(x.real[:, index], x.imag[:, index]))
        torch.testing.assert_close(part.real, output.real[:, index])
        torch.testing.assert_close(part.imag, output.imag[:, index])
