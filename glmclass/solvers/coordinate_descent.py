"""Elastic-net penalised likelihood by proximal Newton steps with coordinate descent inside.

The objective is a smooth mean loss plus a separable penalty,

    F(b) = f(b) + sum_j l1_j |b_j| + sum_j l2_j b_j^2 / 2,

with f = deviance / (2 n) (minus the mean log-likelihood, up to a constant). Each outer step
replaces f by its quadratic model at the current b (gradient g and Hessian H: the IRLS
approximation of glmnet, the exact Hessian for the canonical logit) and minimises the model
plus the penalty by cyclic coordinate descent. The descent runs on the p x p matrix H
("covariance updates", Friedman, Hastie and Tibshirani 2010, §2.2): a coordinate update costs
O(p), a sweep O(p^2), and the data are read once per outer step, for H and g, over row blocks.
A step that does not lower F is halved (R's ``glm.fit`` rule), so every step descends.

Only the columns of an *active set* enter H (glmnet's strategy): coordinates outside it stay
at zero, and each pass over the data returns the full gradient, so the subgradient (KKT)
condition ``|g_j| <= l1_j`` of every excluded column is checked before the fit is declared
converged; violators join the set and the step is redone.

References
----------
Friedman, J., Hastie, T. and Tibshirani, R. (2010). Regularization paths for generalized
linear models via coordinate descent. *Journal of Statistical Software* 33(1).
Tibshirani, R. et al. (2012). Strong rules for discarding predictors in lasso-type problems.
*JRSS B* 74(2).
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*,
§3.4, §4.4.4.
Lee, J. D., Sun, Y. and Saunders, M. A. (2014). Proximal Newton-type methods for minimizing
composite functions. *SIAM J. Optim.* 24(3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from ..families import Family
from ..rows.blocks import Block, RowBlocks
from ..rows.derived import ChangedBlocks
from ..rows.gram import Scratch, block_gram
from .active_set import support_solve
from .control import Control
from .fit import Fit

T = TypeVar("T")

#: ``oracle(coef, active, hessian) -> (f, g, H)``: the mean loss at ``coef`` (inf when it is
#: not finite), its gradient over every coordinate, shape (m,), and, when ``hessian``, its
#: Hessian (or a positive semi-definite approximation) on the ``active`` coordinates, shape
#: (a, a) (else H may be None).
Oracle = Callable[[np.ndarray, np.ndarray, bool], tuple[float, np.ndarray, np.ndarray | None]]


def soft_threshold(z: float, t: float) -> float:
    """sign(z) max(|z| - t, 0): the proximal map of ``t |b|``."""
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


def penalty_value(coef: np.ndarray, l1: np.ndarray, l2: np.ndarray) -> float:
    """``sum l1 |b| + sum l2 b^2 / 2``; infinite weights on zero coefficients count 0."""
    nz = coef != 0
    return float(l1[nz] @ np.abs(coef[nz]) + 0.5 * (l2[nz] @ (coef[nz] * coef[nz])))


def cd_quadratic(H: np.ndarray, r: np.ndarray, coef: np.ndarray, l1: np.ndarray,
                 l2: np.ndarray, tol: float, max_sweeps: int) -> tuple[np.ndarray, int]:
    """Minimise ``b'Hb/2 - r'b + sum l1 |b| + sum l2 b^2/2`` by cyclic coordinate descent.

    Parameters
    ----------
    H : ndarray of shape (a, a)
        Symmetric positive semi-definite.
    r : ndarray of shape (a,)
    coef : ndarray of shape (a,)
        Starting point (not modified).
    l1, l2 : ndarray of shape (a,)
        Non-negative penalty weights (``l1`` may be inf: that coordinate stays 0).
    tol : float
        Stop when a sweep's largest ``(H_jj + l2_j) * change^2`` is below ``tol``.
    max_sweeps : int

    Returns
    -------
    coef : ndarray of shape (a,)
    sweeps : int

    Notes
    -----
    The gradient ``Hb`` is kept up to date: a change of b_j adds ``H[:, j] * change`` (O(a)),
    so a sweep costs O(a^2) whatever the number of rows. After a sweep over every coordinate,
    further sweeps visit the non-zero ones only until they settle, then one more full sweep
    decides whether the zero set changed (glmnet's scheme).
    """
    b = coef.astype(float, copy=True)
    a = b.shape[0]
    if a == 0:
        return b, 0
    denom = np.diag(H) + l2
    # a coordinate with no curvature and no ridge (an all-zero column) has a flat quadratic:
    # it stays where it is (0 for a column the penalty also pulls to 0)
    movable = denom > 0
    cols = [H[:, j] for j in range(a)]
    sweeps = 0
    full = True
    b, exact = support_solve(H, r, b, l1, l2, movable)  # a warm start's signs are often right
    if exact:
        return b, 0
    tried, Hb = np.sign(b).tobytes(), H @ b
    order_all = [j for j in range(a) if movable[j]]
    while sweeps < max_sweeps:
        order = order_all if full else [j for j in order_all if b[j] != 0]
        biggest = 0.0
        for j in order:
            old = b[j]
            z = r[j] - Hb[j] + H[j, j] * old
            new = soft_threshold(z, l1[j]) / denom[j]
            if new != old:
                d = new - old
                b[j] = new
                Hb += cols[j] * d
                biggest = max(biggest, denom[j] * d * d)
        sweeps += 1
        if biggest < tol:
            if full:
                break
            full = True  # the non-zero set has settled: check every coordinate once more
        else:
            full = False  # settle the non-zero coordinates first
            signs = np.sign(b).tobytes()
            if signs != tried:  # new signs: active-set steps from here
                b, exact = support_solve(H, r, b, l1, l2, movable)
                if exact:
                    return b, sweeps
                tried, Hb = np.sign(b).tobytes(), H @ b
    return b, sweeps


def prox_newton(oracle: Oracle, start: np.ndarray, l1: np.ndarray, l2: np.ndarray,
                active: np.ndarray, control: Control,
                first: tuple[float, np.ndarray, np.ndarray] | None = None) -> Fit:
    """Minimise ``f(b) + sum l1 |b| + sum l2 b^2/2`` by proximal Newton steps.

    Parameters
    ----------
    oracle : callable
        ``oracle(coef, active, hessian) -> (f, g, H)`` (see :data:`Oracle`).
    start : ndarray of shape (m,)
        Starting coefficients; coordinates outside ``active`` must be 0.
    l1, l2 : ndarray of shape (m,)
        Penalty weights per coordinate (0 for unpenalised ones).
    active : ndarray of int
        Coordinates allowed to move at first (unpenalised ones and the likely non-zero ones);
        others join when their KKT condition fails.
    control : Control
        ``maxiter`` (most outer steps), ``tol`` (the KKT conditions to ``tol`` on every
        coordinate, on the scale of the data: :func:`kkt_residual`) and ``max_sweeps``.
    first : tuple, optional
        ``(f, g, H)`` at ``start``, H on ``active`` (possibly from a nearby point): a warm
        start along a path reuses the previous fit's last pass.

    Returns
    -------
    Fit
        ``coef``; ``objective``, the penalised objective F; ``loss``, the mean loss f;
        ``gradient``, the gradient of f (the KKT conditions can be read from it); ``hessian``,
        the Hessian (approximation) of f on ``active``; ``active``, the coordinates whose
        Hessian was formed (every non-zero one is among them); ``n_iter`` (outer steps),
        ``n_sweeps`` (sweeps over all outer steps), ``converged``, ``message`` and ``history``
        (F after each outer step).

    Notes
    -----
    The Hessian is the expensive part of a pass (O(N a^2) against O(N p) for the loss and the
    gradient), and near the solution it hardly changes. It is formed again only when the
    active set changed, when a step needed halving, or when the last step did not cut the
    KKT residual tenfold (the sign of a stale model); otherwise the step uses the last
    Hessian, corrected after each step by the BFGS secant update (so that it maps the step to
    the observed change of the gradient), with the exact gradient. That has the same fixed
    point (the KKT conditions use the gradient only) and converges superlinearly in practice.
    Along a path with warm starts most passes then skip the Hessian: in the benchmark of
    ``benchmarks/bench_path.py`` about one pass in ten forms it.
    """
    b = start.astype(float, copy=True)
    active = np.asarray(active, dtype=np.intp)
    f, g, H = oracle(b, active, True) if first is None else first
    F = f + penalty_value(b, l1, l2)
    history: list[float] = []
    sweeps_total, converged, message, n_iter = 0, False, "", 0
    fresh = first is None  # whether H was formed at b
    kkt = kkt_residual(b, g, l1, l2, active, H)

    def accept(value: float) -> bool:
        # near the minimum a Newton step lowers F by (residual)^2, far below the rounding of
        # a sum over N rows: a rise within that rounding does not make a step wrong
        return bool(np.isfinite(value) and value <= F + 1e-13 * (abs(F) + 0.1))

    while n_iter < control.maxiter:
        if kkt <= control.tol and not _kkt_violations(g, l1, active).size:
            converged = True
            break
        n_iter += 1
        viol = _kkt_violations(g, l1, active)
        if viol.size:  # KKT fails off the active set: those columns join it
            active = np.union1d(active, viol)
            f, g, H = oracle(b, active, True)
            fresh = True
        ba = b[active]
        # an inexact inner solve early on (steps to a hundredth of the KKT residual), exact
        # near the solution
        tol_in = max(min((0.01 * kkt) ** 2, 1e-6), (0.01 * control.tol) ** 2)
        new_a, sweeps = cd_quadratic(H, H @ ba - g[active], ba, l1[active], l2[active], tol_in,
                                     control.max_sweeps)
        sweeps_total += sweeps
        new = np.zeros_like(b)
        new[active] = new_a
        step, halved = new - b, False
        f_new, g_new, _ = oracle(new, active, False)
        F_new = f_new + penalty_value(new, l1, l2)
        if not accept(F_new) and not fresh:  # a stale Hessian first: form it at b, step again
            f, g, H = oracle(b, active, True)
            fresh = True
            continue
        for _ in range(60):  # step-halving until F does not rise
            if accept(F_new):
                break
            halved, step = True, step / 2
            new = b + step
            f_new, g_new, _ = oracle(new, active, False)
            F_new = f_new + penalty_value(new, l1, l2)
        else:
            message = "step-halving failed to lower the objective"
            break
        # the old Hessian, corrected along the step to match the change of the gradient
        H = secant_update(H, (new - b)[active], (g_new - g)[active])
        b, f, g, F = new, f_new, g_new, F_new
        history.append(F)
        last, kkt = kkt, kkt_residual(b, g, l1, l2, active, H)
        # a stale Hessian is kept while it cuts the residual at least tenfold per step
        if kkt > control.tol and (halved or kkt > 0.1 * last):
            H = oracle(b, active, True)[2]
            fresh = True
        else:
            fresh = False
    if not converged and not message:
        message = f"no convergence in {control.maxiter} proximal Newton steps"
    return Fit(coef=b, objective=float(F), loss=float(f), gradient=g, hessian=H, active=active,
               n_iter=n_iter, n_sweeps=sweeps_total, converged=converged, message=message,
               history=tuple(history))


def secant_update(H: np.ndarray, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The BFGS update of a Hessian approximation with a step ``s`` and the change ``y`` of
    the gradient it caused: the result satisfies ``H s = y`` and stays positive definite when
    ``s'y > 0`` (always, for a convex loss; otherwise H is returned unchanged)."""
    sy = float(s @ y)
    Hs = H @ s
    sHs = float(s @ Hs)
    if not (sy > 1e-12 * np.sqrt(float(s @ s) * float(y @ y)) and sHs > 0):
        return H
    return H - np.outer(Hs, Hs) / sHs + np.outer(y, y) / sy


def kkt_residual(b: np.ndarray, g: np.ndarray, l1: np.ndarray, l2: np.ndarray,
                 active: np.ndarray, H: np.ndarray) -> float:
    """The largest violation of the optimality (KKT) conditions on the active coordinates,
    each on the scale of the data (divided by ``sqrt(H_jj + l2_j)``).

    A non-zero coordinate needs ``g_j + l2_j b_j + l1_j sign(b_j) = 0``, a zero one
    ``|g_j| <= l1_j``. Divided by the square root of the coordinate's curvature, the residual
    is the distance to the coordinate's own minimum in units of its curvature's scale, so a
    tolerance on it bounds the error of the coefficients (up to the conditioning of H).
    """
    ba, ga, l1a, l2a = b[active], g[active], l1[active], l2[active]
    nz = ba != 0
    r = np.where(nz, np.abs(ga + l2a * ba + np.where(nz, l1a, 0.0) * np.sign(ba)),
                 np.maximum(np.abs(ga) - l1a, 0.0))
    d = np.diag(H) + l2a
    r = np.where(d > 0, r / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
    return float(r.max(initial=0.0))


def _kkt_violations(g: np.ndarray, l1: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Coordinates outside ``active`` (all at 0) whose subgradient condition ``|g_j| <= l1_j``
    fails, with a relative slack of 1e-9 so that rounding in g cannot add columns forever."""
    out = np.ones(g.shape[0], dtype=bool)
    out[active] = False
    return np.flatnonzero(out & (np.abs(g) > l1 * (1 + 1e-9) + 1e-300))


class _Shift:
    """The change of a :class:`ShiftedBlocks`' blocks, ``X - shift`` (picklable)."""

    def __init__(self, shift: np.ndarray) -> None:
        self.shift = shift

    def __call__(self, b: Block) -> Block:
        return Block(b.X - self.shift, b.y, b.weights, b.offset, b.start)


class ShiftedBlocks(ChangedBlocks):
    """The rows of a source with their design columns shifted, ``X - 1 shift'``, block by
    block: a centred design for a pass that takes no shift of its own (the multinomial
    deviance), without an N x p centred copy and whatever the source (in memory or in Dask
    partitions: the shift travels with the block function).

    Each block's shifted X is computed elementwise from the source's block, so its values are
    those of ``X - shift`` formed at once.

    Parameters
    ----------
    source : RowBlocks
        The rows.
    shift : ndarray of shape (p,)
        Subtracted from every row of the design.
    """

    def __init__(self, source: RowBlocks, shift: np.ndarray) -> None:
        shift = np.asarray(shift, dtype=float)
        if shift.shape != (source.n_cols,):
            raise ValueError(f"shift must have shape ({source.n_cols},), one value per design "
                             f"column, got {shift.shape}")
        super().__init__(source, _Shift(shift))
        self.shift = shift

    def over(self, source: RowBlocks) -> ShiftedBlocks:
        return ShiftedBlocks(source, self.shift)

    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        keep = np.asarray(keep)
        return ShiftedBlocks(self.source.take_columns(keep), self.shift[keep])

    def intercept_only(self) -> RowBlocks:
        return self.source.intercept_only()

    def __repr__(self) -> str:
        return f"<ShiftedBlocks of {self.source!r}>"


#: Binomial links whose log-likelihood is concave in eta (log-concave mu and 1 - mu): their
#: observed information is positive semi-definite and gives Newton's quadratic convergence.
CONCAVE_BINOMIAL_LINKS = ("logit", "probit", "cloglog", "loglog")

#: glmnet's early stop of a generated path (``glmnet.control``: ``devmax``, ``fdev``, ``mnlam``):
#: the deviance ratio at which the fit counts as saturated, the least gain in it per alpha,
#: and the number of alphas always fitted.
PATH_DEV_MAX, PATH_DEV_CHANGE, PATH_MIN_ALPHAS = 0.999, 1e-5, 5


def glm_oracle(blocks: RowBlocks, family: Family, total_weight: float,
               shift: np.ndarray | None = None) -> Oracle:
    """The mean deviance of a GLM, ``deviance / (2 n)``, as an :data:`Oracle`.

    Parameters
    ----------
    blocks : RowBlocks
        The rows: design X (n_obs, p), response on the family's scale, prior weights, offset.
    family : Family
    total_weight : float
        n: the sum of the prior weights, so that f is a weighted mean (glmnet's convention).
    shift : ndarray of shape (p,), optional
        Work on ``X - 1 shift'`` (the columns after the intercept centred, so that the
        coordinate descent is not slowed by the correlation of a column with the intercept).

    Returns
    -------
    callable
        ``oracle(coef, active, hessian)``: one pass over the rows giving the mean deviance /
        2, its gradient ``-X'u / n`` (u the score per unit of eta) and, when ``hessian``, the
        Fisher information ``X_A' W X_A / n`` of the active columns (the exact Hessian for a
        canonical link; the observed information for the binomial links of
        :data:`CONCAVE_BINOMIAL_LINKS`, which stays positive semi-definite and makes the steps
        Newton's). Only the active columns are copied (and centred) per block; the
        linear predictor and the gradient apply the shift algebraically.
    """
    p = blocks.n_cols
    scale = 1.0 / (2.0 * total_weight)
    s = np.zeros(p) if shift is None else shift
    observed = family.name == "Binomial" and family.link.name in CONCAVE_BINOMIAL_LINKS \
        and not family.is_canonical

    def oracle(coef: np.ndarray, active: np.ndarray, hessian: bool = True):
        nz = np.flatnonzero(coef)
        few = nz.size <= p // 4  # a matrix-vector product on a few columns' copy, else all
        cnz = coef[nz]
        const = -float(s @ coef)  # X_c coef = X coef - s'coef: no centred copy of X for eta
        a = active.shape[0]
        whole = a == p
        scratch = Scratch(a)
        s_a = s[active]

        def one(b: Block):
            xb = b.X
            with np.errstate(over="ignore", invalid="ignore"):
                eta = (xb[:, nz] @ cnz if few else xb @ coef) + (b.offset + const)
            w, u, dev = family.irls_terms(b.y, eta, b.weights, observed=observed and hessian)
            grad = xb.T @ u - s * u.sum()
            if not hessian:
                return dev, grad
            xa = np.subtract(xb, s, out=scratch.get(xb.shape[0])) if whole else xb[:, active]
            if not whole:
                xa -= s_a
            return dev, grad, block_gram(xa, w, xa)  # xa is this pass's own copy

        zero = (0.0, np.zeros(p)) + ((np.zeros((a, a)),) if hessian else ())
        out = blocks.reduce(one, zero)
        dev, grad = out[0], out[1]
        gram = 2.0 * scale * out[2] if hessian else None
        if not np.isfinite(dev):
            return np.inf, grad, gram
        return dev * scale, -2.0 * scale * grad, gram

    return oracle


def lambda_sequence(alpha_max: float, n_alphas: int, ratio: float) -> np.ndarray:
    """``alpha_max * ratio^(k / (n - 1))``, k = 0 .. n - 1: glmnet's log-spaced sequence."""
    if n_alphas == 1:
        return np.array([alpha_max])
    return alpha_max * ratio ** (np.arange(n_alphas) / (n_alphas - 1))


def strong_set(g: np.ndarray, l1_new: np.ndarray, l1_old: np.ndarray) -> np.ndarray:
    """Coordinates the sequential strong rule keeps at the next penalty:
    ``|g_j| >= 2 l1_new_j - l1_old_j`` (Tibshirani et al. 2012); unpenalised ones always."""
    return np.flatnonzero((np.abs(g) >= 2 * l1_new - l1_old) | (l1_new == 0))


def null_fit(oracle: Oracle, start: np.ndarray, l1_unit: np.ndarray,
             control: Control) -> Fit:
    """The fit with every penalised coordinate at 0 (only those with ``l1_unit == 0`` move):
    the solution at and above alpha_max, and the gradient that defines alpha_max."""
    free = l1_unit == 0
    l1 = np.where(free, 0.0, np.inf)
    s = np.where(free, start, 0.0)
    return prox_newton(oracle, s, l1, np.zeros_like(l1), np.flatnonzero(free), control)


def alpha_max(grad: np.ndarray, l1_unit: np.ndarray) -> float:
    """The smallest alpha at which every penalised coordinate is 0: ``max |g_j| / l1_unit_j``
    over the penalised coordinates, g the gradient of the null fit (glmnet's lambda_max)."""
    pen = l1_unit > 0
    if not pen.any():
        return 0.0
    return float(np.max(np.abs(grad[pen]) / l1_unit[pen]))


def fit_path(oracle: Oracle, null: Fit, alphas: np.ndarray, l1_unit: np.ndarray,
             l2_unit: np.ndarray, control: Control, stop: bool = False,
             report: Callable[[int, float, float, int], None] | None = None) -> Fit:
    """Fits along a decreasing sequence of alphas with warm starts and the strong rule.

    Parameters
    ----------
    oracle : callable
    null : Fit
        :func:`null_fit` (the solution at alpha_max: the path starts there).
    alphas : ndarray of shape (n_alphas,)
        Decreasing penalty weights.
    l1_unit, l2_unit : ndarray of shape (m,)
        Penalty weights per coordinate at alpha = 1.
    control : Control
        ``maxiter`` (most outer steps), ``tol`` (the KKT conditions to ``tol`` on every
        coordinate, on the scale of the data: :func:`kkt_residual`) and ``max_sweeps``.
    stop : bool
        Stop early as glmnet does on the sequence it generates: from the fifth alpha on, once
        the deviance ratio ``1 - loss / null.loss`` reaches :data:`PATH_DEV_MAX` or gains
        less than :data:`PATH_DEV_CHANGE` from the previous alpha (the rest of the path would
        hardly change the fit). The returned arrays then end at that alpha.
    report : callable, optional
        ``report(k, alpha, deviance_ratio, n_iter)`` after each alpha (progress lines).

    Returns
    -------
    Fit
        ``coef`` of shape (n_alphas, m), the solver-coordinate coefficients at each alpha;
        ``loss``, ``n_iter`` and ``converged`` per alpha (arrays).

    Notes
    -----
    At each alpha the active set is the coordinates non-zero so far, the unpenalised ones and
    those the sequential strong rule keeps; :func:`prox_newton` adds any whose KKT condition
    fails, so the rule only saves work and never changes a result. When the set is unchanged,
    the previous fit's last pass (loss, gradient, Hessian at its estimate) starts the next fit,
    so moving down the path costs one pass per proximal Newton step and nothing more.
    """
    n, m = alphas.shape[0], null.coef.shape[0]
    coef = np.zeros((n, m))
    loss, n_iter = np.zeros(n), np.zeros(n, dtype=int)
    converged = np.zeros(n, dtype=bool)
    prev, prev_alpha = null, (alphas[0] if n else 0.0)
    ever = np.zeros(m, dtype=bool)
    for k, a in enumerate(alphas):
        l1, l2 = a * l1_unit, a * l2_unit
        keep = np.zeros(m, dtype=bool)
        keep[strong_set(prev.gradient, l1, prev_alpha * l1_unit)] = True
        ever |= prev.coef != 0
        active = np.flatnonzero(keep | ever)
        same = active.shape == prev.active.shape and np.array_equal(active, prev.active)
        first = (prev.loss, prev.gradient, prev.hessian) if same else None
        fit = prox_newton(oracle, prev.coef, l1, l2, active, control, first)
        coef[k], loss[k], n_iter[k], converged[k] = fit.coef, fit.loss, fit.n_iter, fit.converged
        prev, prev_alpha = fit, a
        ratio = 1.0 - loss[: k + 1] / null.loss if null.loss > 0 else np.zeros(k + 1)
        if report is not None:
            report(k, float(a), float(ratio[k]), int(fit.n_iter))
        if stop and k + 1 >= PATH_MIN_ALPHAS and (
                ratio[k] >= PATH_DEV_MAX or ratio[k] - ratio[k - 1] < PATH_DEV_CHANGE):
            n = k + 1
            break
    return Fit(coef=coef[:n], loss=loss[:n], n_iter=n_iter[:n], converged=converged[:n])
