"""The front door of the solvers: :func:`solve` runs the solver ``control.method`` names on a
problem over a row source and returns the one :class:`~glmclass.solvers.fit.Fit` record.

Each solver keeps its own module and internals (IRLS its shift, R's aliasing, sampled
Hessians and QR fallback; Newton its sampled Hessians); this module only dispatches, so a fit
through :func:`solve` is the very fit the solver makes when called by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..families import Family
from ..likelihoods.glm import GLMLikelihood
from ..likelihoods.multinomial import MultinomialLikelihood
from ..rows.blocks import RowBlocks
from . import coordinate_descent as CD
from . import gradient as GD
from .control import GRADIENT_METHODS, Control
from .firth import firth_logit, firth_logit_rows
from .fit import Fit
from .irls import irls
from .irls_records import Penalty
from .least_squares import indicator_lstsq
from .newton import multinomial_deviance, newton
from .perceptron import rosenblatt


def _family(problem: Any) -> Family:
    if isinstance(problem, Family):  # (the common call: checked first)
        return problem
    if isinstance(problem, GLMLikelihood):
        return problem.family
    raise TypeError(f"method='irls' solves a GLM: pass a glmclass family or a GLMLikelihood, "
                    f"got {type(problem).__name__}")


def _needs(method: str, **given: Any) -> None:
    missing = [k for k, v in given.items() if v is None]
    if missing:
        raise ValueError(f"method={method!r} needs {missing[0]}= (see solve's docstring)")


def solve(problem: Any, rows: RowBlocks | tuple | None, control: Control, *,
          start: np.ndarray | None = None, penalty: Penalty | None = None,
          intercept: int | None = None, free: np.ndarray | None = None,
          l1: np.ndarray | None = None, l2: np.ndarray | None = None,
          active: np.ndarray | None = None, first: tuple | None = None,
          smoothness: tuple[float, float] | None = None) -> Fit:
    """Run the solver ``control.method`` on ``problem`` over ``rows``.

    Parameters
    ----------
    problem : object
        What is minimised, by method:

        - ``"irls"``: a :class:`~glmclass.families.Family` or a
          :class:`~glmclass.likelihoods.glm.GLMLikelihood`;
        - ``"newton"``: an objective ``evaluate(coef, derivatives) -> (f, g, H)``
          (:data:`glmclass.solvers.newton.Objective`), or a
          :class:`~glmclass.likelihoods.multinomial.MultinomialLikelihood` (its deviance over
          ``rows``);
        - ``"gd"``, ``"sgd"``, ``"minibatch"``: a loss
          (:data:`glmclass.solvers.gradient.Loss`), a family / GLM likelihood (half its
          deviance) or a multinomial likelihood;
        - ``"cd"``: an oracle ``oracle(coef, active, hessian) -> (f, g, H)``
          (:data:`glmclass.solvers.coordinate_descent.Oracle`);
        - ``"firth"``: ignored (the logistic likelihood), may be None;
        - ``"perceptron"``: the class code whose target is +1;
        - ``"least_squares"``: the number of classes K (1-of-K targets of the codes).
    rows : RowBlocks, tuple or None
        The rows (None for "newton" on an objective and for "cd", whose callbacks read their
        own rows). ``"firth"`` also takes the arrays ``(X, y, weights, offset)`` of rows in
        memory (then the fit keeps the hat values).
    control : Control
        The settings; ``control.method`` picks the solver.
    start : ndarray, optional
        Starting coefficients ("irls", "firth"; required by "newton", "cd" and the gradient
        methods).
    penalty : Penalty, optional
        "irls": a Gaussian prior (penalised IRLS for the posterior mode).
    intercept : int, optional
        "irls", "firth": the index of a column of ones (the solver may centre the others).
    free : ndarray of bool, optional
        "firth": the coefficients to estimate (the others keep their ``start`` values).
    l1, l2, active, first
        "cd": the penalty weights per coordinate, the coordinates allowed to move at first,
        and an optional ``(f, g, H)`` at ``start`` (:func:`~glmclass.solvers.
        coordinate_descent.prox_newton`).
    smoothness : (float, float), optional
        Gradient methods: curvature bounds of the mean loss over all rows and over one row.

    Returns
    -------
    Fit

    Raises
    ------
    ValueError
        When an input the method needs is missing, naming it.
    TypeError
        When ``problem`` is not one the method solves.
    """
    method = control.method
    if method == "irls":
        return irls(rows, _family(problem), start, control, penalty, intercept)
    if method == "newton":
        _needs(method, start=start)
        if isinstance(problem, MultinomialLikelihood):
            problem = multinomial_deviance(rows, problem.K)
        return newton(_callable(problem, method), start, control)
    if method in GRADIENT_METHODS:
        _needs(method, start=start, smoothness=smoothness)
        return GD.minimise(_loss(problem), rows, start, control, smoothness)
    if method == "firth":
        if isinstance(rows, RowBlocks):
            return firth_logit_rows(rows, start, control, free, intercept)
        X, y, weights, offset = rows
        return firth_logit(X, y, weights, offset, start, control, free, intercept)
    if method == "cd":
        _needs(method, start=start, l1=l1, l2=l2, active=active)
        return CD.prox_newton(_callable(problem, method), start, l1, l2, active, control, first)
    if method == "perceptron":
        return rosenblatt(rows, int(problem), control)
    return indicator_lstsq(rows, int(problem))  # "least_squares": Control knows no other


def _callable(problem: Any, method: str) -> Callable:
    if not callable(problem):
        raise TypeError(f"method={method!r} minimises a callable objective, got "
                        f"{type(problem).__name__}")
    return problem


def _loss(problem: Any) -> Callable:
    if isinstance(problem, MultinomialLikelihood):
        return GD.multinomial_loss(problem.K)
    if isinstance(problem, (Family, GLMLikelihood)):
        return GD.glm_loss(_family(problem))
    return _callable(problem, "gradient")
