"""Lasso, ridge and elastic-net fits of GLM-type models (ESL §3.4, §4.4.4), and their paths.

``Logit.fit_regularized``, ``Probit.fit_regularized`` (every :class:`~glmclass.GLM`) and
``MNLogit.fit_regularized`` delegate here, as do the ``regularization_path`` methods. The
objective is glmnet's,

    deviance / (2 n) + alpha * ((1 - L1_wt) / 2 * sum_j v_j b_j^2 + L1_wt * sum_j v_j |b_j|),

with n the sum of the prior weights (for a binomial model ``deviance / (2 n) = -llf / n`` plus
a constant), the intercept not penalised and v the penalty factors; with ``standardize`` the
penalty applies to ``s_j b_j``, s_j the column's weighted standard deviation (glmnet's
``standardize = TRUE``: the fit is on the standardised scale, the coefficients reported on the
original one). The numerics are in :mod:`glmclass.solvers.coordinate_descent`.

Every read of the rows is a reduce or a map over the model's row source
(:class:`~glmclass.rows.blocks.RowBlocks`): the moments behind the centring and the scales,
the columns' ranges, and per proximal Newton step X'WX of the active columns, the gradient and
the deviance (the coordinate descent itself sweeps the p x p matrix: glmnet's covariance
updates). So the same code fits rows in memory and rows in Dask partitions, where only p x p
pieces travel; the two differ only in the order of their sums.

References
----------
Friedman, J., Hastie, T. and Tibshirani, R. (2010). Regularization paths for generalized
linear models via coordinate descent. *Journal of Statistical Software* 33(1).
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*,
§3.4, §4.4.4, §7.10.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceWarning
from ..likelihoods import MultinomialLikelihood, likelihood_of
from ..results.regularized import check_alpha
from ..rows.blocks import Block, RowBlocks
from ..solvers import coordinate_descent as CD
from ..solvers import solve as SV
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..solvers.newton import multinomial_deviance
from .base import check_start, fit_control, per_column, real_number

# --- argument checks ----------------------------------------------------------------------------

def check_l1_wt(L1_wt) -> float:
    """The lasso share of the penalty: a number in [0, 1]."""
    w = real_number(L1_wt, "L1_wt")
    if not (0.0 <= w <= 1.0):
        raise ValueError(f"L1_wt must be in [0, 1] (1 the lasso, 0 ridge regression, between "
                         f"them the elastic net), got {L1_wt!r}")
    return w


def check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_seed(value, name: str = "seed"):
    """A seed for ``numpy.random.default_rng``: None, a non-negative integer or a Generator."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or value < 0:
        raise ValueError(f"{name} must be None, a non-negative integer or a "
                         f"numpy.random.Generator, got {value!r}")
    return int(value)


def penalty_factors(penalty_factor, names: list[str], intercept: int | None) -> np.ndarray:
    """Per-column penalty factors, rescaled to sum to the number of penalisable columns (as
    glmnet does); the intercept's is 0 whatever is given.

    Raises
    ------
    ValueError
        Negative or non-finite factors (naming the column), or all factors 0.
    """
    p = len(names)
    if penalty_factor is None:
        v = np.ones(p)
    else:
        v = per_column(penalty_factor, names, 1.0, "penalty_factor")
        bad = ~np.isfinite(v) | (v < 0)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(f"penalty_factor of {names[j]!r} is {v[j]}: factors must be finite "
                             "and >= 0 (0 leaves a column unpenalised)")
    if intercept is not None:
        v[intercept] = 0.0
    m = p - (intercept is not None)
    if m == 0:
        raise ValueError("the design has no column to penalise besides the intercept")
    if not v.sum() > 0:
        raise ValueError("every penalty_factor is 0: nothing would be penalised; use fit() for "
                         "the maximum-likelihood estimate")
    return v * (m / v.sum())


# --- the problem on a set of rows ---------------------------------------------------------------

