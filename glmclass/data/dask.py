"""Model data held in the partitions of Dask collections: the out-of-core :class:`ModelData`.

A Dask DataFrame given to ``from_formula`` (or row-chunked Dask arrays given to a model's
constructor) becomes a :class:`DaskModelData`: one lazy *part* per partition,
``(X, y, arrays, index)`` with the design of the partition's complete rows, its raw response
(proportions for (successes, failures) counts, the trials then in ``var_weights``), its
weights and its one offset (``offset=`` + ``offset()`` terms + log(exposure)), and its row
labels (:mod:`glmclass.data.parts`). Nothing of length N is ever held on the client:

1. the formula's design is learned in one pass where the partitions live: each returns a
   :class:`~glmclass.formula.incremental.Witness` of its complete rows (the used columns'
   distinct values), merged in a tree (:func:`~glmclass.rows.dask.tree_reduce`), from which
   patsy learns the levels (:func:`~glmclass.formula.incremental.learn_design`); only a
   stateful transform (``center(x)``) needs patsy over the rows, a second pass;
2. every partition's design is built with NumPy when the formula allows
   (:mod:`glmclass.formula.fast_design`), else with patsy; the parts are persisted in the
   cluster's memory when they fit (:func:`persist_budget`), otherwise every pass re-reads
   and rebuilds them from the source (the used columns only; the string columns of
   categorical factors are read once, and their level codes held in memory);
3. the same pass gives per-partition *facts* (rows kept and dropped, the response's values,
   column checks and scales, sums of the weights and the response, a fingerprint of the
   rows), merged on the client into :class:`DataFacts`: no model needs a pass of its own
   for them. Every pass is counted (:func:`glmclass.rows.dask.counting_passes`).

The build's times are kept in ``DaskModelData.timings`` and printed by ``fit(disp=True)``.

Models then read the parts through :class:`~glmclass.rows.dask.DaskBlocks`.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass, field, replace

import dask.array as da
import numpy as np
import pandas as pd
from dask import delayed

from ..formula.incremental import PartitionDesign, Witness, learn_design, used_columns
from ..formula.spec import complete_rows
from ..rows import dask as dask_rows
from ..rows.blocks import add
from ..rows.dask import DaskBlocks, literal, tree_reduce
from . import groups as G
from . import labelled as L
from .model_data import ModelData, is_dask
from .offsets import PREDICTED_BY_NAME, named_columns
from .parts import (
    DaskIndex,
    DataFacts,
    array_part,
    build_report,
    check_counts,
    formula_part,
    level_codes,
    merge_facts,
    merge_witnesses,
    numeric_column_names,
    part_facts,
    take_part_columns,
    with_level_codes,
    witness_of,
)
from .pieces import fold_part

#: ``"auto"``: persist the parts when they take under half the cluster's (or this machine's
#: available) memory; True / False force it. Also set by the environment variable
#: ``GLMCLASS_DASK_PERSIST`` (``auto``, ``1``, ``0``).
PERSIST: str | bool = os.environ.get("GLMCLASS_DASK_PERSIST", "auto")

_ARRAY_ARGS = ("offset", "freq_weights", "var_weights")


# --- building the parts ---------------------------------------------------------------------------

def _get(part: tuple, i: int):
    return part[i]


def persist_budget(nbytes: float) -> bool:
    """Whether parts of about ``nbytes`` are persisted (see :data:`PERSIST`)."""
    policy = PERSIST
    if isinstance(policy, str) and policy.lower() in ("1", "true", "yes"):
        return True
    if isinstance(policy, str) and policy.lower() in ("0", "false", "no"):
        return False
    if isinstance(policy, bool):
        return policy
    return nbytes <= dask_rows.memory_budget()


def _finish(parts_and_drops: list, names: list, endog_name: str, recipe, formula, missing,
            nbytes: float, exposure: bool = False, timings: dict | None = None,
            frame=None) -> DaskModelData:
    """Persist (if it fits), compute the facts, and wrap the parts."""
    t0 = time.perf_counter()
    persisted = persist_budget(nbytes)
    parts = [delayed(_get, pure=True)(pd_, 0) for pd_ in parts_and_drops]
    if persisted:  # each partition is read and built once, for the facts and the fits
        both = dask_rows.persist(*parts_and_drops, *parts, what="parts")
        parts_and_drops, parts = list(both[:len(parts)]), list(both[len(parts):])
    facts = merge_facts(list(dask_rows.compute(
        *[delayed(_facts_of, pure=True)(pd_) for pd_ in parts_and_drops], what="facts")))
    timings = {**(timings or {}), "facts_s": time.perf_counter() - t0}
    if sum(facts.lengths) == 0:
        raise ValueError("no complete rows: every row has a missing value in a used column")
    p = len(names)
    if facts.x_nonfinite.any():
        col = names[int(np.flatnonzero(facts.x_nonfinite)[0])]
        raise ValueError(f"exog column {col!r} has infinite values; remove or cap them")
    for key, a in facts.arrays.items():
        if a.nonfinite:
            raise ValueError(f"{key} has infinite values")
    check_counts(facts, endog_name)
    icpt = names.index("Intercept") if "Intercept" in names else (
        int(np.flatnonzero(facts.x_ones)[0]) if facts.x_ones.any() else None)
    exog = lazy_column(parts, facts.lengths, 0, (p,), np.float64)
    arrays = {k: (lazy_column(parts, facts.lengths, k, (), np.float64)
                  if k in facts.arrays else None) for k in _ARRAY_ARGS}
    return DaskModelData(exog, list(names), None, endog_name, DaskIndex(parts, facts),
                         arrays, recipe.spec() if recipe is not None else None,
                         facts.n_dropped, formula, icpt, None, frame=frame, parts=tuple(parts),
                         facts=facts, recipe=recipe, persisted=persisted, exposure=exposure,
                         timings=timings)


def _facts_of(part_and_drops: tuple) -> tuple:
    return part_facts(*part_and_drops)


def _array_item(part: tuple, key):
    if isinstance(key, str):
        return part[2][key]
    return part[key]


def lazy_column(parts, lengths, key, tail: tuple, dtype) -> da.Array:
    """A lazy Dask array of one item of every part (0: X, 1: y, or an array's name)."""
    chunks = [da.from_delayed(delayed(_array_item, pure=True)(p, key), shape=(n,) + tail,
                              dtype=dtype) for p, n in zip(parts, lengths, strict=True)]
    return da.concatenate(chunks, axis=0) if chunks else da.zeros((0,) + tail, dtype=dtype)


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
    timings : dict
        Seconds the build took: ``design_s`` (learning the formula's design, in
        ``design_passes`` passes), ``codes_s`` (holding the level codes of the string columns
        ``held``; a distributed client runs it alongside the facts), ``facts_s`` (building,
        persisting and checking the parts).
    """

    parts: tuple = ()
    facts: DataFacts | None = None
    recipe: PartitionDesign | None = None
    persisted: bool = False
    timings: dict = field(default_factory=dict)

    @property
    def nrows(self) -> int:
        return sum(self.facts.lengths)

    @property
    def lengths(self) -> tuple:
        return self.facts.lengths

    def build_report(self) -> str | None:
        """The build's passes and their times (:func:`~glmclass.data.parts.build_report`)."""
        return build_report(self.timings, self.persisted)

    # --- calls of a function on every partition's rows (what the results' per-row outputs and
    # sums over rows are made of: glmclass.results.dask) ---------------------------------------
    def map_parts(self, fn, *shared, meta):
        """Lazy ``fn(part, *shared)`` on every partition, as one Dask Series or DataFrame.

        Parameters
        ----------
        fn : callable
            ``fn(part, *shared) -> pandas.Series or DataFrame`` of the partition's rows, run
            where the partition lives; ``part`` is ``(X, y, arrays, index)``.
        *shared : object
            Small picklable arguments (a results copy without rows, a path of calls): each is
            one node of the graph, shipped once per worker, not once per partition.
        meta : pandas.Series or pandas.DataFrame
            The output's empty shape (its columns, dtypes and index type).

        Returns
        -------
        dask.dataframe.Series or dask.dataframe.DataFrame
            One partition per partition of the data, computed when asked.
        """
        import dask.dataframe as dd  # the array path does not need dask.dataframe

        nodes = [literal(s, "shared") for s in shared]
        tasks = [delayed(fn, pure=False)(p, *nodes) for p in self.parts]
        return dd.from_delayed(tasks, meta=meta, verify_meta=False)

    def total_parts(self, fn, *shared):
        """The sum over partitions of ``fn(part, *shared)`` (floats, arrays, DataFrames or
        tuples of them, :func:`glmclass.rows.blocks.add`), in one ``dask.compute``; each of
        ``shared`` is one node of the graph, as in :meth:`map_parts`."""
        nodes = [literal(s, "shared") for s in shared]
        tasks = [delayed(fn, pure=False)(p, *nodes) for p in self.parts]
        return functools.reduce(add, dask_rows.compute(*tasks, what="outputs"))

    def without_intercept(self) -> DaskModelData:
        if self.intercept_index is None:
            return self
        keep = np.ones(len(self.exog_names), dtype=bool)
        keep[self.intercept_index] = False
        cols = np.flatnonzero(keep)
        parts = tuple(delayed(take_part_columns, pure=True)(p, cols) for p in self.parts)
        if self.persisted:
            parts = tuple(dask_rows.persist(*parts, what="parts"))
        facts = replace(self.facts, x_nonfinite=self.facts.x_nonfinite[keep],
                        x_ones=self.facts.x_ones[keep], x_absmax=self.facts.x_absmax[keep])
        return replace(self, exog=lazy_column(parts, facts.lengths, 0, (len(cols),), float),
                       exog_names=[n for n, k in zip(self.exog_names, keep, strict=True) if k],
                       intercept_index=None, feature_mask=keep, parts=parts, facts=facts)

    def reduce_rows(self, fn, zero, rows: int):
        """:meth:`ModelData.reduce_rows`, each partition folded where it lives."""
        if self.spec is not None and self.frame is None:
            raise ValueError("the rows of the fit's DataFrame are not available; refit")
        frames = self.frame.to_delayed() if self.spec is not None else [None] * len(self.parts)
        job = literal((fn, zero, rows), "rows")
        out = dask_rows.compute(*[delayed(fold_part, pure=False)(job, f, p)
                        for f, p in zip(frames, self.parts, strict=True)], what="rows")
        return functools.reduce(add, out, zero)

    def encoded(self, fn, *args) -> tuple:
        """Parts ``(X, y, weights, offset)`` for a :class:`~glmclass.rows.dask.DaskBlocks`:
        ``fn(part, *args)`` per partition (run where the partition lives)."""
        return tuple(delayed(fn, pure=False)(p, *args) for p in self.parts)

    # --- what the models ask of data not in memory (see ModelData.in_memory) -------------------
    in_memory = False

    def encoded_rows(self, fn, *args, y_dtype=np.float64, persist: bool = True) -> DaskBlocks:
        """A row source over ``fn(part, *args) -> (X, y, weights, offset)`` per partition,
        persisted in the cluster's memory when the data are (and ``persist``)."""
        parts = self.encoded(fn, *args)
        if persist and self.persisted:
            parts = tuple(dask_rows.persist(*parts, what="parts"))
        return DaskBlocks(parts, self.lengths, len(self.exog_names), y_dtype=y_dtype)

    def row_array(self, key: str, default: float) -> da.Array:
        """The per-row array ``key`` (``"offset"``, ``"freq_weights"``, ``"var_weights"``)
        as a lazy Dask array chunked like the partitions, or ``default`` on every row."""
        if key in self.facts.arrays:
            return lazy_column(self.parts, self.lengths, key, (), np.float64)
        return da.full(self.nrows, default, chunks=(self.lengths,))

    def sum_parts(self, fn, *args, along=None):
        """The sum over partitions of ``fn(part, *args)``, or with ``along`` (a per-row
        array, e.g. a lazy linear predictor) of ``fn(part, chunk, *args)`` with the chunk of
        the partition's rows; one pass (``rows.dask.compute``)."""
        if along is None:
            tasks = [delayed(fn)(p, *args) for p in self.parts]
        else:
            filled = tuple(n for n in self.lengths if n)  # Dask drops empty chunks
            if not isinstance(along, da.Array):
                along = da.from_array(np.asarray(along), chunks=(filled,))
            if along.chunks[0] != filled:
                along = along.rechunk({0: filled})
            chunks = iter(along.to_delayed().ravel())
            tasks = [delayed(fn)(p, next(chunks), *args)
                     for p, n in zip(self.parts, self.lengths, strict=True) if n]
        return functools.reduce(add, dask_rows.compute(*tasks, what="sums"))

    def cluster_labels(self, groups, columns: list | None) -> tuple:
        """Cluster labels of the rows used, one lazy piece per partition, their names and
        the number of clusters of each: :func:`cluster_label_parts`."""
        return cluster_label_parts(self, groups, columns)


def cluster_label_parts(data: DaskModelData, groups, columns: list | None) -> tuple:
    """The cluster labels of the rows ``data`` uses, kept in the partitions.

    Parameters
    ----------
    data : DaskModelData
    groups : str, list of str, Dask Series/DataFrame/array, or array-like
        As ``cov_kwds["groups"]``: column names of the formula's DataFrame (``columns``), a
        Dask collection (one or two columns) aligned with the data's partitions, or labels
        in memory, one per row used.
    columns : list of str or None
        The column names ``groups`` gives, None when it holds labels.

    Returns
    -------
    pieces : tuple of dask.delayed.Delayed
        One per partition: the labels of its rows used, shape (n_i,) or (n_i, 2).
    names : tuple of str
    counts : tuple of int
        Clusters of each label column, counted in one pass (only the distinct labels
        travel).

    Raises
    ------
    ValueError
        Missing labels or labels of mixed types (naming the column), a wrong number of
        rows, or a Dask collection on an array model with dropped rows.
    """
    if columns is not None:
        names = tuple(columns)
        frames = data.frame[list(columns)].to_delayed()
        pieces = [delayed(G.part_labels, pure=True)(f, p, names)
                  for f, p in zip(frames, data.parts, strict=True)]
    elif is_dask(groups):
        pieces, names = _dask_label_parts(data, groups)
    else:
        arr, names = G.positional_labels(groups, data.nrows)
        pieces = [delayed(G.checked_labels, pure=True)(a, names)
                  for a in G.split_rows(arr, data.lengths)]
    if data.persisted:  # held beside the parts: the sandwich's pass reads no column again
        pieces = list(dask_rows.persist(*pieces, what="labels"))
    distinct = tree_reduce([delayed(G.distinct_labels, pure=True)(p) for p in pieces],
                           G.merge_distinct, tuple(np.empty(0) for _ in names))
    return tuple(pieces), names, tuple(len(d) for d in distinct)


def _dask_label_parts(data: DaskModelData, groups) -> tuple:
    """Label pieces of a Dask Series/DataFrame/array given as groups: matched by row label
    on the formula path, by position when no row was dropped."""
    m = G.label_count(groups)
    names = G.label_names(groups, m)
    if data.frame is not None and hasattr(groups, "divisions"):
        frames = _partitions_of(groups, data.frame, "cov_kwds['groups']")
        return [delayed(G.part_labels, pure=True)(f, p, names)
                for f, p in zip(frames, data.parts, strict=True)], names
    if data.n_dropped:
        raise ValueError(f"cov_kwds['groups']: {data.n_dropped} rows were dropped for missing "
                         "values, and a Dask array of labels cannot be matched to the rows "
                         "used; pass the labels as a column of the data (by name), or drop "
                         "the incomplete rows before building the model")
    arr = groups.to_dask_array(lengths=True) if hasattr(groups, "to_dask_array") else groups
    arr = _dask_vector(arr[:, 0] if m == 1 and arr.ndim == 2 else arr, data.lengths,
                       "cov_kwds['groups']", two=m == 2)
    chunks = arr.to_delayed().ravel() if arr.ndim == 1 else arr.to_delayed()[:, 0]
    return [delayed(G.checked_labels, pure=True)(c, names) for c in chunks], names


# --- the two entry points -------------------------------------------------------------------------

def _dask_vector(a, n_chunks: tuple, key: str, two: bool = False):
    """A per-row Dask array (or None) with the rows chunked like ``n_chunks``; with ``two``,
    also two columns (a response of successes and failures)."""
    if a is None:
        return None
    if hasattr(a, "to_dask_array"):
        if a.ndim == 2 and a.shape[1] != 1 and not (two and a.shape[1] == 2):
            raise ValueError(f"{key} must be one column")
        a = a.to_dask_array(lengths=True)
    if not isinstance(a, da.Array):
        a = da.from_array(np.asarray(a.to_numpy() if isinstance(a, (pd.Series, pd.DataFrame))
                                     else a), chunks=-1)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1 and not (two and a.ndim == 2 and a.shape[1] == 2):
        raise ValueError(f"{key} must be one-dimensional (one value per row), got shape "
                         f"{a.shape}")
    if np.isnan(a.shape[0]):
        a = a.compute_chunk_sizes()
    total = sum(n_chunks)
    if a.shape[0] != total:
        raise ValueError(f"{key} has {a.shape[0]} rows but exog has {total}")
    if a.ndim == 2:
        return a.rechunk({0: n_chunks, 1: -1})
    return a if a.chunks[0] == n_chunks else a.rechunk({0: n_chunks})


def from_dask_arrays(endog, exog, missing: str = "drop", **arrays) -> DaskModelData:
    """The array path for row-chunked Dask arrays (or Dask DataFrames/Series).

    Parameters
    ----------
    endog : dask Array or Series of shape (n_obs,), or array-like
    exog : dask Array or DataFrame of shape (n_obs, p)
    missing : {"drop", "raise"}
    **arrays : per-row arrays (offsets, weights) or None
        Dask collections of the same partitions, NumPy arrays (by position), or pandas
        objects: matched by row label when exog (or endog) is a Dask DataFrame/Series with
        known divisions, refused when its divisions are unknown, by position beside Dask
        arrays (which have no row labels, as NumPy rows in memory).

    Returns
    -------
    DaskModelData
    """
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if endog is None:
        raise ValueError("endog is None: pass the response as an array of length n_obs")
    names, labelled = None, next((o for o in (exog, endog) if hasattr(o, "divisions")), None)
    exog_labels = labelled is exog  # then exog's chunks are the labels' partitions
    if hasattr(exog, "to_dask_array"):  # a Dask DataFrame or Series
        names, exog = numeric_column_names(exog), exog.to_dask_array(lengths=True)
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
    if getattr(endog, "ndim", 1) == 2 and hasattr(endog, "columns") and len(endog.columns) == 2:
        endog_name = " + ".join(map(str, endog.columns))  # as the in-memory path names it
    by = (labelled, chunks if exog_labels else None)
    arrays = {k: _beside(a, k, *by) for k, a in arrays.items()}
    y = _dask_vector(_beside(endog, "endog", *by), chunks, "endog", two=True)
    arrs = {k: _dask_vector(a, chunks, k) for k, a in arrays.items()}
    starts = np.concatenate([[0], np.cumsum(chunks)[:-1]]).astype(int)
    blocks = {k: (a.to_delayed().ravel() if a is not None else [None] * len(chunks))
              for k, a in arrs.items()}
    parts = [delayed(array_part, pure=True)(x, yy, {k: blocks[k][i] for k in arrs},
                                            int(starts[i]), missing, names, endog_name)
             for i, (x, yy) in enumerate(zip(exog.to_delayed()[:, 0], y.to_delayed().ravel(),
                                             strict=True))]
    nbytes = float(exog.shape[0]) * (p + 4) * 8.0
    return _finish(parts, names, endog_name, None, None, missing, nbytes,
                   arrays.get("exposure") is not None)


def _beside(a, key: str, labelled, chunks: tuple | None):
    """A per-row argument of the array path as the rows' values: a pandas object matched by
    row label to ``labelled`` (the Dask DataFrame or Series of exog or endog, None for Dask
    arrays: then by position, as in memory for NumPy rows), a Dask collection checked to
    share its divisions, anything else as given. ``chunks``: the rows of ``labelled``'s
    partitions (None: counted here)."""
    if labelled is None or a is None or a is labelled:
        return a
    if hasattr(a, "divisions"):
        if (labelled.known_divisions and a.known_divisions
                and tuple(a.divisions) != tuple(labelled.divisions)):
            raise ValueError(f"{key}'s partitions (divisions) differ from the data's: take it "
                             "from the same Dask DataFrame or repartition both alike")
        return a
    if not L.is_pandas(a):
        return a
    if not labelled.known_divisions:
        raise L.refuse_unlabelled(key, ", or a NumPy array (paired by position)")
    a = L.check_labelled(a, key, numeric=key != "endog")
    if chunks is None:  # the labels are endog's, exog a Dask array: count endog's rows
        chunks = labelled.to_dask_array(lengths=True).chunks[0]
    node, dtype = literal(a, "per-row"), a.iloc[:0].to_numpy().dtype
    tail = () if a.ndim == 1 else (a.shape[1],)
    return da.concatenate([da.from_delayed(delayed(L.values_at, pure=True)(i, node, key),
                                           shape=(n,) + tail, dtype=dtype)
                           for i, n in zip(labelled.index.to_delayed(), chunks, strict=True)])


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
    if L.is_pandas(a):  # matched to each partition's rows by label, where it lives
        if not data.known_divisions:
            raise L.refuse_unlabelled(key, " or the name of a column of the data")
        a = L.check_labelled(a, key, numeric=True)
        return [literal(L.ByLabel(a, key), "per-row")] * data.npartitions
    if isinstance(a, da.Array):
        if a.numblocks[0] != data.npartitions:
            raise ValueError(f"{key} has {a.numblocks[0]} chunks but data has "
                             f"{data.npartitions} partitions: chunk it like data")
        return list(a.to_delayed().ravel())
    raise TypeError(f"{key} must be a Dask Series or array aligned with data's partitions, "
                    "a pandas Series with data's row labels, or the name of a column of data "
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
    **arrays : Dask Series or arrays aligned with ``data``'s partitions, column names, pandas
        Series (matched by row label; ``data`` needs known divisions), or None
        A column named by ``offset=``/``exposure=`` becomes an ``offset()`` term of the
        formula (read from new data when predicting), as in memory; weights named by column
        are taken from ``data``.

    Returns
    -------
    DaskModelData
    """
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    if not hasattr(data, "columns"):
        raise TypeError(f"data must be a Dask DataFrame, got {type(data).__name__}")
    from ..formula.design import check_formula
    from ..formula.namespace import formula_env
    from ..formula.parse import parse

    columns = list(data.columns)
    extra, exclude, named_exposure = named_columns(arrays, columns)
    arrays = {k: (data[a] if isinstance(a, str) else a) for k, a in arrays.items()
              if not (isinstance(a, str) and k in PREDICTED_BY_NAME)}
    aligned = {k: _partitions_of(a, data, k) for k, a in arrays.items()}
    eval_env = formula_env(eval_env)
    # refused before any reading; the columns both sides use (named offsets included)
    cols = check_formula(parse(formula, columns, extra, exclude), columns, eval_env)
    frame = data[cols] if cols else data
    t0 = time.perf_counter()
    used = used_columns(formula, columns, extra, exclude)
    witness = tree_reduce([delayed(witness_of, pure=True)(f, used) for f in frame.to_delayed()],
                          merge_witnesses, Witness(used), what="design")
    recipe = learn_design(formula, None, columns, eval_env, extra, exclude, witness=witness)
    passes = 1
    if recipe is None:  # a stateful transform (center(x)): patsy reads the pieces again

        def pieces():
            for i in range(frame.npartitions):
                (piece,) = dask_rows.compute(frame.get_partition(i), what="design rows")
                yield piece[complete_rows(piece)]

        recipe = learn_design(formula, pieces, columns, eval_env, extra, exclude)
        passes = 2
    timings = {"design_s": time.perf_counter() - t0, "design_passes": passes}
    p = len(recipe.column_names)
    nbytes = float(witness.rows) * (p + 4) * 8.0
    delayed_frames = frame.to_delayed()
    held = recipe.level_columns()
    if held and len(held) < len(cols) and not persist_budget(nbytes):
        # the parts are read again every pass: hold the strings' level codes (a byte a row)
        t1 = time.perf_counter()
        codes = dask_rows.persist(*[delayed(level_codes, pure=True)(f, held)
                                    for f in data[list(held)].to_delayed()], what="level codes")
        rest = data[[c for c in cols if c not in held]].to_delayed()
        delayed_frames = [delayed(with_level_codes, pure=True)(f, c, held, cols)
                          for f, c in zip(rest, codes, strict=True)]
        timings.update(codes_s=time.perf_counter() - t1, held=list(held))
    shared = literal(recipe, "recipe")  # one node: sent once per worker, not per partition
    parts = [delayed(formula_part, pure=True)(f, shared, {k: v[i] for k, v in aligned.items()},
                                               missing)
             for i, f in enumerate(delayed_frames)]
    return _finish(parts, recipe.column_names, recipe.endog_name, recipe, formula, missing,
                   nbytes, named_exposure or arrays.get("exposure") is not None, timings,
                   frame=data)


