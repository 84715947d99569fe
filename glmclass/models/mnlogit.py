"""MNLogit: multinomial (softmax) logistic regression in baseline-category form.

Validates the data like the binary models, fits by damped Newton with the exact block Hessian
(:mod:`glmclass.solvers.newton`), checks for separation by linear programming and returns an
:class:`~glmclass.results.mnlogit.MNLogitResults`.

References
----------
Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.4.
Hastie, T., Tibshirani, R. and Friedman, J. (2009). *The Elements of Statistical Learning*, §4.4.
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, §7.3
(``nnet::multinom``).
"""

from __future__ import annotations

import numpy as np

from ..data.model_data import ModelData, check_finite
from ..data.response import multiclass_levels
from ..errors import ConvergenceWarning, RankDeficientWarning, SeparationWarning, warn_user
from ..numerics import separation as S
from ..numerics.separation import Separation
from ..progress import IterationLog
from ..results.mnlogit import MNLogitResults
from ..results.regularized import RegularizationPath, RegularizedMNLogitResults
from ..results.robust import cov_spec
from ..rows.blocks import ArrayBlocks, RowBlocks, block_rows
from ..rows.gram import column_abs_max, shift_from_gram, weighted_gram
from ..solvers import gradient as GD
from ..solvers import sampled as SM
from ..solvers.control import Control
from ..solvers.fit import Fit
from ..solvers.newton import multinomial_deviance, softmax_parts, unit_weights
from ..solvers.rank import aliased_design_columns, bound_decides, gram_decides
from ..solvers.sampled import sample_fraction
from ..solvers.solve import solve
from . import gradient_fit as GF
from . import regularization_path as PATH
from . import regularized as REG
from .base import Model, check_option, check_weights, fit_control
from .class_setup import tidy_labels
from .glm_base import constant

#: A further symptom of separation when the LP is cheap (N p K up to CHEAP_LP): a fitted
#: probability below PROB_TRIGGER. (Exploding estimates and standard errors, and no
#: convergence, are the symptoms of :func:`glmclass.numerics.separation.exploding`.)
PROB_TRIGGER = 1e-6
CHEAP_LP = 1_000_000


def _sample_full_rank(rows: RowBlocks, intercept: int | None) -> bool:
    """Whether a systematic row sample (the size of the sampled Hessians') shows X'FX clearly
    full rank; False when the source cannot sample. The sample is freed on return: a fit
    holds no more than the design."""
    sub = rows.subsample(int(sample_fraction(rows.n_rows, rows.n_cols) * rows.n_rows))
    return sub is not None and gram_decides(weighted_gram(sub), None, intercept)


