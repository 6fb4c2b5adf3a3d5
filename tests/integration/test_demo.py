"""The demo: its generated task against numpy, its models, a tiny run of the pipeline and of the command."""

import copy
import dataclasses
import shutil

import numpy as np
import pytest
import torch

from cplxmodule.demo.data import MODULATIONS, constellation, generate, rrc_taps
from cplxmodule.demo.__main__ import main
from cplxmodule.demo.model import ModulationNet, as_input
from cplxmodule.demo.pipeline import Config, accuracy, run, train
from cplxmodule.nn.relevance import compute_ard_masks, to_bayesian


def test_generate_shapes_and_dtypes():
    data = generate(7, length=48, seed=3)
    assert data.signal.shape == (42, 48) and data.signal.dtype == np.complex64
    assert data.label.shape == (42,) and data.label.dtype == np.int64
    assert data.snr_db.shape == (42,)


def test_generate_is_deterministic_by_seed():
    a, b, c = generate(20, seed=5), generate(20, seed=5), generate(20, seed=6)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.signal, c.signal)


def test_generate_is_balanced_and_shuffled():
    label = generate(50, seed=0).label
    np.testing.assert_array_equal(np.bincount(label, minlength=len(MODULATIONS)), 50)
    assert not np.all(np.diff(label) >= 0)


def test_noiseless_power_is_one():
    clean = generate(400, snr_db=None, seed=1)
    assert np.all(np.isinf(clean.snr_db))
    power = np.mean(np.abs(clean.signal.astype(np.complex128)) ** 2)
    assert abs(power - 1) < 0.02


def test_snr_matches_the_noise_added():
    # the noise has its own stream: the same seed without noise gives the clean bursts
    noisy, clean = generate(300, snr_db=(0.0, 20.0), seed=2), generate(300, snr_db=None, seed=2)
    noise = noisy.signal.astype(np.complex128) - clean.signal
    assert np.all((noisy.snr_db >= 0) & (noisy.snr_db <= 20))
    ratio = np.mean(np.abs(noise) ** 2, axis=1) / 10 ** (-noisy.snr_db / 10)
    assert abs(ratio.mean() - 1) < 0.02
    # circular: equal power in both parts, uncorrelated
    assert abs(np.mean(noise.real**2) / np.mean(noise.imag**2) - 1) < 0.05
    assert abs(np.mean(noise**2)) < 0.02 * np.mean(np.abs(noise) ** 2)


def test_phase_and_frequency_offsets():
    # a noiseless BPSK burst is real before the channel, so its square is
    # s(n)^2 exp(2i (phase + 2 pi f n)), s(n)^2 >= 0
    f_max = 0.01
    data = generate(200, snr_db=None, max_freq_offset=f_max, classes=("BPSK",), seed=4)
    squared = data.signal.astype(np.complex128) ** 2
    freq = np.angle(np.sum(squared[:, 1:] * squared[:, :-1].conj(), axis=1)) / (4 * np.pi)
    assert np.all(np.abs(freq) <= f_max * (1 + 1e-6))
    assert freq.min() < -0.8 * f_max and freq.max() > 0.8 * f_max
    n = np.arange(data.signal.shape[1])
    derotated = squared * np.exp(-4j * np.pi * freq[:, None] * n)
    phase = np.angle(np.sum(derotated, axis=1)) / 2
    residual = np.angle(derotated * np.exp(-2j * phase[:, None]))
    assert np.abs(residual[np.abs(squared) > 1e-2]).max() < 1e-3
    # the phases cover the circle (modulo the sign of the symbols)
    assert np.histogram(np.mod(phase, np.pi), bins=4)[0].min() > 20


@pytest.mark.parametrize("name, order, power", [("BPSK", 2, 2), ("QPSK", 4, 4), ("8PSK", 8, 8)])
def test_psk_constellations(name, order, power):
    points = constellation(name)
    assert len(points) == order
    np.testing.assert_allclose(np.abs(points), 1)
    # the M-th power of an M-PSK point is one and the same for all
    np.testing.assert_allclose(points**power, points[0] ** power, atol=1e-12)


@pytest.mark.parametrize("name, levels", [("PAM4", 4), ("16QAM", 4), ("64QAM", 8)])
def test_amplitude_constellations(name, levels):
    points = constellation(name)
    assert abs(np.mean(np.abs(points) ** 2) - 1) < 1e-12
    real = np.unique(np.round(points.real, 12))
    assert len(real) == levels
    np.testing.assert_allclose(np.diff(real), np.diff(real)[0])


