"""Results of penalised (lasso, ridge, elastic-net) fits and of regularisation paths.

A penalised estimate is biased towards 0 on purpose, and a lasso fit chooses its columns on
the same data it estimates them with: the classical standard errors, z statistics, p-values
and intervals do not describe its sampling distribution. The results therefore have no
``bse``, ``pvalues``, ``conf_int`` or ``cov_params``: each raises a ValueError that says so
and what to do instead, and the summary shows the coefficients with a note.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..lazy import cached_property
from ..likelihoods import MultinomialLikelihood, likelihood_of
from ..solvers.fit import Fit
from ..summary import Summary, modelled_line
from .base import LikelihoodMixin, check_which, num, row_key
from .dask import RowOutputs, new_rows_of
from .frozen import FrozenResults
from .glm_base import GLMBaseResults
from .io import SaveMixin
from .mnlogit import MNLogitResults, by_which, fit_order_probabilities, prediction_rows

METHOD = "coordinate descent (proximal Newton)"


def check_alpha(alpha: object) -> float:
    """The penalty weight as a float.

    Here rather than with the fitting code in :mod:`glmclass.models.regularized`, which reads
    it from here, because the results (``RegularizationPath.refit``) check it too and results
    do not import models.

    Parameters
    ----------
    alpha : float
        The penalty weight of glmnet's objective.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        When ``alpha`` is not a number (strings, None and bools are not), is not finite or is
        negative.
    """
    if isinstance(alpha, (str, bytes, bool)) or not isinstance(alpha, (numbers.Real, np.number)):
        raise ValueError(f"alpha (the penalty weight) must be a number, got {alpha!r}")
    a = float(alpha)
    if not np.isfinite(a) or a < 0:
        raise ValueError(f"alpha (the penalty weight) must be a finite number >= 0, got {alpha!r}")
    return a


def fit_levels(levels: list, ref) -> list:
    """An MNLogit's levels in the order its coefficients use: the reference level first, the
    others in their natural order (``levels``)."""
    return [ref] + [lv for lv in levels if lv != ref]


def penalty_name(L1_wt: float) -> str:
    return "lasso" if L1_wt == 1 else "ridge" if L1_wt == 0 else "elastic net"


@dataclass(frozen=True)
class _Record:
    """What :class:`~glmclass.results.glm_base.GLMBaseResults` reads from a solver's record."""

    coef: np.ndarray
    deviance: float
    converged: bool
    n_iter: int
    history: tuple
    aliased: np.ndarray


class PenaltyMixin:
    """What penalised results share: the description of the penalty, the refusal of
    classical inference, and the summary's penalty lines."""

    alpha: float
    L1_wt: float
    penalty_factor: pd.Series
    standardize: bool

    @property
    def penalized(self) -> list[str]:
        """Design columns the penalty applies to (factor > 0)."""
        return [str(c) for c, v in self.penalty_factor.items() if v > 0]

    def _no_inference(self, what: str):
        raise ValueError(
            f"{what} is not available for a penalised fit ({penalty_name(self.L1_wt)}, "
            f"alpha={self.alpha:g}, L1_wt={self.L1_wt:g}): the penalty biases the estimates "
            "towards 0 and the lasso selects columns on the same data, so classical standard "
            "errors, p-values and intervals do not apply. For inference, refit the chosen "
            "columns with fit() on new data, or bootstrap the whole procedure.")

    @property
    def bse(self):
        """Not available: raises ValueError (see the module's docstring)."""
        self._no_inference("bse (standard errors)")

    @property
    def tvalues(self):
        """Not available: raises ValueError."""
        self._no_inference("tvalues (z statistics)")

    @property
    def zvalues(self):
        """Not available: raises ValueError."""
        self._no_inference("zvalues (z statistics)")

    @property
    def pvalues(self):
        """Not available: raises ValueError."""
        self._no_inference("pvalues")

    def conf_int(self, alpha: float = 0.05):
        """Not available: raises ValueError."""
        self._no_inference("conf_int (confidence intervals)")

    def cov_params(self):
        """Not available: raises ValueError."""
        self._no_inference("cov_params (the covariance of the estimates)")

    def _penalty_header(self) -> list[tuple[str, object]]:
        return [("Method", METHOD), ("Penalty", penalty_name(self.L1_wt)),
                ("alpha", self.alpha), ("L1_wt", self.L1_wt),
                ("Standardized", self.standardize)]

    def _penalty_notes(self, unpenalized: list[str]) -> list[str]:
        free = ", ".join(unpenalized) if unpenalized else "none"
        return [
            f"Penalised fit: minimises deviance/(2n) + alpha*((1 - L1_wt)/2*||v*b||^2 + "
            f"L1_wt*||v*b||_1) with n = {num(self.nobs)}"
            + (", v the penalty factor times the column's standard deviation"
               if self.standardize else ", v the penalty factor")
            + f"; unpenalised: {free}.",
            "Standard errors, z statistics and p-values do not apply to penalised estimates "
            "and are not shown.",
        ]


