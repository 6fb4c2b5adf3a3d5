"""Each reference model computes what its paper's structure says.

The layers themselves are checked against their references in the layer
table (tests/nn/layer_table.py); here the composition is: the outputs of the
model's layers, caught by forward hooks, are recombined with torch's native
complex dtype as the paper describes (the read-out, the residual sums, the
skip connections, the ratio mask, the tokens), and compared with what the
model computed, in float64 and eval mode.
"""

import pytest
import torch
import torch.nn.functional as F

from cplxmodule import Cplx
from cplxmodule.models import CplxResNet, CplxUNet, CplxVisionTransformer

pytestmark = pytest.mark.usefixtures("one_thread")


def native(z):
    return torch.complex(z.real, z.imag)


def cplx_randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return Cplx(torch.randn(shape, generator=g, dtype=torch.float64),
                torch.randn(shape, generator=g, dtype=torch.float64))


def record(modules):
    """Forward hooks keeping each module's (native) inputs and output, by name."""
    seen = {}

    def hook(name):
        def keep(module, args, output):
            seen[name] = ([native(a) if isinstance(a, Cplx) else a for a in args],
                          native(output) if isinstance(output, Cplx) else output)
        return keep

    for name, module in modules.items():
        module.register_forward_hook(hook(name))
    return seen


def trained_like(model):
    """``model`` in float64 and eval mode, its batch norms' statistics away from the identity."""
    model = model.double()
    torch.manual_seed(1)
    model.train()
    for _ in range(2):
        model(cplx_randn(4, model.in_channels, 6, 5, seed=7))
    return model.eval()


# --- ResNet ------------------------------------------------------------------------------------
@pytest.mark.parametrize("readout", ["parts", "modulus"])
def test_resnet_pools_and_reads_out_as_the_paper(readout):
    torch.manual_seed(0)
    model = trained_like(CplxResNet(2, 3, widths=(3, 4), blocks=(1, 1), readout=readout))
    seen = record({"act": model.act})
    x = cplx_randn(2, 2, 6, 5)
    with torch.no_grad():
        logits = model(x)
        z = seen["act"][1].mean(dim=(2, 3))
        features = torch.cat([z.real, z.imag], 1) if readout == "parts" else z.abs()
        expected = features @ model.classifier.weight.T + model.classifier.bias
    torch.testing.assert_close(logits, expected)


def test_resnet_blocks_are_residual_and_stages_downsample():
    torch.manual_seed(0)
    model = trained_like(CplxResNet(1, 3, widths=(2, 3, 4), blocks=(2, 1, 1)))
    blocks = dict(enumerate(model.stages))
    seen = record({**{f"block{k}": b for k, b in blocks.items()},
                   **{f"conv2_{k}": b.conv2 for k, b in blocks.items()},
                   **{f"act1_{k}": b.act1 for k, b in blocks.items()}})
    with torch.no_grad():
        model(cplx_randn(2, 1, 9, 7))
    sizes = []
    for k, block in blocks.items():
        (x,), out = seen[f"block{k}"]
        residual = seen[f"conv2_{k}"][1]
        if block.shortcut is None:
            shortcut = x
        else:
            # the projection reads the pre-activated input, with the block's stride
            (h,), w = seen[f"act1_{k}"][1:], native(block.shortcut.weight)
            shortcut = F.conv2d(h, w, stride=block.shortcut.stride)
        torch.testing.assert_close(out, residual + shortcut)
        sizes.append(tuple(out.shape[1:]))
    # the first stage keeps the size, each later one halves it, rounding up
    assert sizes == [(2, 9, 7), (2, 9, 7), (3, 5, 4), (4, 3, 2)]


def test_resnet_activation_is_split_relu():
    torch.manual_seed(0)
    model = trained_like(CplxResNet(1, 2, widths=(2,), blocks=(1,)))
    seen = record({"bn": model.bn, "act": model.act})
    with torch.no_grad():
        model(cplx_randn(2, 1, 4, 4))
    z = seen["bn"][1]
    torch.testing.assert_close(seen["act"][1], torch.complex(z.real.relu(), z.imag.relu()))


# --- U-Net -------------------------------------------------------------------------------------
@pytest.mark.parametrize("bounded", [True, False])
def test_unet_applies_the_ratio_mask_of_its_last_layer(bounded):
    torch.manual_seed(0)
    model = trained_like(CplxUNet(channels=(2, 3, 4), bounded=bounded))
    seen = record({"mask": model.decoder[0]})
    y = cplx_randn(2, 1, 9, 6)
    with torch.no_grad():
        out = native(model(y))
    m = seen["mask"][1]
    expected = (torch.polar(torch.tanh(m.abs()), m.angle()) if bounded else m) * native(y)
    torch.testing.assert_close(out, expected)
    if bounded:
        assert (out.abs() < native(y).abs()).all()


