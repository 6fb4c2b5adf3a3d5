"""Record what the published cplxmodule 2022.6 computes on research-code patterns.

Writes ``published_research_patterns.pt``, which
``tests/integration/test_research_patterns.py`` reads. Not a test; CI never
runs it. Run it with the published package, never this repository's:

    pip install --no-deps --target /tmp/pub cplxmodule==2022.6
    python tests/data/record_published.py --published /tmp/pub

(or ``PYTHONPATH=/tmp/pub python tests/data/record_published.py``).

Each pattern is built with a fixed seed and saved as plain tensors (loadable
with ``torch.load(..., weights_only=True)``; complex values in torch's
complex64): its ``inputs``, the model's ``state_dict`` before any step, and
what the published package computed (``outputs``, parameter gradients as
``grads``). Where the published package cannot take an operand that research
code passes, it is given the same values as a ``Cplx``: an object with
``.real``/``.imag`` only (the published layers ask it for ``.dim()``), and a
native complex bias of ``cplx.conv2d``/``cplx.linear`` (the published
functions add it to the output's real part, which becomes complex).
"""

import argparse
import math
import pathlib
import sys

import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent


def parse():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--published", help="directory holding the published package")
    parser.add_argument("--out", default=str(HERE / "published_research_patterns.pt"))
    return parser.parse_args()


def native(z):
    """``z`` (a published Cplx or a tensor) in torch's complex dtype, detached."""
    if torch.is_tensor(z):
        return z.detach().clone()
    return torch.complex(z.real, z.imag).detach()


def grads(model):
    return {name: p.grad.detach().clone() for name, p in model.named_parameters()}


def state(model):
    return {key: value.detach().clone() for key, value in model.state_dict().items()}


def dft_matrix(n):
    k = torch.arange(n, dtype=torch.float64)
    return torch.exp(-2j * math.pi * torch.outer(k, k) / n).to(torch.complex64)


