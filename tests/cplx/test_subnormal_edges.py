"""The argument and the phase-aware loss at extreme moduli, against torch's complex128.

In single precision ``real^2 + imag^2`` underflows below a modulus of about
1e-19 and overflows above 1e19, and ``1 / modulus`` overflows below about
3e-39: functions whose value or gradient goes through them must still give
what the same math in double precision gives, rounded to single.
"""

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx

# (real, imag): moduli from the bottom of the subnormal range to the top of
# the single precision range, where the gradients of the argument (of the
# order of 1 / modulus) are still finite in single precision
POINTS = [
    (3e-20, 4e-20), (-3e-20, 4e-20), (1.543e-39, 7.425e-40), (-9.885e-39, -3.92e-39),
    (4e-39, 0.0), (0.0, -4e-39), (1e-10, -2e-10), (0.6, 0.8), (-1.5, 2.5e-7),
    (1e20, 3e20), (-2e30, 1e29), (3e38, -2e38), (1e38, 0.0),
]


def reference_angle(real, imag):
    """The argument and its gradients in complex128, each rounded to single precision."""
    z = torch.complex(torch.tensor(real, dtype=torch.float64),
                      torch.tensor(imag, dtype=torch.float64)).requires_grad_()
    z.angle().backward()
    return (z.angle().detach().float(), z.grad.real.float(), z.grad.imag.float())


def close(actual, expected):
    # the gradients near the bottom of the range are subnormal themselves
    torch.testing.assert_close(actual, expected, rtol=2e-6, atol=1e-44)


@pytest.mark.parametrize("real, imag", POINTS)
def test_angle_and_its_gradient_against_complex128(real, imag):
    re = torch.tensor(real, requires_grad=True)
    im = torch.tensor(imag, requires_grad=True)
    angle = Cplx(re, im).angle
    angle.backward()
    expected, d_re, d_im = reference_angle(real, imag)
    close(angle.detach(), expected)
    close(re.grad, d_re)
    close(im.grad, d_im)


def test_angle_is_atan2_of_the_parts():
    # the scaling is by powers of two: the value is torch's, to the bit
    torch.manual_seed(0)
    z = cplx.randn(1000) * torch.logspace(-40, 38, 1000)
    assert torch.equal(z.angle, torch.atan2(z.imag, z.real))


def test_angle_at_zero_and_at_non_finite_parts():
    # the gradient at 0 is torch's complex angle's, 0; the argument of an
    # infinite or NaN part is atan2's
    re = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), 1.0, float("nan")], requires_grad=True)
    im = torch.tensor([0.0, 0.0, 1.0, float("inf"), float("nan"), 1.0], requires_grad=True)
    angle = Cplx(re, im).angle
    torch.testing.assert_close(angle, torch.atan2(im, re), equal_nan=True)
    angle[:2].sum().backward()
    assert torch.equal(re.grad[:2], torch.zeros(2)) and torch.equal(im.grad[:2], torch.zeros(2))


def test_angle_in_double_precision_near_its_smallest_modulus():
    # the squares of the parts underflow in double precision too
    re = torch.tensor(3e-300, dtype=torch.float64, requires_grad=True)
    Cplx(re, torch.tensor(4e-300, dtype=torch.float64)).angle.backward()
    # -imag / |z|^2 = -4e-300 / 25e-600
    torch.testing.assert_close(re.grad, torch.tensor(-0.16e300, dtype=torch.float64))


def reference_phase_aware(x, y, modulus_weight, phase_weight):
    """The loss per element and the gradient of its sum in complex128, rounded to single precision."""
    x = torch.complex(x.real.detach().double(), x.imag.detach().double()).requires_grad_()
    y = torch.complex(y.real.double(), y.imag.double())
    cos = (x * y.conj()).real / (x.abs() * y.abs())
    loss = modulus_weight * (x.abs() - y.abs()) ** 2 + phase_weight * (1 - cos)
    loss.sum().backward()
    return loss.detach().float(), x.grad.real.float(), x.grad.imag.float()


