"""The likelihood of a generalized linear mixed model (lme4's ``glmer``).

Given the random effects b, the rows are a GLM with the offset ``Z b`` added: the per-row
terms are those of :class:`~glmclass.likelihoods.glm.GLMLikelihood`. The marginal likelihood
integrates b ~ N(0, Sigma_theta) out; b = Lambda_theta u with u ~ N(0, I) and Lambda_theta
lme4's relative covariance factor (block diagonal, one lower-triangular p x p factor per
term, repeated for each level). :class:`MixedDeviance` is lme4's deviance function of
(theta, beta): the Laplace approximation or adaptive Gauss-Hermite quadrature around the
conditional modes of u, found by penalised IRLS.

Notes
-----
PIRLS minimises ``sum_i d_i(y_i, mu_i) + |u|^2`` over u (beta fixed) by Fisher scoring with
step halving; at the modes u~ with ``A = Lambda' Z' W Z Lambda + I`` (W the prior-weighted
*expected* information weights, as lme4 uses for every link),

    Laplace:  -2 log L ~= -2 sum_i log p(y_i | u~) + |u~|^2 + log det A,

the log-density with its constants (lme4's ``aic()``). With one grouping factor and a scalar
effect each group's integral is done by ``nagq``-point adaptive Gauss-Hermite quadrature,
centred at the group's mode with scale ``A_jj^(-1/2)``; lme4 then writes the deviance with
the unit deviances, so the saturated log-likelihood is left out of it.

References
----------
Bates, D. et al. (2015). Fitting linear mixed-effects models using lme4. *Journal of
Statistical Software* 67(1). lme4 vignette "PIRLS" and ``src/predModule.cpp``,
``src/respModule.cpp``, ``src/external.cpp`` (``glmerLaplace``, ``glmerAGQ``).
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.4 (the Laplace
approximation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy import linalg, sparse
from scipy.sparse.linalg import splu

from ..families import Family
from ..formula.bars import RandomBlock, z_matrix
from ..rows.constant import is_constant
from .glm import GLMLikelihood

#: With several terms, the random effects of the first (largest) term are eliminated group by
#: group and the others (at most this many) kept in a dense Schur complement; beyond, the
#: whole penalised system is factored as a sparse matrix (scipy's SuperLU).
DENSE_Q = 3000
#: Largest first-term x other-terms block held dense in the Schur elimination.
SCHUR_CELLS = 10_000_000
#: With one grouping factor, penalised IRLS passes over the rows in chunks of this many rows,
#: so that its working arrays (eta, weights, residuals, unit deviances) never take n rows:
#: the peak memory of a fit stays near the fixed-effects design's (one chunk below this size,
#: the same arithmetic as a single pass).
CHUNK_ROWS = 1 << 16


class MixedLikelihood(GLMLikelihood):
    """A GLM given the random effects, with lme4's parametrisation of their covariance.

    Parameters
    ----------
    family : Family
    sizes : tuple of (int, int)
        ``(p_k, l_k)`` per random-effect term: effects per level and number of levels, in
        lme4's order of terms.

    Attributes
    ----------
    n_theta : int
        Covariance parameters: ``p_k (p_k + 1) / 2`` per term, the lower triangle of the
        term's factor column by column (lme4's ``theta``).
    """

    def __init__(self, family: Family, sizes: tuple[tuple[int, int], ...]) -> None:
        super().__init__(family)
        self.sizes = tuple((int(p), int(n)) for p, n in sizes)
        self.n_theta = sum(p * (p + 1) // 2 for p, _ in self.sizes)

    def __repr__(self) -> str:
        return f"MixedLikelihood({self.family!r}, {self.sizes})"

    @property
    def theta_lower(self) -> np.ndarray:
        """Lower bounds of theta: 0 for the factors' diagonals, -inf below them."""
        out = []
        for p, _ in self.sizes:
            out += [0.0 if i == j else -np.inf for j in range(p) for i in range(j, p)]
        return np.array(out)

    @property
    def theta_start(self) -> np.ndarray:
        """lme4's start: identity factors."""
        return np.where(self.theta_lower == 0.0, 1.0, 0.0)

    def factors(self, theta: np.ndarray) -> list[np.ndarray]:
        """The lower-triangular p_k x p_k factor of each term from theta."""
        out, pos = [], 0
        for p, _ in self.sizes:
            L = np.zeros((p, p))
            idx = np.tril_indices(p)
            order = np.lexsort((idx[0], idx[1]))  # column by column
            L[idx[0][order], idx[1][order]] = theta[pos:pos + p * (p + 1) // 2]
            out.append(L)
            pos += p * (p + 1) // 2
        return out

    def covariances(self, theta: np.ndarray) -> list[np.ndarray]:
        """The covariance matrix of each term's effects, ``L_k L_k'`` (sigma = 1)."""
        return [L @ L.T for L in self.factors(theta)]


@dataclass(frozen=True)
class Modes:
    """The conditional modes at (theta, beta) and what the deviance needs of them.

    Attributes
    ----------
    u : ndarray of shape (q,)
        Spherical modes (b = Lambda u).
    eta : ndarray of shape (n_obs,) or None
        The linear predictor at the modes (None when not asked for).
    dev : float
        Prior-weighted sum of unit deviances at the modes.
    logdet : float
        log det A.
    blocks_A : ndarray of shape (l, p, p) or None
        The diagonal blocks of A of a single grouping factor.
    A : ndarray or sparse matrix or None
        The whole A for several terms.
    converged : bool
    """

    u: np.ndarray
    eta: np.ndarray | None
    dev: float
    logdet: float
    blocks_A: np.ndarray | None
    A: object
    converged: bool


class MixedDeviance:
    """lme4's deviance function of (theta, beta) on the rows of one fit.

    Parameters
    ----------
    likelihood : MixedLikelihood
    X : ndarray of shape (n_obs, k)
    y : ndarray of shape (n_obs,)
        The response on the family's scale (proportions for binomial counts).
    weights : ndarray of shape (n_obs,)
        Prior weights (binomial trials); a broadcast view of one value (the default weights)
        is not copied to n rows.
    offset : ndarray of shape (n_obs,)
    blocks : list of RandomBlock
        The random-effect terms, in lme4's order.
    """

    def __init__(self, likelihood: MixedLikelihood, X: np.ndarray, y: np.ndarray,
                 weights: np.ndarray, offset: np.ndarray, blocks: list[RandomBlock]) -> None:
        self.likelihood = likelihood
        self.family = likelihood.family
        self.X, self.y, self.weights, self.offset = X, y, weights, offset
        self.blocks = blocks
        self.single = len(blocks) == 1
        self.q = sum(b.n_levels * b.n_effects for b in blocks)
        self.q1 = blocks[0].n_levels * blocks[0].n_effects
        q2 = self.q - self.q1
        #: "single": one term, A block diagonal; "schur": the first term's blocks eliminated,
        #: the rest dense (crossed and nested factors of moderate size); "sparse": SuperLU
        self.kind = ("single" if self.single else
                     "schur" if q2 <= DENSE_Q and self.q1 * q2 <= SCHUR_CELLS else "sparse")
        n = y.shape[0]
        #: row chunks of the one-factor passes (:data:`CHUNK_ROWS`)
        self.chunks = [slice(a, min(a + CHUNK_ROWS, n)) for a in range(0, max(n, 1), CHUNK_ROWS)]
        if self.kind == "single":
            self._chunk_terms = [self.family.terms_for(y[c], w) for c, w in
                                 zip(self.chunks, _chunk_weights(weights, self.chunks),
                                     strict=True)]
        else:
            self._terms = self.family.terms_for(y, np.ascontiguousarray(weights))
        self._unit = self.family.unit_deviance_for(y)
        self._u = np.zeros(self.q)  # warm start of PIRLS, the modes of the last call
        # -2 log p(y | eta) = sum of the weighted unit deviances + this constant (the
        # saturated model's -2 log-likelihood): one pass of loglik_obs, not one per call
        loglik, unit = 0.0, 0.0
        for c in self.chunks:
            eta0 = np.asarray(offset[c], dtype=float) + 0.0
            loglik += self.family.loglik_obs(y[c], eta0, weights[c], 1.0).sum()
            unit += (weights[c] * self.family.unit_deviance_for(y[c])(eta0)).sum()
        self.saturated = float(-2.0 * loglik - unit)

    # --- the penalised system -----------------------------------------------------------------
    def _design(self, theta: np.ndarray):
        L = self.likelihood.factors(theta)
        b0 = self.blocks[0]
        if self.kind == "single":
            return b0.times(L[0])
        if self.kind == "schur":
            return [b.times(Lk) for b, Lk in zip(self.blocks, L, strict=True)]
        return z_matrix(self.blocks, L)

    def _times(self, ZL, u: np.ndarray) -> np.ndarray:
        b0 = self.blocks[0]
        if self.kind == "single":
            return np.einsum("ij,ij->i", ZL, u.reshape(b0.n_levels, -1)[b0.codes])
        if self.kind == "schur":
            out, pos = np.zeros(ZL[0].shape[0]), 0
            for b, Z in zip(self.blocks, ZL, strict=True):
                size = b.n_levels * b.n_effects
                out += np.einsum("ij,ij->i", Z, u[pos:pos + size].reshape(b.n_levels, -1)[b.codes])
                pos += size
            return out
        return ZL @ u

    def _group_blocks(self, ZL0: np.ndarray, w: np.ndarray, r: np.ndarray, k: int = 0
                      ) -> tuple[np.ndarray, np.ndarray]:
        """A term's diagonal blocks ``I + sum_i w_i zl_i zl_i'`` per level, shape (l, p, p),
        and ``sum_i r_i zl_i`` per level, by sums over rows (no q x q matrix)."""
        b = self.blocks[k]
        p, nl = b.n_effects, b.n_levels
        A, g = np.zeros((nl, p, p)), np.zeros((nl, p))
        _add_group_sums(A, g, ZL0, b.codes, w, r)
        A[:, np.arange(p), np.arange(p)] += 1.0
        return A, g.ravel()

    def _single_pass(self, L0: np.ndarray, fixed: np.ndarray, u: np.ndarray
                     ) -> tuple[float, np.ndarray, np.ndarray]:
        """One grouping factor: the deviance, the blocks of A and ``ZL' r`` at the modes u, by
        one pass over the row chunks (no n-row working array)."""
        b = self.blocks[0]
        p, nl = b.n_effects, b.n_levels
        U = u.reshape(nl, -1)
        A, g, dev = np.zeros((nl, p, p)), np.zeros((nl, p)), 0.0
        for c, terms in zip(self.chunks, self._chunk_terms, strict=True):
            Z, codes = b.times(L0, c), b.codes[c]
            w, r, d = terms(fixed[c] + np.einsum("ij,ij->i", Z, U[codes]))
            dev += d
            _add_group_sums(A, g, Z, codes, w, r)
        A[:, np.arange(p), np.arange(p)] += 1.0
        return dev, A, g.ravel()

    def _evaluator(self, theta: np.ndarray, fixed: np.ndarray):
        """``at(u) -> (deviance, A, ZL' r)`` and ``eta(u)``, the linear predictor, at theta."""
        if self.kind == "single":
            L0 = self.likelihood.factors(theta)[0]
            b = self.blocks[0]

            def eta_single(u: np.ndarray) -> np.ndarray:
                out, U = np.empty(fixed.shape[0]), u.reshape(b.n_levels, -1)
                for c in self.chunks:
                    out[c] = fixed[c] + np.einsum("ij,ij->i", b.times(L0, c), U[b.codes[c]])
                return out

            return (lambda u: self._single_pass(L0, fixed, u)), eta_single
        ZL = self._design(theta)

        def at(u: np.ndarray) -> tuple[float, object, np.ndarray]:
            w, r, dev = self._terms(fixed + self._times(ZL, u))
            A, g = self._system(ZL, w, r)
            return dev, A, g

        return at, (lambda u: fixed + self._times(ZL, u))

    def _system(self, ZL, w: np.ndarray, r: np.ndarray):
        """``(A, ZL' r)``: A as (l, p, p) blocks for one term; for "schur" the blocks, the
        cross-products C with the other terms and their own R; else a sparse matrix."""
        if self.kind == "single":
            return self._group_blocks(ZL, w, r)
        if self.kind == "schur":
            B, g1 = self._group_blocks(ZL[0], w, r)
            sizes = [b.n_levels * b.n_effects for b in self.blocks[1:]]
            ends = np.cumsum([0] + sizes)
            R = np.zeros((ends[-1], ends[-1]))
            g2 = []
            for k in range(1, len(self.blocks)):
                own, gk = self._group_blocks(ZL[k], w, r, k)
                g2.append(gk)
                sl = slice(ends[k - 1], ends[k])
                p, base = own.shape[1], ends[k - 1] + np.arange(own.shape[0]) * own.shape[1]
                for a in range(p):
                    for c in range(p):
                        R[base + a, base + c] = own[:, a, c]
                for m in range(k + 1, len(self.blocks)):
                    X = self._cross(k, m, ZL, w)
                    R[sl, ends[m - 1]:ends[m]] = X
                    R[ends[m - 1]:ends[m], sl] = X.T
            C = np.hstack([self._cross(0, m, ZL, w) for m in range(1, len(self.blocks))])
            return (B, C, R), np.concatenate([g1] + g2)
        ZLt = ZL.T.tocsr()
        A = (ZLt @ sparse.diags(w) @ ZL).tocsc() + sparse.identity(self.q, format="csc")
        return A, ZLt @ r

    def _cross(self, k: int, m: int, ZL: list[np.ndarray], w: np.ndarray) -> np.ndarray:
        """``sum_i w_i zl_ki zl_mi'`` between the effects of terms k and m, placed by the
        rows' levels: a dense (l_k p_k, l_m p_m) matrix from sums over rows."""
        bk, bm = self.blocks[k], self.blocks[m]
        lk, lm, pk, pm = bk.n_levels, bm.n_levels, bk.n_effects, bm.n_effects
        idx = bk.codes.astype(np.intp) * lm + bm.codes
        out = np.empty((lk, pk, lm, pm))
        for a in range(pk):
            for c in range(pm):
                out[:, a, :, c] = np.bincount(idx, w * ZL[k][:, a] * ZL[m][:, c],
                                              minlength=lk * lm).reshape(lk, lm)
        return out.reshape(lk * pk, lm * pm)

    def _schur(self, A) -> tuple:
        """Eliminate the first term: ``B^{-1} C`` and the Cholesky factor of ``S = R - C'
        B^{-1} C``, with ``log det A = log det B + log det S``."""
        B, C, R = A
        nl, p = B.shape[0], B.shape[1]
        BiC = np.linalg.solve(B, C.reshape(nl, p, -1)).reshape(self.q1, -1)
        cS = linalg.cho_factor(R - C.T @ BiC, lower=True)
        logdet = (2.0 * np.log(np.diagonal(np.linalg.cholesky(B), axis1=1, axis2=2)).sum()
                  + 2.0 * np.log(np.diag(cS[0])).sum())
        return BiC, cS, float(logdet)

    def _solve(self, A, g: np.ndarray) -> tuple[np.ndarray, float]:
        """``A^{-1} g`` and ``log det A``."""
        if self.kind == "single":
            C = np.linalg.cholesky(A)
            logdet = 2.0 * np.log(np.diagonal(C, axis1=1, axis2=2)).sum()
            x = np.linalg.solve(A, g.reshape(A.shape[0], -1, 1))[..., 0]
            return x.ravel(), float(logdet)
        if self.kind == "schur":
            B, C, _ = A
            BiC, cS, logdet = self._schur(A)
            Bg1 = np.linalg.solve(B, g[:self.q1].reshape(B.shape[0], -1, 1)).ravel()
            x2 = linalg.cho_solve(cS, g[self.q1:] - C.T @ Bg1)
            return np.r_[Bg1 - BiC @ x2, x2], logdet
        lu = splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
        return lu.solve(g), float(np.log(np.abs(lu.U.diagonal())).sum())

    def modes(self, theta: np.ndarray, beta: np.ndarray, u0: np.ndarray | None = None,
              tol: float = 1e-13, maxiter: int = 100, with_eta: bool = True) -> Modes:
        """The conditional modes of u at (theta, beta) by penalised IRLS (Fisher scoring on
        ``sum d_i + |u|^2`` with step halving), from ``u0`` (default: the last modes);
        ``with_eta=False`` leaves the n-row linear predictor out (``Modes.eta`` None)."""
        fixed = self.X @ beta
        fixed += self.offset  # in place: one n-row array
        at, eta_at = self._evaluator(theta, fixed)
        u = (self._u if u0 is None else u0).copy()
        dev, A, g = at(u)
        obj = dev + u @ u
        converged = False
        for _ in range(maxiter):
            delta, _ = self._solve(A, g - u)
            step = 1.0
            for _ in range(40):
                u_new = u + step * delta
                dev_new, A_new, g_new = at(u_new)
                obj_new = dev_new + u_new @ u_new
                if np.isfinite(obj_new) and obj_new <= obj + 1e-12 * abs(obj):
                    break
                step /= 2.0
            else:
                break
            done = abs(obj - obj_new) < tol * (abs(obj_new) + 0.1) and \
                step * np.abs(delta).max(initial=0.0) < 1e-10
            u, dev, A, g, obj = u_new, dev_new, A_new, g_new, obj_new
            if done:
                converged = True
                break
        _, logdet = self._solve(A, np.zeros(self.q))
        eta = eta_at(u) if with_eta else None
        self._u = u
        return Modes(u, eta, float(dev), logdet, A if self.single else None,
                     None if self.single else A, converged)

    # --- the deviance ---------------------------------------------------------------------------
    def laplace(self, theta: np.ndarray, beta: np.ndarray) -> float:
        """-2 log-likelihood by the Laplace approximation (lme4's ``nAGQ = 1`` objective)."""
        m = self.modes(theta, beta, with_eta=False)
        return float(m.dev + self.saturated + m.u @ m.u + m.logdet)

    def agq(self, theta: np.ndarray, beta: np.ndarray, nagq: int) -> float:
        """-2 log-likelihood by ``nagq``-point adaptive Gauss-Hermite quadrature (one grouping
        factor, a scalar effect), without the saturated model's log-likelihood (as lme4)."""
        m = self.modes(theta, beta)
        b = self.blocks[0]
        nl, codes = b.n_levels, b.codes
        x = b.X[:, 0] * theta[0]
        fixed = self.X @ beta
        fixed += self.offset  # in place: one n-row array
        sd = 1.0 / np.sqrt(m.blocks_A[:, 0, 0])
        dev0 = np.bincount(codes, self.weights * self._unit(m.eta), minlength=nl)
        z, wts = hermegauss(nagq)
        wts = wts / np.sqrt(2.0 * np.pi)
        terms = np.empty((len(z), nl))
        for k, zk in enumerate(z):
            uk = m.u + sd * zk
            dk = np.bincount(codes, self.weights * self._unit(fixed + x * uk[codes]),
                             minlength=nl)
            terms[k] = np.log(wts[k]) - 0.5 * (dk - dev0) - 0.5 * (uk ** 2 - m.u ** 2) \
                + 0.5 * zk ** 2
        top = terms.max(axis=0)
        log_int = top + np.log(np.exp(terms - top).sum(axis=0))
        return float(dev0.sum() + m.u @ m.u - 2.0 * np.log(sd).sum() - 2.0 * log_int.sum())

    def __call__(self, x: np.ndarray, nagq: int = 1) -> float:
        """The objective at ``x = (theta, beta)``."""
        nt = self.likelihood.n_theta
        theta, beta = x[:nt], x[nt:]
        return self.laplace(theta, beta) if nagq == 1 else self.agq(theta, beta, nagq)

    # --- what the results read ----------------------------------------------------------------
    def conditional_variances(self, theta: np.ndarray, m: Modes) -> list[np.ndarray]:
        """Per term, the conditional covariance of each level's effects b,
        ``Lambda A^{-1} Lambda'`` blocks, shape (l_k, p_k, p_k) (lme4's ``condVar``)."""
        Ls = self.likelihood.factors(theta)
        if self.kind == "single":
            return [Ls[0] @ np.linalg.inv(m.blocks_A) @ Ls[0].T]
        if self.kind == "schur":
            B, C, R = m.A
            BiC, cS, _ = self._schur(m.A)
            Sinv = linalg.cho_solve(cS, np.eye(R.shape[0]))
            nl, p = B.shape[0], B.shape[1]
            G = BiC.reshape(nl, p, -1)
            first = np.linalg.inv(B) + np.einsum("jaq,qr,jbr->jab", G, Sinv, G)
            return [Ls[0] @ first @ Ls[0].T] + self._diagonal_blocks(
                Ls[1:], self.blocks[1:], lambda cols: Sinv[np.ix_(cols, cols)])
        lu = splu(m.A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)

        def inverse_block(cols: np.ndarray) -> np.ndarray:
            E = np.zeros((self.q, len(cols)))
            E[cols, np.arange(len(cols))] = 1.0
            return lu.solve(E)[cols]

        return self._diagonal_blocks(Ls, self.blocks, inverse_block)

    @staticmethod
    def _diagonal_blocks(Ls, blocks, inverse_block) -> list[np.ndarray]:
        """``L A^{-1}_jj L'`` per level of each term, from ``inverse_block(cols)`` (the block
        of A^{-1} on the term's columns, counted from the first of ``blocks``)."""
        out, pos = [], 0
        for L, b in zip(Ls, blocks, strict=True):
            p, nl = b.n_effects, b.n_levels
            sub = inverse_block(np.arange(pos, pos + p * nl))
            diag = np.stack([sub[j * p:(j + 1) * p, j * p:(j + 1) * p] for j in range(nl)])
            out.append(L @ diag @ L.T)
            pos += p * nl
        return out

    def random_effects(self, theta: np.ndarray, u: np.ndarray) -> list[np.ndarray]:
        """b = Lambda u per term, shape (l_k, p_k)."""
        out, pos = [], 0
        for L, b in zip(self.likelihood.factors(theta), self.blocks, strict=True):
            p, nl = b.n_effects, b.n_levels
            out.append(u[pos:pos + p * nl].reshape(nl, p) @ L.T)
            pos += p * nl
        return out


def _chunk_weights(weights: np.ndarray, chunks: list[slice]) -> list[np.ndarray]:
    """The weights of each row chunk as contiguous arrays (the families' terms take sums of
    weighted terms as dot products, whose rounding depends on the memory layout): slices of
    ``weights``, or for a broadcast view of one value, views of one chunk-long array of it
    (not n rows)."""
    if is_constant(weights):
        size = max(c.stop - c.start for c in chunks)
        shared = np.full(size, weights[0], dtype=float)
        shared.flags.writeable = False
        return [shared[:c.stop - c.start] for c in chunks]
    return [np.ascontiguousarray(weights[c]) for c in chunks]


def _add_group_sums(A: np.ndarray, g: np.ndarray, Z: np.ndarray, codes: np.ndarray,
                    w: np.ndarray, r: np.ndarray) -> None:
    """Add ``sum_i w_i z_i z_i'`` to A (shape (l, p, p)) and ``sum_i r_i z_i`` to g (shape
    (l, p)) per level of ``codes``, in place: sums over rows, no q x q matrix."""
    nl, p = g.shape
    for i in range(p):
        g[:, i] += np.bincount(codes, Z[:, i] * r, minlength=nl)
        for j in range(i + 1):
            s = np.bincount(codes, w * Z[:, i] * Z[:, j], minlength=nl)
            A[:, i, j] += s
            if j != i:
                A[:, j, i] += s
