"""A row-block source over the partitions of Dask collections: the out-of-core
:class:`~glmclass.rows.blocks.RowBlocks`.

Each partition evaluates (on a Dask worker, or a thread of the local scheduler) to a tuple ``(X,
y, weights, offset)`` of NumPy arrays and is read as an
:class:`~glmclass.rows.blocks.ArrayBlocks`, so the per-block code of the solvers runs unchanged
where the partition lives. :meth:`DaskBlocks.reduce` folds every partition with the caller's
``fn`` and ``combine`` and merges the partial results in a tree (fan-in :data:`SPLIT_EVERY`):
only p x p pieces travel, never rows. One call is one ``dask.compute``. :meth:`DaskBlocks.map`
returns a lazy Dask array.

This module imports Dask; it is imported only when a model is given Dask data, so
``import glmclass`` never imports Dask.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import dask
import dask.array as da
import numpy as np
from dask import delayed
from dask.delayed import Delayed

from .blocks import ArrayBlocks, Block, RowBlocks, add, block_rows
from .labels import empty_sums, merge_all

T = TypeVar("T")

#: Partial results merged per task of the combining tree.
SPLIT_EVERY = 8

#: Most rows per block inside a partition: each per-row vector of a block (eta, weights, ...)
#: stays under 64 KB. Dask's workers run with ``MALLOC_TRIM_THRESHOLD_=65536`` (distributed's
#: ``nanny.pre-spawn-environ``), which turns off glibc's adaptive mmap threshold: every array of
#: 128 KB or more is then its own mmap, zero-filled page by page, and 16384-row blocks made a
#: pass's elementwise work 2-8x slower on a worker than in the client.
WORKER_BLOCK_ROWS = 7936


class _Empty:
    """Marker of a partition (or subtree) without rows: it takes no part in ``combine``, so a
    reduction whose ``zero`` is not an identity (e.g. ``None``) still works with empty
    partitions."""

    def __reduce__(self) -> str:
        return "EMPTY"

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY = _Empty()


# --- counting the passes -------------------------------------------------------------------------

_PASS_LOGS: list[list[str]] = []


@contextmanager
def counting_passes() -> Iterator[list[str]]:
    """Record every pass glmclass makes over Dask partitions while the block runs.

    Yields
    ------
    list of str
        Grows by one entry per pass (one :func:`compute` or :func:`persist` call, i.e. one
        graph over the partitions), naming what the pass was for (``"design"``, ``"facts"``,
        ``"reduce"``, ...). Deterministic: it counts glmclass's calls, not Dask's tasks.

    Examples
    --------
    >>> with counting_passes() as passes:  # doctest: +SKIP
    ...     model = gc.Logit.from_formula("y ~ x", ddf)
    >>> passes  # doctest: +SKIP
    ['design', 'facts']
    """
    log: list[str] = []
    _PASS_LOGS.append(log)
    try:
        yield log
    finally:
        _PASS_LOGS.remove(log)


def _record(what: str) -> None:
    for log in _PASS_LOGS:
        log.append(what)


def compute(*graphs, what: str) -> tuple:
    """``dask.compute(*graphs)``, counted as one pass named ``what`` (see
    :func:`counting_passes`)."""
    _record(what)
    return dask.compute(*graphs)


def persist(*graphs, what: str) -> tuple:
    """``dask.persist(*graphs)``, counted as one pass named ``what``."""
    _record(what)
    return dask.persist(*graphs)


def memory_budget() -> float:
    """Bytes a source's parts may take to be persisted: half the cluster's memory under a
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


@dataclass(frozen=True)
class View:
    """How a partition's ArrayBlocks is derived from its arrays (small and picklable).

    Attributes
    ----------
    cols : ndarray of int or None
        Kept design columns (None: all).
    ones : bool
        Replace the design by one column of ones (:meth:`RowBlocks.intercept_only`).
    rows : int or None
        Rows per block (None: :func:`glmclass.rows.blocks.block_rows`).
    positive : bool
        Keep only the rows of positive weight.
    """

    cols: tuple[int, ...] | None = None
    ones: bool = False
    rows: int | None = None
    positive: bool = False


