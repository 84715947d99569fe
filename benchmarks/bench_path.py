"""Lasso logistic regression path with 10-fold CV: glmclass vs R glmnet vs scikit-learn.

The same work for every tool, in one run: the same synthetic data (N rows, p standard-normal
columns, 10 non-zero slopes, seeded), the same 100 penalties (glmclass's log-spaced sequence
from alpha_max down to 1e-4 alpha_max, passed to glmnet as ``lambda``) and the same 10 folds
(glmclass's stratified, seeded folds, passed to ``cv.glmnet`` as ``foldid`` and to scikit-learn
as explicit splits). Times are wall-clock of the whole cross-validated path (the full-data path
plus the ten fold paths):

- glmclass: ``Logit(y, X).regularization_path(100, cv=10, seed=..., tol=...)`` at the default
  ``tol=1e-10`` (KKT conditions on the scale of the data) and at ``tol=1e-6``;
- R glmnet: ``cv.glmnet(x, y, family="binomial", lambda=, foldid=, standardize=FALSE)``, timed
  inside R with ``system.time``, at glmnet's default ``thresh=1e-7`` and at ``thresh=1e-14``
  (the accuracy glmclass converges to);
- scikit-learn: ``LogisticRegressionCV(penalty="l1", solver="saga", Cs=1/(n alpha),
  cv=<the folds>, tol=1e-4)`` (``--sklearn-solver liblinear`` for liblinear, which also
  penalises the intercept); ``--no-sklearn`` skips it.

Agreement: max |coef difference| of the full-data paths against glmnet at thresh 1e-14, for
every glmclass run and for glmnet at its default thresh.
BLAS threads are set by ``--threads`` (default 1: glmnet's Fortran is single-threaded)
before NumPy is imported. Results go to ``benchmarks/results/path_n<N>_p<p>.json``.

With ``--breast-cancer``, the analyst's task of issue 26 instead: scikit-learn's breast-cancer
data (569 rows, 30 columns), ``Logit(y, X).regularization_path(50, cv=10, standardize=True)``
against ``LogisticRegressionCV(Cs=50, cv=<the same 10 folds>, penalty="l1", solver=...)`` on
the standardised columns, for the solvers "saga" and "liblinear" (scikit-learn's defaults
otherwise: tol 1e-4, max_iter 100, its own grid of 50 Cs from 1e-4 to 1e4), each timed
``--repeats`` times (the best and the median are kept).

Command (repository root)::

    python benchmarks/bench_path.py                      # N = 1e5, p = 50
    python benchmarks/bench_path.py --n 2e4 --p 20       # a quick check
    python benchmarks/bench_path.py --breast-cancer      # the analyst's 569 x 30 task
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent

R_SCRIPT = r"""
suppressPackageStartupMessages(library(glmnet))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; n <- as.integer(args[2]); p <- as.integer(args[3])
x <- matrix(readBin(file.path(dir, "X.bin"), "double", n * p), n, p)
y <- readBin(file.path(dir, "y.bin"), "double", n)
lambda <- readBin(file.path(dir, "lambda.bin"), "double", 10000)
foldid <- readBin(file.path(dir, "foldid.bin"), "integer", n)
out <- list()
for (thresh in c(1e-7, 1e-14)) {
  t <- system.time(cv <- cv.glmnet(x, y, family = "binomial", lambda = lambda,
                                   foldid = foldid, standardize = FALSE, thresh = thresh,
                                   type.measure = "deviance"))
  b <- as.matrix(coef(cv$glmnet.fit))
  out[[length(out) + 1]] <- list(thresh = thresh, seconds = t[["elapsed"]],
                                 lambda_min = cv$lambda.min, coef = as.vector(b))
}
writeLines(jsonlite::toJSON(out, digits = NA, auto_unbox = TRUE), file.path(dir, "r.json"))
"""


def make_data(n: int, p: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:10] = rng.uniform(-1, 1, min(10, p))
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta - 0.5)))).astype(float)
    return X, y


def _timed(fn, repeats: int) -> tuple[float, float, object]:
    import statistics

    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), out


def breast_cancer(args) -> None:
    """glmclass's cross-validated lasso path against LogisticRegressionCV on breast cancer."""
    import warnings

    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegressionCV

    import glmclass as gc

    data = load_breast_cancer()
    X, y = data.data, data.target.astype(float)
    model = gc.Logit(y, np.column_stack([np.ones(len(y)), X]))
    record: dict = {"task": "breast_cancer", "n": len(y), "p": X.shape[1], "folds": 10,
                    "threads": args.threads, "repeats": args.repeats}
    best, median, path = _timed(lambda: model.regularization_path(
        50, cv=10, standardize=True, seed=args.seed), args.repeats)
    record.update(glmclass_best_seconds=best, glmclass_median_seconds=median,
                  glmclass_alphas=int(path.alphas.size), glmclass_steps=int(path.n_iter.sum()),
                  glmclass_alpha_min=path.alpha_min)
    print(f"glmclass regularization_path(50, cv=10, standardize=True): best {best:.2f} s, "
          f"median {median:.2f} s ({path.alphas.size} alphas after glmnet's early stop)")
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    splits = [(np.flatnonzero(path.folds != k), np.flatnonzero(path.folds == k))
              for k in range(10)]
    for solver in ("saga", "liblinear"):
        clf = LogisticRegressionCV(Cs=50, cv=splits, penalty="l1", solver=solver,
                                   scoring="neg_log_loss", n_jobs=1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            best, median, _ = _timed(lambda c=clf: c.fit(Z, y), args.repeats)
        record[f"sklearn_{solver}_best_seconds"] = best
        record[f"sklearn_{solver}_median_seconds"] = median
        record[f"sklearn_{solver}_convergence_warnings"] = sum(
            issubclass(w.category, ConvergenceWarning) for w in caught)
        print(f"LogisticRegressionCV(Cs=50, cv=10, penalty='l1', solver={solver!r}): "
              f"best {best:.2f} s, median {median:.2f} s")
    for solver in ("saga", "liblinear"):
        record[f"speedup_vs_{solver}"] = (record[f"sklearn_{solver}_median_seconds"]
                                          / record["glmclass_median_seconds"])
    from threadpoolctl import threadpool_info

    record["blas"] = threadpool_info()
    record["python"] = sys.version.split()[0]
    out = HERE / "results" / "path_breast_cancer.json"
    out.write_text(json.dumps(record, indent=2, default=float) + "\n")
    print("wrote", out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-10, 1e-6],
                    help="glmclass tol values (the first is compared with glmnet)")
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--sklearn-solver", default="saga", choices=("saga", "liblinear"))
    ap.add_argument("--breast-cancer", action="store_true",
                    help="the 569 x 30 breast-cancer task against LogisticRegressionCV")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    if args.breast_cancer:
        breast_cancer(args)
        return
    import numpy as np

    import glmclass as gc

    n, p = int(args.n), args.p
    X, y = make_data(n, p, args.seed)
    Xd = np.column_stack([np.ones(n), X])
    record: dict = {"n": n, "p": p, "seed": args.seed, "threads": args.threads,
                    "n_alphas": 100, "folds": 10}

    model = gc.Logit(y, Xd)
    paths = {}
    for tol in args.tols:
        t = time.perf_counter()
        path = model.regularization_path(100, cv=10, seed=args.seed, tol=tol)
        key = f"glmclass_tol_{tol:g}"
        record[key + "_seconds"] = time.perf_counter() - t
        record[key + "_steps"] = int(path.n_iter.sum())
        record[key + "_alpha_min"] = path.alpha_min
        paths[key] = path
        print(f"glmclass tol={tol:g}: {record[key + '_seconds']:.2f} s (path + 10 folds, "
              f"100 alphas)")
    path = paths[f"glmclass_tol_{args.tols[0]:g}"]

    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        np.asfortranarray(X).T.tofile(d / "X.bin")  # column-major, as R reads it
        y.tofile(d / "y.bin")
        path.alphas.tofile(d / "lambda.bin")
        (path.folds.astype(np.int32) + 1).tofile(d / "foldid.bin")
        (d / "run.R").write_text(R_SCRIPT)
        env = dict(os.environ)
        subprocess.run(["Rscript", str(d / "run.R"), str(d), str(n), str(p)], check=True,
                       env=env)
        r = json.loads((d / "r.json").read_text())
    for item in r:
        key = "glmnet_thresh_" + ("1e-7" if item["thresh"] > 1e-10 else "1e-14")
        record[key + "_seconds"] = item["seconds"]
        record[key + "_alpha_min"] = item["lambda_min"]
        theirs = np.asarray(item["coef"]).reshape(path.alphas.size, p + 1)
        record[key + "_max_abs_diff"] = float(np.max(np.abs(theirs - path.coefs.to_numpy())))
        print(f"glmnet thresh={item['thresh']:g}: {item['seconds']:.2f} s, max |coef diff| "
              f"{record[key + '_max_abs_diff']:.2e}")
        if item["thresh"] < 1e-10:  # every glmclass run against the most accurate glmnet
            for name, other in paths.items():
                record[name + "_max_abs_diff"] = float(np.max(np.abs(
                    theirs - other.coefs.to_numpy())))

    if not args.no_sklearn:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegressionCV

        folds = path.folds
        splits = [(np.flatnonzero(folds != k), np.flatnonzero(folds == k)) for k in range(10)]
        Cs = 1.0 / (n * path.alphas)
        clf = LogisticRegressionCV(Cs=Cs, cv=splits, penalty="l1", solver=args.sklearn_solver,
                                   tol=1e-4, scoring="neg_log_loss", n_jobs=1)
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            clf.fit(X, y)
        record[f"sklearn_{args.sklearn_solver}_seconds"] = time.perf_counter() - t
        record[f"sklearn_{args.sklearn_solver}_convergence_warnings"] = sum(
            issubclass(w.category, ConvergenceWarning) for w in caught)
        record[f"sklearn_{args.sklearn_solver}_alpha_min"] = float(1.0 / (n * clf.C_[0]))
        print(f"scikit-learn {args.sklearn_solver}: "
              f"{record[f'sklearn_{args.sklearn_solver}_seconds']:.2f} s")

    from threadpoolctl import threadpool_info

    record["blas"] = threadpool_info()
    record["python"] = sys.version.split()[0]
    out = HERE / "results" / f"path_n{n:.0e}_p{p}.json".replace("+0", "")
    out.write_text(json.dumps(record, indent=2, default=float) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
