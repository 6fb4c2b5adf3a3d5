"""``python -m cplxmodule.demo.reconstruction``: a complex U-Net for undersampled MRI, sparsified and deployed.

The task is generated (:func:`phantoms`: random heads of ellipses under a
smooth phase, with complex Gaussian noise of a known variance), k-space is
undersampled four times along its columns with the centre fully sampled
(:func:`cartesian_mask`), and the network (:class:`Reconstructor`, a
:class:`~cplxmodule.models.CplxUNet` with a residual output followed by
:class:`~cplxmodule.nn.CplxDataConsistency`) maps the zero-filled image
to the fully sampled one. :func:`run` trains it, then its variational
dropout twin on the evidence lower bound of a Gaussian likelihood
(:func:`~cplxmodule.nn.relevance.elbo_loss` of
:func:`~cplxmodule.cplx.gaussian_nll_loss`), takes the relevance masks,
compacts the masked twin and exports it with :func:`torch.export.export`,
measuring the PSNR, the SSIM, the weights and the inference time of every stage.
``--plot FILE`` saves the magnitude images of a test example. See
``python -m cplxmodule.demo.reconstruction --help`` and
:doc:`/guides/reconstruction`.
"""

import argparse
import dataclasses
import functools
import math
import time
from typing import Any, Optional, Sequence

import torch

from .. import cplx
from ..cplx import Cplx
from ..models import CplxUNet
from ..nn import CplxConv2d, CplxConvTranspose2d, CplxDataConsistency
from ..nn.masked import BaseMasked, compact, to_masked
from ..nn.relevance import compute_ard_masks, elbo_loss, to_bayesian
from .pipeline import _median_seconds, _plain_table, _progress

__all__ = [
    "phantoms",
    "cartesian_mask",
    "undersample",
    "Reconstructor",
    "Config",
    "Stage",
    "train",
    "count_weights",
    "channels",
    "run",
    "format_table",
    "parser",
    "main",
]


def phantoms(n: int, size: int = 32, features: int = 4, seed: int = 0) -> torch.Tensor:
    r"""Complex images of random heads: a skull, a brain and features in it, under a smooth phase.

    Each image is an ellipse of random size, position and tilt (the skull,
    of intensity 1) around a slightly smaller one (the brain, 0.3 to 0.5),
    in which ``features`` smaller ellipses of random size, place and
    orientation raise or lower the intensity (by -0.2 to 0.4), as in the
    phantom of Shepp and Logan; scaled so that the largest modulus is 1,
    times :math:`e^{i\varphi}` with a smooth phase
    :math:`\varphi = a + b x + c y + d (x^2 + y^2)` (coordinates in
    :math:`[-1, 1]`, :math:`a` uniform in :math:`[-\pi/2, \pi/2]`,
    :math:`b, c, d` in :math:`[-1, 1]`), as the phase of an MR image
    varies slowly across it.

    Parameters
    ----------
    n : int
        The number of images.
    size : int, default 32
        Their height and width.
    features : int, default 4
        Ellipses inside each brain.
    seed : int, default 0
        Seeds a generator of the images' own (torch's global one is not used).

    Returns
    -------
    torch.Tensor
        ``(n, 1, size, size)``, of dtype ``torch.complex64``.

    Examples
    --------
    >>> images = phantoms(3, size=16)
    >>> images.shape, images.dtype
    (torch.Size([3, 1, 16, 16]), torch.complex64)
    >>> images.abs().amax(dim=(1, 2, 3))
    tensor([1., 1., 1.])
    """
    for value, name in ((n, "n"), (size, "size")):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"phantoms: `{name}` must be a positive int, got {value!r}")
    if not isinstance(features, int) or features < 0:
        raise ValueError(f"phantoms: `features` must be an int >= 0, got {features!r}")
    generator = torch.Generator().manual_seed(seed)

    def uniform(low: float, high: float) -> torch.Tensor:
        return low + (high - low) * torch.rand(n, 1, 1, generator=generator)

    axis = torch.linspace(-1, 1, size)
    y, x = torch.meshgrid(axis, axis, indexing="ij")

    def ellipse(x0: torch.Tensor, y0: torch.Tensor, a: Any, b: Any, tilt: torch.Tensor) -> torch.Tensor:
        u = (x - x0) * tilt.cos() + (y - y0) * tilt.sin()
        v = (y - y0) * tilt.cos() - (x - x0) * tilt.sin()
        return ((u / a) ** 2 + (v / b) ** 2 <= 1).float()

    x0, y0, tilt = uniform(-0.1, 0.1), uniform(-0.1, 0.1), uniform(-0.3, 0.3)
    a, b = uniform(0.6, 0.85), uniform(0.75, 0.95)
    brain = ellipse(x0, y0, a - 0.08, b - 0.08, tilt)
    magnitude = ellipse(x0, y0, a, b, tilt) - uniform(0.5, 0.7) * brain
    for _ in range(features):
        radius, angle = uniform(0, 0.5), uniform(0, 2 * math.pi)
        x1, y1 = x0 + radius * angle.cos() * a, y0 + radius * angle.sin() * b
        feature = ellipse(x1, y1, uniform(0.05, 0.25), uniform(0.05, 0.25), uniform(0, math.pi))
        magnitude = magnitude + uniform(-0.2, 0.4) * feature * brain
    magnitude = magnitude.clamp_min(0)
    magnitude = magnitude / magnitude.amax(dim=(1, 2), keepdim=True)
    phase = uniform(-math.pi / 2, math.pi / 2) + uniform(-1, 1) * x + uniform(-1, 1) * y
    phase = phase + uniform(-1, 1) * (x**2 + y**2)
    return torch.polar(magnitude, phase).unsqueeze(1)


