"""Train, sparsify with variational dropout, fine-tune masked: the pipeline of the demo.

Four stages, each a few calls to the library:

1. *dense*: train the dense model;
2. *VD*: train its variational dropout twin
   (:func:`~cplxmodule.nn.relevance.to_bayesian`), initialised from the
   dense weights, with the KL penalty
   (:func:`~cplxmodule.nn.relevance.penalties`) weighted up from zero;
3. *masked*: the masked twin (:func:`~cplxmodule.nn.masked.to_masked`)
   with the relevance masks of the VD model
   (:func:`~cplxmodule.nn.relevance.compute_ard_masks`), fine-tuned;
4. *magnitude*: the baseline, the dense model pruned by magnitude
   (:func:`~cplxmodule.nn.masked.magnitude_masks`) to the number of weights
   the VD masks keep in each layer, and fine-tuned as long.

:func:`run_structured` sparsifies the same dense model by whole channels
instead (``to_bayesian(..., kind="channel_vd")``), fine-tunes its masked
twin, and :func:`compare_deployed` measures what
:func:`~cplxmodule.nn.masked.compact` makes of each: accuracy, parameters,
multiply-accumulates (:func:`count_macs`) and inference time.

:func:`run_quantized` deploys the masked model with integer weights
(:func:`~cplxmodule.nn.masked.quantize`): in the fixed-point format that
the VD posterior asks for (:func:`~cplxmodule.nn.relevance.named_bit_precision`),
after fine-tuning with the quantizer in the loop
(:func:`~cplxmodule.nn.masked.prepare_qat`), and at 8 bits, and measures
the bytes each stores (:func:`~cplxmodule.nn.masked.compressed_size`).
"""

import copy
import dataclasses
import functools
import math
import statistics
import sys
import time
from typing import Optional

import torch
import torch.nn.functional as F

from ..cplx import Cplx
from ..nn import _families
from ..nn.masked import (
    BaseMasked,
    BaseQuantized,
    compact,
    compressed_size,
    magnitude_masks,
    named_compressed_size,
    prepare_qat,
    quantize,
    to_masked,
)
from ..nn.relevance import compute_ard_masks, named_bit_precision, penalties, to_bayesian
from ..nn.utils.sparsity import named_sparsity
from .data import MODULATIONS, generate
from .model import ModulationNet, as_input

__all__ = [
    "Config",
    "Stage",
    "train",
    "accuracy",
    "run",
    "run_structured",
    "count_macs",
    "inference_seconds",
    "compare_deployed",
    "format_deployed",
    "threshold_sweep",
    "format_table",
    "deploy_quantized",
    "stored_bytes",
    "run_quantized",
    "format_quantized",
]


@dataclasses.dataclass
class Config:
    """Sizes and settings of a demo run.

    Attributes
    ----------
    n_train, n_test : int
        Bursts per class in the training and the test set.
    length : int
        Samples per burst.
    width : int
        Width of :class:`~cplxmodule.demo.model.ModulationNet`.
    epochs : int
        Epochs of dense training and of VD training.
    finetune_epochs : int
        Epochs of fine-tuning of each masked model.
    batch_size : int
    lr : float
        Peak learning rate of Adam under the one-cycle schedule.
    kl_weight : float
        The final weight of the KL penalty per training example. 1 is the
        evidence lower bound (ELBO); a weight ``w`` is the ELBO of a
        training set ``w`` times smaller, which drops more weights at some
        cost in accuracy. The default, 15, suits this task's 24000
        training examples (as the ELBO of 1600); a smaller training set
        needs a smaller weight, and 1 is the safe start on a task of your
        own (see :doc:`/guides/sparsifying`).
    kl_warmup : float
        Fraction of the VD steps over which the weight of the KL penalty
        grows linearly from 0 to ``kl_weight``.
    threshold : float
        The ``log_alpha`` threshold of the relevance masks.
    structured_kl_weight : float
        ``kl_weight`` of the channel VD model of :func:`run_structured`:
        a channel's KL is one term where a weight's is one per weight.
    gate_lr : float
        Peak learning rate of the channel gates' ``log_sigma2`` in
        :func:`run_structured`: Adam moves a parameter by about its learning
        rate per step, and a gate has to travel from -10 to above the
        threshold within the training.
    seed : int
        Seeds the data (:func:`~cplxmodule.demo.data.generate`) and torch.
    device : str or torch.device
    progress : bool
        Show tqdm progress bars (on a terminal; not when stderr goes to a
        file, where their updates would pile up on one line).
    compile : str, optional
        Train the models compiled, ``torch.compile(model, backend=compile)``
        (e.g. ``"inductor"``), and time the compacted models compiled as
        well in :func:`compare_deployed`; ``None`` runs them eagerly.
    """

    n_train: int = 4000
    n_test: int = 1000
    length: int = 128
    width: int = 16
    epochs: int = 6
    finetune_epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-2
    kl_weight: float = 15.0
    kl_warmup: float = 0.5
    threshold: float = 3.0
    structured_kl_weight: float = 300.0
    gate_lr: float = 0.3
    seed: int = 0
    device: str = "cpu"
    progress: bool = True
    compile: Optional[str] = None


