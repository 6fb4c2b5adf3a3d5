"""Print every benchmark's time relative to torch's native complex64 in its group.

``python -m pytest benchmarks/test_bench_products.py --benchmark-enable`` ends
with a table of ``min time / native min time`` (and the same for medians), one
line per benchmark group, one column per variant. Below 1 is faster than native.
"""

NATIVE = "torch-complex64"


def _ratios(benchmarks):
    groups = {}
    for bench in benchmarks:
        variant = bench.extra_info.get("variant")
        if variant is not None and bench.stats:
            groups.setdefault(bench.group, {})[variant] = bench.stats
    return groups


def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    groups = {g: stats for g, stats in _ratios(session.benchmarks).items() if NATIVE in stats}
    if not groups:
        return
    variants = sorted({v for g in groups.values() for v in g if v != NATIVE})
    write = terminalreporter.write_line
    for stat in ("min", "median"):
        terminalreporter.section(f"time / {NATIVE} time ({stat})")
        write(f"{'group':<34}{'native ms':>10}" + "".join(f"{v:>9}" for v in variants))
        for group, stats in groups.items():
            base = getattr(stats[NATIVE], stat)
            cells = "".join(
                f"{getattr(stats[v], stat) / base:>9.2f}" if v in stats else f"{'-':>9}"
                for v in variants
            )
            write(f"{group:<34}{base * 1e3:>10.3f}" + cells)
