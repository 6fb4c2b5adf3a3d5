"""Compact sparse inference: a masked model turned into a plain inference model.

A masked layer multiplies its dense weight by its mask at every call, so a
99 % sparse model runs as slowly as a dense one. :func:`compact` removes what
the masks zero instead: whole output features (rows of the mask) together
with the next layer's matching input features wherever a
:class:`torch.nn.Sequential` proves it safe, then stores each remaining linear
weight that is sparse enough as a CSR matrix (:class:`SparseLinear`,
:class:`CplxSparseLinear`) and every other one densely in the layer's dense
twin, with the mask multiplied in.

A layer takes part by a small protocol (``_weight_and_mask``): a
masked layer (:class:`~cplxmodule.nn.masked.BaseMasked`) gives its weight
and mask; a Bayesian layer (anything with a ``relevance(threshold=...)``
method, as the variational dropout and ARD layers have) gives its weight and
``relevance(threshold=threshold)``.
"""

import collections
import copy
import time
from typing import NamedTuple

import torch
import torch.nn.functional as F

from ... import cplx
from ...cplx import Cplx
from ..modules.activation import CplxCardioid, CplxModReLU, CplxZReLU
from ..modules.base import _RECIPES
from ..modules.dropout import CplxDropout
from ..modules.linear import CplxBilinear, CplxIdentity, CplxLinear, _check_features
from ..modules.native import _TWINS
from .base import BaseMasked

__all__ = ["compact", "compact_report", "CompactReport", "SparseLinear", "CplxSparseLinear"]

_BILINEAR = ("in1_features", "in2_features", "out_features")

# dense twin, real or complex -> its constructor arguments, all stored as
# attributes of the same name
_DENSE = {cls: args for ours, native, args in _TWINS for cls in (ours, native)}
_DENSE.update({torch.nn.Bilinear: _BILINEAR, CplxBilinear: _BILINEAR + ("conjugate",)})

# Layers whose features can be removed: their weight is (out, in, *kernel) and
# maps input feature ``j`` through column ``j`` alone. The value is the number of
# spatial dimensions, which a producer and its consumer must share.
_SPATIAL = {torch.nn.Linear: 0, torch.nn.Conv1d: 1, torch.nn.Conv2d: 2, torch.nn.Conv3d: 3}
_SHRINKABLE = {
    cls: _SPATIAL[native]
    for ours, native, _ in _TWINS
    if native in _SPATIAL
    for cls in (ours, native)
}

# Modules applying one scalar function to every element, the same for all
# features (in eval mode), so that feature ``j`` of their output depends on
# feature ``j`` of their input alone: features may be removed across them.
_ELEMENTWISE = (
    torch.nn.Identity,
    torch.nn.ReLU,
    torch.nn.ReLU6,
    torch.nn.LeakyReLU,
    torch.nn.ELU,
    torch.nn.SELU,
    torch.nn.CELU,
    torch.nn.GELU,
    torch.nn.SiLU,
    torch.nn.Mish,
    torch.nn.Sigmoid,
    torch.nn.Tanh,
    torch.nn.Hardtanh,
    torch.nn.Hardswish,
    torch.nn.Hardsigmoid,
    torch.nn.Softplus,
    torch.nn.Dropout,
    CplxIdentity,
    CplxModReLU,
    CplxZReLU,
    CplxCardioid,
    CplxDropout,
)
_ELEMENTWISE_FUNCTIONS = (torch.tanh, torch.sigmoid, torch.relu, F.relu, F.gelu, F.silu, F.elu)


class _CSRLinear(torch.nn.Module):
    """What the CSR linear layers share: the matrix assembly, the product and the repr."""

    def _csr(self, values):
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
            return torch.sparse.mm(self._csr(values), flat.T).T
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

    def __init__(self, weight, bias=None):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        _register_csr(self, weight != 0, values=weight)
        self.register_buffer("bias", None if bias is None else bias.detach().clone())

    def forward(self, input):
        output = self._product(self.values, input.reshape(-1, self.in_features))
        if self.bias is not None:
            output = output + self.bias
        return output.reshape(*input.shape[:-1], self.out_features)


