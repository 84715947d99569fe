"""Firth's bias-reduced logistic regression: maximise the penalised log-likelihood
``l*(b) = l(b) + 1/2 log|I(b)|`` (the Jeffreys prior) by modified-score Fisher scoring.

For the logit link the gradient of ``l*`` is Firth's modified score

.. math:: U^*(\\beta) = \\sum_i \\{w_i (y_i - \\mu_i) + h_i (1/2 - \\mu_i)\\} x_i,

with prior weights ``w_i`` and ``h_i`` the diagonal of the hat matrix
``W^1/2 X (X'WX)^-1 X' W^1/2`` of the Fisher weights ``W = diag(w_i mu_i (1 - mu_i))``
(Firth 1993; Heinze & Schemper 2002). Each iteration takes the step
``I(b)^-1 U*(b)`` (brglm2's ``AS_mean`` and logistf's Newton-Raphson take the same one), halved
until ``l*`` does not fall. ``I(b) = X'WX`` and the hat values come from one QR factor of the
weighted design ``W^1/2 X = Q R``: ``h_i = ||Q_i||^2`` and ``log|I| = 2 sum log|R_jj|``; no
matrix is inverted and the Gram is never formed to be factorised.

Coefficients may be held fixed (``free``): the others maximise ``l*`` with the penalty of the
*whole* design, the constrained fits of logistf's profile intervals and penalised
likelihood-ratio tests (Heinze & Schemper 2002, §2.2).

References
----------
Firth, D. (1993). Bias reduction of maximum likelihood estimates. *Biometrika* 80, 27-38.
Heinze, G. and Schemper, M. (2002). A solution to the problem of separation in logistic
regression. *Statistics in Medicine* 21, 2409-2419.
Kosmidis, I. and Firth, D. (2021). Jeffreys-prior penalty, finiteness and shrinkage in
binomial-response generalized linear models. *Biometrika* 108, 71-82.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla
from scipy.special import expit, log_expit, xlogy

from ..rows.blocks import RowBlocks
from .control import Control
from .fit import Fit

_TRTRI = sla.get_lapack_funcs("trtri", dtype=np.float64)
#: Firth's default settings (logistf's 100 iterations).
FIRTH_CONTROL = Control.for_method("firth")


@dataclass(frozen=True)
class _State:
    """Everything one evaluation at ``coef`` gives: the objective and the next step's pieces."""

    coef: np.ndarray
    loglik: float
    logdet: float
    r: np.ndarray | None  # R of the weighted design's QR (None when it is singular)
    hat: np.ndarray
    score: np.ndarray  # the modified score U*

    @property
    def penalized(self) -> float:
        return self.loglik + 0.5 * self.logdet


def _state(X: np.ndarray, y: np.ndarray, w: np.ndarray, offset: np.ndarray,
           coef: np.ndarray) -> _State:
    eta = X @ coef + offset
    mu = expit(eta)
    loglik = float(np.sum(w * (y * log_expit(eta) + (1.0 - y) * log_expit(-eta))))
    fisher = w * mu * expit(-eta)  # w mu (1 - mu), without cancellation when mu is near 1
    q, r = sla.qr(X * np.sqrt(fisher)[:, None], mode="economic", check_finite=False)
    d = np.abs(np.diag(r))
    if not (np.all(d > 0) and np.all(np.isfinite(d)) and np.isfinite(loglik)):
        return _State(coef, loglik, -np.inf, None, np.zeros_like(y), np.zeros_like(coef))
    hat = np.einsum("ij,ij->i", q, q)
    score = X.T @ (w * (y - mu) + hat * (0.5 - mu))
    return _State(coef, loglik, float(2.0 * np.sum(np.log(d))), r, hat, score)


def _step(st: _State, free: np.ndarray) -> np.ndarray:
    """``I_ff^-1 U*_f`` on the free coefficients, by two triangular solves with the R of a QR
    of the free columns of the weighted design (the R of ``R[:, free]``: no Gram is formed)."""
    rf = st.r[:, free]
    if not free.all():
        rf = sla.qr(rf, mode="r", check_finite=False)[0][: rf.shape[1]]
    u = sla.solve_triangular(rf, st.score[free], trans="T", check_finite=False)
    out = np.zeros_like(st.coef)
    out[free] = sla.solve_triangular(rf, u, check_finite=False)
    return out


