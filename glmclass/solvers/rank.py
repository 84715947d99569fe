"""Which columns of a (weighted) design are aliased: R's rule, decided on the design itself.

R's ``glm``/``lm`` drop a column when its distance from the span of the kept earlier columns
is below ``tol = 1e-7`` times its norm, on a QR of the weighted design. A Gram matrix squares
that ratio and adds its own rounding (a norm ratio of ~1e-8 is lost in it), so the Gram alone
cannot decide at R's tolerance. The decision here is two-staged:

1. The Gram the solver has anyway (of the *shifted* design, :func:`~.gram.shift_from_gram`,
   so a column such as ``x + 1e6`` is judged by its spread, not its mean) gets one Cholesky:
   when every pivot is far above the rounding (:data:`~glmclass.numerics.linalg.GRAM_CLEAR`),
   no column is aliased and nothing more is done (the common case, for p^3/3 flops).
2. Otherwise the R factor of a QR of the weighted, shifted design is accumulated over row
   blocks (TSQR: each block's QR stacked on the running R; O(p^2) memory) and R's rule is
   applied to it (:func:`~glmclass.numerics.linalg.aliased_from_r`).

A shift only moves columns after a column of ones, so it never drops a column R keeps: the
span of the earlier columns is the same and the column's norm can only shrink, so its relative
distance from that span can only grow (a shifted ``x + 1e12``, which R's QR drops, is kept).
One more rule keeps the shift honest: a distance below ``ROUNDING_TOL = 1e-13`` of the raw
column's norm is the rounding of its values (``x + 1e6 + 1e-9 z`` next to ``x + 1e6`` and
``z``), and the column is aliased; R's tolerance is 1e-11 of that norm, so this too only ever
aliases what R aliases.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg as sla

from ..numerics.linalg import (
    GRAM_CLEAR,
    QR_TOL,
    ROUNDING_TOL,
    aliased_from_r,
    clear_cholesky,
    min_pivot,
)
from ..rows.blocks import Block, RowBlocks
from ..rows.gram import shift_transform, weighted_gram

#: How far above :data:`~glmclass.numerics.linalg.GRAM_CLEAR` a bound on the pivots of a Gram
#: must be for :func:`bound_decides` (it absorbs the rounding of the Gram the bound comes from).
RANK_MARGIN = 100.0


def qr_factor(blocks: RowBlocks, weights: Callable[[Block], np.ndarray] | None = None,
              shift: np.ndarray | None = None,
              extra_rows: np.ndarray | None = None) -> np.ndarray:
    """The R of a QR of ``diag(sqrt(w)) (X - 1 shift')``, over row blocks (TSQR).

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p).
    weights : callable, optional
        ``weights(block) -> w`` (non-negative) of shape (r,); default ``block.weights``.
    shift : ndarray of shape (p,), optional
    extra_rows : ndarray of shape (m, p), optional
        Rows appended to the weighted design (e.g. the square root of a prior precision).

    Returns
    -------
    ndarray of shape (min(n_rows + m, p), p)
        Upper triangular; ``R' R`` is the Gram of the (weighted, shifted) design.
    """
    p = blocks.n_cols

    def stack(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        both = np.vstack([a, b])
        if both.shape[0] <= p:
            return both
        return sla.qr(both, mode="r", overwrite_a=True, check_finite=False)[0][:p]

    def one(b: Block) -> np.ndarray:
        w = b.weights if weights is None else weights(b)
        xb = b.X if shift is None else b.X - shift
        return stack(np.empty((0, p)), xb * np.sqrt(np.maximum(w, 0.0))[:, None])

    def combine(acc: np.ndarray, part: np.ndarray) -> np.ndarray:
        return stack(acc, part)

    r = blocks.reduce(one, np.empty((0, p)), combine)
    if extra_rows is not None:
        r = stack(r, extra_rows)
    return r


def aliased_design_columns(
    blocks: RowBlocks,
    gram: np.ndarray | None = None,
    weights: Callable[[Block], np.ndarray] | None = None,
    shift: np.ndarray | None = None,
    extra_rows: np.ndarray | None = None,
    intercept: int | None = None,
    tol: float = QR_TOL,
) -> np.ndarray:
    """Boolean mask of the columns R's ``glm`` would alias (limited pivoting, ``tol``).

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p).
    gram : ndarray of shape (p, p), optional
        The Gram of the same weighted, shifted design (plus ``extra_rows' extra_rows``), when
        the caller has it; computed otherwise.
    weights : callable, optional
        ``weights(block) -> w`` of shape (r,), non-negative; default ``block.weights``.
    shift : ndarray of shape (p,), optional
        Shift of the columns after a column of ones (:func:`~.gram.shift_from_gram`).
    extra_rows : ndarray of shape (m, p), optional
        Rows appended to the weighted design (a prior's square-root precision).
    intercept : int, optional
        The column of ones the shift relies on (required with ``shift``).
    tol : float
        R's relative tolerance.

    Returns
    -------
    ndarray of bool, shape (p,)
        As R, the first of two collinear columns is kept and the later one is aliased.
    """
    if gram is None:
        gram = weighted_gram(blocks, weights, shift)
        if extra_rows is not None:
            gram = gram + extra_rows.T @ extra_rows
    if gram_decides(gram, shift, intercept):
        return np.zeros(blocks.n_cols, dtype=bool)
    return aliased_from_r(qr_factor(blocks, weights, shift, extra_rows), tol,
                          _raw_norms(gram, shift, intercept))


def _raw_norms(gram: np.ndarray, shift: np.ndarray | None,
               intercept: int | None) -> np.ndarray | None:
    """Norms of the unshifted columns: the unshifted Gram is T' G T (gamma = T beta)."""
    if shift is None:
        return None
    t = shift_transform(shift, intercept)
    return np.sqrt(np.maximum(np.einsum("ij,ik,kj->j", t, gram, t), 0.0))


def gram_decides(gram: np.ndarray, shift: np.ndarray | None = None,
                 intercept: int | None = None) -> bool:
    """True when the (shifted) Gram alone shows every column clearly kept: no QR needed.

    Parameters
    ----------
    gram : ndarray of shape (p, p)
    shift : ndarray of shape (p,), optional
    intercept : int, optional

    Returns
    -------
    bool
    """
    return deciding_factor(gram, shift, intercept) is not None


def deciding_factor(gram: np.ndarray, shift: np.ndarray | None = None,
                    intercept: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`gram_decides` with the Cholesky factor it made: ``(c, d)`` of ``gram`` (see
    :func:`~glmclass.numerics.linalg.clear_cholesky`) when the Gram decides, else None.
    """
    raw = _raw_norms(gram, shift, intercept)
    if raw is not None:  # the rounding rule can bind only where the shift dwarfs the spread
        centred = np.sqrt(np.maximum(np.diag(gram), 0.0))
        if np.any(ROUNDING_TOL * raw > 1e-4 * centred):
            return None
    return clear_cholesky(gram)


def bound_decides(gram: np.ndarray, low: float, high: float) -> bool:
    """Whether another Gram of the same rows, known only through ``gram``, is clearly full rank.

    With ``G = X' W X`` (``gram``) and ``G0 = X' W0 X`` whose weights satisfy
    ``low <= w0_i / w_i <= high`` on every row, ``low G <= G0 <= high G``: each Schur
    complement and each diagonal entry of ``G0`` lies within those factors of ``G``'s, so
    every pivot of the equilibrated ``G0`` is at least ``low / high`` times ``min_pivot(G)``.
    When that is :data:`RANK_MARGIN` times above
    :data:`~glmclass.numerics.linalg.GRAM_CLEAR`, :func:`gram_decides` on ``G0`` keeps every
    column without a QR (shifting columns after a column of ones only raises the pivots), so
    R's rule on ``G0`` aliases nothing: no pass over the rows is needed to form ``G0``.

    Parameters
    ----------
    gram : ndarray of shape (p, p)
    low, high : float
        Bounds of the per-row ratio of the two Grams' weights (NaN fails).

    Returns
    -------
    bool
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = min_pivot(gram) * (low / high)
    return bool(bound > RANK_MARGIN * GRAM_CLEAR)
