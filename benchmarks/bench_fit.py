"""Fit time and peak memory of Logit, Probit, MNLogit: glmclass vs statsmodels, sklearn, glum.

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
    python benchmarks/bench_fit.py --suite issue14 --p 10 50 200 --threads 1 2   # issue 14
    python benchmarks/bench_fit.py --small              # n = 50 ... 5000, in-process medians

``--fresh`` runs every timed fit in its own child process (the memory run is the first of
them); the default times ``--repeats`` more fits in the child that made the memory run.
glmclass and statsmodels fits include their standard errors (``.bse`` is read inside the
timed call); scikit-learn and glum give none.
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
#: reference tool per fitted model (link)
REFERENCES = {"logit": LOGIT_REF, "cloglog": CLOGLOG_REF, "probit": "statsmodels Probit",
              "multinomial": "statsmodels MNLogit"}
#: fallback reference when the reference tool was not run
FALLBACK = {"logit": "glmclass Logit", "cloglog": "glmclass GLM cloglog, no sep. check",
            "probit": "glmclass Probit", "multinomial": "glmclass MNLogit"}

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
    "glmclass Probit": ("probit", "gc.Probit(y, X).fit() (IRLS)"),
    "statsmodels Probit": ("probit", "sm.Probit(y, X).fit(method='newton')"),
    "glmclass MNLogit": ("multinomial", "gc.MNLogit(y, X).fit() (Newton), K = 3"),
    "statsmodels MNLogit": ("multinomial", "sm.MNLogit(y, X).fit(method='newton'), K = 3"),
    "sklearn multinomial lbfgs": ("multinomial", "LogisticRegression(C=inf, solver='lbfgs'), "
                                                 "K = 3"),
}

#: ``--suite`` name -> tools
SUITES = {
    "issue14": ["glmclass Logit", "statsmodels Logit", "sklearn newton-cholesky",
                "sklearn lbfgs", "glum", "glmclass Probit", "statsmodels Probit",
                "glmclass MNLogit", "statsmodels MNLogit",
                "sklearn multinomial lbfgs"],
}


# --------------------------------------------------------------------------------------------
# child process: one tool, one data set
# --------------------------------------------------------------------------------------------
def _generate(n: int, p: int, seed: int, intercept_column: bool, respond):
    """Design (with or without the column of ones) and response, generated in place in row
    chunks: ``respond(z, rng)`` draws the chunk's responses from its standard-normal slopes."""
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
        y[s:e] = respond(z, rng)
    return X, y


def make_data(n: int, p: int, seed: int, intercept_column: bool):
    """Design (with or without the column of ones) and 0/1 response, generated in place."""
    beta = np.random.default_rng(seed + 1).uniform(-1.0, 1.0, p) * 2.0 / np.sqrt(p)
    b0 = -0.5

    def respond(z, rng):
        return rng.random(z.shape[0]) < 1.0 / (1.0 + np.exp(-(b0 + z @ beta)))

    X, y = _generate(n, p, seed, intercept_column, respond)
    return X, y, np.concatenate([[b0], beta])


def make_multinomial(n: int, p: int, seed: int, intercept_column: bool, levels: int = 3):
    """Design and codes 0..K-1 of a baseline-category multinomial logit, generated in place.

    Returns
    -------
    X, y, coef
        ``coef`` of shape ((K-1) (p+1),), level-major with the intercept first (glmclass's and
        statsmodels' order after a transpose).
    """
    B = np.random.default_rng(seed + 1).uniform(-1.0, 1.0, (p, levels - 1)) * 2.0 / np.sqrt(p)
    b0 = np.linspace(-0.3, 0.3, levels - 1)

    def respond(z, rng):
        eta = np.column_stack([np.zeros(z.shape[0]), b0 + z @ B])
        pr = np.exp(eta - eta.max(axis=1, keepdims=True))
        pr /= pr.sum(axis=1, keepdims=True)
        return (rng.random(z.shape[0])[:, None] > np.cumsum(pr, axis=1)[:, :-1]).sum(axis=1)

    X, y = _generate(n, p, seed, intercept_column, respond)
    return X, y, np.vstack([b0, B]).T.ravel()


