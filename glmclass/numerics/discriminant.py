"""Numerics of the Gaussian generative classifiers (LDA, QDA): moments, covariances, sphering.

Everything here takes and returns ndarrays. The data are read once: per-class counts, means
and centred scatter matrices are computed per row block (:class:`glmclass.rows.blocks.RowBlocks`)
and merged with the pairwise update of Chan, Golub & LeVeque, so no raw second moments
``sum x x'`` (which lose digits to cancellation) are ever formed. Covariances are factored
(equilibrated Cholesky, :func:`glmclass.numerics.linalg.cholesky`) and data are *sphered*
through triangular solves, as MASS does through its SVD/QR; no covariance is ever inverted.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.6, §4.2.2.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*,
§4.3 (eqs. 4.10-4.14, §4.3.3).
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, §12.1 (MASS
``lda``/``qda``).
Ledoit, O. and Wolf, M. (2004). A well-conditioned estimator for large-dimensional covariance
matrices. *J. Multivariate Anal.* 88, 365-411.
Friedman, J. H. (1989). Regularized discriminant analysis. *JASA* 84, 165-175.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.special import logsumexp

from ..links import LOG_2PI
from ..rows.blocks import Block, RowBlocks
from .linalg import aliased_columns, cholesky

#: Pivot tolerance (on the correlation scale) below which a feature counts as a linear
#: combination of the earlier ones: MASS's ``tol = 1e-4`` on singular values, squared.
COLLINEAR_TOL = 1e-8

#: Relative size of a between-class singular value below which MASS drops a discriminant.
SVD_TOL = 1e-4


@dataclass(frozen=True)
class ClassMoments:
    """Per-class sufficient statistics of a Gaussian classifier.

    Attributes
    ----------
    counts : ndarray of shape (K,)
        Observations per class, N_k.
    means : ndarray of shape (K, D)
        Class means mu_k.
    scatter : ndarray of shape (K, D, D)
        Centred sums of squares and products, sum_{n in k} (x_n - mu_k)(x_n - mu_k)'.
    """

    counts: np.ndarray
    means: np.ndarray
    scatter: np.ndarray

    @property
    def within(self) -> np.ndarray:
        """Pooled within-class scatter W = sum_k scatter_k, shape (D, D)."""
        return self.scatter.sum(axis=0)


def class_moments(blocks: RowBlocks, n_classes: int) -> ClassMoments:
    """Counts, means and centred scatter of every class in one pass over the rows.

    Parameters
    ----------
    blocks : RowBlocks
        Rows of the features X (n_obs, D), with ``y`` the class of each row as an integer
        code 0..K-1.
    n_classes : int
        K.

    Returns
    -------
    ClassMoments

    Notes
    -----
    Block b contributes (n_b, m_b, M_b) per class (its count, mean and scatter about its own
    mean); it is merged into the running (n_a, m_a, M_a) by
    M = M_a + M_b + n_a n_b / (n_a + n_b) (m_b - m_a)(m_b - m_a)', which is exact and stable
    and merges any two partial results (e.g. of two partitions) alike.
    """
    d = blocks.n_cols

    def one(b: Block) -> ClassMoments:
        cb = b.y
        order = np.argsort(cb, kind="stable")
        xs = b.X[order]
        nb = np.bincount(cb, minlength=n_classes)
        ends = np.cumsum(nb)
        mean = np.zeros((n_classes, d))
        scat = np.zeros((n_classes, d, d))
        for k in np.flatnonzero(nb):
            g = xs[ends[k] - nb[k]: ends[k]]
            mean[k] = g.mean(axis=0)
            gc = g - mean[k]
            scat[k] = gc.T @ gc
        return ClassMoments(nb.astype(float), mean, scat)

    zero = ClassMoments(np.zeros(n_classes), np.zeros((n_classes, d)),
                        np.zeros((n_classes, d, d)))
    m = blocks.reduce(one, zero, _merge_moments)
    return ClassMoments(m.counts, m.means, (m.scatter + m.scatter.transpose(0, 2, 1)) / 2.0)


def _merge_moments(a: ClassMoments, b: ClassMoments) -> ClassMoments:
    """Pooled counts, means and scatters of two disjoint sets of rows (Chan, Golub & LeVeque)."""
    cnt, mean, scat = a.counts.copy(), a.means.copy(), a.scatter.copy()
    for k in np.flatnonzero(b.counts):
        na, nbk = a.counts[k], b.counts[k]
        delta = b.means[k] - a.means[k]
        tot = na + nbk
        scat[k] += b.scatter[k] + (na * nbk / tot) * np.outer(delta, delta)
        mean[k] += delta * (nbk / tot)
        cnt[k] = tot
    return ClassMoments(cnt, mean, scat)


def residual_fourth_moment(blocks: RowBlocks, means: np.ndarray) -> float:
    """sum_n ||x_n - mu_{k(n)}||^4 over row blocks (needed by Ledoit-Wolf only).

    Parameters
    ----------
    blocks : RowBlocks
        Rows of the features X (n_obs, D), with ``y`` the integer class codes.
    means : ndarray of shape (K, D)

    Returns
    -------
    float
    """

    def one(b: Block) -> float:
        r = b.X - means[b.y]
        return float(np.sum(np.einsum("ij,ij->i", r, r) ** 2))

    return blocks.reduce(one, 0.0)


def ledoit_wolf_intensity(within: np.ndarray, fourth: float, n_obs: int) -> float:
    """Ledoit-Wolf (2004) shrinkage intensity of the pooled within-class covariance.

    Parameters
    ----------
    within : ndarray of shape (D, D)
        Pooled within-class scatter W.
    fourth : float
        sum_n ||r_n||^4 of the within-class residuals r_n (:func:`residual_fourth_moment`).
    n_obs : int
        N.

    Returns
    -------
    float
        lambda in [0, 1] for (1 - lambda) S + lambda (tr S / D) I; equal to
        ``sklearn.covariance.ledoit_wolf_shrinkage(R, assume_centered=True)`` on the residuals.
    """
    d = within.shape[0]
    emp = within / n_obs
    mu = np.trace(emp) / d
    delta_ = float(np.sum(emp**2))
    beta = (fourth / n_obs - delta_) / (d * n_obs)
    delta = (delta_ - d * mu**2) / d
    beta = min(beta, delta)
    return 0.0 if beta <= 0 or delta <= 0 else float(beta / delta)


def shrink(cov: np.ndarray, intensity: float) -> np.ndarray:
    """(1 - intensity) cov + intensity (tr cov / D) I: shrinkage toward a scaled identity."""
    if intensity == 0:
        return cov
    d = cov.shape[0]
    return (1.0 - intensity) * cov + intensity * (np.trace(cov) / d) * np.eye(d)


def collinear(cov: np.ndarray, tol: float = COLLINEAR_TOL) -> np.ndarray:
    """Boolean mask of features that are (numerically) linear combinations of earlier ones,
    or constant; from an in-order Cholesky of the correlation-scaled covariance."""
    return aliased_columns(cov, tol)


@dataclass(frozen=True)
class Sphering:
    """A factored covariance S = D C'C D (C upper triangular, D = diag(d)).

    ``z = C^{-T} D^{-1} x`` has identity covariance ("sphered" coordinates).
    """

    c: np.ndarray
    d: np.ndarray

    @classmethod
    def of(cls, cov: np.ndarray) -> Sphering:
        """Factor ``cov``; raises NotPositiveDefinite when it is not positive definite."""
        c, d = cholesky(cov)
        return cls(c, d)

    @property
    def logdet(self) -> float:
        """ln |S|."""
        return float(2.0 * np.sum(np.log(np.diag(self.c))) + 2.0 * np.sum(np.log(self.d)))

    def apply(self, x: np.ndarray) -> np.ndarray:
        """Sphered rows: ``x`` of shape (n, D) -> (n, D), rows ``C^{-T} D^{-1} x_n``."""
        z = linalg.solve_triangular(self.c, (x / self.d).T, trans="T", lower=False,
                                    check_finite=False)
        return z.T

    @property
    def matrix(self) -> np.ndarray:
        """A with A' S A = I (``z = A' x``), shape (D, D): D^{-1} C^{-1}, a triangular solve."""
        cinv = linalg.solve_triangular(self.c, np.eye(self.c.shape[0]), lower=False,
                                       check_finite=False)
        return cinv / self.d[:, None]


def shared_solve(sph: Sphering, b: np.ndarray) -> np.ndarray:
    """Solve S x = b through the factor S = D C'C D (two triangular solves), b of shape (D, m)."""
    y = linalg.solve_triangular(sph.c, b / sph.d[:, None], trans="T", lower=False,
                                check_finite=False)
    x = linalg.solve_triangular(sph.c, y, lower=False, check_finite=False)
    return x / sph.d[:, None]