class CplxSparseLinear(_CSRLinear):
    r"""Inference complex linear layer :math:`y = x W^T + b` with a CSR weight.

    The two real parts of the weight share one sparsity pattern (buffers
    ``crow_indices``, ``col_indices``) and have their own values
    (``values_real``, ``values_imag``). Each part multiplies the real and
    imaginary parts of the input at once, stacked: two sparse products per
    call (traced for an export, gathered and scattered as in
    :class:`SparseLinear`). Measured on one thread of the shared 2-core CPU of
    this project (2048 x 2048, 90 % and 99 % sparse), this ran 1.6-2.6x
    faster than torch's complex CSR product at batch 64, and 0.5-0.8x its
    speed at batch 1, where torch's single complex kernel wins (both far
    ahead of the dense product there, see the deployment guide).
    Made by :func:`compact`.

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
    >>> weight = cplx.Cplx(torch.tensor([[0.0, 2.0]]), torch.tensor([[1.0, 0.0]]))
    >>> layer = CplxSparseLinear(weight)
    >>> layer(cplx.Cplx(torch.tensor([[1.0, 1.0]])))
    Cplx(
      real=tensor([[2.]]),
      imag=tensor([[1.]])
    )
    """

    def __init__(self, weight, mask=None, bias=None):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        if mask is None:
            mask = (weight.real != 0) | (weight.imag != 0)
        _register_csr(self, mask.bool(), values_real=weight.real, values_imag=weight.imag)
        if bias is None:
            self.register_buffer("bias_real", None)
            self.register_buffer("bias_imag", None)
        else:
            self.register_buffer("bias_real", bias.real.detach().clone())
            self.register_buffer("bias_imag", bias.imag.detach().clone())

    def forward(self, input):
        _check_features(self, input, self.in_features)
        shape = input.shape[:-1] + (self.out_features,)
        rows = input.numel() // max(self.in_features, 1)
        # the input's parts one above the other: (2 * rows, in_features)
        both = torch.cat([input.real.reshape(rows, -1), input.imag.reshape(rows, -1)])
        by_real = self._product(self.values_real, both)
        by_imag = self._product(self.values_imag, both)
        real = by_real[:rows] - by_imag[rows:]
        imag = by_real[rows:] + by_imag[:rows]
        if self.bias_real is not None:
            real = real + self.bias_real
            imag = imag + self.bias_imag
        return Cplx(real.reshape(shape), imag.reshape(shape))


def _register_csr(layer, keep, **values):
    """Register the CSR pattern of the boolean ``keep`` and the kept ``values``."""
    keep = keep.detach()
    crow = torch.cat([keep.new_zeros(1, dtype=torch.int64), keep.sum(1).cumsum(0)])
    layer.register_buffer("crow_indices", crow)
    # row-major order, as the values of ``dense[keep]``
    layer.register_buffer("col_indices", keep.nonzero()[:, 1].clone())
    for name, dense in values.items():
        layer.register_buffer(name, dense.detach()[keep].clone())


# the protocol
def _weight_and_mask(name, layer, threshold):
    """``(weight, bool mask)`` of a layer that takes part in compaction, else ``None``."""
    if isinstance(layer, BaseMasked):
        if layer.mask is None:
            raise RuntimeError(
                "compact: `module` must have a mask on every masked layer, "
                f"got none on `{name}` ({layer._get_name()})"
            )
        mask = layer.mask
    elif callable(getattr(layer, "relevance", None)):
        if threshold is None:
            raise ValueError(
                "compact: `threshold` must be a number for the Bayesian layer "
                f"`{name}` ({layer._get_name()}), got None"
            )
        mask = layer.relevance(threshold=threshold)
    else:
        return None
    mask = mask.detach()
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(
            "compact: `module` must have binary masks (`binarize_masks` folds other "
            f"values into the weights), got another on `{name}` ({layer._get_name()})"
        )
    return layer.weight, mask.bool()


class _Unit:
    """A layer's weight (mask applied), mask and bias while features are removed."""

    def __init__(self, layer, weight, mask, shared):
        # a layer used twice has two neighbourhoods: its features stay
        self.layer, self.shared = layer, shared
        self.mask = mask.expand(weight.shape).clone() if mask is not None else None
        keep = 1 if mask is None else self.mask.to(_parts(weight)[0].dtype)
        self.weight = _map(weight, lambda part: part.detach() * keep)
        bias = layer.bias
        self.bias = None if bias is None else _map(bias, lambda part: part.detach().clone())
        self.changed = mask is not None

    def density(self):
        return 1.0 if self.mask is None else self.mask.float().mean().item()

    def keep(self, dim, index):
        """Keep only features ``index`` along weight dimension ``dim`` (0 out, 1 in)."""
        self.weight = _map(self.weight, lambda part: part.index_select(dim, index))
        if self.mask is not None:
            self.mask = self.mask.index_select(dim, index)
        if dim == 0 and self.bias is not None:
            self.bias = _map(self.bias, lambda part: part.index_select(0, index))
        self.changed = True


