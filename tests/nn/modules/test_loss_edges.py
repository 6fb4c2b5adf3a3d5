"""The complex losses on empty inputs, against torch's real losses on the same sizes."""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule import nn


def parts_requiring_grad(*shape):
    z = cplx.randn(*shape)
    z.real.requires_grad_(), z.imag.requires_grad_()
    return z


@pytest.mark.parametrize("shape", [(2, 0, 6, 6), (0, 3, 6, 6)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ssim_of_empty_images_reduces_as_mse_loss(shape, reduction):
    x, y = parts_requiring_grad(*shape), parts_requiring_grad(*shape)
    loss = nn.CplxSSIMLoss(window_size=3, reduction=reduction)(x, y)
    # torch's loss on an empty input: a mean of NaN, a sum of 0, an empty map
    reference = F.mse_loss(torch.randn(shape), torch.randn(shape), reduction=reduction)
    if reduction == "none":
        assert loss.shape == (*shape[:2], 4, 4) and loss.numel() == 0
    else:
        torch.testing.assert_close(loss, reference, equal_nan=True)
    loss.sum().backward()
    for part in (x.real, x.imag, y.real, y.imag):
        assert part.grad is not None and part.grad.shape == shape


@pytest.mark.parametrize("shape", [(2, 0, 6, 6), (2, 3, 0, 6), (2, 3, 6, 0), (2, 3, 6, 5), (3, 6, 6)])
def test_ssim_refuses_images_without_room_for_the_window_naming_the_caller(shape):
    message = r"`input` must have shape \(N, C, H, W\) with H and W at least `window_size`=7, got"
    with pytest.raises(ValueError, match=rf"^CplxSSIMLoss: {message}"):
        nn.CplxSSIMLoss(window_size=7)(cplx.randn(*shape), cplx.randn(*shape))
    with pytest.raises(ValueError, match=rf"^ssim_loss: {message}"):
        cplx.ssim_loss(cplx.randn(*shape), cplx.randn(*shape), window_size=7)