def partition_blocks(part: tuple, mask: np.ndarray | None, view: View) -> ArrayBlocks:
    """The ArrayBlocks of one partition ``(X, y, weights, offset)`` under ``view`` (a fifth
    item, a dict, holds the per-row arrays its blocks carry: :func:`with_extra`)."""
    X, y, w, o = part[:4]
    if view.ones:
        X = np.broadcast_to(np.float64(1.0), (X.shape[0], 1))
    rows = view.rows if view.rows is not None else min(block_rows(X.shape[1]), WORKER_BLOCK_ROWS)
    b = ArrayBlocks(X, y, w, o, rows=rows, **(part[4] if len(part) > 4 else {}))
    if view.cols is not None:
        b = b.take_columns(np.asarray(view.cols, dtype=np.intp))
    if view.positive and w is not None:
        mask = (w > 0) if mask is None else (np.asarray(mask, dtype=bool) & (w > 0))
    if mask is not None:
        b = b.take_rows(np.asarray(mask, dtype=bool))
    return b


def _reduce_part(job: tuple, part: tuple, mask, view: View):
    fn, zero, combine = job
    b = partition_blocks(part, mask, view)
    if b.n_rows == 0:
        return EMPTY
    return b.reduce(fn, zero, combine)


def _combine_many(job: tuple, parts: list):
    return _combine_pair_list(job[2], parts)


def _combine_pair_list(combine: Callable, parts: list):
    acc = EMPTY
    for p in parts:
        if p is EMPTY or isinstance(p, _Empty):
            continue
        acc = p if acc is EMPTY else combine(acc, p)
    return acc


def tree_reduce(nodes: Sequence[Delayed], combine: Callable[[T, T], T], zero: T,
                split_every: int = SPLIT_EVERY, what: str = "reduce") -> T:
    """Merge the results of ``nodes`` (one per partition) with ``combine`` in a tree of fan-in
    ``split_every``, in partition order, in one ``dask.compute``: only the partial results
    travel, never rows.

    Parameters
    ----------
    nodes : sequence of dask.delayed.Delayed
    combine : callable
        ``combine(a, b)``, associative; a node's result :data:`EMPTY` takes no part.
    zero : object
        Returned when there are no nodes (or every one is EMPTY).
    split_every : int
        Fan-in of the tree.
    what : str
        The pass's name for :func:`counting_passes`.

    Returns
    -------
    object
    """
    nodes = list(nodes)
    job = literal(combine, "combine")
    while len(nodes) > 1:
        nodes = [delayed(_combine_pair_list, pure=False)(job, nodes[i:i + split_every])
                 for i in range(0, len(nodes), split_every)]
    if not nodes:
        return zero
    (out,) = compute(nodes[0], what=what)
    return zero if isinstance(out, _Empty) else out


def with_extra(part: tuple, key: str, values, where: str) -> tuple:
    """One partition ``(X, y, weights, offset[, extra])`` whose blocks also carry ``values``
    (one per row of the partition) as ``key`` (``"groups"``, ``"freq_weights"``)."""
    values = np.asarray(values)
    if values.shape[0] != part[0].shape[0]:
        raise ValueError(f"{key} of {where} have {values.shape[0]} rows, but the partition has "
                         f"{part[0].shape[0]}; give one per row the model uses, chunked like "
                         "the data")
    extra = dict(part[4]) if len(part) > 4 else {}
    extra[key] = values
    return (*part[:4], extra)


def _label_part(job: tuple, part: tuple, mask, view: View):
    fn, groupings = job
    b = partition_blocks(part, mask, view)
    if b.n_rows == 0:
        return EMPTY
    return b.reduce_by_label(fn, groupings)


def _map_part(fn: Callable, part: tuple, mask, view: View) -> np.ndarray:
    return partition_blocks(part, mask, view).map(fn)