@dataclass(frozen=True)
class Rows:
    """A GLM-type problem on some rows, in the coordinates the solver works in.

    Attributes
    ----------
    oracle : callable
        The mean loss, its gradient and Hessian (:data:`~glmclass.solvers.coordinate_descent.
        Oracle`).
    shift : ndarray of shape (p,) or None
        The column means subtracted from the design (with an intercept): coordinates
        ``gamma = T b`` with ``gamma_0 = b_0 + shift' b``, the others equal.
    scale : ndarray of shape (p,)
        Columns' standard deviations with ``standardize`` (1 otherwise).
    intercept : int or None
    levels : int
        Number of coefficient vectors (K - 1 for MNLogit, 1 else), stacked level-major.
    start : ndarray of shape (levels * p,)
        The solver's starting point: intercepts at the null fit's, the rest 0.
    total : float
        n: the sum of the weights of the rows (the loss is a mean over them).
    """

    oracle: CD.Oracle
    shift: np.ndarray | None
    scale: np.ndarray
    intercept: int | None
    levels: int
    start: np.ndarray
    total: float

    def unit_weights(self, pf: np.ndarray, L1_wt: float) -> tuple[np.ndarray, np.ndarray]:
        """``(l1, l2)`` per coordinate at alpha = 1."""
        l1 = np.tile(L1_wt * pf * self.scale, self.levels)
        l2 = np.tile((1.0 - L1_wt) * pf * self.scale ** 2, self.levels)
        return l1, l2

    def to_original(self, gamma: np.ndarray) -> np.ndarray:
        """Coefficients on the design as given, from the solver's."""
        if self.shift is None:
            return gamma.copy()
        g = gamma.reshape(self.levels, -1).copy()
        g[:, self.intercept] -= g @ self.shift
        return g.ravel()

    def to_solver(self, coef: np.ndarray) -> np.ndarray:
        if self.shift is None:
            return coef.copy()
        g = coef.reshape(self.levels, -1).copy()
        g[:, self.intercept] += g @ self.shift
        return g.ravel()


def column_moments(blocks: RowBlocks) -> tuple[float, np.ndarray, np.ndarray, float]:
    """Sum of weights, weighted column sums, weighted sums of squares and the weighted sum of
    the response, over row blocks (one pass; also the column scales that
    :mod:`glmclass.models.bayes` compares)."""
    p = blocks.n_cols

    def one(b):
        return (float(b.weights.sum()), b.weights @ b.X, b.weights @ (b.X * b.X),
                float(b.weights @ b.y))

    return blocks.reduce(one, (0.0, np.zeros(p), np.zeros(p), 0.0))


def _scales(blocks: RowBlocks, intercept: int | None,
            standardize: bool) -> tuple[float, np.ndarray | None, np.ndarray, float]:
    """Total weight, the centring shift (with an intercept), the standardising scales and the
    weighted mean of the response."""
    total, sums, squares, wy = column_moments(blocks)
    p = blocks.n_cols
    shift = None
    if intercept is not None:
        shift = sums / total
        shift[intercept] = 0.0
    scale = np.ones(p)
    if standardize:
        # glmnet's standardize = TRUE: weighted population SDs (centred with an intercept)
        mean = sums / total if intercept is not None else np.zeros(p)
        var = np.maximum(squares / total - mean * mean, 0.0)
        # the subtraction loses the digits of columns with large means: redo those centred
        big = mean * mean > 1e-3 * var
        if big.any():
            idx = np.flatnonzero(big)

            def centred(b):
                d = b.X[:, idx] - mean[idx]
                return b.weights @ (d * d)

            var[idx] = blocks.reduce(centred, np.zeros(idx.size)) / total
        scale = np.sqrt(var)
        if intercept is not None:
            scale[intercept] = 1.0
        # a column constant on these rows (a rare indicator within a training fold; on all
        # the rows check_no_constant has refused it) has no curvature once centred: its
        # coefficient stays at 0 whatever its scale, as in glmnet
        scale[scale == 0] = 1.0
    return total, shift, scale, wy / total


def is_multinomial(model) -> bool:
    """Whether the model's likelihood is the multinomial logit's (K - 1 coefficient vectors)
    rather than a GLM's."""
    return isinstance(likelihood_of(model), MultinomialLikelihood)


