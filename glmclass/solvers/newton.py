"""Damped Newton's method for smooth convex objectives that are not GLM deviances.

:func:`newton` minimises any objective given by a callback that returns the value and, on
request, the gradient and the Hessian; a rising objective halves the step, and the loop stops on
R's relative-change rule ``|f - f_old| / (|f| + 0.1) < tol``. :func:`penalized` adds a Gaussian
prior to any such objective (a MAP fit), and :func:`multinomial_deviance` is the block-accumulating
callback of the multinomial (softmax) logit: its exact block Hessian is summed over row blocks,
so memory stays O(N p + (K p)^2) and no N x K x p array is ever formed.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.4 (multiclass logistic
regression, its gradient and block Hessian).
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*, §4.4.
R Core Team, ``glm.fit`` (stats package): step-halving and the relative-deviance rule.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..likelihoods.multinomial import softmax_parts  # noqa: F401  (moved there; re-exported)
from ..numerics.linalg import NotPositiveDefinite, spd_solve
from ..rows.blocks import Block, RowBlocks, add_into, in_sample
from . import sampled
from .control import Control
from .fit import Fit
from .irls_records import weight_scale
from .sampled import State, sample_fraction, sampled_newton

#: ``evaluate(coef, derivatives) -> (objective, gradient, hessian)``; gradient and Hessian
#: (shapes (m,) and (m, m)) may be None when ``derivatives`` is False.
Objective = Callable[[np.ndarray, bool], tuple[float, np.ndarray | None, np.ndarray | None]]


def _direction(hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Newton direction ``-H^-1 g`` (Cholesky; least squares if H is not positive definite)."""
    try:
        return -spd_solve(hess, grad)
    except NotPositiveDefinite:
        return -np.linalg.lstsq(hess, grad, rcond=None)[0]


def newton(evaluate: Objective, start: np.ndarray,
           control: Control = Control(method="newton")) -> Fit:
    """Minimise a smooth objective by Newton's method with step-halving.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(coef, derivatives) -> (f, g, H)``: the objective at ``coef`` (shape (m,)) and,
        when ``derivatives`` is True, its gradient (m,) and Hessian (m, m). A non-finite ``f``
        marks ``coef`` as outside the domain.
    start : ndarray of shape (m,)
        Starting point; the objective must be finite there.
    control : Control
        ``maxiter``, ``tol``, ``maxhalf``, ``progress`` and ``direction``: for an objective
        that offers sampled Hessians (:func:`multinomial_deviance`), ``"sampled"`` takes the
        steps from the exact gradient and the Hessian of a row sample, with a full Hessian only
        to confirm convergence (:mod:`glmclass.solvers.sampled`); ``"exact"`` computes the
        full Hessian at every step; ``"auto"`` samples from
        :data:`~glmclass.solvers.sampled.SAMPLED_MIN_ROWS` rows on, except on Dask data
        (``RowBlocks.sample_hessians``). Other objectives always take exact steps.

    Returns
    -------
    Fit
        ``coef`` (the last accepted iterate), ``objective``, ``gradient`` and ``hessian`` at
        it, ``n_iter``, ``converged``, ``history`` (the objective after each iteration) and
        ``message``.

    Notes
    -----
    Each iteration solves $H d = -g$ by Cholesky and tries $b + d$; while the objective is
    non-finite or rises, $(f - f_{old}) / (0.1 + |f|) \\ge$ ``tol`` (R's ``glm.fit`` test), the
    step is halved, at most ``maxhalf`` times. Trial points are evaluated without derivatives;
    the gradient and Hessian are computed once per accepted point, so on return they belong to
    ``coef``. An objective with an ``objective_scale`` (the rows' mean prior weight,
    :func:`multinomial_deviance`) has R's ``0.1`` taken in that unit, so that the iterations
    do not depend on multiplying all weights by a constant.
    """
    coef = np.asarray(start, dtype=float).copy()
    floor = 0.1 * getattr(evaluate, "objective_scale", 1.0)
    rows = getattr(evaluate, "sampled_rows", None)  # the objective can sample its Hessian
    if rows is not None and (control.direction == "sampled" or (
            control.direction == "auto" and getattr(evaluate, "sample_by_default", True)
            and rows >= sampled.SAMPLED_MIN_ROWS)):
        return _newton_sampled(evaluate, coef, control, sample_fraction(rows, coef.size))
    f, g, h = evaluate(coef, True)
    if not np.isfinite(f):
        raise ValueError("the objective is not finite at the starting values")
    history, converged, message, n_iter = [], False, "", 0
    while n_iter < control.maxiter:
        n_iter += 1
        step = _direction(h, g)
        new = coef + step
        f_new, g_new, h_new = evaluate(new, True)
        halvings = 0
        while not np.isfinite(f_new) or (f_new - f) / (floor + abs(f_new)) >= control.tol:
            if halvings >= control.maxhalf:
                message = "step-halving could not reduce the objective"
                break
            halvings += 1
            step = step / 2.0
            new = coef + step
            f_new, _, _ = evaluate(new, False)
            g_new = None
        if message:
            break
        if g_new is None:
            f_new, g_new, h_new = evaluate(new, True)
        history.append(f_new)
        converged = abs(f_new - f) / (abs(f_new) + floor) < control.tol
        if control.progress is not None:
            control.progress(n_iter, float(f_new), float(np.max(np.abs(new - coef), initial=0.0)),
                             halvings)
        coef, f, g, h = new, f_new, g_new, h_new
        if converged:
            break
    if not converged and not message:
        message = f"no convergence in {control.maxiter} iterations"
    return Fit(coef=coef, objective=float(f), gradient=g, hessian=h, n_iter=n_iter,
               converged=converged, history=tuple(history), message=message)


