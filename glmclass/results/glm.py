"""Results of a maximum-likelihood GLM fit (GLM, Logit, Probit): labelled once, every derived
number cached; the covariance from :mod:`glmclass.numerics.covariance`."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import GlmclassWarning
from ..lazy import cached_property
from ..likelihoods import likelihood_of
from ..numerics.covariance import covariance, hat_values
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..solvers.fit import Fit
from ..summary import Summary, modelled_line, response_label
from .base import coef_table, num
from .dask import rows_after
from .glm_base import GLMBaseResults, weighted
from .influence import GLMInfluence
from .io import SaveMixin, require_data
from .likelihood import LikelihoodResults
from .margins import MarginalEffects, RowMarginalEffects, get_margeff
from .prediction import PredictionResults, glm_prediction
from .profile import profile_conf_int
from .robust import NONROBUST, CovSpec, glm_freq_per_block, sandwich_over_rows
from .tidy import TidyMixin

METHOD_LABEL = {"irls": "IRLS", "newton": "Newton", "gd": "gradient descent",
                 "sgd": "SGD", "minibatch": "mini-batch GD"}
_GRADIENT = {"gd": "gradient descent", "sgd": "stochastic gradient descent",
             "minibatch": "mini-batch gradient descent"}


def gradient_note(method: str, converged: bool, plain: bool = False) -> str | None:
    """The summary note of a fit by a gradient method: where its standard errors come from,
    and whether its stochastic steps were plain SGD (None for IRLS and Newton)."""
    if method not in _GRADIENT:
        return None
    where = "the estimate it converged to" if converged else \
        "the point it stopped at (it did not converge: these are not the MLE's)"
    how = " (plain, without variance reduction)" if plain else ""
    return f"Fit by {_GRADIENT[method]}{how}; standard errors from the Hessian of the " \
           f"log-likelihood at {where}."


def history_series(history, fit) -> pd.Series:
    """A deviance history, indexed from 1 by what one entry is (``iteration``, ``epoch`` or
    ``step``: the fit record's ``history_unit``)."""
    unit = getattr(fit, "history_unit", "iteration")
    return pd.Series(history, index=pd.RangeIndex(1, len(history) + 1, name=unit),
                     name="deviance", dtype=float)


def exp_table(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """A coefficient table on the exponential scale: the ``coef`` column (renamed ``name``)
    and the interval bounds exponentiated, ``std err`` dropped."""
    table = table.rename(columns={"coef": name}).drop(columns="std err")
    for c in (name, table.columns[3], table.columns[4]):
        table[c] = np.exp(table[c])
    return table


class ProfileIntervals:
    """``conf_int``'s shared steps for results with Wald and profile intervals: the choice,
    the checks of ``method`` and ``alpha``, and the profiles computed once per alpha (each
    costs many refits). The class using it defines ``conf_int`` (its own account of the
    profile) as ``return self._wald_or_profile(alpha, method, profile)``."""

    def _wald_or_profile(self, alpha, method: str, profile) -> pd.DataFrame:
        """Wald intervals, or ``profile(self, alpha)`` computed once per alpha, copied out."""
        if method == "wald":
            return LikelihoodResults.conf_int(self, alpha)
        if method != "profile":
            raise ValueError(f"method must be 'wald' or 'profile', got {method!r}")
        if not (isinstance(alpha, (int, float, np.number)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        key = float(alpha)
        if key not in self._profiles:
            require_data(self, "conf_int(method='profile')")
            self._profiles[key] = profile(self, key)
        return self._profiles[key].copy()

    @cached_property
    def _profiles(self) -> dict:
        """Profile intervals computed so far, by alpha (they cost many refits)."""
        return {}


class MaximumLikelihoodReport(ProfileIntervals):
    """What the maximum-likelihood results of a GLM and of an MNLogit share on top of
    :class:`~glmclass.results.likelihood.LikelihoodResults`: Wald or profile intervals
    (:class:`ProfileIntervals`), marginal effects, the history, and the rows and notes of
    their summaries.

    The class using it has ``method``, ``information``, ``cov_spec``, ``aliased``,
    ``separation`` and the likelihood numbers of the header.
    """

    @property
    def history(self) -> pd.Series:
        """Deviance after each iteration (IRLS, Newton, "gd"), epoch or step (stochastic
        methods, ``history="epoch"|"step"``); the index is named by which."""
        return history_series(self.fit_history, self._fit)

    def get_margeff(self, at: str = "overall", method: str = "dydx", atexog=None,
                    dummy: bool = False, count: bool = False
                    ) -> MarginalEffects | RowMarginalEffects:
        """Marginal effects of each variable (per level of a multinomial response: rows
        (level, term), every level of the response), with delta-method standard errors.

        Parameters
        ----------
        at : {"overall", "mean", "median", "zero", "all"}
            The average of the effects over the rows of the fit (weighted by frequency
            weights); the effect at the means of the numeric variables with the design at
            its column means (a categorical term's indicators at the level shares, Stata's
            ``atmeans``); at their medians (design columns at their medians); at 0 with
            categorical variables at their reference level; or at every row (``"all"``: a
            :class:`~glmclass.results.margins.RowMarginalEffects`, no standard errors), as
            statsmodels.
        method : {"dydx", "eyex", "dyex", "eydx"}
            The derivative dy/dx, or the elasticities (x/y) dy/dx, x dy/dx, (1/y) dy/dx.
        atexog : dict, optional
            Variables held at given values on every row before ``at`` is applied:
            ``{position: value}`` (statsmodels: the zero-based design column, the constant
            counted) or ``{column name: value}``.
        dummy : bool
            Numeric 0/1 variables as discrete changes from 0 to 1 instead of derivatives.
        count : bool
            Count variables (whole, non-negative, not 0/1) as the change
            ``(F(x + 1) - F(x - 1)) / 2`` instead of derivatives, as statsmodels.

        Returns
        -------
        MarginalEffects
            ``margeff``, ``margeff_se`` (Series), ``conf_int``, ``summary_frame``,
            ``summary``.

        Notes
        -----
        From a formula the effects are per *variable*: a numeric variable's derivative goes
        through every term that contains it (``x + I(x**2)``, ``x:z``, ``np.log(x)``), taken
        through the stored design; each non-reference level of a categorical variable
        (``C(race)``) is the discrete change of the prediction from the reference level,
        labelled by its design-column name (``C(race)[T.2]``). Array models have one variable
        per design column, as statsmodels. The covariance is the one the fit reports
        (``cov_type``). A variable whose design columns are all aliased has a NaN effect.
        Through a spline (``bs(x, df=4)``) the derivative at the boundary knots is a
        one-sided difference. See :mod:`glmclass.results.margins`.
        """
        require_data(self, "get_margeff")
        return get_margeff(self, at, method, atexog, dummy, count)

    # --- the rows and notes of the summaries --------------------------------------------------
    def _method_rows(self) -> list[tuple[str, object]]:
        """Summary rows: how the fit was made and which covariance it reports."""
        return [("Method", METHOD_LABEL.get(self.method, self.method)),
                ("Information", self.information), ("Covariance Type", self.cov_type)]

    def _size_rows(self) -> list[tuple[str, object]]:
        return [("No. Observations", num(self.nobs)), ("Df Model", num(self.df_model)),
                ("Df Residuals", num(self.df_resid))]

    def _likelihood_rows(self, *extra: tuple[str, object]) -> list[tuple[str, object]]:
        """Summary rows from convergence to the LLR p-value, ``extra`` after the deviance."""
        return [("Converged", self.converged), ("No. Iterations", self.n_iter),
                ("Log-Likelihood", self.llf), ("LL-Null", self.llnull),
                ("Deviance", self.deviance), *extra, ("AIC", self.aic), ("BIC", self.bic),
                ("Pseudo R-squ.", self.prsquared), ("LLR p-value", self.llr_pvalue)]

    def _dropped_rows(self) -> list[tuple[str, object]]:
        n = self.model.data.n_dropped
        return [("Rows dropped (missing)", n)] if n else []

    def _fit_notes(self) -> list[str]:
        """Summary notes after the covariance's: a gradient fit's, aliased columns,
        separation."""
        notes = []
        if self.method in _GRADIENT:
            notes.append(gradient_note(self.method, self.converged,
                                       getattr(self._fit, "plain", False)))
        if self.aliased:
            notes.append(self.aliased_note())
        if self.separation is not None and self.separation.note:
            notes.append(self.separation.note)
        return notes


class GLMResults(MaximumLikelihoodReport, GLMBaseResults, LikelihoodResults, TidyMixin,
                 SaveMixin, rows={"hat_matrix_diag": rows_after("_hat_inverse")}):
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
        ``"nonrobust"``: the inverse information times the dispersion; ``"HC0"``-``"HC3"``,
        ``"cluster"``: a sandwich whose bread is the inverse of that information (see
        :mod:`glmclass.results.robust`).
    cov_spec : CovSpec
        The validated covariance request (cluster groups, corrections).
    nobs : float
        Number of observations, counting frequency weights.
    df_model, df_resid : float
    aliased : list of str
        Columns dropped as linear combinations of earlier ones.
    separation : Separation or None
        What the separation check found (binomial families; None when not run): the model
        gives it with :meth:`~glmclass.results.likelihood.LikelihoodResults.replaced`.
    iterates : IRLSIterates or None
        With ``fit(keep_iterates=True)``: the coefficients, working response z and weights R
        of each IRLS iteration (:class:`~glmclass.results.iterates.IRLSIterates`, PRML eq.
        4.99-4.100); None otherwise.
    """

    def __init__(self, model, fit: Fit, null, method: str, information: str,
                 cov: CovSpec = NONROBUST, separation=None) -> None:
        super().__init__(model, fit, null)
        vars(self).update(method=method, information=information, cov_spec=cov,
                          cov_type=cov.cov_type, separation=separation, iterates=None)

    @cached_property
    def scale(self) -> float:
        """Dispersion: 1 for Binomial and Poisson, Pearson chi2 / df_resid for Gaussian (R)."""
        if self.model.family.fixed_scale:
            return 1.0
        return self.pearson_chi2 / self.df_resid if self.df_resid > 0 else np.nan

    @property
    def use_t(self) -> bool:
        """Student's t on ``df_resid`` for the Wald statistics when the dispersion is
        estimated (Gaussian, Gamma, inverse Gaussian), as R's ``summary.glm``."""
        return not self.model.family.fixed_scale

    # --- covariance ---------------------------------------------------------------------------
    @cached_property
    def _information(self) -> np.ndarray:
        """The observed or expected information on the kept columns."""
        fit = self._fit
        return self.model.problem.information(fit.coef, self._keep,
                                              self.information == "observed", fit.gram,
                                              fit.information)

    @cached_property
    def _bread(self) -> np.ndarray | None:
        """Inverse information on the kept columns (None when it is not positive definite)."""
        if self.information == self._fit.information or self.model.family.is_canonical:
            return self.solver_inverse
        try:
            if self._fit.shift is not None:  # large column means: keep the digits
                return self._shifted_inverse()
            return spd_inverse(self._information)
        except NotPositiveDefinite:
            return None

    def _shifted_inverse(self) -> np.ndarray:
        """The inverse ``information`` of a fit made on a shifted design, through that design's
        information (as :meth:`Fit.gram_inverse`): the Gram of the raw design loses the
        digits that large column means take (1e-7 relative at a mean of 1e4)."""
        fit, keep = self._fit, self._keep
        shift = fit.shift
        p = shift.shape[0]
        g = self.model.problem.information(fit.coef, keep, self.information == "observed",
                                           shift=shift)
        full = np.zeros((p, p))
        full[np.ix_(keep, keep)] = g
        return replace(fit, gram_shifted=full).gram_inverse(keep)

    @cached_property
    def solver_inverse(self) -> np.ndarray | None:
        """Inverse of the solver's Gram on the kept columns (the information of
        ``_fit.information``, kept accurate through its shifted form), None when it is not
        positive definite."""
        try:
            return self._fit.gram_inverse(self._keep)
        except NotPositiveDefinite:
            return None

    @cached_property
    def cov_values(self) -> np.ndarray:
        """The covariance as an array (NaN for aliased columns): ``bse`` needs no labels."""
        if self._bread is None:
            warnings.warn(
                f"the {self.information} information matrix is not positive definite at the "
                "estimates; standard errors are NaN (the fit may not be at a maximum)",
                GlmclassWarning, stacklevel=3)
            return self.on_every_coefficient(None)
        return self.on_every_coefficient(self._cov_kept())

    def _cov_kept(self) -> np.ndarray:
        """The covariance of the estimable coefficients that ``cov_type`` asks for: the
        dispersion times the bread, or a sandwich around the same bread."""
        spec = self.cov_spec
        if not spec.robust:
            return covariance(self._bread, None, "nonrobust", scale=self.scale)
        m, keep, fit = self.model, self._keep, self._fit
        hat_bread = None
        if spec.cov_type in ("HC2", "HC3"):  # R's hatvalues: the Fisher information
            hat_bread = spd_inverse(m.problem.information(fit.coef, keep, False, fit.gram,
                                                          fit.information))
        return sandwich_over_rows(self._bread, m.problem.blocks().take_columns(keep),
                                  likelihood_of(m), fit.coef[keep], spec, nobs=self.nobs,
                                  hat_bread=hat_bread,
                                  freq_weights=glm_freq_per_block(m.problem))

    def _scores(self) -> np.ndarray:
        """Per-row scores on the estimable columns, (n_obs, rank): ``score_obs()`` without the
        labels (one array the size of the design)."""
        m, keep = self.model, self._keep
        fam, eta = m.family, self._eta
        u = weighted(m.prior_weights, fam.score_ratio(eta) * (m.endog - fam.link.inverse(eta)))
        X = m.exog if keep.all() else m.exog[:, keep]
        return X * u[:, None]

    @cached_property
    def hat_matrix_diag(self) -> pd.Series:
        """Leverages h_i = w_i x_i' (X'WX)^-1 x_i of the weighted IRLS design at the estimates
        (W the Fisher weights times the prior weights), as R's ``hatvalues(glm)``; they sum to
        the rank. Used by HC2/HC3 covariances and influence measures (a lazy Dask Series for
        a fit on Dask data)."""
        require_data(self, "hat_matrix_diag")
        m, keep = self.model, self._keep
        shift = self._fit.shift
        w = m.prior_weights * m.family.working_weights(self._eta)
        X = m.exog if keep.all() else m.exog[:, keep]
        h = hat_values(X, w, self._hat_inverse, shift=None if shift is None else shift[keep])
        return pd.Series(h, index=m.data.index, name="hat")

    @cached_property
    def _hat_inverse(self) -> np.ndarray:
        """(X'WX)^-1 with the Fisher weights on the kept columns (of the shifted design when
        the fit shifted it: large column means keep their digits), the p x p piece of the hat
        values."""
        m, keep = self.model, self._keep
        fit = self._fit
        shift = fit.shift
        if shift is None:
            gram = m.problem.information(fit.coef, keep, False, fit.gram, fit.information)
        elif fit.information == "expected":
            gram = fit.gram_shifted[np.ix_(keep, keep)]
        else:
            gram = m.problem.information(fit.coef, keep, False, shift=shift)
        return spd_inverse(gram)

    def get_influence(self) -> GLMInfluence:
        """Influence and outlier diagnostics of every row: hat values, Cook's distances,
        standardized and studentized residuals, DFBETA(S), DFFITS, covariance ratios
        (statsmodels' ``get_influence``; R's ``influence.measures``), as a
        :class:`~glmclass.results.influence.GLMInfluence`."""
        return GLMInfluence(self)

    def influence_given(self, totals: dict) -> GLMInfluence:
        """The influence measures of these rows with the pieces ``totals`` that sum over every
        row of the fit (see :class:`~glmclass.results.influence.GLMInfluence`): the measures
        of one partition of Dask data."""
        return GLMInfluence(self, totals or None)

    @property
    def gradient_norms(self) -> pd.Series | None:
        """Gradient methods: the largest entry of the mean gradient after each epoch (None
        for IRLS and Newton)."""
        norms = getattr(self._fit, "grad_norms", None)
        if norms is None:
            return None
        unit = getattr(self._fit, "history_unit", "iteration")
        return pd.Series(norms, index=pd.RangeIndex(1, len(norms) + 1, name=unit),
                         name="grad_norm", dtype=float)

    def conf_int(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Confidence intervals of the coefficients.

        Parameters
        ----------
        alpha : float
            1 - confidence level.
        method : {"wald", "profile"}
            ``"wald"``: ``params -+ q bse`` with the covariance the fit reports (``cov_type``).
            ``"profile"``: profile-likelihood intervals, R's ``confint`` of a ``glm`` (MASS):
            the coefficients b whose signed root deviance ``sign(b - b_hat) sqrt((D_j(b) - D)
            / phi)`` lies within the normal quantile, each bound found exactly (MASS
            interpolates); one refit per evaluation, so it costs tens of fits per
            coefficient. Likelihood-based, so ``cov_type`` does not enter; a bound the profile
            never reaches (separation) is infinite, with a warning.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``, one row per coefficient (NaN for aliased ones).
        """
        return self._wald_or_profile(alpha, method, profile_conf_int)

    # --- prediction ---------------------------------------------------------------------------
    def get_prediction(self, exog=None, which: str = "mean", offset=None) -> PredictionResults:
        """Predictions with delta-method standard errors and confidence intervals.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data (default: the rows of the fit).
        which : {"mean", "linear"}
            ``"mean"``: mu, its standard error ``|dmu/deta| se(eta)`` (R's ``predict(type=
            "response", se.fit=TRUE)``) and the interval ``g^-1(eta -+ q se(eta))``, which
            stays inside the range of the mean. ``"linear"``: eta, ``se(eta) = sqrt(x' V x)``
            and a symmetric interval.
        offset : array-like, optional
            Offset of the new rows (default 0).

        Returns
        -------
        PredictionResults
            ``predicted``, ``se``, ``conf_int(alpha)``, ``summary_frame(alpha)``. V is the
            covariance the fit reports (``cov_type``); q the normal quantile, or Student's t
            on ``df_resid`` when the dispersion is estimated, as :meth:`conf_int`.
        """
        return glm_prediction(self, exog, which, offset)

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
        stat = "t" if self.use_t else "z"
        table = coef_table(self.params, self.bse, self.tvalues, self.pvalues,
                           self.conf_int(alpha), stat, alpha)
        if exp:
            table = exp_table(table, "odds ratio" if m.family.is_canonical
                              and m.family.name == "Binomial" else "exp(coef)")
        response = response_label(m.data.endog_name, m.data.formula)
        header = [
            ("Dep. Variable", response), ("Model", type(m).__name__),
            ("Family", m.family.name), ("Link", m.family.link.name),
            *self._method_rows(), *self._size_rows(), ("Scale", self.scale),
            *self._likelihood_rows(("Pearson chi2", self.pearson_chi2)), *self._dropped_rows(),
        ]
        notes = [self.cov_spec.describe(self.information), *self._fit_notes()]
        sub = modelled_line(response, m.levels) if m.family.name == "Binomial" else ""
        return Summary(f"{type(m).__name__} Regression Results", header, [(None, table)], notes,
                       subtitle=sub)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {type(self.model).__name__}, nobs={num(self.nobs)}>"

