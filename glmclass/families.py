"""Exponential-family distributions for GLMs: Binomial, Gaussian and Poisson.

A :class:`Family` *has* a :class:`~glmclass.links.Link`. Everything IRLS needs is computed
from the linear predictor ``eta`` on the log scale, so that tails neither overflow nor lose the
weights: the working weight ``w = mu'(eta)^2 / V(mu)`` and the ratio ``mu'(eta) / V(mu)`` come
from ``exp(log mu' - log V)`` rather than a quotient of two underflowed numbers.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., ch. 2.
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.6.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy import special

from . import links as L
from .binomial_terms import ETA_MAX as _ETA_MAX
from .binomial_terms import Terms, logit_terms_for, probit_terms_for
from .binomial_terms import all_ones as _all_ones


def _xlogy_safe(y: np.ndarray, logx: np.ndarray) -> np.ndarray:
    """y * log x with 0 * (-inf) = 0."""
    with np.errstate(invalid="ignore"):
        return np.where(y == 0, 0.0, y * logx)


def _zero_one(y: np.ndarray) -> bool:
    """Whether every response is exactly 0 or 1 (then a binomial row with one trial has a
    binomial coefficient of 1, and its three log-gamma terms can be skipped)."""
    return not np.any((y != 0.0) & (y != 1.0))


def _nested(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether one open interval contains the other."""
    return (a[0] >= b[0] and a[1] <= b[1]) or (b[0] >= a[0] and b[1] <= a[1])


def _inside(mu: np.ndarray, interval: tuple[float, float], frac: float = 1e-3) -> np.ndarray:
    """Starting means moved inside a bounded open interval (a link's range) where they are not:
    a link with a narrower range than the family's mean space (robust logit, logit for a
    Poisson) could not map them to a linear predictor. Means already inside are unchanged."""
    lo, hi = interval
    width = hi - lo if math.isfinite(hi - lo) else 1.0
    # the extremes first (fmin/fmax skip NaN): usually every mean is inside, nothing replaced
    mu = np.asarray(mu)
    if lo > -np.inf and mu.size and np.fmin.reduce(mu, axis=None) <= lo:
        mu = np.where(mu <= lo, lo + frac * width, mu)
    if hi < np.inf and mu.size and np.fmax.reduce(mu, axis=None) >= hi:
        mu = np.where(mu >= hi, hi - frac * width, mu)
    return mu