def _parts(x):
    return (x.real, x.imag) if isinstance(x, Cplx) else (x,)


def _map(x, fn):
    return Cplx(fn(x.real), fn(x.imag)) if isinstance(x, Cplx) else fn(x)


def _zero_rows(weight):
    """Output features whose weights are all zero."""
    flat = [part.flatten(1) for part in _parts(weight)]
    return torch.stack([(part == 0).all(1) for part in flat]).all(0)


def _zero_columns(weight):
    """Input features that no output uses."""
    flat = [part.transpose(0, 1).flatten(1) for part in _parts(weight)]
    return torch.stack([(part == 0).all(1) for part in flat]).all(0)


def _is_elementwise(module):
    if isinstance(module, _ELEMENTWISE):
        return True
    base = _RECIPES.get(type(module))
    return base is not None and (
        base in _ELEMENTWISE_FUNCTIONS or (isinstance(base, type) and issubclass(base, _ELEMENTWISE))
    )


def _shrink_pair(producer, between, consumer):
    """Remove the producer's features that the consumer never sees; ``True`` if any.

    A feature goes if the consumer's column for it is all zero, or if the
    producer's row is all zero: its output is then the constant bias,
    which, passed through the elementwise modules ``between``, is zero
    (nothing to keep) or folds into a linear consumer's bias.
    """
    unused = _zero_columns(consumer.weight)
    dead = _zero_rows(producer.weight) & ~unused
    if dead.any():
        constant = _dead_outputs(producer, dead, between)
        if consumer.weight.dim() == 2 and consumer.bias is not None:
            columns = _map(consumer.weight, lambda part: part[:, dead])
            consumer.bias = consumer.bias + _linear(constant.unsqueeze(0), columns)[0]
        else:
            # a convolution pads with zeros, not with the constant
            nonzero = torch.stack([part != 0 for part in _parts(constant)]).any(0)
            dead[dead.nonzero().squeeze(1)[nonzero]] = False
    drop = unused | dead
    if not drop.any():
        return False
    index = (~drop).nonzero().squeeze(1)
    producer.keep(0, index)
    consumer.keep(1, index)
    return True


def _dead_outputs(producer, dead, between):
    """The constant outputs of the ``dead`` features after the modules ``between``."""
    if producer.bias is None:
        value = _map(producer.weight, lambda part: part.new_zeros(int(dead.sum())))
    else:
        value = _map(producer.bias, lambda part: part[dead])
    spatial = producer.weight.dim() - 2
    value = _map(value, lambda part: part.view(1, -1, *(1,) * spatial))
    with torch.no_grad():
        for module in between:
            value = module(value)
    return _map(value, lambda part: part.flatten())


def _linear(input, weight):
    return cplx.linear(input, weight) if isinstance(weight, Cplx) else F.linear(input, weight)


def _shrink_sequential(sequential, units):
    """Remove features between the layers of ``sequential`` until nothing changes."""
    children = list(sequential.children())
    changed = True
    while changed:
        changed = False
        for i, producer in enumerate(children):
            j = _consumer(children, i, units)
            if j is not None:
                pair = units[id(producer)], children[i + 1:j], units[id(children[j])]
                changed |= _shrink_pair(*pair)


def _consumer(children, i, units):
    """Index of the layer that alone reads the features of ``children[i]``, if proven."""
    producer = children[i]
    kind = _kind(producer)
    if kind is None or id(producer) not in units or units[id(producer)].shared:
        return None
    for j in range(i + 1, len(children)):
        module = children[j]
        if _kind(module) == kind and id(module) in units:
            return None if units[id(module)].shared else j
        if not _is_elementwise(module):
            return None
    return None


def _kind(layer):
    """``(spatial dims, complex)`` of a layer whose features can be removed, else ``None``."""
    for cls in type(layer).__mro__:
        if cls in _SHRINKABLE:
            if getattr(layer, "groups", 1) != 1:
                return None
            return _SHRINKABLE[cls], isinstance(layer.weight, Cplx)
    return None


def _dense_twin(layer):
    return next((cls for cls in type(layer).__mro__ if cls in _DENSE), None)