#: Longest extrapolation of a scoring step along its direction (see :func:`_line_search`).
MAX_STRETCH = 64.0
#: A secant step within this fraction of the scoring step is not worth another evaluation.
STRETCH_MIN = 0.05


def _line_search(at, st: _State, delta: np.ndarray, free: np.ndarray, obj_old: float,
                 control: Control) -> tuple[_State, np.ndarray, int] | None:
    """The next point along the scoring step ``delta``: halved while ``-2 l*`` rises (R's
    rule, by more than ``tol`` relative), else moved to the secant root of the directional
    derivative of ``l*`` when that is more than 5 % away from the full step.

    The scoring step uses the Fisher information, not the Hessian of ``l*``; where the penalty
    dominates (constrained fits far out on a profile, nearly separated data) the two differ
    by a large factor, and the full step falls short of the maximum along its direction or
    overshoots it (iterates that oscillate and shrink slowly). The modified score is the
    gradient of ``l*``, so the directional derivatives at both ends of the step give a
    secant (Newton) step along it, kept when ``l*`` is higher there.
    Returns ``(state, step taken, halvings)``, or None when halving fails.
    """
    step, halvings = delta, 0
    new = at(st.coef + step)
    while not np.isfinite(new.penalized) or (
            (-2.0 * new.penalized - obj_old) / (0.1 + abs(2.0 * new.penalized)) >= control.tol):
        if halvings >= control.maxhalf:
            return None
        halvings += 1
        step = step / 2.0
        new = at(st.coef + step)
    g0, g1 = st.score[free] @ step[free], new.score[free] @ step[free]
    if halvings == 0 and g1 < g0:  # concave along the step: its secant maximum
        stretch = min(g0 / (g0 - g1), MAX_STRETCH)
        if abs(stretch - 1.0) > STRETCH_MIN:
            far = at(st.coef + stretch * step)
            if np.isfinite(far.penalized) and far.penalized > new.penalized:
                return far, stretch * step, 0
    return new, step, halvings


def firth_logit(X: np.ndarray, y: np.ndarray, weights: np.ndarray, offset: np.ndarray,
                start: np.ndarray | None = None, control: Control = FIRTH_CONTROL,
                free: np.ndarray | None = None, intercept: int | None = None) -> Fit:
    """Maximise Firth's penalised log-likelihood of a logistic regression.

    Parameters
    ----------
    X : ndarray of shape (n_obs, k)
        Full-rank design (aliased columns already dropped).
    y : ndarray of shape (n_obs,)
        Responses in [0, 1] (0/1, or proportions with their trials in ``weights``).
    weights : ndarray of shape (n_obs,)
        Positive prior weights (frequency weights times trials); rows of weight 0 must be
        dropped by the caller.
    offset : ndarray of shape (n_obs,)
    start : ndarray of shape (k,), optional
        Starting coefficients (default 0, as logistf); fixed coefficients keep these values.
    control : Control
        ``maxiter``, ``tol`` (see Notes), ``maxhalf`` and ``progress``.
    free : ndarray of bool, shape (k,), optional
        The coefficients to estimate (default all); the penalty is always that of all of X.
    intercept : int, optional
        Index of a column of ones. When its coefficient is free, the fit runs on the design
        with the other columns centred (their weighted means ``s`` subtracted), the same model
        in the coordinates ``gamma = beta + e_0 (s' beta)``: ``l*`` is unchanged (the
        transformation has determinant 1) and a column such as ``x + 1e8`` keeps its digits.

    Returns
    -------
    Fit
        ``coef`` (fixed coefficients keep their given values); ``loglik``, the ordinary
        log-likelihood ``sum w (y log mu + (1 - y) log(1 - mu))`` (without the binomial
        coefficients of proportions); ``logdet``, ``log|X'WX|``; ``penalized``, ``loglik +
        logdet / 2`` (the objective); ``deviance``, the binomial deviance; ``gram``, the
        Fisher information X'WX; ``cov``, its inverse from the triangular factor of the
        (centred) weighted design (accurate where ``gram`` is nearly singular only because a
        column has a large mean; non-finite when the information is singular); ``hat``, the
        hat values (they sum to k); ``n_iter``, ``converged``, ``history`` (``-2 l*`` after
        each iteration), ``message``; ``aliased`` all False (the model marks the columns it
        dropped before the fit).

    Notes
    -----
    Converged when the relative change of ``-2 l*`` is below ``tol`` (R's rule, ``|obj -
    obj_old| / (|obj| + 0.1)``) and the largest change of a coefficient is below ``tol (1 +
    |b_j|)``. Both are needed: scoring with the Fisher information instead of the Hessian of
    ``l*`` converges linearly (usually fast; :func:`_line_search` repairs the slow cases), so
    a small change of the objective alone would leave ~sqrt(tol) in the estimates.
    """
    k = X.shape[1]
    free = np.ones(k, dtype=bool) if free is None else np.asarray(free, dtype=bool)
    coef = np.zeros(k) if start is None else np.array(start, dtype=float)
    shift = None
    if intercept is not None and free[intercept] and k > 1:
        shift = weights @ X / weights.sum()
        shift[intercept] = 0.0
        X = X - shift
        coef[intercept] += shift @ coef

    def at(c: np.ndarray) -> _State:
        return _state(X, y, weights, offset, c)

    sat = float(np.sum(weights * (xlogy(y, y) + xlogy(1.0 - y, 1.0 - y))))
    return _maximise(at, coef, free, control, shift, intercept, sat)


