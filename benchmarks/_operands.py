"""Operands and losses that the benchmarks against torch's native complex64 share."""

import torch

import cplxmodule.cplx as cplx


def separate_parts(native, requires_grad=True):
    """``native`` as a :class:`~cplxmodule.cplx.Cplx` of two separate contiguous parts.

    As a model holds its tensors and a split layer returns them: the next
    product cannot take them back as one complex buffer without a copy.
    """
    z = cplx.from_complex(native)
    return cplx.Cplx(z.real.contiguous().requires_grad_(requires_grad),
                     z.imag.contiguous().requires_grad_(requires_grad))


def parts_sum(out):
    """A scalar of ``out`` (real, complex or :class:`~cplxmodule.cplx.Cplx`) to call ``backward`` on."""
    if isinstance(out, torch.Tensor) and not out.is_complex():
        return out.sum()
    return out.real.sum() + out.imag.sum()
