"""The package used the way research code uses it.

Research code written against the published cplxmodule 2022.6 hands layers
and functions torch's native complex tensors (an FFT's output, a radar
cube, a front end that returns complex64) and objects of its own with
``.real``/``.imag``. Each pattern below is checked twice:

- against the published package: ``tests/data/record_published.py``
  recorded its inputs, state_dict, outputs and gradients; the state_dict
  loads strictly into our model, which must give the same values;
- against a native reference: the same model written in torch's complex
  dtype (``torch.nn.functional`` on complex tensors, ``torch.fft``).
"""

import math
import pathlib

import pytest
import torch
import torch.nn.functional as F

from cplxmodule import cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import (
    CplxBatchNorm2d,
    CplxConv1d,
    CplxConv2d,
    CplxLinear,
    CplxMaxPool2d,
    CplxModReLU,
    CplxModulus,
    CplxParameter,
    CplxSequential,
    CplxToCplx,
    TensorToCplx,
)

pytestmark = pytest.mark.usefixtures("one_thread")

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
RECORDED = torch.load(DATA / "published_research_patterns.pt", weights_only=True)


def assert_close(actual, expected, rtol=1e-5):
    """Equal up to ``rtol`` of each value and of the largest expected modulus (a Cplx is converted first).

    The second bound covers values that cancel to nearly zero: the package
    and the references sum in different orders, in float32.
    """
    if isinstance(actual, Cplx):
        actual = cplx.to_complex(actual)
    atol = rtol * expected.abs().max().item() if expected.numel() else 0.0
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol)


def assert_all_close(actual, expected, **tol):
    assert actual.keys() == expected.keys()
    for name in actual:
        assert_close(actual[name], expected[name], **tol)


def joined(tensors):
    """``tensors`` by name, each ``<stem>.real``/``<stem>.imag`` pair joined as ``<stem>`` in torch's complex dtype."""
    tensors = dict(tensors)
    for name in [n for n in tensors if n.endswith(".real")]:
        stem = name[: -len(".real")]
        tensors[stem] = torch.complex(tensors.pop(name), tensors.pop(stem + ".imag"))
    return tensors


def grads_of(model):
    return joined({name: p.grad for name, p in model.named_parameters()})


def native_leaves(model):
    """The model's parameters as fresh leaves, complex ones in torch's complex dtype."""
    values = joined({name: p.detach().clone() for name, p in model.named_parameters()})
    return {name: value.requires_grad_() for name, value in values.items()}


def loaded(model, pattern):
    """``model`` holding the published model's recorded state_dict (strict)."""
    model.load_state_dict(RECORDED[pattern]["state_dict"], strict=True)
    return model


# --- a learnable DFT on a radar cube ------------------------------------------
def dft_matrix(n):
    """The n-point DFT as a complex64 matrix: the FFT of the identity."""
    return torch.fft.fft(torch.eye(n, dtype=torch.complex64), dim=0)


def set_dft(layer, n, route):
    if route == "native":
        layer.weight = CplxParameter(dft_matrix(n))
    elif route == "view_as_real":
        layer.weight = CplxParameter(TensorToCplx()(torch.view_as_real(dft_matrix(n))))
    else:
        with torch.no_grad():
            layer.weight.real.copy_(dft_matrix(n).real)
            layer.weight.imag.copy_(dft_matrix(n).imag)


def range_doppler(samples, chirps, route="native"):
    """Range DFT along the samples, transpose, Doppler DFT along the chirps, modulus."""
    range_dft = CplxLinear(samples, samples, bias=False)
    doppler_dft = CplxLinear(chirps, chirps, bias=False)
    set_dft(range_dft, samples, route)
    set_dft(doppler_dft, chirps, route)
    return torch.nn.Sequential(
        range_dft, CplxToCplx[torch.transpose](-1, -2), doppler_dft, CplxModulus()
    )


def adam_step(parameters, forward, target):
    """One Adam step on the MSE loss: the output before and after it (gradients stay in ``.grad``)."""
    optimizer = torch.optim.Adam(parameters, lr=1e-2)
    output = forward()
    F.mse_loss(output, target).backward()
    optimizer.step()
    with torch.no_grad():
        return output.detach(), forward()


@pytest.mark.parametrize("route", ["native", "view_as_real", "copy"])
def test_learnable_dft_is_the_2d_fft(route):
    cube = torch.randn(2, 4, 8, dtype=torch.complex64)  # (batch, chirps, samples)
    model = range_doppler(8, 4, route)
    assert_close(model(cube), torch.fft.fft2(cube).transpose(-1, -2).abs())


