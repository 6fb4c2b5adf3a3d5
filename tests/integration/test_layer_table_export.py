"""Every layer of the table (``tests/nn/layer_table.py``) exports, with a dynamic batch.

A layer is deployed between real tensors: the parts of its complex inputs
in, the real tensors of its outputs out (a :class:`Cplx` as its two parts).
Each layer of :data:`~tests.nn.layer_table.LAYERS` is built from its first
sample, in eval mode (the Bayesian layers and dropout then compute their
mean), and takes the table's inputs, whose batch axis is
``LayerInfo.batch_dim``. Three exporters, each exported at batch size 3
with that axis dynamic and run at batch sizes 2 and 5 against the eager
layer on the same inputs:

- ``test_torch_export``: :func:`torch.export.export` with ``dynamic_shapes``;
  the graph holds no complex value but in the layers of ``COMPLEX_GRAPH``;
- ``test_onnx_torchscript``: ``torch.onnx.export(..., dynamo=False)`` with
  ``dynamic_axes``, run in onnxruntime;
- ``test_onnx_dynamo``: the default ONNX exporter (``dynamo=True``, without
  its graph optimisations, which cost more than the export) with dynamic
  shapes, run in onnxruntime. Its first step is the ``torch.export`` call
  above, so it takes that program (of the layers both export) rather than
  tracing the layers again.

A capture costs about a second per graph however small the graph, so every
layer that exports runs in one module, :class:`Zoo`, and each exporter
captures one graph of all of them. An output that differs names its layer;
when the export of the whole zoo fails, each layer is exported on its own
(slowly: only then) to name the layers that fail, with their errors. A
layer that does not export under an exporter says so in the table
(``KNOWN``, with the reason),
is left out of the zoo, and is exported on its own as a strict expected
failure; docs/guides/deploying.rst lists the same layers, which
:func:`test_the_guide_lists_what_does_not_export` checks.
"""

import functools
import io
import re
import warnings
from pathlib import Path

import pytest
import torch

from cplxmodule import Cplx
from tests.nn.layer_table import EXPORTS, LAYERS

pytestmark = pytest.mark.usefixtures("one_thread", "gc_paused")

EXPORT_BATCH, RUN_BATCHES = 3, (2, 5)
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "deploying.rst"


def parts(output):
    """The real tensors of an output (a Cplx as its two parts; tuples flattened; None dropped)."""
    if isinstance(output, Cplx):
        return [output.real, output.imag]
    if isinstance(output, torch.Tensor):
        return [output]
    if output is None:
        return []
    return [t for item in output for t in parts(item)]


class Deployed(torch.nn.Module):
    """One layer of the table between real tensors: the parts of its inputs in, of its outputs out."""

    def __init__(self, info):
        super().__init__()
        self.layer = info.make().eval()
        self.complex = [isinstance(x, Cplx) for x in info.inputs(batch=2)]

    def forward(self, *tensors):
        tensors, inputs = list(tensors), []
        for complex_ in self.complex:
            inputs.append(Cplx(tensors.pop(0), tensors.pop(0)) if complex_ else tensors.pop(0))
        return tuple(parts(self.layer(*inputs)))


class Zoo(torch.nn.Module):
    """The layers ``infos`` side by side: the tensors of every layer's inputs in, in order,
    the tensors of every layer's outputs out."""

    def __init__(self, infos):
        super().__init__()
        self.infos = list(infos)
        self.layers = torch.nn.ModuleList(Deployed(info) for info in self.infos)
        self.sizes = [len(layer.complex) + sum(layer.complex) for layer in self.layers]
        # the exporters put the module back in the mode they found it in
        self.eval()

    def forward(self, *tensors):
        outputs, start = [], 0
        for layer, size in zip(self.layers, self.sizes):
            outputs.extend(layer(*tensors[start:start + size]))
            start += size
        return tuple(outputs)

    def inputs(self, batch):
        """The layers' inputs of ``batch`` examples, as real tensors in order."""
        generator = torch.Generator().manual_seed(batch)
        return tuple(t for info in self.infos for t in parts(info.inputs(batch, generator=generator)))

    def batch_axes(self):
        """The batch axis of each input tensor."""
        return [info.batch_dim for info, size in zip(self.infos, self.sizes) for _ in range(size)]

    def labels(self, outputs):
        """The layer of each output, in order."""
        xs = self.inputs(2)
        labels, start = [], 0
        with torch.no_grad():
            for info, layer, size in zip(self.infos, self.layers, self.sizes):
                labels += [info.id] * len(layer(*xs[start:start + size]))
                start += size
        assert len(labels) == len(outputs)
        return labels


