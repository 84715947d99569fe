"""X'WX and X'v accumulated over row blocks: the one O(N p^2) loop of the package.

No N x p weighted copy of X is ever formed: each block of rows is weighted (a copy of that
block only, a few MB) and multiplied into a p x p accumulator with BLAS (``syrk`` through
NumPy's ``A.T @ A`` detection when all weights are non-negative, ``gemm`` otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: Bytes of X per block: small enough to stay in cache, large enough to amortise call overhead.
BLOCK_BYTES = 2 * 1024 * 1024
#: Most rows per block: the per-row vectors of a block (eta, mu, weights, ...) stay ~128 KB each
#: however few columns X has (at p = 1, 2 MB of X would be 262144 rows and 2 MB per vector).
MAX_BLOCK_ROWS = 16384


def block_rows(n_cols: int, block_bytes: int = BLOCK_BYTES) -> int:
    """Rows per block for a design with ``n_cols`` float64 columns (256 to 16384)."""
    return min(MAX_BLOCK_ROWS, max(256, block_bytes // (8 * max(n_cols, 1))))


def _add_block(acc: np.ndarray, xb: np.ndarray, wb: np.ndarray, buf: np.ndarray | None = None
               ) -> None:
    """acc += xb' diag(wb) xb; ``buf`` (at least xb's shape) takes the weighted block."""
    out = None if buf is None else buf[: xb.shape[0]]
    if np.all(wb >= 0):
        xs = np.multiply(xb, np.sqrt(wb)[:, None], out=out)
        acc += xs.T @ xs  # NumPy calls syrk for A.T @ A
    else:
        acc += np.multiply(xb, wb[:, None], out=out).T @ xb


def weighted_gram(X: np.ndarray, w: np.ndarray, rows: int | None = None) -> np.ndarray:
    """X' diag(w) X over row blocks.

    Parameters
    ----------
    X : ndarray of shape (n_obs, p)
    w : ndarray of shape (n_obs,)
        Weights; may be negative (observed information of a non-canonical link).
    rows : int, optional
        Rows per block (default from :func:`block_rows`).

    Returns
    -------
    ndarray of shape (p, p)
    """
    n, p = X.shape
    rows = max(1, min(rows or block_rows(p), n))
    acc = np.zeros((p, p))
    buf = np.empty((rows, p))
    for s in range(0, n, rows):
        _add_block(acc, X[s : s + rows], w[s : s + rows], buf)
    return acc


def column_abs_max(X: np.ndarray, rows: int | None = None) -> np.ndarray:
    """max_i |X_ij| per column, over row blocks (no n x p temporary; 0 for no rows).

    Parameters
    ----------
    X : ndarray of shape (n_obs, p)
    rows : int, optional
        Rows per block.

    Returns
    -------
    ndarray of shape (p,)
    """
    n, p = X.shape
    rows = max(1, min(rows or block_rows(p), n))
    out = np.zeros(p)
    for s in range(0, n, rows):
        np.maximum(out, np.abs(X[s : s + rows]).max(axis=0), out=out)
    return out


BlockTerms = Callable[[np.ndarray, slice], tuple[np.ndarray, np.ndarray, float]]


def fused_pass(
    X: np.ndarray,
    coef: np.ndarray | None,
    offset: np.ndarray,
    terms: BlockTerms,
    rows: int | None = None,
    eta: np.ndarray | None = None,
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """One streaming pass: eta = X coef + offset, and at that eta the Gram and right-hand side.

    Parameters
    ----------
    X : ndarray of shape (n_obs, p)
    coef : ndarray of shape (p,) or None
        Ignored when ``eta`` is given.
    offset : ndarray of shape (n_obs,)
    terms : callable
        ``terms(eta_block, rows) -> (w_block, wz_block, objective_block)``: the working weights,
        the weighted working response ``w z`` and the block's share of the objective (deviance).
    rows : int, optional
        Rows per block.
    eta : ndarray of shape (n_obs,), optional
        A given linear predictor (IRLS starts from mu, not from coefficients); returned as is.

    Returns
    -------
    eta : ndarray of shape (n_obs,)
    objective : float
        Sum of the blocks' objective shares.
    gram : ndarray of shape (p, p)
        X' W X.
    rhs : ndarray of shape (p,)
        X' W z.
    """
    n, p = X.shape
    rows = max(1, min(rows or block_rows(p), n))
    given = eta is not None
    eta = eta if given else np.empty(n)
    gram = np.zeros((p, p))
    rhs = np.zeros(p)
    buf = np.empty((rows, p))  # the weighted block, reused
    objective = 0.0
    for s in range(0, n, rows):
        sl = slice(s, min(s + rows, n))
        xb = X[sl]
        if given:
            eb = eta[sl]
        else:
            eb = xb @ coef
            eb += offset[sl]
            eta[sl] = eb
        wb, wzb, ob = terms(eb, sl)
        objective += ob
        # a wild trial step can overflow here; its objective is then inf too and the caller
        # halves the step, discarding this Gram
        with np.errstate(over="ignore", invalid="ignore"):
            _add_block(gram, xb, wb, buf)
            rhs += xb.T @ wzb
    return eta, objective, gram, rhs
