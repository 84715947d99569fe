"""FirthLogit: logistic regression by Firth's bias-reduced (penalised) likelihood.

Maximising ``l(b) + 1/2 log|I(b)|`` (the Jeffreys prior as a penalty) removes the O(1/n) bias
of the maximum-likelihood estimate and keeps every estimate finite under complete and
quasi-complete separation, where the MLE does not exist (Heinze & Schemper 2002). The fit is
:func:`glmclass.solvers.firth.firth_logit`; the model holds the same validated data as
:class:`~glmclass.Logit` (a :class:`~glmclass.models.glm_base.GLMProblem`) and is no subclass
of it.

References
----------
Firth, D. (1993). Bias reduction of maximum likelihood estimates. *Biometrika* 80, 27-38.
Heinze, G. and Schemper, M. (2002). A solution to the problem of separation in logistic
regression. *Statistics in Medicine* 21, 2409-2419.
Kosmidis, I. (2023). brglm2: Bias reduction in generalized linear models. R package.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import families as F
from .. import links as L
from ..data.model_data import ModelData
from ..progress import IterationLog
from ..results.firth import FirthResults
from ..rows.blocks import ArrayBlocks
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..solvers.rank import aliased_design_columns
from ..solvers.solve import solve
from .base import check_start, fit_control
from .glm_base import GLMBase, null_record

_HINT = "raise maxiter or give start_params"


class FirthLogit(GLMBase):
    """Logistic regression by Firth's penalised likelihood (bias-reduced, finite under
    separation).

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        0/1, bool or two labels (the second level, sorted or in Categorical order, is the
        success); or proportions with ``var_weights`` = the number of trials.
    exog : array-like of shape (n_obs, p)
        Design matrix (include a constant column for an intercept).
    offset : array-like of shape (n_obs,), optional
        Known term added to the linear predictor.
    freq_weights : array-like of shape (n_obs,), optional
        Replication counts: a row with weight 3 counts as three identical rows (logistf's
        ``weights``).
    var_weights : array-like of shape (n_obs,), optional
        Binomial trials of proportions (R's ``glm`` ``weights``).
    missing : {"drop", "raise"}
        Drop rows with missing values, or raise naming the column.

    Notes
    -----
    The estimate maximises ``l*(b) = l(b) + 1/2 log|X'WX|``, ``W = diag(w_i mu_i (1 -
    mu_i))``: the same as R's ``brglm2`` (``glm(..., method = "brglmFit", type = "AS_mean")``)
    and ``logistf``. Frequency weights and trials enter the penalty alike (three copies of a
    row and one row of three trials give the same estimate). Rank-deficient designs are handled
    as :class:`~glmclass.Logit` handles them: a column that is a linear combination of earlier
    ones is aliased (NaN estimate, :class:`~glmclass.RankDeficientWarning`). On Dask data every
    evaluation is two passes over the partitions and the hat values are a lazy per-row map.

    References
    ----------
    Firth, D. (1993). *Biometrika* 80, 27-38. Heinze, G. and Schemper, M. (2002). *Statistics
    in Medicine* 21, 2409-2419.
    """

    def __init__(self, endog, exog, offset=None, freq_weights=None, var_weights=None,
                 missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, offset=offset, freq_weights=freq_weights,
                         var_weights=var_weights)

    def _setup(self, data: ModelData) -> None:
        if data.exog.shape[1] == 0:
            raise ValueError("FirthLogit needs at least one design column (an intercept or a "
                             "predictor)")
        self._set_problem(data, F.Binomial(L.Logit()))

    def fit(self, maxiter: int = 100, tol: float = 1e-10, start_params=None,
            disp: bool = False) -> FirthResults:
        """Fit by modified-score Fisher scoring with step-halving on the penalised
        log-likelihood.

        Parameters
        ----------
        maxiter : int
            Largest number of iterations (brglm2's default, 100).
        tol : float
            Converged when the relative change of ``-2 l*`` is below ``tol`` (R's rule) and
            no coefficient moves by more than ``tol (1 + |b_j|)``.
        start_params : array-like of shape (p,) or dict, optional
            Starting coefficients, in column order or by column name (default 0, as logistf).
        disp : bool
            Print one line per iteration (:class:`~glmclass.progress.IterationLog`).

        Returns
        -------
        FirthResults
        """
        start = check_start(start_params, self.exog_names)
        control = fit_control(maxiter, tol, "firth",
                              progress=IterationLog("penalised deviance") if disp else None)
        inner = control.replace(maxiter=max(100, control.maxiter), progress=None)
        if not self.data.in_memory:  # rows not in memory: passes over the parts
            rows = self.problem.fit_rows()
            aliased = aliased_design_columns(rows)
            keep = ~aliased
            icol = self.kept_intercept(keep)
            fit = solve(None, rows.take_columns(keep), control,
                        start=None if start is None else start[keep], intercept=icol)
            fit = self._embed(fit, aliased, None)
            null, null_penalized = self._null_fits_rows(rows, keep, icol, inner)
        else:
            X, y, w, off, pos = self._rows()
            aliased = aliased_design_columns(ArrayBlocks(X, y, w, off))
            keep = ~aliased
            icol = self.kept_intercept(keep)
            fit = solve(None, (X[:, keep], y, w, off), control,
                        start=None if start is None else start[keep], intercept=icol)
            fit = self._embed(fit, aliased, pos)
            null, null_penalized = self._null_fits(X[:, keep], y, w, off, icol, inner)
        results = FirthResults(self, fit, null, null_penalized)
        self._warn_aliased(aliased)
        self._warn_convergence(fit, "Firth's modified-score iteration", _HINT)
        return results

    # --- pieces of the fit ----------------------------------------------------------------------
    def _rows(self) -> tuple[np.ndarray, ...]:
        """Design, response, prior weights and offset of the rows with positive weight (rows
        of weight 0 take no part, as in R), and the mask of those rows."""
        p = self.problem
        pw = np.asarray(p.prior_weights, dtype=float)
        pos = pw > 0
        if pos.all():
            return self.exog, p.endog, pw, np.asarray(p.offset, dtype=float), pos
        return self.exog[pos], p.endog[pos], pw[pos], np.asarray(p.offset)[pos], pos

    def penalized_refit(self, keep: np.ndarray):
        """Refits of Firth's penalised likelihood on the kept columns, for profiles and
        penalised likelihood-ratio tests: ``refit(start, control, free, intercept)`` ->
        :class:`~glmclass.solvers.fit.Fit` (in memory, or passes over Dask
        partitions)."""
        if not self.data.in_memory:
            rows = self.problem.fit_rows().take_columns(keep)

            def refit(start, control, free, intercept) -> Fit:
                return solve(None, rows, control, start=start, free=free, intercept=intercept)

            return refit
        X, y, w, off, _ = self._rows()
        X = X if keep.all() else X[:, keep]

        def refit(start, control, free, intercept) -> Fit:  # noqa: F811
            return solve(None, (X, y, w, off), control, start=start, free=free,
                         intercept=intercept)

        return refit

    def _null_fits_rows(self, rows, keep: np.ndarray, icol: int | None,
                        control: Control) -> tuple[Fit, Fit]:
        """:meth:`_null_fits` by passes over the rows (Dask partitions)."""
        ones = rows.intercept_only()
        if icol is None:
            own = solve(None, ones, control, start=np.zeros(1), free=np.zeros(1, bool))
            null = null_record(None, own.deviance)
        else:
            own = solve(None, ones, control)
            null = null_record(float(own.coef[0]), own.deviance)
        free = np.zeros(int(keep.sum()), dtype=bool)
        if icol is not None:
            free[icol] = True
        return null, solve(None, rows.take_columns(keep), control, free=free, intercept=icol)

    def _embed(self, fit: Fit, aliased: np.ndarray, pos: np.ndarray | None) -> Fit:
        """The fit on all design columns (NaN for aliased ones, zero rows in the information)
        and all rows (hat value 0 where the weight is 0; no hat values from a fit over a row
        source: the results map them from ``cov``)."""
        keep = ~aliased
        coef = np.full(aliased.shape[0], np.nan)
        coef[keep] = fit.coef
        gram = np.zeros((aliased.shape[0],) * 2)
        gram[np.ix_(keep, keep)] = fit.gram
        cov = np.full_like(gram, np.nan)
        cov[np.ix_(keep, keep)] = fit.cov
        hat = None
        if fit.hat is not None:
            hat = np.zeros(pos.shape[0])
            hat[pos] = fit.hat
        return replace(fit, coef=coef, gram=gram, cov=cov, hat=hat, aliased=aliased)

    def kept_intercept(self, keep: np.ndarray) -> int | None:
        """The index of the column of ones among the kept columns (None: no intercept, or
        aliased)."""
        icol = self.data.intercept_index
        if icol is None or not keep[icol]:
            return None
        return int(keep[:icol].sum())

    def _null_fits(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, off: np.ndarray,
                   icol: int | None, control: Control) -> tuple[Fit, Fit]:
        """The two null models of bias-reduced logistic regression.

        - brglm2's: Firth's fit of the intercept-only model (its own penalty), whose
          deviance is ``null.deviance`` (eta = offset without an intercept);
        - logistf's: the full model with every coefficient but the intercept held at 0 (the
          penalty of the whole design), whose penalised log-likelihood is ``loglik["null"]``.
        """
        ones = np.ones((X.shape[0], 1))
        if icol is None:
            own = solve(None, (ones, y, w, off), control, start=np.zeros(1),
                        free=np.zeros(1, bool))
            null = null_record(None, own.deviance)
        else:
            own = solve(None, (ones, y, w, off), control)
            null = null_record(float(own.coef[0]), own.deviance)
        free = np.zeros(X.shape[1], dtype=bool)
        if icol is not None:
            free[icol] = True
        return null, solve(None, (X, y, w, off), control, free=free, intercept=icol)

    def __repr__(self) -> str:
        return f"<FirthLogit: nobs={self.exog.shape[0]}>"
