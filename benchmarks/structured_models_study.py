"""Structured sparsification of the reference models, by groups, and what ``compact`` makes of it.

For each of :class:`~cplxmodule.models.CplxResNet`,
:class:`~cplxmodule.models.CplxVisionTransformer` and
:class:`~cplxmodule.models.CplxUNet`, on the generated data of the models
guide (``docs/guides/models.rst``: the plane waves at noise 3, 2048
training and 2048 test images; the noisy tones, 512 and 256
spectrograms), the study

1. trains the dense model (Adam, one-cycle schedule, batches of 128
   images or 32 spectrograms; 400 steps, the U-Net 800);
2. converts it with ``to_bayesian(dense, kind, example_inputs=...)``
   (hard-concrete L0 gates, ``"channel_l0"``, by default), so that the
   layers writing one group of channels (a residual stream) share one gate
   per channel, and trains the gates with the weights for 300 steps, the
   penalty ``beta * sum(penalties(model)) / N`` added to the per-example
   data term, the gates at ``--gate-lr`` (10) times the weights' peak
   learning rate;
3. masks: ``to_masked(model, compute_ard_masks(model))`` (an L0 model's
   gates fold into the weights; with ``--kind channel_vd`` or
   ``channel_ard`` the masks of ``--threshold`` go on the dense model's
   weights, as the sparsifying guide advises), and fine-tunes the masked
   model (150 steps);
4. compacts it with ``compact(masked, example_inputs=...)``, checks that
   the compact model computes what the masked one does, and prints, for
   the dense and the compact model: the test accuracy (the U-Net: the
   signal-to-noise ratio of its output spectrogram against the clean one,
   in dB), parameters, multiply-accumulates per example of the linear and
   convolution layers (as :func:`cplxmodule.demo.pipeline.count_macs`
   counts them, a complex one as 4 real ones; attention's own products are
   not counted), what is left of the model, and the time of a forward call
   on a batch of 64, eager and ``torch.compile(fullgraph=True)``, on one
   thread, median over rounds in which the four take turns, in one process.

It also prints the quantiles of the gates' ``log_alpha`` (``log_sigma2``
for Gaussian gates) after step 2, and the dense model's loss per example.

What is gated:

- ``resnet``: every convolution (the stem, both convolutions of each
  block, the projection shortcut; the classifier stays dense): the blocks'
  inner channels, and each stage's stream, whose writers share one gate
  per channel (:class:`~cplxmodule.nn.relevance.GateGroup`);
- ``vit``: the hidden units of each encoder layer's feed-forward block
  (``linear1``, ``"channel_l0"``), and the input features of its attention's
  output projection (``"input_l0"`` on ``out_proj``): ``compact`` removes a
  head when all its features are closed. No kind of
  :func:`~cplxmodule.nn.relevance.to_bayesian` gates a whole head, so a
  feature closed in a head that stays is a zero column computed anyway;
  ``--head-gates heads`` puts one hard-concrete gate per head on the output
  projection's input instead (:class:`HeadGates`, a forward pre-hook built
  from :mod:`cplxmodule.nn.relevance.functional`);
- ``unet``: every convolution but the output layer (``decoder.0``, one
  channel).

The data term per example is the cross-entropy for the classifiers and,
for the U-Net, the squared error summed over the spectrogram's entries (a
Gaussian log-likelihood up to the noise variance), so ``beta`` is in units
of the data term: the U-Net's loss per example is about 10^4 times the
classifiers', and so is its ``beta`` (the defaults put ``beta / N`` at 0.1
to 0.25 of the dense model's held-out loss per example).

Run from the repository root (2 to 3.5 minutes on one thread of a 2-core
machine, compiling included; ``--quick``, a smoke run of a few steps on
little data, about a minute)::

    python benchmarks/structured_models_study.py
    python benchmarks/structured_models_study.py --models unet --beta unet=30000 --seed 1
    python benchmarks/structured_models_study.py --kind channel_vd --gate-lr 30 --beta resnet=300 --models resnet
"""

