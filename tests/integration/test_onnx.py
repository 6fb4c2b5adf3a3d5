"""Complex models export to ONNX with both of torch's exporters and run in onnxruntime.

The reference is the eager model's output on the same input. Each exporter
runs once per model (the first export with the default exporter costs
seconds: it builds its registry).
"""

import io
import warnings

import numpy as np
import pytest
import torch

from cplxmodule.nn import (
    CplxBatchNorm1d,
    CplxBatchNorm2d,
    CplxConv1d,
    CplxConv2d,
    CplxLinear,
    CplxMaxPool1d,
    CplxMaxPool2d,
    CplxModReLU,
    CplxToReal,
    RealToCplx,
    TensorToCplx,
)
from cplxmodule.nn.masked import CplxLinearMasked, LinearMasked, compact, quantize
from cplxmodule.nn.relevance import CplxLinearVD

pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.onnx

EXPORTERS = {"torchscript": False, "dynamo": True}


class Mixed(torch.nn.Module):
    """Interleaved real input -> complex conv/batchnorm/modReLU/pool/linear/VD -> real output."""

    def __init__(self):
        super().__init__()
        self.to_cplx = RealToCplx()
        self.pairs_to_cplx = TensorToCplx()
        self.conv1 = CplxConv1d(2, 4, 3, padding=1)
        self.bn1 = CplxBatchNorm1d(4)
        self.act = CplxModReLU(0.2)
        self.pool1 = CplxMaxPool1d(2)
        self.conv2 = CplxConv2d(4, 4, (1, 3), padding=(0, 1), padding_mode="circular")
        self.bn2 = CplxBatchNorm2d(4)
        self.pool2 = CplxMaxPool2d((1, 2))
        self.linear = CplxLinear(8, 6)
        self.vd = CplxLinearVD(6, 6)  # its mean in eval mode
        self.masked = CplxLinearMasked(6, 3)
        self.to_real = CplxToReal()

    def forward(self, x):
        # the interleaved input read twice: as a flat real tensor and as pairs
        z = self.to_cplx(x) - self.pairs_to_cplx(x.unflatten(-1, (-1, 2))) * 0.5
        z = self.pool1(self.act(self.bn1(self.conv1(z))))  # (N, 4, 4)
        z = self.pool2(self.act(self.bn2(self.conv2(z.unsqueeze(2)))))  # (N, 4, 1, 2)
        z = self.masked(self.act(self.vd(self.linear(z.flatten(1)))))
        return self.to_real(z)


@pytest.fixture(scope="module")
def mixed():
    torch.manual_seed(0)
    model = Mixed()
    model.masked.mask = torch.rand(3, 6) < 0.5
    with torch.no_grad():
        for _ in range(3):  # running statistics away from their initial values
            model(torch.randn(8, 2, 16) * 2 + 1)
    return model.eval()


def export_and_run(model, x, dynamo):
    """Export ``model`` with one exporter and run the ONNX model in onnxruntime."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            program = torch.onnx.export(model, (x,), dynamo=True, optimize=False, verbose=False)
            program.model.producer_name = "cplxmodule-tests"
            buffer.write(program.model_proto.SerializeToString())
        else:
            torch.onnx.export(model, (x,), buffer, dynamo=False)
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_mixed_complex_model_runs_in_onnxruntime(mixed, exporter):
    x = torch.randn(5, 2, 16)
    with torch.no_grad():
        expected = mixed(x)
    output = export_and_run(mixed, x, EXPORTERS[exporter])
    torch.testing.assert_close(torch.from_numpy(output), expected, rtol=1e-5, atol=1e-5)


def _masked_mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(LinearMasked(6, 8), torch.nn.ReLU(), LinearMasked(8, 3))
    model[0].mask = torch.rand(8, 6) < 0.3
    model[0].mask[:2] = 0
    model[2].mask = torch.rand(3, 8) < 0.5
    return model.eval()


def _masked_complex_mlp():
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        RealToCplx(), CplxLinearMasked(4, 5), CplxModReLU(0.1), CplxLinearMasked(5, 2), CplxToReal()
    ).eval()
    model[1].mask = torch.rand(5, 4) < 0.5
    model[1].mask[0] = 0
    model[3].mask = torch.rand(2, 5) < 0.5
    return model


# dense after compaction, or sparse (CSR, gathered and scattered in ONNX)
@pytest.mark.parametrize("max_density", [0.0, 1.0], ids=["dense", "sparse"])
@pytest.mark.parametrize("make, width", [(_masked_mlp, 6), (_masked_complex_mlp, 8)],
                         ids=["real", "complex"])
def test_compact_model_runs_in_onnxruntime(make, width, max_density):
    model = make()
    small = compact(model, max_density=max_density)
    x = torch.randn(4, width)
    with torch.no_grad():
        expected = model(x)
    output = export_and_run(small, x, dynamo=False)
    torch.testing.assert_close(torch.from_numpy(output), expected, rtol=1e-5, atol=1e-6)


def test_compact_sparse_model_with_the_default_exporter():
    model = _masked_complex_mlp()
    small = compact(model, max_density=1.0)
    x = torch.randn(3, 8)
    with torch.no_grad():
        expected = model(x)
    output = export_and_run(small, x, dynamo=True)
    torch.testing.assert_close(torch.from_numpy(output), expected, rtol=1e-5, atol=1e-6)


def _quantized_mlp():
    return quantize(compact(_masked_complex_mlp(), max_density=0.0), 4).eval()


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_quantized_model_runs_in_onnxruntime(exporter):
    small, x = _quantized_mlp(), torch.randn(4, 8)
    with torch.no_grad():
        expected = small(x)
    output = export_and_run(small, x, dynamo=EXPORTERS[exporter])
    torch.testing.assert_close(torch.from_numpy(output), expected, rtol=1e-5, atol=1e-6)


def test_quantized_model_exports_its_integer_weights():
    onnx = pytest.importorskip("onnx")
    small, x = _quantized_mlp(), torch.randn(4, 8)
    # the weights travel as 8-bit integers (4-bit codes), dequantized in the
    # graph, where the default exporter's optimizer does not fold them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(small, (x,), dynamo=True, optimize=False, verbose=False)
    graph = program.model_proto.graph
    constants = list(graph.initializer) + [
        attribute.t for node in graph.node if node.op_type == "Constant"
        for attribute in node.attribute if attribute.name == "value"]
    integer = [tuple(c.dims) for c in constants if c.data_type == onnx.TensorProto.INT8]
    floats = [c for c in constants if c.data_type == onnx.TensorProto.FLOAT]
    assert sorted(integer) == [(2, 3, 2), (3, 4, 2)]  # the two weights, real and imaginary codes
    assert all(int(np.prod(c.dims)) <= 3 for c in floats)  # scales and biases, no weight
