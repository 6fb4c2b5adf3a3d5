"""``python -m cplxmodule.demo``: the sparsification pipeline on modulation recognition.

Trains the complex :class:`~cplxmodule.demo.model.ModulationNet`, its
variational dropout twin and its masked twin, prunes a magnitude baseline to
the same size, and prints a table of accuracy and compression; then
quantizes the masked model (:func:`~cplxmodule.demo.pipeline.run_quantized`)
and prints the accuracy and the bytes of each deployed model; with
``--structured``, also sparsifies the model by whole channels and compares
the compacted models' accuracy, size, multiply-accumulates and speed. See
``python -m cplxmodule.demo --help``.
"""

import argparse
import dataclasses
import time

import numpy as np
import torch

from ..nn.masked import compact, compact_report
from .data import MODULATIONS
from .pipeline import (
    Config,
    compare_deployed,
    format_deployed,
    format_quantized,
    format_table,
    run,
    run_quantized,
    run_structured,
    stored_bytes,
    threshold_sweep,
)

__all__ = ["main", "parser"]


def parser():
    """The command line of the demo.

    Returns
    -------
    argparse.ArgumentParser
    """
    defaults = Config()
    cli = argparse.ArgumentParser(
        prog="python -m cplxmodule.demo",
        description=(
            "Train a complex-valued CNN on a generated modulation recognition task, "
            "sparsify it with variational dropout, fine-tune it masked, compare "
            "with magnitude pruning to the same size, and quantize it for deployment."
        ),
    )
    cli.add_argument("--epochs", type=int, default=defaults.epochs, help="epochs of dense and of VD training")
    cli.add_argument(
        "--finetune-epochs", type=int, default=defaults.finetune_epochs, help="epochs of each masked fine-tuning"
    )
    cli.add_argument("--seed", type=int, default=defaults.seed, help="seed of the data and of torch")
    cli.add_argument("--device", default=defaults.device, help="torch device, e.g. cuda")
    # the convolutions are small: a second thread gains little, and on a busy
    # machine spinning threads multiplied the CPU time by 4 (measured)
    cli.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    cli.add_argument("--threshold", type=float, default=defaults.threshold, help="log_alpha threshold of the masks")
    cli.add_argument(
        "--kl-weight",
        type=_non_negative,
        default=defaults.kl_weight,
        help=(
            "weight of the KL penalty per training example: 1 is the evidence lower bound (ELBO), more trades "
            "accuracy for compression; the default (%(default)g) suits this task's training set, start at 1 on yours"
        ),
    )
    cli.add_argument("--real", action="store_true", help="also run the real twin with as many real parameters")
    cli.add_argument(
        "--structured",
        action="store_true",
        help=(
            "also sparsify by whole channels (channel variational dropout), compact, and compare accuracy, "
            "parameters, multiply-accumulates and inference time (batch 64) with the dense and the unstructured model"
        ),
    )
    cli.add_argument(
        "--structured-kl-weight",
        type=_non_negative,
        default=defaults.structured_kl_weight,
        help="KL weight per training example of the channel VD model (default %(default)g)",
    )
    cli.add_argument(
        "--compile",
        nargs="?",
        const="inductor",
        metavar="BACKEND",
        help=(
            "train the models under torch.compile (backend inductor if none is named) and, with --structured, "
            "also time the compacted models compiled; the time spent compiling is reported apart"
        ),
    )
    cli.add_argument("--plot", metavar="FILE", help="save accuracy and compression against the threshold (PNG)")
    cli.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return cli


