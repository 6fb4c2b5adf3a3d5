r"""The Bayesian base classes and the whole-model helpers of :mod:`cplxmodule.nn.relevance`.

:class:`BaseARD` is the public base: a layer that defines ``penalty`` and
``relevance(**kwargs)`` takes part in :func:`named_penalties`,
:func:`named_relevance`, :func:`compute_ard_masks` and
:func:`~cplxmodule.nn.utils.sparsity`. :class:`GaussianMixin` is the one
Gaussian mechanism (``log_sigma2``, ``log_alpha``, the local
reparameterisation trick) that every variational dropout and ARD layer,
real or complex, adds to its dense twin.

Where the bases sit in a layer's MRO is part of the published contract:
``GaussianMixin`` comes before the dense twin and ``BaseARD`` after it, as in
the published package, so that a user's mixin deriving from ``BaseARD``
lands after torch's layer, whose ``__init__`` calls it without arguments.
"""

from __future__ import annotations

import warnings
import weakref

import torch

from ...cplx import Cplx
from .._guards import check_finite, check_threshold, layer_label, naming, refuse_bad_entries
from ...cplx._shared import check_positive_int, check_real
from ..modules._weighted import _KindMixin, _weight_and_bias
from ._doc import layer_doc
from ..utils.sparsity import SparsityStats, _weight_counts
from . import functional as F
from typing import TYPE_CHECKING, Any, Iterator, Optional, Union

__all__ = [
    "BaseARD",
    "GaussianMixin",
    "penalties",
    "named_penalties",
    "elbo_loss",
    "named_relevance",
    "compute_ard_masks",
]


