"""Complex (transposed) convolutions against torch's layers of native complex dtype."""

import itertools

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
import cplxmodule.nn as cnn
from cplxmodule.cplx import Cplx
from ...helpers import cplx_to_native


CONV = {1: (cnn.CplxConv1d, torch.nn.Conv1d), 2: (cnn.CplxConv2d, torch.nn.Conv2d),
        3: (cnn.CplxConv3d, torch.nn.Conv3d)}
TRANSPOSE = {
    1: (cnn.CplxConvTranspose1d, torch.nn.ConvTranspose1d),
    2: (cnn.CplxConvTranspose2d, torch.nn.ConvTranspose2d),
    3: (cnn.CplxConvTranspose3d, torch.nn.ConvTranspose3d),
}


def twin(layer, cls, **kwargs):
    """The torch layer of complex128 dtype holding ``layer``'s parameters."""
    reference = cls(dtype=torch.complex128, **kwargs)
    with torch.no_grad():
        reference.weight.copy_(cplx_to_native(layer.weight))
        if layer.bias is not None:
            reference.bias.copy_(cplx_to_native(layer.bias))
    return reference


def compare(layer, reference, x, **call):
    """Forward and backward (input and weight gradients) agree."""
    x = Cplx(x.real.requires_grad_(), x.imag.requires_grad_())
    z = cplx_to_native(x).detach().requires_grad_()
    out, ref = layer(x, **call), reference(z, **call)
    assert out.shape == ref.shape
    assert torch.allclose(cplx_to_native(out), ref, atol=1e-10)
    probe = torch.randn_like(ref)
    (cplx_to_native(out) * probe.conj()).real.sum().backward()
    (ref * probe.conj()).real.sum().backward()
    # torch's complex gradient is d/d(re) + i d/d(im)
    assert torch.allclose(cplx_to_native(Cplx(x.real.grad, x.imag.grad)), z.grad, atol=1e-10)
    weight_grad = cplx_to_native(Cplx(layer.weight.real.grad, layer.weight.imag.grad))
    assert torch.allclose(weight_grad, reference.weight.grad, atol=1e-10)


CASES = [
    dict(kernel_size=3),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=2, padding="same", dilation=2),
    dict(kernel_size=3, padding="valid", bias=False),
    dict(kernel_size=3, padding=2, groups=2),
    dict(kernel_size=3, padding=1, padding_mode="reflect"),
    dict(kernel_size=3, padding=2, padding_mode="replicate", stride=2),
    dict(kernel_size=3, padding=1, padding_mode="circular", groups=2),
    dict(kernel_size=3, padding="same", padding_mode="circular"),
]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_conv(n, case):
    torch.manual_seed(0)
    ours, theirs = CONV[n]
    kwargs = dict(in_channels=2, out_channels=4, **case)
    layer = ours(**kwargs, dtype=torch.float64)
    spatial = (6,) * n if n < 3 else (5,) * n
    compare(layer, twin(layer, theirs, **kwargs), cplx.randn(2, 2, *spatial, dtype=torch.float64))


def test_conv_unbatched():
    torch.manual_seed(1)
    kwargs = dict(in_channels=2, out_channels=3, kernel_size=3, padding=1, padding_mode="reflect")
    layer = cnn.CplxConv2d(**kwargs, dtype=torch.float64)
    compare(layer, twin(layer, torch.nn.Conv2d, **kwargs), cplx.randn(2, 5, 5, dtype=torch.float64))


TRANSPOSE_CASES = [
    dict(kernel_size=3),
    dict(kernel_size=3, stride=2, padding=1, output_padding=1),
    dict(kernel_size=2, stride=2, groups=2, bias=False),
    dict(kernel_size=3, stride=3, dilation=2, padding=2),
]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize(
    "case", TRANSPOSE_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
)
def test_conv_transpose(n, case):
    torch.manual_seed(0)
    ours, theirs = TRANSPOSE[n]
    kwargs = dict(in_channels=2, out_channels=4, **case)
    layer = ours(**kwargs, dtype=torch.float64)
    compare(layer, twin(layer, theirs, **kwargs), cplx.randn(2, 2, *(4,) * n, dtype=torch.float64))


@pytest.mark.parametrize("output_size", [(9, 10), [2, 4, 10, 9]])
def test_conv_transpose_output_size(output_size):
    torch.manual_seed(2)
    kwargs = dict(in_channels=2, out_channels=4, kernel_size=3, stride=2)
    layer = cnn.CplxConvTranspose2d(**kwargs, dtype=torch.float64)
    reference = twin(layer, torch.nn.ConvTranspose2d, **kwargs)
    compare(layer, reference, cplx.randn(2, 2, 4, 4, dtype=torch.float64), output_size=output_size)


