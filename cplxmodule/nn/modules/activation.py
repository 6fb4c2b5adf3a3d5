"""Complex activations and complex-to-real reductions."""

import numbers

import torch

from ... import cplx
from .base import BaseCplxToReal, CplxToCplx, _check_cplx
from .parameter import _factory_kwargs

__all__ = [
    "CplxModReLU",
    "CplxAdaptiveModReLU",
    "CplxZReLU",
    "CplxCardioid",
    "CplxModulus",
    "CplxAngle",
]


class CplxModReLU(CplxToCplx):
    r"""The modulus ReLU :math:`z \max(0, 1 - b / |z|)` with a fixed or learnable threshold.

    Parameters
    ----------
    threshold : float or None, default 0.5
        The shrinkage :math:`b` of the modulus. ``None`` makes it a
        learnable parameter of shape ``(1,)``, drawn from :math:`U(0, 0.25)`
        as in the published package.

    Raises
    ------
    TypeError
        If ``threshold`` is neither a real number nor ``None`` (a string
        such as ``"0.1"`` included).

    Shape
    -----
    - Input and output: any shape, the same.

    See Also
    --------
    cplxmodule.cplx.modrelu, CplxAdaptiveModReLU

    References
    ----------
    M. Arjovsky, A. Shah, Y. Bengio, "Unitary evolution recurrent neural
    networks", ICML 2016.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxModReLU(threshold=0.1)(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    >>> [(name, p.shape) for name, p in CplxModReLU(threshold=None).named_parameters()]
    [('threshold', torch.Size([1]))]
    """

    def __init__(self, threshold=0.5):
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, numbers.Real)
        ):
            raise TypeError(
                f"CplxModReLU: `threshold` must be a real number or None, got {threshold!r}"
            )
        super().__init__()
        if threshold is None:
            self.threshold = torch.nn.Parameter(torch.empty(1))
            self.reset_parameters()
        else:
            self.threshold = float(threshold)

    def reset_parameters(self):
        """Draw a learnable threshold from :math:`U(0, 0.25)`; a fixed one stays."""
        if isinstance(self.threshold, torch.nn.Parameter):
            with torch.no_grad():
                torch.nn.init.uniform_(self.threshold, 0.0, 0.25)

    def forward(self, input):
        return cplx.modrelu(_check_cplx(self, input), self.threshold)

    def extra_repr(self):
        if isinstance(self.threshold, torch.nn.Parameter):
            return "threshold=learnable"
        return f"threshold={self.threshold}"


class CplxAdaptiveModReLU(CplxToCplx):
    r"""The modulus ReLU with a learnable threshold per feature.

    Parameters
    ----------
    *dim : int
        Shape of the learnable ``threshold``, broadcast against the trailing
        dimensions of the input; a single shared threshold if omitted.
    device, dtype : optional
        Factory kwargs.

    Shape
    -----
    - Input: any shape that ``threshold`` broadcasts against.
    - Output: the input's shape.

    Notes
    -----
    The threshold is initialised from :math:`\mathcal{N}(0, 0.02^2)`, as in
    the published package.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxAdaptiveModReLU(4)(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def __init__(self, *dim, device=None, dtype=None):
        super().__init__()
        self.dim = dim if dim else (1,)
        kwargs = _factory_kwargs(device, dtype)
        self.threshold = torch.nn.Parameter(torch.empty(*self.dim, **kwargs))
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the threshold from :math:`\\mathcal{N}(0, 0.02^2)`."""
        with torch.no_grad():
            torch.nn.init.normal_(self.threshold, std=0.02)

    def forward(self, input):
        return cplx.modrelu(_check_cplx(self, input), self.threshold)

    def extra_repr(self):
        return ", ".join(map(str, self.dim))


class CplxZReLU(CplxToCplx):
    r"""zReLU: passes :math:`z` where :math:`0 \le \arg z \le \pi/2`, else zero.

    That is, :math:`z` is kept in the closed first quadrant
    (:math:`\Re z \ge 0` and :math:`\Im z \ge 0`).

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    N. Guberman, "On complex valued convolutional neural networks", 2016.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxZReLU()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input):
        return cplx.zrelu(_check_cplx(self, input))


class CplxCardioid(CplxToCplx):
    r"""The complex cardioid :math:`z \, (1 + \cos \arg z) / 2`.

    Scales by a factor that is one on the positive real axis and vanishes on
    the negative one; on real inputs it is the ReLU.

    Shape
    -----
    - Input and output: any shape, the same.

    References
    ----------
    P. Virtue, S. X. Yu, M. Lustig, "Better than real: complex-valued neural
    nets for MRI fingerprinting", ICIP 2017.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxCardioid()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input):
        return cplx.cardioid(_check_cplx(self, input))


class CplxModulus(BaseCplxToReal):
    """The modulus :math:`|z|`, a real tensor.

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` of any shape.
    - Output: a real tensor of the same shape.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxModulus()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input):
        return abs(_check_cplx(self, input))


class CplxAngle(BaseCplxToReal):
    r"""The argument :math:`\arg z \in [-\pi, \pi]`, a real tensor, as :func:`torch.atan2` gives it.

    Shape
    -----
    - Input: a :class:`~cplxmodule.cplx.Cplx` of any shape.
    - Output: a real tensor of the same shape.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> CplxAngle()(cplx.randn(8, 4)).shape
    torch.Size([8, 4])
    """

    def forward(self, input):
        return _check_cplx(self, input).angle
