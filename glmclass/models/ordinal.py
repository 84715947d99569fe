"""OrderedModel: cumulative-link models for ordered responses (proportional odds and its
relatives), R's ``MASS::polr`` and ``ordinal::clm``.

``P(Y <= k | x) = F(zeta_k - x'b - offset)`` with F the inverse of a logit, probit, cloglog,
loglog or cauchit link. The mathematics is :class:`~glmclass.likelihoods.ordinal.
OrdinalLikelihood`; this file validates the data, orders the levels and runs the Newton
solver with the thresholds kept ordered (first threshold and log increments).

References
----------
McCullagh, P. (1980). Regression models for ordinal data. *JRSS B* 42, 109-142.
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, §7.3.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..data.model_data import ModelData, check_finite
from ..data.response import encode, levels_of
from ..errors import ConvergenceWarning, warn_user
from ..likelihoods.ordinal import NominalOrdinalLikelihood, OrdinalLikelihood
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..progress import IterationLog
from ..results.ordinal import OrderedResults
from ..results.robust import cov_spec
from ..rows.blocks import ArrayBlocks, Block, RowBlocks
from ..rows.constant import constant
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..solvers.solve import solve as solve_problem
from .base import Model, check_option, check_weight_facts, check_weights, fit_control
from .class_setup import tidy_labels


def ordered_levels(y, name: str) -> list:
    """The levels of an ordinal response in order: a Categorical's category order, else
    sorted.

    Raises
    ------
    ValueError
        A category with no rows (naming it), or fewer than two levels.
    """
    if isinstance(getattr(y, "dtype", None), pd.CategoricalDtype):
        cats = list(y.dtype.categories)
        present = set(pd.unique(pd.Series(y).dropna()))
        empty = [c for c in cats if c not in present]
        if empty:
            raise ValueError(f"level {empty[0]!r} of the ordinal response {name!r} has no rows: "
                             "drop the unused categories (y.cat.remove_unused_categories()) "
                             "or merge the level with a neighbour")
        levels = cats
    else:
        levels = levels_of(y, name)
    if len(levels) < 2:
        raise ValueError(f"the ordinal response {name!r} has {len(levels)} level(s): it needs "
                         "at least two ordered levels")
    return levels


def alpha_to_zeta(alpha: np.ndarray) -> np.ndarray:
    """Thresholds from the first one and the logs of the increments (always increasing)."""
    if alpha.size == 0:
        return alpha.copy()
    with np.errstate(over="ignore"):
        return np.cumsum(np.concatenate([alpha[:1], np.exp(alpha[1:])]))


def zeta_to_alpha(zeta: np.ndarray) -> np.ndarray:
    """The inverse of :func:`alpha_to_zeta` for increasing thresholds."""
    return np.concatenate([zeta[:1], np.log(np.diff(zeta))])


def ordinal_objective(likelihood: OrdinalLikelihood, rows: RowBlocks, k: int,
                      ordered: bool = True):
    """The deviance in ``(b, alpha)``, alpha = (zeta_1, log increments), as an objective for
    :func:`~glmclass.solvers.newton.newton`: one reduce of p x p partials per evaluation.

    Notes
    -----
    With ``zeta = T(alpha)`` and J its Jacobian (``dzeta_j / dalpha_0 = 1``,
    ``dzeta_j / dalpha_m = exp(alpha_m)`` for 1 <= m <= j), the Hessian of the log-likelihood
    in alpha is ``J' H J + diag(exp(alpha_m) sum_{j >= m} g_j)`` (g the gradient in zeta);
    with ``ordered=False`` the parameters after the k coefficients are used as they are
    (the threshold-specific effects of a partial proportional-odds model);
    the second term is used only where it makes the step more conservative (it vanishes at
    the estimate, so the last steps are Newton's).
    """
    m = k + likelihood.n_extra
    K1 = likelihood.n_extra

    def theta_of(coef: np.ndarray) -> np.ndarray:
        if not ordered:
            return coef
        return np.concatenate([coef[:k], alpha_to_zeta(coef[k:])])

    def evaluate(coef: np.ndarray, derivatives: bool):
        theta = theta_of(coef)
        if not np.isfinite(theta).all():
            return np.inf, None, None
        if not derivatives:
            ll = rows.reduce(lambda b: float(np.sum(likelihood.loglike_obs(b, theta))), 0.0)
            return (-2.0 * ll if np.isfinite(ll) else np.inf), None, None
        ll, g, info = rows.reduce(lambda b: likelihood.information(b, theta),
                                  (0.0, np.zeros(m), np.zeros((m, m))))
        if not np.isfinite(ll):
            return np.inf, None, None
        if not ordered:
            return -2.0 * ll, -2.0 * g, 2.0 * info
        e = np.exp(coef[k + 1:])
        J = np.eye(m)
        T = np.zeros((K1, K1))
        T[:, 0] = 1.0
        for j in range(1, K1):
            T[j:, j] = e[j - 1]
        J[k:, k:] = T
        ga = J.T @ g
        Ha = J.T @ info @ J  # minus the log-likelihood's Hessian in alpha, without ...
        tail = np.cumsum(g[k:][::-1])[::-1]  # sum_{j >= m} g_j
        idx = k + np.arange(1, K1)
        # ... the curvature of the exponentials, -exp(alpha_m) sum_{j >= m} g_j: kept where
        # it adds to the diagonal, so far from the estimate (where it may be negative) the
        # step stays a descent direction; at the estimate g = 0 and the term vanishes
        Ha[idx, idx] += np.maximum(-e * tail[1:], 0.0)
        return -2.0 * ll, -2.0 * ga, 2.0 * Ha

    evaluate.theta_of = theta_of
    return evaluate


def solve(likelihood: OrdinalLikelihood, rows: RowBlocks, start: np.ndarray,
          control: Control) -> tuple[np.ndarray, Fit]:
    """The one call of the Newton solver: the estimates ``(b, zeta)`` and its record
    (whose ``coef`` is in ``(b, alpha)``); for a partial proportional-odds likelihood the
    parameters as they are."""
    ordered = not isinstance(likelihood, NominalOrdinalLikelihood)
    k = len(start) - likelihood.n_extra
    objective = ordinal_objective(likelihood, rows, k, ordered)
    if ordered:
        start = np.concatenate([start[:k], zeta_to_alpha(start[k:])])
    fit = solve_problem(objective, None, control, start=start)
    return objective.theta_of(fit.coef), fit


def information(likelihood: OrdinalLikelihood, rows: RowBlocks,
                theta: np.ndarray) -> np.ndarray:
    """Minus the Hessian of the log-likelihood in ``(b, zeta)`` at ``theta``, one pass."""
    m = theta.size
    return rows.reduce(lambda b: likelihood.information(b, theta),
                       (0.0, np.zeros(m), np.zeros((m, m))))[2]


def _coded_part(part: tuple, levels: list) -> tuple:
    """``(X, codes, prior weights, offset)`` of one partition (run where it lives)."""
    X, y, arrays, _ = part
    f, v = arrays.get("freq_weights"), arrays.get("var_weights")
    w = f if v is None else (v if f is None else f * v)
    return (X, encode(y, levels), w, arrays.get("offset"))


def _codes(b: Block) -> np.ndarray:
    return b.y


class OrderedModel(Model):
    """Cumulative-link model for an ordered response (proportional odds for the logit).

    ``P(Y <= k | x) = F(zeta_k - x'b - offset)``, k = 1..K-1, with increasing thresholds
    ``zeta`` and F the inverse of the link: a positive coefficient moves the response to
    higher levels (the sign of polr and clm).

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Ordered response: a pandas Categorical keeps its category order; other labels are
        sorted. A category with no rows is an error.
    exog : array-like of shape (n_obs, p)
        Design without a constant column (the thresholds are the intercepts).
    link : {"logit", "probit", "cloglog", "loglog", "cauchit"} or a link instance
    freq_weights : array-like of shape (n_obs,), optional
        Replication counts (counted in ``nobs``).
    var_weights : array-like of shape (n_obs,), optional
        Prior weights of the rows' log-likelihoods (not counted in ``nobs``).
    offset : array-like of shape (n_obs,), optional
        Known term added to ``x'b``.
    missing : {"drop", "raise"}

    Notes
    -----
    ``from_formula`` drops the formula's intercept (the thresholds take its place); the
    model is immutable and :meth:`fit` returns a new results object.

    References
    ----------
    Agresti, A. (2010). *Analysis of Ordinal Categorical Data*, 2nd ed., ch. 3 and 5.
    """

    row_args = ("freq_weights", "var_weights", "offset")
    _features_only = True  # the formula's intercept is absorbed by the thresholds

    def __init__(self, endog, exog, link="logit", freq_weights=None, var_weights=None,
                 offset=None, missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, link=link, freq_weights=freq_weights,
                         var_weights=var_weights, offset=offset)

    def _setup(self, data: ModelData, link="logit") -> None:
        name = data.endog_name
        if data.intercept_index is not None:
            col = data.exog_names[data.intercept_index]
            raise ValueError(f"exog column {col!r} is a constant: an ordinal model has no "
                             "intercept (the thresholds take its place); drop the column")
        a = data.arrays
        if data.in_memory:
            check_finite(data)
            check_weights(a)
            levels = ordered_levels(data.endog, name)
            endog = data.endog
            if isinstance(getattr(endog, "dtype", None), pd.CategoricalDtype):
                endog = np.asarray(endog, dtype=object)
            codes = encode(endog, levels)
            n = data.nrows
            f, v = a.get("freq_weights"), a.get("var_weights")
            w = constant(1.0, n) if f is None and v is None else (
                f if v is None else (v if f is None else f * v))
            offset = a["offset"] if a.get("offset") is not None else constant(0.0, n)
            source = ArrayBlocks(data.exog, codes, w, offset)
            has_offset = a.get("offset") is not None
        else:  # rows in partitions (Dask): every pass is a reduce over the row source
            check_weight_facts(data.facts.arrays)
            levels = ordered_levels(data.facts.response.surrogate(), name)
            given = data.facts.arrays
            source = data.encoded_rows(_coded_part, levels, y_dtype=np.intp, persist=False)
            codes = source.map(_codes)
            f = data.row_array("freq_weights", 1.0) if "freq_weights" in given else None
            v = data.row_array("var_weights", 1.0) if "var_weights" in given else None
            w = None
            offset = data.row_array("offset", 0.0)
            has_offset = "offset" in given
        totals = source.reduce(lambda b: np.bincount(b.y, weights=np.broadcast_to(
            b.weights, b.y.shape), minlength=len(levels)).astype(float), np.zeros(len(levels)))
        if np.any(totals <= 0):
            lv = levels[int(np.flatnonzero(totals <= 0)[0])]
            raise ValueError(f"level {lv!r} of {name!r} has no rows with positive weight: drop "
                             "the level or merge it with a neighbour")
        self.levels = tidy_labels(list(levels))
        self.codes = codes
        self.freq_weights = f
        self.var_weights = v
        self.prior_weights = w
        self.offset = offset
        self.likelihood = OrdinalLikelihood(len(levels), link)
        self._totals = totals
        self._source = source
        self._has_offset = has_offset

    @property
    def K(self) -> int:
        """Number of response levels."""
        return self.likelihood.K

    @property
    def link(self):
        """The link whose inverse is the CDF F."""
        return self.likelihood.link

    @property
    def endog_names(self) -> str:
        """The response's name."""
        return self.data.endog_name

    def row_blocks(self, keep: np.ndarray | None = None) -> RowBlocks:
        """The rows: design (the ``keep`` columns), codes, prior weights, offset; in memory
        or in the data's partitions."""
        return self._source if keep is None else self._source.take_columns(keep)

    @property
    def nobs(self) -> float:
        """Observations, counting frequency weights."""
        if self.freq_weights is None:
            return float(self.data.nrows)
        return float(np.sum(self.freq_weights))

    def start_params(self) -> np.ndarray:
        """Zero coefficients and the thresholds of the marginal cumulative shares."""
        t = self._totals
        cum = np.cumsum(t)[:-1] / t.sum()
        zeta = np.asarray(self.link.link(cum), dtype=float)
        if np.any(np.diff(zeta) <= 0) or not np.isfinite(zeta).all():
            zeta = np.arange(self.K - 1, dtype=float) - (self.K - 2) / 2.0
        return np.concatenate([np.zeros(len(self.exog_names)), zeta])

    # --- the likelihood at any parameters (statsmodels' names) --------------------------------
    def loglike(self, params) -> float:
        """Log-likelihood at ``params`` = (b, zeta)."""
        p = np.asarray(params, dtype=float)
        return float(self.row_blocks().reduce(
            lambda b: float(np.sum(self.likelihood.loglike_obs(b, p))), 0.0))

    def score(self, params) -> np.ndarray:
        """Gradient of the log-likelihood in (b, zeta)."""
        p = np.asarray(params, dtype=float)
        return self.row_blocks().reduce(lambda b: self.likelihood.information(b, p)[1],
                                        np.zeros(p.size))

    def information(self, params) -> np.ndarray:
        """Observed information (minus the Hessian) in (b, zeta)."""
        return information(self.likelihood, self.row_blocks(), np.asarray(params, dtype=float))

    def hessian(self, params) -> np.ndarray:
        """Hessian of the log-likelihood in (b, zeta)."""
        return -self.information(params)

    # --- the fit ------------------------------------------------------------------------------
    def fit(self, method: str = "newton", maxiter: int = 50, tol: float = 1e-10,
            cov_type: str = "nonrobust", cov_kwds: dict | None = None, disp: bool = False,
            start_params=None) -> OrderedResults:
        """Maximum-likelihood fit by Newton's method (exact Hessian, step-halving).

        Parameters
        ----------
        method : {"newton"}
        maxiter : int
        tol : float
            Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol`` (R's rule).
        cov_type : {"nonrobust", "HC0", "HC1", "cluster"}
            The inverse observed information, or a sandwich around it with the per-row scores
            (R ``sandwich``). HC2/HC3 need a leverage per row, which the model's
            threshold parameters do not give one of, and are refused.
        cov_kwds : dict, optional
            ``"cluster"``: ``groups`` (labels or a column name), ``use_correction``, ``fix``.
        disp : bool
            Print one line per Newton step.
        start_params : array-like of shape (p + K - 1,), optional
            Coefficients then increasing thresholds.

        Returns
        -------
        OrderedResults
        """
        check_option("method", method, ("newton",))
        fc = fit_control(maxiter, tol, method="newton")
        if cov_type in ("HC2", "HC3"):
            raise ValueError(f"cov_type={cov_type!r} divides by 1 - h_i with a leverage h_i "
                             "per row, which an ordinal model with its thresholds does not "
                             "have (R's sandwich has no HC2/HC3 for polr or clm); use 'HC0', "
                             "'HC1' or 'cluster'")
        cov = cov_spec(self.data, cov_type, cov_kwds, leverage=False)
        control = fc
        if disp:
            control = replace(control, progress=IterationLog("deviance"))
        start = self._check_start(start_params)
        rows = self.row_blocks()
        theta, fit = solve(self.likelihood, rows, start, control)
        info = information(self.likelihood, rows, theta)
        try:
            bread = spd_inverse(info)
        except NotPositiveDefinite:
            bread = None
        if not fit.converged:
            warn_user(f"Newton's method did not converge: {fit.message}; raise maxiter or "
                      "scale the columns", ConvergenceWarning)
        return OrderedResults(self, theta, bread, fit, self._null_llf(control), cov, method)

    def held_fit(self, j: int, b: float, maxiter: int, tol: float,
                 start: np.ndarray | None = None) -> tuple[float, np.ndarray, bool]:
        """The fit with coefficient j held at ``b`` (its column moved into the offset), for
        profile likelihoods: ``(deviance, estimates of the other parameters, converged)``."""
        if not self.data.in_memory:
            raise ValueError("profile intervals of an ordinal model refit with a column in the "
                             "offset, which needs the rows in memory: fit on a pandas "
                             "DataFrame, or use the Wald intervals")
        keep = np.ones(self.exog.shape[1], dtype=bool)
        keep[j] = False
        x = self.exog[:, j]
        rows = ArrayBlocks(self.exog[:, keep], self.codes, self.prior_weights,
                           np.asarray(self.offset, dtype=float) + b * x)
        if start is None:
            start = np.delete(self.start_params(), j)
        theta, fit = solve(self.likelihood, rows, start,
                           Control.for_method("newton", maxiter=maxiter, tol=tol))
        return float(fit.objective), theta, bool(fit.converged)

    def nominal_llf(self, nominal: np.ndarray, params: np.ndarray, maxiter: int = 100,
                    tol: float = 1e-13) -> tuple[float, bool]:
        """Log-likelihood of the partial proportional-odds fit in which the ``nominal``
        design columns have threshold-specific effects (clm's ``nominal=``), started from
        the proportional-odds estimates ``params``; with whether it converged."""
        nominal = np.asarray(nominal, dtype=bool)
        lik = NominalOrdinalLikelihood(self.K, self.link, nominal)
        k = nominal.size
        b, zeta = params[:k], params[k:]
        start = np.concatenate([b[~nominal]] + [np.r_[z, -b[nominal]] for z in zeta])
        control = Control.for_method("newton", maxiter=maxiter, tol=tol)
        _, fit = solve(lik, self.row_blocks(), start, control)
        return -fit.objective / 2.0, bool(fit.converged)

    def _check_start(self, start_params) -> np.ndarray:
        if start_params is None:
            return self.start_params()
        start = np.asarray(start_params, dtype=float).ravel()
        k = len(self.exog_names)
        m = k + self.K - 1
        if start.shape != (m,) or not np.isfinite(start).all():
            raise ValueError(f"start_params must be {m} finite numbers: {k} "
                             f"coefficients, then {self.K - 1} thresholds")
        if np.any(np.diff(start[-(self.K - 1):]) <= 0):
            raise ValueError("start_params: the thresholds (the last K - 1 values) must be "
                             "increasing")
        return start

    def _null_llf(self, control: Control) -> float:
        """Log-likelihood of the thresholds-only model (offset kept)."""
        if not self._has_offset:
            t = self._totals
            return float(np.sum(t * np.log(t / t.sum())))
        k = len(self.exog_names)
        rows = self.row_blocks(np.zeros(k, dtype=bool))
        theta, fit = solve(self.likelihood, rows, self.start_params()[k:],
                           replace(control, progress=None))
        return -fit.objective / 2.0

    def __repr__(self) -> str:
        return (f"<OrderedModel: {self.K} levels, link={self.link.name!r}, "
                f"nobs={self.nobs:g}>")