def test_conv_transpose_bad_output_size():
    layer = cnn.CplxConvTranspose2d(2, 4, 3, stride=2)
    with pytest.raises(ValueError, match="valid sizes range from"):
        layer(cplx.randn(1, 2, 4, 4), output_size=(20, 20))


def test_real_checkpoint_loads():
    torch.manual_seed(3)
    real = torch.nn.Conv2d(3, 4, 3, padding=1, padding_mode="circular")
    layer = cnn.CplxConv2d(3, 4, 3, padding=1, padding_mode="circular")
    layer.load_state_dict(real.state_dict())
    x = torch.randn(2, 3, 5, 5)
    out = layer(Cplx(x))
    assert torch.allclose(out.real, real(x), atol=1e-5)
    assert torch.equal(out.imag, torch.zeros_like(out.imag))


def test_conv_forward_entry_point():
    # a subclass passes its own weight through the single entry point
    torch.manual_seed(4)

    class Doubled(cnn.CplxConv1d):
        def forward(self, input):
            return self._dense_forward(input, weight=self.weight * 2, bias=self.bias)

    layer = Doubled(2, 3, 3, padding=1, padding_mode="reflect", dtype=torch.float64)
    x = cplx.randn(1, 2, 6, dtype=torch.float64)
    reference = twin(layer, torch.nn.Conv1d, in_channels=2, out_channels=3, kernel_size=3,
                     padding=1, padding_mode="reflect")
    with torch.no_grad():
        reference.weight.mul_(2)
    assert torch.allclose(cplx_to_native(layer(x)), reference(cplx_to_native(x)))


