"""Gradient-descent fits of the GLM-type models and the multinomial logit: the glue between a
model's data and :mod:`glmclass.solvers.gradient` (through :func:`glmclass.solvers.solve.solve`),
returning the same :class:`~glmclass.solvers.fit.Fit` record as IRLS and Newton's method (with
the gradient norms per epoch and the learning rate used) so that the results classes need no
second code path.

The covariance of such a fit is the inverse information (the Hessian of the negative
log-likelihood) at the point the optimiser reached: at the MLE only when it converged.
"""

from __future__ import annotations

import numpy as np

from ..numerics.linalg import aliased_columns
from ..rows.blocks import Block, RowBlocks
from ..rows.gram import weighted_gram
from ..solvers import gradient as G
from ..solvers.fit import Fit
from ..solvers.newton import multinomial_deviance
from ..solvers.solve import solve

LABELS = {"gd": "gradient descent", "sgd": "stochastic gradient descent",
          "minibatch": "mini-batch gradient descent"}


HINT = ("raise max_epochs, lower the learning rate, keep variance_reduction=True, or "
        "standardise the columns")
DEFAULTS = {"learning_rate": None, "schedule": "constant", "batch_size": None,
            "max_epochs": None, "gtol": 1e-6, "seed": None, "variance_reduction": True,
            "shuffle": True, "history": "epoch"}


def options(method: str, **given) -> dict:
    """The gradient settings as a dict; an error when one is given to a method that would
    ignore it (IRLS and Newton have no learning rate)."""
    if method not in G.METHODS:
        changed = [k for k, v in given.items() if v is not DEFAULTS[k] and v != DEFAULTS[k]]
        if changed:
            raise ValueError(f"{changed[0]} applies to the gradient methods (method='gd', "
                             f"'sgd' or 'minibatch'), not to method={method!r}")
    return given


def _curvature_bound(family, blocks: RowBlocks, coef0: np.ndarray) -> float:
    """Largest Fisher weight mu'^2 / V over eta (1/4 for the logit): bounds the Hessian of the
    mean loss by c X'WX / sum(w). For unbounded weights (log link), 4 times the largest at the
    start ``coef0`` (one pass), for room."""
    grid = family.working_weights(np.linspace(-10.0, 10.0, 401))
    c = float(np.max(grid))
    if not np.isfinite(c) or c <= 0:

        def largest(b: Block) -> float:
            w = family.working_weights(b.X @ coef0 + b.offset)
            return float(np.max(w, initial=-np.inf))

        c = 4.0 * float(blocks.reduce(largest, -np.inf, max))
    return c


def positive_rows(blocks: RowBlocks) -> RowBlocks:
    """The rows of positive weight (R's ``glm.fit`` leaves rows of weight 0 out); ``blocks``
    itself when every row has one (one pass to count them)."""
    n_pos = blocks.reduce(lambda b: int(np.count_nonzero(b.weights > 0)), 0)
    if n_pos == blocks.n_rows:
        return blocks
    return blocks.take_rows(blocks.map(lambda b: b.weights > 0))


def _smoothness(blocks, c: float) -> tuple[float, float]:
    """(L, L_max): curvature bounds of the mean loss over all rows and over one row, from one
    blocked pass (the weighted Gram and the largest weighted squared row norm)."""
    n = blocks.n_rows
    mean_w = blocks.reduce(lambda b: float(np.sum(b.weights)), 0.0) / n
    gram = weighted_gram(blocks) / (mean_w * n)
    L = c * float(np.linalg.eigvalsh(gram)[-1])
    row_max = blocks.reduce(lambda b: float(np.max(b.weights * np.einsum("ij,ij->i", b.X, b.X),
                                                   initial=0.0)), 0.0, max)
    L_max = c * row_max / mean_w
    return max(L, 1e-300), max(L_max, L, 1e-300)


def glm_fit(problem, method: str, start: np.ndarray | None, options: dict) -> Fit:
    """Fit a :class:`~glmclass.models.glm_base.GLMProblem` by a gradient method.

    Rows of zero prior weight take no part (as in IRLS); aliased columns get NaN coefficients.
    Without ``start_params`` the fit starts from the intercept-only fit (zero slopes).
    """
    fam = problem.family
    blocks = positive_rows(problem.blocks())
    aliased = aliased_columns(weighted_gram(blocks))
    keep = ~aliased
    blocks = blocks.take_columns(keep)
    control = G.gradient_control(method, blocks.n_rows, **options)
    coef0 = np.zeros(int(keep.sum()))
    if start is not None:
        coef0 = np.asarray(start, dtype=float)[keep]
    elif problem.data.intercept_index is not None and keep[problem.data.intercept_index]:
        wy, wsum = blocks.reduce(lambda b: (float(b.weights @ b.y), float(np.sum(b.weights))),
                                 (0.0, 0.0))
        mean = float(np.clip(wy / wsum, 1e-6, 1 - 1e-6)) if fam.name == "Binomial" \
            else float(wy / wsum)
        lo, hi = fam.link.range
        mean = min(max(mean, lo + 1e-6 * (hi - lo if np.isfinite(hi - lo) else 1.0)),
                   hi - 1e-6 * (hi - lo if np.isfinite(hi - lo) else 1.0))
        coef0[int(np.cumsum(keep)[problem.data.intercept_index]) - 1] = \
            float(fam.link.link(np.array([mean]))[0])
    c = _curvature_bound(fam, blocks, coef0)
    run = solve(fam, blocks, control, start=coef0, smoothness=_smoothness(blocks, c))
    b = run.coef

    def fisher(blk: Block) -> np.ndarray:
        return blk.weights * fam.working_weights(blk.X @ b + blk.offset)

    gram = np.zeros((keep.size, keep.size))
    gram[np.ix_(keep, keep)] = weighted_gram(blocks, fisher)
    coef = np.full(keep.size, np.nan)
    coef[keep] = b
    return Fit(coef=coef, deviance=2.0 * run.loss, gram=gram, aliased=aliased, n_iter=run.n_iter,
               converged=run.converged, history=run.history, message=run.message,
               grad_norms=run.grad_norms, learning_rate=run.learning_rate, **_labels(control))


def multinomial_fit(model, keep: np.ndarray, start: np.ndarray, method: str,
                    options: dict) -> Fit:
    """Fit an :class:`~glmclass.MNLogit` on its kept columns (mask ``keep``) by a gradient
    method; the record carries the exact Hessian at the point reached (for the covariance)."""
    blocks = positive_rows(model.row_blocks(keep, objective=True))
    control = G.gradient_control(method, blocks.n_rows, **options)
    # Boehning's bound: the multinomial Hessian is below (I - 11'/K)/2 (x) X'WX
    run = solve(G.multinomial_loss(model.K), blocks, control, start=start,
                smoothness=_smoothness(blocks, 0.5))
    f, g, h = multinomial_deviance(blocks, model.K)(run.coef, True)
    return Fit(coef=run.coef, objective=f, gradient=g, hessian=h, n_iter=run.n_iter,
               converged=run.converged, history=run.history, message=run.message,
               grad_norms=run.grad_norms, learning_rate=run.learning_rate, **_labels(control))


def _labels(control) -> dict:
    """What one history entry is, and whether the stochastic steps were plain SGD."""
    unit = "iteration" if control.method == "gd" else control.history
    return {"history_unit": unit,
            "plain": control.method != "gd" and not control.variance_reduction}