def _newton_sampled(evaluate, coef: np.ndarray, control: Control,
                    frac: float) -> Fit:
    """:func:`newton` by :func:`~glmclass.solvers.sampled.sampled_newton`: ``evaluate``
    takes ``derivatives`` as ``"full"``, ``"single"`` (the loop's direction-only
    ``"hessian"`` passes), ``"sample"`` (the Hessian of a row sample, fraction ``frac``,
    scaled to all rows) or ``"score"`` (no Hessian).

    An objective with a ``subsample(rows)`` method (:func:`multinomial_deviance`) is first
    minimised on every k-th row (exact Newton) when those are at most
    :data:`~glmclass.solvers.sampled.NEWTON_WARM_MAX_FRACTION` of the rows, and the full fit
    starts there, with the sample's Hessians scaled to all rows (a fair sample of sorted rows,
    unlike whole blocks).
    """
    rows = evaluate.sampled_rows
    sub = getattr(evaluate, "subsample", None)
    if sub is not None and frac <= sampled.NEWTON_WARM_MAX_FRACTION:
        sub = sub(int(np.ceil(frac * rows)))
    else:
        sub = None
    if sub is not None:
        try:
            with np.errstate(all="ignore"):
                warm = newton(sub, coef, control.replace(direction="exact", progress=None))
        except (ValueError, np.linalg.LinAlgError):
            warm = None
        if warm is not None and warm.converged and np.isfinite(warm.coef).all():
            coef = warm.coef
        else:  # a sample the model does not fit well (e.g. separated): sample whole blocks
            sub = None

    def ev(c: np.ndarray, mode: str) -> State:
        if mode == "sample" and sub is not None:
            f, g, _ = evaluate(c, "score")
            if not np.isfinite(f):
                return State(f, g, None)
            return State(f, g, sub(c, True)[2] * (rows / sub.sampled_rows))
        f, g, h = evaluate(c, {"sample": frac, "hessian": "single"}.get(mode, mode))
        return State(f, g, h)

    def solve(h: np.ndarray, st: State, c: np.ndarray, strict: bool) -> np.ndarray:
        if strict:
            return c - spd_solve(h, st.rhs)
        return c + _direction(h, st.rhs)

    def decrement(h: np.ndarray, delta: np.ndarray) -> float:
        return 0.5 * float(delta @ h @ delta)  # the objective's excess, to second order

    state = ev(coef, "sample")
    if not np.isfinite(state.objective):
        raise ValueError("the objective is not finite at the starting values")
    fit = sampled_newton(ev, solve, decrement, coef, state, False, control.maxiter, control.tol,
                         control.maxhalf, control.progress,
                         scale=getattr(evaluate, "objective_scale", 1.0))
    st = fit.state
    return Fit(coef=fit.coef, objective=float(st.objective), gradient=st.rhs, hessian=st.hessian,
               n_iter=fit.n_iter, converged=fit.converged, history=fit.history,
               message=fit.message)