def test_rrc_squared_is_raised_cosine():
    beta, sps, span = 0.35, 4, 16
    taps = rrc_taps(beta, sps, span)
    assert len(taps) == span * sps + 1
    np.testing.assert_allclose(np.sum(taps**2), sps)
    cascade = np.convolve(taps, taps)[len(taps) - 1 :][: 4 * sps] / sps
    t = np.arange(4 * sps) / sps
    raised = np.sinc(t) * np.cos(np.pi * beta * t) / (1 - (2 * beta * t) ** 2)
    np.testing.assert_allclose(cascade, raised, atol=5e-3)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"n_per_class": 0}, "n_per_class"), ({"length": 2.5}, "length"), ({"snr_db": (10, 0)}, "snr_db")],
)
def test_generate_bad_input(kwargs, name):
    kwargs = {"n_per_class": 2, **kwargs}
    with pytest.raises(ValueError, match=name):
        generate(**kwargs)


def test_constellation_bad_name():
    with pytest.raises(ValueError, match="32APSK"):
        constellation("32APSK")


def test_real_twin_has_as_many_parameters():
    def count(model):
        return sum(p.numel() for p in model.parameters())

    complex_net, real_net = ModulationNet(6, width=16), ModulationNet(6, width=16, complex=False)
    assert abs(count(real_net) / count(complex_net) - 1) < 0.05


def test_as_input_layouts():
    signal = generate(2, length=16, seed=0).signal
    z, x = as_input(signal), as_input(signal, complex=False)
    assert z.shape == (12, 1, 16) and x.shape == (12, 2, 16)
    np.testing.assert_array_equal(z.real[:, 0].numpy() + 1j * z.imag[:, 0].numpy(), signal)
    np.testing.assert_array_equal(x[:, 0].numpy() + 1j * x[:, 1].numpy(), signal)


TINY = dict(n_train=12, n_test=4, length=32, width=2, epochs=1, finetune_epochs=1, batch_size=24, progress=False)


@pytest.mark.parametrize(
    "complex", [pytest.param(True, marks=pytest.mark.slow), False], ids=["complex", "real"]
)
def test_pipeline_runs_every_stage(complex):
    # a threshold below 3 drops weights even after a few steps of training
    config = Config(threshold=-2.0, **TINY)
    stages, models, (input, label) = run(config, complex=complex)
    assert [stage.name for stage in stages] == ["dense", "VD", "masked", "magnitude"]
    dense, vd, masked, magnitude = stages
    assert dense.compression == 1 and dense.total == masked.total
    assert vd.kept == masked.kept and masked.compression > 1
    assert 0.9 < magnitude.compression / masked.compression < 1.1
    # the masked model drops exactly the weights whose log_alpha exceeds the threshold
    for name, mask in compute_ard_masks(models["VD"], threshold=-2.0).items():
        layer = models["masked"].get_submodule(name.rsplit(".", 1)[0])
        assert torch.equal(layer.mask, mask)
    assert len(label) == 4 * len(MODULATIONS)


@pytest.fixture
def keep_threads():
    # the command, and the test of learning, set torch's thread count for the process
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_pipeline_learns(keep_threads):
    # big enough to learn in a few seconds (a tenth of the demo's steps), at
    # the ELBO (KL weight 1): the dense, the VD and the fine-tuned masked
    # model classify twice as well as chance. A model that learned nothing
    # (a broken loss, masks that drop everything) stays near chance, 1/6:
    # on 600 test bursts, chance reaches 1/3 with probability below 1e-20.
    config = Config(
        n_train=150, n_test=100, length=64, epochs=10, finetune_epochs=2, batch_size=32, kl_weight=1.0, progress=False
    )
    torch.set_num_threads(1)  # small convolutions: more threads only spin on a busy machine
    stages, _, (_, label) = run(config)
    chance = 1 / len(MODULATIONS)
    assert len(label) == 100 * len(MODULATIONS)
    accuracies = {stage.name: stage.accuracy for stage in stages}
    assert all(accuracies[name] > 2 * chance for name in ("dense", "VD", "masked")), accuracies
    assert stages[2].compression > 1


