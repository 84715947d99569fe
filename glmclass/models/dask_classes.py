"""The classifiers' set-up on Dask partitions (MNLogit, LDA, QDA, naive Bayes, the
discriminant functions, the perceptron).

Each function does what the model's in-memory ``_setup`` does, with every full-length step a
pass over a :class:`~glmclass.rows.dask.DaskBlocks`: the levels come from the merged response
facts (the in-memory encoders read a small surrogate of the column, so labels and error
messages are the same), per-level totals and feature checks are reductions, and the model
reads its rows through a source of encoded parts ``(X, codes, weights, offset)``. The per-row
arrays the models keep (codes, weights, offsets) are lazy Dask arrays chunked like the
partitions. The functions return what they found; the model assigns it.

This module imports the Dask adapter (so Dask) and is imported only for Dask data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.dask import DaskModelData, lazy_column
from ..data.response import encode, levels_of, multiclass_response
from ..rows.blocks import Block
from ..rows.dask import DaskBlocks
from .base import check_weight_facts
from .class_setup import earlier, first_not_binary, raise_not_binary, tidy_labels


@dataclass(frozen=True)
class ClassRows:
    """A class response on Dask partitions.

    Attributes
    ----------
    source : DaskBlocks
        Parts ``(X, codes, weights, offset)`` (weights and offset None unless asked for).
    codes : dask.array.Array of int, shape (n_obs,)
        Class codes, chunked like the partitions.
    levels : list
        Class labels in code order.
    """

    source: DaskBlocks
    codes: Any
    levels: list


def _coded(part: tuple, levels: list, with_arrays: bool) -> tuple:
    """``(X, codes, freq weights, offset)`` of one partition."""
    X, y, arrays, _ = part
    codes = encode(y, levels)
    if not with_arrays:
        return (X, codes, None, None)
    return (X, codes, arrays.get("freq_weights"), arrays.get("offset"))


def _features(part: tuple) -> tuple:
    return (part[0], None, None, None)


def class_rows(data: DaskModelData, levels: list, with_arrays: bool = False) -> ClassRows:
    """The partitions' rows with the response coded against ``levels``."""
    parts = data.encoded(_coded, levels, with_arrays)
    source = DaskBlocks(parts, data.lengths, len(data.exog_names), y_dtype=np.intp)
    return ClassRows(source, lazy_column(parts, data.lengths, 1, (), np.intp), list(levels))


def multiclass_rows(data: DaskModelData, ref=None) -> ClassRows:
    """:func:`~glmclass.data.response.multiclass_response` of the partitions' response."""
    _, levels = multiclass_response(data.facts.response.surrogate(), data.endog_name, ref)
    return class_rows(data, levels)


def class_counts(source: DaskBlocks, k: int, weighted: bool = False) -> np.ndarray:
    """Rows (or frequency weights, ``weighted``) per class code, one pass."""

    def one(b: Block) -> np.ndarray:
        w = b.weights if weighted else None
        return np.bincount(b.y, weights=w, minlength=k).astype(float)

    return source.reduce(one, np.zeros(k))


def lazy_array(data: DaskModelData, key: str, default: float):
    """A per-row array of the data (``"freq_weights"``, ``"offset"``) as a lazy Dask array,
    or ``default`` on every row when none was given."""
    if key in data.facts.arrays:
        return lazy_column(data.parts, data.lengths, key, (), np.float64)
    ones = DaskBlocks(data.encoded(_features), data.lengths, len(data.exog_names))
    return ones.map(lambda b: np.full(b.X.shape[0], default))


@dataclass(frozen=True)
class MultinomialRows:
    """What :meth:`MNLogit._setup` finds on Dask partitions."""

    rows: ClassRows
    levels: list
    fit_levels: list
    totals: np.ndarray
    freq_weights: Any
    offset: Any


def mnlogit_rows(data: DaskModelData, ref) -> MultinomialRows:
    """:meth:`MNLogit._setup` on Dask data: levels (reference first), per-level totals of the
    frequency weights (one pass), the lazy per-row arrays.

    Raises
    ------
    ValueError
        For invalid weights, or a level whose total frequency weight is zero.
    """
    check_weight_facts(data.facts.arrays)
    name = data.endog_name
    surrogate = data.facts.response.surrogate()
    natural = levels_of(surrogate)
    _, fit_levels = multiclass_response(surrogate, name, ref)
    rows = class_rows(data, fit_levels, True)
    totals = class_counts(rows.source, len(fit_levels), weighted=True)
    if np.any(totals <= 0):
        lv = fit_levels[int(np.flatnonzero(totals <= 0)[0])]
        raise ValueError(f"level {lv!r} of {name!r} has zero total frequency weight: drop "
                         "the level (or its rows) before fitting")
    return MultinomialRows(rows, tidy_labels(list(natural)), tidy_labels(list(fit_levels)),
                           totals, lazy_array(data, "freq_weights", 1.0),
                           lazy_array(data, "offset", 0.0))


def check_binary_partitions(data: DaskModelData, names: list) -> None:
    """:func:`~glmclass.models.class_setup.check_binary` over the partitions (one pass): the
    same message as in memory, naming the first non-binary column and its first such value."""
    source = DaskBlocks(data.encoded(_features), data.lengths, len(names))
    first = source.reduce(lambda b: first_not_binary(b.X), np.full(len(names), np.nan),
                          earlier)
    raise_not_binary(first, names)
