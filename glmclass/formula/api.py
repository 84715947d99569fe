"""Lowercase entry points: ``gcf.logit("y ~ x1 + C(g)", df)`` builds a model from a formula.

Each is the model class's ``from_formula`` with the caller's namespace captured here, once; the
names follow ``statsmodels.formula.api``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..models.bayes import BayesGLM, BayesLogit
from ..models.discriminant import LDA, QDA
from ..models.discriminant_functions import FisherDiscriminant, LeastSquaresClassifier
from ..models.firth import FirthLogit
from ..models.glm import GLM, Logit, Probit
from ..models.mnlogit import MNLogit
from ..models.naive_bayes import BernoulliNB, GaussianNB
from ..models.perceptron import Perceptron
from .design import capture_env


def _entry(cls: type, name: str, note: str = "") -> Callable:
    def entry(formula: str, data, eval_env=None, **kwargs):
        return cls.from_formula(formula, data, eval_env=capture_env(eval_env, 1), **kwargs)

    entry.__name__ = entry.__qualname__ = name
    entry.__doc__ = (f":meth:`glmclass.{cls.__name__}.from_formula`{note}: "
                     f"``gcf.{name}(formula, data, **kwargs)``.")
    return entry


_FEATURES = " (the intercept column is not a feature)"

glm = _entry(GLM, "glm")
logit = _entry(Logit, "logit")
probit = _entry(Probit, "probit")
firthlogit = _entry(FirthLogit, "firthlogit")
mnlogit = _entry(MNLogit, "mnlogit")
bayes_logit = _entry(BayesLogit, "bayes_logit")
bayes_glm = _entry(BayesGLM, "bayes_glm")
lda = _entry(LDA, "lda", _FEATURES)
qda = _entry(QDA, "qda", _FEATURES)
bernoulli_nb = _entry(BernoulliNB, "bernoulli_nb", _FEATURES)
gaussian_nb = _entry(GaussianNB, "gaussian_nb", _FEATURES)

least_squares = _entry(LeastSquaresClassifier, "least_squares")
fisher = _entry(FisherDiscriminant, "fisher", _FEATURES)
perceptron = _entry(Perceptron, "perceptron")

# every entry point defined above (one line per model; nothing to keep in sync here)
__all__ = sorted(n for n, v in list(globals().items())
                 if getattr(v, "__module__", None) == __name__ and not n.startswith("_"))
