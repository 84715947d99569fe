"""Naive Bayes for binary features: per-class independent Bernoulli distributions.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.2.3.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *ESL*, §6.6.3.
"""

from __future__ import annotations

import numpy as np

from ..blocks import Block
from ..results.naive_bayes import BernoulliNBResults
from .data import ModelData
from .discriminant import GenerativeBase


def check_binary(X: np.ndarray, names: list[str]) -> None:
    """Raise naming the first column whose values are not all 0 or 1."""
    bad = ~((X == 0) | (X == 1))
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        v = X[bad[:, j], j][0]
        raise ValueError(f"feature {names[j]!r} has the value {v:g}: BernoulliNB needs binary "
                         "(0/1 or bool) features; binarise it (e.g. from_formula with "
                         "'I(x > c)' or C(x) indicators)")


class BernoulliNB(GenerativeBase):
    """Naive Bayes classifier with independent Bernoulli features within each class.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Class labels (labels are kept).
    exog : array-like of shape (n_obs, D)
        Binary features (0/1 or bool), without a constant column.
    prior : dict, pandas.Series or array-like of shape (K,), optional
        Class priors; default the class frequencies.
    missing : {"drop", "raise"}

    Notes
    -----
    p(x | k) = prod_j theta_kj^x_j (1 - theta_kj)^(1 - x_j), so that ln p(x, k) is linear in x
    and the posterior is a softmax of linear functions (PRML eq. 4.82).
    :meth:`fit` returns :class:`~glmclass.results.naive_bayes.BernoulliNBResults`.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.2.3.
    """

    def _setup(self, data: ModelData, prior=None) -> None:
        super()._setup(data, prior)
        if getattr(data, "partitioned", False):  # rows in Dask partitions: one pass
            from .dask_classes import check_binary_partitions

            check_binary_partitions(data, self.exog_names)
            return
        check_binary(self.exog, self.exog_names)

    def design(self, exog) -> np.ndarray:
        """Feature matrix of new data, checked to be binary (missing values allowed)."""
        x = super().design(exog)
        ok = ~np.isnan(x).any(axis=1)
        check_binary(x[ok], self.exog_names)
        return x

    def fit(self, alpha: float = 1.0) -> BernoulliNBResults:
        """Estimate the priors and the per-class feature probabilities.

        Parameters
        ----------
        alpha : float >= 0
            Additive (Laplace/Lidstone) smoothing: theta_kj = (n_kj + alpha) / (N_k + 2 alpha),
            n_kj the number of class-k rows with x_j = 1. ``alpha=0`` is the maximum-likelihood
            estimate (a feature never 1 in a class then makes that class impossible for a new
            row with x_j = 1); ``alpha=1`` (the default, as scikit-learn) is the posterior mean
            under a uniform Beta(1, 1) prior.

        Returns
        -------
        BernoulliNBResults
        """
        alpha = float(alpha)
        if not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
        k, d = len(self.levels), self.exog.shape[1]

        def one(b: Block) -> tuple[np.ndarray, np.ndarray]:
            """The block's class counts and per-class counts of ones (exact sums of 0/1)."""
            ones = np.zeros((k, d))
            np.add.at(ones, b.y, b.X)
            return np.bincount(b.y, minlength=k).astype(float), ones

        counts, ones = self._blocks().reduce(one, (np.zeros(k), np.zeros((k, d))))
        theta = (ones + alpha) / (counts[:, None] + 2.0 * alpha)
        return self._results(BernoulliNBResults)(self, counts, self._priors(counts), theta,
                                                 alpha)
