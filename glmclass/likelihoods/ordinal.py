"""The likelihood of a cumulative-link (ordinal) model: proportional odds and its relatives.

K ordered levels coded 0..K-1; one linear predictor ``eta = x'b + offset`` per row and K - 1
increasing thresholds ``zeta``; ``P(Y <= k | x) = F(zeta_k - eta)`` with F the inverse of a
binary link (logit, probit, cloglog, loglog, cauchit), the sign convention of R's
``MASS::polr`` and ``ordinal::clm``. Parameters are flat: the k coefficients, then the K - 1
thresholds. A block's weights are the prior weights (frequency times variance weights).

Every probability of a level is a difference of two CDF values; it is computed from the
log-CDFs of the links (``log F``, ``log(1 - F)``), on the side of the median where the two
terms are small, so the tails lose no precision to cancellation.

References
----------
McCullagh, P. (1980). Regression models for ordinal data. *JRSS B* 42, 109-142.
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, §7.3 (``polr``).
Agresti, A. (2010). *Analysis of Ordinal Categorical Data*, 2nd ed., ch. 3 and 5.
"""

from __future__ import annotations

import numpy as np

from ..links import Cauchit, CLogLog, Link, Logit, LogLog, Probit
from ..rows.blocks import Block
from .base import Likelihood
from .multinomial import MultinomialLikelihood

#: The links of a cumulative-link model, by the names polr and clm use (polr's "logistic" is
#: "logit").
ORDINAL_LINKS: dict[str, type[Link]] = {"logit": Logit, "probit": Probit, "cloglog": CLogLog,
                                        "loglog": LogLog, "cauchit": Cauchit}
_LOG_HALF = float(np.log(0.5))


def ordinal_link(link: object) -> Link:
    """The link instance for ``link``: one of the names of :data:`ORDINAL_LINKS` or an
    instance of one of those classes.

    Raises
    ------
    ValueError
        For any other link, listing the names.
    """
    if isinstance(link, str) and link in ORDINAL_LINKS:
        return ORDINAL_LINKS[link]()
    if isinstance(link, tuple(ORDINAL_LINKS.values())):
        return link
    raise ValueError(f"link must be one of {', '.join(map(repr, ORDINAL_LINKS))} for an "
                     f"ordinal model, got {link!r}")


def log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for ``x <= 0`` without cancellation (Maechler, 2012)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(np.minimum(x, -0.0))),
                        np.log1p(-np.exp(np.minimum(x, 0.0))))


