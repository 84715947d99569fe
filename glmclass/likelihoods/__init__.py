"""Likelihoods: each model kind's mathematics on one block of rows (floor 3).

:class:`~glmclass.likelihoods.base.Likelihood` is the contract;
:class:`~glmclass.likelihoods.glm.GLMLikelihood` (every family and link) and
:class:`~glmclass.likelihoods.multinomial.MultinomialLikelihood` implement it.
:func:`likelihood_of` finds a fitted model's likelihood.
"""

from __future__ import annotations

from numbers import Integral

from ..families import Family
from .base import Likelihood
from .glm import GLMLikelihood
from .multinomial import MultinomialLikelihood, softmax_parts

__all__ = ["GLMLikelihood", "Likelihood", "MultinomialLikelihood", "likelihood_of",
           "softmax_parts"]


def likelihood_of(model: object) -> Likelihood:
    """The likelihood of a model: its own ``likelihood`` when it has one, else built once from
    its public description (a GLM's ``family``; a multinomial logit's number of levels ``K``).

    Parameters
    ----------
    model : GLM, Logit, Probit, MNLogit, ...

    Returns
    -------
    Likelihood

    Raises
    ------
    TypeError
        A model with neither, naming its type.
    """
    own = getattr(model, "likelihood", None)
    if isinstance(own, Likelihood):
        return own
    family = getattr(model, "family", None)
    if isinstance(family, Family):
        return GLMLikelihood(family)
    K = getattr(model, "K", None)
    if isinstance(K, Integral) and not isinstance(K, bool):
        return MultinomialLikelihood(int(K))
    raise TypeError(f"{type(model).__name__} has no likelihood (neither a glmclass family nor "
                    "a number of response levels K); marginal effects and sandwich "
                    "covariances need a GLM-type or multinomial model")
