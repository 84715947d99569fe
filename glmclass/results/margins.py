"""Marginal effects of the variables of a formula (``results.get_margeff``).

A margin is a property of a *variable*, not of a design column: with ``y ~ age + I(age**2) +
age:smoke`` the effect of age moves three columns. Each design row is a function of the data
row, ``x_i = X(v_i)``, built by the stored formula design, so the derivative of the design in
a numeric variable v is taken through the design builder: ``D_i = dX/dv`` by central
differences with Richardson extrapolation (a step of 1e-3 relative to each value, truncation
error O(h^4): exact to ~1e-12 for polynomials, logs and interactions). With the linear
predictor ``eta_i = X_i B`` and the model's mean ``F(eta)`` (the inverse link, or the softmax
of a multinomial logit):

- ``dydx``: ``dF/dv = J_F(eta_i) D_i B``; ``eyex``: times ``v_i / F``; ``dyex``: times
  ``v_i``; ``eydx``: divided by ``F``;
- categorical variables (a factor of a ``C()`` term, strings, booleans): for each level
  other than the reference, the discrete change ``F(X(level)) - F(X(reference))`` with every
  row set to that level (``log F`` differences for the ``ey`` methods, statsmodels'
  convention); numeric 0/1 variables are derivatives unless ``dummy=True``, then changes from 0
  to 1;
- ``count=True``: variables holding whole non-negative counts change by one,
  ``(F(x + 1) - F(x - 1)) / 2`` (statsmodels' convention);
- ``at="overall"``: the average of the per-row effects (weighted by frequency weights);
  ``at="mean"``: the effect at the means of the numeric variables, categorical variables as
  observed and the design rows averaged (for indicator columns: the level proportions, as
  Stata's ``atmeans``); ``"median"``: numeric variables at their medians, the design rows'
  column medians; ``"zero"``: numeric variables at 0, categorical ones at their reference;
  ``"all"``: the effect at every row (no standard errors), as statsmodels;
- ``atexog``: variables held at given values on every row before ``at`` is applied;
- a variable whose every design column is aliased has a NaN effect (its coefficients are NaN).

Every sum over rows is a reduce over the rows of the fit
(:meth:`glmclass.data.model_data.ModelData.reduce_rows`: slices of the formula's DataFrame in
memory, each partition where it lives on Dask), and F, its Jacobian and its second derivative
come from the model's likelihood (:mod:`glmclass.likelihoods`), so the same code serves every
model kind and both kinds of data.

Standard errors by the delta method ``G V G'``, with V the covariance the fit reports and G
the exact gradient of the effects in the coefficients (second derivatives of F included).
Array models have one variable per design column (the constant excluded), as statsmodels.

References
----------
Greene, W. H. (2012). *Econometric Analysis*, 7th ed., §17.3 (partial effects).
Bartus, T. (2005). Estimation of marginal effects using margeff. *Stata Journal* 5(3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..likelihoods import likelihood_of
from ..numerics.stderr import quadratic_form_errors
from ..rows.blocks import block_rows
from ..summary import Summary
from .base import num
from .margin_designs import (
    ArrayDesigns,
    Effect,
    FormulaDesigns,
    array_effects,
    distinct_values,
    formula_columns,
    formula_effects,
    variable_columns,
)

METHODS = ("dydx", "eyex", "dyex", "eydx")
ATS = ("overall", "mean", "median", "zero", "all")


class MarginalEffects:
    """Marginal effects with delta-method standard errors (``results.get_margeff``).

    Attributes
    ----------
    margeff : pandas.Series
        The effects, by variable label (multinomial models: by (level, variable)).
    margeff_se : pandas.Series
        Their standard errors.
    margeff_cov : pandas.DataFrame
        Their covariance ``G V G'``.
    kind : pandas.Series
        ``"derivative"`` or ``"discrete"`` for each effect.
    at, method : str
    dummy : bool
    cov_type : str
        The covariance of the estimates the standard errors come from.
    """

    def __init__(self, values: np.ndarray, cov: np.ndarray, index: pd.Index, kinds: list,
                 at: str, method: str, dummy: bool, quantile, title: str,
                 cov_type: str = "nonrobust") -> None:
        self.margeff = pd.Series(values, index=index, name="margeff")
        self.margeff_cov = pd.DataFrame(cov, index=index, columns=index)
        se = quadratic_form_errors(np.diag(cov), cov, "marginal effects")
        self.margeff_se = pd.Series(se, index=index, name="margeff_se")
        self.kind = pd.Series(kinds, index=index, name="kind")
        self.at, self.method, self.dummy, self.cov_type = at, method, dummy, cov_type
        self._quantile = quantile
        self._title = title

    @property
    def tvalues(self) -> pd.Series:
        """margeff / margeff_se."""
        return (self.margeff / self.margeff_se).rename("z")

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of :attr:`tvalues` (the reference distribution of the fit)."""
        return pd.Series(2.0 * self._quantile.sf(np.abs(self.tvalues.to_numpy())),
                         index=self.margeff.index, name="pvalue")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Intervals ``margeff -+ q se``: columns ``lower``, ``upper``."""
        if not (isinstance(alpha, (int, float, np.number)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        q = self._quantile.isf(alpha / 2)
        return pd.DataFrame({"lower": self.margeff - q * self.margeff_se,
                             "upper": self.margeff + q * self.margeff_se})

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Table of the effects: ``margeff, margeff_se, z, pvalue, ci_lower, ci_upper``."""
        ci = self.conf_int(alpha)
        return pd.DataFrame({"margeff": self.margeff, "margeff_se": self.margeff_se,
                             "z": self.tvalues, "pvalue": self.pvalues,
                             "ci_lower": ci["lower"], "ci_upper": ci["upper"]})

    def summary(self, alpha: float = 0.05) -> Summary:
        """Report: what was computed, then the table."""
        header = [("Method", self.method), ("At", self.at), ("Dummy as discrete", self.dummy)]
        notes = ["Discrete changes from the reference level (categorical variables"
                 + (", and 0/1 variables" if self.dummy else "") + "); derivatives otherwise.",
                 f"Standard errors by the delta method, with the {self.cov_type} covariance "
                 "of the estimates."]
        return Summary(self._title, header, [(None, self.summary_frame(alpha))], notes)

    def __repr__(self) -> str:
        return f"<MarginalEffects: {self.method} at {self.at}, {len(self.margeff)} effects>"


