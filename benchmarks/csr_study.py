"""When does a CSR weight beat the dense one? The measurement behind compact()'s choice.

For square linear layers of ``n`` features, real (:class:`SparseLinear`
against :class:`torch.nn.Linear`) and complex (:class:`CplxSparseLinear`
against :class:`~cplxmodule.nn.CplxLinear`), a random mask keeping a fraction
``density`` of the weight, and inputs of ``rows`` rows, it times one forward
call of each under :func:`torch.inference_mode` (the minimum over five
repeats of a loop of at least ``--seconds``) and prints
``kind n density rows dense_us csr_us dense/csr``: above 1 the CSR layer
is faster. ``compact``'s rule (``csr_pays`` in
``cplxmodule/nn/masked/compact.py``) is read off this table; see
:doc:`/guides/deploying`.

Run on an otherwise idle machine::

    python benchmarks/csr_study.py --threads 1 [--device cuda] [--json out.json]
"""

import argparse
import json
import time
import warnings

import torch

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxLinear
from cplxmodule.nn.masked import CplxSparseLinear, SparseLinear

SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
DENSITIES = (0.01, 0.03, 0.1, 0.2)
ROWS = (1, 16, 256)
# beyond this many multiply-adds (rows x n x n) a dense call is too slow to repeat
MAX_WORK = 2 ** 30


def best(call, seconds, sync):
    """The minimum over five repeats of the mean time of ``call`` in a loop of ``seconds``."""
    call()
    sync()
    times = []
    for _ in range(5):
        calls, start = 0, time.perf_counter()
        while True:
            call()
            calls += 1
            sync()
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        times.append(elapsed / calls)
    return min(times)


def layers(complex_, n, density, device):
    torch.manual_seed(0)
    mask = torch.rand(n, n, device=device) < density
    if complex_:
        dense = CplxLinear(n, n, device=device)
        with torch.no_grad():
            dense.weight.real.mul_(mask)
            dense.weight.imag.mul_(mask)
        return dense.eval(), CplxSparseLinear(dense.weight, mask, dense.bias).eval()
    dense = torch.nn.Linear(n, n, device=device)
    with torch.no_grad():
        dense.weight.mul_(mask)
    return dense.eval(), SparseLinear(dense.weight, dense.bias).eval()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=0.02)
    parser.add_argument("--sizes", type=int, nargs="*", default=SIZES)
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
    results = []
    print(f"# device {device}, {args.threads} thread(s), torch {torch.__version__}")
    print(f"{'kind':8}{'n':>6}{'density':>9}{'rows':>6}{'dense_us':>11}{'csr_us':>11}{'dense/csr':>11}")
    for complex_ in (False, True):
        kind = "complex" if complex_ else "real"
        for n in args.sizes:
            for density in DENSITIES:
                dense, csr = layers(complex_, n, density, device)
                for rows in ROWS:
                    if rows * n * n > MAX_WORK:
                        continue
                    draw = cplx.randn if complex_ else torch.randn
                    x = draw(rows, n, device=device)
                    with torch.inference_mode():
                        t_dense = best(lambda: dense(x), args.seconds, sync)
                        t_csr = best(lambda: csr(x), args.seconds, sync)
                    results.append(dict(kind=kind, n=n, density=density, rows=rows,
                                        dense=t_dense, csr=t_csr))
                    print(f"{kind:8}{n:>6}{density:>9}{rows:>6}{t_dense * 1e6:>11.1f}"
                          f"{t_csr * 1e6:>11.1f}{t_dense / t_csr:>11.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=str(device), threads=args.threads, results=results), f)


if __name__ == "__main__":
    main()