import argparse
import math
import time

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from cplxmodule import Cplx
from cplxmodule.demo.pipeline import _median_seconds, count_macs
from cplxmodule.models import CplxResNet, CplxUNet, CplxVisionTransformer
from cplxmodule.nn.masked import compact, to_masked
from cplxmodule.nn.modules.attention import CplxMultiheadAttention
from cplxmodule.nn.relevance import compute_ard_masks, penalties, to_bayesian
from cplxmodule.nn.relevance import functional as RF

MODELS = ("resnet", "vit", "unet")
#: the penalty weight per training example of each model, for the L0 gates
BETA = {"resnet": 100.0, "vit": 100.0, "unet": 100000.0}


# --- the models guide's data --------------------------------------------------


def waves(n, size=8, classes=3, noise=3.0):
    """The guide's plane waves in complex noise; the class is the wave's direction."""
    label = torch.randint(classes, (n,))
    angle = 2 * torch.pi * label / classes
    k = 1.5 * torch.stack([angle.cos(), angle.sin()], 1)
    grid = torch.stack(torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")).float()
    phase = torch.einsum("nc,chw->nhw", k, grid) + 2 * torch.pi * torch.rand(n, 1, 1)
    noise = noise * torch.randn(n, size, size, dtype=torch.complex64)
    return (torch.polar(torch.ones_like(phase), phase) + noise).unsqueeze(1), label


def tones(n, length=512, n_fft=32, noise=1.0):
    """The guide's noisy tones and their clean versions, as one-sided STFTs (17 bins, 65 frames)."""
    t = torch.arange(length)
    f = 0.05 + 0.35 * torch.rand(n, 1)
    clean = torch.sin(2 * torch.pi * f * t + 2 * torch.pi * torch.rand(n, 1))
    noisy = clean + noise * torch.randn(n, length)
    window = torch.hann_window(n_fft)
    noisy, clean = (torch.stft(s, n_fft, window=window, return_complex=True).unsqueeze(1)
                    for s in (noisy, clean))
    return _cplx(noisy), _cplx(clean)


def _cplx(x):
    return Cplx(x.real.contiguous(), x.imag.contiguous())


def cross_entropy(model, x, y):
    return F.cross_entropy(model(x), y)


def squared_error(model, x, y):
    """Summed over an example's entries, averaged over the batch: a per-example data term."""
    d = model(x) - y
    return (d.real ** 2 + d.imag ** 2).flatten(1).sum(1).mean()


@torch.no_grad()
def accuracy(model, x, y):
    return 100 * float((model.eval()(x).argmax(1) == y).float().mean())


@torch.no_grad()
def snr_db(model, x, y):
    d = model.eval()(x) - y
    return float(10 * torch.log10((y.real ** 2 + y.imag ** 2).sum() / (d.real ** 2 + d.imag ** 2).sum()))


def _take(x, index):
    return Cplx(x.real[index], x.imag[index]) if isinstance(x, Cplx) else x[index]


# --- the tasks -----------------------------------------------------------------


def task(name, args):
    """``(build, train, test, loss, metric, batch, convert)`` of model ``name``."""
    quick = args.quick
    torch.manual_seed(args.seed)
    if name == "unet":
        n_train, n_test = (64, 64) if quick else (512, 256)
        train, test = tones(n_train), tones(n_test)

        def build():
            return CplxUNet(channels=(16, 32))

        def convert(dense, kind):
            return to_bayesian(dense, kind, exclude=["decoder.0"], **_examples(kind, train)), []

        return build, train, test, squared_error, snr_db, 32, convert
    n_train, n_test = (256, 256) if quick else (2048, 2048)
    x, y = waves(n_train + n_test)
    train, test = (_cplx(x[:n_train]), y[:n_train]), (_cplx(x[n_train:]), y[n_train:])
    if name == "resnet":
        def build():
            return CplxResNet(1, 3, widths=(16, 32), blocks=(1, 1))

        def convert(dense, kind):
            return to_bayesian(dense, kind, exclude=["classifier"], **_examples(kind, train)), []
    else:
        def build():
            return CplxVisionTransformer(1, 3, image_size=8, patch_size=4, d_model=16, nhead=4,
                                         num_layers=2, dim_feedforward=64)

        def convert(dense, kind):
            model = to_bayesian(dense, kind, layers=lambda name, layer: name.endswith("linear1"))
            if args.head_gates == "features":
                # the library's own: a gate per input feature of the output projection
                features = kind.replace("channel", "input")
                return to_bayesian(model, features, layers=lambda name, layer: name.endswith("out_proj")), []
            return model, [HeadGates(m) for m in model.modules() if isinstance(m, CplxMultiheadAttention)]

    return build, train, test, cross_entropy, accuracy, 128, convert


def _examples(kind, train):
    """``example_inputs`` for ``to_bayesian``: only the output-channel kinds take them."""
    return {"example_inputs": (_take(train[0], slice(8)),)} if kind.startswith("channel") else {}


class HeadGates(torch.nn.Module):
    r"""One hard-concrete L0 gate per head of an attention layer, on its output projection's input.

    A forward pre-hook on ``attention.out_proj`` multiplies the
    ``head_dim`` input features of each head by the head's gate: drawn per
    example by :func:`~cplxmodule.nn.relevance.functional.hard_concrete` in
    training, :func:`~cplxmodule.nn.relevance.functional.hard_concrete_gate`
    in eval mode; ``penalty`` is the expected number of open heads. ``fold``
    multiplies the projection's columns by the eval-mode gates, removes the
    hook and returns the mask of the open heads' columns.
    """

    def __init__(self, attention):
        super().__init__()
        self.attention, self.heads, self.size = [attention], attention.num_heads, attention.head_dim
        self.log_alpha = torch.nn.Parameter(torch.full((self.heads,), math.log(0.1 / 0.9)))
        self.handle = attention.out_proj.register_forward_pre_hook(self._gate)

    def _gate(self, layer, inputs):
        x, *rest = inputs
        if layer.training:
            gates = RF.hard_concrete(self.log_alpha, (*x.real.shape[:-1], self.heads))
        else:
            gates = RF.hard_concrete_gate(self.log_alpha)
        return (x * gates.repeat_interleave(self.size, -1), *rest)

    @property
    def penalty(self):
        return RF.l0_penalty(self.log_alpha)

    @torch.no_grad()
    def fold(self):
        self.handle.remove()
        columns = RF.hard_concrete_gate(self.log_alpha).repeat_interleave(self.size)
        weight = self.attention[0].out_proj.weight
        weight.real.mul_(columns)
        weight.imag.mul_(columns)
        return (columns > 0).float().expand_as(weight.real).clone()


# --- training ------------------------------------------------------------------


def fit(model, data, steps, loss_fn, batch, lr, desc, beta=None, heads=(), gate_lr=None, progress=True):
    """Adam under a one-cycle schedule, ``batch`` examples a step; in place.

    With ``beta``: ``beta * (sum of the penalties) / N`` is added to the
    loss, the gates (``log_alpha``, ``log_sigma2`` and the head gates) at
    ``gate_lr``.
    """
    x, y = data
    n = len(y)
    gates = [p for name, p in model.named_parameters() if name.endswith(("log_alpha", "log_sigma2"))]
    gates += [g.log_alpha for g in heads]
    others = [p for p in model.parameters() if all(p is not g for g in gates)]
    groups = [{"params": others, "lr": lr}] + ([{"params": gates, "lr": gate_lr or lr}] if gates else [])
    optimizer = torch.optim.Adam(groups)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, [g["lr"] for g in groups], total_steps=steps)
    model.train()
    for _ in tqdm(range(steps), desc=desc, leave=False, disable=not progress):
        index = torch.randint(n, (batch,))
        loss = loss_fn(model, _take(x, index), y[index])
        if beta is not None:
            penalty = sum(penalties(model)) + sum(g.penalty.sum() for g in heads)
            loss = loss + beta * penalty / n
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    return model.eval()