def test_unet_decoder_reads_the_encoder_through_skip_connections():
    torch.manual_seed(0)
    model = trained_like(CplxUNet(channels=(2, 3, 4)))
    seen = record({**{f"down{k}": m for k, m in enumerate(model.encoder)},
                   **{f"up{k}": m for k, m in enumerate(model.decoder)}})
    with torch.no_grad():
        model(cplx_randn(2, 1, 9, 6))
    # the innermost level reads the encoder's last output alone
    torch.testing.assert_close(seen["up2"][0][0], seen["down2"][1])
    for k in (1, 0):
        (h, size), _ = seen[f"up{k}"]
        torch.testing.assert_close(h, torch.cat([seen[f"up{k + 1}"][1], seen[f"down{k}"][1]], 1))
        # and restores the size of the encoder's level, the input's at the top
        level = seen[f"down{k - 1}"][1] if k else native(cplx_randn(2, 1, 9, 6))
        assert tuple(seen[f"up{k}"][1].shape[-2:]) == tuple(size) == tuple(level.shape[-2:])


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (8, 8), (9, 17), (33, 10)])
def test_unet_takes_any_size(size):
    torch.manual_seed(0)
    model = CplxUNet(channels=(2, 3, 2)).eval()
    x = cplx_randn(1, 1, *size).to(torch.float32)
    with torch.no_grad():
        assert model(x).shape == x.shape


# --- vision transformer ------------------------------------------------------------------------
@pytest.mark.parametrize("pool", ["cls", "mean"])
def test_vit_tokens_and_pooling(pool):
    torch.manual_seed(0)
    model = CplxVisionTransformer(2, 3, (4, 6), 2, d_model=4, num_layers=1, pool=pool).double()
    model = model.eval()
    with torch.no_grad():
        model.position.real.normal_()
        if pool == "cls":
            model.class_token.imag.normal_()
    seen = record({"encoder": model.encoder, "real": model.real})
    x = cplx_randn(3, 2, 4, 6)
    with torch.no_grad():
        model(x)
        # patches: a convolution of kernel and stride patch_size, then the tokens in row order
        w, b = native(model.patches.weight), native(model.patches.bias)
        patches = F.conv2d(native(x), w, b, stride=2).flatten(2).transpose(1, 2)
        assert patches.shape == (3, 6, 4)
        if pool == "cls":
            patches = torch.cat([native(model.class_token).expand(3, 1, 4), patches], 1)
        expected = patches + native(model.position)
        torch.testing.assert_close(seen["encoder"][0][0], expected)
        h = seen["encoder"][1]
        pooled = h[:, 0] if pool == "cls" else h.mean(1)
        torch.testing.assert_close(seen["real"][1], torch.cat([pooled.real, pooled.imag], 1))


# --- argument and input checks ----------------------------------------------------------------
BAD_ARGUMENTS = [
    (lambda: CplxResNet(0, 3), "CplxResNet", "in_channels"),
    (lambda: CplxResNet(1, 3, widths=(2, 3), blocks=(1,)), "CplxResNet", "blocks"),
    (lambda: CplxResNet(1, 3, widths=()), "CplxResNet", "widths"),
    (lambda: CplxResNet(1, 3, readout="angle"), "CplxResNet", "readout"),
    (lambda: CplxUNet(channels=(2, 0)), "CplxUNet", "channels"),
    (lambda: CplxUNet(kernel_size=4), "CplxUNet", "kernel_size"),
    (lambda: CplxUNet(bounded=1), "CplxUNet", "bounded"),
    (lambda: CplxVisionTransformer(1, 3, 8, 3), "CplxVisionTransformer", "patch_size"),
    (lambda: CplxVisionTransformer(1, 3, 8, 4, d_model=6, nhead=4), "CplxVisionTransformer",
     "nhead"),
    (lambda: CplxVisionTransformer(1, 3, 8, 4, pool="max"), "CplxVisionTransformer", "pool"),
]


@pytest.mark.parametrize("make, cls, name", BAD_ARGUMENTS,
                         ids=[f"{c}-{n}" for _, c, n in BAD_ARGUMENTS])
def test_bad_arguments_are_named(make, cls, name):
    with pytest.raises((TypeError, ValueError), match=f"{cls}: `{name}`"):
        make()


BAD_INPUTS = [
    (lambda: CplxResNet(1, 3, widths=(2,), blocks=(1,)), (2, 1, 4), "H, W"),
    (lambda: CplxUNet(), (2, 1, 0, 4), "H, W > 0"),
    (lambda: CplxVisionTransformer(1, 3, 8, 4), (2, 1, 8, 4), "(N, 1, 8, 8)"),
]


@pytest.mark.parametrize("make, shape, expected", BAD_INPUTS, ids=["resnet", "unet", "vit"])
def test_bad_input_shapes_are_named(make, shape, expected):
    model = make()
    with pytest.raises(ValueError) as error:
        model(Cplx(torch.zeros(shape), torch.zeros(shape)))
    message = str(error.value)
    assert f"{type(model).__name__}: `input` must have shape" in message
    assert expected in message


def test_resnet_blocks_default_to_two_per_stage_whatever_the_stages():
    # a default of one entry per default stage would refuse other widths
    assert CplxResNet(1, 3).blocks == (2, 2, 2)
    model = CplxResNet(1, 3, widths=(4, 8))
    assert model.blocks == (2, 2) and len(model.stages) == 4
