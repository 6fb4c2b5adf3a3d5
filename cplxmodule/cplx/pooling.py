"""Complex max pooling by modulus."""

import torch
import torch.nn.functional as F

from ._shared import HALF_DTYPES, checked_cplx, doc_kwargs

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d"]


def _max_poolnd(n, op, input, kernel_size, stride, padding, dilation, ceil_mode,
                return_indices):
    input = checked_cplx(input, where=f"max_pool{n}d")
    with torch.no_grad():
        # |z|^2 orders like |z| and costs no square root; in float32 for a
        # half-precision input, whose squares would round (bfloat16) or
        # overflow (float16) into ties that pick the wrong element
        parts = input.float() if input.dtype in HALF_DTYPES else input
        modulus = parts.real * parts.real + parts.imag * parts.imag
        _, indices = op(modulus, kernel_size, stride, padding, dilation,
                        ceil_mode=ceil_mode, return_indices=True)
    flat = indices.flatten(-n)
    output = input.apply(lambda part: part.flatten(-n).gather(-1, flat).view_as(indices))
    return (output, indices) if return_indices else output


_POOL_DOC = r"""Complex {n}d max pooling by modulus.

    Each window yields its element of largest :math:`|z|`, which keeps the
    phase (pooling the parts separately would mix elements).

    Parameters
    ----------
    input : Cplx
        Input of shape ``(N, C, {dims})`` or ``(C, {dims})``.
    kernel_size, stride, padding, dilation, ceil_mode
        As for :func:`torch.nn.functional.max_pool{n}d`.
    return_indices : bool, default False
        Also return the flat indices of the chosen elements, as torch does.

    Returns
    -------
    Cplx, or (Cplx, torch.Tensor) if ``return_indices``

    Raises
    ------
    TypeError
        If ``input`` is not a :class:`Cplx`.

    Notes
    -----
    The window's winner is chosen by :math:`|z|^2` (no square root, in
    float32 for a float16 or bfloat16 input), without tracking gradients;
    the gradient flows to the chosen elements' parts.

    Examples
    --------
    >>> z = cplx.randn(2, 3, {example})
    >>> out, indices = max_pool{n}d(z, 2, return_indices=True)
    >>> out.shape == indices.shape == torch.Size([2, 3, {pexample}])
    True
    """


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _max_poolnd(1, F.max_pool1d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _max_poolnd(2, F.max_pool2d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    return _max_poolnd(3, F.max_pool3d, input, kernel_size, stride, padding,
                       dilation, ceil_mode, return_indices)


for _n, _f in ((1, max_pool1d), (2, max_pool2d), (3, max_pool3d)):
    _f.__doc__ = _POOL_DOC.format(**doc_kwargs(_n))
