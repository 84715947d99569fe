"""Results of Firth's bias-reduced logistic regression (:class:`~glmclass.FirthLogit`).

Two log-likelihoods belong to a Firth fit, and each number says which it uses:

- ``llf``: the ordinary log-likelihood at the Firth estimate (R's ``logLik`` of a ``brglm2``
  fit). ``aic``, ``bic``, ``deviance`` and :func:`glmclass.compare` use it, as R's ``AIC()`` on
  a ``brglm2`` fit does, so a Firth fit is ranked by how well it fits the data, on the same
  scale as a :class:`~glmclass.Logit` fit of the same rows (the MLE's llf is never lower).
- ``llf_penalized``: ``llf + 1/2 log|I(b)|``, the objective the estimate maximises (logistf's
  ``loglik["full"]``). The penalised likelihood-ratio tests (``llr``, ``plr_test()``) and the
  profile intervals (``conf_int(method="profile")``) use it, as logistf does.

References
----------
Heinze, G. and Schemper, M. (2002). A solution to the problem of separation in logistic
regression. *Statistics in Medicine* 21, 2409-2419.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from ..errors import GlmclassWarning
from ..lazy import cached_property
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..summary import Summary, modelled_line
from .base import coef_table, num
from .dask import rows_of
from .glm import ProfileIntervals
from .glm_base import GLMBaseResults
from .io import SaveMixin
from .likelihood import LikelihoodResults
from .prediction import PredictionResults, glm_prediction
from .profile import profile_conf_int
from .tidy import TidyMixin

METHOD = "Firth's bias-reduced (penalised) likelihood"


class FirthResults(ProfileIntervals, GLMBaseResults, LikelihoodResults, TidyMixin, SaveMixin,
                   rows={"hat_matrix_diag": rows_of}):
    """Estimates, inference and predictions of a :class:`~glmclass.FirthLogit` fit.

    Attributes
    ----------
    params : pandas.Series
        Firth's estimates by design column (NaN for aliased columns).
    bse, tvalues (zvalues), pvalues
        Wald inference with the inverse Fisher information at the estimate (R ``brglm2``
        ``summary``, logistf with ``pl = FALSE``).
    llf : float
        Ordinary (unpenalised) log-likelihood at the estimate; ``aic = -2 llf + 2k`` and
        ``bic = -2 llf + k ln(nobs)`` use it (R's ``AIC``/``BIC`` of a ``brglm2`` fit).
    llf_penalized : float
        ``llf + 1/2 log|I(b)|``, the maximised penalised log-likelihood (logistf's
        ``loglik["full"]``).
    llnull, null_deviance : float
        Ordinary log-likelihood and deviance of Firth's intercept-only fit (``brglm2``'s
        ``null.deviance``); ``prsquared = 1 - llf / llnull``.
    llnull_penalized : float
        Penalised log-likelihood with every coefficient but the intercept held at 0 and the
        penalty of the whole design (logistf's ``loglik["null"]``).
    llr, llr_pvalue : float
        The penalised likelihood-ratio test of all coefficients but the intercept,
        ``2 (llf_penalized - llnull_penalized)`` on ``df_model`` degrees of freedom (logistf's
        "Likelihood ratio test"). ``2 (llf - llnull)`` is no likelihood-ratio statistic here:
        neither fit maximises the ordinary likelihood.
    deviance : float
        ``-2`` times the ordinary log-likelihood, less the saturated one.
    hat_matrix_diag : pandas.Series
        The hat values of the penalty at the estimate (logistf's ``hat.diag``).
    method : str
        ``"firth"``.
    """

    method = "firth"
    maximum_likelihood = False  # a penalised likelihood's maximum
    information = "expected"
    cov_type = "nonrobust"
    scale = 1.0

    def __init__(self, model, fit: Fit, null, null_penalized: Fit) -> None:
        super().__init__(model, fit, null)
        self._null_penalized = null_penalized

    # --- likelihoods -------------------------------------------------------------------------
    @cached_property
    def _constant(self) -> float:
        """The binomial coefficients of proportions in ``llf`` (0 for 0/1 responses): the
        solver's log-likelihood leaves them out."""
        return self.llf - self._fit.loglik

    @cached_property
    def llf_penalized(self) -> float:
        """Penalised log-likelihood ``llf + 1/2 log|I(b)|`` at the estimate."""
        return self.llf + 0.5 * self._fit.logdet

    @cached_property
    def llnull_penalized(self) -> float:
        """logistf's null penalised log-likelihood: the intercept alone fit, the other
        coefficients held at 0, the penalty of the whole design."""
        return self._null_penalized.penalized + self._constant

    @cached_property
    def llr(self) -> float:
        """Penalised likelihood-ratio statistic against the null model,
        ``2 (llf_penalized - llnull_penalized)`` (logistf)."""
        return 2.0 * (self.llf_penalized - self.llnull_penalized)

    # --- covariance --------------------------------------------------------------------------
    @cached_property
    def bread(self) -> np.ndarray | None:
        """The inverse Fisher information at the estimate on the kept columns (from the
        solver's triangular factor), None when it is not positive definite."""
        keep = self._keep
        cov = self._fit.cov[np.ix_(keep, keep)]  # from the solver's triangular factor
        d = np.diag(cov)
        if not (np.all(np.isfinite(cov)) and np.all(d > 0)):
            return None
        return cov

    @property
    def solver_inverse(self) -> np.ndarray | None:
        """The inverse Fisher information on the kept columns (:attr:`bread`)."""
        return self.bread

    @cached_property
    def cov_values(self) -> np.ndarray:
        """The inverse Fisher information at the estimate, NaN for aliased columns."""
        if self.bread is None:
            warnings.warn("the Fisher information is not positive definite at the estimates; "
                          "standard errors are NaN", GlmclassWarning, stacklevel=3)
        return self.on_every_coefficient(self.bread)

    def cov_params(self) -> pd.DataFrame:
        """Covariance of the estimates, the inverse Fisher information at the estimate (a
        copy)."""
        return self._cov.copy()

    @cached_property
    def hat_matrix_diag(self) -> pd.Series:
        """Hat values ``h_i`` of the weighted design at the estimate (0 for rows of weight 0);
        they sum to the rank and are the ``h_i`` of Firth's modified score (a lazy Dask Series
        for a fit on Dask data: ``w_i mu_i (1 - mu_i) x_i' cov x_i`` per row)."""
        hat = self._fit.hat
        if hat is None:  # a fit over a row source: from the inverse information
            m, keep = self.model, self._keep
            X = m.exog if keep.all() else m.exog[:, keep]
            eta = self._eta
            fisher = m.prior_weights * expit(eta) * expit(-eta)
            cov = self._fit.cov[np.ix_(keep, keep)]
            hat = fisher * np.einsum("ij,ij->i", X @ cov, X)
        return pd.Series(hat, index=self.model.data.index, name="hat")

    # --- inference -----------------------------------------------------------------------------
    def conf_int(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Confidence intervals of the coefficients.

        Parameters
        ----------
        alpha : float
            1 - confidence level.
        method : {"wald", "profile"}
            ``"wald"``: ``params -+ z bse``. ``"profile"``: profile penalised-likelihood
            intervals (logistf's default, Heinze & Schemper 2002): the values b of each
            coefficient with ``2 (llf_penalized - l*_j(b)) <= chi2_1(1 - alpha)``, where
            ``l*_j(b)`` is the penalised log-likelihood maximised over the other coefficients
            with coefficient j held at b (the penalty of the whole design). Each bound is an
            exact root (:mod:`glmclass.results.profile`); they are computed once per alpha.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``.
        """
        return self._wald_or_profile(alpha, method, firth_profile_conf_int)

    def plr_test(self) -> pd.DataFrame:
        """Penalised likelihood-ratio test of each coefficient being 0 (logistf's p-values).

        Returns
        -------
        pandas.DataFrame
            Indexed by design column: ``statistic`` ``2 (llf_penalized - l*_j(0))`` (the other
            coefficients refit with coefficient j held at 0, the penalty of the whole design),
            ``df`` (1) and ``pvalue`` (chi-squared); NaN for aliased columns.
        """
        return self._plr.copy()

    @property
    def pvalues_plr(self) -> pd.Series:
        """P-values of :meth:`plr_test` (logistf's ``prob``)."""
        return self._plr["pvalue"].rename("pvalues_plr")

    @cached_property
    def _plr(self) -> pd.DataFrame:
        names = self.params.index
        stat = np.full(len(names), np.nan)
        for j in np.flatnonzero(self._keep):
            prof = _FirthProfile(self, int(j), _profile_control(self))
            stat[j] = max(2.0 * (prof.top - prof.penalized(0.0)), 0.0)
            if prof.unconverged:
                warnings.warn(f"the fit with {names[j]!r} held at 0 did not converge: its "
                              "penalised likelihood-ratio test may be inaccurate",
                              GlmclassWarning, stacklevel=4)
        df = np.where(self._keep, 1.0, np.nan)
        return pd.DataFrame({"statistic": stat, "df": df, "pvalue": stats.chi2.sf(stat, 1)},
                            index=names)

    # --- prediction (predict(): GLMBaseResults) -------------------------------------------------
    def get_prediction(self, exog=None, which: str = "mean", offset=None) -> PredictionResults:
        """Predictions with delta-method standard errors and Wald intervals from
        ``cov_params()`` (see :meth:`glmclass.results.glm.GLMResults.get_prediction`)."""
        return glm_prediction(self, exog, which, offset)

    def summary(self, exp: bool = False, alpha: float = 0.05, method: str = "wald") -> Summary:
        """Statistical report: fit header and coefficient table.

        Parameters
        ----------
        exp : bool
            Show odds ratios exp(coef) and their intervals instead of coef.
        alpha : float
            1 - confidence level of the intervals.
        method : {"wald", "profile"}
            ``"profile"``: logistf's table, profile penalised-likelihood intervals and
            penalised likelihood-ratio p-values (refits: slower); ``"wald"``: z-tests and
            Wald intervals.
        """
        if method not in ("wald", "profile"):
            raise ValueError(f"method must be 'wald' or 'profile', got {method!r}")
        m = self.model
        ci = self.conf_int(alpha, method)
        if method == "profile":
            table = coef_table(self.params, self.bse, self.plr_test()["statistic"],
                               self.pvalues_plr, ci, "chi2", alpha)
        else:
            table = coef_table(self.params, self.bse, self.tvalues, self.pvalues, ci, "z",
                               alpha)
        if exp:
            table = table.rename(columns={"coef": "odds ratio"})
            for c in ("odds ratio", table.columns[4], table.columns[5]):
                table[c] = np.exp(table[c])
            table = table.drop(columns="std err")
        header = [
            ("Dep. Variable", m.data.endog_name), ("Model", "FirthLogit"),
            ("Method", METHOD), ("Link", "logit"), ("Information", "expected (Fisher)"),
            ("No. Observations", num(self.nobs)), ("Df Model", num(self.df_model)),
            ("Df Residuals", num(self.df_resid)), ("Converged", self.converged),
            ("No. Iterations", self.n_iter), ("Log-Likelihood", self.llf),
            ("Penalized Log-Lik.", self.llf_penalized), ("LL-Null", self.llnull),
            ("Deviance", self.deviance), ("AIC", self.aic), ("BIC", self.bic),
            ("Pseudo R-squ.", self.prsquared), ("Penalized LR", self.llr),
            ("PLR p-value", self.llr_pvalue),
        ]
        if m.data.n_dropped:
            header.append(("Rows dropped (missing)", m.data.n_dropped))
        notes = ["Estimates maximise the log-likelihood plus 1/2 log|I(b)| (Firth 1993); "
                 "standard errors from the inverse Fisher information; AIC and BIC from the "
                 "ordinary log-likelihood."]
        if method == "profile":
            notes.append("Intervals: profile penalised likelihood; chi2 and P>|chi2|: "
                         "penalised likelihood-ratio tests (logistf).")
        if self.aliased:
            notes.append(self.aliased_note())
        return Summary("FirthLogit Regression Results", header, [(None, table)], notes,
                       subtitle=modelled_line(m.data.endog_name, m.levels))

    def __repr__(self) -> str:
        return f"<FirthResults: FirthLogit, nobs={num(self.nobs)}>"


def _profile_control(res: FirthResults) -> Control:
    # the step rule of the solver at 1e-11: far below what a profile value can notice (it is
    # flat at the constrained optimum) and above the rounding of the modified score
    return Control.for_method("firth", maxiter=max(100, 4 * res.n_iter), tol=1e-11)


class _FirthProfile:
    """Signed root ``sign(b - b_hat) sqrt(2 (l*(b_hat) - l*_j(b)))`` of the profile penalised
    log-likelihood of coefficient j (the protocol of
    :class:`glmclass.results.profile._Profile`)."""

    def __init__(self, res: FirthResults, j: int, control: Control) -> None:
        keep = res.estimable
        self.refit = res.model.penalized_refit(keep)
        self.jk = int(keep[:j].sum())  # j among the kept columns
        self.free = np.ones(int(keep.sum()), dtype=bool)
        self.free[self.jk] = False
        self.mle_start = res.solver_fit.coef[keep]
        self.start = self.mle_start
        # the tangent of the profile trace at the estimate, d b_others / d b_j = -I_oo^-1 I_oj
        # = cov_oj / cov_jj: a start moved along it keeps the linear predictor nearly where it
        # was (a column with a large mean moves the intercept with it), not at probabilities
        # of 0 or 1
        bread = res.bread
        self.direction = np.zeros(self.free.shape[0])
        if bread is not None:
            self.direction = bread[:, self.jk] / bread[self.jk, self.jk]
        self.direction[self.jk] = 1.0
        self.intercept = res.model.kept_intercept(keep)
        self.bhat = float(res.params.iloc[j])
        self.top = float(res.solver_fit.penalized)
        self.control = _profile_control(res) if control.tol < 1e-11 else control
        self.worse = False
        self.unconverged = False

    def penalized(self, b: float) -> float:
        """``l*_j(b)`` (without the constant of proportions), warm-started from the last
        refit, else from the estimates, moved along the profile's tangent to ``b_j = b``."""
        fit = None
        for base in (self.start, self.mle_start):
            start = base + (b - base[self.jk]) * self.direction
            try:
                fit = self.refit(start, self.control, self.free, self.intercept)
            except ValueError:  # a start with probabilities of exactly 0 or 1
                continue
            if fit.converged:
                self.start = fit.coef
                return float(fit.penalized)
        self.unconverged = True
        return float(fit.penalized) if fit is not None else -np.inf

    def z(self, b: float) -> float:
        excess = 2.0 * (self.top - self.penalized(b))
        if excess < -1e-6 * max(1.0, abs(self.top)):
            self.worse = True
        return float(np.sign(b - self.bhat) * np.sqrt(max(excess, 0.0)))


def firth_profile_conf_int(res: FirthResults, alpha: float) -> pd.DataFrame:
    """Profile penalised-likelihood intervals of a Firth fit (:class:`_FirthProfile`)."""
    return profile_conf_int(res, alpha, _FirthProfile)
