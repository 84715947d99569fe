"""Profile-likelihood confidence intervals of GLM coefficients (``conf_int(method=
"profile")``), as R's ``confint.glm`` (MASS) defines them, with exact roots.

For coefficient j, hold it at b and refit the others (the column moves into the offset):
``D_j(b)`` is the deviance of that fit and ``z_j(b) = sign(b - b_hat) sqrt((D_j(b) - D) /
phi)`` the signed root (phi the dispersion: 1 for binomial and Poisson, Pearson chi2 /
df_resid for the Gaussian). The interval is ``{b : |z_j(b)| <= z_{1-alpha/2}}``, the normal
quantile as MASS. MASS interpolates z between profile points with a spline (its bounds are off
by up to ~1e-3 standard errors); here each bound is the root of ``z_j(b) = -+q``, bracketed
outward from the Wald bound and found by Brent's method. A profile that never reaches the
cutoff (separation) gives an infinite bound and a warning.

References
----------
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, 4th ed., §8.4.
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., §4.4.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ..errors import GlmclassWarning
from ..likelihoods import likelihood_of
from ..likelihoods import totals as LT
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..solvers.control import Control

#: Doublings of the distance from the estimate before a bound is declared infinite: the
#: search reaches 2**40 Wald half-widths.
MAX_DOUBLINGS = 40


class _Profile:
    """The signed root z_j(b) of one coefficient, warm-starting each refit from the last.

    The protocol :func:`profile_bounds` needs of a profile (other models' profiles, e.g.
    Firth's penalised one in :mod:`glmclass.results.firth`, provide the same): ``bhat`` the
    estimate, ``z(b)`` the signed root, ``start``/``mle_start`` the warm start and the one to
    go back to at each side, and the flags ``worse`` (a refit beat the fit) and
    ``unconverged`` (a refit did not converge).
    """

    def __init__(self, res, j: int, control: Control) -> None:
        m = res.model
        self.problem = m.problem
        keep = np.flatnonzero(res.estimable)
        self.j = j
        self.others = keep[keep != j]
        self.mle_start = res.solver_fit.coef[self.others] if self.others.size else None
        self.start = self.mle_start
        self.bhat = float(res.params.iloc[j])
        self.dev0 = float(res.deviance)
        self.phi = float(res.scale)
        self.control = control
        self.worse = False  # a refit found a smaller deviance than the fit's
        self.unconverged = False

    def deviance(self, b: float) -> float:
        """The deviance with coefficient j held at b: a refit of the others over the rows of
        the fit (in memory or Dask partitions), column j moved into the offset."""
        if not self.others.size:  # no other column: eta is the offset
            return self.problem.held_deviance(self.j, b)
        # warm start from the last refit; if that fails (a start far from this b can make
        # IRLS diverge), from the others' estimates, then from the family's default start
        for start in (self.start, self.mle_start, None):
            fit = self.problem.held_fit(self.j, b, self.others, self.control, start)
            if fit.converged and np.all(np.isfinite(fit.coef[~fit.aliased])):
                self.start = fit.coef
                return float(fit.deviance)
        self.unconverged = True
        return float(fit.deviance)

    def z(self, b: float) -> float:
        excess = (self.deviance(b) - self.dev0) / self.phi
        if excess < -1e-6 * max(1.0, self.dev0):
            self.worse = True
        return float(np.sign(b - self.bhat) * np.sqrt(max(excess, 0.0)))


class NewtonProfile:
    """The signed root of one coefficient of any likelihood model (a multinomial logit's
    coefficient of one level and term), the others refit by Newton's method with step halving
    on the likelihood contract's totals (:mod:`glmclass.likelihoods.totals`) over the rows of
    the fit, warm-started from the last refit. The protocol of :class:`_Profile`.

    Parameters
    ----------
    res : results with ``solver_fit.coef`` (the estimable coefficients, level-major),
        ``estimable``, ``llf`` and ``model.blocks(keep)``.
    i : int
        Position of the coefficient among the estimable ones, level-major.
    control : Control
        ``maxiter`` Newton steps per refit; convergence when the log-likelihood changes by
        less than 1e-13 relative.
    """

    def __init__(self, res, i: int, control: Control) -> None:
        m = res.model
        self.lik = likelihood_of(m)
        self.rows = m.blocks(res.estimable)
        self.coef = np.asarray(res.solver_fit.coef, dtype=float)
        self.i = i
        self.free = np.flatnonzero(np.arange(self.coef.size) != i)
        self.bhat = float(self.coef[i])
        self.llf = float(res.llf)
        self.mle_start = self.coef[self.free]
        self.start = self.mle_start
        self.control = control
        self.worse = False
        self.unconverged = False

    def _full(self, b: float, others: np.ndarray) -> np.ndarray:
        out = self.coef.copy()
        out[self.i], out[self.free] = b, others
        return out

    def loglike(self, b: float) -> float:
        """The profile log-likelihood at b: the others maximised with b held."""
        theta = np.array(self.start, dtype=float)
        ll = LT.loglike(self.lik, self.rows, self._full(b, theta))
        for _ in range(self.control.maxiter):
            full = self._full(b, theta)
            g = LT.score(self.lik, self.rows, full)[self.free]
            H = LT.hessian(self.lik, self.rows, full)[np.ix_(self.free, self.free)]
            try:
                step = spd_inverse(-H) @ g
            except NotPositiveDefinite:
                step = np.linalg.lstsq(-H, g, rcond=None)[0]
            t, new = 1.0, -np.inf
            for _ in range(30):  # step halving until the likelihood does not fall
                new = LT.loglike(self.lik, self.rows, self._full(b, theta + t * step))
                if np.isfinite(new) and new >= ll - 1e-12 * abs(ll):
                    break
                t /= 2.0
            theta = theta + t * step
            done = abs(new - ll) <= 1e-13 * max(1.0, abs(ll))
            ll = new
            if done:
                self.start = theta
                return float(ll)
        self.unconverged = True
        return float(ll)

    def z(self, b: float) -> float:
        excess = 2.0 * (self.llf - self.loglike(b))
        if excess < -1e-6 * max(1.0, abs(self.llf)):
            self.worse = True
        return float(np.sign(b - self.bhat) * np.sqrt(max(excess, 0.0)))


def newton_profile_conf_int(res, alpha: float) -> pd.DataFrame:
    """Profile-likelihood intervals of every coefficient of a multi-equation model (rows
    labelled by ``coef_index``, level-major; NaN for aliased columns), each bound the root of
    the signed root ``z(b) = -+q`` (:class:`NewtonProfile`)."""
    q = float(stats.norm.isf(alpha / 2))
    control = Control(maxiter=max(100, 4 * res.n_iter), tol=1e-13)
    index = res.coef_index
    kept = np.flatnonzero(np.tile(res.estimable, res.n_equations))
    se = res.raw_bse()
    lo, hi = np.full(len(index), np.nan), np.full(len(index), np.nan)
    for i, pos in enumerate(kept):
        lo[pos], hi[pos], problem = profile_bounds(res, i, q, control, NewtonProfile,
                                                   se=float(se[i]))
        if problem:
            warnings.warn(f"profile of {index[pos]!r}: {problem}; the interval may be "
                          "inaccurate", GlmclassWarning, stacklevel=3)
    return pd.DataFrame({"lower": lo, "upper": hi}, index=index)


def profile_bounds(res, j: int, q: float, control: Control,
                   profile: type = _Profile, se: float | None = None
                   ) -> tuple[float, float, str]:
    """Lower and upper profile bounds of coefficient j at cutoff q, and a problem found
    (``profile(res, j, control)`` builds the signed root, :class:`_Profile` for a GLM;
    ``se``: the Wald standard error that scales the first step, default the solver's)."""
    prof = profile(res, j, control)
    if se is None:
        se = float(res.raw_bse()[int(np.sum(res.estimable[:j]))])
    step = q * se if np.isfinite(se) and se > 0 else max(1.0, abs(prof.bhat))
    out, unconverged = [], False
    for sign in (-1.0, 1.0):
        prof.start = prof.mle_start
        near, far = prof.bhat, prof.bhat + sign * step
        for _ in range(MAX_DOUBLINGS):
            if sign * prof.z(far) >= q:
                break
            near, far = far, prof.bhat + 2.0 * (far - prof.bhat)
        else:
            out.append(sign * np.inf)
            continue
        # only refits near the root matter: far out the others may have no finite estimate
        prof.unconverged = False
        out.append(optimize.brentq(lambda b, s=sign: prof.z(b) - s * q, *sorted((near, far)),
                                   xtol=1e-13 * max(1.0, abs(far)), rtol=4 * np.finfo(float).eps,
                                   maxiter=200))
        unconverged |= prof.unconverged
    problem = ""
    if prof.worse:
        problem = "a refit with the coefficient held fixed fit better than the fit: it had not " \
                  "converged"
    elif unconverged:
        problem = "some refits with the coefficient held fixed did not converge"
    return out[0], out[1], problem


def profile_conf_int(res, alpha: float, profile: type = _Profile) -> pd.DataFrame:
    """Profile-likelihood intervals of every coefficient (NaN for aliased columns).

    Parameters
    ----------
    res : GLMResults
        Or any results with ``params``, ``estimable``, ``solver_fit``, ``n_iter`` and
        ``raw_bse()`` whose model ``profile`` can refit.
    alpha : float
        1 - confidence level.
    profile : type
        ``profile(res, j, control)`` gives coefficient j's signed root (see :class:`_Profile`).

    Returns
    -------
    pandas.DataFrame
        Columns ``lower`` and ``upper``, one row per coefficient; ``-inf``/``inf`` where the
        profile does not reach the cutoff.
    """
    q = float(stats.norm.isf(alpha / 2))
    maxiter = max(100, 4 * res.n_iter)
    control = Control(maxiter=maxiter, tol=1e-13)
    names = res.params.index
    lo, hi = np.full(len(names), np.nan), np.full(len(names), np.nan)
    for j in np.flatnonzero(res.estimable):
        lo[j], hi[j], problem = profile_bounds(res, int(j), q, control, profile)
        if problem:
            warnings.warn(f"profile of {names[j]!r}: {problem}; the interval may be "
                          "inaccurate", GlmclassWarning, stacklevel=3)
    infinite = [n for n, a, b in zip(names, lo, hi, strict=True) if np.isinf(a) or np.isinf(b)]
    if infinite:
        warnings.warn(f"the profile likelihood of {', '.join(map(repr, infinite))} does not "
                      f"fall to the {1 - alpha:g} cutoff on one side: that bound is infinite "
                      "(separation, or a coefficient the data do not bound)", GlmclassWarning,
                      stacklevel=3)
    return pd.DataFrame({"lower": lo, "upper": hi}, index=names)
