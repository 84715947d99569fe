"""The IRLS iterates of a GLM fit in PRML's notation (``fit(keep_iterates=True)``)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class IRLSIterates:
    """What each IRLS iteration computed (PRML §4.3.3, eq. 4.99-4.100).

    Iteration k regresses the working response ``z`` on the design with the weights ``R``,
    both evaluated at the previous coefficients (for k = 1: at the starting linear predictor,
    R's ``mustart``): ``w_k = (X' R X)^-1 X' R z`` (eq. 4.99), ``z = X w_old - R^-1 (y - t)``
    (eq. 4.100) in PRML's notation, ``z = eta - offset + (t - mu) / mu'(eta)`` in R's. An
    iteration whose step was halved (the deviance rose) reports the halved coefficients.

    Attributes
    ----------
    coefficients : pandas.DataFrame
        Rows the iterations 1, 2, ..., columns the design columns: the coefficients after each.
    working_response : pandas.DataFrame
        z of each iteration: rows the observations, one column per iteration.
    working_weights : pandas.DataFrame
        The diagonal of R of each iteration (prior weights times mu'(eta)^2 / V(mu); for the
        logit ``y_n (1 - y_n)``): rows the observations, one column per iteration.
    deviance : pandas.Series
        The deviance after each iteration.
    """

    coefficients: pd.DataFrame
    working_response: pd.DataFrame
    working_weights: pd.DataFrame
    deviance: pd.Series

    @property
    def z(self) -> pd.DataFrame:
        """PRML's name of :attr:`working_response`."""
        return self.working_response

    @property
    def R(self) -> pd.DataFrame:  # noqa: N802 - PRML's name of the weight matrix
        """PRML's name of :attr:`working_weights` (the diagonal of R)."""
        return self.working_weights

    def __repr__(self) -> str:
        return f"<IRLSIterates: {self.coefficients.shape[0]} iterations>"
