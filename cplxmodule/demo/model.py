"""A small convolutional classifier of baseband bursts, complex or real.

The complex network reads the burst as one complex channel; its real twin
reads the in-phase and quadrature parts as two real channels, and has
:math:`\\sqrt{2}` times as many channels in every layer, so that both have
about the same number of real parameters.
"""

import math
from typing import Callable

import torch

from ..cplx import Cplx
from ..nn import CplxConv1d, CplxMaxPool1d, CplxSequential, CplxToCplx

__all__ = ["ModulationNet", "as_input"]


class ModulationNet(torch.nn.Module):
    r"""Convolutional classifier of bursts: complex (default) or real.

    Three convolutions (the first with stride 2, the others followed by
    max-pooling), a pointwise convolution, the modulus (complex) or ReLU
    (real), the mean over time, and a real linear read-out. The complex
    network uses the split ReLU ``CplxToCplx[torch.nn.ReLU]``.

    Parameters
    ----------
    n_classes : int
        Number of outputs (logits).
    width : int, default 16
        Channels of the first convolution of the complex network; the next
        ones have ``2 * width``, the pointwise one ``4 * width``. The real
        network multiplies each by :math:`\sqrt{2}` (rounded).
    complex : bool, default True
        Build the complex network; ``False`` builds its real twin.
    device, dtype : optional
        Factory kwargs.

    Examples
    --------
    >>> from cplxmodule import cplx
    >>> net = ModulationNet(6, width=4)
    >>> net(cplx.randn(3, 1, 32)).shape
    torch.Size([3, 6])
    >>> real = ModulationNet(6, width=4, complex=False)
    >>> real(torch.randn(3, 2, 32)).shape
    torch.Size([3, 6])
    """

    def __init__(self, n_classes, width=16, complex=True, device=None, dtype=None):
        super().__init__()
        self.complex = complex
        kw = dict(device=device, dtype=dtype)
        widths = [width, 2 * width, 2 * width, 4 * width]
        conv: Callable[..., torch.nn.Module]
        relu: Callable[..., torch.nn.Module]
        pool: Callable[..., torch.nn.Module]
        seq: Callable[..., torch.nn.Module]
        if complex:
            # CplxToCplx[...] makes its class at run time: mypy cannot index a class that is not generic
            relu = CplxToCplx[torch.nn.ReLU]  # type: ignore[misc]
            conv, pool, seq, c_in = CplxConv1d, CplxMaxPool1d, CplxSequential, 1
        else:
            widths = [round(math.sqrt(2) * w) for w in widths]
            conv, relu, pool, seq, c_in = torch.nn.Conv1d, torch.nn.ReLU, torch.nn.MaxPool1d, torch.nn.Sequential, 2
        w1, w2, w3, w4 = widths
        self.features = seq(
            conv(c_in, w1, 7, stride=2, padding=3, **kw), relu(),
            conv(w1, w2, 5, padding=2, **kw), relu(), pool(2),
            conv(w2, w3, 5, padding=2, **kw), relu(), pool(2),
            conv(w3, w4, 1, **kw),
        )
        self.classifier = torch.nn.Linear(w4, n_classes, **kw)

    def forward(self, input):
        features = self.features(input)
        features = abs(features) if self.complex else torch.relu(features)
        return self.classifier(features.mean(dim=-1))

    def extra_repr(self):
        return "" if self.complex else "complex=False"


def as_input(signal, complex=True):
    """Bursts as a model input: one complex channel, or two real ones.

    Parameters
    ----------
    signal : numpy.ndarray
        Complex bursts of shape ``(n, length)``, e.g.
        :attr:`~cplxmodule.demo.data.Signals.signal`.
    complex : bool, default True
        ``Cplx`` of shape ``(n, 1, length)``; ``False`` gives a real tensor
        of shape ``(n, 2, length)``, the in-phase part in channel 0.

    Returns
    -------
    Cplx or torch.Tensor

    Examples
    --------
    >>> import numpy as np
    >>> as_input(np.array([[1 + 2j, 3j]])).imag
    tensor([[[2., 3.]]])
    >>> as_input(np.array([[1 + 2j, 3j]]), complex=False)
    tensor([[[1., 0.],
             [2., 3.]]])
    """
    samples = torch.from_numpy(signal).unsqueeze(1)
    real, imag = samples.real.float().contiguous(), samples.imag.float().contiguous()
    return Cplx(real, imag) if complex else torch.cat([real, imag], dim=1)
