"""Newton's method on finite differences, with lower bounds: the outer optimiser of a mixed
model's deviance (lme4's ``optimizeGlmer`` stage 2 and its ``deriv12``).

The objective is a black box of a few parameters (the covariance parameters theta of a GLMM,
bounded below by 0 on their diagonal, and the fixed effects): each evaluation runs penalised
IRLS, so there is no analytic gradient. :func:`minimise` takes Newton steps on a central-
difference Hessian updated by BFGS along the way, holds a parameter at its bound when the
gradient pushes outward, halves the step until the objective does not rise, and ends with
Newton steps on a fresh finite-difference Hessian at the estimate, which is also the Hessian
lme4's ``vcov`` inverts.

References
----------
Nocedal, J. and Wright, S. J. (2006). *Numerical Optimization*, 2nd ed., §6.1 (BFGS) and
§8.1 (finite-difference derivatives).
Bates, D. et al. (2015). Fitting linear mixed-effects models using lme4. *Journal of
Statistical Software* 67(1); lme4 ``R/deriv.R`` (``deriv12``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

#: An objective of a parameter vector of shape (d,).
Objective = Callable[[np.ndarray], float]


class BoundedNewtonResult(NamedTuple):
    """What :func:`minimise` found.

    Attributes
    ----------
    x : ndarray of shape (d,)
        The estimate.
    hessian : ndarray of shape (d, d)
        The finite-difference Hessian of the objective at (or next to) the estimate.
    converged : bool
    gradient : ndarray of shape (d,)
        The central-difference gradient at the estimate.
    """

    x: np.ndarray
    hessian: np.ndarray
    converged: bool
    gradient: np.ndarray


def derivatives(f: Objective, x: np.ndarray, h: float = 1e-4
                ) -> tuple[float, np.ndarray, np.ndarray]:
    """``f(x)``, its central-difference gradient and Hessian.

    Parameters
    ----------
    f : callable
        The objective.
    x : ndarray of shape (d,)
    h : float
        Relative step: ``h * max(1, |x_i|)``, as lme4's ``deriv12``.

    Returns
    -------
    fx : float
    gradient : ndarray of shape (d,)
    hessian : ndarray of shape (d, d)

    Notes
    -----
    ``d^2 + d + 1`` evaluations: the off-diagonal terms use ``f(x +- (e_i + e_j))`` with the
    ``f(x +- e_i)`` of the diagonal.
    """
    d = x.size
    s = h * np.maximum(1.0, np.abs(x))
    E = np.diag(s)
    f0 = f(x)
    fp = np.array([f(x + E[i]) for i in range(d)])
    fm = np.array([f(x - E[i]) for i in range(d)])
    g = (fp - fm) / (2 * s)
    H = np.diag((fp - 2 * f0 + fm) / s ** 2)
    for i in range(d):
        for j in range(i):
            both = f(x + E[i] + E[j]) + f(x - E[i] - E[j])
            H[i, j] = H[j, i] = (both - fp[i] - fm[i] - fp[j] - fm[j] + 2 * f0) / (
                2 * s[i] * s[j])
    return f0, g, H


def gradient(f: Objective, x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Central-difference gradient of ``f`` at ``x`` (steps ``h * max(1, |x_i|)``).

    Parameters
    ----------
    f : callable
    x : ndarray of shape (d,)
    h : float

    Returns
    -------
    ndarray of shape (d,)
    """
    s = h * np.maximum(1.0, np.abs(x))
    return np.array([(f(x + e) - f(x - e)) / (2 * si) for e, si in zip(np.diag(s), s,
                                                                        strict=True)])


def newton_step(H: np.ndarray, g: np.ndarray, free: np.ndarray) -> np.ndarray:
    """``-H^{-1} g`` on the free parameters (0 on the others), H's eigenvalues replaced by
    their absolute values floored at 1e-6 of the largest, so that the step is a descent
    direction.

    Parameters
    ----------
    H : ndarray of shape (d, d)
    g : ndarray of shape (d,)
    free : ndarray of bool, shape (d,)

    Returns
    -------
    ndarray of shape (d,)
    """
    step = np.zeros_like(g)
    Hf = H[np.ix_(free, free)]
    vals, vecs = np.linalg.eigh((Hf + Hf.T) / 2)
    floor = 1e-6 * max(1.0, np.abs(vals).max(initial=1.0))
    vals = np.maximum(np.abs(vals), floor)
    step[free] = -(vecs @ ((vecs.T @ g[free]) / vals))
    return step


def minimise(f: Objective, x0: np.ndarray, lower: np.ndarray, maxiter: int, tol: float,
             polish: int = 3) -> BoundedNewtonResult:
    """Minimise ``f`` subject to ``x >= lower`` by quasi-Newton steps on finite differences.

    Parameters
    ----------
    f : callable
        The objective of x of shape (d,).
    x0 : ndarray of shape (d,)
        The start (moved up to ``lower`` where below it).
    lower : ndarray of shape (d,)
        Lower bounds (``-inf`` for none).
    maxiter : int
        Largest number of quasi-Newton steps.
    tol : float
        Stop when a step lowers ``f`` by less than ``tol * (|f| + 0.1)``.
    polish : int
        Largest number of final Newton steps, each on a fresh finite-difference Hessian.

    Returns
    -------
    BoundedNewtonResult

    Notes
    -----
    Newton steps with BFGS updates of the Hessian on central-difference gradients; a parameter
    at its bound with the gradient pushing outward is held there; step halving until ``f``
    does not rise. Then the Hessian again at the estimate and Newton steps with it until
    ``f`` stops falling. Converged when a step was small, or when the Newton step left at the
    estimate is below 1e-6.
    """
    lo = np.asarray(lower, dtype=float)
    x = np.maximum(np.asarray(x0, dtype=float), lo)
    fx, g, H = derivatives(f, x)
    converged = False
    for it in range(maxiter):
        free = ~((x <= lo) & (g > 0))
        step = newton_step(H, g, free)
        t, fn = 1.0, np.inf
        while t > 1e-10:
            xn = np.maximum(x + t * step, lo)
            fn = f(xn)
            if fn <= fx:
                break
            t /= 2
        if not fn <= fx:
            converged = abs(g[free]).max(initial=0.0) < 1e-4
            break
        gn = gradient(f, xn)
        sk, yk = xn - x, gn - g
        if sk @ yk > 1e-12 * np.sqrt((sk @ sk) * (yk @ yk)):  # BFGS update
            Hs = H @ sk
            H = H + np.outer(yk, yk) / (yk @ sk) - np.outer(Hs, Hs) / (sk @ Hs)
        small = fx - fn <= tol * (abs(fn) + 0.1)
        x, fx, g = xn, fn, gn
        if small and it > 0:
            converged = True
            break
    for _ in range(polish):  # the Hessian at the estimate; a Newton step with it when it helps
        fx, g, H = derivatives(f, x)
        free = ~((x <= lo) & (g > 0))
        xn = np.maximum(x + newton_step(H, g, free), lo)
        fn = f(xn)
        if fn < fx:
            x = xn
        if not fn < fx - 1e-9 * (abs(fx) + 1):
            break
    g = gradient(f, x)  # at the estimate (the last Newton step may have moved it)
    free = ~((x <= lo) & (g > 0))
    try:  # converged when the Newton step left at the estimate is negligible
        left = np.abs(np.linalg.solve(H[np.ix_(free, free)], g[free])).max(initial=0.0)
        converged = converged or bool(left < 1e-6)
    except np.linalg.LinAlgError:
        pass
    return BoundedNewtonResult(x, H, converged, g)
