"""The records of the IRLS solver (:mod:`glmclass.solvers.irls`) that no other solver has:
the Gaussian prior of a penalised fit and the coordinates it works in (its settings are the
one :class:`~glmclass.solvers.control.Control`, its result the one
:class:`~glmclass.solvers.fit.Fit`); the bottom of the IRLS stack (records, then
:mod:`~glmclass.solvers.irls_qr` and :mod:`~glmclass.solvers.irls_steps`, the exact loop
:mod:`~glmclass.solvers.irls_exact`, the large-N path :mod:`~glmclass.solvers.irls_sampled`,
the front door :func:`~glmclass.solvers.irls.irls`), importing none of them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..rows.blocks import Block, RowBlocks
from ..rows.gram import shift_transform


def weight_scale(blocks: RowBlocks) -> float:
    """The mean prior weight of the rows (1.0 without rows, or for unit weights).

    The deviance is proportional to the prior weights, but R's relative-change rule
    ``|dev - dev_old| / (|dev| + 0.1)`` and its binomial starting means
    ``(w y + 0.5) / (w + 1)`` are not: with weights all 1e-12 the rule stops after two
    iterations, off the MLE in the second digit, and with weights 1e12 the start is near the
    0/1 responses. The solvers measure weights against this scale (``0.1 * scale``, starting
    means of ``w / scale``), which leaves R's rule and start for unit weights and makes every
    decision invariant to multiplying all weights by a constant.
    """
    total, n = blocks.reduce(_weight_sum, (0.0, 0), _add_pairs)
    s = total / n if n > 0 else 1.0
    return s if math.isfinite(s) and s > 0 else 1.0


def _weight_sum(b: Block) -> tuple[float, int]:
    # (Python numbers and a plain combine: at n = 50 array partials summed into an owned
    # array cost three times the sum itself; the method sum, as np.sum's wrapper costs 3 us)
    return float(b.weights.sum()), b.weights.shape[0]


def _add_pairs(a: tuple[float, int], b: tuple[float, int]) -> tuple[float, int]:
    return a[0] + b[0], a[1] + b[1]


@dataclass(frozen=True)
class Penalty:
    """A Gaussian prior N(mean, precision^-1) on the coefficients: the objective becomes
    ``deviance + (b - mean)' precision (b - mean)`` (minus twice the log posterior)."""

    precision: np.ndarray
    mean: np.ndarray

    def value(self, coef: np.ndarray) -> float:
        d = coef - self.mean
        return float(d @ self.precision @ d)


@dataclass(frozen=True)
class Frame:
    """The coordinates the solver works in: ``gamma = T beta`` on ``Xc = X - 1 s'`` (``shift``
    None: X itself), and the prior of a penalised fit, given in beta coordinates."""

    shift: np.ndarray | None
    intercept: int | None
    penalty: Penalty | None
    scale: float = 1.0  # the mean prior weight (weight_scale): what "0.1" in R's rule means

    @property
    def t(self) -> np.ndarray | None:
        return None if self.shift is None else shift_transform(self.shift, self.intercept)

    def to_gamma(self, beta: np.ndarray) -> np.ndarray:
        return beta if self.shift is None else beta + np.eye(beta.shape[0])[self.intercept] * (
            self.shift @ beta)

    def to_beta(self, gamma: np.ndarray) -> np.ndarray:
        if self.shift is None:
            return gamma
        beta = gamma.copy()
        beta[self.intercept] -= self.shift @ gamma
        return beta

    def gram_to_beta(self, g: np.ndarray) -> np.ndarray:
        t = self.t
        return g if t is None else t.T @ g @ t

    def penalty_gamma(self) -> Penalty | None:
        """The prior in gamma coordinates: precision ``T^-T P T^-1``, mean ``T m``."""
        pen = self.penalty
        if pen is None or self.shift is None:
            return pen
        tinv = np.eye(self.shift.shape[0])
        tinv[self.intercept] -= self.shift
        return Penalty(tinv.T @ pen.precision @ tinv, self.to_gamma(pen.mean))