def test_learnable_dft_trains_as_native_complex_parameters():
    cube = torch.randn(2, 4, 8, dtype=torch.complex64)
    target = torch.rand(2, 8, 4)
    model = range_doppler(8, 4)
    ours = adam_step(list(model.parameters()), lambda: model(cube), target)

    weights = {"0.weight": dft_matrix(8), "2.weight": dft_matrix(4)}
    for w in weights.values():
        w.requires_grad_()

    def native():
        spectrum = F.linear(cube, weights["0.weight"]).transpose(-1, -2)
        return F.linear(spectrum, weights["2.weight"]).abs()

    # torch's Adam steps a complex parameter as its two real parts
    reference = adam_step(list(weights.values()), native, target)
    assert_close(ours[0], reference[0])
    assert_all_close(grads_of(model), {name: w.grad for name, w in weights.items()})
    assert_all_close(joined(model.state_dict()), {n: w.detach() for n, w in weights.items()})
    assert_close(ours[1], reference[1])


def test_learnable_dft_matches_published():
    recorded = RECORDED["dft"]
    model = range_doppler(8, 4)
    # the weights set from torch's complex dtype are those the published model held
    assert_all_close(model.state_dict(), recorded["state_dict"])
    loaded(model, "dft")
    inputs = recorded["inputs"]
    spectrum, after = adam_step(
        list(model.parameters()), lambda: model(inputs["cube"]), inputs["target"]
    )
    assert_close(spectrum, recorded["outputs"]["spectrum"])
    assert_all_close(grads_of(model), joined(recorded["grads"]))
    assert_close(after, recorded["outputs"]["after_step"])


# --- a Gabor front end into batch norm, modReLU, pooling and dense blocks -------
def gabor_kernels(theta, size):
    """Complex Gabor kernels, one per orientation in ``theta``: shape (len(theta), 1, size, size)."""
    r = torch.arange(size, dtype=theta.dtype) - size // 2
    v, u = torch.meshgrid(r, r, indexing="ij")
    along = u * theta.cos()[:, None, None] + v * theta.sin()[:, None, None]
    return torch.polar(torch.exp(-(u**2 + v**2) / 4.0), 1.5 * along).unsqueeze(1)


