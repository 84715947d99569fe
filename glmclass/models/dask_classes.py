"""The multiclass models (MNLogit, LDA, QDA, naive Bayes) on Dask partitions.

Each function sets up a model the way its in-memory ``_setup`` does, with every full-length
step routed through the partitions: the levels come from the merged response facts (the
in-memory encoders read a small surrogate of the column, so labels and error messages are the
same), per-level totals and feature checks are one pass of per-partition results, and the
model reads its rows through a :class:`~glmclass.rows.dask.DaskBlocks` of encoded parts
``(X, codes, weights, offset)``. The per-row arrays the models keep (codes, weights, offsets)
are lazy Dask arrays chunked like the partitions.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
from dask import delayed

from ..data.dask import DaskModelData, lazy_column
from ..data.response import encode, levels_of, multiclass_response
from ..rows.dask import DaskBlocks
from .dask_glm import _check_weight_facts


def _coded(part: tuple, levels: list, with_arrays: bool) -> tuple:
    """``(X, codes, freq weights, offset)`` of one partition."""
    X, y, arrays, _ = part
    codes = encode(y, levels)
    if not with_arrays:
        return (X, codes, None, None)
    return (X, codes, arrays.get("freq_weights"), arrays.get("offset"))


def _level_totals(part: tuple, k: int) -> np.ndarray:
    _, codes, f, _ = part
    return np.bincount(codes, weights=f, minlength=k).astype(float)


def _source(data: DaskModelData, levels: list, with_arrays: bool) -> DaskBlocks:
    parts = data.encoded(_coded, levels, with_arrays)
    if data.persisted:
        parts = tuple(dask.persist(*parts))
    return DaskBlocks(parts, data.lengths, len(data.exog_names), y_dtype=np.intp)


def _lazy(data: DaskModelData, key: str, default: float) -> da.Array:
    if key in data.facts.arrays:
        return lazy_column(data.parts, data.lengths, key, (), np.float64)
    return da.full(data.nrows, default, chunks=(data.lengths,))


def mnlogit_setup(model, data: DaskModelData, ref) -> None:
    """:meth:`MNLogit._setup` on Dask data."""
    from .mnlogit import _tidy_labels

    _check_weight_facts(data.facts.arrays)
    name = data.endog_name
    surrogate = data.facts.response.surrogate()
    natural = levels_of(surrogate)
    _, fit_levels = multiclass_response(surrogate, name, ref)
    source = _source(data, fit_levels, True)
    k = len(fit_levels)
    totals = np.sum(dask.compute(*[delayed(_level_totals)(p, k) for p in source._parts]),
                    axis=0)
    if np.any(totals <= 0):
        lv = fit_levels[int(np.flatnonzero(totals <= 0)[0])]
        raise ValueError(f"level {lv!r} of {name!r} has zero total frequency weight: drop "
                         "the level (or its rows) before fitting")
    model.codes = lazy_column(source._parts, data.lengths, 1, (), np.intp)
    model.levels = _tidy_labels(list(natural))
    model._fit_levels = _tidy_labels(list(fit_levels))
    model.ref = model._fit_levels[0]
    model.freq_weights = _lazy(data, "freq_weights", 1.0)
    model.offset = _lazy(data, "offset", 0.0)
    model._level_totals = totals
    model._dask_source = source


def generative_setup(model, data: DaskModelData, prior) -> None:
    """:meth:`GenerativeBase._setup` on Dask data (the features are already checked finite)."""
    from .discriminant import parse_prior

    if data.exog.shape[1] == 0:
        raise ValueError(f"{type(model).__name__} needs at least one feature; the design has "
                         "none (a formula 'y ~ 1' has no features)")
    _, levels = multiclass_response(data.facts.response.surrogate(), data.endog_name)
    source = _source(data, levels, False)
    model.endog = lazy_column(source._parts, data.lengths, 1, (), np.intp)
    model.levels = levels
    model.prior = parse_prior(prior, levels)
    model._dask_source = source


def _first_not_binary(part: tuple):
    X = part[0]
    bad = ~((X == 0) | (X == 1))
    if not bad.any():
        return None
    j = int(np.flatnonzero(bad.any(axis=0))[0])
    return j, float(X[bad[:, j], j][0])


def check_binary_partitions(data: DaskModelData, names: list) -> None:
    """:func:`~glmclass.models.naive_bayes.check_binary` over the partitions (one pass)."""
    from .naive_bayes import check_binary

    for found in dask.compute(*[delayed(_first_not_binary)(p) for p in data.parts]):
        if found is not None:
            j, v = found
            x = np.zeros((1, len(names)))
            x[0, j] = v
            check_binary(x, names)  # raises with the in-memory message
