"""Fit time and peak memory of OrderedModel (proportional odds) against statsmodels'
OrderedModel and R's MASS::polr (through Rscript), on the same data.

Synthetic data (seed 20261128): ``p`` standard-normal covariates (float64), slopes
``U(-1, 1) * 2 / sqrt(p)``, a logistic latent response cut at the quantiles 0.2, 0.4, 0.6,
0.8 of its sample (``K = 5`` levels). One BLAS thread (set before NumPy is imported; R gets
``OPENBLAS_NUM_THREADS=1`` too). Times are CPU seconds of the fit (``time.process_time``;
R's ``system.time(...)[["user.self"]]``), so that a shared machine does not inflate them.
glmclass and statsmodels run in this process: each cell is the median of ``--repeats`` runs
after a warm-up run, and the peak RSS above the data is measured around one fit (Linux
``/proc``); above 2e5 rows statsmodels (minutes a fit) runs once, timed and measured in the
same call. statsmodels fits with its default BFGS (``maxiter=1000``); R's time is
``polr(..., Hess = TRUE)`` inside R, the data read from a CSV written here (not timed). The
estimates of the three are compared.

Run from the repository root::

    python benchmarks/bench_ordinal.py                     # N in {1e5, 1e6}, p = 10
    python benchmarks/bench_ordinal.py --n 1e5 --skip-r    # quicker
    python benchmarks/bench_ordinal.py --compare-max-n 1e5 # statsmodels and R at 1e5 only

Writes ``benchmarks/results/ordinal.json`` and prints a Markdown table.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _measure import _mem, _reset_peak  # noqa: E402

import glmclass as gc  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
R_SCRIPT = """
suppressPackageStartupMessages(library(MASS))
d <- read.csv(commandArgs(TRUE)[1])
d$y <- factor(d$y, levels = 0:4, ordered = TRUE)
t <- system.time(f <- polr(y ~ ., data = d, Hess = TRUE))[["user.self"]]
cat(format(c(t, logLik(f), coef(f), f$zeta), digits = 17), sep = "\\n")
"""


def data(n: int, p: int, seed: int = 20261128) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = rng.uniform(-1, 1, p) * 2 / np.sqrt(p)
    latent = X @ beta + rng.logistic(size=n)
    cuts = np.quantile(latent, [0.2, 0.4, 0.6, 0.8])
    return X, np.searchsorted(cuts, latent).astype(np.int64)


def timed(fn, repeats: int, warmup: bool = True) -> tuple[float, object]:
    """Median CPU seconds of ``repeats`` calls of ``fn`` (after one untimed call if ``warmup``).

    CPU time of this process (``time.process_time``), not wall time: with one BLAS thread the
    two agree on an idle machine, and on a shared one the CPU time is what the fit itself cost.
    """
    out = fn() if warmup else None
    times = []
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        times.append(time.process_time() - t)
    return statistics.median(times), out


def peak_above(fn) -> int:
    """Peak RSS during ``fn()`` above the RSS before it, in bytes."""
    base = _reset_peak()
    fn()
    return _mem()[1] - base


def timed_with_peak(fn) -> tuple[float, int, object]:
    """One call of ``fn``: its CPU seconds, its peak RSS above the start (bytes), its value.

    For a tool that takes minutes at 1e6 rows (statsmodels), where a warm-up and a separate
    memory run would triple the cost; its import and set-up are paid at the smaller N first.
    """
    box = {}

    def run():
        t = time.process_time()
        box["out"] = fn()
        box["t"] = time.process_time() - t

    peak = peak_above(run)
    return box["t"], peak, box["out"]


def run_r(X: np.ndarray, y: np.ndarray) -> dict | None:
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "d.csv", Path(tmp) / "polr.R"
        frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
        frame["y"] = y
        frame.to_csv(csv, index=False, float_format="%.17g")
        script.write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(script), str(csv)], capture_output=True,
                             text=True, check=True).stdout.split()
    vals = np.array(out, dtype=float)
    return {"seconds": vals[0], "llf": vals[1], "params": vals[2:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, nargs="+", default=[1e5, 1e6])
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-r", action="store_true")
    ap.add_argument("--skip-statsmodels", action="store_true")
    ap.add_argument("--compare-max-n", type=float, default=float("inf"),
                    help="largest N fitted by statsmodels and R too (they take minutes)")
    args = ap.parse_args()
    from statsmodels.miscmodels.ordinal_model import OrderedModel as SMOrdered

    rows = []
    for n in map(int, args.n):
        X, y = data(n, args.p)
        design_bytes = X.nbytes
        t_gc, res = timed(lambda X=X, y=y: gc.OrderedModel(y, X).fit(), args.repeats)
        row = {"n": n, "p": args.p, "levels": 5, "design_MB": design_bytes / 1e6,
               "glmclass_s": t_gc, "glmclass_iterations": res.n_iter,
               "glmclass_peak_MB": peak_above(lambda X=X, y=y: gc.OrderedModel(y, X).fit()) / 1e6,
               "glmclass_llf": res.llf}
        theta = res.params.to_numpy()
        compare = n <= args.compare_max_n
        if compare and not args.skip_statsmodels:
            endog = pd.Series(pd.Categorical(y, categories=range(5), ordered=True))

            def sm_fit(X=X, endog=endog):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return SMOrdered(endog, X, distr="logit").fit(method="bfgs", disp=False,
                                                                   maxiter=1000)

            if n > 200_000:  # minutes a fit: one run, timed and measured at once
                t_sm, sm_peak, sm = timed_with_peak(sm_fit)
            else:
                t_sm, sm = timed(sm_fit, max(1, args.repeats - 2))
                sm_peak = peak_above(sm_fit)
            sp = np.asarray(sm.params, dtype=float)
            sm_theta = np.r_[sp[:args.p], np.cumsum(np.r_[sp[args.p], np.exp(sp[args.p + 1:])])]
            row.update(statsmodels_s=t_sm, statsmodels_llf=float(sm.llf),
                       statsmodels_peak_MB=sm_peak / 1e6,
                       speedup_vs_statsmodels=t_sm / t_gc,
                       max_abs_diff_statsmodels=float(np.max(np.abs(sm_theta - theta))))
        if compare and not args.skip_r:
            r = run_r(X, y)
            if r is not None:
                row.update(polr_s=r["seconds"], polr_llf=r["llf"],
                           speedup_vs_polr=r["seconds"] / t_gc,
                           max_abs_diff_polr=float(np.max(np.abs(r["params"] - theta))))
        rows.append(row)
        print(json.dumps(row))
    meta = {"command": "python benchmarks/bench_ordinal.py " + " ".join(
                f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in vars(args).items()),
            "python": platform.python_version(), "numpy": np.__version__,
            "machine": platform.machine(), "blas_threads": os.environ["OPENBLAS_NUM_THREADS"]}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ordinal.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2)
                                          + "\n")
    print("\n| N | glmclass (s) | peak / design | statsmodels (s) | speed-up | polr (s) | "
          "speed-up |\n|---|---|---|---|---|---|---|")
    nan = float("nan")
    for r in rows:
        print(f"| {r['n']:.0e} | {r['glmclass_s']:.3f} | "
              f"{r['glmclass_peak_MB'] / r['design_MB']:.2f} | "
              f"{r.get('statsmodels_s', nan):.2f} | {r.get('speedup_vs_statsmodels', nan):.1f} | "
              f"{r.get('polr_s', nan):.2f} | {r.get('speedup_vs_polr', nan):.1f} |")


if __name__ == "__main__":
    main()
