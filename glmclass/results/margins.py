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
- ``at="overall"``: the average of the per-row effects (weighted by frequency weights);
  ``at="mean"``: the effect at the means of the numeric variables, categorical variables as
  observed and the design rows averaged (for indicator columns: the level proportions, as
  Stata's ``atmeans``).

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

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..formula.parse import names_in, parse
from ..likelihoods import likelihood_of
from ..rows.blocks import block_rows
from ..summary import Summary
from .base import num

METHODS = ("dydx", "eyex", "dyex", "eydx")
ATS = ("overall", "mean")
#: Relative step of the central differences in a numeric variable (before extrapolation).
STEP = 1e-3


@dataclass(frozen=True)
class Effect:
    """One marginal effect: a derivative in ``variable``, or a discrete change of it from
    ``ref`` to ``level``; ``label`` is how the results name it."""

    label: str
    variable: object  # a column of the data (formula), or a design position (arrays)
    discrete: bool
    level: object = None
    ref: object = None


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
        with np.errstate(invalid="ignore"):
            se = np.sqrt(np.maximum(np.diag(cov), 0.0))
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


# --- what varies ------------------------------------------------------------------------------


def columns_of(code: str, frame: pd.DataFrame) -> list:
    """Columns of ``frame`` that the formula code ``code`` uses (identifiers and ``Q('...')``
    quoting)."""
    names = names_in(parse(code, list(frame.columns)).codes)
    return [c for c in frame.columns if str(c) in names]


def _variables(spec, frame: pd.DataFrame) -> tuple[list[str], dict[str, tuple]]:
    """Data columns of the right-hand side in order of appearance: every one, and the
    categorical ones with (categories, reference, labels of the levels)."""
    info = spec.design_info
    order, categorical = [], {}
    for term in info.terms:
        for sub in info.term_codings[term]:
            for factor in sub.factors:
                cols = columns_of(factor.code, frame)
                order += [c for c in cols if c not in order]
                finfo = info.factor_infos[factor]
                if finfo.type != "categorical":
                    continue
                if len(cols) != 1:
                    raise ValueError(f"get_margeff: the categorical term {factor.name()!r} uses "
                                     f"{len(cols)} columns ({cols}); marginal effects need one")
                col, values = cols[0], frame[cols[0]]
                if not set(pd.unique(values.dropna())) <= set(finfo.categories):
                    # an expression of the column (I(race == 'white'), C(age > 30))
                    if values.dtype.kind in "biuf" and values.dtype.kind != "b":
                        raise ValueError(
                            f"get_margeff: the numeric column {col!r} enters the categorical "
                            f"term {factor.name()!r} through an expression, where it has no "
                            "derivative; enter it as a column of its own or fit the category "
                            "as a column")
                    continue
                if col not in categorical or len(term.factors) == 1:  # prefer a main effect
                    categorical[col] = _levels(factor, finfo, sub.contrast_matrices.get(factor))
    return order, categorical


def _levels(factor, finfo, contrast) -> tuple:
    """(categories, reference, label of each category) of a categorical factor."""
    cats = list(finfo.categories)
    ref, labels = cats[0], {c: f"{factor.name()}[T.{c}]" for c in cats}
    if contrast is not None:
        mat = np.asarray(contrast.matrix)
        zero = np.flatnonzero(~mat.any(axis=1))
        if zero.size == 1 and mat.shape[1] == len(cats) - 1:  # treatment coding
            ref = cats[int(zero[0])]
            others = [c for c in cats if c != ref]
            labels.update({c: f"{factor.name()}{s}"
                           for c, s in zip(others, contrast.column_suffixes, strict=True)})
    return cats, ref, labels


def _binary(values: np.ndarray) -> bool:
    v = values[~np.isnan(values)]
    return v.size > 0 and bool(np.all((v == 0) | (v == 1))) and np.unique(v).size == 2


def formula_effects(spec, frame: pd.DataFrame, dummy: bool) -> list[Effect]:
    """The effects of a formula model, in order of the variables' first appearance."""
    order, categorical = _variables(spec, frame)
    out = []
    for col in order:
        if col in categorical:
            cats, ref, labels = categorical[col]
            out += [Effect(labels[c], col, True, c, ref) for c in cats if c != ref]
            continue
        values = frame[col]
        if values.dtype.kind not in "biuf":  # a string column inside a numeric term
            cats = sorted(pd.unique(values.dropna()), key=str)
            out += [Effect(f"{col}[T.{c}]", col, True, c, cats[0]) for c in cats[1:]]
        elif dummy and _binary(values.to_numpy(dtype=float)):
            out.append(Effect(str(col), col, True, 1, 0))
        else:
            out.append(Effect(str(col), col, False))
    return out


def array_effects(data, dummy: bool, distinct: dict | None = None) -> list[Effect]:
    """One effect per design column except the constant, as statsmodels; ``distinct``: the
    distinct values of each column (:func:`distinct_values`), read for ``dummy``."""
    out = []
    for j, name in enumerate(data.exog_names):
        if j == data.intercept_index:
            continue
        binary = dummy and _binary(np.asarray(distinct[j], dtype=float))
        out.append(Effect(name, j, binary, 1.0 if binary else None, 0.0 if binary else None))
    return out


# --- designs at modified data -----------------------------------------------------------------


class FormulaDesigns:
    """Designs (kept columns) of data rows changed through the stored formula design;
    ``features``: the formula's columns the model uses (``ModelData.feature_mask``; None:
    all)."""

    def __init__(self, spec, keep: np.ndarray, features: np.ndarray | None = None) -> None:
        self.spec, self.keep = spec, keep
        used = np.arange(keep.size) if features is None else np.flatnonzero(features)
        self.columns = used[keep]

    def build(self, rows: pd.DataFrame) -> np.ndarray:
        return self.spec.exog(rows)[:, self.columns]

    def value(self, rows: pd.DataFrame, v) -> np.ndarray:
        return rows[v].to_numpy(dtype=float)

    def setting(self, rows: pd.DataFrame, v, value) -> pd.DataFrame:
        col = rows[v]
        if isinstance(col.dtype, pd.CategoricalDtype):
            return rows.assign(**{v: pd.Categorical([value] * len(rows),
                                                   categories=col.cat.categories)})
        return rows.assign(**{v: np.repeat(np.asarray([value], dtype=object if
                                                      col.dtype.kind == "O" else None),
                                           len(rows))})

    def derivative(self, rows: pd.DataFrame, v) -> np.ndarray:
        x = rows[v].to_numpy(dtype=float)
        floor = STEP * np.mean(np.abs(x)) if np.any(x) else 1.0
        h = STEP * np.maximum(np.abs(x), floor)

        def central(step: np.ndarray) -> np.ndarray:
            up = self.build(rows.assign(**{v: x + step}))
            down = self.build(rows.assign(**{v: x - step}))
            return (up - down) / (2.0 * step[:, None])

        return (4.0 * central(h / 2.0) - central(h)) / 3.0  # Richardson: error O(h^4)

    def at_means(self, rows: pd.DataFrame, means: dict) -> pd.DataFrame:
        return rows.assign(**means) if means else rows


class ArrayDesigns:
    """Designs of an array model: a variable is a design column."""

    def __init__(self, keep: np.ndarray) -> None:
        self.keep = keep

    def build(self, rows: np.ndarray) -> np.ndarray:
        return rows[:, self.keep]

    def value(self, rows: np.ndarray, j: int) -> np.ndarray:
        return rows[:, j]

    def setting(self, rows: np.ndarray, j: int, value) -> np.ndarray:
        out = rows.copy()
        out[:, j] = value
        return out

    def derivative(self, rows: np.ndarray, j: int) -> np.ndarray:
        d = np.zeros((rows.shape[0], self.keep.size))
        d[:, j] = 1.0
        return d[:, self.keep]

    def at_means(self, rows: np.ndarray, means: dict) -> np.ndarray:
        out = rows.copy()
        for j, m in means.items():
            out[:, j] = m
        return out


# --- distinct values of the variables, over the rows ---------------------------------------------

#: Distinct values kept per numeric column: enough to tell 0/1 columns and expressions of a
#: column inside a categorical term (the labels of categorical columns are all kept).
NUMERIC_DISTINCT = 64


class Distinct:
    """Distinct values of some columns, merged over pieces of rows (``a + b``)."""

    def __init__(self, values: dict, dtypes: dict) -> None:
        self.values, self.dtypes = values, dtypes

    def __add__(self, other: Distinct) -> Distinct:
        values = dict(self.values)
        for key, v in other.values.items():
            if key in values:
                both = np.concatenate([np.asarray(values[key], dtype=object),
                                       np.asarray(v, dtype=object)])
                v = _capped(pd.unique(both), other.dtypes[key])
            values[key] = v
        return Distinct(values, {**self.dtypes, **other.dtypes})

    __radd__ = __add__

    def frame(self) -> pd.DataFrame:
        """One column per variable holding its distinct values (padded by repeating the
        first), in its dtype: what the effect detection reads of the data."""
        n = max((len(v) for v in self.values.values()), default=0)
        cols = {}
        for key, v in self.values.items():
            pad = np.resize(np.asarray(v, dtype=object), n) if len(v) else np.full(n, np.nan)
            cols[key] = pd.Series(pad, dtype=self.dtypes[key])
        return pd.DataFrame(cols)


def _capped(values: np.ndarray, dtype) -> np.ndarray:
    numeric = getattr(dtype, "kind", "O") in "iufb"
    return values[:NUMERIC_DISTINCT] if numeric else values


def distinct_values(data, columns: list | None) -> Distinct:
    """Distinct values of the formula's ``columns`` (or of every design column), one pass of
    :meth:`~glmclass.data.model_data.ModelData.reduce_rows`."""

    def piece(raw, X, off, f) -> Distinct:
        if columns is None:
            return Distinct({j: _capped(pd.unique(X[:, j]), X.dtype) for j in range(X.shape[1])},
                            {j: X.dtype for j in range(X.shape[1])})
        return Distinct({c: _capped(pd.unique(raw[c]), raw[c].dtype) for c in columns},
                        {c: raw[c].dtype for c in columns})

    return data.reduce_rows(piece, Distinct({}, {}), block_rows(8))


def _formula_columns(spec, names) -> list:
    """The data columns the right-hand side reads (any factor of any term)."""
    probe = pd.DataFrame(columns=list(names))
    info = spec.design_info
    out: list = []
    for term in info.terms:
        for sub in info.term_codings[term]:
            for factor in sub.factors:
                out += [c for c in columns_of(factor.code, probe) if c not in out]
    return out


# --- the effects and their gradients ----------------------------------------------------------


def _derivative(lik, B, X, D, off, w, ey: bool) -> tuple[np.ndarray, np.ndarray]:
    """sum_i w_i dF(x_i)/dv (or d log F / dv) and its gradient in the parameters B (the kept
    ones, as the likelihood's ``mean`` takes them), (M,) and (M, n_params)."""
    m, gm = lik.mean_dx(X, B, off, D)
    if ey:
        F = lik.mean(X, B, off)
        gm = gm / F[:, :, None] - (m / F**2)[:, :, None] * lik.mean_jacobian(X, B, off)
        m = m / F
    return w @ m, np.einsum("n,nmg->mg", w, gm)


def _discrete(lik, B, X_level, X_ref, off, w, ey: bool) -> tuple[np.ndarray, np.ndarray]:
    """sum_i w_i [T(F(X_level B)) - T(F(X_ref B))], T = identity or log, and its gradient."""
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


def _mean_variables(effects: list[Effect], designs, distinct) -> list:
    """The numeric variables set to their means by ``at="mean"`` (categorical ones stay as
    observed)."""
    out: list = []
    for eff in effects:
        v = eff.variable
        if v not in out and _numeric(designs, distinct, v) and (not eff.discrete
                                                                or eff.ref == 0):
            out.append(v)
    return out


def get_margeff(res, at: str = "overall", method: str = "dydx",
                dummy: bool = False) -> MarginalEffects:
    """Marginal effects of a GLM-type or multinomial fit (see the module docstring): sums
    over the rows of the fit, piece by piece (:meth:`ModelData.reduce_rows`), with the mean
    and its derivatives from the model's likelihood."""
    if at not in ATS:
        raise ValueError(f"at must be 'overall' or 'mean', got {at!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(dummy, (bool, np.bool_)):
        raise ValueError(f"dummy must be True or False, got {dummy!r}")
    m = res.model
    data = m.data
    lik = likelihood_of(m)
    keep, B, _ = kept_parameters(res, lik, len(data.exog_names))
    if data.spec is not None:
        columns = _formula_columns(data.spec, _column_labels(data))
        distinct = distinct_values(data, columns).frame()
        designs = FormulaDesigns(data.spec, keep, data.feature_mask)
        effects = formula_effects(data.spec, distinct, dummy)
    else:
        distinct = distinct_values(data, None).values if dummy else None
        designs = ArrayDesigns(keep)
        effects = array_effects(data, dummy, distinct)
    if not effects:
        raise ValueError("get_margeff: the model has no variables besides the intercept")
    ey, ex = method.startswith("ey"), method.endswith("ex")
    if at == "mean":
        values, grads = _at_mean(data, designs, effects, lik, B, ey, ex, distinct)
    else:
        values, grads = _overall(data, designs, effects, lik, B, ey, ex)
    return _assemble(res, lik, keep, effects, values, grads, at, method, bool(dummy))


def _column_labels(data) -> list:
    """The column labels of the formula's DataFrame (pandas or Dask)."""
    if data.frame is not None:
        return list(data.frame.columns)
    return list(data.spec.columns)


def _overall(data, designs, effects, lik, B, ey, ex):
    """Average of the per-row effects: one reduce over the rows, each piece's weighted sums."""
    k = designs.keep.size

    def piece(rows, X_all, off, f) -> tuple:
        X = X_all[:, designs.keep]
        refs: dict = {}
        out = []
        for eff in effects:
            v = eff.variable
            if eff.discrete:
                if (v, eff.ref) not in refs:
                    refs[v, eff.ref] = designs.build(designs.setting(rows, v, eff.ref))
                X_level = designs.build(designs.setting(rows, v, eff.level))
                out.append(_discrete(lik, B, X_level, refs[v, eff.ref], off, f, ey))
            else:
                scale = f * designs.value(rows, v) if ex else f
                out.append(_derivative(lik, B, X, designs.derivative(rows, v), off, scale, ey))
        return (float(f.sum()), tuple(out))

    M, G = lik.n_outputs, B.size
    zero = (0.0, tuple((np.zeros(M), np.zeros((M, G))) for _ in effects))
    total, sums = data.reduce_rows(piece, zero, block_rows(4 * k))
    return [v / total for v, _ in sums], [g / total for _, g in sums]


def _at_mean(data, designs, effects, lik, B, ey, ex, distinct):
    """Effects at one averaged design row (numeric variables at their means): one reduce for
    the means, one for the averaged design rows."""
    k = designs.keep.size
    size = block_rows(4 * k)
    names = _mean_variables(effects, designs, distinct)

    def sums(rows, X, off, f) -> tuple:
        return (float(f.sum()), float(f @ off),
                np.array([f @ designs.value(rows, v) for v in names]))

    total, off_sum, value_sums = data.reduce_rows(sums, (0.0, 0.0, np.zeros(len(names))), size)
    means = dict(zip(names, (value_sums / total).tolist(), strict=True))
    keys: list = [("X",)]  # ("X",), ("set", v, value) or ("d", v)
    for eff in effects:
        v = eff.variable
        for key in ([("set", v, eff.level), ("set", v, eff.ref)] if eff.discrete
                    else [("d", v)]):
            if key not in keys:
                keys.append(key)

    def designs_at(rows, X, off, f) -> tuple:
        rows = designs.at_means(rows, means)
        out = []
        for key in keys:
            if key[0] == "X":
                out.append(f @ designs.build(rows))
            elif key[0] == "d":
                out.append(f @ designs.derivative(rows, key[1]))
            else:
                out.append(f @ designs.build(designs.setting(rows, key[1], key[2])))
        return tuple(out)

    acc = data.reduce_rows(designs_at, tuple(np.zeros(k) for _ in keys), size)
    acc = {key: a / total for key, a in zip(keys, acc, strict=True)}
    one, off = np.ones(1), np.array([off_sum / total])
    X = acc["X",][None, :]
    values, grads = [], []
    for eff in effects:
        v = eff.variable
        if eff.discrete:
            val, grad = _discrete(lik, B, acc["set", v, eff.level][None, :],
                                  acc["set", v, eff.ref][None, :], off, one, ey)
        else:
            scale = one * means[v] if ex else one
            val, grad = _derivative(lik, B, X, acc["d", v][None, :], off, scale, ey)
        values.append(val)
        grads.append(grad)
    return values, grads


def _assemble(res, lik, keep, effects, values, grads, at, method, dummy) -> MarginalEffects:
    """Label the effects, and their covariance G V G' with the fit's covariance."""
    values = np.array([np.atleast_1d(v) for v in values])  # (E, M)
    G = np.array(grads)  # (E, M, K1 r)
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
