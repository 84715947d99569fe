"""Newton's method with exact gradients and cheap Hessians: the large-N fast path.

At N = 1e6 rows a Newton (IRLS) iteration is one pass over the data whose cost is the Gram
matrix X'WX (N p^2 flops), while the gradient X'u costs N p. Far from the optimum any fair
approximation of the Hessian gives a good direction, and near it a Hessian from a few steps
earlier does; only the gradient has to be exact for the iterates to converge to the exact
optimum. :func:`sampled_newton` therefore runs three kinds of passes:

``"sample"``
    the objective and the gradient over all rows, with the Hessian of a systematic sample of
    the rows (scaled to all of them);
``"score"``
    the objective and the gradient only, the last Hessian kept (after a full pass, when the
    iterates contract fast);
``"full"``
    the objective, gradient and Hessian over all rows in float64, at a point that may be the
    last;
``"hessian"``
    as ``"full"``, made early (see below) for the steps' directions only: the caller may make
    its Hessian in single precision and skip what it checks only at the end (a fit that
    converges right there gets a ``"full"`` pass at the same point).

Each step solves ``H d = -g`` with the current Hessian, halves the step while the objective
rises (R's ``glm.fit`` rule), and measures the Newton decrement ``d' H d`` (the objective's
excess over its minimum, to second order). The ratio of consecutive decrements estimates the
contraction; once the next decrement is predicted below the threshold the next pass is a full
one, and the loop stops only after a full pass whose *exact* Newton decrement is below
``tol^2 (|f| + 0.1)``: the estimates are then those of exact Newton to ~``tol`` standard
errors, and the Hessian the caller gets is the float64 Hessian at the returned estimates.

A sampled Hessian contracts the decrement by a constant factor per pass (~2.5 p / sample rows),
while Newton's steps from an exact one converge quadratically, and at large N the objective is
nearly quadratic over many standard errors. So once the sampled steps contract (ratio below
:data:`EARLY_FULL_RATIO`) and three or more of them would be left, one ``"hessian"`` pass is
made; the next steps reuse its Hessian (``"score"`` passes) and the last full pass follows
within one or two of them (1e6 rows from a sample fit's start: 4 passes instead of 6-11).

References
----------
Nocedal, J. and Wright, S. J. (2006). *Numerical Optimization*, 2nd ed., §3.3 and §7.1
(Newton with inexact Hessians: linear convergence at the rate of the Hessian's error).
Byrd, R. H., Chin, G. M., Nocedal, J. and Wu, Y. (2012). Sample size selection in
optimization methods for machine learning. *Math. Program.* 134, 127-155 (subsampled Hessians
with full gradients).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..numerics.linalg import NotPositiveDefinite
from .fit import Fit

#: Rows in the Hessian's sample per column of the design (at least :data:`SAMPLE_MIN`). A
#: sampled Gram's relative error is about sqrt(p / rows), and each pass shrinks the Newton
#: decrement by about 2.5 p / rows; a larger sample saves passes but costs p^2 per row: at
#: N = 1e6 and p = 200, 200 rows per column (4 % of the rows) took 11 passes and 4.6 s, 1000 (20 %)
#: 8 passes and 5.3 s (p = 50: 0.87 s and 0.85 s; MNLogit, K = 3, p = 50: 2.1 s and 2.4 s).
SAMPLE_PER_COLUMN = 200
#: Fewest rows in the Hessian's sample.
SAMPLE_MIN = 20_000
#: Largest contraction of the Newton decrement per sampled pass at which a first full pass is
#: made before the end (when three or more sampled passes would be left).
EARLY_FULL_RATIO = 0.05
#: Fewest rows from which IRLS (``Control(direction="auto")``, on a source that can sample its
#: Hessians) and Newton (``Control(method="newton")``, MNLogit) take the sampled path:
#: below them a full pass costs little more than a gradient pass (from the fit of a sample,
#: MNLogit is faster there at any number of parameters: 1e6 x 10, K = 3: 0.65 s vs 0.90 s).
#: IRLS with a canonical link starts later (``irls_sampled.CANONICAL_ROWS_FACTOR``).
SAMPLED_MIN_ROWS = 100_000
#: The warm start's limits: the largest share of the rows in the systematic sample whose exact
#: fit starts a sampled fit. They differ because the two solvers start from different places
#: (benchmarks/README.md, issue 14 round three, "Warm start or not"): IRLS starts from R's
#: starting means, already close, so its sample fit pays only when small (1e6 rows, 2 %
#: samples: 5-12 % faster at p = 10, 50; 4 % at p = 200 and 8-40 % at 1e5-5e5 rows: 4-90 %
#: slower); Newton (MNLogit) starts from the level shares' intercepts, farther away, so a
#: larger sample still saves passes (K = 3: 1e6 x 50 (2 %): 1.60 s vs 1.89 s; 1e6 x 200 (8 %):
#: 11.7 s vs 14.9 s; 5e5 x 50 (4 %): 0.86 vs 0.98 s; 2e5 x 50 (10 %): even; 1e5 x 10 (20 %):
#: 10 % slower).
IRLS_WARM_MAX_FRACTION = 0.025
#: See :data:`IRLS_WARM_MAX_FRACTION`: the limit for :func:`glmclass.solvers.newton.newton`.
NEWTON_WARM_MAX_FRACTION = 0.1


def sample_fraction(n_rows: int, n_params: int) -> float:
    """Fraction of the rows whose Hessian is a good enough direction (1 for few rows)."""
    want = max(SAMPLE_MIN, SAMPLE_PER_COLUMN * n_params)
    return min(1.0, want / max(n_rows, 1))


@dataclass(frozen=True)
class State:
    """What a pass returns at a point.

    Attributes
    ----------
    objective : float
        The objective (inf outside the domain).
    rhs : ndarray
        What the caller's ``solve`` needs from the gradient (e.g. the score X'u).
    hessian : ndarray or None
        The pass's Hessian (sampled or full), None for a ``"score"`` pass.
    extra : object
        Anything else the caller keeps with the point (e.g. the deviance without a penalty).
    """

    objective: float
    rhs: np.ndarray
    hessian: np.ndarray | None
    extra: Any = None


def sampled_newton(
    evaluate: Callable[[np.ndarray | None, str], State],
    solve: Callable[[np.ndarray, State, np.ndarray | None, bool], np.ndarray],
    decrement: Callable[[np.ndarray, np.ndarray], float],
    coef: np.ndarray | None,
    state: State,
    exact: bool,
    maxiter: int,
    tol: float,
    maxhalf: int,
    progress: Callable[[int, float, float, int], None] | None = None,
    scale: float = 1.0,
) -> Fit:
    """Minimise by Newton steps from exact gradients and sampled or earlier Hessians.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(coef, mode) -> State`` with ``mode`` one of ``"sample"``, ``"score"``,
        ``"hessian"``, ``"full"`` (see the module's notes); a non-finite objective marks a point
        outside the domain.
    solve : callable
        ``solve(hessian, state, coef, strict) -> new_coef``: the Newton step from ``coef``
        (the caller adds any penalty); with ``strict`` it raises
        :class:`~glmclass.numerics.linalg.NotPositiveDefinite` when the Hessian is not positive
        definite (a sampled Hessian: the loop then makes a full pass), else it does its best
        (e.g. least squares). With ``coef`` None, the first step from the state the caller
        started at (e.g. IRLS's weighted least squares from starting means).
    decrement : callable
        ``decrement(hessian, delta) -> float``: ``delta' H delta`` on the objective's scale.
    coef : ndarray or None
        The starting point (None: the caller's ``solve`` knows the first step).
    state : State
        The state at the start, with its Hessian.
    exact : bool
        Whether ``state.hessian`` is the full float64 Hessian.
    maxiter, tol, maxhalf
        As R's ``glm.control``: steps, the relative-change tolerance, halvings per step.
    progress : callable, optional
        ``progress(iteration, objective, step, halvings)`` after each accepted step.
    scale : float
        The objective's unit, the rows' mean prior weight (the objective and the decrement
        are proportional to it): R's ``0.1`` and the decrement's threshold are taken in it,
        so that every decision is invariant to multiplying all weights by a constant.

    Returns
    -------
    Fit
        ``coef``, ``state`` (the full pass's :class:`State` at ``coef``), ``n_iter``,
        ``converged``, ``history``, ``message`` and ``passes``.
        Converged only at a point where a full pass was made: its state holds the full
        Hessian there.
    """
    hess = state.hessian
    here = exact  # hess is the full Hessian at coef (else sampled, or of an earlier point)
    history: list[float] = []
    message, converged, it = "", False, 0
    eps_prev = None
    made_full = exact
    passes = {"sample": 0, "score": 0, "hessian": 0, "full": 0}

    last = "full" if exact else ""  # the mode of the pass that made ``state``

    def full_here(at):
        nonlocal last
        last = "full"
        passes["full"] += 1
        st = evaluate(at, "full")
        return st, st.hessian, True, True

    while it < maxiter:
        thr = (1e3 * tol) ** 2 * scale
        try:
            new = solve(hess, state, coef, not here)
        except NotPositiveDefinite:  # e.g. a sample without some column's rows: all rows
            state, hess, exact, here = full_here(coef)
            continue
        eps = np.inf if coef is None else decrement(hess, new - coef)
        if not (np.isfinite(eps) and eps >= 0) and coef is not None:
            if here:  # not a descent direction even with the exact Hessian: take the step
                eps = np.inf
            else:  # from a sampled or earlier Hessian: all rows
                state, hess, exact, here = full_here(coef)
                continue
        ratio = None if eps_prev is None or not eps_prev > 0 else eps / eps_prev
        if here and coef is not None:
            rel = (abs(history[-1] - history[-2]) / (abs(history[-1]) + 0.1 * scale)
                   if len(history) > 1 else np.inf)
            if eps <= thr or (ratio is not None and ratio > 0.25 and rel < tol):
                converged = True  # the exact decrement is below the threshold (or at rounding)
                break
        if eps <= thr or (ratio is not None and ratio < 1.0 and eps * ratio <= thr):
            mode = "full"  # the next point should be the last: verify it with all rows
        elif (not made_full and ratio is not None and ratio < EARLY_FULL_RATIO
              and eps * ratio**2 > thr):
            mode = "hessian"  # 3+ sampled passes from the end: Newton's steps from here
        elif exact and ratio is not None and ratio < 0.05:
            mode = "score"  # the full Hessian of a nearby point is good enough
        else:
            mode = "sample"
        it += 1
        made_full = made_full or mode in ("full", "hessian")
        cand = evaluate(new, mode)
        passes[mode] += 1
        halvings = 0
        while not np.isfinite(cand.objective) or (
            coef is not None
            and (cand.objective - state.objective) / (0.1 * scale + abs(cand.objective)) >= tol
        ):
            if coef is None or halvings >= maxhalf:
                message = "step-halving could not reduce the deviance"
                break
            halvings += 1
            new = (new + coef) / 2.0
            cand = evaluate(new, mode)
            passes[mode] += 1
        if message:
            break
        history.append(cand.objective)
        if progress is not None:
            moved = new - (coef if coef is not None else 0.0)
            progress(it, cand.objective, float(np.max(np.abs(moved), initial=0.0)), halvings)
        eps_prev = None if coef is None or halvings else eps
        coef, state, last = new, cand, mode
        if halvings and mode not in ("full", "hessian"):  # a poor direction: all rows next
            state, hess, exact, here = full_here(coef)
        elif cand.hessian is not None:
            hess = cand.hessian
            exact = here = mode in ("full", "hessian")
        else:
            here = False
    if not converged and not message:
        message = f"no convergence in {maxiter} iterations"
    if coef is not None and (not here or last == "hessian"):  # the full Hessian at coef
        state, hess, exact, here = full_here(coef)
    return Fit(coef=coef, state=state, n_iter=it, converged=converged, history=tuple(history),
               message=message, passes=passes)
