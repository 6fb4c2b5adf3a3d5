"""Train, sparsify with variational dropout, mask and fine-tune a complex GRU model.

The recurrent layers hold their weights in CplxLinear projections, so the
whole pipeline (to_bayesian, penalties, compute_ard_masks, to_masked,
cached, compact) runs on them with no mechanism of their own. The masked
model is checked against a plain GRU whose weights are multiplied by the
masks by hand.
"""

import copy

import pytest
import torch

from cplxmodule import cplx
from cplxmodule.nn import cached
from cplxmodule.nn.masked import BaseMasked, compact, to_masked
from cplxmodule.nn.relevance import compute_ard_masks, penalties, to_bayesian

from ...helpers import Predictor

pytestmark = pytest.mark.usefixtures("one_thread")


def ar2(batch, length, seed):
    """A complex AR(2) process: z_t = a z_{t-1} + b z_{t-2} + noise."""
    generator = torch.Generator().manual_seed(seed)
    a, b = 0.6 + 0.5j, -0.3 + 0.1j
    noise = 0.1 * torch.randn(batch, length, dtype=torch.complex64, generator=generator)
    z = torch.zeros_like(noise)
    z[:, 0] = noise[:, 0]
    z[:, 1] = noise[:, 1]
    for t in range(2, length):
        z[:, t] = a * z[:, t - 1] + b * z[:, t - 2] + noise[:, t]
    inputs, targets = z[:, :-1, None].contiguous(), z[:, 1:, None].contiguous()
    return cplx.from_complex(inputs), cplx.from_complex(targets)


def mse(output, target):
    return ((output - target).real ** 2 + (output - target).imag ** 2).mean()


def fit(model, x, y, steps, kl_weight=None):
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)
    model.train()
    for _ in range(steps):
        loss = mse(model(x), y)
        if kl_weight is not None:
            loss = loss + kl_weight * sum(penalties(model)) / y.numel()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


@pytest.fixture(scope="module")
def pipeline():
    torch.manual_seed(0)
    x, y = ar2(32, 17, seed=0)
    dense = fit(Predictor(), x, y, 30)
    vd = fit(to_bayesian(dense, "vd"), x, y, 40, kl_weight=1.0)
    masks = compute_ard_masks(vd, threshold=3.0)
    masked = fit(to_masked(vd, masks), x, y, 10)
    return dict(x=x, y=y, dense=dense, vd=vd, masks=masks, masked=masked)


def test_keys_and_masks(pipeline):
    dense, vd, masks, masked = (pipeline[k] for k in ("dense", "vd", "masks", "masked"))
    assert type(vd.gru.hh_l0).__name__ == "CplxLinearVD"
    # the VD twin keeps every key of the dense model and adds log_sigma2
    added = set(vd.state_dict()) - set(dense.state_dict())
    assert set(dense.state_dict()) <= set(vd.state_dict())
    assert added == {f"{name}.log_sigma2" for name in ("gru.ih_l0", "gru.hh_l0", "head")}
    assert set(masks) == {"gru.ih_l0.mask", "gru.hh_l0.mask", "head.mask"}
    assert isinstance(masked.gru.ih_l0, BaseMasked) and isinstance(masked.gru.hh_l0, BaseMasked)
    assert torch.equal(masked.gru.hh_l0.mask, masks["gru.hh_l0.mask"])
    # variational dropout pruned some of the recurrent weights, not all
    kept = masks["gru.hh_l0.mask"].mean()
    assert 0 < kept < 1
    # the masked model still fits the process better than predicting zero
    with torch.no_grad():
        assert mse(masked(pipeline["x"]), pipeline["y"]) < mse(0 * pipeline["y"], pipeline["y"])


def masked_by_hand(masked):
    """A plain model with the masked model's weights times their masks."""
    plain = Predictor()
    with torch.no_grad():
        for name in ("gru.ih_l0", "gru.hh_l0", "head"):
            source, target = masked.get_submodule(name), plain.get_submodule(name)
            for part in ("real", "imag"):
                getattr(target.weight, part).copy_(getattr(source.weight, part) * source.mask)
                getattr(target.bias, part).copy_(getattr(source.bias, part))
    return plain.eval()


def test_masked_output_is_the_dense_output_of_masked_weights(pipeline):
    masked, x = pipeline["masked"], pipeline["x"]
    with torch.no_grad():
        expected = cplx.to_complex(masked_by_hand(masked)(x))
        torch.testing.assert_close(cplx.to_complex(masked(x)), expected)
        with cached(masked):
            torch.testing.assert_close(cplx.to_complex(masked(x)), expected)
            torch.testing.assert_close(cplx.to_complex(masked(x)), expected)


def test_vd_eval_is_the_dense_model_with_its_weights(pipeline):
    vd, x = pipeline["vd"], pipeline["x"]
    plain = Predictor().eval()
    plain.load_state_dict(vd.state_dict(), strict=False)
    with torch.no_grad():
        torch.testing.assert_close(cplx.to_complex(vd(x)), cplx.to_complex(plain(x)))
    # in training the hidden projection samples noise: two runs differ
    vd.train()
    try:
        with torch.no_grad():
            assert not torch.equal(cplx.to_complex(vd(x)), cplx.to_complex(vd(x)))
    finally:
        vd.eval()


@pytest.mark.parametrize("max_density", [0.0, 1.0])
def test_compact_gives_the_eval_output(pipeline, max_density):
    masked, x = pipeline["masked"], pipeline["x"]
    small = compact(masked, max_density=max_density)
    assert not any(isinstance(m, BaseMasked) for m in small.modules())
    # the GRU is opaque to compact: its projections keep their shapes
    assert small.gru.hh_l0.out_features == masked.gru.hh_l0.out_features
    with torch.no_grad():
        torch.testing.assert_close(
            cplx.to_complex(small(x)), cplx.to_complex(masked_by_hand(masked)(x))
        )


def test_compact_of_the_vd_model_is_its_masked_twin(pipeline):
    vd, masks, x = pipeline["vd"], pipeline["masks"], pipeline["x"]
    small = compact(vd, threshold=3.0)
    twin = to_masked(copy.deepcopy(vd), masks).eval()
    with torch.no_grad():
        torch.testing.assert_close(cplx.to_complex(small(x)), cplx.to_complex(twin(x)))
