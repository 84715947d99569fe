"""Lowercase entry points: ``gcf.logit("y ~ x1 + C(g)", df)`` builds a model from a formula.

Each is the model class's ``from_formula``; the names follow ``statsmodels.formula.api``.
"""

from __future__ import annotations

from ..models.bayes import BayesGLM, BayesLogit
from ..models.discriminant import LDA, QDA
from ..models.glm import GLM, Logit, Probit
from ..models.mnlogit import MNLogit
from ..models.naive_bayes import BernoulliNB


def glm(formula: str, data, **kwargs) -> GLM:
    """:meth:`glmclass.GLM.from_formula`."""
    return GLM.from_formula(formula, data, eval_env=1, **kwargs)


def logit(formula: str, data, **kwargs) -> Logit:
    """:meth:`glmclass.Logit.from_formula`."""
    return Logit.from_formula(formula, data, eval_env=1, **kwargs)


def probit(formula: str, data, **kwargs) -> Probit:
    """:meth:`glmclass.Probit.from_formula`."""
    return Probit.from_formula(formula, data, eval_env=1, **kwargs)


def mnlogit(formula: str, data, **kwargs) -> MNLogit:
    """:meth:`glmclass.MNLogit.from_formula`."""
    return MNLogit.from_formula(formula, data, eval_env=1, **kwargs)


def bayes_logit(formula: str, data, **kwargs) -> BayesLogit:
    """:meth:`glmclass.BayesLogit.from_formula`."""
    return BayesLogit.from_formula(formula, data, eval_env=1, **kwargs)


def bayes_glm(formula: str, data, **kwargs) -> BayesGLM:
    """:meth:`glmclass.BayesGLM.from_formula`."""
    return BayesGLM.from_formula(formula, data, eval_env=1, **kwargs)


def lda(formula: str, data, **kwargs) -> LDA:
    """:meth:`glmclass.LDA.from_formula` (the intercept column is not a feature)."""
    return LDA.from_formula(formula, data, eval_env=1, **kwargs)


def qda(formula: str, data, **kwargs) -> QDA:
    """:meth:`glmclass.QDA.from_formula` (the intercept column is not a feature)."""
    return QDA.from_formula(formula, data, eval_env=1, **kwargs)


def bernoulli_nb(formula: str, data, **kwargs) -> BernoulliNB:
    """:meth:`glmclass.BernoulliNB.from_formula` (the intercept column is not a feature)."""
    return BernoulliNB.from_formula(formula, data, eval_env=1, **kwargs)


__all__ = [
    "bayes_logit", "bayes_glm",
    "glm", "logit", "probit", "mnlogit",
           "lda", "qda", "bernoulli_nb"]
