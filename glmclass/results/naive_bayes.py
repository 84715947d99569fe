"""Results of naive Bayes fits: the generative-results interface plus the per-class feature
distributions (Bernoulli probabilities theta, or normal means and variances)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..lazy import cached_property
from ..numerics import naive_bayes as nnb
from ..summary import Summary
from .discriminant import GenerativeResults


class BernoulliNBResults(GenerativeResults):
    """A fitted Bernoulli naive Bayes classifier.

    Attributes
    ----------
    priors : pandas.Series
    feature_prob : pandas.DataFrame
        theta_kj = p(x_j = 1 | class k), levels x features.
    alpha : float
        The additive smoothing used.
    feature_measure : str
        ``"counting"``: the joint likelihood is a probability of binary features, not a density,
        so :func:`glmclass.compare` does not rank it against LDA/QDA's joint likelihoods.
    """

    feature_measure = "counting"

    def __init__(self, model, counts: np.ndarray, prior: np.ndarray, theta: np.ndarray,
                 alpha: float) -> None:
        k, dim = theta.shape
        super().__init__(model, counts, prior, (0 if model.prior is not None else k - 1)
                         + k * dim)
        self.feature_prob = pd.DataFrame(theta, index=self._lev, columns=model.exog_names)
        self.alpha = alpha
        self._theta = theta

    @cached_property
    def feature_log_prob(self) -> pd.DataFrame:
        """ln theta_kj, levels x features (-inf where theta is 0)."""
        with np.errstate(divide="ignore"):
            return pd.DataFrame(np.log(self._theta), index=self._lev,
                                columns=self.model.exog_names)

    def _log_joint_of(self, X: np.ndarray) -> np.ndarray:
        # ln pi_k + sum_j [x_j ln theta_kj + (1 - x_j) ln(1 - theta_kj)]; theta in {0, 1}
        # (alpha = 0) contributes 0 where the data agree with it and -inf where they do not.
        t = self._theta
        pos, neg = t > 0, t < 1
        with np.errstate(divide="ignore"):
            lt = np.where(pos, np.log(np.where(pos, t, 1.0)), 0.0)
            l1t = np.where(neg, np.log1p(-np.where(neg, t, 0.0)), 0.0)
        out = self._log_prior + X @ lt.T + (1.0 - X) @ l1t.T
        impossible = (X @ (~pos).T.astype(float) > 0) | ((1.0 - X) @ (~neg).T.astype(float) > 0)
        return np.where(impossible, -np.inf, out)

    def summary(self) -> Summary:
        """Priors, the feature probabilities theta_kj and fit statistics."""
        extra = [("Smoothing alpha", self.alpha)]
        tables = [("Prior probabilities of groups", self._prior_table()),
                  ("Feature probabilities p(x_j = 1 | class)", self.feature_prob)]
        notes = self._notes()
        if self.alpha > 0:
            notes.append(f"theta = (n_kj + {self.alpha:g}) / (N_k + {2 * self.alpha:g}): "
                         "llf, AIC and BIC are evaluated at these smoothed estimates.")
        return Summary("Bernoulli Naive Bayes Results", self._header(extra), tables, notes)


class GaussianNBResults(GenerativeResults):
    """A fitted Gaussian naive Bayes classifier.

    Attributes
    ----------
    priors : pandas.Series
    means : pandas.DataFrame
        mu_kj, levels x features.
    variances : pandas.DataFrame
        sigma2_kj, levels x features (including any ``var_smoothing``).
    cov_type : {"mle", "unbiased"}
    var_smoothing : float
        The ``var_smoothing`` of the fit.
    epsilon : float
        What it added to every variance: ``var_smoothing * max_j var(x_j)``.

    Notes
    -----
    df_model = (K - 1) + 2 K D: priors (when estimated), a mean and a variance per class and
    feature. ``llf`` is the joint log-likelihood sum_n ln[pi_k prod_j N(x_nj | mu_kj,
    sigma2_kj)], comparable with LDA's and QDA's on the same features.
    """

    def __init__(self, model, counts: np.ndarray, prior: np.ndarray, means: np.ndarray,
                 variances: np.ndarray, cov: str, var_smoothing: float, epsilon: float) -> None:
        k, dim = means.shape
        super().__init__(model, counts, prior,
                         (0 if model.prior is not None else k - 1) + 2 * k * dim)
        names = model.exog_names
        self.means = pd.DataFrame(means, index=self._lev, columns=names)
        self.variances = pd.DataFrame(variances, index=self._lev, columns=names)
        self.cov_type = cov
        self.var_smoothing = var_smoothing
        self.epsilon = epsilon
        self._mu, self._var = means, variances

    def _log_joint_of(self, X: np.ndarray) -> np.ndarray:
        return nnb.log_joint(X, self._mu, self._var, self._log_prior)

    def summary(self) -> Summary:
        """Priors, class means and standard deviations of every feature, fit statistics."""
        div = "N_k - 1" if self.cov_type == "unbiased" else "N_k (ML)"
        extra = [("Variances", f"per class, {div}"),
                 ("var_smoothing", self.var_smoothing)]
        tables = [("Prior probabilities of groups", self._prior_table()),
                  ("Group means", self.means),
                  ("Group standard deviations", np.sqrt(self.variances))]
        notes = self._notes()
        if self.epsilon:
            notes.append(f"var_smoothing added {self.epsilon:.4g} to every variance: llf, AIC "
                         "and BIC are evaluated at these smoothed estimates.")
        return Summary("Gaussian Naive Bayes Results", self._header(extra), tables, notes)
