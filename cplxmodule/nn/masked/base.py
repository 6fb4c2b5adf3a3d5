"""The masking base shared by every masked layer, and whole-model mask helpers."""

from __future__ import annotations

import inspect
import sys
import warnings

import torch

from ...cplx import Cplx
from ...cplx.tensor import _pair
from .. import cache
from .._families import twin_fields
from .._guards import keep_current, naming, non_finite, refuse_bad_entries
from ..cache import _cached_attr, _memo
from ..modules._weighted import _KindMixin, _registered
from ..modules.parameter import _refuse_complex_cast
from ..utils.sparsity import SparsityStats, _weight_counts
from ._fixed_point import fake_quantized, output_axis
from types import FrameType
from typing import Any, Callable, Iterator, Mapping, Optional

__all__ = [
    "BaseMasked",
    "MaskedWeightMixin",
    "is_sparse",
    "named_masks",
    "deploy_masks",
    "binarize_masks",
]

# Instance attribute marking a replica's mask stored before its weight was readable.
_UNSETTLED = "_mask_unsettled"


class _TwinSignature:
    """``inspect.signature`` of a masked class: the arguments ``__init__`` passes on.

    :meth:`BaseMasked.__init__` takes ``(*args, **kwargs)`` for the dense
    twin; this shows the twin's (or a subclass's own) ``__init__`` instead.
    """

    def __get__(self, instance, owner):
        if instance is not None or owner is BaseMasked:
            return None  # inspect then proceeds as usual
        init = next(
            c.__init__ for c in owner.__mro__ if "__init__" in vars(c) and c is not BaseMasked
        )
        return inspect.Signature(list(inspect.signature(init).parameters.values())[1:])


# the docstring of every masked twin of the package's families
_TWIN_DOC = """{What} with a fixed{real} sparsity mask on its weight.

    Computes what :class:`{twin}` computes, with ``weight * mask`` in
    place of ``weight``{parts}, and takes its arguments. The mask (see :class:`~cplxmodule.nn.masked.BaseMasked`)
    must be set before the first forward pass.

    Shape
    -----
    - Input and output: as for :class:`{twin}`.
    - ``mask``: the {weight} shape, or one that broadcasts to it.

    Examples
    --------
    >>> layer = {name}({arguments})
    >>> layer.mask = torch.ones(layer.weight.shape)
    >>> layer({inputs}).shape
    torch.Size([{output}])
    """


