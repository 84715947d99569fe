"""IRLS steps by QR for designs too ill-conditioned for the normal equations (as R's
``glm.fit``, which always solves the weighted least squares by QR).

Each pass reduces the row blocks' triangular factors of the weighted design, with the weighted
working response appended, into one ``[R c; 0 d]`` (a TSQR), so no N x p copy is formed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla

from ..rows.blocks import Block, RowBlocks
from .irls_records import Penalty

#: Smallest Gram pivot (squared relative distance of a kept column from the span of the
#: earlier ones) at which the iterations solve the normal equations; below it (a condition
#: number over ~1e5) each step solves the weighted least squares by QR, as R does.
QR_MODE_CLEAR = 1e-10


@dataclass(frozen=True)
class QRSystem:
    """``[R c; 0 d]``: the triangular factor of the weighted design (kept columns) with the
    weighted working response (or residual) appended; the step solves ``R x = c``."""

    r_aug: np.ndarray
    keep: np.ndarray

    def solve(self) -> np.ndarray:
        k = int(self.keep.sum())
        r = self.r_aug[:k, :k]
        return sla.solve_triangular(r, self.r_aug[:k, k], check_finite=False)

    def gram(self) -> np.ndarray:
        k = int(self.keep.sum())
        rk = self.r_aug[:k, :k]
        out = np.zeros((self.keep.shape[0],) * 2)
        out[np.ix_(self.keep, self.keep)] = rk.T @ rk
        return out


def qr_pass(blocks: RowBlocks, keep: np.ndarray, shift: np.ndarray | None,
            penalty: Penalty | None, coef: np.ndarray | None, terms: Callable[..., tuple],
            start_eta: Callable[[Block], np.ndarray] | None = None
            ) -> tuple[float, QRSystem]:
    """One pass giving the deviance and the :class:`QRSystem` of the step at ``coef`` (or at
    the starting means: then ``terms`` gives ``w z`` and the system is the full solve)."""
    cols = np.flatnonzero(keep)

    def one(b: Block):
        xb = b.X if shift is None else b.X - shift
        e = start_eta(b) if coef is None else xb @ coef + b.offset
        w, v, dev = terms(b, e)
        sw = np.sqrt(np.maximum(w, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            rhs = np.where(sw > 0, v / sw, 0.0)
        a = np.column_stack([xb[:, cols] * sw[:, None], rhs])
        return dev, _tri(a)

    def combine(x, y):
        return x[0] + y[0], _tri(np.vstack([x[1], y[1]]))

    k = cols.shape[0]
    dev, r = blocks.reduce(one, (0.0, np.zeros((0, k + 1))), combine)
    if penalty is not None:
        e, v = np.linalg.eigh(penalty.precision)
        root = (v * np.sqrt(np.maximum(e, 0.0))).T
        target = root @ penalty.mean if coef is None else -root @ (coef - penalty.mean)
        r = _tri(np.vstack([r, np.column_stack([root[:, cols], target])]))
    if r.shape[0] < k + 1:
        r = np.vstack([r, np.zeros((k + 1 - r.shape[0], k + 1))])
    return dev, QRSystem(r, keep)


def _tri(a: np.ndarray) -> np.ndarray:
    """The R of a QR of ``a`` (at most as many rows as columns)."""
    if a.shape[0] <= a.shape[1]:
        return a
    return sla.qr(a, mode="r", overwrite_a=True, check_finite=False)[0][: a.shape[1]]
