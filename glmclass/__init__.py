"""glmclass: linear models for classification, in the style of statsmodels.

>>> import glmclass as gc
>>> import glmclass.formula.api as gcf
"""

from . import families, links, summary
from .compare import compare
from .errors import (
    ConvergenceWarning,
    DataError,
    DataWarning,
    GlmclassError,
    GlmclassWarning,
    PerfectSeparationError,
    RankDeficientWarning,
    SeparationWarning,
    UnsafeFormulaError,
)
from .models.bayes import BayesGLM, BayesLogit
from .models.discriminant import LDA, QDA
from .models.glm import GLM, Logit, Probit
from .models.mnlogit import MNLogit
from .models.naive_bayes import BernoulliNB

__version__ = "0.1.0"

__all__ = [
    "BayesGLM", "BayesLogit",
    "GLM", "Logit", "Probit", "MNLogit", "compare", "families", "links", "summary",
    "LDA", "QDA", "BernoulliNB",
    "GlmclassError", "GlmclassWarning", "DataError", "SeparationWarning",
    "PerfectSeparationError", "ConvergenceWarning", "RankDeficientWarning",
    "DataWarning", "UnsafeFormulaError",
]
