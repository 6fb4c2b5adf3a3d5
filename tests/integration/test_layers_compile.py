"""Every layer of issue #16 under ``torch.compile(fullgraph=True)``.

The layers: the activations, the normalisations beside the whitening batch
norm, the pooling, resizing and flattening layers, the losses, the spectral
front ends and the filterbanks, each with settings off its defaults. The
reference is always the eager layer on the same input.

To keep this fast (the capture costs about a second per graph), all the
layers run side by side in one module, ``Zoo``, that takes the real parts
of every layer's inputs and returns the parts of every layer's output, so
that dynamo captures one graph of all of them: ``torch.compile(fullgraph=True)``
with the ``eager`` backend (dynamo's graph capture, where a graph break
fails; ``aot_eager`` doubles the time of this file and inductor costs
seconds per layer: the files of each family compile their layers with
``aot_eager``), in training mode: every layer's output and input gradients
against eager. Their export (``torch.export`` and both ONNX exporters) is
tests/integration/test_layer_table_export.py, over every layer of the table.

A failure names the layer (the assertion message, or the source line in
the capture's error).
"""

import pytest
import torch

from cplxmodule import nn
from cplxmodule.cplx import Cplx

from ..helpers import weighted_sum

C, R = "cplx", "real"

# id -> (factory, inputs as (kind, shape without the batch axis))
SPECS = {
    # activations
    "ModReLU": (lambda: nn.CplxModReLU(0.3), [(C, (3, 4))]),
    "AdaptiveModReLU": (lambda: nn.CplxAdaptiveModReLU(3, 4), [(C, (3, 4))]),
    "ZReLU": (nn.CplxZReLU, [(C, (3, 4))]),
    "Cardioid": (nn.CplxCardioid, [(C, (3, 4))]),
    "Modulus": (nn.CplxModulus, [(C, (3, 4))]),
    "Angle": (nn.CplxAngle, [(C, (3, 4))]),
    "SplitReLU": (nn.CplxSplitReLU, [(C, (3, 4))]),
    "SplitELU": (lambda: nn.CplxSplitELU(0.7), [(C, (3, 4))]),
    "SplitGELU": (lambda: nn.CplxSplitGELU("tanh"), [(C, (3, 4))]),
    "SplitTanh": (nn.CplxSplitTanh, [(C, (3, 4))]),
    "SplitSigmoid": (nn.CplxSplitSigmoid, [(C, (3, 4))]),
    "Tanh": (nn.CplxTanh, [(C, (3, 4))]),
    "Sigmoid": (nn.CplxSigmoid, [(C, (3, 4))]),
    "ModTanh": (nn.CplxModTanh, [(C, (3, 4))]),
    "ModSquash": (nn.CplxModSquash, [(C, (3, 4))]),
    "ModLog": (nn.CplxModLog, [(C, (3, 4))]),
    "ZAbsReLU": (lambda: nn.CplxZAbsReLU(0.8), [(C, (3, 4))]),
    "ZLeakyReLU": (lambda: nn.CplxZLeakyReLU(0.1), [(C, (3, 4))]),
    "ZAbsReLUPerChannel": (lambda: nn.CplxZAbsReLU(0.8, learnable=True, num_parameters=3),
                           [(C, (3, 4))]),
    "ZLeakyReLUPerChannel": (lambda: nn.CplxZLeakyReLU(0.1, learnable=True, num_parameters=3),
                             [(C, (3, 4))]),
    "ChannelModReLU": (lambda: nn.CplxChannelModReLU(3), [(C, (3, 4))]),
    "PhaseSoftmax": (lambda: nn.CplxPhaseSoftmax(-1), [(C, (3, 4))]),
    "MagSoftmax": (lambda: nn.CplxMagSoftmax(1), [(C, (3, 4))]),
    "RatioMask": (lambda: nn.CplxRatioMask(bounded=True), [(C, (3, 4)), (C, (3, 4))]),
    "RatioMaskUnbounded": (lambda: nn.CplxRatioMask(bounded=False), [(C, (3, 4)), (C, (3, 4))]),
    # normalisation
    "NaiveBatchNorm1d": (lambda: nn.CplxNaiveBatchNorm1d(3), [(C, (3, 5))]),
    "NaiveBatchNorm2d": (lambda: nn.CplxNaiveBatchNorm2d(3), [(C, (3, 2, 3))]),
    "NaiveBatchNorm3d": (lambda: nn.CplxNaiveBatchNorm3d(3), [(C, (3, 2, 2, 2))]),
    "MagnitudeBatchNorm1d": (lambda: nn.CplxMagnitudeBatchNorm1d(3), [(C, (3, 5))]),
    "MagnitudeBatchNorm2d": (lambda: nn.CplxMagnitudeBatchNorm2d(3), [(C, (3, 2, 3))]),
    "MagnitudeBatchNorm3d": (lambda: nn.CplxMagnitudeBatchNorm3d(3), [(C, (3, 2, 2, 2))]),
    "LayerNorm": (lambda: nn.CplxLayerNorm((3, 4)), [(C, (3, 4))]),
    "GroupNorm": (lambda: nn.CplxGroupNorm(2, 4), [(C, (4, 5))]),
    "InstanceNorm1d": (
        lambda: nn.CplxInstanceNorm1d(3, affine=True, track_running_stats=True), [(C, (3, 5))]
    ),
    "InstanceNorm2d": (lambda: nn.CplxInstanceNorm2d(3, affine=True), [(C, (3, 2, 3))]),
    "InstanceNorm3d": (lambda: nn.CplxInstanceNorm3d(3), [(C, (3, 2, 2, 2))]),
    "RMSNorm": (lambda: nn.CplxRMSNorm(4), [(C, (3, 4))]),
    # pooling, resizing, flattening
    "MaxPool1d": (lambda: nn.CplxMaxPool1d(2), [(C, (3, 6))]),
    "MaxPool2d": (lambda: nn.CplxMaxPool2d(2, padding=1), [(C, (3, 4, 5))]),
    "MaxPool3d": (lambda: nn.CplxMaxPool3d(2), [(C, (2, 4, 4, 4))]),
    "AdaptiveMaxPool1d": (lambda: nn.CplxAdaptiveMaxPool1d(3), [(C, (3, 6))]),
    "AdaptiveMaxPool2d": (lambda: nn.CplxAdaptiveMaxPool2d((2, 3)), [(C, (3, 4, 6))]),
    "AdaptiveMaxPool3d": (lambda: nn.CplxAdaptiveMaxPool3d(2), [(C, (2, 4, 4, 4))]),
    "AvgPool1d": (lambda: nn.CplxAvgPool1d(3, stride=2, padding=1), [(C, (3, 7))]),
    "AvgPool2d": (lambda: nn.CplxAvgPool2d(2), [(C, (3, 4, 4))]),
    "AvgPool3d": (lambda: nn.CplxAvgPool3d(2), [(C, (2, 4, 4, 4))]),
    "AdaptiveAvgPool1d": (lambda: nn.CplxAdaptiveAvgPool1d(2), [(C, (3, 6))]),
    "AdaptiveAvgPool2d": (lambda: nn.CplxAdaptiveAvgPool2d((2, 2)), [(C, (3, 4, 6))]),
    "AdaptiveAvgPool3d": (lambda: nn.CplxAdaptiveAvgPool3d(2), [(C, (2, 4, 4, 4))]),
    "Upsample": (lambda: nn.CplxUpsample(scale_factor=2), [(C, (3, 4))]),
    "UpsamplePolar": (
        lambda: nn.CplxUpsample(scale_factor=2, mode="bilinear", polar=True), [(C, (2, 3, 3))]
    ),
    "Flatten": (nn.CplxFlatten, [(C, (3, 2, 2))]),
    "Unflatten": (lambda: nn.CplxUnflatten(1, (2, 3)), [(C, (6, 2))]),
    # losses
    "MSELoss": (nn.CplxMSELoss, [(C, (3, 4)), (C, (3, 4))]),
    "L1Loss": (nn.CplxL1Loss, [(C, (3, 4)), (C, (3, 4))]),
    "L1LossSplit": (lambda: nn.CplxL1Loss(split=True), [(C, (3, 4)), (C, (3, 4))]),
    "CauchyLoss": (lambda: nn.CplxCauchyLoss(c=0.5), [(C, (3, 4)), (C, (3, 4))]),
    "LogCoshLoss": (nn.CplxLogCoshLoss, [(C, (3, 4)), (C, (3, 4))]),
    "LogErrorLoss": (nn.CplxLogErrorLoss, [(C, (3, 4)), (C, (3, 4))]),
    "PhaseAwareLoss": (
        lambda: nn.CplxPhaseAwareLoss(phase_weight=0.5, reduction="sum"),
        [(C, (3, 4)), (C, (3, 4))],
    ),
    "SSIMLoss": (lambda: nn.CplxSSIMLoss(window_size=3), [(C, (1, 6, 6)), (C, (1, 6, 6))]),
    "FourthPowerLoss": (nn.CplxFourthPowerLoss, [(C, (3, 4)), (C, (3, 4))]),
    "AnalyticSignalLoss": (nn.CplxAnalyticSignalLoss, [(C, (3, 8))]),
    "SISDRLoss": (lambda: nn.CplxSISDRLoss(zero_mean=True), [(C, (3, 8)), (C, (3, 8))]),
    # spectral front ends and filterbanks
    "FFT": (lambda: nn.CplxFFT(norm="ortho"), [(C, (3, 8))]),
    "IFFT": (lambda: nn.CplxIFFT(dim=1, n=4), [(C, (3, 8))]),
    "STFT": (lambda: nn.CplxSTFT(8, hop_length=2, learnable_window=True), [(C, (16,))]),
    "ISTFT": (lambda: nn.CplxISTFT(8, hop_length=2), [(C, (8, 9))]),
    "FFTShift": (lambda: nn.CplxFFTShift(dim=(-2, -1)), [(C, (3, 4, 5))]),
    "IFFTShift": (lambda: nn.CplxIFFTShift(dim=(-2, -1)), [(C, (3, 4, 5))]),
    "Analytic": (nn.CplxAnalytic, [(R, (3, 8))]),
    "GaborConv1d": (lambda: nn.CplxGaborConv1d(2, 3, 5, padding=2), [(C, (2, 8))]),
    "MorletConv1d": (lambda: nn.CplxMorletConv1d(1, 3, 5, stride=2), [(C, (1, 9))]),
    "SpectralPool1d": (lambda: nn.CplxSpectralPool1d(3), [(C, (2, 6))]),
    "SpectralPool2d": (lambda: nn.CplxSpectralPool2d((2, 3)), [(C, (2, 4, 5))]),
    "SpectralPool3d": (lambda: nn.CplxSpectralPool3d(2), [(C, (1, 3, 3, 4))]),
}

