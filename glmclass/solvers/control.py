"""The one settings record of every solver (:class:`Control`), R's ``glm.control`` grown to
the gradient, coordinate-descent and perceptron settings.

A solver reads the fields it uses and ignores the others; :meth:`Control.for_method` gives a
method's own defaults (Firth's and coordinate descent's 100 iterations, the gradient methods'
epochs), so that a fit made through :func:`glmclass.solvers.solve.solve` takes the same steps
as before the records were merged.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import one_of

#: The solvers :func:`glmclass.solvers.solve.solve` knows, by ``Control.method``.
METHODS = ("irls", "newton", "firth", "gd", "sgd", "minibatch", "cd", "perceptron",
           "least_squares")
#: The gradient methods (:mod:`glmclass.solvers.gradient`).
GRADIENT_METHODS = ("gd", "sgd", "minibatch")
#: Each method's defaults where they differ from the fields' own.
METHOD_DEFAULTS: dict[str, dict[str, Any]] = {
    "firth": {"maxiter": 100},
    "cd": {"maxiter": 100},
    "gd": {"max_epochs": 5000},
    "sgd": {"max_epochs": 500},
    "minibatch": {"max_epochs": 500},
}
INFORMATION = ("expected", "observed")
DIRECTIONS = ("auto", "exact", "sampled")


def _positive_integer(value: Any, name: str, what: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        kind = "a positive" if least == 1 else "a non-negative"
        raise ValueError(f"{name} must be {kind} integer ({what}), got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Control:
    """Settings of a solver (every field by keyword).

    Attributes
    ----------
    method : {"irls", "newton", "firth", "gd", "sgd", "minibatch", "cd", "perceptron", \
"least_squares"}
        The solver :func:`glmclass.solvers.solve.solve` runs.
    maxiter : int
        Largest number of iterations (outer steps for "cd").
    tol : float
        Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol`` (R's rule); for "cd", the
        KKT conditions to ``tol`` on the scale of the data.
    maxhalf : int
        Largest number of step halvings in one iteration.
    hessian : {"expected", "observed"}
        IRLS: Fisher scoring, or Newton's method with the exact Hessian.
    information : {"expected", "observed"}
        The information matrix the caller wants at the estimates, for the standard errors:
        with ``"observed"`` and a non-canonical link, the large-N IRLS path makes its full
        passes with the observed information (:attr:`glmclass.solvers.fit.Fit.information`
        says which one a fit holds).
    direction : {"auto", "exact", "sampled"}
        Where the steps' Gram matrices (IRLS) or Hessians (Newton on an objective that can
        sample its Hessian) come from: ``"exact"`` a full float64 pass at every step,
        ``"sampled"`` Newton steps from the exact score with the Gram of a row sample and a
        full pass only to confirm convergence (:mod:`glmclass.solvers.sampled`), ``"auto"``
        sampling from :data:`~glmclass.solvers.sampled.SAMPLED_MIN_ROWS` rows on, on sources
        that allow it (``RowBlocks.sample_hessians``: not on Dask).
    progress : callable, optional
        ``progress(iteration, objective, step, halvings)`` after each accepted iteration
        (:class:`glmclass.progress.IterationLog` for ``fit(disp=True)``).
    max_sweeps : int
        "cd": most coordinate-descent sweeps per outer step.
    learning_rate : float or None
        Gradient methods: the step on the mean loss (None: the method's default);
        "perceptron": the step of an update.
    schedule : {"constant", "inverse_sqrt", "inverse"}
        Gradient methods: the step of epoch k is eta, eta / sqrt(1 + k) or eta / (1 + k).
    batch_size : int or None
        Gradient methods: rows per step (None until validated by
        :func:`glmclass.solvers.gradient.gradient_control`).
    max_epochs : int or None
        Gradient methods and "perceptron": most epochs.
    gtol : float
        Gradient methods: convergence when the mean gradient's largest entry is below it.
    seed : int, numpy.random.Generator or None
        Gradient methods: the seed of the row order; "perceptron": the Generator of the row
        order (None: rows in order).
    variance_reduction : bool
        Gradient methods: SVRG correction of the stochastic steps.
    shuffle : bool
        Stochastic gradient methods: visit the rows in a fresh random order each epoch, or in
        row order.
    history : {"epoch", "step"}
        Stochastic gradient methods: record the deviance after each epoch, or after each step.
    pocket : bool
        "perceptron": keep the best end-of-epoch weights.
    weight_scale : float or None
        "irls": the mean prior weight of the rows when the caller already has it (a Dask
        build gathers it in its facts pass); None: one reduction over the rows
        (:func:`~glmclass.solvers.irls_records.weight_scale`).

    Raises
    ------
    ValueError
        Naming the field: an unknown method, a ``maxiter`` that is not a positive integer, a
        ``tol`` that is not positive and finite, a negative ``maxhalf``, an unknown
        ``hessian``, ``information`` or ``direction``.
    """

    method: str = "irls"
    maxiter: int = 50
    tol: float = 1e-10
    maxhalf: int = 25
    hessian: str = "expected"
    information: str = "expected"
    direction: str = "auto"
    progress: Callable[[int, float, float, int], None] | None = None
    max_sweeps: int = 100_000
    learning_rate: float | None = None
    schedule: str = "constant"
    batch_size: int | None = None
    max_epochs: int | None = None
    gtol: float = 1e-6
    seed: Any = None
    variance_reduction: bool = True
    shuffle: bool = True
    history: str = "epoch"
    pocket: bool = False
    weight_scale: float | None = None

    def __init__(self, **settings: Any) -> None:
        # the settings given, the others read from the class defaults (one dict update, not
        # seventeen frozen assignments); validated at once
        unknown = settings.keys() - _NAMES
        if unknown:
            raise TypeError(f"{sorted(unknown)[0]!r} is not a solver setting; settings are "
                            f"{[f.name for f in dataclasses.fields(Control)]}")
        self.__dict__.update(settings)
        self._validate()

    def _validate(self) -> None:
        d = self.__dict__
        if self.method not in _METHOD_SET:
            raise ValueError(f"method must be {one_of(METHODS)}, got {self.method!r}")
        maxiter, tol, maxhalf = self.maxiter, self.tol, self.maxhalf
        if type(maxiter) is not int or maxiter < 1:  # the fast path: a plain int
            d["maxiter"] = _positive_integer(maxiter, "maxiter",
                                             "the largest number of iterations")
        if type(tol) is not float or not 0.0 < tol < math.inf:
            if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (
                    math.isfinite(tol) and tol > 0):
                raise ValueError(f"tol must be a positive, finite number (e.g. 1e-8), got "
                                 f"{tol!r}")
            d["tol"] = float(tol)
        if type(maxhalf) is not int or maxhalf < 0:
            d["maxhalf"] = _positive_integer(maxhalf, "maxhalf", "the most step halvings in "
                                             "one iteration", least=0)
        for name, choices in (("hessian", INFORMATION), ("information", INFORMATION),
                              ("direction", DIRECTIONS)):
            if getattr(self, name) not in choices:
                raise ValueError(f"{name} must be {one_of(choices)}, got "
                                 f"{getattr(self, name)!r}")

    @classmethod
    def for_method(cls, method: str = "irls", **settings: Any) -> Control:
        """The settings of ``method`` with its own defaults (:data:`METHOD_DEFAULTS`), then
        ``settings`` (keyword names of the fields).

        Raises
        ------
        ValueError
            For an unknown method or setting, naming it.
        TypeError
            For a setting that is no field of :class:`Control`.
        """
        if method not in _METHOD_SET:
            raise ValueError(f"method must be {one_of(METHODS)}, got {method!r}")
        return cls(method=method, **{**METHOD_DEFAULTS.get(method, {}), **settings})

    def replace(self, **changes: Any) -> Control:
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)


_NAMES = frozenset(f.name for f in dataclasses.fields(Control))
_METHOD_SET = frozenset(METHODS)
