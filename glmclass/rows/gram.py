"""X'WX and X'v accumulated over row blocks: the one O(N p^2) loop of the package.

No N x p weighted copy of X is ever formed: each block of rows (from a
:class:`~glmclass.rows.blocks.RowBlocks` source) is weighted (a copy of that block only, a few MB)
and multiplied into a p x p partial result with BLAS (``syrk`` through NumPy's ``A.T @ A``
detection when all weights are non-negative, ``gemm`` otherwise); the source sums the partials.

Every pass can work on a *shifted* design ``X - 1 s'`` (:func:`shift_from_gram`): the shift is
subtracted from each block before it is weighted, so a column such as ``x + 1e6`` enters the
Gram as ``x - mean(x)`` and the cancellation that a Gram of the raw column suffers (twelve
digits of ``sum (x + 1e6)^2`` are the mean's, not the spread's) never happens. With a column
of ones among the columns before the shifted ones, ``X - 1 s'`` spans the same space as X (see
:func:`shift_transform`), so fits and rank decisions on it are the fits on X, reparametrised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from .blocks import Block, OneBlock, RowBlocks, in_sample

#: ``terms(block, eta) -> (w, wz, objective)``: working weights (r,), weighted working response
#: (r,) and the block's share of the objective.
BlockTerms = Callable[[Block, np.ndarray], tuple[np.ndarray, np.ndarray, float]]


class Scratch(threading.local):
    """The weighted block's buffer, reused by the blocks of one pass; one per thread, since a
    source may call the block function from several threads (e.g. one per partition)."""

    def __init__(self, n_cols: int, dtype: type = np.float64) -> None:
        self.n_cols = n_cols
        self.dtype = dtype
        self.buf: np.ndarray | None = None

    def __reduce__(self):  # shipped to Dask workers inside a pass's block function: empty
        return (Scratch, (self.n_cols, self.dtype))

    def get(self, rows: int) -> np.ndarray:
        if self.buf is None or self.buf.shape[0] < rows:
            self.buf = np.empty((rows, self.n_cols), dtype=self.dtype)
        return self.buf[:rows]


def block_gram(xb: np.ndarray, wb: np.ndarray, out: np.ndarray) -> np.ndarray:
    """xb' diag(wb) xb in float64; ``out`` (xb's shape) takes the weighted block (``out`` may
    be ``xb`` itself when the caller owns it: it is then overwritten). A float32 ``out`` makes
    the product in single precision (twice as fast; ~1e-7 relative) with non-negative weights."""
    if not wb.size or np.minimum.reduce(wb) >= 0:  # (NaN fails, as a negative weight)
        xs = np.multiply(xb, np.sqrt(wb)[:, None], out=out)
        g = xs.T @ xs  # NumPy calls syrk for A.T @ A
        return g if g.dtype == np.float64 else g.astype(np.float64)
    if out is xb or out.dtype != np.float64:  # signed weights need the unweighted block too
        return (xb * wb[:, None]).T @ xb
    return np.multiply(xb, wb[:, None], out=out).T @ xb


def _shifted(xb: np.ndarray, shift: np.ndarray | None, scratch: Scratch) -> np.ndarray:
    """The block minus the shift, in the scratch buffer (the block itself without a shift)."""
    if shift is None:
        return xb
    return np.subtract(xb, shift, out=scratch.get(xb.shape[0]))


def shift_from_gram(gram: np.ndarray, intercept: int | None) -> np.ndarray | None:
    """The column means to subtract from the columns after the column of ones, from a Gram
    matrix X'WX of the unshifted design (no pass over the data).

    Without a constant column ``X - 1 s'`` would span another space, so nothing is shifted;
    columns whose squared mean is below 10 times their variance lose less than a digit to it
    and the passes stay as cheap (None). The row of the column of ones holds the weighted
    column sums and the diagonal the weighted sums of squares, so the weighted means and the
    rough test ``11 mean^2 > 10 mean(x^2)`` (no cancelling subtraction) come free with the
    first IRLS pass.

    Parameters
    ----------
    gram : ndarray of shape (p, p)
        X'WX with non-negative weights.
    intercept : int or None
        Index of the column of ones.

    Returns
    -------
    ndarray of shape (p,) or None
        The weighted means of the columns after ``intercept`` (0 for the others), None when no
        column needs a shift.
    """
    p = gram.shape[0]
    if intercept is None or intercept >= p - 1 or not gram[intercept, intercept] > 0:
        return None
    total = gram[intercept, intercept]
    with np.errstate(over="ignore", invalid="ignore"):
        mean = gram[intercept] / total
        needed = 11.0 * mean * mean > 10.0 * (gram.diagonal() / total)
    mean[: intercept + 1] = 0.0
    if not needed[intercept + 1 :].any() or not np.isfinite(mean).all():
        return None
    return mean


def shift_transform(shift: np.ndarray, intercept: int) -> np.ndarray:
    """``T`` with ``gamma = T beta``: coefficients on ``X - 1 s'`` from those on X.

    ``X beta = (X - 1 s') gamma`` for ``gamma = beta + e_i (s' beta)``, ``i`` the column of ones
    (``s_i = 0``), so ``T = I + e_i s'`` and ``T^-1 = I - e_i s'``. A Gram on the shifted
    design is ``T^-T G T^-1`` of the Gram on X.
    """
    t = np.eye(shift.shape[0])
    t[intercept] += shift
    return t


def weighted_gram(blocks: RowBlocks,
                  weights: Callable[[Block], np.ndarray] | None = None,
                  shift: np.ndarray | None = None) -> np.ndarray:
    """X' diag(w) X over row blocks.

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p).
    weights : callable, optional
        ``weights(block) -> w`` of shape (r,); default the source's ``block.weights``. May be
        negative (observed information of a non-canonical link).
    shift : ndarray of shape (p,), optional
        The Gram of ``X - 1 shift'`` instead (:func:`shift_from_gram`).

    Returns
    -------
    ndarray of shape (p, p)
    """
    p = blocks.n_cols
    scratch = Scratch(p)

    def gram(b: Block) -> np.ndarray:
        w = b.weights if weights is None else weights(b)
        xc = _shifted(b.X, shift, scratch)
        return block_gram(xc, w, xc if shift is not None else scratch.get(b.X.shape[0]))

    return blocks.reduce(gram, np.zeros((p, p)))


def column_abs_max(blocks: RowBlocks) -> np.ndarray:
    """max_i |X_ij| per column, over row blocks (no n x p temporary; 0 for no rows).

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p).

    Returns
    -------
    ndarray of shape (p,)
    """
    scratch = Scratch(blocks.n_cols)

    def block_max(b: Block) -> np.ndarray:
        return abs_max_rows(b.X, scratch.get(b.X.shape[0]))

    return blocks.reduce(block_max, np.zeros(blocks.n_cols), np.maximum)


def abs_max_rows(X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.abs(X).max(axis=0)`` of an (r, p) array, with ``out`` (X's shape) as scratch.

    The rows are folded in halves, each fold one elementwise maximum over r p / 2 contiguous
    values: NumPy's max(axis=0) goes row by row (5x slower at p = 10, 2x at p = 50)."""
    a = np.abs(X, out=out)
    while a.shape[0] > 64 and a.size > 4096:
        h = a.shape[0] // 2
        if a.shape[0] % 2:
            np.maximum(a[0], a[-1], out=a[0])
        np.maximum(a[:h], a[h : 2 * h], out=a[:h])
        a = a[:h]
    return a.max(axis=0)