def model_blocks(model) -> RowBlocks:
    """The model's rows, wherever they live: design, response (a GLM's on the family's
    scale, an MNLogit's level codes), prior or frequency weights and offset."""
    if is_multinomial(model):
        return model.blocks()
    return model.problem.blocks()


def _positive(b: Block) -> np.ndarray:
    return b.weights > 0


def _not_positive(b: Block) -> int:
    return int(np.count_nonzero(~(b.weights > 0)))


def fit_rows(blocks: RowBlocks, mask) -> RowBlocks:
    """The rows of ``blocks`` with positive weight (those a fit reads, as R's ``glm.fit``)
    where ``mask`` (None: all; else a boolean ndarray of shape (n_rows,)) holds.

    One pass counts the rows of weight 0; only when there are some is the mask of positive
    weights made, as a map over the rows (an ndarray in memory, a lazy array on Dask
    partitions), so no rows travel to make it and a source without such rows keeps a plain
    row mask (or none).
    """
    if blocks.reduce(_not_positive, 0) == 0:
        return blocks if mask is None else blocks.take_rows(mask)
    pos = blocks.map(_positive)
    if mask is not None:
        pos = pos & mask
    return blocks.take_rows(pos)


def glm_rows(model, mask: np.ndarray | None, standardize: bool) -> Rows:
    """The penalised problem of a GLM-type model (GLM, Logit, Probit) on the rows ``mask``
    (None: all) that have positive prior weight."""
    blocks = fit_rows(model.problem.blocks(), mask)
    icpt = model.data.intercept_index
    total, shift, scale, ybar = _scales(blocks, icpt, standardize)
    start = np.zeros(blocks.n_cols)
    if icpt is not None:
        c = model.family.link.link(np.array([ybar]))[0]
        # with an offset the null intercept is not the link of the mean; any start will do
        start[icpt] = c if np.isfinite(c) else 0.0
    oracle = CD.glm_oracle(blocks, model.family, total, shift)
    return Rows(oracle, shift, scale, icpt, 1, start, total)


def level_totals(blocks: RowBlocks, K: int) -> np.ndarray:
    """Frequency weight of each level code 0 .. K - 1 over the rows (one pass)."""
    return blocks.reduce(lambda b: np.bincount(b.y, weights=b.weights, minlength=K),
                         np.zeros(K))


def mnlogit_rows(model, mask: np.ndarray | None, standardize: bool) -> Rows:
    """The penalised problem of an MNLogit on the rows ``mask`` (None: all) with positive
    frequency weight, in the reference-level parametrisation (coefficients level-major).

    The columns after the intercept are centred block by block
    (:class:`~glmclass.solvers.coordinate_descent.ShiftedBlocks`): the multinomial pass takes
    no shift, and no centred copy of the design is made."""
    plain = fit_rows(model.blocks(), mask)
    p = plain.n_cols
    icpt = model.data.intercept_index
    total, shift, scale, _ = _scales(plain, icpt, standardize)
    blocks = plain if shift is None else CD.ShiftedBlocks(plain, shift)
    k1 = model.K - 1
    dev = multinomial_deviance(blocks, model.K)
    scale2 = 1.0 / (2.0 * total)

    def oracle(coef: np.ndarray, active: np.ndarray, hessian: bool = True):
        d, g, h = dev(coef, True)  # the multinomial pass gives the Hessian with the gradient
        if not np.isfinite(d):
            return np.inf, np.zeros_like(coef), np.zeros((active.size, active.size))
        return d * scale2, g * scale2, h[np.ix_(active, active)] * scale2

    start = np.zeros((k1, p))
    if icpt is not None:
        t = level_totals(plain, model.K)
        with np.errstate(divide="ignore"):
            start[:, icpt] = np.log(t[1:] / t[0])
        start[~np.isfinite(start)] = 0.0
    return Rows(oracle, shift, scale, icpt, k1, start.ravel(), total)


def _range(b: Block) -> tuple[np.ndarray, np.ndarray]:
    return b.X.min(axis=0), b.X.max(axis=0)


def _widen(a: tuple, b: tuple) -> tuple[np.ndarray, np.ndarray]:
    return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])


