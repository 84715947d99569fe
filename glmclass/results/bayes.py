"""Results of a Bayesian binary GLM: Laplace posterior, evidence, predictive probabilities.

The data-side results (fitted values, residuals, llf, llnull, ...) are those of every GLM-like
fit (:class:`~glmclass.results.glm_base.GLMBaseResults`), evaluated at the posterior mode; the
posterior itself (covariance, credible intervals, evidence, predictive distribution, report) is
here. It is not a subclass of the frequentist :class:`~glmclass.results.glm.GLMResults`.
"""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pandas as pd

from .. import links as L
from ..errors import GlmclassWarning
from ..lazy import cached_property
from ..numerics import laplace
from ..numerics.laplace_approx import LaplaceApproximation
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..solvers.control import Control
from ..summary import Summary, modelled_line
from .base import check_which, num
from .glm_base import GLMBaseResults
from .io import SaveMixin, require_data
from .likelihood import LikelihoodResults
from .prediction import PredictionResults, glm_prediction
from .tidy import TidyMixin


class BayesGLMResults(GLMBaseResults, LikelihoodResults, TidyMixin, SaveMixin):
    """Posterior mode, Laplace posterior N(w_MAP, S_N) and model evidence of a Bayesian GLM.

    Attributes
    ----------
    params : pandas.Series
        Posterior mode (MAP) by design column.
    bse : pandas.Series
        Posterior standard deviations, sqrt(diag S_N).
    tvalues, pvalues : pandas.Series
        ``mode / sd``, and the two-sided tail probability ``2 Phi(-|mode / sd|)`` of the Laplace
        posterior: twice the posterior probability that the coefficient has the other sign.
        These are posterior summaries, not frequentist tests.
    prior_mean, prior_scale : pandas.Series
        The prior N(m_j, s_j^2) by column, after any optimisation (``inf`` = flat).
    prior_cov : pandas.DataFrame
        The prior covariance S_0 after any optimisation (diagonal unless the model was given
        ``prior_cov``; ``inf`` on the diagonal = flat).
    alpha : pandas.Series
        Prior precision 1 / s^2 of each group of coefficients (NaN for a group whose
        scales differ); optimised when ``fit(optimize_prior=...)``. With a full ``prior_cov``
        S_0 given to the model: the factor alpha of the prior covariance S_0 / alpha (1 unless
        optimised).
    groups : pandas.Series
        Group of each column (None: prior held fixed).
    optimized : bool
        Whether the prior was chosen by maximising the evidence.
    evidence_optimization : EvidenceMax or None
        Record of that maximisation (``alpha``, ``log_evidence``, ``n_iter``, ``converged``,
        ``history`` of the fixed-point iterations).
    llf : float
        Log-likelihood at the mode.
    log_evidence : float
        Laplace approximation of ln p(y) (PRML eq. 4.137).
    """

    maximum_likelihood = False  # a posterior mode

    def __init__(self, model, post, null, codes: np.ndarray, group_names: list, opt,
                 information: str) -> None:
        super().__init__(model, post.fit, null)
        self.method = "laplace"
        self.information = information
        names = model.data.exog_names
        self._post = post
        self._codes = codes
        self._group_names = group_names
        self.prior_mean = pd.Series(model.prior_mean, index=names, name="prior_mean")
        full = post.precision.ndim == 2
        if full:
            cov = model.prior_cov / post.factor
            scale = np.sqrt(np.diag(cov))
        else:
            with np.errstate(divide="ignore"):
                scale = 1.0 / np.sqrt(post.precision)
            cov = np.diag(scale**2)
        self.prior_scale = pd.Series(scale, index=names, name="prior_scale")
        self.prior_cov = pd.DataFrame(cov, index=names, columns=names)
        self.groups = pd.Series([group_names[c] if c >= 0 else None for c in codes],
                                index=names, name="group", dtype=object)
        alpha = []
        for g in range(len(group_names)):
            if full:
                alpha.append(post.factor)
                continue
            prec = post.precision[codes == g]
            alpha.append(prec[0] if np.allclose(prec, prec[0], rtol=1e-12, atol=0) else np.nan)
        self.alpha = pd.Series(alpha, index=pd.Index(group_names, name="group"), name="alpha")
        self.optimized = opt is not None
        self.evidence_optimization = opt

    # --- posterior ------------------------------------------------------------------------------
    @cached_property
    def cov_values(self) -> np.ndarray:
        """Posterior covariance S_N, the inverse of S_0^-1 + X'RX on the kept columns (NaN for
        aliased columns)."""
        try:
            kept = spd_inverse(self._post.information)
        except NotPositiveDefinite:
            warnings.warn("the posterior precision is not positive definite at the mode; "
                          "posterior standard deviations are NaN", GlmclassWarning, stacklevel=3)
            kept = None
        return self.on_every_coefficient(kept)

    def cov_params(self) -> pd.DataFrame:
        """Laplace posterior covariance S_N (a copy)."""
        return self._cov.copy()

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Equal-tailed credible intervals of the Laplace posterior, ``mode -+ z sd``.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``, one row per coefficient.
        """
        return super().conf_int(alpha)

    @cached_property
    def log_evidence(self) -> float:
        """Laplace log evidence ``llf + ln N(w_MAP | m_0, S_0) + (M/2) ln 2 pi - ln|A| / 2``.

        Flat (improper) priors contribute a density of 1: the value is then defined up to a
        constant shared by models with the same flat coefficients.
        """
        return float(self._post.log_evidence)

    @cached_property
    def laplace(self) -> LaplaceApproximation:
        """The Laplace approximation of the posterior as :func:`glmclass.laplace` gives it: its
        ``mode`` (on the non-aliased columns), ``precision`` A = S_0^-1 + X'RX and
        ``log_normaliser``, which is :attr:`log_evidence`."""
        keep = ~self._fit.aliased
        return LaplaceApproximation(self.params.to_numpy()[keep], self._post.hessian,
                                    self.log_posterior, None, "exact (penalised IRLS)",
                                    bool(self.converged), int(self.n_iter))

    @cached_property
    def log_prior(self) -> float:
        """ln p(w_MAP), the prior log density at the mode (flat components count 0)."""
        keep = ~self._fit.aliased
        return laplace.log_prior_density(self.params.to_numpy()[keep],
                                         self.prior_mean.to_numpy()[keep],
                                         laplace.kept(self._post.precision, keep))

    @cached_property
    def log_posterior(self) -> float:
        """Unnormalised log posterior at the mode, ``llf + log_prior``."""
        return self.llf + self.log_prior

    @cached_property
    def effective_params(self) -> pd.Series:
        """Well-determined parameters ``gamma_j = 1 - alpha_j (S_N)_jj`` by column; their sum
        is MacKay's gamma (PRML eq. 3.91), the effective number of parameters."""
        sn = self._cov_evidence
        g = laplace.well_determined(self._post.precision, np.nan_to_num(sn))
        return pd.Series(np.where(self._fit.aliased, 0.0, g), index=self.params.index,
                         name="gamma")

    @cached_property
    def _cov_evidence(self) -> np.ndarray:
        """Posterior covariance from the observed information (the Laplace S_N)."""
        if self.information == "observed" or self.model.family.is_canonical:
            return self.cov_params().to_numpy()
        keep = ~self._fit.aliased
        full = np.zeros((keep.size, keep.size))
        full[np.ix_(keep, keep)] = laplace_cov(self._post.hessian)
        return full

    def evidence_curve(self, alphas=None, group=None) -> pd.DataFrame:
        """Laplace log evidence as a function of one group's prior precision, the others fixed.

        Parameters
        ----------
        alphas : array-like of float, optional
            Precisions alpha = 1 / prior_scale^2 at which to refit the mode (with a full
            ``prior_cov`` S_0: factors alpha of the prior covariance S_0 / alpha); default 41
            values log-spaced over 10^-3 .. 10^3 times the current alpha.
        group : str, optional
            Which group varies (default: the first).

        Returns
        -------
        pandas.DataFrame
            Columns ``alpha``, ``prior_scale``, ``log_evidence``, ``llf``, ``log_prior`` and
            ``effective_params`` (MacKay's gamma), one row per alpha.
        """
        names = self._group_names
        group = names[0] if group is None else group
        if group not in names:
            raise ValueError(f"group {group!r} is not one of the prior groups {names}")
        g = names.index(group)
        sel = self._codes == g
        if alphas is None:
            a0 = self.alpha.iloc[g]
            a0 = a0 if np.isfinite(a0) and a0 > 0 else float(np.mean(self._post.precision[sel]))
            alphas = a0 * np.logspace(-3, 3, 41)
        alphas = np.asarray(alphas, dtype=float).ravel()
        if np.any(~(alphas > 0)) or not np.all(np.isfinite(alphas)):
            raise ValueError("alphas must be positive and finite prior precisions")
        m = self.model
        control = Control(tol=1e-12, hessian="observed")
        rows, start = [], self.params.to_numpy()
        start = None if np.isnan(start).any() else start
        for a in alphas:
            if self._post.precision.ndim == 2:
                prec = self._post.precision * (a / self._post.factor)
            else:
                prec = self._post.precision.copy()
                prec[sel] = a
            post = m.posterior_at(prec, control, start)
            keep = ~post.fit.aliased
            lp = laplace.log_prior_density(post.fit.coef[keep], m.prior_mean[keep],
                                           laplace.kept(prec, keep))
            try:
                sn = laplace_cov(post.hessian)
                gamma = float(np.sum(laplace.well_determined(laplace.kept(prec, keep), sn)))
            except np.linalg.LinAlgError:
                gamma = np.nan
            rows.append({"alpha": a, "prior_scale": 1.0 / np.sqrt(a),
                         "log_evidence": post.log_evidence, "llf": post.loglik,
                         "log_prior": lp, "effective_params": gamma})
        return pd.DataFrame(rows)

    # --- prediction ---------------------------------------------------------------------------
    def _design(self, exog, offset):
        """Design on the kept columns, offset and index of the rows to predict
        (:meth:`glmclass.data.model_data.ModelData.new_rows`)."""
        keep = self._keep
        if exog is None:
            require_data(self, "in-sample prediction")
        X, off, index = self.model.data.new_rows(exog, offset)
        if exog is None and offset is None:
            off = self.model.offset
        return (X if keep.all() else X[:, keep]), off, index

    def get_prediction(self, exog=None, which: str = "mean", offset=None) -> PredictionResults:
        """Laplace-posterior summaries of predictions, in the form of
        :meth:`GLMResults.get_prediction <glmclass.results.glm.GLMResults.get_prediction>`.

        ``which="linear"``: the posterior mean and sd of ``a = x' w`` (as
        :meth:`predict_linear`) and the equal-tailed credible interval ``mu_a -+ z sd_a``.
        ``which="mean"``: the plug-in ``g^-1(mu_a)``, its delta-method sd ``|g^-1'(mu_a)|
        sd_a`` and the interval ``g^-1(mu_a -+ z sd_a)``, which is the exact equal-tailed
        credible interval of the mean under the Laplace posterior (a monotone function of a
        normal ``a``). The predictive probability, which integrates over the posterior, is
        :meth:`predict` (``method="probit"``); it lies inside the interval but is not its
        centre.

        Returns
        -------
        PredictionResults
        """
        return glm_prediction(self, exog, which, offset)

    def predict_linear(self, exog=None, offset=None) -> pd.DataFrame:
        """Posterior mean and sd of the linear predictor ``a = x' w`` (PRML eq. 4.149-4.150).

        Returns
        -------
        pandas.DataFrame
            Columns ``mean`` and ``sd``, one row per observation.
        """
        X, off, index = self._design(exog, offset)
        keep = ~self._fit.aliased
        mu, var = laplace.linear_predictor_moments(
            X, self.params.to_numpy()[keep], self._cov_evidence[np.ix_(keep, keep)], off)
        return pd.DataFrame({"mean": mu, "sd": np.sqrt(var)}, index=index)

    def predict(self, exog=None, which: str = "mean", method: str = "probit", offset=None,
                threshold: float = 0.5, seed=None, n_draws: int = 4000, n_nodes: int = 64):
        """Predictive probabilities p(y = 1 | x, D), integrating over the Laplace posterior.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data through the stored design; default the rows the model was fit on.
        which : {"mean", "prob", "linear", "class"}
            Predictive probabilities of the second level (a Series) or of both levels (a
            DataFrame), the posterior mean of the linear predictor, or labels (probability
            above ``threshold``): the contract of :mod:`glmclass.models.base`.
        method : {"probit", "map", "quadrature", "mc"}
            ``"probit"``: sigma(kappa(sigma_a^2) mu_a), kappa(s^2) = (1 + pi s^2 / 8)^-1/2
            (PRML eq. 4.155; exact ``Phi(mu_a / sqrt(1 + sigma_a^2))`` for a probit link, not
            available for other links). ``"map"``: g^-1(mu_a), the plug-in at the mode.
            ``"quadrature"``: Gauss-Hermite on the 1-D integral over a ~ N(mu_a, sigma_a^2)
            (any link; the accuracy reference). ``"mc"``: average over ``n_draws`` posterior
            draws of w.
        offset : array-like, optional
            Offset of new rows (default 0).
        threshold : float
        seed : int or numpy.random.Generator, optional
            For ``method="mc"``.
        n_draws : int
            Posterior draws for ``method="mc"``.
        n_nodes : int
            Gauss-Hermite nodes for ``method="quadrature"``.

        Returns
        -------
        pandas.Series or pandas.DataFrame
        """
        check_which(which, ("mean", "prob", "linear", "class"))
        if method not in ("probit", "map", "quadrature", "mc"):
            raise ValueError(f"method must be 'probit', 'map', 'quadrature' or 'mc', got "
                             f"{method!r}")
        link = self.model.family.link
        closed_form = link in (L.Logit(), L.Probit())
        if method == "probit" and not closed_form:
            raise ValueError(f"method='probit' needs a logit or probit link, not {link.name!r}; "
                             "use method='quadrature' or 'mc'")
        X, off, index = self._design(exog, offset)
        keep = ~self._fit.aliased
        coef, cov = self.params.to_numpy()[keep], self._cov_evidence[np.ix_(keep, keep)]
        mu_a, var_a = laplace.linear_predictor_moments(X, coef, cov, off)
        if which == "linear":
            return self._by_which(which, mu_a, None, index, threshold)
        if method == "map":
            p = link.inverse(mu_a)
        elif method == "probit":
            p = laplace.probit_predictive(mu_a, var_a, link.name)
        elif method == "quadrature":
            gh_sd = 2.0 if closed_form else laplace.GH_MAX_SD
            p = laplace.quadrature_predictive(mu_a, var_a, link.inverse, n_nodes, gh_sd)
        else:
            rng = np.random.default_rng(seed)
            p = laplace.monte_carlo_predictive(X, coef, cov, link.inverse, off, n_draws, rng)
        return self._by_which(which, mu_a, p, index, threshold)

    # --- report -------------------------------------------------------------------------------
    def _prior_text(self) -> str:
        s, mean = self.prior_scale.to_numpy(), self.prior_mean.to_numpy()
        if self._post.precision.ndim == 2:
            return "N(m_0, S_0), full S_0"
        parts = ["flat" if np.isinf(sj) else f"N({mj:.4g}, {sj:.4g}^2)"
                 for sj, mj in zip(s, mean, strict=True)]
        if len(set(parts)) == 1:
            return parts[0]
        i = self.model.intercept_index
        rest = [q for j, q in enumerate(parts) if j != i]
        if i is not None and len(set(rest)) == 1:
            return f"{rest[0]}; intercept {parts[i]}"
        return "see table"

    def summary(self, alpha: float = 0.05) -> Summary:
        """Report: prior, posterior mode, sd and credible intervals, llf and log evidence.

        Parameters
        ----------
        alpha : float
            1 - probability of the credible intervals.
        """
        m = self.model
        ci = self.conf_int(alpha)
        lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
        table = pd.DataFrame({"mode": self.params, "sd": self.bse, lo: ci["lower"],
                              hi: ci["upper"], "prior mean": self.prior_mean,
                              "prior sd": self.prior_scale})
        header = [
            ("Dep. Variable", m.data.endog_name), ("Model", type(m).__name__),
            ("Family", m.family.name), ("Link", m.family.link.name),
            ("Method", "MAP (penalised IRLS)"), ("Posterior", "Laplace"),
            ("Prior", self._prior_text()),
            ("Prior optimised", "evidence" if self.optimized else "no"),
            ("No. Observations", num(self.nobs)), ("Df Model", num(self.df_model)),
            ("Eff. parameters", float(self.effective_params.sum())),
            ("Converged", self.converged), ("No. Iterations", self.n_iter),
            ("Information", self.information),
            ("Log-Likelihood", self.llf), ("Log-Prior", self.log_prior),
            ("Log-Posterior", self.log_posterior), ("Log Evidence", self.log_evidence),
            ("Deviance", self.deviance), ("LL-Null", self.llnull),
        ]
        for g, a in self.alpha.items():
            header.append((f"alpha ({g})", float(a)))
        if m.data.n_dropped:
            header.append(("Rows dropped (missing)", m.data.n_dropped))
        notes = [
            "Laplace approximation: posterior N(mode, S_N), S_N^-1 = S_0^-1 + X'RX with the "
            f"{self.information} information at the mode; intervals are "
            f"{100 * (1 - alpha):g}% credible intervals of that normal. Log evidence = llf + "
            "ln p(mode) + (M/2) ln 2pi - ln|A|/2 (Bishop 2006, eq. 4.137)."]
        if np.isinf(self.prior_scale.to_numpy()).any():
            notes.append("Flat priors are improper: the log evidence is defined up to a "
                         "constant shared by models with the same flat coefficients.")
        if self.optimized:
            notes.append("Prior precision chosen by maximising the Laplace evidence "
                         "(type-II maximum likelihood).")
        if self.aliased:
            notes.append(f"Aliased columns with NaN estimates: {', '.join(self.aliased)}.")
        title = f"{type(m).__name__} Regression Results"
        notes = [line for n in notes for line in textwrap.wrap(n, 78)]
        sub = modelled_line(m.data.endog_name, m.levels) if m.family.name == "Binomial" else ""
        return Summary(title, header, [(None, table)], notes, subtitle=sub)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__}: {type(self.model).__name__}, nobs={num(self.nobs)}, "
                f"log_evidence={self.log_evidence:.6g}>")


def laplace_cov(hessian: np.ndarray) -> np.ndarray:
    """S_N = A^-1 (a covariance, hence the one explicit inverse) through Cholesky."""
    return spd_inverse(hessian)
