"""Rosenblatt's perceptron as a glmclass model: two classes, or several through one-vs-rest or
one-vs-one, with the ambiguous regions of those schemes reported, not hidden.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.2 (multiclass
discriminants and their ambiguous regions), §4.1.7 (the perceptron).
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*,
§4.5.1.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..data.model_data import ModelData, check_finite
from ..data.response import multiclass_response
from ..errors import ConvergenceWarning, warn_user
from ..results.perceptron import PerceptronResults
from ..rows.blocks import RowBlocks
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..solvers.solve import solve
from .base import Model, check_option
from .class_setup import CodedRows


def _check_rate(value) -> float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not ok or not (np.isfinite(value) and value > 0):
        raise ValueError(f"learning_rate must be a positive, finite number (e.g. 1.0), got "
                         f"{value!r}")
    return float(value)


def _check_epochs(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"max_epochs must be a positive integer, got {value!r}")
    return int(value)


def _check_seed(value):
    if value is None or isinstance(value, np.random.Generator):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"seed must be None, a non-negative integer or a "
                         f"numpy.random.Generator, got {value!r}")
    return int(value)


class Perceptron(CodedRows, Model):
    """Rosenblatt's perceptron: a separating hyperplane found by stochastic gradient descent
    on the perceptron criterion.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Class labels. Two classes (the second level is the positive class, t = +1); more need
        ``multiclass``.
    exog : array-like of shape (n_obs, p)
        Design matrix; include a constant column for a bias (a formula adds one). Without it
        the hyperplane passes through the origin.
    learning_rate : float, default 1.0
        Step size eta > 0. From the zero start it only scales the weights.
    max_epochs : int, default 1000
        Passes over the data before giving up (with a ConvergenceWarning).
    shuffle : bool, default True
        Visit the points in a fresh random order each epoch (else in row order).
    seed : int, numpy.random.Generator or None
        Seed of the shuffling; an int makes every fit identical.
    pocket : bool, default False
        Keep the end-of-epoch weights with the fewest training errors (Gallant's pocket
        algorithm): on data that are not separable the last weights are arbitrary, the
        pocket's are the best seen.
    multiclass : {None, "ovr", "ovo"}
        For more than two classes: K one-vs-rest perceptrons or K(K-1)/2 one-vs-one ones.
    missing : {"drop", "raise"}

    Notes
    -----
    On linearly separable data the algorithm stops after finitely many updates with zero
    training errors (the perceptron convergence theorem); on other data it never settles,
    and the weights it stops with depend on the order of the points. Neither multiclass scheme
    is a proper K-class discriminant: one-vs-rest leaves points claimed by no class or by
    several, one-vs-one points with tied votes (PRML Fig. 4.2). The results flag these
    ambiguous points and say how ``predict`` resolves them.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.1.7.
    Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical
    Learning*, §4.5.1.
    """

    def __init__(self, endog, exog, learning_rate: float = 1.0, max_epochs: int = 1000,
                 shuffle: bool = True, seed=None, pocket: bool = False,
                 multiclass: str | None = None, missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, learning_rate=learning_rate,
                         max_epochs=max_epochs, shuffle=shuffle, seed=seed, pocket=pocket,
                         multiclass=multiclass)

    def _setup(self, data: ModelData, learning_rate: float = 1.0, max_epochs: int = 1000,
               shuffle: bool = True, seed=None, pocket: bool = False,
               multiclass: str | None = None) -> None:
        if data.in_memory:
            check_finite(data)
        self.learning_rate = _check_rate(learning_rate)
        self.max_epochs = _check_epochs(max_epochs)
        self.shuffle = bool(check_option("shuffle", shuffle, (True, False)))
        self.seed = _check_seed(seed)
        self.pocket = bool(check_option("pocket", pocket, (True, False)))
        self.multiclass = check_option("multiclass", multiclass, (None, "ovr", "ovo"))
        name = data.endog_name
        if not data.in_memory:  # rows not in memory (e.g. Dask partitions)
            from .class_parts import multiclass_rows

            rows = multiclass_rows(data)
            codes, levels, self._rows_source = rows.codes, rows.levels, rows.source
        else:
            codes, levels = multiclass_response(data.endog, name)
        if len(levels) > 2 and multiclass is None:
            raise ValueError(
                f"endog: the perceptron separates two classes, but the response {name!r} has "
                f"{len(levels)} levels ({', '.join(map(repr, levels[:5]))}"
                f"{', ...' if len(levels) > 5 else ''}); pass multiclass='ovr' (one-vs-rest) "
                "or 'ovo' (one-vs-one)")
        self.endog = codes
        self.levels = list(levels)

    def _tasks(self) -> list[tuple[str, RowBlocks, int]]:
        """The binary problems: (name, rows used, the code of the positive class)."""
        lv, rows = self.levels, self.row_source()
        if len(lv) == 2:
            return [(f"{lv[1]} vs {lv[0]}", rows, 1)]
        if self.multiclass == "ovr":
            return [(str(lv[k]), rows, k) for k in range(len(lv))]
        out = []
        for i in range(len(lv)):
            for j in range(i + 1, len(lv)):
                pair = rows.take_rows(rows.map(lambda b, i=i, j=j: (b.y == i) | (b.y == j)))
                out.append((f"{lv[j]} vs {lv[i]}", pair, j))
        return out

    def fit(self) -> PerceptronResults:
        """Run the perceptron (one per binary problem) with the model's settings.

        Returns
        -------
        PerceptronResults

        Warns
        -----
        ConvergenceWarning
            When some perceptron still misclassifies training points after ``max_epochs``
            (the data are not linearly separable, or need more epochs).
        """
        rng = np.random.default_rng(self.seed) if self.shuffle else None
        control = Control.for_method("perceptron", learning_rate=self.learning_rate,
                                     max_epochs=self.max_epochs, seed=rng, pocket=self.pocket)
        fits: dict[str, Fit] = {}
        for name, rows, positive in self._tasks():
            fits[name] = solve(positive, rows, control)
        bad = [k for k, f in fits.items() if not f.converged]
        stopped = [f.message for f in fits.values() if f.message]
        if stopped:  # the solver stopped early and says why (weights that overflowed)
            warn_user(f"the perceptron did not converge: {stopped[0]}", ConvergenceWarning)
        elif bad:
            which = "" if len(fits) == 1 else f" ({', '.join(bad)})"
            errs = ", ".join(str(int(fits[k].history.min())) for k in bad)
            kept = "the pocket weights are kept" if self.pocket else \
                "pass pocket=True to keep the best weights"
            warn_user(
                f"the perceptron{which} did not converge in {self.max_epochs} epochs: fewest "
                f"training errors seen {errs}; the data may not be linearly separable ({kept}, "
                "or raise max_epochs)", ConvergenceWarning)
        return PerceptronResults(self, fits)

    def __repr__(self) -> str:
        return f"<Perceptron: {len(self.levels)} classes, nobs={self.data.nrows}>"
