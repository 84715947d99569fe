"""Results of the generative classifiers (LDA, QDA; naive Bayes builds on the same base).

A generative model has a *joint* likelihood p(x, class), so its ``llf`` cannot be compared with
the conditional likelihood p(class | x) of a logistic model: ``likelihood_kind = "joint"``
tells :func:`glmclass.compare` so, and ``llf_conditional`` gives the comparable number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.model_data import output_index
from ..lazy import cached_property
from ..numerics import discriminant as nd
from ..summary import Summary
from .base import CriteriaMixin, check_which, row_key
from .dask import GENERATIVE_ROWS, RowOutputs
from .frozen import FrozenResults
from .io import SaveMixin


class GenerativeResults(RowOutputs, CriteriaMixin, SaveMixin, FrozenResults,
                        rows=GENERATIVE_ROWS):
    """What every fitted generative classifier reports.

    Attributes
    ----------
    model : the fitted model (never modified)
    levels : list
        Class labels.
    priors : pandas.Series
        Class priors by level (estimated frequencies, or those given to the model).
    counts : pandas.Series
        Observations per class.
    nobs : float
    k_params : int
        Number of estimated parameters (equal to ``df_model``).
    likelihood_kind : str
        ``"joint"``: ``llf`` is sum_n ln p(x_n, class_n).
    """

    likelihood_kind = "joint"
    #: Whether the fit asked for leave-one-out results (``fit(cv=True)``).
    cv = False

    def __init__(self, model, counts: np.ndarray, prior: np.ndarray, k_params: int) -> None:
        self.model = model
        d = model.data
        self.levels = list(model.levels)
        lev = pd.Index(self.levels, name=d.endog_name)
        self._lev = lev
        self.priors = pd.Series(prior, index=lev, name="prior")
        self.counts = pd.Series(counts.astype(int), index=lev, name="count")
        self.nobs = float(model.nobs)
        self.k_params = int(k_params)
        self.df_model = float(k_params)
        self.formula = d.formula
        # unit frequency weights, as a GLM/MNLogit without weights hashes its rows
        self.rows_fingerprint = row_key(d.index, None)
        self._log_prior = np.log(prior)

    # subclasses define _log_joint_of(X) -> (n, K) array of ln p(x_n, k)

    @cached_property
    def _log_joint(self) -> np.ndarray:
        return self._log_joint_of(self.model.exog)

    @cached_property
    def _log_post(self) -> np.ndarray:
        return nd.log_posterior(self._log_joint)

    # --- likelihood ---------------------------------------------------------------------------
    @cached_property
    def llf(self) -> float:
        """Joint log-likelihood sum_n ln[pi_k N(x_n | ...)] at the fitted parameters."""
        y = self.model.endog
        return float(self._log_joint[np.arange(y.size), y].sum())

    @cached_property
    def llf_conditional(self) -> float:
        """Conditional log-likelihood sum_n ln p(class_n | x_n), comparable with a logit."""
        y = self.model.endog
        return float(self._log_post[np.arange(y.size), y].sum())

    # --- prediction ---------------------------------------------------------------------------
    def _new_rows(self, exog) -> tuple[np.ndarray | None, pd.Index]:
        """The features of new rows (None for the training rows) and their index."""
        if exog is None:
            return None, self.model.data.index
        X = self.model.design(exog)
        return X, output_index(exog, X.shape[0])

    def _output(self, log_post: np.ndarray, index: pd.Index, which: str, log_joint=None):
        if which == "log_joint":
            return pd.DataFrame(log_joint, index=index, columns=self._lev)
        if which == "log_prob":
            return pd.DataFrame(log_post, index=index, columns=self._lev)
        if which in ("prob", "mean"):
            return pd.DataFrame(np.exp(log_post), index=index, columns=self._lev)
        bad = np.isnan(log_post).any(axis=1)
        best = np.argmax(np.where(bad[:, None], 0.0, log_post), axis=1)
        labels = np.asarray(self.levels, dtype=object)[best]
        labels[bad] = None
        return pd.Series(labels, index=index, name="class")

    #: The values ``predict(which=...)`` accepts.
    which_options: tuple[str, ...] = ("prob", "mean", "log_prob", "class", "log_joint")

    def predict(self, exog=None, which: str = "prob"):
        """Posterior class probabilities, log-probabilities or labels.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
            New data (a DataFrame with the formula's columns, or a feature matrix for array
            models); None for the data the model was fit on.
        which : {"prob", "mean", "log_prob", "class", "log_joint"}
            p(k | x) (a DataFrame, one column per level; ``"mean"`` is the same), its
            logarithm, the most probable label (a Series), or ln p(x, k): the contract of
            :mod:`glmclass.models.base`.

        Returns
        -------
        pandas.DataFrame or pandas.Series
            Rows with missing values give NaN (label missing).
        """
        check_which(which, self.which_options)
        X, index = self._new_rows(exog)
        if X is None:
            return self._output(self._log_post, index, which, self._log_joint)
        lj = self._new_log_joint(X)
        return self._output(self._post_of(lj), index, which, lj)


    def _new_log_joint(self, X: np.ndarray) -> np.ndarray:
        bad = np.isnan(X).any(axis=1)
        lj = np.full((X.shape[0], len(self.levels)), np.nan)
        if (~bad).any():
            lj[~bad] = self._log_joint_of(X[~bad])
        return lj

    @staticmethod
    def _post_of(lj: np.ndarray) -> np.ndarray:
        out = np.full_like(lj, np.nan)
        ok = ~np.isnan(lj).any(axis=1)
        if ok.any():
            out[ok] = nd.log_posterior(lj[ok])
        return out

    def _table(self, pred_codes: np.ndarray) -> pd.DataFrame:
        k = len(self.levels)
        table = np.zeros((k, k), dtype=int)
        np.add.at(table, (self.model.endog, pred_codes), 1)
        lab = [str(v) for v in self.levels]
        return pd.DataFrame(table, index=pd.Index(lab, name="observed"),
                            columns=pd.Index(lab, name="predicted"))

    def pred_table(self) -> pd.DataFrame:
        """Confusion table of the training data: rows observed, columns predicted (counts)."""
        return self._table(np.argmax(self._log_post, axis=1))

    @cached_property
    def error_rate(self) -> float:
        """Training (resubstitution) misclassification rate."""
        return float(np.mean(np.argmax(self._log_post, axis=1) != self.model.endog))

    # --- leave-one-out ------------------------------------------------------------------------
    def _loo(self) -> np.ndarray:
        if not self.cv:
            raise ValueError("leave-one-out results need fit(cv=True)")
        return self._loo_log_post

    @cached_property
    def _loo_log_post(self) -> np.ndarray:
        """Leave-one-out log-posteriors of the model's rows, (n_obs, K): closed forms per row
        from the fit's moments (on Dask data each partition computes its own rows')."""
        return self._loo_of(self.model.exog, self.model.endog)

    @cached_property
    def cv_posterior(self) -> pd.DataFrame:
        """Leave-one-out posterior probabilities (fit with ``cv=True``), as MASS ``CV=TRUE``."""
        return pd.DataFrame(np.exp(self._loo()), index=self.model.data.index, columns=self._lev)

    @cached_property
    def cv_class(self) -> pd.Series:
        """Leave-one-out predicted labels (fit with ``cv=True``)."""
        best = np.argmax(self._loo(), axis=1)
        return pd.Series(np.asarray(self.levels, dtype=object)[best], index=self.model.data.index,
                         name="class")

    @cached_property
    def cv_error(self) -> float:
        """Leave-one-out misclassification rate (fit with ``cv=True``)."""
        return float(np.mean(np.argmax(self._loo(), axis=1) != self.model.endog))

    def cv_pred_table(self) -> pd.DataFrame:
        """Leave-one-out confusion table (fit with ``cv=True``)."""
        return self._table(np.argmax(self._loo(), axis=1))

    # --- report pieces ------------------------------------------------------------------------
    def _header(self, extra: list) -> list:
        m = self.model
        head = [("Dep. Variable", m.data.endog_name), ("Model", type(m).__name__),
                ("No. Observations", int(self.nobs)), ("No. Classes", len(self.levels)),
                ("No. Features", m.exog.shape[1]), ("Df Model", int(self.df_model))]
        head += extra
        head += [("Log-Likelihood (joint)", self.llf),
                 ("Log-Likelihood (cond.)", self.llf_conditional),
                 ("AIC", self.aic), ("BIC", self.bic), ("Training error", self.error_rate)]
        if self.cv:
            head.append(("Leave-one-out error", self.cv_error))
        if m.data.n_dropped:
            head.append(("Rows dropped (missing)", m.data.n_dropped))
        return head

    def _prior_table(self) -> pd.DataFrame:
        return pd.DataFrame({"prior": self.priors, "count": self.counts.astype(float)})

    def _notes(self) -> list[str]:
        given = self.model.prior is not None
        return ["Log-likelihood (joint) is sum ln p(x, class); (cond.) is sum ln p(class | x), "
                "comparable with a logistic model.",
                "AIC and BIC use the joint log-likelihood; priors were "
                + ("given (not counted as parameters)." if given else "estimated.")]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self.levels)} classes, nobs={int(self.nobs)}>"


def _n_prior_params(model, k: int) -> int:
    return 0 if model.prior is not None else k - 1


class LDAResults(GenerativeResults):
    """A fitted linear discriminant analysis.

    Attributes
    ----------
    priors : pandas.Series
    means : pandas.DataFrame
        Class means, levels x features.
    covariance : pandas.DataFrame
        Pooled within-class covariance (after any shrinkage), features x features.
    cov_type : {"mle", "unbiased"}
    shrinkage : float
        Shrinkage intensity used (0 without; the Ledoit-Wolf value when chosen so).
    scalings : pandas.DataFrame
        Fisher discriminant directions, features x LD1..LDr, normalised as MASS's ``scaling``.
    svd : pandas.Series
        Ratios of between- to within-class standard deviations on LD1..LDr (MASS ``svd``).
    """

    def __init__(self, model, moments: nd.ClassMoments, prior: np.ndarray, sigma: np.ndarray,
                 sph: nd.Sphering, cov: str, shrinkage: float, cv: bool) -> None:
        k, dim = moments.means.shape
        super().__init__(model, moments.counts, prior,
                         _n_prior_params(model, k) + k * dim + dim * (dim + 1) // 2)
        names = model.exog_names
        self.means = pd.DataFrame(moments.means, index=self._lev, columns=names)
        self.covariance = pd.DataFrame(sigma, index=names, columns=names)
        self.cov_type = cov
        self.shrinkage = float(shrinkage)
        self._sph = sph
        self._mu = moments.means
        self.cv = bool(cv)
        scaling, sv = nd.fisher_directions(moments.means, prior, moments.counts, sph,
                                           cov == "mle")
        ld = [f"LD{j + 1}" for j in range(scaling.shape[1])]
        self.scalings = pd.DataFrame(scaling, index=names, columns=ld)
        self.svd = pd.Series(sv, index=ld, name="svd")
        self._centre = prior @ moments.means

    def _log_joint_of(self, X: np.ndarray) -> np.ndarray:
        return nd.lda_log_joint(X, self._mu, self._sph, self._log_prior)

    def _loo_of(self, X: np.ndarray, codes: np.ndarray) -> np.ndarray:
        return nd.lda_loo_log_posterior(X, codes, self._mu, self.counts.to_numpy(float),
                                        self._sph, self._log_prior, self.cov_type == "unbiased",
                                        int(self.nobs))

    @property
    def n_components(self) -> int:
        """Number of discriminant directions, min(K - 1, D) unless the means are degenerate."""
        return self.scalings.shape[1]

    # --- discriminant functions -----------------------------------------------------------------
    @cached_property
    def _coef(self) -> np.ndarray:
        return nd.shared_solve(self._sph, self._mu.T)

    @cached_property
    def coef(self) -> pd.DataFrame:
        """Coefficients Sigma^-1 mu_k of delta_k(x) = x' Sigma^-1 mu_k + intercept_k,
        features x levels (ESL eq. 4.10)."""
        return pd.DataFrame(self._coef, index=self.model.exog_names, columns=self._lev)

    @cached_property
    def intercept(self) -> pd.Series:
        """-mu_k' Sigma^-1 mu_k / 2 + ln pi_k by level."""
        quad = np.einsum("kj,jk->k", self._mu, self._coef)
        return pd.Series(-0.5 * quad + self._log_prior, index=self._lev, name="intercept")

    @cached_property
    def logistic_params(self) -> pd.Series:
        """Two classes: w0 and w of p(second level | x) = sigma(w0 + w'x) (PRML eqs. 4.65-4.67).

        w = Sigma^-1 (mu_2 - mu_1), w0 = -mu_2'Sigma^-1 mu_2/2 + mu_1'Sigma^-1 mu_1/2
        + ln(pi_2/pi_1), indexed ``Intercept`` then the features, to set beside a ``Logit``'s
        ``params`` (the second level is the success there too).
        """
        if len(self.levels) != 2:
            raise ValueError(f"logistic_params needs two classes; this model has "
                             f"{len(self.levels)} (compare coef/intercept differences instead)")
        w = self._coef[:, 1] - self._coef[:, 0]
        b = self.intercept.to_numpy()
        return pd.Series(np.r_[b[1] - b[0], w], index=["Intercept"] + self.model.exog_names,
                         name="logistic")

    # --- discriminant coordinates ---------------------------------------------------------------
    def _n_comp(self, n_components: int | None) -> int:
        r = self.n_components
        if n_components is None:
            return r
        if not 1 <= int(n_components) <= r:
            raise ValueError(f"n_components must be between 1 and {r} (the number of "
                             f"discriminant directions), got {n_components!r}")
        return int(n_components)

    def transform(self, exog=None, n_components: int | None = None) -> pd.DataFrame:
        """Discriminant coordinates (x - xbar)' scalings, xbar the prior-weighted mean of the
        class means (MASS ``predict(fit)$x``); None for the training data."""
        L = self._n_comp(n_components)
        X, index = self._new_rows(exog)
        X = self.model.exog if X is None else X
        y = (X - self._centre) @ self.scalings.to_numpy()[:, :L]
        return pd.DataFrame(y, index=index, columns=self.scalings.columns[:L])

    which_options = GenerativeResults.which_options + ("linear",)

    def predict(self, exog=None, which: str = "prob", n_components: int | None = None):
        """Posterior probabilities, log-probabilities or labels (see the base class), or
        ``which="linear"``: the linear discriminant functions delta_k(x) (a DataFrame, one
        column per level; :attr:`coef` and :attr:`intercept`).

        ``n_components=L`` classifies in the first L discriminant coordinates only (reduced-
        rank LDA, ESL §4.3.3; MASS ``predict(fit, dimen=L)``); ``which="log_joint"`` and
        ``"linear"`` are then unavailable.
        """
        check_which(which, self.which_options)
        if which == "linear" and n_components is None:
            X, index = self._new_rows(exog)
            X = self.model.exog if X is None else X
            delta = X @ self._coef + self.intercept.to_numpy()
            return pd.DataFrame(delta, index=index, columns=self._lev)
        if n_components is None or self._n_comp(n_components) == self.n_components:
            return super().predict(exog, which)
        if which in ("log_joint", "linear"):
            raise ValueError(f"which={which!r} is the full-rank model's; drop n_components")
        L = self._n_comp(n_components)
        y = self.transform(exog, L)
        ym = (self._mu - self._centre) @ self.scalings.to_numpy()[:, :L]
        lj = self._log_prior - 0.5 * nd.sq_dist(y.to_numpy(), ym)
        return self._output(self._post_of(lj), y.index, which)

    # --- report ----------------------------------------------------------------------------------
    def summary(self) -> Summary:
        """Priors, means, discriminant directions and functions, fit statistics."""
        div = "N - K" if self.cov_type == "unbiased" else "N (ML)"
        extra = [("Covariance", "pooled, " + div),
                 ("Shrinkage", self.shrinkage)]
        trace = self.svd**2 / float(np.sum(self.svd**2))
        funcs = pd.concat([self.intercept.to_frame().T.set_axis(["(intercept)"]), self.coef])
        tables = [("Prior probabilities of groups", self._prior_table()),
                  ("Group means", self.means),
                  ("Coefficients of linear discriminants (scalings)", self.scalings),
                  ("Proportion of trace", trace.to_frame("proportion").T),
                  ("Linear discriminant functions delta_k(x) (columns: classes)", funcs)]
        return Summary("Linear Discriminant Analysis Results", self._header(extra), tables,
                       self._notes())