class MNLogit(Model):
    """Multinomial logistic regression with a reference (baseline) level.

    For K levels and design row $x$, level $j \\ne$ ref has log-odds against the reference
    $\\ln(p_j / p_{ref}) = x^\\top \\beta_j$ (+ offset); the reference level has no coefficients.

    Parameters
    ----------
    endog : array-like of shape (n_obs,)
        Response: integer codes, strings, bool or a pandas Categorical (at least two levels).
    exog : array-like of shape (n_obs, p)
        Design matrix (include a constant column for intercepts).
    ref : label, optional
        The reference level; default the first level (Categorical order, else sorted).
    freq_weights : array-like of shape (n_obs,), optional
        Replication counts: a row with weight 3 counts as three identical rows.
    offset : array-like of shape (n_obs,), optional
        Known term added to the log-odds of every non-reference level.
    missing : {"drop", "raise"}
        Drop rows with missing values, or raise naming the column.

    Notes
    -----
    The model is immutable: :meth:`fit` returns a new results object each call.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.4.
    """

    row_args = ("freq_weights", "offset")

    def __init__(self, endog, exog, ref=None, freq_weights=None, offset=None,
                 missing: str = "drop") -> None:
        super().__init__(endog, exog, missing, ref=ref, freq_weights=freq_weights, offset=offset)

    def _setup(self, data: ModelData, ref=None) -> None:
        if not data.in_memory:  # rows not in memory (e.g. Dask partitions)
            from .class_parts import mnlogit_rows

            if data.exog.shape[1] == 0:
                raise ValueError("the design has no columns: add an intercept or predictors "
                                 "(e.g. 'y ~ 1' for the intercept-only model)")
            found = mnlogit_rows(data, ref)
            self.codes = found.rows.codes
            self.levels = found.levels
            self._fit_levels = found.fit_levels
            self.ref = found.fit_levels[0]
            self.freq_weights = found.freq_weights
            self.offset = found.offset
            self._level_totals = found.totals
            self._rows_source = found.rows.source
            return
        check_finite(data)
        check_weights(data.arrays)
        if data.exog.shape[1] == 0:
            raise ValueError("the design has no columns: add an intercept or predictors "
                             "(e.g. 'y ~ 1' for the intercept-only model)")
        name = data.endog_name
        codes, natural, fit_levels = multiclass_levels(data.endog, name, ref)
        n = data.nrows
        a = data.arrays
        f = a["freq_weights"] if a.get("freq_weights") is not None else constant(1.0, n)
        if unit_weights(f):  # no weights: counts, without an N-long copy of the broadcast 1s
            totals = np.bincount(codes, minlength=len(fit_levels)).astype(float)
        else:
            totals = np.bincount(codes, weights=f, minlength=len(fit_levels))
        if np.any(totals <= 0):
            lv = fit_levels[int(np.flatnonzero(totals <= 0)[0])]
            raise ValueError(f"level {lv!r} of {name!r} has zero total frequency weight: drop "
                             "the level (or its rows) before fitting")
        self.codes = codes  # 0 = the reference level
        self.levels = tidy_labels(list(natural))  # natural order, for predictions and tables
        self._fit_levels = tidy_labels(list(fit_levels))  # reference first
        self.ref = self._fit_levels[0]
        self.freq_weights = f
        self.offset = a["offset"] if a.get("offset") is not None else constant(0.0, n)
        self._level_totals = totals

    @property
    def K(self) -> int:
        """Number of response levels."""
        return len(self._fit_levels)

    def blocks(self, keep: np.ndarray | None = None) -> RowBlocks:
        """The rows (the ``keep`` columns of the design) with the response codes (0: the
        reference level) and the frequency weights, in memory or in Dask partitions."""
        return self.row_blocks(keep)

    def row_blocks(self, keep: np.ndarray | None = None, objective: bool = False) -> RowBlocks:
        """Rows (the kept columns) with the codes as response and the frequency weights;
        ``objective``: blocks sized for the multinomial deviance, whose per-row temporaries are
        K - 1 times wider."""
        p = self.exog.shape[1] if keep is None else int(np.sum(keep))
        rows = block_rows((self.K - 1) * p) if objective else None
        if not self.data.in_memory:  # the parts' rows, read in blocks of ``rows``
            source = self._rows_source.with_rows(rows)
            return source if keep is None else source.take_columns(keep)
        X = self.exog
        if keep is not None and not keep.all():
            X = np.ascontiguousarray(X[:, keep])
        return ArrayBlocks(X, self.codes, self.freq_weights, self.offset, rows=rows)

    def fit(self, method: str = "newton", information: str = "observed", maxiter: int = 50,
            tol: float = 1e-10, cov_type: str = "nonrobust", cov_kwds: dict | None = None,
            disp: bool = False, *, learning_rate: float | None = None,
            schedule: str = "constant", batch_size: int | None = None,
            max_epochs: int | None = None, gtol: float = 1e-6, seed=None,
            variance_reduction: bool = True, shuffle: bool = True,
            history: str = "epoch") -> MNLogitResults:
        """Maximum-likelihood fit by Newton's method with the exact block Hessian.

        Parameters
        ----------
        method : {"newton", "gd", "sgd", "minibatch"}
            Newton's method, or batch, stochastic or mini-batch gradient descent
            (:mod:`glmclass.solvers.gradient`; see :meth:`glmclass.Logit.fit` for their
            keyword-only settings ``learning_rate, schedule, batch_size, max_epochs, gtol,
            seed, variance_reduction, shuffle, history``). Standard errors come from the
            Hessian at the point reached.
        information : {"observed", "expected"}
            Which information matrix gives the covariance. The multinomial logit is a canonical
            exponential family, so the two coincide; the choice is recorded in the summary.
        maxiter : int
        tol : float
            Convergence when ``|dev - dev_old| / (|dev| + 0.1) < tol`` (R's rule).
        cov_type : {"nonrobust", "HC0", "HC1", "cluster"}
            Covariance of the estimates: the inverse information, or a sandwich around it with
            the per-row scores ``f_i (y_ij - p_ij) x_i`` (``"cluster"``: R ``sandwich::vcovCL(
            type="HC1")``). HC2 and HC3 need one leverage per row, which a multi-equation model
            does not have, and are refused.
        cov_kwds : dict, optional
            ``"cluster"`` only: ``groups`` (labels, or column names of the formula's
            DataFrame), ``use_correction``, ``fix``; as :meth:`glmclass.GLM.fit`.
        disp : bool
            Print one line per Newton step (:class:`~glmclass.progress.IterationLog`).

        Returns
        -------
        MNLogitResults
        """
        check_option("method", method, ("newton",) + GD.METHODS)
        grad = GF.options(method, learning_rate=learning_rate, schedule=schedule,
                          batch_size=batch_size, max_epochs=max_epochs, gtol=gtol, seed=seed,
                          variance_reduction=variance_reduction, shuffle=shuffle,
                          history=history)
        check_option("information", information, ("observed", "expected"))
        control = fit_control(maxiter, tol, "newton")
        cov = cov_spec(self.data, cov_type, cov_kwds, leverage=False)
        shown = control.replace(progress=IterationLog("deviance")) if disp else control
        trial = None if method in GD.METHODS else self._full_rank_fit(shown)
        if trial is not None and trial[1]:  # its Hessian shows R's rule would alias nothing
            aliased = np.zeros(self.exog.shape[1], dtype=bool)
        else:
            aliased = self._aliased()
        keep = ~aliased
        blocks = self.row_blocks(keep, objective=True)
        if method in GD.METHODS:
            fit = GF.multinomial_fit(self, keep, self._start(keep), method, grad)
        elif trial is not None and keep.all():  # the fit on every column stands
            fit = trial[0]
        else:
            fit = solve(multinomial_deviance(blocks, self.K), None, shown,
                        start=self._start(keep))
        null = self._null_deviance(control)
        results = MNLogitResults(self, fit, keep, null, method, information, self._fit_levels,
                                 cov)
        results = results.replaced(separation=self._separation(keep, blocks, results))
        self._warn(aliased, fit, results.separation, GF.LABELS.get(method, "Newton's method"))
        if cov.robust:
            results.bse  # noqa: B018 - a sandwich the data cannot give fails here, not later
        return results

    def _aliased(self) -> np.ndarray:
        """R's aliasing rule on the frequency-weighted design (shifted when its column means
        are large): one pass for the Gram X'FX, and a QR only when that does not decide."""
        rows = self.row_blocks()
        icpt, gram = self.data.intercept_index, weighted_gram(rows)
        shift = shift_from_gram(gram, icpt)  # large column means: decide on the shifted design
        if shift is not None:
            gram = weighted_gram(rows, shift=shift)
        return aliased_design_columns(rows, gram, shift=shift, intercept=icpt)

    def _full_rank_fit(self, control: Control) -> tuple[Fit, bool] | None:
        """Newton's method on every column before any rank decision, for a large in-memory
        design whose row sample is clearly full rank; with whether its final Hessian shows
        that R's rule on X'FX aliases nothing (then X'FX needs no pass of its own). None when
        the design is small, on Dask, or its sample (or the fit) does not look full rank.

        Each level's Hessian block is ``2 X' diag(f p_j (1 - p_j)) X``, so its weights are
        within ``[min, max] p_j (1 - p_j)`` of X'FX's (:func:`~glmclass.solvers.rank.
        bound_decides`); the sample check keeps a rank-deficient design from a fit on
        singular Hessians.
        """
        rows = self.row_blocks()
        if (not rows.sample_hessians or rows.n_rows < SM.SAMPLED_MIN_ROWS
                or not _sample_full_rank(rows, self.data.intercept_index)):
            return None
        everything = np.ones(self.exog.shape[1], dtype=bool)
        objective = multinomial_deviance(self.row_blocks(everything, objective=True), self.K,
                                         weight_range=True)
        try:
            fit = solve(objective, None, control, start=self._start(everything))
        except (ValueError, np.linalg.LinAlgError):
            return None
        record = objective.weight_range
        if not fit.converged or record is None or not np.array_equal(record[0], fit.coef):
            return None
        p, (_, low, high) = self.exog.shape[1], record
        blocks = (fit.hessian[j * p:(j + 1) * p, j * p:(j + 1) * p] for j in range(self.K - 1))
        with np.errstate(divide="ignore"):  # a weight 0: no bound (the ratio 0 fails it)
            # per row, X'FX's weight f over the block's 2 f p (1 - p): in [1 / 2 max, 1 / 2 min]
            lows, highs = 0.5 / high, 0.5 / low
        return fit, any(bound_decides(h, lo, hi)
                        for h, lo, hi in zip(blocks, lows, highs, strict=True))

    def _start(self, keep: np.ndarray | None) -> np.ndarray:
        """Zeros, with intercepts at the log ratios of the level totals to the reference's
        (``keep``: the kept columns; None for the intercept-only model)."""
        if keep is None:
            j, p = 0, 1
        else:
            j, p = self.data.intercept_index, int(keep.sum())
            j = int(np.sum(keep[:j])) if j is not None and keep[j] else None
        start = np.zeros((self.K - 1, p))
        if j is not None:
            t = self._level_totals
            start[:, j] = np.log(t[1:] / t[0])
        return start.ravel()

    def _null_deviance(self, control: Control) -> float:
        """Intercept-only fit (offset kept), as ``llnull``; without an intercept, eta = offset."""
        if self.has_intercept and self.data.in_memory and not np.any(self.offset):
            # the intercept-only MLE fits the level shares: -2 sum_k t_k log(t_k / T), no passes
            t = self._level_totals
            return float(-2.0 * np.sum(t * np.log(t / t.sum())))
        if not self.has_intercept:
            none = np.zeros(self.exog.shape[1], dtype=bool)
            objective = multinomial_deviance(self.row_blocks(none, objective=True), self.K)
            return objective(np.zeros(0), False)[0]
        ones = self.row_blocks().intercept_only().with_rows(block_rows(self.K - 1))
        objective = multinomial_deviance(ones, self.K)
        return solve(objective, None, control, start=self._start(None)).objective

    # --- separation ---------------------------------------------------------------------------
    def _separation(self, keep: np.ndarray, blocks: RowBlocks,
                    res: MNLogitResults) -> Separation:
        """The exact LP test when the fit shows the symptoms of separation (no convergence,
        exploding estimates or standard errors, or, when the LP is cheap, fitted probabilities
        numerically 0 or 1); above :data:`~glmclass.numerics.separation.MULTINOMIAL`'s size only
        the symptoms are reported."""
        k1, p = self.K - 1, int(keep.sum())
        names = tuple(nm for nm, k in zip(self.exog_names, res.estimable, strict=True) if k)
        coef = res.solver_fit.coef  # level-major
        scale = np.tile(column_abs_max(blocks), k1)
        explode = S.exploding(coef, res.raw_bse(), scale)
        symptoms = bool(explode.any())
        nonref = tuple(self._fit_levels[1:])
        why = ""
        if not self.data.supports_exact_lp:  # the LP and the probability check need X
            decision, why = "apparent", S.DASK_WHY
        else:
            X = self.exog if keep.all() else self.exog[:, keep]
            f, off = self.freq_weights, self.offset
            pos = None if _broadcast(f) and f[0] > 0 else f > 0  # None: every row counts
            cells = (X.shape[0] if pos is None else int(pos.sum())) * self.K * p
            if not symptoms and cells <= CHEAP_LP:
                eta = X @ coef.reshape(k1, p).T
                if not (_broadcast(off) and off[0] == 0.0):  # no offset: nothing to add
                    eta += off[:, None]
                symptoms = _probability_below(eta if pos is None else eta[pos], PROB_TRIGGER)
            decision = S.MULTINOMIAL.decide(cells, res.converged, symptoms)
        if decision == "none":
            return S.Separation(False, "none", (), np.zeros((k1, p), dtype=int), names, nonref,
                                [], self.ref)
        if decision == "apparent":
            d = np.where(explode, np.sign(coef), 0).astype(int).reshape(k1, p)
            return S.Separation(bool(d.any()), "apparent" if d.any() else "none",
                                _columns(d), d, names, nonref, [], self.ref, why=why)
        pos = slice(None) if pos is None else pos
        Xp, cp = X[pos], self.codes[pos]
        found = S.detect_separation(_expanded(Xp, cp, self.K), np.ones(Xp.shape[0] * k1))
        d = found.directions.reshape(k1, p)
        rest = [lv for j, lv in enumerate(self._fit_levels)
                if found.separated and S.detect_separation(Xp, (cp == j).astype(float)).separated]
        return S.Separation(found.separated, found.kind, _columns(d), d, names, nonref, rest,
                            self.ref)

    def _warn(self, aliased: np.ndarray, fit: Fit, sep: Separation,
              what: str = "Newton's method") -> None:
        if aliased.any():
            names = [nm for nm, a in zip(self.exog_names, aliased, strict=True) if a]
            warn_user(
                f"the design is rank deficient: {', '.join(map(repr, names))} "
                f"{'is a linear combination' if len(names) == 1 else 'are linear combinations'} "
                "of earlier columns; their coefficients are NaN for every level (drop them to "
                "silence this)", RankDeficientWarning)
        if sep.separated:
            warn_user(sep.message(), SeparationWarning)
        elif not fit.converged:
            hist = ", ".join(f"{h:.6g}" for h in fit.history[-5:])
            hint = "raise maxiter or scale the columns" if what == "Newton's method" \
                else GF.HINT
            warn_user(f"{what} did not converge: {fit.message} (last deviances: "
                      f"{hist}); {hint}", ConvergenceWarning)

    # --- penalised fits (glmclass.models.regularized) -----------------------------------------
    def fit_regularized(self, alpha, L1_wt: float = 1.0, *, penalty_factor=None,
                        standardize: bool = False, maxiter: int = 100,
                        tol: float = 1e-10) -> RegularizedMNLogitResults:
        """Lasso, ridge or elastic-net fit in the reference-level parametrisation.

        Minimises ``deviance / (2 n) + alpha * ((1 - L1_wt) / 2 * ||v B||^2 + L1_wt *
        ||v B||_1)``, n the sum of the frequency weights, over the (p, K - 1) coefficients B
        of the non-reference levels, each penalised on its own (the intercepts not). Unlike
        glmnet's symmetric multinomial (one vector per level, all penalised), the reference
        level has no coefficients, so the fit depends on ``ref``. Parameters as
        :meth:`glmclass.Logit.fit_regularized`.

        Returns
        -------
        RegularizedMNLogitResults
        """
        return REG.fit_regularized(self, alpha, L1_wt, penalty_factor, standardize, maxiter,
                                   tol, None, RegularizedMNLogitResults)

    def regularization_path(self, n_alphas: int = 100, L1_wt: float = 1.0,
                            alpha_min_ratio: float | None = None, cv=None, seed=None,
                            standardize: bool = False, *, alphas=None, penalty_factor=None,
                            stratify: bool = True, maxiter: int = 100,
                            tol: float = 1e-10, disp: bool = False) -> RegularizationPath:
        """Penalised fits along a sequence of alphas with cross-validated deviance; as
        :meth:`glmclass.Logit.regularization_path` (folds stratified by level)."""
        return PATH.regularization_path(self, n_alphas, L1_wt, alpha_min_ratio, alphas, cv,
                                        seed, standardize, penalty_factor, stratify, maxiter,
                                        tol, RegularizationPath, disp)

    def __repr__(self) -> str:
        return f"<MNLogit: {self.K} levels, ref={self.ref!r}, nobs={self.exog.shape[0]}>"