@pytest.mark.parametrize("scale", [1e-44, 1e-38, 1e-30, 1e-20, 1.0, 1e20, 1e30, 1e37])
def test_phase_term_against_complex128(scale):
    generator = torch.Generator().manual_seed(0)
    # two operands of moduli near ``scale``, neither of them zero
    x = Cplx(*(torch.rand(2, 64, generator=generator) + 0.5) * scale)
    y = Cplx(*(torch.rand(2, 64, generator=generator) - 0.5) * (4 * scale))
    y = Cplx(torch.where(y.real == 0, scale, y.real), y.imag)
    re, im = x.real.requires_grad_(), x.imag.requires_grad_()
    loss = cplx.phase_aware_loss(Cplx(re, im), y, modulus_weight=0.0, reduction="none")
    loss.sum().backward()
    expected, d_re, d_im = reference_phase_aware(x, y, 0.0, 1.0)
    # subnormal parts carry few digits: the reference is on the same parts
    torch.testing.assert_close(loss.detach(), expected, rtol=1e-5, atol=1e-6)
    if scale < 1e-38:
        # the gradients, of the order of 1 / modulus, overflow in single precision
        return
    # the gradients relative to their scale 1 / modulus
    size = x.abs().double()
    for actual, reference in [(re.grad, d_re), (im.grad, d_im)]:
        assert torch.isfinite(actual).all()
        assert ((actual.double() - reference.double()) * size).abs().max() < 1e-5


def test_phase_aware_loss_at_a_subnormal_modulus():
    re = torch.tensor([1.543e-39], requires_grad=True)
    x, y = Cplx(re, torch.tensor([7.425e-40])), Cplx(torch.tensor([-9.885e-39]), torch.tensor([-3.92e-39]))
    loss = cplx.phase_aware_loss(x, y)
    loss.backward()
    expected, d_re, _ = reference_phase_aware(Cplx(re.detach(), x.imag), y, 1.0, 1.0)
    torch.testing.assert_close(loss.detach(), expected.squeeze(0))
    torch.testing.assert_close(re.grad, d_re)


def test_phase_aware_loss_keeps_a_zero_operand_undefined_phase_at_zero():
    re = torch.zeros(2, requires_grad=True)
    x = Cplx(re, torch.zeros(2))
    loss = cplx.phase_aware_loss(x, Cplx(torch.tensor([1.0, 1e-40]), torch.zeros(2)), reduction="none")
    loss.sum().backward()
    torch.testing.assert_close(loss.detach(), torch.tensor([1.0, 1e-80]).float())
    assert torch.isfinite(re.grad).all()


@pytest.mark.parametrize("threshold", [-0.5, 0.25, 1e-30], ids=["lift", "shrink", "tiny"])
@pytest.mark.parametrize("real, imag", POINTS)
def test_modrelu_with_a_tensor_threshold_against_complex128(real, imag, threshold):
    # a tensor threshold takes the rescaled path, which divides it by the
    # parts' scale: a lift (b < 0) of a subnormal z must not overflow there,
    # nor a part of a z whose modulus is beyond float32's range
    re = torch.tensor(real, requires_grad=True)
    im = torch.tensor(imag, requires_grad=True)
    out = cplx.modrelu(Cplx(re, im), torch.tensor(threshold))
    (out.real + 2 * out.imag).backward()

    z = torch.complex(torch.tensor(real, dtype=torch.float64),
                      torch.tensor(imag, dtype=torch.float64)).requires_grad_()
    r = z.abs()
    expected = torch.relu(r - threshold) * z / r
    (grad,) = torch.autograd.grad((expected.real + 2 * expected.imag), z)
    close(out.real.detach(), expected.real.detach().float())
    close(out.imag.detach(), expected.imag.detach().float())
    # beyond the largest float32 modulus the gradient goes through the
    # derivative in the phasor, |z|, which overflows (NaN, as before)
    modulus = torch.tensor(real).hypot(torch.tensor(imag))
    finite = torch.isfinite(grad.real.float()) & torch.isfinite(grad.imag.float())
    if finite and torch.isfinite(modulus):
        close(re.grad, grad.real.float())
        close(im.grad, grad.imag.float())
