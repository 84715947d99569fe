"""The likelihood of a generalized linear model: any glmclass family with any link.

Every term comes from the family and its link (:mod:`glmclass.families`,
:mod:`glmclass.links`); nothing is derived again here. A block's weights are the prior
weights (frequency times variance weights) and its response is on the family's scale (0/1 or
proportions for the binomial), as :class:`glmclass.models.glm_base.GLMProblem` encodes them.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., §2.5 (the
score and Fisher information of a GLM).
"""

from __future__ import annotations

import numpy as np

from ..families import Binomial, Family, Poisson
from ..rows.blocks import Block
from ..rows.constant import constant, is_constant
from .base import Likelihood


class GLMLikelihood(Likelihood):
    """Per-row terms of a GLM: one equation, the mean ``g^-1(eta)``.

    Parameters
    ----------
    family : Family
        A glmclass family (its link included).
    scale : float
        Dispersion phi at which :meth:`loglike_obs` is evaluated (1 for the binomial and
        Poisson). :meth:`score_obs` and :meth:`weights` are those of phi = 1: the dispersion
        cancels from every sandwich (see :mod:`glmclass.numerics.covariance`).

    Notes
    -----
    With ``u_i = w_i (y_i - mu_i) mu'(eta_i) / V(mu_i)`` the score of row i is ``u_i x_i``; the
    Fisher weight is ``w_i mu'(eta_i)^2 / V(mu_i)``, the observed one subtracts
    ``(y - mu) d(mu'/V)/d eta`` (equal for canonical links).
    """

    n_equations = 1
    n_outputs = 1

    def __init__(self, family: Family, scale: float = 1.0) -> None:
        if not isinstance(family, Family):
            raise TypeError(f"family must be a glmclass family, e.g. gc.families.Binomial(); "
                            f"got {family!r}")
        if not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be a positive dispersion, got {scale!r}")
        self.family = family
        self.scale = float(scale)

    def __repr__(self) -> str:
        return f"GLMLikelihood({self.family!r})"

    def encode(self, y) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        try:
            self.family.check_endog(y)
        except ValueError as exc:
            raise ValueError(f"response: {exc}") from None
        return y

    def _eta(self, block: Block, params: np.ndarray) -> np.ndarray:
        return self.linear_predictor(block.X, params, block.offset)[:, 0]

    def loglike_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        """``family.loglik_obs`` at the block's eta, its weights as variance weights."""
        return self.family.loglik_obs(block.y, self._eta(block, params), block.weights,
                                      self.scale)

    def score_u(self, block: Block, eta: np.ndarray) -> np.ndarray:
        """The score per unit of eta, ``u_i = w_i (y_i - mu_i) mu'_i / V_i`` (0 on rows of
        weight 0, whose eta may be anything), shape (r,)."""
        fam, w = self.family, block.weights
        with np.errstate(invalid="ignore"):
            u = w * (fam.score_ratio(eta) * (block.y - fam.link.inverse(eta)))
            return np.where(w > 0, u, 0.0)

    def score_obs(self, block: Block, params: np.ndarray) -> np.ndarray:
        u = self.score_u(block, self._eta(block, params))
        return block.X * u[:, None]

    def weights(self, block: Block, params: np.ndarray, observed: bool = False) -> np.ndarray:
        eta = self._eta(block, params)
        fam = self.family
        w = fam.observed_weights(block.y, eta) if observed else fam.working_weights(eta)
        return block.weights * w

    def mean_eta(self, eta: np.ndarray) -> np.ndarray:
        return self.family.link.inverse(eta)

    def mean_eta_jacobian(self, eta: np.ndarray) -> np.ndarray:
        return self.family.link.mu_eta(eta)[:, :, None]

    def mean_eta_hess_dot(self, eta: np.ndarray, delta: np.ndarray) -> np.ndarray:
        return (self.family.link.mu_eta2(eta) * delta)[:, :, None]


# --- the null model's partials, gathered alongside another pass --------------------------------

def loglik_is_saturated_minus_half_deviance(family: Family) -> bool:
    """Whether ``loglik_obs(y, eta, v) + v d(y, mu) / 2`` does not depend on eta for
    ``family`` (at scale 1): then ``llf = llnull + (null_deviance - deviance) / 2``.

    True for the binomial and Poisson families' own log-likelihoods and deviances (a subclass
    that overrides either is not assumed to keep the identity); False for families with an
    estimated dispersion.
    """
    own = {Binomial: (Binomial.loglik_obs, Binomial.unit_deviance),
           Poisson: (Poisson.loglik_obs, Poisson.unit_deviance)}
    for kind, (ll, dev) in own.items():
        if isinstance(family, kind):
            return type(family).loglik_obs is ll and type(family).unit_deviance is dev
    return False


class NullPartials:
    """A block's share of the null model's deviance and log-likelihood at
    ``eta = offset + intercept``: ``[sum w d(y, mu), sum ll_i]`` (picklable, for the workers
    that hold the rows).

    Parameters
    ----------
    family : Family
    intercept : float
        The null model's constant (0 without an intercept: eta is the offset).
    weights : {"freq", "var", None}
        What the block's prior weights w are for the log-likelihood: frequency weights
        (``ll_i = w_i loglik_obs(y_i, eta_i, 1)``), variance weights (``ll_i =
        loglik_obs(y_i, eta_i, w_i)``), or None: no log-likelihood (NaN), e.g. when the
        prior weights are the product of both kinds.

    Notes
    -----
    The deviance is R's null deviance (``glm.fit``) on the block's rows; the log-likelihood is
    statsmodels' ``llnull`` at scale 1.
    """

    def __init__(self, family: Family, intercept: float, weights: str | None) -> None:
        self.family, self.intercept, self.weights = family, float(intercept), weights

    def _eta(self, blk: Block) -> np.ndarray:
        """offset + intercept; without an offset (one broadcast value) one number for every
        row, so the link's logs are taken once and broadcast, not once per row."""
        off = blk.offset
        return (off[:1] if is_constant(off) else off) + self.intercept

    def deviance(self, blk: Block, eta: np.ndarray | None = None) -> float:
        """The block's share of the null deviance, ``sum w d(y, mu)`` (``eta``: the block's
        :meth:`_eta` when the caller has it)."""
        eta = self._eta(blk) if eta is None else eta
        return float(np.sum(blk.weights * self.family.unit_deviance(blk.y, eta)))

    def __call__(self, blk: Block) -> np.ndarray:
        fam, w, y, eta = self.family, blk.weights, blk.y, self._eta(blk)
        dev = self.deviance(blk, eta)
        if self.weights == "freq":
            ll = float(np.sum(w * fam.loglik_obs(y, eta, constant(1.0, w.shape[0]), 1.0)))
        elif self.weights == "var":
            ll = float(np.sum(fam.loglik_obs(y, eta, np.asarray(w, dtype=float), 1.0)))
        else:
            ll = np.nan
        return np.array([dev, ll])