def check_no_constant(model, intercept: int | None) -> None:
    """A constant column besides the intercept (over the rows of positive weight) is aliased
    with it: say which, and refuse (one pass for each column's range)."""
    if intercept is None:
        return
    rows = fit_rows(model_blocks(model), None)
    p = rows.n_cols
    lo, hi = rows.reduce(_range, (np.full(p, np.inf), np.full(p, -np.inf)), _widen)
    const = lo == hi
    const[intercept] = False
    if const.any():
        name = model.exog_names[int(np.flatnonzero(const)[0])]
        raise ValueError(f"column {name!r} is constant, like the intercept: its coefficient is "
                         "not identified (it would stay at 0 on every penalty); drop it")


# --- one fit --------------------------------------------------------------------------------------

def solve(rows: Rows, alpha: float, L1_wt: float, pf: np.ndarray, start: np.ndarray | None,
          control: Control) -> Fit:
    """The penalised fit at one alpha, from ``start`` (coefficients on the original design)."""
    l1u, l2u = rows.unit_weights(pf, L1_wt)
    s = rows.start if start is None else rows.to_solver(start)
    return SV.solve(rows.oracle, None, control, start=s, l1=alpha * l1u, l2=alpha * l2u,
                    active=np.arange(s.size))


def cd_control(maxiter, tol) -> Control:
    return fit_control(maxiter, tol, "cd")


def fit_regularized(model, alpha, L1_wt, penalty_factor, standardize, maxiter, tol,
                    start_params, results_cls):
    """Validate, solve and build the results (the body of every ``fit_regularized``)."""
    alpha, L1_wt = check_alpha(alpha), check_l1_wt(L1_wt)
    standardize = check_bool(standardize, "standardize")
    control = cd_control(maxiter, tol)
    icpt = model.data.intercept_index
    pf = penalty_factors(penalty_factor, model.exog_names, icpt)
    check_no_constant(model, icpt)
    mn = is_multinomial(model)
    start = None if mn else check_start(start_params, model.exog_names)
    rows = (mnlogit_rows if mn else glm_rows)(model, None, standardize)
    fit = solve(rows, alpha, L1_wt, pf, start, control)
    if not fit.converged:
        warnings.warn(f"the penalised fit did not converge: {fit.message}; raise maxiter or "
                      "standardize the columns", ConvergenceWarning, stacklevel=4)  # user, wrapper
    coef = rows.to_original(fit.coef)
    return results_cls(model, coef, fit, null_fit(model), alpha=alpha, L1_wt=L1_wt,
                       penalty_factor=pf, standardize=standardize, scale=rows.scale,
                       total=rows.total)


def null_fit(model):
    """The intercept-only fit: a :class:`~glmclass.solvers.fit.Fit` for GLM-type models,
    the null deviance for MNLogit (:func:`multinomial_null_deviance`)."""
    if is_multinomial(model):
        return multinomial_null_deviance(model, Control(method="newton"))
    return model.problem.null_fit(Control())


def _offset_terms(b: Block) -> float:
    return float(np.count_nonzero(b.offset))


def multinomial_null_deviance(model, control: Control) -> float:
    """The deviance of an MNLogit's intercept-only fit (offset kept; without an intercept, at
    eta = offset), as ``MNLogit.fit`` reports it in ``llnull``.

    With an intercept and no offset the fit matches the level shares, ``-2 sum_k t_k
    log(t_k / T)`` (t the levels' total weights, one pass); else Newton's method on the
    intercept-only design from the log ratios of the totals."""
    K = model.K
    rows = model.blocks()
    if model.data.intercept_index is None:
        none = np.zeros(rows.n_cols, dtype=bool)
        return float(multinomial_deviance(model.blocks(none), K)(np.zeros(0), False)[0])
    t, offsets = rows.reduce(lambda b: (np.bincount(b.y, weights=b.weights, minlength=K),
                                        _offset_terms(b)), (np.zeros(K), 0.0))
    if not offsets:
        return float(-2.0 * np.sum(t * np.log(t / t.sum())))
    start = np.log(t[1:] / t[0])
    return float(SV.solve(multinomial_deviance(rows.intercept_only(), K), None, control,
                          start=start).objective)


def check_int(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)
