"""What the benchmarks share: a one-thread fixture, and the ratio tables.

Each benchmark names its variant (``benchmark.extra_info["variant"]``) and
the variant its group is measured against (``extra_info["reference"]``):
torch's native complex64 for the products, the dense layer for masking and
variational dropout, the compact model for compact inference. The session
ends with a table per file and reference, for the minimum and the median
time: a line per group, the reference's time, then each variant's time
divided by it (below 1 is faster than the reference).
"""

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Time a module's benchmarks on one thread (``pytestmark = usefixtures("one_thread")``)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(params=[1, 2], ids=lambda n: f"threads{n}")
def threads(request):
    """Time a benchmark on one thread, then on two."""
    previous = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(previous)


def _tables(benchmarks):
    """(file, reference) -> group -> variant -> stats, for the groups holding their reference."""
    tables = {}
    for bench in benchmarks:
        info = bench.extra_info
        if bench.stats and "variant" in info and "reference" in info:
            key = bench.fullname.split("::")[0], info["reference"]
            groups = tables.setdefault(key, {})
            groups.setdefault(bench.group, {})[info["variant"]] = bench.stats
    return {
        key: {group: stats for group, stats in groups.items() if key[1] in stats}
        for key, groups in tables.items()
    }


def _write_table(terminalreporter, path, reference, groups):
    variants = sorted({v for stats in groups.values() for v in stats if v != reference})
    group_width = max(len(group) for group in groups) + 2
    widths = [max(9, len(v) + 2) for v in variants]
    write = terminalreporter.write_line
    for stat in ("min", "median"):
        terminalreporter.section(f"{path}: time / {reference} time ({stat})")
        header = "".join(f"{v:>{w}}" for v, w in zip(variants, widths))
        write(f"{'group':<{group_width}}{'ms':>10}" + header)
        for group, stats in groups.items():
            base = getattr(stats[reference], stat)
            cells = "".join(
                f"{getattr(stats[v], stat) / base:>{w}.2f}" if v in stats else f"{'-':>{w}}"
                for v, w in zip(variants, widths)
            )
            write(f"{group:<{group_width}}{base * 1e3:>10.3f}" + cells)


def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    for (path, reference), groups in _tables(session.benchmarks).items():
        if groups:
            _write_table(terminalreporter, path, reference, groups)
