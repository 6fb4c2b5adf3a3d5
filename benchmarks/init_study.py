"""Does Trabelsi's complex He initialisation train better than the default?

Trains complex models on the demo's modulation recognition task
(:mod:`cplxmodule.demo`), on generated tones and on scikit-learn's digits
from several seeds, once per initialisation of the complex layers'
weights, with everything else (data, batches, optimiser, epochs, biases)
the same for a given seed, and prints the mean and standard
deviation over the seeds of the test accuracy, the test loss and the
training loss of the last epoch.

Initialisations compared (the weights of every ``CplxLinear`` and complex
convolution; biases keep the default):

- ``default``: the layers' own ``reset_parameters`` (independent uniform
  parts, :math:`\\mathbb{E}|W|^2 = 1/(3\\,\\text{fan\\_in})`, torch's default);
- ``he-rayleigh``: :func:`~cplxmodule.nn.init.cplx_kaiming_rayleigh_`,
  Trabelsi et al.'s He criterion :math:`\\mathbb{E}|W|^2 = 2/\\text{fan\\_in}`;
- ``glorot-rayleigh``: :func:`~cplxmodule.nn.init.cplx_xavier_rayleigh_`;
- ``he-normal``: :func:`~cplxmodule.nn.init.cplx_kaiming_normal_`, the He
  variance with independent normal parts (separates the variance from the
  polar form).

Tasks and models: ``cnn`` is the demo's
:class:`~cplxmodule.demo.model.ModulationNet` on the demo's bursts; ``mlp``
is a dense complex perceptron (three ``CplxLinear`` layers with split ReLU,
the modulus, a real read-out) on the demo's bursts, a task it cannot learn
(the bursts' random carrier phase and timing defeat a dense model: it stays
at chance and overfits; kept as a negative control); ``tones`` is the same
perceptron on a task a dense model can learn: tell which of 8 closely
spaced frequencies (half a DFT bin apart, each jittered by up to an eighth
of a bin) a noisy complex tone of random phase and amplitude has, at an SNR
uniform in [-20, -5] dB. ``digits`` is the data set of the published
package's examples: scikit-learn's handwritten digits (8x8 images, their 64 pixels
scaled to [0, 1] and promoted to complex with a zero imaginary part), one
fixed split (a quarter held out for the test, stratified, the same for
every seed: seeds differ in the weights and the order of the batches), and
a complex perceptron 64 -> 64 -> 64 -> 10 (three
``CplxLinear`` layers, split ReLU between them) whose logits are the
modulus of its complex output, so every weight is complex and initialised
by the study; it trains for ``--digits-epochs`` epochs, as its training set
is small (1347 images). Optimisers: ``adam`` is the demo's (Adam under a
one-cycle schedule); ``sgd`` is plain SGD with momentum at a fixed rate,
where the scale of the initial weights is not compensated by the optimiser.

``digits`` needs scikit-learn (the ``bench`` extra); its data ship with the
package, nothing is downloaded. Run from the repository root, one figure
per task::

    python benchmarks/init_study.py --seeds 5 --models cnn mlp --plot bursts.png
    python benchmarks/init_study.py --seeds 10 --models digits --plot digits.png
"""

import argparse
import dataclasses
import math
import statistics
import time

import torch
import torch.nn.functional as F

from cplxmodule.cplx import Cplx
from cplxmodule.demo.data import MODULATIONS, generate
from cplxmodule.demo.model import ModulationNet, as_input
from cplxmodule.nn import CplxLinear, CplxSequential, CplxToCplx, init
from cplxmodule.nn.modules.conv import CplxConvNd

INITS = {
    "default": None,
    "he-rayleigh": init.cplx_kaiming_rayleigh_,
    "glorot-rayleigh": init.cplx_xavier_rayleigh_,
    "he-normal": init.cplx_kaiming_normal_,
}


