"""Regularisation paths: penalised fits on a log-spaced sequence of alphas, with warm starts,
and their k-fold cross-validated deviance (the body of every ``regularization_path`` method).

The sequence runs from alpha_max, the smallest alpha at which every penalised coefficient is
0 (glmnet's lambda_max), down to ``alpha_min_ratio * alpha_max``. Cross-validation refits the
whole path on each training fold (the full data's alphas, as ``cv.glmnet``) and scores the
held-out rows by their mean deviance; ``alpha_min`` minimises the mean over folds and
``alpha_1se`` is the largest alpha within one standard error of that minimum (ESL §7.10).

References
----------
Friedman, J., Hastie, T. and Tibshirani, R. (2010). *Journal of Statistical Software* 33(1),
§2.5 and §6.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*,
§7.10 (the one-standard-error rule).
"""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np

from ..errors import ConvergenceWarning
from ..solvers import coordinate_descent as CD
from ..solvers.newton import softmax_parts
from . import regularized as R


def check_cv(cv, nrows: int) -> tuple[int, np.ndarray | None]:
    """``cv``: None (no cross-validation), a number of folds, or one fold label per row."""
    if cv is None:
        return 0, None
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if not 2 <= cv <= nrows:
            raise ValueError(f"cv must be a number of folds between 2 and the number of rows "
                             f"({nrows}), got {cv}")
        return int(cv), None
    if isinstance(cv, (str, bytes, bool, float)):
        raise ValueError(f"cv must be a number of folds (e.g. 10) or one fold label per row, "
                         f"got {cv!r}")
    labels = np.asarray(cv)
    if labels.shape != (nrows,):
        raise ValueError(f"cv as fold labels must have one label per row of the model "
                         f"({nrows}), got shape {labels.shape}")
    _, codes = np.unique(labels, return_inverse=True)
    k = int(codes.max()) + 1
    if k < 2:
        raise ValueError("cv as fold labels needs at least two different folds")
    return k, codes


def folds(k: int, strata: np.ndarray | None, nrows: int, seed) -> np.ndarray:
    """Fold codes 0..k-1: stratified by ``strata`` (the response class) when given, each class
    spread evenly over the folds; random with ``seed`` (``numpy.random.default_rng``).

    A row's fold depends only on its position among the model's rows (and, stratified, on the
    responses), never on how the rows are stored: a model on Dask partitions gets the folds
    of the same rows in memory. The codes are a vector per row on the client (as the
    results' ``folds``), and each fold's fit reads its training rows through a row mask.
    """
    rng = np.random.default_rng(seed)
    if strata is None:
        order = rng.permutation(nrows)
    else:
        order = np.concatenate([rng.permutation(np.flatnonzero(strata == s))
                                for s in np.unique(strata)])
    out = np.empty(nrows, dtype=int)
    out[order] = np.arange(nrows) % k
    return out


def _sequence(n_alphas, alpha_min_ratio, alphas, nobs: float, m: int, amax: float
              ) -> np.ndarray:
    if alphas is not None:
        a = np.asarray(alphas, dtype=float).ravel()
        if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError("alphas must be finite numbers >= 0")
        return np.sort(a)[::-1]
    n = R.check_int(n_alphas, "n_alphas", 1)
    if alpha_min_ratio is None:
        ratio = 1e-4 if nobs > m else 1e-2  # glmnet's lambda.min.ratio
    else:
        ratio = R.real_number(alpha_min_ratio, "alpha_min_ratio")
        if not 0 < ratio < 1:
            raise ValueError(f"alpha_min_ratio must be in (0, 1), got {alpha_min_ratio!r}")
    if not amax > 0:
        raise ValueError("every penalised coefficient is already 0 without a penalty (the "
                         "gradient at the unpenalised fit vanishes): give alphas explicitly")
    return CD.lambda_sequence(amax, n, ratio)


def _glm_test_deviance(model, test: np.ndarray, coefs: np.ndarray) -> tuple[np.ndarray, float]:
    """Mean deviance of the rows ``test`` at each row of ``coefs`` (n_alphas, p), and their
    total prior weight: one pass over the held-out rows."""
    fam = model.family
    n = coefs.shape[0]

    def one(b):
        eta = b.X @ coefs.T + b.offset[:, None]
        w = np.ascontiguousarray(b.weights)  # a broadcast view's dot product sums otherwise
        dev = np.array([w @ fam.unit_deviance(b.y, eta[:, j]) for j in range(n)])
        return dev, float(w.sum())

    dev, total = R.model_blocks(model).take_rows(test).reduce(one, (np.zeros(n), 0.0))
    return (dev / total if total > 0 else np.full(n, np.nan)), total


