"""Layers refuse inputs outside their documented shapes, naming the layer and the argument.

Each row: a layer, a call that is wrong, the exception and the words its
message must hold (the layer's name first: never the functional's, nor
torch's own message).
"""

import pytest
import torch

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.nn import relevance

pytestmark = pytest.mark.usefixtures("one_thread")

z = cplx.randn

# (id, call, exception, words of the message)
CASES = [
    ("sinusoidal-4d", lambda: cnn.CplxSinusoidalPositionalEncoding(8)(z(2, 3, 4, 8)),
     ValueError, ["CplxSinusoidalPositionalEncoding:", "`input`", "(2, 3, 4, 8)"]),
    ("sinusoidal-4d-batch-first",
     lambda: cnn.CplxSinusoidalPositionalEncoding(8, batch_first=True)(z(2, 3, 4, 8)),
     ValueError, ["CplxSinusoidalPositionalEncoding:", "(N, L, E)", "(2, 3, 4, 8)"]),
    ("sinusoidal-1d", lambda: cnn.CplxSinusoidalPositionalEncoding(8)(z(8)),
     ValueError, ["CplxSinusoidalPositionalEncoding:", "`input`", "(8,)"]),
    ("sinusoidal-features", lambda: cnn.CplxSinusoidalPositionalEncoding(8)(z(3, 6)),
     ValueError, ["CplxSinusoidalPositionalEncoding:", "E = 8", "(3, 6)"]),
    ("sinusoidal-too-long",
     lambda: cnn.CplxSinusoidalPositionalEncoding(8, max_len=4)(z(3, 8), offset=2),
     ValueError, ["CplxSinusoidalPositionalEncoding:", "max_len=4", "offset 2"]),
    ("sinusoidal-float-offset",
     lambda: cnn.CplxSinusoidalPositionalEncoding(8)(z(3, 8), offset=1.0),
     TypeError, ["CplxSinusoidalPositionalEncoding:", "`offset`", "1.0"]),
    ("sinusoidal-real-input",
     lambda: cnn.CplxSinusoidalPositionalEncoding(8)(torch.randn(3, 8)),
     TypeError, ["CplxSinusoidalPositionalEncoding:", "`input`", "Cplx"]),
    ("rotary-negative-offset",
     lambda: cnn.CplxRotaryPositionalEncoding(8)(z(3, 8), offset=-1),
     ValueError, ["CplxRotaryPositionalEncoding:", "`offset`", "-1"]),
    ("phase-softmax-dim", lambda: cnn.CplxPhaseSoftmax(dim=2)(z(2, 3)),
     ValueError, ["CplxPhaseSoftmax:", "`dim`=2", "(2, 3)"]),
    ("mag-softmax-dim", lambda: cnn.CplxMagSoftmax(dim=-3)(z(2, 3)),
     ValueError, ["CplxMagSoftmax:", "`dim`=-3", "(2, 3)"]),
    ("adaptive-modrelu-shape", lambda: cnn.CplxAdaptiveModReLU(4)(z(2, 3)),
     ValueError, ["CplxAdaptiveModReLU:", "(4,)", "(2, 3)"]),
    ("adaptive-modrelu-rank", lambda: cnn.CplxAdaptiveModReLU(2, 3)(z(3)),
     ValueError, ["CplxAdaptiveModReLU:", "(2, 3)", "(3,)"]),
    ("adaptive-modrelu-size", lambda: cnn.CplxAdaptiveModReLU(0),
     ValueError, ["CplxAdaptiveModReLU:", "`dim`", "0"]),
    ("spectral-pool-too-large", lambda: cnn.CplxSpectralPool2d(8)(z(2, 3, 4, 4)),
     ValueError, ["CplxSpectralPool2d:", "`output_size`", "(8, 8)"]),
    ("spectral-pool-rank", lambda: cnn.CplxSpectralPool3d(2)(z(4, 4)),
     ValueError, ["CplxSpectralPool3d:", "`input`", "(4, 4)"]),
    ("ssim-small-image", lambda: cnn.CplxSSIMLoss()(z(1, 1, 4, 4), z(1, 1, 4, 4)),
     ValueError, ["CplxSSIMLoss:", "`window_size`=11", "(1, 1, 4, 4)"]),
    ("ssim-rank", lambda: cnn.CplxSSIMLoss(window_size=3)(z(4, 4), z(4, 4)),
     ValueError, ["CplxSSIMLoss:", "(N, C, H, W)", "(4, 4)"]),
    ("fft-dim", lambda: cnn.CplxFFT(dim=True),
     TypeError, ["CplxFFT:", "`dim`", "True"]),
    ("fft-norm", lambda: cnn.CplxFFT(norm="half"),
     ValueError, ["CplxFFT:", "`norm`", "'half'"]),
    ("stft-win-length", lambda: cnn.CplxSTFT(8, win_length=9),
     ValueError, ["CplxSTFT:", "`win_length`", "9"]),
    ("gabor-sample-rate", lambda: cnn.CplxGaborConv1d(1, 2, 5, sample_rate=float("inf")),
     ValueError, ["CplxGaborConv1d:", "`sample_rate`", "inf"]),
    ("s4d-d-state", lambda: cnn.CplxS4D(4, d_state=2.0),
     TypeError, ["CplxS4D:", "`d_state`", "2.0"]),
    ("s4d-init", lambda: cnn.CplxS4D(4, init="log"),
     ValueError, ["CplxS4D:", "`init`", "'log'"]),
    ("rnn-nonlinearity-type", lambda: cnn.CplxRNN(3, 4, nonlinearity=1),
     TypeError, ["CplxRNN:", "`nonlinearity`", "1"]),
    ("lstm-dtype", lambda: cnn.CplxLSTM(3, 4)(z(5, 2, 3, dtype=torch.float64)),
     TypeError, ["CplxLSTM:", "`input`", "torch.float64"]),
    ("unitary-dtype", lambda: cnn.CplxUnitaryRNNCell(3, 4)(z(2, 3, dtype=torch.float64)),
     TypeError, ["CplxUnitaryRNNCell:", "`input`", "torch.float64"]),
    ("modrelu-nan", lambda: cnn.CplxModReLU(float("nan")),
     ValueError, ["CplxModReLU:", "`threshold`", "nan"]),
    ("ard-threshold", lambda: relevance.CplxLinearARD(2, 2).relevance(threshold="3"),
     TypeError, ["CplxLinearARD:", "`threshold`", "'3'"]),
]


@pytest.mark.parametrize("call, error, words", [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_layer_refuses_with_its_own_name(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert message.startswith(words[0]), message
    for word in words[1:]:
        assert word in message, message
