"""Closed forms of the binomial family's IRLS terms for the logit and probit links.

:meth:`glmclass.families.Family.terms_for` evaluates ``(w, u, deviance)`` at a linear
predictor from the link's ``log mu'`` and the family's ``log V``, which costs several logs and
exponentials per row; at 1e6 rows that is a large share of a pass. For the two links most fits
use, the terms have closed forms in one special function per row:

* logit: ``e = exp(-|eta|)`` gives ``mu (1 - mu) = e / (1 + e)^2`` and the log-likelihood;
* probit, 0/1 responses: with ``s = (2 y - 1) eta`` the row's log-likelihood is
  ``log Phi(s)``, the score per unit of eta ``(2 y - 1) lambda(s)`` with the inverse Mills
  ratio ``lambda(s) = phi(s) / Phi(s)``, the observed information ``lambda (lambda + s)``
  and the Fisher weight ``phi^2 / (Phi (1 - Phi))`` — all from the smaller tail
  ``a = Phi(-|eta|)`` (one ``ndtr``), its ``log`` and ``log1p(-a)``.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., §4.3-4.4.
Greene, W. H. (2018). *Econometric Analysis*, 8th ed., §17.3 (the probit's score and Hessian).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from .links import HALF_LOG_2PI, normal_tail
from .rows.constant import is_constant

# |eta| above which the double-exponential links overflow; as R's cloglog mu.eta (pmin(eta, 700))
ETA_MAX = 700.0

#: ``terms(eta, observed) -> (w, u, deviance)`` at a fixed response and fixed weights.
Terms = Callable[..., tuple[np.ndarray, np.ndarray, float]]


def all_ones(weights: np.ndarray) -> bool:
    """Whether every weight is exactly 1, so that multiplying by the weights changes nothing
    (the default weights are a broadcast view of one cell: one comparison)."""
    if is_constant(weights):
        return bool(weights[0] == 1.0)
    return bool((weights == 1.0).all())


def logit_terms_for(y: np.ndarray, weights: np.ndarray) -> Terms:
    """Binomial-logit IRLS terms from one ``exp`` and one ``log1p`` per observation.

    With ``e = exp(-|eta|)``: ``mu (1 - mu) = e / (1 + e)^2`` and the log-likelihood
    ``y log mu + (1 - y) log(1 - mu) = y eta - max(eta, 0) - log1p(e)`` (scipy's ``log_expit``
    rearranged). ``|eta|`` is capped at 700 as in :meth:`Family.working_weights`; the cap changes
    the log-likelihood by less than 1e-300. The saturated deviance (zero for 0/1 responses) and
    whether the weights are all 1 depend on ``y`` and ``weights`` only: found here, once.
    """
    ones = all_ones(weights)
    saturated = None
    if ((y > 0) & (y < 1)).any():  # proportions
        saturated = 2.0 * float(weights @ (special.xlogy(y, y) + special.xlogy(1.0 - y, 1.0 - y)))

    def terms(eta: np.ndarray, observed: bool = False):  # canonical: observed = expected
        # in place where a temporary is ours: at a few hundred rows the allocations cost as
        # much as the arithmetic
        # (four row vectors at most at once: each fresh one costs page faults on a Dask
        # worker, see glmclass.rows.dask.WORKER_BLOCK_ROWS)
        eta = np.asarray(eta, dtype=float)
        e = np.abs(eta)
        np.minimum(e, ETA_MAX, out=e)
        np.negative(e, out=e)
        np.exp(e, out=e)  # exp(-min(|eta|, 700))
        loglik = np.multiply(y, eta)
        loglik -= np.maximum(eta, 0.0)  # (a temporary freed at once: mu takes its memory)
        mu = np.where(eta >= 0, 1.0, e)  # (not copyto with where=: twice the calls, slower)
        ope = e + 1.0
        mu /= ope
        w = np.multiply(ope, ope, out=ope)
        np.divide(e, w, out=w)  # e / (1 + e)^2 = mu (1 - mu)
        u = np.subtract(y, mu, out=mu)
        if not ones:
            np.multiply(weights, w, out=w)
            np.multiply(weights, u, out=u)
        loglik -= np.log1p(e, out=e)
        dev = -2.0 * float(weights @ loglik)
        if saturated is not None:
            dev += saturated
        return w, u, dev

    return terms


#: ``-s`` above which the probit's ``lambda(s) + s`` comes from the continued fraction
#: (:func:`_mills_gap`): ``lambda`` nears ``-s``, and their sum would keep ~s^4 eps of its digits.
MILLS_FROM = 5.0


def _mills_gap(x: np.ndarray) -> np.ndarray:
    """``phi(x) / Q(x) - x`` for ``x >= 5`` (``Q`` the upper normal tail), to rounding, from
    Laplace's continued fraction ``Q / phi = 1 / (x + 1 / (x + 2 / (x + 3 / ...)))``, cut
    after 30 terms (full precision from x = 5 on)."""
    t = np.zeros_like(x)
    for k in range(30, 1, -1):
        t = k / (x + t)
    return 1.0 / (x + t)


def probit_terms_for(y: np.ndarray, weights: np.ndarray,
                     success: np.ndarray | None = None) -> Terms:
    """Binomial-probit IRLS terms for 0/1 responses (``y`` holds no proportions; ``success``
    is ``y == 1`` when the caller has it).

    With ``s = (2 y - 1) eta``, ``t = -|eta|`` and ``a = Phi(t)``: ``log Phi(s)`` is
    ``log a`` where ``s < 0`` and ``log1p(-a)`` elsewhere; ``lambda(s) = exp(log phi(eta) -
    log Phi(s))``; the Fisher weight ``exp(2 log phi - log a - log1p(-a))`` (that is
    ``mu'^2 / V``) and the observed one ``lambda (lambda + s)``, where ``s < -5`` with
    ``lambda + s`` from a continued fraction (no cancellation). No ``1 - mu`` is formed, so
    the score keeps its digits where ``mu`` rounds to 1. As in :meth:`Family.working_weights`,
    the weights and the score are those at ``eta`` capped at +-700; the deviance is at ``eta``.
    """
    ones = all_ones(weights)
    sign = np.where(y == 1.0 if success is None else success, 1.0, -1.0)  # 2 y - 1

    def terms(eta: np.ndarray, observed: bool = False):
        eta = np.asarray(eta, dtype=float)
        t = np.abs(eta)
        np.negative(t, out=t)
        _, small, big = normal_tail(t)
        s = sign * eta
        below = s < 0  # the row's own probability is the smaller tail
        log_p = np.where(below, small, big)  # log Phi(s), log-likelihood of the row
        dev = -2.0 * float(np.add.reduce(log_p) if ones else weights @ log_p)
        with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN eta: a wild step
            if eta.size and np.minimum.reduce(t) < -ETA_MAX:  # the weights' cap binds
                etac = np.clip(eta, -ETA_MAX, ETA_MAX)
                _, small, big = normal_tail(-np.abs(etac))
                s = sign * etac
                log_p = np.where(s < 0, small, big)
                eta = etac
            log_phi = np.multiply(eta, eta)
            log_phi *= -0.5
            log_phi -= HALF_LOG_2PI
            lam = np.subtract(log_phi, log_p, out=log_p)
            np.exp(lam, out=lam)  # phi(s) / Phi(s)
            far = s < -MILLS_FROM  # lambda ~ -s: lambda + s from the continued fraction
            gap = None
            if far.any():
                gap = _mills_gap(-s[far])
                lam[far] = gap - s[far]
            log_v = np.add(small, big, out=small)
            w = np.multiply(log_phi, 2.0, out=log_phi)
            w -= log_v
            np.exp(w, out=w)
            if observed:
                w = np.add(lam, s, out=w)
                if gap is not None:
                    w[far] = gap
                w *= lam
            u = np.multiply(lam, sign, out=lam)
        if not ones:
            np.multiply(weights, w, out=w)
            np.multiply(weights, u, out=u)
        return w, u, dev

    return terms