def _mn_test_deviance(model, test: np.ndarray, coefs: np.ndarray) -> tuple[np.ndarray, float]:
    """As :func:`_glm_test_deviance` for an MNLogit (coefficients level-major)."""
    k1, n = model.K - 1, coefs.shape[0]

    def one(b):
        rows = np.arange(b.X.shape[0])
        w = np.ascontiguousarray(b.weights)
        out = np.empty(n)
        for j, c in enumerate(coefs):
            eta = b.X @ c.reshape(k1, -1).T + b.offset[:, None]
            lse, _, _ = softmax_parts(eta)
            obs = np.where(b.y > 0, eta[rows, np.maximum(b.y - 1, 0)], 0.0)
            out[j] = -2.0 * float(w @ (obs - lse))
        return out, float(w.sum())

    dev, total = R.model_blocks(model).take_rows(test).reduce(one, (np.zeros(n), 0.0))
    return (dev / total if total > 0 else np.full(n, np.nan)), total


def _progress(disp: bool, n_folds: int):
    """A ``report(k, alpha, ratio, n_iter)`` printing a line per alpha, or None."""
    if not R.check_bool(disp, "disp"):
        return None, None
    start = time.perf_counter()

    def header(what: str) -> None:
        print(f"{what}\n{'alpha':>5} {'value':>11} {'dev. ratio':>10} {'steps':>5} "
              f"{'time (s)':>8}", flush=True)

    def report(k: int, alpha: float, ratio: float, n_iter: int) -> None:
        print(f"{k + 1:>5} {alpha:>11.4e} {ratio:>10.5f} {n_iter:>5d} "
              f"{time.perf_counter() - start:>8.2f}", flush=True)

    return header, report


def regularization_path(model, n_alphas, L1_wt, alpha_min_ratio, alphas, cv, seed,
                        standardize, penalty_factor, stratify, maxiter, tol, results_cls,
                        disp=False):
    """Validate, fit the path (and the folds' paths) and build the results.

    A generated sequence stops early as glmnet's (``coordinate_descent.fit_path``'s ``stop``):
    the results hold the alphas fitted, and the folds refit exactly those. ``disp=True``
    prints a line per alpha of the full-data path and per fold."""
    L1_wt = R.check_l1_wt(L1_wt)
    standardize = R.check_bool(standardize, "standardize")
    stratify = R.check_bool(stratify, "stratify")
    seed = R.check_seed(seed)
    control = R.cd_control(maxiter, tol)
    mn = R.is_multinomial(model)
    icpt = model.data.intercept_index
    pf = R.penalty_factors(penalty_factor, model.exog_names, icpt)
    R.check_no_constant(model, icpt)
    nrows = model.data.nrows
    k, given = check_cv(cv, nrows)
    build = R.mnlogit_rows if mn else R.glm_rows
    rows = build(model, None, standardize)
    header, report = _progress(disp, k)

    def path_on(r: R.Rows, seq: np.ndarray | None, report=None):
        l1u, l2u = r.unit_weights(pf, L1_wt)
        null = CD.null_fit(r.oracle, r.start, l1u, control)
        l1max, _ = r.unit_weights(pf, max(L1_wt, 1e-3))  # glmnet's alpha_max for ridge
        amax = CD.alpha_max(null.gradient, l1max)
        stop = seq is None and alphas is None  # glmnet stops the sequence it generates
        if seq is None:
            nobs = r.total if mn else model.problem.nobs
            seq = _sequence(n_alphas, alpha_min_ratio, alphas, nobs, pf.size, amax)
        fit = CD.fit_path(r.oracle, null, seq, l1u, l2u, control, stop, report)
        seq = seq[: fit.coef.shape[0]]
        coefs = np.array([r.to_original(c) for c in fit.coef])
        return seq, amax, fit, coefs

    if header is not None:
        header("regularization path" + (f", then {k} folds" if k else ""))
    seq, amax, fit, coefs = path_on(rows, None, report)
    if not fit.converged.all():
        bad = seq[~fit.converged]
        warnings.warn(f"the penalised fit did not converge at {bad.size} of {seq.size} alphas "
                      f"(the largest {bad[0]:.4g}); raise maxiter, or standardize the columns "
                      "(near-separated data need large coefficients at small alphas)",
                      ConvergenceWarning, stacklevel=3)
    cv_raw = cv_weight = fold = None
    if k:
        if given is not None:
            fold = given
        else:
            strata = None
            if stratify:  # the response, on the client: the folds are a vector per row
                strata = np.asarray(model.codes) if mn else (
                    np.asarray(model.endog) if model.levels is not None else None)
            fold = folds(k, strata, nrows, seed)
        cv_raw, cv_weight = np.empty((k, seq.size)), np.empty(k)
        score = _mn_test_deviance if mn else _glm_test_deviance
        for j in range(k):
            test = fold == j
            if header is not None:
                header(f"fold {j + 1} of {k}")
            _, _, _, fcoefs = path_on(build(model, ~test, standardize), seq, report)
            cv_raw[j], cv_weight[j] = score(model, test, fcoefs)
    return results_cls(model, seq, coefs, fit, amax, L1_wt=L1_wt, penalty_factor=pf,
                       standardize=standardize, scale=rows.scale, cv_raw=cv_raw,
                       cv_weight=cv_weight, folds=fold, seed=seed, total=rows.total)