@dataclasses.dataclass
class Stage:
    """One row of the results table.

    Attributes
    ----------
    model : str
        ``"complex"`` or ``"real"``.
    name : str
        The stage.
    accuracy : float
        Test accuracy, in ``[0, 1]``.
    kept, total : int
        Kept and all real parameters (weights and biases) of the layers
        that are sparsified, as :func:`~cplxmodule.nn.utils.named_sparsity`
        counts them in the masked model; for the VD stage, the masked twin
        under its relevance masks; for the dense stage, all.
    seconds : float
        Wall-clock time of the stage, compilation included.
    compile_seconds : float
        The part of ``seconds`` spent compiling (see :func:`train`); zero
        for an eager stage.
    """

    model: str
    name: str
    accuracy: float
    kept: int
    total: int
    seconds: float
    compile_seconds: float = 0.0

    @property
    def compression(self):
        """float: ``total / kept``."""
        return self.total / max(self.kept, 1)


def _datasets(config, complex):
    """The training and the test set, as the model takes them, on the device."""
    for stream, n_per_class in enumerate((config.n_train, config.n_test)):
        data = generate(n_per_class, length=config.length, seed=(config.seed, stream))
        yield as_input(data.signal, complex).to(config.device), torch.from_numpy(data.label).to(config.device)


def _progress(total, desc, enabled):
    from tqdm.auto import tqdm

    # on a terminal only: redrawn in a file, a bar's updates pile up on one line
    shown = enabled and sys.stderr.isatty()
    return tqdm(total=total, desc=desc, leave=False, disable=not shown, dynamic_ncols=True)


def train(model, data, epochs, config, desc, kl_warmup=None, lr=None, timings=None):
    """Train ``model`` with Adam under a one-cycle schedule, in place.

    Parameters
    ----------
    model : torch.nn.Module
    data : (input, label)
        The training set, on the model's device.
    epochs : int
    config : Config
    desc : str
        The progress bar's label.
    kl_warmup : float, optional
        Add the KL penalty of the model's Bayesian layers over the training
        set size, its weight growing linearly from 0 to ``config.kl_weight``
        over this fraction of the steps.
    lr : dict of str to float, optional
        Peak learning rates of the parameters whose name ends with a key
        (e.g. ``{"log_sigma2": 0.1}``), instead of ``config.lr``.
    timings : dict, optional
        Receives ``"compile"``: with ``config.compile``, the seconds spent
        compiling, taken as the time of the first step of each batch size
        (each compiles the step anew) less that of a step run warm, the
        fastest; zero for eager training.

    Returns
    -------
    model : torch.nn.Module
        ``model`` itself, trained (compiled, its parameters are trained).
    """
    input, label = data
    n, batch = len(label), config.batch_size
    steps = epochs * math.ceil(n / batch)
    groups: dict[Optional[str], list[torch.nn.Parameter]] = {}
    for name, param in model.named_parameters():
        key = next((k for k in (lr or {}) if name.endswith(k)), None)
        groups.setdefault(key, []).append(param)
    peaks = [config.lr if key is None else lr[key] for key in groups]
    optimizer = torch.optim.Adam([{"params": params} for params in groups.values()])
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, peaks, total_steps=steps)
    batches = (index for _ in range(epochs) for index in torch.randperm(n, device=label.device).split(batch))
    model.train()
    forward = model if config.compile is None else torch.compile(model, backend=config.compile)
    first: list[tuple[int, float]] = []  # (batch size, seconds) of each step
    warm: list[tuple[int, float]] = []
    with _progress(steps, desc, config.progress) as bar:
        for step, index in enumerate(batches):
            start = time.perf_counter()
            loss = F.cross_entropy(forward(input[index]), label[index])
            if kl_warmup is not None:
                ramp = min(1.0, step / max(kl_warmup * steps, 1))
                loss = loss + config.kl_weight * ramp * sum(penalties(model)) / n
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            seen = any(len(index) == size for size, _ in first)
            (warm if seen else first).append((len(index), time.perf_counter() - start))
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
            bar.update()
    if timings is not None:
        fastest = min((seconds for _, seconds in warm or first), default=0.0)
        compiled = config.compile is not None
        timings["compile"] = sum(max(seconds - fastest, 0.0) for _, seconds in first) if compiled else 0.0
    return model


