"""Every weighted layer exports with a dynamic batch axis named as torch names its inputs.

The masked and Bayesian layers keep their dense twin's ``forward`` and its
signature (``input``; ``input1, input2``; ``input, output_size=None``), which
``torch.export`` reads to key ``dynamic_shapes`` by name and the default ONNX
exporter reads to turn ``dynamic_axes`` into ``dynamic_shapes``. Every layer
has torch's signature (the ARD layers and the complex VD variants share the
VD layers' forward, which is checked); a sample that covers each signature
and both bases, real and complex, is exported with ``dynamic_shapes`` keyed
by name (``torch.export``) and with ``dynamic_axes`` keyed by name (the
default ONNX exporter, which costs seconds per model), once at batch size
3, and run at batch sizes 2 and 5 against the eager layer (eval mode: a
Bayesian layer's output is its mean). A complex layer takes and returns a
:class:`Cplx`, a pytree of two tensors: ``torch.export`` takes it as is,
the ONNX exporter through a wrapper of real tensors (``Parts``). The export
of every layer, by position, with both ONNX exporters is
tests/integration/test_layer_table_export.py.
"""

import inspect
import warnings

import pytest
import torch

import cplxmodule.cplx as cplx
from cplxmodule.cplx import Cplx
from cplxmodule.nn import _families, masked, relevance
from cplxmodule.nn.relevance import extensions

from .. import helpers

pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")

#: the package's own families, from the library's table (a test module may
#: declare a family of its own, e.g. tests/nn/masked/test_user_layers.py)
FAMILIES = helpers.package_families()
# family (its dense class's name without ``Cplx``) -> (constructor args,
# constructor kwargs, input shapes without the batch axis)
SIZES = {
    "Linear": ((4, 3), {}, [(4,)]),
    "Bilinear": ((3, 4, 2), {}, [(3,), (4,)]),
    "Conv1d": ((2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, [(2, 6)]),
    "Conv2d": ((2, 4, 3), {"groups": 2}, [(2, 5, 5)]),
    "Conv3d": ((2, 3, 2), {"stride": 2}, [(2, 4, 4, 4)]),
    "ConvTranspose1d": ((2, 3, 3), {"stride": 2}, [(2, 5)]),
    "ConvTranspose2d": ((2, 4, 3), {"groups": 2, "dilation": 2}, [(2, 3, 3)]),
    "ConvTranspose3d": ((2, 3, 2), {"stride": 2, "padding": 1}, [(2, 3, 3, 3)]),
}
# the complex VD variants of the extensions, published there as members of no conversion
EXTENSION_KINDS = ("vd_scalefree", "vd_approx", "vd_bogus")


def twins(kinds, complex_):
    """The twins of ``kinds`` of every real (or complex) family, from the library's table."""
    return [_families.twin_class(family.dense, kind)
            for family in FAMILIES if family.complex == complex_ for kind in kinds]


# every layer has torch's signature; the ARD layers and the complex VD
# variants differ from the VD layers in their penalty alone, so they are
# exported through the VD layers
REAL = twins(["masked", "vd"], complex_=False) + [relevance.LinearL0, relevance.LinearLASSO]
COMPLEX = twins(["dense", "masked", "vd"], complex_=True)
SAME_FORWARD = twins(["ard"], complex_=False) + twins(["ard"], complex_=True) + [
    helpers.published_member(extensions, family, kind)
    for family in FAMILIES if family.complex for kind in EXTENSION_KINDS
]
# dynamic shapes keyed by name: every signature and both bases, real and complex
NAMED_SAMPLE = [
    masked.LinearMasked,
    relevance.CplxBilinearVD,
    relevance.Conv2dVD,
    masked.CplxConv3dMasked,
    masked.ConvTranspose1dMasked,
    relevance.CplxConvTranspose2dVD,
]
# the default ONNX exporter turning names into dynamic shapes: each signature
DYNAMO_SAMPLE = [
    relevance.BilinearVD,
    masked.ConvTranspose2dMasked,
    relevance.CplxConvTranspose1dVD,
]


def family_of(cls):
    """The family of the layer class ``cls`` in the library's table."""
    return _families.dense_family(cls)


def torch_layer(cls):
    """The torch layer whose ``forward`` signature the layer class ``cls`` has."""
    return getattr(torch.nn, family_of(cls).name)


def make(cls):
    """An eval-mode layer with settings off torch's defaults and a mask if it takes one."""
    torch.manual_seed(0)
    args, kwargs, _ = SIZES[family_of(cls).name]
    layer = cls(*args, **kwargs)
    if isinstance(layer, masked.BaseMasked):
        shape = layer.weight.real.shape if isinstance(layer.weight, Cplx) else layer.weight.shape
        layer.mask = torch.rand(shape) < 0.6
    return layer.eval()


def inputs(cls, batch):
    shapes = SIZES[family_of(cls).name][2]
    draw = cplx.randn if family_of(cls).complex else torch.randn
    return tuple(draw(batch, *shape) for shape in shapes)


def names(cls):
    """The names of the inputs: torch's layer's ``forward`` parameters, ``output_size`` aside."""
    return [n for n in inspect.signature(torch_layer(cls).forward).parameters][1:][
        : len(SIZES[family_of(cls).name][2])
    ]


def assert_matches(actual, expected):
    if isinstance(expected, Cplx):
        actual, expected = torch.complex(*actual), torch.complex(expected.real, expected.imag)
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


class Parts(torch.nn.Module):
    """A complex layer as a map of real tensors, for the ONNX exporters: the
    parts of its one or two inputs in, the parts of its output out."""

    NAMES = ["real", "imag", "real2", "imag2"]

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, real, imag, real2=None, imag2=None):
        xs = [Cplx(real, imag)] + ([] if real2 is None else [Cplx(real2, imag2)])
        output = self.layer(*xs)
        return output.real, output.imag