def _tool(name: str):
    """(construct(X, y) -> model, fit(model) -> (coef, n_iter)) of a tool."""
    if name.startswith("glmclass"):
        import glmclass as gc

        options = {"on_separation": "ignore"} if "no sep." in name else {}
        if name == "glmclass MNLogit":
            def construct(X, y):
                return gc.MNLogit(y, X)

            def fit(m):
                r = m.fit()
                r.bse  # noqa: B018 - standard errors included
                return r.params.to_numpy().T.ravel(), r.n_iter
            return construct, fit
        if name in ("glmclass Logit", "glmclass Probit"):
            cls = gc.Logit if name == "glmclass Logit" else gc.Probit

            def construct(X, y):
                return cls(y, X)
        else:
            fam = gc.families.Binomial(gc.links.CLogLog())

            def construct(X, y):
                return gc.GLM(y, X, family=fam)

        def fit(m):
            r = m.fit(**options)
            r.bse  # noqa: B018 - standard errors included
            return r.params.to_numpy(), r.n_iter
        return construct, fit
    if name.startswith("statsmodels"):
        import statsmodels.api as sm

        if name in ("statsmodels Logit", "statsmodels Probit", "statsmodels MNLogit"):
            cls = {"statsmodels Logit": sm.Logit, "statsmodels Probit": sm.Probit,
                   "statsmodels MNLogit": sm.MNLogit}[name]

            def construct(X, y):
                return cls(y, X)

            def fit(m):
                r = m.fit(method="newton", disp=0, maxiter=100)
                r.bse  # noqa: B018 - standard errors included
                return np.asarray(r.params).T.ravel(), r.mle_retvals["iterations"]
            return construct, fit
        link = sm.families.links.CLogLog() if "cloglog" in name else sm.families.links.Logit()

        def construct(X, y):
            return sm.GLM(y, X, family=sm.families.Binomial(link))

        def fit(m):
            r = m.fit()
            return np.asarray(r.params), r.fit_history["iteration"]
        return construct, fit
    if name.startswith("glum"):
        from glum import GeneralizedLinearRegressor

        def construct(X, y):
            return (GeneralizedLinearRegressor(family="binomial", alpha=0,
                                               gradient_tol=1e-10, fit_intercept=True), X, y)

        def fit(m):
            est, X, y = m
            est.fit(X, y)
            return np.concatenate([[est.intercept_], est.coef_.ravel()]), int(est.n_iter_)
        return construct, fit
    from sklearn.linear_model import LogisticRegression

    solver = name.split()[-1]
    max_iter = 100 if solver == "newton-cholesky" else 10000

    def construct(X, y):
        # C=inf is scikit-learn's spelling of "no penalty" (penalty=None is deprecated in 1.8)
        return (LogisticRegression(C=np.inf, solver=solver, tol=1e-10, max_iter=max_iter), X, y)

    def fit(m):
        est, X, y = m
        est.fit(X, y)
        if est.coef_.shape[0] > 1:  # symmetric softmax: contrasts with the first level
            full = np.column_stack([est.intercept_, est.coef_])
            return (full[1:] - full[0]).ravel(), int(est.n_iter_[0])
        return np.concatenate([est.intercept_, est.coef_.ravel()]), int(est.n_iter_[0])
    return construct, fit


def _probit_response(X, beta, seed, intercept_column):
    """0/1 response of a probit model with coefficients ``beta / 1.7`` (logit-scale slopes)."""
    from scipy.special import ndtr

    rng = np.random.default_rng(seed + 2)
    y = np.empty(X.shape[0])
    b = beta / 1.7
    for s in range(0, X.shape[0], 8192):
        xb = X[s:s + 8192]
        eta = xb @ b if intercept_column else b[0] + xb @ b[1:]
        y[s:s + 8192] = rng.random(xb.shape[0]) < ndtr(eta)
    return y


def child(name: str, n: int, p: int, seed: int, repeats: int) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    construct, fit = _tool(name)
    intercept_column = not (name.startswith("sklearn") or name.startswith("glum"))
    link = TOOLS[name][0]
    gen = make_multinomial if link == "multinomial" else make_data
    Xs, ys, _ = gen(2000, 5, seed, intercept_column)
    fit(construct(Xs, ys))  # warm-up
    del Xs, ys
    if link == "probit":  # probit data: the same design, y from the normal cdf
        X, y, beta = make_data(n, p, seed, intercept_column)
        y = _probit_response(X, beta, seed, intercept_column)
    else:
        X, y, beta = gen(n, p, seed, intercept_column)
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
        "blas": [{k: d.get(k) for k in ("internal_api", "num_threads", "version", "architecture",
                                    "filepath")}
                 for d in threadpool_info()],
    }


