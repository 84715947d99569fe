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
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
from scipy import special

_EPS = np.finfo(float).eps
#: log(2 pi) of the normal density's normalising constant, the one definition that the normal
#: densities of the numerics (discriminant, naive Bayes, Laplace) import.
LOG_2PI = float(np.log(2.0 * np.pi))
#: log(2 pi) / 2 of the normal density, evaluated once (as NumPy evaluates it in an expression)
HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


def normal_tail(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a, log a, log1p(-a))`` with ``a = Phi(t)`` for ``t <= 0`` (the smaller tail), from one
    ``ndtr``: ``a`` holds full relative precision there; ``log_ndtr``'s asymptotic series only
    where ``a`` underflows (``t < -37``)."""
    a = special.ndtr(t)
    with np.errstate(divide="ignore"):
        small = np.log(a)
    if a.size and np.minimum.reduce(a) < 1e-300:
        tiny = a < 1e-300
        small[tiny] = special.log_ndtr(t[tiny])
    big = np.negative(a)
    return a, small, np.log1p(big, out=big)


def _log1mexp(e: np.ndarray, log_e: np.ndarray) -> np.ndarray:
    """log(1 - exp(-e)) for e = exp(log_e) >= 0, accurate for every e (Maechler, 2012).

    ``log(-expm1(-e))`` for e <= log 2 (``log_e`` itself once e underflows), ``log1p(-exp(-e))``
    above, where ``1 - exp(-e)`` is near 1.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.where(e < 1e-300, log_e, np.log(-np.expm1(-e)))
        return np.where(e <= np.log(2.0), small, np.log1p(-np.exp(-e)))


