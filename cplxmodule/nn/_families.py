"""The table of layer families and the table of kinds, and the factory of twins.

A family is a dense layer class (``torch.nn.Linear``, ``CplxConv2d``, ...)
together with every layer class of this package that computes with the same
weight and takes the same constructor arguments: its masked, variational
dropout and ARD twins, the structured layers and the extensions' Bayesian
layers. Whatever needs to know "which dense layer is the twin of which,
built with which arguments" reads it here: :func:`~cplxmodule.nn.to_native`
and :func:`~cplxmodule.nn.from_native`,
:func:`~cplxmodule.nn.masked.convert_layers`,
:func:`~cplxmodule.nn.masked.compact`, the structured layers' channel
geometry and the Bayesian layers' docstrings.

Nothing is listed here: a dense layer declares its family in its class
statement (``class CplxLinear(..., family=Family(...))``) and every twin
its family and kind in its own (``class CplxLinearVD(..., family=CplxLinear,
kind="vd")``); the dense entry point's ``__init_subclass__``
(``cplxmodule.nn.modules._weighted``) records them. Membership is by exact
class: a user's subclass may compute anything in its own ``forward``, so it
belongs to no family (it inherits its base's geometry, not its membership).
:mod:`cplxmodule.nn` imports every module that declares twins, so the table
is complete whatever part of the package was imported first.

A *kind* is a row of the table of kinds (``declare_kind``, written out in
``cplxmodule.nn.relevance.twins``): the bases that make a dense class into
its twin. :func:`twin_class` reads both tables: a family's dense class has
its published twins; any other dense class (a user's subclass, a family a
user declared) gets one made of the row's bases around it.
"""

import functools
from typing import TYPE_CHECKING, Any, Dict, NamedTuple, Optional, Tuple

from ._globals import finder, global_name

__all__ = []


class FamilyDoc(NamedTuple):
    """Example sizes of a family, for the docstrings its twins generate."""

    #: what a member is, e.g. ``"2d convolution"``
    what: str
    #: constructor arguments of the example, e.g. ``"2, 4, 3"``
    arguments: str
    #: the example's inputs, ``{randn}`` standing for the random function
    inputs: str
    #: the example output's shape
    output: str
    #: the example's output and input channels
    out_channels: str
    in_channels: str
    #: what the input channels are called, e.g. ``"input features"``
    inputs_what: str = "input channels"


def twin_fields(cls):
    """The fields shared by the generated docstrings of the declared twin ``cls``."""
    family = cls._family
    is_complex = family.dense.__module__.startswith("cplxmodule")
    doc = family.doc
    return dict(
        what=f"Complex {doc.what}" if is_complex else doc.what.capitalize(),
        twin=f"~cplxmodule.nn.{family.dense.__name__}" if is_complex else f"torch.nn.{family.name}",
        weight="weight's real" if is_complex else "weight's",
        name=cls.__name__,
        arguments=doc.arguments,
        inputs=doc.inputs.format(randn="cplx.randn" if is_complex else "torch.randn"),
        output=doc.output,
        complex=is_complex,
    )


