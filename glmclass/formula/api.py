"""Lowercase entry points: ``gcf.logit("y ~ x1 + C(g)", df)`` builds a model from a formula.

Each is the model class's ``from_formula``; the names follow ``statsmodels.formula.api``.
"""

from __future__ import annotations

from ..models.glm import GLM, Logit, Probit


def glm(formula: str, data, **kwargs) -> GLM:
    """:meth:`glmclass.GLM.from_formula`."""
    return GLM.from_formula(formula, data, eval_env=1, **kwargs)


def logit(formula: str, data, **kwargs) -> Logit:
    """:meth:`glmclass.Logit.from_formula`."""
    return Logit.from_formula(formula, data, eval_env=1, **kwargs)


def probit(formula: str, data, **kwargs) -> Probit:
    """:meth:`glmclass.Probit.from_formula`."""
    return Probit.from_formula(formula, data, eval_env=1, **kwargs)


__all__ = ["glm", "logit", "probit"]
