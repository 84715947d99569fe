"""What every results object of a GLM-like fit shares, whether the estimate is a maximum
likelihood (:class:`~glmclass.results.glm.GLMResults`) or a posterior mode
(:class:`~glmclass.results.bayes.BayesGLMResults`): the labelled estimates, fitted values and
residuals, likelihoods, per-row scores and the prediction contract.

Nothing here says how uncertain the estimates are: the frequentist and the posterior results
classes each define their own covariance and report.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.model_data import ModelData
from ..lazy import cached_property
from ..solvers.fit import Fit
from .base import check_which, row_key
from .dask import RowOutputs, new_rows_of, rows_of, shallow_copy, total_of

#: The outputs of GLM-like results that read the rows of the fit (see
#: :mod:`glmclass.results.dask`): lazy per-row values or one pass of sums on Dask data.
GLM_ROWS = {"fittedvalues": rows_of, "linear_predictor": rows_of, "resid_response": rows_of,
            "resid_pearson": rows_of, "resid_deviance": rows_of, "resid_working": rows_of,
            "score_obs": rows_of, "pearson_chi2": total_of, "pred_table": total_of,
            "resid_generalized": rows_of,
            "predict": new_rows_of}


class GLMBaseResults(RowOutputs, rows=GLM_ROWS):
    """Estimates, fitted values, residuals and predictions of a fit on a GLM problem.

    Attributes
    ----------
    model : the model that was fit (never modified)
    params : pandas.Series
        Estimates by design column; NaN for aliased columns.
    deviance, null_deviance : float
    converged : bool
    n_iter : int
    fit_history : tuple of float
        Objective after each iteration.
    nobs : float
        Number of observations, counting frequency weights.
    df_model, df_resid : float
    rank : int
        Number of estimated coefficients.
    aliased : list of str
        Columns dropped as linear combinations of earlier ones.
    """

    def __init__(self, model, fit, null) -> None:
        d = model.data
        rank = fit.aliased.size - int(np.count_nonzero(fit.aliased))
        nobs = model.problem.nobs
        # one update of the instance dict, not fourteen checked assignments (results refuse
        # assignment once built; each checked one costs ~0.3 us, and a fit at n = 50 ~0.9 ms)
        vars(self).update(
            model=model, _fit=fit, _null=null, deviance=float(fit.deviance),
            converged=bool(fit.converged), n_iter=int(fit.n_iter), fit_history=fit.history,
            aliased=[n for n, a in zip(d.exog_names, fit.aliased, strict=True) if a],
            rank=rank, nobs=nobs, df_model=float(rank - (1 if model.has_intercept else 0)),
            df_resid=float(nobs - rank),
            k_params=rank + (0 if model.family.fixed_scale else 1), formula=d.formula)

    @cached_property
    def params(self) -> pd.Series:
        """Estimates by design column (NaN for aliased columns), labelled when first asked
        (``bse`` alone needs only the labels)."""
        return pd.Series(self._fit.coef, index=self.model.data.exog_index, name="coef")

    @property
    def coef_index(self) -> pd.Index:
        """Labels of the coefficients, the design columns (known without labelling
        ``params``: ``bse`` alone needs only these)."""
        return self.model.data.exog_index

    @property
    def solver_fit(self) -> Fit:
        """The solver's record of the fit (``coef`` on the estimable columns, ``aliased``,
        the information it used, ...)."""
        return self._fit

    @property
    def estimable(self) -> np.ndarray:
        """Which design columns have an estimate (not aliased), a boolean array."""
        return ~self._fit.aliased

    @cached_property
    def null_deviance(self) -> float:
        """Deviance of the intercept-only model (offset kept), R's ``null.deviance``: made
        when first asked where the null fit needed no iteration (the null ``Fit.deviance`` None)."""
        d = self._null.deviance
        return float(self.model.problem.deviance_at(self._null.intercept) if d is None else d)

    @cached_property
    def rows_fingerprint(self) -> str:
        """Fingerprint of the rows (:func:`~glmclass.results.base.row_key`), made when
        :func:`~glmclass.compare` first asks: hashing the rows is a fifth of a small fit."""
        return row_key(self.model.data.index, self.model.freq_weights)

    @property
    def _keep(self) -> np.ndarray:
        return ~self._fit.aliased

    def partition_model(self, data: ModelData):
        """The model over the rows ``data`` of one partition, in memory: its problem encodes
        them as the fit's (:meth:`~glmclass.models.glm_base.GLMProblem.on_rows`)."""
        m = self.model
        return shallow_copy(m, data=data, problem=m.problem.on_rows(data))

    # --- linear predictors ------------------------------------------------------------------
    @cached_property
    def _eta(self) -> np.ndarray:
        """eta at the estimates on every row (computed once, when first needed)."""
        if getattr(self, "data_removed", False):  # saved with remove_data=True
            raise ValueError("the data were removed when these results were saved "
                             "(remove_data=True): in-sample values need the rows of the fit")
        return self.model.problem.linear_predictor(self._fit.coef)

    @property
    def eta(self) -> np.ndarray:
        """The linear predictor at the estimates on every row, as an array (offset included;
        :attr:`linear_predictor` labels it)."""
        return self._eta

    @cached_property
    def _null_eta(self) -> np.ndarray:
        return self.model.offset + self._null.intercept

    # --- fitted values and residuals --------------------------------------------------------
    @cached_property
    def fittedvalues(self) -> pd.Series:
        """Fitted means mu."""
        return pd.Series(self.model.family.link.inverse(self._eta), index=self.model.data.index)

    @cached_property
    def linear_predictor(self) -> pd.Series:
        """Linear predictor eta (including any offset)."""
        return pd.Series(self._eta, index=self.model.data.index)

    @cached_property
    def resid_response(self) -> pd.Series:
        """y - mu."""
        return pd.Series(self.model.endog - self.fittedvalues.to_numpy(),
                         index=self.model.data.index)

    @cached_property
    def resid_pearson(self) -> pd.Series:
        """(y - mu) sqrt(prior weight / V(mu)), as R's ``residuals(type="pearson")``."""
        fam, eta = self.model.family, self._eta
        r = fam.scaled_residual(self.model.endog, eta, 0.5 * fam.log_variance(eta))
        return pd.Series(weighted(np.sqrt(self.model.prior_weights), r),
                         index=self.model.data.index)

    @cached_property
    def resid_deviance(self) -> pd.Series:
        """sign(y - mu) sqrt(prior weight * unit deviance)."""
        dev = self.model.family.unit_deviance(self.model.endog, self._eta)
        r = np.sign(self.resid_response.to_numpy()) * np.sqrt(
            np.maximum(weighted(self.model.prior_weights, dev), 0))
        return pd.Series(r, index=self.model.data.index)

    @cached_property
    def resid_working(self) -> pd.Series:
        """(y - mu) / mu'(eta), the working residuals of the last IRLS step."""
        fam, eta = self.model.family, self._eta
        r = fam.scaled_residual(self.model.endog, eta, fam.link.log_mu_eta(eta))
        return pd.Series(r, index=self.model.data.index)

    @property
    def resid_dev(self) -> pd.Series:
        """statsmodels' name of :attr:`resid_deviance`."""
        return self.resid_deviance

    @cached_property
    def resid_generalized(self) -> pd.Series:
        """Generalized residuals, the derivative of each row's log-likelihood in its linear
        predictor, ``w (y - mu) mu'(eta) / V(mu)`` (dispersion 1): ``y - p`` for a logit,
        ``(y - Phi) phi / (Phi (1 - Phi))`` for a probit, ``y - mu`` for a Poisson log-linear
        model, as statsmodels' ``resid_generalized`` (Gourieroux et al., 1987)."""
        m, eta = self.model, self._eta
        fam = m.family
        u = weighted(m.prior_weights, fam.score_ratio(eta) * (m.endog - fam.link.inverse(eta)))
        return pd.Series(u, index=m.data.index, name="resid_generalized")

    @cached_property
    def pearson_chi2(self) -> float:
        """Pearson's chi-squared statistic, sum of squared Pearson residuals."""
        with np.errstate(over="ignore"):  # inf when a residual is beyond 1e154: say so, don't warn
            return float(np.sum(self.resid_pearson.to_numpy() ** 2))

    def score_obs(self) -> pd.DataFrame:
        """Per-row contributions to the score of the log-likelihood at the estimates,
        ``w_i (y_i - mu_i) mu'_i / V(mu_i) x_i`` (rows x design columns; NaN for aliased
        columns). They sum to zero at a maximum-likelihood estimate and are the pieces of the
        sandwich covariances (:mod:`glmclass.numerics.covariance`)."""
        m = self.model
        fam, eta = m.family, self._eta
        u = weighted(m.prior_weights, fam.score_ratio(eta) * (m.endog - fam.link.inverse(eta)))
        s = np.full(m.exog.shape, np.nan)
        s[:, self._keep] = m.exog[:, self._keep] * u[:, None]
        return pd.DataFrame(s, index=m.data.index, columns=m.data.exog_names)

    # --- likelihood ---------------------------------------------------------------------------
    @cached_property
    def llf(self) -> float:
        """Log-likelihood at the estimates."""
        ll = self.model.problem.loglik_from_null(self._null, self.deviance)  # no pass
        return self.model.problem.loglik(self._eta, self.nobs) if ll is None else ll

    @cached_property
    def llnull(self) -> float:
        """Log-likelihood of the intercept-only model (offset kept)."""
        ll = self._null.loglik  # gathered in the fit's first pass on rows not in memory
        return self.model.problem.loglik(self._null_eta, self.nobs) if ll is None else ll

    # --- prediction ---------------------------------------------------------------------------
    def linear_rows(self, exog, offset, exposure=None
                    ) -> tuple[np.ndarray, pd.Index | None, np.ndarray | None]:
        """eta of the rows to predict, their index, and their design on the kept columns
        (None in-sample). A given offset (or exposure) replaces the model's or the formula's
        (:meth:`glmclass.data.model_data.ModelData.new_rows`)."""
        m = self.model
        if exposure is not None and m.family.link.name != "log":
            raise ValueError(f"exposure= is for a log link (log(exposure) is added to the linear "
                             f"predictor), not {m.family.link.name!r}: the model was fit "
                             "without it; pass offset= for a known shift of the linear predictor")
        if exog is None and offset is None and exposure is None:
            return self._eta, m.data.index, None
        X, off, index = m.data.new_rows(exog, offset, exposure)
        X = X if self._keep.all() else X[:, self._keep]
        eta = X @ self.params.to_numpy()[self._keep]
        if off is not None:
            eta = eta + off
        return eta, index, (X if exog is not None else None)

    def predict(self, exog=None, which: str = "mean", offset=None, threshold: float = 0.5,
                exposure=None):
        """Predictions in-sample (``exog=None``) or for new data through the stored design.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data: a DataFrame with the formula's columns, or a design matrix for array
            models.
        which : {"mean", "prob", "linear", "class"}
            The mean (a Series of probabilities of the second level for binary models), the
            probabilities of both levels (a DataFrame), the linear predictor, or the predicted
            label (the contract of :mod:`glmclass.models.base`).
        offset : array-like, optional
            Offset of the rows to predict; replaces the model's offset (in-sample) or the one
            the formula defines (``offset()`` terms, columns named by ``offset=``/``exposure=``,
            read from new data). Default: that offset, else 0.
        threshold : float
            Probability above which ``which="class"`` predicts the second level.
        exposure : array-like, optional
            Exposures of the rows to predict (log link): ``log(exposure)`` is added to the
            offset, as statsmodels does.

        Returns
        -------
        pandas.Series or pandas.DataFrame
        """
        eta, index, _ = self.linear_rows(exog, offset, exposure)
        return self._by_which(which, eta, self.model.family.link.inverse(eta), index, threshold)

    def _labels(self, p: np.ndarray, threshold: float, index) -> pd.Series:
        levels = self.model.levels
        if not (isinstance(threshold, (int, float, np.number)) and 0 < threshold < 1):
            raise ValueError(f"threshold must be a probability strictly between 0 and 1, got "
                             f"{threshold!r}")
        if levels is None:
            raise ValueError("which='class' needs a binary response (0/1 or two labels)")
        labels = np.asarray(levels, dtype=object)[(p > threshold).astype(int)]
        labels[np.isnan(p)] = None
        return pd.Series(labels, index=index, name="class")

    def _prob_frame(self, p: np.ndarray, index) -> pd.DataFrame:
        levels = self.model.levels if self.model.levels is not None else [0, 1]
        return pd.DataFrame(np.column_stack([1.0 - p, p]), index=index,
                            columns=pd.Index(levels, name="level"))

    def _by_which(self, which: str, eta, p, index, threshold: float):
        """The prediction contract of :mod:`glmclass.models.base` for a binary-type response."""
        check_which(which, ("mean", "prob", "linear", "class"))
        if which == "linear":
            return pd.Series(eta, index=index, name="linear")
        if which == "mean":
            return pd.Series(p, index=index, name="mean")
        if which == "prob":
            return self._prob_frame(p, index)
        return self._labels(p, threshold, index)

    def pred_table(self, threshold: float = 0.5) -> pd.DataFrame:
        """Confusion table: rows the observed level, columns the predicted level (counts
        weighted by frequency weights)."""
        m = self.model
        if m.levels is None:
            raise ValueError("pred_table needs a binary response (0/1 or two labels)")
        pred = (self.fittedvalues.to_numpy() > threshold).astype(int)
        obs = m.endog.astype(int)
        table = np.zeros((2, 2))
        np.add.at(table, (obs, pred), m.freq_weights)
        lab = [str(v) for v in m.levels]
        return pd.DataFrame(table, index=pd.Index(lab, name="observed"),
                            columns=pd.Index(lab, name="predicted"))


def weighted(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """w * x, and 0 on rows of weight 0: they take no part in the fit, so their eta may be
    extreme and x infinite (R's residuals are 0 there too)."""
    with np.errstate(invalid="ignore"):
        return np.where(w > 0, w * x, 0.0)
