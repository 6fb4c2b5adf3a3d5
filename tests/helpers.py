"""Helpers shared by the test modules: one definition each (test modules do not import each other)."""

import torch

from cplxmodule import Cplx


class Duck:
    """A user's own complex type: nothing but tensor attributes ``.real`` and ``.imag``."""

    def __init__(self, real, imag):
        self.real, self.imag = real, imag


def as_native(value):
    """``value`` in torch's complex dtype if it is a :class:`Cplx`, else unchanged."""
    if isinstance(value, Cplx):
        return torch.complex(value.real, value.imag)
    return value


def flat_outputs(output):
    """The tensors of an output (Cplx as torch's complex dtype; tuples, lists and dicts flattened)."""
    if isinstance(output, Cplx):
        return [as_native(output)]
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, dict):
        return [t for value in output.values() for t in flat_outputs(value)]
    if isinstance(output, (tuple, list)):
        return [t for value in output for t in flat_outputs(value)]
    if output is None:
        return []
    raise TypeError(f"unexpected output {type(output).__name__}")


def weighted_sum(output, generator):
    """A real scalar that depends on every floating value of ``output``, with random weights.

    Weights drawn from ``generator``, in order: the same generator state
    gives the same scalar function for outputs of the same structure.
    """
    total = 0.0
    for tensor in flat_outputs(output):
        if not (tensor.is_floating_point() or tensor.is_complex()):
            continue
        parts = (tensor.real, tensor.imag) if tensor.is_complex() else (tensor,)
        for part in parts:
            weights = torch.randn(part.shape, generator=generator, dtype=torch.float64)
            total = total + (part.to(torch.float64) * weights).sum()
    return torch.as_tensor(total)
