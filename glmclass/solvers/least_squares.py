"""Least squares for several right-hand sides by QR, with R's handling of aliased columns.

Used by indicator-matrix regression (:class:`~glmclass.LeastSquaresClassifier`): the
coefficients are ``W = X^+ T`` for the 1-of-K target matrix ``T``, computed from a QR
factorisation of the non-aliased columns of X, never from the inverse of X'X (which squares the
condition number).

References
----------
Golub, G. H. and Van Loan, C. F. (2013). *Matrix Computations*, 4th ed., §5.3.
R Core Team, ``lm.fit`` (stats package): aliased columns get NA coefficients.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ..numerics.linalg import aliased_columns
from ..rows.blocks import ArrayBlocks, Block, RowBlocks
from ..rows.gram import weighted_gram
from .fit import Fit


def multi_lstsq(X: np.ndarray, T: np.ndarray) -> Fit:
    """Minimise ``||X W - T||_F`` column by column: ``W = X^+ T`` on the non-aliased columns.

    Parameters
    ----------
    X : ndarray of shape (n_obs, p)
    T : ndarray of shape (n_obs, m)
        Right-hand sides (e.g. 1-of-K targets).

    Returns
    -------
    Fit
        ``coef`` of shape (p, m), one column per right-hand side (NaN rows for aliased
        columns); ``aliased``; ``rank``, the number of columns kept.

    Notes
    -----
    Aliased columns (linear combinations of earlier ones) are found as R's ``lm`` does, by an
    in-order pivoted Cholesky of the equilibrated Gram matrix (one blocked pass over X); the
    kept columns are then factored ``X_k = Q R`` (economic QR) and ``W = R^{-1} Q' T`` by a
    triangular solve.
    """
    aliased = aliased_columns(weighted_gram(ArrayBlocks(X)))
    keep = ~aliased
    coef = np.full((X.shape[1], T.shape[1]), np.nan)
    if keep.any():
        q, r = linalg.qr(X[:, keep], mode="economic", check_finite=False)
        coef[keep] = linalg.solve_triangular(r, q.T @ T, lower=False, check_finite=False)
    return Fit(coef=coef, aliased=aliased, rank=int(keep.sum()))


def _stacked_qr(a: tuple[np.ndarray, np.ndarray],
                b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Merge two partial QR factorisations ``(R, Q'T)`` of disjoint row sets into that of
    their union: the QR of ``[R_a; R_b]`` (TSQR's combine; the arguments are not modified)."""
    if a[0].shape[0] == 0:
        return b
    if b[0].shape[0] == 0:
        return a
    q, r = linalg.qr(np.vstack([a[0], b[0]]), mode="economic", check_finite=False)
    return r, q.T @ np.vstack([a[1], b[1]])


def one_hot(codes: np.ndarray, k: int) -> np.ndarray:
    """The 1-of-K indicator rows of integer class codes, shape (n, k)."""
    T = np.zeros((codes.shape[0], k))
    T[np.arange(codes.shape[0]), codes] = 1.0
    return T


def indicator_lstsq(rows: RowBlocks, k: int, coding: np.ndarray | None = None) -> Fit:
    """:func:`multi_lstsq` of the 1-of-K targets of the class codes ``rows`` carries as its
    response, in passes over the row blocks (in memory or on Dask alike).

    Parameters
    ----------
    rows : RowBlocks
        Design rows with integer class codes 0..k-1 as the response.
    k : int
        Number of classes.
    coding : ndarray of shape (k, m), optional
        The target row of each class (default the identity: 1-of-K targets); a row of class
        c gets ``coding[c]``.

    Returns
    -------
    Fit
        As :func:`multi_lstsq`'s.

    Notes
    -----
    Aliased columns come from the pivoted Cholesky of the Gram matrix (one pass); the kept
    columns are then factored by TSQR (Demmel et al. 2012): each block's economic QR
    ``X_b = Q_b R_b`` gives ``(R_b, Q_b' T_b)``, and two such pairs merge by the QR of the
    stacked R's, so the reduction needs p x p pieces only and keeps QR's accuracy (the normal
    equations would square the condition number).

    References
    ----------
    Demmel, J., Grigori, L., Hoemmen, M. and Langou, J. (2012). Communication-optimal parallel
    and sequential QR and LU factorizations. *SIAM J. Sci. Comput.* 34, A206-A239.
    """
    aliased = aliased_columns(weighted_gram(rows))
    keep = ~aliased
    p = int(keep.sum())
    coding = np.eye(k) if coding is None else np.asarray(coding, dtype=float)
    m = coding.shape[1]
    coef = np.full((keep.size, m), np.nan)
    if p:
        kept = rows.take_columns(keep)

        def one(b: Block) -> tuple[np.ndarray, np.ndarray]:
            q, r = linalg.qr(b.X, mode="economic", check_finite=False)
            return r, q.T @ coding[b.y]

        r, qt = kept.reduce(one, (np.zeros((0, p)), np.zeros((0, m))), _stacked_qr)
        coef[keep] = linalg.solve_triangular(r, qt, lower=False, check_finite=False)
    return Fit(coef=coef, aliased=aliased, rank=p)