# the classes of the modules of #16 that the table covers, each by at least one id
COVERED_MODULES = (
    "activation", "normalization", "pooling", "upsampling", "flatten", "loss",
    "spectral", "filterbank",
)


def inputs(names, batch, requires_grad=False):
    """The real parts of the inputs of the layers ``names``, in order."""
    generator = torch.Generator().manual_seed(batch)
    flat = []
    for name in names:
        for kind, shape in SPECS[name][1]:
            for _ in range(2 if kind == C else 1):
                flat.append(torch.randn(batch, *shape, generator=generator))
    return [t.requires_grad_(requires_grad) for t in flat]


def make(name):
    torch.manual_seed(0)
    layer = SPECS[name][0]()
    # parameters and running statistics away from their initial values
    with torch.no_grad():
        for p in layer.parameters():
            p.add_(0.1 * torch.randn_like(p))
        for b in layer.buffers():
            if b.is_floating_point():
                b.add_(0.05 * torch.rand_like(b))
    return layer


def parts(output):
    return (output.real, output.imag) if isinstance(output, Cplx) else (output,)


class Zoo(torch.nn.Module):
    """The layers ``names`` side by side, as a map of real tensors: the parts of
    every layer's inputs in, the parts of every layer's output out."""

    def __init__(self, names):
        super().__init__()
        self.names = list(names)
        self.layers = torch.nn.ModuleDict({name: make(name) for name in self.names})

    def forward(self, *tensors):
        tensors, outputs = list(tensors), []
        for name in self.names:
            xs = []
            for kind, _ in SPECS[name][1]:
                xs.append(Cplx(tensors.pop(0), tensors.pop(0)) if kind == C else tensors.pop(0))
            outputs.extend(parts(self.layers[name](*xs)))
        return tuple(outputs)

    def labels(self):
        """The layer of each output, in order."""
        eager = self(*inputs(self.names, 2))
        labels = []
        for name in self.names:
            xs = inputs([name], 2)
            n = len(parts(self.layers[name](*[
                Cplx(xs.pop(0), xs.pop(0)) if kind == C else xs.pop(0)
                for kind, _ in SPECS[name][1]
            ])))
            labels.extend([name] * n)
        assert len(labels) == len(eager)
        return labels


