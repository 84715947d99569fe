"""Cluster labels of the rows a model uses, one partition at a time: what the Dask adapter
(:meth:`glmclass.data.dask.DaskModelData.cluster_labels`) runs where each partition lives,
so that the labels never travel to the client; only their distinct values do (to count the
clusters). Nothing here imports Dask.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .pieces import rows_used


def label_array(values, name: str) -> np.ndarray:
    """One column of cluster labels as a NumPy array every partition gives alike: strings
    as a fixed-width string array, numbers as numbers.

    Raises
    ------
    ValueError
        Missing labels, or labels mixing strings and numbers, naming the column.
    """
    s = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values), copy=False)
    missing = int(s.isna().sum())
    if missing:
        raise ValueError(f"cluster groups {name!r} have {missing} missing label(s) among the "
                         "rows the model uses; drop those rows from the data (or give them a "
                         "label)")
    v = s.to_numpy()
    if v.dtype.kind != "O":
        return v
    kind = pd.api.types.infer_dtype(v, skipna=False)
    if kind == "empty":  # a partition without rows used: its labels join no other
        return np.empty(0)
    if kind == "string":
        return v.astype(str)
    if kind in ("integer", "floating", "mixed-integer-float", "boolean", "decimal"):
        return np.asarray(v.tolist())
    raise ValueError(f"cluster groups {name!r} mix labels of different types (e.g. strings and "
                     "numbers); convert the column to one type (e.g. .astype(str))")


def part_labels(frame, part: tuple, names: tuple) -> np.ndarray:
    """The labels of one partition's rows used: ``frame`` (the partition's DataFrame of the
    label columns ``names``, or a Series) matched to the part ``(X, y, arrays, index)`` by
    its row labels; shape (n_i,) for one column, (n_i, 2) for two."""
    index = part[3]
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    frame = rows_used(frame, index, "cov_kwds['groups']")
    cols = [label_array(frame.iloc[:, j], str(n)) for j, n in enumerate(names)]
    return cols[0] if len(cols) == 1 else np.column_stack(cols)


def checked_labels(values, names: tuple) -> np.ndarray:
    """A partition's labels given by position (an array piece): checked as
    :func:`part_labels` checks them."""
    a = np.asarray(values)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    cols = [a] if a.ndim == 1 else [a[:, j] for j in range(a.shape[1])]
    cols = [label_array(c, str(n)) for c, n in zip(cols, names, strict=True)]
    return cols[0] if len(cols) == 1 else np.column_stack(cols)


def distinct_labels(labels: np.ndarray) -> tuple:
    """The distinct labels of each column of one partition's ``labels``."""
    cols = [labels] if labels.ndim == 1 else [labels[:, j] for j in range(labels.shape[1])]
    return tuple(np.unique(c) for c in cols)


def merge_distinct(a: tuple, b: tuple) -> tuple:
    """The distinct labels of two partitions' (new arrays; neither is modified)."""
    return tuple(np.union1d(x, y) for x, y in zip(a, b, strict=True))


def split_rows(values: np.ndarray, lengths: tuple) -> list[np.ndarray]:
    """``values`` (one per row used) split into the partitions' rows."""
    return np.split(values, np.cumsum(lengths)[:-1])


def label_names(groups, m: int) -> tuple:
    """Names of the label columns of ``groups`` (a DataFrame's columns, a Series' name), as
    the in-memory path names them."""
    if getattr(groups, "ndim", 1) == 2 and getattr(groups, "columns", None) is not None:
        return tuple(str(c) for c in groups.columns)
    name = getattr(groups, "name", None)
    if m == 1:
        return (str(name) if name is not None else "groups",)
    return ("groups[0]", "groups[1]")


def label_count(groups) -> int:
    """The number of label columns of ``groups`` (1 or 2: one- or two-way clustering)."""
    m = 1 if groups.ndim == 1 else groups.shape[1]
    if m not in (1, 2):
        raise ValueError(f"cov_kwds['groups'] must have one or two columns (one- or two-way "
                         f"clustering), got {m}")
    return m


def positional_labels(groups, n_rows: int) -> tuple[np.ndarray, tuple]:
    """Labels in memory paired with the ``n_rows`` rows used by position, and their names.

    Raises
    ------
    ValueError
        More than two label columns, or not one label per row used.
    """
    arr = np.asarray(groups.to_numpy() if isinstance(groups, (pd.Series, pd.DataFrame))
                     else groups)
    if arr.ndim not in (1, 2) or (arr.ndim == 2 and arr.shape[1] not in (1, 2)):
        raise ValueError(f"cov_kwds['groups'] must have one label per row (shape (n,)) or two "
                         f"(shape (n, 2)), got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(f"cov_kwds['groups'] has {arr.shape[0]} values, but the model uses "
                         f"{n_rows} rows")
    return arr, label_names(groups, 1 if arr.ndim == 1 else arr.shape[1])