def onnx_model(cls, layer):
    """Export ``layer`` by the default exporter with a dynamic batch axis keyed by name; return
    an onnxruntime session and its input names."""
    xs = inputs(cls, 3)
    if cls in COMPLEX:
        model, args = Parts(layer).eval(), tuple(t for x in xs for t in (x.real, x.imag))
        input_names = Parts.NAMES[: len(args)]
    else:
        model, args, input_names = layer, xs, names(cls)
    # the call of the issue: ``dynamic_axes`` keyed by the argument names
    dynamic_axes = {name: {0: "batch"} for name in input_names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(
            model, args, dynamo=True, dynamic_axes=dynamic_axes, optimize=False, verbose=False
        )
    session = ort.InferenceSession(program.model_proto.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session, [i.name for i in session.get_inputs()]


def run_onnx(cls, layer):
    session, input_names = onnx_model(cls, layer)
    for batch in (2, 5):
        xs = inputs(cls, batch)
        parts = [t for x in xs for t in ((x.real, x.imag) if cls in COMPLEX else (x,))]
        outputs = session.run(None, {n: t.numpy() for n, t in zip(input_names, parts)})
        with torch.no_grad():
            expected = layer(*xs)
        assert_matches(tuple(map(torch.from_numpy, outputs)) if cls in COMPLEX
                       else torch.from_numpy(outputs[0]), expected)


def test_every_family_has_sizes():
    assert {family.name for family in FAMILIES} == set(SIZES)


@pytest.mark.parametrize("cls", REAL + COMPLEX + SAME_FORWARD, ids=lambda c: c.__name__)
def test_forward_has_torch_signature(cls):
    expected = inspect.signature(torch_layer(cls).forward)
    assert list(inspect.signature(cls.forward).parameters) == list(expected.parameters)
    if cls in SAME_FORWARD:  # exported through the VD layer of its family
        vd = _families.twin_class(family_of(cls).dense, "vd")
        assert cls.forward is vd.forward and cls._weighted_forward is vd._weighted_forward


@pytest.mark.parametrize("cls", NAMED_SAMPLE, ids=lambda c: c.__name__)
def test_torch_export_keys_dynamic_shapes_by_torch_names(cls):
    layer = make(cls)
    batch = torch.export.Dim("batch")
    # a Cplx input is a pytree of its two parts
    spec = [{0: batch}] * 2 if cls in COMPLEX else {0: batch}
    program = torch.export.export(
        layer, inputs(cls, 3), dynamic_shapes={name: spec for name in names(cls)}
    )
    exported = program.module()
    for batch_size in (2, 5):
        xs = inputs(cls, batch_size)
        with torch.no_grad():
            expected = layer(*xs)
            actual = exported(*xs)
        assert_matches((actual.real, actual.imag) if cls in COMPLEX else actual, expected)


@pytest.mark.onnx
@pytest.mark.parametrize("cls", DYNAMO_SAMPLE, ids=lambda c: c.__name__)
def test_default_onnx_export_with_dynamic_axes(cls):
    run_onnx(cls, make(cls))
