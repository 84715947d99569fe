"""Results of a Bernoulli naive Bayes fit: the generative-results interface plus theta."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

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
