"""Choosing the mislabelling probability of the robust logit link by profile likelihood.

For each eps of a grid, the binomial GLM with :class:`~glmclass.links.RobustLogit` (eps held
fixed) is refit; the profile log-likelihood is the log-likelihood of those fits. Two facts make
an honest answer harder than an ``argmax``:

- The likelihood is bounded (every row contributes between ``log eps`` and ``log(1 - eps)``),
  and its supremum over the coefficients may lie at infinity: along ``b = t d``, ``t -> inf``,
  every fitted mean tends to ``eps`` or ``1 - eps`` and the deviance to
  ``D_lim = -2 [(n - k) log(1 - eps) + k log eps]`` (k rows on the wrong side of the hyperplane
  ``x'd = 0``; weighted and for proportions alike). Where ``D_lim`` is below the deviance of the
  fit IRLS found, that fit is a local maximum only and the MLE does not exist.
- On many data sets the profile log-likelihood is largest at the smallest eps tried: the data
  favour the plain logit (eps -> 0) and there is no interior maximum.

:func:`robust_logit_profile` reports both: the table marks fits that are local only (checked
against the hyperplanes of every fit on the grid, of the plain logit, and any ``direction`` the
caller knows), excludes them from the maximum, and warns when the maximum sits at an end of the
usable range instead of returning it as if it were an interior optimum.

References
----------
Copas, J. B. (1988). Binary regression models for contaminated data. *JRSS B* 50, 225-265.
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.5.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, special

from .. import families as F
from .. import links as L
from ..errors import GlmclassWarning
from .glm import GLM, MLEGLM, Logit

#: Default grid of eps.
DEFAULT_EPS = np.r_[0.001, 0.005, np.arange(1, 26) / 100.0]
#: |eta| standing for "infinitely far" along a limit direction (the means are eps or 1 - eps
#: to double precision long before).
_FAR = 1e4


@dataclass(frozen=True)
class RobustLogitProfile:
    """Profile log-likelihood of the robust logit link over eps.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per eps of the grid (index ``eps``), columns ``converged`` (IRLS converged to a
        finite stationary point), ``llf``, ``deviance`` (NaN where it did not), ``score_eps``
        (d llf / d eps at the fitted coefficients: the slope of the profile, by the envelope
        theorem), ``limit_deviance`` (the smallest deviance of a hyperplane limit found),
        ``local_only`` (the fit is beaten by that limit: a local maximum, no MLE) and ``usable``
        (converged and not local only).
    eps : float or None
        The eps of the largest usable profile log-likelihood (refined between grid points when
        it is interior), None when no fit is usable.
    llf : float
        The profile log-likelihood there.
    boundary : {"lower", "upper", None}
        Whether the maximum sits at the smallest (the data favour the plain logit) or the
        largest usable eps (beyond it the MLE does not exist or IRLS diverges) instead of
        inside; a warning says so.
    results : GLMResults or None
        The fit at ``eps``.
    limit_eps : float or None
        Where the fit IRLS finds stops being the MLE: the eps at which its deviance equals the
        best hyperplane limit (refined by root finding), None when no grid fit is local only.
    limit_direction : pandas.Series or None
        The hyperplane direction of the best limit (by design column).
    message : str
        What the profile shows, in words.
    """

    table: pd.DataFrame
    eps: float | None
    llf: float
    boundary: str | None
    results: object = field(repr=False)
    limit_eps: float | None
    limit_direction: pd.Series | None = field(repr=False)
    message: str

    def __str__(self) -> str:
        return self.message


def _check_grid(eps) -> np.ndarray:
    grid = DEFAULT_EPS if eps is None else np.asarray(eps, dtype=float).ravel()
    if grid.size < 2:
        raise ValueError(f"eps must hold at least two values between 0 and 0.5 to profile over, "
                         f"got {eps!r}")
    bad = ~(np.isfinite(grid) & (grid > 0) & (grid < 0.5))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"eps[{j}] = {grid[j]!r}: every eps must be strictly between 0 and 0.5")
    return np.unique(grid)


def _robust_model(model: MLEGLM, eps: float) -> GLM:
    """A binomial GLM with the robust link on the model's data (offset and weights kept)."""
    out = GLM.__new__(GLM)
    out.construct(model.data, {"family": F.Binomial(L.RobustLogit(eps))})
    return out


def _fit(model: MLEGLM, eps: float, start, maxiter: int, tol: float, stray: list | None = None):
    """The fit at ``eps`` from ``start``; None when IRLS fails or does not converge (the point
    a diverging fit reached joins ``stray``: it heads for a limit at infinity)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GlmclassWarning)
        try:
            res = _robust_model(model, eps).fit(maxiter=maxiter, tol=tol, start_params=start,
                                                information="expected", on_separation="ignore")
        except (ValueError, np.linalg.LinAlgError):
            return None
    coef = res.params.to_numpy()
    if res.converged and np.all(np.isfinite(coef[res.estimable])):
        return res
    if stray is not None:
        stray.append(np.nan_to_num(coef, posinf=0.0, neginf=0.0))
    return None


def _fit_any(model: MLEGLM, eps: float, fits: list, maxiter: int, tol: float,
             stray: list | None = None):
    """The fit from R's starting values, else from the last converged fit of ``fits``."""
    res = _fit(model, eps, None, maxiter, tol, stray)
    if res is None:
        prev = next((r for r in reversed(fits) if r is not None), None)
        if prev is not None:
            res = _fit(model, eps, prev.params.to_numpy(), maxiter, tol, stray)
    return res