def test_command_line(tmp_path, capsys, keep_threads):
    plot = tmp_path / "plot.png"
    argv = ["--real", "--seed", "1", "--threshold", "-2", "--threads", "1", "--kl-weight", "2", "--plot", str(plot)]
    stages = main(argv, config=Config(**TINY))
    assert torch.get_num_threads() == 1
    assert [(s.model, s.name) for s in stages][::4] == [("complex", "dense"), ("real", "dense")]
    out = capsys.readouterr().out
    for word in ("complex", "real", "dense", "VD", "masked", "magnitude", "compression", "total", "compacted"):
        assert word in out
    # the table of the quantized models, and what the bytes of the smallest hold
    for words in ("masked, Bayesian fixed point, QAT", "magnitude, 8 bits", "smaller", "stored", "indices"):
        assert words in out
    # the legend under the table: the settings of this run, the chance level,
    # why compacting sparse convolutions gains little, and where the plot went
    n_train = TINY["n_train"] * len(MODULATIONS)
    assert f"KL weight    2 per example on {n_train} training examples: the ELBO of {n_train // 2}" in out
    assert "log_alpha <= -2" in out
    assert f"chance {100 / len(MODULATIONS):.1f} %" in out
    assert "Structured sparsification" in out
    assert str(plot) in out
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_legend_without_penalty():
    # a KL weight of 0 has no equivalent ELBO: the legend says so instead of dividing by it
    from cplxmodule.demo.__main__ import _legend

    assert "no penalty" in _legend(Config(kl_weight=0.0))


@pytest.mark.parametrize("argv, name", [(["--epochs", "many"], "--epochs"), (["--kl-weight", "-1"], "--kl-weight")])
def test_command_line_bad_argument(argv, name, capsys, keep_threads):
    with pytest.raises(SystemExit):
        main(argv)
    assert name in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.inductor
@pytest.mark.skipif(shutil.which("g++") is None, reason="inductor needs a C++ compiler")
def test_compiled_model_trains_as_eager():
    # the demo's variational dropout model and training loop under
    # torch.compile(fullgraph=True), inductor with torch's eager random
    # numbers: the same seed gives the same weights and the same test
    # accuracy. The last batch is smaller, so dynamic shapes are compiled too.
    # (Dense layers compile, forward and backward, in test_compile_families.)
    config = Config(**{**TINY, "n_train": 24, "batch_size": 32})
    data = generate(config.n_train, length=config.length, seed=0)
    train_set = as_input(data.signal), torch.from_numpy(data.label)
    torch.manual_seed(0)
    model = to_bayesian(ModulationNet(len(MODULATIONS), config.width))
    twin = copy.deepcopy(model)
    compiled = torch.compile(twin, fullgraph=True)
    outcomes = []
    for candidate in (model, compiled):
        torch.manual_seed(1)
        with torch._inductor.config.patch(fallback_random=True):
            train(candidate, train_set, 2, config, "test", kl_warmup=0.5)
        outcomes.append(accuracy(candidate, train_set))
    for (name, eager), compiled_param in zip(model.named_parameters(), twin.parameters()):
        torch.testing.assert_close(compiled_param, eager, rtol=1e-4, atol=1e-5, msg=name)
    assert outcomes[0] == outcomes[1]


def test_count_macs_by_hand():
    # ModulationNet(width=2) on bursts of 32: convolutions of 1->2 (kernel 7,
    # stride 2: 16 positions), 2->4 (kernel 5, 16), 4->4 (kernel 5, after a
    # pool: 8), 4->8 (kernel 1, after a pool: 4), and the read-out 8->6
    from cplxmodule.demo.pipeline import count_macs

    def macs(c_in, widths):
        w1, w2, w3, w4 = widths
        return w1 * 16 * c_in * 7 + w2 * 16 * w1 * 5 + w3 * 8 * w2 * 5 + w4 * 4 * w3 * 1

    signal = generate(1, length=32, seed=0).signal
    # complex: a complex multiply-accumulate is 4 real ones; the read-out is real
    assert count_macs(ModulationNet(6, width=2), as_input(signal)) == 4 * macs(1, [2, 4, 4, 8]) + 8 * 6
    # the real twin: sqrt(2) times the channels, two input channels
    real = ModulationNet(6, width=2, complex=False)
    assert count_macs(real, as_input(signal, complex=False)) == macs(2, [3, 6, 6, 11]) + 11 * 6


def test_count_macs_of_a_layer_compacted_to_no_channels():
    # compact leaves a feed-forward block whose hidden units all closed as
    # CplxLinear(4, 0) and CplxLinear(0, 3): no multiply-accumulate, no error
    from cplxmodule.cplx import randn
    from cplxmodule.nn import CplxLinear
    from cplxmodule.demo.pipeline import count_macs

    model = torch.nn.Sequential(CplxLinear(4, 0), CplxLinear(0, 3), CplxLinear(3, 2))
    with torch.no_grad():
        model[1].bias.real.fill_(1.0)  # the empty layer outputs its bias: live inputs
    x = randn(5, 4)
    assert count_macs(model, x) == count_macs(model, x, live=True) == 0 + 0 + 4 * 2 * 3


