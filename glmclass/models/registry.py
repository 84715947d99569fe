"""The one list of models: every model class with the lowercase name it goes by.

``import glmclass`` exports each class under its own name, :mod:`glmclass.formula.api` makes
one entry point per name (``gcf.logit(formula, data, ...)``) and the command line offers the
names as ``--model`` choices; none of them keeps a list of its own. Adding a model is one line
in :data:`MODELS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .bayes import BayesGLM, BayesLogit
from .discriminant import LDA, QDA
from .discriminant_functions import FisherDiscriminant, LeastSquaresClassifier
from .firth import FirthLogit
from .glm import GLM, Logit, Probit
from .mixed import MixedGLM, MixedLogit, MixedProbit
from .mnlogit import MNLogit
from .naive_bayes import BernoulliNB, GaussianNB
from .ordinal import OrderedModel
from .perceptron import Perceptron


@dataclass(frozen=True)
class ModelEntry:
    """One model of the package.

    Attributes
    ----------
    name : str
        The lowercase name: the entry point ``glmclass.formula.api.<name>`` and the command
        line's ``--model <name>`` (statsmodels' spelling where statsmodels has the model).
    cls : type
        The model class, exported as ``glmclass.<cls.__name__>``.
    features : bool
        The design's columns are the features of a generative or discriminant-function model,
        so a formula's intercept column is not used.
    probabilities : bool
        The model estimates class probabilities and has a likelihood: its results predict
        ``which="prob"`` and can be compared (:func:`glmclass.compare`); when False they
        predict scores and labels only.
    options : tuple of (str, object)
        Constructor options the name fixes (``ordered_probit``: ``link="probit"``).
    """

    name: str
    cls: type
    features: bool = False
    probabilities: bool = True
    options: tuple = ()


MODELS: tuple[ModelEntry, ...] = (
    ModelEntry("glm", GLM),
    ModelEntry("logit", Logit),
    ModelEntry("probit", Probit),
    ModelEntry("firthlogit", FirthLogit),
    ModelEntry("mnlogit", MNLogit),
    ModelEntry("bayes_logit", BayesLogit),
    ModelEntry("bayes_glm", BayesGLM),
    ModelEntry("lda", LDA, features=True),
    ModelEntry("qda", QDA, features=True),
    ModelEntry("bernoulli_nb", BernoulliNB, features=True),
    ModelEntry("gaussian_nb", GaussianNB, features=True),
    ModelEntry("least_squares", LeastSquaresClassifier, probabilities=False),
    ModelEntry("fisher", FisherDiscriminant, features=True, probabilities=False),
    ModelEntry("perceptron", Perceptron, probabilities=False),
    ModelEntry("ordinal", OrderedModel),
    ModelEntry("ordered_logit", OrderedModel, options=(("link", "logit"),)),
    ModelEntry("ordered_probit", OrderedModel, options=(("link", "probit"),)),
    ModelEntry("mixed_glm", MixedGLM),  # Dask data: NotImplementedError (models/mixed.py)
    ModelEntry("mixed_logit", MixedLogit),
    ModelEntry("mixed_probit", MixedProbit),
)


def model_entry(name: str) -> ModelEntry:
    """The entry of the model called ``name``.

    Parameters
    ----------
    name : str
        A lowercase model name, e.g. ``"logit"``.

    Returns
    -------
    ModelEntry

    Raises
    ------
    ValueError
        When no model has that name; the message lists the names.
    """
    for entry in MODELS:
        if entry.name == name:
            return entry
    raise ValueError(f"no model is called {name!r}; the models are "
                     f"{', '.join(e.name for e in MODELS)}")
