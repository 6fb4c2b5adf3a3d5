"""Elementwise complex functions on :class:`~cplxmodule.cplx.Cplx`."""

import torch

from .tensor import Cplx

__all__ = [
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "modrelu",
    "phaseshift",
]


def exp(input):
    r"""The complex exponential :math:`e^{a}(\cos b + i \sin b)` of :math:`a + ib`."""
    scale = torch.exp(input.real)
    return Cplx(scale * torch.cos(input.imag), scale * torch.sin(input.imag))


def log(input):
    r"""The principal logarithm :math:`\log|z| + i \arg z`."""
    return Cplx(torch.log(abs(input)), input.angle)


def sin(input):
    r"""The complex sine :math:`\sin a \cosh b + i \cos a \sinh b`."""
    re, im = input.real, input.imag
    return Cplx(torch.sin(re) * torch.cosh(im), torch.cos(re) * torch.sinh(im))


def cos(input):
    r"""The complex cosine :math:`\cos a \cosh b - i \sin a \sinh b`."""
    re, im = input.real, input.imag
    return Cplx(torch.cos(re) * torch.cosh(im), -torch.sin(re) * torch.sinh(im))


def tan(input):
    r"""The complex tangent :math:`\frac{\sin 2a + i \sinh 2b}{\cos 2a + \cosh 2b}`."""
    re, im = 2 * input.real, 2 * input.imag
    denom = torch.cos(re) + torch.cosh(im)
    return Cplx(torch.sin(re) / denom, torch.sinh(im) / denom)


def sinh(input):
    r"""The complex hyperbolic sine :math:`\sinh a \cos b + i \cosh a \sin b`."""
    re, im = input.real, input.imag
    return Cplx(torch.sinh(re) * torch.cos(im), torch.cosh(re) * torch.sin(im))


def cosh(input):
    r"""The complex hyperbolic cosine :math:`\cosh a \cos b + i \sinh a \sin b`."""
    re, im = input.real, input.imag
    return Cplx(torch.cosh(re) * torch.cos(im), torch.sinh(re) * torch.sin(im))


def tanh(input):
    r"""The complex hyperbolic tangent :math:`\frac{\sinh 2a + i \sin 2b}{\cosh 2a + \cos 2b}`."""
    re, im = 2 * input.real, 2 * input.imag
    denom = torch.cosh(re) + torch.cos(im)
    return Cplx(torch.sinh(re) / denom, torch.sin(im) / denom)


def modrelu(input, threshold=0.5):
    r"""The modulus ReLU of Arjovsky et al. (2016).

    .. math::

        \operatorname{modReLU}(z) = z \max\Bigl(0, 1 - \frac{b}{|z|}\Bigr),

    which shrinks the modulus by ``threshold`` :math:`b` and keeps the phase.
    The modulus is clamped below at ``1e-5`` so that the result and its
    gradient stay finite at zero.

    Parameters
    ----------
    input : Cplx
    threshold : float or torch.Tensor, default 0.5
        The shrinkage :math:`b`; a tensor broadcasts against ``input``.

    References
    ----------
    .. [1] M. Arjovsky, A. Shah, Y. Bengio, "Unitary evolution recurrent
       neural networks", ICML 2016.
    """
    modulus = torch.clamp(abs(input), min=1e-5)
    return input * torch.relu(1.0 - threshold / modulus)


def phaseshift(input, phi):
    r"""Rotate ``input`` by the angle ``phi``: :math:`z e^{i \phi}`.

    Parameters
    ----------
    input : Cplx
    phi : float or torch.Tensor
        The real angle (radians), broadcast against ``input``.
    """
    phi = torch.as_tensor(phi, dtype=input.dtype, device=input.device)
    return input * Cplx(torch.cos(phi), torch.sin(phi))
