"""Pieces of the rows a model uses, for passes that rebuild designs from changed data
(marginal effects) or read other columns of the data (cluster labels).

:func:`reduce_model_rows` folds ``fn(raw, X, offset, freq_weights)`` over pieces of the rows
of a :class:`~glmclass.data.model_data.ModelData` held in memory: ``raw`` the pieces' rows of
the formula's DataFrame (or of the design on the array path), X their design rows, offset and
frequency weights their values (0 and 1 when absent); the partial results are summed with
:func:`glmclass.rows.blocks.add`. The Dask adapter folds each partition with
:func:`fold_part` where it lives (:meth:`glmclass.data.dask.DaskModelData.reduce_rows`).
Nothing here imports Dask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..rows.blocks import add


def fold_rows(raw, X: np.ndarray, offset, freq_weights, fn: Callable, zero: Any,
              rows: int) -> Any:
    """Sum of ``fn`` over pieces of ``rows`` rows.

    Parameters
    ----------
    raw : pandas.DataFrame or ndarray
        The rows of X as data (formula path) or as the design itself (array path).
    X : ndarray of shape (n, p)
    offset, freq_weights : ndarray of shape (n,) or None
    fn : callable
        ``fn(raw_piece, X_piece, offset_piece, freq_piece) -> partial``.
    zero : object
        The sum's identity (e.g. a tuple of zero arrays, or ``[]`` to concatenate lists).
    rows : int
        Rows per piece.
    """
    n = X.shape[0]
    acc = zero
    for s in range(0, n, max(int(rows), 1)):
        sl = slice(s, min(s + rows, n))
        piece = raw.iloc[sl] if isinstance(raw, pd.DataFrame) else raw[sl]
        off = np.zeros(sl.stop - s) if offset is None else np.asarray(offset[sl], dtype=float)
        f = (np.ones(sl.stop - s) if freq_weights is None
             else np.asarray(freq_weights[sl], dtype=float))
        acc = add(acc, fn(piece, X[sl], off, f))
    return acc


def reduce_model_rows(data, fn: Callable, zero: Any, rows: int) -> Any:
    """:func:`fold_rows` over the rows an in-memory ModelData uses (its DataFrame's rows at
    ``source_rows`` on the formula path).

    Raises
    ------
    ValueError
        A formula model whose DataFrame is gone (saved with ``remove_data=True``).
    """
    raw = data.exog
    if data.spec is not None:
        if data.frame is None:
            raise ValueError("the rows of the fit's DataFrame are not available (the model "
                             "was not built from a DataFrame, or its data were removed); "
                             "refit the model on its data")
        raw = data.frame if data.source_rows is None else data.frame.iloc[data.source_rows]
    return fold_rows(raw, data.exog, data.arrays.get("offset"),
                     data.arrays.get("freq_weights"), fn, zero, rows)


def rows_used(frame, index, what: str):
    """The rows of one partition's ``frame`` (DataFrame or Series) that its part uses, matched
    by the part's row labels ``index``."""
    if len(index) == len(frame) and frame.index.equals(pd.Index(index)):
        return frame
    if not frame.index.is_unique:
        raise ValueError(f"{what}: a partition has duplicate row labels, so the rows the model "
                         "uses cannot be matched to it; reset_index() the DataFrame before "
                         "building the model")
    return frame.loc[index]


def fold_part(job: tuple, frame, part: tuple) -> Any:
    """:func:`fold_rows` of one partition ``(X, y, arrays, index)`` (its DataFrame ``frame``
    at the rows used, or its design when ``frame`` is None); ``job = (fn, zero, rows)``."""
    fn, zero, rows = job
    X, _, arrays, index = part
    raw = X if frame is None else rows_used(frame, index, "the model's rows")
    return fold_rows(raw, X, arrays.get("offset"), arrays.get("freq_weights"), fn, zero, rows)


def column_values(data, name) -> np.ndarray:
    """Values of column ``name`` of the DataFrame a formula model was built on, at the rows
    it uses, in row order: one pass of ``data.reduce_rows`` (in memory or on Dask).

    Raises
    ------
    ValueError
        The model was not built from a formula on a DataFrame.
    """
    if data.spec is None or data.frame is None:
        raise ValueError(f"column {name!r}: the model was not built from a formula on a "
                         "DataFrame; pass the values as an array with one per row")

    def values(raw, *_) -> list:
        return [raw[name].to_numpy()]

    pieces = data.reduce_rows(values, [], max(data.nrows, 1))
    return np.concatenate(pieces) if pieces else np.empty(0)