def sparsify(dense, convert, data, loss_fn, batch, args, beta, desc):
    """The compact model: gates trained, masks taken, the masked model fine-tuned and compacted."""
    gated, heads = convert(dense, args.kind)
    fit(gated, data, args.sparsify_steps, loss_fn, batch, args.lr, f"{desc}: gates", beta=beta, heads=heads,
        gate_lr=args.gate_lr * args.lr, progress=not args.no_progress)
    gates = torch.cat([p.detach().flatten() for name, p in gated.named_parameters()
                       if name.endswith(("log_alpha", "log_sigma2"))] + [g.log_alpha.detach() for g in heads])
    quantiles = torch.quantile(gates, torch.tensor([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]))
    print(f"{desc}: {len(gates)} gates, log alpha at 0/10/25/50/75/90/100 %: "
          + " ".join(f"{q:.1f}" for q in quantiles.tolist()), flush=True)
    masks = compute_ard_masks(gated, threshold=args.threshold)
    for gates in heads:
        masks[_name(gated, gates.attention[0].out_proj) + ".mask"] = gates.fold()
    # L0 gates fold into the weights; the masks of Gaussian gates go on the dense weights
    source = gated if args.kind.endswith("l0") else dense
    masked = to_masked(source, masks, layers=[key[: -len(".mask")] for key in masks])
    fit(masked, data, args.finetune_steps, loss_fn, batch, args.lr / 3, f"{desc}: fine-tune",
        progress=not args.no_progress)
    example = (_take(data[0], slice(8)),)
    small = compact(masked, example_inputs=example).eval()
    with torch.no_grad():
        got, want = small(example[0]), masked(example[0])
    got, want = (got.real, want.real) if isinstance(got, Cplx) else (got, want)
    assert torch.allclose(got, want, atol=1e-4, rtol=1e-4), "compact does not compute what the masked model does"
    return small


