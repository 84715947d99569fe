"""Gaussian generative classifiers: linear (LDA) and quadratic (QDA) discriminant analysis.

The model validates the data (through :mod:`glmclass.data.model_data`) and the class labels
(through :mod:`glmclass.data.response`), calls the numerics of
:mod:`glmclass.numerics.discriminant` on ndarrays and returns a results object.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.2.1-4.2.2.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*, §4.3.
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, §12.1.
"""

from __future__ import annotations

import numpy as np

from ..data.model_data import ModelData, check_finite
from ..data.response import multiclass_response
from ..numerics import discriminant as nd
from ..numerics.linalg import NotPositiveDefinite
from ..results.discriminant import LDAResults, QDAResults
from ..rows.blocks import ArrayBlocks, RowBlocks
from .base import Model, check_option
from .class_setup import check_has_features, parse_prior


class GenerativeBase(Model):
    """Data handling shared by the generative classifiers (LDA, QDA, BernoulliNB).

    A formula's intercept column is removed from the features (a constant is no feature of a
    generative model), so ``C(g)`` is still coded with K - 1 indicators.

    Attributes
    ----------
    data : ModelData
    endog : ndarray of int, shape (n_obs,)
        Class codes 0..K-1.
    levels : list
        Class labels, in order.
    exog : ndarray of shape (n_obs, D)
        Features (no intercept column).
    exog_names : list of str
    prior : ndarray of shape (K,) or None
        Given priors; None means the class frequencies are estimated.
    """

    _features_only = True

    def __init__(self, endog, exog, prior=None, missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, prior=prior)

    def _setup(self, data: ModelData, prior=None) -> None:
        if not data.in_memory:  # rows not in memory (e.g. Dask partitions)
            from .class_parts import multiclass_rows

            check_has_features(type(self).__name__, data.exog.shape[1])
            rows = multiclass_rows(data)
            self.endog = rows.codes
            self.levels = rows.levels
            self.prior = parse_prior(prior, rows.levels)
            self._rows_source = rows.source
            return
        check_finite(data)
        check_has_features(type(self).__name__, data.exog.shape[1])
        codes, levels = multiclass_response(data.endog, data.endog_name)
        self.endog = codes
        self.levels = levels
        self.prior = parse_prior(prior, levels)

    @property
    def nobs(self) -> int:
        return int(self.exog.shape[0])

    def _blocks(self) -> RowBlocks:
        """The features as a block source, with the class codes as the response."""
        if not self.data.in_memory:
            return self._rows_source
        return ArrayBlocks(self.exog, self.endog)

    def _moments(self) -> nd.ClassMoments:
        return nd.class_moments(self._blocks(), len(self.levels))

    def _priors(self, counts: np.ndarray) -> np.ndarray:
        return self.prior if self.prior is not None else counts / counts.sum()

    def _check_cov(self, cov: str) -> bool:
        return check_option("cov", cov, ("mle", "unbiased")) == "unbiased"

    def _singular(self, cov: np.ndarray, means: np.ndarray, whose: str, remedy: str) -> None:
        """Raise naming the constant or collinear features of a singular covariance."""
        names = self.exog_names
        scale = np.maximum(np.abs(means).max(axis=0), np.finfo(float).tiny)
        const = np.diag(cov) <= (1e-10 * scale) ** 2
        if const.any():
            cols = ", ".join(repr(names[j]) for j in np.flatnonzero(const))
            raise ValueError(f"{cols} {'is' if const.sum() == 1 else 'are'} constant within "
                             f"{whose}: its covariance is singular; drop "
                             f"{'it' if const.sum() == 1 else 'them'}{remedy}")
        bad = nd.collinear(cov)
        if bad.any():
            cols = ", ".join(repr(names[j]) for j in np.flatnonzero(bad))
            what = "is a linear combination" if bad.sum() == 1 else "are linear combinations"
            raise ValueError(f"the covariance of {whose} is singular: {cols} {what}"
                             f" of earlier features (collinear within classes); drop "
                             f"{'it' if bad.sum() == 1 else 'them'}{remedy}")

    def _sphere(self, cov: np.ndarray, means: np.ndarray, whose: str,
                remedy: str) -> nd.Sphering:
        self._singular(cov, means, whose, remedy)
        try:
            return nd.Sphering.of(cov)
        except NotPositiveDefinite:
            raise ValueError(f"the covariance of {whose} is not positive definite; drop "
                             f"collinear features{remedy}") from None

    def __repr__(self) -> str:
        return (f"<{type(self).__name__}: {len(self.levels)} classes, "
                f"{self.exog.shape[1]} features, nobs={self.nobs}>")


