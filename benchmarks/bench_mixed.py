"""Fit time of a random-intercept logistic regression: glmclass's MixedLogit (Laplace) against
R's lme4::glmer (run through Rscript on the same CSV) and statsmodels'
BinomialBayesMixedGLM.fit_vb (variational Bayes: a different estimator, timed beside them).

Synthetic data (seed 27): ``n`` rows, ``groups`` groups drawn uniformly, ``p`` standard-normal
covariates with slopes ``U(-0.5, 0.5)``, intercept -0.3, random-intercept SD 0.7. One BLAS
thread for Python (set before NumPy is imported). Times are CPU seconds of the fit alone
(``time.process_time`` in Python, ``system.time(...)["user.self"]`` in R: the machine this
ran on was shared, so wall-clock times are inflated) and wall seconds beside them; glmclass's
is the median of ``--repeats`` runs after a warm-up; glmer runs once with its defaults
(``nAGQ = 1``, bobyqa then Nelder-Mead: lme4's own stopping rule) and once with
``glmerControl(optimizer = "bobyqa")``. The deviance (-2 log-likelihood) of each fit is
reported, so that speed is not bought with a worse optimum.

Peak memory of glmclass (Linux, ``/proc/self``: VmHWM cleared between phases, see
``_measure.py``), in units of the fixed-effects design's bytes (n x (p + 1) doubles), with the
DataFrame already in memory: the peak while the model is built from the formula and what the
model then holds, the peak of ``fit()`` above the model, and the overall peak of both.
``--profile`` prints where one fit's time goes (cProfile, the 12 costliest functions).

Run from the repository root::

    python benchmarks/bench_mixed.py                         # 1e5 rows, 1e3 groups, p = 5
    python benchmarks/bench_mixed.py --n 1e6 --groups 1e4    # the issue's large case
    python benchmarks/bench_mixed.py --crossed               # + VerbAgg-size crossed design
    python benchmarks/bench_mixed.py --n 1e6 --groups 1e4 --repeats 1 --no-statsmodels \
        --profile --out mixed_1e6.json

Writes ``benchmarks/results/mixed.json`` (``--out`` another name) and prints Markdown tables.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _measure import _mem, _reset_peak  # noqa: E402

import glmclass as gc  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

R_SCRIPT = r"""
suppressMessages(library(lme4))
args <- commandArgs(TRUE)
d <- read.csv(args[1]); for (v in strsplit(args[3], ",")[[1]]) d[[v]] <- factor(d[[v]])
f <- as.formula(args[2])
t1 <- system.time(m1 <- glmer(f, d, binomial))
t2 <- system.time(m2 <- glmer(f, d, binomial, control = glmerControl(optimizer = "bobyqa")))
cat(sprintf("%.6f %.6f %.10f %.6f %.6f %.10f\n", t1[["user.self"]], t1[["elapsed"]],
            -2 * as.numeric(logLik(m1)), t2[["user.self"]], t2[["elapsed"]],
            -2 * as.numeric(logLik(m2))))
"""


def random_intercept(n: int, groups: int, p: int, seed: int = 27) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    g = rng.integers(0, groups, n)
    b = rng.normal(0, 0.7, groups)
    beta = np.r_[-0.3, rng.uniform(-0.5, 0.5, p)]
    eta = beta[0] + X @ beta[1:] + b[g]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    d = pd.DataFrame(X, columns=[f"x{i}" for i in range(1, p + 1)])
    d["g"], d["y"] = g, y
    return d


def crossed(n_a: int = 316, n_b: int = 24, seed: int = 28) -> pd.DataFrame:
    """A VerbAgg-size crossed design: every (a, b) pair once, 316 x 24 = 7,584 rows."""
    rng = np.random.default_rng(seed)
    a, b = np.repeat(np.arange(n_a), n_b), np.tile(np.arange(n_b), n_a)
    x = rng.standard_normal(a.size)
    eta = -0.2 + 0.5 * x + rng.normal(0, 1.2, n_a)[a] + rng.normal(0, 0.6, n_b)[b]
    y = (rng.random(a.size) < 1 / (1 + np.exp(-eta))).astype(int)
    return pd.DataFrame({"a": a, "b": b, "x": x, "y": y})


def time_glmclass(d: pd.DataFrame, formula: str, repeats: int) -> dict:
    def once():
        t, w = time.process_time(), time.perf_counter()
        res = gc.MixedLogit.from_formula(formula, d).fit()
        return time.process_time() - t, time.perf_counter() - w, res

    once()  # warm-up
    runs = [once() for _ in range(repeats)]
    cpu = statistics.median(r[0] for r in runs)
    wall = statistics.median(r[1] for r in runs)
    return {"cpu_s": cpu, "wall_s": wall, "deviance": -2 * runs[-1][2].llf}


def memory_glmclass(d: pd.DataFrame, formula: str) -> dict:
    """Peak RSS of building the model and of its fit, in units of the fixed design's bytes."""
    base = _reset_peak()
    model = gc.MixedLogit.from_formula(formula, d)
    design = float(model.exog.nbytes)
    build_peak = _mem()[1] - base
    held = _reset_peak() - base
    model.fit()
    fit_peak = _mem()[1] - base - held
    return {"design_mb": design / 2**20, "build_peak_x": build_peak / design,
            "model_held_x": held / design, "fit_peak_x": fit_peak / design,
            "overall_peak_x": max(build_peak, held + fit_peak) / design}


