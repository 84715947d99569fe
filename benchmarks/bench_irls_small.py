"""Time of the IRLS solver alone on small data: ``model.problem.irls(Control())`` (issue #14).

The end-to-end small-n comparison with statsmodels is ``bench_fit.py --small``; this script
isolates the solver (no model construction, results, null model or separation check), which at
n = 200, p = 5 is a few passes of a handful of small NumPy calls each, so its per-call overheads
are what it measures.

Run from the repository root (one BLAS thread, as the issue)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_irls_small.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_irls_small.py --compare /path/to/old/checkout
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_irls_small.py --floor   # the arithmetic alone

``--compare ROOT`` times a second copy of the package (e.g. ``git archive <commit> glmclass |
tar -x -C ROOT``) in alternating child processes, round after round, so that both see the
same load on a shared machine; each cell is the median over rounds of per-round medians.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: rows -> slopes, as bench_fit.py --small
SMALL = {50: 2, 200: 5, 1000: 10, 5000: 20}
MODELS = ("Logit", "Probit", "GLM cloglog", "GLM Poisson")


def _model(gc, name: str, X, y):
    if name == "Logit":
        return gc.Logit(y, X)
    if name == "Probit":
        return gc.Probit(y, X)
    if name == "GLM cloglog":
        return gc.GLM(y, X, family=gc.families.Binomial(gc.links.CLogLog()))
    if name == "GLM Poisson":  # counts from the same design
        import numpy as np

        rng = np.random.default_rng(7)
        counts = rng.poisson(np.exp(0.3 * X[:, 1:].sum(axis=1) / X.shape[1]))
        return gc.GLM(counts.astype(float), X, family=gc.families.Poisson())
    raise ValueError(name)


def child(repeats: int) -> dict:
    """Median microseconds of ``problem.irls(Control(), None)`` per (model, n)."""
    import warnings

    from bench_fit import make_data

    import glmclass as gc
    from glmclass.solvers.control import Control

    warnings.simplefilter("ignore")
    out = {"file": gc.__file__}
    for name in MODELS:
        for n, p in SMALL.items():
            X, y, _ = make_data(n, p, 20261121, True)
            problem = _model(gc, name, X, y).problem
            control = Control()
            fit = problem.irls(control, None)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                problem.irls(control, None)
                times.append(time.perf_counter() - t0)
            out[f"{name} n={n}"] = (statistics.median(times) * 1e6, fit.n_iter)
    return out


def floor(repeats: int) -> None:
    """The arithmetic of a logit fit at n = 200, p = 5 as straight-line NumPy: R's start, then
    4 passes, 5 equilibrated Cholesky solves; no domain, rank or shift checks, no halving."""
    import numpy as np
    from bench_fit import make_data
    from scipy import special
    from scipy.linalg import get_lapack_funcs

    potrf, potrs = get_lapack_funcs(("potrf", "potrs"), dtype=np.float64)
    X, y, _ = make_data(200, 5, 20261121, True)
    ones = np.ones(200)

    def terms(eta):
        e = np.exp(-np.minimum(np.abs(eta), 700.0))
        ope = e + 1.0
        mu = np.where(eta >= 0, 1.0, e) / ope
        loglik = y * eta - np.maximum(eta, 0.0) - np.log1p(e)
        return e / (ope * ope), y - mu, -2.0 * float(ones @ loglik)

    def solve(w, v):
        rhs = X.T @ v
        xs = X * np.sqrt(w)[:, None]
        g = xs.T @ xs
        d = np.sqrt(g.diagonal())
        c, _ = potrf(g / (d[:, None] * d), lower=0, clean=1, overwrite_a=1)
        return potrs(c, rhs / d, lower=0)[0] / d

    def fit():
        eta = special.logit((y + 0.5) / 2.0)
        w, u, _ = terms(eta)
        coef = solve(w, w * eta + u)
        for _ in range(4):
            w, u, _ = terms(X @ coef)
            coef = coef + solve(w, u)
        return coef

    fit()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit()
        times.append(time.perf_counter() - t0)
    print(f"straight-line logit fit, n = 200, p = 5: {statistics.median(times) * 1e6:.1f} us")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--compare", help="root of a second copy of the package to time alternately")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=300, help="timed calls per cell and round")
    ap.add_argument("--floor", action="store_true",
                    help="time the logit fit's arithmetic as straight-line NumPy instead")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.floor:
        floor(args.repeats * 10)
        return
    if args.child:
        print(json.dumps(child(args.repeats)))
        return
    roots = [str(ROOT)] + ([args.compare] if args.compare else [])
    rounds: dict[str, list[dict]] = {r: [] for r in roots}
    for _ in range(args.rounds):
        for r in roots:
            env = dict(os.environ, PYTHONPATH=r)
            res = subprocess.run([sys.executable, __file__, "--child", "--repeats",
                                  str(args.repeats)], env=env, capture_output=True, text=True,
                                 check=True)
            rounds[r].append(json.loads(res.stdout))
    keys = [k for k in rounds[roots[0]][0] if k != "file"]
    head = f"{'cell':<22}" + "".join(f"{'us (iters) ' + str(i):>18}" for i in range(len(roots)))
    print("\n".join(f"[{i}] {rounds[r][0]['file']}" for i, r in enumerate(roots)))
    print(head + ("   ratio [1]/[0]" if len(roots) == 2 else ""))
    for k in keys:
        med = [statistics.median(x[k][0] for x in rounds[r]) for r in roots]
        its = [rounds[r][0][k][1] for r in roots]
        line = f"{k:<22}" + "".join(f"{m:>12.1f} ({i:>2})" for m, i in zip(med, its, strict=True))
        if len(roots) == 2:
            line += f"   {med[1] / med[0]:>6.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