def _name(model, module):
    return next(name for name, m in model.named_modules() if m is module)


# --- measuring -----------------------------------------------------------------


def structure(model):
    """What ``compact`` left: channels of the stages' streams and blocks, of the levels, or heads and units."""
    if isinstance(model, CplxResNet):
        streams = [model.stem.out_channels] + [b.conv2.out_channels for b in model.stages if b.shortcut is not None]
        inner = [b.conv1.out_channels for b in model.stages]
        return f"streams {'/'.join(map(str, streams))}, inner {'/'.join(map(str, inner))}"
    if isinstance(model, CplxUNet):
        down = [level.conv.out_channels for level in model.encoder]
        up = [level.conv.out_channels for level in list(model.decoder)[1:]]
        return f"encoder {'/'.join(map(str, down))}, decoder {'/'.join(map(str, up))}"
    layers = model.encoder.layers
    heads = "/".join(str(layer.self_attn.num_heads) for layer in layers)
    # the output projection's columns that are not zero: the heads' features in use
    used = "/".join(str(int((_parts_abs(layer.self_attn.out_proj.weight).sum(0) > 0).sum())) for layer in layers)
    units = "/".join(str(layer.linear1.out_features) for layer in layers)
    return f"heads {heads} ({used} features), hidden {units}"


def _parts_abs(weight):
    return weight.real.abs() + weight.imag.abs()