@dataclass(frozen=True)
class Link(ABC):
    """Base class of the links: a frozen dataclass whose capabilities are data.

    A link declares

    - ``name``: how reports and :func:`get_link` call it;
    - ``range``: the open interval of means ``g^-1(eta)`` reaches as eta runs over its domain
      (``(0, 1)`` for logit, ``(0, inf)`` for log); a family accepts any link whose range is
      nested with the family's mean space (see :class:`~glmclass.families.Family`);
    - ``domain``: the interval of valid linear predictors (the whole real line for every link
      here);
    - ``canonical``: the family (lower-case name) for which it is the canonical link, or None.
      It is declared, never inherited: a subclass of :class:`Logit` that changes the inverse is
      not canonical unless it says so.

    Subclasses implement ``link`` and ``inverse`` and one of ``mu_eta`` / ``log_mu_eta``
    (dmu/deta, or its logarithm); for the observed information of a non-canonical link they
    may give one of ``mu_eta2`` / ``dlog_mu_eta`` (d2mu/deta2, or d log mu'/deta), which are
    otherwise taken by a central difference of ``log_mu_eta`` (relative error ~1e-10).
    ``log_inverse`` / ``log_inverse_c`` (log mu, log(1 - mu)) are overridden where a
    tail-stable formula exists.

    A user-defined link is one frozen dataclass, e.g.::

        @dataclass(frozen=True)
        class Robit(gc.links.Link):
            df: float = 7.0
            name: ClassVar[str] = "robit"
            range: ClassVar[tuple] = (0.0, 1.0)
            def link(self, mu): return stats.t.ppf(mu, self.df)
            def inverse(self, eta): return stats.t.cdf(eta, self.df)
            def mu_eta(self, eta): return stats.t.pdf(eta, self.df)

    Links compare equal by type and parameters, and hash accordingly.
    """

    name: ClassVar[str] = "link"
    range: ClassVar[tuple[float, float]] = (-np.inf, np.inf)
    domain: ClassVar[tuple[float, float]] = (-np.inf, np.inf)
    canonical: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "canonical" not in cls.__dict__:  # declared, never inherited
            cls.canonical = None
        if cls.mu_eta is Link.mu_eta and cls.log_mu_eta is Link.log_mu_eta:
            raise TypeError(f"link {cls.__name__} must define mu_eta(eta) (dmu/deta) or "
                            "log_mu_eta(eta)")

    @abstractmethod
    def link(self, mu: np.ndarray) -> np.ndarray:
        """eta = g(mu)."""

    @abstractmethod
    def inverse(self, eta: np.ndarray) -> np.ndarray:
        """mu = g^-1(eta)."""

    def log_mu_eta(self, eta: np.ndarray) -> np.ndarray:
        """log(dmu/deta)."""
        with np.errstate(divide="ignore"):
            return np.log(self.mu_eta(eta))

    def mu_eta(self, eta: np.ndarray) -> np.ndarray:
        """dmu/deta."""
        with np.errstate(over="ignore"):  # the log link's mu' = exp(eta) may be inf
            return np.exp(self.log_mu_eta(eta))

    def dlog_mu_eta(self, eta: np.ndarray) -> np.ndarray:
        """d log(dmu/deta) / deta = mu''(eta) / mu'(eta)."""
        eta = np.asarray(eta, dtype=float)
        if type(self).mu_eta2 is not Link.mu_eta2:
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.mu_eta2(eta) / self.mu_eta(eta)
        # central difference of log mu': error ~ h^2, h = eps^(1/3) on the scale of eta
        h = _EPS ** (1.0 / 3.0) * np.maximum(1.0, np.abs(eta))
        with np.errstate(invalid="ignore", over="ignore"):
            return (self.log_mu_eta(eta + h) - self.log_mu_eta(eta - h)) / (2.0 * h)

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

    def inverse_logs(self, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(mu, log mu, log(1 - mu))`` at ``eta``, for links onto (0, 1): what a binomial
        IRLS pass needs, in one call so that a link can share the work between them."""
        return self.inverse(eta), self.log_inverse(eta), self.log_inverse_c(eta)

    def valid_eta(self, eta: np.ndarray) -> bool:
        """Whether every eta is finite and in the domain of the inverse link."""
        eta = np.asarray(eta)
        if not np.logical_and.reduce(np.isfinite(eta), axis=None):  # eta.all(), no wrapper
            return False
        lo, hi = self.domain
        if eta.size == 0 or (lo == -np.inf and hi == np.inf):  # no second pass over eta
            return True
        return bool(lo < eta.min() and eta.max() < hi)


#: Links known by name, for :func:`get_link` and for tests that cover every link.
REGISTRY: dict[str, type[Link]] = {}


def register(cls: type[Link]) -> type[Link]:
    """Class decorator: make a link available by name (``get_link("probit")``)."""
    REGISTRY[cls.name] = cls
    return cls


def registered(within: tuple[float, float] | None = None) -> list[Link]:
    """Every registered link with its default parameters, in registration order; with
    ``within``, only those whose range lies inside that interval (``(0, 1)``: the binary links).
    """
    out = [cls() for cls in REGISTRY.values()]
    if within is None:
        return out
    return [lk for lk in out if within[0] <= lk.range[0] and lk.range[1] <= within[1]]


def check_link(link: object) -> Link:
    """A link instance from a name, a link class without parameters, or an instance.

    Raises
    ------
    TypeError
        When ``link`` is none of these, or is a subclass instance that carries state outside
        its dataclass fields (so that equality by value would ignore it).
    ValueError
        For an unknown link name.
    """
    if isinstance(link, str):
        return get_link(link)
    if isinstance(link, type) and issubclass(link, Link):
        try:
            return link()
        except TypeError:
            raise TypeError(f"link {link.__name__} needs parameters: pass an instance, e.g. "
                            f"{link.__name__}(...)") from None
    if not isinstance(link, Link):
        raise TypeError(f"link must be a glmclass link (e.g. gc.links.Probit()) or its name "
                        f"('probit'), got {link!r}")
    extra = set(getattr(link, "__dict__", {})) - {f.name for f in fields(link)}
    if extra:
        raise TypeError(f"link {type(link).__name__} keeps state outside its fields "
                        f"({', '.join(sorted(extra))}); declare it with "
                        "@dataclasses.dataclass(frozen=True) so that links compare by value")
    return link


@register
@dataclass(frozen=True)
class Logit(Link):
    """Logit link, eta = log(mu / (1 - mu)); canonical for the binomial."""

    name: ClassVar[str] = "logit"
    range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    canonical: ClassVar[str | None] = "binomial"

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


@register
@dataclass(frozen=True)
class Probit(Link):
    """Probit link, eta = Phi^-1(mu)."""

    name: ClassVar[str] = "probit"
    range: ClassVar[tuple[float, float]] = (0.0, 1.0)

    def link(self, mu):
        return special.ndtri(mu)

    def inverse(self, eta):
        return special.ndtr(eta)

    def log_inverse(self, eta):
        return special.log_ndtr(eta)

    def log_inverse_c(self, eta):
        return special.log_ndtr(-np.asarray(eta))

    def inverse_logs(self, eta):
        """From the smaller tail ``a = Phi(-abs(eta))`` alone: ``log a``, ``log1p(-a)`` and
        ``mu`` (``a`` or ``1 - a``), one ``ndtr`` and two logs instead of two ``log_ndtr``
        and an ``ndtr`` (2x faster); ``log_ndtr``'s asymptotic series only where ``a``
        underflows (``abs(eta) > 37``)."""
        if type(self) is not Probit:  # a subclass may redefine the inverse
            return super().inverse_logs(eta)
        eta = np.asarray(eta, dtype=float)
        a, small, big = normal_tail(-np.abs(eta))
        neg = eta < 0
        return (np.where(neg, a, 1.0 - a), np.where(neg, small, big),
                np.where(neg, big, small))

    def log_mu_eta(self, eta):
        eta = np.asarray(eta, dtype=float)
        return -0.5 * eta * eta - HALF_LOG_2PI

    def dlog_mu_eta(self, eta):
        return -np.asarray(eta, dtype=float)


@register
@dataclass(frozen=True)
class CLogLog(Link):
    """Complementary log-log link, eta = log(-log(1 - mu))."""

    name: ClassVar[str] = "cloglog"
    range: ClassVar[tuple[float, float]] = (0.0, 1.0)

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


@register
@dataclass(frozen=True)
class LogLog(Link):
    """Log-log link, eta = -log(-log(mu)); the mirror image of cloglog."""

    name: ClassVar[str] = "loglog"
    range: ClassVar[tuple[float, float]] = (0.0, 1.0)

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


@register
@dataclass(frozen=True)
class Cauchit(Link):
    """Cauchit link, eta = tan(pi (mu - 1/2)), the Cauchy quantile function."""

    name: ClassVar[str] = "cauchit"
    range: ClassVar[tuple[float, float]] = (0.0, 1.0)

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


@register
@dataclass(frozen=True)
class Log(Link):
    """Log link, eta = log(mu); canonical for the Poisson."""

    name: ClassVar[str] = "log"
    range: ClassVar[tuple[float, float]] = (0.0, np.inf)
    canonical: ClassVar[str | None] = "poisson"

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


@register
@dataclass(frozen=True)
class Identity(Link):
    """Identity link, eta = mu; canonical for the Gaussian."""

    name: ClassVar[str] = "identity"
    canonical: ClassVar[str | None] = "gaussian"

    def link(self, mu):
        return np.asarray(mu, dtype=float)

    def inverse(self, eta):
        return np.asarray(eta, dtype=float)

    def log_mu_eta(self, eta):
        return np.zeros_like(np.asarray(eta, dtype=float))

    def dlog_mu_eta(self, eta):
        return np.zeros_like(np.asarray(eta, dtype=float))


@register
@dataclass(frozen=True)
class RobustLogit(Link):
    """Robust ("mislabelling") logit link: mu = eps + (1 - 2 eps) sigma(eta).

    Each label is taken to be flipped with probability ``eps`` whatever the features, so no
    fitted probability leaves (eps, 1 - eps) and one grossly mislabelled point can cost at most
    ``-log(eps)`` of log-likelihood: far-away mislabelled points no longer drag the boundary
    (PRML §4.3.5, exercise 4.17 style). Usable in any binomial GLM
    (``gc.families.Binomial(link=gc.links.RobustLogit(0.05))``): IRLS, observed or expected
    information. ``eps`` is fixed; :func:`glmclass.robust_logit_profile` chooses it by profile
    likelihood.

    Parameters
    ----------
    eps : float, default 0.05
        Mislabelling probability, strictly between 0 and 1/2.

    Notes
    -----
    With $s = \\sigma(\\eta)$ and $c = 1 - 2\\epsilon$: $\\mu' = c\\, s (1 - s)$,
    $\\mu'' = c\\, s (1 - s)(1 - 2 s)$, $d \\log\\mu' / d\\eta = 1 - 2 s$;
    $\\log\\mu = \\log(\\epsilon + c\\, s)$ is evaluated as
    ``logaddexp(log eps, log c + log_expit(eta))`` so it stays exact in both tails (it tends to
    ``log eps``, never to ``-inf``). The link is not canonical: observed and expected
    information differ.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.5 and exercise 4.17.
    Copas, J. B. (1988). Binary regression models for contaminated data. *JRSS B* 50, 225-265.
    """

    eps: float = 0.05
    name: ClassVar[str] = "robust_logit"

    def __post_init__(self) -> None:
        e = self.eps
        ok = isinstance(e, (int, float, np.integer, np.floating)) and not isinstance(e, bool)
        if not ok or not (np.isfinite(e) and 0.0 < e < 0.5):
            raise ValueError(f"eps must be a number strictly between 0 and 0.5 (the probability "
                             f"that a label is flipped), got {e!r}")
        object.__setattr__(self, "eps", float(e))

    @property
    def range(self) -> tuple[float, float]:  # type: ignore[override]
        """Means stay inside (eps, 1 - eps)."""
        return (self.eps, 1.0 - self.eps)

    @property
    def _log_c(self) -> float:
        return float(np.log1p(-2.0 * self.eps))

    def link(self, mu):
        mu = np.asarray(mu, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            # log((mu - eps) / (1 - eps - mu)): exactly -inf / inf at the ends of the range,
            # NaN outside it
            return np.log(mu - self.eps) - np.log((1.0 - self.eps) - mu)

    def start_mu(self, y, weights):
        """IRLS starting means: R's binomial ``mustart`` for unit weights, ``(y + 1/2) / 2``,
        mapped into (eps, 1 - eps). Weights are ignored on purpose: with large weights R's
        ``mustart`` tends to y, where the working response ``eta + (y - mu) / mu'`` of this
        link explodes (y is never reached, mu' vanishes)."""
        m = np.clip((np.asarray(y, dtype=float) + 0.5) / 2.0, 0.0, 1.0)
        return self.eps + (1.0 - 2.0 * self.eps) * m

    def inverse(self, eta):
        return self.eps + (1.0 - 2.0 * self.eps) * special.expit(eta)

    def log_inverse(self, eta):
        return np.logaddexp(np.log(self.eps), self._log_c + special.log_expit(eta))

    def log_inverse_c(self, eta):
        return np.logaddexp(np.log(self.eps), self._log_c + special.log_expit(-np.asarray(eta)))

    def log_mu_eta(self, eta):
        eta = np.asarray(eta, dtype=float)
        return self._log_c + special.log_expit(eta) + special.log_expit(-eta)

    def mu_eta(self, eta):
        return np.exp(self.log_mu_eta(eta))

    def mu_eta2(self, eta):
        s = special.expit(eta)
        return self.mu_eta(eta) * (1.0 - 2.0 * s)

    def dlog_mu_eta(self, eta):
        return 1.0 - 2.0 * special.expit(eta)


def get_link(name: str | Link) -> Link:
    """Return a link instance from its name (``"logit"``, ``"probit"``, ...) or pass one through."""
    if isinstance(name, Link):
        return name
    try:
        return REGISTRY[str(name).lower()]()
    except KeyError:
        raise ValueError(
            f"unknown link {name!r}; choose one of {', '.join(sorted(REGISTRY))}"
        ) from None
