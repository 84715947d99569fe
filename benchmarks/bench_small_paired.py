"""Small-n Logit end to end against statsmodels, interleaved in one process (issue #14).

``gc.Logit(y, X).fit().bse`` (construction, fit, standard errors; NumPy input) and statsmodels'
``sm.Logit(y, X).fit(method="newton", disp=0).bse`` are called alternately, pair after pair, so
that both see the same load on a shared machine; each cell is the median over the pairs.
The data are ``bench_fit.py --small``'s (an intercept and p standard-normal slopes).

Run from the repository root (one BLAS thread, as the issue)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_small_paired.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_small_paired.py --compare /tmp/before

``--compare ROOT`` runs the same pairs with a second copy of the package (e.g. ``git archive
<commit> glmclass | tar -x -C ROOT``) in child processes alternating with this tree's, round
after round, and prints each tree's per-round ratios and their median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: rows -> slopes, as bench_fit.py --small
SMALL = {50: 2, 200: 5, 1000: 10, 5000: 20}


def child(pairs: int) -> dict:
    """Median milliseconds of glmclass and statsmodels per n, interleaved."""
    import numpy as np
    import statsmodels.api as sm
    from bench_fit import make_data

    import glmclass as gc

    warnings.simplefilter("ignore")
    out = {}
    for n, p in SMALL.items():
        X, y, _ = make_data(n, p, 20261121, True)
        times = ([], [])
        calls = (lambda X=X, y=y: gc.Logit(y, X).fit().bse,
                 lambda X=X, y=y: sm.Logit(y, X).fit(method="newton", disp=0, maxiter=100).bse)
        for f in calls:
            f()
        for _ in range(pairs if n < 5000 else max(pairs // 5, 20)):
            for f, t in zip(calls, times, strict=True):
                t0 = time.perf_counter()
                f()
                t.append(time.perf_counter() - t0)
        out[n] = [float(np.median(t)) * 1e3 for t in times]
    return out


def _run(root: Path, pairs: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1")
    res = subprocess.run([sys.executable, __file__, "--child", "--pairs", str(pairs)],
                         env=env, capture_output=True, text=True, check=True)
    return {int(k): v for k, v in json.loads(res.stdout).items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--compare", type=Path, help="root of a second copy of the package")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.pairs)))
        return
    trees = [("this tree", ROOT)] + ([("compare", a.compare)] if a.compare else [])
    ratios = {name: {n: [] for n in SMALL} for name, _ in trees}
    for r in range(a.rounds):
        for name, root in (trees if r % 2 == 0 else trees[::-1]):
            for n, (g, s) in _run(root, a.pairs).items():
                ratios[name][n].append(s / g)
                print(f"round {r + 1} {name:9s} n={n:<5} glmclass {g:.3f} ms  statsmodels "
                      f"{s:.3f} ms  statsmodels/glmclass {s / g:.2f}", flush=True)
    for name, _ in trees:
        cells = "  ".join(f"n={n}: {statistics.median(v):.2f}" for n, v in ratios[name].items())
        print(f"median statsmodels/glmclass, {name}: {cells}")


if __name__ == "__main__":
    main()
