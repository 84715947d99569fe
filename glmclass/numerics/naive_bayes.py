"""Numerics of Gaussian naive Bayes: per-class means and variances of every feature, and the
log joint density under independent normal features.

The rows are read once through a :class:`~glmclass.rows.blocks.RowBlocks` source; each block's
per-class counts, means and centred sums of squares are merged with the pairwise update of
Chan, Golub & LeVeque, so no raw second moment ``sum x^2`` (which loses digits to
cancellation) is formed. Only the diagonal is kept: K x D numbers, not K x D x D.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.2.3 (and §4.2.2 for
the Gaussian class densities).
Chan, T. F., Golub, G. H. and LeVeque, R. J. (1983). Algorithms for computing the sample
variance. *The American Statistician* 37, 242-247.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..links import LOG_2PI
from ..rows.blocks import Block, RowBlocks


@dataclass(frozen=True)
class DiagonalMoments:
    """Per-class counts, means and centred sums of squares of each feature.

    Attributes
    ----------
    counts : ndarray of shape (K,)
    means : ndarray of shape (K, D)
    sumsq : ndarray of shape (K, D)
        sum_{n in k} (x_nj - mu_kj)^2.
    """

    counts: np.ndarray
    means: np.ndarray
    sumsq: np.ndarray


def diagonal_moments(blocks: RowBlocks, n_classes: int) -> DiagonalMoments:
    """Counts, means and centred sums of squares of every class in one pass over the rows.

    Parameters
    ----------
    blocks : RowBlocks
        Rows of the features X (n_obs, D) with ``y`` the integer class codes 0..K-1.
    n_classes : int
        K.

    Returns
    -------
    DiagonalMoments
    """
    d = blocks.n_cols

    def one(b: Block) -> DiagonalMoments:
        nb = np.bincount(b.y, minlength=n_classes).astype(float)
        sums = np.zeros((n_classes, d))
        np.add.at(sums, b.y, b.X)
        mean = sums / np.maximum(nb, 1.0)[:, None]
        dev = b.X - mean[b.y]
        ssq = np.zeros((n_classes, d))
        np.add.at(ssq, b.y, dev * dev)
        return DiagonalMoments(nb, mean, ssq)

    zero = DiagonalMoments(np.zeros(n_classes), np.zeros((n_classes, d)),
                           np.zeros((n_classes, d)))
    return blocks.reduce(one, zero, _merge)


def _merge(a: DiagonalMoments, b: DiagonalMoments) -> DiagonalMoments:
    """Pooled moments of two disjoint sets of rows (Chan, Golub & LeVeque)."""
    tot = a.counts + b.counts
    safe = np.where(tot > 0, tot, 1.0)[:, None]
    delta = b.means - a.means
    means = a.means + delta * (b.counts[:, None] / safe)
    sumsq = a.sumsq + b.sumsq + delta**2 * (a.counts * b.counts)[:, None] / safe
    return DiagonalMoments(tot, means, sumsq)


def log_joint(X: np.ndarray, means: np.ndarray, variances: np.ndarray,
              log_prior: np.ndarray) -> np.ndarray:
    """ln p(x_n, k) = ln pi_k + sum_j ln N(x_nj | mu_kj, sigma2_kj).

    Parameters
    ----------
    X : ndarray of shape (n, D)
    means, variances : ndarray of shape (K, D)
    log_prior : ndarray of shape (K,)

    Returns
    -------
    ndarray of shape (n, K)
    """
    out = np.empty((X.shape[0], means.shape[0]))
    norm = -0.5 * (X.shape[1] * LOG_2PI + np.log(variances).sum(axis=1))
    for k in range(means.shape[0]):  # one n x D temporary at a time, not n x K x D
        z = (X - means[k]) / np.sqrt(variances[k])
        out[:, k] = log_prior[k] + norm[k] - 0.5 * np.einsum("ij,ij->i", z, z)
    return out
