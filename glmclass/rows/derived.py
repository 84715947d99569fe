"""Row sources derived from another, every pass a pass over the original.

- :class:`Derived`: what every such source shares (the original's rows, sampling and place).
- :class:`ChangedBlocks`: each block changed before a pass sees it (a picklable change that
  travels with the block function to Dask workers); :class:`FixedColumn` and
  :class:`~glmclass.solvers.coordinate_descent.ShiftedBlocks` are two.
- :class:`FixedColumn`: one coefficient held fixed (its column moved into the offset), for
  the refits of profile likelihoods.
- :class:`Alongside`: the first pass also gathers extra sums. Numbers a fit needs once and
  that do not depend on its coefficients (the null model's deviance and log-likelihood) are
  summed over the same blocks as the fit's first pass, so rows that live elsewhere (Dask
  partitions, re-read from files on every pass) are read once less.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from .blocks import Block, OneBlock, RowBlocks, add

T = TypeVar("T")


class Derived(RowBlocks):
    """A row source over the rows of ``source``: as many rows, read through it, with its
    choice of sampled Hessians and its place (in memory or not).

    Parameters
    ----------
    source : RowBlocks
    """

    def __init__(self, source: RowBlocks) -> None:
        self.source = source
        self.sample_hessians = source.sample_hessians
        self.in_memory = source.in_memory

    @property
    def n_rows(self) -> int:
        return self.source.n_rows

    @property
    def n_cols(self) -> int:
        return self.source.n_cols


class _Through:
    """``fn`` of each block as ``change`` makes it (picklable, for the workers)."""

    def __init__(self, fn: Callable[[Block], T], change: Callable[[Block], Block]) -> None:
        self.fn, self.change = fn, change

    def __call__(self, blk: Block) -> T:
        return self.fn(self.change(blk))


class ChangedBlocks(Derived):
    """The rows of ``source`` with each block changed by ``change(block) -> Block`` before a
    pass sees it; every pass is a pass over ``source`` (in memory or Dask partitions: the
    change, a small picklable object, travels with the block function).

    Subclasses set :attr:`change` and say how the same change applies to other rows
    (:meth:`over`).

    Parameters
    ----------
    source : RowBlocks
    change : callable
        ``change(block) -> Block``, picklable and holding no rows.
    """

    def __init__(self, source: RowBlocks, change: Callable[[Block], Block]) -> None:
        super().__init__(source)
        self.change = change

    @abstractmethod
    def over(self, source: RowBlocks) -> RowBlocks:
        """The same change over the rows of ``source`` (a selection of this one's)."""

    def reduce(self, fn: Callable[[Block], T], zero: T,
               combine: Callable[[T, T], T] = add) -> T:
        return self.source.reduce(_Through(fn, self.change), zero, combine)

    def map(self, fn: Callable[[Block], np.ndarray]) -> np.ndarray:
        return self.source.map(_Through(fn, self.change))

    def take_rows(self, mask: np.ndarray) -> RowBlocks:
        return self.over(self.source.take_rows(mask))


class _Paired:
    """``fn`` and ``extra`` of each block, combined pairwise (picklable, for the workers)."""

    def __init__(self, fn, extra, combine) -> None:
        self.fn, self.extra, self.combine = fn, extra, combine

    def one(self, blk: Block) -> tuple:
        return self.fn(blk), self.extra(blk)

    def both(self, a: tuple, b: tuple) -> tuple:
        return self.combine(a[0], b[0]), (b[1] if a[1] is None else a[1] + b[1])


class Alongside(Derived):
    """``source`` whose first :meth:`reduce` also sums ``extra(block)`` over the same blocks:
    numbers a fit needs once (the null model's) gathered in a pass it makes anyway, instead
    of a pass of their own over rows not in memory. Every other use is ``source``'s.

    Parameters
    ----------
    source : RowBlocks
    extra : callable
        ``extra(block) -> ndarray``, summed over the blocks.

    Attributes
    ----------
    gathered_extra : ndarray or None
        The sum, once a pass has been made (None before, or when there were no rows).
    """

    def __init__(self, source: RowBlocks, extra) -> None:
        super().__init__(source)
        self.extra = extra
        self.gathered_extra = None
        self._done = False

    def reduce(self, fn, zero, combine=add):
        if self._done:
            return self.source.reduce(fn, zero, combine)
        self._done = True
        pair = _Paired(fn, self.extra, combine)
        out, self.gathered_extra = self.source.reduce(pair.one, (zero, None), pair.both)
        return out

    def map(self, fn):
        return self.source.map(fn)

    def stream(self):
        return self.source.stream()

    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        return self.source.take_columns(keep)

    def take_rows(self, mask) -> RowBlocks:
        return self.source.take_rows(mask)

    def intercept_only(self) -> RowBlocks:
        return self.source.intercept_only()

    def with_rows(self, rows: int | None) -> RowBlocks:
        return self.source.with_rows(rows)

    def positive_weights(self) -> RowBlocks:
        return self.source.positive_weights()

    def subsample(self, n_rows: int) -> RowBlocks | None:
        return self.source.subsample(n_rows)


class _Held:
    """The change of a :class:`FixedColumn`'s blocks (picklable, for Dask workers)."""

    def __init__(self, j: int, b: float, others: np.ndarray) -> None:
        self.j, self.b, self.others = j, b, others

    def __call__(self, blk: Block) -> Block:
        return held_block(blk, self.j, self.b, self.others)


def held_block(blk: Block, j: int, b: float, others: np.ndarray) -> Block:
    """``blk`` with column j at coefficient b: its column moved into the offset, the design
    the columns ``others``."""
    return Block(blk.X[:, others], blk.y, blk.weights, blk.offset + b * blk.X[:, j], blk.start)


class FixedColumn(ChangedBlocks):
    """A row source with one coefficient held fixed: column j times b added to the offset,
    the design cut to the columns ``others`` (the refits of profile likelihoods). Every pass
    is a pass over ``source`` (in memory or Dask partitions) with each block so changed.

    Parameters
    ----------
    source : RowBlocks
    j : int
        The held column of ``source``'s design.
    b : float
        Its coefficient.
    others : ndarray of int
        Columns of ``source`` that stay in the design.
    """

    def __init__(self, source: RowBlocks, j: int, b: float, others: np.ndarray) -> None:
        self.j, self.b = int(j), float(b)
        self.others = np.asarray(others, dtype=np.intp)
        super().__init__(source, _Held(self.j, self.b, self.others))

    @property
    def n_cols(self) -> int:
        return int(self.others.size)

    def over(self, source: RowBlocks, others: np.ndarray | None = None) -> FixedColumn:
        return FixedColumn(source, self.j, self.b, self.others if others is None else others)

    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        keep = np.asarray(keep)
        return self.over(self.source, self.others[keep])

    def with_rows(self, rows: int | None) -> RowBlocks:
        return self.over(self.source.with_rows(rows))

    def intercept_only(self) -> RowBlocks:
        raise TypeError("intercept_only on a source with a held column: hold the column on "
                        "the intercept-only source instead")

    def subsample(self, n_rows: int) -> RowBlocks | None:
        sub = self.source.subsample(n_rows)
        return None if sub is None else self.over(sub)

    def gathered(self) -> RowBlocks:
        g = self.source.gathered()
        if isinstance(g, OneBlock):  # rows in memory in one block: hold the column once
            return OneBlock(held_block(g.block, self.j, self.b, self.others), self)
        return self.over(g)
