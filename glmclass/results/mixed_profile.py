"""Profile-likelihood intervals of a mixed GLM (lme4's ``confint(fit, method = "profile")``).

For a parameter ``x_j`` of ``x = (theta, beta)`` held at b, the profile deviance ``D_j(b)`` is
lme4's deviance function (Laplace or adaptive quadrature) minimised over every other parameter
by the bounded Newton solver (:func:`glmclass.solvers.bounded_newton.minimise`), warm-started
from the last point. The signed root ``z_j(b) = sign(b - x_j) sqrt(D_j(b) - D)`` is lme4's
``zeta``; the interval is ``{b : |z_j(b)| <= z_{1 - alpha/2}}``. lme4 interpolates zeta
between profile points with a spline; here each bound is the root of ``z_j(b) = -+q``,
bracketed outward from the estimate and found by Brent's method.

Profiled: the fixed effects, and the standard deviation of every random-effect term and the
correlations of correlated terms, lme4's "sdcor" scale (with sigma = 1 in a binomial or Poisson
GLMM): a term with p effects and lower-triangular relative factor L (theta, lme4's order) has
``S = L L'``, SDs ``sqrt(S_ii)`` and correlations ``S_ij / (sd_i sd_j)``, listed as theta is
(column by column: ``sd_(Intercept)|g``, ``cor_x.(Intercept)|g``, ``sd_x|g``). To profile one
of them, that term's theta is written as its SDs and correlations (``L = diag(sd) chol(R)``,
lme4's ``Sv_to_Cv``), one is held, and the deviance is minimised over the rest: the SDs bounded
below by 0, each free correlation written as ``sin(a)`` so that it stays in [-1, 1]; the
other terms stay in theta. A scalar term's SD is its theta. A bound the profile does not reach
before the parameter's limit is that limit (0 for an SD, -1 or 1 for a correlation), as lme4's
``confint`` fills the NA of its spline with the profile's limits.

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
#: The largest |angle| a refit starts from (a free correlation is ``sin(angle)``).
ANGLE_START = np.pi / 2 - 0.05


def sdcor_from_theta(theta: np.ndarray, p: int) -> np.ndarray:
    """A term's SDs and correlations from its theta (both in lme4's order, column by column
    down the lower triangle), for sigma = 1."""
    L = np.zeros((p, p))
    L[np.triu_indices(p)[::-1]] = theta  # column-major lower triangle
    S = L @ L.T
    sd = np.sqrt(np.diag(S))
    with np.errstate(invalid="ignore", divide="ignore"):
        R = S / np.outer(sd, sd)
    return np.array([sd[i] if i == j else R[i, j] for j in range(p) for i in range(j, p)])


def theta_from_sdcor(v: np.ndarray, p: int) -> np.ndarray | None:
    """A term's theta from its SDs and correlations (lme4's ``Sv_to_Cv``: ``L = diag(sd)
    chol(R)``); None where the correlations are not a correlation matrix."""
    R = np.eye(p)
    sd = np.empty(p)
    k = 0
    for j in range(p):
        for i in range(j, p):
            if i == j:
                sd[i] = v[k]
            else:
                R[i, j] = R[j, i] = v[k]
            k += 1
    if p == 2:  # closed form: also at |cor| = 1, where R is singular
        C = np.array([[1.0, 0.0], [R[1, 0], np.sqrt(max(1.0 - R[1, 0] ** 2, 0.0))]])
    else:
        try:
            C = np.linalg.cholesky(R)
        except np.linalg.LinAlgError:
            return None
    L = sd[:, None] * C
    return L[np.triu_indices(p)[::-1]]


class MixedProfile:
    """The signed root ``z_j(b)`` of parameter j of ``(sdcor, beta)`` of a mixed fit.

    Parameters
    ----------
    res : MixedGLMResults
    j : int
        Position in ``(sdcor, beta)``: the terms' SDs and correlations in theta's order (a
        scalar term's SD is its theta), then the fixed effects.

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
        theta = np.asarray(fit.theta, dtype=float)
        lower = np.r_[res.model.likelihood.theta_lower, np.full(fit.beta.size, -np.inf)]
        self.x_hat = np.r_[theta, fit.beta]
        self.term: tuple[int, int] | None = None  # (start, p) of j's term when p > 1
        angle = np.zeros(self.x_hat.size, dtype=bool)
        pos = 0
        for p, _ in res.model.likelihood.sizes:
            n = p * (p + 1) // 2
            if p > 1 and pos <= j < pos + n:
                self.term = (pos, p)
                self.x_hat[pos:pos + n] = sdcor_from_theta(theta[pos:pos + n], p)
                diag = np.array([i == c for c in range(p) for i in range(c, p)])
                angle[pos:pos + n] = ~diag
                lower[pos:pos + n] = np.where(diag, 0.0, -np.inf)
            pos += n
        self.j = j
        self.free = np.flatnonzero(np.arange(self.x_hat.size) != j)
        self.angle = angle[self.free]
        self.lower = lower[self.free]
        self.bhat = float(self.x_hat[j])
        self.objective = float(fit.objective)
        start = self.x_hat[self.free].copy()
        start[self.angle] = np.arcsin(np.clip(start[self.angle], -1.0, 1.0))
        self.mle_start = start
        self.start = self.mle_start
        self.worse = False
        self.unconverged = False

    def _full(self, b: float, others: np.ndarray) -> np.ndarray | None:
        x = self.x_hat.copy()
        values = others.copy()
        values[self.angle] = np.sin(values[self.angle])
        x[self.j], x[self.free] = b, values
        if self.term is not None:
            pos, p = self.term
            n = p * (p + 1) // 2
            theta = theta_from_sdcor(x[pos:pos + n], p)
            if theta is None:
                return None
            x[pos:pos + n] = theta
        return x

    def deviance(self, b: float) -> float:
        """The deviance with parameter j held at b, the others minimised."""
        def f(z: np.ndarray) -> float:
            x = self._full(b, z)
            return np.inf if x is None else self.dev(x, self.nagq)

        # a correlation at -+1 is an angle where the gradient vanishes, a saddle when the
        # minimum has moved inside: start each refit just off it; an SD the last refit left
        # at 0 cannot leave it (the deviance is flat there): restart it from the estimate
        start = self.start.copy()
        start[self.angle] = np.clip(start[self.angle], -ANGLE_START, ANGLE_START)
        stuck = (self.lower == 0.0) & (start <= 0.0)
        start[stuck] = self.mle_start[stuck]
        found = minimise(f, start, self.lower, REFIT_MAXITER, REFIT_TOL, polish=1)
        self.unconverged |= not found.converged
        self.start = found.x
        return f(found.x)

    def z(self, b: float) -> float:
        """lme4's zeta: ``sign(b - bhat) sqrt(D_j(b) - D)``."""
        excess = self.deviance(b) - self.objective
        if excess < -1e-6 * max(1.0, abs(self.objective)):
            self.worse = True
        return float(np.sign(b - self.bhat) * np.sqrt(max(excess, 0.0)))


def profile_bound(prof: MixedProfile, q: float, sign: float, step: float,
                  limits: tuple[float, float], name: str = "the parameter") -> float:
    """The root of ``z(b) = sign q`` on one side of the estimate, bracketed by doubling the
    distance; the parameter's limit on that side (0 for an SD, -+1 for a correlation) where
    the profile stays inside the cutoff up to it, ``+-inf`` when it never reaches the cutoff."""
    limit = limits[0] if sign < 0 else limits[1]
    prof.start = prof.mle_start
    near, far = prof.bhat, prof.bhat + sign * step
    for _ in range(MAX_DOUBLINGS):
        if sign * (far - limit) >= 0:
            far = limit
            if sign * prof.z(far) < q:
                return limit
            break
        if sign * prof.z(far) >= q:
            break
        near, far = far, prof.bhat + 2.0 * (far - prof.bhat)
    else:
        return sign * np.inf
    try:
        return float(optimize.brentq(lambda b: prof.z(b) - sign * q, *sorted((near, far)),
                                     xtol=1e-10 * max(1.0, abs(far)), maxiter=200))
    except ValueError:  # z(near) and z(far) on one side after all: a refit found another optimum
        warnings.warn(f"the profile of {name} is not monotone between {near:.6g} and "
                      f"{far:.6g} (a refit there found another optimum): that bound is NaN, as "
                      "lme4 gives NA with 'bad profile'; try the Wald interval or refit from "
                      "other start_params", GlmclassWarning, stacklevel=5)
        return float("nan")


def profiled_parameters(res: Any) -> list[tuple[str, int, float]]:
    """What :func:`profile_conf_int` profiles: ``(name, position in (sdcor, beta), lower
    limit)`` in lme4's order: per random-effect term its SDs and correlations in theta's order
    (lme4's names ``sd_(Intercept)|g``, ``cor_x.(Intercept)|g``, ``sd_x|g``; lower limit 0 for
    an SD, -1 for a correlation, whose upper limit is 1), then each fixed effect."""
    out: list[tuple[str, int, float]] = []
    pos = 0
    for block in res.model.blocks:
        p, names, g = block.n_effects, block.names, block.group
        for c in range(p):
            for i in range(c, p):
                out.append((f"sd_{names[i]}|{g}", pos, 0.0) if i == c
                           else (f"cor_{names[i]}.{names[c]}|{g}", pos, -1.0))
                pos += 1
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
        Columns ``lower`` and ``upper``; rows the SDs and correlations of the random-effect
        terms (``sd_(Intercept)|herd``; ``sd_(Intercept)|g``, ``cor_x.(Intercept)|g``,
        ``sd_x|g``), then the fixed effects, as lme4.
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
        limits = (floor, 1.0 if floor == -1.0 else np.inf)
        # theta's Wald SE: on the sdcor scale of a correlated term only a first step's size
        step = q * se[j] if np.isfinite(se[j]) and se[j] > 0 else max(0.1, abs(prof.bhat))
        if limits[1] == 1.0:
            step = min(step, 0.5 * (1.0 - abs(prof.bhat)) + 1e-3)
        rows[name] = (profile_bound(prof, q, -1.0, step, limits, name),
                      profile_bound(prof, q, 1.0, step, limits, name))
        if prof.worse or prof.unconverged:
            why = ("a refit with it held fixed fit better than the fit (the fit had not "
                   "converged)" if prof.worse else "some refits with it held fixed did not "
                   "converge")
            warnings.warn(f"profile of {name!r}: {why}; the interval may be inaccurate",
                          GlmclassWarning, stacklevel=3)
    return pd.DataFrame.from_dict(rows, orient="index", columns=["lower", "upper"])
