"""The variables of a fitted model's marginal effects and the designs of changed rows
(:mod:`glmclass.results.margins`): which variables a formula's terms read, which of them are
categorical, and the design matrices of data rows with a variable set, shifted or moved by a
small step (central differences with Richardson extrapolation; one-sided differences at the
boundary of a spline's knots, where the design cannot be evaluated beyond them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..formula.parse import names_in, parse
from ..rows.blocks import block_rows

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
    #: A level of a categorical variable (never set to a mean or median).
    categorical: bool = False
    #: A count variable (``count=True``): ``level``/``ref`` are shifts +1/-1 of its value and
    #: the effect is half the change, statsmodels' ``(F(x + 1) - F(x - 1)) / 2``.
    shift: bool = False


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


def formula_effects(spec, frame: pd.DataFrame, dummy: bool, count: bool = False
                    ) -> list[Effect]:
    """The effects of a formula model, in order of the variables' first appearance (``frame``:
    distinct values of each column, enough to tell 0/1 and count variables)."""
    order, categorical = _variables(spec, frame)
    out = []
    for col in order:
        if col in categorical:
            cats, ref, labels = categorical[col]
            out += [Effect(labels[c], col, True, c, ref, categorical=True)
                    for c in cats if c != ref]
            continue
        values = frame[col]
        if values.dtype.kind not in "biuf":  # a string column inside a numeric term
            cats = sorted(pd.unique(values.dropna()), key=str)
            out += [Effect(f"{col}[T.{c}]", col, True, c, cats[0], categorical=True)
                    for c in cats[1:]]
        elif dummy and _binary(values.to_numpy(dtype=float)):
            out.append(Effect(str(col), col, True, 1, 0))
        elif count and _count(values.to_numpy(dtype=float)):
            out.append(Effect(str(col), col, True, 1.0, -1.0, shift=True))
        else:
            out.append(Effect(str(col), col, False))
    return out


def _count(values: np.ndarray) -> bool:
    """statsmodels' count variables: whole, non-negative, not constant and not 0/1."""
    v = values[~np.isnan(values)]
    return (v.size > 1 and bool(np.all(v % 1.0 == 0)) and bool(np.all(v >= 0))
            and np.unique(v).size > 1 and not _binary(v))


def array_effects(data, dummy: bool, distinct: dict | None = None,
                  count: bool = False) -> list[Effect]:
    """One effect per design column except the constant, as statsmodels; ``distinct``: the
    distinct values of each column (:func:`distinct_values`), read for ``dummy`` and
    ``count``."""
    out = []
    for j, name in enumerate(data.exog_names):
        if j == data.intercept_index:
            continue
        values = np.asarray(distinct[j], dtype=float) if distinct is not None else None
        if dummy and _binary(values):
            out.append(Effect(name, j, True, 1.0, 0.0))
        elif count and _count(values):
            out.append(Effect(name, j, True, 1.0, -1.0, shift=True))
        else:
            out.append(Effect(name, j, False))
    return out


def variable_columns(spec, names: list, columns: list, exog_names: list) -> dict:
    """The design columns (positions in ``exog_names``) of the terms each data column enters,
    by column (an ``offset()`` term has none)."""
    probe = pd.DataFrame(columns=list(names))
    info = spec.design_info
    where = {name: j for j, name in enumerate(exog_names)}
    out: dict = {c: [] for c in columns}
    for term, slc in info.term_slices.items():
        pos = [where[n] for n in info.column_names[slc] if n in where]
        for sub in info.term_codings[term]:
            for factor in sub.factors:
                for c in columns_of(factor.code, probe):
                    if c in out:
                        out[c] += pos
    return out


# --- designs at modified data -----------------------------------------------------------------


class FormulaDesigns:
    """Designs (kept columns) of data rows changed through the stored formula design;
    ``features``: the formula's columns the model uses (``ModelData.feature_mask``; None:
    all)."""

    def __init__(self, spec, keep: np.ndarray, bounds: dict | None = None,
                 features: np.ndarray | None = None) -> None:
        self.spec, self.keep = spec, keep
        #: (min, max) of each numeric variable over the rows of the fit.
        self.bounds = bounds or {}
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

    def shifting(self, rows: pd.DataFrame, v, delta: float) -> pd.DataFrame:
        return rows.assign(**{v: rows[v].to_numpy(dtype=float) + delta})

    def derivative(self, rows: pd.DataFrame, v) -> np.ndarray:
        x = rows[v].to_numpy(dtype=float)
        floor = STEP * np.mean(np.abs(x)) if np.any(x) else 1.0
        h = STEP * np.maximum(np.abs(x), floor)

        def at(values: np.ndarray) -> np.ndarray:
            return self.build(rows.assign(**{v: values}))

        def central(step: np.ndarray) -> np.ndarray:
            return (at(x + step) - at(x - step)) / (2.0 * step[:, None])

        try:
            return (4.0 * central(h / 2.0) - central(h)) / 3.0  # Richardson: error O(h^4)
        except Exception as exc:  # noqa: BLE001 - a transform defined on a closed range
            bounds = self.bounds.get(v)
            if bounds is None:
                raise ValueError(f"get_margeff: the design of {v!r} cannot be evaluated a small "
                                 f"step beyond its values ({exc}); enter {v!r} through a "
                                 "transform defined around every value") from None
        # one-sided second-order differences, away from the nearer bound of the data (a
        # spline's boundary knots): Richardson-extrapolated, error O(h^3)
        lo, hi = bounds
        d = np.where(x + 2.0 * h <= hi, 1.0, -1.0)
        d = np.where(x - 2.0 * h < lo, 1.0, d)
        f0 = self.build(rows)

        def one_sided(step: np.ndarray) -> np.ndarray:
            s = d * step
            return d[:, None] * (-3.0 * f0 + 4.0 * at(x + s) - at(x + 2.0 * s)) / (
                2.0 * step[:, None])

        return (4.0 * one_sided(h / 2.0) - one_sided(h)) / 3.0

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

    def shifting(self, rows: np.ndarray, j: int, delta: float) -> np.ndarray:
        out = rows.copy()
        out[:, j] = out[:, j] + delta
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


def formula_columns(spec, names) -> list:
    """The data columns the right-hand side reads (any factor of any term)."""
    probe = pd.DataFrame(columns=list(names))
    info = spec.design_info
    out: list = []
    for term in info.terms:
        for sub in info.term_codings[term]:
            for factor in sub.factors:
                out += [c for c in columns_of(factor.code, probe) if c not in out]
    return out