class BaseMasked(_KindMixin, torch.nn.Module, SparsityStats):
    r"""What every masked layer does: compute with its weight times a fixed mask.

    Every masked layer (:class:`LinearMasked`, :class:`CplxConv2dMasked`,
    ...) is its dense twin plus this base: it takes the twin's arguments,
    has the twin's state_dict keys plus ``mask``, and computes what the
    twin computes with ``weight * mask`` as the weight. What you do with one:

    - **Set the mask**: ``layer.mask = t``, any real tensor that broadcasts
      to the weight's real shape; a complex weight's mask applies to both
      parts. ``layer.mask = None`` removes it; a forward pass without a mask
      is an error.
    - **Convert a whole model**: :func:`to_masked` turns a dense or Bayesian
      model into its masked twin, with masks from
      :func:`~cplxmodule.nn.relevance.compute_ard_masks` or
      :func:`magnitude_masks`; :func:`deploy_masks` sets the masks of a
      model from a dictionary, :func:`named_masks` lists them.
    - **Fine-tune**: the masked entries of the weight get no gradient, so
      the layer trains as if they were not there.
    - **Count and deploy**: :func:`~cplxmodule.nn.utils.named_sparsity`
      counts what the masks remove; :func:`compact` builds an inference
      model without it, and :func:`binarize_masks` folds the masks into a
      state_dict for the dense model.

    :doc:`/guides/masking` shows each step, and :doc:`/guides/sparsifying`
    the whole pipeline. The Notes below are for writing a masked layer of
    your own and for what happens under devices, replication and loading.

    Attributes
    ----------
    mask : torch.Tensor or None
        A registered (persistent) buffer, ``None`` until set. Assigning
        ``layer.mask = t`` is the same as ``layer.mask_(t)``: ``t`` is
        detached, broadcast to the weight's real shape, converted to the
        weight's dtype and device and stored as a contiguous copy in a
        freshly registered buffer; ``layer.mask = None`` removes it.

    Notes
    -----
    **Writing a masked layer.** Put the base first: ``class M(BaseMasked, Dense)``.
    ``__init__`` is cooperative: it passes ``*args, **kwargs`` on to the
    dense twin first, so the weight exists, then registers the mask. The
    layer's ``forward`` is the dense twin's, with torch's signature
    (``input``; ``input1, input2``; ``input, output_size=None``), so
    ``torch.export`` and the ONNX exporters name its inputs as torch's: it
    checks the inputs (``_check_inputs``) and calls ``_weighted_forward``,
    which the base overrides to call the twin's entry point
    ``_dense_forward(*inputs, weight=self.weight_masked, bias=self.bias,
    **kwargs)``. Every dense layer of cplxmodule has both methods (the real
    masked layers use private twins of torch's layers that add them). A
    user class with its own ``forward`` may also put the base after a dense
    torch layer, ``class M(torch.nn.Linear, BaseMasked)``.

    **Device synchronisation.** The mask follows the weight whenever it is
    assigned, and module-wide moves (``.to()``, ``.half()``, ``to_empty()``)
    convert weight and mask together; nothing is converted in the forward
    pass. Every assignment registers a new buffer, so that the replicas of
    :func:`torch.nn.parallel.replicate` hold their own masks on their own
    devices (how: :doc:`/guides/maintainers`).

    Under :class:`~torch.nn.parallel.DistributedDataParallel`, set the masks
    before wrapping: DDP decides at construction whether the model has
    buffers to broadcast, and an unset mask (a ``None`` buffer) does not
    count. Masks re-assigned later are found and broadcast from rank 0 at
    every forward pass, as torch re-collects buffers each time.

    **Caching.** ``weight_masked`` multiplies the weight by the mask at
    every access, so a forward pass always sees the current weight and mask,
    whatever wrote into them (``.data``, DDP's buffer broadcast). To compute
    the product once and reuse it over several forward passes, run them
    inside :func:`cplxmodule.nn.cached`.

    **Loading and pickling.** ``load_state_dict`` sets, replaces or keeps
    the mask, and unsets it for ``{"mask": None}``, as published; under
    ``strict=True`` a state_dict without ``mask`` is reported as missing
    it, whether or not the layer has one. The mask is
    loaded by the method ``_load_from_state_dict``, not by a load hook, so
    a pickled masked layer holds no reference to a private function:
    ``torch.save(model)`` then ``torch.load(path, weights_only=True)``
    works inside ``torch.serialization.safe_globals(safe_globals(model))``,
    where :func:`cplxmodule.nn.safe_globals` lists the classes that the
    pickle of a model of that architecture names (its layers,
    :class:`~cplxmodule.nn.CplxParameter`, torch's containers) and nothing
    broader. ``weights_only=False`` loads it as any pickled module, only
    from a trusted source. Saving the ``state_dict`` needs neither.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> layer = LinearMasked(3, 2)
    >>> layer.mask = torch.tensor([1.0, 0.0, 1.0])  # broadcast to (2, 3)
    >>> layer.mask.shape
    torch.Size([2, 3])
    >>> layer(torch.randn(4, 3)).shape
    torch.Size([4, 2])
    """

    __signature__ = _TwinSignature()
    __sparsity_ignore__ = ("mask",)
    mask: Optional[torch.Tensor]
    #: the width the layer trains its weight at (see :func:`prepare_qat`), or None
    training_bits: Optional[int] = None
    #: the bits after the point of that fixed-point format, or None: a scale per channel
    training_fraction: Optional[int] = None
    #: the width the layer trains its bias at (one scale for the layer), or None
    training_bias_bits: Optional[int] = None

    @classmethod
    def _member_doc(cls, kind):
        fields = twin_fields(cls)
        is_complex = fields.pop("complex")
        return _TWIN_DOC.format(
            What=fields.pop("what"),
            real=" real" if is_complex else "",
            parts=" (the mask multiplies both parts)" if is_complex else "",
            **fields,
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register_buffer("mask", None)

    def _attach_kind(self, **kwargs):
        super()._attach_kind(**kwargs)
        self.register_buffer("mask", None)

    def _detach_kind(self):
        super()._detach_kind()
        del self.mask
        self.__dict__.pop(_UNSETTLED, None)
        for name in ("training_bits", "training_fraction", "training_bias_bits"):
            self.__dict__.pop(name, None)

    def _weighted_forward(self, *inputs, **kwargs):
        """The dense twin's forward pass with :attr:`weight_masked` as its weight.

        The dense twin's ``forward``, whose signature the layer keeps, checks
        the inputs and calls this with them and its keyword arguments (e.g.
        ``output_size=`` for a transposed convolution).

        Raises
        ------
        RuntimeError
            If the layer has no mask, naming its path in the model being
            called (its class, called on its own).
        """
        if _UNSETTLED in self.__dict__:
            self._settle_replica_mask()
        bias_bits = self.training_bias_bits
        if cache._ACTIVE or self.training_bits is not None or bias_bits is not None:
            weight, bias = self.weight_masked, _cached_attr(self, "bias")
            if bias_bits is not None and bias is not None:
                bias = fake_quantized(bias, bias_bits, None)
        else:
            # the hot path outside ``cached``: the weight_masked property's
            # work, without its layers of calls
            mask = self._buffers.get("mask")
            if mask is None:
                self._raise_no_mask()
            weight, bias = _masked(_registered(self, "weight"), mask), _registered(self, "bias")
        return self._dense_forward(*inputs, weight=weight, bias=bias, **kwargs)

    def __setattr__(self, name, value):
        # Users, ``replicate`` and old code all assign the mask by name:
        # every such assignment goes through the conversion.
        if name == "mask":
            self.mask_(value)
        else:
            super().__setattr__(name, value)

    @property
    def is_sparse(self):
        """bool: whether a mask is set."""
        return self.mask is not None

    def sparsity(self, *, hard=True, **kwargs):
        """``[(part, n_zeroed), ...]`` for the weight's real parameters, as published.

        Parameters
        ----------
        hard : bool, default True
            Count the entries whose mask is not positive; ``False`` counts
            the sum of ``1 - mask`` (a soft count for a mask of scores).
        **kwargs
            Accepted and ignored (e.g. the ``threshold`` of the Bayesian
            layers), so that one :func:`~cplxmodule.nn.utils.named_sparsity`
            call serves every layer.

        Returns
        -------
        list of (int, float)
            ``(id(parameter), count)`` per weight parameter (a complex
            weight's two parts), the published package's form;
            nothing is zeroed without a mask.
        """
        mask = self._buffers.get("mask")
        if mask is None:
            mask = torch.ones(())
        return _weight_counts(self, torch.le(mask, 0) if hard else 1 - mask)

    def mask_(self, mask):
        r"""Set, replace or remove the mask, in place.

        Parameters
        ----------
        mask : torch.Tensor or None
            A tensor that broadcasts to the weight's real shape, or ``None``
            to remove the mask.

        Returns
        -------
        self : BaseMasked

        Raises
        ------
        TypeError
            If ``mask`` is neither a tensor nor ``None``, or is complex.
        ValueError
            If ``mask`` has NaN or infinite values. Negative and non-binary
            values are allowed (relevance scores scale the weight).
        RuntimeError
            If ``mask`` does not broadcast to the weight's shape (the
            message ends with torch's own broadcasting message). The layer
            keeps its old mask in every case.
        """
        if mask is not None:
            mask = self._mask_like_weight(mask)
        self.register_buffer("mask", mask)
        return self

    @property
    def weight_masked(self):
        """torch.Tensor or Cplx: the weight multiplied by the mask.

        With :attr:`training_bits` set, rounded to the fixed point that
        :func:`quantize` stores, with the identity's gradient.

        Raises
        ------
        RuntimeError
            If the layer has no mask.
        """
        mask = self._buffers.get("mask")  # the hot path: skip Module.__getattr__
        if mask is None:
            self._raise_no_mask()
        bits = self.training_bits
        if bits is None:
            return _memo(self, "weight_masked", lambda: _masked(self.weight, mask))
        return _memo(self, "weight_masked", lambda: fake_quantized(
            _masked(self.weight, mask), bits, output_axis(self), self.training_fraction))

    def _eval_weight(self):
        """The weight a twin of another kind takes: the mask folded in (the weight, while unset).

        :func:`convert_layers` builds every twin of a masked layer from it,
        so that a pruned entry stays zero in the twin.
        """
        mask = self._buffers.get("mask")
        return self.weight if mask is None else _masked(self.weight, mask)

    def _raise_no_mask(self):
        # only on this error path is the layer looked up in its model
        name = _name_in_calling_model(self)
        where = type(self).__name__ if name is None else f"`{name}` ({type(self).__name__})"
        raise RuntimeError(
            f"{where} has no sparsity mask: set one with "
            "`layer.mask = ...` or `deploy_masks(...)`, or load a state_dict "
            "that has it"
        )

    def _mask_target(self):
        """The real tensor the mask takes its shape, dtype and device from.

        ``None`` on a replica whose weight ``replicate`` has not assigned yet
        (see the class Notes); any other failure to read the weight raises.
        """
        try:
            weight = self.weight
            return weight.real if isinstance(weight, Cplx) else weight
        except AttributeError:
            if not getattr(self, "_is_replica", False):
                raise
            return None

    def _settle_replica_mask(self):
        """Move a replica's mask next to its weight, now that it can be read.

        A complex weight lives in a child that ``replicate`` fills after the
        layer's buffers, so the mask it assigned was stored unchecked; the
        replica's first forward pass converts it once.
        """
        del self.__dict__[_UNSETTLED]
        mask = self._buffers.get("mask")
        if mask is not None:
            self.register_buffer("mask", self._mask_like_weight(mask))

    def _mask_like_weight(self, mask, target=None):
        """Validate ``mask`` and return the tensor to register as the mask.

        It takes its shape, dtype and device from ``target``, by default the
        weight's real tensor.
        """
        name = type(self).__name__
        if not isinstance(mask, torch.Tensor):
            raise TypeError(
                f"{name}: `mask` must be a torch.Tensor or None, "
                f"got {type(mask).__name__}"
            )
        mask = mask.detach()
        checked = not getattr(self, "_is_replica", False)
        if checked and mask.is_complex():
            raise TypeError(f"{name}: `mask` must be real, got dtype {mask.dtype}")
        target = self._mask_target() if target is None else target
        if target is None:
            converted = mask
            self.__dict__[_UNSETTLED] = True
        else:
            if mask.device.type == "meta" and target.device.type != "meta":
                raise ValueError(
                    f"{name}: `mask` must hold values, got a tensor on the meta device"
                    f" for a weight on {target.device}"
                )
            try:
                mask = torch.broadcast_to(mask, target.shape)
            except RuntimeError as e:
                raise RuntimeError(
                    f"{name}: `mask` must broadcast to the weight's"
                    f" shape, got a mask of shape {tuple(mask.shape)} that does not"
                    f" broadcast to {tuple(target.shape)}: {e}"
                ) from e
            converted = mask.to(
                device=target.device,
                dtype=target.dtype,
                memory_format=torch.contiguous_format,
            )
            # checked in the weight's dtype: 1e300 in float64 is finite, but
            # not once cast to float32
            if checked and non_finite(converted):
                raise ValueError(
                    f"{name}: `mask` must be finite in the weight's dtype {target.dtype},"
                    " got NaN or infinite values"
                )
        if converted is mask and checked:
            # nothing was copied: the layer must not share the caller's memory
            converted = mask.clone(memory_format=torch.contiguous_format)
        return converted

    def _apply(self, fn, recurse=True):
        _refuse_complex_cast(self, fn)
        return super()._apply(fn, recurse)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        # A method, not a load hook: a per-instance hook would be pickled
        # with the layer and keep ``torch.load(weights_only=True)`` of a
        # whole pickled model from allowlisting it.
        key = prefix + "mask"
        try:
            # validate now, so that a bad mask leaves the whole layer untouched;
            # ``None`` (a state_dict of an unmasked layer, as published) unsets it
            if state_dict.get(key) is not None:
                self._mask_like_weight(state_dict[key])
        except (TypeError, ValueError, RuntimeError) as e:
            error_msgs.append(f"While loading {key!r}: {e}")
            keep_current(self, state_dict, prefix)
            return
        if refuse_bad_entries(self, state_dict, prefix, error_msgs, unchecked_shapes=("mask",)):
            return
        if key not in state_dict:
            # strict loading reports the mask missing even when none is set
            # (torch's loader reports a set one itself); the mask is kept
            if self._buffers.get("mask") is None:
                missing_keys.append(key)
            return super()._load_from_state_dict(
                state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
            )
        # torch's loader would ``copy_`` into the current mask in place; take
        # the key out of its sight (torch hands ``_load_from_state_dict`` a
        # copy of the state_dict that it may modify) and register afresh.
        mask = state_dict.pop(key)
        n_errors = len(error_msgs)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        if key in missing_keys:
            missing_keys.remove(key)
        if len(error_msgs) == n_errors:  # a failed load leaves the layer as it was
            if mask is not None:
                target = self._loaded_weight(state_dict, prefix, local_metadata)
                mask = self._mask_like_weight(mask, target)
            self.register_buffer("mask", mask)

    def _loaded_weight(self, state_dict, prefix, local_metadata):
        """The real tensor the weight will be once loading ends.

        With ``assign=True`` the loaded tensor replaces the weight, with its
        own device and dtype; otherwise it is copied into the current one. A
        complex weight is a child module, loaded after this method returns,
        so its parts are read from the state_dict.
        """
        if local_metadata.get("assign_to_params_buffers", False):
            for key in (prefix + "weight.real", prefix + "weight"):
                if isinstance(state_dict.get(key), torch.Tensor):
                    return state_dict[key]
        return None


# the frames of ``Module.__call__``: their ``self`` is a module being called
_CALL_CODES = frozenset(
    getattr(torch.nn.Module, name).__code__ for name in ("_call_impl", "_wrapped_call_impl")
)


def _name_in_calling_model(layer):
    """The name of ``layer`` in the outermost module whose call is under way, or ``None``.

    Read from the Python stack, and only when an error is raised: the
    forward pass records nothing. ``None`` when the layer was called on its
    own, or is not a submodule of the outermost module called, and under
    compilation, which does not trace frames.
    """
    if torch.compiler.is_compiling():
        return None
    root: Optional[torch.nn.Module] = None
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        if frame.f_code in _CALL_CODES:
            module = frame.f_locals.get("self")
            if isinstance(module, torch.nn.Module):
                root = module
        frame = frame.f_back
    if root is None or root is layer:
        return None
    return next((name for name, m in root.named_modules() if m is layer), None)


def _masked(weight, mask):
    """``weight * mask``; a complex weight's parts each times the real mask, with no checks."""
    if isinstance(weight, Cplx):
        return _pair(weight.real * mask, weight.imag * mask)
    return weight * mask


def is_sparse(module: torch.nn.Module) -> bool:
    """Check whether ``module`` is a masked layer with a mask set.

    Parameters
    ----------
    module : torch.nn.Module

    Returns
    -------
    bool
        ``True`` if ``module`` is a :class:`BaseMasked` with a mask.
    """
    return isinstance(module, BaseMasked) and module.is_sparse


def named_masks(
    module: torch.nn.Module, prefix: str = "",
) -> Iterator[tuple[str, Optional[torch.Tensor]]]:
    """Iterate over the masked layers of ``module`` and their masks.

    Parameters
    ----------
    module : torch.nn.Module
        The model to walk, in the order of :meth:`torch.nn.Module.named_modules`.
    prefix : str, optional
        Prepended to every name.

    Yields
    ------
    name : str
        The masked layer's name in ``module`` (``""`` for ``module`` itself).
    mask : torch.Tensor or None
        Its mask, ``None`` when unset.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> model = torch.nn.Sequential(LinearMasked(3, 2), torch.nn.ReLU())
    >>> [name for name, mask in named_masks(model)]
    ['0']
    """
    for name, layer in module.named_modules(prefix=prefix):
        if isinstance(layer, BaseMasked):
            yield name, layer.mask


def deploy_masks(
    module: torch.nn.Module,
    *,
    state_dict: Optional[Mapping[str, Optional[torch.Tensor]]] = None,
    prefix: str = "",
    reset: bool = False,
    reduce_fn: Optional[Callable[..., Any]] = None,
    strict: bool = False,
) -> torch.nn.Module:
    """Set the masks of every masked layer of ``module`` from a dictionary.

    Parameters
    ----------
    module : torch.nn.Module
        The model whose masked layers get masks.
    state_dict : Mapping[str, torch.Tensor or None], optional
        Masks keyed ``<layer name>.mask`` (``mask`` for ``module`` itself),
        as in a state_dict or the output of
        :func:`~cplxmodule.nn.relevance.compute_ard_masks`; a ``None`` mask
        unsets the layer's. Other entries (weights) are ignored. ``None``
        deploys nothing. A layer used under several names (tied) may have
        a key under each, as in its model's state_dict, with one mask.
    prefix : str, optional
        Prefix of the layer names in ``state_dict``.
    reset : bool, default False
        Remove the mask of every masked layer that has no key; by default
        such layers keep their mask.
    reduce_fn : callable, optional
        Applied to each mask before it is set (e.g. ``lambda m: m > 0.5``).
    strict : bool, default False
        Raise if a ``...mask`` key matches no masked layer (a typo, or a
        layer name from another model); by default such keys are left out
        with a warning.

    Returns
    -------
    module : torch.nn.Module
        The same module, with masks set.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        If a mask is not a real tensor, finite in its weight's dtype, that
        broadcasts to its layer's weight (see :meth:`BaseMasked.mask_`; the
        message names its key), if a layer used under several names (tied)
        gets different masks under them, or, with ``strict``, if mask keys
        match no masked layer. Everything is checked before any mask is
        set, so on error no layer changes.

    Warns
    -----
    UserWarning
        Without ``strict``, naming the mask keys that match no masked layer.

    Examples
    --------
    >>> from cplxmodule.nn.masked import LinearMasked
    >>> model = torch.nn.Sequential(LinearMasked(3, 2), LinearMasked(2, 2))
    >>> _ = deploy_masks(model, state_dict={"0.mask": torch.ones(2, 3)})
    >>> model[0].is_sparse, model[1].is_sparse
    (True, False)
    >>> deploy_masks(model, state_dict={"2.mask": torch.ones(2, 2)}, strict=True)
    Traceback (most recent call last):
    ...
    ValueError: deploy_masks: `state_dict` must hold masks of masked layers of `module` only, got masks of no layer: ['2.mask']
    """
    return _deploy_masks(module, state_dict, prefix, reset, reduce_fn, strict, "deploy_masks",
                         "state_dict")


def _deploy_masks(module, state_dict, prefix, reset, reduce_fn, strict, where, argument):
    """:func:`deploy_masks`, its errors naming the helper ``where`` and its ``argument``."""
    if state_dict is None:
        return module
    # id(layer) -> (layer, key or None, mask)
    new_masks: dict[int, tuple[BaseMasked, Optional[str], Optional[torch.Tensor]]] = {}
    used = set()
    # every name of a layer used twice: the model's state_dict lists it under each
    for name, layer in module.named_modules(prefix=prefix, remove_duplicate=False):
        if not isinstance(layer, BaseMasked):
            continue
        key = f"{name}.mask" if name else "mask"
        if key not in state_dict:
            if reset:
                new_masks.setdefault(id(layer), (layer, None, None))
            continue
        used.add(key)
        mask = state_dict[key]
        if mask is not None:  # ``None`` unsets the mask, as published
            with naming(f"{where}: `{argument}[{key!r}]`"):
                mask = layer._mask_like_weight(mask if reduce_fn is None else reduce_fn(mask))
        _, earlier, earlier_mask = new_masks.get(id(layer), (None, None, None))
        if earlier is not None and not _same_mask(earlier_mask, mask):
            raise ValueError(
                f"{where}: `{argument}` must give a layer used under several names one mask,"
                f" got different masks under {earlier!r} and {key!r}"
            )
        new_masks[id(layer)] = (layer, key, mask)
    unused = [k for k in state_dict if (k == "mask" or k.endswith(".mask")) and k not in used]
    if unused:
        _refuse_or_warn(
            f"{where}: `{argument}` must hold masks of masked layers of `module`"
            f" only, got masks of no layer: {unused}", "left out", strict, stacklevel=4,
        )
    for layer, _, mask in new_masks.values():
        layer.register_buffer("mask", mask)
    return module


def _refuse_or_warn(message, fallback, strict, stacklevel):
    """Raise ``message`` under ``strict``; else warn it, saying what was done instead."""
    if strict:
        raise ValueError(message)
    warnings.warn(f"{message} ({fallback})", UserWarning, stacklevel=stacklevel)


def _same_mask(a, b):
    if a is None or b is None:
        return a is b
    return torch.equal(a, b)


def binarize_masks(
    state_dict: dict[str, torch.Tensor], masks: Mapping[str, torch.Tensor],
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    r"""Turn masks into 0/1 masks, folding their values into the weights.

    A mask with values other than 0 and 1 (e.g. a relevance score) scales
    the weight. This returns weights multiplied by their mask and masks
    replaced by ``mask != 0``, so that ``weight * mask`` is unchanged and
    the masks are binary.

    Parameters
    ----------
    state_dict : Mapping[str, torch.Tensor]
        A model's state_dict: weights under ``<layer>.weight``, complex ones
        under ``<layer>.weight.real`` and ``<layer>.weight.imag``.
    masks : Mapping[str, torch.Tensor]
        Masks keyed ``<layer>.mask``.

    Returns
    -------
    state_dict : dict
        A new dict: ``state_dict`` with each masked weight multiplied by its
        mask.
    masks : dict
        A new dict with the binary masks, in each mask's dtype.

    Raises
    ------
    KeyError
        If a mask key does not end with ``mask`` or has no weight in
        ``state_dict``.
    ValueError
        If a mask holds NaN or an infinity.

    Examples
    --------
    >>> state_dict = {"0.weight": torch.tensor([2.0, 3.0])}
    >>> state_dict, masks = binarize_masks(state_dict, {"0.mask": torch.tensor([0.5, 0.0])})
    >>> state_dict["0.weight"], masks["0.mask"]
    (tensor([1., 0.]), tensor([1., 0.]))
    """
    state_dict, binary = dict(state_dict), {}
    for name, mask in masks.items():
        if name != "mask" and not name.endswith(".mask"):
            raise KeyError(f"binarize_masks: `masks` keys must end with '.mask', got {name!r}")
        if non_finite(mask):
            # ``mask != 0`` would keep a NaN entry
            raise ValueError(
                f"binarize_masks: `masks[{name!r}]` must be finite, got NaN or infinite values"
            )
        layer = name[: -len("mask")]
        keys = [
            key
            for key in (f"{layer}weight", f"{layer}weight.real", f"{layer}weight.imag")
            if key in state_dict
        ]
        if not keys:
            raise KeyError(f"binarize_masks: `state_dict` must hold the weight of mask {name!r}")
        for key in keys:
            state_dict[key] = state_dict[key] * mask
        binary[name] = torch.ne(mask, 0).to(mask.dtype)
    return state_dict, binary


MaskedWeightMixin = BaseMasked
"""The published name of :class:`BaseMasked`, kept for code that imports it."""
