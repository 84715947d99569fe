"""Profile-likelihood intervals of a mixed GLM (lme4's ``confint(fit, method = "profile")``).

For a parameter ``x_j`` of ``x = (theta, beta)`` held at b, the profile deviance ``D_j(b)`` is
lme4's deviance function (Laplace or adaptive quadrature) minimised over every other parameter
by the bounded Newton solver (:func:`glmclass.solvers.bounded_newton.minimise`), warm-started
from the last point. The signed root ``z_j(b) = sign(b - x_j) sqrt(D_j(b) - D)`` is lme4's
``zeta``; the interval is ``{b : |z_j(b)| <= z_{1 - alpha/2}}``. lme4 interpolates zeta
between profile points with a spline; here each bound is the root of ``z_j(b) = -+q``,
bracketed outward from the estimate and found by Brent's method.

Profiled: the fixed effects, and the standard deviation of every scalar random-effect term
(``(1 | g)``, each term of ``(x || g)``): with sigma = 1 in a binomial or Poisson GLMM that
SD is the term's theta, bounded below by 0 (a lower bound the profile does not reach is 0, as
lme4's). The SDs and correlations of correlated terms (``(x | g)``) are not profiled.

References
----------
Bates, D. et al. (2015). Fitting linear mixed-effects models using lme4. *Journal of
Statistical Software* 67(1), §5.1; lme4 ``R/profile.R`` (``profile.merMod``,
``confint.thpr``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ..errors import GlmclassWarning
from ..solvers.bounded_newton import minimise
from .profile import MAX_DOUBLINGS

#: Quasi-Newton steps of one profile refit, and its relative stopping rule.
REFIT_MAXITER, REFIT_TOL = 200, 1e-13


class MixedProfile:
    """The signed root ``z_j(b)`` of parameter j of ``(theta, beta)`` of a mixed fit.

    Parameters
    ----------
    res : MixedGLMResults
    j : int
        Position in ``(theta, beta)``.

    Attributes
    ----------
    bhat : float
        The estimate.
    worse : bool
        A refit found a smaller deviance than the fit's (the fit had not converged).
    unconverged : bool
        A refit did not converge.
    """

    def __init__(self, res: Any, j: int) -> None:
        fit = res.fit_record
        self.dev = res.model.deviance_function()
        self.nagq = int(fit.nagq)
        self.x_hat = np.r_[fit.theta, fit.beta]
        self.j = j
        self.free = np.flatnonzero(np.arange(self.x_hat.size) != j)
        lower = np.r_[res.model.likelihood.theta_lower, np.full(fit.beta.size, -np.inf)]
        self.lower = lower[self.free]
        self.bhat = float(self.x_hat[j])
        self.objective = float(fit.objective)
        self.mle_start = self.x_hat[self.free]
        self.start = self.mle_start
        self.worse = False
        self.unconverged = False

    def _full(self, b: float, others: np.ndarray) -> np.ndarray:
        x = self.x_hat.copy()
        x[self.j], x[self.free] = b, others
        return x

    def deviance(self, b: float) -> float:
        """The deviance with parameter j held at b, the others minimised."""
        def f(z: np.ndarray) -> float:
            return self.dev(self._full(b, z), self.nagq)

        found = minimise(f, self.start, self.lower, REFIT_MAXITER, REFIT_TOL, polish=1)
        self.unconverged |= not found.converged
        self.start = found.x
        return f(found.x)

    def z(self, b: float) -> float:
        """lme4's zeta: ``sign(b - bhat) sqrt(D_j(b) - D)``."""
        excess = self.deviance(b) - self.objective
        if excess < -1e-6 * max(1.0, abs(self.objective)):
            self.worse = True
        return float(np.sign(b - self.bhat) * np.sqrt(max(excess, 0.0)))


def _bound(prof: MixedProfile, q: float, sign: float, step: float, floor: float) -> float:
    """The root of ``z(b) = sign q`` on one side of the estimate, bracketed by doubling the
    distance; ``floor`` where the profile stays inside the cutoff down to it, ``+-inf`` when it
    never reaches the cutoff."""
    prof.start = prof.mle_start
    near, far = prof.bhat, prof.bhat + sign * step
    for _ in range(MAX_DOUBLINGS):
        if far <= floor:
            far = floor
            if sign * prof.z(far) < q:
                return floor
            break
        if sign * prof.z(far) >= q:
            break
        near, far = far, prof.bhat + 2.0 * (far - prof.bhat)
    else:
        return sign * np.inf
    return float(optimize.brentq(lambda b: prof.z(b) - sign * q, *sorted((near, far)),
                                 xtol=1e-10 * max(1.0, abs(far)), maxiter=200))


def profiled_parameters(res: Any) -> list[tuple[str, int, float]]:
    """What :func:`profile_conf_int` profiles: ``(name, position in (theta, beta), lower
    limit)`` for the SD of each scalar random-effect term (lme4's name ``sd_(Intercept)|g``)
    and each fixed effect."""
    out: list[tuple[str, int, float]] = []
    variances = res.random_effects_cov[res.random_effects_cov["var2"].isna()]
    pos, row = 0, 0
    for block in res.model.blocks:
        p = block.n_effects
        if p == 1:
            group, name = variances.iloc[row][["group", "var1"]]
            out.append((f"sd_{name}|{group}", pos, 0.0))
        pos += p * (p + 1) // 2
        row += p
    out += [(str(name), pos + k, -np.inf) for k, name in enumerate(res.params.index)]
    return out


def profile_conf_int(res: Any, alpha: float = 0.05) -> pd.DataFrame:
    """Profile-likelihood intervals of a mixed fit (lme4's ``confint(fit, method =
    "profile", oldNames = FALSE)``).

    Parameters
    ----------
    res : MixedGLMResults
    alpha : float
        1 - the confidence level.

    Returns
    -------
    pandas.DataFrame
        Columns ``lower`` and ``upper``; rows the SDs of the scalar random-effect terms
        (``sd_(Intercept)|herd``), then the fixed effects, as lme4.
    """
    q = float(stats.norm.isf(alpha / 2))
    H = res.fit_record.hessian
    try:
        se = np.sqrt(np.abs(np.diag(2.0 * np.linalg.inv(H))))
    except np.linalg.LinAlgError:
        se = np.full(H.shape[0], np.nan)
    rows = {}
    for name, j, floor in profiled_parameters(res):
        prof = MixedProfile(res, j)
        step = q * se[j] if np.isfinite(se[j]) and se[j] > 0 else max(0.1, abs(prof.bhat))
        rows[name] = (_bound(prof, q, -1.0, step, floor), _bound(prof, q, 1.0, step, floor))
        if prof.worse or prof.unconverged:
            why = ("a refit with it held fixed fit better than the fit (the fit had not "
                   "converged)" if prof.worse else "some refits with it held fixed did not "
                   "converge")
            warnings.warn(f"profile of {name!r}: {why}; the interval may be inaccurate",
                          GlmclassWarning, stacklevel=3)
    return pd.DataFrame.from_dict(rows, orient="index", columns=["lower", "upper"])
