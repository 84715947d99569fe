"""The row-block source that every solver and numeric pass reads rows through.

A pass over the data is a :meth:`RowBlocks.reduce` (per-block partial results, combined: Gram
matrices, moments, sums) or a :meth:`RowBlocks.map` (per-row outputs in row order: linear
predictors, fitted values). The solvers never index the data themselves, so a source over
out-of-core data (e.g. the partitions of a Dask array, each reduced where it lives and the
partial results combined) is one more subclass of :class:`RowBlocks`, not a second solver.

Blocks are sized to stay in cache (:func:`block_rows`): each block's temporaries (its weighted
copy, its per-row vectors) cost a few MB however large N is, and no N x p temporary is formed.
This module imports NumPy only; it sits below ``solvers/`` and ``numerics/``.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from . import labels
from .constant import constant

#: Bytes of X per block: small enough to stay in cache, large enough to amortise call overhead.
BLOCK_BYTES = 2 * 1024 * 1024
#: Most rows per block: the per-row vectors of a block (eta, mu, weights, ...) stay ~128 KB each
#: however few columns X has (at p = 1, 2 MB of X would be 262144 rows and 2 MB per vector).
MAX_BLOCK_ROWS = 16384

T = TypeVar("T")


def block_rows(n_cols: int, block_bytes: int = BLOCK_BYTES) -> int:
    """Rows per block for a design with ``n_cols`` float64 columns (256 to 16384)."""
    return min(MAX_BLOCK_ROWS, max(256, block_bytes // (8 * max(n_cols, 1))))


@dataclass(frozen=True, slots=True)
class Block:
    """A block of consecutive rows of a source (views where the source allows).

    Attributes
    ----------
    X : ndarray of shape (r, p)
        The design's rows.
    y : ndarray of shape (r,) or None
        Response (floats, or integer class codes), or None for a source without one.
    weights : ndarray of shape (r,)
        Prior or frequency weights (a read-only broadcast view of 1.0 when none were given).
    offset : ndarray of shape (r,)
        Offset (a read-only broadcast view of 0.0 when none was given).
    start : int
        Position of the block's first row in the source.
    groups : ndarray of shape (r,) or (r, m), or None
        Group labels of the rows, when the source carries them (:meth:`RowBlocks.with_groups`).
    freq_weights : ndarray of shape (r,) or None
        Frequency weights of the rows, when the source carries them apart from ``weights``
        (:meth:`RowBlocks.with_freq_weights`).
    """

    X: np.ndarray
    y: np.ndarray | None
    weights: np.ndarray
    offset: np.ndarray
    start: int
    groups: np.ndarray | None = None
    freq_weights: np.ndarray | None = None


def add(a: Any, b: Any) -> Any:
    """Elementwise sum of floats, ndarrays or (nested) tuples of them: the default combine.

    Never modifies its arguments (a partial result may be combined more than once, e.g. in a
    tree reduction over partitions).
    """
    if isinstance(a, tuple):
        return tuple(add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def _owned(zero: Any) -> Any:
    """A copy of ``zero`` whose arrays a reduction may sum into in place."""
    if isinstance(zero, tuple):
        return tuple(_owned(z) for z in zero)
    return zero.copy() if isinstance(zero, np.ndarray) else zero


def add_into(acc: Any, part: Any) -> Any:
    """``add(acc, part)``, summed into acc's arrays where shapes and dtypes match: acc is a
    reduction's own (from :func:`_owned` or a fresh sum), ``part`` is never modified."""
    if isinstance(acc, tuple):
        return tuple(add_into(a, b) for a, b in zip(acc, part, strict=True))
    if (isinstance(acc, np.ndarray) and isinstance(part, np.ndarray)
            and acc.shape == part.shape and acc.dtype == part.dtype):
        acc += part
        return acc
    return acc + part


def _take(a: np.ndarray | None, at: np.ndarray) -> np.ndarray | None:
    """Rows ``at`` of ``a``; a broadcast view stays one (its rows are all alike, and take()
    from it is 40x slower than from memory)."""
    if a is None:
        return None
    if a.strides[0] == 0:
        return a[: at.shape[0]]
    return a.take(at, axis=0)


def _positive(b: Block) -> np.ndarray:
    return b.weights > 0


