"""Running complex models under :class:`torch.nn.DataParallel`."""

from __future__ import annotations

import collections

import torch

from ..cplx import Cplx
from typing import Optional, Sequence, Union

__all__ = ["CplxDataParallel"]

# How a Cplx travels through torch's scatter and gather, which split and
# join tensors inside tuples, lists, dicts and namedtuples only. A private
# type, so that no user namedtuple is mistaken for a complex value.
_CplxParts = collections.namedtuple("_CplxParts", ["real", "imag"])


def _to_parts(obj):
    """``obj`` with every :class:`Cplx` in it replaced by its two parts."""
    if isinstance(obj, Cplx):
        return _CplxParts(obj.real, obj.imag)
    return _map_containers(obj, _to_parts)


def _from_parts(obj):
    """Inverse of :func:`_to_parts`."""
    if isinstance(obj, _CplxParts):
        return Cplx(obj.real, obj.imag)
    return _map_containers(obj, _from_parts)


def _map_containers(obj, fn):
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*map(fn, obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(map(fn, obj))
    if isinstance(obj, dict):
        return type(obj)((key, fn(value)) for key, value in obj.items())
    return obj


class CplxDataParallel(torch.nn.DataParallel):
    r"""DataParallel that also splits and joins :class:`Cplx` inputs and outputs.

    :class:`torch.nn.DataParallel` scatters tensors, and tensors inside
    tuples, lists, dicts and namedtuples, along ``dim``; any other object,
    a :class:`Cplx` included, is handed *whole* to every replica, so each
    replica would process the entire batch on the wrong device. This
    subclass splits every :class:`Cplx` (at any depth of those containers)
    into its real and imaginary parts before torch's scatter, which then
    splits both parts alike, reassembles a :class:`Cplx` on each replica, and
    does the same for the outputs before and after torch's gather, so a
    complex model's outputs come back as one :class:`Cplx` on
    ``output_device``.

    Parameters are those of :class:`torch.nn.DataParallel`.

    Notes
    -----
    Masked layers (:mod:`cplxmodule.nn.masked`) keep their masks on each
    replica's device: see :class:`~cplxmodule.nn.masked.BaseMasked`.
    :class:`torch.nn.parallel.DistributedDataParallel` needs no such
    wrapper, since each process feeds its own inputs to its own model.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn import CplxLinear
    >>> model = CplxDataParallel(CplxLinear(4, 2))
    >>> model(cplx.randn(8, 4)).shape  # one replica per visible GPU
    torch.Size([8, 2])
    """

    def __init__(
        self,
        module: torch.nn.Module,
        device_ids: Optional[Sequence[Union[int, torch.device]]] = None,
        output_device: Optional[Union[int, torch.device]] = None,
        dim: int = 0,
    ) -> None:
        super().__init__(module, device_ids, output_device, dim)
        # torch leaves ``dim`` unset when no accelerator is present
        self.dim = dim

    def scatter(self, inputs, kwargs, device_ids):
        inputs, kwargs = super().scatter(_to_parts(inputs), _to_parts(kwargs), device_ids)
        return _from_parts(inputs), _from_parts(kwargs)

    def gather(self, outputs, output_device):
        return _from_parts(super().gather(_to_parts(outputs), output_device))
