r"""Quantized twins: integer weights at a bit width, with one scale per output channel.

The quantized twin of a layer (made by the table of kinds for every family,
real and complex, and for a user's own layer) stores its weight as a
symmetric fixed-point number per output channel :math:`c`:

.. math::

    q = \operatorname{round}(w / s_c), \qquad |q| \le 2^{b-1} - 1, \qquad
    s_c = \max_{w \in c} |w| \,/\, (2^{b-1} - 1),

so that zero is exact (a pruned weight stays pruned and costs no value) and
the largest weight of each channel is represented exactly. A complex weight
is quantized in Cartesian form: its real and imaginary parts share the
channel's format (one scale, the largest of both parts' magnitudes), which
is what a fixed-point complex multiply-accumulate computes on; a polar
(modulus and phase) format would need a sine and cosine per weight at
inference. No zero point is stored: the weights of a trained layer are
centred on zero, and an offset would cost a subtraction per product and
break the exact zero of pruned weights.

The stored state (``state_dict``) is what a deployed model needs, at its
width: ``weight_values``, the codes :math:`q + 2^{b-1} - 1` packed at ``b``
bits each, ``weight_index``, where they go, ``weight_scale`` and
``weight_bits`` (the width ``b``, one byte). Of three layouts the smallest
is stored: every code and no index (a dense weight); the nonzero codes and
a bitmap of one bit per entry; or the nonzero codes and their relative
indices, the distance from the previous one in ``k`` bits, distances
beyond :math:`2^k` taking filler entries of a zero code (Han, Mao & Dally,
Deep Compression, ICLR 2016), ``k`` chosen for the weight. The layer
decodes them once into the integer
weight ``weight_int`` (not saved) and computes with ``weight_int *
weight_scale``: in eval exactly what the dequantized weight computes, and
an exported graph holds the integer weight and the multiplication by the
scale. Activations stay in floating point.
"""

from __future__ import annotations

import copy
import math

import torch

from ...cplx import Cplx
from ...cplx._shared import check_int, check_positive_int
from .. import _families
from .._guards import keep_current, refuse_bad_entries
from ..modules._weighted import _KindMixin, _registered
from ..modules.parameter import CplxParameter
from ..utils.sparsity import SparsityStats, _named_counted
from ._channels import _parts
from .base import BaseMasked
from ._fixed_point import codes, output_axis
from .twins import Selection, _conversion_weight, _convert_model, _targets
from typing import Any, Iterator, Mapping, Optional, Tuple, Union, cast

__all__ = ["BaseQuantized", "quantize", "prepare_qat", "compressed_size", "named_compressed_size"]

# the widths a quantized weight may take: a sign and one magnitude bit at
# least, and no more than a float32 scale times an integer represents exactly
MIN_BITS, MAX_BITS = 2, 24
# the state a quantized layer saves in place of a weight (``weight_bits``, ...)
_STORED = ("bits", "scale", "index", "values")


def _check_bits(bits, where, name="bits"):
    bits = check_positive_int(bits, name, where)
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ValueError(f"{where}: `{name}` must be in [{MIN_BITS}, {MAX_BITS}], got {bits}")
    return bits


def _storage_dtype(bits):
    """The narrowest signed integer dtype that holds a code of ``bits`` bits."""
    return torch.int8 if bits <= 8 else torch.int16 if bits <= 16 else torch.int32


def _pack(codes, bits):
    """Non-negative integers below ``2**bits``, packed at ``bits`` bits each into bytes (LSB first)."""
    shifts = torch.arange(bits, device=codes.device)
    stream = ((codes.long().reshape(-1, 1) >> shifts) & 1).flatten()
    stream = torch.nn.functional.pad(stream, (0, -stream.numel() % 8))
    weights = 1 << torch.arange(8, device=codes.device)
    return (stream.view(-1, 8) * weights).sum(1).to(torch.uint8)


def _unpack(packed, bits, count):
    """The ``count`` integers of ``bits`` bits that :func:`_pack` packed into ``packed``."""
    shifts = torch.arange(8, device=packed.device)
    stream = ((packed.long().reshape(-1, 1) >> shifts) & 1).flatten()[: count * bits]
    return (stream.view(count, bits) << torch.arange(bits, device=packed.device)).sum(1)