def score_eps(res) -> float:
    """d llf / d eps at the fitted coefficients of a robust-logit fit:
    ``sum w (y - mu) / (mu (1 - mu)) (1 - 2 sigma(eta))``."""
    m = res.model
    eta = res.eta
    lm, l1m = m.family.link.log_inverse(eta), m.family.link.log_inverse_c(eta)
    ratio = (m.endog - np.exp(lm)) * np.exp(-(lm + l1m))
    return float(np.sum(m.prior_weights * ratio * (1.0 - 2.0 * special.expit(eta))))


def _limit_deviance(model: MLEGLM, eps: float, side: np.ndarray) -> float:
    """Deviance of the limit along a direction whose side of every row is ``side`` (x'd)."""
    p = model.problem
    eta = np.where(side > 0, _FAR, np.where(side < 0, -_FAR, p.offset))
    fam = F.Binomial(L.RobustLogit(eps))
    return float(np.sum(p.prior_weights * fam.unit_deviance(p.endog, eta)))


def _directions(model: MLEGLM, fits: list, direction) -> list[np.ndarray]:
    """Candidate limit directions: the caller's, the plain logit's, every grid fit's (the
    caller adds the points diverging fits reached)."""
    names = model.exog_names
    out = []
    if direction is not None:
        d = direction.reindex(names).to_numpy(float) if isinstance(direction, pd.Series) \
            else np.asarray(direction, dtype=float).ravel()
        if d.shape != (len(names),) or not np.all(np.isfinite(d)):
            raise ValueError(f"direction must give one finite value per design column "
                             f"({names}), got {direction!r}")
        out.append(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GlmclassWarning)
        plain = Logit.__new__(Logit)
        plain.construct(model.data, {})
        try:
            out.append(np.nan_to_num(plain.fit(on_separation="ignore").params.to_numpy()))
        except ValueError:
            pass
    out += [np.nan_to_num(r.params.to_numpy()) for r in fits if r is not None]
    return out


def robust_logit_profile(model, eps=None, direction=None, maxiter: int = 100,
                         tol: float = 1e-12) -> RobustLogitProfile:
    """Profile log-likelihood of the robust logit link's eps, with honest boundary handling.

    Parameters
    ----------
    model : GLM, Logit or Probit
        A binomial model: its data, weights and offset are refit with
        ``Binomial(link=RobustLogit(eps))`` for each eps (its own link is not used).
    eps : array-like, optional
        Grid of eps values strictly between 0 and 0.5 (default 0.001, 0.005, 0.01, ...,
        0.25).
    direction : array-like or pandas.Series, optional
        A hyperplane direction (by design column) known to misclassify few rows, e.g. from a
        mixed-integer program; it joins the directions checked for limits at infinity.
    maxiter, tol : int, float
        IRLS settings of every fit.

    Returns
    -------
    RobustLogitProfile

    Warns
    -----
    GlmclassWarning
        When some fits are local maxima only (the MLE does not exist there), and when the
        largest usable profile log-likelihood sits at an end of the usable range: no interior
        optimum is claimed.

    Notes
    -----
    A fit from R's starting values is tried first at each eps, then one from the nearest
    converged fit. A fit is *local only* when some hyperplane limit has a smaller deviance;
    the candidate hyperplanes are those of every fit on the grid, of the plain logit, the points
    diverging fits reached and ``direction``. The check is sound (a flagged fit is certainly
    not the MLE) but may miss better limits that no candidate reaches: the hyperplane that
    misclassifies the fewest rows is a mixed-integer program, which a caller can solve and
    pass as ``direction``. An interior maximum on the grid
    is refined by a bounded scalar search between its neighbours.
    """
    if not isinstance(model, MLEGLM) or not isinstance(model.family, F.Binomial):
        raise TypeError(f"model must be a binomial GLM, Logit or Probit model (unfitted), got "
                        f"{model!r}")
    grid = _check_grid(eps)
    fits: list = []
    stray: list = []  # where diverging fits went: towards hyperplane limits
    for e in grid:
        fits.append(_fit_any(model, e, fits, maxiter, tol, stray))
    cands = _directions(model, fits, direction) + stray
    sides = [model.exog @ d for d in cands]
    table = _table(model, grid, fits, sides)
    usable = table["usable"].to_numpy()
    # the ordering of limits by deviance is the same at every eps (weighted misclassification)
    best = int(np.argmin([_limit_deviance(model, 0.1, s) for s in sides]))
    limit_dir = pd.Series(cands[best], index=model.exog_names, name="direction")
    limit_eps = _crossover(model, grid, fits, table, sides[best], maxiter, tol)
    if not usable.any():
        msg = ("no eps of the grid gave a usable fit (IRLS did not converge, or every fit is "
               "a local maximum only): the robust-logit MLE does not exist on this grid")
        warnings.warn(msg, GlmclassWarning, stacklevel=2)
        return RobustLogitProfile(table, None, np.nan, None, None, limit_eps, limit_dir, msg)
    llf = np.where(usable, table["llf"].to_numpy(), -np.inf)
    i = int(np.argmax(llf))
    idx = np.flatnonzero(usable)
    boundary = "lower" if i == idx[0] else "upper" if i == idx[-1] else None
    eps_hat, res_hat = float(grid[i]), fits[i]
    if boundary is None and usable[i - 1] and usable[i + 1]:
        eps_hat, res_hat = _refine(model, grid[i - 1], grid[i + 1], fits[i], maxiter, tol)
    msg = _message(table, grid, i, boundary, eps_hat, limit_eps)
    if boundary is not None or table["local_only"].any():
        warnings.warn(msg, GlmclassWarning, stacklevel=2)
    return RobustLogitProfile(table, eps_hat, float(res_hat.llf), boundary, res_hat, limit_eps,
                              limit_dir, msg)


