"""Fit time and peak memory of the models that read rows through the row-block source.

One case per fresh child process, 1 BLAS thread unless ``--threads`` says otherwise. Each child
builds synthetic well-conditioned data (intercept + p-1 standard-normal columns, moderate
coefficients, fixed seeds), warms the model up on a tiny problem, measures the peak RSS growth
of one fit (``/proc/self/clear_refs`` + ``VmHWM``, after ``malloc_trim``; the model already
built), then times ``repeats`` fits and reports the median. The estimates are saved too, so two
runs (e.g. before and after a refactor) can be compared number for number.

Run from the repository root::

    python benchmarks/bench_blocks.py --out before.json
    python benchmarks/bench_blocks.py --out after.json --compare before.json
    python benchmarks/bench_blocks.py --root /path/to/other/checkout    # benchmark another tree
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _measure import _mem, _reset_peak

ROOT = Path(__file__).resolve().parent.parent

#: case -> (model, N, p, K, timed repeats); "zero w": every 10th row has frequency weight 0
CASES = {
    "Logit N=1e6 p=10": ("Logit", 1_000_000, 10, 2, 5),
    "Logit N=1e6 p=50": ("Logit", 1_000_000, 50, 2, 5),
    "Logit N=1e6 p=50 zero w": ("Logit", 1_000_000, 50, 2, 5),
    "Probit N=1e6 p=50": ("Probit", 1_000_000, 50, 2, 5),
    "MNLogit N=2e5 p=20 K=3": ("MNLogit", 200_000, 20, 3, 5),
    "LDA N=1e6 p=50 K=3": ("LDA", 1_000_000, 50, 3, 5),
    "Logit n=200 p=5": ("Logit", 200, 5, 2, 200),
}


def make_data(n: int, p: int, k: int, seed: int = 20261122):
    """X with a column of ones and p-1 normal columns; y from the model (codes 0..k-1)."""
    rng = np.random.default_rng(seed)
    coef = rng.uniform(-1.0, 1.0, (p, k - 1)) * 2.0 / np.sqrt(p)
    coef[0] = -0.3
    X = np.empty((n, p))
    X[:, 0] = 1.0
    y = np.empty(n)
    for s in range(0, n, 8192):
        e = min(s + 8192, n)
        X[s:e, 1:] = rng.standard_normal((e - s, p - 1))
        eta = np.column_stack([np.zeros(e - s), X[s:e] @ coef])
        prob = np.exp(eta - eta.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        y[s:e] = (rng.random(e - s)[:, None] > np.cumsum(prob, axis=1)[:, :-1]).sum(axis=1)
    return X, y


def child(case: str) -> dict:
    import glmclass as gc_

    model, n, p, k, repeats = CASES[case]
    cls = getattr(gc_, model)
    Xw, yw = make_data(300, p, k, seed=1)
    cls(yw, Xw if model != "LDA" else Xw[:, 1:]).fit()  # imports, BLAS start-up
    X, y = make_data(n, p, k)
    if model == "LDA":
        X = np.ascontiguousarray(X[:, 1:])
    if "zero w" in case:
        fw = np.ones(n)
        fw[::10] = 0.0
        m = cls(y, X, freq_weights=fw)
    else:
        m = cls(y, X)
    base = _reset_peak()
    res = m.fit()
    growth = _mem()[1] - base
    params = np.asarray(res.params if model != "LDA" else res.coef, dtype=float).ravel().tolist()
    del res
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        m.fit()
        times.append(time.perf_counter() - t)
    return {"case": case, "median_s": statistics.median(times), "times": times,
            "growth_bytes": growth, "x_bytes": X.nbytes, "params": params,
            "glmclass": gc_.__file__}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--threads", default="1")
    ap.add_argument("--out")
    ap.add_argument("--compare")
    ap.add_argument("--root", default=str(ROOT), help="checkout whose glmclass is measured")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child)))
        return
    env = dict(os.environ, OMP_NUM_THREADS=a.threads, OPENBLAS_NUM_THREADS=a.threads,
               MKL_NUM_THREADS=a.threads, PYTHONPATH=a.root)  # not an installed glmclass
    rows = []
    for case in a.cases:
        out = subprocess.run([sys.executable, __file__, "--child", case], env=env, cwd=a.root,
                             capture_output=True, text=True, check=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
        assert rows[-1]["glmclass"].startswith(str(Path(a.root).resolve())), rows[-1]["glmclass"]
    ref = {r["case"]: r for r in json.loads(Path(a.compare).read_text())} if a.compare else {}
    print("| case | median fit (s) | peak RSS growth (MB) | growth / X | max abs d params |")
    print("|---|---|---|---|---|")
    for r in rows:
        d = ""
        if r["case"] in ref:
            d = f"{np.max(np.abs(np.subtract(r['params'], ref[r['case']]['params']))):.1e}"
        print(f"| {r['case']} | {r['median_s']:.4f} | {r['growth_bytes'] / 2**20:.1f} | "
              f"{r['growth_bytes'] / r['x_bytes']:.3f} | {d} |")
    if a.out:
        Path(a.out).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
