"""The likelihood of a multinomial (baseline-category softmax) logit.

K response levels in fit order, the reference level first (code 0, linear predictor 0); the
K - 1 others each have an equation ``eta_j = X b_j + offset``. A block's response holds the
integer codes and its weights are frequency weights.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.4.
Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed., §8.1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..rows.blocks import Block
from .base import Likelihood


def softmax_parts(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probabilities of a baseline-category softmax without overflow.

    Parameters
    ----------
    eta : ndarray of shape (r, K-1)
        Finite log-odds of the non-reference levels against the reference level (whose
        linear predictor is 0).

    Returns
    -------
    lse : ndarray of shape (r,)
        ``log(1 + sum_j exp(eta_j))``, the log-sum-exp over all K linear predictors.
    prob : ndarray of shape (r, K-1)
        Probabilities of the non-reference levels.
    prob_ref : ndarray of shape (r,)
        Probability of the reference level, ``exp(-lse)``.

    Notes
    -----
    The log-sum-exp is evaluated as ``scipy.special.logsumexp`` does, shifted by the row
    maximum $m = \\max(0, \\max_j \\eta_j)$ so every exponential is at most 1; the shifted
    exponentials are kept, which gives the probabilities without a second ``exp``.
    """
    k1 = eta.shape[1]
    if 0 < k1 <= 8:  # a few levels: column by column (a reduction along a short axis is slow)
        m = np.maximum(eta[:, 0], 0.0)
        for j in range(1, k1):
            np.maximum(m, eta[:, j], out=m)
        e = np.subtract(eta, m[:, None])
        np.exp(e, out=e)
        s = e[:, 0] + e[:, 1] if k1 > 1 else e[:, 0].copy()
        for j in range(2, k1):
            s += e[:, j]  # the order of e.sum(axis=1) for fewer than 8 terms
    else:
        m = np.maximum(eta.max(axis=1, initial=0.0), 0.0)
        e = np.exp(eta - m[:, None])
        s = e.sum(axis=1)
    e0 = np.exp(-m)
    total = np.add(e0, s, out=s)  # in [1, K]: no overflow, no log(0)
    lse = np.log(total)
    lse += m
    e /= total[:, None]
    e0 /= total
    return lse, e, e0


class MultinomialLikelihood(Likelihood):
    """Per-row terms of a multinomial logit with K levels: K - 1 equations, K means.

    Parameters
    ----------
    n_levels : int
        K, at least 2.
    levels : sequence, optional
        The level labels in fit order (reference first), for :meth:`encode` of raw labels.

    Notes
    -----
    With ``p_i = softmax(0, eta_i)``, row i's log-likelihood is ``f_i log p_{i, c_i}``, its score
    for equation j ``f_i (1[c_i = j] - p_ij) x_i`` and its weight block ``f_i (diag(p) - p p')``
    (observed = expected: the logit is canonical).
    """

    n_extra = 0

    def __init__(self, n_levels: int, levels: Sequence | None = None) -> None:
        K = int(n_levels)
        if K < 2:
            raise ValueError(f"n_levels must be at least 2 (a reference level and another), "
                             f"got {n_levels!r}")
        if levels is not None and len(levels) != K:
            raise ValueError(f"levels has {len(levels)} labels but n_levels is {K}")
        self.K = K
        self.levels = None if levels is None else list(levels)
        self.n_equations = K - 1
        self.n_outputs = K

    def __repr__(self) -> str:
        return f"MultinomialLikelihood({self.K})"

    def encode(self, y) -> np.ndarray:
        """Integer codes 0..K-1 of a block's response: labels looked up among ``levels``, or
        codes checked to lie in range."""
        y = np.asarray(y)
        if self.levels is not None and y.dtype.kind not in "iu":
            lookup = {lv: i for i, lv in enumerate(self.levels)}
            try:
                return np.array([lookup[v] for v in y.tolist()], dtype=np.intp)
            except KeyError as exc:
                raise ValueError(f"response label {exc.args[0]!r} is not one of the levels "
                                 f"{self.levels}") from None
        codes = y.astype(np.intp)
        if codes.size and (codes.min() < 0 or codes.max() >= self.K
                           or not np.array_equal(codes, y)):
            raise ValueError(f"response codes must be integers 0..{self.K - 1}, got values "
                             f"from {y.min()!r} to {y.max()!r}")
        return codes

    def _resid(self, block: Block, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(y_ij - p_ij) for the non-reference levels, (r, K-1), and log p of each row's own
        level, (r,)."""
        lse, prob, _ = softmax_parts(eta)
        codes = np.asarray(block.y, dtype=np.intp)
        onehot = codes[:, None] == np.arange(1, self.K)[None, :]
        own = np.where(codes > 0, np.take_along_axis(
            eta, np.maximum(codes - 1, 0)[:, None], axis=1)[:, 0], 0.0)
        return onehot - prob, own - lse

    def loglike_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        eta = self.linear_predictor(block.X, params, block.offset)
        f = block.weights
        return np.where(f > 0, f * self._resid(block, eta)[1], 0.0)

    def score_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        eta = self.linear_predictor(block.X, params, block.offset)
        resid = self._resid(block, eta)[0] * np.asarray(block.weights, dtype=float)[:, None]
        X = block.X
        r, k = X.shape
        return (resid[:, :, None] * X[:, None, :]).reshape(r, resid.shape[1] * k)

    def weights(self, block: Block, params: np.ndarray, observed: bool = False) -> np.ndarray:
        eta = self.linear_predictor(block.X, params, block.offset)
        _, prob, _ = softmax_parts(eta)
        W = -prob[:, :, None] * prob[:, None, :]
        idx = np.arange(self.K - 1)
        W[:, idx, idx] += prob
        return W * np.asarray(block.weights, dtype=float)[:, None, None]

    def mean_eta(self, eta: np.ndarray) -> np.ndarray:
        """Probabilities of the K levels in fit order (reference first), (r, K): the softmax
        of ``[0, eta]`` shifted by its row maximum (the sum taken over all K columns, as the
        marginal effects always have)."""
        full = np.column_stack([np.zeros(eta.shape[0]), eta])
        full -= full.max(axis=1, keepdims=True)
        e = np.exp(full)
        return e / e.sum(axis=1, keepdims=True)

    def mean_eta_jacobian(self, eta: np.ndarray) -> np.ndarray:
        """J[i, k, j] = p_k (delta_{k, j+1} - p_{j+1})."""
        p = self.mean_eta(eta)
        J = -p[:, :, None] * p[:, None, 1:]
        J[:, 1:, :] += p[:, 1:, None] * np.eye(eta.shape[1])[None]
        return J

    def mean_eta_hess_dot(self, eta: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """d/d eta_j of (J delta)_k = J_kj (delta_k - dbar) - p_k p_j (delta_j - dbar), with
        delta_0 = 0 and dbar = sum_k p_k delta_k."""
        p = self.mean_eta(eta)
        J = self.mean_eta_jacobian(eta)
        full = np.column_stack([np.zeros(delta.shape[0]), delta])
        dev = full - np.sum(p * full, axis=1)[:, None]
        return J * dev[:, :, None] - p[:, :, None] * (p[:, 1:] * dev[:, 1:])[:, None, :]
