"""Complex parameters: a pair of real :class:`torch.nn.Parameter`."""

from __future__ import annotations

import itertools

import torch

from ...cplx import Cplx
from ...cplx._dtypes import real_dtype
from ...cplx._shared import check_operand
from ...cplx._typing import CplxLike

__all__ = ["CplxParameter"]


class _ModuleAttribute:
    """Hide an attribute inherited from :class:`Cplx` behind ``nn.Module``'s lookup.

    :class:`Cplx` defines ``real`` and ``imag`` as read-only properties, which
    would shadow the registered parameters and refuse ``setattr`` (torch's
    ``replicate`` sets plain tensors on replicas).  This non-data descriptor
    yields to the instance ``__dict__`` and otherwise resolves the name as
    :meth:`torch.nn.Module.__getattr__` does: parameters, then buffers.
    """

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        # the registered parameter, read directly: every complex product
        # reads both parts, and ``Module.__getattr__`` costs more than that
        part = instance.__dict__.get("_parameters", {}).get(self.name)
        if part is not None:
            return part
        return torch.nn.Module.__getattr__(instance, self.name)


class CplxParameter(torch.nn.Module, Cplx):
    r"""A complex parameter: a module holding two real parameters that is a :class:`Cplx`.

    ``CplxParameter(z)`` registers ``z.real`` and ``z.imag`` as the
    :class:`torch.nn.Parameter` attributes ``real`` and ``imag``, so the
    state_dict keys of ``layer.weight = CplxParameter(z)`` are
    ``weight.real`` and ``weight.imag``, exactly as in the published
    cplxmodule, and ``named_parameters()`` yields the same names.  The object
    is at the same time a :class:`Cplx` whose parts *are* these parameters:
    ``layer.weight`` can be used anywhere a :class:`Cplx` is expected, and
    ``layer.weight.real.uniform_()`` (under ``torch.no_grad()``) initialises
    the parameter in place.

    Parameters
    ----------
    cplx : Cplx, torch.Tensor or object with tensor ``.real`` and ``.imag``
        The initial value. A tensor of torch's complex dtype, or any object
        whose ``.real`` and ``.imag`` are real tensors of one shape,
        supplies both parts; a real tensor is the real part (the imaginary
        part is zero).  The parts are registered as given (views, no copy),
        like :class:`torch.nn.Parameter`.
    requires_grad : bool, default True
        Whether the parts require gradients.

    Raises
    ------
    TypeError
        If ``cplx`` is none of the above.

    Notes
    -----
    Every torch traversal (``.to()``, ``state_dict``, optimizers,
    ``replicate``, ``deepcopy``, pickle, :func:`torch.func.functional_call`)
    sees an ordinary module with two parameters, and the :class:`Cplx`
    methods read the *current* parameters on every access (why it is built
    so: :doc:`/guides/maintainers`).

    Where :class:`Cplx` and :class:`torch.nn.Module` share a method name, the
    module wins for ``apply`` (so ``model.apply(fn)`` recurses as usual),
    ``requires_grad_`` (same meaning), ``__repr__`` and pickling; the
    value semantics of :class:`Cplx` win for ``to``, ``cpu``, ``cuda``,
    ``half``, ``float`` and ``double``, which return a new :class:`Cplx` and
    leave the parameter alone, as :meth:`torch.Tensor.to` does for a
    :class:`torch.nn.Parameter`.  Move the owning layer to move the
    parameter.  The module's other in-place conversions (``bfloat16``,
    ``type``, ``xpu``, ``ipu``, ``mtia``, ``to_empty``) would convert this
    parameter alone and leave the rest of the layer as it was, so they raise
    ``RuntimeError``:
    convert the owning layer instead (its conversions reach the parts
    through ``_apply``, as for any parameter).

    Loading a state_dict that holds only one of the two parts is an error
    (under ``strict`` the other part is also reported missing), and then
    neither part is changed.  In a layer derived from :class:`CplxToCplx`,
    :class:`BaseRealToCplx` or :class:`BaseCplxToReal`, a tensor under
    ``<name>`` instead of the two parts is split into them: a real one is
    promoted with a zero imaginary part, so a checkpoint of a real layer
    loads into its complex twin, and a native complex one (a checkpoint of
    torch's complex layers) gives both parts; if any complex parameter of
    the layer cannot be loaded, none of the layer's state is changed.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn import CplxToCplx
    >>> class Scale(CplxToCplx):
    ...     def __init__(self, n):
    ...         super().__init__()
    ...         self.weight = CplxParameter(cplx.Cplx.ones(n))
    ...     def forward(self, input):
    ...         return input * self.weight
    >>> sorted(Scale(3).state_dict())
    ['weight.imag', 'weight.real']
    """

    real = _ModuleAttribute()
    imag = _ModuleAttribute()

    def __init__(self, cplx: CplxLike, requires_grad: bool = True) -> None:
        cplx = Cplx(check_operand(cplx, "cplx", where="CplxParameter"))
        torch.nn.Module.__init__(self)
        self.real = torch.nn.Parameter(cplx.real, requires_grad=requires_grad)
        self.imag = torch.nn.Parameter(cplx.imag, requires_grad=requires_grad)

    # The Cplx methods read the parts through these slots.
    @property
    def _real(self):
        return self.real

    @property
    def _imag(self):
        return self.imag

    @classmethod
    def _full(cls, *args):
        return cls(Cplx._full(*args))

    @property
    def data(self):
        """Cplx: the value without autograd history, as published (read-only).

        A :class:`Cplx` of the parts' ``.data``, sharing their storage;
        ``x.to(layer.weight.data.dtype)`` casts an input to the parts' dtype.
        """
        return Cplx(self.real.data, self.imag.data)

    # The read-only mapping of the published package's ParameterDict (whose
    # mutators would leave a complex parameter with one part, or three).
    def keys(self):
        """The names of the parts, ``"real"`` and ``"imag"``."""
        return self._parameters.keys()

    def values(self):
        """The two parts, :class:`torch.nn.Parameter`."""
        return self._parameters.values()

    def items(self):
        """``(name, part)`` of the two parts."""
        return self._parameters.items()

    def get(self, key, default=None):
        """The part named ``key`` (``"real"`` or ``"imag"``), else ``default``."""
        return self._parameters.get(key, default)

    def __getitem__(self, key):
        # ``weight["real"]`` as published; any other key indexes the value
        if isinstance(key, str):
            return self._parameters[key]
        return Cplx.__getitem__(self, key)

    # The module's machinery, not the value's: printing, pickling (by state,
    # not as a plain Cplx) and the recursive ``apply`` of ``model.apply(fn)``.
    __repr__ = torch.nn.Module.__repr__
    __reduce__ = object.__reduce__
    apply = torch.nn.Module.apply
    requires_grad_ = torch.nn.Module.requires_grad_

    # The value's moves and casts, as ``Parameter.to`` and ``Parameter.double``
    # return a new tensor and leave the parameter alone; the owning layer's
    # ``.to()`` and ``.double()`` convert the parameter.
    to = Cplx.to
    cpu = Cplx.cpu
    cuda = Cplx.cuda
    half = Cplx.half
    float = Cplx.float
    double = Cplx.double

    def __bool__(self):
        # A module is always truthy; ``Cplx.__len__`` would otherwise decide.
        return True

    # The module's other in-place conversions would convert this parameter
    # alone (``layer.weight.type(...)`` leaving the bias as it was), while the
    # value moves above return copies: refuse them and point to the layer.
    def _convert_in_place(self, *args, **kwargs):
        raise RuntimeError(
            "CplxParameter: converting a complex parameter in place converts it "
            "alone; convert the owning layer (`layer.double()`, `layer.to(...)`), "
            "or use `.to(...)` on the parameter for a converted copy"
        )

    bfloat16 = type = _convert_in_place
    xpu = ipu = mtia = to_empty = _convert_in_place

    def extra_repr(self):
        return f"size={tuple(self.shape)}, dtype={self.dtype}"

    def _apply(self, fn, recurse=True):
        _refuse_complex_cast(self, fn)
        return super()._apply(fn, recurse)

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
    ):
        # a tensor under the parameter's own name: loaded on its own
        # (``par.load_state_dict({"": t})``) or in a complex layer, which
        # splits it before its children are loaded
        _split_whole(state_dict, prefix[:-1])
        errors, missing = self._part_errors(state_dict, prefix)
        if errors:
            error_msgs.extend(errors)
            missing_keys.extend(missing)
            if strict:
                unexpected_keys.extend(_redundant_keys(state_dict, prefix))
            return
        super()._load_from_state_dict(
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )

    def _part_errors(self, state_dict, prefix):
        """``(errors, missing keys)`` that forbid loading the parts from ``state_dict``.

        Both parts must be present, or neither, and of the parameters' shapes,
        and nothing else under ``prefix``; otherwise neither is loaded.
        """
        redundant = _redundant_keys(state_dict, prefix)
        if redundant:
            # the published package's words, which code may match on
            message = (
                f"Complex parameter disallows redundant key(s) in state_dict: {redundant};"
                " it holds only `.real` and `.imag`, and neither part was loaded"
            )
            return [message], []
        keys = [prefix + "real", prefix + "imag"]
        present = [key for key in keys if key in state_dict]
        if len(present) == 1:
            (absent,) = set(keys) - set(present)
            message = (
                "Complex parameter requires both `.real` and `.imag` parts: "
                f"found {present[0]!r} but not {absent!r}; neither part was loaded"
            )
            return [message], [absent]

        errors = []
        for key in present:
            value, param = state_dict[key], self._parameters[key[len(prefix):]]
            # (``param`` is never None: the parts are registered in __init__)
            if isinstance(value, torch.Tensor) and param is not None and value.shape != param.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{value.shape} from checkpoint, the shape in current model "
                    f"is {param.shape}."
                )
        return errors, []


