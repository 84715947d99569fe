"""Influence and outlier diagnostics of a maximum-likelihood GLM fit (``results.get_influence()``).

Everything is computed from the fit without refitting: the hat values of the weighted IRLS
design at the estimates, the Pearson and deviance residuals, and one-step approximations of the
change in the estimates when a row is deleted. Names follow statsmodels' ``GLMInfluence`` where
it has the quantity, with its definitions; the other measures are R's (``rstandard``,
``rstudent``, ``dfbeta``, ``dffits``, ``covratio``, ``influence.measures``), with R's
definitions, which the tests check against R to ~1e-10.

Notation: X the design of the estimated columns, W the IRLS (Fisher) weights at the estimates
times the prior weights, B = (X'WX)^-1, h_i = w_i x_i' B x_i the hat values, r_i the Pearson
and d_i the deviance residuals, phi the dispersion (1 for binomial and Poisson), p the rank and
n the number of rows with positive weight.

References
----------
Pregibon, D. (1981). Logistic regression diagnostics. *Annals of Statistics* 9, 705-724.
Williams, D. A. (1987). Generalized linear model diagnostics using the deviance and single
case deletions. *Applied Statistics* 36, 181-191.
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., §12.7.
R Core Team: ``influence.measures`` (stats package).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..lazy import cached_property
from ..numerics.linalg import spd_inverse
from .dask import RowOutputs, is_property_body, lazy_rows

#: Hat values this close to 1 count as 1: the row is fit exactly (R uses 10 eps on its QR-based
#: values; ours come from the inverse information, accurate to ~1e-13 on such rows).
_ONE = 1.0 - 1e-12


def _influence_rows(original, infl, *args, **kwargs):
    """An influence measure: on Dask data a lazy map over the partitions, each measuring its
    rows with the fit's global pieces (:attr:`GLMInfluence.totals`)."""
    res = infl.results
    if res.model.data.in_memory:
        return original(infl, *args, **kwargs)
    res.hat_matrix_diag  # noqa: B018 - makes the global p x p pieces before shipping
    name = original.__name__
    step = (name, None if is_property_body(original) else {})
    path = (("influence_given", {"totals": infl.totals}), step)
    if name == "cooks_distance":
        return tuple(lazy_rows(res, (*path, (i, None))) for i in (0, 1))
    return lazy_rows(res, path)


#: Every influence measure is a per-row output (see :mod:`glmclass.results.dask`).
INFLUENCE_ROWS = dict.fromkeys(
    ("hat_matrix_diag", "resid_studentized", "cooks_distance", "d_params", "params_one",
     "dfbetas", "dffits_internal", "summary_frame", "resid_studentized_deviance",
     "resid_studentized_external", "dfbeta", "dffits", "cov_ratio", "influence_measures"),
    _influence_rows)


