"""The dense entry point ``_dense_forward`` of every dense layer, real and complex.

A Bayesian layer computes its output variance by calling the entry point
with a real ``|x|^2`` and a real ``sigma^2`` weight: it must be the real
op of torch with the layer's settings (stride, padding mode, output size).
"""

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.nn import masked, relevance

# (complex layer, torch layer, args, kwargs, input shapes, call kwargs)
CASES = [
    (cnn.CplxLinear, torch.nn.Linear, (5, 3), {}, [(4, 5)], {}),
    (cnn.CplxBilinear, torch.nn.Bilinear, (3, 4, 2), {}, [(5, 3), (5, 4)], {}),
    (cnn.CplxConv1d, torch.nn.Conv1d, (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, [(2, 2, 7)], {}),
    (cnn.CplxConv2d, torch.nn.Conv2d, (2, 4, 3), {"padding": 1, "padding_mode": "circular", "groups": 2}, [(2, 2, 5, 5)], {}),
    (cnn.CplxConv3d, torch.nn.Conv3d, (2, 3, 2), {"stride": 2, "padding_mode": "replicate", "padding": 1}, [(1, 2, 4, 4, 4)], {}),
    (cnn.CplxConvTranspose1d, torch.nn.ConvTranspose1d, (2, 3, 3), {"stride": 2}, [(2, 2, 5)], {"output_size": [12]}),
    (cnn.CplxConvTranspose2d, torch.nn.ConvTranspose2d, (2, 4, 3), {"groups": 2, "stride": 2, "dilation": 2}, [(2, 2, 4, 4)], {"output_size": [2, 4, 12, 11]}),
    (cnn.CplxConvTranspose3d, torch.nn.ConvTranspose3d, (2, 3, 2), {"stride": 2, "padding": 1}, [(1, 2, 3, 3, 3)], {}),
]
IDS = [case[0].__name__ for case in CASES]
# the masked classes of each real and complex dense family
MASKED = {
    cnn.CplxLinear: (masked.LinearMasked, masked.CplxLinearMasked),
    cnn.CplxBilinear: (masked.BilinearMasked, masked.CplxBilinearMasked),
    cnn.CplxConv1d: (masked.Conv1dMasked, masked.CplxConv1dMasked),
    cnn.CplxConv2d: (masked.Conv2dMasked, masked.CplxConv2dMasked),
    cnn.CplxConv3d: (masked.Conv3dMasked, masked.CplxConv3dMasked),
    cnn.CplxConvTranspose1d: (masked.ConvTranspose1dMasked, masked.CplxConvTranspose1dMasked),
    cnn.CplxConvTranspose2d: (masked.ConvTranspose2dMasked, masked.CplxConvTranspose2dMasked),
    cnn.CplxConvTranspose3d: (masked.ConvTranspose3dMasked, masked.CplxConvTranspose3dMasked),
}


def _torch_reference(torch_cls, args, kwargs, weight):
    reference = torch_cls(*args, bias=False, dtype=torch.float64, **kwargs)
    with torch.no_grad():
        reference.weight.copy_(weight)
    return reference


@pytest.mark.parametrize("cplx_cls, torch_cls, args, kwargs, shapes, call", CASES, ids=IDS)
def test_complex_entry_point_takes_a_real_input_and_weight(cplx_cls, torch_cls, args, kwargs, shapes, call):
    # the variance path of a Gaussian layer: real |x|^2 against real sigma^2
    torch.manual_seed(0)
    layer = cplx_cls(*args, dtype=torch.float64, **kwargs)
    sigma2 = torch.rand(layer.weight.shape, dtype=torch.float64)
    inputs = [abs(cplx.randn(*shape, dtype=torch.float64)) ** 2 for shape in shapes]
    output = layer._dense_forward(*inputs, weight=sigma2, bias=None, **call)
    assert isinstance(output, torch.Tensor) and not output.is_complex()
    reference = _torch_reference(torch_cls, args, kwargs, sigma2)
    torch.testing.assert_close(output, reference(*inputs, **call))


@pytest.mark.parametrize("cplx_cls, torch_cls, args, kwargs, shapes, call", CASES, ids=IDS)
def test_real_twin_entry_point_matches_torch(cplx_cls, torch_cls, args, kwargs, shapes, call):
    torch.manual_seed(1)
    real_masked = MASKED[cplx_cls][0]
    # the real masked class's dense twin: torch's layer plus the entry point
    twin = real_masked.__bases__[1]
    layer = twin(*args, dtype=torch.float64, **kwargs)
    assert isinstance(layer, torch_cls)
    weight = torch.randn(layer.weight.shape, dtype=torch.float64)
    inputs = [torch.randn(shape, dtype=torch.float64) for shape in shapes]
    output = layer._dense_forward(*inputs, weight=weight, bias=layer.bias, **call)
    reference = torch_cls(*args, dtype=torch.float64, **kwargs)
    reference.load_state_dict({"weight": weight, "bias": layer.bias.detach()})
    torch.testing.assert_close(output, reference(*inputs, **call))
    torch.testing.assert_close(layer(*inputs, **call), torch_cls.forward(layer, *inputs, **call))


@pytest.mark.parametrize("cplx_cls", MASKED, ids=[c.__name__ for c in MASKED])
def test_masked_classes_are_base_plus_twin(cplx_cls):
    for cls in MASKED[cplx_cls]:
        base, dense = cls.__bases__
        assert base is masked.BaseMasked
        # the base supplies the weight; ``forward`` and its signature are the twin's
        assert cls._weighted_forward is masked.BaseMasked._weighted_forward
        assert cls.forward is dense.forward
        # and the family its class statement declares
        assert set(vars(cls)) <= {"__module__", "__qualname__", "__doc__", "__firstlineno__",
                                  "__static_attributes__", "_family"}


@pytest.mark.parametrize("cplx_cls, torch_cls, args, kwargs, shapes, call", CASES, ids=IDS)
def test_masked_forward_passes_call_kwargs(cplx_cls, torch_cls, args, kwargs, shapes, call):
    torch.manual_seed(2)
    layer = MASKED[cplx_cls][1](*args, dtype=torch.float64, **kwargs)
    layer.mask = (torch.rand(layer.weight.shape) > 0.5).double()
    inputs = [cplx.randn(*shape, dtype=torch.float64) for shape in shapes]
    output = layer(*inputs, **call)
    dense = layer._dense_forward(*inputs, weight=layer.weight * layer.mask, bias=layer.bias, **call)
    torch.testing.assert_close(output.real, dense.real)
    torch.testing.assert_close(output.imag, dense.imag)


def test_masked_forward_checks_the_input_first():
    layer = masked.CplxLinearMasked(3, 2)  # no mask: the input error comes first
    with pytest.raises(TypeError, match="CplxLinearMasked: `input` must be a Cplx"):
        layer(torch.randn(4, 3))
    real = masked.ConvTranspose1dMasked(2, 2, 3)
    real.padding_mode = "reflect"
    with pytest.raises(ValueError, match=r"ConvTranspose1dMasked: `padding_mode` must be 'zeros' for a transposed"):
        real(torch.randn(1, 2, 5))


@pytest.mark.parametrize("op, real_op, x, w, kwargs", [
    (cplx.linear, F.linear, (4, 3), (5, 3), {}),
    (cplx.conv1d, F.conv1d, (2, 3, 6), (4, 3, 3), {"padding": 1}),
    (cplx.conv2d, F.conv2d, (2, 2, 5, 5), (4, 1, 3, 3), {"groups": 2}),
    (cplx.conv3d, F.conv3d, (1, 2, 4, 4, 4), (3, 2, 2, 2, 2), {"stride": 2}),
    (cplx.conv_transpose1d, F.conv_transpose1d, (2, 3, 5), (3, 2, 3), {"stride": 2}),
    (cplx.conv_transpose2d, F.conv_transpose2d, (2, 2, 4, 4), (2, 3, 3, 3), {"output_padding": 1, "stride": 2}),
    (cplx.conv_transpose3d, F.conv_transpose3d, (1, 2, 3, 3, 3), (2, 2, 2, 2, 2), {}),
])
def test_functional_core_real_operands(op, real_op, x, w, kwargs):
    torch.manual_seed(3)
    x, w = torch.randn(x, dtype=torch.float64), torch.randn(w, dtype=torch.float64)
    bias_size = w.shape[1] * kwargs.get("groups", 1) if "transpose" in op.__name__ else w.shape[0]
    b = torch.randn(bias_size, dtype=torch.float64)
    torch.testing.assert_close(op(x, w, b, **kwargs), real_op(x, w, b, **kwargs))
    torch.testing.assert_close(op(x, w, None, **kwargs), real_op(x, w, None, **kwargs))
    # a real input does not meet a complex weight or bias
    with pytest.raises(TypeError, match="`input` must be a Cplx"):
        op(x, cplx.Cplx(w), **kwargs)
    with pytest.raises(TypeError, match="`input` must be a Cplx"):
        op(x, w, cplx.Cplx(b), **kwargs)


@pytest.mark.parametrize("padding_mode", ["reflect", "replicate", "circular"])
def test_functional_conv_pads_a_real_input(padding_mode):
    torch.manual_seed(4)
    x, w = torch.randn(2, 2, 6, 6), torch.randn(3, 2, 3, 3)
    reference = F.conv2d(F.pad(x, [1, 1, 1, 1], mode=padding_mode), w)
    torch.testing.assert_close(cplx.conv2d(x, w, padding=1, padding_mode=padding_mode), reference)


def test_functional_bilinear_real_operands():
    torch.manual_seed(5)
    x1, x2 = torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 2, dtype=torch.float64)
    w, b = torch.randn(5, 3, 2, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    for conjugate in (True, False):
        output = cplx.bilinear(x1, x2, w, b, conjugate=conjugate)
        torch.testing.assert_close(output, F.bilinear(x1, x2, w, b))
    with pytest.raises(TypeError, match="`input2` must be a Cplx"):
        cplx.bilinear(cplx.Cplx(x1), x2, w)


@pytest.mark.parametrize("cplx_cls, torch_cls, args, kwargs, shapes, call", CASES, ids=IDS)
def test_layers_check_their_input_once(monkeypatch, cplx_cls, torch_cls, args, kwargs, shapes, call):
    # ``forward`` checks the input, naming the layer; the op behind the entry
    # point must not check the operands again (the public ops do, through
    # ``check_operands``, which each layer's op module would call)
    import cplxmodule.cplx.conv as conv_ops
    import cplxmodule.cplx.linalg as linalg_ops

    calls = []

    def counted(check):
        def wrapper(*args, **kwargs):
            calls.append(check.__name__)
            return check(*args, **kwargs)

        return wrapper

    for module in (conv_ops, linalg_ops):
        monkeypatch.setattr(module, "check_operands", counted(module.check_operands))
    torch.manual_seed(0)
    layer = cplx_cls(*args, **kwargs)
    inputs = [cplx.randn(*shape) for shape in shapes]
    layer(*inputs, **call)
    assert not calls
    # the count is live: the public ops do check
    cplx.linear(cplx.randn(2, 3), cplx.randn(4, 3))
    cplx.conv1d(cplx.randn(1, 2, 5), cplx.randn(3, 2, 2))
    assert calls == ["check_operands", "check_operands"]


@pytest.mark.parametrize("base", [masked.BaseMasked, relevance.GaussianMixin],
                         ids=["masked", "gaussian"])
def test_a_base_refuses_a_twin_whose_forward_bypasses_it(base):
    # torch's Linear.forward never calls ``_weighted_forward``: the layer would run dense
    with pytest.raises(TypeError, match=rf"Bypass: `forward` must come from .*, got the"
                                        rf" `forward` of Linear, which would bypass {base.__name__}"):
        type("Bypass", (base, torch.nn.Linear), {})

    class Own(base, torch.nn.Linear):  # a forward of the class's own is the user's choice
        def forward(self, input):
            return input

    assert Own(3, 2)(torch.ones(3)).shape == (3,)
