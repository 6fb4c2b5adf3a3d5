"""Complex models between real tensors export to ONNX with a dynamic batch and run at any batch.

A user's model takes and returns real tensors: ``RealToCplx`` in (interleaved
parts), complex layers, ``CplxToReal`` out. Each model is exported once, at
batch 4, with a dynamic batch axis by each of torch's exporters (the
TorchScript one with ``dynamic_axes``, the default one with
``dynamic_shapes``), and run in onnxruntime at batches 3 and 7 against the
eager model (the reference): a batch size baked into the graph as a
constant fails or silently gives outputs of the export batch's shape.
Covered here: models that chain layers (every family, dense then masked,
in one model), a linear layer on inputs of two leading axes, the published
``complex_view``, and the compact model with each weight dense or CSR; each
layer on its own is tests/integration/test_layer_table_export.py.
"""

import io
import warnings

import pytest
import torch

from cplxmodule import Cplx
from cplxmodule.utils.views import complex_view
from cplxmodule.nn import (
    CplxBilinear,
    CplxConv1d,
    CplxConv2d,
    CplxLinear,
    CplxModReLU,
    CplxSequential,
    CplxToReal,
    RealToCplx,
)
from cplxmodule.nn.masked import (
    CplxBilinearMasked,
    CplxConv1dMasked,
    CplxConv2dMasked,
    CplxLinearMasked,
    LinearMasked,
    compact,
)

pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.onnx

EXPORT_BATCH, RUN_BATCHES = 4, (3, 7)


class Unary(torch.nn.Module):
    """Real interleaved parts in, a complex layer (or chain), real interleaved parts out."""

    def __init__(self, *layers):
        super().__init__()
        self.to_cplx, self.to_real = RealToCplx(), CplxToReal()
        self.layers = CplxSequential(*layers)

    def forward(self, input):
        return self.to_real(self.layers(self.to_cplx(input)))


class Views(torch.nn.Module):
    """The published ``complex_view`` of interleaved parts, a complex layer, real parts out."""

    def __init__(self, layer):
        super().__init__()
        self.layer, self.to_real = layer, CplxToReal()

    def forward(self, input):
        return self.to_real(self.layer(Cplx(*complex_view(input, -1))))


def _masked(layer, density=0.3, dead_rows=1):
    """``layer`` with a random binary mask whose first ``dead_rows`` rows are zero."""
    shape = layer.weight.real.shape
    mask = torch.rand(shape) < density
    mask[:dead_rows] = False
    layer.mask = mask
    return layer


class Everything(torch.nn.Module):
    """Every family, dense then masked, in one model: one export by the slow exporter."""

    def __init__(self):
        super().__init__()
        self.to_cplx, self.to_real = RealToCplx(), CplxToReal()
        self.conv1d = CplxSequential(
            CplxConv1d(2, 3, 3, padding=1), _masked(CplxConv1dMasked(3, 3, 3, padding=1), 0.5)
        )
        self.conv2d = CplxSequential(
            CplxConv2d(3, 2, (1, 3)), _masked(CplxConv2dMasked(2, 2, (1, 3), stride=(1, 2)), 0.5)
        )
        self.linear = CplxSequential(
            CplxLinear(4, 5), _masked(CplxLinearMasked(5, 5)), CplxModReLU(0.1)
        )
        self.bilinear = CplxBilinear(5, 5, 3)
        self.bilinear_masked = _masked(CplxBilinearMasked(3, 5, 2), 0.5, 0)

    def forward(self, input):
        z = self.conv1d(self.to_cplx(input))  # (N, 3, 8)
        z = self.conv2d(z.unsqueeze(2)).flatten(1)  # (N, 2, 1, 2) -> (N, 4)
        z = self.linear(z)
        return self.to_real(self.bilinear_masked(self.bilinear(z, z), z))


# name -> (model builder, real input shapes without the batch axis); each layer
# on its own is tests/integration/test_layer_table_export.py
MODELS = {
    "linear-3d": (lambda: Unary(CplxLinear(6, 5)), [(2, 12)]),
    "everything": (Everything, [(2, 16)]),
    "complex_view": (lambda: Views(CplxLinear(6, 5)), [(12,)]),
}


def build(name):
    torch.manual_seed(0)
    make, shapes = MODELS[name]
    return make().eval(), shapes


def draw(shapes, batch):
    return tuple(torch.randn(batch, *shape) for shape in shapes)


def export(model, shapes, dynamo):
    """The ONNX model of ``model`` with a dynamic batch axis, as an onnxruntime session."""
    args = draw(shapes, EXPORT_BATCH)
    names = ["input"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter is deprecated
        if dynamo:
            batch = torch.export.Dim("batch")
            program = torch.onnx.export(
                model, args, dynamo=True, verbose=False,
                dynamic_shapes={name: {0: batch} for name in names},
            )
            proto = program.model_proto.SerializeToString()
        else:
            buffer = io.BytesIO()
            torch.onnx.export(model, args, buffer, dynamo=False, input_names=names,
                              dynamic_axes={name: {0: "batch"} for name in names})
            proto = buffer.getvalue()
    return ort.InferenceSession(proto, providers=["CPUExecutionProvider"])


def assert_runs_at_every_batch(model, shapes, dynamo):
    session = export(model, shapes, dynamo)
    names = [i.name for i in session.get_inputs()]
    for batch in RUN_BATCHES:
        args = draw(shapes, batch)
        (output,) = session.run(None, {n: x.numpy() for n, x in zip(names, args)})
        with torch.no_grad():
            expected = model(*args)
        torch.testing.assert_close(torch.from_numpy(output), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_torchscript_export_runs_at_other_batches(name):
    model, shapes = build(name)
    assert_runs_at_every_batch(model, shapes, dynamo=False)


def _compactable():
    """A masked real chain, then a masked complex one, whose first layers compact to CSR."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        _masked(LinearMasked(8, 24), 0.2, 1), torch.nn.ReLU(),
        _masked(LinearMasked(24, 32), 0.8, 0),
        Unary(_masked(CplxLinearMasked(16, 12), 0.1, 2), CplxModReLU(0.1),
              _masked(CplxLinearMasked(12, 4), 0.8, 0)),
    ).eval()


# a compact model's dense layers are the table's layers, whose default export
# is tests/integration/test_layer_table_export.py
@pytest.mark.parametrize("storage, exporter", [
    ("dense", "torchscript"), ("csr", "torchscript"), ("csr", "dynamo"),
])
def test_compact_model_runs_at_other_batches(storage, exporter):
    masked = _compactable()
    # every weight CSR (``max_density=1``), or every weight dense
    small = compact(masked, max_density=1.0 if storage == "csr" else 0.0)
    kinds = {type(m).__name__ for m in small.modules()}
    assert {"SparseLinear", "CplxSparseLinear"} <= kinds if storage == "csr" else not any(
        k.endswith("SparseLinear") for k in kinds)
    assert_runs_at_every_batch(small, [(8,)], exporter == "dynamo")
