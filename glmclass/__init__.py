"""glmclass: linear models for classification, in the style of statsmodels.

>>> import glmclass as gc
>>> import glmclass.formula.api as gcf
"""

from . import datasets, families, links, summary
from . import plot as plot  # glmclass.plot imports matplotlib when a plot is drawn, not here
from .api import load
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
from .models.registry import MODELS
from .models.robust_link import robust_logit_profile
from .numerics.laplace_approx import laplace
from .results.anova import anova, lrtest
from .results.emmeans import emmeans, joint_tests
from .version import __version__ as __version__  # written once, in glmclass/version.py

# the model classes (GLM, Logit, ..., Perceptron), exported from the one model list
globals().update({entry.cls.__name__: entry.cls for entry in MODELS})

__all__ = [
    *dict.fromkeys(entry.cls.__name__ for entry in MODELS),  # a class under two names once
    "compare", "datasets", "families", "links", "summary", "plot",
    "lrtest", "anova", "load", "emmeans", "joint_tests", "laplace",
    "GlmclassError", "GlmclassWarning", "DataError", "SeparationWarning",
    "PerfectSeparationError", "ConvergenceWarning", "RankDeficientWarning",
    "robust_logit_profile",
    "DataWarning", "UnsafeFormulaError",
]