def test_command_line_structured(capsys, keep_threads):
    argv = ["--structured", "--threshold", "-2", "--threads", "1", "--no-progress"]
    main(argv, config=Config(**TINY))
    out = capsys.readouterr().out
    for words in ("channel VD", "channel masked", "unstructured", "channels", "MACs", "speedup"):
        assert words in out


def test_count_macs_of_live_channels_by_hand():
    from cplxmodule.demo.pipeline import count_macs

    torch.manual_seed(0)
    model = ModulationNet(6, width=2)
    x = as_input(generate(50, length=32, seed=0).signal)
    with torch.no_grad():
        # no channel after the first dies of the split ReLU
        for index in (2, 5):
            model.features[index].bias.real.fill_(10.0)
    full, live = count_macs(model, x), count_macs(model, x, live=True)
    assert live == full
    with torch.no_grad():
        # the first convolution's channel 1 goes whole: it outputs relu(0) = 0
        for part in (model.features[0].weight, model.features[0].bias):
            part.real[1], part.imag[1] = 0, 0
    # one of 2 output channels of the first layer (16 x 7), one of 2 input channels of the second (4 x 16 x 5)
    assert count_macs(model, x) == full
    assert count_macs(model, x, live=True) == live - 4 * (16 * 7 + 4 * 16 * 5)


@pytest.mark.slow
def test_command_line_compiled(capsys, keep_threads):
    # dynamo alone (the eager backend): the models train and are timed
    # compiled, the time spent compiling reported apart
    # dynamo reuses a graph of the same class compiled by an earlier test: nothing to compile
    torch._dynamo.reset()
    argv = ["--compile", "eager", "--structured", "--threshold", "-2", "--threads", "1", "--no-progress"]
    stages = main(argv, config=Config(**TINY))
    assert all(0 <= stage.compile_seconds < stage.seconds for stage in stages)
    # the magnitude baseline is a masked model of the same layers and shapes
    # as the masked stage, whose compiled code it reuses: about nothing to
    # compile, which a busy machine's timing may round to 0
    assert all(stage.compile_seconds > 0 for stage in stages if stage.name != "magnitude")
    out = capsys.readouterr().out
    for words in ("of it compiling", "backend eager", "compiled", "compile "):
        assert words in out


@pytest.mark.slow
def test_train_compiled_as_eager():
    # the training loop of --compile, with dynamo alone (the eager backend):
    # the same steps as eager training, and the time spent compiling
    torch._dynamo.reset()  # as above: the first compiled step compiles
    config = Config(**TINY)
    data = generate(config.n_train, length=config.length, seed=0)
    train_set = as_input(data.signal), torch.from_numpy(data.label)
    torch.manual_seed(0)
    model = ModulationNet(len(MODULATIONS), config.width)
    twin = copy.deepcopy(model)
    timings = []
    for candidate, backend in ((model, None), (twin, "eager")):
        timings.append({})
        torch.manual_seed(1)
        train(candidate, train_set, 1, dataclasses.replace(config, compile=backend), "test", timings=timings[-1])
    for (name, eager), compiled in zip(model.named_parameters(), twin.parameters()):
        torch.testing.assert_close(compiled, eager, msg=name)
    assert timings[0] == {"compile": 0.0} and timings[1]["compile"] > 0


def test_tables_of_a_compiled_run():
    from cplxmodule.demo.pipeline import Stage, format_deployed, format_table

    table = format_table([Stage("complex", "dense", 0.5, 10, 10, 3.0, 1.25)])
    assert "of it compiling" in table and "1.2 s" in table
    assert "compiling" not in format_table([Stage("complex", "dense", 0.5, 10, 10, 3.0)])
    row = dict(name="dense", accuracy=0.5, channels=[2], parameters=10, macs=100, live_macs=100, seconds=2.0)
    compiled = format_deployed([{**row, "compiled_seconds": 0.5, "compile_seconds": 3.0}], "complex")
    assert "4.0 x" in compiled and "3.0 s" in compiled
    assert "compile" not in format_deployed([row], "complex")


def test_progress_bars_show_on_a_terminal_only(monkeypatch):
    from cplxmodule.demo import pipeline

    class Terminal:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

        def write(self, text):
            pass

        def flush(self):
            pass

    for tty in (False, True):
        monkeypatch.setattr(pipeline.sys, "stderr", Terminal(tty))
        bar = pipeline._progress(10, "train", enabled=True)
        assert bar.disable == (not tty)
        bar.close()
    assert pipeline._progress(10, "train", enabled=False).disable


