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

#: R's ``glm`` tolerance: a column whose distance from the span of the kept earlier columns is
#: below ``QR_TOL`` times its own norm is aliased. ``glm.fit`` calls its QR with
#: ``tol = min(1e-7, epsilon / 1000)``, 1e-11 at the default ``epsilon = 1e-8`` (``lm`` and
#: ``qr()`` use 1e-7).
QR_TOL = 1e-11

#: A column whose distance from the span of the earlier ones is below this fraction of its raw
#: norm is aliased whatever its spread: that distance is the rounding of the column's values
#: (~1e-16 of their magnitude), not information. Below R's ``QR_TOL``, so it never aliases a
#: column R keeps.
ROUNDING_TOL = 1e-13

#: Squared norm ratio above which a Gram pivot is trusted to keep a column without a QR. A
#: Gram pivot is computed with an absolute error of a few ``p * eps`` on the unit-diagonal
#: scale, i.e. a norm ratio known to ~1e-7 at best: R's tolerance cannot be decided on it, so
#: a pivot below this goes to :func:`aliased_from_r` on a QR factor of the design.
GRAM_CLEAR = 1e-8


_POTRF, _POTRS = linalg.get_lapack_funcs(("potrf", "potrs"), dtype=np.float64)


def _all(a: np.ndarray) -> bool:
    """``a.all()`` of a boolean array without the method's Python wrapper (~1 us of a small
    fit's few-microsecond solves)."""
    return bool(np.logical_and.reduce(a, axis=None))


class NotPositiveDefinite(np.linalg.LinAlgError):
    """The matrix is not numerically positive definite."""


def _scale(a: np.ndarray) -> np.ndarray:
    """sqrt |diag(a)|, with 1 for the entries that are 0 or NaN."""
    d = np.sqrt(np.abs(a.diagonal()))
    if np.minimum.reduce(d, initial=np.inf) > 0:  # the common case (NaN fails): no where()
        return d
    return np.where(d > 0, d, 1.0)


