"""The reconstruction demo: its data against numpy, its model's data consistency, a tiny run of the command."""

import numpy as np
import pytest
import torch

from cplxmodule import cplx
from cplxmodule.demo.reconstruction import (
    Config, Reconstructor, cartesian_mask, channels, count_weights, main, phantoms, undersample,
)
from cplxmodule.nn.masked import to_masked

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def keep_threads():
    # the command sets torch's thread count for the process
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_phantoms_shape_scale_and_seed():
    images = phantoms(5, size=20, seed=3)
    assert images.shape == (5, 1, 20, 20) and images.dtype == torch.complex64
    torch.testing.assert_close(images.abs().amax(dim=(1, 2, 3)), torch.ones(5))
    assert torch.equal(images, phantoms(5, size=20, seed=3))
    assert not torch.equal(images, phantoms(5, size=20, seed=4))
    # outside the skull there is nothing; the phase is smooth inside it
    assert images[:, :, 0, :].abs().max() == 0
    inside = images.abs() > 0
    step = (images[..., 1:] * images[..., :-1].conj()).angle().abs()
    assert step[inside[..., 1:] & inside[..., :-1]].max() < 0.5


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=0), "n"), (dict(n=2, size=0), "size"), (dict(n=2, features=-1), "features"),
])
def test_phantoms_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        phantoms(**kwargs)


@pytest.mark.parametrize("size, acceleration, fraction, low", [(32, 4, 0.08, 3), (24, 4, 0.08, 2), (16, 2, 0.25, 4)])
def test_cartesian_mask(size, acceleration, fraction, low):
    mask = cartesian_mask(size, acceleration, fraction, seed=1)
    assert mask.dtype == torch.bool and mask.shape == (size,)
    assert int(mask.sum()) == size // acceleration
    # the `low` lowest frequencies, around index 0 of torch.fft's order, are all sampled
    centred = torch.fft.fftshift(mask)
    start = (size - low + 1) // 2
    assert centred[start : start + low].all()
    assert torch.equal(mask, cartesian_mask(size, acceleration, fraction, seed=1))
    draws = {tuple(cartesian_mask(size, acceleration, fraction, seed=s).tolist()) for s in range(8)}
    assert len(draws) > 1


@pytest.mark.parametrize("kwargs, name", [
    (dict(size=0), "size"), (dict(size=8, acceleration=0), "acceleration"),
    (dict(size=8, center_fraction=1.5), "center_fraction"),
])
def test_cartesian_mask_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        cartesian_mask(**kwargs)


def test_undersample_against_numpy():
    images = phantoms(3, size=12, seed=2)
    mask = cartesian_mask(12, 3, seed=2)
    zero_filled, kspace = undersample(images, mask)
    x, m = images.numpy().astype(np.complex128), mask.numpy()
    expected_k = np.fft.fft2(x, norm="ortho") * m
    np.testing.assert_allclose(kspace.numpy(), expected_k, atol=1e-6)
    np.testing.assert_allclose(zero_filled.numpy(), np.fft.ifft2(expected_k, norm="ortho"), atol=1e-6)


def test_reconstructor_keeps_the_measured_kspace():
    torch.manual_seed(0)
    images = phantoms(4, size=16)
    mask = cartesian_mask(16)
    zero_filled, kspace = undersample(images, mask)
    model = Reconstructor(channels=(2, 4))
    with torch.no_grad():  # untrained: the zero-filled image
        torch.testing.assert_close(cplx.to_complex(model(zero_filled, kspace, mask)), zero_filled, atol=1e-5, rtol=0)
        for part in model.unet.parameters():
            part.add_(0.1 * torch.randn_like(part))
        output = cplx.to_complex(model(zero_filled, kspace, mask))
    measured = torch.fft.fft2(output, norm="ortho")
    torch.testing.assert_close(measured[..., mask], kspace[..., mask], atol=1e-5, rtol=0)
    assert (measured[..., ~mask] - kspace[..., ~mask]).abs().max() > 1e-3  # the network's own elsewhere
    soft = Reconstructor(channels=(2,), soft=True)
    assert [name for name, _ in soft.named_parameters() if name.startswith("consistency")] == ["consistency.weight"]


def test_count_weights_and_channels():
    model = Reconstructor(channels=(2, 4))
    # encoder 1 -> 2 -> 4; decoder 4 -> 2 and (2 + 2) -> 1 (a skip); 3x3 kernels
    assert count_weights(model) == (9 * (2 + 8 + 8 + 4), 9 * (2 + 8 + 8))  # the last layer starts at zero
    masks = {
        name + ".mask": torch.ones_like(layer.weight.real)
        for name, layer in model.named_modules() if name.endswith("conv")
    }
    masks["unet.encoder.1.conv.mask"][1:] = 0  # 3 of the 4 channels
    masked = to_masked(model, masks)
    assert count_weights(masked) == (198, 9 * (2 + 2 + 8))
    assert channels(masked) == [2, 4]


def test_command_line(tmp_path, capsys, keep_threads):
    plot = tmp_path / "recon.png"
    argv = ["--size", "12", "--train", "8", "--steps", "2", "--vd-steps", "2", "--channels", "2", "4",
            "--threads", "1", "--no-progress", "--plot", str(plot)]
    stages = main(argv, config=Config(n_test=4, batch_size=4))
    assert [s.name for s in stages] == ["zero-filled", "dense", "VD", "masked", "compact", "exported"]
    assert torch.get_num_threads() == 1
    # the compacted and exported models compute what the masked one does
    assert stages[4].psnr == pytest.approx(stages[3].psnr, abs=1e-3)
    assert stages[5].psnr == pytest.approx(stages[3].psnr, abs=1e-3)
    assert stages[4].ssim == pytest.approx(stages[3].ssim, abs=1e-4)
    assert all(-1 <= s.ssim <= 1 for s in stages)
    out = capsys.readouterr().out
    for word in ("PSNR", "SSIM", "zero-filled", "exported", "KL weight 1 (the ELBO)", "[2, 4] dense", str(plot)):
        assert word in out
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_command_line_bad_kind(capsys, keep_threads):
    with pytest.raises(SystemExit):
        main(["--kind", "l0"])
    assert "--kind" in capsys.readouterr().err
