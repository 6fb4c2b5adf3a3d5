"""The layer table (``tests/nn/layer_table.py``) has a row for every public layer."""

from tests.nn.layer_table import LAYERS, NOT_LAYERS, TESTS, _public_classes


def test_every_public_layer_has_an_entry():
    covered = {info.cls for info in LAYERS}
    missing = set(_public_classes()) - covered - set(NOT_LAYERS)
    assert not missing, f"add to LAYERS: {sorted(c.__name__ for c in missing)}"


def test_one_entry_per_layer():
    ids = [info.id for info in LAYERS]
    assert len(ids) == len(set(ids))


def test_left_out_classes_are_public_and_have_no_entry():
    assert set(NOT_LAYERS) <= set(_public_classes())
    assert not set(NOT_LAYERS) & {info.cls for info in LAYERS}


def test_skips_and_xfails_name_generic_tests():
    for info in LAYERS:
        assert set(info.skips) | set(info.xfails) <= set(TESTS), info.id
        assert not set(info.skips) & set(info.xfails), info.id


def test_batch_dim_is_where_the_examples_go():
    # the exports mark this axis dynamic; the unbatched test inserts it
    for info in LAYERS:
        shapes = [[tuple(getattr(x, "real", x).shape) for x in info.inputs(batch=n)]
                  for n in (2, 3)]
        axes = {tuple(i for i, (p, q) in enumerate(zip(a, b)) if p != q)
                for a, b in zip(*shapes)}
        assert axes == {(info.batch_dim,)}, (info.id, axes)