def test_run_quantized():
    # the real twin is the fast one; the formats are those of named_bit_precision
    # (width 0, a layer without a surviving weight, stored at 2 bits)
    from cplxmodule.demo.pipeline import format_quantized, run_quantized, stored_bytes
    from cplxmodule.nn.masked import BaseQuantized, compressed_size
    from cplxmodule.nn.relevance import named_bit_precision

    config = Config(threshold=-2.0, **TINY)
    _, models, test_set = run(config, complex=False)
    rows = run_quantized(config, False, models, test_set, widths=(4,))
    names = [
        "dense", "masked", "masked, Bayesian fixed point, QAT", "masked, 8 bits", "magnitude, 8 bits",
        "masked, 4 bits, QAT",
    ]
    assert [row["name"] for row in rows] == names
    formats = dict(named_bit_precision(models["VD"], threshold=-2.0))
    bayesian = [max(fmt.bits, 2) for fmt in formats.values()]
    shown = bayesian[:1] if len(set(bayesian)) == 1 else bayesian
    weights = ["float32", "float32", "/".join(map(str, shown)) + " bits", "8 bits", "8 bits", "4 bits"]
    assert [row["weights"] for row in rows] == weights
    assert [row["scales"] for row in rows] == ["", "", "per layer"] + ["per channel"] * 3
    assert [row["biases"] for row in rows] == ["float32"] * 2 + ["8 bits"] * 4
    assert rows[0]["bytes"] == 4 * sum(p.numel() for p in models["dense"].parameters())
    for row in rows:
        model = row["model"]
        assert row["bytes"] == compressed_size(model) == sum(stored_bytes(model).values())
        assert row["accuracy"] == accuracy(model, test_set)
        assert (row["seconds"] > 0) == row["name"].endswith("QAT")
    for row in rows[2:]:
        # every layer with a weight quantized: the linear read-out too, which compact may make CSR
        layers = [m for m in row["model"].modules() if hasattr(m, "weight")]
        assert len(layers) == 5 and all(isinstance(m, BaseQuantized) for m in layers)
        assert row["bytes"] < rows[1]["bytes"] < rows[0]["bytes"]
    # the Bayesian format: each layer's weight an integer times 2**-fraction
    for name, fmt in formats.items():
        layer = rows[2]["model"].get_submodule(name)
        assert layer.weight_scale.item() == 2.0 ** -fmt.fraction
    table = format_quantized(rows, "real")
    assert f"{rows[0]['bytes'] / rows[3]['bytes']:.1f} x" in table and "fine-tuning" in table


def test_deploy_quantized_keeps_every_layer_dense():
    # compact's own rule makes a large, very sparse linear layer CSR, which
    # quantize does not convert; deployed quantized, it is quantized
    from cplxmodule.demo.pipeline import deploy_quantized, stored_bytes
    from cplxmodule.nn.masked import BaseQuantized, compact, compressed_size, to_masked

    torch.manual_seed(0)
    model = to_masked(torch.nn.Sequential(torch.nn.Linear(1024, 1024)))
    model[0].mask = torch.rand(1024, 1024) < 0.01
    assert not isinstance(compact(model.eval())[0], BaseQuantized)
    deployed = deploy_quantized(model, 4)
    assert isinstance(deployed[0], BaseQuantized) and deployed[0].bits == 4 and int(deployed[0].bias_bits) == 8
    x = torch.randn(3, 1024)
    with torch.no_grad():
        torch.testing.assert_close(deployed(x), model(x), atol=0.05, rtol=0.1)
    assert sum(stored_bytes(deployed).values()) == compressed_size(deployed)
    # the biases in float32, without bias_bits
    assert stored_bytes(deploy_quantized(model, 4, bias_bits=None))["biases"] == 4 * 1024


def test_stored_bytes_by_hand():
    from cplxmodule.demo.pipeline import stored_bytes
    from cplxmodule.nn import CplxLinear
    from cplxmodule.nn.masked import quantize

    # 8 x 4 complex weights, none zero: no index; 64 codes of 4 bits; a scale
    # per output feature, shared by the parts; the complex biases at 8 bits, one scale
    stored = stored_bytes(quantize(torch.nn.Sequential(CplxLinear(8, 4)), 4, bias_bits=8))
    assert stored == {"widths": 2, "scales": 16 + 4, "indices": 0, "weight codes": 32, "biases": 8}
    assert stored_bytes(torch.nn.Linear(3, 2)) == {"float weights": 24, "biases": 8}