def profile_glmclass(d: pd.DataFrame, formula: str, top: int = 12) -> str:
    """cProfile of one model build and fit: the ``top`` functions by own time."""
    prof = cProfile.Profile()
    prof.enable()
    gc.MixedLogit.from_formula(formula, d).fit()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def time_glmer(d: pd.DataFrame, formula: str, factors: list[str]) -> dict | None:
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "d.csv", Path(tmp) / "fit.R"
        d.to_csv(csv, index=False)
        script.write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(script), str(csv), formula, ",".join(factors)],
                             capture_output=True, text=True, check=True).stdout.split()
    v = [float(s) for s in out[-6:]]
    return {"default_cpu_s": v[0], "default_wall_s": v[1], "default_deviance": v[2],
            "bobyqa_cpu_s": v[3], "bobyqa_wall_s": v[4], "bobyqa_deviance": v[5]}


def time_statsmodels(d: pd.DataFrame, fixed: str, vc: dict) -> dict | None:
    try:
        from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM
    except ImportError:
        return None
    t, w = time.process_time(), time.perf_counter()
    BinomialBayesMixedGLM.from_formula(fixed, vc, d).fit_vb()
    return {"cpu_s": time.process_time() - t, "wall_s": time.perf_counter() - w}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--groups", type=float, default=1e3)
    ap.add_argument("--p", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--crossed", action="store_true")
    ap.add_argument("--no-r", action="store_true")
    ap.add_argument("--no-statsmodels", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--out", default="mixed.json", help="file name in benchmarks/results/")
    args = ap.parse_args()
    n, G, p = int(args.n), int(args.groups), args.p
    covs = " + ".join(f"x{i}" for i in range(1, p + 1))
    cases = [(f"random intercept, n={n:.0e}, groups={G:.0e}, p={p}",
              random_intercept(n, G, p), f"y ~ {covs} + (1 | g)", ["g"],
              f"y ~ {covs}", {"g": "0 + C(g)"})]
    if args.crossed:
        cases.append(("crossed 316 x 24 (VerbAgg size)", crossed(), "y ~ x + (1 | a) + (1 | b)",
                      ["a", "b"], "y ~ x", {"a": "0 + C(a)", "b": "0 + C(b)"}))
    rows = []
    for name, d, formula, factors, fixed, vc in cases:
        row = {"case": name, "formula": formula,
               "glmclass": time_glmclass(d, formula, args.repeats)}
        row["glmclass_memory"] = memory_glmclass(d, formula)
        if args.profile:
            row["glmclass_profile"] = profile_glmclass(d, formula)
            print(row["glmclass_profile"])
        row["glmer"] = None if args.no_r else time_glmer(d, formula, factors)
        row["statsmodels_fit_vb"] = None if args.no_statsmodels else time_statsmodels(
            d, fixed, vc)
        rows.append(row)
    RESULTS.mkdir(exist_ok=True)
    meta = {"python": platform.python_version(), "machine": platform.machine(),
            "blas_threads": os.environ["OPENBLAS_NUM_THREADS"]}
    (RESULTS / args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    print("| case | glmclass CPU s (deviance) | glmer default CPU s (deviance) | "
          "glmer bobyqa CPU s (deviance) | statsmodels fit_vb CPU s |")
    print("|---|---|---|---|---|")
    for r in rows:
        g, R, s = r["glmclass"], r["glmer"], r["statsmodels_fit_vb"]
        rcol = (f"{R['default_cpu_s']:.2f} ({R['default_deviance']:.4f}) | "
                f"{R['bobyqa_cpu_s']:.2f} ({R['bobyqa_deviance']:.4f})") if R else "- | -"
        scol = f"{s['cpu_s']:.2f}" if s else "-"
        print(f"| {r['case']} | {g['cpu_s']:.2f} ({g['deviance']:.4f}) | {rcol} | {scol} |")
    print()
    print("| case | design MB | build peak | model holds | fit peak above model | overall |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        m = r["glmclass_memory"]
        print(f"| {r['case']} | {m['design_mb']:.1f} | {m['build_peak_x']:.2f}x | "
              f"{m['model_held_x']:.2f}x | {m['fit_peak_x']:.2f}x | {m['overall_peak_x']:.2f}x |")


if __name__ == "__main__":
    main()
