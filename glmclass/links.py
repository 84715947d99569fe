"""Link functions g(mu) = eta, with the derivatives IRLS and the observed information need.

Every link works on the linear-predictor scale and is stable in the tails: the binomial
links give ``log mu`` and ``log(1 - mu)`` directly from ``eta`` (through ``log_expit``,
``log_ndtr``, ...), so deviances and weights stay finite at ``|eta| = 800``.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., ch. 2 and 4.
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.6 (canonical links).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
from scipy import special

_EPS = np.finfo(float).eps


def _log1mexp(e: np.ndarray, log_e: np.ndarray) -> np.ndarray:
    """log(1 - exp(-e)) for e = exp(log_e) >= 0, accurate for every e (Maechler, 2012).

    ``log(-expm1(-e))`` for e <= log 2 (``log_e`` itself once e underflows), ``log1p(-exp(-e))``
    above, where ``1 - exp(-e)`` is near 1.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.where(e < 1e-300, log_e, np.log(-np.expm1(-e)))
        return np.where(e <= np.log(2.0), small, np.log1p(-np.exp(-e)))


class Link(ABC):
    """Base class of the links: a small immutable object without state.

    Subclasses implement ``link``, ``inverse``, ``log_mu_eta`` and ``dlog_mu_eta``; the other
    methods derive from those. ``log_inverse``/``log_inverse_c`` (log mu, log(1 - mu)) are
    overridden where a tail-stable formula exists.
    """

    name: str = "link"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @abstractmethod
    def link(self, mu: np.ndarray) -> np.ndarray:
        """eta = g(mu)."""

    @abstractmethod
    def inverse(self, eta: np.ndarray) -> np.ndarray:
        """mu = g^-1(eta)."""

    @abstractmethod
    def log_mu_eta(self, eta: np.ndarray) -> np.ndarray:
        """log(dmu/deta)."""

    @abstractmethod
    def dlog_mu_eta(self, eta: np.ndarray) -> np.ndarray:
        """d log(dmu/deta) / deta = mu''(eta) / mu'(eta)."""

    def mu_eta(self, eta: np.ndarray) -> np.ndarray:
        """dmu/deta."""
        with np.errstate(over="ignore"):  # the log link's mu' = exp(eta) may be inf
            return np.exp(self.log_mu_eta(eta))

    def mu_eta2(self, eta: np.ndarray) -> np.ndarray:
        """d^2 mu / deta^2, needed for the observed information of non-canonical links."""
        m, d = self.mu_eta(eta), self.dlog_mu_eta(eta)
        with np.errstate(invalid="ignore"):
            # mu' underflows to 0 faster than d log mu' grows (cloglog at eta = 800): 0, not NaN
            return np.where(m == 0, 0.0, m * d)

    def log_inverse(self, eta: np.ndarray) -> np.ndarray:
        """log mu (NaN where mu < 0: the caller's domain check rejects such eta)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(self.inverse(eta))

    def log_inverse_c(self, eta: np.ndarray) -> np.ndarray:
        """log(1 - mu), for links onto (0, 1)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(-self.inverse(eta))

    def valid_eta(self, eta: np.ndarray) -> bool:
        """Whether every eta is in the domain of the inverse link."""
        return bool(np.all(np.isfinite(eta)))


class Logit(Link):
    """Logit link, eta = log(mu / (1 - mu)); canonical for the binomial."""

    name = "logit"

    def link(self, mu):
        return special.logit(mu)

    def inverse(self, eta):
        return special.expit(eta)

    def log_inverse(self, eta):
        return special.log_expit(eta)

    def log_inverse_c(self, eta):
        return special.log_expit(-np.asarray(eta))

    def log_mu_eta(self, eta):
        return special.log_expit(eta) + special.log_expit(-np.asarray(eta))

    def dlog_mu_eta(self, eta):
        return 1.0 - 2.0 * special.expit(eta)


class Probit(Link):
    """Probit link, eta = Phi^-1(mu)."""

    name = "probit"

    def link(self, mu):
        return special.ndtri(mu)

    def inverse(self, eta):
        return special.ndtr(eta)

    def log_inverse(self, eta):
        return special.log_ndtr(eta)

    def log_inverse_c(self, eta):
        return special.log_ndtr(-np.asarray(eta))

    def log_mu_eta(self, eta):
        eta = np.asarray(eta, dtype=float)
        return -0.5 * eta * eta - 0.5 * np.log(2.0 * np.pi)

    def dlog_mu_eta(self, eta):
        return -np.asarray(eta, dtype=float)


