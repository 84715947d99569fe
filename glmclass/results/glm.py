"""Results of a GLM fit (GLM, Logit, Probit): labelled once, every derived number cached."""

from __future__ import annotations

import warnings
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import stats

from ..blocks import ArrayBlocks
from ..errors import GlmclassWarning
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..solvers.gram import weighted_gram
from ..solvers.irls import IRLSFit
from ..summary import Summary
from .base import LikelihoodMixin, coef_table, row_key


class GLMResults(LikelihoodMixin):
    """Estimates, inference and predictions of a fitted GLM.

    Attributes
    ----------
    model : GLM
        The model that was fit (never modified).
    params : pandas.Series
        Estimates by design column; NaN for aliased columns.
    deviance, null_deviance : float
    converged : bool
    n_iter : int
    method : {"irls", "newton"}
    information : {"observed", "expected"}
        Which information matrix gives ``cov_params``.
    nobs : float
        Number of observations, counting frequency weights.
    df_model, df_resid : float
    aliased : list of str
        Columns dropped as linear combinations of earlier ones.
    """

    def __init__(self, model, fit: IRLSFit, eta: np.ndarray, null_eta: np.ndarray,
                 null_deviance: float, method: str, information: str) -> None:
        self.model = model
        d = model.data
        self._fit = fit
        self._eta = eta  # linear predictor on every row, at the estimates
        self._null_eta = null_eta
        self.params = pd.Series(fit.coef, index=d.exog_names, name="coef")
        self.deviance = float(fit.deviance)
        self.null_deviance = float(null_deviance)
        self.converged = bool(fit.converged)
        self.n_iter = int(fit.n_iter)
        self.fit_history = fit.history
        self.method = method
        self.information = information
        self.aliased = [n for n, a in zip(d.exog_names, fit.aliased, strict=True) if a]
        self.rank = int((~fit.aliased).sum())
        pw = model.prior_weights
        f, v = model.freq_weights, model.var_weights
        self.nobs = float(f.sum() if v.strides == (0,) and v[0] > 0 else f[v > 0].sum())
        self.df_model = float(self.rank - (1 if model.has_intercept else 0))
        self.df_resid = float(self.nobs - self.rank)
        self.k_params = self.rank + (0 if model.family.fixed_scale else 1)
        self._prior_weights = pw
        self._row_key = row_key(d.index, model.freq_weights)
        self.formula = d.formula

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
        return pd.Series(_weighted(np.sqrt(self._prior_weights), r), index=self.model.data.index)

    @cached_property
    def resid_deviance(self) -> pd.Series:
        """sign(y - mu) sqrt(prior weight * unit deviance)."""
        dev = self.model.family.unit_deviance(self.model.endog, self._eta)
        r = np.sign(self.resid_response.to_numpy()) * np.sqrt(
            np.maximum(_weighted(self._prior_weights, dev), 0))
        return pd.Series(r, index=self.model.data.index)

    @cached_property
    def resid_working(self) -> pd.Series:
        """(y - mu) / mu'(eta), the working residuals of the last IRLS step."""
        fam, eta = self.model.family, self._eta
        r = fam.scaled_residual(self.model.endog, eta, fam.link.log_mu_eta(eta))
        return pd.Series(r, index=self.model.data.index)

    @cached_property
    def pearson_chi2(self) -> float:
        """Pearson's chi-squared statistic, sum of squared Pearson residuals."""
        with np.errstate(over="ignore"):  # inf when a residual is beyond 1e154: say so, don't warn
            return float(np.sum(self.resid_pearson.to_numpy() ** 2))

    @cached_property
    def scale(self) -> float:
        """Dispersion: 1 for Binomial and Poisson, Pearson chi2 / df_resid for Gaussian (R)."""
        if self.model.family.fixed_scale:
            return 1.0
        return self.pearson_chi2 / self.df_resid if self.df_resid > 0 else np.nan

    # --- likelihood ---------------------------------------------------------------------------
    def _loglik(self, eta: np.ndarray) -> float:
        m = self.model
        scale = 1.0
        if not m.family.fixed_scale:  # maximum-likelihood dispersion, as R's logLik
            scale = np.sum(self._prior_weights * m.family.unit_deviance(m.endog, eta)) / self.nobs
        ll = m.family.loglik_obs(m.endog, eta, m.var_weights, scale)
        return float(np.sum(_weighted(m.freq_weights, ll)))

    @cached_property
    def llf(self) -> float:
        """Log-likelihood at the estimates."""
        return self._loglik(self._eta)

    @cached_property
    def llnull(self) -> float:
        """Log-likelihood of the intercept-only model (offset kept)."""
        return self._loglik(self._null_eta)

    # --- inference ----------------------------------------------------------------------------
    @cached_property
    def _information(self) -> np.ndarray:
        m, keep = self.model, ~self._fit.aliased
        if self.information == "expected" or m.family.is_canonical:
            info = self._fit.gram
        else:
            fam, eta = m.family, self._eta
            blocks = ArrayBlocks(m.exog, m.endog, self._prior_weights)
            info = weighted_gram(blocks, lambda b: b.weights * fam.observed_weights(
                b.y, eta[b.start : b.start + b.X.shape[0]]))
        return info[np.ix_(keep, keep)]

    def cov_params(self) -> pd.DataFrame:
        """Covariance of the estimates: dispersion times the inverse information matrix (a copy:
        changing it leaves ``bse`` and the other cached values alone)."""
        return self._cov.copy()

    @cached_property
    def _cov(self) -> pd.DataFrame:
        names = self.model.data.exog_names
        keep = ~self._fit.aliased
        full = np.full((len(names), len(names)), np.nan)
        try:
            full[np.ix_(keep, keep)] = self.scale * spd_inverse(self._information)
        except NotPositiveDefinite:
            warnings.warn(
                f"the {self.information} information matrix is not positive definite at the "
                "estimates; standard errors are NaN (the fit may not be at a maximum)",
                GlmclassWarning, stacklevel=3)
        return pd.DataFrame(full, index=names, columns=names)

    @cached_property
    def bse(self) -> pd.Series:
        """Standard errors."""
        return pd.Series(np.sqrt(np.diag(self._cov)), index=self.params.index, name="bse")

    @cached_property
    def tvalues(self) -> pd.Series:
        """Wald statistics params / bse (z for Binomial/Poisson, t for Gaussian)."""
        return (self.params / self.bse).rename("z")

    @property
    def _use_t(self) -> bool:
        return not self.model.family.fixed_scale

    @cached_property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values (normal; Student t on df_resid when the dispersion is estimated)."""
        t = np.abs(self.tvalues.to_numpy())
        p = 2 * (stats.t.sf(t, self.df_resid) if self._use_t else stats.norm.sf(t))
        return pd.Series(p, index=self.params.index, name="pvalues")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald confidence intervals, a DataFrame with columns ``lower`` and ``upper``."""
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        q = stats.t.isf(alpha / 2, self.df_resid) if self._use_t else stats.norm.isf(alpha / 2)
        return pd.DataFrame({"lower": self.params - q * self.bse,
                             "upper": self.params + q * self.bse})

    # --- prediction ---------------------------------------------------------------------------
    def predict(self, exog=None, which: str = "mean", offset=None, threshold: float = 0.5):
        """Predictions in-sample (``exog=None``) or for new data through the stored design.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data: a DataFrame with the formula's columns, or a design matrix for array
            models.
        which : {"mean", "linear", "class"}
            Mean (probabilities for binary models), linear predictor, or predicted label.
        offset : array-like, optional
            Offset of the new rows (default 0).
        threshold : float
            Probability above which ``which="class"`` predicts the second level.

        Returns
        -------
        pandas.Series
        """
        if which not in ("mean", "linear", "class"):
            raise ValueError(f"which must be 'mean', 'linear' or 'class', got {which!r}")
        m = self.model
        if exog is None:
            eta, index = self._eta, m.data.index
        else:
            X = m.data.design(exog)
            keep = ~self._fit.aliased
            eta = X[:, keep] @ self.params.to_numpy()[keep]
            if offset is not None:
                eta = eta + np.asarray(offset, dtype=float)
            index = exog.index if isinstance(exog, (pd.DataFrame, pd.Series)) else None
        if which == "linear":
            return pd.Series(eta, index=index, name="linear")
        mu = m.family.link.inverse(eta)
        if which == "mean":
            return pd.Series(mu, index=index, name="mean")
        if m.levels is None:
            raise ValueError("which='class' needs a binary response (0/1 or two labels)")
        labels = np.asarray(m.levels, dtype=object)[(mu > threshold).astype(int)]
        return pd.Series(labels, index=index, name="class")

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

    # --- report ---------------------------------------------------------------------------------
    def summary(self, exp: bool = False, alpha: float = 0.05) -> Summary:
        """Statistical report: fit header and coefficient table.

        Parameters
        ----------
        exp : bool
            Show exp(coef) and its interval (odds ratios for a logit link) instead of coef.
        alpha : float
            1 - confidence level of the intervals.
        """
        m = self.model
        stat = "t" if self._use_t else "z"
        table = coef_table(self.params, self.bse, self.tvalues, self.pvalues,
                           self.conf_int(alpha), stat, alpha)
        if exp:
            name = "odds ratio" if m.family.link.name == "logit" else "exp(coef)"
            table = table.rename(columns={"coef": name})
            for c in (name, table.columns[4], table.columns[5]):
                table[c] = np.exp(table[c])
            table = table.drop(columns="std err")
        header = [
            ("Dep. Variable", m.data.endog_name), ("Model", type(m).__name__),
            ("Family", m.family.name), ("Link", m.family.link.name),
            ("Method", "IRLS" if self.method == "irls" else "Newton"),
            ("Information", self.information),
            ("No. Observations", _num(self.nobs)), ("Df Model", _num(self.df_model)),
            ("Df Residuals", _num(self.df_resid)), ("Scale", self.scale),
            ("Converged", self.converged), ("No. Iterations", self.n_iter),
            ("Log-Likelihood", self.llf), ("LL-Null", self.llnull),
            ("Deviance", self.deviance), ("Pearson chi2", self.pearson_chi2),
            ("AIC", self.aic), ("BIC", self.bic),
            ("Pseudo R-squ.", self.prsquared), ("LLR p-value", self.llr_pvalue),
        ]
        if m.data.n_dropped:
            header.append(("Rows dropped (missing)", m.data.n_dropped))
        notes = [f"Standard errors from the {self.information} information matrix."]
        if self.aliased:
            notes.append(f"Aliased (linearly dependent) columns with NaN estimates: "
                         f"{', '.join(self.aliased)}.")
        notes.extend(self._extra_notes())
        title = f"{type(m).__name__} Regression Results"
        return Summary(title, header, [(None, table)], notes)

    def _extra_notes(self) -> list[str]:
        sep = getattr(self, "separation", None)
        return [sep.note] if sep is not None and getattr(sep, "note", "") else []

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {type(self.model).__name__}, nobs={_num(self.nobs)}>"


def _weighted(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """w * x, and 0 on rows of weight 0: they take no part in the fit, so their eta may be
    extreme and x infinite (R's residuals are 0 there too)."""
    with np.errstate(invalid="ignore"):
        return np.where(w > 0, w * x, 0.0)


def _num(x: float):
    return int(x) if float(x).is_integer() else x
