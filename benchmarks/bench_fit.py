"""Fit time and peak memory of binary GLMs: glmclass vs statsmodels vs scikit-learn.

Synthetic, well-conditioned logistic data (float64, intercept + p standard-normal slopes, fixed
seeds). Every (tool, p, BLAS-thread) cell runs in a fresh child process that

1. imports the tool and warms it up on a tiny problem (imports, BLAS start-up),
2. generates the data in place, in row chunks (no full-size temporaries), so that the
   resident set after generation is the data itself,
3. releases free heap (``malloc_trim``) and resets the kernel's peak-RSS mark
   (``echo 5 > /proc/self/clear_refs``), reads ``VmRSS`` as the baseline, builds the model and
   reads ``VmHWM`` (peak RSS since the reset); resets again, fits, reads ``VmHWM`` again.
   ``growth`` = max of the two peaks minus the baseline: everything the model construction and
   the fit held at their worst moment, on top of the data (X and y) that existed before,
4. then times ``repeats`` more construct + fit runs (data already in memory) and reports
   the median of each.

``peak/X`` in the tables is ``1 + growth / size(X)``: the data plus the fit's peak extra memory
in units of X (the convention of ``PERFORMANCE.md``); ``growth/X`` is the extra alone.
scikit-learn gets the slopes only (``fit_intercept=True``) as its own C-contiguous array, the
others an N x (p+1) array whose first column is ones; the numbers are identical.

Run from the repository root::

    python benchmarks/bench_fit.py                      # N=1e6, p in {10, 50}, 1 and 2 threads
    python benchmarks/bench_fit.py --p200               # ... and p=200 (slow: statsmodels GLM)
    python benchmarks/bench_fit.py --n 1e5 --p 10 --threads 1 --repeats 1   # quick check
    python benchmarks/bench_fit.py --update-readme      # rewrite the table in README.md
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _measure import _mem, _reset_peak

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

LOGIT_REF = "statsmodels Logit"
CLOGLOG_REF = "statsmodels GLM cloglog"

#: tool name -> (link of the fitted model, short description)
TOOLS = {
    "glmclass Logit": ("logit", "gc.Logit(y, X).fit() (IRLS)"),
    "glmclass GLM cloglog": ("cloglog", "gc.GLM(y, X, family=Binomial(CLogLog())).fit()"),
    "glmclass GLM cloglog, no sep. check": (
        "cloglog", "gc.GLM(y, X, family=Binomial(CLogLog())).fit(on_separation='ignore')"),
    "statsmodels Logit": ("logit", "sm.Logit(y, X).fit(method='newton')"),
    "statsmodels GLM logit": ("logit", "sm.GLM(y, X, family=Binomial()).fit() (IRLS)"),
    "statsmodels GLM cloglog": ("cloglog", "sm.GLM(y, X, family=Binomial(CLogLog())).fit()"),
    "sklearn newton-cholesky": ("logit", "LogisticRegression(C=inf, solver='newton-cholesky')"),
    "sklearn lbfgs": ("logit", "LogisticRegression(C=inf, solver='lbfgs')"),
    "glum": ("logit", "GeneralizedLinearRegressor(family='binomial', alpha=0, "
                      "gradient_tol=1e-10)"),
}


# --------------------------------------------------------------------------------------------
# child process: one tool, one data set
# --------------------------------------------------------------------------------------------
def make_data(n: int, p: int, seed: int, intercept_column: bool):
    """Design (with or without the column of ones) and 0/1 response, generated in place."""
    beta = np.random.default_rng(seed + 1).uniform(-1.0, 1.0, p) * 2.0 / np.sqrt(p)
    b0 = -0.5
    rng = np.random.default_rng(seed)
    k = 1 if intercept_column else 0
    X = np.empty((n, p + k))
    if k:
        X[:, 0] = 1.0
    y = np.empty(n)
    chunk = 8192
    for s in range(0, n, chunk):
        e = min(s + chunk, n)
        z = rng.standard_normal((e - s, p))
        X[s:e, k:] = z
        eta = b0 + z @ beta
        y[s:e] = rng.random(e - s) < 1.0 / (1.0 + np.exp(-eta))
    return X, y, np.concatenate([[b0], beta])


def _tool(name: str):
    """(construct(X, y) -> model, fit(model) -> (coef, n_iter)) of a tool."""
    if name.startswith("glmclass"):
        import glmclass as gc

        options = {"on_separation": "ignore"} if "no sep." in name else {}
        if name == "glmclass Logit":
            def construct(X, y):
                return gc.Logit(y, X)
        else:
            fam = gc.families.Binomial(gc.links.CLogLog())

            def construct(X, y):
                return gc.GLM(y, X, family=fam)

        def fit(m):
            r = m.fit(**options)
            return r.params.to_numpy(), r.n_iter
        return construct, fit
    if name.startswith("statsmodels"):
        import statsmodels.api as sm

        if name == "statsmodels Logit":
            def construct(X, y):
                return sm.Logit(y, X)

            def fit(m):
                r = m.fit(method="newton", disp=0, maxiter=100)
                return np.asarray(r.params), r.mle_retvals["iterations"]
            return construct, fit
        link = sm.families.links.CLogLog() if "cloglog" in name else sm.families.links.Logit()

        def construct(X, y):
            return sm.GLM(y, X, family=sm.families.Binomial(link))

        def fit(m):
            r = m.fit()
            return np.asarray(r.params), r.fit_history["iteration"]
        return construct, fit
    if name == "glum":
        from glum import GeneralizedLinearRegressor

        def construct(X, y):
            return (GeneralizedLinearRegressor(family="binomial", alpha=0, gradient_tol=1e-10,
                                               fit_intercept=True), X, y)

        def fit(m):
            est, X, y = m
            est.fit(X, y)
            return np.concatenate([[est.intercept_], est.coef_.ravel()]), int(est.n_iter_)
        return construct, fit
    from sklearn.linear_model import LogisticRegression

    solver = name.split()[1]
    max_iter = 100 if solver == "newton-cholesky" else 10000

    def construct(X, y):
        # C=inf is scikit-learn's spelling of "no penalty" (penalty=None is deprecated in 1.8)
        return (LogisticRegression(C=np.inf, solver=solver, tol=1e-10, max_iter=max_iter), X, y)

    def fit(m):
        est, X, y = m
        est.fit(X, y)
        return np.concatenate([est.intercept_, est.coef_.ravel()]), int(est.n_iter_[0])
    return construct, fit


def child(name: str, n: int, p: int, seed: int, repeats: int) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    construct, fit = _tool(name)
    intercept_column = not (name.startswith("sklearn") or name == "glum")
    Xs, ys, _ = make_data(2000, 5, seed, intercept_column)
    fit(construct(Xs, ys))  # warm-up
    del Xs, ys
    X, y, beta = make_data(n, p, seed, intercept_column)
    base = _reset_peak()
    t0 = time.perf_counter()
    model = construct(X, y)
    t1 = time.perf_counter()
    peak_construct = _mem()[1] - base
    _reset_peak()
    coef, n_iter = fit(model)
    t2 = time.perf_counter()
    peak_fit = _mem()[1] - base
    retained = _mem()[0] - base
    del model
    construct_times, fit_times = [t1 - t0], [t2 - t1]
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        model = construct(X, y)
        t1 = time.perf_counter()
        fit(model)
        t2 = time.perf_counter()
        del model
        construct_times.append(t1 - t0)
        fit_times.append(t2 - t1)
    timed = slice(1, None) if repeats else slice(None)
    from threadpoolctl import threadpool_info

    return {
        "tool": name, "n": n, "p": p, "seed": seed, "x_bytes": X.nbytes,
        "construct_s": statistics.median(construct_times[timed]),
        "fit_s": statistics.median(fit_times[timed]),
        "construct_runs_s": construct_times, "fit_runs_s": fit_times,
        "growth_construct_bytes": peak_construct, "growth_fit_bytes": peak_fit,
        "retained_bytes": retained, "n_iter": int(n_iter), "coef": coef.tolist(),
        "true_coef": beta.tolist(),
        "blas": [{k: d[k] for k in ("internal_api", "num_threads", "version", "filepath")}
                 for d in threadpool_info()],
    }


# --------------------------------------------------------------------------------------------
# parent: run the grid, write JSON and Markdown
# --------------------------------------------------------------------------------------------
def run_cell(name: str, n: int, p: int, seed: int, repeats: int, threads: int) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    # an explicit PYTHONPATH wins (e.g. to benchmark another checkout of glmclass)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(ROOT)]))
    cmd = [sys.executable, __file__, "--child", name, str(n), str(p), str(seed), str(repeats)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{name} p={p} threads={threads} failed:\n{out.stderr}")
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    rec["threads"] = threads
    return rec


def add_agreement(records: list[dict]) -> None:
    """max |coef - reference coef| within each (p, threads) group and link."""
    for rec in records:
        link = TOOLS[rec["tool"]][0]
        ref_name = LOGIT_REF if link == "logit" else CLOGLOG_REF
        ref = next((r for r in records if r["tool"] == ref_name and r["p"] == rec["p"]
                    and r["threads"] == rec["threads"]), None)
        if ref is None:  # reference tool not run: compare with glmclass
            alt = "glmclass Logit" if link == "logit" else "glmclass GLM cloglog, no sep. check"
            ref = next((r for r in records if r["tool"] == alt and r["p"] == rec["p"]
                        and r["threads"] == rec["threads"]), None)
        rec["reference"] = ref["tool"] if ref else None
        rec["max_abs_dcoef"] = (float(np.max(np.abs(np.subtract(rec["coef"], ref["coef"]))))
                                if ref else None)


def markdown(records: list[dict]) -> str:
    n = records[0]["n"]
    lines = [
        f"N = {n:.0e}; fit = median of the timed runs, data already in memory; construct = model "
        "construction (input validation), timed separately. peak/X = 1 + (peak RSS growth over "
        "construction and fit) / size of X; growth is measured with the kernel's peak-RSS mark "
        "(`/proc/self/clear_refs` + `VmHWM`) in a fresh process per cell. |Δcoef| = max absolute "
        "difference from statsmodels (Logit for the logit tools, GLM for cloglog).",
        "",
        "| p | BLAS threads | tool | construct (s) | fit (s) | iterations | peak/X "
        "| max abs Δcoef |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rec in sorted(records, key=lambda r: (r["p"], r["threads"], list(TOOLS).index(r["tool"]))):
        growth = max(rec["growth_construct_bytes"], rec["growth_fit_bytes"])
        d = rec["max_abs_dcoef"]
        dtxt = "ref" if rec["reference"] == rec["tool"] else (f"{d:.1e}" if d is not None else "")
        lines.append(
            f"| {rec['p']} | {rec['threads']} | {rec['tool']} | {rec['construct_s']:.3f} "
            f"| {rec['fit_s']:.3f} | {rec['n_iter']} | {1 + growth / rec['x_bytes']:.2f} "
            f"| {dtxt} |")
    return "\n".join(lines)


def update_readme(table: str, command: str) -> None:
    readme = HERE / "README.md"
    text = readme.read_text()
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    head, rest = text.split(start)
    _, tail = rest.split(end)
    block = f"{start}\nCommand: `{command}`\n\n{table}\n{end}"
    readme.write_text(head + block + tail)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=float, default=1e6, help="rows (default 1e6)")
    ap.add_argument("--p", type=int, nargs="+", default=[10, 50], help="slopes (default 10 50)")
    ap.add_argument("--p200", action="store_true", help="also run p=200 (slow)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="BLAS threads")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per cell (median)")
    ap.add_argument("--tools", nargs="+", default=list(TOOLS), choices=list(TOOLS),
                    metavar="TOOL", help=f"subset of: {', '.join(TOOLS)}")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--tag", default="", help="suffix of the result file name")
    ap.add_argument("--update-readme", action="store_true",
                    help="replace the results table in benchmarks/README.md")
    args = ap.parse_args(argv)
    n = int(args.n)
    ps = list(dict.fromkeys(args.p + ([200] if args.p200 else [])))
    load_start = os.getloadavg()
    records = []
    for p in ps:
        for threads in args.threads:
            for name in args.tools:
                rec = run_cell(name, n, p, args.seed, args.repeats, threads)
                records.append(rec)
                g = max(rec["growth_construct_bytes"], rec["growth_fit_bytes"]) / rec["x_bytes"]
                print(f"p={p:<4} threads={threads} {name:<36} construct {rec['construct_s']:7.3f} s"
                      f"  fit {rec['fit_s']:8.3f} s  iter {rec['n_iter']:>3}  peak/X {1 + g:5.2f}",
                      flush=True)
    add_agreement(records)
    command = "python " + shlex.join(["benchmarks/bench_fit.py"] + (argv or sys.argv[1:]))
    meta = {"command": command, "machine": platform.platform(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                        time.gmtime()),
            "loadavg_start": load_start, "loadavg_end": os.getloadavg()}
    RESULTS.mkdir(exist_ok=True)
    stem = f"fit_n{n:.0e}_p{'-'.join(map(str, ps))}".replace("+", "")
    path = RESULTS / f"{stem}{'_' + args.tag if args.tag else ''}.json"
    path.write_text(json.dumps({"meta": meta, "records": records}, indent=1))
    table = (f"{meta['date']}, {meta['cpus']} CPUs, Python {meta['python']}; load average "
             f"(1 min) {load_start[0]:.1f} at the start and {meta['loadavg_end'][0]:.1f} at the "
             "end of the run (other jobs shared the machine).\n\n" + markdown(records))
    print(table)
    print(f"\nwritten {path.relative_to(ROOT)}")
    if args.update_readme:
        update_readme(table, command.replace(" --update-readme", ""))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        name, n, p, seed, repeats = sys.argv[2], *map(int, sys.argv[3:7])
        print(json.dumps(child(name, n, p, seed, repeats)))
    else:
        main()