class RegularizedResults(PenaltyMixin, GLMBaseResults, LikelihoodMixin, SaveMixin,
                         FrozenResults):
    """A penalised fit of a GLM, Logit or Probit (built by ``fit_regularized``).

    Attributes
    ----------
    model : the model (never modified)
    params : pandas.Series
        Estimates by design column, on the design's own scale (exact zeros where the lasso
        dropped a column).
    alpha, L1_wt : float
        The penalty weight and its lasso share.
    penalty_factor : pandas.Series
        Factors per column, rescaled to sum to the number of penalisable columns (glmnet);
        0 for the intercept and unpenalised columns.
    penalized : list of str
        The columns the penalty applies to.
    standardize : bool
        Whether the penalty was on standardised coefficients.
    objective : float
        The penalised objective at the estimate.
    deviance, null_deviance, llf, llnull : float
    nobs : float
    df_model : float
        Number of non-zero coefficients besides the intercept (the lasso's degrees of freedom,
        Zou, Hastie and Tibshirani 2007), behind ``aic`` and ``bic``.
    converged : bool
    n_iter : int
        Proximal Newton steps.
    n_sweeps : int
        Coordinate-descent sweeps over all steps.
    method : str
    """

    def __init__(self, model, coef: np.ndarray, fit: Fit, null, *, alpha: float,
                 L1_wt: float, penalty_factor: np.ndarray, standardize: bool,
                 scale: np.ndarray, total: float) -> None:
        record = _Record(coef, 2.0 * total * fit.loss, fit.converged, fit.n_iter, fit.history,
                         np.zeros(coef.size, dtype=bool))
        super().__init__(model, record, null)
        names = model.exog_names
        self.alpha, self.L1_wt, self.standardize = alpha, L1_wt, standardize
        self.penalty_factor = pd.Series(penalty_factor, index=names, name="penalty_factor")
        self.scale_used = pd.Series(scale, index=names, name="scale")
        self.objective = float(fit.objective)
        self.n_sweeps = int(fit.n_sweeps)
        self.method = METHOD
        nonzero = coef != 0
        icpt = model.data.intercept_index
        if icpt is not None:
            nonzero[icpt] = False
        self.df_model = float(nonzero.sum())
        self.k_params = int(np.sum(coef != 0))
        self.df_resid = float(self.nobs - self.k_params)

    def summary(self) -> Summary:
        """The fit's report: the penalty, the fit statistics and the coefficients (no standard
        errors: see the note)."""
        m = self.model
        header = [("Dep. Variable", m.data.endog_name), ("Model", type(m).__name__),
                  ("Family", m.family.name), ("Link", m.family.link.name),
                  *self._penalty_header(),
                  ("No. Observations", num(self.nobs)),
                  ("Non-zero coefs", num(self.df_model)), ("Converged", self.converged),
                  ("No. Iterations", self.n_iter), ("Log-Likelihood", self.llf),
                  ("LL-Null", self.llnull), ("Deviance", self.deviance),
                  ("Objective", self.objective)]
        table = pd.DataFrame({"coef": self.params, "penalty factor": self.penalty_factor})
        free = [c for c, v in self.penalty_factor.items() if v == 0]
        sub = modelled_line(m.data.endog_name, m.levels) if m.family.name == "Binomial" else ""
        return Summary(f"{type(m).__name__} Penalised Regression Results", header,
                       [(None, table)], self._penalty_notes(free), subtitle=sub)

    def __repr__(self) -> str:
        return (f"<RegularizedResults: {type(self.model).__name__}, {penalty_name(self.L1_wt)} "
                f"alpha={self.alpha:g}, nobs={num(self.nobs)}>")