def _packed_bytes(count, bits):
    return math.ceil(count * bits / 8)


def _encode(q, bits):
    """``(index, values)``: the integer weight ``q`` packed in the smallest of three layouts.

    Dense: every code, no index. Bitmap: the index is a byte 0 then one bit
    per entry, 1 where it is nonzero; the values the nonzero codes. Relative
    indices (Han et al., 2016): the index is a byte ``k``, the entry count in
    4 bytes, then the distance of each stored entry from the previous one
    (less one) in ``k`` bits; a distance beyond ``2**k`` takes filler
    entries of a zero code, each ``2**k`` ahead.
    """
    flat, offset = q.flatten().long(), 2 ** (bits - 1) - 1
    n = flat.numel()
    position = flat.nonzero().squeeze(1)
    gaps = torch.diff(position, prepend=position.new_full((1,), -1))
    # the bytes of each layout: None dense, 0 a bitmap, k relative indices of k bits
    sizes = {None: _packed_bytes(n, bits), 0: 1 + _packed_bytes(n, 1) + _packed_bytes(
        position.numel(), bits)}
    for k in range(1, 17):
        entries = int(((gaps - 1) // (1 << k)).sum()) + gaps.numel()
        sizes[k] = 5 + _packed_bytes(entries, k) + _packed_bytes(entries, bits)
    layout = min(sizes, key=lambda key: sizes[key])  # the first of the smallest: dense on a tie
    if layout is None:
        return flat.new_empty(0, dtype=torch.uint8), _pack(flat + offset, bits)
    if layout == 0:
        index = torch.cat([flat.new_zeros(1, dtype=torch.uint8), _pack(flat != 0, 1)])
        return index, _pack(flat[position] + offset, bits)
    return _relative(flat, position, gaps, layout, bits)


def _relative(flat, position, gaps, k, bits):
    """The relative-index layout of :func:`_encode` with distances of ``k`` bits."""
    offset, step = 2 ** (bits - 1) - 1, 1 << k
    fillers = (gaps - 1) // step
    last = torch.cumsum(fillers + 1, 0) - 1  # each nonzero's entry, after its fillers
    entries = int(last[-1]) + 1 if last.numel() else 0
    distance = flat.new_full((entries,), step - 1)
    stored = flat.new_full((entries,), offset)  # the fillers' code: a zero
    distance[last] = gaps - 1 - fillers * step
    stored[last] = flat[position] + offset
    header = torch.tensor([k, *entries.to_bytes(4, "little")], dtype=torch.uint8)
    return torch.cat([header, _pack(distance, k)]), _pack(stored, bits)


def _decode(index, values, bits, shape, name="weight"):
    """The integer tensor ``name`` of ``shape`` that :func:`_encode` packed; ``ValueError`` if it cannot be."""
    n, offset = math.prod(shape), 2 ** (bits - 1) - 1
    q = torch.zeros(n, dtype=torch.long)
    if index.numel() == 0:
        position = torch.arange(n)
    elif int(index[0]) == 0 and index.numel() == 1 + _packed_bytes(n, 1):
        position = _unpack(index[1:], 1, n).nonzero().squeeze(1)
    elif 1 <= int(index[0]) <= 16 and index.numel() >= 5:
        k, entries = int(index[0]), int.from_bytes(bytes(index[1:5].tolist()), "little")
        if index.numel() != 5 + _packed_bytes(entries, k):
            raise ValueError(f"`{name}_index` must hold {5 + _packed_bytes(entries, k)} bytes for"
                             f" {entries} distances of {k} bits, got {index.numel()}")
        position = torch.cumsum(_unpack(index[5:], k, entries) + 1, 0) - 1
        if position.numel() and int(position[-1]) >= n:
            raise ValueError(f"`{name}_index` reaches entry {int(position[-1])} of {n}")
    else:
        raise ValueError(f"`{name}_index` is none of the layouts: none, a bitmap, relative indices")
    count = position.numel()
    if values.numel() != _packed_bytes(count, bits):
        raise ValueError(f"`{name}_values` must hold {_packed_bytes(count, bits)} bytes for"
                         f" {count} values of {bits} bits, got {values.numel()}")
    integers = _unpack(values, bits, count) - offset
    if integers.numel() and int(integers.abs().max()) > offset:
        raise ValueError(f"`{name}_values` holds codes outside the {bits}-bit range")
    q[position] = integers
    return q.view(shape).to(_storage_dtype(bits))


def _stored(name):
    """The names of the buffers of the quantized tensor ``name`` in the ``state_dict``."""
    return tuple(f"{name}_{field}" for field in _STORED)


class BaseQuantized(_KindMixin, torch.nn.Module, SparsityStats):
    r"""What every quantized layer does: compute with an integer weight times a scale per channel.

    The quantized twin of a dense or masked layer (:func:`quantize`) takes its
    weight at conversion (a masked layer's times its mask), quantizes it as
    the module docstring says, and replaces the ``weight`` parameter by the
    stored integer state; ``layer.weight`` then reads the dequantized
    weight, a tensor (or a :class:`~cplxmodule.cplx.Cplx`) that no
    optimizer trains. With ``bias_bits`` the bias is quantized so too,
    with one scale for the layer; without, it and every other parameter
    stay in floating point. A quantized layer built directly,
    ``Twin(*args, bits=4)``, quantizes its initial weight.

    Parameters
    ----------
    *args, **kwargs
        The dense layer's arguments.
    bits : int, default 8
        The width of each weight's fixed-point code, its sign included,
        2 to 24.
    fraction : int, optional
        Store the weight in the fixed-point format of ``bits`` bits,
        ``fraction`` of them after the point (one scale, ``2**-fraction``,
        for the layer), rather than with one scale per output channel.
    bias_bits : int, optional
        The width of the bias's codes (one scale for the layer); ``None``
        keeps the bias in floating point.

    Attributes
    ----------
    weight_int : torch.Tensor
        The integer codes :math:`q`, of the weight's real shape (with a last
        dimension of 2, the real and imaginary parts, for a complex
        weight), in the narrowest integer dtype; a buffer left out of the
        ``state_dict``. ``bias_int`` likewise, with ``bias_bits``.
    weight_scale : torch.Tensor
        The scale of each output channel, shaped to broadcast against
        ``weight_int`` (the weight's dtype: it follows ``.half()``).

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear
    >>> layer = quantize(torch.nn.Sequential(CplxLinear(3, 2)), 4)[0]
    >>> layer.weight_int.shape, int(layer.weight_int.abs().max())
    (torch.Size([2, 3, 2]), 7)
    >>> sorted(layer.state_dict())
    ['bias.imag', 'bias.real', 'weight_bits', 'weight_index', 'weight_scale', 'weight_values']
    """

    __sparsity_ignore__ = _stored("weight") + _stored("bias")
    weight_bits: torch.Tensor
    weight_scale: torch.Tensor
    weight_int: torch.Tensor

    def __init__(
        self, *args: Any, bits: int = 8, fraction: Optional[int] = None,
        bias_bits: Optional[int] = None, **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._quantize_all(bits, fraction, bias_bits)

    def _attach_kind(
        self, bits: int = 8, fraction: Optional[int] = None, bias_bits: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        super()._attach_kind(**kwargs)
        self._quantize_all(bits, fraction, bias_bits)

    def _quantize_all(self, bits, fraction, bias_bits):
        where = type(self).__name__
        bits = _check_bits(bits, where)
        if bias_bits is not None:
            bias_bits = _check_bits(bias_bits, where, "bias_bits")
        with torch.no_grad():
            weight = _registered(self, "weight")
            self._quantize("weight", bits, *codes(weight, bits, output_axis(self), fraction))
            bias = _registered(self, "bias")
            if bias_bits is not None and bias is not None:
                self._quantize("bias", bias_bits, *codes(bias, bias_bits, None))

    def _quantized(self):
        """The names of the quantized tensors, ``weight`` first."""
        return [name for name in ("weight", "bias") if f"{name}_int" in self._buffers]

    def _detach_kind(self) -> None:
        super()._detach_kind()
        for name in self._quantized():
            value = getattr(self, name)
            for buffer in (*_stored(name), f"{name}_int"):
                delattr(self, buffer)
            parameter = CplxParameter(value) if isinstance(value, Cplx) else torch.nn.Parameter(value)
            # past the read-only property, as the dense layer registered it
            torch.nn.Module.__setattr__(self, name, parameter)

    @property
    def bits(self) -> int:
        """int: the width of the weight's codes, the sign included."""
        return int(self.weight_bits)

    @property
    def weight(self) -> Union[torch.Tensor, Cplx]:
        """The dequantized weight, ``weight_int * weight_scale``."""
        return self._dequantized("weight")

    @property
    def bias(self) -> Union[torch.Tensor, Cplx, None]:
        """The bias: dequantized, ``bias_int * bias_scale``, with ``bias_bits``."""
        return self._dequantized("bias")

    def _dequantized(self, name):
        buffers = self.__dict__["_buffers"]
        if f"{name}_int" not in buffers:
            # the dense layer's own parameter (its ``__init__`` building it, a
            # floating-point bias), which Module.__getattr__ finds once this raises
            raise AttributeError(name)
        scale = buffers[f"{name}_scale"]
        real = buffers[f"{name}_int"].to(scale.dtype) * scale
        return Cplx(real[..., 0], real[..., 1]) if self._family.complex else real

    def _quantize(self, name, bits, q, scale):
        delattr(self, name)
        self._store(name, q.to(_storage_dtype(bits)), scale, bits)

    def _store(self, name, q, scale, bits):
        device = q.device
        if device.type == "meta":
            # no values to pack: the dense layout's sizes, as ``to_empty`` expects
            index = q.new_empty(0, dtype=torch.uint8)
            values = q.new_empty(_packed_bytes(q.numel(), bits), dtype=torch.uint8)
        else:
            index, values = _encode(q.cpu(), bits)
        width = torch.tensor(bits, dtype=torch.uint8, device=device)
        for buffer, value in zip(_stored(name), (width, scale, index.to(device), values.to(device))):
            self.register_buffer(buffer, value)
        self.register_buffer(f"{name}_int", q, persistent=False)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        loaded = {}
        try:
            for name in self._quantized():
                found = self._decoded(name, state_dict, prefix)
                if found is not None:
                    loaded[name] = found
        except (TypeError, ValueError, RuntimeError) as e:
            error_msgs.append(f"While loading the quantized weights of {prefix or 'the layer'!r}: {e}")
            keep_current(self, state_dict, prefix)
            return
        unchecked = tuple(f"{name}_{field}" for name in loaded for field in ("index", "values", "scale"))
        if refuse_bad_entries(self, state_dict, prefix, error_msgs, unchecked_shapes=unchecked):
            return
        # torch's loader would copy them into the current buffers, whose
        # packed sizes differ: out of its sight, registered afresh below
        keys = [prefix + key for name in loaded for key in _stored(name)]
        for key in keys:
            del state_dict[key]
        n_errors = len(error_msgs)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        missing_keys[:] = [key for key in missing_keys if key not in keys]
        if len(error_msgs) == n_errors:
            for name, (q, scale, bits) in loaded.items():
                self._store(name, q, scale, bits)

    def _decoded(self, name, state_dict, prefix):
        """``(q, scale, bits)`` of the tensor ``name`` in ``state_dict``, checked; ``None`` if absent."""
        keys = [prefix + key for key in _stored(name)]
        present = [key in state_dict for key in keys]
        if not any(present):
            return None  # torch's loader reports them missing
        if not all(present):
            missing = [key for key, found in zip(keys, present) if not found]
            raise ValueError(f"a quantized {name} needs all of {list(_stored(name))}, missing {missing}")
        width, scale, index, values = (state_dict[key] for key in keys)
        bits = _check_bits(int(width), "the state_dict", f"{name}_bits")
        current, current_scale = self._buffer(f"{name}_int"), self._buffer(f"{name}_scale")
        q = _decode(index, values, bits, current.shape, name).to(current.device)
        shapes = (tuple(current_scale.shape), (1,) * q.dim())
        if tuple(scale.shape) not in shapes:
            raise ValueError(f"`{name}_scale` must have shape {shapes[0]} (a scale per"
                             f" channel) or {shapes[1]}, got {tuple(scale.shape)}")
        return q, scale.to(current_scale.dtype).to(current.device), bits

    def _buffer(self, name: str) -> torch.Tensor:
        # registered by ``_store``, never None
        return cast(torch.Tensor, self._buffers[name])

    def sparsity(self, **kwargs: Any) -> list:
        """Nothing: the figures of sparsity are the masked model's; see :func:`compressed_size`."""
        return []

    def extra_repr(self) -> str:
        text = f"{super().extra_repr()}, bits={self.bits}"
        scale = float(self.weight_scale) if self.weight_scale.numel() == 1 else 0.0
        if scale > 0 and math.log2(scale).is_integer():
            text += f", fraction={-int(math.log2(scale))}"
        if "bias_int" in self._buffers:
            text += f", bias_bits={int(self._buffer('bias_bits'))}"
        return text


def quantize(
    model: torch.nn.Module,
    bits: Union[int, Mapping[str, Union[int, Tuple[int, int]]], None] = None,
    *,
    layers: Selection = None,
    exclude: Selection = None,
    bias_bits: Optional[int] = None,
) -> torch.nn.Module:
    """A copy of ``model`` whose layers with a weight are quantized twins (see :class:`BaseQuantized`).

    Every dense or masked layer of a family (linear, bilinear, convolutions,
    real and complex, the projections of the recurrent and attention
    layers, a user's own layer) becomes its quantized twin, its weight (a
    masked layer's times its mask) quantized to ``bits`` with one scale per
    output channel, or to a fixed-point format of its own; what
    :func:`convert_layers` carries over (hooks, modes, the
    ``requires_grad`` of the bias) carries over. Quantize a compacted
    model to deploy it, ``quantize(compact(model, max_density=0.0))``: a
    pruned weight stays an exact zero and costs at most a bit of the index (a
    layer that :func:`compact` made CSR is no family layer, and stays
    floating point).

    The quantized model exports as any other (:func:`torch.export.export`,
    both ONNX exporters), its graph dequantizing the integer weights (a
    cast and a product by the scale). ONNX keeps them integers with
    ``torch.onnx.export(..., dynamo=True, optimize=False)``; the
    optimizer, and the TorchScript exporter's constant folding, fold them
    into floating-point weights, which compute the same.

    Parameters
    ----------
    model : torch.nn.Module
    bits : int, mapping, or None
        The width of every weight (one scale per output channel), or a
        mapping of each layer's name in ``model`` to its width or to a
        fixed-point format ``(bits, fraction)``: the weight is then stored
        as integers times ``2**-fraction``, one scale for the layer (a
        shift on a fixed-point device), as
        :func:`~cplxmodule.nn.relevance.named_bit_precision` gives the
        formats (``dict(named_bit_precision(model, threshold=3.0))``) and
        :func:`~cplxmodule.nn.relevance.bit_precision` the widths. A
        mapping must name every layer to quantize. A width of 0 (a layer
        without surviving weights, to ``bit_precision``) is 2. By default,
        each masked layer's format of training (:func:`prepare_qat`), else
        8 bits; :func:`compact` makes dense layers, which hold none: pass
        the same ``bits`` and ``bias_bits`` to quantize a compacted model.
    layers, exclude : optional
        Which layers to quantize, as for :func:`convert_layers`.
    bias_bits : int, optional
        Quantize the biases too, to this width with one scale per layer
        (a bias is added once per output, so one scale serves it; 16 bits
        cost a float32 bias half its bytes); ``None`` keeps them in
        floating point; by default, each masked layer's width of training
        (:func:`prepare_qat`), if any.

    Returns
    -------
    torch.nn.Module
        The quantized copy; ``model`` is not changed.

    Raises
    ------
    ValueError
        If a width is outside 2 to 24, naming it, or if ``bits`` is a
        mapping that misses a layer to quantize or names a module that is
        none (both listed).

    Examples
    --------
    >>> from cplxmodule.nn import CplxLinear
    >>> model = torch.nn.Sequential(CplxLinear(8, 4), CplxLinear(4, 2))
    >>> small = quantize(model, {"0": 6, "1": (8, 7)})
    >>> small[1]
    CplxLinearQuantized(
      in_features=4, out_features=2, bias=True, bits=8, fraction=7
      (bias): CplxParameter(size=(2,), dtype=torch.float32)
    )
    >>> compressed_size(small) < compressed_size(model)
    True
    """
    where = "quantize"
    if bias_bits is not None:
        bias_bits = _check_bits(bias_bits, where, "bias_bits")
    if isinstance(bits, Mapping):
        formats = {name: _format(value, where, f"bits[{name!r}]") for name, value in bits.items()}
        _check_named(model, formats, layers, exclude, where)

        def options(name):
            return {**formats[name], "bias_bits": bias_bits}
    elif bits is None:
        def options(name):
            layer = model.get_submodule(name)
            return {"bits": getattr(layer, "training_bits", None) or 8,
                    "fraction": getattr(layer, "training_fraction", None),
                    "bias_bits": bias_bits or getattr(layer, "training_bias_bits", None)}
    else:
        width = _check_bits(bits, where)

        def options(name):
            return {"bits": width, "bias_bits": bias_bits}
    return _convert_model(model, "quantized", where, layers, exclude, options=options)


def _format(value, where, name):
    """The quantized twin's arguments for a width or a ``(bits, fraction)`` pair of ``bits``."""
    bits, fraction = value if isinstance(value, tuple) else (value, None)
    # 0 is bit_precision's width of a layer with no surviving weight: all its
    # codes are zero, at the narrowest width
    bits = MIN_BITS if bits == 0 else _check_bits(bits, where, name)
    if fraction is not None:
        fraction = check_int(fraction, f"{name}'s fraction", where)
    return {"bits": bits, "fraction": fraction}


def prepare_qat(
    model: torch.nn.Module, bits: Union[int, Mapping[str, Union[int, Tuple[int, int]]], None] = 8,
    *, bias_bits: Optional[int] = None, inplace: bool = False,
) -> torch.nn.Module:
    """``model`` whose masked layers train with the quantizer in the loop (quantization-aware training).

    Each masked layer computes with its masked weight rounded to the
    fixed point that :func:`quantize` stores at ``bits``, one scale per
    output channel, and passes the gradient straight through the rounding
    (Bengio et al., 2013), as if it were the identity: fine-tuning then
    recovers the accuracy lost to the width, as masked fine-tuning recovers
    the accuracy lost to pruning. The format is the layer's
    :attr:`~BaseMasked.training_bits` (and ``training_fraction``, and the
    bias's ``training_bias_bits``); :func:`quantize` takes it (with
    ``bits=None``), and then computes in eval what the fine-tuned model
    computed.

    Parameters
    ----------
    model : torch.nn.Module
        A model with masked layers (:func:`to_masked`).
    bits : int, mapping, or None, default 8
        The width of every masked layer (one scale per output channel), or
        a mapping of the names of masked layers in ``model`` to their width
        or fixed-point format ``(bits, fraction)``, as for :func:`quantize`;
        ``None`` trains in floating point again.
    bias_bits : int, optional
        Round the biases too, to this width with one scale per layer, as
        ``quantize(..., bias_bits=bias_bits)`` stores them.
    inplace : bool, default False
        Change ``model`` itself rather than a copy.

    Returns
    -------
    torch.nn.Module

    Raises
    ------
    ValueError
        If ``model`` has no masked layer, if a width is outside 2 to 24, or
        if a mapping names a module that is no masked layer (all named).

    Examples
    --------
    >>> from cplxmodule.nn.masked import CplxLinearMasked
    >>> model = torch.nn.Sequential(CplxLinearMasked(8, 4))
    >>> model[0].mask = torch.ones(4, 8)
    >>> qat = prepare_qat(model, 4)
    >>> qat[0].training_bits, model[0].training_bits
    (4, None)
    >>> int(quantize(qat)[0].bits)
    4
    """
    where = "prepare_qat"
    names = [name for name, layer in model.named_modules() if isinstance(layer, BaseMasked)]
    if not names:
        raise ValueError(f"{where}: `model` must have masked layers (to_masked), found none")
    if isinstance(bits, Mapping):
        unknown = sorted(set(bits) - set(names))
        if unknown:
            raise ValueError(f"{where}: `bits` must name masked layers of `model`, got {unknown}")
        formats = {name: _format(value, where, f"bits[{name!r}]") for name, value in bits.items()}
    elif bits is None:
        formats = dict.fromkeys(names, {"bits": None, "fraction": None})
    else:
        formats = dict.fromkeys(names, {"bits": _check_bits(bits, where), "fraction": None})
    if bias_bits is not None:
        bias_bits = _check_bits(bias_bits, where, "bias_bits")
    target = model if inplace else copy.deepcopy(model)
    for name, form in formats.items():
        layer = cast(BaseMasked, target.get_submodule(name))
        layer.training_bits, layer.training_fraction = form["bits"], form["fraction"]
        layer.training_bias_bits = None if form["bits"] is None else bias_bits
    return target


def _check_named(model, per_layer, layers, exclude, where):
    """Refuse a per-layer mapping of widths that misses a layer to quantize or names a non-layer."""
    targets = set(_targets(model, "quantized", where, layers, exclude))
    missing, unknown = sorted(targets - set(per_layer)), sorted(set(per_layer) - targets)
    if missing or unknown:
        raise ValueError(
            f"{where}: `bits` must name every layer to quantize and nothing else; missing"
            f" {missing}, not a layer to quantize {unknown}"
        )


def named_compressed_size(model: torch.nn.Module, prefix: str = "") -> Iterator[Tuple[str, int]]:
    """Iterate over ``(name, bytes)`` of every tensor a deployed ``model`` stores.

    Counted as a deployed model stores them:

    - a quantized layer's weight as it saves it, at its width (the packed
      codes, their index, the scales, one byte for the width);
    - the weight of a masked or Bayesian layer as it computes in eval
      (a mask folded in, a posterior's mean), in floating point, its zeros
      left out behind a bitmap of one bit per entry where that is smaller;
      the mask or the variances not at all (folded in, or unused in eval);
    - every other parameter and persistent buffer at its dtype.

    A tensor shared by several layers counts once. The sum is
    :func:`compressed_size`.

    Yields
    ------
    name : str
        ``<layer>.weight`` for a masked or Bayesian weight, else the name
        in the ``state_dict``.
    size : int
        Bytes.
    """
    counted: set[int] = set()  # the weights of the masked and Bayesian layers, counted as they compute
    for module_name, module in model.named_modules(prefix=prefix):
        dot = f"{module_name}." if module_name else ""
        if isinstance(module, BaseQuantized):
            # its stored state, which sparsity figures leave out (__sparsity_ignore__)
            for name in module._quantized():
                for key in _stored(name):
                    yield f"{dot}{key}", _bytes(module._buffer(key), sparse=False)
        elif isinstance(module, SparsityStats) and _families.plain_class(type(module)) is not None:
            counted.update(id(part) for part in _parts(_registered(module, "weight")))
            weight = _conversion_weight(module)
            yield f"{dot}weight", sum(_bytes(part, sparse=True) for part in _parts(weight))
    # the model's other tensors, as sparsity figures count them: each once,
    # no mask, variance or non-persistent buffer
    for kind in ("_parameters", "_buffers"):
        for name, tensor in _named_counted(model, prefix, kind):
            if id(tensor) not in counted:
                yield name, _bytes(tensor, sparse=False)


def _bytes(tensor, sparse):
    """The bytes of ``tensor``; if ``sparse``, of its nonzeros and a bitmap where that is smaller."""
    dense = tensor.numel() * tensor.element_size()
    if not sparse:
        return dense
    nnz = int(torch.count_nonzero(tensor))
    return min(dense, _packed_bytes(tensor.numel(), 1) + nnz * tensor.element_size())


def compressed_size(model: torch.nn.Module) -> int:
    """The bytes a deployed ``model`` stores: the sum of :func:`named_compressed_size`.

    For a quantized model this is the size of its ``state_dict``'s tensors
    (what ``torch.save`` writes, but for the container's own overhead).
    """
    return sum(size for _, size in named_compressed_size(model))