def dynamic_shapes(zoo):
    batch = torch.export.Dim("batch", min=2)
    # one entry for the variadic ``tensors``: the tuple of its shapes
    return (tuple({axis: batch} for axis in zoo.batch_axes()),)


def onnx_runner(model_bytes):
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only, not the constants it leaves unfolded
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]

    def run(*xs):
        # an input that no output depends on is not an input of the ONNX graph
        feed = {f"x{i}": x.numpy() for i, x in enumerate(xs)}
        return [torch.from_numpy(y) for y in session.run(None, {n: feed[n] for n in names})]
    return run


def export_torch(zoo, program=None):
    if program is None:
        program = torch.export.export(zoo, zoo.inputs(EXPORT_BATCH),
                                      dynamic_shapes=dynamic_shapes(zoo))
    return program.module()


def export_onnx_torchscript(zoo):
    pytest.importorskip("onnx")
    example = zoo.inputs(EXPORT_BATCH)
    names = [f"x{i}" for i in range(len(example))]
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter is deprecated
        torch.onnx.export(zoo, example, buffer, dynamo=False, input_names=names,
                          dynamic_axes={n: {axis: "batch"} for n, axis in
                                        zip(names, zoo.batch_axes())})
    return onnx_runner(buffer.getvalue())


def export_onnx_dynamo(zoo, program=None):
    pytest.importorskip("onnxscript")
    example = zoo.inputs(EXPORT_BATCH)
    names = [f"x{i}" for i in range(len(example))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if program is None:
            onnx_program = torch.onnx.export(zoo, example, dynamo=True, input_names=names,
                                             dynamic_shapes=dynamic_shapes(zoo), optimize=False,
                                             verbose=False)
        else:
            onnx_program = torch.onnx.export(program, example, input_names=names,
                                             optimize=False, verbose=False)
    return onnx_runner(onnx_program.model_proto.SerializeToString())


EXPORTERS = {
    "test_torch_export": export_torch,
    "test_onnx_torchscript": export_onnx_torchscript,
    "test_onnx_dynamo": export_onnx_dynamo,
}
assert set(EXPORTERS) == set(EXPORTS)


class Mismatch(AssertionError):
    """An exported output that differs from the eager one: the message names the layer."""


# onnxruntime sums float32 products in another order than torch: a transformer's
# layer norms make that up to about 2e-4; torch.export's program runs decomposed
# ops, which the vision transformer's layer norms make up to about 3e-5
TOLERANCE = {"test_torch_export": dict(rtol=1e-4, atol=1e-4),
             "test_onnx_torchscript": dict(rtol=1e-3, atol=1e-4),
             "test_onnx_dynamo": dict(rtol=1e-3, atol=1e-4)}


def check(exporter, zoo, **kwargs):
    """Export ``zoo`` and compare it with eager at every batch size of :data:`RUN_BATCHES`."""
    run = EXPORTERS[exporter](zoo, **kwargs)
    for batch in RUN_BATCHES:
        xs = zoo.inputs(batch)
        with torch.no_grad():
            expected = zoo(*xs)
        actual = run(*xs)
        labels = zoo.labels(expected)
        assert len(actual) == len(expected)
        for a, e, label in zip(actual, expected, labels):
            try:
                torch.testing.assert_close(a, e, **TOLERANCE[exporter])
            except AssertionError as error:
                raise Mismatch(f"{label} at batch {batch}: {error}") from None


def exporting(exporter):
    """The layers that export under ``exporter``, by the table."""
    return [info for info in LAYERS if exporter not in info.skips and exporter not in info.xfails]


def failing(exporter, infos):
    """Each layer of ``infos`` exported on its own (slow): a failure naming those that fail."""
    failures = []
    for info in infos:
        try:
            check(exporter, Zoo([info]))
        except Exception as error:  # any error: it names the layer below
            # the first lines: the TorchScript exporter appends the whole graph
            message = "\n    ".join(str(error).splitlines()[:3])
            failures.append(f"{info.id}: {type(error).__name__}: {message[:600]}")
    if failures:
        pytest.fail(f"{len(failures)} layers fail under {exporter}:\n" + "\n".join(failures),
                    pytrace=False)


def check_all(exporter, infos, **kwargs):
    """:func:`check` of the zoo of ``infos``; when it fails, :func:`failing` names the layers."""
    try:
        check(exporter, Zoo(infos), **kwargs)
    except Mismatch:
        raise  # it names the layer
    except Exception:
        failing(exporter, infos)
        raise  # each layer exports on its own: the zoo's own error


def shared():
    """The layers that both ``torch.export`` and the default ONNX exporter export."""
    dynamo = {info.id for info in exporting("test_onnx_dynamo")}
    return [info for info in exporting("test_torch_export") if info.id in dynamo]


@functools.lru_cache(maxsize=None)
def torch_program():
    """The zoo of :func:`shared` and its ``torch.export`` program (cached: two tests take it)."""
    zoo = Zoo(shared())
    return zoo, torch.export.export(zoo, zoo.inputs(EXPORT_BATCH),
                                    dynamic_shapes=dynamic_shapes(zoo))


def check_exporter(exporter):
    """Every layer that ``exporter`` exports: the shared program's, then the others' zoo."""
    ids = {info.id for info in shared()}
    others = [info for info in exporting(exporter) if info.id not in ids]
    try:
        zoo, program = torch_program()
        check(exporter, zoo, program=program)
    except Mismatch:
        raise
    except Exception:
        failing(exporter, shared())
        raise
    if others:
        check_all(exporter, others)


# the layers whose exported graph computes in torch's complex dtype (which the
# TorchScript ONNX exporter does not have); every other layer, traced, takes
# real ops only (the Fourier transforms as products with cosine and sine matrices)
COMPLEX_GRAPH = {"CplxSpectralPool1d", "CplxSpectralPool2d", "CplxSpectralPool3d", "CplxS4D"}


def complex_layers(program):
    """The classes of the layers with a value of a complex dtype in ``program``'s graph."""
    found = set()
    for node in program.graph.nodes:
        value = node.meta.get("val")
        if isinstance(value, torch.Tensor) and value.is_complex():
            found |= {kind.rsplit(".", 1)[-1] for path, kind
                      in node.meta.get("nn_module_stack", {}).values()
                      if re.fullmatch(r"layers\.\d+\.layer", path)}
    return found


@pytest.mark.slow
def test_torch_export():
    check_exporter("test_torch_export")
    # the shared program's layers (the others are the known failures of ONNX)
    assert complex_layers(torch_program()[1]) == COMPLEX_GRAPH & {info.id for info in shared()}


@pytest.mark.slow
@pytest.mark.onnx
def test_onnx_torchscript():
    check_all("test_onnx_torchscript", exporting("test_onnx_torchscript"))


@pytest.mark.slow
@pytest.mark.onnx
def test_onnx_dynamo():
    check_exporter("test_onnx_dynamo")


def _known():
    params = []
    for info in LAYERS:
        for exporter in EXPORTERS:
            if exporter in info.xfails:
                mark = pytest.mark.xfail(strict=True, raises=Exception,
                                         reason=info.xfails[exporter])
            elif exporter in info.skips:
                mark = pytest.mark.skip(reason=info.skips[exporter])
            else:
                continue
            marks = [mark] + ([pytest.mark.onnx] if "onnx" in exporter else [])
            params.append(pytest.param(info, exporter, id=f"{exporter[5:]}-{info.id}",
                                       marks=marks))
    return params


@pytest.mark.parametrize("info, exporter", _known())
def test_known_failures(info, exporter):
    check(exporter, Zoo([info]))


# the words of the guide's "does not export" table that name each exporter
_GUIDE_EXPORTERS = {
    "test_torch_export": "torch.export",
    "test_onnx_torchscript": "dynamo=False",
    "test_onnx_dynamo": "dynamo=True",
}


def test_the_guide_lists_what_does_not_export():
    text = GUIDE.read_text(encoding="utf-8")
    table = text[text.index(".. list-table::", text.index(".. _does-not-export:")):]
    # the list-table ends at the first line that is not indented after a blank line
    end = re.search(r"\n\n(?=\S)", table)
    table = table if end is None else table[:end.start()]
    # a row: "* - layers" then "- exporters", each cell going on in lines indented past it
    rows = re.findall(r"^   \* - (.*(?:\n {5,}(?!- )\S.*)*)\n     - (.*(?:\n       \S.*)*)",
                      table, flags=re.MULTILINE)
    listed = {(cls, exporter) for layers, exporters in rows[1:]
              for cls in re.findall(r":class:`~?[\w.]*?(\w+)`", layers)
              for exporter, words in _GUIDE_EXPORTERS.items() if words in exporters}
    known = {(info.id, exporter) for info in LAYERS for exporter in EXPORTERS
             if exporter in info.skips or exporter in info.xfails}
    assert listed == known, (f"in the guide only: {sorted(listed - known)}; "
                             f"in the table only: {sorted(known - listed)}")