def _table(model, grid, fits, sides) -> pd.DataFrame:
    rows = []
    for e, r in zip(grid, fits, strict=True):
        lim = min(_limit_deviance(model, e, s) for s in sides) if sides else np.nan
        if r is None:
            rows.append((False, np.nan, np.nan, np.nan, lim))
        else:
            rows.append((True, r.llf, r.deviance, score_eps(r), lim))
    t = pd.DataFrame(rows, index=pd.Index(grid, name="eps"),
                     columns=["converged", "llf", "deviance", "score_eps", "limit_deviance"])
    dev = t["deviance"].to_numpy()
    with np.errstate(invalid="ignore"):
        local = t["converged"].to_numpy() & (t["limit_deviance"].to_numpy()
                                             < dev - 1e-9 * (np.abs(dev) + 0.1))
    t["local_only"] = local
    t["usable"] = t["converged"] & ~t["local_only"]
    return t


def _refine(model, lo: float, hi: float, start_fit, maxiter: int, tol: float):
    """Bounded scalar search for the profile maximum between two grid points."""
    start = start_fit.params.to_numpy()
    cache: dict = {}

    def neg(e: float) -> float:
        r = _fit(model, float(e), start, maxiter, tol)
        cache[float(e)] = r
        return np.inf if r is None else -r.llf

    opt = optimize.minimize_scalar(neg, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-8})
    r = cache.get(float(opt.x))
    if r is None or r.llf < start_fit.llf:
        return float(start_fit.model.family.link.eps), start_fit
    return float(opt.x), r


def _crossover(model, grid, fits, table, side, maxiter, tol) -> float | None:
    """The eps where the deviance of the fit IRLS finds equals the best limit's."""
    local = table["local_only"].to_numpy()
    if not local.any():
        return None
    j = int(np.flatnonzero(local)[0])
    if j == 0 or not table["usable"].iloc[j - 1]:
        return float(grid[j])
    def gap(e: float) -> float:
        r = _fit_any(model, e, [fits[j - 1]], maxiter, tol)
        if r is None:
            return np.nan
        return _limit_deviance(model, e, side) - r.deviance

    a, b = float(grid[j - 1]), float(grid[j])
    ga, gb = gap(a), gap(b)
    if not (np.isfinite(ga) and np.isfinite(gb)) or ga * gb > 0:
        return b
    return float(optimize.brentq(gap, a, b, xtol=1e-12))


def _message(table, grid, i, boundary, eps_hat, limit_eps) -> str:
    parts = []
    if boundary == "lower":
        parts.append(f"the profile log-likelihood is largest at the smallest usable eps "
                     f"({grid[i]:g}): there is no interior maximum, the data favour the plain "
                     "logit (eps -> 0)")
    elif boundary == "upper":
        parts.append(f"the profile log-likelihood is largest at the largest usable eps "
                     f"({grid[i]:g}): beyond it IRLS diverges or the fit is a local maximum "
                     "only, so this is no interior optimum")
    else:
        parts.append(f"interior maximum of the profile log-likelihood at eps = {eps_hat:.6g}")
    local = table.index[table["local_only"].to_numpy()]
    if local.size:
        where = f"from eps = {limit_eps:.6g} on" if limit_eps is not None \
            else f"at eps = {', '.join(f'{e:g}' for e in local)}"
        parts.append(f"{where} the fit IRLS finds is a local maximum only: a hyperplane limit "
                     "(coefficients to infinity) has a smaller deviance, so the MLE does not "
                     "exist there")
    diverged = table.index[~table["converged"].to_numpy()]
    if diverged.size:
        parts.append(f"IRLS did not converge at eps = {', '.join(f'{e:g}' for e in diverged)}")
    return "; ".join(parts)
