"""glmclass: linear models for classification, in the style of statsmodels.

>>> import glmclass as gc
>>> import glmclass.formula.api as gcf
"""

from . import datasets, families, links, summary
from . import plot as plot  # glmclass.plot imports matplotlib when a plot is drawn, not here
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
from .models.discriminant_functions import FisherDiscriminant, LeastSquaresClassifier
from .models.firth import FirthLogit
from .models.glm import GLM, Logit, Probit
from .models.mnlogit import MNLogit
from .models.naive_bayes import BernoulliNB, GaussianNB
from .models.perceptron import Perceptron
from .models.robust_link import robust_logit_profile
from .results.anova import anova, lrtest
from .results.io import load
from .version import __version__ as __version__  # floor 0: results/io reads it too

__all__ = [
    "BayesGLM", "BayesLogit", "FirthLogit",
    "GLM", "Logit", "Probit", "MNLogit", "compare", "datasets", "families", "links", "summary",
    "plot",
    "LDA", "QDA", "BernoulliNB", "GaussianNB",
    "lrtest", "anova", "load",
    "GlmclassError", "GlmclassWarning", "DataError", "SeparationWarning",
    "PerfectSeparationError", "ConvergenceWarning", "RankDeficientWarning",
    "robust_logit_profile", "LeastSquaresClassifier", "FisherDiscriminant",
    "Perceptron",
    "DataWarning", "UnsafeFormulaError",
]
