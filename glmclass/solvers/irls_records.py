"""The records of the IRLS solver (:mod:`glmclass.solvers.irls`): its settings (R's
``glm.control``), the Gaussian prior of a penalised fit, the coordinates it works in, and its
result; the bottom of the IRLS stack (records, then :mod:`~glmclass.solvers.irls_qr` and
:mod:`~glmclass.solvers.irls_steps`, the exact loop :mod:`~glmclass.solvers.irls_exact`, the
large-N path :mod:`~glmclass.solvers.irls_sampled`, the front door
:func:`~glmclass.solvers.irls.irls`), importing none of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..numerics.linalg import spd_inverse
from ..rows.gram import shift_transform


def submatrix(a: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    """The rows and columns ``keep`` of a square matrix (``a`` itself for None: all)."""
    return a if keep is None else a[np.ix_(keep, keep)]


@dataclass(frozen=True)
class Control:
    """Settings of the IRLS loop.

    Attributes
    ----------
    maxiter : int
        Largest number of iterations.
    tol : float
        Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol`` (R's rule).
    maxhalf : int
        Largest number of step halvings in one iteration.
    hessian : {"expected", "observed"}
        Fisher scoring (IRLS) or Newton's method with the exact Hessian.
    progress : callable, optional
        ``progress(iteration, objective, step, halvings)`` after each accepted iteration
        (:class:`glmclass.progress.IterationLog` for ``fit(disp=True)``); ``step`` is the
        largest change of a coefficient.
    information : {"expected", "observed"}
        The information matrix the caller wants at the estimates, for the standard errors:
        with ``"observed"`` and a non-canonical link, the large-N path makes its full passes
        with the observed information (Newton's steps there), so that the Gram it returns
        is that information and the standard errors need no further pass
        (:attr:`IRLSFit.information` says which one a fit holds).
    direction : {"auto", "exact", "sampled"}
        Where the steps' Gram matrices come from after the first step. ``"exact"``: every
        iteration makes a full float64 X'WX (R's IRLS). ``"sampled"``: Newton steps from
        the exact score with the Gram of a row sample (or of an earlier point) and a full
        float64 Gram only to confirm convergence (:mod:`glmclass.solvers.sampled`): the same
        estimates (to ~``tol`` standard errors) for a fraction of the cost at large N;
        without a ``start`` and from 1e6 rows or so it starts from the fit of a systematic
        sample of the rows (:func:`~glmclass.solvers.irls_sampled.sampled_start`). ``"auto"``
        samples from
        :data:`~glmclass.solvers.sampled.SAMPLED_MIN_ROWS` rows on, on sources that allow it
        (``RowBlocks.sample_hessians``: not on Dask).

    The size of a block of rows is the row source's business, not the solver's.
    """

    maxiter: int = 50
    tol: float = 1e-10
    maxhalf: int = 25
    hessian: str = "expected"
    progress: Callable[[int, float, float, int], None] | None = None
    direction: str = "auto"
    information: str = "expected"

@dataclass(frozen=True)
class Penalty:
    """A Gaussian prior N(mean, precision^-1) on the coefficients: the objective becomes
    ``deviance + (b - mean)' precision (b - mean)`` (minus twice the log posterior)."""

    precision: np.ndarray
    mean: np.ndarray

    def value(self, coef: np.ndarray) -> float:
        d = coef - self.mean
        return float(d @ self.precision @ d)

@dataclass(frozen=True)
class IRLSFit:
    """Result record of :func:`irls`.

    Attributes
    ----------
    coef : ndarray of shape (p,)
        Estimates; NaN for aliased columns. The solver keeps nothing of length N: the linear
        predictor is ``blocks.linear_predictor(np.where(aliased, 0, coef))``.
    deviance : float
        Deviance at ``coef`` (without any penalty).
    gram : ndarray of shape (p, p)
        X'WX at ``coef`` with the weights of ``information``; rows/columns of aliased columns
        are zero.
    aliased : ndarray of bool, shape (p,)
    n_iter : int
    converged : bool
    history : tuple of float
        Objective after each iteration.
    message : str
        Why the loop stopped, when it did not converge.
    transform : ndarray of shape (p, p) or None
        ``T`` of the shifted design the solver worked on (``gamma = T beta``), None unshifted.
    gram_shifted : ndarray of shape (p, p) or None
        The Gram of the shifted design, ``gram = T' gram_shifted T``: it keeps the digits that
        ``gram`` loses to large column means.
    information : {"expected", "observed"}
        Which information ``gram`` is: the Fisher information (IRLS), or the observed one
        (Newton's method; the large-N path with ``Control(information="observed")``). For a
        canonical link the two are the same and this is ``"expected"``.
    """

    coef: np.ndarray
    deviance: float
    gram: np.ndarray
    aliased: np.ndarray
    n_iter: int
    converged: bool
    history: tuple
    message: str = ""
    transform: np.ndarray | None = None
    gram_shifted: np.ndarray | None = None
    information: str = "expected"

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
        out = tinv @ inner @ tinv.T
        return out / 2.0 + out.T / 2.0


@dataclass(frozen=True)
class Frame:
    """The coordinates the solver works in: ``gamma = T beta`` on ``Xc = X - 1 s'`` (``shift``
    None: X itself), and the prior of a penalised fit, given in beta coordinates."""

    shift: np.ndarray | None
    intercept: int | None
    penalty: Penalty | None

    @property
    def t(self) -> np.ndarray | None:
        return None if self.shift is None else shift_transform(self.shift, self.intercept)

    def to_gamma(self, beta: np.ndarray) -> np.ndarray:
        return beta if self.shift is None else beta + np.eye(beta.shape[0])[self.intercept] * (
            self.shift @ beta)

    def to_beta(self, gamma: np.ndarray) -> np.ndarray:
        if self.shift is None:
            return gamma
        beta = gamma.copy()
        beta[self.intercept] -= self.shift @ gamma
        return beta

    def gram_to_beta(self, g: np.ndarray) -> np.ndarray:
        t = self.t
        return g if t is None else t.T @ g @ t

    def penalty_gamma(self) -> Penalty | None:
        """The prior in gamma coordinates: precision ``T^-T P T^-1``, mean ``T m``."""
        pen = self.penalty
        if pen is None or self.shift is None:
            return pen
        tinv = np.eye(self.shift.shape[0])
        tinv[self.intercept] -= self.shift
        return Penalty(tinv.T @ pen.precision @ tinv, self.to_gamma(pen.mean))