def _rebuild(unit, max_density):
    """The inference module computing what ``unit`` holds."""
    layer, weight, bias = unit.layer, unit.weight, unit.bias
    twin = _dense_twin(layer)
    if twin in (torch.nn.Linear, CplxLinear) and unit.density() <= max_density:
        if twin is CplxLinear:
            return CplxSparseLinear(weight, unit.mask, bias)
        return SparseLinear(weight, bias)
    kwargs = {name: getattr(layer, name) for name in _DENSE[twin]}
    if twin in _SHRINKABLE:
        size = ("out_features", "in_features") if twin in (torch.nn.Linear, CplxLinear) \
            else ("out_channels", "in_channels")
        kwargs.update(zip(size, weight.shape[:2]))
    real = _parts(weight)[0]
    module = torch.nn.utils.skip_init(
        twin, **kwargs, bias=bias is not None, device=real.device, dtype=real.dtype
    )
    with torch.no_grad():
        for name, value in (("weight", weight), ("bias", bias)):
            if value is not None:
                target = getattr(module, name)
                for part, source in zip(_parts(target), _parts(value)):
                    part.copy_(source)
    return module


def compact(module, *, max_density=0.15, threshold=None):
    r"""An inference copy of ``module`` with what its masks zero removed.

    Parameters
    ----------
    module : torch.nn.Module
        A model holding masked layers (masks set and binary) and/or Bayesian
        layers (with a ``relevance(threshold=...)`` method). It is not changed.
    max_density : float, default 0.15
        A linear layer whose mask keeps at most this fraction of its weight
        (after the removal of whole features) becomes a
        :class:`SparseLinear` or :class:`CplxSparseLinear` (CSR); denser
        ones, and every other layer, become their dense twin
        (:class:`torch.nn.Linear`, :class:`~cplxmodule.nn.CplxConv2d`, ...)
        with the mask multiplied into the weight. ``0`` keeps every weight
        dense, for runtimes (an ONNX one, say) without fast sparse products.
    threshold : float, optional
        For Bayesian layers: their mask is ``relevance(threshold=threshold)``.

    Returns
    -------
    torch.nn.Module
        A deep copy of ``module`` in eval mode, computing what ``module``
        computes in eval mode (its Bayesian layers replaced by their masked
        twins), with no masked layer left.

    Raises
    ------
    ValueError
        If a mask is not binary (see
        :func:`~cplxmodule.nn.masked.binarize_masks`), or a Bayesian layer
        meets no ``threshold``, naming the layer.
    RuntimeError
        If a masked layer has no mask, naming it.
    TypeError
        If a masked or Bayesian layer has no known dense twin, naming it.

    Notes
    -----
    Whole features are removed only where the model's structure proves it
    safe: inside a :class:`torch.nn.Sequential` (or
    :class:`~cplxmodule.nn.CplxSequential`), between a linear or convolution
    layer (without groups) and the next one of the same kind, with only
    elementwise modules (activations, dropout, identity) between them.
    Output feature ``j`` of the first goes, with input feature ``j`` of the
    second, when the second never reads it (its column is all zero), or when
    the first's row is all zero: then feature ``j`` carries the constant
    bias, which after the activations is either zero or is added to a linear
    second layer's bias. Elsewhere (a model's last layer, layers called from
    a custom ``forward``) zero rows stay; the result is never wrong.

    The CSR product pays off from about 85 % sparsity on; measured on the
    shared 2-core CPU of this project (``benchmarks/test_bench_compact.py``),
    see the deployment guide for the figures. Convolutions stay dense (with
    their dead channels removed): torch has no sparse convolution on the
    CPU, and unfolding the input for a CSR product cost more than the whole
    dense convolution there (a 3x3 convolution, 64 -> 64 channels on 32 x 32
    inputs, one thread: 0.6x the dense speed at 90 % sparsity, 0.7-0.8x at
    99 %).

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> model = torch.nn.Sequential(LinearMasked(4, 3), torch.nn.ReLU(), LinearMasked(3, 2))
    >>> model[0].mask = torch.tensor([[1.0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]])
    >>> model[2].mask = torch.ones(2, 3)
    >>> _ = torch.nn.init.zeros_(model[0].bias)  # row 1 then outputs relu(0) = 0
    >>> small = compact(model)
    >>> small
    Sequential(
      (0): Linear(in_features=4, out_features=2, bias=True)
      (1): ReLU()
      (2): Linear(in_features=2, out_features=2, bias=True)
    )
    >>> x = torch.randn(5, 4)
    >>> torch.allclose(small(x), model(x))
    True
    """
    if not 0 <= max_density <= 1:
        raise ValueError(f"compact: `max_density` must be in [0, 1], got {max_density!r}")
    model = copy.deepcopy(module).eval()
    units = {}
    uses = collections.Counter(map(id, model.modules(remove_duplicate=False)))
    for name, layer in model.named_modules():
        found = _weight_and_mask(name, layer, threshold)
        if found is None and _kind(layer) is None:
            continue
        if found is not None and _dense_twin(layer) is None:
            raise TypeError(
                "compact: `module` must hold masked layers of known dense twins, "
                f"got `{name}` ({layer._get_name()})"
            )
        weight, mask = found if found is not None else (layer.weight, None)
        with torch.no_grad():
            units[id(layer)] = _Unit(layer, weight, mask, shared=uses[id(layer)] > 1)
    with torch.no_grad():
        for sequential in model.modules():
            if isinstance(sequential, torch.nn.Sequential):
                _shrink_sequential(sequential, units)
        new = {
            key: _rebuild(unit, max_density).train(False)
            for key, unit in units.items()
            if unit.changed
        }
    if id(model) in new:
        return new[id(model)]
    # every place that holds a layer, a layer used twice included
    for parent in list(model.modules()):
        # ``named_children`` would yield a layer used twice once only
        for name, child in list(parent._modules.items()):
            if id(child) in new:
                setattr(parent, name, new[id(child)])
    return model


