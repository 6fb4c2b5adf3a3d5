r"""Layers of image reconstruction from undersampled k-space (accelerated MRI).

The layers hold the settings (and a learnable weight) and call the functions
of :mod:`cplxmodule.cplx.spectral`, whose Fourier transforms compile and
export as those of the spectral layers do.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import torch

from ...cplx import spectral
from ...cplx._shared import check_bool, check_choice, check_int, check_real
from ...cplx._typing import CplxLike, Device
from ...cplx.tensor import Cplx
from .base import CplxToCplx, _check_cplx

__all__ = ["CplxDataConsistency"]


class CplxDataConsistency(CplxToCplx):
    r"""Data consistency in k-space: an image made to agree with the measured samples.

    See :func:`cplxmodule.cplx.data_consistency`. The image (a network's
    estimate) is Fourier transformed along ``dim``; where the ``mask`` says
    k-space was sampled, its values are replaced by the measured ones (hard),
    or moved toward them by a learnable weight :math:`\lambda` (soft):

    .. math::

        \hat x = \mathcal F^{-1}\bigl(k - \lambda\, m \odot (k - k_0)\bigr),
        \quad k = \mathcal F x,

    then transformed back to the image domain. Between the networks of a
    cascade (Schlemper et al. 2018) or the steps of a variational network
    (Hammernik et al. 2018), it keeps the reconstruction true to the data.

    Parameters
    ----------
    soft : bool, default False
        Learn :math:`\lambda` (a parameter ``weight``, one number), the
        soft form of noisy measurements; ``False`` replaces the sampled
        k-space exactly (:math:`\lambda = 1`, no parameter).
    weight : float, default 1.0
        The initial :math:`\lambda` of the soft form, in :math:`[0, 1]`
        (1: the hard replacement at the start of training); refused unless
        ``soft``, where it would play no part.
    dim : int or tuple of int, default (-2, -1)
        The dimensions of the Fourier transform (an image's rows and columns).
    norm : {"ortho", "backward", "forward", None}, default "ortho"
        The scaling of the transforms, that with which the k-space was
        measured or simulated.
    centered : bool, default False
        Image and k-space have their origin at the centre (as the fastMRI
        data do): the transforms are the centred ones.
    device, dtype
        Of the weight.

    Attributes
    ----------
    weight : torch.nn.Parameter or None
        :math:`\lambda`, a real scalar, with ``soft``; ``None`` otherwise.

    Shape
    -----
    - Input: the image, complex, ``(*)`` (e.g. ``(N, C, H, W)``), a
      :class:`~cplxmodule.cplx.Cplx` or a tensor of torch's complex dtype.
    - Kspace: the measured k-space, complex, of the input's shape (zero
      where not sampled, or anything: only the sampled entries are read).
    - Mask: a bool or real tensor that broadcasts to the input (a Cartesian
      mask of columns ``(W,)``).
    - Output: :class:`~cplxmodule.cplx.Cplx`, the image, ``(*)``.

    Raises
    ------
    ValueError
        At construction, if ``weight`` is out of range or given without
        ``soft``, ``dim`` is not ints, or ``norm`` unknown; on a call, if the
        shapes do not agree or the input lacks a dimension of ``dim``.
    TypeError
        On a call, if the image or the k-space is not complex, or the mask
        not a bool or real floating-point tensor.

    Notes
    -----
    With a boolean mask the hard form copies the measured k-space exactly
    where it is ``True``; with a real mask :math:`m` (a sampling density, or
    0 and 1) it is the blend above at :math:`\lambda = 1`. The soft form of
    Schlemper et al., :math:`(k + \nu k_0) / (1 + \nu)` where sampled, is
    :math:`\lambda = \nu / (1 + \nu)`; that of the variational network (and
    of the end-to-end variational network), a gradient step on
    :math:`\tfrac12 \|m \odot (\mathcal F x - k_0)\|^2`, is the step
    :math:`\lambda`. The weight is left free in training, as theirs;
    values outside :math:`[0, 1]` overshoot the measured data.

    References
    ----------
    J. Schlemper, J. Caballero, J. V. Hajnal, A. N. Price and D. Rueckert, "A
    deep cascade of convolutional neural networks for dynamic MR image
    reconstruction", IEEE Trans. Medical Imaging 37(2), 2018.

    K. Hammernik, T. Klatzer, E. Kobler, M. P. Recht, D. K. Sodickson, T. Pock
    and F. Knoll, "Learning a variational network for reconstruction of
    accelerated MRI data", Magnetic Resonance in Medicine 79(6), 2018.

    Examples
    --------
    >>> image = cplx.randn(2, 1, 16, 16)  # a batch of complex images
    >>> kspace = cplx.fftn(image, dim=(-2, -1), norm="ortho")
    >>> mask = torch.zeros(16, dtype=torch.bool)
    >>> mask[::4] = mask[6:10] = True  # 4x Cartesian undersampling of the columns
    >>> measured = kspace * mask
    >>> dc = CplxDataConsistency()
    >>> out = dc(Cplx.zeros(2, 1, 16, 16), measured, mask)  # a zero estimate: zero-filled
    >>> zero_filled = cplx.ifftn(measured, dim=(-2, -1), norm="ortho")
    >>> torch.allclose(out.real, zero_filled.real, atol=1e-6)
    True
    >>> CplxDataConsistency(soft=True, weight=0.5)
    CplxDataConsistency(soft=True)
    """

    def __init__(
        self,
        soft: bool = False,
        weight: float = 1.0,
        dim: Union[int, Sequence[int]] = (-2, -1),
        norm: Optional[str] = "ortho",
        centered: bool = False,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__()
        where = self._get_name()
        check_bool(soft, "soft", where)
        check_real(weight, "weight", where, low=0, high=1)
        if not soft and weight != 1:
            raise ValueError(
                f"{where}: `weight` must be 1 without `soft=True` (the hard form replaces the"
                f" sampled k-space), got {weight!r}"
            )
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        if not dims:
            raise ValueError(f"{where}: `dim` must be an int or a non-empty tuple of ints,"
                             f" got {dim!r}")
        self.dim = tuple(check_int(d, "dim", where) for d in dims)
        check_choice(norm, "norm", where, spectral.NORMS, optional=True)
        check_bool(centered, "centered", where)
        self.soft, self.norm, self.centered = soft, norm, centered
        self.weight: Optional[torch.nn.Parameter]
        if soft:
            self.weight = torch.nn.Parameter(torch.empty((), device=device, dtype=dtype))
            self._initial_weight = float(weight)
            self.reset_parameters()
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Set the weight to its initial value (a no-op for the hard form)."""
        if self.weight is not None:
            with torch.no_grad():
                self.weight.fill_(self._initial_weight)

    def forward(self, input: CplxLike, kspace: CplxLike, mask: torch.Tensor) -> Cplx:
        where = self._get_name()
        input = _check_cplx(self, input)
        kspace = _check_cplx(self, kspace, name="kspace")
        ndim = input.dim()
        for d in self.dim:
            if not -ndim <= d < ndim:
                raise ValueError(
                    f"{where}: `input` must have dimension {d}, got shape {tuple(input.shape)}"
                )
        return spectral._data_consistency(input, kspace, mask, self.weight, self.dim,
                                          self.norm, self.centered, where=where)

    def extra_repr(self) -> str:
        settings = ["soft=True"] if self.soft else []
        if self.dim != (-2, -1):
            settings.append(f"dim={self.dim}")
        if self.norm != "ortho":
            settings.append(f"norm={self.norm!r}")
        if self.centered:
            settings.append("centered=True")
        return ", ".join(settings)