def _non_negative(text):
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def main(argv=None, config=None):
    """Run the demo.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (``sys.argv[1:]`` if omitted).
    config : cplxmodule.demo.pipeline.Config, optional
        The settings that the arguments override (sizes included); the
        default :class:`~cplxmodule.demo.pipeline.Config` if omitted.

    Returns
    -------
    list of cplxmodule.demo.pipeline.Stage
        The rows of the printed table.
    """
    args = parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    config = dataclasses.replace(
        config or Config(),
        epochs=args.epochs,
        finetune_epochs=args.finetune_epochs,
        seed=args.seed,
        device=args.device,
        threshold=args.threshold,
        kl_weight=args.kl_weight,
        structured_kl_weight=args.structured_kl_weight,
        progress=not args.no_progress,
        compile=args.compile,
    )
    wall, cpu = time.perf_counter(), time.process_time()
    runs = [run(config, complex=True)] + ([run(config, complex=False)] if args.real else [])
    kinds = [rows[0].model for rows, _, _ in runs]
    quantized = [run_quantized(config, kind == "complex", models, test) for kind, (_, models, test) in zip(kinds, runs)]
    stages = [row for rows, _, _ in runs for row in rows]
    print(format_table(stages))
    print(_legend(config))
    print("\nThe masked model deployed with integer weights (compact, then quantize), against the dense model:\n")
    print("\n\n".join(format_quantized(rows, kind) for rows, kind in zip(quantized, kinds)))
    print(_quantized_legend(config, kinds[0], quantized[0]))
    print(
        f"total {time.perf_counter() - wall:.0f} s wall, {time.process_time() - cpu:.0f} s CPU,"
        f" {torch.get_num_threads()} threads, device {config.device}"
    )
    for rows, models, test_set in runs:
        _print_compact(rows[0].model, models["masked"], test_set)
    if args.structured:
        _structured(runs, config)
    if args.plot:
        _plot(args.plot, runs, config)
        print(f"\naccuracy and compression against the log_alpha threshold: {args.plot}")
    return stages


def _legend(config):
    # what each row and column of the table is, for a reader who has only the output
    n_train, n_test = (n * len(MODULATIONS) for n in (config.n_train, config.n_test))
    if config.kl_weight > 0:
        kl = f"the ELBO of {n_train / config.kl_weight:.0f} examples"
    else:
        kl = "no penalty, nothing pushes weights out"
    return "\n".join(
        [
            "",
            "dense        the model trained as usual",
            f"VD           its variational dropout twin, unmasked; kept: its weights of log_alpha <= {config.threshold:g}",
            "masked       the masked twin of VD, with those weights only, fine-tuned",
            "magnitude    the dense model pruned by modulus to as many weights per layer, fine-tuned as long",
            f"accuracy     on {n_test} generated test bursts of {len(MODULATIONS)} classes"
            f" (chance {100 / len(MODULATIONS):.1f} %)",
            "kept         real parameters of the sparsified layers that the masks keep / all of them",
            "compression  all / kept; time: wall-clock time of the stage",
            *(
                [
                    f"compiling    trained under torch.compile (backend {config.compile}): the first step of each"
                    " batch size compiles, its time less a warm step's is the time spent compiling"
                ]
                if config.compile
                else []
            ),
            f"KL weight    {config.kl_weight:g} per example on {n_train} training examples: {kl}"
            " (1 is the ELBO; start there on a task of your own)",
        ]
    )


def _quantized_legend(config, kind, rows):
    # the formats, the recipe of each row, and what the smallest model's bytes hold
    bayesian = rows[2]
    held = ", ".join(f"{part} {size}" for part, size in stored_bytes(bayesian["model"]).items())
    return "\n".join(
        [
            "",
            "weights      float32, or the widths of the quantized layers' integer weights, in the model's order",
            "scales       per layer: a power of two, the binary point of a fixed-point format; per channel: a float32"
            " scale for each output channel",
            "Bayesian     the fixed-point format (width and binary point) of each layer that named_bit_precision reads"
            " off the VD posterior",
            "             (Louizos et al. 2017)",
            f"QAT          fine-tuned {config.finetune_epochs} epochs more, the weights rounded to that format in the"
            " loop (prepare_qat), then quantized;",
            "             the 8-bit models are quantized without more training",
            "biases       quantized with one scale per layer",
            "bytes        what the deployed model stores (compressed_size): the integer weights packed at their width,"
            " where the nonzero",
            "             ones go (a bitmap or relative indices, the smaller), the scales, the biases; the float32 masked"
            " model's zeros are",
            "             left out behind bitmaps",
            "smaller      dense bytes / bytes",
            f"stored       the {bayesian['bytes']} bytes of the {kind} '{bayesian['name']}': {held}",
        ]
    )