def firth_logit_rows(rows: RowBlocks, start: np.ndarray | None = None,
                     control: Control = FIRTH_CONTROL, free: np.ndarray | None = None,
                     intercept: int | None = None) -> Fit:
    """:func:`firth_logit` over a row source (rows in memory or in Dask partitions): the same
    iteration, each evaluation two passes over the rows (the information, the log-likelihood
    and the score's first part; then the hat values through the information's Cholesky factor
    R, ``h_i = w_i mu_i (1 - mu_i) ||R^-T x_i||^2``, and the score's penalty part). The hat
    values are not kept (``Fit.hat`` is None): they are a per-row map of ``cov``.

    Parameters
    ----------
    rows : RowBlocks
        Full-rank design, responses in [0, 1], positive prior weights and the offset (rows of
        weight 0 left out by the caller).
    start, control, free, intercept
        As :func:`firth_logit`.
    """
    k = rows.n_cols
    free = np.ones(k, dtype=bool) if free is None else np.asarray(free, dtype=bool)
    coef = np.zeros(k) if start is None else np.array(start, dtype=float)
    shift = None
    if intercept is not None and free[intercept] and k > 1:
        wx, wsum = rows.reduce(lambda b: (b.weights @ b.X, float(np.sum(b.weights))),
                               (np.zeros(k), 0.0))
        shift = wx / wsum
        shift[intercept] = 0.0
        coef[intercept] += shift @ coef

    def at(c: np.ndarray) -> _State:
        return _rows_state(rows, c, shift)

    def sat_part(b) -> float:
        return float(np.sum(b.weights * (xlogy(b.y, b.y) + xlogy(1.0 - b.y, 1.0 - b.y))))

    return _maximise(at, coef, free, control, shift, intercept, rows.reduce(sat_part, 0.0))


