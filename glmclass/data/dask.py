"""Model data held in the partitions of Dask collections: the out-of-core :class:`ModelData`.

A Dask DataFrame given to ``from_formula`` (or row-chunked Dask arrays given to a model's
constructor) becomes a :class:`DaskModelData`: one lazy *part* per partition,
``(X, y, arrays, index)`` with the design of the partition's complete rows, its raw response,
its weights and offsets, and its row labels. Nothing of length N is ever held on the client:

1. the formula's design is learned in one pass (:func:`glmclass.formula.incremental.
   learn_design`; patsy reads no further than the formula needs);
2. the parts are persisted in the cluster's memory when they fit (:func:`persist_budget`),
   otherwise every pass re-reads and rebuilds them from the source;
3. one pass of per-partition *facts* (rows kept and dropped, the response's values, column
   checks, a fingerprint of the rows) is merged on the client into :class:`DataFacts`.

Models then read the parts through :class:`~glmclass.rows.dask.DaskBlocks`.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass, field, replace

import dask
import dask.array as da
import numpy as np
import pandas as pd
from dask import delayed

from ..formula.incremental import PartitionDesign, learn_design
from ..rows.blocks import add
from ..rows.dask import _literal
from .model_data import ModelData
from .pieces import fold_part

#: ``"auto"``: persist the parts when they take under half the cluster's (or this machine's
#: available) memory; True / False force it. Also set by the environment variable
#: ``GLMCLASS_DASK_PERSIST`` (``auto``, ``1``, ``0``).
PERSIST: str | bool = os.environ.get("GLMCLASS_DASK_PERSIST", "auto")

#: Distinct numeric response values remembered (beyond: proportions or counts, not labels).
MAX_RESPONSE_VALUES = 10_000

_ARRAY_ARGS = ("offset", "freq_weights", "var_weights")


# --- per-partition facts ------------------------------------------------------------------------

@dataclass
class ResponseFacts:
    """What the models need to know about the raw response, merged over partitions.

    Attributes
    ----------
    kind : str
        ``"i"`` integers, ``"f"`` other numbers, ``"b"`` booleans, ``"c"`` a pandas
        Categorical, else the NumPy kind of the labels (``"O"``, ``"U"``).
    categories : list or None
        A Categorical's categories, in order.
    ordered : bool
    values : dict
        Distinct values (keys), in order of appearance; at most
        :data:`MAX_RESPONSE_VALUES` for numbers (``truncated`` then).
    truncated : bool
    lo, hi : float
        Smallest and largest value of a numeric response.
    """

    kind: str = "f"
    categories: list | None = None
    ordered: bool = False
    values: dict = field(default_factory=dict)
    truncated: bool = False
    lo: float = np.inf
    hi: float = -np.inf

    @classmethod
    def of(cls, y) -> ResponseFacts:
        """The facts of one partition's response values."""
        dt = getattr(y, "dtype", None)
        if isinstance(dt, pd.CategoricalDtype):
            return cls("c", list(dt.categories), bool(dt.ordered),
                       dict.fromkeys(pd.unique(pd.Series(y).dropna())))
        arr = np.asarray(y)
        kind = arr.dtype.kind
        if kind in "iuf":
            kind = "i" if kind in "iu" else "f"  # integers keep their labels (1, not 1.0)
            arr = arr.astype(float, copy=False)
            with np.errstate(invalid="ignore"):
                lo = float(arr.min(initial=np.inf))
                hi = float(arr.max(initial=-np.inf))
            vals = pd.unique(arr)
            trunc = vals.size > MAX_RESPONSE_VALUES
            return cls(kind, None, False, dict.fromkeys(vals[:MAX_RESPONSE_VALUES].tolist()),
                       trunc, lo, hi)
        return cls(kind, None, False, dict.fromkeys(pd.unique(pd.Series(arr, dtype=object))))

    def merge(self, other: ResponseFacts) -> ResponseFacts:
        vals = dict(self.values)
        trunc = self.truncated or other.truncated
        for v in other.values:
            if v not in vals:
                if self.kind in "if" and len(vals) >= MAX_RESPONSE_VALUES:
                    trunc = True
                    break
                vals[v] = None
        kind = self.kind if self.kind == other.kind else (
            "f" if {self.kind, other.kind} <= {"i", "f"} else "O")
        return ResponseFacts(kind, self.categories or other.categories,
                             self.ordered or other.ordered, vals, trunc,
                             min(self.lo, other.lo), max(self.hi, other.hi))

    def surrogate(self):
        """A small array with the response's distinct values (and extremes), that the
        in-memory encoders (:mod:`glmclass.data.response`) read as they would the whole
        column: same levels, same errors."""
        vals = list(self.values)
        if self.kind == "c":
            return pd.Categorical(vals, categories=self.categories, ordered=self.ordered)
        if self.kind in "if":
            extra = [self.lo, self.hi] if vals else []  # infinite extremes raise as in memory
            out = np.asarray(vals + extra, dtype=float)
            return out.astype(np.int64) if self.kind == "i" else out
        return np.asarray(vals, dtype=object if self.kind != "b" else bool)


