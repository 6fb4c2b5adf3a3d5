"""What :func:`~cplxmodule.nn.masked.compact` did to a model, and how much faster it runs."""

from __future__ import annotations

import time
from typing import Any, NamedTuple, Optional

import torch

from ...cplx._shared import check_positive_int
from .. import _families
from ..modules.rnn import _CplxRNNBase
from ._channels import _parts, _transposed
from .quantized import named_compressed_size

__all__ = ["CompactReport", "compact_report"]


class CompactReport(NamedTuple):
    """What :func:`compact` did to each layer, and the measured speedup.

    A named tuple. ``layers`` holds one ``(name, before, after, kept)`` per
    layer that changed: the layer's class and weight shape before and
    after (``"CplxConv1dMasked weight 16x1x7"``), and the fraction of the
    original weight's entries that are kept, nonzero (in either part of a
    complex weight), whether the compact layer stores them in CSR or in a
    dense weight (which then also holds zeros: the shape says what it
    computes); a layer whose original weight has no entries
    (``CplxLinear(4, 0)``) kept all of them, ``1.0``, by convention, as
    nothing was removed. ``masked_seconds`` and ``compact_seconds`` are
    the times of one forward call of each model (``None`` when
    :func:`compact_report` had no inputs), on ``threads`` threads.
    ``notes`` are lines printed after the table: which convolutions still
    compute zeros that no compaction can remove, and which layers kept
    output channels (or features) whose weights are all zero, and why
    they may have stayed. ``sizes`` maps each of these layers to the bytes
    it stores before and after, as :func:`compressed_size` counts them (a
    masked weight's nonzeros behind a bitmap, the mask not at all; a
    compact layer as it stores its weight: a dense one with its zeros, a
    CSR one with its indices), and ``stored`` holds the whole models'
    ``(before, after)``: quantize the compact model
    (:func:`quantize`) to store it at fewer bits. ``str(report)`` is a
    table of all this.
    """

    layers: list
    masked_seconds: Optional[float] = None
    compact_seconds: Optional[float] = None
    notes: tuple[str, ...] = ()
    threads: Optional[int] = None
    sizes: Optional[dict[str, tuple[int, int]]] = None
    stored: Optional[tuple[int, int]] = None

    @property
    def speedup(self) -> Optional[float]:
        """float or None: ``masked_seconds / compact_seconds``."""
        if self.compact_seconds is None or self.masked_seconds is None:
            return None
        return self.masked_seconds / self.compact_seconds

    def __str__(self) -> str:
        # columns as wide as their longest entry (a recurrent layer's
        # ``rnn.hh_l0_reverse`` say), at least as in a small model
        names = max([16] + [len(name) for name, *_ in self.layers])
        layers = max([36] + [len(text) for _, *texts, _ in self.layers for text in texts])
        sizes = self.sizes or {}
        lines = [f"{'layer':<{names}} {'before':<{layers}} {'after':<{layers}} kept    bytes"]
        for name, before, after, kept in self.layers:
            stored = " {} -> {}".format(*sizes[name]) if name in sizes else ""
            lines.append(
                f"{name:<{names}} {before:<{layers}} {after:<{layers}} {kept:<7.1%}{stored}".rstrip())
        if self.stored is not None:
            lines.append("stored (compressed_size): {} bytes before, {} bytes compact".format(
                *self.stored))
        masked, small = self.masked_seconds, self.compact_seconds
        if masked is not None and small is not None:
            threads = "" if self.threads is None else f" ({self.threads} threads)"
            lines.append(
                f"forward{threads}: {masked * 1e3:.3f} ms masked, "
                f"{small * 1e3:.3f} ms compact: speedup {masked / small:.2f}x"
            )
        lines.extend(self.notes)
        return "\n".join(lines)