class QDAResults(GenerativeResults):
    """A fitted quadratic discriminant analysis.

    Attributes
    ----------
    priors : pandas.Series
    means : pandas.DataFrame
        Class means, levels x features.
    covariance : dict of level -> pandas.DataFrame
        Class covariances (after any regularisation).
    log_det : pandas.Series
        ``ln |Sigma_k|`` by level (MASS ``ldet``).
    cov_type : {"mle", "unbiased"}
    reg_lambda, reg_gamma : float
    """

    def __init__(self, model, moments: nd.ClassMoments, prior: np.ndarray, covs: list,
                 sphs: list, cov: str, reg_lambda: float, reg_gamma: float,
                 cv: bool) -> None:
        k, dim = moments.means.shape
        super().__init__(model, moments.counts, prior,
                         _n_prior_params(model, k) + k * dim + k * dim * (dim + 1) // 2)
        names = model.exog_names
        self.means = pd.DataFrame(moments.means, index=self._lev, columns=names)
        self.covariance = {lev: pd.DataFrame(c, index=names, columns=names)
                           for lev, c in zip(self.levels, covs, strict=True)}
        self.cov_type = cov
        self.reg_lambda = reg_lambda
        self.reg_gamma = reg_gamma
        self._sphs = sphs
        self._mu = moments.means
        self.cv = bool(cv)
        self.log_det = pd.Series([s.logdet for s in sphs], index=self._lev, name="log_det")

    def _log_joint_of(self, X: np.ndarray) -> np.ndarray:
        return nd.qda_log_joint(X, self._mu, self._sphs, self._log_prior)

    def _loo_of(self, X: np.ndarray, codes: np.ndarray) -> np.ndarray:
        return nd.qda_loo_log_posterior(X, codes, self._mu, self.counts.to_numpy(float),
                                        self._sphs, self._log_prior,
                                        self.cov_type == "unbiased")

    @cached_property
    def scalings(self) -> dict:
        """Per class, the upper-triangular R_k^-1 with Sigma_k = R_k'R_k (positive diagonal),
        features x features: MASS ``qda()$scaling`` up to the signs of its columns."""
        names = self.model.exog_names
        return {lev: pd.DataFrame(s.matrix, index=names, columns=names)
                for lev, s in zip(self.levels, self._sphs, strict=True)}

    def summary(self) -> Summary:
        """Priors, means, log-determinants of the class covariances, fit statistics."""
        extra = [("Covariance", "per class, " + ("N_k - 1" if self.cov_type == "unbiased"
                                                 else "N_k (ML)")),
                 ("reg_lambda", self.reg_lambda), ("reg_gamma", self.reg_gamma)]
        tables = [("Prior probabilities of groups", self._prior_table()),
                  ("Group means", self.means),
                  ("Log-determinants of the class covariances", self.log_det.to_frame().T)]
        return Summary("Quadratic Discriminant Analysis Results", self._header(extra), tables,
                       self._notes())