def _rows_state(rows: RowBlocks, coef: np.ndarray, shift: np.ndarray | None) -> _State:
    """:func:`_state` in two passes over ``rows`` (see :func:`firth_logit_rows`)."""
    k = coef.shape[0]

    def design(b) -> np.ndarray:
        return b.X if shift is None else b.X - shift

    def first(b):
        X = design(b)
        eta = X @ coef + b.offset
        mu = expit(eta)
        ll = float(np.sum(b.weights * (b.y * log_expit(eta) + (1.0 - b.y) * log_expit(-eta))))
        fisher = b.weights * mu * expit(-eta)
        return ll, (X * fisher[:, None]).T @ X, X.T @ (b.weights * (b.y - mu))

    loglik, gram, score = rows.reduce(first, (0.0, np.zeros((k, k)), np.zeros(k)))
    try:
        r = sla.cholesky(gram, lower=False, check_finite=True)
    except (np.linalg.LinAlgError, ValueError):
        r = None
    if r is None or not (np.all(np.diag(r) > 0) and np.isfinite(loglik)):
        return _State(coef, loglik, -np.inf, None, None, np.zeros_like(coef))
    rinv = _TRTRI(r, lower=0)[0]

    def second(b) -> np.ndarray:
        X = design(b)
        eta = X @ coef + b.offset
        mu = expit(eta)
        q = (X * np.sqrt(b.weights * mu * expit(-eta))[:, None]) @ rinv
        return X.T @ (np.einsum("ij,ij->i", q, q) * (0.5 - mu))

    score = score + rows.reduce(second, np.zeros(k))
    return _State(coef, loglik, float(2.0 * np.sum(np.log(np.diag(r)))), r, None, score)


def _maximise(at, coef: np.ndarray, free: np.ndarray, control: Control,
              shift: np.ndarray | None, intercept: int | None, sat: float) -> Fit:
    """The modified-score iteration from ``coef`` (``at(c)`` evaluates a point)."""
    k = coef.shape[0]
    st = at(coef)
    if not np.isfinite(st.penalized):
        raise ValueError("the starting coefficients (start_params, default 0) give fitted "
                         "probabilities of exactly 0 or 1 on so many rows that the information "
                         "matrix is singular; give start_params nearer the data's log-odds, or "
                         "check the offset")
    obj_old = -2.0 * st.penalized
    history: list[float] = []
    converged, message, it = not free.any(), "", 0  # nothing free: l* is only evaluated
    for it in range(1, (0 if converged else control.maxiter) + 1):
        found = _line_search(at, st, _step(st, free), free, obj_old, control)
        if found is None:
            message = "step-halving could not increase the penalised log-likelihood"
            break
        new, step, halvings = found
        obj = -2.0 * new.penalized
        history.append(obj)
        if control.progress is not None:
            control.progress(it, obj, float(np.max(np.abs(step), initial=0.0)), halvings)
        small = np.all(np.abs(step) <= control.tol * (1.0 + np.abs(new.coef)))
        converged = (halvings == 0 and small
                     and abs(obj - obj_old) / (abs(obj) + 0.1) < control.tol)
        st, obj_old = new, obj
        if converged:
            break
    if not converged and not message:
        message = f"no convergence in {control.maxiter} iterations"
    coef, gram, cov = _to_beta(st, shift, intercept)
    return Fit(coef=coef, loglik=st.loglik, logdet=st.logdet, penalized=st.penalized,
               deviance=2.0 * (sat - st.loglik), gram=gram, cov=cov, hat=st.hat, n_iter=it,
               converged=converged, history=tuple(history), message=message,
               aliased=np.zeros(k, dtype=bool))


def _to_beta(st: _State, shift: np.ndarray | None,
             intercept: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coefficients, information and its inverse in the original coordinates: with
    ``gamma = T beta``, ``T = I + e_0 s'``, the information is ``T' G T`` and its inverse
    ``T^-1 G^-1 T^-T`` (``T^-1 = I - e_0 s'``), ``G^-1 = R^-1 R^-T`` from the factor."""
    k = st.coef.shape[0]
    with np.errstate(all="ignore"):  # a singular factor gives inf/NaN: the results say so
        # LAPACK's triangular inverse: a triangular solve with k right-hand sides goes through
        # threaded BLAS, ~1000 times slower for a small k (it ran once per profile refit)
        rinv, info = _TRTRI(st.r, lower=0)
        if info != 0:
            rinv = np.full((k, k), np.nan)
        cov, gram, coef = rinv @ rinv.T, st.r.T @ st.r, st.coef.copy()
        if shift is not None:
            tinv = np.eye(k)
            tinv[intercept] -= shift
            coef = tinv @ coef
            t = np.eye(k)
            t[intercept] += shift
            gram, cov = t.T @ gram @ t, tinv @ cov @ tinv.T
    return coef, gram, cov / 2.0 + cov.T / 2.0
