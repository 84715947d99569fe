"""The model base of every GLM-like model (:class:`GLMBase`): GLM, Logit, Probit, BayesGLM,
BayesLogit and FirthLogit hold a :class:`~glmclass.models.glm_problem.GLMProblem` (the response
on the family's scale, the prior weights and the offset, validated once) and expose it. Their
fits call the solvers through it, over a row-block source, and never keep a full-length linear
predictor: the results compute the one they need.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., ch. 2.
"""

from __future__ import annotations

import numpy as np

from .. import families as F
from ..data.model_data import ModelData
from ..errors import ConvergenceWarning, RankDeficientWarning, warn_user
from ..rows.blocks import RowBlocks
from ..rows.gram import column_abs_max
from ..solvers.fit import Fit
from .base import Model
from .glm_problem import GLMProblem, constant, gram_applies, null_record

__all__ = ["GLMBase", "GLMProblem", "ProblemViews", "constant", "gram_applies", "null_record"]


class ProblemViews:
    """Read-only views of a model's :class:`GLMProblem` (``self.problem``): the family, the
    response on the family's scale, the offset and the weights (GLMBase and MixedGLM)."""

    problem: GLMProblem

    @property
    def family(self) -> F.Family:
        return self.problem.family

    @property
    def endog(self) -> np.ndarray:
        """The response on the family's scale (0/1 or proportions for binary models)."""
        return self.problem.endog

    @property
    def levels(self) -> list | None:
        """``[failure, success]`` labels of a binary response (None for proportions)."""
        return self.problem.levels

    @property
    def offset(self) -> np.ndarray:
        return self.problem.offset

    @property
    def freq_weights(self) -> np.ndarray:
        return self.problem.freq_weights

    @property
    def var_weights(self) -> np.ndarray:
        return self.problem.var_weights

    @property
    def prior_weights(self) -> np.ndarray:
        return self.problem.prior_weights


class GLMBase(ProblemViews, Model):
    """Base of the models that hold a :class:`GLMProblem` (GLM, Logit, Probit, BayesGLM,
    BayesLogit): the read-only views of its data and the warnings every fit gives."""

    row_args = ("offset", "freq_weights", "var_weights")
    problem: GLMProblem

    def _set_problem(self, data: ModelData, family: F.Family) -> None:
        self.problem = GLMProblem.build(data, family)

    def blocks(self) -> RowBlocks:
        """The rows as the GLM problem encodes them (:meth:`GLMProblem.blocks`)."""
        return self.problem.blocks()

    # --- warnings -----------------------------------------------------------------------------
    def _warn_aliased(self, aliased: np.ndarray) -> None:
        if not aliased.any():
            return
        names = [n for n, a in zip(self.exog_names, aliased, strict=True) if a]
        empty = column_abs_max(self.problem.blocks()) == 0  # one pass, no n x p temporary
        zero = [n for n, z in zip(self.exog_names, empty, strict=True) if z and n in names]
        why = ("is a linear combination" if len(names) == 1 else "are linear combinations")
        why += " of earlier columns (on the rows with positive weight)"
        if zero:
            verb = "is" if len(zero) == 1 else "are"
            why += f"; {', '.join(map(repr, zero))} {verb} all zero"
        warn_user(
            f"the design is rank deficient: {', '.join(map(repr, names))} {why}; their "
            "coefficients are NaN (drop them to silence this)", RankDeficientWarning)

    def _warn_convergence(self, fit: Fit, what: str = "IRLS",
                          hint: str = "raise maxiter, give start_params, or rescale the "
                                      "columns") -> None:
        if fit.converged:
            return
        hist = ", ".join(f"{h:.6g}" for h in fit.history[-5:])
        w = ConvergenceWarning(
            f"{what} did not converge: {fit.message} (last deviances: {hist}); {hint}")
        w.history = fit.history  # the whole iteration history, for diagnosis
        warn_user(w, ConvergenceWarning)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.family!r}, nobs={self.exog.shape[0]}>"