class Gabor(torch.nn.Module):
    """A Gabor filter bank with learnable orientations: real image in, complex64 out."""

    def __init__(self, orientations=4, size=5):
        super().__init__()
        self.theta = torch.nn.Parameter(torch.linspace(0, math.pi, orientations + 1)[:-1])
        self.size = size

    def forward(self, x):
        kernels = gabor_kernels(self.theta, self.size)
        return F.conv2d(x.to(kernels.dtype), kernels, padding=self.size // 2)


class DenseBlock(torch.nn.Module):
    """Each convolution sees all earlier feature maps, joined along the channels."""

    def __init__(self, channels, growth, layers):
        super().__init__()
        self.convs = torch.nn.ModuleList(
            CplxConv2d(channels + i * growth, growth, 3, padding=1) for i in range(layers)
        )

    def forward(self, z):
        for conv in self.convs:
            z = cplx.cat([z, conv(z)], dim=1)
        return z


def gabor_net():
    return torch.nn.Sequential(
        Gabor(),
        CplxBatchNorm2d(4),
        CplxModReLU(threshold=0.2),
        CplxMaxPool2d(2),
        CplxConv2d(4, 4, 3, padding=1),
        DenseBlock(4, 2, 2),
        CplxModulus(),
    )


def gabor_loss(features):
    return (features.mean(dim=(-1, -2)) ** 2).sum()


def native_batch_norm(z, mean, covariance, weight, bias):
    """Whiten each channel by the inverse square root of its 2x2 covariance, then the affine map."""
    centred = (z - mean.reshape((1, -1) + (1,) * (z.dim() - 2))).transpose(0, 1)
    eigenvalues, vectors = torch.linalg.eigh(covariance.to(torch.float64))
    inverse_sqrt = (vectors * eigenvalues.rsqrt().unsqueeze(-2)) @ vectors.transpose(-1, -2)
    # per channel, (2, 2) @ (2, values): rows are the real and imaginary parts
    parts = torch.stack([centred.real, centred.imag], dim=1).flatten(2)
    whitened = inverse_sqrt.to(parts.dtype) @ parts
    mixed = weight.permute(2, 0, 1) @ whitened + bias.t().unsqueeze(-1)
    return torch.complex(mixed[:, 0], mixed[:, 1]).reshape(centred.shape).transpose(0, 1)


def batch_statistics(z):
    """Per-channel mean (complex) and the biased 2x2 covariance of real and imaginary parts."""
    dims = [0] + list(range(2, z.dim()))
    mean = z.mean(dim=dims)
    centred = z - mean.reshape((1, -1) + (1,) * (z.dim() - 2))
    x, y = centred.real, centred.imag
    vrr, vri, vii = (x * x).mean(dims), (x * y).mean(dims), (y * y).mean(dims)
    covariance = torch.stack([torch.stack([vrr, vri], -1), torch.stack([vri, vii], -1)], -2)
    return mean, covariance


def native_gabor_net(model, p, image):
    """``gabor_net`` in torch's complex dtype, with the parameters ``p`` and ``model``'s mode."""
    z = F.conv2d(image.to(torch.complex64), gabor_kernels(p["0.theta"], 5), padding=2)
    norm = model[1]
    if model.training:
        mean, covariance = batch_statistics(z)
    else:
        mean = torch.complex(norm.running_mean[0], norm.running_mean[1])
        covariance = norm.running_var.permute(2, 0, 1)
    covariance = covariance + norm.eps * torch.eye(2)
    z = native_batch_norm(z, mean, covariance, p["1.weight"], p["1.bias"])
    z = torch.sgn(z) * torch.relu(z.abs() - model[2].threshold)
    _, where = F.max_pool2d(z.abs(), 2, return_indices=True)
    z = z.flatten(2).gather(2, where.flatten(2)).reshape(where.shape)
    z = F.conv2d(z, p["4.weight"], p["4.bias"], padding=1)
    for i in range(2):
        block = p[f"5.convs.{i}.weight"], p[f"5.convs.{i}.bias"]
        z = torch.cat([z, F.conv2d(z, *block, padding=1)], dim=1)
    return z.abs()


def run_gabor(model, image, parameters, forward):
    """The features, and the gradients of the loss with respect to ``parameters``."""
    features = forward(image)
    gabor_loss(features).backward()
    return features.detach(), {name: p.grad for name, p in parameters.items()}


def test_gabor_network_matches_native_complex():
    model = loaded(gabor_net(), "gabor")
    image = RECORDED["gabor"]["inputs"]["image"]
    leaves = native_leaves(model)
    ours, _ = run_gabor(model, image, {}, model)
    reference, reference_grads = run_gabor(
        model, image, leaves, lambda x: native_gabor_net(model, leaves, x)
    )
    assert_close(ours, reference)
    assert_all_close(grads_of(model), reference_grads)
    # running statistics from a fresh start, in torch's convention (unbiased)
    norm, m = model[1], model[1].momentum
    mean, covariance = batch_statistics(model[0](image).detach())
    n = image.shape[0] * image.shape[-2] * image.shape[-1]  # values per channel
    assert_close(torch.complex(*norm.running_mean), m * mean)
    expected = (1 - m) * torch.eye(2) + m * covariance * n / (n - 1)
    assert_close(norm.running_var.permute(2, 0, 1), expected)
    with torch.no_grad():
        assert_close(model.eval()(image), native_gabor_net(model, leaves, image))


def test_gabor_network_matches_published():
    recorded = RECORDED["gabor"]
    model = loaded(gabor_net(), "gabor")
    image = recorded["inputs"]["image"]
    features, _ = run_gabor(model, image, {}, model)
    assert_close(features, recorded["outputs"]["train"])
    assert_all_close(grads_of(model), joined(recorded["grads"]))
    norm, published = model[1], recorded["outputs"]
    torch.testing.assert_close(norm.running_mean, published["running_mean"])
    # the published running covariance is the biased batch estimate plus eps,
    # ours torch's unbiased one (docs/guides/migrating.rst)
    m, eye = norm.momentum, torch.eye(2)[..., None]
    n = image.shape[0] * image.shape[-2] * image.shape[-1]  # values per channel
    batch = (norm.running_var - (1 - m) * eye) / m * (n - 1) / n
    torch.testing.assert_close(
        (1 - m) * eye + m * (batch + norm.eps * eye), published["running_var"]
    )
    # with the published statistics, eval outputs differ by O(eps)
    norm.running_var.copy_(published["running_var"])
    with torch.no_grad():
        assert_close(model.eval()(image), published["eval"], rtol=1e-4)


# --- the functional API on native operands ------------------------------------
def functional_calls(conv2d, linear, z, k, kb, kg, x, w, b):
    return {
        "same": conv2d(z, k, kb, padding="same"),
        "groups": conv2d(z, kg, stride=2, padding=1, groups=2),
        "linear": linear(x, w, b),
    }


def run_functional(conv2d, linear):
    """Outputs and gradients of the recorded operands (complex64 leaves)."""
    leaves = {
        name: t.clone().requires_grad_() for name, t in RECORDED["functional"]["inputs"].items()
    }
    outputs = functional_calls(conv2d, linear, **leaves)
    sum(y.real.pow(2).sum() + y.imag.pow(2).sum() for y in outputs.values()).backward()
    grads = {name: t.grad for name, t in leaves.items()}
    return {name: y.detach() for name, y in outputs.items()}, grads


def test_functional_with_native_operands_matches_torch():
    outputs, grads = run_functional(cplx.conv2d, cplx.linear)
    # the gradients reached the complex leaves
    assert all(g.dtype == torch.complex64 for g in grads.values())
    expected, expected_grads = run_functional(F.conv2d, F.linear)
    assert_all_close(outputs, expected)
    assert_all_close(grads, expected_grads)


def test_functional_with_native_operands_matches_published():
    outputs, grads = run_functional(cplx.conv2d, cplx.linear)
    assert_all_close(outputs, RECORDED["functional"]["outputs"])
    assert_all_close(grads, RECORDED["functional"]["grads"])


def test_cat_joins_native_and_cplx():
    native = torch.randn(2, 3, 4, dtype=torch.complex64)
    other = cplx.randn(2, 1, 4)
    joined_ = cplx.cat([native, other, native.conj()], dim=1)
    expected = torch.cat([native, cplx.to_complex(other), native.conj()], dim=1)
    assert_close(joined_, expected, rtol=0)


# --- a user's own I/Q type through a conv encoder -----------------------------
class IQRecording:
    """A recording of in-phase and quadrature samples with its sample rate, as research code keeps them."""

    def __init__(self, i, q, sample_rate):
        self.i, self.q, self.sample_rate = i, q, sample_rate

    @property
    def real(self):
        return self.i

    @property
    def imag(self):
        return self.q


def iq_encoder():
    return torch.nn.Sequential(
        CplxConv1d(2, 4, 5, stride=2),
        CplxModReLU(threshold=0.1),
        CplxConv1d(4, 4, 3, stride=2),
        CplxModulus(),
    )


def test_iq_encoder_matches_native_and_published():
    recorded = RECORDED["iq_encoder"]
    model = loaded(iq_encoder(), "iq_encoder")
    i, q = recorded["inputs"]["i"], recorded["inputs"]["q"]
    codes = model(IQRecording(i, q, sample_rate=1e6)).mean(dim=-1)
    codes.pow(2).sum().backward()
    assert_close(codes, recorded["outputs"]["codes"])
    assert_all_close(grads_of(model), joined(recorded["grads"]))

    p = native_leaves(model)
    z = F.conv1d(torch.complex(i, q), p["0.weight"], p["0.bias"], stride=2)
    z = torch.sgn(z) * torch.relu(z.abs() - 0.1)
    expected = F.conv1d(z, p["2.weight"], p["2.bias"], stride=2).abs().mean(dim=-1)
    expected.pow(2).sum().backward()
    assert_close(codes, expected.detach())
    assert_all_close(grads_of(model), {name: t.grad for name, t in p.items()})


# --- a physics-informed loss: a complex MLP differentiated twice ---------------
def complex_mlp():
    return CplxSequential(
        CplxLinear(1, 8),
        CplxToCplx[torch.tanh](),
        CplxLinear(8, 8),
        CplxToCplx[torch.tanh](),
        CplxLinear(8, 1),
    )


def native_mlp(p, x):
    def split_tanh(h):
        return torch.complex(h.real.tanh(), h.imag.tanh())

    h = split_tanh(F.linear(x, p["0.weight"], p["0.bias"]))
    h = split_tanh(F.linear(h, p["2.weight"], p["2.bias"]))
    return F.linear(h, p["4.weight"], p["4.bias"])


def helmholtz(psi_of, x, wavenumber=2 * math.pi):
    """psi, psi'' and the mean squared residual of psi'' + k^2 psi = 0 at the points ``x``."""
    x = x.clone().requires_grad_()
    psi = psi_of(x.to(torch.complex64))
    second = []
    for part in (psi.real, psi.imag):
        (first,) = torch.autograd.grad(part.sum(), x, create_graph=True)
        (d2,) = torch.autograd.grad(first.sum(), x, create_graph=True)
        second.append(d2)
    psi_xx = torch.complex(*second)
    residual = psi_xx + wavenumber**2 * torch.complex(psi.real, psi.imag)
    loss = residual.abs().pow(2).mean()
    loss.backward()
    return {
        "psi": torch.complex(psi.real, psi.imag).detach(),
        "psi_xx": psi_xx.detach(),
        "loss": loss.detach(),
    }


def test_physics_informed_mlp_matches_native_and_published():
    recorded = RECORDED["pinn"]
    model = loaded(complex_mlp(), "pinn")
    x = recorded["inputs"]["x"]
    ours = helmholtz(model, x)
    assert_all_close(ours, recorded["outputs"])
    assert_all_close(grads_of(model), joined(recorded["grads"]))

    p = native_leaves(model)
    expected = helmholtz(lambda z: native_mlp(p, z), x)
    assert_all_close(ours, expected)
    assert_all_close(grads_of(model), {name: t.grad for name, t in p.items()})