class RowBlocks(ABC):
    """A source of rows ``(X, y, weights, offset)`` read block by block.

    Subclasses decide where the rows live and how large a block is; the solvers only call
    :meth:`reduce` and :meth:`map`.
    """

    #: Whether the solvers' ``direction="auto"`` may trade a full Hessian pass for several
    #: cheaper ones (:mod:`glmclass.solvers.sampled`). True for rows in memory; a source whose
    #: every pass re-reads storage or schedules a graph (Dask) says False: there fewer passes
    #: matter more, and exact IRLS iterates keep its fits equal to the in-memory exact fit.
    sample_hessians: bool = True
    #: Whether the rows are NumPy arrays on this machine: :meth:`map` then returns an ndarray
    #: and :meth:`stream` reads no storage. False for a source over partitions held elsewhere
    #: (Dask), whose :meth:`map` returns a lazy array.
    in_memory: bool = True

    @property
    @abstractmethod
    def n_rows(self) -> int:
        """Number of rows N."""

    @property
    @abstractmethod
    def n_cols(self) -> int:
        """Number of design columns p."""

    @abstractmethod
    def reduce(self, fn: Callable[[Block], T], zero: T,
               combine: Callable[[T, T], T] = add) -> T:
        """Fold the blocks: ``acc = zero``, then ``acc = combine(acc, fn(block))`` per block.

        Parameters
        ----------
        fn : callable
            ``fn(block) -> partial``: the block's share of the result (a float, an ndarray, a
            tuple of them). It must not keep references to the block's arrays.
        zero : object
            The identity of ``combine`` (e.g. ``0.0``, ``np.zeros((p, p))``); returned when there
            are no rows.
        combine : callable
            Merges two partial results; must be associative (up to rounding) and must not modify
            its arguments, so that partitions can be reduced separately and merged in any tree.

        Returns
        -------
        object
            The combined partial results.
        """

    @abstractmethod
    def map(self, fn: Callable[[Block], np.ndarray]) -> np.ndarray:
        """Per-row outputs of every block, in row order.

        Parameters
        ----------
        fn : callable
            ``fn(block) -> out`` of shape (r,) or (r, k) for a block of r rows.

        Returns
        -------
        ndarray of shape (n_rows,) or (n_rows, k)
            (An out-of-core source may return a lazily evaluated array.)
        """

    def stream(self) -> Iterator[Block]:
        """The blocks one after another in row order, brought to the caller: for the
        sequential algorithms (the perceptron, stochastic gradient steps), whose every step
        depends on the last. A source whose rows live elsewhere brings one part at a time."""
        raise NotImplementedError(f"{type(self).__name__} cannot stream its rows")

    def linear_predictor(self, coef: np.ndarray) -> np.ndarray:
        """eta = X coef + offset on every row.

        Parameters
        ----------
        coef : ndarray of shape (p,)
            Finite coefficients (set those of aliased columns to 0, not NaN).

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        coef = np.asarray(coef, dtype=float)

        def eta(b: Block) -> np.ndarray:
            e = b.X @ coef
            e += b.offset
            return e

        return self.map(eta)

    @abstractmethod
    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        """The source over ``X[:, keep]`` (boolean mask or column indices); ``self`` when every
        column is kept."""

    @abstractmethod
    def take_rows(self, mask: np.ndarray) -> RowBlocks:
        """The source over the rows where ``mask`` (boolean, shape (n_rows,)) is True, in order;
        ``self`` when every row is kept. Block starts count the kept rows only."""

    @abstractmethod
    def intercept_only(self) -> RowBlocks:
        """The same rows (y, weights, offset) with a design of one column of ones."""

    def with_rows(self, rows: int | None) -> RowBlocks:
        """The same rows read in blocks of ``rows`` rows (None: the source's default), e.g.
        smaller blocks for a pass whose per-row temporaries are K times wider. The block size
        changes no value of a pass; a source that sizes its blocks itself returns ``self``."""
        return self

    def positive_weights(self) -> RowBlocks:
        """The rows of positive weight, in order (R's ``glm.fit`` leaves rows of weight 0
        out of the fit): :meth:`take_rows` of the mask of one :meth:`map` pass."""
        return self.take_rows(self.map(_positive))

    def subsample(self, n_rows: int) -> RowBlocks | None:
        """About ``n_rows`` of the rows, every k-th one, as a source in memory; None when the
        source cannot take them cheaply (it would need a pass of its own) or has fewer than
        twice as many rows.

        A systematic sample spreads over the whole source, so sorted rows (by the response, by
        a covariate) are sampled evenly; a solver fits it first and starts the full fit from
        that estimate (:func:`glmclass.solvers.irls.irls`).

        Parameters
        ----------
        n_rows : int
            Rows wanted (at least 1).
        """
        return None

    def with_groups(self, groups) -> RowBlocks:
        """The same rows, each block carrying its rows' group labels (``Block.groups``):
        ``groups`` of shape (n_rows,) or (n_rows, m) in row order (a source over partitions
        also takes one piece per partition)."""
        raise NotImplementedError(f"{type(self).__name__} cannot carry group labels")

    def with_freq_weights(self, freq_weights) -> RowBlocks:
        """The same rows, each block carrying its rows' frequency weights apart from the
        prior weights (``Block.freq_weights``): shape (n_rows,), or a lazy array chunked
        like the partitions of a source over partitions."""
        raise NotImplementedError(f"{type(self).__name__} cannot carry frequency weights")

    def reduce_by_label(self, fn: Callable[[Block], np.ndarray],
                        groupings: tuple[tuple[int, ...], ...] = ((0,),)) -> tuple:
        """Sums of per-row values by the rows' group labels, one :class:`LabelSums` per
        grouping: a reduce whose partial results are G x k per-label sums (never per-row
        values), merged by label (a label may occur in many blocks).

        Parameters
        ----------
        fn : callable
            ``fn(block) -> (r, k)``: the values to sum, per row.
        groupings : tuple of tuple of int
            Which columns of the labels (``Block.groups``, a 1-D label being column 0) make
            each grouping: ``((0,), (1,), (0, 1))`` sums by the first label, by the second,
            and by their pairs.

        Returns
        -------
        tuple of LabelSums
            One per grouping (no labels when there are no rows). A ValueError for rows
            without labels (:meth:`with_groups`) or with missing ones.
        """

        def part(b: Block) -> tuple:
            values = np.asarray(fn(b), dtype=float)
            cols = labels.label_columns(b.groups, values.shape[0])
            return tuple(labels.label_sums(values, [cols[j] for j in g]) for g in groupings)

        out = self.reduce(part, None, labels.merge_all)
        return labels.empty_sums(len(groupings)) if out is None else out

    def gathered(self) -> RowBlocks:
        """The same rows as a source a solver can make many cheap passes over: a
        :class:`OneBlock` when the rows are in memory and fit in one block, else ``self``.

        A small fit makes a handful of passes whose arithmetic costs microseconds, so the block
        iteration (and the gathering of rows kept by :meth:`take_rows`) would be redone for
        little; the passes over the returned source see the same block, with the same values,
        as those over ``self``.
        """
        return self


class ArrayBlocks(RowBlocks):
    """Rows of in-memory arrays, read as consecutive slices.

    Parameters
    ----------
    X : array-like of shape (n_obs, p)
        Design matrix. A float64 array is never copied (C-contiguous is fastest; a broadcast
        view such as a column of ones costs no memory); other dtypes are converted once.
    y : array-like of shape (n_obs,), optional
        Response, kept in its dtype (floats, or integer class codes).
    weights : array-like of shape (n_obs,), optional
        Prior or frequency weights; absent, a read-only broadcast view of 1.0 (no memory).
    offset : array-like of shape (n_obs,), optional
        Absent, a read-only broadcast view of 0.0 (no memory).
    rows : int, optional
        Rows per block; default :func:`block_rows` of the number of columns (about 2 MB of X).
    groups : array-like of shape (n_obs,) or (n_obs, m), optional
        Group labels each block carries (:meth:`with_groups`).
    freq_weights : array-like of shape (n_obs,), optional
        Frequency weights each block carries (:meth:`with_freq_weights`).

    Notes
    -----
    :meth:`take_rows` and :meth:`take_columns` copy nothing of size N x p: the kept rows and
    columns are gathered one block at a time, as each pass reads them.
    """

    def __init__(self, X, y=None, weights=None, offset=None, rows: int | None = None, *,
                 groups=None, freq_weights=None) -> None:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional (n_obs, p), got shape {X.shape}")
        n = X.shape[0]
        self._X = X
        self._y = None if y is None else np.asarray(y)
        self._weights = constant(1.0, n) if weights is None else np.asarray(weights, float)
        self._offset = constant(0.0, n) if offset is None else np.asarray(offset, float)
        for name, a in (("y", self._y), ("weights", self._weights), ("offset", self._offset)):
            if a is not None and a.shape != (n,):
                raise ValueError(f"{name} must have shape ({n},) like the rows of X, got {a.shape}")
        if rows is not None and int(rows) < 1:
            raise ValueError(f"rows must be a positive number of rows per block, got {rows!r}")
        self._rows_given = None if rows is None else int(rows)
        self._index: np.ndarray | None = None  # kept rows (take_rows), None: all
        self._cols: np.ndarray | None = None  # kept columns (take_columns), None: all
        # per-row (groups, freq_weights) the blocks carry, rows as in X; None: neither
        self._extra: tuple | None = None
        if groups is not None or freq_weights is not None:
            self._extra = (labels.per_row(groups, n, "groups"),
                           labels.per_row(freq_weights, n, "freq_weights", float))

    @property
    def n_rows(self) -> int:
        return self._X.shape[0] if self._index is None else self._index.shape[0]

    @property
    def n_cols(self) -> int:
        return self._X.shape[1] if self._cols is None else self._cols.shape[0]

    @property
    def rows(self) -> int:
        """Rows per block."""
        return self._rows_given or block_rows(self.n_cols)

    def _blocks(self) -> Iterator[Block]:
        X, y, w, o = self._X, self._y, self._weights, self._offset
        idx, cols, r = self._index, self._cols, self.rows
        for s in range(0, self.n_rows, r):
            if idx is None:
                at = slice(s, s + r)
                xb, yb, wb, ob = X[at], None if y is None else y[at], w[at], o[at]
            else:  # take() gathers rows ~1.5x faster than fancy indexing
                at = idx[s : s + r]
                xb, yb, wb, ob = (_take(a, at) for a in (X, y, w, o))
            if cols is not None:
                xb = xb.take(cols, axis=1)
            if self._extra is None:
                yield Block(xb, yb, wb, ob, s)
            else:
                gb, fb = (None if a is None else a[at] if idx is None else _take(a, at)
                          for a in self._extra)
                yield Block(xb, yb, wb, ob, s, gb, fb)

    def stream(self) -> Iterator[Block]:
        return self._blocks()

    def reduce(self, fn: Callable[[Block], T], zero: T,
               combine: Callable[[T, T], T] = add) -> T:
        acc = zero
        if combine is add:  # sum into arrays of our own: no p x p allocation per block
            acc, combine = _owned(zero), add_into
        for b in self._blocks():
            acc = combine(acc, fn(b))
        return acc

    def map(self, fn: Callable[[Block], np.ndarray]) -> np.ndarray:
        out = None
        for b in self._blocks():
            part = np.asarray(fn(b))
            if out is None:
                out = np.empty((self.n_rows,) + part.shape[1:], dtype=part.dtype)
            out[b.start : b.start + part.shape[0]] = part
        if out is None:  # no rows: the shape of the output comes from an empty block
            empty = Block(self._X[:0] if self._cols is None else self._X[:0, self._cols],
                          None if self._y is None else self._y[:0], self._weights[:0],
                          self._offset[:0], 0)
            out = np.asarray(fn(empty))
        return out

    def with_groups(self, groups) -> ArrayBlocks:
        return self._with_extra(0, labels.per_row(groups, self.n_rows, "groups"))

    def with_freq_weights(self, freq_weights) -> ArrayBlocks:
        return self._with_extra(1, labels.per_row(freq_weights, self.n_rows, "freq_weights", float))

    def _with_extra(self, i: int, values: np.ndarray) -> ArrayBlocks:
        """The source whose blocks carry ``values`` (one per row of this source) as extra
        per-row array ``i`` (0: groups, 1: frequency weights)."""
        if self._index is not None:  # stored as the rows of X are: scatter the kept rows
            full = np.empty((self._X.shape[0],) + values.shape[1:], dtype=values.dtype)
            full[self._index] = values
            values = full
        extra = list(self._extra or (None, None))
        extra[i] = values
        return self._derived(_extra=tuple(extra))

    def reduce_by_label(self, fn: Callable[[Block], np.ndarray],
                        groupings: tuple[tuple[int, ...], ...] = ((0,),)) -> tuple:
        """:meth:`RowBlocks.reduce_by_label`, the labels coded once for all the rows: each
        block's rows are summed into a (G, k) array per grouping, so no per-block partial
        result is merged by label."""
        groups = None if self._extra is None else self._extra[0]
        if groups is not None and self._index is not None:
            groups = _take(groups, self._index)
        cols = labels.label_columns(groups, self.n_rows)
        coded = [labels.factorize_keys([cols[j] for j in g]) for g in groupings]
        return labels.sums_by_codes(self._blocks(), fn, coded)

    def _derived(self, **changes) -> ArrayBlocks:
        new = copy.copy(self)  # shares the arrays
        for key, value in changes.items():
            setattr(new, key, value)
        return new

    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        keep = np.asarray(keep)
        cols = np.flatnonzero(keep) if keep.dtype == bool else keep.astype(np.intp).ravel()
        if keep.dtype == bool and keep.shape != (self.n_cols,):
            raise ValueError(f"keep must have shape ({self.n_cols},), got {keep.shape}")
        if np.array_equal(cols, np.arange(self.n_cols)):
            return self
        return self._derived(_cols=cols if self._cols is None else self._cols[cols])

    def take_rows(self, mask: np.ndarray) -> RowBlocks:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (self.n_rows,):
            raise ValueError(f"mask must have shape ({self.n_rows},), got {mask.shape}")
        if mask.all():
            return self
        kept = np.flatnonzero(mask)
        return self._derived(_index=kept if self._index is None else self._index[kept])

    def intercept_only(self) -> RowBlocks:
        ones = np.broadcast_to(np.float64(1.0), (self._X.shape[0], 1))
        return self._derived(_X=ones, _cols=None)

    def with_rows(self, rows: int | None) -> RowBlocks:
        if rows is not None and int(rows) < 1:
            raise ValueError(f"rows must be a positive number of rows per block, got {rows!r}")
        return self._derived(_rows_given=None if rows is None else int(rows))

    def subsample(self, n_rows: int) -> RowBlocks | None:
        step = self.n_rows // max(int(n_rows), 1)
        if step < 2:
            return None
        at = np.arange(step // 2, self.n_rows, step)
        if self._index is not None:
            at = self._index[at]
        X = self._X.take(at, axis=0) if self._X.strides[0] else self._X[: at.shape[0]]
        if self._cols is not None:
            X = X.take(self._cols, axis=1)
        y = _take(self._y, at)
        return ArrayBlocks(X, y, _take(self._weights, at), _take(self._offset, at))

    def gathered(self) -> RowBlocks:
        if not 0 < self.n_rows <= self.rows:
            return self
        return OneBlock(next(self._blocks()), self)

    def __repr__(self) -> str:
        return f"<ArrayBlocks: {self.n_rows} x {self.n_cols}, {self.rows} rows per block>"


class OneBlock(RowBlocks):
    """A source of one block of rows held in memory (:meth:`RowBlocks.gathered`).

    Its passes call the block function once on the same :class:`Block`, without iterating
    over a source; what derives new sources (:meth:`take_rows`, ...) asks the source it came
    from.

    Parameters
    ----------
    block : Block
        All the rows (at least one).
    source : RowBlocks
        The source over the same rows.
    """

    def __init__(self, block: Block, source: RowBlocks) -> None:
        self.block = block
        self._source = source
        self.sample_hessians = source.sample_hessians

    @property
    def n_rows(self) -> int:
        return self.block.X.shape[0]

    @property
    def n_cols(self) -> int:
        return self.block.X.shape[1]

    def reduce(self, fn: Callable[[Block], T], zero: T,
               combine: Callable[[T, T], T] = add) -> T:
        if combine is add:  # as ArrayBlocks.reduce: the same sums
            return add_into(_owned(zero), fn(self.block))
        return combine(zero, fn(self.block))

    def map(self, fn: Callable[[Block], np.ndarray]) -> np.ndarray:
        return np.array(fn(self.block))  # a copy: fn may return a view of the rows

    def stream(self) -> Iterator[Block]:
        yield self.block

    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        taken = self._source.take_columns(keep)
        return self if taken is self._source else taken.gathered()

    def take_rows(self, mask: np.ndarray) -> RowBlocks:
        taken = self._source.take_rows(mask)
        return self if taken is self._source else taken.gathered()

    def intercept_only(self) -> RowBlocks:
        return self._source.intercept_only().gathered()

    def with_groups(self, groups) -> RowBlocks:
        return self._source.with_groups(groups).gathered()

    def with_freq_weights(self, freq_weights) -> RowBlocks:
        return self._source.with_freq_weights(freq_weights).gathered()

    def gathered(self) -> RowBlocks:
        return self

    def __repr__(self) -> str:
        return f"<OneBlock: {self.n_rows} x {self.n_cols}, of {self._source!r}>"


def in_sample(start: int, fraction: float) -> bool:
    """Whether the block starting at row ``start`` is in the Hessian's sample: a fixed
    pseudo-random choice of whole blocks (a block's Gram costs little more than a few of its
    rows' would: BLAS overhead), with the first block always in.

    Parameters
    ----------
    start : int
        The block's first row in its source.
    fraction : float
        Share of the blocks wanted (1: all).
    """
    if fraction >= 1.0 or start == 0:
        return True
    h = ((start + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF  # Fibonacci hashing
    return h < fraction * 2.0**64