def cartesian_mask(size: int, acceleration: int = 4, center_fraction: float = 0.08, seed: int = 0) -> torch.Tensor:
    """The sampled columns of a Cartesian k-space: the centre, and others at random.

    ``size // acceleration`` columns in all: the ``round(size *
    center_fraction)`` lowest frequencies (at least one), and the rest drawn
    uniformly from the other columns, as the random masks of the fastMRI
    challenge draw them.

    Parameters
    ----------
    size : int
        Columns of k-space.
    acceleration : int, default 4
        The undersampling factor.
    center_fraction : float, default 0.08
        The fraction of the columns, around the lowest frequency, that are
        all sampled.
    seed : int, default 0

    Returns
    -------
    torch.Tensor
        Boolean, ``(size,)``, in the order of :func:`torch.fft.fft2` (the
        lowest frequency first; ``torch.fft.fftshift`` centres it), ready
        to broadcast over the columns of ``(N, C, H, W)`` k-space.

    Examples
    --------
    >>> mask = cartesian_mask(16, acceleration=4, center_fraction=0.125)
    >>> int(mask.sum()), bool(mask[0] and mask[-1])  # 4 of 16 columns, the lowest two among them
    (4, True)
    """
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"cartesian_mask: `size` must be a positive int, got {size!r}")
    if not isinstance(acceleration, int) or not 1 <= acceleration <= size:
        raise ValueError(f"cartesian_mask: `acceleration` must be an int in [1, size], got {acceleration!r}")
    if not 0 <= center_fraction <= 1:
        raise ValueError(f"cartesian_mask: `center_fraction` must be in [0, 1], got {center_fraction!r}")
    total = size // acceleration
    low = min(max(1, round(size * center_fraction)), total)
    centred = torch.zeros(size, dtype=torch.bool)
    start = (size - low + 1) // 2  # fftshift puts the lowest frequency at size // 2
    centred[start : start + low] = True
    others = (~centred).nonzero().squeeze(1)
    order = torch.randperm(len(others), generator=torch.Generator().manual_seed(seed))
    centred[others[order[: total - low]]] = True
    return torch.fft.ifftshift(centred)


