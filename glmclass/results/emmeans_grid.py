"""The reference grid of estimated marginal means (R's ``emmeans::ref_grid``).

The grid holds one row per combination of the variables of the right-hand side: every level of
each categorical variable, and each numeric covariate at its mean over the rows of the fit
(unweighted, as ``ref_grid``'s ``cov.reduce = mean``), or at the values given by ``at=``. A
numeric variable with at most two distinct values keeps both (``ref_grid``'s ``cov.keep =
"2"``): a 0/1 column is a grid dimension, not its mean. Each cell carries a count, the sum of
the frequency weights of the rows in it (``.wgt.``): what the ``"proportional"``, ``"outer"``
and ``"cells"`` weightings read. Numeric dimensions carry the counts of the categorical cells
they belong to.

The design rows of the grid come from the model's stored formula design
(:meth:`glmclass.data.model_data.ModelData.new_rows`), so every term (interactions, ``I()``,
transforms, ``offset()``) is evaluated at the grid's values; an offset given as an array
(``offset=``, ``exposure=``), not by the formula, is 0 on the grid. The facts the grid needs
(levels, means, ranges, counts) come from one pass over the rows
(:meth:`~glmclass.data.model_data.ModelData.reduce_rows`), so a Dask-fitted model builds the
same grid as the in-memory one.

References
----------
Searle, S. R., Speed, F. M. and Milliken, G. A. (1980). Population marginal means in the linear
model. *The American Statistician* 34(4), 216-221.
Lenth, R. V. (2023). *emmeans: Estimated Marginal Means*, R package version 1.8 (``ref_grid``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..formula.parse import names_in, parse
from ..rows.blocks import block_rows

#: A numeric variable with at most this many distinct values keeps them all in the grid
#: (emmeans' ``cov.keep = "2"``).
COV_KEEP = 2


@dataclass(frozen=True)
class Variable:
    """One dimension of the grid: a data column and its values there."""

    name: str
    values: tuple
    factor: bool


class GridFacts:
    """What one pass over the rows learns: per-cell counts of the categorical variables, and
    the sum, count, range and first distinct values of each numeric one; ``a + b`` merges."""

    def __init__(self, counts: np.ndarray, n: float, sums: np.ndarray, lows: np.ndarray,
                 highs: np.ndarray, distinct: tuple) -> None:
        self.counts, self.n, self.sums = counts, n, sums
        self.lows, self.highs, self.distinct = lows, highs, distinct

    def __add__(self, other: GridFacts) -> GridFacts:
        distinct = tuple(_first(a | b) for a, b in zip(self.distinct, other.distinct,
                                                        strict=True))
        return GridFacts(self.counts + other.counts, self.n + other.n, self.sums + other.sums,
                         np.fmin(self.lows, other.lows), np.fmax(self.highs, other.highs),
                         distinct)

    __radd__ = __add__


def _first(values: frozenset) -> frozenset:
    """At most COV_KEEP + 1 values: enough to tell a variable with COV_KEEP of them."""
    return values if len(values) <= COV_KEEP + 1 else frozenset(sorted(values)[:COV_KEEP + 1])


def design_terms(spec) -> list[list[tuple[str, tuple | None]]]:
    """The right-hand side's terms in the design's (patsy's) order, each as its factors:
    ``(code, levels)``, the levels of a categorical factor in the design's order, None for a
    numeric one. Read from patsy's design info, or formulaic's model spec
    (:meth:`~glmclass.formula.formulaic_engine.FormulaicSpec.factor_terms`)."""
    if spec.engine == "formulaic":
        return spec.factor_terms()
    info = spec.design_info
    out = []
    for term in info.terms:
        factors = []
        for factor in term.factors:
            finfo = info.factor_infos[factor]
            cats = tuple(finfo.categories) if finfo.type == "categorical" else None
            factors.append((factor.code, cats))
        out.append(factors)
    return out


def formula_variables(spec) -> tuple[list[str], dict[str, tuple]]:
    """The data columns of the right-hand side in order of first appearance, and the
    categorical ones with their levels (in the design's order).

    Raises
    ------
    ValueError
        For a categorical term built from an expression of a column (``C(age > 30)``) or of
        several columns: the grid needs each factor to be a column.
    """
    probe = list(spec.columns)
    order: list[str] = []
    levels: dict[str, tuple] = {}
    for term in design_terms(spec):
        for code, cats in term:
            names = names_in(parse(code, probe).codes)
            cols = [c for c in probe if c in names]
            order += [c for c in cols if c not in order]
            if cats is None:
                continue
            if len(cols) != 1 or not _is_column_factor(code, cols[0]):
                raise ValueError(
                    f"emmeans: the categorical term {code!r} is an expression of "
                    f"{cols or 'no column'}; the reference grid needs each factor to be a "
                    "column: add the derived column to the data and use it in the formula")
            levels.setdefault(cols[0], cats)
    return order, levels


def _is_column_factor(code: str, column: str) -> bool:
    """Whether a categorical factor is its column itself (``race``, ``C(race)``,
    ``C(race, Treatment('white'))``, ``Q('race')``), not an expression of it."""
    node = code.replace(" ", "")
    if node in (column, f"Q('{column}')", f'Q("{column}")'):
        return True
    for quoted in (column, f"Q('{column}')", f'Q("{column}")'):
        if node == f"C({quoted})" or node.startswith(f"C({quoted},"):
            return True
    return False


def learn_facts(data, order: list[str], levels: dict[str, tuple]) -> GridFacts:
    """One pass over the rows of the fit: the counts of the categorical cells and the
    summaries of the numeric variables."""
    factors = [c for c in order if c in levels]
    numeric = [c for c in order if c not in levels]
    dims = tuple(len(levels[c]) for c in factors)
    size = int(np.prod(dims)) if dims else 1
    inf = np.full(len(numeric), np.inf)
    zero = GridFacts(np.zeros(size), 0.0, np.zeros(len(numeric)), inf, -inf,
                     tuple(frozenset() for _ in numeric))

    def piece(raw, X, off, f) -> GridFacts:
        labels = {str(c): c for c in raw.columns}
        if factors:
            codes = [pd.Categorical(raw[labels[c]], categories=list(levels[c])).codes
                     for c in factors]
            ok = np.all(np.stack(codes) >= 0, axis=0)
            flat = np.ravel_multi_index([k[ok] for k in codes], dims)
            counts = np.bincount(flat, weights=f[ok], minlength=size).astype(float)
        else:
            counts = np.array([float(f.sum())])
        values = [raw[labels[c]].to_numpy(dtype=float) for c in numeric]
        return GridFacts(
            counts, float(len(raw)), np.array([v.sum() for v in values]),
            np.array([v.min() if v.size else np.inf for v in values]),
            np.array([v.max() if v.size else -np.inf for v in values]),
            tuple(_first(frozenset(np.unique(v)[:COV_KEEP + 1].tolist())) for v in values))

    return data.reduce_rows(piece, zero, block_rows(8))


class ReferenceGrid:
    """The grid: its variables (dimensions, in formula order) and the count of each cell.

    Attributes
    ----------
    variables : list of Variable
    counts : ndarray
        Shape ``tuple(len(v.values) for v in variables)``: the summed frequency weights of the
        rows in each cell (numeric dimensions repeat their categorical cell's count).
    """

    def __init__(self, variables: list[Variable], counts: np.ndarray) -> None:
        self.variables = variables
        self.counts = counts

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(v.values) for v in self.variables)

    def variable(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise ValueError(f"{name!r} is not a variable of the model's formula; its variables are "
                         f"{self.names}")

    def frame(self) -> pd.DataFrame:
        """Every cell as a row (C order: the last variable varies fastest)."""
        combos = list(itertools.product(*(v.values for v in self.variables)))
        cols = {v.name: [c[j] for c in combos] for j, v in enumerate(self.variables)}
        return pd.DataFrame(cols) if cols else pd.DataFrame(index=range(1))


def reference_grid(res, at: dict | None = None, covariates: str = "mean") -> ReferenceGrid:
    """The reference grid of a fit (see the module docstring).

    Parameters
    ----------
    res : results
        A fit from a formula.
    at : dict, optional
        Values of variables: a number or a list for a numeric covariate (a list makes it a
        dimension of the grid), a level or a list of levels for a categorical variable (a
        subset of its levels).
    covariates : {"mean", "range"}
        Where numeric covariates sit: their mean (``emmeans``) or their minimum and maximum
        (``joint_tests``' ``cov.reduce = range``).

    Raises
    ------
    ValueError
        For a model without a formula, an ``at=`` name that is not a variable, or a level the
        variable does not have.
    """
    data = res.model.data
    if data.spec is None:
        raise ValueError("emmeans needs a model built from a formula (Model.from_formula): the "
                         "reference grid is made of the formula's variables")
    order, levels = formula_variables(data.spec)
    at = {} if at is None else dict(at)
    unknown = [k for k in at if k not in order]
    if unknown:
        raise ValueError(f"at: {unknown} {'is' if len(unknown) == 1 else 'are'} not "
                         f"variables of the formula; its variables are {order}")
    facts = learn_facts(data, order, levels)
    variables, numeric_pos = [], 0
    for name in order:
        if name in levels:
            values = levels[name]
            if name in at:
                values = _chosen_levels(name, at[name], values)
            variables.append(Variable(name, tuple(values), True))
            continue
        j = numeric_pos
        numeric_pos += 1
        if name in at:
            given = np.atleast_1d(np.asarray(at[name], dtype=float))
            values = tuple(given.tolist())
        elif len(facts.distinct[j]) <= COV_KEEP:
            values = tuple(sorted(facts.distinct[j]))
        elif covariates == "range":
            values = (float(facts.lows[j]), float(facts.highs[j]))
        else:
            values = (float(facts.sums[j] / facts.n),)
        variables.append(Variable(name, values, False))
    return ReferenceGrid(variables, _cell_counts(variables, levels, facts.counts, at))


def _chosen_levels(name: str, chosen, values: tuple) -> tuple:
    """The levels ``at=`` keeps, in the design's order."""
    wanted = list(chosen) if isinstance(chosen, (list, tuple, np.ndarray, pd.Index)) \
        else [chosen]
    bad = [w for w in wanted if w not in values]
    if bad:
        raise ValueError(f"at: {name!r} has no level {bad[0]!r}; its levels are {list(values)}")
    return tuple(v for v in values if v in wanted)


def _cell_counts(variables: list[Variable], levels: dict, counts: np.ndarray,
                 at: dict) -> np.ndarray:
    """The counts on the grid's shape: categorical cells (restricted to the levels kept),
    repeated along the numeric dimensions."""
    factors = [v for v in variables if v.factor]
    table = counts.reshape(tuple(len(levels[v.name]) for v in factors))
    for axis, v in enumerate(factors):
        keep = [levels[v.name].index(x) for x in v.values]
        table = np.take(table, keep, axis=axis)
    shape = []
    for v in variables:
        shape.append(len(v.values) if v.factor else 1)
    table = table.reshape(shape)
    return np.broadcast_to(table, tuple(len(v.values) for v in variables)).copy()