def _redundant_keys(state_dict, prefix):
    """The keys under ``prefix`` that are neither part of a complex parameter."""
    parts = (prefix + "real", prefix + "imag")
    return [key for key in state_dict if key.startswith(prefix) and key not in parts]


def _split_whole(state_dict, key):
    """Replace a tensor under ``key`` by its two parts, unless they are there already.

    A native complex tensor gives its real and imaginary parts, a real one
    itself and zeros (a checkpoint of the real twin of a complex layer).
    """
    whole = state_dict.get(key)
    parts = (f"{key}.real", f"{key}.imag") if key else ("real", "imag")
    if isinstance(whole, torch.Tensor) and not any(p in state_dict for p in parts):
        del state_dict[key]
        whole = Cplx(whole)
        state_dict[parts[0]], state_dict[parts[1]] = whole.real, whole.imag


def _load_complex_children(module, state_dict, prefix, error_msgs, missing_keys):
    """Prepare ``state_dict`` for loading the :class:`CplxParameter` children of ``module``.

    Called by a complex layer's ``_load_from_state_dict`` before anything in
    it is loaded.  A tensor under ``<prefix><name>`` instead of the two parts
    is split into them (see :func:`_split_whole`).  Then the parts of every
    child are checked; if any is missing or misshapen, the errors and the
    truly missing parts are reported, and every entry of the layer that is
    present is replaced by the layer's current tensor (torch hands each
    module its own copy of the state_dict, and the children's copies are cut
    from it), so that the whole layer is left as it was, the very tensor
    objects included, rather than half-loaded.
    """
    # Relied on here (and by BaseMasked's loader, which pops its mask): torch's
    # load_state_dict hands each module its own copy of the state_dict and
    # cuts each child's copy from the parent's only *after* the parent's
    # _load_from_state_dict returns, so the entries split or replaced here are
    # exactly what the CplxParameter children then see.
    children = {
        prefix + name: child
        for name, child in module._modules.items()
        if isinstance(child, CplxParameter)
    }
    errors, missing = [], []
    for key, child in children.items():
        _split_whole(state_dict, key)
        child_errors, child_missing = child._part_errors(state_dict, key + ".")
        errors += child_errors
        missing += child_missing
        # reported here once: the child must not report them again
        for redundant in _redundant_keys(state_dict, key + "."):
            del state_dict[redundant]
    if not errors:
        return
    error_msgs.extend(errors)
    missing_keys.extend(missing)
    current = {prefix + name: t for name, t in module._parameters.items() if t is not None}
    current.update(
        {prefix + name: t for name, t in module._buffers.items() if t is not None}
    )
    for key, child in children.items():
        current.update({f"{key}.{name}": t for name, t in child._parameters.items()})
    for key, tensor in current.items():
        if key in state_dict or key in missing:
            state_dict[key] = tensor


def _refuse_complex_cast(module, fn):
    """Raise a ``TypeError`` if ``module._apply(fn)`` would make real parts complex.

    ``fn`` is tried on an empty tensor like one of the module's floating
    parameters or buffers, before anything is converted;
    ``model.to(torch.complex64)`` and ``model.type(torch.complex64)`` would
    otherwise cast the real and imaginary parts (and masks) to a complex
    dtype and break the layer.
    """
    tensors = itertools.chain(module.parameters(), module.buffers())
    probe = next((t for t in tensors if t.is_floating_point()), None)
    if probe is None or not fn(probe.new_empty(0)).is_complex():
        return
    raise TypeError(
        f"{module._get_name()}({module.extra_repr()}): a complex dtype would make the "
        "real and imaginary parts of its complex parameters (and its mask) complex, "
        "which breaks the layer. Cast to the parts' real dtype (torch.float32 for "
        "torch.complex64), or convert the model to torch's native complex layers "
        "with cplxmodule.nn.to_native."
    )


def _factory_kwargs(device, dtype):
    """``device``/``dtype`` factory kwargs, a complex dtype naming its real parts."""
    return {"device": device, "dtype": None if dtype is None else real_dtype(dtype)}