@dataclass
class ArrayFacts:
    """Facts about a per-row array (weights, offset) of one or more partitions."""

    lo: float = np.inf
    nonfinite: int = 0
    nonunit: bool = False
    nonzero: bool = False
    positive: bool = False

    @classmethod
    def of(cls, a: np.ndarray) -> ArrayFacts:
        fin = np.isfinite(a)
        return cls(float(a.min(initial=np.inf)), int((~fin).sum()), bool(np.any(a != 1)),
                   bool(np.any(a != 0)), bool(np.any(a > 0)))

    def merge(self, o: ArrayFacts) -> ArrayFacts:
        return ArrayFacts(min(self.lo, o.lo), self.nonfinite + o.nonfinite,
                          self.nonunit or o.nonunit, self.nonzero or o.nonzero,
                          self.positive or o.positive)


@dataclass
class DataFacts:
    """Facts of all partitions, merged on the client.

    Attributes
    ----------
    lengths : tuple of int
        Complete rows of each partition.
    n_dropped : int
        Rows dropped for missing values.
    response : ResponseFacts
    x_nonfinite : ndarray of bool, shape (p,)
        Columns with an infinite value.
    x_ones : ndarray of bool, shape (p,)
        Columns whose every value is 1.
    arrays : dict of str -> ArrayFacts
    digests : tuple
        Per partition, hashes of the row labels and of the frequency weights.
    """

    lengths: tuple
    n_dropped: int
    response: ResponseFacts
    x_nonfinite: np.ndarray
    x_ones: np.ndarray
    arrays: dict
    digests: tuple

    def fingerprint(self) -> str:
        """The rows' fingerprint for :func:`glmclass.compare` (labels, and frequency weights
        when some are not 1)."""
        h = hashlib.sha1()
        for idx, _ in self.digests:
            h.update(idx)
        fw = self.arrays.get("freq_weights")
        if fw is not None and fw.nonunit:
            for _, w in self.digests:
                h.update(w)
        return h.hexdigest()


def _part_facts(part: tuple, n_dropped: int) -> tuple:
    X, y, arrays, index = part
    ones = (X == 1.0).all(axis=0) if X.shape[0] else np.ones(X.shape[1], dtype=bool)
    nonfinite = ~np.isfinite(X).all(axis=0) if X.size else np.zeros(X.shape[1], dtype=bool)
    arr = {k: ArrayFacts.of(a) for k, a in arrays.items() if a is not None}
    idx = hashlib.sha1(pd.util.hash_array(np.asarray(index)).tobytes()).digest()
    fw = arrays.get("freq_weights")
    wd = hashlib.sha1(np.ascontiguousarray(fw if fw is not None else np.ones(X.shape[0]),
                                           dtype=float).tobytes()).digest()
    return (X.shape[0], n_dropped, ResponseFacts.of(y), nonfinite, ones, arr, (idx, wd))


def _merge_facts(facts: list) -> DataFacts:
    lengths = tuple(int(f[0]) for f in facts)
    resp, nonfin, ones, arrays = None, None, None, {}
    for f in facts:
        resp = f[2] if resp is None else resp.merge(f[2])
        nonfin = f[3] if nonfin is None else nonfin | f[3]
        ones = f[4] if ones is None else ones & f[4]
        for k, a in f[5].items():
            arrays[k] = a if k not in arrays else arrays[k].merge(a)
    return DataFacts(lengths, int(sum(f[1] for f in facts)), resp or ResponseFacts(), nonfin,
                     ones, arrays, tuple(f[6] for f in facts))


