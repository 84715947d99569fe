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

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ..rows.blocks import ArrayBlocks
from ..rows.gram import weighted_gram
from .linalg import aliased_columns


@dataclass(frozen=True)
class LeastSquaresFit:
    """Result record of :func:`multi_lstsq`.

    Attributes
    ----------
    coef : ndarray of shape (p, m)
        Coefficients, one column per right-hand side; NaN rows for aliased columns.
    aliased : ndarray of bool, shape (p,)
    rank : int
    """

    coef: np.ndarray
    aliased: np.ndarray
    rank: int


def multi_lstsq(X: np.ndarray, T: np.ndarray) -> LeastSquaresFit:
    """Minimise ``||X W - T||_F`` column by column: ``W = X^+ T`` on the non-aliased columns.

    Parameters
    ----------
    X : ndarray of shape (n_obs, p)
    T : ndarray of shape (n_obs, m)
        Right-hand sides (e.g. 1-of-K targets).

    Returns
    -------
    LeastSquaresFit

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
    return LeastSquaresFit(coef, aliased, int(keep.sum()))
