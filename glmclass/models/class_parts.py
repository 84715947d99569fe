"""The classifiers' set-up on data whose rows are not in memory (``data.in_memory`` False,
e.g. Dask partitions): MNLogit, LDA, QDA, naive Bayes, the discriminant functions, the
perceptron.

Each function does what the model's in-memory ``_setup`` does, with every full-length step a
pass over the row source of the data's encoded parts (``data.encoded_rows``): the levels come
from the merged response facts (the in-memory encoders read a small surrogate of the column,
so labels and error messages are the same), per-level totals and feature checks are
reductions, and the model reads its rows through a source of encoded parts
``(X, codes, weights, offset)``. The per-row arrays the models keep (codes, weights,
offsets) are lazy arrays chunked like the parts (``data.row_array``, the source's ``map``).
The functions return what they found; the model assigns it. This module never imports Dask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.model_data import ModelData
from ..data.response import encode, levels_of, multiclass_response
from ..rows.blocks import Block, RowBlocks
from .base import check_weight_facts
from .class_setup import earlier, first_not_binary, raise_not_binary, tidy_labels


@dataclass(frozen=True)
class ClassRows:
    """A class response on rows not in memory.

    Attributes
    ----------
    source : RowBlocks
        Parts ``(X, codes, weights, offset)`` (weights and offset None unless asked for).
    codes : lazy array of int, shape (n_obs,)
        Class codes, chunked like the parts.
    levels : list
        Class labels in code order.
    """

    source: RowBlocks
    codes: Any
    levels: list


def _coded(part: tuple, levels: list, with_arrays: bool) -> tuple:
    """``(X, codes, freq weights, offset)`` of one partition."""
    X, y, arrays, _ = part
    codes = encode(y, levels)
    if not with_arrays:
        return (X, codes, None, None)
    return (X, codes, arrays.get("freq_weights"), arrays.get("offset"))


def _codes(b: Block) -> np.ndarray:
    return b.y


def _features(part: tuple) -> tuple:
    return (part[0], None, None, None)


def class_rows(data: ModelData, levels: list, with_arrays: bool = False) -> ClassRows:
    """The partitions' rows with the response coded against ``levels``."""
    source = data.encoded_rows(_coded, levels, with_arrays, y_dtype=np.intp, persist=False)
    return ClassRows(source, source.map(_codes), list(levels))


def multiclass_rows(data: ModelData, ref=None) -> ClassRows:
    """:func:`~glmclass.data.response.multiclass_response` of the partitions' response."""
    _, levels = multiclass_response(data.facts.response.surrogate(), data.endog_name, ref)
    return class_rows(data, levels)


def class_counts(source: RowBlocks, k: int, weighted: bool = False) -> np.ndarray:
    """Rows (or frequency weights, ``weighted``) per class code, one pass."""

    def one(b: Block) -> np.ndarray:
        w = b.weights if weighted else None
        return np.bincount(b.y, weights=w, minlength=k).astype(float)

    return source.reduce(one, np.zeros(k))


@dataclass(frozen=True)
class MultinomialRows:
    """What :meth:`MNLogit._setup` finds on rows not in memory."""

    rows: ClassRows
    levels: list
    fit_levels: list
    totals: np.ndarray
    freq_weights: Any
    offset: Any


def mnlogit_rows(data: ModelData, ref) -> MultinomialRows:
    """:meth:`MNLogit._setup` on data not in memory: levels (reference first), per-level
    totals of the frequency weights (one pass), the lazy per-row arrays.

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
                           totals, data.row_array("freq_weights", 1.0),
                           data.row_array("offset", 0.0))


def check_binary_partitions(data: ModelData, names: list) -> None:
    """:func:`~glmclass.models.class_setup.check_binary` over the partitions (one pass): the
    same message as in memory, naming the first non-binary column and its first such value."""
    source = data.encoded_rows(_features, persist=False)
    first = source.reduce(lambda b: first_not_binary(b.X), np.full(len(names), np.nan),
                          earlier)
    raise_not_binary(first, names)