def undersample(images: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The measured k-space of ``images`` and their zero-filled reconstruction.

    Parameters
    ----------
    images : torch.Tensor
        Complex, ``(N, C, H, W)``.
    mask : torch.Tensor
        Boolean, the sampled columns (``(W,)``, e.g. :func:`cartesian_mask`).

    Returns
    -------
    zero_filled : torch.Tensor
        The inverse Fourier transform of the measured k-space, unmeasured
        entries zero.
    kspace : torch.Tensor
        ``fft2(images)`` (orthonormal) where measured, zero elsewhere.
    """
    kspace = torch.fft.fft2(images, norm="ortho") * mask
    return torch.fft.ifft2(kspace, norm="ortho"), kspace


class Reconstructor(torch.nn.Module):
    """A complex U-Net that removes the aliasing of a zero-filled image, then data consistency.

    ``consistency(unet(image), kspace, mask)``: the
    :class:`~cplxmodule.models.CplxUNet` (``output="residual"``,
    ``first_stride=1``) adds its correction to the zero-filled image, and
    :class:`~cplxmodule.nn.CplxDataConsistency` puts the measured k-space
    back where it was sampled. The U-Net's last transposed convolution
    starts at zero, so that the untrained network returns the zero-filled
    image.

    Parameters
    ----------
    in_channels : int, default 1
        Coils (complex channels) of the images.
    channels : sequence of int, default (8, 16, 32)
        The U-Net's levels.
    soft : bool, default False
        Learn the weight of the measured k-space (see
        :class:`~cplxmodule.nn.CplxDataConsistency`); replace it by default.
    device, dtype : optional
        Factory kwargs.

    Shape
    -----
    - Image: ``(N, in_channels, H, W)``, complex (the zero-filled image).
    - Kspace: the measured k-space, of the image's shape.
    - Mask: boolean, broadcast to the image (``(W,)`` for Cartesian columns).
    - Output: :class:`~cplxmodule.cplx.Cplx`, ``(N, in_channels, H, W)``.

    Examples
    --------
    >>> images = phantoms(2, size=16)
    >>> mask = cartesian_mask(16)
    >>> zero_filled, kspace = undersample(images, mask)
    >>> model = Reconstructor(channels=(4, 8))
    >>> output = model(zero_filled, kspace, mask)
    >>> output.shape
    torch.Size([2, 1, 16, 16])
    >>> torch.allclose(output.real, zero_filled.real, atol=1e-5)  # untrained: the zero-filled image
    True
    """

    def __init__(
        self,
        in_channels: int = 1,
        channels: Sequence[int] = (8, 16, 32),
        soft: bool = False,
        device: Any = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__()
        kwargs: dict[str, Any] = dict(device=device, dtype=dtype)
        self.unet = CplxUNet(in_channels, tuple(channels), output="residual", first_stride=1, **kwargs)
        self.consistency = CplxDataConsistency(soft=soft, **kwargs)
        last: torch.nn.Module = self.unet.decoder[0]  # its transposed convolution alone
        with torch.no_grad():
            for part in last.parameters():
                part.zero_()

    def forward(self, image: Any, kspace: Any, mask: torch.Tensor) -> Cplx:
        """The reconstruction of a batch of zero-filled images (see the class's Shape)."""
        return self.consistency(self.unet(image), kspace, mask)


@dataclasses.dataclass
class Config:
    """Sizes and settings of a run.

    Attributes
    ----------
    size : int
        Height and width of the images.
    n_train, n_test : int
        Training and test images.
    acceleration : int
        The undersampling factor of :func:`cartesian_mask`.
    center_fraction : float
        The fully sampled centre of k-space, a fraction of the columns.
    noise : float
        The variance of the complex Gaussian noise of the images, which
        the fully sampled reference holds as well (as a measured image does).
    channels : tuple of int
        The U-Net's levels.
    steps, vd_steps : int
        Adam steps of the dense model and of its variational dropout twin.
    batch_size : int
    lr : float
        Adam's learning rate.
    sigma_lr : float
        The learning rate of the variational dropout twin's ``log_sigma2``:
        they start at -10, and Adam moves a parameter by about its
        learning rate per step.
    kl_weight : float
        The weight of the KL term: 1 is the evidence lower bound.
    kind : str
        The ``kind`` of :func:`~cplxmodule.nn.relevance.to_bayesian`:
        ``"vd"`` (per weight) or ``"channel_vd"`` (whole channels).
    threshold : float
        The ``log_alpha`` threshold of the relevance masks.
    seed : int
        Seeds the data, the mask and torch.
    progress : bool
        Show tqdm progress bars (on a terminal only).
    """

    size: int = 32
    n_train: int = 512
    n_test: int = 64
    acceleration: int = 4
    center_fraction: float = 0.08
    noise: float = 1e-3
    channels: tuple[int, ...] = (8, 16, 32)
    steps: int = 1000
    vd_steps: int = 1000
    batch_size: int = 16
    lr: float = 1e-2
    sigma_lr: float = 0.1
    kl_weight: float = 1.0
    kind: str = "vd"
    threshold: float = 3.0
    seed: int = 0
    progress: bool = True


@dataclasses.dataclass
class Stage:
    """One row of the results table.

    Attributes
    ----------
    name : str
    psnr : float
        The mean PSNR of the test images, in dB (:func:`~cplxmodule.cplx.psnr`).
    weights, nonzero : int
        The complex weights of the model's convolutions, and how many of
        them are nonzero (masked ones count as zero; the variational dropout
        model computes with all of its weights); 0 for the zero-filled
        images.
    seconds : float
        The time of one forward call on the test images (0 for the zero-filled images).
    ssim : float
        The mean SSIM of the test images' magnitudes (:func:`~cplxmodule.cplx.ssim`).
    """

    name: str
    psnr: float
    weights: int = 0
    nonzero: int = 0
    seconds: float = 0.0
    ssim: float = 0.0


def _data(config: Config) -> dict[str, Any]:
    """The training and test sets: references, zero-filled images, k-space, and the mask."""
    images = phantoms(config.n_train + config.n_test, config.size, seed=config.seed)
    noise = torch.randn(images.shape, dtype=images.dtype, generator=torch.Generator().manual_seed(config.seed + 1))
    reference = images + config.noise**0.5 * noise
    mask = cartesian_mask(config.size, config.acceleration, config.center_fraction, seed=config.seed)
    zero_filled, kspace = undersample(reference, mask)
    split = config.n_train
    return {
        "train": (zero_filled[:split], kspace[:split], reference[:split]),
        "test": (zero_filled[split:], kspace[split:], reference[split:]),
        "mask": mask,
    }


def train(
    model: torch.nn.Module,
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    mask: torch.Tensor,
    steps: int,
    config: Config,
    var: float,
    desc: str,
    kl_weight: Optional[float] = None,
) -> torch.nn.Module:
    """Train ``model`` with Adam on random batches of the training set, in place.

    The data term is the negative log-likelihood of the references under
    complex Gaussian noise of variance ``var``
    (:func:`~cplxmodule.cplx.gaussian_nll_loss`, summed over the pixels of
    an example, averaged over the batch); with ``kl_weight``, the KL
    term of the model's Bayesian layers is added by
    :func:`~cplxmodule.nn.relevance.elbo_loss`, for a training set of
    ``len(data[0])`` images.

    Parameters
    ----------
    model : torch.nn.Module
        A :class:`Reconstructor`, or its Bayesian or masked twin.
    data : tuple of torch.Tensor
        The training set: the zero-filled images, their k-space and the
        references.
    mask : torch.Tensor
        The sampled columns.
    steps : int
    config : Config
        ``batch_size``, ``lr``, ``sigma_lr`` (the rate of ``log_sigma2``
        parameters) and ``progress``.
    var : float
        The variance of the likelihood.
    desc : str
        The progress bar's label.
    kl_weight : float, optional
        The KL term's weight (1: the evidence lower bound); none without.

    Returns
    -------
    torch.nn.Module
        ``model``, trained, in eval mode.
    """
    zero_filled, kspace, reference = data
    n = len(reference)
    sigmas = [p for name, p in model.named_parameters() if name.endswith("log_sigma2")]
    others = [p for name, p in model.named_parameters() if not name.endswith("log_sigma2")]
    groups = [{"params": others}] + ([{"params": sigmas, "lr": config.sigma_lr}] if sigmas else [])
    optimizer = torch.optim.Adam(groups, lr=config.lr)
    model.train()
    with _progress(steps, desc, config.progress) as bar:
        for _ in range(steps):
            batch = torch.randint(n, (config.batch_size,))
            output = model(zero_filled[batch], kspace[batch], mask)
            loss = cplx.gaussian_nll_loss(output, reference[batch], var=var, reduction="batchmean")
            if kl_weight is not None:
                loss = elbo_loss(model, loss, dataset_size=n, kl_weight=kl_weight)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            bar.set_postfix(loss=f"{loss.item():.0f}", refresh=False)
            bar.update()
    return model.eval()


def count_weights(model: torch.nn.Module) -> tuple[int, int]:
    """The complex weights of the convolutions of ``model``, and how many are nonzero.

    Parameters
    ----------
    model : torch.nn.Module
        Dense, masked (a masked weight counts as zero) or compacted.

    Returns
    -------
    (int, int)
        All the weights, and the nonzero ones.
    """
    total = nonzero = 0
    for layer in model.modules():
        if isinstance(layer, (CplxConv2d, CplxConvTranspose2d)):
            weight = layer.weight_masked if isinstance(layer, BaseMasked) else layer.weight
            total += weight.real.numel()
            nonzero += int(((weight.real != 0) | (weight.imag != 0)).sum())
    return total, nonzero


def channels(model: torch.nn.Module) -> list[int]:
    """The output channels of the U-Net's encoder levels, outermost first.

    Parameters
    ----------
    model : Reconstructor
        Or any of its twins, compacted ones included.

    Returns
    -------
    list of int
    """
    encoder = model.get_submodule("unet.encoder")
    return [int(getattr(level.get_submodule("conv"), "out_channels")) for level in encoder.children()]


def run(config: Optional[Config] = None) -> tuple[list[Stage], dict[str, Any], dict[str, Any]]:
    """Train, sparsify, compact and export a :class:`Reconstructor` on generated data.

    Parameters
    ----------
    config : Config, optional
        The default :class:`Config` if omitted.

    Returns
    -------
    stages : list of Stage
        ``zero-filled``, ``dense``, ``VD``, ``masked``, ``compact`` and
        ``exported``, in this order.
    models : dict of str to torch.nn.Module
        The models of the stages (``"exported"``: the exported program's
        module), and ``"var"``: the variance of the likelihood.
    data : dict
        ``"train"`` and ``"test"``: (zero-filled, k-space, reference);
        ``"mask"``.
    """
    config = config or Config()
    torch.manual_seed(config.seed)
    data = _data(config)
    mask = data["mask"]
    zero_filled, kspace, reference = data["test"]
    inputs = (zero_filled, kspace, mask)
    dense = train(Reconstructor(channels=config.channels), data["train"], mask, config.steps, config,
                  config.noise, "dense")
    # the likelihood's variance: what the dense model leaves of the references,
    # the noise and the aliasing that it cannot resolve
    train_inputs = data["train"]
    with torch.no_grad():
        var = float(cplx.mse_loss(dense(*train_inputs[:2], mask), train_inputs[2]))
    vd = train(to_bayesian(dense, kind=config.kind), data["train"], mask, config.vd_steps, config, var,
               "variational dropout", kl_weight=config.kl_weight)
    masked = to_masked(vd, compute_ard_masks(vd, threshold=config.threshold)).eval()
    small = compact(masked, example_inputs=(zero_filled[:4], kspace[:4], mask))
    batch = torch.export.Dim("batch", min=2)
    program = torch.export.export(small, (zero_filled[:4], kspace[:4], mask),
                                  dynamic_shapes={"image": {0: batch}, "kspace": {0: batch}, "mask": None})
    exported = program.module()
    models = {"dense": dense, "VD": vd, "masked": masked, "compact": small, "exported": exported}
    with torch.inference_mode():
        seconds = _median_seconds([functools.partial(model, *inputs) for model in models.values()],
                                  runs=7, calls=3)
    stages = [Stage("zero-filled", float(cplx.psnr(zero_filled, reference)),
                    ssim=float(cplx.ssim(zero_filled, reference)))]
    with torch.no_grad():
        for (name, model), time_ in zip(models.items(), seconds):
            weights, nonzero = count_weights(model if name != "exported" else small)
            output = model(*inputs)
            stages.append(Stage(name, float(cplx.psnr(output, reference)), weights, nonzero, time_,
                                ssim=float(cplx.ssim(output, reference))))
    return stages, {**models, "var": var}, data


def format_table(stages: Sequence[Stage]) -> str:
    """The results as a plain-text table.

    Parameters
    ----------
    stages : sequence of Stage

    Returns
    -------
    str
    """
    rows = [
        (
            s.name,
            f"{s.psnr:.1f}",
            f"{s.ssim:.3f}",
            f"{s.weights}" if s.weights else "",
            f"{s.nonzero}" if s.weights else "",
            f"{1e3 * s.seconds:.1f}" if s.seconds else "",
        )
        for s in stages
    ]
    return _plain_table(("stage", "PSNR (dB)", "SSIM", "weights", "nonzero", "time (ms)"), rows)


def parser() -> argparse.ArgumentParser:
    """The command line.

    Returns
    -------
    argparse.ArgumentParser
    """
    defaults = Config()
    cli = argparse.ArgumentParser(
        prog="python -m cplxmodule.demo.reconstruction",
        description=(
            "Train a complex U-Net with data consistency to reconstruct 4x undersampled generated MR images, "
            "sparsify it with variational dropout on the evidence lower bound, compact and export it, and "
            "print the PSNR, SSIM, weights and inference time of each stage."
        ),
    )
    cli.add_argument("--size", type=int, default=defaults.size, help="image height and width (%(default)s)")
    cli.add_argument("--train", type=int, default=defaults.n_train, help="training images (%(default)s)")
    cli.add_argument("--steps", type=int, default=defaults.steps, help="Adam steps of the dense model (%(default)s)")
    cli.add_argument("--vd-steps", type=int, default=defaults.vd_steps,
                     help="Adam steps of the variational dropout twin (%(default)s)")
    cli.add_argument("--channels", type=int, nargs="+", default=list(defaults.channels),
                     help="channels of the U-Net's levels (%(default)s)")
    cli.add_argument("--kl-weight", type=float, default=defaults.kl_weight,
                     help="weight of the KL term: 1 (the default) is the evidence lower bound")
    cli.add_argument("--kind", choices=("vd", "channel_vd"), default=defaults.kind,
                     help="variational dropout of single weights (vd, the default) or of whole channels")
    cli.add_argument("--threshold", type=float, default=defaults.threshold,
                     help="log_alpha threshold of the masks (%(default)s)")
    cli.add_argument("--seed", type=int, default=defaults.seed, help="seed of the data and of torch")
    cli.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    cli.add_argument("--plot", metavar="FILE", help="save the magnitude images of a test example (PNG)")
    cli.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return cli


def main(argv: Optional[Sequence[str]] = None, config: Optional[Config] = None) -> list[Stage]:
    """Run the command.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (``sys.argv[1:]`` if omitted).
    config : Config, optional
        The settings that the arguments override (sizes included).

    Returns
    -------
    list of Stage
        The rows of the printed table.
    """
    args = parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    config = dataclasses.replace(
        config or Config(),
        size=args.size,
        n_train=args.train,
        steps=args.steps,
        vd_steps=args.vd_steps,
        channels=tuple(args.channels),
        kl_weight=args.kl_weight,
        kind=args.kind,
        threshold=args.threshold,
        seed=args.seed,
        progress=not args.no_progress,
    )
    wall = time.perf_counter()
    stages, models, data = run(config)
    threads = f"{args.threads} thread" + ("s" if args.threads != 1 else "")
    print(format_table(stages))
    print(
        "\n".join(
            [
                "",
                f"test set     {config.n_test} images of {config.size} x {config.size}, k-space columns sampled"
                f" {config.acceleration}x fewer (centre {config.center_fraction:g} of them), noise variance"
                f" {config.noise:g}",
                "PSNR         of the test images against the fully sampled ones (cplx.psnr, complex)",
                "SSIM         of their magnitudes, on each image's range (cplx.ssim)",
                "weights      complex weights of the convolutions; nonzero: those the masks keep",
                f"time         one call on the {config.n_test} test images, median of 7 rounds, {threads}",
                f"likelihood   complex Gaussian of variance {models['var']:.2g} (the dense model's training error),"
                f" KL weight {config.kl_weight:g} ({'the ELBO' if config.kl_weight == 1 else 'not the ELBO'}),"
                f" {config.n_train} training images",
                f"channels     of the encoder's levels: {channels(models['dense'])} dense,"
                f" {channels(models['compact'])} compact",
                f"total        {time.perf_counter() - wall:.0f} s wall",
            ]
        )
    )
    if args.plot:
        _plot(args.plot, stages, models, data)
        print(f"\nmagnitude images of a test example: {args.plot}")
    return stages


def _plot(path: str, stages: Sequence[Stage], models: dict[str, Any], data: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    zero_filled, kspace, reference = (t[:1] for t in data["test"])
    with torch.no_grad():
        images = {
            "zero-filled": zero_filled,
            "dense": cplx.to_complex(models["dense"](zero_filled, kspace, data["mask"])),
            "compact": cplx.to_complex(models["compact"](zero_filled, kspace, data["mask"])),
        }
    titles = {
        name: f"{name}, {float(cplx.psnr(image, reference)):.1f} dB" for name, image in images.items()
    }
    images["fully sampled"] = reference
    titles["fully sampled"] = "fully sampled"
    fig, axes = plt.subplots(1, len(images), figsize=(2.2 * len(images), 2.5))
    for axis, (name, image) in zip(axes, images.items()):
        axis.imshow(image[0, 0].abs().numpy(), cmap="gray", vmin=0, vmax=float(reference.abs().max()))
        axis.set_title(titles[name], fontsize="small")
        axis.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    main()