# --- building the parts ---------------------------------------------------------------------------

def _get(part: tuple, i: int):
    return part[i]


def _array_part(X, y, arrays: dict, start: int, missing: str, names: list) -> tuple:
    """One partition of the array path: complete rows only, labelled by position."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    y = np.asarray(y)
    n = X.shape[0]
    for key, a in arrays.items():
        if a is not None and a.shape[0] != n:
            raise ValueError(f"{key} has {a.shape[0]} values in a partition where exog has {n} "
                             "rows: their chunks do not match; rechunk it like exog")
    if y.shape[0] != n:
        raise ValueError(f"endog has {y.shape[0]} values in a partition where exog has {n} "
                         "rows: their chunks do not match; rechunk it like exog")
    bad = np.isnan(X).any(axis=1) | pd.isna(y)
    for a in arrays.values():
        if a is not None:
            bad |= np.isnan(a)
    if bad.any() and missing == "raise":
        cols = [names[j] for j in range(X.shape[1]) if np.isnan(X[:, j]).any()]
        if pd.isna(y).any():
            cols.insert(0, "endog")
        cols += [k for k, a in arrays.items() if a is not None and np.isnan(a).any()]
        raise ValueError(f"missing values in {', '.join(map(repr, cols))}; pass "
                         "missing='drop' to drop incomplete rows")
    keep = ~bad
    index = np.arange(start, start + n)
    if bad.any():
        X, y, index = X[keep], y[keep], index[keep]
        arrays = {k: (a[keep] if a is not None else None) for k, a in arrays.items()}
    return (np.ascontiguousarray(X), y, arrays, index), int(bad.sum())


def _formula_part(frame: pd.DataFrame, recipe: PartitionDesign, aligned: dict,
                  missing: str) -> tuple:
    """One partition of the formula path: the recipe's design of its complete rows."""
    aligned = {k: (None if a is None else _as_float(a, k)) for k, a in aligned.items()}
    y, X, keep = recipe.build(frame, aligned, missing)
    values = y.array if isinstance(y.dtype, pd.CategoricalDtype) else y.to_numpy()
    arrays = {k: (a[keep] if a is not None else None) for k, a in aligned.items()}
    return (X, values, arrays, frame.index[keep]), int((~keep).sum())


def _as_float(a, key: str) -> np.ndarray:
    a = np.asarray(a.to_numpy() if isinstance(a, (pd.Series, pd.DataFrame)) else a)
    if a.ndim > 1:
        a = a.reshape(a.shape[0], -1)[:, 0] if a.shape[1:] == (1,) * (a.ndim - 1) else a
    if a.ndim != 1:
        raise ValueError(f"{key} must be one-dimensional (one value per row)")
    try:
        return a.astype(float)
    except (ValueError, TypeError):
        raise ValueError(f"{key} must be numeric") from None


def _budget() -> float:
    """Bytes the parts may take to be persisted: half the cluster's memory under a
    distributed client, else half of this machine's available memory."""
    try:
        from distributed import default_client

        info = default_client().scheduler_info(n_workers=-1)
        limits = [w.get("memory_limit", 0) or 0 for w in info.get("workers", {}).values()]
        if limits and all(limits):
            return 0.5 * float(sum(limits))
    except (ImportError, ValueError, TypeError):
        pass
    try:
        import psutil

        return 0.5 * float(psutil.virtual_memory().available)
    except ImportError:  # pragma: no cover - psutil comes with distributed
        return 0.0


def persist_budget(nbytes: float) -> bool:
    """Whether parts of about ``nbytes`` are persisted (see :data:`PERSIST`)."""
    policy = PERSIST
    if isinstance(policy, str) and policy.lower() in ("1", "true", "yes"):
        return True
    if isinstance(policy, str) and policy.lower() in ("0", "false", "no"):
        return False
    if isinstance(policy, bool):
        return policy
    return nbytes <= _budget()