class GLMInfluence(RowOutputs, rows=INFLUENCE_ROWS):
    """Influence measures of every row of a GLM, Logit or Probit fit.

    Parameters
    ----------
    results : GLMResults
        A maximum-likelihood fit (``model.fit()``).
    totals : dict, optional
        The measures' pieces that sum over every row, ``{"n": rows of positive weight,
        "dev2": sum of squared deviance residuals, "bread": B}``: given when the rows are
        measured apart (partitions of Dask data, where every measure is a lazy per-row map);
        default: computed from the rows of ``results``.

    Attributes
    ----------
    results : GLMResults
    k_vars : int
        Number of estimated coefficients p (aliased columns excluded).
    scale : float
        The dispersion phi of the fit.

    Notes
    -----
    Rows with zero prior weight take no part in the fit: every measure is NaN there (R leaves
    them out). With frequency weights a row is a group of identical observations, and deleting
    it deletes them all; n counts rows, as R's ``weights=`` does.
    """

    def __init__(self, results, totals: dict | None = None) -> None:
        self.results = results
        m = results.model
        self._keep = results.estimable
        self._names = [n for n, k in zip(m.exog_names, self._keep, strict=True) if k]
        self._index = m.data.index
        self.k_vars = int(self._keep.sum())
        self.scale = float(results.scale)
        self._given = totals

    @property
    def model(self):
        """The model of the results."""
        return self.results.model

    @cached_property
    def _pos(self) -> np.ndarray:
        return self.results.model.prior_weights > 0

    @cached_property
    def totals(self) -> dict:
        """The pieces of the measures that sum over every row (see the class docstring): on
        Dask data one pass of per-partition sums."""
        if self._given is not None:
            return self._given
        if not self.results.model.data.in_memory:
            from .dask import row_total

            n, dev2 = row_total(self.results, (("influence_given", {"totals": {}}),
                                               ("row_sums", {})))
            return {"n": int(round(n)), "dev2": float(dev2), "bread": self._bread}
        return {"n": int(self._pos.sum()), "dev2": float(np.sum(self._deviance[self._pos] ** 2)),
                "bread": self._bread}

    def row_sums(self) -> np.ndarray:
        """``[rows of positive weight, sum of their squared deviance residuals]``."""
        d = self.results.resid_deviance.to_numpy()
        return np.array([float(self._pos.sum()), float(np.sum(d[self._pos] ** 2))])

    # --- building blocks ----------------------------------------------------------------------
    @cached_property
    def _bread(self) -> np.ndarray:
        """B = (X'WX)^-1 with the Fisher weights (unscaled), on the estimated columns."""
        if self._given:
            return self._given["bread"]
        r = self.results
        fit = r.solver_fit
        if fit.information == "expected" and r.solver_inverse is not None:
            return r.solver_inverse  # through the shifted design's Gram when there is one
        return spd_inverse(r.model.problem.information(fit.coef, self._keep, False, fit.gram,
                                                       fit.information))

    @cached_property
    def _h(self) -> np.ndarray:
        h = self.results.hat_matrix_diag.to_numpy().copy()
        h[h > _ONE] = 1.0
        return h

    @cached_property
    def _sqrt_w(self) -> np.ndarray:
        r = self.results
        m = r.model
        return np.sqrt(m.prior_weights * m.family.working_weights(r.eta))

    def _series(self, values: np.ndarray, name: str) -> pd.Series:
        out = np.where(self._pos, values, np.nan)
        return pd.Series(out, index=self._index, name=name)

    def _frame(self, values: np.ndarray, prefix: str = "") -> pd.DataFrame:
        out = np.where(self._pos[:, None], values, np.nan)
        return pd.DataFrame(out, index=self._index, columns=[prefix + n for n in self._names])

    @staticmethod
    def _finite(x: np.ndarray) -> np.ndarray:
        """Infinite (h = 1) as NaN, as R does."""
        return np.where(np.isinf(x), np.nan, x)

    def _one_step(self, resid: np.ndarray) -> np.ndarray:
        """Rows B x_i sqrt(w_i) e_i / (1 - h_i) (0 where h_i = 1), shape (n_obs, p)."""
        h = self._h
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(h >= 1.0, 0.0, self._sqrt_w * resid / (1.0 - h))
        X = self.results.model.exog
        X = X if self._keep.all() else X[:, self._keep]
        return (X * f[:, None]) @ self._bread

    @cached_property
    def _pearson(self) -> np.ndarray:
        return self.results.resid_pearson.to_numpy()

    @cached_property
    def _deviance(self) -> np.ndarray:
        return self.results.resid_deviance.to_numpy()

    @cached_property
    def _n(self) -> int:
        return self.totals["n"]

    @cached_property
    def _sigma(self) -> np.ndarray:
        """R's ``influence(fit)$sigma``: sqrt((sum d^2 - d_i^2 / (1 - h_i)) / (n - p - 1))."""
        d, h = self._deviance, self._h
        total = self.totals["dev2"]
        with np.errstate(divide="ignore", invalid="ignore"):
            drop = np.where(h >= 1.0, 0.0, d**2 / (1.0 - h))
            return np.sqrt(np.maximum(total - drop, 0.0) / (self._n - self.k_vars - 1))

    # --- statsmodels' names --------------------------------------------------------------------
    @property
    def hat_matrix_diag(self) -> pd.Series:
        """Hat values h_i (R ``hatvalues``; they sum to p)."""
        return self._series(self._h, "hat")

    @cached_property
    def resid_studentized(self) -> pd.Series:
        """Internally studentized Pearson residuals r_i / sqrt(phi (1 - h_i)) (statsmodels;
        R ``rstandard(fit, type="pearson")``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            v = self._finite(self._pearson / np.sqrt(self.scale * (1.0 - self._h)))
        return self._series(v, "resid_studentized")

    @cached_property
    def cooks_distance(self) -> tuple[pd.Series, pd.Series]:
        """Cook's distances D_i = (r_i / (1 - h_i))^2 h_i / (phi p) (R ``cooks.distance``), and
        the p-values of D_i on the F(p, df_resid) distribution (statsmodels; approximate
        outside the Gaussian linear model)."""
        h = self._h
        with np.errstate(divide="ignore", invalid="ignore"):
            d = self._finite((self._pearson / (1.0 - h)) ** 2 * h / (self.scale * self.k_vars))
        p = stats.f.sf(d, self.k_vars, self.results.df_resid)
        return self._series(d, "cooks_d"), self._series(p, "pvalue")

    @cached_property
    def d_params(self) -> pd.DataFrame:
        """One-step change in the estimates when row i is deleted, B x_i sqrt(w_i) r_i /
        (1 - h_i) with the Pearson residual (Pregibon 1981; statsmodels ``d_params``): the
        first Fisher-scoring step from the full fit towards the fit without the row, rows x
        estimated coefficients. Sign: full fit minus fit without the row."""
        return self._frame(self._one_step(self._pearson))

    @cached_property
    def params_one(self) -> pd.DataFrame:
        """One-step estimates without each row, ``params - d_params`` (statsmodels)."""
        return self.results.params[self._names] - self.d_params

    @cached_property
    def dfbetas(self) -> pd.DataFrame:
        """``d_params`` divided by the standard errors sqrt(phi B_jj) (statsmodels
        ``dfbetas``; R's ``dfbetas`` is :meth:`influence_measures`' ``dfb_`` columns)."""
        se = np.sqrt(self.scale * np.diag(self._bread))
        return self.d_params / se

    @cached_property
    def dffits_internal(self) -> pd.Series:
        """resid_studentized * sqrt(h_i / (1 - h_i)) (statsmodels ``summary_frame``)."""
        h = self._h
        with np.errstate(divide="ignore", invalid="ignore"):
            v = self._finite(self.resid_studentized.to_numpy() * np.sqrt(h / (1.0 - h)))
        return self._series(v, "dffits_internal")

    def summary_frame(self) -> pd.DataFrame:
        """statsmodels' table: ``dfb_<column>`` (its ``dfbetas``), ``cooks_d``,
        ``standard_resid``, ``hat_diag``, ``dffits_internal``; one row per observation."""
        frame = self.dfbetas.add_prefix("dfb_")
        frame["cooks_d"] = self.cooks_distance[0]
        frame["standard_resid"] = self.resid_studentized
        frame["hat_diag"] = self.hat_matrix_diag
        frame["dffits_internal"] = self.dffits_internal
        return frame

    # --- R's measures --------------------------------------------------------------------------
    @cached_property
    def resid_studentized_deviance(self) -> pd.Series:
        """Standardized deviance residuals d_i / sqrt(phi (1 - h_i)): R's ``rstandard(fit)``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            v = self._finite(self._deviance / np.sqrt(self.scale * (1.0 - self._h)))
        return self._series(v, "rstandard")

    @cached_property
    def resid_studentized_external(self) -> pd.Series:
        """Studentized deletion residuals, R's ``rstudent(fit)`` (Williams 1987):
        sign(d_i) sqrt(d_i^2 + h_i r_i^2 / (1 - h_i)), divided by the deletion estimate of
        sigma when the dispersion is estimated (Gaussian)."""
        d, r, h = self._deviance, self._pearson, self._h
        with np.errstate(divide="ignore", invalid="ignore"):
            v = self._finite(np.sign(d) * np.sqrt(d**2 + h * r**2 / (1.0 - h)))
            if not self.results.model.family.fixed_scale:
                v = v / self._sigma
        return self._series(v, "rstudent")

    @cached_property
    def dfbeta(self) -> pd.DataFrame:
        """R's ``dfbeta(fit)``: B x_i sqrt(w_i) d_i / (1 - h_i), the one-step change of
        ``d_params`` with the deviance residual in place of the Pearson one (R's
        ``lm.influence`` on the weighted least-squares fit at convergence)."""
        return self._frame(self._one_step(self._deviance))

    @cached_property
    def dffits(self) -> pd.Series:
        """R's ``dffits(fit)``: d_i sqrt(h_i) / (sigma_(i) (1 - h_i)), sigma_(i) R's deletion
        estimate sqrt((sum d^2 - d_i^2 / (1 - h_i)) / (n - p - 1))."""
        h = self._h
        with np.errstate(divide="ignore", invalid="ignore"):
            v = self._finite(self._deviance * np.sqrt(h) / (self._sigma * (1.0 - h)))
        return self._series(v, "dffits")

    @cached_property
    def cov_ratio(self) -> pd.Series:
        """R's ``covratio(fit)``: (sigma_(i) / s)^(2p) / (1 - h_i), s^2 = sum d^2 / (n - p)."""
        h = self._h
        s = np.sqrt(self.totals["dev2"] / (self._n - self.k_vars))
        with np.errstate(divide="ignore", invalid="ignore"):
            v = self._finite((self._sigma / s) ** (2 * self.k_vars) / (1.0 - h))
        return self._series(v, "cov_ratio")

    def influence_measures(self) -> pd.DataFrame:
        """R's ``influence.measures(fit)$infmat``: ``dfb_<column>`` (R's ``dfbetas``, the
        ``dfbeta`` divided by sigma_(i) sqrt(B_jj)), ``dffit``, ``cov_r``, ``cook_d``,
        ``hat``; one row per observation."""
        scale = np.sqrt(np.diag(self._bread))[None, :] * self._sigma[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            frame = (self.dfbeta / scale).add_prefix("dfb_")
        frame["dffit"] = self.dffits
        frame["cov_r"] = self.cov_ratio
        frame["cook_d"] = self.cooks_distance[0]
        frame["hat"] = self.hat_matrix_diag
        return frame

    def __repr__(self) -> str:
        return f"<GLMInfluence: {self._n} rows, {self.k_vars} coefficients>"
