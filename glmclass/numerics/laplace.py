"""Laplace approximation for a GLM with a Gaussian prior: evidence, prior optimisation and the
predictive distribution of a binary response.

Everything here takes and returns ndarrays. A prior is given by its precision: a vector of
precisions ``1 / prior_scale**2`` (independent coefficients) or a full precision matrix
``S_0^-1`` (PRML eq. 4.140's general N(m_0, S_0)). In a vector, a precision of 0 is a flat
(improper) prior on that coefficient, whose density is taken as 1 (the evidence is then defined
up to the constant the flat prior leaves out, the same for every model that shares the flat
coefficient); a matrix must be positive definite.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §3.5.2 (the fixed-point
update of the prior precision), §4.4 (the Laplace approximation and the model evidence,
eq. 4.137), §4.5 (Bayesian logistic regression and its predictive distribution, eq. 4.153-4.155).
MacKay, D. J. C. (1992). The evidence framework applied to classification networks.
*Neural Computation* 4(5), 720-736.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from ..links import LOG_2PI
from .linalg import spd_logdet

#: Bounds on a prior precision during its optimisation: beyond them the prior is either
#: irrelevant (flat) or pins the coefficients to the prior mean.
ALPHA_BOUNDS = (1e-10, 1e10)


def log_prior_density(coef: np.ndarray, mean: np.ndarray, precision: np.ndarray) -> float:
    """ln N(coef | mean, diag(precision)^-1), flat components contributing 0; or, for a
    precision matrix P = S_0^-1, ln N(coef | mean, S_0) with ln|S_0| = -ln|P| from a Cholesky
    factor (never a determinant).

    Parameters
    ----------
    coef, mean : ndarray of shape (p,)
        Coefficients and prior means.
    precision : ndarray of shape (p,) or (p, p)
        Prior precisions (0 for a flat prior), or the prior precision matrix.

    Returns
    -------
    float
    """
    if precision.ndim == 2:
        d = coef - mean
        return float(0.5 * (spd_logdet(precision) - d.shape[0] * LOG_2PI - d @ precision @ d))
    proper = precision > 0
    d = (coef - mean)[proper]
    lam = precision[proper]
    return float(0.5 * np.sum(np.log(lam) - LOG_2PI - lam * d * d))


def log_normaliser(log_f: float, hessian: np.ndarray) -> float:
    """Laplace approximation of ln Z = ln int f(x) dx around the mode x* (PRML eq. 4.135).

    ``ln Z ~ ln f(x*) + (M / 2) ln 2 pi - (1 / 2) ln |A|``, ``A = -grad grad ln f(x*)``;
    ``ln |A|`` comes from a Cholesky factor.

    Parameters
    ----------
    log_f : float
        ln f at the mode.
    hessian : ndarray of shape (M, M)
        A, minus the Hessian of ln f at the mode (positive definite).

    Returns
    -------
    float

    Raises
    ------
    NotPositiveDefinite
        When A is not positive definite (x* is no maximum).
    """
    m = hessian.shape[0]
    return float(log_f + 0.5 * m * LOG_2PI - 0.5 * spd_logdet(hessian))


def laplace_log_evidence(loglik: float, coef: np.ndarray, mean: np.ndarray,
                         precision: np.ndarray, hessian: np.ndarray) -> float:
    """Laplace approximation of the log marginal likelihood (PRML eq. 4.137).

    ``ln p(D) ~ ln p(D | w) + ln p(w) + (M / 2) ln 2 pi - (1 / 2) ln |A|`` at the posterior
    mode ``w``, with ``A`` minus the Hessian of the log posterior. ``ln |A|`` comes from a
    Cholesky factor.

    Parameters
    ----------
    loglik : float
        Log-likelihood at the mode.
    coef, mean : ndarray of shape (p,)
        Posterior mode and prior means.
    precision : ndarray of shape (p,) or (p, p)
        Prior precisions (0 for a flat prior), or the prior precision matrix S_0^-1.
    hessian : ndarray of shape (p, p)
        A = S_0^-1 + X' R X, the posterior precision matrix.

    Returns
    -------
    float
    """
    return log_normaliser(loglik + log_prior_density(coef, mean, precision), hessian)


def precision_matrix(precision: np.ndarray) -> np.ndarray:
    """The prior precision as a matrix: ``diag(precision)`` for a vector, else itself."""
    return np.diag(precision) if precision.ndim == 1 else precision


def kept(precision: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The prior precision (vector or matrix) on the columns ``keep``."""
    return precision[keep] if precision.ndim == 1 else precision[np.ix_(keep, keep)]


