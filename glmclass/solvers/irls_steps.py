"""The pieces of one IRLS iteration that every path of :mod:`glmclass.solvers.irls` shares: the
domain check of a trial step, the penalised and kept systems, the step's solve, the observed-Hessian
polishing of a non-canonical fit, and the weights at R's starting means that the sampled path's
rank bound compares with the final ones."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..families import Binomial, Family
from ..links import Logit
from ..numerics.linalg import NotPositiveDefinite, spd_solve
from ..rows.blocks import Block
from ..rows.constant import is_constant
from .fit import submatrix
from .irls_qr import QRSystem
from .irls_records import Penalty


def domain_check(family: Family) -> Callable[[np.ndarray], bool] | None:
    """``family.valid`` for the blocks of eta, mostly at the cost of a min and a max; None when
    the deviance itself tells (a non-finite deviance exactly where eta leaves the domain).

    Whether eta is in the family's domain is decided by its extremes (log V is finite on an
    interval of eta, see :meth:`Family.valid`), so a block whose extremes lie in an interval
    already found valid is valid; ``family.valid`` runs only on blocks that widen it (a few per
    fit instead of every block: ~3 % of a logit fit at N = 1e6, p = 50). When the interval has
    to grow, the interval of twice the block's span around it is tried first: where it is
    valid (e.g. the whole working range of the logit), later iterations, whose extremes grow
    a little at each step, find it known.
    """
    if type(family) is Binomial and type(family.link) is Logit:
        # the domain is every finite eta, and the closed-form terms give a NaN or infinite
        # deviance for any infinite or NaN eta (y eta - max(eta, 0) is inf - inf, 0 * inf or
        # -inf there): the deviance decides, without a min and a max per pass
        return None
    known = [np.inf, -np.inf]  # an interval found valid (empty at first)

    def valid(eta: np.ndarray) -> bool:
        lo, hi = np.minimum.reduce(eta), np.maximum.reduce(eta)  # eta.min(), eta.max()
        if known[0] <= lo and hi <= known[1]:  # NaN compares False: checked in full
            return True
        if -1e300 < lo and hi < 1e300:  # (NaN fails) no overflow below
            span = hi - lo + 1.0
            wide = np.array([lo - span, hi + span])
            if family.valid(wide):  # then so is every eta between lo and hi
                lo, hi = wide
            elif not family.valid(eta):
                return False
        elif not family.valid(eta):
            return False
        known[:] = min(known[0], lo), max(known[1], hi)
        return True

    return valid


def penalised(g: np.ndarray, penalty: Penalty | None) -> np.ndarray:
    """X'WX plus the prior precision: the Hessian of the penalised objective (over 2)."""
    return g if penalty is None else g + penalty.precision


def is_pd(a: np.ndarray) -> bool:
    """Whether the symmetric matrix ``a`` is positive definite (its Cholesky factor exists)."""
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return False
    return True


def solve_step(g: np.ndarray | QRSystem, r: np.ndarray | None, keep: np.ndarray | None,
               penalty: Penalty | None, coef: np.ndarray | None,
               factor: tuple | None = None) -> np.ndarray:
    """The next coefficients (0 for aliased columns; ``keep`` None: every column is kept;
    ``factor``: the Cholesky factor of the system when it has been made, see
    :func:`~glmclass.numerics.linalg.spd_solve`).

    From the starting means (``coef`` None) ``r`` is X'Wz and the step solves the weighted least
    squares ``(X'WX + P) b = X'Wz + P m``; from coefficients ``r`` is the score X'u and the step
    solves for the change, ``(X'WX + P) delta = X'u - P (coef - m)``. A :class:`QRSystem`
    ``g`` (``r`` None) holds the same least-squares problem as a triangular factor.
    """
    if isinstance(g, QRSystem):
        keep = g.keep
        out = np.zeros(keep.shape[0]) if coef is None else np.where(keep, coef, 0.0)
        out[keep] += g.solve()
        return out
    sel = slice(None) if keep is None else keep  # a slice: views, not copies
    gk, rk = submatrix(g, keep), r[sel]
    if penalty is not None:
        pk = submatrix(penalty.precision, keep)
        gk = gk + pk
        if coef is None:
            rk = rk + pk @ penalty.mean[sel]
        else:
            rk = rk - pk @ (coef[sel] - penalty.mean[sel])
    out = np.zeros(g.shape[0]) if coef is None else (
        coef.copy() if keep is None else np.where(keep, coef, 0.0))
    try:
        out[sel] += spd_solve(gk, rk, factor)
    except NotPositiveDefinite:
        out[sel] += np.linalg.lstsq(gk, rk, rcond=None)[0]
    return out


def start_weights(family: Family, b: Block, start_eta: Callable[[Block], np.ndarray],
                   known: dict | None = None) -> np.ndarray:
    """The Fisher weights at R's starting means on the block's rows. Starting means are
    row by row, so with one prior weight and a 0/1 response they take two values: found on
    two rows (once per weight, in ``known``) instead of every row's link and terms (a probit's
    start costs an ``ndtri`` per row)."""
    w, y = b.weights, b.y
    if is_constant(w) and y is not None and y.dtype.kind == "f":
        ones = y == 1.0
        if (ones | (y == 0.0)).all():
            known = {} if known is None else known
            if float(w[0]) not in known:
                two = Block(b.X[:0], np.array([0.0, 1.0]), np.full(2, w[0]), np.zeros(2), 0)
                known[float(w[0])] = family.irls_terms(two.y, start_eta(two), two.weights)[0]
            w0, w1 = known[float(w[0])]
            return np.where(ones, w1, w0)
    return family.irls_terms(y, start_eta(b), w)[0]


def polish(run: Callable[..., tuple], coef: np.ndarray, state: tuple,
           keep: np.ndarray | None, penalty: Penalty | None, max_steps: int = 5,
           scale: float = 1.0) -> tuple:
    """Newton steps with the observed Hessian from a converged IRLS fit, kept only while the
    objective does not rise; returns ``(coef, dev, obj, gram, rhs)`` at the last accepted
    point (gram and rhs with Fisher weights). ``state`` is ``(dev, obj, gram, rhs)`` at
    ``coef``; ``keep`` as for :func:`solve_step`; ``scale`` the rows' mean prior weight."""
    dev, obj, g, r = state
    sel = slice(None) if keep is None else keep
    for _ in range(max_steps):
        _, _, g_obs, r_obs = run(coef, observed=True)
        cand = solve_step(g_obs, r_obs, keep, penalty, coef)
        c_dev, c_obj, c_g, c_r = run(cand)  # obj = inf outside the domain
        if not math.isfinite(c_obj) or c_obj > obj + 1e-13 * (abs(obj) + 0.1 * scale):
            break
        step = np.max(np.abs(cand - coef)[sel]) / (np.max(np.abs(cand[sel])) + 1e-300)
        coef, dev, obj, g, r = cand, c_dev, c_obj, c_g, c_r
        if step < 1e-13:
            break
    return coef, dev, obj, g, r