def measure(name, dense, small, test, metric, args):
    x = _take(test[0], slice(args.batch))
    rows = []
    functions = []
    for model in (dense, small):
        model.eval()
        compiled = torch.compile(model, fullgraph=True)
        with torch.no_grad():
            compiled(x)  # compiles
        functions += [lambda m=model: m(x), lambda c=compiled: c(x)]
    with torch.no_grad():
        times = _median_seconds(functions, args.runs, args.calls)
    for label, model, (eager, compiled) in zip(("dense", "compact"), (dense, small), (times[:2], times[2:])):
        rows.append(dict(
            model=name, variant=label, metric=metric(model, *test), params=sum(p.numel() for p in model.parameters()),
            macs=count_macs(model, x), eager=eager, compiled=compiled, structure=structure(model),
        ))
    return rows


def table(rows):
    """A reStructuredText simple table, ready for the guide."""
    header = ("model", "variant", "accuracy / SNR", "parameters", "MACs", "eager ms", "compiled ms", "what is left")
    lines = []
    for row in rows:
        dense = next(r for r in rows if r["model"] == row["model"] and r["variant"] == "dense")
        unit = " dB" if row["model"] == "unet" else " %"
        ratio = "" if row is dense else f" ({dense['macs'] / row['macs']:.1f}x fewer)"
        eager = f"{1e3 * row['eager']:.2f}" + ("" if row is dense else f" ({dense['eager'] / row['eager']:.1f}x)")
        compiled = f"{1e3 * row['compiled']:.2f}" + (
            "" if row is dense else f" ({dense['compiled'] / row['compiled']:.1f}x)")
        lines.append((row["model"], row["variant"], f"{row['metric']:.1f}{unit}", str(row["params"]),
                      f"{row['macs']}{ratio}", eager, compiled, row["structure"]))
    widths = [max(len(line[i]) for line in (header, *lines)) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    body = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in (header, *lines)]
    return "\n".join([rule, body[0], rule, *body[1:], rule])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--kind", choices=("channel_l0", "channel_vd", "channel_ard"), default="channel_l0")
    parser.add_argument("--beta", nargs="*", default=[], metavar="MODEL=BETA",
                        help=f"penalty weight per training example (default {BETA})")
    parser.add_argument("--gate-lr", type=float, default=10.0,
                        help="the gates' peak learning rate over the weights' (default 10)")
    parser.add_argument("--head-gates", choices=("features", "heads"), default="features",
                        help="vit: a gate per input feature of the output projection, or per head (HeadGates)")
    parser.add_argument("--threshold", type=float, default=3.0, help="on log alpha, for Gaussian gates")
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--dense-steps", type=int, default=400, help="the U-Net trains twice as many")
    parser.add_argument("--sparsify-steps", type=int, default=300)
    parser.add_argument("--finetune-steps", type=int, default=150)
    parser.add_argument("--batch", type=int, default=64, help="of the timed inference")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a smoke run: little data, a few steps")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.dense_steps, args.sparsify_steps, args.finetune_steps, args.runs, args.calls = 10, 10, 5, 3, 2
    beta = dict(BETA, **{k: float(v) for k, v in (item.split("=") for item in args.beta)})
    torch.set_num_threads(1)
    start, rows = time.perf_counter(), []
    for name in args.models:
        build, train, test, loss_fn, metric, batch, convert = task(name, args)
        torch.manual_seed(args.seed)
        dense = fit(build(), train, args.dense_steps * (2 if name == "unet" else 1), loss_fn, batch, args.lr,
                    f"{name}: dense", progress=not args.no_progress)
        small = sparsify(dense, convert, train, loss_fn, batch, args, beta[name], name)
        rows += measure(name, dense, small, test, metric, args)
        with torch.no_grad():
            print(f"{name}: dense loss per example, train {float(loss_fn(dense, *train)):.4g},"
                  f" test {float(loss_fn(dense, *test)):.4g}", flush=True)
        print(f"{name}: done at {time.perf_counter() - start:.0f} s", flush=True)
    print(f"kind {args.kind}, beta {beta}, gate lr {args.gate_lr}x, seed {args.seed}, "
          f"batch {args.batch}, {torch.get_num_threads()} thread")
    print(table(rows))
    print(f"{time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    main()
