"""Rosenblatt's perceptron learning algorithm (with Gallant's pocket), on ndarrays.

The perceptron criterion $E_P(w) = -\\sum_{n \\in M} w^\\top x_n t_n$ (M the misclassified
points, $t_n = \\pm 1$) is minimised by stochastic gradient descent one point at a time: each
misclassified point moves the weights by $\\eta\\, t_n x_n$. The updates are sequential and in a
(seeded) random order, so the loop reads single rows, not row blocks: it is no reduction over
the data. It reads the rows as windows of consecutive rows streamed from the row source (the
order of :mod:`glmclass.solvers.gradient`'s stochastic steps), so the same rows give the same
run in memory and on Dask; the end-of-epoch error count is a reduction.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.7.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*,
§4.5.1.
Gallant, S. I. (1990). Perceptron-based learning algorithms. *IEEE Trans. Neural Networks* 1,
179-191 (the pocket algorithm).
"""

from __future__ import annotations

import numpy as np

from ..rows.blocks import Block, RowBlocks
from .control import Control
from .fit import Fit
from .gradient import window_source


def rosenblatt(rows: RowBlocks, positive: int, control: Control) -> Fit:
    """Run the perceptron from zero weights until an epoch leaves no point misclassified.

    Parameters
    ----------
    rows : RowBlocks
        Design rows (a column of ones gives the bias) with integer class codes as the
        response; the code ``positive`` has target +1, every other -1.
    positive : int
    control : Control
        ``learning_rate``: the step size eta > 0 (from zero weights it only scales the
        weights: the sequence of classifications does not depend on it); ``max_epochs``;
        ``seed``: a numpy.random.Generator that visits the points of each window of
        :data:`~glmclass.solvers.gradient.SHUFFLE_ROWS` consecutive rows in a fresh random
        order each epoch (data up to that size: all points), or None to visit them in row
        order; ``pocket``: keep the end-of-epoch weights with the fewest training errors
        (the earliest on ties).

    Returns
    -------
    Fit
        ``coef``, the final weights (with ``pocket``, the best end-of-epoch weights);
        ``converged`` (an epoch ended with every training point on its correct side);
        ``n_iter``, the epochs run; ``history``, the training points misclassified by the
        weights at the end of each epoch ($t_n w^\\top x_n \\le 0$, ndarray of int);
        ``updates``, the weight updates made during each epoch; ``best_epoch``, the epoch
        whose weights ``coef`` holds (1-based; 0 for the zero start); ``message``, why
        it stopped early (weights that overflowed), else empty.

    Notes
    -----
    An epoch is one sequential pass over the windows (:func:`~glmclass.solvers.gradient.
    windows`, so rows on Dask are brought one partition at a time) and one reduction that
    counts the misclassified points at its end. A ``learning_rate`` so large that the
    weights overflow (inf, then NaN, which no comparison finds misclassified) stops the run:
    the weights go back to those before the window that overflowed, ``converged`` is False
    and ``message`` says why.
    """
    learning_rate, rng = control.learning_rate, control.seed
    n, p = rows.n_rows, rows.n_cols
    w = np.zeros(p)
    best_w, best_err, best_epoch = w.copy(), n, 0
    history, updates = [], []
    converged, message = False, ""
    epoch_rows = window_source(rows)

    def wrong(b: Block) -> int:  # t_n w'x_n <= 0 (or not a number), z_n'w with z_n = t_n x_n
        return int(np.count_nonzero(~(_signed(b, positive) @ w > 0.0)))

    for epoch in range(1, control.max_epochs + 1):
        k = 0
        for win in epoch_rows():
            Z = _signed(win, positive)
            pts = list(Z)  # row views: cheaper to index in the loop than Z[i]
            order = rng.permutation(len(pts)) if rng is not None else range(len(pts))
            before = w.copy()
            with np.errstate(over="ignore", invalid="ignore"):
                for i in order:
                    z = pts[i]
                    if not z @ w > 0.0:
                        w += learning_rate * z
                        k += 1
            if not np.isfinite(w).all():
                w = before
                message = (f"the weights overflowed in epoch {epoch} (learning_rate="
                           f"{learning_rate:g} is too large for the scale of the data): the "
                           "run stopped with the last finite weights; from zero weights the "
                           "rate only scales them, so learning_rate=1.0 gives the same "
                           "classifications")
                break
        if message:
            break
        errors = int(rows.reduce(wrong, 0))
        history.append(errors)
        updates.append(k)
        if errors < best_err:
            best_w, best_err, best_epoch = w.copy(), errors, epoch
        if errors == 0:
            converged = True
            break
    if message and not history:  # the first epoch overflowed: count the finite weights' errors
        history.append(int(rows.reduce(wrong, 0)))
        updates.append(k)
    coef, at = (best_w, best_epoch) if control.pocket else (w.copy(), len(history))
    return Fit(coef=coef, converged=converged, n_iter=len(history),
               history=np.array(history, dtype=int), updates=np.array(updates, dtype=int),
               best_epoch=at, message=message)


def _signed(b: Block, positive: int) -> np.ndarray:
    """Rows t_n x_n of a block of class codes: t_n = +1 for the code ``positive``, else -1."""
    return b.X * np.where(b.y == positive, 1.0, -1.0)[:, None]
