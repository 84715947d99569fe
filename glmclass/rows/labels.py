"""Sums of per-row values by the label of each row: the partial results of a reduce that
groups rows (cluster-robust covariances), small enough to travel between workers.

A :class:`LabelSums` holds, for G distinct labels (one label column, or pairs of labels of
two columns), the G x k sums of the rows that carry them. :func:`label_sums` makes one from
the rows of a block, :func:`merge_label_sums` combines two (a label may occur in both: rows
of one cluster spread over several blocks or partitions), and :func:`factorize_keys` gives
the integer codes of labels. Every function returns new arrays and modifies none of its
arguments, so partial results can be merged in any tree. NumPy only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

_MISSING = ("cluster labels contain missing values (NaN/None/NaT); drop those rows before "
            "fitting, or give them a label")


@dataclass(frozen=True)
class LabelSums:
    """Per-label sums of per-row values.

    Attributes
    ----------
    keys : tuple of ndarray of shape (G,)
        The distinct labels (one array per label column: two for pairs), sorted.
    sums : ndarray of shape (G, k)
        ``sums[g]``: the sum of the values of the rows labelled ``keys[.][g]``.
    """

    keys: tuple
    sums: np.ndarray

    @property
    def n_labels(self) -> int:
        """Number of distinct labels G."""
        return int(self.sums.shape[0])


def label_columns(groups: np.ndarray | None, n_rows: int) -> list[np.ndarray]:
    """The label columns of a block's ``groups`` ((r,) or (r, m)) as 1-D arrays.

    Raises
    ------
    ValueError
        No groups, or groups of the wrong length.
    """
    if groups is None:
        raise ValueError("the rows carry no group labels: attach them with "
                         "with_groups(labels) before reducing by label")
    g = np.asarray(groups)
    if g.shape[0] != n_rows or g.ndim not in (1, 2):
        raise ValueError(f"group labels have shape {g.shape}, the block has {n_rows} rows")
    return [g] if g.ndim == 1 else [g[:, j] for j in range(g.shape[1])]


def _check_missing(labels: np.ndarray) -> None:
    kind = labels.dtype.kind
    if (kind == "f" and np.isnan(labels).any()) or (kind in "mM" and np.isnat(labels).any()):
        raise ValueError(_MISSING)


def _unique(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct labels and the code of every label (refuses missing labels)."""
    _check_missing(labels)
    try:
        uniques, codes = np.unique(labels, return_inverse=True)
    except TypeError:
        raise ValueError("cluster labels mix values that cannot be compared (e.g. strings "
                         "and numbers or None); use one type of label") from None
    if labels.dtype.kind == "O" and any(u is None or u != u for u in uniques):
        raise ValueError(_MISSING)
    return uniques, codes.reshape(-1).astype(np.int64, copy=False)


def factorize_keys(columns: list[np.ndarray]) -> tuple[np.ndarray, tuple]:
    """Integer codes 0..G-1 of rows labelled by one or more label columns, and the G distinct
    labels (one array per column), sorted.

    Parameters
    ----------
    columns : list of ndarray of shape (n,)

    Returns
    -------
    codes : ndarray of int64 of shape (n,)
    keys : tuple of ndarray of shape (G,)
    """
    uniques, codes = zip(*(_unique(c) for c in columns), strict=True)
    if len(columns) == 1:
        return codes[0], (uniques[0],)
    code = np.zeros(codes[0].shape[0], dtype=np.int64)
    for u, c in zip(uniques, codes, strict=True):
        code = code * len(u) + c
    pairs, inverse = np.unique(code, return_inverse=True)
    keys, rest = [], pairs
    for u in reversed(uniques):
        keys.append(u[rest % len(u)])
        rest = rest // len(u)
    return inverse.reshape(-1).astype(np.int64, copy=False), tuple(reversed(keys))


def segment_sums(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes present and the sums of ``values``' rows per code (rows visited in
    code order, a stable sort: each sum in row order)."""
    if codes.shape[0] == 0:
        return codes, np.zeros((0,) + values.shape[1:])
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    starts = np.flatnonzero(np.concatenate(([True], sc[1:] != sc[:-1])))
    return sc[starts], np.add.reduceat(values[order], starts, axis=0)


def label_sums(values: np.ndarray, columns: list[np.ndarray]) -> LabelSums:
    """The sums of the rows of ``values`` (r, k) by their labels (one or more columns of r)."""
    values = np.asarray(values, dtype=float)
    codes, keys = factorize_keys(columns)
    present, sums = segment_sums(values, codes)
    return LabelSums(tuple(k[present] for k in keys), sums)


def merge_label_sums(a: LabelSums | None, b: LabelSums | None) -> LabelSums | None:
    """The label sums of the rows of ``a`` and of ``b`` (None: no rows); neither is modified.

    Raises
    ------
    ValueError
        Labels of different kinds (e.g. numbers in one, strings in the other), which NumPy
        would otherwise turn into one kind and merge.
    """
    if a is None:
        return b
    if b is None:
        return a
    if a.n_labels == 0:
        return b
    if b.n_labels == 0:
        return a
    for ka, kb in zip(a.keys, b.keys, strict=True):
        if ka.dtype.kind != kb.dtype.kind and not {ka.dtype.kind, kb.dtype.kind} <= set("iu"):
            raise ValueError(f"cluster labels are of different kinds in different parts of the "
                             f"data ({ka.dtype} and {kb.dtype}); give the column one type")
    keys = [np.concatenate([ka, kb]) for ka, kb in zip(a.keys, b.keys, strict=True)]
    return label_sums(np.concatenate([a.sums, b.sums]), keys)


def merge_all(a: tuple | None, b: tuple | None) -> tuple | None:
    """:func:`merge_label_sums` of two tuples of label sums, one per grouping (None: none)."""
    if a is None:
        return b
    if b is None:
        return a
    return tuple(merge_label_sums(x, y) for x, y in zip(a, b, strict=True))


def empty_sums(n_groupings: int) -> tuple:
    """The label sums of no rows, one per grouping."""
    return tuple(LabelSums((), np.zeros((0, 0))) for _ in range(n_groupings))


def sums_by_codes(blocks: Iterable, fn: Callable, coded: list[tuple[np.ndarray, tuple]]
                  ) -> tuple:
    """Label sums of ``fn(block)`` over ``blocks`` of rows coded once for all (``coded``: the
    codes and keys of :func:`factorize_keys` per grouping, indexed by ``block.start``): each
    block is summed into a (G, k) array per grouping."""
    acc: list[np.ndarray] = []
    for b in blocks:
        values = np.asarray(fn(b), dtype=float)
        if not acc:
            acc = [np.zeros((keys[0].shape[0], values.shape[1])) for _, keys in coded]
        for a, (codes, _) in zip(acc, coded, strict=True):
            present, sums = segment_sums(values, codes[b.start:b.start + values.shape[0]])
            a[present] += sums
    if not acc:
        return empty_sums(len(coded))
    return tuple(LabelSums(keys, a) for a, (_, keys) in zip(acc, coded, strict=True))


def per_row(values, n: int, name: str, dtype=None) -> np.ndarray | None:
    """``values`` as an array with one entry (or row of entries) per row of n, or None."""
    if values is None:
        return None
    a = np.asarray(values) if dtype is None else np.asarray(values, dtype=dtype)
    if a.ndim not in (1, 2) or a.shape[0] != n or (dtype is not None and a.ndim != 1):
        want = f"({n},)" if dtype is not None else f"({n},) or ({n}, m)"
        raise ValueError(f"{name} must have shape {want}, one per row of the source, got "
                         f"{a.shape}")
    return a
