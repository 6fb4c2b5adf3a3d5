"""compact_report: what each layer keeps, and the threads its timing ran on."""

import pytest
import torch

from cplxmodule.nn.masked import LinearMasked, compact, compact_report


def sparse_model(keep=0.09):
    torch.manual_seed(0)
    model = torch.nn.Sequential(LinearMasked(100, 50))
    model[0].mask = torch.rand(50, 100) < keep
    return model.eval()


@pytest.mark.parametrize("max_density", [0.0, 1.0], ids=["dense", "csr"])
def test_kept_is_the_fraction_of_nonzero_weights(max_density):
    model = sparse_model()
    report = compact_report(model, compact(model, max_density=max_density))
    (_, _, after, kept), = report.layers
    expected = float(((model[0].mask != 0) & (model[0].weight != 0)).float().mean())
    assert kept == pytest.approx(expected) and kept < 0.15
    assert after.startswith("SparseLinear" if max_density else "Linear")


def test_the_timing_runs_on_the_threads_it_states():
    model, x = sparse_model(), torch.randn(4, 100)
    seen = []

    def hook(module, args):
        seen.append(torch.get_num_threads())
    model[0].register_forward_pre_hook(hook)
    before = torch.get_num_threads()
    report = compact_report(model, compact(model), (x,), min_run_time=0.001, threads=1)
    assert set(seen) == {1} and torch.get_num_threads() == before
    assert report.threads == 1 and "(1 threads)" in str(report)
    default = compact_report(model, compact(model), (x,), min_run_time=0.001)
    assert default.threads == before


def test_bad_threads_are_named():
    model = sparse_model()
    with pytest.raises((TypeError, ValueError), match="`threads`"):
        compact_report(model, compact(model), (torch.randn(2, 100),), threads=0)


class Pair(torch.nn.Module):
    """Two layers in a forward of its own: compact sees their link with example inputs only."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = LinearMasked(6, 8), LinearMasked(8, 3)

    def forward(self, input):
        return self.fc2(torch.relu(self.fc1(input)))


def test_dead_channels_that_stay_are_named_with_their_count():
    torch.manual_seed(0)
    model = Pair().eval()
    model.fc1.mask = torch.ones(8, 6).index_fill_(0, torch.tensor([1, 2, 5]), 0)
    model.fc2.mask = torch.ones(3, 8)
    with torch.no_grad():
        model.fc1.bias[[1, 2, 5]] = 0.0
    dead = int((model.fc1.mask == 0).all(1).sum())  # the mask's zero rows: 3
    notes = compact_report(model, compact(model)).notes
    assert len(notes) == 1 and f"fc1 ({dead} of 8)" in notes[0] and "fc2" not in notes[0]
    assert "example_inputs" in notes[0]
    followed = compact(model, example_inputs=(torch.randn(2, 6),))
    assert followed.fc1.out_features == 8 - dead
    assert compact_report(model, followed).notes == ()


@pytest.mark.parametrize("max_density", [0.0, 1.0], ids=["dense", "csr"])
def test_the_bytes_stored_are_counted_by_hand(max_density):
    model = sparse_model()
    small = compact(model, max_density=max_density)
    report = compact_report(model, small)
    nonzero = int(((model[0].mask != 0) & (model[0].weight != 0)).sum())
    # masked: float32 nonzeros behind a 5000-bit bitmap, and the bias
    masked = nonzero * 4 + 5000 // 8 + 50 * 4
    if max_density:  # CSR: values, int64 column indices and row offsets
        compact_bytes = nonzero * (4 + 8) + 51 * 8 + 50 * 4
    else:  # a dense weight, its zeros included
        compact_bytes = 5000 * 4 + 50 * 4
    assert report.sizes == {"0": (masked, compact_bytes)}
    assert report.stored == (masked, compact_bytes)
    assert f"{masked} -> {compact_bytes}" in str(report)