class RegularizedMNLogitResults(RowOutputs, PenaltyMixin, LikelihoodMixin, SaveMixin,
                                FrozenResults, rows={"predict": new_rows_of}):
    """A penalised fit of an MNLogit (built by ``MNLogit.fit_regularized``), in the reference-
    level parametrisation: ``params`` rows the design columns, columns the non-reference
    levels, every non-intercept coefficient penalised separately.

    Attributes are those of :class:`RegularizedResults`, with ``params`` a DataFrame, ``ref``,
    ``levels`` (natural order) and ``fit_levels`` (the reference first, then the columns of
    ``params``); ``df_model`` counts non-zero coefficients besides the intercepts.
    """

    #: On Dask data each partition's rows are encoded as an MNLogit fit's are.
    partition_model = MNLogitResults.partition_model

    def __init__(self, model, coef: np.ndarray, fit: Fit, null_deviance: float, *,
                 alpha: float, L1_wt: float, penalty_factor: np.ndarray, standardize: bool,
                 scale: np.ndarray, total: float) -> None:
        d = model.data
        self.model = model
        k1 = model.K - 1
        B = coef.reshape(k1, -1).T
        self.fit_levels = fit_levels(list(model.levels), model.ref)
        self.params = pd.DataFrame(B, index=pd.Index(d.exog_names),
                                   columns=pd.Index(self.fit_levels[1:], name="level"))
        self.nobs = total
        self.deviance = 2.0 * total * fit.loss
        self.null_deviance = float(null_deviance)
        self.llf, self.llnull = -self.deviance / 2.0, -self.null_deviance / 2.0
        self.converged, self.n_iter, self.n_sweeps = fit.converged, fit.n_iter, fit.n_sweeps
        self.fit_history = fit.history
        self.alpha, self.L1_wt, self.standardize = alpha, L1_wt, standardize
        self.penalty_factor = pd.Series(penalty_factor, index=d.exog_names, name="penalty_factor")
        self.scale_used = pd.Series(scale, index=d.exog_names, name="scale")
        self.objective = float(fit.objective)
        self.method = METHOD
        self.ref, self.levels = model.ref, list(model.levels)
        nonzero = B != 0
        if d.intercept_index is not None:
            nonzero[d.intercept_index] = False
        self.df_model = float(nonzero.sum())
        self.k_params = int(np.sum(B != 0))
        self.df_resid = float(self.nobs - self.k_params)
        self.rows_fingerprint = row_key(d.index, model.freq_weights)
        self.formula = d.formula

    def predict(self, exog=None, which: str = "prob", offset=None):
        """Predictions in-sample (``exog=None``) or for new data.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
        which : {"prob", "mean", "class", "linear"}
            As :meth:`glmclass.results.mnlogit.MNLogitResults.predict`.
        offset : array-like of shape (n,), optional

        Returns
        -------
        pandas.DataFrame or pandas.Series
        """
        check_which(which, ("prob", "mean", "class", "linear"))
        X, off, index = prediction_rows(self, exog, offset)
        eta = X @ self.params.to_numpy() + np.asarray(off)[:, None]
        order = [self.fit_levels.index(lv) for lv in self.levels]
        return by_which(which, eta, lambda e: fit_order_probabilities(e)[:, order],
                        self.levels, self.params.columns, index)

    def summary(self) -> Summary:
        """The fit's report with one coefficient column per non-reference level."""
        m = self.model
        header = [("Dep. Variable", m.data.endog_name), ("Model", "MNLogit"),
                  ("Reference level", self.ref), *self._penalty_header(),
                  ("No. Observations", num(self.nobs)), ("Non-zero coefs", num(self.df_model)),
                  ("Converged", self.converged), ("No. Iterations", self.n_iter),
                  ("Log-Likelihood", self.llf), ("LL-Null", self.llnull),
                  ("Deviance", self.deviance), ("Objective", self.objective)]
        table = self.params.copy()
        table.columns = [f"{m.data.endog_name}={lv}" for lv in self.params.columns]
        table["penalty factor"] = self.penalty_factor
        free = [c for c, v in self.penalty_factor.items() if v == 0]
        return Summary("MNLogit Penalised Regression Results", header, [(None, table)],
                       self._penalty_notes(free))

    def __repr__(self) -> str:
        return (f"<RegularizedMNLogitResults: {penalty_name(self.L1_wt)} alpha={self.alpha:g}, "
                f"nobs={num(self.nobs)}>")


