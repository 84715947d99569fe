"""GLM, Logit and Probit: validate the data, call the IRLS solver, build the results.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.2-4.3.6.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*, §4.4.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import families as F
from .. import links as L
from ..blocks import ArrayBlocks, Block
from ..errors import (
    ConvergenceWarning,
    PerfectSeparationError,
    RankDeficientWarning,
    SeparationWarning,
)
from ..numerics.linalg import NotPositiveDefinite, spd_inverse
from ..numerics.separation import Separation, detect_separation
from ..results.glm import GLMResults
from ..solvers.gram import column_abs_max
from ..solvers.irls import Control, IRLSFit, irls
from .data import ModelData, check_finite, from_arrays, from_formula
from .response import binary_response

#: Binomial links whose inverse maps the real line onto (0, 1): for these, separation is
#: equivalent to infinite maximum-likelihood estimates.
_ONTO_01 = ("logit", "probit", "cloglog", "loglog", "cauchit")
#: Designs up to this many cells (n_obs * p) always get the separation LP: a few milliseconds
#: (measured: 4 ms at 1000 x 5, 11 ms at 2000 x 10, 55 ms at 10000 x 10, 7 s at 1e6 x 10).
_ALWAYS_TEST_CELLS = 10_000
#: Designs larger than this get the symptom check only: HiGHS needs ~30x the memory of X
_MAX_LP_CELLS = 5_000_000


def constant(value: float, n: int) -> np.ndarray:
    """A read-only length-n vector of one value that takes no memory (a broadcast view)."""
    return np.broadcast_to(np.float64(value), (n,))


def check_weights(arrays: dict) -> None:
    """Weights must be finite and non-negative; raise naming the argument."""
    for key in ("freq_weights", "var_weights"):
        w = arrays.get(key)
        if w is not None and (np.any(w < 0) or not np.all(np.isfinite(w))):
            row = int(np.flatnonzero((w < 0) | ~np.isfinite(w))[0])
            raise ValueError(f"{key} must be finite and non-negative; row {row} has {w[row]}")
        if w is not None and w.size and not np.any(w > 0):
            raise ValueError(f"{key} are all zero: no row would take part in the fit")


class GLM:
    """Generalized linear model fit by iteratively reweighted least squares.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Response: 0/1, bool, two labels or proportions for the Binomial family; numbers else.
    exog : array-like of shape (n_obs, p)
        Design matrix (include a constant column for an intercept).
    family : Family, default Binomial()
        Distribution and link, e.g. ``gc.families.Binomial(link=gc.links.CLogLog())``.
    offset : array-like of shape (n_obs,), optional
        Known term added to the linear predictor.
    freq_weights : array-like of shape (n_obs,), optional
        Replication counts: a row with weight 3 counts as three identical rows.
    var_weights : array-like of shape (n_obs,), optional
        Precision weights; for the Binomial family with proportions, the number of trials.
    missing : {"drop", "raise"}
        Drop rows with missing values, or raise naming the column.

    Notes
    -----
    The model is immutable: :meth:`fit` returns a new :class:`GLMResults` each call.

    References
    ----------
    McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed.
    """

    _fixed_family: F.Family | None = None

    def __init__(self, endog, exog, family: F.Family | None = None, offset=None,
                 freq_weights=None, var_weights=None, missing: str = "drop") -> None:
        data = from_arrays(endog, exog, missing, offset=offset, freq_weights=freq_weights,
                           var_weights=var_weights)
        self._setup(data, family)

    @classmethod
    def from_formula(cls, formula: str, data, family: F.Family | None = None, offset=None,
                     freq_weights=None, var_weights=None, missing: str = "drop",
                     eval_env: int = 0) -> GLM:
        """Build the model from a patsy formula on a DataFrame.

        Parameters
        ----------
        formula : str
            ``"y ~ x1 + C(group) + np.log(x2)"``.
        data : pandas.DataFrame
        family, offset, freq_weights, var_weights, missing
            As for the constructor; arrays are aligned with the rows of ``data``.
        eval_env : int
            Extra frames above the caller in which to look up names used in the formula.
        """
        md = from_formula(formula, data, missing, eval_env + 1, offset=offset,
                          freq_weights=freq_weights, var_weights=var_weights)
        self = cls.__new__(cls)
        self._setup(md, family)
        return self

    def _setup(self, data: ModelData, family: F.Family | None) -> None:
        check_finite(data)
        check_weights(data.arrays)
        family = self._fixed_family or family or F.Binomial()
        if not isinstance(family, F.Family):
            raise TypeError(f"family must be a glmclass family, e.g. gc.families.Binomial(); "
                            f"got {family!r}")
        n = data.nrows
        if isinstance(family, F.Binomial):
            y, levels = binary_response(data.endog, data.endog_name)
        else:
            levels = None
            if np.asarray(data.endog).dtype.kind not in "biuf":
                raise ValueError(f"response {data.endog_name!r} must be numeric for the "
                                 f"{family.name} family")
            y = np.asarray(data.endog, dtype=float)
            if not np.all(np.isfinite(y)):
                raise ValueError(f"response {data.endog_name!r} has infinite values")
        try:
            family.check_endog(y)
        except ValueError as exc:  # the family does not know the column's name
            raise ValueError(f"response {data.endog_name!r}: {exc}") from None
        a = data.arrays
        self.data = data
        self.family = family
        self.endog = y
        self.levels = levels
        self.exog = data.exog
        self.exog_names = data.exog_names
        # absent offsets and weights are read-only broadcast views: no memory per row
        given = {k: a.get(k) for k in ("offset", "freq_weights", "var_weights")}
        self.offset = given["offset"] if given["offset"] is not None else constant(0.0, n)
        self.freq_weights = (given["freq_weights"] if given["freq_weights"] is not None
                             else constant(1.0, n))
        self.var_weights = (given["var_weights"] if given["var_weights"] is not None
                            else constant(1.0, n))
        # column by column, among those whose first value is 1: no n x p temporary
        self.has_intercept = any(bool(np.all(data.exog[:, j] == 1.0))
                                 for j in np.flatnonzero(data.exog[0] == 1.0))
        if isinstance(family, F.Binomial):  # zero-weight rows do not count
            used = y[self.prior_weights > 0]
            for value, outcome in ((0.0, "failures"), (1.0, "successes")):
                if np.all(used == value):
                    raise ValueError(
                        f"response {data.endog_name!r} has only {outcome} among the rows with "
                        "positive weight (a single class): there is nothing to classify")

    @property
    def formula(self) -> str | None:
        return self.data.formula

    @property
    def prior_weights(self) -> np.ndarray:
        """``freq_weights * var_weights``, R's prior weights (a broadcast view when both are
        the default ones)."""
        f, v = self.freq_weights, self.var_weights
        if f.strides == (0,) and v.strides == (0,):
            return constant(1.0, f.shape[0])
        return f * v

    def fit(self, method: str = "irls", information: str = "observed", maxiter: int = 50,
            tol: float = 1e-10, start_params=None, on_separation: str = "warn") -> GLMResults:
        """Maximum-likelihood fit.

        Parameters
        ----------
        method : {"irls", "newton"}
            Fisher scoring (IRLS) or Newton's method with the exact Hessian; identical for a
            canonical link.
        information : {"observed", "expected"}
            Covariance from the negative Hessian of the log-likelihood, or from the Fisher
            information (R's ``glm`` convention).
        maxiter : int
        tol : float
            Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol``.
        start_params : array-like of shape (p,), optional
        on_separation : {"warn", "raise", "ignore"}
            Binomial family only: what to do when the classes are (quasi-)completely separated,
            so that some estimates are infinite. ``"warn"`` issues one
            :class:`~glmclass.SeparationWarning` naming those columns, ``"raise"`` raises
            :class:`~glmclass.PerfectSeparationError`, ``"ignore"`` skips the check
            (``results.separation`` is then None).

        Returns
        -------
        GLMResults
            With a ``separation`` attribute: the :class:`~glmclass.numerics.separation.Separation`
            record of Konis' linear-programming test (None for other families or ``"ignore"``).

        Notes
        -----
        The exact test is one linear program. It is run on every binomial fit of a small design
        (``n_obs * p <= 1e4``, a few milliseconds) and, on larger ones, when the fit shows the
        signs separation leaves: no convergence, or a column whose estimate (more than 100) or
        standard error (more than 30) is huge on the column's own scale ``max |x_j|`` — along a
        separating direction the information vanishes. A fit that converged to an interior
        maximum with moderate standard errors has a finite MLE. Designs over 5e6 cells, where
        the LP needs many times the memory of X, get the symptom check only: the record's kind
        is then ``"apparent"``.
        """
        if method not in ("irls", "newton"):
            raise ValueError(f"method must be 'irls' or 'newton', got {method!r}")
        if information not in ("observed", "expected"):
            raise ValueError(f"information must be 'observed' or 'expected', got {information!r}")
        if on_separation not in ("warn", "raise", "ignore"):
            raise ValueError(
                f"on_separation must be 'warn', 'raise' or 'ignore', got {on_separation!r}")
        if start_params is not None:
            start_params = np.asarray(start_params, dtype=float)
            if start_params.shape != (self.exog.shape[1],):
                raise ValueError(f"start_params must have {self.exog.shape[1]} values (one per "
                                 f"column of exog), got shape {start_params.shape}")
            if not np.all(np.isfinite(start_params)):
                raise ValueError("start_params must be finite")
        if not (isinstance(maxiter, (int, np.integer)) and maxiter >= 1):
            raise ValueError(f"maxiter must be a positive integer, got {maxiter!r}")
        if not (np.isfinite(tol) and tol > 0):
            raise ValueError(f"tol must be a positive number, got {tol!r}")
        control = Control(maxiter=maxiter, tol=tol,
                          hessian="observed" if method == "newton" else "expected")
        fit, eta = self._irls(self.exog, control, start_params)
        sep = self._separation(fit, tol) if on_separation != "ignore" else None
        if sep is not None and sep.separated and on_separation == "raise":
            raise PerfectSeparationError(sep.message())
        self._warn(fit, sep)
        null_eta, null_dev = self._null_fit(control)
        results = GLMResults(self, fit, eta, null_eta, null_dev, method, information)
        results.separation = sep
        return results

    def _irls(self, X, control, start=None, penalty=None) -> tuple[IRLSFit, np.ndarray]:
        """The IRLS fit on design ``X`` and its linear predictor on every row."""
        pw = self.prior_weights
        blocks = ArrayBlocks(X, self.endog, pw, self.offset)
        pos = pw > 0
        # as R's glm.fit, rows of weight 0 take no part in the fit (their eta may be anything,
        # even where the family's weights are inf); they get fitted values afterwards
        fit = irls(blocks if pos.all() else blocks.take_rows(pos), self.family, start, control,
                   penalty)
        return fit, blocks.linear_predictor(np.where(fit.aliased, 0.0, fit.coef))

    def _null_fit(self, control: Control) -> tuple[np.ndarray, float]:
        """Intercept-only fit (offset kept), as R's null deviance; eta = offset without one."""
        if self.has_intercept:
            n = self.exog.shape[0]
            if not np.any(self.offset):
                # the intercept-only MLE is the weighted mean for every family and link (the
                # score is sum w (y - mu) mu'/V with mu'/V constant): no IRLS, one eta for all
                pw = self.prior_weights
                eta0 = self.family.link.link(np.array([pw @ self.endog / pw.sum()]))[0]
                if np.isfinite(eta0):
                    return constant(eta0, n), self._deviance_at(eta0)
            null, eta = self._irls(np.broadcast_to(np.float64(1.0), (n, 1)), control)
            return eta, null.deviance
        eta = self.offset
        pw = self.prior_weights
        return eta, float(np.sum(pw * self.family.unit_deviance(self.endog, eta)))

    def _deviance_at(self, eta: float) -> float:
        """Deviance of a constant linear predictor, over row blocks (no length-n temporary)."""
        fam = self.family

        def dev(b: Block) -> float:
            return float(np.sum(b.weights * fam.unit_deviance(b.y, np.full(b.y.shape, eta))))

        ones = np.broadcast_to(np.float64(1.0), (self.exog.shape[0], 1))
        return ArrayBlocks(ones, self.endog, self.prior_weights).reduce(dev, 0.0)

    def _separation(self, fit, tol: float) -> Separation | None:
        """Konis' LP test on the non-aliased columns, when cheap or when the fit looks separated."""
        # the LP characterises infinite estimates only for links onto (0, 1); log-binomial
        # estimates can stay finite under separation (Silvapulle 1981)
        if not isinstance(self.family, F.Binomial) or self.family.link.name not in _ONTO_01:
            return None
        keep = ~fit.aliased
        X = self.exog if keep.all() else self.exog[:, keep]  # no copy of X when nothing is aliased
        pw = self.freq_weights * self.var_weights
        exploding = self._exploding_columns(fit, X, keep)
        cells = X.shape[0] * X.shape[1]
        if fit.converged and not exploding.any() and cells > _ALWAYS_TEST_CELLS:
            # an interior maximum with finite, moderate standard errors: the MLE exists
            return Separation(False, "none", (), np.zeros(len(keep), dtype=int),
                              tuple(self.exog_names))
        directions = np.zeros(len(keep), dtype=int)
        if cells > _MAX_LP_CELLS:  # the LP would need many times the memory of X
            directions[keep] = np.where(exploding, np.sign(np.nan_to_num(fit.coef[keep])), 0)
            columns = tuple(int(j) for j in np.flatnonzero(directions))
            return Separation(bool(columns), "apparent" if columns else "none", columns,
                              directions, tuple(self.exog_names))
        found = detect_separation(X, self.endog, pw)
        directions[keep] = found.directions
        columns = tuple(int(j) for j in np.flatnonzero(directions))
        return Separation(found.separated, found.kind, columns, directions,
                          tuple(self.exog_names))

    @staticmethod
    def _exploding_columns(fit, X: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """Columns whose estimate or standard error is huge on the column's own scale: the
        symptom separation leaves (the information vanishes along the separating direction).
        Costs a p x p solve from the final X'WX, unlike the LP."""
        scale = column_abs_max(ArrayBlocks(X))
        coef = np.abs(np.nan_to_num(fit.coef[keep]))
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # near-singular: inf is the answer
                var = np.diag(spd_inverse(fit.gram[np.ix_(keep, keep)]))
            se = np.sqrt(np.where(np.isfinite(var), np.maximum(var, 0.0), np.inf))
        except NotPositiveDefinite:
            se = np.full(coef.shape, np.inf)
        return (coef * scale > 100.0) | (se * scale > 30.0)

    def _warn(self, fit, sep: Separation | None = None) -> None:
        if fit.aliased.any():
            names = [n for n, a in zip(self.exog_names, fit.aliased, strict=True) if a]
            zero = [n for n, z in zip(self.exog_names, ~self.exog.any(axis=0), strict=True)
                    if z and n in names]
            why = ("is a linear combination" if len(names) == 1 else "are linear combinations")
            why += " of earlier columns (on the rows with positive weight)"
            if zero:
                verb = "is" if len(zero) == 1 else "are"
                why += f"; {', '.join(map(repr, zero))} {verb} all zero"
            warnings.warn(
                f"the design is rank deficient: {', '.join(map(repr, names))} {why}; their "
                "coefficients are NaN (drop them to silence this)",
                RankDeficientWarning, stacklevel=3)
        hist = ", ".join(f"{h:.6g}" for h in fit.history[-5:])
        if sep is not None and sep.separated:
            # one warning: separation explains the divergence, so no ConvergenceWarning as well
            extra = "" if fit.converged else f" IRLS stopped without converging ({fit.message})."
            warnings.warn(sep.message() + extra, SeparationWarning, stacklevel=3)
        elif not fit.converged:
            w = ConvergenceWarning(
                f"IRLS did not converge: {fit.message} (last deviances: {hist}); raise maxiter, "
                "give start_params, or rescale the columns")
            w.history = fit.history  # the whole iteration history, for diagnosis
            warnings.warn(w, stacklevel=3)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.family!r}, nobs={self.exog.shape[0]}>"


class Logit(GLM):
    """Logistic regression: :class:`GLM` with ``Binomial(link=Logit())``.

    Parameters are those of :class:`GLM` without ``family``.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.2.
    """

    _fixed_family = F.Binomial(L.Logit())

    def __init__(self, endog, exog, offset=None, freq_weights=None, var_weights=None,
                 missing: str = "drop") -> None:
        super().__init__(endog, exog, None, offset, freq_weights, var_weights, missing)

    @classmethod
    def from_formula(cls, formula: str, data, offset=None, freq_weights=None,
                     var_weights=None, missing: str = "drop", eval_env: int = 0):
        """Build the model from a patsy formula on a DataFrame (see :meth:`GLM.from_formula`)."""
        return super().from_formula(formula, data, None, offset, freq_weights, var_weights,
                                    missing, eval_env + 1)


class Probit(Logit):
    """Probit regression: :class:`GLM` with ``Binomial(link=Probit())``.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.5.
    """

    _fixed_family = F.Binomial(L.Probit())