def penalized(evaluate: Objective, precision: np.ndarray, mean: np.ndarray) -> Objective:
    """Add a Gaussian prior N(mean, precision^-1) to an objective on the deviance scale.

    Parameters
    ----------
    evaluate : callable
        An objective as for :func:`newton` (e.g. a deviance, -2 log-likelihood).
    precision : ndarray of shape (m, m)
    mean : ndarray of shape (m,)

    Returns
    -------
    callable
        ``f + (b - mean)' precision (b - mean)`` with its gradient and Hessian: minus twice the
        log posterior up to a constant, so :func:`newton` finds the posterior mode.
    """
    precision = np.asarray(precision, dtype=float)
    mean = np.asarray(mean, dtype=float)

    def ev(coef: np.ndarray, derivatives: bool):
        f, g, h = evaluate(coef, derivatives)
        d = coef - mean
        pd_ = precision @ d
        f = f + float(d @ pd_)
        if derivatives:
            g, h = g + 2.0 * pd_, h + 2.0 * precision
        return f, g, h

    ev.objective_scale = getattr(evaluate, "objective_scale", 1.0)
    return ev


# --- multinomial (softmax) logit ----------------------------------------------------------------

def _level_rows(codes: np.ndarray, k1: int) -> list[np.ndarray] | None:
    """``codes == j + 1`` for each non-reference level j (None for many levels, where the
    helpers below gather instead): computed once per block for :func:`_observed_eta` and
    :func:`_residual`."""
    return [codes == j + 1 for j in range(k1)] if k1 <= 8 else None


def _observed_eta(eta: np.ndarray, codes: np.ndarray,
                  rows: list[np.ndarray] | None = None) -> np.ndarray:
    """The linear predictor of each row's observed level (0 for the reference level);
    ``rows``: :func:`_level_rows` of ``codes``, when the caller has them."""
    k1 = eta.shape[1]
    if k1 > 8:
        return np.where(codes > 0, eta[np.arange(eta.shape[0]), np.maximum(codes - 1, 0)], 0.0)
    rows = _level_rows(codes, k1) if rows is None else rows
    out = np.zeros(eta.shape[0])
    for j in range(k1):  # a few masked copies beat a gather
        np.copyto(out, eta[:, j], where=rows[j])
    return out


def unit_weights(weights: np.ndarray) -> bool:
    """Whether ``weights`` is the broadcast 1.0 a source gives when there are none:
    multiplying by it changes no bit, so it is skipped."""
    return weights.strides[0] == 0 and weights[:1].tolist() == [1.0]


def _no_offset(offset: np.ndarray) -> bool:
    """Whether ``offset`` is the broadcast 0.0 a source gives when there is none: adding it
    changes no value, so it is skipped."""
    return offset.strides[0] == 0 and offset[:1].tolist() == [0.0]


def _residual(codes: np.ndarray, weights: np.ndarray, prob: np.ndarray,
              q: np.ndarray, rows: list[np.ndarray] | None = None) -> np.ndarray:
    """``f (t - p)`` per row and non-reference level (``t`` the indicator of the observed
    level), with ``1 - p`` taken from ``q`` (accurate); ``rows`` as for
    :func:`_observed_eta`."""
    k1 = prob.shape[1]
    if k1 > 8:
        return weights[:, None] * np.where(codes[:, None] == np.arange(1, k1 + 1), q, -prob)
    rows = _level_rows(codes, k1) if rows is None else rows
    out = np.negative(prob)
    for j in range(k1):
        np.copyto(out[:, j], q[:, j], where=rows[j])
    if not unit_weights(weights):
        out *= weights[:, None]
    return out


def _complement(prob: np.ndarray, prob_ref: np.ndarray) -> np.ndarray:
    """``1 - prob`` without cancellation: for the row's dominant level (the only one that can
    exceed 1/2) it is the sum of the other, small, probabilities."""
    k1 = prob.shape[1]
    if 0 < k1 <= 8:  # column by column, the same numbers as below (a gather is slow)
        q = 1.0 - prob  # consistent with prob where prob <= 1/2: the residuals sum to 0
        for j in range(k1):
            big = prob[:, j] > 0.5
            if not big.any():
                continue
            # prob_ref + the other levels' probabilities, summed in the order of the sum below
            # (starting from the first term is starting from 0: the terms are not negative)
            rest = [k for k in range(k1) if k != j]
            others = prob[:, rest[0]] if rest else np.zeros(prob.shape[0])  # read only
            if len(rest) > 1:
                others = others + prob[:, rest[1]]
                for k in rest[2:]:
                    others += prob[:, k]
            np.copyto(q[:, j], prob_ref + others, where=big)
        return q
    q = 1.0 - prob
    big = prob > 0.5
    if big.any():
        rows, cols = np.nonzero(big)
        others = prob[rows].copy()
        others[np.arange(rows.size), cols] = 0.0
        q[rows, cols] = prob_ref[rows] + others.sum(axis=1)
    return q