class Family:
    """A dense layer class and the layer classes of the same weight and arguments.

    Parameters
    ----------
    args : tuple of str
        The dense class's constructor arguments besides ``bias``, ``device``
        and ``dtype``; each is stored as an attribute of the same name, on
        every member.
    dense : type, optional
        The dense class, when it is not the class that declares the family
        (torch's layers, declared by this package's twins of them).
    kernel_dims : int, default 0
        The number of kernel dimensions of the weight ``(out, in, *kernel)``.
    positions : int, optional
        The number of dimensions that follow the channels in the layer's
        inputs and outputs (``kernel_dims`` by default: a convolution's
        positions; none for a linear layer, whose features come last), along
        which a channel gate is shared.
    transposed : bool, default False
        Whether the weight is ``(in, out / groups, *kernel)``.
    features : tuple of str, default ``("out_channels", "in_channels")``
        The names of the output and input sizes among ``args``.
    shrinkable : bool, default True
        Whether input feature ``j`` is read through column ``j`` alone, so
        that features can be removed (not a bilinear map, nor a transposed
        convolution).
    native : type, optional
        torch's layer computing the same in torch's complex dtype, for a
        complex family.
    doc : optional
        Example sizes for the twins' docstrings.

    Attributes
    ----------
    spatial : int or None
        ``kernel_dims`` for a family whose features can be removed, else
        ``None``.
    sizes : tuple of str or None
        ``features`` for such a family, else ``None``.
    grouped : bool
        Whether ``args`` has ``groups``: a member with ``groups != 1`` does
        not map input feature ``j`` through column ``j``.
    twins : dict of str to type
        The member of each kind that :func:`convert_layers` converts to
        (``"dense"``, ``"masked"``, ``"vd"``, ``"ard"``, ...).
    entry : type
        The class that declared the family, whose ``forward`` calls the
        dense entry point: ``dense`` itself, or this package's twin of a
        torch layer.
    complex : bool
        Whether the family's layers are complex.
    """

    def __init__(
        self,
        args: Tuple[str, ...],
        *,
        dense: Optional[type] = None,
        kernel_dims: int = 0,
        transposed: bool = False,
        features: Tuple[str, str] = ("out_channels", "in_channels"),
        shrinkable: bool = True,
        native: Optional[type] = None,
        doc: Optional[FamilyDoc] = None,
        positions: Optional[int] = None,
    ) -> None:
        self.args, self.native, self.doc = args, native, doc
        # a class once the family is declared (``declare`` sets the declaring class)
        self.dense: Any = dense
        self.kernel_dims, self.transposed, self.features = kernel_dims, transposed, features
        self.positions = kernel_dims if positions is None else positions
        self.grouped = "groups" in args
        self.spatial = kernel_dims if shrinkable else None
        self.sizes = features if shrinkable else None
        self.twins: Dict[str, Any] = {}
        # the class that declared the family (see Attributes)
        self.entry: Any = None
        self.complex = False

    @property
    def rebuilt(self) -> bool:
        """bool: whether :func:`compact` may rebuild the family's layers from their arguments.

        The package's own families only: a family a user declares may hold
        state that its constructor arguments do not say (an adjacency, a
        table), so ``compact`` takes its layers as they are.
        """
        return self.entry.__module__.split(".")[0] == "cplxmodule"

    @property
    def name(self) -> str:
        """str: the dense class's name without ``Cplx``, e.g. ``"Conv2d"``."""
        return self.dense.__name__.removeprefix("Cplx")

    def init_kwargs(self, layer: Any) -> Dict[str, Any]:
        """The constructor arguments (but ``bias``, ``device``, ``dtype``) that rebuild ``layer``."""
        return {name: getattr(layer, name) for name in self.args}

    def shrinkable(self, layer: Any) -> bool:
        """Whether features of the member ``layer`` may be removed."""
        return self.spatial is not None and not (self.grouped and layer.groups != 1)

    def __repr__(self) -> str:
        return f"Family({self.dense.__name__})"


class Member(NamedTuple):
    """What the table knows of one layer class."""

    family: Family
    kind: str
    #: whether the class converts to its family's twins keeping what it
    #: computes with in eval mode (its ``weight``, up to a mask or posterior
    #: variance, or for a layer with gates of its own its ``_eval_weight()``,
    #: the gates folded in): :func:`convert_layers` and
    #: :func:`magnitude_masks` take it
    convertible: bool = True


_FAMILIES: Dict[type, Family] = {}  # dense class -> Family
_MEMBERS: Dict[type, "Member"] = {}  # exact member class -> Member


class Composite(NamedTuple):
    """A layer built of family members with parameters of its own that span them.

    The recurrent layers with gates on their hidden units: each gate scales
    rows and columns of several projections at once, so the layer, not a
    projection, has a twin. ``dense`` is the plain layer it computes as in
    eval mode, ``kind`` its kind (``"dense"`` for the plain layer itself).
    A twin defines ``from_plain(layer)`` (a classmethod: the twin of the
    plain ``layer``, its weights kept) and ``plain_twin()`` (the plain
    layer it computes as in eval mode, its gates folded into the weights;
    ``compact`` passes it its ``threshold``). A twin whose eval-mode gates
    do not drop what its masks drop also defines ``fold_masks(plain)``,
    which ``to_masked`` calls on its masked plain twin once the masks are
    deployed.
    """

    dense: type
    kind: str


