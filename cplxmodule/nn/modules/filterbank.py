r"""Signal front ends: learnable Gabor and Morlet filterbanks, spectral pooling."""

from __future__ import annotations

import math

import torch

from ... import cplx
from ...cplx import Cplx
from ...cplx._shared import check_positive, ntuple
from ...cplx.spectral_pooling import _spectral_pool
from .base import CplxToCplx, _check_cplx, _dtypes_mix
from .conv import CplxConv1d
from .parameter import _factory_kwargs
from typing import Any, ClassVar, Optional, Sequence, Union
from ...cplx._typing import CplxLike, Device
from torch.nn.common_types import _size_1_t

__all__ = [
    "CplxGaborConv1d",
    "CplxMorletConv1d",
    "CplxSpectralPool1d",
    "CplxSpectralPool2d",
    "CplxSpectralPool3d",
]


class _CplxFilterbankConv1d(CplxConv1d):
    """A :class:`CplxConv1d` whose ``weight`` is ``_kernel`` of ``center`` and ``width``."""

    _kernel: ClassVar[Any] = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_1_t,
        stride: _size_1_t = 1,
        padding: _size_1_t = 0,
        dilation: _size_1_t = 1,
        groups: int = 1,
        bias: bool = False,
        padding_mode: str = "zeros",
        sample_rate: Optional[float] = None,
        device: Device = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        check_positive(sample_rate, "sample_rate", type(self).__name__, optional=True)
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )
        # the base registers a free dense weight; the class property ``weight``
        # computes it from the filters' parameters instead
        del self._modules["weight"]
        self.sample_rate = sample_rate
        kwargs = _factory_kwargs(device, dtype)
        self.center = torch.nn.Parameter(torch.empty(out_channels, **kwargs))
        self.width = torch.nn.Parameter(torch.empty(out_channels, **kwargs))
        self.reset_parameters()

    # computed, so read-only: a convolution's ``weight`` is a parameter one may replace
    @property
    def weight(self) -> Cplx:  # type: ignore[override]
        """The conjugate filters, of shape ``(out_channels, in_channels / groups, kernel_size)``."""
        kernel = self._kernel(self.center, self.width, self.kernel_size[0], self.sample_rate)
        shape = (self.out_channels, self.in_channels // self.groups, self.kernel_size[0])
        # torch's convolution correlates: with the conjugate filter it takes
        # the inner product with the filter, whose passband is around +f_c
        return Cplx(
            kernel.real.unsqueeze(1).expand(shape), -kernel.imag.unsqueeze(1).expand(shape)
        )

    def reset_parameters(self):
        r"""Spread the filters evenly over the band, as described in the class Notes."""
        if "center" not in self._parameters:
            # the base's ``__init__`` calls this before the filters' parameters exist
            return
        rate = 1.0 if self.sample_rate is None else float(self.sample_rate)
        spacing = rate / 2 / self.out_channels
        steps = torch.arange(self.out_channels, dtype=torch.float64) + 0.5
        width = min(1 / (math.pi * spacing), self.kernel_size[0] / (6 * rate))
        with torch.no_grad():
            self.center.copy_(steps * spacing)
            self.width.fill_(width)
            if self.bias is not None:
                self.bias.real.zero_()
                self.bias.imag.zero_()

    def _check_inputs(self, input):
        input = super()._check_inputs(input)
        if input.dtype != self.center.dtype and not _dtypes_mix(input, self.center.dtype, False):
            raise TypeError(
                f"{self._get_name()}: `input` must have the dtype of the layer's parameters,"
                f" {self.center.dtype}, got {input.dtype}"
            )
        return input

    def extra_repr(self):
        s = super().extra_repr()
        if self.sample_rate is not None:
            s += f", sample_rate={self.sample_rate}"
        return s


_FILTERBANK_DOC = r"""A complex 1d convolution with learnable {name} filters.

    Its filters are those of :func:`~cplxmodule.cplx.{kernel}`.

    Output channel :math:`c` filters its input channels (those of its
    group) with the same {name} filter of learnable centre frequency
    :math:`f_c` = ``center[c]`` and width :math:`\sigma_c` = ``width[c]``:

    .. math::

        {formula}

    sampled at :math:`t = (k - (K - 1)/2) / r`, :math:`k = 0, \dots, K - 1`,
    for the ``kernel_size`` :math:`K` and ``sample_rate`` :math:`r` (1 if
    ``None``: time in samples and frequency in cycles per sample; otherwise
    seconds and Hz). Its passband is around :math:`+f_c`: a complex tone
    :math:`e^{{i 2\pi f t}}` passes with the gain :math:`|\sum_k g_c(t_k)
    e^{{-i 2\pi f t_k}}|`, largest at :math:`f = f_c`. As every convolution of
    torch, the layer correlates,
    :math:`y_c[n] = b_c + \sum_{{j, k}} x_j[s n + d k] \, w_{{c j}}[k]`, so
    its ``weight`` is the conjugate filter :math:`w_c = \overline{{g_c}}`
    (the filter reversed in time): the output is the inner product of each
    window with :math:`g_c`. The ``weight`` is computed from ``center``
    and ``width`` on each read, through :class:`~cplxmodule.nn.CplxConv1d`'s
    forward: :func:`~cplxmodule.nn.cached` computes it once for many calls.

    Parameters
    ----------
    in_channels, out_channels, kernel_size, stride, padding, dilation, groups, padding_mode
        As for :class:`~cplxmodule.nn.CplxConv1d`.
    bias : bool, default False
        Whether to learn an additive complex bias (zero at initialisation).
    sample_rate : float, optional
        Samples per second; ``None`` measures time in samples.
    device, dtype : optional
        Factory kwargs; ``dtype`` is the real dtype of the parameters.

    Attributes
    ----------
    center, width : torch.nn.Parameter
        Real, of shape ``(out_channels,)``.
    weight : Cplx
        Read-only, the conjugate filters :math:`\overline{{g_c}}`, of shape
        ``(out_channels, in_channels / groups, kernel_size)``.
    bias : CplxParameter or None
        Of shape ``(out_channels,)``.

    Shape
    -----
    - Input: ``(N, C_in, L_in)`` or ``(C_in, L_in)``, a :class:`~cplxmodule.cplx.Cplx`.
    - Output: ``(N, C_out, L_out)`` or ``(C_out, L_out)``, ``L_out`` as for
      :class:`torch.nn.Conv1d`.

    Notes
    -----
    ``reset_parameters()`` spreads the centres evenly over the band from 0
    to the Nyquist frequency, :math:`f_c = (c + 1/2) \Delta f` with
    :math:`\Delta f = r / (2 C_{{out}})`, and sets every width to the smaller
    of :math:`1 / (\pi \Delta f)` (each filter's frequency response has the
    standard deviation :math:`\Delta f / 2`) and :math:`K / (6 r)` (the
    envelope's :math:`\pm 3\sigma` fits in the kernel).

    References
    ----------
    {references}

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> layer = {cls}(1, 8, 33, stride=4, sample_rate=16000.0)
    >>> layer.weight.shape
    torch.Size([8, 1, 33])
    >>> layer(cplx.randn(2, 1, 400)).shape
    torch.Size([2, 8, 92])
    """

_REFERENCES = """P.-G. Noé, T. Parcollet, M. Morchid, "CGCNN: Complex Gabor Convolutional
    Neural Network on raw speech", ICASSP 2020.

    N. Zeghidour, O. Teboul, F. de Chaumont Quitry, M. Tagliasacchi, "LEAF:
    A Learnable Frontend for Audio Classification", ICLR 2021."""


class CplxGaborConv1d(_CplxFilterbankConv1d):
    __doc__ = _FILTERBANK_DOC.format(
        name="Gabor",
        kernel="gabor_kernel",
        cls="CplxGaborConv1d",
        formula=r"g_c(t) = \exp\left(-\frac{t^2}{2\sigma_c^2}\right) e^{i 2\pi f_c t},",
        references=_REFERENCES,
    )
    _kernel = staticmethod(cplx.gabor_kernel)


class CplxMorletConv1d(_CplxFilterbankConv1d):
    __doc__ = _FILTERBANK_DOC.format(
        name="Morlet",
        kernel="morlet_kernel",
        cls="CplxMorletConv1d",
        formula=r"g_c(t) = \exp\left(-\frac{t^2}{2\sigma_c^2}\right)"
        r" \left(e^{i 2\pi f_c t} - e^{-2\pi^2 f_c^2 \sigma_c^2}\right),",
        references=_REFERENCES
        + """

    I. Daubechies, "Ten Lectures on Wavelets", SIAM 1992, section 2.3.""",
    )
    _kernel = staticmethod(cplx.morlet_kernel)


class _CplxSpectralPoolNd(CplxToCplx):
    """Shared ``__init__`` and ``forward`` of the spectral pooling layers."""

    _n: ClassVar[Any] = None

    def __init__(self, output_size: Union[int, Sequence[int]]) -> None:
        ntuple(output_size, self._n, "output_size", type(self).__name__, minimum=1)
        super().__init__()
        self.output_size = output_size

    def forward(self, input: CplxLike) -> Cplx:
        input = _check_cplx(self, input)
        return _spectral_pool(input, self.output_size, self._n, where=self._get_name())

    def extra_repr(self):
        return f"output_size={self.output_size}"


_POOL_DOC = r"""Spectral pooling over the last {n} dimension{s}: :func:`~cplxmodule.cplx.{func}`.

    Keeps the ``output_size`` lowest frequencies of the input's discrete
    Fourier transform (Rippel et al., 2015); the normalisation keeps the
    mean, so a constant input stays constant (formula in
    :func:`~cplxmodule.cplx.{func}`). No parameters.

    Parameters
    ----------
    output_size : int or tuple of int
        The output's spatial sizes, none above the input's.

    Shape
    -----
    - Input: ``(*, {dims_in})``, a :class:`~cplxmodule.cplx.Cplx`.
    - Output: ``(*, {dims_out})``, the sizes of ``output_size``.

    References
    ----------
    O. Rippel, J. Snoek, R. P. Adams, "Spectral Representations for
    Convolutional Neural Networks", NeurIPS 2015.

    Examples
    --------
    >>> import cplxmodule.cplx as cplx
    >>> {cls}({size})(cplx.randn({shape_in})).shape
    torch.Size([{shape_out}])
    """


class CplxSpectralPool1d(_CplxSpectralPoolNd):
    __doc__ = _POOL_DOC.format(
        n=1,
        s="",
        func="spectral_pool1d",
        dims_in="L_in",
        dims_out="L_out",
        cls="CplxSpectralPool1d",
        size="5",
        shape_in="2, 3, 16",
        shape_out="2, 3, 5",
    )
    _n = 1


class CplxSpectralPool2d(_CplxSpectralPoolNd):
    __doc__ = _POOL_DOC.format(
        n=2,
        s="s",
        func="spectral_pool2d",
        dims_in="H_in, W_in",
        dims_out="H_out, W_out",
        cls="CplxSpectralPool2d",
        size="(4, 6)",
        shape_in="2, 3, 8, 9",
        shape_out="2, 3, 4, 6",
    )
    _n = 2


class CplxSpectralPool3d(_CplxSpectralPoolNd):
    __doc__ = _POOL_DOC.format(
        n=3,
        s="s",
        func="spectral_pool3d",
        dims_in="D_in, H_in, W_in",
        dims_out="D_out, H_out, W_out",
        cls="CplxSpectralPool3d",
        size="(2, 4, 6)",
        shape_in="2, 3, 5, 8, 9",
        shape_out="2, 3, 2, 4, 6",
    )
    _n = 3
