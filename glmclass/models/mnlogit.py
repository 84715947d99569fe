"""MNLogit: multinomial (softmax) logistic regression in baseline-category form.

Validates the data like the binary models, fits by damped Newton with the exact block Hessian
(:mod:`glmclass.solvers.newton`), checks for separation by linear programming and returns an
:class:`~glmclass.results.mnlogit.MNLogitResults`.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.4.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*, §4.4.
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, §7.3
(``nnet::multinom``).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from ..blocks import ArrayBlocks, block_rows
from ..errors import ConvergenceWarning, RankDeficientWarning, SeparationWarning
from ..numerics.linalg import NotPositiveDefinite, aliased_columns, spd_inverse
from ..numerics.separation import detect_separation
from ..results.mnlogit import MNLogitResults
from ..solvers.gram import weighted_gram
from ..solvers.newton import (
    NewtonControl,
    NewtonFit,
    Objective,
    multinomial_deviance,
    newton,
    softmax_parts,
)
from .data import ModelData, check_finite, from_arrays, from_formula
from .glm import check_weights
from .response import levels_of, multiclass_response

#: Symptoms of separation that trigger the exact LP test: a standard error above SE_TRIGGER
#: on the scale of its column (a standardised predictor's coefficient; under separation these
#: are 1e3-1e6, in a regular fit O(1/sqrt(N))), or, when the LP is cheap (N p K up to
#: CHEAP_LP), a fitted probability below PROB_TRIGGER. A fit that did not converge is tested too.
SE_TRIGGER = 30.0
PROB_TRIGGER = 1e-6
CHEAP_LP = 1_000_000
#: Largest N K p for the exact LP test (its expanded design has N (K-1) rows and (K-1) p
#: columns); above it the warning reports the symptoms (exploding standard errors) instead.
LP_MAX_WORK = 500_000


def _tidy_labels(levels: list) -> list:
    """Integral float labels (a numeric response read with missing values) become ints."""
    if levels and all(isinstance(v, (float, np.floating)) and float(v).is_integer()
                      for v in levels):
        return [int(v) for v in levels]
    return [v.item() if isinstance(v, np.generic) else v for v in levels]


class MNLogit:
    """Multinomial logistic regression with a reference (baseline) level.

    For K levels and design row $x$, level $j \\ne$ ref has log-odds against the reference
    $\\ln(p_j / p_{ref}) = x^\\top \\beta_j$ (+ offset); the reference level has no coefficients.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Response: integer codes, strings, bool or a pandas Categorical (at least two levels).
    exog : array-like of shape (n_obs, p)
        Design matrix (include a constant column for intercepts).
    ref : label, optional
        The reference level; default the first level (Categorical order, else sorted).
    freq_weights : array-like of shape (n_obs,), optional
        Replication counts: a row with weight 3 counts as three identical rows.
    offset : array-like of shape (n_obs,), optional
        Known term added to the log-odds of every non-reference level.
    missing : {"drop", "raise"}
        Drop rows with missing values, or raise naming the column.

    Notes
    -----
    The model is immutable: :meth:`fit` returns a new results object each call.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.4.
    """

    def __init__(self, endog, exog, ref=None, freq_weights=None, offset=None,
                 missing: str = "drop") -> None:
        data = from_arrays(endog, exog, missing, offset=offset, freq_weights=freq_weights)
        dtype = getattr(endog, "dtype", None)
        if isinstance(dtype, pd.CategoricalDtype) and not isinstance(
                getattr(data.endog, "dtype", None), pd.CategoricalDtype):
            # the array path hands back plain values: restore the Categorical's level order
            data = replace(data, endog=pd.Categorical(data.endog, categories=dtype.categories))
        self._setup(data, ref)

    @classmethod
    def from_formula(cls, formula: str, data, ref=None, freq_weights=None, offset=None,
                     missing: str = "drop", eval_env: int = 0) -> MNLogit:
        """Build the model from a patsy formula on a DataFrame.

        Parameters
        ----------
        formula : str
            ``"y ~ x1 + C(group)"``; the response column is taken as it is (labels kept).
        data : pandas.DataFrame
        ref, freq_weights, offset, missing
            As for the constructor; arrays are aligned with the rows of ``data``.
        eval_env : int
            Extra frames above the caller in which to look up names used in the formula.
        """
        md = from_formula(formula, data, missing, eval_env + 1, offset=offset,
                          freq_weights=freq_weights)
        self = cls.__new__(cls)
        self._setup(md, ref)
        return self

    def _setup(self, data: ModelData, ref) -> None:
        check_finite(data)
        check_weights(data.arrays)
        if data.exog.shape[1] == 0:
            raise ValueError("the design has no columns: add an intercept or predictors "
                             "(e.g. 'y ~ 1' for the intercept-only model)")
        name = data.endog_name
        natural = levels_of(data.endog)
        codes, fit_levels = multiclass_response(data.endog, name, ref)
        n = data.nrows
        a = data.arrays
        f = a["freq_weights"] if a.get("freq_weights") is not None else np.ones(n)
        totals = np.bincount(codes, weights=f, minlength=len(fit_levels))
        if np.any(totals <= 0):
            lv = fit_levels[int(np.flatnonzero(totals <= 0)[0])]
            raise ValueError(f"level {lv!r} of {name!r} has zero total frequency weight: drop "
                             "the level (or its rows) before fitting")
        self.data = data
        self.exog = data.exog
        self.exog_names = data.exog_names
        self.codes = codes  # 0 = the reference level
        self.levels = _tidy_labels(list(natural))  # natural order, for predictions and tables
        self._fit_levels = _tidy_labels(list(fit_levels))  # reference first
        self.ref = self._fit_levels[0]
        self.freq_weights = f
        self.offset = a["offset"] if a.get("offset") is not None else np.zeros(n)
        self.has_intercept = bool(np.any(np.all(data.exog == 1.0, axis=0)))
        self._level_totals = totals

    @property
    def formula(self) -> str | None:
        return self.data.formula

    @property
    def K(self) -> int:
        """Number of response levels."""
        return len(self._fit_levels)

    def fit(self, method: str = "newton", information: str = "observed", maxiter: int = 50,
            tol: float = 1e-10) -> MNLogitResults:
        """Maximum-likelihood fit by Newton's method with the exact block Hessian.

        Parameters
        ----------
        method : {"newton"}
        information : {"observed", "expected"}
            Which information matrix gives the covariance. The multinomial logit is a canonical
            exponential family, so the two coincide; the choice is recorded in the summary.
        maxiter : int
        tol : float
            Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol`` (R's rule).

        Returns
        -------
        MNLogitResults
        """
        if method != "newton":
            raise ValueError(f"method must be 'newton', got {method!r}")
        if information not in ("observed", "expected"):
            raise ValueError(f"information must be 'observed' or 'expected', got {information!r}")
        if int(maxiter) < 1:
            raise ValueError(f"maxiter must be a positive integer, got {maxiter!r}")
        if not tol > 0:
            raise ValueError(f"tol must be positive, got {tol!r}")
        control = NewtonControl(maxiter=int(maxiter), tol=float(tol))
        aliased = aliased_columns(weighted_gram(ArrayBlocks(self.exog, weights=self.freq_weights)))
        keep = ~aliased
        X = self.exog if keep.all() else np.ascontiguousarray(self.exog[:, keep])
        fit = newton(self._objective(X), self._start(X), control)
        null = self._null_fit(control)
        coef = fit.coef.reshape(self.K - 1, -1).T  # (p_kept, K-1)
        try:  # canonical link: observed = expected information, half the deviance's Hessian
            cov = spd_inverse(fit.hessian / 2.0)
        except NotPositiveDefinite:
            cov = None
        sep = self._separation(X, keep, coef, fit.converged, cov)
        self._warn(aliased, fit, sep)
        return MNLogitResults(self, fit, keep, null, method, information, sep, cov)

    def _objective(self, X: np.ndarray) -> Objective:
        # blocks of ~2 MB of the expanded (r, (K-1) p) design, not of X
        blocks = ArrayBlocks(X, self.codes, self.freq_weights, self.offset,
                             rows=block_rows((self.K - 1) * X.shape[1]))
        return multinomial_deviance(blocks, self.K)

    def _start(self, X: np.ndarray) -> np.ndarray:
        """Zeros, with intercepts at the log ratios of the level totals to the reference's."""
        p = X.shape[1]
        start = np.zeros((self.K - 1, p))
        ones = np.flatnonzero(np.all(X == 1.0, axis=0))
        if ones.size:
            t = self._level_totals
            start[:, ones[0]] = np.log(t[1:] / t[0])
        return start.ravel()

    def _null_fit(self, control: NewtonControl) -> float:
        """Intercept-only fit (offset kept), as ``llnull``; without an intercept, eta = offset."""
        n = self.exog.shape[0]
        X = np.ones((n, 1)) if self.has_intercept else np.zeros((n, 0))
        if not self.has_intercept:
            dev, _, _ = self._objective(X)(np.zeros(0), False)
            return dev
        return newton(self._objective(X), self._start(X), control).objective

    # --- separation ---------------------------------------------------------------------------
    def _scaled_se(self, X: np.ndarray, cov: np.ndarray) -> np.ndarray:
        """Standard errors times the (weighted) sd of their column (|mean| for a constant one),
        level-major, shape ((K-1) p,): the standard errors of standardised predictors."""
        f = self.freq_weights
        mean = (f @ X) / f.sum()
        sd = np.sqrt(np.maximum(np.einsum("ij,ij,i->j", X, X, f) / f.sum() - mean ** 2, 0.0))
        scale = np.where(sd > 1e-12 * np.maximum(np.abs(mean), 1.0), sd, np.abs(mean))
        return np.sqrt(np.diag(cov)) * np.tile(scale, self.K - 1)

    def _suspicious(self, X: np.ndarray, coef: np.ndarray, converged: bool,
                    cov: np.ndarray | None) -> bool:
        """Whether the fit shows the symptoms of separation: no convergence, a standard error
        that is huge on the scale of its column, or (when the LP is cheap) probabilities
        numerically 0 or 1."""
        if not converged or cov is None or np.max(self._scaled_se(X, cov)) > SE_TRIGGER:
            return True
        if X.shape[0] * X.shape[1] * self.K > CHEAP_LP:
            return False
        pos = self.freq_weights > 0
        _, prob, p0 = softmax_parts((X @ coef + self.offset[:, None])[pos])
        return min(prob.min(initial=1.0), p0.min(initial=1.0)) < PROB_TRIGGER

    def _separation(self, X: np.ndarray, keep: np.ndarray, coef: np.ndarray, converged: bool,
                    cov: np.ndarray | None) -> MNSeparation | None:
        """Exact LP test, run when the fit shows the symptoms of separation (above
        ``LP_MAX_WORK`` only the symptoms are reported). Returns an :class:`MNSeparation` or
        None."""
        if not self._suspicious(X, coef, converged, cov):
            return None
        names = [nm for nm, k in zip(self.exog_names, keep, strict=True) if k]
        k1, p = self.K - 1, X.shape[1]
        pos = self.freq_weights > 0
        if int(pos.sum()) * self.K * p > LP_MAX_WORK:
            return self._apparent(X, coef, cov, names)
        Xp, cp = X[pos], self.codes[pos]
        s = detect_separation(_expanded(Xp, cp, self.K), np.ones(Xp.shape[0] * k1))
        if not s.separated:
            return None
        d = s.directions.reshape(k1, p)
        infinite = {}
        for j in range(k1):
            cols = [f"{names[c]} ({'+' if d[j, c] > 0 else '-'}inf)" for c in np.flatnonzero(d[j])]
            if cols:
                infinite[self._fit_levels[j + 1]] = cols
        rest = [lv for j, lv in enumerate(self._fit_levels)
                if detect_separation(Xp, (cp == j).astype(float)).separated]
        return MNSeparation(s.kind, rest, infinite, self.ref)

    def _apparent(self, X: np.ndarray, coef: np.ndarray, cov: np.ndarray | None,
                  names: list[str]) -> MNSeparation | None:
        """Too large for the LP: report the coefficients whose standard errors explode."""
        if cov is None:
            return None
        big = (self._scaled_se(X, cov) > SE_TRIGGER).reshape(self.K - 1, -1)
        infinite = {}
        for j in range(self.K - 1):
            cols = [f"{names[c]} ({'+' if coef[c, j] > 0 else '-'}inf)"
                    for c in np.flatnonzero(big[j])]
            if cols:
                infinite[self._fit_levels[j + 1]] = cols
        return MNSeparation("apparent", [], infinite, self.ref) if infinite else None

    def _warn(self, aliased: np.ndarray, fit: NewtonFit, sep: MNSeparation | None) -> None:
        if aliased.any():
            names = [nm for nm, a in zip(self.exog_names, aliased, strict=True) if a]
            warnings.warn(
                f"the design is rank deficient: {', '.join(map(repr, names))} "
                f"{'is a linear combination' if len(names) == 1 else 'are linear combinations'} "
                "of earlier columns; their coefficients are NaN for every level (drop them to "
                "silence this)", RankDeficientWarning, stacklevel=3)
        if sep is not None:
            warnings.warn(sep.message(), SeparationWarning, stacklevel=3)
        elif not fit.converged:
            hist = ", ".join(f"{h:.6g}" for h in fit.history[-5:])
            warnings.warn(f"Newton's method did not converge: {fit.message} (last deviances: "
                          f"{hist}); raise maxiter or scale the columns", ConvergenceWarning,
                          stacklevel=3)

    def __repr__(self) -> str:
        return f"<MNLogit: {self.K} levels, ref={self.ref!r}, nobs={self.exog.shape[0]}>"


def _expanded(X: np.ndarray, codes: np.ndarray, K: int) -> np.ndarray:
    """Rows $x_n \\otimes (e_{y_n} - e_k)$, k != y_n (e_ref = 0): the multinomial MLE fails to
    exist exactly when some direction D has every such row's inner product >= 0, one > 0."""
    n, p = X.shape
    k1 = K - 1
    out = np.zeros((n, k1, k1, p))  # (row, competitor slot, level, column)
    others = np.nonzero(np.arange(K)[None, :] != codes[:, None])[1].reshape(n, k1)
    for slot in range(k1):
        other = others[:, slot]  # the slot-th competitor k != y_n of each row
        for j in range(k1):
            c = (codes == j + 1).astype(float) - (other == j + 1)
            out[:, slot, j, :] = X * c[:, None]
    return out.reshape(n * k1, k1 * p)


class MNSeparation:
    """Separation found in a multinomial fit.

    Attributes
    ----------
    kind : str
        ``"complete"`` or ``"quasi-complete"`` (from the exact LP test), or ``"apparent"`` (the
        problem was too large for the LP; the standard errors explode).
    levels : list
        Levels perfectly separated from all the other levels.
    infinite : dict
        Non-reference level -> labels of its coefficients that diverge, e.g. ``["x (+inf)"]``.
    ref : label
        The reference level.
    """

    def __init__(self, kind: str, levels: list, infinite: dict, ref) -> None:
        self.kind = kind
        self.levels = levels
        self.infinite = infinite
        self.ref = ref
        self.separated = True

    def _where(self) -> str:
        parts = [f"level {lv!r}: {', '.join(cols)}" for lv, cols in self.infinite.items()]
        return "; ".join(parts) if parts else "(not identifiable)"

    def message(self) -> str:
        """Explanation for the warning."""
        who = (f"level {', '.join(map(repr, self.levels))} "
               f"{'is' if len(self.levels) == 1 else 'are'} perfectly separated from the other "
               "levels; " if self.levels else "")
        if self.kind == "apparent":
            return (
                "Apparent separation: the standard errors of these coefficients (log-odds "
                f"against the reference {self.ref!r}) explode, the sign that the maximum-"
                f"likelihood estimate does not exist and they are infinite: {self._where()} (the "
                "exact linear-programming test was skipped for a problem this large). Their "
                "reported values are arbitrary large numbers. Use a penalised or Bayesian model "
                "(a Gaussian prior, as in gc.BayesLogit, keeps every estimate finite), or merge "
                "the level or drop the separating columns.")
        return (
            f"{self.kind.capitalize()} separation: {who}the maximum-likelihood estimate does not "
            f"exist and these coefficients (log-odds against the reference {self.ref!r}) are "
            f"infinite: {self._where()}. Their reported values are arbitrary large numbers with "
            "meaningless standard errors. Use a penalised or Bayesian model (a Gaussian prior, "
            "as in gc.BayesLogit, keeps every estimate finite), or merge the level or drop the "
            "separating columns.")

    @property
    def note(self) -> str:
        """Note for the summary."""
        return (f"{self.kind.capitalize()} separation detected: infinite estimates for "
                f"{self._where()}; consider a penalised or Bayesian model.")

    def __repr__(self) -> str:
        return f"<MNSeparation {self.kind}: {self._where()}>"