def cv_summary(raw: np.ndarray, weight: np.ndarray, index: pd.Index
               ) -> tuple[pd.DataFrame, pd.Series, pd.Series, float, float]:
    """cv.glmnet's summary of the folds: the weighted mean held-out deviance and its standard
    error by alpha, and the alphas it chooses.

    Parameters
    ----------
    raw : ndarray of shape (n_folds, n_alphas)
        Held-out deviance per observation of each fold by alpha (NaN where not finite).
    weight : ndarray of shape (n_folds,)
        The folds' total weights.
    index : pandas.Index
        The alphas, decreasing (named ``alpha``).

    Returns
    -------
    cv_deviance : pandas.DataFrame
        ``raw`` labelled: folds by alphas.
    cv_mean, cv_se : pandas.Series
        Weighted mean over the folds and its standard error (``cvm``, ``cvsd``).
    alpha_min : float
        The alpha with the smallest mean (the largest such alpha on ties).
    alpha_1se : float
        The largest alpha whose mean is within one standard error of the minimum.
    """
    k = raw.shape[0]
    ok = np.isfinite(raw)
    w = np.where(ok, weight[:, None], 0.0)
    r = np.where(ok, raw, 0.0)
    mean = (w * r).sum(axis=0) / w.sum(axis=0)
    var = (w * (r - mean) ** 2).sum(axis=0) / w.sum(axis=0) / (k - 1)
    alphas = index.to_numpy(dtype=float)
    imin = int(np.flatnonzero(mean <= np.nanmin(mean))[0])  # alphas decrease: the largest
    within = np.flatnonzero(mean <= mean[imin] + np.sqrt(var[imin]))[0]
    return (pd.DataFrame(raw, index=pd.RangeIndex(k, name="fold"), columns=index),
            pd.Series(mean, index=index, name="cv_mean"),
            pd.Series(np.sqrt(var), index=index, name="cv_se"),
            float(alphas[imin]), float(alphas[within]))