_COMPOSITES: Dict[type, "Composite"] = {}  # exact class -> Composite
_COMPOSITE_TWINS: Dict[type, Dict[str, type]] = {}  # plain class -> {kind: twin class}


def declare(cls, family=None, kind=None, *, twin=True, convertible=True, complex=False):
    """Record what the class statement of ``cls`` declares; return its :class:`Family`.

    Called by the dense entry point's ``__init_subclass__`` with the class
    statement's keywords. A :class:`Family` defines a family whose dense
    class is ``cls`` (or its own ``dense``); a dense class with ``kind``
    makes ``cls`` that family's member of the kind. ``twin=False`` records
    a member that :func:`convert_layers` does not convert to (the
    extensions' layers, with arguments of their own); ``convertible=False``
    one that it does not convert from either (the Gaussian bases, the
    extensions' LASSO and complex VD variants). ``complex`` says whether a
    new family's layers are complex (their twins take the complex kinds).
    """
    if isinstance(family, Family):
        if family.dense is None:
            family.dense = cls
        family.entry, family.complex = cls, complex
        _FAMILIES[family.dense] = family
        add_member(family, "dense", family.dense)
        return family
    if kind is None:
        raise TypeError(f"{cls.__name__}: `kind` must be given with `family`")
    family = _FAMILIES[family]
    add_member(family, kind, cls, twin=twin, convertible=convertible)
    return family


def add_member(family, kind, target, *, twin=True, convertible=True):
    """Make ``target`` (a class, or a class with bound arguments) the ``kind`` member of ``family``."""
    if twin:
        family.twins[kind] = target
    if isinstance(target, type):
        _MEMBERS[target] = Member(family, kind, convertible)


def declare_composite(cls, dense, kind):
    """Record ``cls`` as the ``kind`` twin of the plain layer class ``dense``."""
    _COMPOSITES.setdefault(dense, Composite(dense, "dense"))
    _COMPOSITES[cls] = Composite(dense, kind)
    _COMPOSITE_TWINS.setdefault(dense, {})[kind] = cls


def lookup_composite(cls):
    """The :class:`Composite` record of the exact class ``cls``, or ``None``."""
    return _COMPOSITES.get(cls)


def composite_twin(dense, kind):
    """The ``kind`` twin of the plain layer class ``dense``, or ``None``."""
    return _COMPOSITE_TWINS.get(dense, {}).get(kind)


def lookup(cls):
    """The :class:`Member` record of the exact class ``cls``, or ``None``."""
    return _MEMBERS.get(cls)


def families():
    """Every family, in declaration order."""
    return list(_FAMILIES.values())


def kinds():
    """The kinds :func:`convert_layers` converts to, sorted."""
    return sorted({"dense"} | {kind for (kind, _), row in _KINDS.items() if not row.lossy}
                  | {kind for twins in _COMPOSITE_TWINS.values() for kind in twins})


def bayesian_kinds():
    """The kinds of the Bayesian twins (what ``to_bayesian`` converts to), sorted."""
    return [kind for kind in kinds() if kind not in ("dense", "masked")]


class Kind(NamedTuple):
    """How a dense layer becomes a twin of one kind: the bases put around its class."""

    name: str
    #: added to the dense class's name, e.g. ``"VD"``
    suffix: str
    #: the kind's bases before the dense class (its mixins) and after it
    before: tuple
    after: tuple = ()
    #: constructor arguments the kind binds, e.g. ``(("gated", "input"),)``
    bound: tuple = ()
    #: whether the twins change what a layer computes (quantized): then
    #: :func:`convert_layers`, whose twins compute what their source did,
    #: does not convert to the kind (its own function does), and the
    #: package's families publish no class of it (the table makes them)
    lossy: bool = False


_KINDS: Dict[Tuple[str, bool], Kind] = {}  # (name, complex) -> Kind
_MADE: Dict[Tuple[type, tuple], type] = {}  # (plain class, bases) -> twin class made of it
_PLAIN: Dict[type, type] = {}  # twin class made by ``twin_class`` -> its plain class


def declare_kind(name, suffix, before, after=(), *, complex=None, lossy=False, **bound):
    """Record the bases that make a twin of kind ``name`` of a real, complex (or any) dense class."""
    for flag in (False, True) if complex is None else (complex,):
        _KINDS[name, flag] = Kind(
            name, suffix, tuple(before), tuple(after), tuple(bound.items()), lossy)