class CLogLog(Link):
    """Complementary log-log link, eta = log(-log(1 - mu))."""

    name = "cloglog"

    def link(self, mu):
        with np.errstate(divide="ignore"):  # mu = 0 or 1 map to -inf / inf, as special.logit
            return np.log(-np.log1p(-np.asarray(mu, dtype=float)))

    def inverse(self, eta):
        with np.errstate(over="ignore"):
            return -np.expm1(-np.exp(eta))

    def log_inverse(self, eta):
        with np.errstate(over="ignore", divide="ignore"):
            e = np.exp(eta)
            return _log1mexp(e, eta)

    def log_inverse_c(self, eta):
        with np.errstate(over="ignore"):
            return -np.exp(eta)

    def log_mu_eta(self, eta):
        eta = np.asarray(eta, dtype=float)
        with np.errstate(over="ignore"):
            return eta - np.exp(eta)

    def dlog_mu_eta(self, eta):
        with np.errstate(over="ignore"):
            return 1.0 - np.exp(eta)


class LogLog(Link):
    """Log-log link, eta = -log(-log(mu)); the mirror image of cloglog."""

    name = "loglog"

    def link(self, mu):
        with np.errstate(divide="ignore"):
            return -np.log(-np.log(np.asarray(mu, dtype=float)))

    def inverse(self, eta):
        with np.errstate(over="ignore"):
            return np.exp(-np.exp(-np.asarray(eta, dtype=float)))

    def log_inverse(self, eta):
        with np.errstate(over="ignore"):
            return -np.exp(-np.asarray(eta, dtype=float))

    def log_inverse_c(self, eta):
        eta = np.asarray(eta, dtype=float)
        with np.errstate(over="ignore", divide="ignore"):
            e = np.exp(-eta)
            return _log1mexp(e, -eta)

    def log_mu_eta(self, eta):
        eta = np.asarray(eta, dtype=float)
        with np.errstate(over="ignore"):
            return -eta - np.exp(-eta)

    def dlog_mu_eta(self, eta):
        with np.errstate(over="ignore"):
            return np.exp(-np.asarray(eta, dtype=float)) - 1.0


class Cauchit(Link):
    """Cauchit link, eta = tan(pi (mu - 1/2)), the Cauchy quantile function."""

    name = "cauchit"

    def link(self, mu):
        mu = np.asarray(mu, dtype=float)
        with np.errstate(divide="ignore"):
            # tan(pi (mu - 1/2)) = -cot(pi mu): the cotangent keeps the digits of a tiny mu or
            # 1 - mu and gives -inf / inf at 0 / 1
            tail = np.where(mu < 0.5, -1.0 / np.tan(np.pi * mu), 1.0 / np.tan(np.pi * (1.0 - mu)))
        return np.where(np.abs(mu - 0.5) < 0.25, np.tan(np.pi * (mu - 0.5)), tail)

    def inverse(self, eta):
        eta = np.asarray(eta, dtype=float)
        # 1/2 + atan(eta)/pi loses all digits for eta << 0; use the tail form there
        return np.where(eta < 0, np.arctan2(1.0, -eta) / np.pi, 0.5 + np.arctan(eta) / np.pi)

    def log_inverse(self, eta):
        return np.log(self.inverse(eta))

    def log_inverse_c(self, eta):
        return np.log(self.inverse(-np.asarray(eta, dtype=float)))

    def log_mu_eta(self, eta):
        eta = np.asarray(eta, dtype=float)
        return -np.log(np.pi) - np.log1p(eta * eta)

    def dlog_mu_eta(self, eta):
        eta = np.asarray(eta, dtype=float)
        return -2.0 * eta / (1.0 + eta * eta)


class Log(Link):
    """Log link, eta = log(mu); canonical for the Poisson."""

    name = "log"

    def link(self, mu):
        with np.errstate(divide="ignore"):
            return np.log(mu)

    def inverse(self, eta):
        with np.errstate(over="ignore"):
            return np.exp(eta)

    def log_inverse(self, eta):
        return np.asarray(eta, dtype=float)

    def log_inverse_c(self, eta):
        eta = np.asarray(eta, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return np.where(eta < 0, np.log(-np.expm1(np.minimum(eta, 0.0))), np.nan)

    def log_mu_eta(self, eta):
        return np.asarray(eta, dtype=float)

    def dlog_mu_eta(self, eta):
        return np.ones_like(np.asarray(eta, dtype=float))


class Identity(Link):
    """Identity link, eta = mu; canonical for the Gaussian."""

    name = "identity"

    def link(self, mu):
        return np.asarray(mu, dtype=float)

    def inverse(self, eta):
        return np.asarray(eta, dtype=float)

    def log_mu_eta(self, eta):
        return np.zeros_like(np.asarray(eta, dtype=float))

    def dlog_mu_eta(self, eta):
        return np.zeros_like(np.asarray(eta, dtype=float))


_BY_NAME = {c.name: c for c in (Logit, Probit, CLogLog, LogLog, Cauchit, Log, Identity)}


def get_link(name: str | Link) -> Link:
    """Return a link instance from its name (``"logit"``, ``"probit"``, ...) or pass one through."""
    if isinstance(name, Link):
        return name
    try:
        return _BY_NAME[str(name).lower()]()
    except KeyError:
        raise ValueError(
            f"unknown link {name!r}; choose one of {', '.join(sorted(_BY_NAME))}"
        ) from None