class CompactReport(NamedTuple):
    """What :func:`compact` did to each layer, and the measured speedup.

    A named tuple of three fields. ``layers`` holds one ``(name, before,
    after, kept)`` per layer that changed: the layer's class and weight shape
    before and after, and the fraction of the original weight's entries
    stored (the nonzeros of a CSR weight, or all entries of a dense one).
    ``masked_seconds`` and ``compact_seconds`` are the times of one forward
    call of each model (``None`` when :func:`compact_report` had no inputs).
    ``str(report)`` is a table of all this.
    """

    layers: list
    masked_seconds: float = None
    compact_seconds: float = None

    @property
    def speedup(self):
        """float or None: ``masked_seconds / compact_seconds``."""
        if self.compact_seconds is None:
            return None
        return self.masked_seconds / self.compact_seconds

    def __str__(self):
        lines = [f"{'layer':<16} {'before':<36} {'after':<36} kept"]
        for name, before, after, kept in self.layers:
            lines.append(f"{name:<16} {before:<36} {after:<36} {kept:.1%}")
        if self.speedup is not None:
            lines.append(
                f"forward: {self.masked_seconds * 1e3:.3f} ms masked, "
                f"{self.compact_seconds * 1e3:.3f} ms compact: speedup {self.speedup:.2f}x"
            )
        return "\n".join(lines)


def compact_report(module, compacted, inputs=None, *, min_run_time=0.2):
    """Compare a model with its :func:`compact` copy: what was removed, how much faster.

    Parameters
    ----------
    module : torch.nn.Module
        The masked (or Bayesian) model.
    compacted : torch.nn.Module
        ``compact(module, ...)``.
    inputs : tuple, optional
        Positional inputs for one forward call; when given, both models are
        timed on them in eval mode under :func:`torch.inference_mode`.
    min_run_time : float, default 0.2
        Seconds to spend timing each model.

    Returns
    -------
    CompactReport
        Printable: one line per layer that changed, then the timing.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> model = torch.nn.Sequential(LinearMasked(64, 64))
    >>> model[0].mask = torch.rand(64, 64) < 0.05
    >>> report = compact_report(model, compact(model), (torch.randn(8, 64),), min_run_time=0.01)
    >>> report.layers[0][2].startswith("SparseLinear")
    True
    >>> report.speedup > 0
    True
    """
    modules = dict(module.named_modules())
    layers = []
    for name, new in compacted.named_modules():
        old = modules.get(name)
        if old is None or not hasattr(old, "weight") or _describe(old) == _describe(new):
            continue
        total = old.weight.numel()
        stored = new.col_indices.numel() if hasattr(new, "col_indices") else new.weight.numel()
        layers.append((name, _describe(old), _describe(new), stored / total))
    if inputs is None:
        return CompactReport(layers)
    return CompactReport(layers, _time(module, inputs, min_run_time),
                         _time(compacted, inputs, min_run_time))


def _describe(layer):
    if hasattr(layer, "col_indices"):
        shape = (layer.out_features, layer.in_features)
    else:
        shape = tuple(layer.weight.shape)
    return f"{layer._get_name()}{shape}"


def _time(module, inputs, min_run_time):
    training = module.training
    module.eval()
    try:
        with torch.inference_mode():
            module(*inputs)
            calls, start = 0, time.perf_counter()
            while True:
                module(*inputs)
                calls += 1
                elapsed = time.perf_counter() - start
                if elapsed >= min_run_time:
                    return elapsed / calls
    finally:
        module.train(training)
