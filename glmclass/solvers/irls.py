"""Iteratively reweighted least squares with R's ``glm.fit`` semantics.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.3 (IRLS).
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, §2.5.
R Core Team, ``glm.fit`` (stats package): step-halving and the relative-deviance rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..blocks import Block, RowBlocks
from ..errors import DataError
from ..families import Family
from ..numerics.linalg import NotPositiveDefinite, aliased_columns, spd_solve
from .gram import fused_pass


@dataclass(frozen=True)
class Control:
    """Settings of the IRLS loop.

    Attributes
    ----------
    maxiter : int
        Largest number of iterations.
    tol : float
        Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol`` (R's rule).
    maxhalf : int
        Largest number of step halvings in one iteration.
    hessian : {"expected", "observed"}
        Fisher scoring (IRLS) or Newton's method with the exact Hessian.
    progress : callable, optional
        ``progress(iteration, objective, step, halvings)`` after each accepted iteration
        (:class:`glmclass.progress.IterationLog` for ``fit(disp=True)``); ``step`` is the
        largest change of a coefficient.

    The size of a block of rows is the row source's business, not the solver's.
    """

    maxiter: int = 50
    tol: float = 1e-10
    maxhalf: int = 25
    hessian: str = "expected"
    progress: Callable[[int, float, float, int], None] | None = None


@dataclass(frozen=True)
class Penalty:
    """A Gaussian prior N(mean, precision^-1) on the coefficients: the objective becomes
    ``deviance + (b - mean)' precision (b - mean)`` (minus twice the log posterior)."""

    precision: np.ndarray
    mean: np.ndarray

    def value(self, coef: np.ndarray) -> float:
        d = coef - self.mean
        return float(d @ self.precision @ d)


@dataclass(frozen=True)
class IRLSFit:
    """Result record of :func:`irls`.

    Attributes
    ----------
    coef : ndarray of shape (p,)
        Estimates; NaN for aliased columns. The solver keeps nothing of length N: the linear
        predictor is ``blocks.linear_predictor(np.where(aliased, 0, coef))``.
    deviance : float
        Deviance at ``coef`` (without any penalty).
    gram : ndarray of shape (p, p)
        X'WX (Fisher weights) at ``coef``; rows/columns of aliased columns are zero.
    aliased : ndarray of bool, shape (p,)
    n_iter : int
    converged : bool
    history : tuple of float
        Objective after each iteration.
    message : str
        Why the loop stopped, when it did not converge.
    """

    coef: np.ndarray
    deviance: float
    gram: np.ndarray
    aliased: np.ndarray
    n_iter: int
    converged: bool
    history: tuple
    message: str = ""


def irls(
    blocks: RowBlocks,
    family: Family,
    start: np.ndarray | None = None,
    control: Control = Control(),
    penalty: Penalty | None = None,
) -> IRLSFit:
    """Fit a GLM by IRLS (or Newton's method) with step-halving.

    Parameters
    ----------
    blocks : RowBlocks
        The rows: design X (n_obs, p), response y (n_obs,) on the family's scale, prior weights
        (frequency weights times variance weights) and offset. Only these rows take part (drop
        rows of weight 0 with ``blocks.take_rows``, as R's ``glm.fit``).
    family : Family
    start : ndarray of shape (p,), optional
        Starting coefficients; default starts from the family's ``start_eta`` (R's
        ``mustart``, moved inside the link's range).
    control : Control
    penalty : Penalty, optional
        Gaussian prior turning the fit into penalised IRLS for the posterior mode.

    Returns
    -------
    IRLSFit

    Notes
    -----
    Every iteration is one :func:`~glmclass.solvers.gram.fused_pass` over the rows; the
    linear predictor exists one block at a time, so the solver holds O(p^2) memory.
    """
    p = blocks.n_cols
    observed = control.hessian == "observed"
    valid = _domain_check(family)

    def terms(b: Block, eta_b: np.ndarray, obs: bool, check: bool = True):
        w, u, dev = family.irls_terms(b.y, eta_b, b.weights, observed=obs)
        if check and not valid(eta_b):  # outside the domain: the step gets halved
            dev = np.inf
        with np.errstate(over="ignore", invalid="ignore"):  # a wild step: inf, then halving
            return w, w * (eta_b - b.offset) + u, dev

    def run(coef, observed=observed, check=True):
        def eta(b: Block) -> np.ndarray:
            e = b.X @ coef
            e += b.offset
            return e

        dev, g, r = fused_pass(blocks, eta, lambda b, e: terms(b, e, observed, check))
        if observed and not _is_pd(_penalised(g, penalty)[np.ix_(keep, keep)]):
            # far from the optimum the observed information may be indefinite: score instead
            dev, g, r = fused_pass(blocks, eta, lambda b, e: terms(b, e, False, check))
        pen = penalty.value(coef) if penalty is not None else 0.0
        return dev, dev + pen, g, r

    keep = np.ones(p, dtype=bool)
    if start is None:  # R's mustart, block by block
        dev, g, r = fused_pass(blocks, lambda b: family.start_eta(b.y, b.weights),
                               lambda b, e: terms(b, e, observed, check=False))
        coef_old, obj_old = None, dev
    else:  # as before, a given start is not checked against the domain
        coef_old = np.asarray(start, dtype=float)
        dev, obj_old, g, r = run(coef_old, check=False)
    dev_old = dev
    aliased = aliased_columns(_penalised(g, penalty))  # a proper prior makes any design full rank
    keep = ~aliased

    history, converged, message, it = [], False, "", 0
    for it in range(1, control.maxiter + 1):
        coef = _solve(g, r, keep, penalty)
        dev, obj, g_new, r_new = run(coef)  # an eta outside the domain gives obj = inf
        halvings = 0
        while not np.isfinite(obj) or (
            (it > 1 or start is not None) and (obj - obj_old) / (0.1 + abs(obj)) >= control.tol
        ):
            if coef_old is None or halvings >= control.maxhalf:
                message = "step-halving could not reduce the deviance"
                break
            halvings += 1
            coef = (coef + coef_old) / 2.0
            dev, obj, g_new, r_new = run(coef)
        if message:
            dev = dev_old  # back to the last accepted point
            break
        history.append(obj)
        converged = abs(obj - obj_old) / (abs(obj) + 0.1) < control.tol
        if control.progress is not None:
            moved = coef - (coef_old if coef_old is not None else 0.0)
            control.progress(it, obj, float(np.max(np.abs(moved[keep]), initial=0.0)), halvings)
        coef_old, obj_old, dev_old, g, r = coef, obj, dev, g_new, r_new
        if converged:
            break
    if coef_old is None:  # the first step from the starting means left the domain (as R)
        raise DataError(
            "no valid set of coefficients has been found: the first IRLS step left the domain "
            f"of the {family.name} family with the {family.link.name} link; pass start_params "
            "inside it (e.g. an intercept of link(mean(y)) and zero slopes)")
    if converged and not observed and not family.is_canonical and keep.any():
        # Fisher scoring converges only linearly for a non-canonical link, so R's deviance rule
        # stops ~sqrt(tol) away from the optimum: finish with exact-Hessian Newton steps
        coef_old, dev, obj_old, g, r = _polish(run, coef_old, (dev, obj_old, g, r), keep,
                                               penalty)
    if not converged and not message:
        message = f"no convergence in {control.maxiter} iterations"
    out = np.where(keep, coef_old, np.nan)
    g = np.where(np.outer(keep, keep), g, 0.0)
    return IRLSFit(out, dev, g, aliased, it, converged, tuple(history), message)


def _polish(run, coef, state, keep, penalty, max_steps: int = 5):
    """Newton steps with the observed Hessian from a converged IRLS fit, kept only while the
    objective does not rise; returns ``(coef, dev, obj, gram, rhs)`` at the last accepted
    point (gram and rhs with Fisher weights). ``state`` is ``(dev, obj, gram, rhs)`` at
    ``coef``."""
    dev, obj, g, r = state
    for _ in range(max_steps):
        _, _, g_obs, r_obs = run(coef, observed=True)
        cand = _solve(g_obs, r_obs, keep, penalty)
        c_dev, c_obj, c_g, c_r = run(cand)  # obj = inf outside the domain
        if not np.isfinite(c_obj) or c_obj > obj + 1e-13 * (abs(obj) + 0.1):
            break
        step = np.max(np.abs(cand - coef)[keep]) / (np.max(np.abs(cand[keep])) + 1e-300)
        coef, dev, obj, g, r = cand, c_dev, c_obj, c_g, c_r
        if step < 1e-13:
            break
    return coef, dev, obj, g, r


def _domain_check(family: Family) -> Callable[[np.ndarray], bool]:
    """``family.valid`` for the blocks of eta, mostly at the cost of a min and a max.

    Whether eta is in the family's domain is decided by its extremes (log V is finite on an
    interval of eta, see :meth:`Family.valid`), so a block whose extremes lie in an interval
    already found valid is valid; ``family.valid`` runs only on blocks that widen it (a few per
    pass instead of every block: ~3 % of a logit fit at N = 1e6, p = 50).
    """
    known = [np.inf, -np.inf]  # the hull of the blocks found valid (empty at first)

    def valid(eta: np.ndarray) -> bool:
        lo, hi = eta.min(), eta.max()
        if known[0] <= lo and hi <= known[1]:  # NaN compares False: checked in full
            return True
        if not family.valid(eta):
            return False
        known[:] = min(known[0], lo), max(known[1], hi)
        return True

    return valid


def _penalised(g: np.ndarray, penalty: Penalty | None) -> np.ndarray:
    """X'WX plus the prior precision: the Hessian of the penalised objective (over 2)."""
    return g if penalty is None else g + penalty.precision


def _is_pd(a: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return False
    return True


def _solve(g: np.ndarray, r: np.ndarray, keep: np.ndarray, penalty: Penalty | None) -> np.ndarray:
    """Coefficients of the weighted least-squares step on the kept columns (0 for aliased)."""
    gk, rk = g[np.ix_(keep, keep)], r[keep]
    if penalty is not None:
        pk = penalty.precision[np.ix_(keep, keep)]
        gk = gk + pk
        rk = rk + pk @ penalty.mean[keep]
    coef = np.zeros(g.shape[0])
    try:
        coef[keep] = spd_solve(gk, rk)
    except NotPositiveDefinite:
        coef[keep] = np.linalg.lstsq(gk, rk, rcond=None)[0]
    return coef