def dense_family(cls):
    """The family of the nearest dense class that ``cls`` derives from, or ``None``."""
    for base in cls.__mro__:
        member = _MEMBERS.get(base)
        if member is not None and member.kind == "dense":
            return member.family
    return None


def plain_class(cls):
    """The dense class that a layer of class ``cls`` converts through, or ``None``.

    A family's member that converts (its dense class, a twin, an L0
    layer): the family's dense class; a twin that :func:`twin_class` made
    of a user's class: that class; a user's subclass of a dense class that
    has no kind of its own: the subclass itself, whose ``forward`` and
    parameters its twins keep. Anything else (a subclass of a twin, a
    Gaussian base, an opaque module) does not convert.
    """
    member = _MEMBERS.get(cls)
    if member is not None:
        return member.family.dense if member.convertible else None
    if cls in _PLAIN:
        return _PLAIN[cls]
    family = dense_family(cls)
    kinds = {_MEMBERS[base].kind for base in cls.__mro__ if base in _MEMBERS}
    if family is None or kinds != {"dense"} or any(base in _PLAIN for base in cls.__mro__):
        return None
    return cls


def twin_class(plain, kind):
    """The ``kind`` twin of the dense class ``plain``: a class, a class with bound arguments, or ``None``.

    A family's dense class has its published twins (``CplxConv2dVD``); any
    other dense class (a user's subclass, a family a user declared) gets a
    class made of the kind's bases around it, once, named
    ``<Plain><Suffix>`` (pickled under the global name ``<Suffix>[<module>:
    <qualname>]`` of this module). ``None`` for a kind that has no twin of
    a single layer (the recurrent layers' unit gates).
    """
    family = dense_family(plain)
    if kind == "dense":
        return plain
    row = _KINDS.get((kind, family.complex))
    if row is None:
        return None
    cls = _published(family, row) if plain is family.dense else None
    if cls is None:
        cls = _made(plain, row, family)
    return functools.partial(cls, **dict(row.bound)) if row.bound else cls


def _published(family, row):
    """The class ``family`` publishes with ``row``'s bases, or ``None``.

    The kinds that differ by a bound argument alone share it (a channel
    layer gates its output or its input channels, ``gated=``).
    """
    for (name, flag), other in _KINDS.items():
        same = (other.before, other.after) == (row.before, row.after)
        if same and flag == family.complex and name in family.twins:
            return family.twins[name]
    return None


def made_from(cls):
    """The class that :func:`twin_class` made the twin class ``cls`` of, or ``None``."""
    return _PLAIN.get(cls)


def _made(plain, row, family):
    # a torch layer's subclass needs the package's twin of it, whose
    # ``forward`` calls the entry point that the kind's mixins override
    if issubclass(plain, family.entry):
        core: tuple = (plain,)
    elif plain is family.dense:  # torch's layer itself: the package's twin of it is the class
        core = (family.entry,)
    else:
        core = (plain, family.entry)
    bases = (*row.before, *core, *row.after)
    if (plain, bases) not in _MADE:
        namespace = {
            "__module__": __name__,
            "__qualname__": global_name(row.suffix, plain),
            "__doc__": f"The {row.suffix} twin of :class:`{plain.__module__}."
            f"{plain.__qualname__}`, made by the table of kinds.",
        }
        cls = type(f"{plain.__name__}{row.suffix}", bases, namespace)
        _MADE[plain, bases], _PLAIN[cls] = cls, plain
    return _MADE[plain, bases]


def _find(suffix, plain):
    family = dense_family(plain) if isinstance(plain, type) else None
    rows = [row for (_, flag), row in _KINDS.items()
            if row.suffix == suffix and family is not None and flag == family.complex]
    if not rows:
        raise ValueError(suffix)
    return _made(plain, rows[0], family)


def _find_made(name):
    suffixes = tuple({row.suffix for row in _KINDS.values()})
    return finder(__name__, suffixes, _find)(name)


if not TYPE_CHECKING:
    # PEP 562: pickle finds a twin made of a user's class in a process that
    # has not made it yet; hidden from mypy, which would take any name
    # imported from this module as found
    __getattr__ = _find_made
