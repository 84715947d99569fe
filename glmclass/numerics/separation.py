"""Exact detection of complete and quasi-complete separation by linear programming.

The maximum-likelihood estimate of a binomial-response GLM (any link whose inverse maps onto
(0, 1)) fails to exist exactly when there is a direction $b \\neq 0$ in coefficient space with

.. math:: s_i x_i^\\top b \\ge 0 \\text{ for every observation with } y_i \\in \\{0, 1\\},
          \\quad x_i^\\top b = 0 \\text{ for every } 0 < y_i < 1,

and $s_i x_i^\\top b > 0$ for at least one $i$, where $s_i = 2 y_i - 1$ (Albert & Anderson 1984).
Moving the coefficients along $b$ then increases the likelihood for ever. Konis (2007, ch. 4)
turns this into one linear program, the "primal, find" formulation of R's ``detectseparation``
(``separator``, ported from safeBinaryRegression):

.. math:: \\max_b \\sum_i s_i x_i^\\top b \\quad \\text{s.t.} \\quad s_i x_i^\\top b \\ge 0,
          \\quad -1 \\le b_j \\le 1.

The optimum is 0 (at $b = 0$) when the MLE exists and positive otherwise; the columns with
$b_j \\neq 0$ at the optimum are the ones whose estimates diverge, to $\\operatorname{sign}(b_j)
\\infty$, exactly as ``detectseparation`` reports them.

Before the program is solved, the columns and rows of the design are scaled to unit max-norm and
duplicate rows are collapsed: the feasible cone does not change under positive scalings (the
directions' signs are scale-free), and the simplex then works on numbers of order one, so designs
whose columns span 1e-8 to 1e8 are handled as reliably as standardised ones.

References
----------
Albert, A. and Anderson, J. A. (1984). On the existence of maximum likelihood estimates in
logistic regression models. *Biometrika* 71, 1-10.
Konis, K. (2007). *Linear programming algorithms for detecting separated data in binary logistic
regression models*. DPhil thesis, University of Oxford.
Kosmidis, I. and Schumacher, D. (2021). detectseparation: Detect and check for separation and
infinite maximum likelihood estimates. R package.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.optimize import linprog

__all__ = ["Separation", "SeparationPolicy", "detect_separation", "exploding"]

#: Components of the (box-normalised) LP direction below this are zeros, as detectseparation's
#: default ``tolerance``. The optimal direction always has max |b_j| = 1 (the objective is
#: linear and the cone is scale-free) and HiGHS returns vertices, so genuine components are far
#: above this and solver noise far below.
_DIRECTION_TOL = 1e-4


@dataclass(frozen=True)
class Separation:
    """Outcome of a separation check: the one record every model reports.

    Attributes
    ----------
    separated : bool
        True when the maximum-likelihood estimate does not exist (complete or quasi-complete
        separation), or, for ``kind="apparent"``, when the fit shows its symptoms.
    kind : str
        ``"none"``, ``"complete"`` (some direction classifies every observation strictly
        correctly), ``"quasi-complete"`` (only with ties on the separating hyperplane) or
        ``"apparent"`` (the problem was too large for the exact test; estimates or standard
        errors explode on their columns' scale).
    columns : tuple of int
        Indices of the design columns with an infinite estimate (for any level).
    directions : ndarray of int, shape (p,) or (K-1, p)
        -1, 0 or +1: the sign of the divergence of each coefficient (0 = finite); one row per
        non-reference level for a multinomial model.
    names : tuple of str, optional
        Column names, used only by messages.
    equations : tuple, optional
        Multinomial models: the non-reference levels, one per row of ``directions``.
    levels : list
        Multinomial models: levels perfectly separated from all the other levels.
    ref : label, optional
        Multinomial models: the reference level.
    why : str, optional
        For ``kind="apparent"``: why the exact test was not run (default: the problem's size).
    """

    separated: bool
    kind: str
    columns: tuple[int, ...]
    directions: np.ndarray
    names: tuple[str, ...] | None = field(default=None, compare=False)
    equations: tuple = ()
    levels: list = field(default_factory=list)
    ref: Any = None
    why: str = field(default="", compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Separation):
            return NotImplemented
        return (self.separated == other.separated and self.kind == other.kind
                and self.columns == other.columns
                and np.array_equal(self.directions, other.directions)
                and self.equations == other.equations and self.levels == other.levels)

    __hash__ = None  # mutable-array field: not hashable

    def with_names(self, names: list[str] | tuple[str, ...]) -> Separation:
        """Return a copy that knows the design-column names (for messages)."""
        return replace(self, names=tuple(str(n) for n in names))

    def _labels(self, row: np.ndarray) -> list[str]:
        labels = []
        for j in np.flatnonzero(row):
            name = self.names[j] if self.names is not None and j < len(self.names) else f"x{j}"
            labels.append(f"{name} ({'+' if row[j] > 0 else '-'}inf)")
        return labels

    @property
    def column_labels(self) -> list[str]:
        """Labels of the infinite columns with the sign of their divergence, e.g. ``NV (+inf)``
        (binary models)."""
        return self._labels(np.atleast_2d(self.directions)[0]) if not self.equations else []

    @property
    def infinite(self) -> dict:
        """Multinomial models: non-reference level -> labels of its diverging coefficients."""
        out = {}
        for lv, row in zip(self.equations, np.atleast_2d(self.directions), strict=False):
            if row.any():
                out[lv] = self._labels(row)
        return out

    def _where(self) -> str:
        if not self.equations:
            return ", ".join(self.column_labels) or "(none identifiable)"
        parts = [f"level {lv!r}: {', '.join(cols)}" for lv, cols in self.infinite.items()]
        return "; ".join(parts) if parts else "(not identifiable)"

    def message(self) -> str:
        """A one-paragraph explanation for a warning or an error."""
        if not self.separated:
            return "No separation: the maximum-likelihood estimate exists."
        if self.equations:
            return self._multinomial_message()
        cols = self._where()
        if self.kind == "apparent":
            why = self.why or "the design is too large for the exact linear-programming test"
            return (
                f"Apparent separation: {why}, but the estimates or standard errors of {cols} "
                "are huge on their "
                "columns' scale, as when the maximum-likelihood estimate does not exist. Check "
                "those columns (a level or range where the response never varies), fit "
                "gc.FirthLogit or gc.BayesLogit, or test a subsample with "
                "glmclass.numerics.separation.detect_separation.")
        return (
            f"{self.kind.capitalize()} separation: the maximum-likelihood estimate does not exist "
            f"and the estimates of these columns are infinite: {cols}. The reported values for "
            "them are arbitrary large numbers with meaningless standard errors. Use "
            "gc.FirthLogit (Firth's bias-reduced logistic regression, finite under separation, "
            "with profile penalised-likelihood intervals) or gc.BayesLogit (a Gaussian prior "
            "keeps every estimate finite), or remove or merge the separating columns/levels."
        )

    def _multinomial_message(self) -> str:
        who = (f"level {', '.join(map(repr, self.levels))} "
               f"{'is' if len(self.levels) == 1 else 'are'} perfectly separated from the other "
               "levels; " if self.levels else "")
        if self.kind == "apparent":
            return (
                "Apparent separation: the standard errors of these coefficients (log-odds "
                f"against the reference {self.ref!r}) explode, the sign that the maximum-"
                f"likelihood estimate does not exist and they are infinite: {self._where()} ("
                f"{self.why or _SKIPPED}). Their "
                "reported values are arbitrary large numbers. Use a penalised or Bayesian model "
                "(a Gaussian prior, as in gc.BayesLogit, keeps every estimate finite), or merge "
                "the level or drop the separating columns.")
        return (
            f"{self.kind.capitalize()} separation: {who}the maximum-likelihood estimate does not "
            f"exist and these coefficients (log-odds against the reference {self.ref!r}) are "
            f"infinite: {self._where()}. Their reported values are arbitrary large numbers with "
            "meaningless standard errors. Use a penalised or Bayesian model (a Gaussian prior, "
            "as in gc.BayesLogit, keeps every estimate finite), or merge the level or drop the "
            "separating columns.")

    @property
    def note(self) -> str:
        """Note for the results summary ("" when there is no separation)."""
        if not self.separated:
            return ""
        advice = ("consider a penalised or Bayesian model." if self.equations
                  else "consider gc.FirthLogit or gc.BayesLogit.")
        return (f"{self.kind.capitalize()} separation detected: infinite estimates for "
                f"{self._where()}; {advice}")


_SKIPPED = "the exact linear-programming test was skipped for a problem this large"


def _none(p: int) -> Separation:
    return Separation(False, "none", (), np.zeros(p, dtype=int))


def _scaled_rows(X: np.ndarray, y: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows s_i x_i for 0/1 responses and x_i for interior ones, unit max-norm, deduplicated."""
    col = np.max(np.abs(X), axis=0)
    X = X / np.where(col > 0, col, 1.0)
    interior = (y > tol) & (y < 1.0 - tol)
    signs = np.where(y >= 0.5, 1.0, -1.0)
    ineq = X[~interior] * signs[~interior, None]
    eq = X[interior]

    def tidy(a: np.ndarray) -> np.ndarray:
        norm = np.max(np.abs(a), axis=1) if a.size else np.zeros(a.shape[0])
        a = a[norm > 0] / norm[norm > 0, None]
        return np.unique(a, axis=0) if a.shape[0] > 1 else a

    return tidy(ineq), tidy(eq)


def detect_separation(
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None = None,
    tol: float = 1e-7,
) -> Separation:
    """Test whether the binomial maximum-likelihood estimate exists (Konis' LP test).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Design matrix (finite).
    y : ndarray of shape (n,)
        Responses in [0, 1]: 0/1 outcomes or proportions. A proportion strictly inside (0, 1)
        contains both outcomes, so it forces $x_i^\\top b = 0$ on any separating direction.
    weights : ndarray of shape (n,), optional
        Prior or frequency weights; rows with weight 0 are ignored, positive values do not
        matter otherwise.
    tol : float
        Zero tolerance: proportions within ``tol`` of 0 or 1 count as 0 or 1, and the LP optimum
        (on the scaled problem) must exceed ``tol`` per row to count as separation.

    Returns
    -------
    Separation

    Raises
    ------
    ValueError
        If the arrays have inconsistent shapes or contain non-finite values, if ``y`` is
        outside [0, 1] or a weight is negative.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"detect_separation: X has shape {X.shape} and y {y.shape}; "
                         "need X (n, p) and y (n,) with the same n")
    p = X.shape[1]
    keep = np.ones(y.shape[0], dtype=bool)
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        if w.shape != y.shape or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("detect_separation: 'weights' must be finite, non-negative and "
                             "of the same length as y")
        keep = w > 0
    X, y = X[keep], y[keep]
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("detect_separation: X and y must be finite (drop or impute missing "
                         "values first)")
    if np.any((y < 0) | (y > 1)):
        raise ValueError("detect_separation: y must lie in [0, 1] (0/1 outcomes or proportions)")
    if p == 0 or y.shape[0] == 0:
        return _none(p)

    A, E = _scaled_rows(X, y, tol)
    if A.shape[0] == 0:  # only proportions: every direction is forced to x'b = 0
        return _none(p)
    res = linprog(
        c=-A.sum(axis=0),
        A_ub=-A, b_ub=np.zeros(A.shape[0]),
        A_eq=E if E.shape[0] else None, b_eq=np.zeros(E.shape[0]) if E.shape[0] else None,
        bounds=(-1.0, 1.0), method="highs",
    )
    # b = 0 is always feasible and the box bounds the objective, so HiGHS only fails on
    # numerical trouble; treat that as "cannot show separation".
    if res.status != 0 or -res.fun <= tol * A.shape[0]:
        return _none(p)
    b = np.where(np.abs(res.x) > _DIRECTION_TOL, res.x, 0.0)
    directions = np.sign(b).astype(int)
    margins = A @ b
    if E.shape[0] == 0 and np.all(margins > tol):
        kind = "complete"
    else:
        kind = "complete" if _has_strict_direction(A, E, tol) else "quasi-complete"
    return Separation(True, kind, tuple(int(j) for j in np.flatnonzero(directions)), directions)


def _has_strict_direction(A: np.ndarray, E: np.ndarray, tol: float) -> bool:
    """Whether some b in the box has s_i x_i'b >= t > 0 for every row (complete separation)."""
    if E.shape[0]:
        return False  # a proportion row forces x_i'b = 0, so no strict classification
    n, p = A.shape
    # variables (b, t): maximise t subject to A b >= t, -1 <= b <= 1, t <= 1
    c = np.zeros(p + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.hstack([-A, np.ones((n, 1))]), b_ub=np.zeros(n),
                  bounds=[(-1.0, 1.0)] * p + [(None, 1.0)], method="highs")
    return bool(res.status == 0 and -res.fun > tol)


# --- when to run the exact test ---------------------------------------------------------------

def exploding(coef: np.ndarray, se: np.ndarray, scale: np.ndarray, coef_trigger: float = 100.0,
              se_trigger: float = 30.0) -> np.ndarray:
    """The symptom separation leaves on a fit: estimates or standard errors that are huge on
    their column's scale ``max |x_j|`` (along a separating direction the information vanishes).

    Parameters
    ----------
    coef, se : ndarray of shape (m,)
        Estimates and standard errors (inf where the information is singular).
    scale : ndarray of shape (m,)
        ``max |x_j|`` of each coefficient's column.

    Returns
    -------
    ndarray of bool, shape (m,)
    """
    with np.errstate(invalid="ignore", over="ignore"):  # NaN compares False, as 0 would
        return (np.abs(coef) * scale > coef_trigger) | ~(se * scale <= se_trigger)


@dataclass(frozen=True)
class SeparationPolicy:
    """When a fit gets the exact linear-programming test: the one policy of every model.

    Attributes
    ----------
    always_cells : int
        Problems up to this size (rows x coefficients of the LP) always get the LP: a few
        milliseconds.
    max_cells : int
        Problems larger than this get the symptom check only (HiGHS needs many times the memory
        of the design): the record is then ``"apparent"``.
    probability_cells : int
        Up to this size a fitted probability within ``probability_trigger`` of 0 or 1 is a
        symptom too. Separation always leaves one: along a separating direction at least one
        observation is strictly on its side, and its fitted probability goes to 0 or 1 as the
        estimates diverge. IRLS stops by R's rule only once that observation's share of the
        deviance changes by less than ``tol * deviance`` per iteration, which puts its fitted
        probability below ~1e-6 for deviances up to ~1.4e4 (10^4 rows): the trigger keeps a
        10x margin. An honest fit that comes as close only pays for the LP.
    probability_trigger : float
    """

    always_cells: int
    max_cells: int
    probability_cells: int = 0
    probability_trigger: float = 1e-5

    def decide(self, cells: int, converged: bool, symptoms: bool) -> str:
        """``"none"`` (an interior maximum with moderate standard errors: the MLE exists),
        ``"lp"`` (run the exact test) or ``"apparent"`` (report the symptoms)."""
        if converged and not symptoms and cells > self.always_cells:
            return "none"
        return "lp" if cells <= self.max_cells else "apparent"

    def extreme(self, cells: int, prob: np.ndarray) -> bool:
        """Whether fitted probabilities ``prob`` (of the rows with positive weight) count as a
        symptom at this size."""
        if cells > self.probability_cells or prob.size == 0:
            return False
        t = self.probability_trigger
        return bool(prob.min() < t or prob.max() > 1.0 - t)


#: Why Dask fits report separation from the fit's symptoms only (``Separation.why``).
DASK_WHY = ("the data are Dask partitions, where the exact linear-programming test (which needs "
            "the design in memory) is not run")

#: Binary GLMs: measured 4 ms at 1000 x 5, 11 ms at 2000 x 10, 55 ms at 1e4 x 10, 7 s at 1e6 x 10.
#: Small designs used to get the LP on every fit (60 % of a fit at 200 x 5); up to the same
#: size the extreme fitted probabilities that separation always leaves now trigger it.
BINARY = SeparationPolicy(always_cells=0, max_cells=5_000_000, probability_cells=10_000)
#: Multinomial logit: the LP's expanded design has N (K-1) rows and (K-1) p columns.
MULTINOMIAL = SeparationPolicy(always_cells=0, max_cells=500_000)