#: small mode: rows -> slopes
SMALL = {50: 2, 200: 5, 1000: 10, 5000: 20}
SMALL_TOOLS = ["glmclass Logit", "statsmodels Logit", "glmclass MNLogit", "statsmodels MNLogit"]


def child_small(name: str, n: int, p: int, seed: int, repeats: int) -> dict:
    """Median of ``repeats`` construct + fit runs in this process (after one warm-up fit)."""
    import warnings

    warnings.simplefilter("ignore")
    construct, fit = _tool(name)
    gen = make_multinomial if TOOLS[name][0] == "multinomial" else make_data
    X, y, _ = gen(n, p, seed, True)
    coef, n_iter = fit(construct(X, y))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit(construct(X, y))
        times.append(time.perf_counter() - t0)
    from threadpoolctl import threadpool_info

    return {"tool": name, "n": n, "p": p, "seed": seed, "total_s": statistics.median(times),
            "runs_s": times, "n_iter": int(n_iter), "coef": coef.tolist(),
            "blas": [{k: d.get(k) for k in ("internal_api", "num_threads", "version",
                                            "architecture")}
                     for d in threadpool_info()]}


def run_small(args) -> None:
    """``--small``: glmclass vs statsmodels Logit and MNLogit at n = 50 ... 5000."""
    records = []
    load_start = os.getloadavg()
    for threads in args.threads:
        env = dict(os.environ)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(ROOT)]))
        for n, p in SMALL.items():
            for name in SMALL_TOOLS:
                cmd = [sys.executable, __file__, "--child-small", name, str(n), str(p),
                       str(args.seed), str(args.small_repeats)]
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    raise RuntimeError(f"{name} n={n} failed:\n{out.stderr}")
                rec = json.loads(out.stdout.strip().splitlines()[-1])
                rec["threads"] = threads
                records.append(rec)
                print(f"threads={threads} n={n:<5} p={p:<3} {name:<22} "
                      f"{rec['total_s'] * 1e3:8.2f} ms  iter {rec['n_iter']}", flush=True)
    lines = ["| BLAS threads | n | p | model | glmclass (ms) | statsmodels (ms) "
             "| statsmodels / glmclass | max abs Δcoef |", "|---|---|---|---|---|---|---|---|"]
    for threads in args.threads:
        for n, p in SMALL.items():
            for model in ("Logit", "MNLogit"):
                g = next(r for r in records if r["tool"] == f"glmclass {model}"
                         and r["n"] == n and r["threads"] == threads)
                m = next(r for r in records if r["tool"] == f"statsmodels {model}"
                         and r["n"] == n and r["threads"] == threads)
                d = float(np.max(np.abs(np.subtract(g["coef"], m["coef"]))))
                lines.append(f"| {threads} | {n} | {p} | {model} | {g['total_s'] * 1e3:.2f} "
                             f"| {m['total_s'] * 1e3:.2f} | {m['total_s'] / g['total_s']:.2f} "
                             f"| {d:.1e} |")
    meta = _meta(args, load_start)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"fit_small{'_' + args.tag if args.tag else ''}.json"
    path.write_text(json.dumps({"meta": meta, "records": records}, indent=1))
    print(_header(meta) + "\n".join(lines))
    print(f"\nwritten {path.relative_to(ROOT)}")