# --- the effects and their gradients ----------------------------------------------------------


def _derivative(lik, B, X, D, off, w, ey: bool, per_row: bool = False):
    """sum_i w_i dF(x_i)/dv (or d log F / dv) and its gradient in the parameters B (the kept
    ones, as the likelihood's ``mean`` takes them), (M,) and (M, n_params); ``per_row``: the
    (r, M) values w_i dF(x_i)/dv alone."""
    m, gm = lik.mean_dx(X, B, off, D)
    if ey:
        F = lik.mean(X, B, off)
        if per_row:
            return w[:, None] * (m / F)
        gm = gm / F[:, :, None] - (m / F**2)[:, :, None] * lik.mean_jacobian(X, B, off)
        m = m / F
    elif per_row:
        return w[:, None] * m
    return w @ m, np.einsum("n,nmg->mg", w, gm)


def _discrete(lik, B, X_level, X_ref, off, w, ey: bool, per_row: bool = False):
    """sum_i w_i [T(F(X_level B)) - T(F(X_ref B))], T = identity or log, and its gradient;
    ``per_row``: the (r, M) values alone."""
    if per_row:
        F1, F0 = lik.mean(X_level, B, off), lik.mean(X_ref, B, off)
        with np.errstate(divide="ignore"):
            return w[:, None] * ((np.log(F1) - np.log(F0)) if ey else (F1 - F0))
    value, grad = 0.0, 0.0
    for X, sign in ((X_level, 1.0), (X_ref, -1.0)):
        F, J = lik.mean(X, B, off), lik.mean_jacobian(X, B, off)
        if ey:
            with np.errstate(divide="ignore"):
                J, F = J / F[:, :, None], np.log(F)
        value = value + sign * (w @ F)
        grad = grad + sign * np.einsum("n,nmg->mg", w, J)
    return value, grad


