"""Inference linear layers with a CSR weight, made by :func:`~cplxmodule.nn.masked.compact`.

:class:`SparseLinear` (real) and :class:`CplxSparseLinear` (complex) keep
their weight as the three arrays of a compressed sparse row matrix, in
buffers, so they save, load, copy and move like any module. When the CSR
product pays off against the dense one is measured in
``benchmarks/test_bench_compact.py``; :doc:`/guides/deploying` gives the
figures.
"""

from __future__ import annotations

import warnings

import torch

from ...cplx import Cplx
from ...cplx._dtypes import autocast_dtype
from ...cplx._shared import check_features, checked_real, describe
from ..modules.linear import _check_features
from typing import Optional
from ...cplx._typing import CplxLike

__all__ = ["SparseLinear", "CplxSparseLinear"]

_BETA_SILENCED = False


def _silence_beta_warning():
    """Keep torch's "Sparse CSR tensor support is in beta" warning from the user.

    torch issues it once per process, at the first CSR tensor built: building
    a first one here, with the warning ignored, uses that one time up. The
    user's own sparse tensors would have met the same warning at most once.
    """
    global _BETA_SILENCED
    if not _BETA_SILENCED:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
            one = torch.ones(1, dtype=torch.int64)
            torch.sparse_csr_tensor(torch.tensor([0, 1]), one - 1, one, (1, 1), check_invariants=True)
        _BETA_SILENCED = True


class _CSRLinear(torch.nn.Module):
    """What the CSR linear layers share: the matrix assembly, the product and the repr."""

    # the CSR arrays, registered buffers, and the sizes of the matrix
    crow_indices: torch.Tensor
    col_indices: torch.Tensor
    out_features: int
    in_features: int

    def _csr(self, values):
        _silence_beta_warning()
        # assembling the matrix from its arrays costs microseconds, and keeps
        # the module free of sparse tensors, which deepcopy cannot copy
        return torch.sparse_csr_tensor(
            self.crow_indices,
            self.col_indices,
            values,
            (self.out_features, self.in_features),
            check_invariants=False,
        )

    def _product(self, values, flat):
        """``flat @ W.T`` for the weight ``W`` holding ``values``; ``flat`` is 2d.

        Traced (ONNX export, :func:`torch.compile`, :func:`torch.export.export`),
        where sparse tensors cannot be built, the same product is gathered
        and scattered: each stored entry multiplies its input column, and
        ``scatter_add`` sums the terms of each output row, which ONNX
        expresses (``ScatterElements`` with ``reduction="add"``).
        """
        if not (torch.onnx.is_in_onnx_export() or torch.compiler.is_compiling()):
            if autocast_dtype(flat) is None:
                return torch.sparse.mm(self._csr(values), flat.T).T
            # autocast would cast the product to half precision, which the
            # CPU's sparse kernels lack: it runs in the values' dtype, as
            # the ops on autocast's float32 list
            with torch.autocast(flat.device.type, enabled=False):
                return torch.sparse.mm(self._csr(values), flat.to(values.dtype).T).T
        nnz = self.col_indices.numel()
        # the row of each stored entry: one step up at every row start (by
        # ops every exporter knows, where ``repeat_interleave`` is not)
        starts = self.crow_indices[1:-1]
        steps = starts.new_zeros(nnz + 1).scatter_add(0, starts, torch.ones_like(starts))
        rows = steps.cumsum(0)[:nnz]
        terms = flat.index_select(1, self.col_indices) * values
        output = flat.new_zeros(flat.shape[0], self.out_features)
        return output.scatter_add(1, rows.expand(flat.shape[0], nnz), terms)

    def extra_repr(self):
        bias = getattr(self, "bias", getattr(self, "bias_real", None)) is not None
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"nnz={self.col_indices.numel()}, bias={bias}"
        )


class SparseLinear(_CSRLinear):
    r"""Inference linear layer :math:`y = x W^T + b` with a CSR weight.

    The weight is kept as the three arrays of a compressed sparse row matrix
    (buffers ``crow_indices``, ``col_indices``, ``values``), so the layer
    saves, loads, copies and moves like any module; the product runs through
    :func:`torch.sparse.mm`. Made by :func:`compact`; it has no parameters
    to train. It exports to ONNX and compiles: traced, it gathers and
    scatters the stored entries instead (see ``_product``), exact but
    slower than the CSR product.

    Parameters
    ----------
    weight : torch.Tensor
        Dense real weight ``(out_features, in_features)``; its nonzeros are kept.
    bias : torch.Tensor, optional
        Bias ``(out_features,)``.

    Shape
    -----
    - Input: ``(*, in_features)``.
    - Output: ``(*, out_features)``.

    Examples
    --------
    >>> weight = torch.tensor([[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]])
    >>> layer = SparseLinear(weight, torch.ones(3))
    >>> layer(torch.tensor([[1.0, 1.0]]))
    tensor([[3., 1., 2.]])
    """

    def __init__(self, weight: torch.Tensor, bias: Optional[torch.Tensor] = None) -> None:
        super().__init__()
        self.out_features, self.in_features = weight.shape
        _register_csr(self, weight != 0, values=weight)
        self.register_buffer("bias", None if bias is None else bias.detach().clone())

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        _check_real_features(self, input)
        output = self._product(self.values, _as_rows(input))
        if self.bias is not None:
            output = output + self.bias
        return _from_rows(output, input)