def sq_dist(z: np.ndarray, zm: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances of rows of ``z`` (n, D) to rows of ``zm`` (K, D): (n, K)."""
    out = np.empty((z.shape[0], zm.shape[0]))
    for k in range(zm.shape[0]):
        r = z - zm[k]
        out[:, k] = np.einsum("ij,ij->i", r, r)
    return out


def lda_log_joint(X: np.ndarray, means: np.ndarray, sph: Sphering,
                  log_prior: np.ndarray) -> np.ndarray:
    """ln[pi_k N(x_n | mu_k, S)] for a shared covariance, shape (n, K).

    Distances are taken in sphered coordinates after centring at the first class mean, so
    no ``x'S^{-1}x`` is ever expanded.
    """
    centre = means[0]
    z = sph.apply(X - centre)
    zm = sph.apply(means - centre)
    dim = X.shape[1]
    return log_prior - 0.5 * sq_dist(z, zm) - 0.5 * (sph.logdet + dim * LOG_2PI)


def qda_log_joint(X: np.ndarray, means: np.ndarray, sphs: list[Sphering],
                  log_prior: np.ndarray) -> np.ndarray:
    """ln[pi_k N(x_n | mu_k, S_k)] with one covariance per class, shape (n, K)."""
    dim = X.shape[1]
    out = np.empty((X.shape[0], len(sphs)))
    for k, sph in enumerate(sphs):
        z = sph.apply(X - means[k])
        out[:, k] = (log_prior[k] - 0.5 * np.einsum("ij,ij->i", z, z)
                     - 0.5 * (sph.logdet + dim * LOG_2PI))
    return out


def fisher_directions(means: np.ndarray, prior: np.ndarray, counts: np.ndarray,
                      sph: Sphering, mle: bool) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's discriminant directions normalised as MASS's ``lda()$scaling``.

    Parameters
    ----------
    means : ndarray of shape (K, D)
    prior : ndarray of shape (K,)
    counts : ndarray of shape (K,)
    sph : Sphering
        Of the pooled within-class covariance.
    mle : bool
        Between-class divisor K (True) or K - 1 (MASS ``method="moment"``); changes ``svd`` only.

    Returns
    -------
    scaling : ndarray of shape (D, r)
        Columns a_j with a_j' S a_j = 1, ordered by between-class separation (r = rank).
    svd : ndarray of shape (r,)
        Singular values: ratio of between- to within-class standard deviation on each direction.

    Notes
    -----
    In sphered coordinates the between-class scatter of the prior-weighted, centred means is
    diagonalised by an SVD; its right singular vectors maximise Fisher's criterion
    J(W) = Tr(s_W^{-1} s_B) (PRML §4.1.6, ESL §4.3.3).
    """
    k = means.shape[0]
    n = counts.sum()
    xbar = prior @ means
    fac = 1.0 / k if mle else 1.0 / (k - 1)
    a = sph.matrix
    xs = np.sqrt(n * prior * fac)[:, None] * ((means - xbar) @ a)
    _, sv, vt = np.linalg.svd(xs, full_matrices=False)
    rank = int(np.sum(sv > SVD_TOL * sv[0])) if sv.size and sv[0] > 0 else 0
    return a @ vt[:rank].T, sv[:rank]


def lda_loo_log_posterior(X: np.ndarray, codes: np.ndarray, means: np.ndarray,
                          counts: np.ndarray, sph: Sphering, log_prior: np.ndarray,
                          unbiased: bool, n_obs: int | None = None) -> np.ndarray:
    """Leave-one-out log-posteriors of LDA by rank-one downdates (no refits), shape (n, K).

    Each row's value needs only the fit's moments, so the rows may come block by block:
    ``n_obs`` is then the number of rows of the fit (default: the rows of ``X``).

    Notes
    -----
    Leaving out x_n of class g moves mu_g to mu_g - r/(N_g - 1), r = x_n - mu_g, and the pooled
    scatter to W - c r r', c = N_g/(N_g - 1). With the divisor d = N - K (unbiased) or N and
    d' = d - 1, in sphered coordinates (S = I, u = sphered r, v = sphered x_n - mu_k) the
    Sherman-Morrison formula gives the new squared distances
    d'/d [|v|^2 + e (u'v)^2 / (1 - e|u|^2)] for k != g and d'/d c^2 |u|^2 / (1 - e|u|^2) for
    k = g, with e = c / d. The log-determinant change is common to all classes; the priors are
    kept, as MASS ``lda(CV=TRUE)``.
    """
    n_rows = X.shape[0]
    n_obs = n_rows if n_obs is None else n_obs
    d = n_obs - (means.shape[0] if unbiased else 0)
    centre = means[0]
    z = sph.apply(X - centre)
    zm = sph.apply(means - centre)
    dist = sq_dist(z, zm)
    u = z - zm[codes]
    nc = counts[codes]
    c = nc / (nc - 1.0)
    e = c / d
    own = np.einsum("ij,ij->i", u, u)
    denom = np.maximum(1.0 - e * own, 1e-10)
    uv = np.empty_like(dist)
    for k in range(zm.shape[0]):
        uv[:, k] = np.einsum("ij,ij->i", u, z - zm[k])
    new = (d - 1.0) / d * (dist + e[:, None] * uv**2 / denom[:, None])
    rows = np.arange(n_rows)
    new[rows, codes] = (d - 1.0) / d * c**2 * own / denom
    return _normalise(log_prior - 0.5 * new)


def qda_loo_log_posterior(X: np.ndarray, codes: np.ndarray, means: np.ndarray,
                          counts: np.ndarray, sphs: list[Sphering], log_prior: np.ndarray,
                          unbiased: bool) -> np.ndarray:
    """Leave-one-out log-posteriors of QDA by rank-one downdates (no refits), shape (n, K).

    Notes
    -----
    Only the left-out row's own class changes. With d = N_g - 1 (unbiased) or N_g, d' = d - 1,
    c = N_g/(N_g - 1) and q the row's squared sphered distance to mu_g, the downdated
    covariance has ln|S'| = ln|S| + D ln(d/d') + ln(1 - c q / d) and the row's distance to the
    downdated mean is c^2 (d'/d) q / (1 - c q / d), as MASS ``qda(CV=TRUE)``.
    """
    n_obs, dim = X.shape
    lj = np.empty((n_obs, len(sphs)))
    dist = np.empty_like(lj)
    for k, sph in enumerate(sphs):
        z = sph.apply(X - means[k])
        dist[:, k] = np.einsum("ij,ij->i", z, z)
        lj[:, k] = -0.5 * sph.logdet
    rows = np.arange(n_obs)
    nc = counts[codes]
    d = nc - 1.0 if unbiased else nc
    c = nc / (nc - 1.0)
    q = dist[rows, codes]
    fac = np.maximum(1.0 - c * q / d, 1e-10)
    lj[rows, codes] -= 0.5 * (np.log(fac) + dim * np.log(d / (d - 1.0)))
    dist[rows, codes] = q * c**2 * (d - 1.0) / d / fac
    return _normalise(log_prior + lj - 0.5 * dist)


def _normalise(log_joint: np.ndarray) -> np.ndarray:
    # a row impossible under every class (all -inf) has no posterior: NaN, not a warning
    with np.errstate(invalid="ignore"):
        return log_joint - logsumexp(log_joint, axis=1, keepdims=True)


def log_posterior(log_joint: np.ndarray) -> np.ndarray:
    """ln p(k | x_n) from ln p(x_n, k) through ``logsumexp``, shape (n, K)."""
    return _normalise(log_joint)
