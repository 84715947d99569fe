"""Mixed-effects GLMs by maximum likelihood (lme4's ``glmer``): MixedGLM, MixedLogit,
MixedProbit.

The model holds the fixed design (through :class:`~glmclass.models.glm_problem.GLMProblem`:
the response on the family's scale, trials as prior weights, the offset) and the design of
each random-effect term (:class:`~glmclass.formula.bars.RandomBlock`). A fit minimises lme4's
deviance function (:class:`~glmclass.likelihoods.mixed.MixedDeviance`) over (theta, beta) in
lme4's two stages: theta alone at the GLM's beta (L-BFGS-B), then (theta, beta) jointly by
the bounded quasi-Newton solver :func:`glmclass.solvers.bounded_newton.minimise` on
central-difference derivatives, ending with Newton steps on the finite-difference Hessian of
the deviance, which also gives the covariance of the estimates (lme4's ``vcov``).

References
----------
Bates, D. et al. (2015). Fitting linear mixed-effects models using lme4. *Journal of
Statistical Software* 67(1); lme4 ``R/modular.R`` (``mkGlmerDevfun``, ``optimizeGlmer``).
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import optimize

from .. import families as F
from .. import links as L
from ..binomial_terms import all_ones
from ..data.labelled import check_row_labels
from ..data.model_data import ModelData, has_dask, is_dask
from ..errors import ConvergenceWarning, GlmclassWarning, warn_user
from ..formula.bars import (
    RandomBlock,
    RandomFormula,
    bar_columns,
    build_blocks,
    intercept_column,
    split_bars,
)
from ..formula.design import capture_env
from ..likelihoods.mixed import MixedDeviance, MixedLikelihood
from ..results.mixed import SINGULAR_TOL, MixedFit, MixedGLMResults
from ..solvers.bounded_newton import minimise
from .base import Model
from .glm import GLM
from .glm_base import ProblemViews
from .glm_problem import GLMProblem

_DASK = ("{name} does not fit Dask data: the conditional modes of every group are needed at "
         "once. Bring the rows into memory first (ddf.compute()) and fit a pandas DataFrame")


def _check_nagq(nagq: Any, blocks: list[RandomBlock]) -> int:
    if isinstance(nagq, bool) or not isinstance(nagq, numbers.Integral) or nagq < 1:
        raise ValueError(f"nagq must be a positive integer (1: the Laplace approximation), "
                         f"got {nagq!r}")
    if nagq > 1 and (len(blocks) != 1 or blocks[0].n_effects != 1):
        raise ValueError("nagq > 1 (adaptive Gauss-Hermite quadrature) needs one grouping "
                         "factor with a scalar random effect, as lme4's nAGQ; this model has "
                         f"{sum(b.n_effects for b in blocks)} random-effect columns: use "
                         "nagq=1 (the Laplace approximation)")
    return int(nagq)


def _array_blocks(groups: Any, exog_re: Any, n: int, rows: np.ndarray | None
                  ) -> list[RandomBlock]:
    """Random-effect terms of the array path: one intercept per column of ``groups`` (a
    DataFrame: crossed or nested factors), with the columns of ``exog_re`` as correlated
    effects of a single grouping factor."""
    frame = groups if isinstance(groups, pd.DataFrame) else pd.DataFrame(
        {getattr(groups, "name", None) or "group": np.asarray(groups)})
    if rows is not None and len(frame) != n:  # given for every row, some dropped as missing
        frame = frame.iloc[rows]
    if len(frame) != n:
        raise ValueError(f"groups has {len(frame)} rows but the data have {n}")
    if exog_re is not None and frame.shape[1] != 1:
        raise ValueError("exog_re (random slopes) needs a single grouping factor; pass groups "
                         "as one column, or use from_formula for several terms")
    blocks = []
    for col in frame.columns:
        keys = pd.Index(frame[col].to_numpy())
        if pd.isna(np.asarray(keys, dtype=object)).any():
            raise ValueError(f"groups column {col!r} has missing values; drop those rows")
        codes, levels = pd.factorize(keys, sort=True)
        if exog_re is None:
            Xr, names = intercept_column(n), ["(Intercept)"]
        else:
            Xr = np.asarray(exog_re, dtype=float).reshape(n, -1)
            names = [str(c) for c in getattr(exog_re, "columns", range(Xr.shape[1]))]
        blocks.append(RandomBlock(str(col), names, pd.Index(levels),
                                  codes.astype(np.int32 if len(levels) < 2**31 - 1 else np.intp),
                                  Xr, None))
    nl = [b.n_levels for b in blocks]
    if any(np.diff(nl) > 0):
        blocks = [blocks[i] for i in reversed(np.argsort(nl, kind="stable"))]
    return blocks


class MixedGLM(ProblemViews, Model):
    """Generalized linear mixed model (lme4's ``glmer``): a GLM with normal random effects.

    Parameters
    ----------
    endog : array-like of shape (n_obs,) or (n_obs, 2)
        The response: 0/1 or labels, proportions with ``var_weights`` = trials, or (successes,
        failures) for the binomial; counts for the Poisson.
    exog : array-like of shape (n_obs, k)
        The fixed-effects design (add the constant yourself).
    groups : array-like of shape (n_obs,) or DataFrame
        The grouping factor of a random intercept; a DataFrame gives one random intercept per
        column (crossed or nested factors, their interaction labels made by you).
    family : Family, default Binomial()
        Binomial with any link, or Poisson.
    exog_re : array-like of shape (n_obs, p), optional
        Columns of correlated random effects of the single grouping factor (a column of ones
        for the intercept): lme4's ``(x | g)``.
    offset, exposure, var_weights : array-like of shape (n_obs,), optional
        Offset of the linear predictor, exposure (its log is added to the offset) and the
        binomial trials of proportions.
    missing : {"drop", "raise"}

    Notes
    -----
    ``from_formula`` reads lme4's syntax: ``"y ~ x + (1 | g)"``, ``(x | g)``, ``(0 + x | g)``,
    ``(x || g)``, ``(1 | a) + (1 | b)``, ``(1 | a/b)``.
    """

    row_args = ("offset", "var_weights", "exposure")
    _default_family: ClassVar[F.Family | None] = None

    def __init__(self, endog, exog, groups, family: F.Family | None = None, exog_re=None,
                 offset=None, var_weights=None, exposure=None, missing: str = "drop") -> None:
        if has_dask(endog, exog, groups, exog_re, offset, var_weights, exposure):
            raise NotImplementedError(_DASK.format(name=type(self).__name__))
        super().__init__(endog, exog, missing, family=family, groups=groups, exog_re=exog_re,
                         offset=offset, var_weights=var_weights, exposure=exposure)

    @classmethod
    def from_formula(cls, formula: str, data, missing: str = "drop", eval_env: Any = None,
                     engine: str = "patsy", **options):
        """Build the model from an lme4 formula on a pandas DataFrame.

        Parameters
        ----------
        formula : str
            ``"y ~ x + (1 | g)"``: the fixed part as for :meth:`glmclass.GLM.from_formula`
            (``cbind(s, f)``, ``offset()``, ``C()``), random-effect terms in lme4's syntax.
            The terms are read, never evaluated; what stands left of a bar goes through the
            same design engine as the fixed part.
        data : pandas.DataFrame
        missing, eval_env, engine
            As for :meth:`glmclass.GLM.from_formula`; rows with a missing value in a
            grouping column or a random-effect column are dropped too.
        **options
            ``family``, ``offset``, ``exposure``, ``var_weights``.
        """
        if is_dask(data):
            raise NotImplementedError(_DASK.format(name=cls.__name__))
        env = capture_env(eval_env, 1)
        fixed, terms = split_bars(formula)
        if isinstance(data, pd.DataFrame):
            used = bar_columns(terms, data)
            missing_cols = {f for t in terms for f in t.factors} - {str(c) for c in data}
            if missing_cols:
                raise ValueError(f"the grouping column {sorted(missing_cols)[0]!r} of the "
                                 f"formula {formula!r} is not a column of the data")
            incomplete = data[used].isna().any(axis=1).to_numpy()
            if incomplete.any():
                if missing == "raise":
                    bad = [c for c in used if data[c].isna().any()]
                    raise ValueError(f"missing values in the random-effect column(s) {bad}; "
                                     "pass missing='drop' to drop those rows, or fill them in")
                data = data.loc[~incomplete]
        return super().from_formula(fixed, data, missing=missing, eval_env=env, engine=engine,
                                    groups=RandomFormula(terms, env, engine, formula),
                                    **options)

    def _setup(self, data: ModelData, family: F.Family | None = None, groups: Any = None,
               exog_re: Any = None) -> None:
        if self._default_family is not None and family is not None:
            raise ValueError(f"{type(self).__name__} has its family fixed "
                             f"({self._default_family!r}); use gc.MixedGLM(..., family=...) "
                             "for another")
        family = family if family is not None else (self._default_family or F.Binomial())
        if not isinstance(family, (F.Binomial, F.Poisson)):
            raise ValueError(f"family must be Binomial (any link) or Poisson, got {family!r}")
        self.problem = GLMProblem.build(data, family)
        if isinstance(groups, RandomFormula):
            frame = data.frame if data.source_rows is None else data.frame.iloc[data.source_rows]
            blocks = build_blocks(groups.terms, frame, groups.eval_env, groups.engine)
            self.random_formula = groups
        else:
            if groups is None:
                raise ValueError("groups is required: one grouping label per row (or use "
                                 "from_formula with a term such as (1 | g))")
            for key, values in (("groups", groups), ("exog_re", exog_re)):
                check_row_labels(values, data, key)  # pandas objects pair by label
            blocks = _array_blocks(groups, exog_re, data.nrows, data.source_rows)
            self.random_formula = None
        self.blocks = tuple(blocks)
        self.likelihood = MixedLikelihood(family, tuple((b.n_effects, b.n_levels)
                                                        for b in blocks))

    def deviance_function(self) -> MixedDeviance:
        """lme4's deviance function of (theta, beta) on these rows."""
        return MixedDeviance(self.likelihood, self.exog, np.asarray(self.endog, dtype=float),
                             np.asarray(self.prior_weights, dtype=float),
                             np.asarray(self.offset, dtype=float), list(self.blocks))

    # --- the fit ------------------------------------------------------------------------------
    def fit(self, nagq: int = 1, maxiter: int = 200, tol: float = 1e-12, start_params=None,
            disp: bool = False) -> MixedGLMResults:
        """Maximum-likelihood fit by the Laplace approximation or adaptive quadrature.

        Parameters
        ----------
        nagq : int
            1: the Laplace approximation (lme4's default); more: adaptive Gauss-Hermite
            quadrature with that many points per group (one grouping factor with a scalar
            random effect only, as lme4).
        maxiter : int
            Largest number of quasi-Newton iterations of the joint stage.
        tol : float
            The joint stage stops when a step lowers the deviance by less than ``tol *
            (|deviance| + 0.1)``; a Newton step on the finite-difference Hessian follows.
        start_params : array-like, optional
            ``(theta, beta)`` to start from (e.g. lme4's ``getME(fit, c("theta",
            "fixef"))``).
        disp : bool
            Print the deviance at the end of each stage.

        Returns
        -------
        MixedGLMResults
        """
        nagq = _check_nagq(nagq, list(self.blocks))
        nt = self.likelihood.n_theta
        lower = self.likelihood.theta_lower
        k = self.exog.shape[1]
        if start_params is not None:
            x0 = np.asarray(start_params, dtype=float).ravel()
            if x0.shape != (nt + k,) or not np.all(np.isfinite(x0)):
                raise ValueError(f"start_params must be {nt + k} finite numbers: the {nt} "
                                 f"covariance parameters theta, then the {k} fixed effects")
            dev = self.deviance_function()
        else:  # the GLM's start first: its working arrays are freed before the deviance's
            weights = np.asarray(self.prior_weights, dtype=float)  # None: no n-row copy
            beta0 = GLM(np.asarray(self.endog, dtype=float), self.exog, family=self.family,
                        offset=np.asarray(self.offset, dtype=float),
                        var_weights=None if all_ones(weights) else weights
                        ).fit(on_separation="ignore").params.to_numpy()
            dev = self.deviance_function()
            theta0 = self.likelihood.theta_start
            res1 = optimize.minimize(lambda t: dev.laplace(t, beta0), theta0, method="L-BFGS-B",
                                     bounds=[(lo if np.isfinite(lo) else None, None)
                                             for lo in lower])
            x0 = np.r_[res1.x, beta0]
            if disp:
                print(f"stage 1 (theta at the GLM's beta): deviance {res1.fun:.10g}")
        bounds = np.r_[lower, np.full(k, -np.inf)]
        x, H, converged, grad = minimise(lambda z: dev(z, nagq), x0, bounds, maxiter, tol)
        x, H, converged, grad = self._off_the_boundary(dev, nagq, x, (H, converged, grad),
                                                       bounds, maxiter, tol, disp)
        if disp:
            print(f"stage 2 (theta, beta): deviance {dev(x, nagq):.10g}")
        theta, beta = x[:nt], x[nt:]
        modes = dev.modes(theta, beta)
        fit = MixedFit(theta=theta, beta=beta, objective=dev(x, nagq), hessian=H,
                       gradient=grad, modes=modes, nagq=nagq, converged=converged,
                       condvar=dev.conditional_variances(theta, modes),
                       random=dev.random_effects(theta, modes.u), saturated=dev.saturated)
        results = MixedGLMResults(self, fit)
        self._warn(results)
        return results

    def _off_the_boundary(self, dev: MixedDeviance, nagq: int, x: np.ndarray, found: tuple,
                          bounds: np.ndarray, maxiter: int, tol: float, disp: bool) -> tuple:
        """The joint optimum when the first search ended with a variance at 0.

        The deviance is even in each diagonal element of theta, so its derivative in that
        element is 0 at the boundary theta_j = 0 whether or not that is the minimum: a search
        that reaches the boundary (the start at the GLM's beta often does) cannot leave it,
        although the deviance may fall as theta_j grows (a simulated random-intercept logit:
        448.418 at theta = 0, glmer 445.216 at 0.477). So the search is run again from lme4's
        start (1) for those elements, and the lower deviance is kept; a fit that is truly
        singular comes back to the boundary.
        """
        nt = self.likelihood.n_theta
        at_zero = (bounds[:nt] == 0.0) & (np.abs(x[:nt]) < SINGULAR_TOL)
        if not at_zero.any():
            return (x, *found)
        x1 = x.copy()
        x1[:nt][at_zero] = 1.0
        again = minimise(lambda z: dev(z, nagq), x1, bounds, maxiter, tol)
        before, after = dev(x, nagq), dev(again[0], nagq)
        if disp:
            print(f"a variance at 0 (deviance {before:.10g}); restarted at theta = 1: "
                  f"deviance {after:.10g}")
        return again if after < before - 1e-9 * (abs(before) + 0.1) else (x, *found)

    def _warn(self, results: MixedGLMResults) -> None:
        if results.singular:
            warn_user("boundary (singular) fit: a variance is estimated at 0 or a "
                      "correlation at +-1 (see random_effects_cov); simplify the "
                      "random-effect terms (lme4's help('isSingular'))", GlmclassWarning)
        check = results.convergence_check
        if check is not None:
            warn_user(check, ConvergenceWarning)


class MixedLogit(MixedGLM):
    """:class:`MixedGLM` with the binomial family and the logit link."""

    _default_family = F.Binomial(L.Logit())

    def __init__(self, endog, exog, groups, exog_re=None, offset=None, var_weights=None,
                 exposure=None, missing: str = "drop") -> None:
        super().__init__(endog, exog, groups, None, exog_re, offset, var_weights, exposure,
                         missing)


class MixedProbit(MixedGLM):
    """:class:`MixedGLM` with the binomial family and the probit link (lme4's Laplace with
    the expected-information weights of its PIRLS)."""

    _default_family = F.Binomial(L.Probit())

    def __init__(self, endog, exog, groups, exog_re=None, offset=None, var_weights=None,
                 exposure=None, missing: str = "drop") -> None:
        super().__init__(endog, exog, groups, None, exog_re, offset, var_weights, exposure,
                         missing)
