"""glmclass: linear models for classification, in the style of statsmodels.

>>> import glmclass as gc
>>> import glmclass.formula.api as gcf
"""

from . import families, links, summary
from .errors import (
    ConvergenceWarning,
    DataError,
    GlmclassError,
    GlmclassWarning,
    PerfectSeparationError,
    RankDeficientWarning,
    SeparationWarning,
)
from .compare import compare
from .models.glm import GLM, Logit, Probit

__version__ = "0.1.0"

__all__ = [
    "GLM", "Logit", "Probit", "compare", "families", "links",
    "GlmclassError", "GlmclassWarning", "DataError", "SeparationWarning",
    "PerfectSeparationError", "ConvergenceWarning", "RankDeficientWarning",
]
