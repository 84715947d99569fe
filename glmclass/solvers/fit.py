"""The one result record of every solver (:class:`Fit`): the fields every iterative fit has,
and each solver's extras as optional fields (None where a solver does not make them).

The solver keeps nothing of length N (Firth's in-memory hat values aside): the linear
predictor of a fit is ``blocks.linear_predictor(np.where(aliased, 0, coef))``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..numerics.linalg import spd_inverse


def submatrix(a: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    """The rows and columns ``keep`` of a square matrix (``a`` itself for None: all)."""
    return a if keep is None else a[np.ix_(keep, keep)]


@dataclass(frozen=True)
class Fit:
    """Result record of a solver (every field by keyword; ``coef`` is required).

    Attributes
    ----------
    coef : ndarray of shape (p,)
        Estimates; NaN for aliased columns (IRLS, gradient fits). For a regularisation path
        shape (n_alphas, m); for least squares (p, m), one column per right-hand side.
    n_iter : int or ndarray of int
        Iterations (IRLS, Newton, Firth, outer steps of "cd") or epochs (gradient methods,
        perceptron); per alpha along a path.
    converged : bool or ndarray of bool
        Per alpha along a path.
    history : tuple of float or ndarray
        The objective after each iteration (IRLS: deviance plus any penalty; Firth: ``-2 l*``;
        gradient methods: the deviance after each epoch); perceptron: the training points
        misclassified at the end of each epoch (ndarray of int).
    message : str
        Why the loop stopped, when it did not converge.
    objective : float or None
        The minimised objective at ``coef`` (Newton, "cd", the sampled Newton loop).
    deviance : float or None
        Deviance at ``coef`` without any penalty (IRLS, Firth, gradient GLM fits, the null
        fit; None from ``null_fit(lazy=True)`` when it is left for the results to compute).
    information : {"expected", "observed"}
        Which information ``gram`` is: the Fisher information (IRLS), or the observed one
        (Newton's method; the large-N path with ``Control(information="observed")``). For a
        canonical link the two are the same and this is ``"expected"``.
    gradient : ndarray or None
        Gradient of the objective at ``coef`` (Newton, "cd", gradient methods).
    hessian : ndarray or None
        Hessian of the objective at ``coef`` (Newton; "cd": its approximation on ``active``).
    gram : ndarray of shape (p, p) or None
        X'WX at ``coef`` with the weights of ``information``; rows/columns of aliased columns
        are zero (IRLS, Firth, gradient GLM fits).
    aliased : ndarray of bool, shape (p,), or None
    transform : ndarray of shape (p, p) or None
        ``T`` of the shifted design IRLS worked on (``gamma = T beta``), None unshifted.
    gram_shifted : ndarray of shape (p, p) or None
        The Gram of the shifted design, ``gram = T' gram_shifted T``: it keeps the digits that
        ``gram`` loses to large column means.
    loglik, logdet, penalized : float or None
        Firth: the log-likelihood, ``log|X'WX|`` and ``loglik + logdet / 2`` at ``coef``.
    cov : ndarray or None
        Firth: the inverse information from the triangular factor of the weighted design.
    hat : ndarray of shape (n_obs,) or None
        Firth in memory: the hat values at ``coef``.
    loss : float, ndarray or None
        "cd": the mean loss at ``coef`` (per alpha along a path); gradient methods: half the
        deviance.
    active : ndarray of int or None
        "cd": the coordinates whose Hessian was formed.
    n_sweeps : int or None
        "cd": coordinate-descent sweeps over all outer steps.
    grad_norms : tuple of float or None
        Gradient methods: the mean gradient's largest entry after each epoch.
    learning_rate : float or None
        Gradient methods: the (initial) step used.
    updates : ndarray of int or None
        Perceptron: weight updates made in each epoch.
    best_epoch : int or None
        Perceptron: the epoch whose weights ``coef`` holds (0 for the zero start).
    state : object or None
        The sampled Newton loop: the full pass's state at ``coef``
        (:class:`glmclass.solvers.sampled.State`).
    passes : dict or None
        The sampled Newton loop: passes made, by kind.
    rank : int or None
        Least squares: the number of columns kept.
    intercept : float or None
        The null fit: the fitted constant (0 when the model has none: then eta = offset).
    history_unit : str or None
        Gradient methods: what one entry of ``history`` is ("iteration", "epoch" or "step").
    plain : bool or None
        Gradient methods: whether the stochastic steps were plain SGD (no variance reduction).
    """

    coef: np.ndarray | None
    n_iter: Any = 0
    converged: Any = True
    history: Any = ()
    message: str = ""
    objective: float | None = None
    deviance: float | None = None
    information: str = "expected"
    gradient: np.ndarray | None = None
    hessian: np.ndarray | None = None
    gram: np.ndarray | None = None
    aliased: np.ndarray | None = None
    transform: np.ndarray | None = None
    gram_shifted: np.ndarray | None = None
    loglik: float | None = None
    logdet: float | None = None
    penalized: float | None = None
    cov: np.ndarray | None = None
    hat: np.ndarray | None = None
    loss: Any = None
    active: np.ndarray | None = None
    n_sweeps: int | None = None
    grad_norms: tuple | None = None
    learning_rate: float | None = None
    updates: np.ndarray | None = None
    best_epoch: int | None = None
    state: Any = None
    passes: dict | None = None
    rank: int | None = None
    intercept: float | None = None
    history_unit: str | None = None
    plain: bool | None = None

    def __init__(self, **fields: Any) -> None:
        # the fields a solver gives, the others read from the class defaults: a solver's
        # record costs one dict update, not thirty frozen assignments (a fit at n = 50 takes
        # ~0.3 ms, so the ~5 us of the generated __init__ would show)
        if not fields.keys() <= _NAMES or "coef" not in fields:
            unknown = sorted(fields.keys() - _NAMES) or ["coef (missing)"]
            raise TypeError(f"Fit got {unknown[0]!r}; its fields are {sorted(_NAMES)}")
        self.__dict__.update(fields)

    @property
    def shift(self) -> np.ndarray | None:
        """The column shift of the design the solver worked on, ``X - 1 shift'`` (``transform``
        is ``I + e_i shift'``, ``i`` the column of ones), None for X itself."""
        t = self.transform
        if t is None:
            return None
        p = t.shape[0]
        row = np.flatnonzero(np.any(t != np.eye(p), axis=1))
        return t[row[0]] - np.eye(p)[row[0]] if row.size else None

    def gram_inverse(self, keep: np.ndarray) -> np.ndarray:
        """``inv(gram[keep, keep])``, through the shifted Gram when there is one (accurate
        where ``gram`` is nearly singular only because of large column means).

        Raises
        ------
        NotPositiveDefinite
        """
        sel = None if keep.all() else keep  # every column kept: no np.ix_ copy
        if self.transform is None:
            return spd_inverse(submatrix(self.gram, sel))
        tinv = np.linalg.inv(submatrix(self.transform, sel))  # I - e_i s': exact
        inner = spd_inverse(submatrix(self.gram_shifted, sel))
        with np.errstate(over="ignore", invalid="ignore"):  # near-singular: inf entries
            out = tinv @ inner @ tinv.T
            return out / 2.0 + out.T / 2.0


_NAMES = frozenset(f.name for f in dataclasses.fields(Fit))