def test_repr_and_factory_kwargs():
    layer = cnn.CplxConv2d(2, 4, 3, padding="same", groups=2, bias=False,
                           padding_mode="reflect", device="meta", dtype=torch.complex64)
    assert layer.weight.shape == (4, 1, 3, 3) and layer.weight.device.type == "meta"
    assert layer.weight.dtype == torch.float32
    text = repr(layer)
    for part in ("2, 4, kernel_size=(3, 3)", "padding=same", "groups=2", "bias=False",
                 "padding_mode=reflect"):
        assert part in text
    assert "output_padding" in repr(cnn.CplxConvTranspose1d(2, 2, 3, stride=2, output_padding=1))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(groups=3), "in_channels"),
        (dict(groups=0), "groups"),
        (dict(padding_mode="mirror"), "padding_mode"),
        (dict(padding="full"), "padding"),
        (dict(padding="same", stride=2), "stride"),
        (dict(kernel_size=(3, 3)), "kernel_size"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = dict(in_channels=2, out_channels=6, kernel_size=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        cnn.CplxConv1d(**args)


def test_transpose_only_zeros_padding():
    with pytest.raises(ValueError, match="zeros"):
        cnn.CplxConvTranspose2d(2, 2, 3, padding_mode="reflect")


def test_bad_input():
    layer = cnn.CplxConv2d(3, 4, 3)
    expected = r"CplxConv2d: `input` must be a Cplx or a complex tensor of shape \(N, 3, \*, \*\)"
    with pytest.raises(TypeError, match=expected):
        layer(torch.randn(1, 3, 5, 5))
    expected = r"CplxConv2d: `input` must have shape .*got \(1, 2, 5, 5\)"
    with pytest.raises(ValueError, match=expected):
        layer(cplx.randn(1, 2, 5, 5))
    with pytest.raises(ValueError, match=r"CplxConv2d: `input` must have shape"):
        layer(cplx.randn(3, 5))


@pytest.mark.parametrize("input_shape, output_size", [
    ((2, 2, 4, 5), None),
    ((2, 2, 4, 5), (10, 12)),
    ((2, 2, 4, 5), [2, 3, 11, 11]),
    ((2, 4, 5), (2, 11, 12)),
    ((2, 4, 5), (9, 11)),
    ((2, 2, 4, 5), (3, 10, 12)),  # neither spatial nor full: an error
    ((2, 2, 4, 5), (13, 11)),  # out of range: an error
])
def test_transposed_output_padding_as_torch(input_shape, output_size):
    # one output-padding helper for the real and the complex transposed convs
    from cplxmodule.nn.masked import ConvTranspose2dMasked

    kwargs = dict(in_channels=2, out_channels=3, kernel_size=3, stride=(2, 3), padding=1,
                  output_padding=(1, 0), dilation=(1, 2))
    reference = torch.nn.ConvTranspose2d(**kwargs)
    real = ConvTranspose2dMasked(**kwargs)
    real.mask = torch.ones(1)
    layer = cnn.CplxConvTranspose2d(**kwargs)
    x = torch.randn(input_shape)
    try:
        expected = reference(x, output_size=output_size).shape
    except ValueError:
        for module, input in ((real, x), (layer, Cplx(x))):
            with pytest.raises(ValueError, match="`output_size`"):
                module(input, output_size=output_size)
        return
    assert real(x, output_size=output_size).shape == expected
    assert layer(Cplx(x), output_size=output_size).shape == expected


# --- inputs too small for the kernel, output paddings torch refuses (issue #34, item 7) ---
# torch's kernels refuse both without naming the layer; ours name the layer and the
# argument. The reference is torch's own layer of complex dtype, which must refuse too.
TOO_SMALL = [  # (arguments, spatial size of every dimension)
    (dict(kernel_size=9), 5),  # the case: the kernel exceeds the input
    (dict(kernel_size=3, dilation=3), 6),  # the dilated kernel (7) does
    (dict(kernel_size=5, padding=1), 2),  # padded, 4, still smaller
    (dict(kernel_size=3, padding="same"), 0),  # "same" pads 2: 0 + 2 < 3
    (dict(kernel_size=3, padding="valid", dilation=2), 4),
    (dict(kernel_size=1, padding=1), 0),  # fits, but torch refuses an empty dimension
    (dict(kernel_size=3, padding=2, padding_mode="reflect"), 2),  # reflect: padding < size
    (dict(kernel_size=3, padding=3, padding_mode="circular"), 2),  # circular: padding <= size
    (dict(kernel_size=1, padding=1, padding_mode="replicate"), 0),  # replicate: size >= 1
]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize(
    "case, size", TOO_SMALL, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
    if isinstance(c, dict) else f"size={c}",
)
def test_input_smaller_than_kernel_is_refused_naming_the_layer(n, case, size):
    ours, theirs = CONV[n]
    kwargs = dict(in_channels=2, out_channels=4, **case)
    x = cplx.randn(1, 2, *(size,) * n)
    with pytest.raises(RuntimeError):
        theirs(**kwargs, dtype=torch.complex64)(cplx_to_native(x))
    layer = ours(**kwargs)
    with pytest.raises(ValueError, match=rf"^CplxConv{n}d: `input` must have "):
        layer(x)
    # unbatched too
    with pytest.raises(ValueError, match=rf"^CplxConv{n}d: `input` must have "):
        layer(x[0])


def test_input_too_small_in_one_dimension_names_the_sizes():
    layer = cnn.CplxConv3d(2, 4, (3, 5, 9), padding=(0, 1, 2))
    message = (r"CplxConv3d: `input` must have spatial sizes of at least \(3, 3, 5\) .*"
               r"got shape \(1, 2, 3, 3, 4\)")
    with pytest.raises(ValueError, match=message):
        layer(cplx.randn(1, 2, 3, 3, 4))
    assert layer(cplx.randn(1, 2, 3, 3, 5)).shape == (1, 4, 1, 1, 1)


def test_masked_and_bayesian_convolutions_name_themselves():
    # the check is the family's input check: every complex twin has it
    from cplxmodule.nn.masked import CplxConv2dMasked
    from cplxmodule.nn.relevance import CplxConv2dVD

    masked = CplxConv2dMasked(2, 4, 9)
    masked.mask = torch.ones(4, 2, 9, 9)
    for layer in (masked, CplxConv2dVD(2, 4, 9)):
        with pytest.raises(ValueError, match=rf"^{type(layer).__name__}: `input` must have "):
            layer(cplx.randn(1, 2, 5, 5))


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_input_size_check_agrees_with_torch(padding_mode):
    # every small case of one dimension: ours refuses (ValueError) exactly what torch's
    # layer of complex dtype refuses, and computes what it computes otherwise
    torch.manual_seed(5)
    for padding in (0, 1, 2, "same", "valid"):
        for kernel_size, dilation, size in itertools.product((1, 2, 3), (1, 2), range(5)):
            kwargs = dict(kernel_size=kernel_size, dilation=dilation, padding=padding,
                          padding_mode=padding_mode)
            for leading in ((2, 1), (1,), (0, 1)):
                layer = cnn.CplxConv1d(1, 2, **kwargs)
                reference = twin(layer, torch.nn.Conv1d, in_channels=1, out_channels=2, **kwargs)
                x = cplx.randn(*leading, size, dtype=torch.float64)
                layer.double()
                try:
                    expected = reference(cplx_to_native(x))
                except RuntimeError:
                    with pytest.raises(ValueError, match="^CplxConv1d: `input` must have "):
                        layer(x)
                    continue
                out = cplx_to_native(layer(x))
                assert out.shape == expected.shape
                assert torch.allclose(out, expected, atol=1e-10), (kwargs, leading, size)


EDGES = [  # (arguments, spatial size of every dimension): the smallest inputs torch takes
    (dict(kernel_size=3, dilation=2), 5),  # exactly the dilated kernel
    (dict(kernel_size=5, padding=1), 3),  # padding makes it fit
    (dict(kernel_size=4, padding="same", dilation=2), 1),  # "same", asymmetric, on one entry
    (dict(kernel_size=3, padding=2, padding_mode="circular"), 2),  # circular: padding == size
    (dict(kernel_size=3, padding=1, padding_mode="reflect"), 2),  # reflect: padding == size - 1
    (dict(kernel_size=3, padding=2, padding_mode="replicate"), 1),
]


def _native_conv(n, z, weight, bias, padding, dilation, padding_mode):
    """torch's complex convolution, padded by torch's ``F.pad`` for the modes other than zeros."""
    op = getattr(F, f"conv{n}d")
    if padding_mode == "zeros":
        return op(z, weight, bias, padding=padding, dilation=dilation)
    return op(F.pad(z, (padding,) * (2 * n), mode=padding_mode), weight, bias, dilation=dilation)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize(
    "case, size", EDGES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
    if isinstance(c, dict) else f"size={c}",
)
def test_smallest_inputs_still_run_as_torch(n, case, size):
    torch.manual_seed(6)
    case = dict(case)
    padding = case.pop("padding", 0)
    dilation = case.pop("dilation", 1)
    padding_mode = case.pop("padding_mode", "zeros")
    layer = CONV[n][0](2, 4, padding=padding, dilation=dilation, padding_mode=padding_mode, **case)
    x = cplx.randn(2, 2, *(size,) * n)
    expected = _native_conv(n, cplx_to_native(x), cplx_to_native(layer.weight).detach(),
                            cplx_to_native(layer.bias).detach(), padding, dilation, padding_mode)
    out = cplx_to_native(layer(x))
    assert out.shape == expected.shape
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)


OUTPUT_PADDINGS = [  # (stride, dilation, output padding, whether in the last dimension only)
    (1, 1, 3, False),  # the case
    (1, 1, 1, False),  # not below stride 1 or dilation 1
    (2, 2, 2, False),
    (2, 1, 2, True),  # one dimension is enough
]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("stride, dilation, output_padding, last", OUTPUT_PADDINGS)
def test_output_padding_refused_at_construction(n, stride, dilation, output_padding, last):
    ours, theirs = TRANSPOSE[n]
    if last:
        output_padding = (0,) * (n - 1) + (output_padding,)
    kwargs = dict(in_channels=2, out_channels=4, kernel_size=3, stride=stride,
                  dilation=dilation, output_padding=output_padding)
    x = torch.randn(1, 2, *(4,) * n, dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        theirs(**kwargs, dtype=torch.complex64)(x)
    with pytest.raises(ValueError, match=rf"^CplxConvTranspose{n}d: `output_padding` must be "):
        ours(**kwargs)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_output_padding_below_stride_or_dilation_runs_as_torch(n):
    # allowed: below the dilation with stride 1, and below the stride with dilation 1
    torch.manual_seed(7)
    op = getattr(F, f"conv_transpose{n}d")
    for stride, dilation, output_padding in ((1, 3, 2), (3, 1, 2), (2, 2, 1)):
        layer = TRANSPOSE[n][0](2, 4, 3, stride=stride, dilation=dilation,
                                output_padding=output_padding)
        x = cplx.randn(2, 2, *(3,) * n)
        expected = op(cplx_to_native(x), cplx_to_native(layer.weight).detach(),
                      cplx_to_native(layer.bias).detach(), stride=stride,
                      output_padding=output_padding, dilation=dilation)
        out = cplx_to_native(layer(x))
        assert out.shape == expected.shape
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
