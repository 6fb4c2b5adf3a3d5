"""Compact sparse inference: a masked or Bayesian model turned into a plain inference model.

A masked layer multiplies its dense weight by its mask at every call, so a
99 % sparse model runs as slowly as a dense one. :func:`compact` removes what
the masks zero instead: whole output features and channels (rows of the
mask) together with the next layer's matching inputs, and the batch norms'
and per-channel activations' parameters between, wherever the chain of a
:class:`torch.nn.Sequential` proves it safe (see ``_channels.py`` beside
this module), then stores each remaining linear
weight large and sparse enough for it to pay (by a measured rule, see
:func:`compact`) as a CSR matrix (:class:`SparseLinear`,
:class:`CplxSparseLinear`, in :mod:`~cplxmodule.nn.masked.sparse_linear`) and
every other one densely in the layer's dense twin, with the mask multiplied
in. :func:`compact_report` (in :mod:`~cplxmodule.nn.masked.report`) says what
changed.

Only layers whose class is exactly one of this package's families (the
table in ``cplxmodule.nn._families``) are rebuilt or shrunk; anything else,
a user's subclass included, is opaque: kept as it is, and no feature is
removed across it.
"""

from __future__ import annotations

import collections
import copy
import warnings

import torch

from ...cplx import Cplx
from ...cplx._shared import check_real
from .. import _families
from .._guards import check_finite, check_threshold
from ..modules.attention import CplxMultiheadAttention
from . import _channels, _dataflow, _heads, _recurrent, twins
from ._channels import Unit, _parts
from .base import BaseMasked, _masked
from ._recurrent import CompactRecurrent
from .report import CompactReport, compact_report
from .sparse_linear import CplxSparseLinear, SparseLinear
from collections.abc import Mapping
from typing import Optional

# ``compact_report``, ``CompactReport`` and the CSR layers were defined here
# once: they stay importable from this module
__all__ = ["compact", "compact_report", "CompactReport", "SparseLinear", "CplxSparseLinear",
           "CompactRecurrent"]


# Where a CSR weight beats the dense one (benchmarks/csr_study.py; the table
# is in docs/guides/deploying.rst): on the CPU, for square layers of 64 to
# 4096 features, 1 to 256 rows per call, on 1 and 4 threads, the CSR layer
# was faster at every batch measured once it kept at most 3 % of a weight
# of at least 1024 x 1024 entries (real; 512 x 512 complex, whose dense
# product costs four real ones); at 10 % it lost at one row per call, and
# smaller layers lost to the dense product's lower cost per call. On the
# GPU torch's CSR product lost to the dense one almost everywhere.
_CSR_MAX_DENSITY = 0.03
_CSR_MIN_ENTRIES = {False: 2 ** 20, True: 2 ** 18}


def _csr_pays(shape, density, complex_, device):
    """Whether a linear weight of ``shape`` keeping ``density`` of it computes faster as CSR.

    ``complex_``: the weight is complex; ``device``: where it lives. The
    measured rule above, whatever the batch (1 to 256 rows per call).
    """
    out_features, in_features = shape
    return (
        device.type == "cpu"
        and density <= _CSR_MAX_DENSITY
        and out_features * in_features >= _CSR_MIN_ENTRIES[complex_]
    )


