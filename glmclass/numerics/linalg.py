"""Dense linear-algebra helpers for symmetric positive (semi-)definite systems.

Every solve goes through a Cholesky factor of the *equilibrated* matrix ``D^-1/2 A D^-1/2``
(unit diagonal), which keeps designs whose columns differ in scale by 1e16 accurate.
Nothing here forms an explicit inverse except :func:`spd_inverse`, which returns a covariance
matrix (the inverse is then the result the user asked for) through ``cho_solve``.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

#: Relative size of a Schur-complement pivot (on the unit-diagonal scale) below which a
#: column counts as a linear combination of the earlier ones. The Gram matrix squares the
#: condition number, so 1e-11 here matches a norm ratio of ~3e-6 in R's pivoted QR.
RANK_TOL = 1e-11


class NotPositiveDefinite(np.linalg.LinAlgError):
    """The matrix is not numerically positive definite."""


def _scale(a: np.ndarray) -> np.ndarray:
    d = np.sqrt(np.abs(np.diag(a)))
    return np.where(d > 0, d, 1.0)


def aliased_columns(gram: np.ndarray, tol: float = RANK_TOL) -> np.ndarray:
    """Boolean mask of columns that are linear combinations of the columns *before* them.

    An in-order (R-style "limited pivoting") Cholesky of the equilibrated Gram matrix: column j
    is aliased when its pivot, the squared distance of the column from the span of the kept
    earlier columns relative to its own squared norm, falls below ``tol``. As in R's ``glm``,
    the first of two collinear columns is kept and the later one is dropped.

    Parameters
    ----------
    gram : ndarray of shape (p, p)
        Symmetric positive semi-definite matrix X'WX.
    tol : float
        Relative pivot tolerance.

    Returns
    -------
    ndarray of bool, shape (p,)
    """
    p = gram.shape[0]
    d = _scale(gram)
    a = gram / np.outer(d, d)
    aliased = np.zeros(p, dtype=bool)
    zero_col = np.diag(gram) <= 0
    factor = np.zeros((p, p))  # rows: kept columns' Cholesky rows
    k = 0
    for j in range(p):
        if zero_col[j]:
            aliased[j] = True
            continue
        r = factor[:k, j] if k else np.empty(0)
        piv = a[j, j] - r @ r
        if piv <= tol * a[j, j]:
            aliased[j] = True
            continue
        # row j of the factor over the remaining columns
        factor[k, j] = np.sqrt(piv)
        rest = slice(j + 1, p)
        factor[k, rest] = (a[j, rest] - r @ factor[:k, rest]) / factor[k, j]
        k += 1
    return aliased


def cholesky(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equilibrated Cholesky factor: returns ``(c, d)`` with ``a = D C'C D``, ``D = diag(d)``.

    Raises
    ------
    NotPositiveDefinite
        When the equilibrated matrix is not numerically positive definite.
    """
    d = _scale(a)
    try:
        c = linalg.cholesky(a / np.outer(d, d), lower=False, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise NotPositiveDefinite(str(exc)) from None
    if not np.all(np.isfinite(c)):
        raise NotPositiveDefinite("non-finite Cholesky factor")
    return c, d


def spd_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve ``a x = b`` for symmetric positive definite ``a`` through Cholesky."""
    c, d = cholesky(a)
    with np.errstate(over="ignore", invalid="ignore"):
        bd = b / d if b.ndim == 1 else b / d[:, None]
        x = linalg.cho_solve((c, False), bd, check_finite=False)
        x = x / d if x.ndim == 1 else x / d[:, None]
    if not np.all(np.isfinite(x)):  # the factor exists but the solution leaves float range
        raise NotPositiveDefinite("numerically singular: the solution overflows")
    return x


def spd_inverse(a: np.ndarray) -> np.ndarray:
    """Inverse of a symmetric positive definite matrix (a covariance), made exactly symmetric."""
    inv = spd_solve(a, np.eye(a.shape[0]))
    return inv / 2.0 + inv.T / 2.0  # halves first: entries near 1e308 must not overflow


def spd_logdet(a: np.ndarray) -> float:
    """log|a| of a symmetric positive definite matrix from its Cholesky factor."""
    c, d = cholesky(a)
    return float(2.0 * np.sum(np.log(np.diag(c))) + 2.0 * np.sum(np.log(d)))