def _finish(parts_and_drops: list, names: list, endog_name: str, recipe, formula, missing,
            nbytes: float, frame=None) -> DaskModelData:
    """Persist (if it fits), compute the facts, and wrap the parts."""
    parts = [delayed(_get, pure=True)(pd_, 0) for pd_ in parts_and_drops]
    drops = [delayed(_get, pure=True)(pd_, 1) for pd_ in parts_and_drops]
    persisted = persist_budget(nbytes)
    if persisted:
        parts = list(dask.persist(*parts))
    facts = _merge_facts(list(dask.compute(
        *[delayed(_part_facts, pure=True)(p, d) for p, d in zip(parts, drops, strict=True)])))
    if sum(facts.lengths) == 0:
        raise ValueError("no complete rows: every row has a missing value in a used column")
    p = len(names)
    if facts.x_nonfinite.any():
        col = names[int(np.flatnonzero(facts.x_nonfinite)[0])]
        raise ValueError(f"exog column {col!r} has infinite values; remove or cap them")
    for key, a in facts.arrays.items():
        if a.nonfinite:
            raise ValueError(f"{key} has infinite values")
    icpt = names.index("Intercept") if "Intercept" in names else (
        int(np.flatnonzero(facts.x_ones)[0]) if facts.x_ones.any() else None)
    exog = lazy_column(parts, facts.lengths, 0, (p,), np.float64)
    arrays = {k: (lazy_column(parts, facts.lengths, k, (), np.float64)
                  if k in facts.arrays else None) for k in _ARRAY_ARGS}
    return DaskModelData(exog, list(names), None, endog_name, DaskIndex(parts, facts),
                         arrays, recipe.spec() if recipe is not None else None,
                         facts.n_dropped, formula, icpt, None, frame=frame, parts=tuple(parts),
                         facts=facts, recipe=recipe, persisted=persisted)


def _array_item(part: tuple, key):
    if isinstance(key, str):
        return part[2][key]
    return part[key]


def lazy_column(parts, lengths, key, tail: tuple, dtype) -> da.Array:
    """A lazy Dask array of one item of every part (0: X, 1: y, or an array's name)."""
    chunks = [da.from_delayed(delayed(_array_item, pure=True)(p, key), shape=(n,) + tail,
                              dtype=dtype) for p, n in zip(parts, lengths, strict=True)]
    return da.concatenate(chunks, axis=0) if chunks else da.zeros((0,) + tail, dtype=dtype)


class DaskIndex:
    """The row labels of Dask data: never gathered on the client; its ``fingerprint`` stands
    in for the labels in :func:`glmclass.results.base.row_key`."""

    def __init__(self, parts, facts: DataFacts) -> None:
        self._parts = parts
        self._n = sum(facts.lengths)
        self.fingerprint = facts.fingerprint()

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"<DaskIndex: {self._n} rows in {len(self._parts)} partitions>"


@dataclass(frozen=True)
class DaskModelData(ModelData):
    """:class:`ModelData` whose rows live in the partitions of Dask collections.

    ``exog`` and the per-row ``arrays`` are lazy Dask arrays (chunks: the partitions);
    ``endog`` is None (the response is read per partition); ``index`` is a
    :class:`DaskIndex`.

    Attributes
    ----------
    parts : tuple of dask.delayed.Delayed
        One per partition: ``(X, y, arrays, index)`` of its complete rows.
    facts : DataFacts
    recipe : PartitionDesign or None
        The formula's per-partition design (formula path).
    persisted : bool
        Whether the parts are held in the cluster's memory.
    """

    parts: tuple = ()
    facts: DataFacts | None = None
    recipe: PartitionDesign | None = None
    persisted: bool = False

    partitioned = True

    @property
    def nrows(self) -> int:
        return sum(self.facts.lengths)

    @property
    def lengths(self) -> tuple:
        return self.facts.lengths

    def without_intercept(self) -> DaskModelData:
        if self.intercept_index is None:
            return self
        keep = np.ones(len(self.exog_names), dtype=bool)
        keep[self.intercept_index] = False
        cols = np.flatnonzero(keep)
        parts = tuple(delayed(_take_columns, pure=True)(p, cols) for p in self.parts)
        if self.persisted:
            parts = tuple(dask.persist(*parts))
        facts = replace(self.facts, x_nonfinite=self.facts.x_nonfinite[keep],
                        x_ones=self.facts.x_ones[keep])
        return replace(self, exog=lazy_column(parts, facts.lengths, 0, (len(cols),), float),
                       exog_names=[n for n, k in zip(self.exog_names, keep, strict=True) if k],
                       intercept_index=None, feature_mask=keep, parts=parts, facts=facts)

    def reduce_rows(self, fn, zero, rows: int):
        """:meth:`ModelData.reduce_rows`, each partition folded where it lives."""
        if self.spec is not None and self.frame is None:
            raise ValueError("the rows of the fit's DataFrame are not available; refit")
        frames = self.frame.to_delayed() if self.spec is not None else [None] * len(self.parts)
        job = _literal((fn, zero, rows), "rows")
        out = dask.compute(*[delayed(fold_part, pure=False)(job, f, p)
                             for f, p in zip(frames, self.parts, strict=True)])
        return functools.reduce(add, out, zero)

    def encoded(self, fn, *args) -> tuple:
        """Parts ``(X, y, weights, offset)`` for a :class:`~glmclass.rows.dask.DaskBlocks`:
        ``fn(part, *args)`` per partition (run where the partition lives)."""
        return tuple(delayed(fn, pure=False)(p, *args) for p in self.parts)