def literal(obj: Any, what: str) -> Delayed:
    """``obj`` as one node of the graph, referenced by every task (shipped once per worker,
    not once per partition); a fresh name, so it is never hashed.

    Parameters
    ----------
    obj : object
        Picklable (a function, a recipe, a small array).
    what : str
        A word for the node's name (shown in Dask's dashboards).

    Returns
    -------
    dask.delayed.Delayed
    """
    return delayed(obj, traverse=False, name=f"glmclass-{what}-{uuid.uuid4().hex}")


# --- new rows given as Dask collections (predictions of a fit on either data) -----------------


def new_rows_frame(exog):
    """New rows as a Dask DataFrame: a Dask DataFrame as given, a row-chunked Dask array (one
    or two dimensions) as a DataFrame of its columns, chunked alike."""
    import dask.dataframe as dd

    if isinstance(exog, da.Array):
        return dd.from_dask_array(exog if exog.ndim == 2 else exog[:, None])
    return exog


def map_new_partitions(frame, fn, *args, offset=None, meta):
    """Lazy ``fn(partition, offset_partition, *args)`` on every partition of the Dask DataFrame
    of new rows ``frame``.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The new rows (:func:`new_rows_frame`).
    fn : callable
        ``fn(pandas.DataFrame, offset or None, *args) -> pandas.Series or DataFrame``.
    *args : object
        Further arguments of ``fn``.
    offset : dask.dataframe.Series, optional
        Per-row offsets partitioned like ``frame``; ``fn`` receives the partition's piece.
    meta : pandas.Series or pandas.DataFrame
        The output's empty shape.

    Returns
    -------
    dask.dataframe.Series or dask.dataframe.DataFrame
    """
    if offset is None:
        return frame.map_partitions(fn, None, *args, meta=meta)
    if not dask.is_dask_collection(offset) or not hasattr(offset, "divisions"):
        raise TypeError("with Dask new data, offset must be a Dask Series aligned with it "
                        f"(take it from the same DataFrame), got {type(offset).__name__}")
    if offset.npartitions != frame.npartitions or (
            frame.known_divisions and offset.known_divisions
            and tuple(offset.divisions) != tuple(frame.divisions)):
        raise ValueError("offset's partitions differ from the new data's (other divisions or "
                         f"{offset.npartitions} partitions against {frame.npartitions}): take "
                         "it from the same Dask DataFrame, or repartition both alike")
    return frame.map_partitions(fn, offset, *args, meta=meta, align_dataframes=False)