class Perceptron(torch.nn.Module):
    """Dense complex classifier of bursts of ``length`` samples (one channel)."""

    def __init__(self, length, n_classes, width=128):
        super().__init__()
        relu = CplxToCplx[torch.nn.ReLU]
        self.features = CplxSequential(
            CplxLinear(length, width), relu(),
            CplxLinear(width, width), relu(),
            CplxLinear(width, width // 2),
        )
        self.classifier = torch.nn.Linear(width // 2, n_classes)

    def forward(self, input):
        return self.classifier(abs(self.features(input.flatten(-2))))


class DigitsPerceptron(torch.nn.Module):
    """Complex perceptron 64 -> 64 -> 64 -> 10 on digits; the logits are the output's modulus."""

    def __init__(self, width=64, n_classes=10):
        super().__init__()
        relu = CplxToCplx[torch.nn.ReLU]
        self.features = CplxSequential(
            CplxLinear(64, width), relu(),
            CplxLinear(width, width), relu(),
            CplxLinear(width, n_classes),
        )

    def forward(self, input):
        return abs(self.features(input))


TONES = 8
DIGITS = 10


def tones(n_per_class, length, seed):
    """Noisy complex tones of ``TONES`` close frequencies: (Cplx ``(n, 1, length)``, labels)."""
    generator = torch.Generator().manual_seed(seed)
    label = torch.arange(TONES).repeat_interleave(n_per_class)
    n = len(label)
    # half a DFT bin apart, jittered by up to an eighth of a bin, around a quarter of the band
    bins = length / 4 + 0.5 * label + (torch.rand(n, generator=generator) - 0.5) / 4
    phase = 2 * math.pi * torch.rand(n, 1, generator=generator)
    amplitude = 10 ** ((torch.rand(n, 1, generator=generator) * 15 - 20) / 20)
    angle = 2 * math.pi * bins[:, None] * torch.arange(length) / length + phase
    noise = torch.randn(2, n, length, generator=generator) / math.sqrt(2)
    real = amplitude * torch.cos(angle) + noise[0]
    imag = amplitude * torch.sin(angle) + noise[1]
    order = torch.randperm(n, generator=generator)
    return Cplx(real[order, None], imag[order, None]), label[order]


def digits():
    """The fixed train and test sets of scikit-learn's digits: (Cplx ``(n, 64)``, labels) each."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    images, labels = load_digits(return_X_y=True)
    split = train_test_split(images / 16, labels, test_size=0.25, stratify=labels,
                             random_state=0)
    for pixels, label in zip(split[:2], split[2:]):
        yield Cplx(torch.as_tensor(pixels, dtype=torch.float32)), torch.as_tensor(label)


def build(model, length, seed, init_name):
    """The model of ``seed``, its complex weights then filled by ``init_name``."""
    torch.manual_seed(seed)
    n = len(MODULATIONS)
    if model == "cnn":
        net = ModulationNet(n)
    elif model == "digits":
        net = DigitsPerceptron()
    else:
        net = Perceptron(length, TONES if model == "tones" else n)
    fill = INITS[init_name]
    if fill is not None:
        generator = torch.Generator().manual_seed(seed)
        for module in net.modules():
            if isinstance(module, (CplxLinear, CplxConvNd)):
                fill(module.weight, generator=generator)
    return net


@dataclasses.dataclass
class Result:
    model: str
    optimizer: str
    init: str
    seed: int
    accuracy: float
    test_loss: float
    train_loss: float
    seconds: float


@torch.no_grad()
def evaluate(net, data, batch=2048):
    """Test accuracy and mean cross-entropy."""
    input, label = data
    net.eval()
    hits, loss = 0, 0.0
    for i in range(0, len(label), batch):
        logits = net(input[i : i + batch])
        hits += int((logits.argmax(-1) == label[i : i + batch]).sum())
        loss += float(F.cross_entropy(logits, label[i : i + batch], reduction="sum"))
    return hits / len(label), loss / len(label)


def fit(net, data, epochs, optimizer, batch, seed, bar):
    """Train in place with the same batches for a given seed; the last epoch's mean loss."""
    input, label = data
    n = len(label)
    steps = epochs * math.ceil(n / batch)
    if optimizer == "adam":
        opt = torch.optim.Adam(net.parameters())
        schedule = torch.optim.lr_scheduler.OneCycleLR(opt, 1e-2, total_steps=steps)
    else:
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        schedule = None
    order = torch.Generator().manual_seed(seed)
    net.train()
    for epoch in range(epochs):
        losses = []
        for index in torch.randperm(n, generator=order).split(batch):
            loss = F.cross_entropy(net(input[index]), label[index])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if schedule is not None:
                schedule.step()
            losses.append(loss.item())
            bar.update()
    return statistics.fmean(losses)


def datasets(task, n_train, n_test, length, seed):
    if task == "digits":
        yield from digits()
        return
    for stream, n_per_class in enumerate((n_train, n_test)):
        if task == "tones":
            yield tones(n_per_class, length, 2 * seed + stream)
        else:
            data = generate(n_per_class, length=length, seed=(seed, stream))
            yield as_input(data.signal), torch.from_numpy(data.label)


def data_key(model, seed):
    """The task whose data ``model`` learns, and the seed of those data."""
    if model == "digits":
        return "digits", 0
    return ("tones" if model == "tones" else "bursts"), seed


def mean_std(values):
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def table(results):
    """Mean ± standard deviation over the seeds, one row per model, optimiser and init."""
    keys = sorted({(r.model, r.optimizer, r.init) for r in results},
                  key=lambda k: (k[0], k[1], list(INITS).index(k[2])))
    lines = [f"{'model':6} {'optim':5} {'init':16} {'seeds':>5} {'test acc %':>14}"
             f" {'test loss':>15} {'train loss':>15}"]
    for key in keys:
        rows = [r for r in results if (r.model, r.optimizer, r.init) == key]
        acc = mean_std([100 * r.accuracy for r in rows])
        test = mean_std([r.test_loss for r in rows])
        train = mean_std([r.train_loss for r in rows])
        lines.append(
            f"{key[0]:6} {key[1]:5} {key[2]:16} {len(rows):5d} {acc[0]:7.2f} ± {acc[1]:4.2f}"
            f" {test[0]:7.4f} ± {test[1]:5.4f} {train[0]:7.4f} ± {train[1]:5.4f}"
        )
    return "\n".join(lines)


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r.model, r.optimizer) for r in results})
    fig, axes = plt.subplots(1, len(groups), figsize=(3.2 * len(groups), 3.2), squeeze=False)
    for ax, (model, optimizer) in zip(axes[0], groups):
        names = [name for name in INITS if any(r.init == name for r in results)]
        for x, name in enumerate(names):
            acc = [100 * r.accuracy for r in results
                   if (r.model, r.optimizer, r.init) == (model, optimizer, name)]
            ax.scatter([x] * len(acc), acc, s=14, alpha=0.7)
            ax.errorbar([x + 0.15], [statistics.fmean(acc)], yerr=[mean_std(acc)[1]],
                        fmt="k_", capsize=3)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{model}, {optimizer}", fontsize=9)
        ax.set_ylabel("test accuracy, %")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--n-train", type=int, default=1000, help="bursts per class")
    parser.add_argument("--n-test", type=int, default=500, help="bursts per class")
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--digits-epochs", type=int, default=30, help="epochs of the digits task")
    parser.add_argument("--models", nargs="+", default=["cnn", "tones", "mlp"],
                        choices=["cnn", "tones", "mlp", "digits"])
    parser.add_argument("--optimizers", nargs="+", default=["adam", "sgd"],
                        choices=["adam", "sgd"])
    parser.add_argument("--inits", nargs="+", default=list(INITS), choices=list(INITS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--plot", metavar="FILE", help="save a PNG (needs matplotlib)")
    args = parser.parse_args(argv)

    from tqdm.auto import tqdm

    torch.set_num_threads(args.threads)
    results = []
    runs = [(m, o, s, i) for m in args.models for o in args.optimizers
            for s in range(args.seeds) for i in args.inits]
    epochs = {m: args.digits_epochs if m == "digits" else args.epochs for m in args.models}
    data = {}  # the data sets of each task and seed; digits has one split for every seed
    for model, _, seed, _ in runs:
        key = data_key(model, seed)
        if key not in data:
            data[key] = list(datasets(key[0], args.n_train, args.n_test, args.length, seed))
    total = sum(epochs[m] * math.ceil(len(data[data_key(m, s)][0][1]) / args.batch_size)
                for m, _, s, _ in runs)
    with tqdm(total=total, desc="init study", dynamic_ncols=True) as bar:
        for model, optimizer, seed, name in runs:
            train, test = data[data_key(model, seed)]
            start = time.perf_counter()
            net = build(model, args.length, seed, name)
            train_loss = fit(net, train, epochs[model], optimizer, args.batch_size, seed, bar)
            accuracy, test_loss = evaluate(net, test)
            results.append(Result(model, optimizer, name, seed, accuracy, test_loss, train_loss,
                                  time.perf_counter() - start))
            bar.set_postfix(model=model, optim=optimizer, init=name, acc=f"{accuracy:.3f}")
    print(table(results))
    if args.plot:
        try:
            plot(results, args.plot)
        except ImportError:
            print("matplotlib is not installed: no plot")
        else:
            print(f"plot saved to {args.plot}")
    return results


if __name__ == "__main__":
    main()