def assert_outputs_close(actual, expected, labels, rtol=1e-5, atol=1e-5):
    assert len(actual) == len(expected) == len(labels)
    for a, e, label in zip(actual, expected, labels):
        torch.testing.assert_close(a, e, rtol=rtol, atol=atol, msg=lambda m: f"{label}: {m}")


def test_every_layer_of_the_issue_is_covered():
    from cplxmodule.nn import modules

    covered = {type(SPECS[name][0]()) for name in SPECS}
    for module in COVERED_MODULES:
        public = {getattr(getattr(modules, module), n) for n in getattr(modules, module).__all__}
        layers = {c for c in public if isinstance(c, type) and issubclass(c, torch.nn.Module)}
        bases = {nn.CplxMaxPoolNd}
        assert layers - bases <= covered, sorted(c.__name__ for c in layers - bases - covered)


@pytest.mark.slow
@pytest.mark.inductor
def test_compile_fullgraph_matches_eager():
    torch._dynamo.reset()
    eager, compiled = Zoo(SPECS), Zoo(SPECS)
    labels = eager.labels()
    xs, ys = inputs(SPECS, 3, requires_grad=True), inputs(SPECS, 3, requires_grad=True)
    expected = eager(*xs)
    actual = torch.compile(compiled, fullgraph=True, backend="eager")(*ys)
    assert_outputs_close(actual, expected, labels)
    # one random linear functional of both outputs, so that no gradient cancels
    weighted_sum(expected, torch.Generator().manual_seed(0)).backward()
    weighted_sum(actual, torch.Generator().manual_seed(0)).backward()
    # the gradients of the inputs, layer by layer
    input_labels = [name for name in SPECS for kind, _ in SPECS[name][1]
                    for _ in range(2 if kind == C else 1)]
    assert_outputs_close([y.grad for y in ys], [x.grad for x in xs], input_labels)
