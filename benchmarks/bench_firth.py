"""Fit time of FirthLogit against Logit (the maximum-likelihood fit of the same data), and the
cost of its profile penalised-likelihood intervals and PLR tests.

Synthetic logistic data (float64, an intercept and ``p`` standard-normal slopes, slopes
``U(-1, 1) * 2 / sqrt(p)``, intercept -0.5, seed 20261126), one BLAS thread (set before NumPy
is imported). Each cell is the median of ``--repeats`` runs after one warm-up run.

Run from the repository root::

    python benchmarks/bench_firth.py                       # N in {1e3, 1e4, 1e5}, p = 10
    python benchmarks/bench_firth.py --n 1e4 --p 5 20      # other sizes

Writes ``benchmarks/results/firth.json`` and prints a Markdown table.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import glmclass as gc  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def data(n: int, p: int, seed: int = 20261126) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, p))])
    beta = np.r_[-0.5, rng.uniform(-1, 1, p) * 2 / np.sqrt(p)]
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ beta))).astype(float)
    return X, y


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    ap.add_argument("--p", type=int, nargs="+", default=[10])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile-max-n", type=float, default=1e4,
                    help="largest N whose profile intervals and PLR tests are timed")
    args = ap.parse_args()
    rows = []
    for n in map(int, args.n):
        for p in args.p:
            X, y = data(n, p)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", gc.SeparationWarning)
                logit = timed(lambda X=X, y=y: gc.Logit(y, X).fit(), args.repeats)
            firth = timed(lambda X=X, y=y: gc.FirthLogit(y, X).fit(), args.repeats)
            res = gc.FirthLogit(y, X).fit()
            row = {"n": n, "p": p, "logit_s": logit, "firth_s": firth,
                   "firth_iterations": res.n_iter}
            if n <= args.profile_max_n:
                row["profile_ci_s"] = timed(
                    lambda X=X, y=y: gc.FirthLogit(y, X).fit().conf_int(method="profile"), 1)
                row["plr_test_s"] = timed(
                    lambda X=X, y=y: gc.FirthLogit(y, X).fit().plr_test(), 1)
            rows.append(row)
            print(json.dumps(row))
    meta = {"command": "python benchmarks/bench_firth.py " + " ".join(
                f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in vars(args).items()),
            "python": platform.python_version(), "numpy": np.__version__,
            "machine": platform.machine(), "blas_threads": os.environ["OPENBLAS_NUM_THREADS"]}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "firth.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    print("\n| N | p | Logit fit (s) | FirthLogit fit (s) | iterations | profile CIs (s) | "
          "PLR tests (s) |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:.0e} | {r['p']} | {r['logit_s']:.4f} | {r['firth_s']:.4f} | "
              f"{r['firth_iterations']} | {r.get('profile_ci_s', float('nan')):.3f} | "
              f"{r.get('plr_test_s', float('nan')):.3f} |")


if __name__ == "__main__":
    main()