@torch.no_grad()
def accuracy(model, data, batch=2048):
    """Fraction of ``data`` that ``model`` (in eval mode) classifies right.

    Parameters
    ----------
    model : torch.nn.Module
    data : (input, label)
    batch : int, default 2048

    Returns
    -------
    float
    """
    input, label = data
    model.eval()
    hits = sum(
        int((model(input[i : i + batch]).argmax(-1) == label[i : i + batch]).sum())
        for i in range(0, len(label), batch)
    )
    return hits / len(label)


def _counts(model):
    """Kept and all real parameters of the masked layers of ``model``."""
    layers = [f"{name}." for name, layer in model.named_modules() if isinstance(layer, BaseMasked)]
    kept = total = 0
    for name, (n_zeroed, n_parameters) in named_sparsity(model):
        if name.startswith(tuple(layers)):
            kept, total = kept + n_parameters - int(n_zeroed), total + n_parameters
    return kept, total


def _magnitude_baseline(dense, masks):
    """Magnitude masks of ``dense`` with the budget of ``masks`` in every layer.

    Only the choice of the weights differs from the VD masks: a global
    budget would spend it on the layers of largest weights and empty others.
    """
    baseline = {}
    for key, mask in masks.items():
        layer = dense.get_submodule(key.rpartition(".")[0])
        keep = max(float(mask.mean()), 1 / mask.numel())
        baseline[key] = magnitude_masks(layer, keep=keep)["mask"]
    return baseline


def run(config=None, complex=True):
    """Run the four stages of the pipeline on freshly generated data.

    Parameters
    ----------
    config : Config, optional
        The default :class:`Config` if omitted.
    complex : bool, default True
        The complex :class:`~cplxmodule.demo.model.ModulationNet`, or its
        real twin.

    Returns
    -------
    stages : list of Stage
        ``dense``, ``VD``, ``masked`` and ``magnitude``, in this order.
    models : dict of str to torch.nn.Module
        The trained models, keyed by stage name.
    test_set : (input, label)
        The test data, as the models take it.
    """
    config = config or Config()
    torch.manual_seed(config.seed)
    train_set, test_set = _datasets(config, complex)
    kind = "complex" if complex else "real"
    stages, models = [], {}

    def stage(name, fit, masked=lambda model: model):
        start = time.perf_counter()
        timings: dict[str, float] = {}
        models[name] = model = fit(timings)
        kept, total = _counts(masked(model))
        seconds = time.perf_counter() - start
        stages.append(Stage(kind, name, accuracy(model, test_set), kept, total, seconds, timings["compile"]))
        return model

    dense = ModulationNet(len(MODULATIONS), config.width, complex, device=config.device)
    dense = stage("dense", lambda t: train(dense, train_set, config.epochs, config, f"{kind} dense", timings=t))
    vd = stage(
        "VD",
        lambda t: train(
            to_bayesian(dense), train_set, config.epochs, config, f"{kind} VD", config.kl_warmup, timings=t
        ),
        masked=lambda vd: to_masked(vd, compute_ard_masks(vd, threshold=config.threshold)),
    )
    masks = compute_ard_masks(vd, threshold=config.threshold)
    stage(
        "masked",
        lambda t: train(to_masked(vd, masks), train_set, config.finetune_epochs, config, f"{kind} masked", timings=t),
    )
    baseline = _magnitude_baseline(dense, masks)
    stage(
        "magnitude",
        lambda t: train(
            to_masked(dense, baseline), train_set, config.finetune_epochs, config, f"{kind} magnitude", timings=t
        ),
    )
    # the dense model is the uncompressed reference of the same layers
    stages[0].kept = stages[0].total = stages[2].total
    return stages, models, test_set