def compact_report(
    module: torch.nn.Module,
    compacted: torch.nn.Module,
    inputs: Optional[tuple[Any, ...]] = None,
    *,
    min_run_time: float = 0.2,
    threads: Optional[int] = None,
) -> CompactReport:
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
    threads : int, optional
        The number of threads torch times them on (set for the timing,
        then put back); by default the process's, which the report states:
        a deployed model often runs on one, and on a busy machine more
        threads can be slower.

    Returns
    -------
    CompactReport
        Printable: one line per layer that changed, then the timing, then
        a note naming the convolutions whose kernels still hold zeros:
        unstructured zeros inside a convolution kernel cannot be removed
        (torch has no sparse convolution), only whole channels can, so
        such a layer runs at its dense speed; and a note naming the
        layers that kept dead output channels, each with how many: a
        dead channel stays where it carries the constants of the others
        (to a zero-padded convolution) or where :func:`compact` could not
        prove where it goes (a use in the model's own ``forward``
        without ``example_inputs``, a function of it, the model's output,
        a layer called twice, a concatenation along another dimension).

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked, compact
    >>> model = torch.nn.Sequential(LinearMasked(64, 64))
    >>> model[0].mask = torch.rand(64, 64) < 0.05
    >>> report = compact_report(model, compact(model), (torch.randn(8, 64),), min_run_time=0.01)
    >>> report.layers[0][2]  # too small for a CSR weight to pay
    'Linear weight 64x64'
    >>> compact_report(model, compact(model, max_density=1.0)).layers[0][2]
    'SparseLinear weight 64x64'
    >>> report.speedup > 0
    True
    """
    if threads is not None:
        check_positive_int(threads, "threads", "compact_report")
    modules = dict(module.named_modules())
    # a recurrent layer's projections give gates, not channels
    gates = {id(p) for m in compacted.modules() if isinstance(m, _CplxRNNBase)
             for p in m.modules() if p is not m}
    layers, zeros, dead = [], [], []
    before, after = dict(named_compressed_size(module)), dict(named_compressed_size(compacted))
    sizes: dict[str, tuple[int, int]] = {}
    stored = (sum(before.values()), sum(after.values()))
    for name, new in compacted.named_modules():
        old = modules.get(name)
        if old is None or not hasattr(old, "weight"):
            continue
        if _is_convolution(new) and _zero_fraction(new.weight) > 0:
            zeros.append((name, _zero_fraction(new.weight)))
        outputs = None if id(new) in gates else _dead_outputs(new)
        if outputs is not None and outputs[0]:
            dead.append((name, *outputs))
        if _describe(old) == _describe(new):
            continue
        total = _parts(old.weight)[0].numel()
        nonzero = new.col_indices.numel() if hasattr(new, "col_indices") else _nonzero(new)
        layers.append((name, _describe(old), _describe(new), _kept(nonzero, total)))
        sizes[name] = (_layer_bytes(before, name), _layer_bytes(after, name))
    notes: tuple[str, ...] = ()
    if zeros:
        named = ", ".join(f"{name or '(model)'} ({fraction:.0%})" for name, fraction in zeros)
        notes = (
            f"zeros left inside convolution kernels: {named}; "
            "unstructured zeros inside convolution kernels cannot be removed",
        )
    if dead:
        named = ", ".join(f"{name or '(model)'} ({k} of {n})" for name, k, n in dead)
        notes += (
            f"dead output channels kept: {named}; one may carry the constants of the others"
            " to a zero-padded convolution, the rest feed a use that compact could not prove"
            " (without example_inputs it follows Sequentials only; with them, see compact's"
            " Notes for what it follows)",
        )
    if inputs is None:
        return CompactReport(layers, notes=notes, sizes=sizes, stored=stored)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads or previous)
    try:
        times = [_time(model, inputs, min_run_time) for model in (module, compacted)]
    finally:
        torch.set_num_threads(previous)
    masked, small = times
    return CompactReport(layers, masked, small, notes, threads or previous, sizes, stored)


def _layer_bytes(sizes, name):
    """The bytes that the layer ``name`` stores, of a model's :func:`named_compressed_size`."""
    prefix = f"{name}." if name else ""
    return sum(size for key, size in sizes.items() if key.startswith(prefix))


def _dead_outputs(layer):
    """``(dead, total)`` output channels of a family member whose weights are all zero, or ``None``."""
    member = _families.lookup(type(layer))
    weight = getattr(layer, "weight", None)
    if member is None or weight is None or hasattr(layer, "col_indices"):
        return None
    dim = 1 if _transposed(member.family) else 0
    zero = _zeros(weight)
    if not zero.numel():
        return None
    return int(zero.transpose(0, dim).flatten(1).all(1).sum()), zero.shape[dim]


def _nonzero(layer):
    """The number of entries of a dense weight that are not zero in either part."""
    return int(_zeros(layer.weight).logical_not().sum())


def _kept(stored, total):
    """The fraction ``stored / total`` of a weight's entries kept; ``1.0`` for an empty weight.

    An empty weight (``total`` 0) lost none of its entries: by convention
    it kept them all, as :func:`_zero_fraction` finds none of them zero.
    """
    return stored / total if total else 1.0


def _is_convolution(layer):
    """A convolution that :func:`compact` made (a dense twin, real or complex)."""
    member = _families.lookup(type(layer))
    return member is not None and member.family.kernel_dims > 0


def _zero_fraction(weight):
    """The fraction of a weight's entries that are zero (in both parts, if complex).

    ``0.0`` for an empty weight, by convention: it holds no zeros.
    """
    zero = _zeros(weight)
    return zero.float().mean().item() if zero.numel() else 0.0


def _zeros(weight):
    """Where a weight is zero (in both parts, if complex)."""
    with torch.no_grad():
        parts = _parts(weight)
        zero = parts[0] == 0
        for part in parts[1:]:
            zero = zero & (part == 0)
        return zero


def _describe(layer):
    """``"<class> weight <out>x<in>x..."``: the class and the shape of the weight it stores."""
    if hasattr(layer, "col_indices"):
        shape = (layer.out_features, layer.in_features)
    else:
        shape = tuple(_parts(layer.weight)[0].shape)
    return f"{layer._get_name()} weight {'x'.join(map(str, shape))}"


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
