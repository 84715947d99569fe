"""Results of a maximum-likelihood GLM fit (GLM, Logit, Probit): labelled once, every derived
number cached; the covariance from :mod:`glmclass.numerics.covariance`."""

from __future__ import annotations

import warnings
from functools import cached_property

import numpy as np
import pandas as pd

from ..errors import GlmclassWarning
from ..numerics.covariance import covariance, hat_values
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..solvers.irls import IRLSFit
from ..summary import Summary
from .base import LikelihoodMixin, WaldMixin, coef_table, num
from .glm_base import GLMBaseResults


class GLMResults(GLMBaseResults, WaldMixin, LikelihoodMixin):
    """Estimates, inference and predictions of a fitted GLM.

    Attributes
    ----------
    model : GLM, Logit or Probit
        The model that was fit (never modified).
    params : pandas.Series
        Estimates by design column; NaN for aliased columns.
    deviance, null_deviance : float
    converged : bool
    n_iter : int
    method : {"irls", "newton"}
    information : {"observed", "expected"}
        Which information matrix gives ``cov_params``.
    cov_type : str
        ``"nonrobust"``: the inverse information times the dispersion.
    nobs : float
        Number of observations, counting frequency weights.
    df_model, df_resid : float
    aliased : list of str
        Columns dropped as linear combinations of earlier ones.
    separation : Separation or None
        What the separation check found (binomial families).
    """

    def __init__(self, model, fit: IRLSFit, null, method: str, information: str) -> None:
        super().__init__(model, fit, null)
        self.method = method
        self.information = information
        self.cov_type = "nonrobust"
        self.separation = None

    @cached_property
    def scale(self) -> float:
        """Dispersion: 1 for Binomial and Poisson, Pearson chi2 / df_resid for Gaussian (R)."""
        if self.model.family.fixed_scale:
            return 1.0
        return self.pearson_chi2 / self.df_resid if self.df_resid > 0 else np.nan

    @property
    def _use_t(self) -> bool:
        return not self.model.family.fixed_scale

    # --- covariance ---------------------------------------------------------------------------
    @cached_property
    def _information(self) -> np.ndarray:
        """The observed or expected information on the kept columns."""
        return self.model.problem.information(self._fit.coef, self._keep,
                                              self.information == "observed", self._fit.gram)

    @cached_property
    def _bread(self) -> np.ndarray | None:
        """Inverse information on the kept columns (None when it is not positive definite)."""
        try:
            return spd_inverse(self._information)
        except NotPositiveDefinite:
            return None

    def _bare_se(self) -> np.ndarray:
        """Standard errors on the kept columns from the solver's Fisher information (no further
        pass over the data), inf where it is singular: the separation check's symptom, without
        the warning ``bse`` gives."""
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # near-singular: inf is the answer
                var = np.diag(spd_inverse(self._fit.gram[np.ix_(self._keep, self._keep)]))
        except NotPositiveDefinite:
            return np.full(self.rank, np.inf)
        with np.errstate(invalid="ignore"):
            return np.sqrt(np.where(np.isfinite(var), np.maximum(var, 0.0), np.inf))

    @cached_property
    def _cov(self) -> pd.DataFrame:
        names = self.model.data.exog_names
        keep = self._keep
        full = np.full((len(names), len(names)), np.nan)
        if self._bread is None:
            warnings.warn(
                f"the {self.information} information matrix is not positive definite at the "
                "estimates; standard errors are NaN (the fit may not be at a maximum)",
                GlmclassWarning, stacklevel=3)
        else:
            full[np.ix_(keep, keep)] = covariance(self._bread, None, "nonrobust",
                                                  scale=self.scale)
        return pd.DataFrame(full, index=names, columns=names)

    @cached_property
    def hat_matrix_diag(self) -> pd.Series:
        """Leverages h_i = w_i x_i' (X'WX)^-1 x_i of the weighted IRLS design at the estimates
        (W the Fisher weights times the prior weights), as R's ``hatvalues(glm)``; they sum to
        the rank. Used by HC2/HC3 covariances and influence measures."""
        m, keep = self.model, self._keep
        gram = self._fit.gram if self.method == "irls" else None  # Newton's is observed
        bread = spd_inverse(m.problem.information(self._fit.coef, keep, False, gram))
        w = m.prior_weights * m.family.working_weights(self._eta)
        X = m.exog if keep.all() else m.exog[:, keep]
        return pd.Series(hat_values(X, w, bread), index=m.data.index, name="hat")

    def cov_params(self) -> pd.DataFrame:
        """Covariance of the estimates: dispersion times the inverse information matrix (a copy:
        changing it leaves ``bse`` and the other cached values alone)."""
        return self._cov.copy()

    # --- prediction ---------------------------------------------------------------------------
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
        eta, index, _ = self._linear(exog, offset, exposure)
        return self._by_which(which, eta, self.model.family.link.inverse(eta), index, threshold)

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
            name = "odds ratio" if m.family.is_canonical and m.family.name == "Binomial" \
                else "exp(coef)"
            table = table.rename(columns={"coef": name})
            for c in (name, table.columns[4], table.columns[5]):
                table[c] = np.exp(table[c])
            table = table.drop(columns="std err")
        header = [
            ("Dep. Variable", m.data.endog_name), ("Model", type(m).__name__),
            ("Family", m.family.name), ("Link", m.family.link.name),
            ("Method", "IRLS" if self.method == "irls" else "Newton"),
            ("Information", self.information),
            ("No. Observations", num(self.nobs)), ("Df Model", num(self.df_model)),
            ("Df Residuals", num(self.df_resid)), ("Scale", self.scale),
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
        if self.separation is not None and self.separation.note:
            notes.append(self.separation.note)
        return Summary(f"{type(m).__name__} Regression Results", header, [(None, table)], notes)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {type(self.model).__name__}, nobs={num(self.nobs)}>"