class RegularizationPath(FrozenResults):
    """Penalised fits along a sequence of alphas, with cross-validated deviance.

    Built by ``regularization_path`` of Logit, Probit, GLM and MNLogit.

    Attributes
    ----------
    model : the model (never modified)
    alphas : ndarray of shape (n_alphas,)
        Decreasing penalty weights, from ``alpha_max`` down.
    alpha_max : float
        The smallest alpha at which every penalised coefficient is 0 (glmnet's lambda_max;
        computed with ``max(L1_wt, 1e-3)`` for ridge, as glmnet).
    coefs : pandas.DataFrame
        Coefficients (original scale) by alpha: index ``alpha``, one column per design column
        (MNLogit: columns ``(level, column)``).
    deviance : pandas.Series
        In-sample deviance by alpha.
    df : pandas.Series
        Non-zero coefficients besides the intercept(s), by alpha.
    n_iter : pandas.Series
        Proximal Newton steps by alpha.
    converged : bool
        Whether every fit of the path converged.
    L1_wt : float
    penalty_factor : pandas.Series
    standardize : bool
    n_folds : int
        Folds of the cross-validation (0 without).
    folds : ndarray of int or None
        The fold (0 .. n_folds - 1) of each row.
    cv_mean, cv_se : pandas.Series or None
        Mean held-out deviance per observation by alpha (weighted over folds by their total
        weight) and its standard error across folds (``cv.glmnet``'s ``cvm`` and ``cvsd``).
    cv_deviance : pandas.DataFrame or None
        The held-out deviance of each fold (rows) by alpha (columns).
    alpha_min : float or None
        The alpha with the smallest ``cv_mean`` (the largest such alpha on ties).
    alpha_1se : float or None
        The largest alpha whose ``cv_mean`` is within one ``cv_se`` of the minimum.
    seed : the seed of the fold assignment
    multinomial : bool
        Whether the model is an MNLogit (its likelihood is the multinomial one): then
        ``coefs`` has a column per (level, design column).
    """

    def __init__(self, model, alphas: np.ndarray, coefs: np.ndarray, fit: Fit,
                 alpha_max: float, *, L1_wt: float, penalty_factor: np.ndarray,
                 standardize: bool, scale: np.ndarray, cv_raw: np.ndarray | None,
                 cv_weight: np.ndarray | None, folds: np.ndarray | None, seed,
                 total: float) -> None:
        d = model.data
        self.model = model
        self.alphas = np.asarray(alphas, dtype=float)
        self.alpha_max = float(alpha_max)
        self.L1_wt, self.standardize, self.seed = L1_wt, standardize, seed
        self.penalty_factor = pd.Series(penalty_factor, index=d.exog_names, name="penalty_factor")
        self.scale_used = pd.Series(scale, index=d.exog_names, name="scale")
        index = pd.Index(self.alphas, name="alpha")
        self.multinomial = isinstance(likelihood_of(model), MultinomialLikelihood)
        if self.multinomial:
            cols = pd.MultiIndex.from_product([fit_levels(list(model.levels), model.ref)[1:],
                                               d.exog_names], names=["level", "column"])
        else:
            cols = pd.Index(d.exog_names)
        self.coefs = pd.DataFrame(coefs, index=index, columns=cols)
        self.deviance = pd.Series(2.0 * total * fit.loss, index=index, name="deviance")
        nz = coefs.reshape(coefs.shape[0], -1, len(d.exog_names)) != 0
        if d.intercept_index is not None:
            nz[:, :, d.intercept_index] = False
        self.df = pd.Series(nz.sum(axis=(1, 2)), index=index, name="df")
        self.n_iter = pd.Series(fit.n_iter, index=index, name="n_iter")
        self.converged = bool(fit.converged.all())
        self.folds = folds
        self.n_folds = 0 if cv_raw is None else int(cv_raw.shape[0])
        (self.cv_deviance, self.cv_mean, self.cv_se, self.alpha_min,
         self.alpha_1se) = (None,) * 5 if cv_raw is None else cv_summary(cv_raw, cv_weight, index)

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per alpha: ``df``, ``deviance`` and, with cross-validation, ``cv_mean`` and
        ``cv_se``."""
        parts = [self.df, self.deviance]
        if self.cv_mean is not None:
            parts += [self.cv_mean, self.cv_se]
        return pd.concat(parts, axis=1)

    def _alpha(self, alpha) -> float:
        if isinstance(alpha, str):
            if alpha not in ("min", "1se"):
                raise ValueError(f"alpha must be 'min', '1se' or a number, got {alpha!r}")
            if self.n_folds == 0:
                raise ValueError(f"alpha={alpha!r} needs the cross-validation: run "
                                 "regularization_path(cv=10) or give a number")
            return self.alpha_min if alpha == "min" else self.alpha_1se
        return check_alpha(alpha)

    def refit(self, alpha="1se", maxiter: int = 100, tol: float = 1e-10):
        """The penalised fit at one alpha on all the rows: ``fit_regularized(alpha)`` with the
        path's ``L1_wt``, ``penalty_factor`` and ``standardize``.

        The fit starts where ``fit_regularized`` starts (not at the path's estimate), so its
        estimates agree with the path's to the solver's tolerance and its iteration count
        (``n_iter``, ``n_sweeps``, the summary's "No. Iterations") is the one
        ``fit_regularized`` reports for that alpha: started at the path's solution the solver
        would stop at once and report 0.

        Parameters
        ----------
        alpha : {"1se", "min"} or float
            ``alpha_1se``, ``alpha_min`` or a penalty weight.
        maxiter, tol
            As ``fit_regularized``.

        Returns
        -------
        RegularizedResults or RegularizedMNLogitResults
        """
        return self.model.fit_regularized(
            self._alpha(alpha), L1_wt=self.L1_wt, penalty_factor=self.penalty_factor,
            standardize=self.standardize, maxiter=maxiter, tol=tol)

    def plot(self, kind: str = "path", ax=None, **kwargs):
        """Draw the coefficient path (``kind="path"``, :func:`glmclass.plot.
        regularization_path`) or the cross-validation curve (``kind="cv"``,
        :func:`glmclass.plot.cv_curve`); returns the matplotlib Axes."""
        from .. import plot

        if kind == "path":
            return plot.regularization_path(self, ax=ax, **kwargs)
        if kind == "cv":
            return plot.cv_curve(self, ax=ax, **kwargs)
        raise ValueError(f"kind must be 'path' or 'cv', got {kind!r}")

    def __repr__(self) -> str:
        cv = f", {self.n_folds}-fold CV" if self.n_folds else ""
        return (f"<RegularizationPath: {type(self.model).__name__}, {penalty_name(self.L1_wt)}, "
                f"{self.alphas.size} alphas{cv}>")