@dataclass(frozen=True)
class Family(ABC):
    """Base class: a distribution with variance function V(mu), composed with a link.

    A family accepts any link (an instance, its class, or its name such as ``"probit"``) whose
    range is nested with the family's mean space, as R accepts any ``link-glm`` object: a link
    whose means stay inside the space (logit for the binomial, a robust logit) can never leave
    the domain, and one whose range is wider (log or identity for the binomial) is checked at
    every IRLS step, with step-halving, as R's ``glm.fit`` does.
    """

    link: L.Link
    name: ClassVar[str] = "family"
    mean_space: ClassVar[tuple[float, float]] = (-np.inf, np.inf)
    fixed_scale: ClassVar[bool] = True

    def __post_init__(self) -> None:
        link = L.check_link(self.link)
        object.__setattr__(self, "link", link)  # a name or class becomes the instance
        if not _nested(link.range, self.mean_space):
            # instances: a link's range may depend on its parameters (robust logit)
            fits = sorted(lk.name for lk in L.registered() if _nested(lk.range, self.mean_space))
            raise ValueError(
                f"link {link!r} is not available for the {self.name} family: its means range "
                f"over {_interval(link.range)} and the family's over "
                f"{_interval(self.mean_space)}; use one of {', '.join(fits)}, or a link whose "
                "range fits")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(link={self.link!r})"

    @property
    def is_canonical(self) -> bool:
        """Whether the link is the canonical one (then observed = expected information)."""
        return self.link.canonical == self.name.lower()

    @property
    def link_stays_inside(self) -> bool:
        """Whether every linear predictor maps to a mean inside the family's mean space (the
        link's range is contained in it): no domain check can fail, and for the binomial,
        separation then means infinite estimates."""
        lo, hi = self.link.range
        return self.mean_space[0] <= lo and hi <= self.mean_space[1]

    def start_eta(self, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Starting linear predictor: the link of :meth:`start_mu` (R's ``mustart``), with the
        means moved inside the link's range where they are not. A link may give its own
        starting means (``link.start_mu(y, weights)``, e.g. the robust logit's)."""
        own = getattr(self.link, "start_mu", None)
        mu = self.start_mu(y, weights) if own is None else own(y, weights)
        return self.link.link(_inside(mu, self.link.range))

    # --- what each family defines -------------------------------------------------------
    @abstractmethod
    def log_variance(self, eta: np.ndarray) -> np.ndarray:
        """log V(mu(eta))."""

    @abstractmethod
    def dvariance(self, mu: np.ndarray) -> np.ndarray:
        """dV/dmu."""

    @abstractmethod
    def unit_deviance(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """Unit deviance d(y, mu(eta)) (before prior weights), elementwise: ``y`` and ``eta``
        broadcast against each other (e.g. one ``eta`` for every row)."""

    @abstractmethod
    def loglik_obs(
        self, y: np.ndarray, eta: np.ndarray, var_weights: np.ndarray, scale: float
    ) -> np.ndarray:
        """Log-likelihood of each observation (before frequency weights), elementwise: the
        arrays broadcast against each other (e.g. one ``eta`` for every row)."""

    @abstractmethod
    def start_mu(self, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Starting values for mu, as R's ``mustart``."""

    @abstractmethod
    def check_endog(self, y: np.ndarray) -> None:
        """Raise ValueError when y is outside the support of the family."""

    # --- derived quantities ---------------------------------------------------------------
    def variance(self, mu: np.ndarray) -> np.ndarray:
        """V(mu)."""
        return np.exp(self.log_variance(self.link.link(mu)))

    def valid(self, eta: np.ndarray) -> bool:
        """Whether eta maps to a mean inside the family's domain."""
        if not self.link.valid_eta(eta):
            return False
        eta = np.asarray(eta, dtype=float)
        if eta.size == 0:
            return True
        # log V is finite on an interval of eta for every family and link here (log mu and
        # log(1 - mu) are monotone in eta), so the two extremes decide: no pass over all of eta
        ends = np.array([np.minimum.reduce(eta, axis=None), np.maximum.reduce(eta, axis=None)])
        with np.errstate(all="ignore"):
            return bool(np.logical_and.reduce(np.isfinite(self.log_variance(ends))))

    def score_ratio(self, eta: np.ndarray) -> np.ndarray:
        """mu'(eta) / V(mu): the factor of (y - mu) in the score."""
        eta = np.clip(eta, -_ETA_MAX, _ETA_MAX)  # beyond, exp(+-eta) is inf - inf
        with np.errstate(over="ignore"):
            return np.exp(self.link.log_mu_eta(eta) - self.log_variance(eta))

    def working_weights(self, eta: np.ndarray) -> np.ndarray:
        """Fisher weights mu'(eta)^2 / V(mu) (before prior weights)."""
        eta = np.clip(eta, -_ETA_MAX, _ETA_MAX)
        with np.errstate(over="ignore"):
            return np.exp(2.0 * self.link.log_mu_eta(eta) - self.log_variance(eta))

    def irls_terms(
        self, y: np.ndarray, eta: np.ndarray, weights: np.ndarray, observed: bool = False
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """What one IRLS step needs at ``eta``: ``(w, u, deviance)``.

        ``w`` are the prior-weighted Fisher weights (observed-information weights when
        ``observed`` and the link is not canonical), ``u = weights * mu'/V * (y - mu)`` the score
        per unit of eta (so that ``w z = w (eta - offset) + u``), ``deviance`` the weighted sum of
        unit deviances.
        """
        return self._terms(y, weights)(eta, observed)

    def terms_for(self, y: np.ndarray, weights: np.ndarray) -> Terms:
        """:meth:`irls_terms` at a fixed response and fixed weights, as
        ``terms(eta, observed=False) -> (w, u, deviance)``.

        A fit over rows held as one block evaluates the terms at a handful of linear predictors
        of the same rows; what depends on ``y`` and ``weights`` alone (which responses are
        proportions, the saturated deviance, whether every weight is 1) is then worked out once
        here instead of at every pass. The results are those of :meth:`irls_terms`, to the bit.

        Parameters
        ----------
        y : ndarray of shape (n,)
        weights : ndarray of shape (n,)

        Returns
        -------
        callable
        """
        if type(self).irls_terms is not Family.irls_terms:  # a subclass's own terms
            def own(eta: np.ndarray, observed: bool = False):
                return self.irls_terms(y, eta, weights, observed=observed)

            return own
        return self._terms(y, weights)

    def _terms(self, y: np.ndarray, weights: np.ndarray) -> Terms:
        """The family's own :meth:`terms_for` (what :meth:`irls_terms` evaluates)."""
        link, ones = self.link, _all_ones(weights)
        shared = (type(self).working_weights is Family.working_weights
                  and type(self).score_ratio is Family.score_ratio)
        unit_deviance = self.unit_deviance_for(y)

        def terms(eta: np.ndarray, observed: bool = False):
            if not shared:  # as written: a subclass's own weights or ratio
                w = self.observed_weights(y, eta) if observed else self.working_weights(eta)
                with np.errstate(invalid="ignore"):
                    u = weights * self.score_ratio(eta) * (y - link.inverse(eta))
                return weights * w, u, float(np.add.reduce(weights * unit_deviance(eta)))
            # working_weights and score_ratio from one log mu' and one log V, at eta capped at
            # +-_ETA_MAX (a copy only where the cap binds)
            clipped = eta.size > 0 and (np.minimum.reduce(eta) < -_ETA_MAX
                                        or np.maximum.reduce(eta) > _ETA_MAX)
            etac = np.clip(eta, -_ETA_MAX, _ETA_MAX) if clipped else eta
            with np.errstate(over="ignore", invalid="ignore"):
                log_me, log_v = link.log_mu_eta(etac), self.log_variance(etac)
                w = self.observed_weights(y, eta) if observed else np.exp(2.0 * log_me - log_v)
                ratio = np.exp(log_me - log_v)
                if ones:
                    u = ratio * (y - link.inverse(eta))
                    return w, u, float(np.add.reduce(unit_deviance(eta)))
                u = weights * ratio * (y - link.inverse(eta))
            return weights * w, u, float(np.add.reduce(weights * unit_deviance(eta)))

        return terms

    def unit_deviance_for(self, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """:meth:`unit_deviance` at a fixed response, as ``unit(eta)`` (for
        :meth:`terms_for`: a family may work out its response's share once)."""

        def unit(eta: np.ndarray) -> np.ndarray:
            return self.unit_deviance(y, eta)

        return unit

    def scaled_residual(self, y: np.ndarray, eta: np.ndarray, log_scale: np.ndarray
                        ) -> np.ndarray:
        """(y - mu) / exp(log_scale) without 0 * inf: the Pearson (``log_scale = log V / 2``)
        and working (``log_scale = log mu'``) residuals where mu' or V underflow."""
        mu = self.link.inverse(eta)
        with np.errstate(over="ignore", invalid="ignore"):
            r = (y - mu) * np.exp(-log_scale)
        return np.where(y == mu, 0.0, r)

    def observed_weights(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """Minus d^2 l / d eta^2 per observation: the weights of the observed information.

        ``w_obs = w - (y - mu) * (r * mu''/mu' - r^2 V'(mu))`` with ``r = mu'/V``; it equals the
        Fisher weight for a canonical link.
        """
        if self.is_canonical:
            return self.working_weights(eta)
        eta = np.clip(eta, -_ETA_MAX, _ETA_MAX)
        mu = self.link.inverse(eta)
        r = self.score_ratio(eta)
        return self.working_weights(eta) - (y - mu) * (
            r * self.link.dlog_mu_eta(eta) - r * r * self.dvariance(mu)
        )


def _binomial_deviance(y: np.ndarray, lm: np.ndarray, l1m: np.ndarray) -> np.ndarray:
    """Unit deviance from log mu and log(1 - mu); the saturated term only for proportions."""
    dev = -2.0 * (_xlogy_safe(y, lm) + _xlogy_safe(1.0 - y, l1m))
    frac = (y > 0) & (y < 1)
    if frac.any():
        dev += 2.0 * (special.xlogy(y, y) + special.xlogy(1.0 - y, 1.0 - y))
    return dev


@dataclass(frozen=True, repr=False)
class Binomial(Family):
    """Binomial family for 0/1 responses or proportions (``var_weights`` = number of trials).

    Parameters
    ----------
    link : Link or str, default Logit()
        Any link whose range is nested with (0, 1): logit, probit, cloglog, loglog, cauchit,
        log, identity, or a user-defined one.
    """

    link: L.Link = field(default_factory=L.Logit)
    name: ClassVar[str] = "Binomial"
    mean_space: ClassVar[tuple[float, float]] = (0.0, 1.0)

    def log_variance(self, eta):
        return self.link.log_inverse(eta) + self.link.log_inverse_c(eta)

    def dvariance(self, mu):
        return 1.0 - 2.0 * mu

    def unit_deviance(self, y, eta):
        lm, l1m = self.link.log_inverse(eta), self.link.log_inverse_c(eta)
        return _binomial_deviance(y, lm, l1m)

    def _terms(self, y, weights):
        """As :meth:`Family._terms`, with log mu and log(1 - mu) evaluated once (the generic
        version evaluates them four to six times); the logit link, and the probit link for
        0/1 responses, have closed forms (:mod:`glmclass.binomial_terms`)."""
        if type(self.link) is L.Logit:  # exactly the logit (not a subclass): closed form
            return logit_terms_for(y, weights)
        if type(self.link) is L.Probit:
            success = y == 1.0
            if np.count_nonzero(success) == np.count_nonzero(y):  # every y is 0 or 1
                return probit_terms_for(y, weights, success)
        link = self.link
        ones = _all_ones(weights)
        one_minus_y = 1.0 - y
        no_success, no_failure = y == 0, one_minus_y == 0  # where y log mu, (1-y) log(1-mu) are 0
        saturated = None
        if ((y > 0) & (y < 1)).any():  # proportions
            saturated = 2.0 * (special.xlogy(y, y) + special.xlogy(one_minus_y, one_minus_y))
        binary = saturated is None  # every y is 0 or 1: y log mu is log mu or masked

        def terms(eta, observed=False):
            mu, lm, l1m = link.inverse_logs(eta)
            # the weights use eta capped at +-_ETA_MAX, as Family.working_weights
            clipped = eta.size > 0 and (np.minimum.reduce(eta) < -_ETA_MAX
                                        or np.maximum.reduce(eta) > _ETA_MAX)
            etac = np.clip(eta, -_ETA_MAX, _ETA_MAX) if clipped else eta
            log_v = self.log_variance(etac) if clipped else None
            log_me = link.log_mu_eta(etac)
            if observed:
                mu_c = link.inverse(etac) if clipped else mu
                dlog = link.dlog_mu_eta(etac)
            # a wild trial step: inf or NaN deviance, then step-halving. In place only into
            # arrays made here: a link may return its argument (the log link's log mu is eta)
            with np.errstate(over="ignore", invalid="ignore"):
                unit = np.where(no_success, 0.0, lm if binary else y * lm)
                unit += np.where(no_failure, 0.0, l1m if binary else one_minus_y * l1m)
                unit *= -2.0
                if saturated is not None:
                    unit += saturated
                dev = float(np.add.reduce(unit if ones else weights * unit))
                if log_v is None:
                    log_v = lm + l1m
                w = 2.0 * log_me
                w -= log_v
                np.exp(w, out=w)
                ratio = np.subtract(log_me, log_v)
                np.exp(ratio, out=ratio)
                if observed:  # as Family.observed_weights
                    w = w - (y - mu_c) * (ratio * dlog - ratio * ratio * self.dvariance(mu_c))
                u = y - mu
                if ones:
                    u *= ratio
                    return w, u, dev
                u *= weights * ratio
                return np.multiply(weights, w, out=w), u, dev

        return terms

    def loglik_obs(self, y, eta, var_weights, scale=1.0):
        lm, l1m = self.link.log_inverse(eta), self.link.log_inverse_c(eta)
        if _all_ones(np.asarray(var_weights)) and _zero_one(y):  # one trial each: coefficient 1
            return _xlogy_safe(y, lm) + _xlogy_safe(1.0 - y, l1m)
        n = var_weights
        k = n * y
        k = np.where(np.abs(k - np.round(k)) < 1e-7, np.round(k), k)  # R rounds successes
        comb = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
        return comb + _xlogy_safe(k, lm) + _xlogy_safe(n - k, l1m)

    def scaled_residual(self, y, eta, log_scale):
        # y - mu = y (1 - mu) - (1 - y) mu, each term on the log scale: exact when mu rounds to
        # 0 or 1 (|eta| large), where y - mu and V(mu) lose every digit
        lm, l1m = self.link.log_inverse(eta), self.link.log_inverse_c(eta)
        with np.errstate(over="ignore", invalid="ignore"):  # masked 0 * inf terms
            up = np.where(y > 0, y * np.exp(l1m - log_scale), 0.0)
            down = np.where(y < 1, (1.0 - y) * np.exp(lm - log_scale), 0.0)
        return up - down

    def start_mu(self, y, weights):
        return (weights * y + 0.5) / (weights + 1.0)

    def check_endog(self, y):
        if np.any((y < 0) | (y > 1)):
            raise ValueError(
                "a Binomial response must be 0/1, a two-level label, or a proportion in [0, 1] "
                "with var_weights = number of trials"
            )


@dataclass(frozen=True, repr=False)
class Poisson(Family):
    """Poisson family for counts (log link by default)."""

    link: L.Link = field(default_factory=L.Log)
    name: ClassVar[str] = "Poisson"
    mean_space: ClassVar[tuple[float, float]] = (0.0, np.inf)

    def log_variance(self, eta):
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.link.log_inverse(eta)

    def dvariance(self, mu):
        return np.ones_like(mu)

    def unit_deviance(self, y, eta):
        mu = self.link.inverse(eta)
        return 2.0 * (special.xlogy(y, y) - _xlogy_safe(y, self.link.log_inverse(eta)) - y + mu)

    def unit_deviance_for(self, y):
        if type(self).unit_deviance is not Poisson.unit_deviance:
            return super().unit_deviance_for(y)
        saturated, zero = special.xlogy(y, y), y == 0  # y log y, and where y log mu is 0

        def unit(eta):  # as unit_deviance
            mu = self.link.inverse(eta)
            log_mu = self.link.log_inverse(eta)
            with np.errstate(invalid="ignore"):
                out = saturated - np.where(zero, 0.0, y * log_mu)
            out -= y
            out += mu
            out *= 2.0
            return out

        return unit

    def loglik_obs(self, y, eta, var_weights, scale=1.0):
        mu = self.link.inverse(eta)
        ll = _xlogy_safe(y, self.link.log_inverse(eta)) - mu - special.gammaln(y + 1)
        return var_weights * ll

    def start_mu(self, y, weights):
        return y + 0.1

    def check_endog(self, y):
        if np.any(y < 0):
            raise ValueError("a Poisson response must be non-negative counts")


@dataclass(frozen=True, repr=False)
class Gaussian(Family):
    """Gaussian family (identity link by default); the dispersion is estimated."""

    link: L.Link = field(default_factory=L.Identity)
    name: ClassVar[str] = "Gaussian"
    fixed_scale: ClassVar[bool] = False

    def log_variance(self, eta):
        return np.zeros_like(np.asarray(eta, dtype=float))

    def dvariance(self, mu):
        return np.zeros_like(mu)

    def unit_deviance(self, y, eta):
        return (y - self.link.inverse(eta)) ** 2

    def loglik_obs(self, y, eta, var_weights, scale=1.0):
        r = y - self.link.inverse(eta)
        with np.errstate(divide="ignore"):
            return -0.5 * (np.log(2 * np.pi * scale / var_weights) + var_weights * r * r / scale)

    def start_mu(self, y, weights):
        if self.link.range[0] >= 0:  # a link onto positive means (log): start inside it
            return np.where(y > 0, y, 0.1)
        return y.astype(float)

    def check_endog(self, y):
        if self.link.range[0] >= 0 and not np.any(y > 0):
            raise ValueError(f"a Gaussian model with the {self.link.name} link (positive means) "
                             "needs some positive responses")


def _interval(r: tuple[float, float]) -> str:
    return f"({r[0]:g}, {r[1]:g})"