def _meta(args, load_start) -> dict:
    command = "python " + shlex.join(["benchmarks/bench_fit.py"] + sys.argv[1:])
    return {"command": command, "machine": platform.platform(), "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "loadavg_start": load_start, "loadavg_end": os.getloadavg()}


def _header(meta: dict) -> str:
    return (f"{meta['date']}, {meta['cpus']} CPUs, Python {meta['python']}, "
            f"OPENBLAS_CORETYPE={meta['openblas_coretype']}; load average (1 min) "
            f"{meta['loadavg_start'][0]:.1f} at the start and {meta['loadavg_end'][0]:.1f} at "
            "the end of the run (other jobs shared the machine).\n\n")


#: issue 14's comparisons: (glmclass tool, peers whose fastest it must beat by 1.5x,
#: statsmodels tool it must beat by the factor)
TARGETS = [("glmclass Logit", ["sklearn newton-cholesky", "sklearn lbfgs", "glum"],
            "statsmodels Logit", 6.0),
           # scikit-learn and glum have no probit link: their logit fits stand in
           ("glmclass Probit", ["sklearn newton-cholesky", "sklearn lbfgs", "glum"],
            "statsmodels Probit", 6.0),
           ("glmclass MNLogit", ["sklearn multinomial lbfgs"], "statsmodels MNLogit", 5.0)]


def targets(records: list[dict]) -> str:
    """Issue 14's ratios per (n, p, threads): peers' time over glmclass's."""
    lines = ["| n | p | BLAS threads | glmclass tool | fit (s) | fastest peer (s) "
             "| peer / glmclass (target) | statsmodels (s) | statsmodels / glmclass (target) |",
             "|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["n"], r["p"], r["threads"]) for r in records})
    for n, p, threads in keys:
        cell = {r["tool"]: r for r in records
                if r["n"] == n and r["p"] == p and r["threads"] == threads}
        for ours, peers, sm_name, factor in TARGETS:
            if ours not in cell:
                continue
            t = cell[ours]["fit_s"] + cell[ours]["construct_s"]
            got = [(cell[q]["fit_s"] + cell[q]["construct_s"], q) for q in peers if q in cell]
            best = min(got) if got else None
            sm = cell.get(sm_name)
            sm_t = sm["fit_s"] + sm["construct_s"] if sm else None
            # small data: no slower than statsmodels; from 1e5 rows the large-N targets
            peer_target, sm_target = ("1.5", factor) if n >= 1e5 else ("none", 1.0)
            lines.append(
                f"| {n:.0e} | {p} | {threads} | {ours} | {t:.4g} | "
                + (f"{best[0]:.4g} ({best[1]}) | {best[0] / t:.2f} ({peer_target})" if best
                   else "| ")
                + " | " + (f"{sm_t:.4g} | {sm_t / t:.2f} ({sm_target:g})" if sm else "| ")
                + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# parent: run the grid, write JSON and Markdown
# --------------------------------------------------------------------------------------------
def run_cell(name: str, n: int, p: int, seed: int, repeats: int, threads: int,
             fresh: bool = False) -> dict:
    """One (tool, p, threads) cell; ``fresh``: every timed fit in its own process (``repeats``
    processes, each a memory run), the cell's numbers their medians."""
    if not fresh:
        return _run_child(name, n, p, seed, repeats, threads)
    runs = [_run_child(name, n, p, seed, 0, threads) for _ in range(max(repeats, 1))]
    rec = dict(runs[0])
    for key in ("construct_s", "fit_s"):
        rec[key] = statistics.median(r[key] for r in runs)
    rec["construct_runs_s"] = [r["construct_s"] for r in runs]
    rec["fit_runs_s"] = [r["fit_s"] for r in runs]
    for key in ("growth_construct_bytes", "growth_fit_bytes", "retained_bytes"):
        rec[key] = int(statistics.median(r[key] for r in runs))
    rec["fresh_processes"] = len(runs)
    return rec


def _run_child(name: str, n: int, p: int, seed: int, repeats: int, threads: int) -> dict:
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
        ref_name = REFERENCES[link]
        ref = next((r for r in records if r["tool"] == ref_name and r["p"] == rec["p"]
                    and r["n"] == rec["n"] and r["threads"] == rec["threads"]), None)
        if ref is None:  # reference tool not run: compare with glmclass
            alt = FALLBACK[link]
            ref = next((r for r in records if r["tool"] == alt and r["p"] == rec["p"]
                        and r["n"] == rec["n"] and r["threads"] == rec["threads"]), None)
        rec["reference"] = ref["tool"] if ref else None
        rec["max_abs_dcoef"] = (float(np.max(np.abs(np.subtract(rec["coef"], ref["coef"]))))
                                if ref else None)


def markdown(records: list[dict]) -> str:
    lines = [
        "fit = median of the timed runs, data already in memory; construct = model "
        "construction (input validation), timed separately. peak/X = 1 + (peak RSS growth over "
        "construction and fit) / size of X; growth is measured with the kernel's peak-RSS mark "
        "(`/proc/self/clear_refs` + `VmHWM`) in a fresh process per cell. |Δcoef| = max absolute "
        "difference from the statsmodels fit of the same model (its Logit for the logit tools).",
        "",
        "| n | p | BLAS threads | tool | construct (s) | fit (s) | iterations | peak/X "
        "| max abs Δcoef |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rec in sorted(records, key=lambda r: (r["n"], r["p"], r["threads"],
                                              list(TOOLS).index(r["tool"]))):
        growth = max(rec["growth_construct_bytes"], rec["growth_fit_bytes"])
        d = rec["max_abs_dcoef"]
        dtxt = "ref" if rec["reference"] == rec["tool"] else (f"{d:.1e}" if d is not None else "")
        lines.append(
            f"| {rec['n']:.0e} | {rec['p']} | {rec['threads']} | {rec['tool']} "
            f"| {rec['construct_s']:.4g} | {rec['fit_s']:.4g} | {rec['n_iter']} "
            f"| {1 + growth / rec['x_bytes']:.2f} | {dtxt} |")
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
    ap.add_argument("--n", type=float, nargs="+", default=[1e6],
                    help="rows, one or more sizes (default 1e6); cells with p > n / 10 are left "
                         "out")
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
    ap.add_argument("--suite", choices=list(SUITES),
                    help="a named set of tools (overrides --tools)")
    ap.add_argument("--fresh", action="store_true",
                    help="every timed fit in a fresh process (--repeats processes per cell)")
    ap.add_argument("--skip", nargs="+", default=[], metavar="TOOL@P",
                    help="cells to leave out, e.g. 'statsmodels MNLogit@200'")
    ap.add_argument("--small", action="store_true",
                    help="n = 50, 200, 1000, 5000: glmclass vs statsmodels Logit and MNLogit")
    ap.add_argument("--small-repeats", type=int, default=40, help="fits per small cell")
    args = ap.parse_args(argv)
    if args.small:
        run_small(args)
        return
    if args.suite:
        args.tools = SUITES[args.suite]
    ns = [int(v) for v in args.n]
    ps = list(dict.fromkeys(args.p + ([200] if args.p200 else [])))
    load_start = os.getloadavg()
    records = []
    for n in ns:
        # few rows: many fits in one process (a fresh process per fit measures start-up noise)
        repeats, fresh = (max(args.repeats, 30), False) if n < 1e5 else (args.repeats, args.fresh)
        for p in ps:
            if p > n / 10:  # too few rows per coefficient for every tool to converge
                continue
            for threads in args.threads:
                for name in args.tools:
                    if f"{name}@{p}" in args.skip or f"{name}@{p}@{n:g}" in args.skip:
                        continue
                    rec = run_cell(name, n, p, args.seed, repeats, threads, fresh)
                    records.append(rec)
                    g = max(rec["growth_construct_bytes"], rec["growth_fit_bytes"]) \
                        / rec["x_bytes"]
                    print(f"n={n:<8.0e} p={p:<4} threads={threads} {name:<36} construct "
                          f"{rec['construct_s']:8.4f} s  fit {rec['fit_s']:8.4f} s  iter "
                          f"{rec['n_iter']:>3}  peak/X {1 + g:5.2f}", flush=True)
    add_agreement(records)
    meta = _meta(args, load_start)
    command = meta["command"]
    RESULTS.mkdir(exist_ok=True)
    stem = (f"fit_n{'-'.join(f'{n:.0e}' for n in ns)}_p{'-'.join(map(str, ps))}"
            .replace("+", ""))
    path = RESULTS / f"{stem}{'_' + args.tag if args.tag else ''}.json"
    path.write_text(json.dumps({"meta": meta, "records": records}, indent=1))
    table = _header(meta) + markdown(records)
    if args.suite:
        table += "\n\nRatios (construct + fit; > 1: glmclass faster):\n\n" + targets(records)
    print(table)
    print(f"\nwritten {path.relative_to(ROOT)}")
    if args.update_readme:
        update_readme(table, command.replace(" --update-readme", ""))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("--child", "--child-small"):
        name, n, p, seed, repeats = sys.argv[2], *map(int, sys.argv[3:7])
        run = child if sys.argv[1] == "--child" else child_small
        print(json.dumps(run(name, n, p, seed, repeats)))
    else:
        main()
