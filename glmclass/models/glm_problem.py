"""The encoded data of a GLM (:class:`GLMProblem`): the response on the family's scale, the
prior weights and the offset, validated once, with every pass the fits and results make over
its rows (IRLS, the null fit, the information, the log-likelihood, profile refits with a
coefficient held, :class:`FixedColumn`).

One class over any row source: on data in memory it holds the full-length arrays; on data
whose rows live elsewhere (``data.in_memory`` False, e.g. Dask partitions) it holds the row
source of the encoded parts that the data adapter gives (``data.encoded_rows``), the sums
of weights and response gathered in the data's facts pass (``data.facts.weights``) and lazy
per-row arrays (``data.row_array``); every pass is then a reduce or map on that source, and
the null model's numbers ride the fit's first pass (:meth:`GLMProblem.fit_with_null`). This
module never imports Dask.

References
----------
McCullagh, P. and Nelder, J. A. (1989). *Generalized Linear Models*, 2nd ed., ch. 2.
R Core Team, ``glm.fit`` (stats package): zero-weight rows, the null deviance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import families as F
from ..data.model_data import ModelData, check_finite
from ..data.response import binary_response, binomial_response, encode
from ..lazy import cached_property
from ..likelihoods.glm import NullPartials, loglik_is_saturated_minus_half_deviance
from ..rows.blocks import ArrayBlocks, Block, RowBlocks, block_rows
from ..rows.constant import constant, is_constant
from ..rows.derived import Alongside, FixedColumn, held_block
from ..rows.gram import abs_max_rows, column_abs_max, weighted_gram
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..solvers.irls_records import Penalty
from ..solvers.solve import solve
from .base import check_weight_facts, check_weights

__all__ = ["FixedColumn", "GLMProblem", "constant", "gram_applies", "held_block", "null_record"]


# --- per-part functions for data not in memory (plain NumPy, run where the part lives) -----------

def _encode_y(y, levels) -> np.ndarray:
    """A part's response on the family's scale: codes of the labels, or the numbers (0/1,
    proportions, counts), as :func:`~glmclass.data.response.binary_response`."""
    if levels is not None and getattr(y.dtype, "kind", "O") not in "iuf":
        return encode(y, levels).astype(float)
    return np.asarray(y, dtype=float)


def _glm_part(part: tuple, levels) -> tuple:
    """``(X, y, prior weights, offset)`` of one part ``(X, y, arrays, index)``."""
    X, y, arrays, _ = part
    f, v = arrays.get("freq_weights"), arrays.get("var_weights")
    pw = f * v if f is not None and v is not None else (f if f is not None else v)
    return (X, _encode_y(y, levels), pw, arrays.get("offset"))


def _loglik_part(part: tuple, eta: np.ndarray, levels, family: F.Family,
                 scale: float | None) -> float:
    """A part's share of the log-likelihood, or (scale is None) of sum pw * deviance."""
    _, y, pw, _ = _glm_part(part, levels)
    arrays = part[2]
    n = y.shape[0]
    w = np.ones(n) if pw is None else pw
    if scale is None:
        return float(np.sum(w * family.unit_deviance(y, eta)))
    v = arrays.get("var_weights")
    f = arrays.get("freq_weights")
    ll = family.loglik_obs(y, eta, np.ones(n) if v is None else v, scale)
    f = np.ones(n) if f is None else f
    with np.errstate(invalid="ignore"):
        return float(np.sum(np.where(f > 0, f * ll, 0.0)))


def _response(b: Block) -> np.ndarray:
    return b.y


def null_record(intercept: float | None, deviance: float | None,
                loglik: float | None = None) -> Fit:
    """The intercept-only fit (R's null model, ``eta = offset + intercept``) as a
    :class:`~glmclass.solvers.fit.Fit`: ``coef`` the constant (empty when the model has none,
    ``intercept`` None: then eta = offset and ``Fit.intercept`` is 0), ``deviance`` None from
    ``null_fit(lazy=True)`` when the intercept needed no iteration: the deviance is then
    ``problem.deviance_at(intercept)``, computed by the results when first asked
    (:attr:`~glmclass.results.glm_base.GLMBaseResults.null_deviance`); ``loglik`` the null
    model's log-likelihood when it was gathered in a pass the fit made anyway
    (:meth:`GLMProblem.fit_with_null`), else None (computed when first asked)."""
    if intercept is None:
        return Fit(coef=np.zeros(0), intercept=0.0, deviance=deviance, loglik=loglik)
    return Fit(coef=np.array([intercept]), intercept=intercept, deviance=deviance,
               loglik=loglik)