class OrdinalLikelihood(Likelihood):
    """Per-row terms of a cumulative-link model with K ordered levels.

    Parameters
    ----------
    n_levels : int
        K, at least 2.
    link : str or Link
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"loglog"`` or ``"cauchit"``.

    Attributes
    ----------
    n_equations : int
        1: one linear predictor per row.
    n_extra : int
        K - 1, the thresholds after the coefficients.
    n_outputs : int
        K, the probabilities of the levels.

    Notes
    -----
    With $u_i = \\zeta_{c_i} - \\eta_i$ and $l_i = \\zeta_{c_i - 1} - \\eta_i$ ($\\zeta_{-1} =
    -\\infty$, $\\zeta_{K-1} = \\infty$), row i contributes $w_i \\log p_i$,
    $p_i = F(u_i) - F(l_i)$. With $a = f(u)/p$, $b = f(l)/p$ and $g = f'/f$ the derivatives of
    $\\log p$ are $a$ in $u$, $-b$ in $l$, and the second derivatives
    $ag(u) - a^2$, $-bg(l) - b^2$ and $ab$ (cross); the chain rule to $(\\beta, \\zeta)$ gives
    the score and the observed information (McCullagh, 1980, §6).
    """

    n_equations = 1

    def __init__(self, n_levels: int, link: object = "logit") -> None:
        K = int(n_levels)
        if K < 2:
            raise ValueError(f"n_levels must be at least 2 ordered levels, got {n_levels!r}")
        self.K = K
        self.link = ordinal_link(link)
        self.n_extra = K - 1
        self.n_outputs = K

    def __repr__(self) -> str:
        return f"OrdinalLikelihood({self.K}, link={self.link.name!r})"

    def nested_with(self, other: Likelihood) -> bool | None:
        """Cumulative-link fits nest only with cumulative-link fits of the same link; a
        multinomial (baseline-category) logit is another model, not a larger one."""
        if isinstance(other, OrdinalLikelihood):
            return type(other.link) is type(self.link)
        if isinstance(other, MultinomialLikelihood):
            return False
        return None

    # --- parameters ---------------------------------------------------------------------------
    def coef_matrix(self, params: np.ndarray, k: int) -> np.ndarray:
        """The k coefficients as a (k, 1) matrix (the thresholds after them are left out)."""
        B = np.asarray(params, dtype=float)
        if B.shape == (k, 1):
            return B
        if B.shape == (k + self.n_extra,):
            return B[:k, None]
        raise ValueError(f"params must have shape ({k + self.n_extra},): {k} coefficients, then "
                         f"{self.n_extra} thresholds; got {B.shape}")

    def thresholds(self, params: np.ndarray) -> np.ndarray:
        """The K - 1 thresholds, the last entries of ``params``."""
        return np.asarray(params, dtype=float)[-self.n_extra:]

    def encode(self, y) -> np.ndarray:
        """Integer codes 0..K-1, checked to lie in range."""
        y = np.asarray(y)
        codes = y.astype(np.intp)
        if codes.size and (codes.min() < 0 or codes.max() >= self.K
                           or not np.array_equal(codes, y)):
            raise ValueError(f"response codes must be integers 0..{self.K - 1}, got values "
                             f"from {y.min()!r} to {y.max()!r}")
        return codes

    # --- the pieces of a block ----------------------------------------------------------------
    def _ends(self, block: Block, params: np.ndarray):
        """Codes, eta, and the upper and lower arguments u, l of each row (0 where infinite)
        with the masks of the rows that have them."""
        k = block.X.shape[1]
        zeta = self.thresholds(params)
        eta = block.X @ np.asarray(params, dtype=float)[:k] + block.offset
        c = np.asarray(block.y, dtype=np.intp)
        has_u, has_l = c < self.K - 1, c > 0
        u = np.where(has_u, zeta[np.minimum(c, self.K - 2)] - eta, 0.0)
        lo = np.where(has_l, zeta[np.maximum(c - 1, 0)] - eta, 0.0)
        return c, eta, u, lo, has_u, has_l

    def log_prob(self, u: np.ndarray, lo: np.ndarray, has_u: np.ndarray,
                 has_l: np.ndarray) -> np.ndarray:
        """``log(F(u) - F(l))`` with ``F(u) = 1`` where ``has_u`` is False and ``F(l) = 0``
        where ``has_l`` is False, computed from the log-CDFs on the side of the median where
        both terms are small (no cancellation)."""
        lk = self.link
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lfu, lfl = lk.log_inverse(u), lk.log_inverse(lo)
            lsu, lsl = lk.log_inverse_c(u), lk.log_inverse_c(lo)
            below = lfl <= _LOG_HALF  # F(u) - F(l) there, else S(l) - S(u)
            lead = np.where(below, lfu, lsl)
            middle = lead + log1mexp(np.minimum(np.where(below, lfl - lfu, lsu - lsl), 0.0))
        return np.where(has_u & has_l, middle, np.where(has_u, lfu, np.where(has_l, lsl, 0.0)))

    def _derivatives(self, block: Block, params: np.ndarray):
        """Per row: codes, log p, and the derivatives of log p in u and l (a, -b) and the
        second derivatives Huu, Hll, Hul (0 at an infinite end)."""
        c, _, u, lo, has_u, has_l = self._ends(block, params)
        logp = self.log_prob(u, lo, has_u, has_l)
        lk = self.link
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.where(has_u, np.exp(lk.log_mu_eta(u) - logp), 0.0)
            b = np.where(has_l, np.exp(lk.log_mu_eta(lo) - logp), 0.0)
            huu = np.where(has_u, a * lk.dlog_mu_eta(u), 0.0) - a * a
            hll = -np.where(has_l, b * lk.dlog_mu_eta(lo), 0.0) - b * b
        return c, logp, a, b, huu, hll, a * b

    def loglike_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        c, _, u, lo, has_u, has_l = self._ends(block, params)
        w = np.asarray(block.weights, dtype=float)
        return np.where(w > 0, w * self.log_prob(u, lo, has_u, has_l), 0.0)

    def score_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        c, _, a, b, *_ = self._derivatives(block, params)
        w = np.asarray(block.weights, dtype=float)
        a, b = np.where(w > 0, w * a, 0.0), np.where(w > 0, w * b, 0.0)
        r, k = block.X.shape
        out = np.zeros((r, k + self.K - 1))
        out[:, :k] = block.X * (b - a)[:, None]
        rows = np.arange(r)
        up, down = c < self.K - 1, c > 0
        out[rows[up], k + c[up]] += a[up]
        out[rows[down], k + c[down] - 1] -= b[down]
        return out

    def weights(self, block: Block, params: np.ndarray, observed: bool = False) -> np.ndarray:
        """Minus the second derivative of each row's log-likelihood in eta (``observed``), or
        its expectation ``sum_k (dP_k / d eta)^2 / P_k``, prior weights included."""
        w = np.asarray(block.weights, dtype=float)
        if observed:
            _, _, _, _, huu, hll, hul = self._derivatives(block, params)
            return np.where(w > 0, -w * (huu + hll + 2.0 * hul), 0.0)
        eta = self.cumulative(block.X, params, block.offset)
        P = self.mean_eta(eta)
        J = self.mean_eta_jacobian(eta).sum(axis=2)  # d P_k / d(-eta)
        with np.errstate(divide="ignore", invalid="ignore"):
            info = np.where(P > 0, J * J / P, 0.0).sum(axis=1)
        return np.where(w > 0, w * info, 0.0)

    def information(self, block: Block, params: np.ndarray) -> tuple[float, np.ndarray,
                                                                       np.ndarray]:
        """The block's log-likelihood, its gradient (m,) and minus its Hessian (m, m) in
        (b, zeta), m = k + K - 1: the p x p partials a solver reduces over row blocks.

        A block whose rows leave the support (a probability 0) gives ``-inf`` and zeros.
        """
        r, k = block.X.shape
        m = k + self.K - 1
        c, logp, a, b, huu, hll, hul = self._derivatives(block, params)
        w = np.asarray(block.weights, dtype=float)
        pos = w > 0
        ll = float(np.sum(np.where(pos, w * logp, 0.0)))
        if not np.isfinite(ll):
            return -np.inf, np.zeros(m), np.zeros((m, m))
        wa, wb = np.where(pos, w * a, 0.0), np.where(pos, w * b, 0.0)
        whuu, whll, whul = (np.where(pos, w * h, 0.0) for h in (huu, hll, hul))
        K1 = self.K - 1
        up, down = c < K1, c > 0
        grad = np.empty(m)
        grad[:k] = block.X.T @ (wb - wa)
        grad[k:] = (np.bincount(c[up], wa[up], minlength=K1)
                    - np.bincount(c[down] - 1, wb[down], minlength=K1))
        X = block.X
        info = np.empty((m, m))
        v = whuu + whll + 2.0 * whul
        info[:k, :k] = -(X.T @ (X * v[:, None]))
        levels = np.arange(K1)
        M = np.where(c[:, None] == levels, -(whuu + whul)[:, None], 0.0)
        M -= np.where(c[:, None] - 1 == levels, (whul + whll)[:, None], 0.0)
        cross = -(X.T @ M)
        info[:k, k:] = cross
        info[k:, :k] = cross.T
        zz = np.diag(-(np.bincount(c[up], whuu[up], minlength=K1)
                       + np.bincount(c[down] - 1, whll[down], minlength=K1)))
        mid = up & down
        off = -np.bincount(c[mid] - 1, whul[mid], minlength=K1)[:K1 - 1]
        idx = np.arange(K1 - 1)
        zz[idx, idx + 1] = off
        zz[idx + 1, idx] = off
        info[k:, k:] = zz
        return ll, grad, info

    # --- the mean: the probabilities of the levels --------------------------------------------
    def cumulative(self, X: np.ndarray, params: np.ndarray,
                   offset: np.ndarray | None = None) -> np.ndarray:
        """The cumulative linear predictors ``zeta_j - x'b - offset``, shape (r, K - 1)."""
        k = X.shape[1]
        eta = X @ np.asarray(params, dtype=float)[:k]
        if offset is not None:
            eta = eta + np.asarray(offset, dtype=float)
        return self.thresholds(params)[None, :] - eta[:, None]

    def mean_eta(self, eta: np.ndarray) -> np.ndarray:
        """Probabilities of the K levels, (r, K), from the cumulative linear predictors
        ``eta`` (r, K - 1) (:meth:`cumulative`)."""
        eta = np.atleast_2d(np.asarray(eta, dtype=float))
        r = eta.shape[0]
        K = self.K
        u = np.column_stack([eta, np.zeros(r)])
        lo = np.column_stack([np.zeros(r), eta])
        has_u = np.broadcast_to(np.arange(K) < K - 1, (r, K))
        has_l = np.broadcast_to(np.arange(K) > 0, (r, K))
        return np.exp(self.log_prob(u, lo, has_u, has_l))

    def mean_eta_jacobian(self, eta: np.ndarray) -> np.ndarray:
        """J[i, k, j] = d P_k / d eta_j = f(eta_j) (delta_{kj} - delta_{k, j+1}), shape
        (r, K, K - 1)."""
        eta = np.atleast_2d(np.asarray(eta, dtype=float))
        f = self.link.mu_eta(eta)
        r, K1 = eta.shape
        J = np.zeros((r, K1 + 1, K1))
        j = np.arange(K1)
        J[:, j, j] = f
        J[:, j + 1, j] = -f
        return J

    def mean_eta_hess_dot(self, eta: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """``sum_l d^2 P_k / d eta_j d eta_l delta_l = f'(eta_j) delta_j (delta_{kj} -
        delta_{k, j+1})``, shape (r, K, K - 1)."""
        eta = np.atleast_2d(np.asarray(eta, dtype=float))
        d2 = self.link.mu_eta(eta) * self.link.dlog_mu_eta(eta) * delta
        r, K1 = eta.shape
        H = np.zeros((r, K1 + 1, K1))
        j = np.arange(K1)
        H[:, j, j] = d2
        H[:, j + 1, j] = -d2
        return H

    def mean(self, X: np.ndarray, params: np.ndarray,
             offset: np.ndarray | None = None) -> np.ndarray:
        """Probabilities of the K levels at each row, (r, K)."""
        return self.mean_eta(self.cumulative(X, params, offset))

    def mean_jacobian(self, X: np.ndarray, params: np.ndarray,
                      offset: np.ndarray | None = None) -> np.ndarray:
        """d P_k / d (b, zeta) per row, shape (r, K, k + K - 1): ``-sum_j J_kj x`` for b and
        ``J_kj`` for zeta_j."""
        J = self.mean_eta_jacobian(self.cumulative(X, params, offset))
        dbeta = -np.einsum("rkj,ra->rka", J, X)
        return np.concatenate([dbeta, J], axis=2)

    def mean_dx(self, X: np.ndarray, params: np.ndarray, offset: np.ndarray | None,
                D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The derivative of the level probabilities along a change ``D`` of the design rows
        (every cumulative predictor moves by ``-D b``) and its gradient in (b, zeta), shapes
        (r, K) and (r, K, k + K - 1)."""
        k = X.shape[1]
        eta = self.cumulative(X, params, offset)
        step = -(D @ np.asarray(params, dtype=float)[:k])  # d eta_j / dv, every j
        delta = np.repeat(step[:, None], eta.shape[1], axis=1)
        J = self.mean_eta_jacobian(eta)
        Hd = self.mean_eta_hess_dot(eta, delta)
        value = J.sum(axis=2) * step[:, None]
        gb = -(np.einsum("nm,na->nma", Hd.sum(axis=2), X)
               + np.einsum("nm,na->nma", J.sum(axis=2), D))
        return value, np.concatenate([gb, Hd], axis=2)



class NominalOrdinalLikelihood(OrdinalLikelihood):
    """A cumulative-link model with threshold-specific effects of some columns (partial
    proportional odds; ``ordinal::clm``'s ``nominal=``).

    ``P(Y <= j | x) = F(zeta_j + z'g_j - x'b - offset)``: the ``nominal`` columns z have one
    coefficient vector g_j per threshold, the others one b. Parameters: b, then per threshold
    ``zeta_j, g_j``. Nothing keeps the cumulative predictors of a row increasing: a row where
    they cross has probability 0 (log-likelihood -inf), which a solver steps back from.

    Parameters
    ----------
    n_levels : int
    link : str or Link
    nominal : ndarray of bool, shape (k,)
        The design columns with threshold-specific effects.

    Notes
    -----
    With ``U_i`` and ``L_i`` the derivatives of the row's upper and lower cumulative
    predictors in the parameters, the score is ``a U - b L`` and minus the Hessian
    ``-(Huu U U' + Hll L L' + Hul (U L' + L U'))`` (the predictors are linear in the
    parameters).
    """

    def __init__(self, n_levels: int, link: object, nominal: np.ndarray) -> None:
        super().__init__(n_levels, link)
        self.nominal = np.asarray(nominal, dtype=bool)
        q = int(self.nominal.sum())
        self.n_extra = (self.K - 1) * (1 + q)

    def __repr__(self) -> str:
        return (f"NominalOrdinalLikelihood({self.K}, link={self.link.name!r}, "
                f"nominal={np.flatnonzero(self.nominal).tolist()})")

    def coef_matrix(self, params: np.ndarray, k: int) -> np.ndarray:
        """The ordinary coefficients b as a (k - q, 1) matrix."""
        return np.asarray(params, dtype=float)[:k - int(self.nominal.sum()), None]

    def thresholds(self, params: np.ndarray) -> np.ndarray:
        """The K - 1 thresholds zeta_j (at z = 0)."""
        q = int(self.nominal.sum())
        G = np.asarray(params, dtype=float)[-self.n_extra:].reshape(self.K - 1, 1 + q)
        return G[:, 0]

    def cumulative(self, X: np.ndarray, params: np.ndarray,
                   offset: np.ndarray | None = None) -> np.ndarray:
        """``zeta_j + z'g_j - x'b - offset``, shape (r, K - 1)."""
        q = int(self.nominal.sum())
        p = np.asarray(params, dtype=float)
        b = p[:-self.n_extra] if self.n_extra else p
        G = p[-self.n_extra:].reshape(self.K - 1, 1 + q)
        eta = X[:, ~self.nominal] @ b
        if offset is not None:
            eta = eta + np.asarray(offset, dtype=float)
        return G[:, 0][None, :] + X[:, self.nominal] @ G[:, 1:].T - eta[:, None]

    def _ends(self, block: Block, params: np.ndarray):
        eta = self.cumulative(block.X, params, block.offset)
        c = np.asarray(block.y, dtype=np.intp)
        has_u, has_l = c < self.K - 1, c > 0
        rows = np.arange(c.size)
        u = np.where(has_u, eta[rows, np.minimum(c, self.K - 2)], 0.0)
        lo = np.where(has_l, eta[rows, np.maximum(c - 1, 0)], 0.0)
        return c, None, u, lo, has_u, has_l

    def _designs(self, X: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """U and L: the derivatives of each row's upper and lower cumulative predictors in
        the parameters, shape (r, m) each."""
        q = int(self.nominal.sum())
        Xo, Z = X[:, ~self.nominal], X[:, self.nominal]
        k1, K1 = Xo.shape[1], self.K - 1
        U = np.zeros((X.shape[0], k1 + self.n_extra))
        U[:, :k1] = -Xo
        L = U.copy()
        for j in range(K1):
            at = k1 + j * (1 + q)
            for D, rows in ((U, c == j), (L, c - 1 == j)):
                D[rows, at] = 1.0
                D[rows, at + 1:at + 1 + q] = Z[rows]
        return U, L

    def score_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        c, _, a, b, *_ = self._derivatives(block, params)
        w = np.asarray(block.weights, dtype=float)
        U, L = self._designs(block.X, c)
        return (U * np.where(w > 0, w * a, 0.0)[:, None]
                - L * np.where(w > 0, w * b, 0.0)[:, None])

    def information(self, block: Block, params: np.ndarray) -> tuple[float, np.ndarray,
                                                                       np.ndarray]:
        c, logp, a, b, huu, hll, hul = self._derivatives(block, params)
        U, L = self._designs(block.X, c)
        m = U.shape[1]
        w = np.asarray(block.weights, dtype=float)
        pos = w > 0
        ll = float(np.sum(np.where(pos, w * logp, 0.0)))
        if not np.isfinite(ll):
            return -np.inf, np.zeros(m), np.zeros((m, m))
        wa, wb, whuu, whll, whul = (np.where(pos, w * v, 0.0) for v in (a, b, huu, hll, hul))
        grad = U.T @ wa - L.T @ wb
        cross = U.T @ (L * whul[:, None])
        info = -(U.T @ (U * whuu[:, None]) + L.T @ (L * whll[:, None]) + cross + cross.T)
        return ll, grad, info