class BaseARD(torch.nn.Module):
    r"""Base of every layer that has a sparsity penalty and a relevance mask.

    Subclasses define the property ``penalty`` (a tensor whose sum is the
    layer's KL term) and the method ``relevance(**kwargs)`` (a 0/1 mask of
    the weight's real shape, 1 where the weight is kept). Every whole-model
    helper of :mod:`cplxmodule.nn.relevance` finds layers by this base.

    Examples
    --------
    A user's own layer joins the helpers by deriving from it:

    >>> class L1Linear(BaseARD, torch.nn.Linear):
    ...     @property
    ...     def penalty(self):
    ...         return abs(self.weight)
    ...     def relevance(self, *, threshold):
    ...         return (abs(self.weight) > threshold).to(self.weight.dtype)
    >>> model = torch.nn.Sequential(L1Linear(3, 2))
    >>> sorted(compute_ard_masks(model, threshold=0.1))
    ['0.mask']
    """

    @property
    def penalty(self):
        """torch.Tensor: the per-weight penalty; see the class docstring."""
        raise NotImplementedError(f"{type(self).__name__} must define the property `penalty`.")

    def relevance(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """The 0/1 relevance mask of the weight; see the class docstring."""
        raise NotImplementedError(f"{type(self).__name__} must define `relevance(**kwargs)`.")

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        # a NaN weight or variance would be counted as pruned by the
        # relevance mask: the whole layer refuses it, or a misshapen
        # tensor, and stays as it was
        if not refuse_bad_entries(self, state_dict, prefix, error_msgs):
            super()._load_from_state_dict(
                state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
            )


class GaussianMixin(_KindMixin, SparsityStats):
    r"""The Gaussian posterior shared by every variational dropout and ARD layer.

    A Bayesian layer is this base (with a penalty, e.g.
    :class:`~cplxmodule.nn.relevance.real.RealVDMixin`) plus its dense twin,
    whose parameters, constructor and state_dict keys it keeps, plus
    :class:`BaseARD`, which the whole-model helpers look for:
    ``class LinearVD(RealVDMixin, LinearGaussian)`` with ``class
    LinearGaussian(GaussianMixin, torch.nn.Linear, BaseARD)``. The weight is
    the posterior mean :math:`\mu`; the base adds a learnable ``log_sigma2``
    (:math:`\log\sigma^2`) of the weight's real shape, initialised to -10.

    In training mode the forward pass draws the output by the local
    reparameterisation trick (Kingma et al., 2015): each output is Gaussian
    with the mean of the dense layer and the variance
    :math:`\sum \sigma^2 |x|^2`, computed by the dense twin's own entry
    point on the squared modulus of the input (same stride, padding,
    dilation, groups and ``output_size``), and one sample is drawn per
    output, complex-circular for complex layers (real and imaginary parts
    of half the variance each). In eval mode the output is the mean. The
    layer's ``forward`` is the dense twin's, with torch's signature
    (``input``; ``input1, input2``; ``input, output_size=None``), so
    ``torch.export`` and the ONNX exporters name its inputs as torch's: it
    checks the inputs and calls ``_weighted_forward``, which this base
    overrides.

    Attributes
    ----------
    log_sigma2 : torch.nn.Parameter
        :math:`\log\sigma^2`, shaped like the weight (its real part); the
        property :attr:`log_alpha` derives :math:`\log\alpha` from it.

    Notes
    -----
    ``__init__`` is cooperative and this base goes first in the MRO: it
    calls ``super().__init__(*args, **kwargs)`` first, so the dense twin
    has built its weight, whose real shape, dtype and device ``log_sigma2``
    takes.

    It is a plain mixin, neither a :class:`torch.nn.Module` nor a
    :class:`BaseARD`, as published; the layers list :class:`BaseARD` after
    the dense twin. A user's mixin deriving from :class:`BaseARD` (``class
    Penalized(Freezable, BaseARD)`` in ``class MyConv(Conv2dGaussian,
    Penalized)``) must precede it in the MRO: after the dense twin, it is
    called by torch's layer without arguments, as in the published package.
    Were :class:`BaseARD` a base of this mixin, it would come right after
    it, and so would the user's mixin, which would then be handed the
    layer's arguments.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import LinearVD
    >>> layer = LinearVD(3, 2)
    >>> layer.log_sigma2.shape, layer.log_sigma2[0, 0].item()
    (torch.Size([2, 3]), -10.0)
    >>> layer.relevance(threshold=3.0).shape
    torch.Size([2, 3])
    """

    # not a weight of the model: left out of the sparsity figures, as published
    __sparsity_ignore__ = ("log_sigma2",)
    _variational = "log_sigma2"

    @classmethod
    def _member_doc(cls, kind):
        return layer_doc(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._add_log_sigma2()

    def _add_log_sigma2(self):
        self.log_sigma2 = torch.nn.Parameter(self._empty_log_sigma2())
        self.reset_variational_parameters()

    def _attach_kind(self, **kwargs):
        super()._attach_kind(**kwargs)
        self._add_log_sigma2()

    def _detach_kind(self):
        super()._detach_kind()
        del self.log_sigma2

    def _empty_log_sigma2(self):
        """``log_sigma2``, uninitialised: of the weight's real shape (a channel base overrides it)."""
        return torch.empty_like(_real(self.weight))

    def reset_variational_parameters(self) -> None:
        """Set ``log_sigma2`` to -10: a nearly deterministic posterior."""
        with torch.no_grad():
            self.log_sigma2.fill_(-10.0)

    @property
    def log_alpha(self) -> torch.Tensor:
        r"""torch.Tensor: :math:`\log\alpha = \log\sigma^2 - \log|\mu|^2`, of the weight's real
        shape.
        """
        return F.log_alpha(self.log_sigma2, self.weight)

    def relevance(self, *, threshold: Union[float, torch.Tensor], **kwargs: Any) -> torch.Tensor:
        r"""The mask of the weights to keep: :math:`\log\alpha \leq` ``threshold``.

        Parameters
        ----------
        threshold : float or 0-dim float tensor
            Weights whose :math:`\log\alpha` exceeds it are dropped (3.0
            drops the weights whose noise is 20 times their power).
        **kwargs
            Accepted and ignored, as published: code passes ``hard=`` to
            every layer of a model, which only ``LinearL0`` reads.

        Returns
        -------
        torch.Tensor
            A detached 0/1 tensor of the weight's real shape and dtype.

        Raises
        ------
        TypeError
            If ``threshold`` is not a real number.
        """
        return _kept(self.log_alpha, threshold, type(self).__name__)

    def sparsity(self, *, threshold: float, **kwargs: Any) -> list[tuple[Any, int]]:
        """The number of weight entries the relevance mask drops, per weight parameter.

        Parameters
        ----------
        threshold : float
            As for :meth:`relevance`.
        **kwargs
            Accepted and ignored (e.g. ``hard``).

        Returns
        -------
        list of (int, float)
            ``id`` of the weight (a complex weight: of its real and imaginary
            parameters) and the count, for :func:`~cplxmodule.nn.utils.named_sparsity`.
        """
        return _weight_counts(self, 1 - self.relevance(threshold=threshold))

    def _weighted_forward(self, *inputs, **kwargs):
        """The dense twin's forward pass, sampled by local reparameterisation in training.

        The dense twin's ``forward``, whose signature the layer keeps, checks
        the inputs and calls this with them and its keyword arguments (e.g.
        ``output_size=`` for a transposed convolution).
        """
        weight, bias = _weight_and_bias(self)
        mean = self._dense_forward(*inputs, weight=weight, bias=bias, **kwargs)
        if not self.training:
            return mean
        var = self._dense_forward(
            *map(_modulus2, inputs), weight=torch.exp(self.log_sigma2), bias=None, **kwargs
        )
        return F.local_reparameterization(mean, var)


if TYPE_CHECKING:
    class PenaltyMixin(GaussianMixin):
        """What a penalty mixin reads of the Gaussian base it goes before."""
else:
    # a penalty mixin goes before the Gaussian base: to mypy it is that
    # base, at run time it adds nothing to the bases
    PenaltyMixin = object


def _real(weight):
    return weight.real if isinstance(weight, Cplx) else weight


def _modulus2(input):
    if isinstance(input, Cplx):
        return torch.square(input.real).addcmul_(input.imag, input.imag)
    return torch.square(input)


def _kept(log_alpha, threshold, where):
    """``log_alpha <= threshold`` as a detached 0/1 tensor of its dtype, ``threshold`` checked."""
    check_threshold(threshold, where)
    with torch.no_grad():
        _check_no_nan(log_alpha, where)
        return torch.le(log_alpha, threshold).to(log_alpha.dtype)


def _check_no_nan(log_alpha, where):
    """A NaN ``log_alpha`` (from a NaN weight or variance) compares false: it would read as pruned."""
    if bool(torch.isnan(log_alpha).any()):
        raise ValueError(
            f"{where}: `log_alpha` must not be NaN (its weight or variance holds NaN),"
            " got NaN entries: they are refused, never counted as pruned"
        )


_REDUCTIONS = {"sum": torch.sum, "mean": torch.mean, None: None}


def named_penalties(
    module: torch.nn.Module, reduction: Optional[str] = "sum", prefix: str = "",
) -> Iterator[tuple[str, torch.Tensor]]:
    """Iterate over the Bayesian layers of ``module`` and their penalties.

    Parameters
    ----------
    module : torch.nn.Module
        The model to walk, in the order of :meth:`torch.nn.Module.named_modules`.
    reduction : {"sum", "mean", None}
        How each layer's per-weight penalty is reduced; ``None`` keeps it
        per weight.
    prefix : str, optional
        Prepended to every name.

    Returns
    -------
    iterator of (str, torch.Tensor)
        The name and penalty of every :class:`BaseARD` layer (of layers
        that share their gates, a :class:`~cplxmodule.nn.relevance.GateGroup`,
        the group's leader only).

    Raises
    ------
    ValueError
        If ``reduction`` is not one of the above (raised at the call).

    Examples
    --------
    >>> from cplxmodule.nn.relevance import LinearARD
    >>> model = torch.nn.Sequential(LinearARD(3, 2), torch.nn.ReLU())
    >>> [(name, value.shape) for name, value in named_penalties(model)]
    [('0', torch.Size([]))]
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"named_penalties: `reduction` must be 'sum', 'mean' or None, got {reduction!r}."
        )
    return _named_penalties(module, _REDUCTIONS[reduction], prefix)


def _named_penalties(module, reduce, prefix):
    for name, layer in module.named_modules(prefix=prefix):
        # a layer that shares its gates (``structured.GateGroup``) but leads
        # none: its group's leader counts them
        if isinstance(layer, BaseARD) and layer.__dict__.get("_gate_leader", True):
            penalty = layer.penalty
            yield name, penalty if reduce is None else reduce(penalty)


def penalties(module: torch.nn.Module, reduction: Optional[str] = "sum") -> Iterator[torch.Tensor]:
    """Iterate over the penalties of the Bayesian layers of ``module``.

    Parameters
    ----------
    module : torch.nn.Module
    reduction : {"sum", "mean", None}
        As for :func:`named_penalties`.

    Returns
    -------
    iterator of torch.Tensor

    Raises
    ------
    ValueError
        If ``reduction`` is unknown.

    Examples
    --------
    The KL term of a training loss:

    >>> from cplxmodule.nn.relevance import LinearVD
    >>> model = torch.nn.Sequential(LinearVD(3, 2), LinearVD(2, 1))
    >>> kl = sum(penalties(model))
    >>> kl.shape
    torch.Size([])
    """
    return (penalty for _, penalty in named_penalties(module, reduction, prefix=""))


# the KL term per example this many times the data term: most weights go
_DOMINANT = 100.0
# elbo_loss compares the terms in a model's first calls (the collapse starts
# there), until it warns: later calls compare nothing, so that training does
# not wait on the device for the check every step
_EARLY_CALLS = 10
_CALLS_LEFT: weakref.WeakKeyDictionary[torch.nn.Module, int] = weakref.WeakKeyDictionary()


def elbo_loss(
    module: torch.nn.Module, data_term: torch.Tensor, dataset_size: int, kl_weight: float = 1.0,
) -> torch.Tensor:
    r"""The negative evidence lower bound per training example, to minimise.

    .. math::

        \mathcal{L} = \underbrace{-\tfrac{1}{B}\sum_{b} \log p(y_b \mid x_b, w)}
        _{\texttt{data\_term}}
        + \beta \, \frac{\mathrm{KL}(q(w) \,\|\, p(w))}{N},

    the KL term the sum of the Bayesian layers' penalties
    (:func:`penalties`), :math:`N` the training set's size and
    :math:`\beta` = ``kl_weight``. At :math:`\beta = 1` it is the objective
    of variational dropout, whatever the task, *when* ``data_term`` is the
    negative log-likelihood of an example, averaged over the batch: the
    cross-entropy of a classifier (:func:`torch.nn.functional.cross_entropy`,
    a mean over the batch); for regression and reconstruction the Gaussian
    likelihood of every output, :func:`cplxmodule.cplx.gaussian_nll_loss`
    (or :func:`~cplxmodule.cplx.rice_nll_loss` of moduli) with
    ``reduction="batchmean"`` and the noise variance ``var`` fixed or
    learned. A mean squared error averaged over the :math:`D` outputs of an
    example is that likelihood divided by :math:`D / \sigma^2` (up to
    constants), so it needs :math:`\beta = \sigma^2 / D` to be the same
    objective: with :math:`\beta = 1` it asks for noise of variance
    :math:`D`, and the penalty removes nearly every weight.

    Parameters
    ----------
    module : torch.nn.Module
        The model, holding Bayesian layers.
    data_term : torch.Tensor
        The batch's data term, a real scalar: the mean over the batch of
        each example's negative log-likelihood.
    dataset_size : int
        :math:`N`, the number of training examples (not the batch's).
    kl_weight : float, default 1.0
        :math:`\beta`; larger prunes harder (it is the bound of a training
        set :math:`\beta` times smaller).

    Returns
    -------
    torch.Tensor
        The scalar loss.

    Raises
    ------
    ValueError
        If ``dataset_size`` is not a positive int, ``kl_weight`` a number
        >= 0, or ``data_term`` a real scalar.

    Warns
    -----
    UserWarning
        Once, in the first ten calls for ``module``, when the KL term is
        over a hundred times the data term, naming the layer of the largest
        penalty: the data term is likely not a
        per-example likelihood (a mean over outputs, or a loss that is no
        likelihood, SI-SDR say), and training would remove most weights.
        Put the KL term on the loss's scale then, with a smaller
        ``kl_weight``.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> from cplxmodule.nn import CplxLinear
    >>> from cplxmodule.nn.relevance import to_bayesian
    >>> model = to_bayesian(torch.nn.Sequential(CplxLinear(8, 4)))
    >>> x, y = cplx.randn(16, 8), cplx.randn(16, 4)
    >>> nll = cplx.gaussian_nll_loss(model(x), y, var=0.1, reduction="batchmean")
    >>> loss = elbo_loss(model, nll, dataset_size=1000)
    >>> loss.backward()
    """
    where = "elbo_loss"
    check_positive_int(dataset_size, "dataset_size", where)
    check_real(kl_weight, "kl_weight", where, low=0)
    if not isinstance(data_term, torch.Tensor) or data_term.dim() or data_term.is_complex():
        raise ValueError(f"{where}: `data_term` must be a real scalar tensor, got {data_term!r}")
    named = [(name, penalty) for name, penalty in named_penalties(module)]
    kl = sum((penalty for _, penalty in named), torch.zeros_like(data_term)) / dataset_size
    calls_left = _CALLS_LEFT.get(module, _EARLY_CALLS)
    if named and calls_left:
        dominant = _warn_if_dominant(named, float(kl_weight * kl.detach()), float(data_term.detach()))
        _CALLS_LEFT[module] = 0 if dominant else calls_left - 1
    return data_term + kl_weight * kl


def _warn_if_dominant(named, kl, data_term):
    """Warn, naming the layer of the largest penalty, when ``kl`` is far above ``data_term``."""
    where = "elbo_loss"
    scale = kl / max(abs(data_term), 1e-12)
    if scale > _DOMINANT:
        largest, _ = max(named, key=lambda item: float(item[1].detach()))
        warnings.warn(
            f"{where}: the KL term is {scale:.0f} times the data term (layer {largest!r} holds"
            " the largest penalty): is the data term a negative log-likelihood per example"
            " (reduction='batchmean'), not a mean over outputs or a loss that is no"
            " likelihood? Training now would remove most weights; put the KL term on the"
            " loss's scale with a smaller kl_weight",
            UserWarning,
            stacklevel=3,
        )
    return scale > _DOMINANT


def named_relevance(
    module: torch.nn.Module, prefix: str = "", **kwargs: Any
) -> Iterator[tuple[str, torch.Tensor]]:
    """Iterate over the Bayesian layers of ``module`` and their relevance masks.

    Parameters
    ----------
    module : torch.nn.Module
    prefix : str, optional
        Prepended to every name.
    **kwargs
        Passed to each layer's ``relevance`` (e.g. ``threshold=3.0``, and
        ``hard`` for ``LinearL0``, which the others ignore).

    Returns
    -------
    iterator of (str, torch.Tensor)
        The name and relevance mask of every :class:`BaseARD` layer; for a
        recurrent layer with hidden-unit gates, those of its projections
        (``gru.ih_l0``, ``gru.hh_l0``, ...), from its
        ``projection_relevance``.

    Warns
    -----
    UserWarning
        Naming the layer, when its mask drops every weight (the threshold
        is likely too low, or the layer was never trained).

    Examples
    --------
    >>> from cplxmodule.nn.relevance import LinearVD
    >>> model = torch.nn.Sequential(LinearVD(3, 2))
    >>> [(name, mask.shape) for name, mask in named_relevance(model, threshold=3.0)]
    [('0', torch.Size([2, 3]))]
    """
    # the warning points at the loop that draws the masks
    return _named_relevance(module, prefix, kwargs, "named_relevance", stacklevel=2)


def _named_relevance(module, prefix, kwargs, where, stacklevel):
    for name, layer in module.named_modules(prefix=prefix):
        if not isinstance(layer, BaseARD):
            continue
        # a layer whose gates span its projections (a recurrent layer's
        # hidden-unit gates) gives their masks, keyed by their names
        spanned = getattr(layer, "projection_relevance", None)
        check_finite(layer, where, name)
        with naming(layer_label(where, name, layer)):
            found = [("", layer.relevance(**kwargs))] if spanned is None else spanned(**kwargs)
        for sub, mask in found:
            if mask.numel() and not bool(mask.any()):
                warnings.warn(
                    f"{where}: layer {name!r} ({type(layer).__name__}) drops every weight"
                    f"{f' of {sub!r}' if sub else ''} with {_describe_kwargs(kwargs)}; its"
                    " masked twin will output its bias only",
                    UserWarning,
                    stacklevel=stacklevel,
                )
            yield ".".join(part for part in (name, sub) if part), mask


def _describe_kwargs(kwargs):
    return ", ".join(f"{key}={value!r}" for key, value in kwargs.items()) or "no arguments"


def compute_ard_masks(
    module: torch.nn.Module, *, prefix: str = "", **kwargs: Any
) -> dict[str, torch.Tensor]:
    """The relevance masks of ``module``'s Bayesian layers, keyed as masked layers' masks.

    The keys are ``<layer>.mask`` (``mask`` for ``module`` itself; a
    recurrent layer with hidden-unit gates, whose gates prune its
    projections, gives theirs, ``<layer>.ih_l0.mask`` and so on), so the
    dictionary loads into the masked twin of the model with
    ``load_state_dict(masks, strict=False)`` or
    :func:`~cplxmodule.nn.masked.deploy_masks`, and
    :func:`~cplxmodule.nn.masked.binarize_masks` takes it.

    Parameters
    ----------
    module : torch.nn.Module
    prefix : str, optional
        Prepended to every name.
    **kwargs
        Passed to each layer's ``relevance`` (e.g. ``threshold=3.0``, and
        ``hard`` for ``LinearL0``, which the others ignore).

    Returns
    -------
    dict of str to torch.Tensor
        Empty if ``module`` has no :class:`BaseARD` layer, as published
        (code calls it on a model before it is made Bayesian).

    Raises
    ------
    TypeError
        If ``threshold`` is not a real number.

    Warns
    -----
    UserWarning
        Naming the layer, when a mask drops every weight of its layer.

    Examples
    --------
    >>> from cplxmodule.nn.relevance import LinearARD
    >>> model = torch.nn.Sequential(LinearARD(3, 2), torch.nn.ReLU(), LinearARD(2, 1))
    >>> sorted(compute_ard_masks(model, threshold=3.0))
    ['0.mask', '2.mask']
    """
    masks = {}
    for name, mask in _named_relevance(module, prefix, kwargs, "compute_ard_masks", stacklevel=3):
        masks[f"{name}.mask" if name else "mask"] = mask
    return masks
