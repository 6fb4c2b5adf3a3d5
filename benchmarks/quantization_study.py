"""Bits as well as zeros: accuracy against the bytes a deployed demo model stores.

Runs the demo's pipeline (:func:`cplxmodule.demo.pipeline.run`: dense,
variational dropout, the masked twin fine-tuned, the magnitude baseline
pruned to as many weights per layer) from several seeds, deploys each
model with :func:`cplxmodule.demo.pipeline.run_quantized`, and prints the
mean and standard deviation over the seeds of the test accuracy and of
:func:`~cplxmodule.nn.masked.compressed_size`, the bytes the deployed model
stores, with its ratio to the dense model's:

- ``dense``: the dense model, float32;
- ``masked``: the VD masks, float32, the zeros left out behind bitmaps;
- ``masked, Bayesian fixed point, QAT``: the VD masks, each layer in the
  fixed-point format (width and binary point) that
  :func:`~cplxmodule.nn.relevance.named_bit_precision` reads off the
  posterior, fine-tuned ``finetune_epochs`` more with the quantizer in the
  loop (:func:`~cplxmodule.nn.masked.prepare_qat`), then quantized;
- ``masked, 8 bits`` and ``magnitude, 8 bits``: the VD masks and the
  magnitude baseline quantized to 8 bits, a scale per output channel,
  without more training;
- ``masked, {b} bits, QAT``: uniform widths, a scale per output channel,
  fine-tuned as the Bayesian format is (8 bits too, to tell the fine-tuning
  from the width).

The quantized models' biases are 8-bit. The study also prints what the
bytes of the Bayesian model hold (:func:`~cplxmodule.demo.pipeline.stored_bytes`).
Run from the repository root (about 3 minutes per seed on one thread)::

    python benchmarks/quantization_study.py --plot docs/guides/quantization.png
"""

import argparse
import dataclasses
import statistics
import time

import numpy as np
import torch
from tqdm.auto import tqdm

from cplxmodule.demo.pipeline import Config, run, run_quantized, stored_bytes


def study(seeds, widths, config):
    """The rows of :func:`~cplxmodule.demo.pipeline.run_quantized` of the complex model, per seed."""
    runs = []
    for seed in tqdm(seeds, desc="seeds"):
        seeded = dataclasses.replace(config, seed=seed)
        _, models, test_set = run(seeded, complex=True)
        runs.append(run_quantized(seeded, True, models, test_set, widths))
    return runs


def _mean(values, scale=1.0, digits=1):
    values = [scale * v for v in values]
    spread = f" ± {statistics.stdev(values):.{digits}f}" if len(values) > 1 else ""
    return f"{statistics.mean(values):.{digits}f}{spread}"


def table(runs):
    """The variants' accuracy, bytes and ratio to dense, mean ± standard deviation over the seeds."""
    rows = []
    for variant in zip(*runs):
        smaller = [run[0]["bytes"] / row["bytes"] for run, row in zip(runs, variant)]
        rows.append(
            (
                variant[0]["name"],
                "; ".join(sorted({row["weights"] for row in variant})),
                variant[0]["scales"],
                variant[0]["biases"],
                _mean([row["bytes"] for row in variant], digits=0),
                _mean(smaller) + " x",
                _mean([row["accuracy"] for row in variant], scale=100) + " %",
            )
        )
    return _rst_table(("deployed", "weights", "scales", "biases", "bytes", "smaller", "accuracy"), rows)


def _rst_table(header, rows):
    """A reStructuredText simple table, ready for the guide."""
    widths = [max(len(line[i]) for line in (header, *rows)) for i in range(len(header))]
    rule = "  ".join("=" * width for width in widths)
    lines = [rule, header, rule, *rows, rule]
    return "\n".join(line if isinstance(line, str) else "  ".join(
        cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines)


def held(runs, name="masked, Bayesian fixed point, QAT"):
    """What the bytes of the variant ``name`` hold, mean ± standard deviation over the seeds."""
    parts = [stored_bytes(row["model"]) for run in runs for row in run if row["name"] == name]
    return ", ".join(f"{part} {_mean([p[part] for p in parts], digits=0)}" for part in parts[0])


def plot(path, runs):
    """Accuracy against bytes, each variant's seeds and their mean ± standard deviation; on the right,
    the VD masks quantized, closer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (whole, close) = plt.subplots(1, 2, figsize=(10, 4.5))
    dense_bytes = np.mean([run[0]["bytes"] for run in runs])
    dense_acc = 100 * np.mean([run[0]["accuracy"] for run in runs])
    quantized = []
    for variant in zip(*runs):
        size = np.array([row["bytes"] for row in variant])
        acc = 100 * np.array([row["accuracy"] for row in variant])
        if variant[0]["name"].startswith("masked,"):
            quantized += [size, acc]
        for axis in (whole, close):
            axis.errorbar(size.mean(), acc.mean(), xerr=size.std(), yerr=acc.std(), marker="o", capsize=3,
                          label=variant[0]["name"])
            axis.scatter(size, acc, s=8, color=axis.lines[-1].get_color(), alpha=0.4)
    for axis in (whole, close):
        axis.axhline(dense_acc - 1, color="gray", linestyle="--", label="target: dense - 1 pp")
        axis.grid(alpha=0.3, which="both")
        axis.set_xlabel("bytes stored (compressed_size)")
    whole.axvline(dense_bytes / 150, color="gray", linestyle=":", label="target: 1/150 of dense")
    whole.set_xscale("log")
    whole.set_xlabel("bytes stored (compressed_size), log scale")
    whole.set_ylabel("test accuracy, %")
    whole.legend(fontsize="small", loc="lower right")
    sizes, accs = np.concatenate(quantized[::2]), np.concatenate(quantized[1::2])
    close.set_xlim(0.95 * sizes.min(), 1.05 * sizes.max())
    close.set_ylim(min(accs.min(), dense_acc - 1) - 0.3, accs.max() + 0.3)
    close.set_title("the VD masks quantized, closer")
    fig.suptitle(f"The demo's complex model: {len(runs)} seeds, each a dot; mean ± standard deviation")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None):
    cli = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    cli.add_argument("--seeds", type=int, default=3, help="seeds 0, 1, ... (default 3)")
    cli.add_argument("--widths", type=int, nargs="*", default=[8, 6, 4],
                     help="uniform widths fine-tuned at and quantized to (default 8 6 4)")
    cli.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    cli.add_argument("--plot", metavar="FILE", help="save accuracy against bytes (PNG)")
    args = cli.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    runs = study(range(args.seeds), args.widths, Config())
    print(table(runs))
    print(f"\nmasked, Bayesian fixed point, QAT holds: {held(runs)}")
    print(f"{args.seeds} seeds in {time.perf_counter() - start:.0f} s, {torch.get_num_threads()} threads")
    if args.plot:
        plot(args.plot, runs)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
