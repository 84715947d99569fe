"""Row sources derived from another, every pass a pass over the original.

- :class:`FixedColumn`: one coefficient held fixed (its column moved into the offset), for
  the refits of profile likelihoods.
- :class:`Alongside`: the first pass also gathers extra sums. Numbers a fit needs once and
  that do not depend on its coefficients (the null model's deviance and log-likelihood) are
  summed over the same blocks as the fit's first pass, so rows that live elsewhere (Dask
  partitions, re-read from files on every pass) are read once less.
"""

from __future__ import annotations

import numpy as np

from .blocks import Block, OneBlock, RowBlocks, add


class _Paired:
    """``fn`` and ``extra`` of each block, combined pairwise (picklable, for the workers)."""

    def __init__(self, fn, extra, combine) -> None:
        self.fn, self.extra, self.combine = fn, extra, combine

    def one(self, blk: Block) -> tuple:
        return self.fn(blk), self.extra(blk)

    def both(self, a: tuple, b: tuple) -> tuple:
        return self.combine(a[0], b[0]), (b[1] if a[1] is None else a[1] + b[1])


class Alongside(RowBlocks):
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
        self.source, self.extra = source, extra
        self.gathered_extra = None
        self._done = False
        self.sample_hessians = source.sample_hessians
        self.in_memory = source.in_memory

    @property
    def n_rows(self) -> int:
        return self.source.n_rows

    @property
    def n_cols(self) -> int:
        return self.source.n_cols

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


class _HeldAt:
    """``fn`` of the blocks of a :class:`FixedColumn` (picklable, for Dask workers)."""

    def __init__(self, fn, j: int, b: float, others: np.ndarray) -> None:
        self.fn, self.j, self.b, self.others = fn, j, b, others

    def __call__(self, blk: Block):
        return self.fn(held_block(blk, self.j, self.b, self.others))


def held_block(blk: Block, j: int, b: float, others: np.ndarray) -> Block:
    """``blk`` with column j at coefficient b: its column moved into the offset, the design
    the columns ``others``."""
    return Block(blk.X[:, others], blk.y, blk.weights, blk.offset + b * blk.X[:, j], blk.start)


class FixedColumn(RowBlocks):
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
        self.source, self.j, self.b = source, int(j), float(b)
        self.others = np.asarray(others, dtype=np.intp)
        self.sample_hessians = source.sample_hessians
        self.in_memory = source.in_memory

    @property
    def n_rows(self) -> int:
        return self.source.n_rows

    @property
    def n_cols(self) -> int:
        return int(self.others.size)

    def _like(self, source: RowBlocks, others: np.ndarray | None = None) -> FixedColumn:
        return FixedColumn(source, self.j, self.b, self.others if others is None else others)

    def reduce(self, fn, zero, combine=None):
        held = _HeldAt(fn, self.j, self.b, self.others)
        if combine is None:
            return self.source.reduce(held, zero)
        return self.source.reduce(held, zero, combine)

    def map(self, fn):
        return self.source.map(_HeldAt(fn, self.j, self.b, self.others))

    def take_columns(self, keep: np.ndarray) -> RowBlocks:
        keep = np.asarray(keep)
        return self._like(self.source, self.others[keep])

    def take_rows(self, mask: np.ndarray) -> RowBlocks:
        return self._like(self.source.take_rows(mask))

    def with_rows(self, rows: int | None) -> RowBlocks:
        return self._like(self.source.with_rows(rows))

    def intercept_only(self) -> RowBlocks:
        raise TypeError("intercept_only on a source with a held column: hold the column on "
                        "the intercept-only source instead")

    def subsample(self, n_rows: int) -> RowBlocks | None:
        sub = self.source.subsample(n_rows)
        return None if sub is None else self._like(sub)

    def gathered(self) -> RowBlocks:
        g = self.source.gathered()
        if isinstance(g, OneBlock):  # rows in memory in one block: hold the column once
            return OneBlock(held_block(g.block, self.j, self.b, self.others), self)
        return self._like(g)