def multinomial_deviance(blocks: RowBlocks, n_levels: int,
                         weight_range: bool = False) -> Objective:
    """The deviance of a baseline-category multinomial logit, as an objective for :func:`newton`.

    Parameters
    ----------
    blocks : RowBlocks
        The rows: design X (n_obs, p), ``y`` the observed level of each row as an integer code,
        0 (the reference level) to ``n_levels - 1``, ``weights`` frequency weights
        (non-negative) and ``offset``, added to the linear predictor of every non-reference
        level. Each block expands to (r, (K-1) p) temporaries: a source with
        ``rows = block_rows((K-1) p)`` keeps them at about 2 MB.
    n_levels : int
        Number of levels K (at least 2).
    weight_range : bool
        Record, at each point whose full float64 Hessian is made, the smallest and largest
        weight ``p_j (1 - p_j)`` of each non-reference level over the rows, as
        ``evaluate.weight_range = (coef, low, high)`` (None before): with them a level's
        Hessian block bounds the Gram X'FX (:func:`~glmclass.solvers.rank.bound_decides`).
        For sources reduced in this process (the blocks' sums are then made in place).

    Returns
    -------
    callable
        ``evaluate(coef, derivatives) -> (deviance, gradient, hessian)`` where ``coef`` of
        shape ((K-1) p,) stacks the coefficient vectors of the non-reference levels
        (level-major: all of level 1's, then level 2's, ...), the deviance is
        $-2 \\sum_n f_n \\ln p_{n, y_n}$, and gradient ((K-1) p,) and Hessian
        ((K-1) p, (K-1) p) are those of the deviance.

    Notes
    -----
    With $p_{nj}$ the softmax probabilities and $t_{nj}$ the indicator of level $j$, the
    log-likelihood's gradient for level $j$ is $\\sum_n f_n (t_{nj} - p_{nj}) x_n$ and its
    negative Hessian has blocks
    $H_{jk} = \\sum_n f_n p_{nj} (\\delta_{jk} - p_{nk}) x_n x_n^\\top$ (PRML eq. 4.110).
    Per row block each pair of levels $j \\le k$ gets one weighted Gram (``syrk``, every
    weight non-negative): $X^\\top \\mathrm{diag}(f p_j p_k) X$ off the diagonal and
    $-X^\\top \\mathrm{diag}(f p_j (1 - p_j)) X$ on it, with an accurate $1 - p_j$, so levels
    fitted near probability one keep their precision: the block's log-likelihood Hessian. The
    source sums the blocks' log-likelihoods, gradients and Hessians; the deviance's are -2 times
    those.
    """
    p = blocks.n_cols
    k1 = n_levels - 1

    def evaluate(coef: np.ndarray, derivatives: bool | str | float):
        B = coef.reshape(k1, p).T  # (p, K-1)
        # True or "full": every row's Hessian; "single": every row's, in single precision
        # (directions only); a float: the Hessian of that share of the blocks
        # (sampled.in_sample), scaled to all rows; "score": the gradient alone
        dtype = np.float32 if derivatives == "single" else np.float64
        frac = 1.0 if derivatives in (True, "full", "single") else (
            0.0 if derivatives == "score" else float(derivatives))
        ranged = weight_range and derivatives in (True, "full")
        derivatives = derivatives is not False

        def one(b: Block):
            """The block's log-likelihood and, with ``derivatives``, its gradient (p, K-1) and
            Hessian; a log-likelihood of -inf marks a trial step far out (newton() then halves
            it), whose derivatives are never used."""
            xb, fb, cb, ob = b.X, b.weights, b.y.astype(np.intp, copy=False), b.offset
            with np.errstate(over="ignore", invalid="ignore"):
                eta = xb @ B
                if not _no_offset(ob):
                    eta += ob[:, None]
            if not np.isfinite(eta).all():
                if ranged:
                    return -np.inf, 0.0, 0.0, 0, np.full(2 * k1, np.inf)
                return (-np.inf, 0.0, 0.0, 0) if derivatives else -np.inf
            lse, prob, p0 = softmax_parts(eta)
            rows = _level_rows(cb, k1)
            obs = _observed_eta(eta, cb, rows)
            obs -= lse
            loglik = float(fb @ obs)
            if not derivatives:
                return loglik
            q = _complement(prob, p0)
            grad = xb.T @ _residual(cb, fb, prob, q, rows)
            if frac <= 0.0 or not in_sample(b.start, frac):
                return loglik, grad, 0.0, 0
            if not ranged:
                return loglik, grad, _hessian_block(xb, fb, prob, q, dtype), xb.shape[0]
            low = np.full(2 * k1, np.inf)
            return loglik, grad, _hessian_block(xb, fb, prob, q, dtype, low), xb.shape[0], low

        if not derivatives:
            return -2.0 * blocks.reduce(one, 0.0), None, None
        if ranged:
            out = blocks.reduce(one, None, _sum_in_place)
            if out is None:  # no rows
                out = (0.0, np.zeros((p, k1)), np.zeros((k1 * p, k1 * p)), 0,
                       np.full(2 * k1, np.inf))
            loglik, grad, hess, m, low = out
            evaluate.weight_range = (coef.copy(), low[:k1], -low[k1:])
        else:
            zero = (0.0, np.zeros((p, k1)), 0.0, 0)
            loglik, grad, hess, m = blocks.reduce(one, zero)
        if not np.isfinite(loglik):
            return np.inf, None, None
        if frac <= 0.0:
            hess = None
        elif frac >= 1.0:
            hess = -2.0 * hess
        elif m > 0:
            hess = (-2.0 * blocks.n_rows / m) * hess
        else:  # no rows (in the sample)
            hess = np.zeros((k1 * p, k1 * p))
        return -2.0 * loglik, -2.0 * grad.T.ravel(), hess

    def subsample(rows: int) -> Objective | None:
        """The objective on about ``rows`` systematically sampled rows (None: not offered)."""
        sub = blocks.subsample(rows)
        return None if sub is None else multinomial_deviance(sub, n_levels)

    evaluate.weight_range = None
    evaluate.objective_scale = weight_scale(blocks)  # R's 0.1 in units of the weights
    evaluate.sampled_rows = blocks.n_rows  # offers sampled Hessians (see newton())
    evaluate.sample_by_default = blocks.sample_hessians  # what "auto" does (not on Dask)
    evaluate.subsample = subsample  # a warm start and fair sampled Hessians (see newton())
    return evaluate