def _probability_below(eta: np.ndarray, trigger: float) -> bool:
    """Whether a fitted probability of some row is below ``trigger``.

    Parameters
    ----------
    eta : ndarray of shape (r, K-1)
        Log-odds of the non-reference levels against the reference level.
    trigger : float

    Returns
    -------
    bool

    Notes
    -----
    A row's probabilities are at least $\\exp(lo - hi) / K$, with $lo$ and $hi$ the smallest and
    largest of its K linear predictors (the reference level's is 0), since the log-sum-exp is
    at most $hi + \\ln K$. Where that bound clears the trigger on every row the answer is no,
    without an exponential; otherwise the probabilities are computed. The margin (1e-6 on the
    log scale) is far above the rounding of $lo - hi$: the bound can only clear the trigger
    where $hi - lo < -\\ln(K \\cdot trigger)$, 14 at the default trigger.
    """
    k1 = eta.shape[1]
    hi, lo = np.maximum(eta[:, 0], 0.0), np.minimum(eta[:, 0], 0.0)
    for j in range(1, k1):
        np.maximum(hi, eta[:, j], out=hi)
        np.minimum(lo, eta[:, j], out=lo)
    lo -= hi
    if lo.min(initial=0.0) > np.log(trigger) + np.log(k1 + 1.0) + 1e-6:
        return False
    _, prob, p0 = softmax_parts(eta)
    return bool(min(prob.min(initial=1.0), p0.min(initial=1.0)) < trigger)


def _broadcast(a: np.ndarray) -> bool:
    """Whether ``a`` is one value broadcast to every row (absent weights or offset)."""
    return a.strides[0] == 0 and a.shape[0] > 0


def _columns(directions: np.ndarray) -> tuple[int, ...]:
    """Design columns with an infinite estimate for some level."""
    return tuple(int(j) for j in np.flatnonzero(np.abs(directions).sum(axis=0)))


def _expanded(X: np.ndarray, codes: np.ndarray, K: int) -> np.ndarray:
    """Rows $x_n \\otimes (e_{y_n} - e_k)$, k != y_n (e_ref = 0): the multinomial MLE fails to
    exist exactly when some direction D has every such row's inner product >= 0, one > 0."""
    n, p = X.shape
    k1 = K - 1
    out = np.zeros((n, k1, k1, p))  # (row, competitor slot, level, column)
    others = np.nonzero(np.arange(K)[None, :] != codes[:, None])[1].reshape(n, k1)
    for slot in range(k1):
        other = others[:, slot]  # the slot-th competitor k != y_n of each row
        for j in range(k1):
            c = (codes == j + 1).astype(float) - (other == j + 1)
            out[:, slot, j, :] = X * c[:, None]
    return out.reshape(n * k1, k1 * p)