def kept_parameters(res, lik, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The design columns with estimates (not aliased), the parameters on them as the
    likelihood takes them (equation-major coefficients, then its extra parameters, e.g.
    thresholds), and their positions among every parameter (as :meth:`cov_params`)."""
    flat = np.asarray(res.flat_params, dtype=float)
    n_eq = lik.n_equations
    coef = flat[:n_eq * k].reshape(n_eq, k)
    keep = ~np.isnan(coef).any(axis=0)
    pos = np.concatenate([np.flatnonzero(np.tile(keep, n_eq)),
                          n_eq * k + np.arange(flat.size - n_eq * k)])
    theta = np.concatenate([coef[:, keep].ravel(), flat[n_eq * k:]])
    if lik.n_extra == 0:  # a (kept, n_equations) matrix, as the mean of a GLM takes it
        theta = coef[:, keep].T
    return keep, theta, pos


def _numeric(designs, distinct: pd.DataFrame, v) -> bool:
    return isinstance(designs, ArrayDesigns) or distinct[v].dtype.kind in "biuf"


class Stack:
    """Per-row values of pieces of rows, joined in row order (``a + b``): the combine of a
    reduce whose result is one value per row."""

    def __init__(self, parts: list) -> None:
        self.parts = parts

    def __add__(self, other: Stack) -> Stack:
        return Stack(self.parts + other.parts)

    __radd__ = __add__

    def array(self) -> np.ndarray:
        return np.concatenate(self.parts, axis=0)


def _point_variables(effects: list[Effect]) -> list:
    """The variables set to a point (their mean, median or 0) by ``at``: every variable but
    the categorical ones, which stay as observed (their design columns are averaged, Stata's
    ``atmeans``)."""
    out: list = []
    for eff in effects:
        if not eff.categorical and eff.variable not in out:
            out.append(eff.variable)
    return out


def get_margeff(res, at: str = "overall", method: str = "dydx", atexog=None,
                dummy: bool = False, count: bool = False):
    """Marginal effects of a GLM-type or multinomial fit (see the module docstring): sums
    over the rows of the fit, piece by piece (:meth:`ModelData.reduce_rows`), with the mean
    and its derivatives from the model's likelihood."""
    if at not in ATS:
        raise ValueError(f"at must be one of {ATS}, got {at!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    for name, flag in (("dummy", dummy), ("count", count)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    if (dummy or count) and at in ("median", "zero"):
        raise ValueError(f"at={at!r} with dummy=True or count=True: discrete changes are taken "
                         "at='overall' or at='mean' (as statsmodels); pass one of those")
    m = res.model
    data = m.data
    lik = likelihood_of(m)
    keep, B, _ = kept_parameters(res, lik, len(data.exog_names))
    if data.spec is not None:
        labels = _column_labels(data)
        columns = formula_columns(data.spec, labels)
        distinct = distinct_values(data, columns).frame()
        effects = formula_effects(data.spec, distinct, bool(dummy), bool(count))
        numeric = [c for c in columns if distinct[c].dtype.kind in "biuf"]
        designs = FormulaDesigns(data.spec, keep, _ranges(data, numeric),
                                 data.feature_mask)
        touched = variable_columns(data.spec, labels, columns, list(data.exog_names))
        fixed = _atexog(atexog, data, columns, numeric)
    else:
        distinct = distinct_values(data, None).values if (dummy or count) else None
        designs = ArrayDesigns(keep)
        effects = array_effects(data, bool(dummy), distinct, bool(count))
        touched = {j: [j] for j in range(len(data.exog_names))}
        fixed = _atexog(atexog, data, None, None)
    if not effects:
        raise ValueError("get_margeff: the model has no variables besides the intercept")
    ey, ex = method.startswith("ey"), method.endswith("ex")
    if at == "all":
        return _all(res, data, designs, effects, lik, B, ey, ex, fixed, method)
    if at == "overall":
        values, grads = _overall(data, designs, effects, lik, B, ey, ex, fixed)
    else:
        values, grads = _at_point(data, designs, effects, lik, B, ey, ex, at, fixed)
    aliased = [not keep[touched[e.variable]].any() if touched[e.variable] else False
               for e in effects]
    return _assemble(res, lik, keep, effects, values, grads, at, method, bool(dummy), aliased)


def _column_labels(data) -> list:
    """The column labels of the formula's DataFrame (pandas or Dask)."""
    if data.frame is not None:
        return list(data.frame.columns)
    return list(data.spec.columns)


def _ranges(data, columns: list) -> dict:
    """(min, max) of each numeric column over the rows of the fit (one reduce): where a
    spline's boundary knots lie."""
    if not columns:
        return {}

    def piece(rows, X, off, f) -> np.ndarray:
        v = np.column_stack([rows[c].to_numpy(dtype=float) for c in columns])
        return Stack([np.vstack([np.nanmin(v, axis=0), np.nanmax(v, axis=0)])])

    both = data.reduce_rows(piece, Stack([]), block_rows(len(columns)))
    if not both.parts:
        return {}
    mm = both.array()
    lo, hi = np.nanmin(mm[0::2], axis=0), np.nanmax(mm[1::2], axis=0)
    return {c: (float(a), float(b)) for c, a, b in zip(columns, lo, hi, strict=True)}


def _atexog(atexog, data, columns: list | None, numeric: list | None) -> dict:
    """``atexog`` as {variable: value}: statsmodels' dict by zero-based design-column
    position (the constant counted), or by design-column or data-column name.

    Raises
    ------
    ValueError
        A key that is no variable of the model, or a value that is not a number.
    """
    if atexog is None:
        return {}
    if not isinstance(atexog, dict):
        raise ValueError("atexog must be a dict {column: value} (a position in the design, "
                         f"the constant counted, or a column name), got {type(atexog).__name__}")
    names = list(data.exog_names)
    out: dict = {}
    for key, value in atexog.items():
        name = names[key] if isinstance(key, (int, np.integer)) and 0 <= key < len(names) \
            else key
        if columns is None:  # an array model: a variable is a design column
            if name not in names:
                raise ValueError(f"atexog: {key!r} is not a column of the design {names}")
            var = names.index(name)
        else:
            if name not in (numeric or []):
                what = f"{key!r} (design column {name!r})" if name != key else repr(key)
                raise ValueError(f"atexog: {what} is not a numeric variable of the formula; "
                                 f"give a column of the data ({numeric}) or its position in "
                                 "the design")
            var = name
        try:
            out[var] = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"atexog: the value of {key!r} must be a number, got "
                             f"{value!r}") from None
    return out


def _effect_value(designs, eff: Effect, rows, lik, B, X, off, w, ey, ex, per_row=False,
                  refs: dict | None = None):
    """The (summed or per-row) value of one effect over ``rows`` (and its gradient)."""
    v = eff.variable
    if not eff.discrete:
        scale = w * designs.value(rows, v) if ex else w
        return _derivative(lik, B, X, designs.derivative(rows, v), off, scale, ey, per_row)
    move = designs.shifting if eff.shift else designs.setting
    key = (v, eff.ref, eff.shift)
    X_ref = refs.get(key) if refs is not None else None
    if X_ref is None:
        X_ref = designs.build(move(rows, v, eff.ref))
        if refs is not None:
            refs[key] = X_ref
    X_level = designs.build(move(rows, v, eff.level))
    out = _discrete(lik, B, X_level, X_ref, off, w, ey, per_row)
    if eff.shift:  # statsmodels' count effect: (F(x + 1) - F(x - 1)) / 2
        return out / 2.0 if per_row else (out[0] / 2.0, out[1] / 2.0)
    return out


def _overall(data, designs, effects, lik, B, ey, ex, fixed):
    """Average of the per-row effects: one reduce over the rows, each piece's weighted sums."""
    k = designs.keep.size

    def piece(rows, X_all, off, f) -> tuple:
        if fixed:
            rows = designs.at_means(rows, fixed)
        X = designs.build(rows) if fixed else X_all[:, designs.keep]
        refs: dict = {}
        out = tuple(_effect_value(designs, eff, rows, lik, B, X, off, f, ey, ex, refs=refs)
                    for eff in effects)
        return (float(f.sum()), out)

    M, G = lik.n_outputs, B.size
    zero = (0.0, tuple((np.zeros(M), np.zeros((M, G))) for _ in effects))
    total, sums = data.reduce_rows(piece, zero, block_rows(4 * k))
    return [v / total for v, _ in sums], [g / total for _, g in sums]


def _all(res, data, designs, effects, lik, B, ey, ex, fixed, method):
    """The effect at every row (statsmodels' ``at="all"``): a DataFrame, rows x effects (a
    multinomial model: columns (level, effect)); no standard errors."""
    k = designs.keep.size

    def piece(rows, X_all, off, f) -> Stack:
        if fixed:
            rows = designs.at_means(rows, fixed)
        X = designs.build(rows) if fixed else X_all[:, designs.keep]
        one = np.ones(X.shape[0])
        vals = [_effect_value(designs, eff, rows, lik, B, X, off, one, ey, ex, per_row=True)
                for eff in effects]
        labels = rows.index.to_numpy() if isinstance(rows, pd.DataFrame) else np.array([])
        return Stack([np.stack(vals, axis=1)]), Stack([labels])  # (r, E, M), the rows' labels

    got, labels = data.reduce_rows(piece, (Stack([]), Stack([])), block_rows(4 * k))
    values = got.array()
    index = data.index if isinstance(data.index, pd.Index) else (
        pd.Index(labels.array()) if labels.array().size else pd.RangeIndex(values.shape[0]))
    labels = [e.label for e in effects]
    if lik.n_outputs > 1:
        fit_order = [res.ref, *res.params.columns]
        order = [fit_order.index(level) for level in res.levels]
        values = values[:, :, order].transpose(0, 2, 1).reshape(values.shape[0], -1)
        cols = pd.MultiIndex.from_product([res.levels, labels], names=["level", "term"])
    else:
        values, cols = values[:, :, 0], pd.Index(labels, name="term")
    return RowMarginalEffects(pd.DataFrame(values, index=index, columns=cols), method)


class RowMarginalEffects:
    """The marginal effects at every row of the fit (``get_margeff(at="all")``), as
    statsmodels gives them: no standard errors.

    Attributes
    ----------
    margeff : pandas.DataFrame
        One row per row of the fit, one column per effect.
    at : str
        ``"all"``.
    method : str
    """

    def __init__(self, margeff: pd.DataFrame, method: str) -> None:
        self.margeff, self.at, self.method = margeff, "all", method

    def summary_frame(self) -> pd.DataFrame:
        """The per-row effects (a copy)."""
        return self.margeff.copy()

    def __repr__(self) -> str:
        return f"<RowMarginalEffects: {self.method} at every row, {self.margeff.shape}>"


def _at_point(data, designs, effects, lik, B, ey, ex, at, fixed):
    """Effects at one design row: the numeric variables at their means, medians or 0 and the
    design rows built from them averaged (``"mean"``: categorical variables' indicator columns
    at their means, Stata's ``atmeans``), their medians (``"median"``) or at the reference
    levels (``"zero"``)."""
    k = designs.keep.size
    size = block_rows(4 * k)
    names = _point_variables(effects)

    def prepared(rows):
        return designs.at_means(rows, fixed) if fixed else rows

    if at == "mean":
        def sums(rows, X, off, f) -> tuple:
            rows = prepared(rows)
            return (float(f.sum()), float(f @ off),
                    np.array([f @ designs.value(rows, v) for v in names]))

        total, off_sum, value_sums = data.reduce_rows(
            sums, (0.0, 0.0, np.zeros(len(names))), size)
        point = dict(zip(names, (value_sums / total).tolist(), strict=True))
        off_at = off_sum / total
    elif at == "median":  # unweighted, as statsmodels' np.median of each column
        def values(rows, X, off, f) -> Stack:
            rows = prepared(rows)
            return Stack([np.column_stack([designs.value(rows, v) for v in names] + [off])])

        med = np.median(data.reduce_rows(values, Stack([]), size).array(), axis=0)
        point, off_at = dict(zip(names, med[:-1].tolist(), strict=True)), float(med[-1])
    else:
        point, off_at = {v: 0.0 for v in names}, 0.0
    references = {e.variable: e.ref for e in effects if e.categorical} if at == "zero" else {}
    keys: list = [("X",)]  # ("X",), ("set"/"shift", v, value) or ("d", v)
    for eff in effects:
        v = eff.variable
        kind = "shift" if eff.shift else "set"
        for key in ([(kind, v, eff.level), (kind, v, eff.ref)] if eff.discrete
                    else [("d", v)]):
            if key not in keys:
                keys.append(key)

    def designs_at(rows, X, off, f) -> list:
        rows = designs.at_means(prepared(rows), point)
        for v, ref in references.items():
            rows = designs.setting(rows, v, ref)
        out = []
        for key in keys:
            if key[0] == "X":
                out.append(designs.build(rows))
            elif key[0] == "d":
                out.append(designs.derivative(rows, key[1]))
            else:
                move = designs.shifting if key[0] == "shift" else designs.setting
                out.append(designs.build(move(rows, key[1], key[2])))
        return out

    if at == "median":
        def stacked(rows, X, off, f) -> tuple:
            return tuple(Stack([d]) for d in designs_at(rows, X, off, f))

        parts = data.reduce_rows(stacked, tuple(Stack([]) for _ in keys), size)
        acc = {key: np.median(a.array(), axis=0) for key, a in zip(keys, parts, strict=True)}
    else:
        def averaged(rows, X, off, f) -> tuple:
            return (float(f.sum()),) + tuple(f @ d for d in designs_at(rows, X, off, f))

        got = data.reduce_rows(averaged, (0.0,) + tuple(np.zeros(k) for _ in keys), size)
        acc = {key: a / got[0] for key, a in zip(keys, got[1:], strict=True)}
    one, off = np.ones(1), np.array([off_at])
    X = acc["X",][None, :]
    values, grads = [], []
    for eff in effects:
        v = eff.variable
        if eff.discrete:
            kind = "shift" if eff.shift else "set"
            val, grad = _discrete(lik, B, acc[kind, v, eff.level][None, :],
                                  acc[kind, v, eff.ref][None, :], off, one, ey)
            if eff.shift:
                val, grad = val / 2.0, grad / 2.0
        else:
            scale = one * point[v] if ex else one
            val, grad = _derivative(lik, B, X, acc["d", v][None, :], off, scale, ey)
        values.append(val)
        grads.append(grad)
    return values, grads


def _assemble(res, lik, keep, effects, values, grads, at, method, dummy,
              aliased: list) -> MarginalEffects:
    """Label the effects, and their covariance G V G' with the fit's covariance; the effect
    of a variable whose every design column is aliased is NaN, as its coefficients."""
    values = np.array([np.atleast_1d(v) for v in values], dtype=float)  # (E, M)
    G = np.array(grads, dtype=float)  # (E, M, K1 r)
    gone = np.asarray(aliased, dtype=bool)
    values[gone], G[gone] = np.nan, np.nan
    labels = [e.label for e in effects]
    kept = kept_parameters(res, lik, keep.size)[2]  # equation-major, then extras
    V = res.cov_params().to_numpy()[np.ix_(kept, kept)]
    if lik.n_outputs > 1:  # one effect per level of the response
        order = res.natural_order  # the likelihood's outputs in the levels' natural order
        values, G = values[:, order], G[:, order, :]
        index = pd.MultiIndex.from_product([res.levels, labels], names=["level", "term"])
        values, G = values.T.ravel(), G.transpose(1, 0, 2).reshape(-1, G.shape[2])
        kinds = [_kind(e) for _ in res.levels for e in effects]
        quantile = stats.norm
    else:
        index = pd.Index(labels, name="term")
        values, G = values[:, 0], G[:, 0, :]
        kinds = [_kind(e) for e in effects]
        quantile = stats.t(res.df_resid) if res.tvalues.name == "t" else stats.norm
    cov = G @ V @ G.T
    title = f"{type(res.model).__name__} Marginal Effects ({method}, at {at}; nobs = " \
            f"{num(res.nobs)})"
    return MarginalEffects(values, (cov + cov.T) / 2.0, index, kinds, at, method, dummy,
                           quantile, title, res.cov_type)


def _kind(effect: Effect) -> str:
    return "discrete" if effect.discrete else "derivative"