def record_dft(cplx, nn):
    """Range and Doppler DFTs as learnable linear layers on a radar cube, one Adam step."""
    torch.manual_seed(0)
    cube = torch.randn(2, 4, 8, dtype=torch.complex64)  # (batch, chirps, samples)
    target = torch.rand(2, 8, 4)
    model = torch.nn.Sequential(
        nn.CplxLinear(8, 8, bias=False),
        nn.CplxToCplx[torch.transpose](-1, -2),
        nn.CplxLinear(4, 4, bias=False),
        nn.CplxModulus(),
    )
    with torch.no_grad():
        for layer, n in ((model[0], 8), (model[2], 4)):
            layer.weight.real.copy_(dft_matrix(n).real)
            layer.weight.imag.copy_(dft_matrix(n).imag)
    before = state(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    spectrum = model(cube)
    F.mse_loss(spectrum, target).backward()
    gradients = grads(model)
    optimizer.step()
    with torch.no_grad():
        after = model(cube)
    return {
        "inputs": {"cube": cube, "target": target},
        "state_dict": before,
        "outputs": {"spectrum": spectrum.detach(), "after_step": after},
        "grads": gradients,
    }


class Gabor(torch.nn.Module):
    """Complex Gabor filters with learnable orientations; returns complex64."""

    def __init__(self, orientations=4, size=5):
        super().__init__()
        self.theta = torch.nn.Parameter(torch.linspace(0, math.pi, orientations + 1)[:-1])
        self.size = size

    def forward(self, x):
        r = torch.arange(self.size, dtype=x.dtype) - self.size // 2
        v, u = torch.meshgrid(r, r, indexing="ij")
        c, s = self.theta.cos()[:, None, None], self.theta.sin()[:, None, None]
        along = u * c + v * s
        envelope = torch.exp(-(u**2 + v**2) / 4.0)
        kernel = torch.polar(envelope, 1.5 * along).unsqueeze(1)
        return F.conv2d(x.to(kernel.dtype), kernel, padding=self.size // 2)


def dense_gabor(cplx, nn):
    class DenseBlock(torch.nn.Module):
        def __init__(self, channels, growth, layers):
            super().__init__()
            self.convs = torch.nn.ModuleList(
                nn.CplxConv2d(channels + i * growth, growth, 3, padding=1) for i in range(layers)
            )

        def forward(self, z):
            for conv in self.convs:
                z = cplx.cat([z, conv(z)], dim=1)
            return z

    return torch.nn.Sequential(
        Gabor(),
        nn.CplxBatchNorm2d(4),
        nn.CplxModReLU(threshold=0.2),
        nn.CplxMaxPool2d(2),
        nn.CplxConv2d(4, 4, 3, padding=1),
        DenseBlock(4, 2, 2),
        nn.CplxModulus(),
    )


def record_gabor(cplx, nn):
    """A Gabor front end (complex64 out) through batch norm, modReLU, pooling, dense blocks."""
    torch.manual_seed(1)
    model = dense_gabor(cplx, nn)
    with torch.no_grad():  # an affine map other than the identity
        model[1].weight.add_(0.3 * torch.randn_like(model[1].weight))
        model[1].bias.normal_(0, 0.1)
    image = torch.randn(2, 1, 8, 8)
    before = state(model)
    features = model(image)  # training mode: batch statistics
    (features.mean(dim=(-1, -2)) ** 2).sum().backward()
    gradients = grads(model)
    with torch.no_grad():
        evaluated = model.eval()(image)
    return {
        "inputs": {"image": image},
        "state_dict": before,
        "outputs": {
            "train": features.detach(),
            "eval": evaluated,
            "running_mean": model[1].running_mean.clone(),
            "running_var": model[1].running_var.clone(),
        },
        "grads": gradients,
    }


def record_functional(cplx, nn):
    """cplx.conv2d and cplx.linear on native complex operands, with gradients."""
    torch.manual_seed(2)
    leaves = {
        "z": torch.randn(1, 4, 5, 5, dtype=torch.complex64),
        "k": torch.randn(3, 4, 3, 3, dtype=torch.complex64),
        "kb": torch.randn(3, dtype=torch.complex64),
        "kg": torch.randn(4, 2, 3, 3, dtype=torch.complex64),
        "x": torch.randn(5, 6, dtype=torch.complex64),
        "w": torch.randn(4, 6, dtype=torch.complex64),
        "b": torch.randn(4, dtype=torch.complex64),
    }
    inputs = {name: t.clone() for name, t in leaves.items()}
    for t in leaves.values():
        t.requires_grad_()
    z, k, kb, kg, x, w, b = leaves.values()
    # the biases as Cplx: the published functions mishandle native ones
    outputs = {
        "same": cplx.conv2d(z, k, cplx.Cplx(kb.real, kb.imag), padding="same"),
        "groups": cplx.conv2d(z, kg, stride=2, padding=1, groups=2),
        "linear": cplx.linear(x, w, cplx.Cplx(b.real, b.imag)),
    }
    loss = sum((y.real**2 + y.imag**2).sum() for y in outputs.values())
    loss.backward()
    return {
        "inputs": inputs,
        "state_dict": {},
        "outputs": {name: native(y) for name, y in outputs.items()},
        "grads": {name: t.grad.clone() for name, t in leaves.items()},
    }


def record_iq_encoder(cplx, nn):
    """A conv encoder of I/Q recordings (published: given as a Cplx of I and Q)."""
    torch.manual_seed(3)
    model = torch.nn.Sequential(
        nn.CplxConv1d(2, 4, 5, stride=2),
        nn.CplxModReLU(threshold=0.1),
        nn.CplxConv1d(4, 4, 3, stride=2),
        nn.CplxModulus(),
    )
    i, q = torch.randn(2, 2, 24), torch.randn(2, 2, 24)
    before = state(model)
    codes = model(cplx.Cplx(i, q)).mean(dim=-1)
    codes.pow(2).sum().backward()
    return {
        "inputs": {"i": i, "q": q},
        "state_dict": before,
        "outputs": {"codes": codes.detach()},
        "grads": grads(model),
    }


def record_pinn(cplx, nn):
    """A complex MLP psi(x) under the Helmholtz residual psi'' + k^2 psi (double backward)."""
    torch.manual_seed(4)
    model = nn.CplxSequential(
        nn.CplxLinear(1, 8),
        nn.CplxToCplx[torch.tanh](),
        nn.CplxLinear(8, 8),
        nn.CplxToCplx[torch.tanh](),
        nn.CplxLinear(8, 1),
    )
    x = torch.linspace(0, 1, 12).unsqueeze(1)
    before = state(model)
    xs = x.clone().requires_grad_()
    psi = model(xs.to(torch.complex64))
    parts = []
    for part in (psi.real, psi.imag):
        (d1,) = torch.autograd.grad(part.sum(), xs, create_graph=True)
        (d2,) = torch.autograd.grad(d1.sum(), xs, create_graph=True)
        parts.append(d2)
    wavenumber = 2 * math.pi
    residual_re = parts[0] + wavenumber**2 * psi.real
    residual_im = parts[1] + wavenumber**2 * psi.imag
    loss = (residual_re**2 + residual_im**2).mean()
    loss.backward()
    return {
        "inputs": {"x": x},
        "state_dict": before,
        "outputs": {
            "psi": native(psi),
            "psi_xx": torch.complex(parts[0], parts[1]).detach(),
            "loss": loss.detach(),
        },
        "grads": grads(model),
    }


def main():
    args = parse()
    if args.published:
        sys.path.insert(0, args.published)
    import cplxmodule
    from cplxmodule import cplx, nn

    # the published package, never this repository's
    assert cplxmodule.__version__ == "2022.06", (cplxmodule.__version__, cplxmodule.__file__)
    torch.set_num_threads(1)
    recorded = {
        "dft": record_dft(cplx, nn),
        "gabor": record_gabor(cplx, nn),
        "functional": record_functional(cplx, nn),
        "iq_encoder": record_iq_encoder(cplx, nn),
        "pinn": record_pinn(cplx, nn),
    }
    torch.save(recorded, args.out)
    print(f"wrote {args.out} ({pathlib.Path(args.out).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