def compact(
    module: torch.nn.Module,
    *,
    max_density: Optional[float] = None,
    threshold: Optional[float] = None,
    readouts: Optional[Mapping[str, str]] = None,
    example_inputs: Optional[tuple] = None,
) -> torch.nn.Module:
    r"""An inference copy of ``module`` with what its masks zero removed.

    Parameters
    ----------
    module : torch.nn.Module
        A model holding masked layers (masks set and binary) and/or
        Bayesian layers of :mod:`cplxmodule.nn.relevance`. It is not changed.
        A recurrent layer with hidden-unit gates
        (:mod:`~cplxmodule.nn.relevance.recurrent`) is compacted as the plain
        layer it computes as in eval mode, its gates folded in: its closed
        units are dead; with Gaussian gates, the units that
        ``relevance(threshold=threshold)`` drops are dead (their rows
        and biases zero).
    max_density : float, optional
        A linear layer whose mask keeps at most this fraction of its weight
        (after the removal of whole features) becomes a
        :class:`SparseLinear` or :class:`CplxSparseLinear` (CSR); denser
        ones, and every other layer, become their dense twin
        (:class:`torch.nn.Linear`, :class:`~cplxmodule.nn.CplxConv2d`, ...)
        with the mask multiplied into the weight. ``0`` keeps every weight
        dense, for runtimes (an ONNX one, say) without fast sparse products.
        By default a linear layer becomes CSR only where that was measured
        to be faster than its dense twin at every batch size: large and very
        sparse layers on the CPU (the measured rule:
        :doc:`/guides/deploying`).
    threshold : float, optional
        For the Bayesian layers whose eval-mode forward uses their plain
        weight (variational dropout, ARD, LASSO): their mask is
        ``relevance(threshold=threshold)``. Not needed, and ignored, for
        layers with gates of their own (:class:`~cplxmodule.nn.relevance.LinearL0`).
    readouts : mapping of str to str, optional
        For a recurrent layer (named as in ``module.named_modules()``), the
        name of the linear layer that reads its output, one column per
        output feature (``hidden_size`` per direction), from the layer's
        ``forward`` call in the model's own ``forward``: the output itself, a
        step of it or the last layer's final state, directly or through an
        elementwise map that takes 0 to 0 (a modulus, a split ReLU, ...).
        Compacted, the recurrent layer then returns the live units only, and
        the read-out loses the dead units' columns (see the Notes).
    example_inputs : tuple, optional
        Positional inputs of one forward call of ``module``. With them, the
        call is recorded and channels go along the chains of layers it
        proves inside the model's own ``forward`` too (a residual block's
        inner convolutions), not only along :class:`torch.nn.Sequential`
        containers, from a layer whose output several layers read, whole
        or concatenated along the channels (a U-Net's skip connections),
        through additions (a residual network's stream), and removes the
        heads of a :class:`~cplxmodule.nn.CplxMultiheadAttention` that
        compute nothing used (see the Notes). The compacted model is then
        checked against ``module`` on them, in eval mode.

    Returns
    -------
    torch.nn.Module
        A deep copy of ``module`` in eval mode computing what ``module``
        computes in eval mode, with no masked or Bayesian layer of this
        package left. A variational dropout, ARD or LASSO layer computes
        there what its masked twin with mask ``relevance(threshold)`` computes
        (the sparsification is the point); an L0 layer what it computes itself
        in eval mode (weight times its deterministic gates). A rebuilt layer
        keeps the hooks and ``requires_grad`` flags of the layer it replaces.

    Raises
    ------
    TypeError
        If ``readouts`` is not a mapping, or ``example_inputs`` not a tuple.
    ValueError
        If ``max_density`` is neither ``None`` nor in [0, 1], if ``readouts``
        names no recurrent layer, one with ``proj_size``, or a read-out that
        is not a linear layer used once with the recurrent output's width,
        if a mask is not binary (see
        :func:`~cplxmodule.nn.masked.binarize_masks`), if a Bayesian layer
        that needs a ``threshold`` meets none, or if a masked or Bayesian
        layer has a parameter holding NaN or an infinity, naming the layer;
        if ``threshold`` is NaN.
    RuntimeError
        If a masked layer has no mask, naming it.

    Warns
    -----
    UserWarning
        For each masked or Bayesian layer of a class this package does not
        know exactly (a subclass of a twin): it is kept as it is, naming
        it; and when the chains that ``example_inputs`` proved give another
        output on them (see the Notes).

    Notes
    -----
    Only layers of exactly the classes of this package's layer families
    (the dense layers ``torch.nn.Linear``, ``Bilinear``, ``Conv1-3d``,
    ``ConvTranspose1-3d``, their complex twins, and every masked and
    Bayesian twin of these) are rebuilt or shrunk. Any other module, a
    user's subclass of one of these included (its ``forward`` may compute
    anything), is opaque: copied as it is (its own children compacted), and
    never a reason to remove a feature.

    Whole features (channels) are removed only where the model's
    structure proves it safe: along the chain of a
    :class:`torch.nn.Sequential` or :class:`~cplxmodule.nn.CplxSequential`
    (exactly these classes: a subclass may have its own ``forward``, a
    residual block say; nested ones used once are read through), between a
    *producer* (a linear, convolution or transposed convolution layer,
    without groups) and the next such layer, its *consumer*, when each
    module between maps channel ``c`` to channel ``c`` alone:

    - elementwise modules (activations, dropout, identity; exactly these
      classes), between any two layers of the same kind;
    - behind a convolution also batch norms (real, complex whitening, naive,
      magnitude) and instance norms, whose per-channel statistics and
      parameters are sliced; ``PReLU(C)`` and
      :class:`~cplxmodule.nn.CplxChannelModReLU`, sliced likewise;
      depthwise convolutions (``groups == in_channels == out_channels``),
      which lose the same channels; max, average and adaptive pooling of
      the convolution's dimensions; and a
      ``Flatten(1, -1)`` into a linear consumer, where channel ``c`` is the
      ``S`` features ``c * S ... (c + 1) * S - 1`` (``S = in_features / C``).

    Channel ``c`` goes, with the consumer's matching inputs, when the
    consumer never reads it (its columns are all zero), or when the
    producer's row is all zero: the channel then holds its bias everywhere,
    mapped by each module between in eval mode. A constant zero goes
    outright; another one is added to the consumer's bias where the
    consumer reads it the same at every position (a linear layer, a
    convolution without zero padding), and elsewhere (zero padding, a
    transposed convolution) all of them go through one of them, whose
    kernel in the consumer takes theirs, scaled. A constant is not known,
    and the channel stays, behind a norm by batch or instance statistics,
    an average pooling that counts zero padding or a zero-padded depthwise
    convolution. Anywhere else (a model's first input and last output, a
    layer used twice, a grouped convolution but a depthwise one,
    a module of another class between, layers called from a custom
    ``forward`` without ``example_inputs``) every channel stays; the result
    is never wrong. Behind a convolution, channels are dimension 1:
    convolutions must take batched ``(N, C, *)`` inputs there.

    With ``example_inputs``, a model's own ``forward`` (a residual block, a
    transformer layer's feed-forward network) states chains too: one call
    on them is recorded, every call of a layer or step module and every
    torch function called between them, and a link from one module to the
    next is proven where the next takes exactly the tensors the first
    gives and nothing else uses them (no function of the ``forward``, no
    other module, not the output), each module called once. A residual
    block's inner channels and a transformer's hidden units then go.
    Beyond chains, the record proves groups of values that share their
    channels: written by layers, carried on by steps (modules, and the
    elementwise torch functions of the ``forward``, such as
    :func:`torch.nn.functional.relu` or :meth:`torch.Tensor.tanh`, on a
    tensor or on each part of a ``Cplx``) and by additions or
    subtractions of two of them (of one shape), and read by layers, each
    reading one value whole or as one segment of a concatenation along
    the channels, or, behind a ``Flatten(1, -1)`` (``CplxFlatten(1)``)
    module, as features of a linear layer: channel ``c`` is the features
    ``c * S ... (c + 1) * S - 1``, in each block of a read-out to real
    features between them (:class:`~cplxmodule.nn.CplxToConcatenatedReal`
    along the features: the real parts, then the imaginary parts;
    :class:`~cplxmodule.nn.CplxModulus`: the moduli); or, behind a mean
    over the positions in the ``forward`` (every dimension after the
    channels, ``x.mean(dim=-1)``, without ``keepdim``), as the features of
    a linear layer, channel ``c`` the feature ``c``, a modulus of the
    ``forward`` before it (``abs(z)``) reading them out as real features. A residual
    network's stream is one (every block's last convolution, and the stem
    or a projection shortcut, write it; every block's first norm and
    convolution read it, and the last stage's reaches the classifier
    through a norm, pooling, a flatten and the read-out); so is a U-Net's
    encoder level, read by the next level and, through the skip
    connection, by the decoder. A group's channel goes when every reader drops it, or when
    every writer leaves it dead and each reader takes the constant it then
    holds there, as above: a channel that one summand still writes stays.
    A group with any other use (a function of the ``forward`` other than
    those, a concatenation along another dimension, a broadcast sum, the
    model's output) keeps its channels.

    A head of a :class:`~cplxmodule.nn.CplxMultiheadAttention` (its block
    of the query, key and value projections' outputs and of the output
    projection's inputs) goes when the output projection never reads it or
    when its values are zero (the value projection's rows and bias there,
    and ``bias_v``), and only where the record shows the returned attention
    weights unused (they average over the heads) and no per-head
    ``attn_mask``; the layer then has fewer heads of the same ``head_dim``.
    The record
    holds for every input on which the ``forward`` takes the same path; a
    ``forward`` whose dataflow depends on the values or sizes of its input
    must not be compacted so. The compacted model is checked against the
    one compacted along its Sequentials alone on ``example_inputs``, and
    where they differ (a use that the record could not see) that one is
    returned, with a warning.

    A :class:`~cplxmodule.nn.CplxRNN`, :class:`~cplxmodule.nn.CplxGRU` or
    :class:`~cplxmodule.nn.CplxLSTM` (exactly these classes, its
    projections all of the linear family and used once) whose masks kill
    whole hidden units becomes a :class:`CompactRecurrent` computing only
    the live ones, each projection losing the dead units' rows of every
    gate and their columns. A unit is dead when its candidate gate's rows
    read no live input and, with split gates, its candidate biases are
    zero: its state is then zero at every step (the exact condition is in
    the Notes of :class:`CompactRecurrent`). The layer's outputs and states
    keep their shapes, the dead units' entries zero, so whatever reads them
    (a read-out in a custom ``forward``) is left as it is; ``compact``
    cannot see a custom ``forward``, so the read-out's product keeps the
    dead units' columns. Naming the read-out in ``readouts`` removes them
    too: the recurrent layer returns outputs and states of its live units
    only (``full_width=False``), which the model's ``forward`` must hand to
    the read-out alone. An initial state given to it then has that width
    too; the states it returns have it.

    Convolutions stay dense (with their dead channels removed): torch has no
    sparse convolution, so the zeros scattered inside their kernels are
    computed (:func:`compact_report` says so). When the CSR product of a
    linear layer pays off against the dense one is measured in
    ``benchmarks/csr_study.py`` (the default rule) and
    ``benchmarks/test_bench_compact.py``; :doc:`/guides/deploying` gives
    the figures. A small CSR layer is slower than its dense twin, and at a
    tenth of its weight kept a large one too at one sample per call: the
    default never makes a layer slower than the dense layer it could be.
    The rule reads the weights' device at the call: a model compacted on
    the CPU and moved to a GPU keeps its CSR layers, which are slower there;
    compact it where it runs.

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
    check_real(max_density, "max_density", "compact", low=0, high=1, optional=True)
    if example_inputs is not None and not isinstance(example_inputs, tuple):
        raise TypeError(
            "compact: `example_inputs` must be a tuple of a forward call's positional"
            f" inputs, got {type(example_inputs).__name__}"
        )
    along_sequentials = _compact(module, max_density, threshold, readouts, None)
    if example_inputs is None:
        return along_sequentials
    small = _compact(module, max_density, threshold, readouts, example_inputs)
    if _computes_as(small, along_sequentials, example_inputs):
        return small
    warnings.warn(
        "compact: the model compacted along the chains that its forward call on"
        " `example_inputs` proved computes otherwise on them (a layer's output went"
        " somewhere the call's record did not see): compacted along its Sequential"
        " chains alone",
        UserWarning,
        stacklevel=2,
    )
    return along_sequentials


def _computes_as(small, reference, inputs):
    """Whether the eval-mode models ``small`` and ``reference`` agree on ``inputs``."""
    with torch.no_grad():
        got, expected = (_dataflow._tensors(m(*inputs)) for m in (small, reference))
    return len(got) == len(expected) and all(
        a.shape == b.shape and torch.allclose(a, b, rtol=1e-3, atol=1e-4 * (1 + b.abs().max()))
        for a, b in zip(got, expected)
    )


def _compact(module, max_density, threshold, readouts, example_inputs):
    if threshold is not None:
        check_threshold(threshold, "compact")
    # a layer whose gates span its projections computes as its plain twin
    for name, layer in module.named_modules():
        if hasattr(layer, "fold_masks"):
            _check_threshold_given(name, layer, threshold)
    model = twins.plain_composites(copy.deepcopy(module), threshold=threshold).eval()
    _plain_users_twins(model, threshold)
    units = {}
    uses = collections.Counter(map(id, model.modules(remove_duplicate=False)))
    readers = _recurrent.readout_ids(model, readouts, uses)
    with torch.no_grad():
        for name, layer in model.named_modules():
            member = _families.lookup(type(layer))
            if member is None or not member.family.rebuilt:
                _warn_if_masked_or_bayesian(name, layer)
                continue
            if member.kind != "dense":
                check_finite(layer, "compact", name)
            weight, mask = _eval_weight_and_mask(name, layer, member.kind == "dense", threshold)
            if mask is None and not (
                _channels.shrinkable(member.family, layer)
                or _channels.depthwise(member.family, layer)
            ):
                continue  # a dense layer that nothing can change
            units[id(layer)] = Unit(layer, member.family, weight, mask, uses[id(layer)] > 1)
        chains, groups, attentions = _dataflow_of(model, units, uses, example_inputs)
        for chain in chains:
            _channels.shrink_chain(chain, units, uses)
        _channels.shrink_groups(groups, units, uses)
        for attention in attentions:
            _heads.shrink(attention, units)
        shrunk = _recurrent.shrink(model, units, readers)
        new = {
            key: _inference(_rebuild(unit, max_density), unit.layer)
            for key, unit in units.items()
            if unit.changed
        }
    _replace(model, new)
    model = new.get(id(model), model)
    # built once their projections are rebuilt, which they take along
    new = {
        key: _inference(_recurrent.CompactRecurrent(*plan), plan[0])
        for key, plan in shrunk.items()
    }
    _replace(model, new)
    return new.get(id(model), model)


def _dataflow_of(model, units, uses, example_inputs):
    """``(chains, groups, attentions)``: where the channels of ``model``'s layers go, as proven.

    The chains its :class:`torch.nn.Sequential` containers state, and with
    ``example_inputs`` the chains and the groups (values that layers write,
    sums and steps carry on and layers read, whole or concatenated) that one
    forward call on them proves through the model's own ``forward`` (see
    ``_dataflow``), and the attention layers whose heads may go (``_heads``).
    """
    inner = {
        id(child)
        for parent in model.modules()
        if type(parent) in _channels.SEQUENTIAL
        for child in parent.children()
        if type(child) in _channels.SEQUENTIAL and uses[id(child)] == 1
    }
    found = [
        _channels.chain(sequential, uses)
        for sequential in model.modules()
        if type(sequential) in _channels.SEQUENTIAL and id(sequential) not in inner
    ]
    if example_inputs is None:
        return found, [], []
    passes = {key for key, unit in units.items() if unit.depthwise}
    rec, groups = _recorded_groups(model, units, passes, example_inputs)
    return found + _dataflow.chains(rec), groups, _heads.attentions(model, rec)


def _recorded_groups(model, producers, passes, example_inputs):
    """The record of one call of ``model`` and the groups of values that ``producers`` (ids) write."""
    links = [m for m in model.modules() if id(m) in producers or _channels._kinds_of(m)[0]
             or isinstance(m, CplxMultiheadAttention)]
    rec = _dataflow.record(model, links, example_inputs)
    return rec, _dataflow.groups(rec, [m for m in links if id(m) in producers], passes)


def writer_groups(model, example_inputs):
    """The layers that write each group of channels of ``model``, named, as one call proves them.

    The groups of :func:`compact` (see ``_dataflow.groups``) with two or
    more writers, recorded on a copy of ``model`` in eval mode: for each,
    ``[(name, layer), ...]`` in the order the call reaches the layers.
    """
    reference = copy.deepcopy(model).eval()
    names = {id(layer): name for name, layer in reference.named_modules()}
    members = {
        id(layer): (layer, member.family)
        for layer in reference.modules()
        if (member := _families.lookup(type(layer))) is not None and member.family.rebuilt
    }
    passes = {key for key, (layer, family) in members.items() if _channels.depthwise(family, layer)}
    rec, groups = _recorded_groups(reference, members, passes, example_inputs)
    order = {id(module): i for i, (module, _, _) in reversed(list(enumerate(rec.calls)))}
    found = []
    for group in groups:
        writers = sorted({id(w): w for w, _ in group.writers}.values(), key=lambda w: order[id(w)])
        if len(writers) > 1:
            found.append([(names[id(w)], model.get_submodule(names[id(w)])) for w in writers])
    return found


def _inference(module, layer):
    """``module``, which replaces ``layer``, in eval mode with its hooks and ``requires_grad`` flags."""
    twins._carry(layer, module)
    return module.train(False)


def _replace(model, new):
    """Put ``new[id(module)]`` in every place of ``model`` that holds ``module``."""
    for parent in list(model.modules()):
        # ``named_children`` would yield a layer used twice once only
        for name, child in list(parent._modules.items()):
            if id(child) in new:
                setattr(parent, name, new[id(child)])


def _warn_if_masked_or_bayesian(name, layer):
    if isinstance(layer, BaseMasked) or callable(getattr(layer, "relevance", None)):
        warnings.warn(
            f"compact: kept `{name}` ({layer._get_name()}) as it is: a masked or Bayesian "
            "layer of a class that is not exactly one of cplxmodule's, whose forward "
            "compact does not know",
            UserWarning,
            stacklevel=3,
        )


def _check_threshold_given(name, layer, threshold):
    """Raise unless ``threshold`` is given: the Bayesian layer ``name`` drops by it."""
    if threshold is None:
        raise ValueError(
            "compact: `threshold` must be a number for the Bayesian layer "
            f"`{name}` ({layer._get_name()}), got None"
        )


def _plain_users_twins(model, threshold):
    """Make every twin of a user's layer in ``model`` that layer, its eval-mode weight folded in.

    Such a layer (a masked or Bayesian twin of a user's subclass of a dense
    layer, or of a family a user declared) computes in its own ``forward``,
    which ``compact`` cannot see through: it stays that layer, of the
    user's class, computing with the weight its twin computed with (its
    mask, relevance mask or gates folded in), and no feature of it goes.
    """
    for name, layer in model.named_modules():
        plain = _families.made_from(type(layer))
        if plain is not None:
            check_finite(layer, "compact", name)
            with torch.no_grad():
                weight, mask = _eval_weight_and_mask(name, layer, False, threshold)
                if mask is not None:
                    weight = _masked(weight, mask)
            twins._retype(layer, plain, plain, weight=weight)


def _eval_weight_and_mask(name, layer, dense, threshold):
    """``(weight, bool mask or None)``: what ``layer`` computes with in eval mode.

    A dense layer: its weight, no mask. A masked layer: its weight and mask.
    A Bayesian layer with gates of its own defines ``_eval_weight()``, the
    weight its eval-mode forward computes with (gates folded in); any
    other Bayesian layer computes with its plain weight in eval mode, and
    is sparsified by ``relevance(threshold=threshold)``.
    """
    if dense:
        return layer.weight, None
    if isinstance(layer, BaseMasked):
        if layer.mask is None:
            raise RuntimeError(
                "compact: `module` must have a mask on every masked layer, "
                f"got none on `{name}` ({layer._get_name()})"
            )
        mask = layer.mask
    elif hasattr(layer, "_eval_weight"):
        weight = layer._eval_weight().detach()
        return weight, _nonzero(weight)
    else:
        _check_threshold_given(name, layer, threshold)
        mask = layer.relevance(threshold=threshold)
    mask = mask.detach()
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(
            "compact: `module` must have binary masks (`binarize_masks` folds other "
            f"values into the weights), got another on `{name}` ({layer._get_name()})"
        )
    return layer.weight, mask.bool()


def _as_csr(unit, real, max_density):
    """Whether the linear ``unit`` (weight's real part ``real``) is stored as CSR."""
    if max_density is not None:
        return unit.density() <= max_density
    return _csr_pays(real.shape, unit.density(), isinstance(unit.weight, Cplx), real.device)


def _nonzero(weight):
    parts = _parts(weight)
    return torch.stack([part != 0 for part in parts]).any(0)


def _rebuild(unit, max_density):
    """The inference module computing what ``unit`` holds."""
    layer, family, weight, bias = unit.layer, unit.family, unit.weight, unit.bias
    real = _parts(weight)[0]
    if family.spatial == 0 and not real.is_complex() and _as_csr(unit, real, max_density):
        if isinstance(weight, Cplx):
            return CplxSparseLinear(weight, unit.mask, bias)
        return SparseLinear(weight, bias)
    kwargs = family.init_kwargs(layer)
    if unit.shrunk:
        kwargs.update(unit.sizes())
    with warnings.catch_warnings():
        # a layer whose features all went has zero-element weights, which
        # torch's initialisation, run on the meta device here, warns about
        warnings.filterwarnings("ignore", "Initializing zero-element tensors is a no-op")
        module = torch.nn.utils.skip_init(
            family.dense, **kwargs, bias=bias is not None, device=real.device, dtype=real.dtype
        )
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None:
            target = getattr(module, name)
            for part, source in zip(_parts(target), _parts(value)):
                part.copy_(source)
    return module