class LDA(GenerativeBase):
    """Linear discriminant analysis: Gaussian classes with one shared covariance matrix.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Class labels (strings, integers, bools or a pandas Categorical; labels are kept).
    exog : array-like of shape (n_obs, D)
        Features, without a constant column.
    prior : dict, pandas.Series or array-like of shape (K,), optional
        Class priors by level (or in level order); default the class frequencies.
    missing : {"drop", "raise"}

    Notes
    -----
    p(x | k) = N(x | mu_k, Sigma), p(k) = pi_k, so that the log-posterior odds are linear in x
    (PRML §4.2.1, ESL eq. 4.9). :meth:`fit` returns :class:`~glmclass.results.discriminant.
    LDAResults`; the model itself is never modified.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.4-4.1.6, §4.2.2.
    Hastie, T., Tibshirani, R. and Friedman, J. (2009). *ESL*, §4.3, §4.3.3.
    """

    def fit(self, cov: str = "mle", shrinkage: float | str | None = None,
            cv: bool = False) -> LDAResults:
        """Estimate priors, class means and the pooled covariance.

        Parameters
        ----------
        cov : {"mle", "unbiased"}
            Pooled within-class scatter divided by N (maximum likelihood, PRML eq. 4.78) or by
            N - K (MASS ``method="moment"``).
        shrinkage : float in [0, 1] or "ledoit-wolf", optional
            Shrink the pooled covariance toward a scaled identity,
            (1 - s) Sigma + s (tr Sigma / D) I; ``"ledoit-wolf"`` chooses s by Ledoit & Wolf
            (2004) from the within-class residuals. The target is scale dependent: put the
            features on comparable scales first.
        cv : bool
            Also compute leave-one-out posteriors and error rate (as MASS ``CV=TRUE``), by
            rank-one downdates rather than N refits (a closed form per row, so on Dask data
            a lazy map). Not available with ``shrinkage``.

        Returns
        -------
        LDAResults
        """
        unbiased = self._check_cov(cov)
        intensity = self._intensity(shrinkage)
        if cv and intensity:
            raise ValueError("cv=True gives leave-one-out posteriors without shrinkage only; "
                             "drop shrinkage or cv")
        m = self._moments()
        n, k = self.nobs, len(self.levels)
        if unbiased and n <= k:
            raise ValueError(f"cov='unbiased' divides by N - K = {n - k}; use cov='mle'")
        if cv:
            self._check_cv(m.counts)
        if shrinkage == "ledoit-wolf":
            fourth = nd.residual_fourth_moment(self._blocks(), m.means)
            intensity = nd.ledoit_wolf_intensity(m.within, fourth, n)
        sigma = nd.shrink(m.within / (n - k if unbiased else n), intensity)
        sph = self._sphere(sigma, m.means, "the pooled within-class covariance",
                           "" if intensity else ", or pass shrinkage= (e.g. 'ledoit-wolf')")
        prior = self._priors(m.counts)
        return LDAResults(self, m, prior, sigma, sph, cov, intensity, cv)

    @staticmethod
    def _intensity(shrinkage) -> float:
        if shrinkage is None or shrinkage == "ledoit-wolf":
            return 0.0
        if isinstance(shrinkage, str):
            raise ValueError(f"shrinkage must be a number in [0, 1] or 'ledoit-wolf', got "
                             f"{shrinkage!r}")
        s = float(shrinkage)
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"shrinkage must be in [0, 1], got {shrinkage!r}")
        return s

    def _check_cv(self, counts: np.ndarray) -> None:
        small = np.flatnonzero(counts < 2)
        if small.size:
            raise ValueError(f"class {self.levels[small[0]]!r} has a single observation: "
                             "leaving it out leaves the class empty; cv=True needs two per class")