def _take_columns(part: tuple, cols: np.ndarray) -> tuple:
    X, y, arrays, index = part
    return (np.ascontiguousarray(X[:, cols]), y, arrays, index)


# --- the two entry points -------------------------------------------------------------------------

def _dask_vector(a, n_chunks: tuple, key: str):
    """A per-row Dask array (or None) with the rows chunked like ``n_chunks``."""
    if a is None:
        return None
    if hasattr(a, "to_dask_array"):
        if a.ndim == 2 and a.shape[1] != 1:
            raise ValueError(f"{key} must be one column")
        a = a.to_dask_array(lengths=True)
    if not isinstance(a, da.Array):
        a = da.from_array(np.asarray(a.to_numpy() if isinstance(a, (pd.Series, pd.DataFrame))
                                     else a), chunks=-1)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError(f"{key} must be one-dimensional (one value per row), got shape "
                         f"{a.shape}")
    if np.isnan(a.shape[0]):
        a = a.compute_chunk_sizes()
    total = sum(n_chunks)
    if a.shape[0] != total:
        raise ValueError(f"{key} has {a.shape[0]} rows but exog has {total}")
    return a if a.chunks[0] == n_chunks else a.rechunk({0: n_chunks})


def from_dask_arrays(endog, exog, missing: str = "drop", **arrays) -> DaskModelData:
    """The array path for row-chunked Dask arrays (or Dask DataFrames/Series).

    Parameters
    ----------
    endog : dask Array or Series of shape (n_obs,), or array-like
    exog : dask Array or DataFrame of shape (n_obs, p)
    missing : {"drop", "raise"}
    **arrays : per-row arrays (offsets, weights) or None

    Returns
    -------
    DaskModelData
    """
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if endog is None:
        raise ValueError("endog is None: pass the response as an array of length n_obs")
    names = None
    if hasattr(exog, "to_dask_array"):  # a Dask DataFrame or Series
        cols = [exog.name] if exog.ndim == 1 else list(exog.columns)
        for c, dt in zip(cols, [exog.dtype] if exog.ndim == 1 else exog.dtypes, strict=True):
            if dt.kind not in "biuf":
                raise ValueError(f"exog column {c!r} is not numeric ({dt}); encode it, or use "
                                 "from_formula with C(column)")
        names = [str(c) for c in cols]
        exog = exog.to_dask_array(lengths=True)
    if not isinstance(exog, da.Array):
        exog = da.from_array(np.asarray(exog), chunks=(max(1, len(exog) // 4) or 1, -1))
    if exog.ndim == 1:
        exog = exog[:, None]
    if exog.ndim != 2:
        raise ValueError(f"exog must be 2-dimensional, got shape {exog.shape}")
    if exog.dtype.kind not in "biuf":
        raise ValueError(f"exog must be numeric, got dtype {exog.dtype}; use from_formula with "
                         "C(column) for categorical columns")
    if any(np.isnan(c) for c in exog.chunks[0]):
        exog = exog.compute_chunk_sizes()
    if exog.shape[0] == 0:
        raise ValueError("exog has no rows: there is nothing to fit")
    exog = exog.rechunk({1: -1}) if exog.numblocks[1] > 1 else exog
    p = exog.shape[1]
    names = names or [f"x{j + 1}" for j in range(p)]
    chunks = exog.chunks[0]
    endog_name = str(getattr(endog, "name", None) or "y")
    y = _dask_vector(endog, chunks, "endog")
    arrs = {k: _dask_vector(a, chunks, k) for k, a in arrays.items()}
    starts = np.concatenate([[0], np.cumsum(chunks)[:-1]]).astype(int)
    blocks = {k: (a.to_delayed().ravel() if a is not None else [None] * len(chunks))
              for k, a in arrs.items()}
    parts = [delayed(_array_part, pure=True)(x, yy, {k: blocks[k][i] for k in arrs},
                                             int(starts[i]), missing, names)
             for i, (x, yy) in enumerate(zip(exog.to_delayed()[:, 0], y.to_delayed().ravel(),
                                             strict=True))]
    nbytes = float(exog.shape[0]) * (p + 4) * 8.0
    return _finish(parts, names, endog_name, None, None, missing, nbytes)


def _partitions_of(a, data, key: str) -> list:
    """Per-partition pieces of an aligned per-row argument of a Dask DataFrame."""
    if a is None:
        return [None] * data.npartitions
    if hasattr(a, "npartitions") and hasattr(a, "to_delayed"):
        if a.npartitions != data.npartitions:
            raise ValueError(f"{key} has {a.npartitions} partitions but data has "
                             f"{data.npartitions}: take it from the same DataFrame "
                             "(data['column']) or repartition both alike")
        if (data.known_divisions and getattr(a, "known_divisions", False)
                and tuple(a.divisions) != tuple(data.divisions)):
            raise ValueError(f"{key}'s partitions (divisions) differ from data's: take it "
                             "from the same DataFrame or repartition both alike")
        return list(a.to_delayed())
    if isinstance(a, da.Array):
        if a.numblocks[0] != data.npartitions:
            raise ValueError(f"{key} has {a.numblocks[0]} chunks but data has "
                             f"{data.npartitions} partitions: chunk it like data")
        return list(a.to_delayed().ravel())
    raise TypeError(f"{key} must be a Dask Series or array aligned with data's partitions "
                    f"when data is a Dask DataFrame, got {type(a).__name__}")


def from_dask_formula(formula: str, data, missing: str = "drop", eval_env=None,
                      **arrays) -> DaskModelData:
    """The formula path for a Dask DataFrame: learn the design in one pass, then build every
    partition's design with it.

    Parameters
    ----------
    formula : str
    data : dask.dataframe.DataFrame
    missing : {"drop", "raise"}
    eval_env : patsy.EvalEnvironment
    **arrays : Dask Series or arrays aligned with ``data``'s partitions, or None

    Returns
    -------
    DaskModelData
    """
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if not hasattr(data, "columns"):
        raise TypeError(f"data must be a Dask DataFrame, got {type(data).__name__}")
    aligned = {k: _partitions_of(a, data, k) for k, a in arrays.items()}
    from ..formula.design import _referenced_columns, check_formula, split_formula
    from ..formula.namespace import formula_env
    from ..formula.parse import parse
    from ..formula.spec import complete_rows

    eval_env = formula_env(eval_env)
    columns = list(data.columns)
    check_formula(parse(formula, columns), columns, eval_env)  # refused before any reading
    lhs = split_formula(formula)[0]
    cols = _referenced_columns(formula, data._meta)
    if lhs and lhs not in [str(c) for c in cols] and lhs in data.columns:
        cols.append(lhs)
    frame = data[cols] if cols else data
    n_seen = []

    def pieces():
        for i in range(frame.npartitions):
            piece = frame.get_partition(i).compute()
            # transforms and levels are learned on the rows the fit uses, as in memory
            piece = piece[complete_rows(piece)]
            if not n_seen:
                n_seen.append(len(piece))
            yield piece

    recipe = learn_design(formula, pieces, list(data.columns), eval_env)
    delayed_frames = frame.to_delayed()
    shared = _literal(recipe, "recipe")  # one node: sent once per worker, not per partition
    parts = [delayed(_formula_part, pure=True)(f, shared, {k: v[i] for k, v in aligned.items()},
                                               missing)
             for i, f in enumerate(delayed_frames)]
    p = len(recipe.column_names)
    nbytes = float(n_seen[0] if n_seen else 0) * frame.npartitions * (p + 4) * 8.0
    return _finish(parts, recipe.column_names, lhs, recipe, formula, missing, nbytes, data)
