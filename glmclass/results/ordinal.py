"""Results of a cumulative-link (ordinal) fit: coefficients then thresholds, polr's labels.

Inference, AIC/BIC and the likelihood-ratio numbers come from
:class:`~glmclass.results.likelihood.LikelihoodResults`; the sandwich covariances from
:func:`~glmclass.results.robust.sandwich_over_rows` with the likelihood's per-row scores;
predictions with intervals from :func:`~glmclass.results.prediction.level_prediction`.

References
----------
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, §7.3
(``summary.polr``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import GlmclassWarning
from ..lazy import cached_property
from ..likelihoods import likelihood_of
from ..summary import Summary
from .base import check_which, coef_table, num, row_key
from .io import SaveMixin
from .likelihood import LikelihoodResults
from .margins import MarginalEffects, get_margeff
from .prediction import PredictionResults, level_prediction
from .profile import profile_bounds
from .robust import NONROBUST, CovSpec, freq_per_block, sandwich_over_rows
from .terms import term_columns
from .tidy import TidyMixin


def threshold_labels(levels: list) -> list[str]:
    """polr's threshold names ``"a|b"`` for consecutive levels a, b."""
    return [f"{a}|{b}" for a, b in zip(levels[:-1], levels[1:], strict=True)]


class OrderedResults(LikelihoodResults, TidyMixin, SaveMixin):
    """Estimates, inference and predictions of a fitted :class:`~glmclass.OrderedModel`.

    Attributes
    ----------
    model : OrderedModel
    params : pandas.Series
        The coefficients b (by design column), then the thresholds zeta labelled ``"1|2"``,
        ``"2|3"``, ... (the level names, as polr).
    thresholds : pandas.Series
        The K - 1 thresholds.
    llf, llnull : float
        Log-likelihood at the estimates and of the thresholds-only model.
    deviance : float
        -2 llf (polr's deviance).
    nobs : float
        Observations, counting frequency weights.
    k_params : int
        p + K - 1.
    df_model : float
        p, the number of coefficients.
    df_resid : float
        nobs - k_params.
    converged : bool
    n_iter : int
    cov_type : str
    levels : list
        The levels in order (lowest first).
    link : str
        The link's name.
    """

    def __init__(self, model, theta: np.ndarray, bread: np.ndarray | None, fit,
                 llnull: float, cov: CovSpec = NONROBUST, method: str = "newton") -> None:
        d = model.data
        self.model = model
        self._theta = np.asarray(theta, dtype=float)
        self._bread = bread
        self.solver_fit = fit
        k = len(model.exog_names)
        self.k_exog = k
        self.levels = list(model.levels)
        self.link = model.link.name
        self.llf = -float(fit.objective) / 2.0
        self.llnull = float(llnull)
        self.deviance = -2.0 * self.llf
        self.null_deviance = -2.0 * self.llnull
        self.converged = bool(fit.converged)
        self.n_iter = int(fit.n_iter)
        self.method = method
        self.cov_spec = cov
        self.cov_type = cov.cov_type
        self.nobs = model.nobs
        self.k_params = k + model.K - 1
        self.df_model = float(k)
        self.df_resid = float(self.nobs - self.k_params)
        self.estimable = np.ones(self.k_params, dtype=bool)
        self.aliased: list = []
        self.formula = d.formula
        index = pd.Index(list(d.exog_names) + threshold_labels(self.levels))
        self.params = pd.Series(self._theta.copy(), index=index, name="params")
        self.thresholds = self.params.iloc[k:].copy()

    @property
    def solver_inverse(self) -> np.ndarray | None:
        """The inverse observed information in (b, zeta), None when not positive definite."""
        return self._bread

    @cached_property
    def rows_fingerprint(self) -> str:
        """Fingerprint of the rows of the fit, for :func:`glmclass.compare`."""
        m = self.model
        return row_key(m.data.index, m.freq_weights)

    @cached_property
    def cov_values(self) -> np.ndarray:
        """Covariance of (b, zeta): the inverse observed information, or a sandwich."""
        if self._bread is None:
            warnings.warn("the information matrix is not positive definite at the estimates; "
                          "standard errors are NaN (the fit may not be at a maximum)",
                          GlmclassWarning, stacklevel=5)
            return self.on_every_coefficient(None)
        if not self.cov_spec.robust:
            return self._bread.copy()
        m = self.model
        return sandwich_over_rows(self._bread, m.row_blocks(), likelihood_of(m), self._theta,
                                  self.cov_spec, nobs=self.nobs,
                                  freq_weights=freq_per_block(m.freq_weights, m.var_weights))

    def conf_int(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Confidence intervals: Wald, or ``method="profile"``: the profile-likelihood
        intervals of the coefficients (exact roots of the signed root deviance, as
        ``MASS::confint.polr`` without its spline); the thresholds keep their Wald intervals
        there (polr profiles the coefficients only).

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``, one row per parameter.
        """
        check_which(method, ("wald", "profile"))
        wald = super().conf_int(alpha)
        if method == "wald":
            return wald
        q = float(stats.norm.isf(alpha / 2))
        out = wald.copy()
        for j in range(self.k_exog):
            lo, hi, problem = profile_bounds(self, j, q, None, _OrdinalProfile)
            if problem:
                warnings.warn(f"profile of {self.params.index[j]!r}: {problem}; the interval "
                              "may be inaccurate", GlmclassWarning, stacklevel=2)
            out.iloc[j] = (lo, hi)
        return out

    def nominal_test(self) -> pd.DataFrame:
        """Likelihood-ratio test of the proportional-odds assumption for each formula term
        (R ``ordinal::nominal_test``): the term's columns get threshold-specific effects
        (a partial proportional-odds fit, clm's ``nominal=``) against this fit.

        Returns
        -------
        pandas.DataFrame
            Indexed by term: ``df`` ((K - 2) times the term's columns), ``llf`` and ``aic``
            of the nominal fit, ``lrt`` (2 (llf_nominal - llf)) and ``pvalue`` (chi-squared).
        """
        m = self.model
        rows = []
        for term, cols in term_columns(m.data).items():
            nominal = np.zeros(self.k_exog, dtype=bool)
            nominal[cols] = True
            llf, converged = m.nominal_llf(nominal, self._theta)
            if not converged:
                warnings.warn(f"nominal_test: the fit with threshold-specific effects of "
                              f"{term!r} did not converge; its row may be inaccurate",
                              GlmclassWarning, stacklevel=2)
            df = (m.K - 2) * len(cols)
            lrt = 2.0 * (llf - self.llf)
            rows.append((term, df, llf, -2.0 * llf + 2.0 * (self.k_params + df), lrt,
                         float(stats.chi2.sf(lrt, df)) if df > 0 else np.nan))
        return pd.DataFrame(rows, columns=["term", "df", "llf", "aic", "lrt", "pvalue"]
                            ).set_index("term")

    @property
    def natural_order(self) -> list[int]:
        """Positions of the levels (natural order) among the likelihood's outputs: the
        same order."""
        return list(range(len(self.levels)))

    def get_margeff(self, at: str = "overall", method: str = "dydx", atexog=None,
                    dummy: bool = False, count: bool = False) -> MarginalEffects:
        """Marginal effects of each variable on the probability of each level (rows (level,
        term)), with delta-method standard errors (thresholds included in the gradient).

        Parameters
        ----------
        at : {"overall", "mean", "median", "zero", "all"}
        method : {"dydx", "eyex", "dyex", "eydx"}
        atexog : dict, optional
            Values at which variables are held (statsmodels' ``atexog``).
        dummy : bool
            Numeric 0/1 variables as discrete changes.
        count : bool
            Integer-valued variables as a change by one (statsmodels' ``count``).

        Returns
        -------
        MarginalEffects
        """
        return get_margeff(self, at, method, atexog, dummy, count)

    # --- prediction ---------------------------------------------------------------------------
    def _rows(self, exog, offset):
        X, off, index = self.model.data.new_rows(exog, offset)
        if off is None:
            off = np.zeros(X.shape[0])
        return np.asarray(X, dtype=float), np.asarray(off, dtype=float), index

    def predict(self, exog=None, which: str = "prob", offset=None):
        """Predictions in-sample (``exog=None``) or for new data through the stored design.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
        which : {"prob", "mean", "class", "linear", "cumulative"}
            ``"prob"`` (and ``"mean"``): a DataFrame of the level probabilities, one column
            per level; ``"cumulative"``: ``P(Y <= k)`` for the first K - 1 levels;
            ``"linear"``: ``x'b + offset`` (a Series); ``"class"``: the most probable level.
        offset : array-like of shape (n,), optional

        Returns
        -------
        pandas.DataFrame or pandas.Series
        """
        check_which(which, ("prob", "mean", "class", "linear", "cumulative"))
        X, off, index = self._rows(exog, offset)
        lik = likelihood_of(self.model)
        if which == "linear":
            return pd.Series(X @ self._theta[:self.k_exog] + off, index=index, name="linear")
        cum = lik.cumulative(X, self._theta, off)
        if which == "cumulative":
            return pd.DataFrame(self.model.link.inverse(cum), index=index,
                                columns=pd.Index(self.levels[:-1], name="level"))
        prob = lik.mean_eta(cum)
        if which == "class":
            bad = np.isnan(prob).any(axis=1)
            labels = np.asarray(self.levels, dtype=object)[np.argmax(np.nan_to_num(prob), 1)]
            labels[bad] = None
            return pd.Series(labels, index=index, name="class")
        return pd.DataFrame(prob, index=index, columns=pd.Index(self.levels, name="level"))

    def get_prediction(self, exog=None, which: str = "prob", offset=None) -> PredictionResults:
        """Level probabilities with delta-method standard errors; the intervals are made on
        each level's logit scale and mapped back (inside (0, 1)).

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
        which : {"prob", "mean"}
        offset : array-like of shape (n,), optional

        Returns
        -------
        PredictionResults
            ``predicted`` and ``se`` are DataFrames, one column per level;
            ``summary_frame()`` is long, with a ``level`` column.
        """
        check_which(which, ("prob", "mean"))
        X, off, index = self._rows(exog, offset)
        return level_prediction(likelihood_of(self.model), X, self._theta, off,
                                self.cov_values, self.critical_value, index, self.levels)

    # --- report -------------------------------------------------------------------------------
    def summary(self, alpha: float = 0.05) -> Summary:
        """Statistical report in the spirit of polr's: coefficients, then intercepts
        (thresholds), the fit header and the order of the levels."""
        m = self.model
        ci = self.conf_int(alpha)
        k = self.k_exog
        t = coef_table(self.params, self.bse, self.tvalues, self.pvalues, ci, "z", alpha)
        header = [
            ("Dep. Variable", m.data.endog_name), ("Model", "OrderedModel"),
            ("Link", self.link), ("Method", "Newton's method"),
            ("Information", "observed"), ("Covariance Type", self.cov_type),
            ("No. Levels", len(self.levels)), ("No. Observations", num(self.nobs)),
            ("Df Model", num(self.df_model)), ("Df Residuals", num(self.df_resid)),
            ("Converged", self.converged), ("No. Iterations", self.n_iter),
            ("Log-Likelihood", self.llf), ("LL-Null", self.llnull),
            ("Deviance", self.deviance), ("AIC", self.aic), ("BIC", self.bic),
        ]
        if m.data.n_dropped:
            header.append(("Rows dropped (missing)", m.data.n_dropped))
        order = " < ".join(map(str, self.levels))
        notes = [f"Levels in order: {order}.",
                 f"P({m.data.endog_name} <= k) = F(zeta_k - x'b), F the inverse {self.link} "
                 "link: a positive coefficient moves the response to higher levels.",
                 self.cov_spec.describe("observed")]
        return Summary("Ordinal Regression Results (cumulative link)", header,
                       [("Coefficients", t.iloc[:k]), ("Intercepts (thresholds)", t.iloc[k:])],
                       notes)

    def __repr__(self) -> str:
        return (f"<OrderedResults: {len(self.levels)} levels, link={self.link!r}, "
                f"llf={self.llf:.6g}>")


class _OrdinalProfile:
    """The signed root deviance of coefficient j (the protocol of
    :func:`~glmclass.results.profile.profile_bounds`), each refit warm-started from the
    last by :meth:`OrderedModel.held_fit`."""

    def __init__(self, res: OrderedResults, j: int, control: object) -> None:
        self.model = res.model
        self.j = j
        self.bhat = float(res.params.iloc[j])
        self.dev0 = float(res.deviance)
        self.mle_start = np.delete(res.params.to_numpy(), j)
        self.start = self.mle_start
        self.maxiter = max(100, 4 * res.n_iter)
        self.worse = False
        self.unconverged = False

    def z(self, b: float) -> float:
        dev, theta, ok = self.model.held_fit(self.j, b, self.maxiter, 1e-13, self.start)
        if ok and np.isfinite(theta).all():
            self.start = theta
        else:
            self.unconverged = True
        excess = dev - self.dev0
        if excess < -1e-6 * max(1.0, self.dev0):
            self.worse = True
        return float(np.sign(b - self.bhat) * np.sqrt(max(excess, 0.0)))
