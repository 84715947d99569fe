"""Results of a mixed-effects GLM (lme4's ``merMod``): fixed effects with lme4's ``vcov``, the
variance components, the conditional modes and predictions, and lme4's summary layout.

The covariance of the fixed effects is the beta block of ``2 H^{-1}``, H the Hessian of the
deviance over (theta, beta) jointly, as lme4's ``vcov`` for GLMMs: holding theta fixed (the
inverse of the beta block of H) gives standard errors a few percent too small.

References
----------
Bates, D. et al. (2015). Fitting linear mixed-effects models using lme4. *Journal of
Statistical Software* 67(1); lme4 ``R/lmer.R`` (``vcov.merMod``, ``isSingular``,
``.prt.VC``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..formula.spec import plain_value
from ..lazy import cached_property
from ..likelihoods.mixed import Modes
from ..summary import Summary
from .base import check_which, row_key
from .io import SaveMixin, require_data
from .likelihood import LikelihoodResults
from .mixed_profile import profile_conf_int

#: lme4's ``isSingular`` tolerance on the diagonal of the relative covariance factors.
SINGULAR_TOL = 1e-4
#: lme4's ``check.conv.grad`` tolerance on the Newton step ``|H^{-1} g|``.
GRADIENT_TOL = 2e-3


@dataclass(frozen=True)
class MixedFit:
    """What a fit of a mixed GLM found.

    Attributes
    ----------
    theta, beta : ndarray
        Covariance parameters (lme4's order) and fixed effects.
    objective : float
        The deviance minimised, -2 log-likelihood (Laplace or adaptive quadrature).
    hessian : ndarray of shape (n_theta + k, n_theta + k)
        Its finite-difference Hessian over (theta, beta).
    gradient : ndarray of shape (n_theta + k,)
    modes : Modes
        The conditional modes at the estimate.
    nagq : int
    converged : bool
    condvar : list of ndarray of shape (l_k, p_k, p_k)
        Conditional covariance of each level's effects, per term.
    random : list of ndarray of shape (l_k, p_k)
        Conditional modes of the effects b, per term.
    saturated : float
        The saturated model's -2 log-likelihood (with the binomial coefficients), which an
        adaptive-quadrature deviance leaves out; kept so that results saved without their
        rows still compare on the GLM's footing (NaN: not recorded).
    """

    theta: np.ndarray
    beta: np.ndarray
    objective: float
    hessian: np.ndarray
    gradient: np.ndarray
    modes: Modes
    nagq: int
    converged: bool
    condvar: list
    random: list
    saturated: float = float("nan")

    def without_rows(self) -> MixedFit:
        """This record without the rows of the fit (the linear predictor at the modes), for
        results saved with ``remove_data=True``."""
        return replace(self, modes=replace(self.modes, eta=self.modes.eta[:0]))


def _term_labels(blocks) -> list[str]:
    """lme4's names of the terms' groups: repeated factors get ``.1``, ``.2`` (``g``, ``g.1``)."""
    seen: dict[str, int] = {}
    out = []
    for b in blocks:
        n = seen.get(b.group, 0)
        out.append(b.group if n == 0 else f"{b.group}.{n}")
        seen[b.group] = n + 1
    return out


class MixedGLMResults(LikelihoodResults, SaveMixin):
    """Results of :meth:`glmclass.MixedGLM.fit`.

    Attributes
    ----------
    params : pandas.Series
        Fixed effects.
    theta : pandas.Series
        lme4's covariance parameters (the relative Cholesky factors, column by column).
    llf : float
        Log-likelihood: Laplace (with the binomial coefficients, as lme4) or, for ``nagq >
        1``, adaptive quadrature without the saturated constant (as lme4); ``llf_marginal`` has
        it, and model comparisons use that.
    deviance : float
        lme4's ``deviance()``: the sum of the unit deviances at the conditional modes (not
        ``-2 llf``).
    nobs, ngroups, nagq, converged, singular
    """

    def __init__(self, model: Any, fit: MixedFit) -> None:
        self.model = model
        self.fit_record = fit
        blocks = model.blocks
        k, nt = fit.beta.size, fit.theta.size
        self.params = pd.Series(fit.beta, index=model.data.exog_index, name="params")
        labels = _term_labels(blocks)
        names = []
        for lab, b in zip(labels, blocks, strict=True):
            p = b.n_effects
            names += [f"{lab}.{b.names[i]}" if i == j else f"{lab}.{b.names[i]}.{b.names[j]}"
                      for j in range(p) for i in range(j, p)]
        self.theta = pd.Series(fit.theta, index=names, name="theta")
        H = fit.hessian
        try:
            full = 2.0 * np.linalg.solve(H, np.eye(H.shape[0]))
            cov = full[nt:, nt:]
            cov = (cov + cov.T) / 2
        except np.linalg.LinAlgError:
            cov = np.full((k, k), np.nan)
        self.cov_values = cov
        self.solver_inverse = cov
        self.estimable = np.ones(k, dtype=bool)
        self.llf = -fit.objective / 2.0
        self.llnull = np.nan
        self.nobs = float(model.data.nrows)
        self.k_params = k + nt
        self.df_model = float(k - (1 if model.has_intercept else 0))
        self.df_resid = self.nobs - self.k_params
        self.nagq = fit.nagq
        self.converged = fit.converged
        self.ngroups = {b.group: b.n_levels for b in blocks}
        lower = model.likelihood.theta_lower
        self.singular = bool(np.any(fit.theta[lower == 0] < SINGULAR_TOL))
        # the prior-weighted unit deviances at the modes, summed by PIRLS over row chunks
        self.deviance = float(fit.modes.dev)

    @cached_property
    def rows_fingerprint(self) -> str:
        """Fingerprint of the rows (:func:`~glmclass.results.base.row_key`)."""
        return row_key(self.model.data.index, None)

    # --- the footing of comparisons -----------------------------------------------------------
    @cached_property
    def llf_saturated(self) -> float:
        """The saturated model's log-likelihood ``sum_i ln p(y_i | mu_i = y_i)`` (with the
        binomial coefficients): the constant lme4's ``logLik`` of a ``nAGQ > 1`` fit leaves
        out (its quadrature is written with unit deviances)."""
        if np.isfinite(self.fit_record.saturated):  # kept by the fit: rows not needed
            return -float(self.fit_record.saturated) / 2.0
        require_data(self, "the saturated log-likelihood")
        return -float(self.model.deviance_function().saturated) / 2.0

    @cached_property
    def llf_marginal(self) -> float:
        """The marginal log-likelihood ``ln p(y | x)`` (the random effects integrated out by the
        Laplace approximation or adaptive quadrature) with every constant: :attr:`llf` for
        ``nagq = 1``; ``llf + llf_saturated`` for ``nagq > 1``. On the footing of a GLM's
        ``llf``: what ``gc.lrtest``, ``gc.anova`` and ``gc.compare`` use. (``llf``, ``aic`` and
        ``bic`` stay lme4's numbers.)"""
        return float(self.llf) + (self.llf_saturated if self.nagq > 1 else 0.0)

    def conf_int(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Confidence intervals: Wald (of the fixed effects), or ``method="profile"``: the
        profile-likelihood intervals of lme4's ``confint(fit, method = "profile", oldNames =
        FALSE)`` (:mod:`glmclass.results.mixed_profile`), exact roots of the signed root
        deviance where lme4 interpolates with a spline.

        Parameters
        ----------
        alpha : float
            1 - the confidence level.
        method : {"wald", "profile"}

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``. Wald: one row per fixed effect. Profile: first
            the SDs and correlations of each random-effect term, named as lme4
            (``sd_(Intercept)|g``, ``cor_x.(Intercept)|g``, ``sd_x|g``; a bound the profile
            does not reach before the limit is the limit: 0, -1 or 1), then the fixed effects.
        """
        if method not in ("wald", "profile"):
            raise ValueError(f"method must be 'wald' or 'profile', got {method!r}")
        if method == "wald":
            return super().conf_int(alpha)
        if not (isinstance(alpha, (int, float, np.number)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        return profile_conf_int(self, float(alpha))

    # --- the variance components --------------------------------------------------------------
    @cached_property
    def random_effects_cov(self) -> pd.DataFrame:
        """The variance components as lme4's ``as.data.frame(VarCorr(fit))``: one row per
        variance (``var2`` None) and per covariance, with columns ``group``, ``var1``,
        ``var2``, ``vcov`` (variance or covariance) and ``sdcor`` (SD or correlation)."""
        rows = []
        covs = self.model.likelihood.covariances(self.fit_record.theta)
        for lab, b, S in zip(_term_labels(self.model.blocks), self.model.blocks, covs,
                             strict=True):
            sd = np.sqrt(np.diag(S))
            for i in range(b.n_effects):
                rows.append((lab, b.names[i], None, S[i, i], sd[i]))
            for j in range(b.n_effects):
                for i in range(j + 1, b.n_effects):
                    corr = S[i, j] / (sd[i] * sd[j]) if sd[i] * sd[j] > 0 else np.nan
                    rows.append((lab, b.names[j], b.names[i], S[i, j], corr))
        return pd.DataFrame(rows, columns=["group", "var1", "var2", "vcov", "sdcor"])

    def _by_factor(self, values: list[np.ndarray]) -> pd.DataFrame:
        frames: dict[str, pd.DataFrame] = {}
        for b, v in zip(self.model.blocks, values, strict=True):
            part = pd.DataFrame(v, index=b.levels, columns=b.names)
            frames[b.group] = part if b.group not in frames else frames[b.group].join(part)
        return pd.concat(frames, names=["group", "level"])

    @cached_property
    def random_effects(self) -> pd.DataFrame:
        """Conditional modes of the random effects (lme4's ``ranef``): rows (grouping factor,
        level), one column per effect (NaN where a factor has no such effect);
        ``random_effects.loc["herd"]`` is one factor's table."""
        return self._by_factor(self.fit_record.random)

    @cached_property
    def random_effects_se(self) -> pd.DataFrame:
        """Conditional standard deviations of the random effects (lme4's ``ranef(condVar =
        TRUE)``), laid out as :attr:`random_effects`."""
        return self._by_factor([np.sqrt(np.diagonal(v, axis1=1, axis2=2))
                                for v in self.fit_record.condvar])

    # --- checks ---------------------------------------------------------------------------------
    @cached_property
    def convergence_check(self) -> str | None:
        """lme4's checks at the optimum: the Hessian of the deviance positive definite and the
        Newton step ``|H^{-1} g|`` below 0.002; None when both pass, else what went wrong and
        what to try."""
        H, g = self.fit_record.hessian, self.fit_record.gradient
        free = ~((self.fit_record.theta < SINGULAR_TOL)
                 & (self.model.likelihood.theta_lower == 0))
        free = np.r_[free, np.ones(self.params.size, dtype=bool)]
        Hf = H[np.ix_(free, free)]
        if not np.all(np.isfinite(Hf)) or np.linalg.eigvalsh((Hf + Hf.T) / 2).min() <= 0:
            return ("the Hessian of the deviance is not positive definite at the estimate: "
                    "the model may be unidentifiable; rescale the covariates or simplify the "
                    "random-effect terms")
        step = np.abs(np.linalg.solve(Hf, g[free])).max(initial=0.0)
        if step > GRADIENT_TOL or not self.converged:
            return (f"the fit may not have converged (scaled gradient {step:.3g}, lme4 allows "
                    f"{GRADIENT_TOL}); rescale the covariates, or refit from these estimates "
                    "with start_params")
        return None

    # --- predictions ----------------------------------------------------------------------------
    def _random_part(self, exog, groups, exog_re, allow_new_groups: bool, n: int
                     ) -> np.ndarray:
        m = self.model
        out = np.zeros(n)
        for b, v in zip(m.blocks, self.fit_record.random, strict=True):
            if m.random_formula is not None:
                factors = next(t.factors for t in m.random_formula.terms if t.group == b.group)
                frame = exog if isinstance(exog, pd.DataFrame) else pd.DataFrame(exog)
                codes = b.new_codes(frame, factors)
                Xr = b.spec.exog(frame)
            else:
                if groups is None:
                    raise ValueError("predicting new rows with the random effects needs their "
                                     "groups=; or pass random_effects=False")
                g = groups[b.group] if isinstance(groups, pd.DataFrame) else groups
                codes = b.levels.get_indexer(pd.Index(np.asarray(g)))
                Xr = np.ones((n, 1)) if exog_re is None else \
                    np.asarray(exog_re, dtype=float).reshape(n, -1)
            new = codes < 0
            if new.any() and not allow_new_groups:
                level = plain_value(pd.Index(np.asarray(_keys(exog, groups, b)))[new][0])
                raise ValueError(f"level {level!r}"
                                 f" of the grouping factor {b.group!r} was not in the fit; "
                                 "pass allow_new_groups=True to predict it at random effect 0")
            contrib = np.einsum("ij,ij->i", Xr, v[np.where(new, 0, codes)])
            out += np.where(new, 0.0, contrib)
        return out

    def predict(self, exog=None, which: str = "mean", random_effects: bool = True,
                allow_new_groups: bool = False, offset=None, groups=None,
                exog_re=None) -> pd.Series:
        """Predictions conditional on the groups' modes, or at random effects 0.

        Parameters
        ----------
        exog : DataFrame or array-like, optional
            New data (the formula's columns, grouping columns included); None: the rows of
            the fit.
        which : {"mean", "linear"}
            The mean (probability or rate) or the linear predictor.
        random_effects : bool
            Add each row's conditional modes (lme4 ``re.form = NULL``); False: at random
            effects 0 (``re.form = NA``).
        allow_new_groups : bool
            A level not seen in the fit predicts at random effect 0; else a ValueError
            naming it (lme4 ``allow.new.levels``).
        offset : array-like, optional
            Replaces the offset of new rows.
        groups, exog_re : array-like, optional
            Array models only: the new rows' groups and random-effect columns.

        Returns
        -------
        pandas.Series
        """
        check_which(which, ("mean", "linear"))
        m = self.model
        if exog is None:
            require_data(self, "in-sample prediction")
            eta = m.exog @ self.params.to_numpy() + np.asarray(m.offset, dtype=float)
            if random_effects:
                eta = self.fit_record.modes.eta
            index = m.data.index
        else:
            X, off, index = m.data.new_rows(exog, offset)
            eta = X @ self.params.to_numpy() + (0.0 if off is None else off)
            if random_effects:
                eta = eta + self._random_part(exog, groups, exog_re, allow_new_groups,
                                              X.shape[0])
        values = eta if which == "linear" else m.family.link.inverse(eta)
        return pd.Series(values, index=index, name=which)

    # --- the report -----------------------------------------------------------------------------
    def summary(self) -> Summary:
        """lme4's ``summary(glmer(...))``: the criteria (its "deviance" is -2 llf), the
        variance components, the numbers of observations and groups and the fixed effects;
        a :class:`~glmclass.summary.Summary` (text, HTML, LaTeX)."""
        m = self.model
        how = ("Laplace Approximation" if self.nagq == 1
               else f"Adaptive Gauss-Hermite Quadrature, nAGQ = {self.nagq}")
        fam = m.family
        header: list = []
        if m.random_formula is not None:
            header.append(("Formula", m.random_formula.formula))
        header += [("AIC", self.aic), ("BIC", self.bic), ("logLik", self.llf),
                   ("deviance (-2 logLik)", -2 * self.llf), ("df.resid", int(self.df_resid)),
                   ("Number of obs", int(self.nobs))]
        header += [(f"Groups: {g}", n) for g, n in self.ngroups.items()]
        vc = self.random_effects_cov
        var = vc[vc["var2"].isna()]
        table = pd.DataFrame({"Name": var["var1"].to_numpy(), "Variance": var["vcov"].to_numpy(),
                              "Std.Dev.": var["sdcor"].to_numpy()},
                             index=pd.Index(var["group"].to_numpy(), name="Groups"))
        corr = vc[vc["var2"].notna()]
        if len(corr):  # lme4 prints each correlation in the row of its second effect
            table["Corr"] = ""
            for _, r in corr.iterrows():
                at = (table.index == r["group"]) & (table["Name"] == r["var2"]).to_numpy()
                table.loc[at, "Corr"] = (table.loc[at, "Corr"] + f" {r['sdcor']:.3f}").str.strip()
        fixed = pd.DataFrame({"Estimate": self.params, "Std. Error": self.bse,
                              "z value": self.tvalues, "Pr(>|z|)": self.pvalues})
        notes = []
        if self.singular:
            notes.append("boundary (singular) fit: a variance is 0 or a correlation +-1")
        check = self.convergence_check
        if check is not None:
            notes.append(f"Convergence: {check}")
        return Summary(f"Generalized linear mixed model fit by maximum likelihood ({how})",
                       header, [("Random effects:", table), ("Fixed effects:", fixed)], notes,
                       subtitle=f"Family: {fam.name.lower()} ( {fam.link.name.lower()} )")

    def __repr__(self) -> str:
        return f"<MixedGLMResults: {len(self.params)} fixed effects, llf {self.llf:.6g}>"


def _keys(exog, groups, block) -> Any:
    """The raw grouping values of new rows, for an error message."""
    if groups is not None:
        return groups[block.group] if isinstance(groups, pd.DataFrame) else groups
    cols = block.group.split(":")
    frame = exog if isinstance(exog, pd.DataFrame) else pd.DataFrame(exog)
    if len(cols) == 1:
        return frame[cols[0]].to_numpy()
    return frame[cols].astype(str).agg(":".join, axis=1).to_numpy()