def _print_compact(kind, masked, test_set, batch=64):
    # the deployable form of the fine-tuned model: what it drops, how much faster
    model = masked.eval()
    inputs = (test_set[0][:batch],)
    # a recorded call lets compact follow the forward's modulus and mean into the read-out
    compacted = compact(model, example_inputs=inputs)
    print(f"\n{kind} masked model, compacted for inference (batch {batch}):")
    print(compact_report(model, compacted, inputs))
    # the speedup of this model is about 1: say why, next to the number
    print(
        "compact() removes the channels that the masks empty; the weights masked inside a convolution's kernels\n"
        "stay, as zeros of a dense convolution, so sparse convolutions run about as fast as dense ones.\n"
        "Structured sparsification (--structured) drops whole channels instead."
    )


def _threads():
    n = torch.get_num_threads()
    return f"{n} thread" if n == 1 else f"{n} threads"


def _structured(runs, config):
    # the same dense models sparsified by channels, then every variant compacted and timed
    wall = time.perf_counter()
    tables, stages = [], []
    for rows, models, test_set in runs:
        kind = rows[0].model
        structured_stages, structured = run_structured(config, kind == "complex", models["dense"])
        stages += structured_stages
        variants = {"unstructured": models["masked"], "channels": structured["channel masked"]}
        rows = compare_deployed(models["dense"], variants, test_set, compile=config.compile)
        tables.append(format_deployed(rows, kind))
    print("\nStructured sparsification: channel variational dropout, then the masked twin fine-tuned\n")
    print(format_table(stages))
    print("\nEach model compacted for inference (compact()), against the dense model:\n")
    print("\n\n".join(tables))
    print(
        "\n".join(
            [
                "",
                "channels     output channels of each convolution kept by compact()",
                "parameters   real parameters of the compacted model",
                "MACs         real multiply-accumulates per example of its convolutions and linear layers",
                "             (a complex one counts 4; zeros inside a dense kernel count, a dense product computes them)",
                "live         fewer MACs if every channel without weights or without input were removed",
                f"speedup      dense time / compacted time on a batch of 64, median of 15 rounds of 5 warm calls (the models taking turns), {_threads()}",
                *(
                    [
                        "compiled     dense eager time / the compacted model's time compiled"
                        f" (torch.compile, backend {config.compile}), timed with the others",
                        "compile      the first compiled call, which compiles (once per input shape; about 0 where the"
                        " compiled code of a model of the same layers and shapes serves)",
                    ]
                    if config.compile
                    else []
                ),
                f"KL weight    {config.structured_kl_weight:g} per example (a channel's KL is one term, a weight's one"
                " each); total "
                f"{time.perf_counter() - wall:.0f} s wall",
            ]
        )
    )


def _plot(path, runs, config):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    thresholds = np.linspace(-3, 6, 19)
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(6, 5))
    for stages, models, test_set in runs:
        kind = stages[0].model
        _, acc, compression = zip(*threshold_sweep(models["VD"], test_set, thresholds))
        top.plot(thresholds, 100 * np.array(acc), marker=".", label=f"{kind}, masked VD")
        top.axhline(100 * stages[0].accuracy, linestyle=":", color=top.lines[-1].get_color(), label=f"{kind}, dense")
        bottom.plot(thresholds, compression, marker=".", label=kind)
    for axis in (top, bottom):
        axis.axvline(config.threshold, color="gray", linewidth=0.8, label=f"threshold used, {config.threshold:g}")
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    top.set_ylabel("test accuracy, %")
    bottom.set_ylabel("compression, x")
    bottom.set_xlabel(r"$\log\alpha$ threshold (masks keep $\log\alpha \leq$ threshold)")
    fig.suptitle("Masks from variational dropout, before fine-tuning")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    main()