class DaskBlocks(RowBlocks):
    """Rows held in the partitions of a Dask collection.

    Parameters
    ----------
    parts : sequence of dask.delayed.Delayed
        One per partition, each evaluating to ``(X, y, weights, offset)``: X of shape
        (n_i, p) float64, y of shape (n_i,) or None, weights and offset of shape (n_i,) or None.
    lengths : sequence of int
        Rows of each partition, n_i.
    n_cols : int
        Design columns p.
    y_dtype : numpy dtype, optional
        Dtype of y (for the shape of :meth:`map`'s output); None without a response.
    rows : int, optional
        Rows per block inside a partition.

    Notes
    -----
    The source never holds rows on the client: ``reduce`` returns the combined partial results
    and ``map`` a lazy Dask array whose chunks are the partitions.
    """

    sample_hessians = False  # each pass is a graph over partitions: make few of them
    in_memory = False  # the rows live in the partitions: take_rows/map give lazy arrays


    def __init__(self, parts: Sequence[Delayed], lengths: Sequence[int], n_cols: int,
                 y_dtype=None, rows: int | None = None) -> None:
        if len(parts) != len(lengths):
            raise ValueError(f"{len(parts)} partitions but {len(lengths)} lengths")
        self._parts = tuple(parts)
        self._lengths = tuple(int(n) for n in lengths)
        self._p = int(n_cols)
        self._y_dtype = None if y_dtype is None else np.dtype(y_dtype)
        self._view = View(rows=rows)
        self._masks: tuple | None = None  # per-partition row masks (take_rows)
        self._kept: int | None = None

    # --- shape ----------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        if self._masks is None and not self._view.positive:
            return sum(self._lengths)
        if self._kept is None:
            self._kept = int(self.reduce(lambda b: b.X.shape[0], 0))
        return self._kept

    @property
    def n_cols(self) -> int:
        return 1 if self._view.ones else (self._p if self._view.cols is None
                                          else len(self._view.cols))

    @property
    def npartitions(self) -> int:
        return len(self._parts)

    # --- passes ---------------------------------------------------------------------------------
    def _masks_or_none(self) -> tuple:
        return self._masks if self._masks is not None else (None,) * len(self._parts)

    def reduce(self, fn: Callable[[Block], T], zero: T,
               combine: Callable[[T, T], T] = add) -> T:
        job = literal((fn, zero, combine), "reduce")
        nodes = [delayed(_reduce_part, pure=False)(job, part, mask, self._view)
                 for part, mask in zip(self._parts, self._masks_or_none(), strict=True)]
        while len(nodes) > 1:
            nodes = [delayed(_combine_many, pure=False)(job, nodes[i:i + SPLIT_EVERY])
                     for i in range(0, len(nodes), SPLIT_EVERY)]
        if not nodes:
            return zero
        (out,) = compute(nodes[0], what="reduce")
        return zero if isinstance(out, _Empty) else out

    def reduce_by_label(self, fn: Callable[[Block], np.ndarray],
                        groupings: tuple[tuple[int, ...], ...] = ((0,),)) -> tuple:
        """:meth:`RowBlocks.reduce_by_label`: each partition sums its rows by label where it
        lives and returns G_i x k sums (:class:`~glmclass.rows.labels.LabelSums`); these are
        merged by label in a tree, so the client receives G x k sums per grouping and never
        a per-row value."""
        job = literal((fn, groupings), "labels")
        nodes = [delayed(_label_part, pure=False)(job, part, mask, self._view)
                 for part, mask in zip(self._parts, self._masks_or_none(), strict=True)]
        return tree_reduce(nodes, merge_all, empty_sums(len(groupings)))

    def with_groups(self, groups) -> DaskBlocks:
        """The same rows whose blocks carry group labels: ``groups`` one piece per partition
        (ndarrays or delayed values of shape (n_i,) or (n_i, m), the partition's rows before
        any :meth:`take_rows`), or an ndarray / Dask array of every row."""
        return self._with_extra("groups", groups)

    def with_freq_weights(self, freq_weights) -> DaskBlocks:
        """The same rows whose blocks carry frequency weights (as :meth:`with_groups`)."""
        return self._with_extra("freq_weights", freq_weights)

    def _with_extra(self, key: str, values) -> DaskBlocks:
        n = sum(self._lengths)
        if isinstance(values, da.Array):
            if values.shape[0] != n:
                raise ValueError(f"{key} has {values.shape[0]} rows, the data have {n}")
            if values.chunks[0] != self._lengths or values.numblocks[1:] not in ((), (1,)):
                values = values.rechunk({0: self._lengths, **({1: -1} if values.ndim > 1
                                                              else {})})
            pieces = list(values.to_delayed().ravel() if values.ndim == 1
                          else values.to_delayed()[:, 0])
        elif isinstance(values, np.ndarray):
            if values.shape[0] != n:
                raise ValueError(f"{key} has {values.shape[0]} rows, the data have {n}")
            pieces = np.split(values, np.cumsum(self._lengths)[:-1])
        else:
            pieces = list(values)
            if len(pieces) != len(self._parts):
                raise ValueError(f"{key}: {len(pieces)} pieces for {len(self._parts)} "
                                 "partitions")
        parts = tuple(delayed(with_extra, pure=False)(p, key, v, f"partition {i}")
                      for i, (p, v) in enumerate(zip(self._parts, pieces, strict=True)))
        return self._derived(_parts=parts)

    def stream(self):
        """The partitions' blocks in row order, one partition computed at a time."""
        for part, mask in zip(self._parts, self._masks_or_none(), strict=True):
            part, mask = compute(part, mask, what="stream")
            yield from partition_blocks(part, mask, self._view).stream()

    def _probe(self, fn: Callable[[Block], np.ndarray]) -> np.ndarray:
        """``fn`` on a block of no rows: the trailing shape and dtype of :meth:`map`."""
        p = self._p if self._view.cols is None and not self._view.ones else self.n_cols
        y = None if self._y_dtype is None else np.empty(0, self._y_dtype)
        return np.asarray(fn(Block(np.empty((0, p)), y, np.empty(0), np.empty(0), 0)))

    def map(self, fn: Callable[[Block], np.ndarray]):
        """Per-row outputs as a lazy Dask array (chunks: the partitions).

        Returns
        -------
        dask.array.Array of shape (n_rows,) or (n_rows, k)
            Chunk sizes are unknown (NaN) after :meth:`take_rows`.
        """
        probe = self._probe(fn)
        if not self._parts:
            return probe
        job = literal(fn, "map")
        filtered = self._masks is not None or self._view.positive
        lengths = (np.nan,) * len(self._parts) if filtered else self._lengths
        chunks = [da.from_delayed(delayed(_map_part, pure=False)(job, part, mask, self._view),
                                  shape=(n,) + probe.shape[1:], dtype=probe.dtype)
                  for part, mask, n in zip(self._parts, self._masks_or_none(), lengths,
                                           strict=True)]
        return da.concatenate(chunks, axis=0)

    # --- derived sources ------------------------------------------------------------------------
    def _derived(self, **changes) -> DaskBlocks:
        """A copy with ``changes``; the count of kept rows is carried over unless the rows
        kept change (a row mask, or keeping the rows of positive weight)."""
        view = changes.get("_view", self._view)
        if "_masks" in changes or view.positive != self._view.positive:
            changes["_kept"] = None
        new = object.__new__(DaskBlocks)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        keep = np.asarray(keep)
        n = self.n_cols
        if keep.dtype == bool:
            if keep.shape != (n,):
                raise ValueError(f"keep must have shape ({n},), got {keep.shape}")
            cols = np.flatnonzero(keep)
        else:
            cols = keep.astype(np.intp).ravel()
        if np.array_equal(cols, np.arange(n)):
            return self
        if self._view.ones:
            raise ValueError("take_columns on an intercept-only source")
        base = np.arange(self._p) if self._view.cols is None else np.asarray(self._view.cols)
        return self._derived(_view=replace(self._view, cols=tuple(int(c) for c in base[cols])))

    def take_rows(self, mask) -> RowBlocks:
        """The rows where ``mask`` is True: a boolean ndarray of shape (n_rows,) or a Dask
        array whose chunks are the partitions (as :meth:`map` returns); ``self`` when an
        ndarray mask keeps every row."""
        if self._masks is not None:
            raise ValueError("take_rows on a source that already has a row mask; combine the "
                             "two masks instead")
        if isinstance(mask, da.Array):
            if mask.numblocks[0] != len(self._parts):
                mask = mask.rechunk({0: self._lengths})
            masks = tuple(mask.to_delayed().ravel())
        else:
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != (self.n_rows,):
                raise ValueError(f"mask must have shape ({self.n_rows},), got {mask.shape}")
            if mask.all():
                return self
            ends = np.cumsum(self._lengths)
            masks = tuple(np.split(mask, ends[:-1]))
        return self._derived(_masks=masks)

    def intercept_only(self) -> RowBlocks:
        return self._derived(_view=replace(self._view, cols=None, ones=True))

    def with_rows(self, rows: int | None) -> DaskBlocks:
        """The same source read in blocks of ``rows`` rows inside each partition."""
        return self._derived(_view=replace(self._view, rows=rows))

    def positive_weights(self) -> DaskBlocks:
        """The rows of positive weight (R's ``glm.fit`` leaves rows of weight 0 out of the
        fit), selected inside each partition: no mask travels."""
        return self._derived(_view=replace(self._view, positive=True))

    def __repr__(self) -> str:
        return (f"<DaskBlocks: {sum(self._lengths)} x {self.n_cols} in {len(self._parts)} "
                f"partitions>")
