"""X'WX and X'v accumulated over row blocks: the one O(N p^2) loop of the package.

No N x p weighted copy of X is ever formed: each block of rows (from a
:class:`~glmclass.blocks.RowBlocks` source) is weighted (a copy of that block only, a few MB)
and multiplied into a p x p partial result with BLAS (``syrk`` through NumPy's ``A.T @ A``
detection when all weights are non-negative, ``gemm`` otherwise); the source sums the partials.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from ..blocks import Block, RowBlocks

#: ``terms(block, eta) -> (w, wz, objective)``: working weights (r,), weighted working response
#: (r,) and the block's share of the objective.
BlockTerms = Callable[[Block, np.ndarray], tuple[np.ndarray, np.ndarray, float]]


class _Scratch(threading.local):
    """The weighted block's buffer, reused by the blocks of one pass; one per thread, since a
    source may call the block function from several threads (e.g. one per partition)."""

    def __init__(self, n_cols: int) -> None:
        self.n_cols = n_cols
        self.buf: np.ndarray | None = None

    def __reduce__(self):  # shipped to Dask workers inside a pass's block function: empty
        return (_Scratch, (self.n_cols,))

    def get(self, rows: int) -> np.ndarray:
        if self.buf is None or self.buf.shape[0] < rows:
            self.buf = np.empty((rows, self.n_cols))
        return self.buf[:rows]


def _block_gram(xb: np.ndarray, wb: np.ndarray, out: np.ndarray) -> np.ndarray:
    """xb' diag(wb) xb; ``out`` (xb's shape) takes the weighted block."""
    if np.all(wb >= 0):
        xs = np.multiply(xb, np.sqrt(wb)[:, None], out=out)
        return xs.T @ xs  # NumPy calls syrk for A.T @ A
    return np.multiply(xb, wb[:, None], out=out).T @ xb


def weighted_gram(blocks: RowBlocks,
                  weights: Callable[[Block], np.ndarray] | None = None) -> np.ndarray:
    """X' diag(w) X over row blocks.

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p).
    weights : callable, optional
        ``weights(block) -> w`` of shape (r,); default the source's ``block.weights``. May be
        negative (observed information of a non-canonical link).

    Returns
    -------
    ndarray of shape (p, p)
    """
    p = blocks.n_cols
    scratch = _Scratch(p)

    def gram(b: Block) -> np.ndarray:
        w = b.weights if weights is None else weights(b)
        return _block_gram(b.X, w, scratch.get(b.X.shape[0]))

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
    scratch = _Scratch(blocks.n_cols)

    def block_max(b: Block) -> np.ndarray:
        a = np.abs(b.X, out=scratch.get(b.X.shape[0]))
        # fold the rows in halves, each fold one elementwise maximum over r p / 2 contiguous
        # values: NumPy's max(axis=0) goes row by row (5x slower at p = 10, 2x at p = 50)
        while a.shape[0] > 64 and a.size > 4096:
            h = a.shape[0] // 2
            if a.shape[0] % 2:
                np.maximum(a[0], a[-1], out=a[0])
            np.maximum(a[:h], a[h : 2 * h], out=a[:h])
            a = a[:h]
        return a.max(axis=0)

    return blocks.reduce(block_max, np.zeros(blocks.n_cols), np.maximum)


def fused_pass(
    blocks: RowBlocks,
    eta: Callable[[Block], np.ndarray],
    terms: BlockTerms,
) -> tuple[float, np.ndarray, np.ndarray]:
    """One streaming pass: per block the linear predictor, and at it the Gram and right-hand side.

    Parameters
    ----------
    blocks : RowBlocks
        Source of the rows of X (n_obs, p), with the response, weights and offset ``terms`` uses.
    eta : callable
        ``eta(block) -> eta_block`` of shape (r,): e.g. ``block.X @ coef + block.offset``, or the
        link of starting means (IRLS starts from mu, not from coefficients).
    terms : callable
        ``terms(block, eta_block) -> (w_block, wz_block, objective_block)``: the working
        weights, the weighted working response ``w z`` and the block's share of the objective
        (deviance).

    Returns
    -------
    objective : float
        Sum of the blocks' objective shares.
    gram : ndarray of shape (p, p)
        X' W X.
    rhs : ndarray of shape (p,)
        X' W z.
    """
    p = blocks.n_cols
    scratch = _Scratch(p)

    # a wild trial step can overflow in the Gram; its objective is then inf too and the caller
    # halves the step, discarding this Gram
    def one(b: Block) -> tuple[float, np.ndarray, np.ndarray]:
        wb, wzb, ob = terms(b, eta(b))
        with np.errstate(over="ignore", invalid="ignore"):
            return ob, _block_gram(b.X, wb, scratch.get(b.X.shape[0])), b.X.T @ wzb

    def combine(acc, part):
        if acc is None:  # the first partial as it is: no sum with zeros (one block: no sum)
            return part
        with np.errstate(over="ignore", invalid="ignore"):
            return acc[0] + part[0], acc[1] + part[1], acc[2] + part[2]

    out = blocks.reduce(one, None, combine)
    return (0.0, np.zeros((p, p)), np.zeros(p)) if out is None else out
