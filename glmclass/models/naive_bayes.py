"""Naive Bayes: features independent within each class, Bernoulli (binary features) or
Gaussian (continuous features, a diagonal covariance per class).

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.2.3.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *ESL*, §6.6.3.
"""

from __future__ import annotations

import numpy as np

from ..data.model_data import ModelData
from ..numerics import naive_bayes as nnb
from ..results.naive_bayes import BernoulliNBResults, GaussianNBResults
from ..rows.blocks import Block
from .class_setup import check_binary
from .discriminant import GenerativeBase


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
        if not data.in_memory:  # rows not in memory: one pass
            from .class_parts import check_binary_partitions

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
        return BernoulliNBResults(self, counts, self._priors(counts), theta,
                                                 alpha)


class GaussianNB(GenerativeBase):
    """Naive Bayes classifier with independent normal features within each class.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Class labels (labels are kept).
    exog : array-like of shape (n_obs, D)
        Continuous features, without a constant column.
    prior : dict, pandas.Series or array-like of shape (K,), optional
        Class priors; default the class frequencies.
    missing : {"drop", "raise"}

    Notes
    -----
    p(x | k) = prod_j N(x_j | mu_kj, sigma2_kj): a QDA whose class covariances are diagonal
    (PRML §4.2.3 with the Gaussian class densities of §4.2.2), so the decision boundaries are
    quadratic and a class needs only two observations. :meth:`fit` returns
    :class:`~glmclass.results.naive_bayes.GaussianNBResults`.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.2.2-4.2.3.
    Hastie, T., Tibshirani, R. and Friedman, J. (2009). *ESL*, §6.6.3.
    """

    def fit(self, cov: str = "mle", var_smoothing: float = 0.0) -> GaussianNBResults:
        """Estimate the priors and the per-class means and variances of every feature.

        Parameters
        ----------
        cov : {"mle", "unbiased"}
            Variances divided by N_k (maximum likelihood, as scikit-learn) or by N_k - 1 (as
            R's ``e1071::naiveBayes``, which uses ``sd``).
        var_smoothing : float >= 0
            Adds ``var_smoothing * max_j var(x_j)`` (the largest variance of a feature over all
            rows, divided by N) to every variance, as scikit-learn's ``var_smoothing`` (whose
            default is 1e-9). The default 0 keeps the maximum-likelihood estimates, so that
            ``llf``, AIC and BIC are those of the fitted model; a feature that is constant
            within a class then raises an error naming it, and a small ``var_smoothing`` is
            the remedy.

        Returns
        -------
        GaussianNBResults
        """
        unbiased = self._check_cov(cov)
        if isinstance(var_smoothing, bool) or not isinstance(var_smoothing, (int, float,
                                                                             np.number)):
            raise ValueError(f"var_smoothing must be a number >= 0, got {var_smoothing!r}")
        smoothing = float(var_smoothing)
        if not np.isfinite(smoothing) or smoothing < 0:
            raise ValueError(f"var_smoothing must be a finite number >= 0, got {var_smoothing!r}")
        m = nnb.diagonal_moments(self._blocks(), len(self.levels))
        div = m.counts - 1.0 if unbiased else m.counts
        small = np.flatnonzero(div <= 0)
        if small.size:
            lev = self.levels[small[0]]
            raise ValueError(f"class {lev!r} has {int(m.counts[small[0]])} observation(s): its "
                             "variances need " + ("two (cov='unbiased')" if unbiased else
                                                  "one") + "; drop the class or merge it")
        variances = m.sumsq / div[:, None]
        eps = 0.0
        if smoothing:
            eps = smoothing * float(np.var(self.exog, axis=0).max())
            variances = variances + eps
        self._check_variances(variances, m.means, smoothing > 0)
        return GaussianNBResults(self, m.counts, self._priors(m.counts), m.means,
                                                variances, cov, smoothing, eps)

    def _check_variances(self, variances: np.ndarray, means: np.ndarray,
                         smoothed: bool) -> None:
        _check_underflow(variances, means, self.exog_names)
        if smoothed:  # the user chose the floor: only an exact 0 is degenerate
            bad = ~(variances > 0)
        else:  # constant within the class, up to rounding
            scale = np.maximum(np.abs(means).max(axis=0), np.finfo(float).tiny)
            bad = variances <= (1e-10 * scale) ** 2
        if bad.any():
            k, j = (int(v[0]) for v in np.nonzero(bad))
            raise ValueError(f"feature {self.exog_names[j]!r} is constant within class "
                             f"{self.levels[k]!r}: its variance there is 0 and the density "
                             "degenerate; drop the feature or pass var_smoothing= (e.g. 1e-9, "
                             "scikit-learn's default)")


def _check_underflow(variances: np.ndarray, means: np.ndarray, names: list) -> None:
    """A feature so small in scale that its variance is below the smallest normal double
    (``2.2e-308``) has lost digits (a subnormal variance) or all of them (0): its posteriors
    would not be invariant to rescaling it, so refuse it and say how to rescale."""
    tiny = np.finfo(float).tiny
    scale = np.abs(means).max(axis=0)
    low = ((variances > 0) & (variances < tiny)).any(axis=0) | ((scale > 0) & (scale < 1e-150))
    if low.any():
        j = int(np.flatnonzero(low)[0])
        size = float(np.sqrt(variances[:, j].max())) or float(scale[j])
        raise ValueError(f"feature {names[j]!r} is too small in scale (about {size:.1e}) for its "
                         "variance to be represented in double precision (the variance "
                         f"underflows below {tiny:.1e}); rescale it, e.g. multiply it by "
                         f"1e{-int(np.floor(np.log10(size))):d}")
