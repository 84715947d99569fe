"""The likelihood of a model at any parameters, summed over a row source: the reductions
of the per-row terms of a :class:`~glmclass.likelihoods.base.Likelihood` that statsmodels'
``model.loglike(params)``, ``score`` and ``hessian`` give, and that a profile likelihood
refits with (:mod:`glmclass.results.profile`); in memory or in Dask partitions alike.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..rows.blocks import Block, RowBlocks
from .base import Likelihood
from .glm import GLMLikelihood


def flat_params(lik: Likelihood, params, k: int) -> np.ndarray:
    """``params`` as a flat equation-major vector of ``n_equations * k`` floats (a Series, a
    (k, n_equations) DataFrame or array, or a flat vector); NaN entries (aliased columns)
    count as 0, as R's predictions treat them.

    Raises
    ------
    ValueError
        When the shape fits neither form, naming both.
    """
    B = lik.coef_matrix(np.asarray(params, dtype=float), k)
    return np.nan_to_num(B.T.ravel(), nan=0.0)


def _sum(rows: RowBlocks, fn: Callable[[Block], np.ndarray], zero):
    return rows.reduce(fn, zero)


def _mle_scale(lik: Likelihood, rows: RowBlocks, params: np.ndarray) -> float:
    """The dispersion at its maximum-likelihood value, the weighted deviance over the number
    of rows (R's ``logLik`` of a Gaussian GLM)."""
    fam = lik.family

    def part(b: Block) -> np.ndarray:
        eta = lik.linear_predictor(b.X, params, b.offset)[:, 0]
        dev = np.where(b.weights > 0, b.weights * fam.unit_deviance(b.y, eta), 0.0)
        n = b.freq_weights.sum() if b.freq_weights is not None else np.count_nonzero(
            b.weights > 0)
        return np.array([dev.sum(), n])

    dev, n = _sum(rows, part, np.zeros(2))
    return float(dev / n)


def loglike(lik: Likelihood, rows: RowBlocks, params, scale: float | None = None) -> float:
    """Sum of the rows' log-likelihood terms at ``params`` (see :func:`flat_params`);
    ``scale``: the dispersion of a family that estimates one (default its maximum-likelihood
    value at ``params``)."""
    b = flat_params(lik, params, rows.n_cols)
    if isinstance(lik, GLMLikelihood) and not lik.family.fixed_scale:
        lik = GLMLikelihood(lik.family, _mle_scale(lik, rows, b) if scale is None else scale)

    def part(block: Block) -> float:
        ll = lik.loglike_obs(block, b)
        return float(np.sum(np.where(block.weights > 0, ll, 0.0)))

    return float(_sum(rows, part, 0.0))


def score(lik: Likelihood, rows: RowBlocks, params) -> np.ndarray:
    """Gradient of the log-likelihood at ``params`` (dispersion 1), flat equation-major."""
    b = flat_params(lik, params, rows.n_cols)
    return _sum(rows, lambda block: lik.score_obs(block, b).sum(axis=0), np.zeros(b.size))


def hessian(lik: Likelihood, rows: RowBlocks, params, observed: bool = True) -> np.ndarray:
    """Second derivatives of the log-likelihood at ``params`` (dispersion 1), equation-major
    ``(n_equations k, n_equations k)``: ``-sum_i x_i' W_i x_i`` with the rows' observed (or,
    ``observed=False``, expected) weights."""
    b = flat_params(lik, params, rows.n_cols)
    k, m = rows.n_cols, lik.n_equations

    def part(block: Block) -> np.ndarray:
        W = lik.weights(block, b, observed=observed)
        X = block.X
        if W.ndim == 1:
            return -(X.T @ (X * W[:, None]))
        return -np.einsum("rjl,ra,rb->jalb", W, X, X).reshape(m * k, m * k)

    return _sum(rows, part, np.zeros((m * k, m * k)))