def well_determined(precision: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Per-coefficient effective number of parameters ``1 - alpha_j (S_N)_jj``.

    Its sum over a group with a common prior precision alpha is MacKay's
    ``gamma = sum_i lambda_i / (lambda_i + alpha)`` (PRML eq. 3.91), the number of directions
    the data determine; a flat coefficient counts 1. For a precision matrix P the terms are
    ``1 - (P S_N)_jj``, whose sum is ``M - Tr(P S_N)``.

    Parameters
    ----------
    precision : ndarray of shape (p,) or (p, p)
        Prior precisions, or the prior precision matrix.
    cov : ndarray of shape (p,) or (p, p)
        The diagonal of the posterior covariance S_N (with a vector of precisions), or S_N.
    """
    if precision.ndim == 2:
        return 1.0 - np.einsum("ij,ji->i", precision, cov)
    return 1.0 - precision * (np.diag(cov) if cov.ndim == 2 else cov)


def mackay_update(coef: np.ndarray, mean: np.ndarray, precision: np.ndarray,
                  cov_diag: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """One fixed-point update of the group precisions: ``alpha_g = gamma_g / ||w_g - m_g||^2``.

    Parameters
    ----------
    coef, mean, precision, cov_diag : ndarray of shape (p,)
        Current mode, prior means, prior precisions and posterior variances.
    codes : ndarray of int, shape (p,)
        Group of each coefficient, ``-1`` for coefficients whose prior is held fixed.
    n_groups : int

    Returns
    -------
    ndarray of shape (n_groups,)
        Updated precisions, clipped to :data:`ALPHA_BOUNDS`.
    """
    gamma = well_determined(precision, cov_diag)
    d2 = (coef - mean) ** 2
    out = np.empty(n_groups)
    for g in range(n_groups):
        sel = codes == g
        out[g] = np.sum(gamma[sel]) / max(np.sum(d2[sel]), 1e-300)
    return np.clip(out, *ALPHA_BOUNDS)


@dataclass(frozen=True)
class EvidenceMax:
    """Result record of :func:`maximize_evidence`.

    Attributes
    ----------
    alpha : ndarray of shape (n_groups,)
        Chosen prior precisions.
    log_evidence : float
        Laplace log evidence at ``alpha``.
    n_iter : int
        Fixed-point iterations (plus evidence evaluations of the direct search).
    converged : bool
    history : tuple of (tuple of float, float)
        ``(alpha, log_evidence)`` at each fixed-point iteration.
    """

    alpha: np.ndarray
    log_evidence: float
    n_iter: int
    converged: bool
    history: tuple


def maximize_evidence(evidence_at: Callable, codes: np.ndarray, alpha0: np.ndarray,
                      method: str = "direct", maxiter: int = 200,
                      tol: float = 1e-8) -> EvidenceMax:
    """Type-II maximum likelihood: the prior precisions that maximise the Laplace evidence.

    MacKay's fixed point ``gamma = sum_i lambda_i / (lambda_i + alpha)``,
    ``alpha = gamma / ||w - m||^2`` (PRML §3.5.2) is iterated first. It treats the data
    Hessian as constant in ``alpha``, which holds for a Gaussian likelihood but not for a
    logistic one, so ``method="direct"`` then maximises the Laplace evidence itself over
    ``ln alpha`` (Brent's method for one group, Nelder-Mead for several), starting from the
    fixed point.

    Parameters
    ----------
    evidence_at : callable
        ``evidence_at(alpha) -> (log_evidence, coef, mean, precision, cov_diag)`` for an
        ndarray ``alpha`` of shape (n_groups,): refits the mode under that prior.
    codes : ndarray of int, shape (p,)
        Group of each coefficient (``-1``: prior held fixed).
    alpha0 : ndarray of shape (n_groups,)
        Starting precisions.
    method : {"direct", "mackay"}
    maxiter : int
        Largest number of fixed-point iterations.
    tol : float
        Convergence of the fixed point on the relative change of ``alpha``.

    Returns
    -------
    EvidenceMax
    """
    if method not in ("direct", "mackay"):
        raise ValueError(f"method must be 'direct' or 'mackay', got {method!r}")
    n_groups = alpha0.shape[0]
    alpha = np.clip(np.asarray(alpha0, dtype=float), *ALPHA_BOUNDS)
    history, converged = [], False
    for _ in range(maxiter):
        ev, coef, mean, precision, cov_diag = evidence_at(alpha)
        history.append((tuple(alpha), ev))
        new = mackay_update(coef, mean, precision, cov_diag, codes, n_groups)
        step = np.max(np.abs(np.log(new) - np.log(alpha)))
        alpha = new
        if step < tol:
            converged = True
            break
    ev, it = evidence_at(alpha)[0], len(history)
    if method == "mackay":
        return EvidenceMax(alpha, ev, it, converged, tuple(history))
    neg = _neg_log_evidence(evidence_at)
    start = np.log(alpha)
    if n_groups == 1:
        best = _brent(neg, float(start[0]))
        x, fun, nfev = np.array([best.x]), best.fun, best.nfev
        ok = bool(best.success)
    else:
        best = optimize.minimize(neg, start, method="Nelder-Mead",
                                 options={"xatol": 1e-7, "fatol": 1e-11, "maxiter": 2000})
        x, fun, nfev, ok = best.x, best.fun, best.nfev, bool(best.success)
    if fun > -ev:  # the fixed point was already better (a search that stalled)
        x, fun = start, -ev
    alpha = np.clip(np.exp(x), *ALPHA_BOUNDS)
    return EvidenceMax(alpha, -fun, it + nfev, ok, tuple(history))


def _neg_log_evidence(evidence_at: Callable) -> Callable:
    def f(log_alpha):
        a = np.clip(np.exp(np.atleast_1d(np.asarray(log_alpha, dtype=float))), *ALPHA_BOUNDS)
        return -evidence_at(a)[0]
    return f


def _brent(f: Callable, x0: float) -> optimize.OptimizeResult:
    """Bounded Brent search on ln alpha around ``x0``, widening while the optimum is on a bound."""
    lo_lim, hi_lim = np.log(ALPHA_BOUNDS[0]), np.log(ALPHA_BOUNDS[1])
    width = np.log(100.0)
    nfev = 0
    while True:
        lo, hi = max(x0 - width, lo_lim), min(x0 + width, hi_lim)
        res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-9})
        nfev += res.nfev
        at_edge = min(res.x - lo, hi - res.x) < 1e-4 * width
        if not at_edge or (lo <= lo_lim and hi >= hi_lim):
            res.nfev = nfev
            return res
        x0, width = float(res.x), width * 4


# --- predictive distribution of a binary response ------------------------------------------

def kappa(var: np.ndarray) -> np.ndarray:
    """kappa(s^2) = (1 + pi s^2 / 8)^(-1/2) (PRML eq. 4.154)."""
    return 1.0 / np.sqrt(1.0 + np.pi * np.asarray(var, dtype=float) / 8.0)


def linear_predictor_moments(X: np.ndarray, coef: np.ndarray, cov: np.ndarray,
                             offset: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``a = x' w`` under the posterior N(coef, cov) (PRML eq. 4.149-4.150).

    Parameters
    ----------
    X : ndarray of shape (n, p)
    coef : ndarray of shape (p,)
    cov : ndarray of shape (p, p)
    offset : ndarray of shape (n,), optional

    Returns
    -------
    mu_a, var_a : ndarray of shape (n,)
    """
    mu = X @ coef
    if offset is not None:
        mu = mu + offset
    var = np.einsum("ij,jk,ik->i", X, cov, X)
    return mu, np.maximum(var, 0.0)


def probit_predictive(mu_a: np.ndarray, var_a: np.ndarray, link: str = "logit") -> np.ndarray:
    """Predictive probability ``int g^-1(a) N(a | mu_a, var_a) da`` in closed form.

    For the logit link the probit approximation ``sigma(kappa(var_a) mu_a)`` (PRML eq. 4.155);
    for the probit link the exact ``Phi(mu_a / sqrt(1 + var_a))``.

    Parameters
    ----------
    mu_a, var_a : ndarray of shape (n,)
    link : {"logit", "probit"}
    """
    if link == "logit":
        return special.expit(kappa(var_a) * mu_a)
    if link == "probit":
        return special.ndtr(mu_a / np.sqrt(1.0 + var_a))
    raise ValueError(f"the probit approximation needs a logit or probit link, not {link!r}; "
                     "use method='quadrature'")


#: Largest sd of the linear predictor for which 64-node Gauss-Hermite is used by default: up to
#: it the rule is accurate to ~1e-11 for every binomial link (logit and probit: to sd 2, the
#: value the results pass for them). Wider, g^-1 looks like a step on the Gaussian's scale and
#: Gauss-Hermite converges slowly (poles of the logistic at +-i pi, of the cauchit at +-i).
GH_MAX_SD = 0.75


def quadrature_predictive(mu_a: np.ndarray, var_a: np.ndarray, inverse_link: Callable,
                          n_nodes: int = 64, gh_max_sd: float = GH_MAX_SD) -> np.ndarray:
    """``int g^-1(a) N(a | mu_a, var_a) da`` by Gauss-Hermite quadrature.

    Rows whose sd exceeds ``gh_max_sd`` use composite 16-point Gauss-Legendre panels that
    resolve both the Gaussian (panels of 3/8 sd over mu -+ 9 sd) and g^-1 (panels of width 2
    over -40..40), so the result is accurate to ~1e-10 for any posterior width.

    Parameters
    ----------
    mu_a, var_a : ndarray of shape (n,)
    inverse_link : callable
        g^-1, vectorised.
    n_nodes : int
        Nodes of the (probabilists') Gauss-Hermite rule.
    gh_max_sd : float
        Largest sd of a row integrated by Gauss-Hermite.

    Returns
    -------
    ndarray of shape (n,)
    """
    if n_nodes < 1:
        raise ValueError(f"n_nodes must be a positive integer, got {n_nodes}")
    mu_a, sd = np.asarray(mu_a, dtype=float), np.sqrt(np.asarray(var_a, dtype=float))
    z, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    w = w / np.sqrt(2.0 * np.pi)
    out = np.empty(mu_a.shape[0])
    narrow = sd <= gh_max_sd
    a = mu_a[narrow, None] + sd[narrow, None] * z[None, :]
    out[narrow] = inverse_link(a) @ w
    wide = np.flatnonzero(~narrow)
    for s in range(0, wide.size, 1024):
        rows = wide[s: s + 1024]
        out[rows] = _panel_quadrature(mu_a[rows], sd[rows], inverse_link)
    return np.clip(out, 0.0, 1.0)


def _panel_quadrature(mu: np.ndarray, sd: np.ndarray, inverse_link: Callable) -> np.ndarray:
    """Composite Gauss-Legendre for wide Gaussians: panel edges from both scales, per row."""
    lo, hi = mu - 9.0 * sd, mu + 9.0 * sd
    gauss = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, 49)[None, :]
    link = np.clip(np.linspace(-40.0, 40.0, 41)[None, :], lo[:, None], hi[:, None])
    edges = np.sort(np.concatenate([gauss, link], axis=1), axis=1)
    x, w = np.polynomial.legendre.leggauss(16)
    mid = (edges[:, 1:] + edges[:, :-1]) / 2.0
    half = (edges[:, 1:] - edges[:, :-1]) / 2.0
    a = mid[..., None] + half[..., None] * x
    dens = np.exp(-0.5 * ((a - mu[:, None, None]) / sd[:, None, None]) ** 2)
    dens /= sd[:, None, None] * np.sqrt(2.0 * np.pi)
    return np.sum(inverse_link(a) * dens * (half[..., None] * w), axis=(1, 2))


def monte_carlo_predictive(X: np.ndarray, coef: np.ndarray, cov: np.ndarray,
                           inverse_link: Callable, offset: np.ndarray | None,
                           n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Posterior mean of ``g^-1(x' w)`` over ``n_draws`` draws of ``w ~ N(coef, cov)``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    coef : ndarray of shape (p,)
    cov : ndarray of shape (p, p)
    inverse_link : callable
    offset : ndarray of shape (n,) or None
    n_draws : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n,)
    """
    if n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer, got {n_draws}")
    # eigh rather than Cholesky: a covariance with a near-zero direction stays usable
    vals, vecs = np.linalg.eigh(cov)
    root = vecs * np.sqrt(np.maximum(vals, 0.0))
    draws = coef[None, :] + rng.standard_normal((n_draws, coef.shape[0])) @ root.T
    out = np.empty(X.shape[0])
    rows = max(1, 2**22 // n_draws)  # an (rows x n_draws) block of about 32 MB at a time
    for s in range(0, X.shape[0], rows):
        eta = X[s: s + rows] @ draws.T
        if offset is not None:
            eta += offset[s: s + rows, None]
        out[s: s + rows] = inverse_link(eta).mean(axis=1)
    return out