class QDA(GenerativeBase):
    """Quadratic discriminant analysis: Gaussian classes, each with its own covariance.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Class labels (labels are kept).
    exog : array-like of shape (n_obs, D)
        Features, without a constant column.
    prior : dict, pandas.Series or array-like of shape (K,), optional
        Class priors; default the class frequencies.
    missing : {"drop", "raise"}

    Notes
    -----
    p(x | k) = N(x | mu_k, Sigma_k): the decision boundaries are quadratic (PRML §4.2.2,
    ESL eq. 4.12). Each class needs more observations than features, N_k > D, unless the
    covariances are regularised (``reg_lambda``, ``reg_gamma``).

    References
    ----------
    Hastie, T., Tibshirani, R. and Friedman, J. (2009). *ESL*, §4.3, §4.3.1 (RDA).
    Friedman, J. H. (1989). Regularized discriminant analysis. *JASA* 84, 165-175.
    """

    def fit(self, cov: str = "mle", reg_lambda: float = 0.0, reg_gamma: float = 0.0,
            cv: bool = False) -> QDAResults:
        """Estimate priors, class means and one covariance per class.

        Parameters
        ----------
        cov : {"mle", "unbiased"}
            Class scatter divided by N_k or by N_k - 1 (MASS ``method="moment"``); the pooled
            covariance used by ``reg_lambda`` is divided by N or N - K accordingly.
        reg_lambda : float in [0, 1]
            Friedman's RDA: Sigma_k(lambda) = (1 - lambda) Sigma_k + lambda Sigma_pooled
            (ESL eq. 4.13 with alpha = 1 - lambda); 1 gives LDA's covariance.
        reg_gamma : float in [0, 1]
            Then (1 - gamma) Sigma_k(lambda) + gamma (tr Sigma_k(lambda) / D) I (ESL eq. 4.14).
        cv : bool
            Also compute leave-one-out posteriors and error rate (MASS ``CV=TRUE``) by
            rank-one downdates. Not available with regularisation.

        Returns
        -------
        QDAResults
        """
        unbiased = self._check_cov(cov)
        for name, v in (("reg_lambda", reg_lambda), ("reg_gamma", reg_gamma)):
            if not 0.0 <= float(v) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
        lam, gam = float(reg_lambda), float(reg_gamma)
        if cv and (lam or gam):
            raise ValueError("cv=True gives leave-one-out posteriors without regularisation "
                             "only; drop reg_lambda/reg_gamma or cv")
        m = self._moments()
        n, k, dim = self.nobs, len(self.levels), self.exog.shape[1]
        self._check_sizes(m.counts, dim, unbiased, lam, cv)
        pooled = m.within / (n - k if unbiased else n) if lam else None
        covs, sphs = [], []
        remedy = "" if lam else ", or pass reg_lambda= (e.g. 0.1)"
        for j, lev in enumerate(self.levels):
            div = m.counts[j] - 1.0 if unbiased else m.counts[j]
            s = m.scatter[j] / div if div > 0 else np.zeros((dim, dim))
            if lam:
                s = (1.0 - lam) * s + lam * pooled
            s = nd.shrink(s, gam)
            covs.append(s)
            sphs.append(self._sphere(s, m.means[j:j + 1], f"class {lev!r}", remedy))
        prior = self._priors(m.counts)
        return QDAResults(self, m, prior, covs, sphs, cov, lam, gam, cv)

    def _check_sizes(self, counts: np.ndarray, dim: int, unbiased: bool, lam: float,
                     cv: bool) -> None:
        need = dim + 1 if not lam else (2 if unbiased else 1)
        if cv:  # the downdated covariance needs a positive divisor
            need = max(need, 3 if unbiased else 2)
        small = np.flatnonzero(counts < need)
        if small.size:
            j = small[0]
            why = (f"QDA estimates one {dim}x{dim} covariance per class and needs more "
                   f"observations than features (N_k > D = {dim})" if not lam else
                   "the class covariance needs at least two observations")
            if cv:
                why += " (and cv=True needs one more to leave out)"
            raise ValueError(f"class {self.levels[j]!r} has {int(counts[j])} observations: "
                             f"{why}; use LDA, fewer features, or reg_lambda > 0")