class _InformationWeights:
    """The weights of the information X'WX at coefficients ``b`` on a block (picklable, for
    the workers that hold rows not in memory)."""

    def __init__(self, family: F.Family, b: np.ndarray, observed: bool) -> None:
        self.family, self.b, self.observed = family, b, observed

    def __call__(self, blk: Block) -> np.ndarray:
        eta = blk.X @ self.b + blk.offset
        if self.observed:
            return blk.weights * self.family.observed_weights(blk.y, eta)
        return blk.weights * self.family.working_weights(eta)


def gram_applies(family: F.Family, observed: bool, gram: np.ndarray | None,
                 gram_information: str) -> bool:
    """Whether the solver's Gram (of ``gram_information``) is the information asked for."""
    return gram is not None and (family.is_canonical
                                 or observed == (gram_information == "observed"))


@dataclass(frozen=True)
class GLMProblem:
    """The encoded data of a GLM: family, response, weights and offset, validated once.

    Attributes
    ----------
    data : ModelData
    family : Family
    endog : ndarray of shape (n_obs,)
        Response on the family's scale (0/1 or proportions for the binomial).
    levels : list or None
        ``[failure, success]`` labels of a binary response; None for proportions and
        non-binomial families.
    offset, freq_weights, var_weights : ndarray of shape (n_obs,)
        Read-only broadcast views (no memory per row) when not given; lazy arrays chunked
        like the parts when the data are not in memory.
    rows : RowBlocks or None
        The rows ``(X, y, prior weights, offset)`` as the data adapter holds them when the
        data are not in memory (None in memory: :meth:`blocks` reads the arrays).
    sums : ndarray of shape (7,) or None
        With ``rows``: the sums gathered in the data's facts pass (nobs, sum pw, sum pw y,
        zero-weight rows, positive-weight rows with y = 0, y = 1, 0 < y < 1).
    """

    data: ModelData
    family: F.Family
    endog: np.ndarray
    levels: list | None
    offset: np.ndarray
    freq_weights: np.ndarray
    var_weights: np.ndarray
    rows: RowBlocks | None = None
    sums: np.ndarray | None = None

    @classmethod
    def build(cls, data: ModelData, family: F.Family) -> GLMProblem:
        """Validate and encode: the response within the family's support, finite
        non-negative weights, a binomial response with both outcomes among positive weights."""
        if not data.in_memory:
            return cls._build_from_parts(data, family)
        check_finite(data)
        check_weights(data.arrays)
        if not isinstance(family, F.Family):
            raise TypeError(f"family must be a glmclass family, e.g. gc.families.Binomial(); "
                            f"got {family!r}")
        name = data.endog_name
        n, a = data.nrows, data.arrays
        trials = None
        if isinstance(family, F.Binomial):
            y, levels, trials = binomial_response(data.endog, name, a.get("var_weights"))
        else:
            levels = None
            if np.ndim(data.endog) == 2:
                raise ValueError(f"response {name!r} has two columns (successes, failures): "
                                 "that is a binomial response; use the Binomial family")
            if np.asarray(data.endog).dtype.kind not in "biuf":
                raise ValueError(f"response {name!r} must be numeric for the {family.name} "
                                 "family")
            y = np.asarray(data.endog, dtype=float)
            if not np.all(np.isfinite(y)):
                raise ValueError(f"response {name!r} has infinite values")
        # a binary response is 0/1 by construction (binomial_response); proportions, counts,
        # other families and a Binomial subclass's own check are checked here
        if levels is None or type(family).check_endog is not F.Binomial.check_endog:
            try:
                family.check_endog(y)
            except ValueError as exc:  # the family does not know the column's name
                raise ValueError(f"response {name!r}: {exc}") from None

        def given(key: str, default: float) -> np.ndarray:
            return a[key] if a.get(key) is not None else constant(default, n)

        var_weights = given("var_weights", 1.0)
        if trials is not None:  # counts: the trials are the variance weights of proportions
            var_weights = trials * var_weights
        self = cls(data, family, y, levels, given("offset", 0.0), given("freq_weights", 1.0),
                   var_weights)
        # zero-weight rows do not count; a binary response has both labels among all rows
        # (binomial_response), so only weights of 0 can leave one class
        if isinstance(family, F.Binomial) and (levels is None or self.positive_rows is not None):
            used = y[self.prior_weights > 0]
            for value, outcome in ((0.0, "failures"), (1.0, "successes")):
                if np.all(used == value):
                    raise ValueError(
                        f"response {name!r} has only {outcome} among the rows with positive "
                        "weight (a single class): there is nothing to classify")
        return self

    @classmethod
    def _build_from_parts(cls, data: ModelData, family: F.Family) -> GLMProblem:
        """:meth:`build` for data not in memory: the checks read the merged facts (the
        in-memory encoders read a small surrogate of the response, so levels and messages are
        the same); the rows, sums and per-row arrays come from the data adapter."""
        if not isinstance(family, F.Family):
            raise TypeError(f"family must be a glmclass family, e.g. gc.families.Binomial(); "
                            f"got {family!r}")
        facts, name = data.facts, data.endog_name
        check_weight_facts(facts.arrays)
        surrogate = facts.response.surrogate()
        if facts.response.counts:  # proportions of (successes, failures)
            if not isinstance(family, F.Binomial):
                raise ValueError(f"response {name!r} has two columns (successes, failures): "
                                 "that is a binomial response; use the Binomial family")
            y, levels = np.asarray(surrogate, dtype=float), None
        elif isinstance(family, F.Binomial):
            y, levels = binary_response(surrogate, name)
        else:
            levels = None
            if facts.response.kind not in "iuf":
                raise ValueError(f"response {name!r} must be numeric for the {family.name} "
                                 "family")
            y = np.asarray(surrogate, dtype=float)
            if not np.all(np.isfinite(y)):
                raise ValueError(f"response {name!r} has infinite values")
        try:
            family.check_endog(y)
        except ValueError as exc:
            raise ValueError(f"response {name!r}: {exc}") from None
        rows = data.encoded_rows(_glm_part, levels)
        ws = facts.weights  # gathered in the facts pass: no pass of its own
        r = ws.response_sums(levels)
        sums = np.array([ws.nobs, ws.total, r[0], float(ws.zero), r[1], r[2], r[3]])
        self = cls(data, family, rows.map(_response), levels, data.row_array("offset", 0.0),
                   data.row_array("freq_weights", 1.0), data.row_array("var_weights", 1.0),
                   rows, sums)
        if isinstance(family, F.Binomial):
            total = sums[4] + sums[5] + sums[6]  # rows with positive weight
            for count, outcome in ((sums[4], "failures"), (sums[5], "successes")):
                if count == total:
                    raise ValueError(
                        f"response {name!r} has only {outcome} among the rows with positive "
                        "weight (a single class): there is nothing to classify")
        return self

    @property
    def exog(self) -> np.ndarray:
        return self.data.exog

    def on_rows(self, data: ModelData) -> GLMProblem:
        """This problem over other rows held in memory (one partition of Dask data, for the
        per-row outputs of the results): the response encoded with this problem's levels,
        the weights and offset of those rows (defaults where the fit had none)."""
        n, a = data.nrows, data.arrays
        y = data.endog
        if self.levels is not None and getattr(y.dtype, "kind", "O") not in "iuf":
            y = encode(y, self.levels).astype(float)
        else:
            y = np.asarray(y, dtype=float)

        def given(key: str, default: float) -> np.ndarray:
            return a[key] if a.get(key) is not None else constant(default, n)

        return GLMProblem(data, self.family, y, self.levels, given("offset", 0.0),
                          given("freq_weights", 1.0), given("var_weights", 1.0))

    def detached(self, data: ModelData) -> GLMProblem:
        """This problem without rows (for predictions shipped to workers)."""
        return GLMProblem(data, self.family, None, self.levels, None, None, None)

    @cached_property
    def prior_weights(self) -> np.ndarray:
        """``freq_weights * var_weights``, R's prior weights (a broadcast view when both are
        the default ones; read-only either way, made once)."""
        f, v = self.freq_weights, self.var_weights
        if self.rows is not None:  # lazy arrays: their lazy product
            return f * v
        if is_constant(f) and is_constant(v) and f[0] == 1 and v[0] == 1:
            return constant(1.0, f.shape[0])
        pw = f * v
        pw.flags.writeable = False
        return pw

    @cached_property
    def positive_rows(self) -> np.ndarray | None:
        """Mask of the rows with positive prior weight, None when that is every row (the
        rows IRLS fits, as R's ``glm.fit``)."""
        pw = self.prior_weights
        if is_constant(pw) and pw[0] > 0:
            return None
        pos = pw > 0
        return None if pos.all() else pos

    @property
    def nobs(self) -> float:
        """Observations counting frequency weights; rows with zero variance weight do not
        count."""
        if self.sums is not None:
            return float(self.sums[0])
        f, v = self.freq_weights, self.var_weights
        if is_constant(v) and v[0] > 0:
            # the default weights of 1: their sum is the row count (exact, as f.sum() is)
            return float(f.shape[0]) if is_constant(f) and f[0] == 1.0 else float(f.sum())
        return float(f[v > 0].sum())

    def blocks(self, X: np.ndarray | None = None) -> RowBlocks:
        """The rows as a block source: design ``X`` (default the model's), the response, prior
        weights and offset."""
        if self.rows is not None:
            if X is not None:
                raise TypeError("a GLMProblem over rows not in memory reads its own design: "
                                "use blocks().take_columns or blocks().intercept_only")
            return self.rows
        return ArrayBlocks(self.exog if X is None else X, self.endog, self.prior_weights,
                           self.offset)

    def linear_predictor(self, coef: np.ndarray) -> np.ndarray:
        """eta = X coef + offset on every row (aliased columns, NaN in ``coef``, count 0)."""
        coef = np.where(np.isnan(coef), 0.0, coef)
        if self._one_block:  # what the block source computes for its one block
            eta = self.exog @ coef
            eta += self.offset
            return eta
        return self.blocks().linear_predictor(coef)

    @cached_property
    def _one_block(self) -> bool:
        """Whether a block source over the design reads it as one block (a small float64
        design in memory): passes then need no source at all."""
        if self.rows is not None:  # the rows are not in memory
            return False
        X = self.exog
        return (isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2
                and 0 < X.shape[0] <= min(block_rows(X.shape[1]), block_rows(1)))

    def irls(self, control: Control, start: np.ndarray | None = None,
             penalty: Penalty | None = None, X: np.ndarray | None = None) -> Fit:
        """IRLS on the rows with positive prior weight (as R's ``glm.fit``, rows of weight 0
        take no part in the fit: their eta may be anything, even where the family's weights are
        infinite)."""
        if self.rows is not None:
            rows = self.rows.intercept_only() if isinstance(X, str) else self.blocks(X)
            return solve(self.family, self._positive(rows), control, start=start,
                         penalty=penalty)
        blocks = self.blocks(X)
        control = self._scaled(control)
        pos = self.positive_rows
        intercept = self.data.intercept_index if X is None else None
        return solve(self.family, blocks if pos is None else blocks.take_rows(pos), control,
                     start=start, penalty=penalty, intercept=intercept)

    def fit_with_null(self, control: Control, start: np.ndarray | None = None
                      ) -> tuple[Fit, Fit]:
        """:meth:`irls` and :meth:`null_fit` (``lazy=True``). On rows not in memory, when the
        null model's constant is known before the fit (no offset, or no intercept) and every
        row takes part, its deviance and log-likelihood are summed in the fit's first pass
        (:class:`Alongside`): no pass after the last iteration."""
        c = self._closed_null_intercept() if self.rows is not None else None
        if c is None or self.sums[3] != 0:
            return self.irls(control, start), self.null_fit(control, lazy=True)
        present = {k for k, a in self.data.facts.arrays.items()
                   if k in ("freq_weights", "var_weights") and a.nonunit}
        how = None
        if self.family.fixed_scale and len(present) < 2:
            how = "freq" if present == {"freq_weights"} else "var"
        rows = Alongside(self.rows, NullPartials(self.family, c, how))
        fit = solve(self.family, rows, self._scaled(control), start=start)
        if rows.gathered_extra is None:
            return fit, self.null_fit(control, lazy=True)
        dev, ll = (float(v) for v in rows.gathered_extra)
        return fit, null_record(self._null_coef(c), dev, None if how is None else ll)

    def _null_coef(self, c: float) -> float | None:
        """The null record's constant: None for a model without an intercept (eta = offset)."""
        return None if self.data.intercept_index is None else c

    def _scaled(self, control: Control) -> Control:
        """``control`` with the mean prior weight from the facts pass (rows not in memory), so
        that the weight-invariant stopping rule costs no reduction of its own."""
        n_positive = None if self.sums is None else self.sums[0] - self.sums[3]
        if n_positive is None or control.weight_scale is not None or n_positive <= 0:
            return control
        # the rows IRLS fits are those of positive weight (R's glm.fit), as in memory
        return control.replace(weight_scale=float(self.sums[1] / n_positive))

    def _closed_null_intercept(self) -> float | None:
        """The null model's constant when no fit is needed to find it (0 without an
        intercept; the link of the weighted mean without an offset), else None."""
        if self.data.intercept_index is None:
            return 0.0
        off = self.data.facts.arrays.get("offset")
        if off is not None and off.nonzero:
            return None
        c = float(self.family.link.link(np.array([self.sums[2] / self.sums[1]]))[0])
        return c if math.isfinite(c) else None

    def loglik_from_null(self, null: Fit, deviance: float) -> float | None:
        """The log-likelihood at the estimates from the null model's, ``llnull + (D0 - D) /
        2``, when the null fit carries it and the family's log-likelihood is its saturated
        one minus half the deviance (binomial, Poisson); else None."""
        if null.loglik is None or null.deviance is None or not (
                loglik_is_saturated_minus_half_deviance(self.family)):
            return None
        return null.loglik + 0.5 * (null.deviance - deviance)

    def fit_rows(self) -> RowBlocks:
        """The rows IRLS fits: those with positive prior weight (as R's ``glm.fit``)."""
        if self.rows is not None:
            return self._positive(self.rows)
        pos = self.positive_rows
        return self.blocks() if pos is None else self.blocks().take_rows(pos)

    def _positive(self, rows: RowBlocks) -> RowBlocks:
        """``rows`` without their rows of weight 0 (from the sums: none to drop, or selected
        inside each part)."""
        return rows if self.sums[3] == 0 else rows.positive_weights()

    def held_fit(self, j: int, b: float, others: np.ndarray, control: Control,
                 start: np.ndarray | None = None) -> Fit:
        """IRLS with coefficient j held at b (its column moved into the offset) on the
        columns ``others``: one refit of a profile likelihood, passes over the row source."""
        return solve(self.family, FixedColumn(self.fit_rows(), j, b, others), control,
                     start=start)

    def held_deviance(self, j: int, b: float) -> float:
        """Deviance at eta = offset + b x_j (no other column), one pass over the rows."""
        fam = self.family

        def dev(blk: Block) -> float:
            return float(np.sum(blk.weights * fam.unit_deviance(blk.y, blk.offset)))

        return FixedColumn(self.fit_rows(), j, b, np.zeros(0, dtype=np.intp)).reduce(dev, 0.0)

    def null_fit(self, control: Control, lazy: bool = False) -> Fit:
        """Intercept-only fit with the offset kept, as R's null deviance; eta = offset without
        an intercept. With ``lazy``, an intercept found without iterating comes without its
        deviance (None: a pass over the rows that most fits never need, see
        :func:`null_record`); an iterated one (with an offset) has it, so that an error of that
        fit still surfaces in ``fit()``. On rows not in memory the deviance is always
        computed: one pass, made while the fit has the rows at hand (none at all through
        :meth:`fit_with_null`)."""
        if self.sums is not None:
            return self._null_fit_from_sums(control)
        if self.data.intercept_index is None:
            return null_record(None, None if lazy else self.deviance_at(0.0))
        off = self.offset
        if (off[0] == 0.0 if is_constant(off) else not np.any(off)):  # the default: one cell
            # the intercept-only MLE is the weighted mean for every family and link (the score
            # is sum w (y - mu) mu'/V with mu'/V constant): no IRLS
            pw = self.prior_weights
            c = float(self.family.link.link(np.array([pw @ self.endog / pw.sum()]))[0])
            if math.isfinite(c):
                return null_record(c, None if lazy else self.deviance_at(c))
        ones = constant(1.0, self.data.nrows)[:, None]
        fit = self.irls(control, X=ones)
        return null_record(float(fit.coef[0]), float(fit.deviance))

    def _null_fit_from_sums(self, control: Control) -> Fit:
        c = self._closed_null_intercept()
        if c is not None:
            return null_record(self._null_coef(c), self.deviance_at(c))
        fit = self.irls(control, X="intercept")
        return null_record(float(fit.coef[0]), float(fit.deviance))

    def deviance_at(self, intercept: float) -> float:
        """Deviance at eta = offset + intercept, over row blocks (no length-n temporary)."""
        dev = NullPartials(self.family, intercept, None).deviance
        if self._one_block:  # the one block the source would read
            return dev(Block(self.exog, self.endog, self.prior_weights, self.offset, 0))
        return self.blocks().intercept_only().reduce(dev, 0.0)

    def column_scale(self, keep: np.ndarray) -> np.ndarray:
        """``max |x_j|`` of the kept columns (the scale of the separation symptoms)."""
        if self._one_block:
            X = self.exog if keep.all() else self.exog[:, keep]
            return abs_max_rows(X) if X.shape[1] else np.zeros(0)
        if self.rows is not None and self.data.facts.x_absmax is not None:
            return self.data.facts.x_absmax[keep]  # gathered in the facts pass
        return column_abs_max(self.blocks().take_columns(keep))

    def loglik(self, eta: np.ndarray, nobs: float) -> float:
        """Log-likelihood at ``eta`` (the Gaussian dispersion at its maximum-likelihood value,
        as R's ``logLik``); rows of zero frequency weight count 0. On rows not in memory
        ``eta`` is a per-row array chunked like the parts (the results' linear predictor):
        one pass, two for an estimated dispersion."""
        if self.rows is not None:
            data, fam, lv = self.data, self.family, self.levels
            scale = 1.0
            if not fam.fixed_scale:
                scale = float(data.sum_parts(_loglik_part, lv, fam, None, along=eta)) / nobs
            return float(data.sum_parts(_loglik_part, lv, fam, scale, along=eta))
        fam, pw = self.family, self.prior_weights
        scale = 1.0
        if not fam.fixed_scale:
            scale = float(np.sum(pw * fam.unit_deviance(self.endog, eta))) / nobs
        ll = fam.loglik_obs(self.endog, eta, self.var_weights, scale)
        f = self.freq_weights
        with np.errstate(invalid="ignore"):
            return float(np.sum(np.where(f > 0, f * ll, 0.0)))

    def information(self, coef: np.ndarray, keep: np.ndarray, observed: bool,
                    gram: np.ndarray | None = None, gram_information: str = "expected",
                    shift: np.ndarray | None = None) -> np.ndarray:
        """Fisher (``observed=False``) or observed information X'WX on the kept columns at
        ``coef``; ``gram`` is the solver's Gram at ``coef`` (of the ``gram_information``:
        :attr:`Fit.information`), reused when it is the one asked for. With ``shift``
        (p,), the information of the shifted design ``X - 1 shift'`` (see
        :func:`~glmclass.rows.gram.shift_from_gram`)."""
        fam = self.family
        if (shift is None or self.rows is None) and gram_applies(fam, observed, gram,
                                                                 gram_information):
            return gram[np.ix_(keep, keep)]
        b = coef[keep]
        if self.rows is not None:
            return weighted_gram(self.rows.take_columns(keep),
                                 _InformationWeights(fam, b, observed),
                                 None if shift is None else shift[keep])
        X = self.exog if keep.all() else self.exog[:, keep]

        def w(blk: Block) -> np.ndarray:
            eta = blk.X @ b + blk.offset
            if observed:  # the solver's terms: one pass of the link's tails (probit: 2x faster)
                return fam.irls_terms(blk.y, eta, blk.weights, observed=True)[0]
            return blk.weights * fam.working_weights(eta)

        return weighted_gram(self.blocks(X), w, None if shift is None else shift[keep])
