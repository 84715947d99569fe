"""Predictions with standard errors and confidence intervals (``results.get_prediction``).

The standard error of the linear predictor of a row x is ``sqrt(x' V x)`` with V the
covariance of the estimates the fit reports (model-based or sandwich). On the response scale
the delta method gives ``se(mu) = |dmu/deta| se(eta)`` (R's ``predict(type = "response",
se.fit = TRUE)``), and the interval is the inverse link of ``eta -+ q se(eta)``: it stays
inside the range of the mean and is not symmetric about it.

For a multinomial logit each level k has ``p_k = softmax_k(eta)``; its gradient in the
coefficients of a non-reference level j is ``p_k (delta_kj - p_j) x``, and the interval is
built on the scale of the level's log-odds against all the others, ``logit(p_k)`` (for two
levels this is the binary logit interval), then mapped back with the logistic function.

The prediction of rows that are not in memory (in-sample on a fit to Dask data, or new rows
given as a Dask DataFrame to a fit on either data) is a :class:`LazyPredictionResults`: the
same names, each per-row table a lazy Dask collection made partition by partition by the code
above (with the fit's covariance, computed once before).

References
----------
Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed., §16.1 (the delta method).
R Core Team, ``predict.glm`` (stats package).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ..lazy import cached_property
from ..numerics.covariance import hat_values
from ..numerics.stderr import quadratic_form_errors
from .base import check_which
from .dask import detach, lazy_output, lazy_rows, map_new_rows, refuse_new_offset


class PredictionResults:
    """Predicted values with delta-method standard errors and confidence intervals.

    Built by ``results.get_prediction(exog, which)``.

    Attributes
    ----------
    predicted : pandas.Series or pandas.DataFrame
        The prediction of each row: a Series for single-response models, a DataFrame with one
        column per level for multinomial models.
    se : pandas.Series or pandas.DataFrame
        Its standard error, shaped as ``predicted``.
    which : {"mean", "linear"}
        The scale of the prediction.
    predicted_mean, se_mean : pandas.Series or pandas.DataFrame
        ``predicted`` and ``se`` by statsmodels' names (on the scale of ``which``, as there).
    linear, linear_se : ndarray
        The scale the intervals are built on (eta, or a level's log-odds) and its standard
        error, shaped as ``predicted``.
    """

    def __init__(self, predicted: np.ndarray, se: np.ndarray, linear: np.ndarray,
                 linear_se: np.ndarray, inverse: Callable[[np.ndarray], np.ndarray],
                 quantile: Callable[[float], float], which: str, index: pd.Index,
                 levels: list | None = None) -> None:
        self.which = which
        self.linear = linear
        self.linear_se = linear_se
        self._inverse = inverse
        self._quantile = quantile
        self._levels = levels
        self._index = index
        self.predicted = self._frame(predicted, which)
        self.se = self._frame(se, f"{which}_se")

    @property
    def predicted_mean(self) -> pd.Series | pd.DataFrame:
        """The prediction of each row (statsmodels' name of :attr:`predicted`)."""
        return self.predicted

    @property
    def se_mean(self) -> pd.Series | pd.DataFrame:
        """Its standard error (statsmodels' name of :attr:`se`)."""
        return self.se

    def _frame(self, values: np.ndarray, name: str):
        if self._levels is None:
            return pd.Series(values, index=self._index, name=name)
        return pd.DataFrame(values, index=self._index,
                            columns=pd.Index(self._levels, name="level"))

    def _bounds(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        if not (isinstance(alpha, (int, float, np.number)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        q = self._quantile(alpha)
        with np.errstate(invalid="ignore", over="ignore"):
            a = self._inverse(self.linear - q * self.linear_se)
            b = self._inverse(self.linear + q * self.linear_se)
        return np.fmin(a, b), np.fmax(a, b)  # a decreasing inverse link swaps them

    def conf_int(self, alpha: float = 0.05):
        """Confidence intervals: a DataFrame with columns ``lower`` and ``upper`` (one row per
        prediction; multinomial models: rows (row, level) as :meth:`summary_frame`)."""
        lo, hi = self._bounds(alpha)
        if self._levels is None:
            return pd.DataFrame({"lower": lo, "upper": hi}, index=self._index)
        frame = self._long({"lower": lo, "upper": hi})
        return frame.drop(columns="level").set_index(
            pd.MultiIndex.from_arrays([frame.index, frame["level"]]))

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Prediction table: columns ``mean, mean_se, mean_ci_lower, mean_ci_upper`` (the
        names statsmodels uses, whatever ``which`` is); multinomial models give a long table
        with a ``level`` column first, one row per (row, level)."""
        lo, hi = self._bounds(alpha)
        cols = {"mean": self.predicted.to_numpy(), "mean_se": self.se.to_numpy(),
                "mean_ci_lower": lo, "mean_ci_upper": hi}
        if self._levels is None:
            return pd.DataFrame(cols, index=self._index)
        return self._long(cols)

    def _long(self, cols: dict) -> pd.DataFrame:
        """One row per (row, level), rows in order, levels within rows."""
        k = len(self._levels)
        out = {"level": np.tile(np.asarray(self._levels, dtype=object), len(self._index))}
        out.update({name: np.asarray(v).reshape(-1) for name, v in cols.items()})
        return pd.DataFrame(out, index=self._index.repeat(k))

    def __repr__(self) -> str:
        return f"<PredictionResults: which={self.which!r}, {len(self._index)} rows>"


class LazyPredictionResults:
    """Predictions of rows in Dask partitions: the names of :class:`PredictionResults`, each a
    lazy Dask Series or DataFrame whose partitions are the in-memory prediction of the
    partition's rows (computed when asked).

    Built by ``results.get_prediction()`` on a fit to Dask data (its own rows), or by
    ``results.get_prediction(new)`` with a Dask DataFrame ``new`` on a fit to either data.
    The covariance of the estimates and the critical values are the fit's, computed once on
    the client before the results (without rows) are shipped to the partitions.

    Attributes
    ----------
    which : {"mean", "linear"}
    predicted, se, predicted_mean, se_mean : dask.dataframe.Series or DataFrame
        As :class:`PredictionResults`, with the fit's row labels.
    """

    def __init__(self, results: Any, which: str, exog: Any = None, offset: Any = None
                 ) -> None:
        # the fit's p x p pieces and degrees of freedom, made here before the results are
        # shipped (a partition's copy would make them from its own rows)
        results.cov_values  # noqa: B018
        results.critical_value(0.05)
        self.which = which
        self._results = results
        self._shipped = detach(results)
        self._exog = exog
        self._offset = offset

    def _rows(self, name: str, kwargs: dict | None = None) -> Any:
        """The partitions' ``get_prediction(which).name`` (called with ``kwargs`` if given)."""
        if self._exog is None:
            path = (("get_prediction", {"which": self.which}), (name, kwargs))
            return lazy_rows(self._results, path, self._shipped)
        return map_new_rows(self._shipped, self._exog,
                            {"which": self.which, "offset": self._offset}, "get_prediction",
                            ((name, kwargs),))

    @cached_property
    def predicted(self) -> Any:
        """The prediction of each row, lazy."""
        return self._rows("predicted")

    @cached_property
    def se(self) -> Any:
        """Its standard error, lazy."""
        return self._rows("se")

    @property
    def predicted_mean(self) -> Any:
        """statsmodels' name of :attr:`predicted`."""
        return self.predicted

    @property
    def se_mean(self) -> Any:
        """statsmodels' name of :attr:`se`."""
        return self.se

    def conf_int(self, alpha: float = 0.05) -> Any:
        """:meth:`PredictionResults.conf_int`, lazy."""
        return self._rows("conf_int", {"alpha": alpha})

    def summary_frame(self, alpha: float = 0.05) -> Any:
        """:meth:`PredictionResults.summary_frame`, lazy."""
        return self._rows("summary_frame", {"alpha": alpha})

    def __repr__(self) -> str:
        rows = "the fit's rows" if self._exog is None else "new rows"
        return f"<LazyPredictionResults: which={self.which!r}, {rows} in Dask partitions>"


def _in_partitions(res, exog, offset) -> bool:
    """Whether a prediction is of rows in Dask partitions: the fit's own (with the fit's
    offsets), or new rows."""
    lazy = lazy_output(res, exog)
    if lazy and exog is None:
        refuse_new_offset("get_prediction", {"offset": offset})
    return lazy


def _variance_rows(X: np.ndarray, V: np.ndarray) -> np.ndarray:
    """x_i' V x_i for every row of X, over row blocks (NaN rows give NaN)."""
    ok = ~np.isnan(X).any(axis=1)
    out = np.full(X.shape[0], np.nan)
    if ok.any():
        Xo = X if ok.all() else X[ok]
        out[ok] = hat_values(Xo, np.ones(Xo.shape[0]), V)
    return out


def glm_prediction(res, exog, which: str, offset) -> PredictionResults | LazyPredictionResults:
    """:meth:`GLMResults.get_prediction`."""
    check_which(which, ("mean", "linear"))
    if _in_partitions(res, exog, offset):
        return LazyPredictionResults(res, which, exog, offset)
    m, keep = res.model, res.estimable
    eta, index, X = res.linear_rows(exog, offset)
    if X is None:
        X = m.exog if keep.all() else m.exog[:, keep]
    V = res.cov_values[np.ix_(keep, keep)]
    se_eta = quadratic_form_errors(_variance_rows(X, V), V, "predictions")
    if which == "linear":
        return PredictionResults(eta, se_eta, eta, se_eta, lambda e: e, res.critical_value,
                                 "linear", index)
    link = m.family.link
    mu = link.inverse(eta)
    with np.errstate(invalid="ignore"):
        se = np.abs(link.mu_eta(eta)) * se_eta
    return PredictionResults(mu, se, eta, se_eta, link.inverse, res.critical_value, "mean", index)


def mnlogit_prediction(res, exog, which: str, offset
                       ) -> PredictionResults | LazyPredictionResults:
    """:meth:`MNLogitResults.get_prediction` (the delta method through the softmax)."""
    check_which(which, ("mean", "linear"))
    if _in_partitions(res, exog, offset):
        return LazyPredictionResults(res, which, exog, offset)
    X, off, index = res.design_rows(exog, offset)
    keep = res.estimable
    Xk = X if keep.all() else X[:, keep]
    eta = res.linear_of(X, off)  # (n, K-1), log-odds against the reference
    k1, r = eta.shape[1], Xk.shape[1]
    kept = np.flatnonzero(np.tile(keep, k1))
    V = res.cov_values[np.ix_(kept, kept)]
    # Q[i, j, l] = x_i' V_jl x_i: the covariance of the log-odds of levels j and l in row i
    Q = np.empty((X.shape[0], k1, k1))
    for j in range(k1):
        for l in range(j, k1):
            block = V[j * r:(j + 1) * r, l * r:(l + 1) * r]
            sym = (block + block.T) / 2.0
            Q[:, j, l] = Q[:, l, j] = _variance_rows(Xk, sym)
    q = res.critical_value
    if which == "linear":
        se = quadratic_form_errors(np.diagonal(Q, axis1=1, axis2=2), V, "predictions")
        return PredictionResults(eta, se, eta, se, lambda e: e, q, "linear", index,
                                 list(res.nonref_levels))
    prob_fit = res.probabilities(eta, natural=False)  # fit order: reference first
    # dp_k / d(eta_j) = p_k (delta_kj - p_j), j over the non-reference levels
    C = -prob_fit[:, :, None] * prob_fit[:, None, 1:]
    C[:, 1:, :] += np.einsum("ik,kj->ikj", prob_fit[:, 1:], np.eye(k1))
    var = np.einsum("ikj,ijl,ikl->ik", C, Q, C)
    se = quadratic_form_errors(var, V, "predictions")
    with np.errstate(divide="ignore", invalid="ignore"):
        logit = special.logit(prob_fit)
        logit_se = se / (prob_fit * (1.0 - prob_fit))
    order = res.natural_order
    return PredictionResults(prob_fit[:, order], se[:, order], logit[:, order],
                             logit_se[:, order], special.expit, q, "mean", index,
                             list(res.levels))



def level_prediction(likelihood, X: np.ndarray, params: np.ndarray, offset: np.ndarray,
                     cov: np.ndarray, quantile: Callable[[float], float], index: pd.Index,
                     levels: list) -> PredictionResults:
    """Probabilities of each level of any multi-output likelihood (``likelihood.mean`` and
    ``likelihood.mean_jacobian`` in its flat parameters) with delta-method standard errors,
    the intervals built on each level's logit scale and mapped back.

    Parameters
    ----------
    likelihood : Likelihood
    X : ndarray of shape (n, k)
    params : ndarray
        Every parameter, in the order of ``cov``.
    offset : ndarray of shape (n,)
    cov : ndarray of shape (m, m)
    quantile : callable
        ``alpha -> `` the two-sided critical value.
    index : pandas.Index
    levels : list
        Labels of the columns of ``likelihood.mean``.
    """
    prob = likelihood.mean(X, params, offset)
    G = likelihood.mean_jacobian(X, params, offset)  # (n, K, m)
    var = np.einsum("nka,ab,nkb->nk", G, cov, G)
    se = quadratic_form_errors(var, cov, "predictions")
    with np.errstate(divide="ignore", invalid="ignore"):
        logit = special.logit(prob)
        logit_se = se / (prob * (1.0 - prob))
    return PredictionResults(prob, se, logit, logit_se, special.expit, quantile, "mean",
                             index, list(levels))