def _parts(x):
    return (x.real, x.imag) if isinstance(x, Cplx) else (x,)


def _zero_dropped_biases(model):
    """Zero the bias of every output channel whose mask row is all zero, in place.

    A channel without weights outputs its bias, a constant that the next
    convolution reads (and pads with zeros around): ``compact`` then keeps
    it. Dropping the channel drops its bias too.
    """
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, BaseMasked) and layer.bias is not None and not getattr(layer, "transposed", False):
                mask = layer.mask
                if not isinstance(mask, torch.Tensor):
                    continue  # no mask: nothing dropped
                dropped = ~mask.flatten(1).bool().any(1)
                for part in _parts(layer.bias):
                    part[dropped] = 0
    return model


def _gated_convolutions(model):
    """Indices in ``model.features`` of the convolutions that get channel gates: all but the last.

    The last one feeds the modulus (or ReLU), the mean over time and the
    read-out, outside the Sequential: ``compact`` could not remove its
    channels, and gate noise in front of the modulus would inflate its mean.
    """
    indices = [i for i, layer in enumerate(model.features) if hasattr(layer, "out_channels")]
    return indices[:-1]


def run_structured(config, complex, dense):
    """Sparsify the features of a trained dense model by whole channels, and fine-tune.

    The convolutions but the last become channel variational dropout layers
    (``to_bayesian(..., kind="channel_vd")``), trained from the dense
    weights with the KL weighted up to ``config.structured_kl_weight`` and
    the gates' ``log_sigma2`` at the learning rate ``config.gate_lr``. The
    gates choose the channels (``log_alpha <= threshold`` are kept); the
    dense model's weights, masked to those channels and with the biases of
    the others zeroed (a dropped channel goes whole), are then fine-tuned:
    they fit the data better than the weights trained under the gates'
    noise. The last convolution and the read-out stay dense.

    Parameters
    ----------
    config : Config
    complex : bool
    dense : ModulationNet
        The trained dense model (the ``"dense"`` model of :func:`run`); not changed.

    Returns
    -------
    stages : list of Stage
        ``channel VD`` and ``channel masked``.
    models : dict of str to torch.nn.Module
    """
    torch.manual_seed(config.seed + 1)
    train_set, test_set = _datasets(config, complex)
    kind = "complex" if complex else "real"
    stages, models = [], {}
    start = time.perf_counter()
    structured = copy.deepcopy(dense)
    gated = _gated_convolutions(structured)
    for index in gated:
        structured.features[index] = to_bayesian(structured.features[index], kind="channel_vd")
    structured_config = dataclasses.replace(config, kl_weight=config.structured_kl_weight)
    lr = {"log_sigma2": config.gate_lr}
    timings: dict[str, float] = {}
    train(
        structured, train_set, config.epochs, structured_config, f"{kind} channel VD", config.kl_warmup, lr, timings
    )
    models["channel VD"] = structured
    masked = copy.deepcopy(dense)
    for index in gated:
        mask = structured.features[index].relevance(threshold=config.threshold)
        masked.features[index] = _zero_dropped_biases(to_masked(masked.features[index], {"mask": mask}))
    kept, total = _counts(masked)
    seconds = time.perf_counter() - start
    stages.append(
        Stage(kind, "channel VD", accuracy(structured, test_set), kept, total, seconds, timings["compile"])
    )
    start = time.perf_counter()
    train(masked, train_set, config.finetune_epochs, config, f"{kind} channel masked", timings=timings)
    models["channel masked"] = _zero_dropped_biases(masked)
    seconds = time.perf_counter() - start
    stages.append(
        Stage(kind, "channel masked", accuracy(masked, test_set), kept, total, seconds, timings["compile"])
    )
    return stages, models