def _sum_in_place(acc: tuple | None, part: tuple) -> tuple:
    """A reduction's combine for the blocks' (loglik, gradient, Hessian, rows, range) made in
    this process: the sums into the first block's own arrays (each block makes new ones, so
    they are the reduction's to sum into, as in ``ArrayBlocks.reduce``), and the elementwise
    minimum of the range."""
    if acc is None:
        return part
    return (*add_into(acc[:4], part[:4]), np.minimum(acc[4], part[4], out=acc[4]))


def _hessian_block(xb: np.ndarray, fb: np.ndarray, prob: np.ndarray,
                   q: np.ndarray, dtype: type = np.float64,
                   low: np.ndarray | None = None) -> np.ndarray:
    """One row block's log-likelihood Hessian (see :func:`multinomial_deviance`): one weighted
    Gram (``syrk``, p columns) per pair of levels, every weight non-negative; with ``dtype``
    float32 the products are made in single precision (the result is float64). ``low``
    (2 (K-1),) takes ``[min_n p_j (1 - p_j) for each j, -max_n p_j (1 - p_j) for each j]``."""
    r, p = xb.shape
    k1 = prob.shape[1]
    block = np.empty((k1 * p, k1 * p))
    buf = np.empty(xb.shape, dtype=dtype)
    unit = unit_weights(fb)  # f p_j (...) is p_j (...) to the last bit
    for j in range(k1):
        fp = prob[:, j] if unit else fb * prob[:, j]
        if low is not None and r:
            pq = prob[:, j] * q[:, j]
            low[j], low[k1 + j] = np.minimum.reduce(pq), -np.maximum.reduce(pq)
        for k in range(j, k1):
            v = fp * (q[:, j] if j == k else prob[:, k])
            xs = np.multiply(xb, np.sqrt(v, out=v)[:, None], out=buf)
            g = xs.T @ xs  # syrk
            if j == k:
                np.negative(g, out=block[j * p:(j + 1) * p, j * p:(j + 1) * p])
            else:
                block[j * p:(j + 1) * p, k * p:(k + 1) * p] = g
                block[k * p:(k + 1) * p, j * p:(j + 1) * p] = g
    return block