def _unit_diagonal(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(D^-1/2 gram D^-1/2, sqrt(diag(gram)))`` with ``D = diag(gram)``: None unless every
    diagonal entry is positive and every entry finite.

    (Method calls such as ``ndarray.all`` and ``d[:, None] * d``, the product ``np.outer``
    forms, rather than the ``np.all``/``np.outer`` functions: a small fit solves a few p x p
    systems per iteration, and the functions' wrappers cost more than their arithmetic.)
    """
    diag = gram.diagonal()
    if not _all(diag > 0) or not _all(np.isfinite(gram)):
        return None
    d = np.sqrt(diag)
    return gram / (d[:, None] * d), d


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


def clearly_full_rank(gram: np.ndarray, clear: float = GRAM_CLEAR) -> bool:
    """Whether every column is far (in the Gram's own precision) from the span of the others.

    True when the unit-diagonal (equilibrated) Gram has a Cholesky factor whose every pivot
    exceeds ``clear``: each column's distance from the span of the earlier ones is then more
    than ``sqrt(clear)`` times its norm, far above R's ``QR_TOL`` and above the Gram's
    rounding. False says only "decide on a QR" (:func:`aliased_from_r`).

    Parameters
    ----------
    gram : ndarray of shape (p, p)
        Symmetric positive semi-definite X'WX.
    clear : float
        Smallest pivot (squared norm ratio) trusted.

    Returns
    -------
    bool
    """
    return clear_cholesky(gram, clear) is not None


def clear_cholesky(gram: np.ndarray, clear: float = GRAM_CLEAR
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The factor :func:`clearly_full_rank` computes, when it says True: ``(c, d)`` as from
    :func:`cholesky` (upper triangle; the lower one is not cleared), for :func:`spd_solve`
    with ``factor=`` (a fit that decides the rank on a Gram then solves with it factors once);
    None when some pivot is not clear.

    Parameters
    ----------
    gram : ndarray of shape (p, p)
    clear : float

    Returns
    -------
    tuple of ndarray or None
    """
    if gram.shape[0] == 0:
        return np.empty((0, 0)), np.empty(0)
    scaled = _unit_diagonal(gram)
    if scaled is None:
        return None
    c, info = _POTRF(scaled[0], lower=0, clean=0, overwrite_a=1)
    if info != 0 or not _all(c.diagonal() ** 2 > clear):
        return None
    # every pivot clear: the upper triangle is finite (a NaN or inf above a pivot reaches it)
    return c, scaled[1]


def min_pivot(gram: np.ndarray) -> float:
    """The smallest pivot of the unit-diagonal (equilibrated) Gram's Cholesky factor: the
    smallest squared distance of a column from the span of the earlier ones, relative to its
    squared norm (0 when the Gram is not numerically positive definite; 1 for no columns).

    Parameters
    ----------
    gram : ndarray of shape (p, p)

    Returns
    -------
    float
    """
    if gram.shape[0] == 0:
        return 1.0
    scaled = _unit_diagonal(gram)
    if scaled is None:
        return 0.0
    c, info = _POTRF(scaled[0], lower=0, clean=0, overwrite_a=1)
    return float((c.diagonal() ** 2).min()) if info == 0 else 0.0


def aliased_from_r(r: np.ndarray, tol: float = QR_TOL, raw_norms: np.ndarray | None = None,
                   rounding: float = ROUNDING_TOL) -> np.ndarray:
    """R's rank rule (LINPACK ``dqrdc2``, "limited column pivoting") on a QR factor of X.

    Column j is aliased when its distance from the span of the kept earlier columns is below
    ``tol`` times its norm; as in R, an aliased column is moved out of the way, so the first of
    two collinear columns is kept and the later one dropped. Since ``X = Q R`` with orthonormal
    Q, the columns of R have the norms and the angles of the columns of X, so the rule runs on
    the small p x p factor (Householder reflections, as dqrdc2) instead of on X.

    Parameters
    ----------
    r : ndarray of shape (m, p)
        Any factor with ``r' r = X' X`` (e.g. the R of a QR of X, m >= p, or X itself).
    tol : float
        Relative distance below which a column is aliased (R's ``tol``).
    raw_norms : ndarray of shape (p,), optional
        When X is a shifted design (columns centred after a column of ones), the norms of the
        unshifted columns: a distance below ``rounding`` times it is the rounding of the raw
        values, and the column is aliased too.
    rounding : float

    Returns
    -------
    ndarray of bool, shape (p,)
    """
    a = np.array(r, dtype=float)  # columns are reflected in place
    m, p = a.shape
    norms = np.linalg.norm(a, axis=0)
    floor = tol * norms if raw_norms is None else np.maximum(tol * norms, rounding * raw_norms)
    aliased = np.zeros(p, dtype=bool)
    k = 0  # rows used by the kept columns' reflections
    for j in range(p):
        rest = np.linalg.norm(a[k:, j])
        if norms[j] == 0 or not np.isfinite(rest) or rest < floor[j] or k >= m:
            aliased[j] = True
            continue
        # Householder reflection taking a[k:, j] to (-+rest, 0, ...), applied to later columns
        v = a[k:, j].copy()
        v[0] += np.copysign(rest, v[0])
        vv = v @ v
        if vv > 0 and j + 1 < p:
            a[k:, j + 1 :] -= np.outer(v, (2.0 / vv) * (v @ a[k:, j + 1 :]))
        k += 1
    return aliased


def cholesky(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equilibrated Cholesky factor: returns ``(c, d)`` with ``a = D C'C D``, ``D = diag(d)``.

    Raises
    ------
    NotPositiveDefinite
        When the equilibrated matrix is not numerically positive definite.
    """
    a = np.asarray(a)
    d = _scale(a)
    # LAPACK's potrf directly (what scipy.linalg.cholesky calls): a small fit solves a few
    # p x p systems per iteration, and scipy's argument handling cost more than the solve
    c, info = _POTRF(a / (d[:, None] * d), lower=0, clean=1, overwrite_a=1)
    if info > 0:
        raise NotPositiveDefinite(f"{info}-th leading minor not positive definite")
    if info < 0 or not _all(np.isfinite(c)):
        raise NotPositiveDefinite("non-finite Cholesky factor")
    return c, d


def _unscaled_solve(c: np.ndarray, d: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x = b`` from the factor ``(c, d)`` of ``a = D C'C D`` (:func:`cholesky`)."""
    bd = b / d if b.ndim == 1 else b / d[:, None]
    x, _ = _POTRS(c, bd, lower=0)
    return x / d if x.ndim == 1 else x / d[:, None]


def spd_solve(a: np.ndarray, b: np.ndarray,
              factor: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Solve ``a x = b`` for symmetric positive definite ``a`` through Cholesky.

    ``factor``, when given, is ``a``'s factor from :func:`cholesky` or :func:`clear_cholesky`
    (the same numbers: it is not made again).
    """
    if a.shape[0] == 0:
        return np.array(b, dtype=float)
    c, d = cholesky(a) if factor is None else factor
    if np.minimum.reduce(d) >= 1.0:  # dividing by d cannot overflow: no errstate (~2.5 us)
        x = _unscaled_solve(c, d, b)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            x = _unscaled_solve(c, d, b)
    if not _all(np.isfinite(x)):  # the factor exists but the solution leaves float range
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
