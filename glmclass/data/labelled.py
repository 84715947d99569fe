"""Per-row arguments given as pandas objects beside Dask data, matched to the rows by label.

In memory a pandas Series of weights, offsets or exposures pairs with the rows by its index,
never silently by position (:func:`glmclass.data.model_data.check_index`). Dask data keep
their row labels in the partitions, so the Dask adapter (:mod:`glmclass.data.dask`) ships the
pandas object once and each partition takes the values of its own row labels
(:func:`values_at`) where it lives. That needs a row index worth matching: a Dask DataFrame
with known divisions (partitions hold disjoint, sorted label ranges). Otherwise the object is
refused (:func:`refuse_unlabelled`). Cluster labels in a pandas object with its own index are
refused on Dask data (:func:`glmclass.data.dask.cluster_label_parts`). Nothing here imports
Dask.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .model_data import per_row


def is_pandas(obj) -> bool:
    """Whether ``obj`` is a pandas Series or DataFrame (paired with rows by its index)."""
    return isinstance(obj, (pd.Series, pd.DataFrame))


def check_labelled(values, key: str, numeric: bool = False):
    """A pandas per-row argument checked on the client before it is matched by label.

    Parameters
    ----------
    values : pandas.Series or pandas.DataFrame
    key : str
        The argument's name, for the messages.
    numeric : bool
        Convert to floats (NA as NaN), as the in-memory path reads weights and offsets.

    Returns
    -------
    pandas.Series or pandas.DataFrame
        ``values``, or their floats with the same index.

    Raises
    ------
    ValueError
        Duplicate row labels, or (``numeric``) values that are not numbers, naming ``key``.
    """
    if not values.index.is_unique:
        dup = values.index[values.index.duplicated()][0]
        raise ValueError(f"{key} has the row label {_plain(dup)!r} more than once, so it cannot "
                         "be matched to the rows of the data by label; give it the data's "
                         f"index, or pass {key}.to_numpy() to pair rows by position")
    if numeric:
        return pd.Series(per_row(values, key, len(values)), index=values.index, name=key)
    return values


def values_at(index: pd.Index, values, key: str) -> np.ndarray:
    """The values of ``values`` (a pandas Series or DataFrame with unique labels) at one
    partition's row labels ``index``, in their order: shape (n_i,) or (n_i, m).

    Raises
    ------
    ValueError
        A partition with duplicate row labels, or a row label ``values`` does not have,
        naming ``key`` and the label.
    """
    index = pd.Index(index)
    if not index.is_unique:
        raise ValueError(f"{key}: a partition of the data has duplicate row labels, so "
                         f"{key} cannot be matched to its rows by label; reset_index() the "
                         f"data, or pass {key} as a column of the data")
    pos = values.index.get_indexer(index)
    if (pos < 0).any():
        label = _plain(index[pos < 0][0])
        raise ValueError(f"{key} has no value for the row labelled {label!r} of the data; "
                         f"align it (e.g. {key}.reindex(data.index)), or pass "
                         f"{key}.to_numpy() to pair rows by position")
    return values.iloc[pos].to_numpy()


@dataclass(frozen=True)
class ByLabel:
    """A pandas per-row argument shipped to every partition, read at the partition's row
    labels (:meth:`at`); a Dask Series' own partition is read as it is, by position."""

    values: pd.Series
    key: str

    def at(self, index: pd.Index) -> np.ndarray:
        """The values at the row labels ``index`` (:func:`values_at`)."""
        return values_at(index, self.values, self.key)


def refuse_unlabelled(key: str, positional: str) -> ValueError:
    """The error for a pandas per-row argument beside Dask data whose rows cannot be matched
    by label (unknown divisions); ``positional`` says what pairs rows by position."""
    return ValueError(
        f"{key} is a pandas object, which pairs with the rows by its index, but the Dask "
        "data's partitions have unknown divisions, so its rows cannot be matched by label; "
        f"pass a Dask Series or array from the same Dask DataFrame (e.g. ddf['w']){positional}, "
        "or give the data known divisions (ddf.set_index / dd.from_pandas)")


def check_row_labels(values, data, key: str) -> None:
    """A pandas object given per row in memory (cluster labels, a mixed model's groups) pairs
    with the rows by its index, never silently by position (as the per-row weights and
    offsets): its index must be that of the rows used, or of the rows given (before rows with
    missing values were dropped). One whose index is 0..n-1 pairs by position, as an array;
    data without row labels accept any index; anything but a pandas object passes.

    Parameters
    ----------
    values : object
    data : ModelData
        In memory: its ``index`` (rows used), ``source_rows``, ``n_source`` and
        ``labelled``.
    key : str
        The argument's name, for the message.

    Raises
    ------
    ValueError
        The index differs, naming ``key`` and the first difference.
    """
    if not is_pandas(values):
        return
    index, rows = values.index, data.index
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    if not getattr(data, "labelled", True) or default or index.equals(rows):
        return
    source = data.source_rows
    if source is not None and len(index) == data.n_source and index.take(source).equals(rows):
        return
    if len(index) == len(rows):
        diff = np.flatnonzero(index.to_numpy(dtype=object) != rows.to_numpy(dtype=object))
        j = int(diff[0]) if diff.size else 0
        where = (f"first difference at position {j}: {_plain(index[j])!r} against "
                 f"{_plain(rows[j])!r}")
    else:
        inside = int(index.isin(rows).sum())
        where = f"{len(index)} labels, {inside} of them among the {len(rows)} rows the model uses"
    column = "name the column of the data instead, " if key.startswith("cov_kwds") else ""
    name = key.split("[")[-1].strip("']") if key.startswith("cov_kwds") else key
    raise ValueError(f"{key} and the rows of the data have different indexes ({where}); align "
                     f"them (e.g. {name}.reindex(data.index)), {column}or pass "
                     f"{name}.to_numpy() to pair rows by position")


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