class CplxSparseLinear(_CSRLinear):
    r"""Inference complex linear layer :math:`y = x W^T + b` with a CSR weight.

    The two real parts of the weight share one sparsity pattern (buffers
    ``crow_indices``, ``col_indices``) and have their own values
    (``values_real``, ``values_imag``). Each part multiplies the real and
    imaginary parts of the input at once, stacked: two sparse products per
    call (traced for an export, gathered and scattered as in
    :class:`SparseLinear`). How this compares with torch's complex CSR
    product and with the dense product, by batch size and sparsity, is
    measured in ``benchmarks/test_bench_compact.py``; see
    :doc:`/guides/deploying`. Made by :func:`compact`.

    Parameters
    ----------
    weight : Cplx
        Dense complex weight ``(out_features, in_features)``.
    mask : torch.Tensor, optional
        Which entries to keep (default: where either part is nonzero).
    bias : Cplx, optional
        Bias ``(out_features,)``.

    Shape
    -----
    - Input: :class:`~cplxmodule.cplx.Cplx`, ``(*, in_features)``.
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(*, out_features)``.

    Examples
    --------
    >>> weight = Cplx(torch.tensor([[0.0, 2.0]]), torch.tensor([[1.0, 0.0]]))
    >>> layer = CplxSparseLinear(weight)
    >>> layer(Cplx(torch.tensor([[1.0, 1.0]])))
    Cplx(
      real=tensor([[2.]]),
      imag=tensor([[1.]])
    )
    """

    def __init__(
        self,
        weight: CplxLike,
        mask: Optional[torch.Tensor] = None,
        bias: Optional[CplxLike] = None,
    ) -> None:
        super().__init__()
        self.out_features, self.in_features = weight.real.shape
        if mask is None:
            mask = (weight.real != 0) | (weight.imag != 0)
        _register_csr(self, mask.bool(), values_real=weight.real, values_imag=weight.imag)
        if bias is None:
            self.register_buffer("bias_real", None)
            self.register_buffer("bias_imag", None)
        else:
            self.register_buffer("bias_real", bias.real.detach().clone())
            self.register_buffer("bias_imag", bias.imag.detach().clone())

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_features(self, input, self.in_features)
        real = _as_rows(input.real)
        rows = real.shape[0]
        # the input's parts one above the other: (2 * rows, in_features)
        both = torch.cat([real, _as_rows(input.imag)])
        by_real = self._product(self.values_real, both)
        by_imag = self._product(self.values_imag, both)
        real = by_real[:rows] - by_imag[rows:]
        imag = by_real[rows:] + by_imag[:rows]
        if self.bias_real is not None:
            real = real + self.bias_real
            imag = imag + self.bias_imag
        return Cplx(_from_rows(real, input.real), _from_rows(imag, input.real))


def _check_real_features(layer, input):
    """Raise unless ``input`` is a floating point tensor of shape ``(..., in_features)``."""
    where = layer._get_name()
    checked_real(input, where=where)
    if not input.is_floating_point():
        raise TypeError(f"{where}: `input` must be a floating point tensor, got {describe(input)}")
    check_features(input, layer.in_features, "input", where)


def _as_rows(input):
    """``input`` ``(*, in_features)`` as a matrix, one row per sample.

    By ops that keep the batch size a traced size, never a Python int
    (``input.shape[:-1].numel()`` would bake the export's batch into an
    exported graph), and not by ``reshape(-1, in_features)``, which cannot
    place the rows of an input of no features.
    """
    if input.dim() == 2:
        return input
    return input.unsqueeze(0) if input.dim() == 1 else input.flatten(0, -2)


def _from_rows(output, input):
    """The rows ``output`` of :func:`_as_rows` ``(input)`` in the shape of ``input``."""
    if input.dim() == 2:
        return output
    if input.dim() == 1:
        return output.squeeze(0)
    return output.view(*input.shape[:-1], output.shape[-1])


def _register_csr(layer, keep, **values):
    """Register the CSR pattern of the boolean ``keep`` and the kept ``values``."""
    keep = keep.detach()
    crow = torch.cat([keep.new_zeros(1, dtype=torch.int64), keep.sum(1).cumsum(0)])
    layer.register_buffer("crow_indices", crow)
    # row-major order, as the values of ``dense[keep]``
    layer.register_buffer("col_indices", keep.nonzero()[:, 1].clone())
    for name, dense in values.items():
        layer.register_buffer(name, dense.detach()[keep].clone())