def count_macs(model, input, live=False):
    """Multiply-accumulates of the linear and convolution layers of ``model`` per example.

    A layer of one of the package's families (``torch.nn.Linear``,
    ``Conv1d``, ``CplxConv1d``, ... and their masked and Bayesian twins)
    performs, per output element, one multiply-accumulate per weight entry
    it reads: ``in_features``, or ``in_channels / groups`` times the kernel
    size. A complex multiply-accumulate counts as 4 real ones. Zeros inside
    a dense weight count: a dense product computes them. Other modules
    (activations, pooling, the modulus) are not counted.

    Parameters
    ----------
    model : torch.nn.Module
    input : torch.Tensor or Cplx
        A batch; the count is divided by its size.
    live : bool, default False
        Count only the live channels of ungrouped layers: output channels
        whose weight row (times the mask, for a masked layer) is not all
        zero, and input channels that are not zero throughout the batch.
        What a model with every dead channel removed would compute.

    Returns
    -------
    int
        Real multiply-accumulates per example.
    """
    total, handles = 0, []

    def hook(layer, inputs, output):
        nonlocal total
        weight = _parts(layer.weight)[0]
        complex_factor = 4 if isinstance(layer.weight, Cplx) else 1
        if live and not getattr(layer, "transposed", False) and getattr(layer, "groups", 1) == 1:
            total += _live_macs(layer, inputs[0], output) * complex_factor
            return
        # entries of the weight read per output element (none of a layer compacted to no channels)
        if getattr(layer, "transposed", False):
            per_output = weight.shape[0] // layer.groups * math.prod(weight.shape[2:])
        else:
            per_output = math.prod(weight.shape[1:])
        total += _parts(output)[0].numel() * per_output * complex_factor

    for layer in model.modules():
        if _families.lookup(type(layer)) is not None:
            handles.append(layer.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model.eval()(input)
    finally:
        for handle in handles:
            handle.remove()
    return total // len(input)


def _live_macs(layer, input, output):
    """Multiply-accumulates between the live input and output channels of an ungrouped layer."""
    weight = layer.weight_masked if isinstance(layer, BaseMasked) else layer.weight
    rows = torch.stack([part.flatten(1) != 0 for part in _parts(weight)]).any(0).any(1)
    channel = -1 if weight.dim() == 2 else 1
    live_in = torch.stack([part.movedim(channel, 0).flatten(1) != 0 for part in _parts(input)]).any(0).any(1)
    kernel = math.prod(weight.shape[2:])
    positions = _parts(output)[0].numel() // max(_parts(output)[0].shape[channel], 1)
    return positions * int(rows.sum()) * int(live_in.sum()) * kernel


def inference_seconds(models, input, runs=15, calls=5):
    """The time of a forward call of each model, in eval mode, without autograd.

    The models take turns, ``calls`` timed calls each per round after one
    untimed call, so that a change in the machine's load during the
    measurement falls on all of them alike, while each is timed warm, as a
    deployed model runs: the call right after another model's runs cold
    (the caches and the allocator hold that model's data), which weighs
    most on the smallest model.

    Parameters
    ----------
    models : list of torch.nn.Module
    input : torch.Tensor or Cplx
    runs : int, default 15
        Rounds.
    calls : int, default 5
        Timed calls of each model per round.

    Returns
    -------
    list of float
        Seconds per call, per model: the median over the rounds of each
        round's mean.
    """
    with torch.no_grad():
        for model in models:
            model.eval()
        return _median_seconds([functools.partial(model, input) for model in models], runs, calls)


def _median_seconds(functions, runs, calls):
    """Seconds per call of each of ``functions`` (of no arguments), timed as :func:`inference_seconds` says."""
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(runs):
        for function, measured in zip(functions, times):
            function()
            start = time.perf_counter()
            for _ in range(calls):
                function()
            measured.append((time.perf_counter() - start) / calls)
    return [statistics.median(measured) for measured in times]


def compare_deployed(dense, variants, test_set, batch=64, runs=15, compile=None):
    """Accuracy, size, multiply-accumulates and speed of compacted models against the dense one.

    Parameters
    ----------
    dense : torch.nn.Module
        The reference.
    variants : dict of str to torch.nn.Module
        Masked models, compacted here with :func:`~cplxmodule.nn.masked.compact`.
    test_set : (input, label)
    batch : int, default 64
        The batch of the timed calls: the first examples of the test set.
    runs : int, default 15
        Rounds of :func:`inference_seconds`, the models taking turns.
    compile : str, optional
        Also time every model compiled, ``torch.compile(model, backend=compile)``,
        taking turns with the eager ones.

    Returns
    -------
    list of dict
        Per model (``"dense"`` first): ``name``, ``accuracy``,
        ``parameters`` (real), ``macs`` (real, per example), ``live_macs``
        (the same, of the live channels only: see :func:`count_macs`), ``seconds``,
        ``channels`` (output channels of each convolution, in order) and
        ``model``; with ``compile``, also ``compiled_seconds`` (a compiled
        call) and ``compile_seconds`` (the first compiled call, which
        compiles).
    """
    inputs = test_set[0][:batch]
    rows = []
    models = [("dense", dense)] + [(name, compact(model)) for name, model in variants.items()]
    compiled, compile_seconds = [], []
    for _, model in models if compile is not None else ():
        compiled.append(torch.compile(model.eval(), backend=compile))
        start = time.perf_counter()
        with torch.no_grad():
            compiled[-1](inputs)
        compile_seconds.append(time.perf_counter() - start)
    seconds = inference_seconds([model for _, model in models] + compiled, inputs, runs)
    for i, ((name, model), time_) in enumerate(zip(models, seconds)):
        if compiled:
            timing = {"compiled_seconds": seconds[len(models) + i], "compile_seconds": compile_seconds[i]}
        rows.append(
            {
                "name": name,
                "accuracy": accuracy(model, test_set),
                "parameters": sum(p.numel() for p in model.parameters()),
                "macs": count_macs(model, inputs),
                "live_macs": count_macs(model, inputs, live=True),
                "seconds": time_,
                "channels": [m.out_channels for m in model.modules() if hasattr(m, "out_channels")],
                "model": model,
                **(timing if compiled else {}),
            }
        )
    return rows


def format_deployed(rows, kind):
    """The rows of :func:`compare_deployed` as a plain-text table, ratios against the first.

    Parameters
    ----------
    rows : list of dict
    kind : str
        ``"complex"`` or ``"real"``, the first column.

    Returns
    -------
    str
    """
    reference = rows[0]
    header: tuple[str, ...] = (
        "model", "compacted", "accuracy", "channels", "parameters", "MACs", "fewer MACs", "live", "speedup"
    )
    compiled = "compiled_seconds" in reference
    if compiled:
        header += ("compiled", "compile")
    table = [
        (
            kind,
            row["name"],
            f"{100 * row['accuracy']:.1f} %",
            "/".join(map(str, row["channels"])),
            str(row["parameters"]),
            f"{row['macs'] / 1e6:.2f} M",
            f"{reference['macs'] / row['macs']:.1f} x",
            f"{reference['macs'] / row['live_macs']:.1f} x",
            f"{reference['seconds'] / row['seconds']:.1f} x",
        )
        + (
            (f"{reference['seconds'] / row['compiled_seconds']:.1f} x", f"{row['compile_seconds']:.1f} s")
            if compiled
            else ()
        )
        for row in rows
    ]
    return _plain_table(header, table)


def deploy_quantized(model, bits, bias_bits=8, example_inputs=None):
    """``model`` with integer weights, as it is deployed: compacted, then quantized.

    :func:`~cplxmodule.nn.masked.compact` with ``max_density=0.0`` keeps
    every layer a dense layer of its family (a CSR layer would stay in
    float32: :func:`~cplxmodule.nn.masked.quantize` converts the layers of
    the families only); the masks' zeros then cost at most a bit each, in
    the indices of the quantized weights. With ``example_inputs`` it
    follows the model's own ``forward`` (the modulus and the mean over time
    into the read-out), so that the last convolution's dead channels go.

    Parameters
    ----------
    model : torch.nn.Module
        A masked model; it is put in eval mode.
    bits : int or dict
        As for :func:`~cplxmodule.nn.masked.quantize`: a width, or each
        layer's width or fixed-point format ``(bits, fraction)``.
    bias_bits : int or None, default 8
        As for :func:`~cplxmodule.nn.masked.quantize`; ``None`` keeps the
        biases in float32.
    example_inputs : tuple, optional
        As for :func:`~cplxmodule.nn.masked.compact`.

    Returns
    -------
    torch.nn.Module
    """
    small = compact(model.eval(), max_density=0.0, example_inputs=example_inputs)
    return quantize(small, bits, bias_bits=bias_bits)


# what the tensors of a deployed model hold, by the last part of their name
_HOLDS = {
    "weight_values": "weight codes",
    "weight_index": "indices",
    "bias_index": "indices",
    "weight_scale": "scales",
    "bias_scale": "scales",
    "weight_bits": "widths",
    "bias_bits": "widths",
    "bias_values": "biases",
    "bias": "biases",
    "weight": "float weights",
}


def stored_bytes(model):
    """The bytes of :func:`~cplxmodule.nn.masked.compressed_size`, by what they hold.

    Parameters
    ----------
    model : torch.nn.Module

    Returns
    -------
    dict of str to int
        ``"weight codes"`` (the quantized weights' integers, packed at
        their width), ``"indices"`` (where the nonzero codes of a sparse
        weight or bias go), ``"scales"``, ``"widths"`` (a byte per quantized
        tensor), ``"biases"`` (their codes, or float32), ``"float weights"``
        (of layers not quantized), and any other tensor by its name; only
        those the model has, in the order of
        :func:`~cplxmodule.nn.masked.named_compressed_size`.
    """
    totals: dict[str, int] = {}
    for name, size in named_compressed_size(model):
        # a complex tensor is counted by its parts: "features.0.bias.real"
        holds = next(part for part in reversed(name.split(".")) if part not in ("real", "imag"))
        key = _HOLDS.get(holds, holds)
        totals[key] = totals.get(key, 0) + size
    return totals


def run_quantized(config, complex, models, test_set, widths=(), bias_bits=8):
    """Deploy the masked model of :func:`run` with integer weights; accuracy and bytes.

    The rows, the quantized models deployed by :func:`deploy_quantized`:

    - ``dense`` and ``masked``: the dense and the fine-tuned masked model of
      :func:`run`, in float32, the masked weights' zeros left out behind
      bitmaps;
    - ``masked, Bayesian fixed point, QAT``: the masked model fine-tuned
      for ``config.finetune_epochs`` more, each layer's weight rounded in
      the loop (:func:`~cplxmodule.nn.masked.prepare_qat`) to the
      fixed-point format (width and binary point, one power-of-two scale
      per layer) that :func:`~cplxmodule.nn.relevance.named_bit_precision`
      reads off the posterior of the VD model, then quantized to it;
    - ``masked, 8 bits`` and ``magnitude, 8 bits``: the masked model and the
      magnitude baseline quantized to 8 bits, one scale per output channel,
      without more training;
    - ``masked, {b} bits, QAT`` for each ``b`` of ``widths``: fine-tuned as
      with the Bayesian format, at ``b`` bits in every layer, one scale per
      output channel.

    Parameters
    ----------
    config : Config
    complex : bool
    models : dict of str to torch.nn.Module
        The models of :func:`run`, by stage name; not changed.
    test_set : (input, label)
    widths : sequence of int, optional
        Uniform widths to fine-tune at and quantize to as well.
    bias_bits : int or None, default 8
        The width of the quantized models' biases, one scale per layer;
        ``None`` keeps them in float32.

    Returns
    -------
    list of dict
        Per model (``"dense"`` first): ``name``; ``weights``, ``"float32"``
        or the widths of the quantized layers (one if all are equal, else
        each in order: ``"5/5/4 bits"``); ``scales``, ``"per layer"``,
        ``"per channel"`` (or ``""``, float32); ``biases``, their width or
        ``"float32"``; ``accuracy``; ``bytes``, its
        :func:`~cplxmodule.nn.masked.compressed_size`; ``seconds`` of
        fine-tuning (0 without); and ``model``.
    """
    torch.manual_seed(config.seed + 2)
    train_set, _ = _datasets(config, complex)
    kind = "complex" if complex else "real"
    masked = models["masked"]

    def row(name, model, seconds=0.0):
        layers = [layer for layer in model.modules() if isinstance(layer, BaseQuantized)]
        bits = [layer.bits for layer in layers]
        shown = bits[:1] if len(set(bits)) == 1 else bits
        biases = {int(width) for width in (getattr(layer, "bias_bits", None) for layer in layers) if width is not None}
        return {
            "name": name,
            "weights": "/".join(map(str, shown)) + " bits" if bits else "float32",
            "scales": "" if not layers else (
                "per layer" if all(layer.weight_scale.numel() == 1 for layer in layers) else "per channel"
            ),
            "biases": "/".join(f"{b} bits" for b in sorted(biases)) or "float32",
            "accuracy": accuracy(model, test_set),
            "bytes": compressed_size(model),
            "seconds": seconds,
            "model": model,
        }

    def finetuned(name, bits):
        start = time.perf_counter()
        qat = prepare_qat(masked, bits, bias_bits=bias_bits)
        qat = train(qat, train_set, config.finetune_epochs, config, f"{kind} {name}")
        return row(name, deploy_quantized(qat, bits, bias_bits, example), time.perf_counter() - start)

    formats = dict(named_bit_precision(models["VD"], threshold=config.threshold))
    example = (test_set[0][:8],)
    return [
        row("dense", models["dense"]),
        row("masked", masked),
        finetuned("masked, Bayesian fixed point, QAT", formats),
        row("masked, 8 bits", deploy_quantized(masked, 8, bias_bits, example)),
        row("magnitude, 8 bits", deploy_quantized(models["magnitude"], 8, bias_bits, example)),
        *(finetuned(f"masked, {b} bits, QAT", b) for b in widths),
    ]


def format_quantized(rows, kind):
    """The rows of :func:`run_quantized` as a plain-text table, sizes against the first.

    Parameters
    ----------
    rows : list of dict
    kind : str
        ``"complex"`` or ``"real"``, the first column.

    Returns
    -------
    str
    """
    reference = rows[0]["bytes"]
    header = ("model", "deployed", "weights", "scales", "biases", "accuracy", "bytes", "smaller", "fine-tuning")
    table = [
        (
            kind,
            row["name"],
            row["weights"],
            row["scales"],
            row["biases"],
            f"{100 * row['accuracy']:.1f} %",
            str(row["bytes"]),
            f"{reference / row['bytes']:.1f} x",
            f"{row['seconds']:.1f} s" if row["seconds"] else "",
        )
        for row in rows
    ]
    return _plain_table(header, table)


def threshold_sweep(model, test_set, thresholds):
    """Accuracy and compression of the masked twin of a Bayesian model, per threshold.

    No fine-tuning: each point is the VD model's weights under the
    relevance masks of one ``log_alpha`` threshold.

    Parameters
    ----------
    model : torch.nn.Module
        A model with Bayesian layers (e.g. the ``"VD"`` model of :func:`run`).
    test_set : (input, label)
    thresholds : sequence of float

    Returns
    -------
    list of (float, float, float)
        ``(threshold, accuracy, compression)`` per threshold.
    """
    points = []
    for threshold in thresholds:
        masked = to_masked(model, compute_ard_masks(model, threshold=threshold))
        kept, total = _counts(masked)
        points.append((threshold, accuracy(masked, test_set), total / max(kept, 1)))
    return points


def format_table(stages):
    """The results as a plain-text table.

    Parameters
    ----------
    stages : iterable of Stage

    Returns
    -------
    str
    """
    stages = list(stages)
    compiled = any(s.compile_seconds > 0 for s in stages)
    header = ("model", "stage", "accuracy", "kept parameters", "compression", "time") + (
        ("of it compiling",) if compiled else ()
    )
    rows = [
        (
            s.model,
            s.name,
            f"{100 * s.accuracy:.1f} %",
            f"{s.kept} / {s.total}",
            f"{s.compression:.1f} x",
            f"{s.seconds:.1f} s",
        )
        + ((f"{s.compile_seconds:.1f} s",) if compiled else ())
        for s in stages
    ]
    return _plain_table(header, rows)


def _plain_table(header, rows):
    """``header`` and ``rows`` (tuples of str) in left-aligned columns, a rule under the header."""
    lines = [header, *rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)) for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in text)