def _block_eta(b: Block, xc: np.ndarray, coef: np.ndarray | None,
               eta: Callable[[Block], np.ndarray] | None) -> np.ndarray:
    """The linear predictor of the block: ``eta(b)``, else ``xc @ coef + offset``."""
    if eta is not None:
        return eta(b)
    e = xc @ coef
    e += b.offset
    return e


def _fused_block(b: Block, xc: np.ndarray, out: np.ndarray, eta, terms: BlockTerms,
                 coef: np.ndarray | None, extremes) -> tuple:
    """One block's share of :func:`fused_pass` on its (shifted) rows ``xc``; ``out`` (xc's
    shape) takes the weighted block."""
    wb, vb, ob = terms(b, _block_eta(b, xc, coef, eta))
    # a wild trial step can overflow in the Gram; its objective is then inf too and the caller
    # halves the step, discarding this Gram
    with np.errstate(over="ignore", invalid="ignore"):
        rhs = xc.T @ vb  # before the block is weighted (``out`` may be ``xc``)
        if extremes is None:
            return ob, block_gram(xc, wb, out), rhs
        low = np.asarray(extremes(b, wb), dtype=float)
        return ob, block_gram(xc, wb, out), rhs, low


def fused_pass(
    blocks: RowBlocks,
    eta: Callable[[Block], np.ndarray] | None,
    terms: BlockTerms,
    coef: np.ndarray | None = None,
    shift: np.ndarray | None = None,
    extremes: Callable[[Block, np.ndarray], np.ndarray] | None = None,
    gram_dtype: type = np.float64,
) -> tuple:
    """One streaming pass: per block the linear predictor, and at it the Gram and right-hand side.

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p), with the response, weights and offset ``terms`` uses.
    eta : callable or None
        ``eta(block) -> eta_block`` of shape (r,): e.g. ``block.X @ coef + block.offset``, or the
        link of starting means (IRLS starts from mu, not from coefficients). None: ``coef``
        gives it.
    terms : callable
        ``terms(block, eta_block) -> (w_block, v_block, objective_block)``: the working
        weights, the vector whose ``X'v`` is the right-hand side (the weighted working response
        ``w z``, or the score ``u`` of a Newton step) and the block's share of the objective
        (deviance).
    coef : ndarray of shape (p,), optional
        With ``eta=None``: ``eta_block = Xc_block @ coef + offset`` on the shifted block.
    shift : ndarray of shape (p,), optional
        Work on ``Xc = X - 1 shift'`` (:func:`shift_from_gram`): the Gram and right-hand side
        are those of Xc.
    extremes : callable, optional
        ``extremes(block, w_block) -> a`` (a small float array) whose elementwise minimum over
        the blocks is returned as a fourth result (e.g. ``[min r, -max r]`` of a per-row ratio).
    gram_dtype : {np.float64, np.float32}
        Precision of each block's weighted Gram (summed in float64): float32 for a Hessian
        that only sets a direction (non-negative weights; the right-hand side stays float64).

    Returns
    -------
    objective : float
        Sum of the blocks' objective shares.
    gram : ndarray of shape (p, p)
        Xc' W Xc.
    rhs : ndarray of shape (p,)
        Xc' v.
    low : ndarray
        With ``extremes`` only: the minimum of its values over the blocks.
    """
    single = gram_dtype != np.float64
    if isinstance(blocks, OneBlock):  # one block in memory: its share is the result
        b = blocks.block
        if shift is None or single:
            xc = b.X if shift is None else b.X - shift
            out = np.empty(b.X.shape, dtype=gram_dtype)
            return _fused_block(b, xc, out, eta, terms, coef, extremes)
        xc = np.subtract(b.X, shift, out=np.empty(b.X.shape))
        return _fused_block(b, xc, xc, eta, terms, coef, extremes)
    p = blocks.n_cols
    scratch = Scratch(p)
    spare = Scratch(p, gram_dtype)

    def one(b: Block) -> tuple:
        xc = _shifted(b.X, shift, scratch)
        out = xc if shift is not None and not single else spare.get(b.X.shape[0])
        return _fused_block(b, xc, out, eta, terms, coef, extremes)

    def combine(acc, part):
        if acc is None:  # the first partial as it is: no sum with zeros (one block: no sum)
            return part
        with np.errstate(over="ignore", invalid="ignore"):
            summed = acc[0] + part[0], acc[1] + part[1], acc[2] + part[2]
        return summed if extremes is None else summed + (np.minimum(acc[3], part[3]),)

    out = blocks.reduce(one, None, combine)
    if out is None:
        out = (0.0, np.zeros((p, p)), np.zeros(p))
        return out if extremes is None else out + (np.full(2, np.inf),)
    return out


def score_pass(
    blocks: RowBlocks,
    terms: BlockTerms,
    coef: np.ndarray | None,
    shift: np.ndarray | None = None,
    sample: float = 0.0,
    eta: Callable[[Block], np.ndarray] | None = None,
) -> tuple[float, np.ndarray, np.ndarray | None]:
    """One streaming pass for the objective and the right-hand side at ``coef``, with the Gram
    of a sample of the rows only (or none): a cheaper pass than :func:`fused_pass` for methods
    whose direction needs only an approximate Hessian (:mod:`glmclass.solvers.sampled`).

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p), with what ``terms`` uses.
    terms : callable
        As for :func:`fused_pass`.
    coef : ndarray of shape (p,) or None
        ``eta_block = Xc_block @ coef + offset`` on the (shifted) block (None: ``eta`` gives
        it).
    shift : ndarray of shape (p,), optional
        Work on ``Xc = X - 1 shift'``.
    eta : callable, optional
        ``eta(block) -> eta_block`` instead of ``coef`` (e.g. the link of starting means).
    sample : float, default 0
        Share of the blocks whose weighted Gram is accumulated (whole blocks, chosen by
        :func:`~glmclass.rows.blocks.in_sample`); 0 for none.

    Returns
    -------
    objective : float
    rhs : ndarray of shape (p,)
        Xc' v over all rows, in float64.
    gram : ndarray of shape (p, p) or None
        The sample's Xc' W Xc scaled by (rows in the source) / (rows in the sample): an
        estimate of the full Gram. None when ``sample`` is 0 (or the source has no rows).
    """
    p = blocks.n_cols
    scratch = Scratch(p)
    spare = Scratch(p)

    def one(b: Block):
        xc = _shifted(b.X, shift, scratch)
        wb, vb, ob = terms(b, _block_eta(b, xc, coef, eta))
        with np.errstate(over="ignore", invalid="ignore"):
            rhs = xc.T @ vb
            if sample <= 0.0:
                return ob, rhs
            if not in_sample(b.start, sample):
                return ob, rhs, 0.0, 0
            out = xc if shift is not None else spare.get(xc.shape[0])
            return ob, rhs, block_gram(xc, wb, out), xc.shape[0]

    def combine(acc, part):
        if acc is None:
            return part
        with np.errstate(over="ignore", invalid="ignore"):
            return tuple(a + b for a, b in zip(acc, part, strict=True))

    out = blocks.reduce(one, None, combine)
    if out is None:
        return 0.0, np.zeros(p), None
    if sample <= 0.0:
        return out[0], out[1], None
    if not out[3]:
        return out[0], out[1], np.zeros((p, p))
    return out[0], out[1], out[2] * (blocks.n_rows / out[3])
