"""The row-block source: block boundaries, reduce/map, derived sources, no hidden copies."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from glmclass import families as F
from glmclass.numerics.discriminant import class_moments
from glmclass.rows.blocks import (
    MAX_BLOCK_ROWS,
    ArrayBlocks,
    Block,
    OneBlock,
    RowBlocks,
    add,
    block_rows,
)
from glmclass.rows.gram import fused_pass, weighted_gram
from glmclass.solvers.control import Control
from glmclass.solvers.irls import irls
from glmclass.solvers.newton import multinomial_deviance

RNG = np.random.default_rng(3)
N, P = 1003, 5
X = np.column_stack([np.ones(N), RNG.normal(size=(N, P - 1))])
Y = (RNG.random(N) < 1 / (1 + np.exp(-X @ [0.2, 0.5, -0.4, 0.3, 0.1]))).astype(float)
W = RNG.uniform(0.5, 2.0, N)
OFF = 0.1 * RNG.normal(size=N)
CODES = RNG.integers(0, 3, N)
ROWS = [1, 7, 256, N - 1, N, N + 5, None]


def spans(src: RowBlocks) -> list[tuple[int, int]]:
    return src.reduce(lambda b: [(b.start, b.X.shape[0])], [])


@pytest.mark.parametrize("rows", ROWS)
def test_blocks_tile_the_rows_in_order(rows):
    src = ArrayBlocks(X, Y, W, OFF, rows=rows)
    r = rows or block_rows(P)
    assert spans(src) == [(s, min(r, N - s)) for s in range(0, N, r)]
    assert (src.n_rows, src.n_cols, src.rows) == (N, P, r)

    def check(b: Block) -> float:
        sl = slice(b.start, b.start + b.X.shape[0])
        for got, ref in ((b.X, X[sl]), (b.y, Y[sl]), (b.weights, W[sl]), (b.offset, OFF[sl])):
            np.testing.assert_array_equal(got, ref)
        return 1.0

    assert src.reduce(check, 0.0) == len(range(0, N, r))


def test_a_c_contiguous_float_design_is_never_copied():
    src = ArrayBlocks(X, Y)
    assert src.reduce(lambda b: b.X.base is X and np.shares_memory(b.X, X), True,
                      lambda a, b: a and b)
    ints = ArrayBlocks(np.arange(6).reshape(3, 2))  # other dtypes are converted once
    assert ints.reduce(lambda b: b.X.dtype == np.float64, True, lambda a, b: a and b)


def test_absent_weights_and_offset_are_broadcast_views_taking_no_memory():
    n = 1_000_000
    big = np.broadcast_to(1.0, (n, 1))
    tracemalloc.start()
    src = ArrayBlocks(big)
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert size < 10_000  # bytes: nothing per row
    blocks = src.reduce(lambda b: [b], [])
    assert len(blocks) == -(-n // MAX_BLOCK_ROWS)
    for b in blocks:
        for v, value in ((b.weights, 1.0), (b.offset, 0.0)):
            assert v.strides == (0,) and not v.flags.writeable and np.all(v == value)
        assert b.y is None


def test_reduce_without_rows_returns_zero_and_never_calls_fn():
    src = ArrayBlocks(np.empty((0, 3)))

    def boom(b):
        raise AssertionError("no block expected")

    zero = (0.0, np.zeros(3))
    assert src.reduce(boom, zero) is not None
    np.testing.assert_array_equal(src.reduce(boom, zero)[1], np.zeros(3))
    assert src.map(lambda b: b.X @ np.ones(3)).shape == (0,)
    assert src.map(lambda b: b.X[:, :2]).shape == (0, 2)


def test_add_sums_nested_tuples_without_modifying_them():
    a = (1.0, np.array([1.0, 2.0]), (np.eye(2), 3.0))
    b = (0.5, np.array([10.0, 20.0]), (np.ones((2, 2)), -1.0))
    keep_a = (a[1].copy(), a[2][0].copy())
    s = add(a, b)
    assert s[0] == 1.5 and s[2][1] == 2.0
    np.testing.assert_array_equal(s[1], [11.0, 22.0])
    np.testing.assert_array_equal(s[2][0], np.eye(2) + 1.0)
    np.testing.assert_array_equal(a[1], keep_a[0])
    np.testing.assert_array_equal(a[2][0], keep_a[1])
    with pytest.raises(ValueError):
        add((1.0, 2.0), (1.0,))


@pytest.mark.parametrize("rows", [3, None])
def test_reduce_never_modifies_zero_or_the_partial_results(rows):
    zero = (0.0, np.zeros(P), (np.zeros((P, P)),))
    parts = []

    def fn(b):
        part = (float(b.weights.sum()), b.X.sum(axis=0), (b.X.T @ b.X,))
        parts.append((part[1].copy(), part[1]))
        return part

    total = ArrayBlocks(X, weights=W, rows=rows).reduce(fn, zero)
    assert total[0] == pytest.approx(W.sum(), rel=1e-13)
    np.testing.assert_allclose(total[1], X.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(total[2][0], X.T @ X, rtol=1e-12)
    assert not zero[1].any() and not zero[2][0].any()
    for copy_, returned in parts:
        np.testing.assert_array_equal(copy_, returned)


def test_reduce_with_a_custom_combine():
    src = ArrayBlocks(X, rows=10)
    got = src.reduce(lambda b: np.abs(b.X).max(axis=0), np.zeros(P), np.maximum)
    np.testing.assert_array_equal(got, np.abs(X).max(axis=0))


def test_partitions_reduced_separately_combine_to_the_whole():
    """What a partitioned source does: reduce each part, then combine the partial results."""
    def gram(src):
        return src.reduce(lambda b: (float(b.weights @ b.y), (b.X * b.weights[:, None]).T @ b.X),
                          (0.0, np.zeros((P, P))))

    whole = gram(ArrayBlocks(X, Y, W))
    parts = [gram(ArrayBlocks(X[s], Y[s], W[s], rows=37)) for s in (slice(0, 400), slice(400, N))]
    merged = add(parts[0], parts[1])
    assert merged[0] == pytest.approx(whole[0], rel=1e-12)
    np.testing.assert_allclose(merged[1], whole[1], rtol=1e-12)


@pytest.mark.parametrize("rows", ROWS)
def test_map_concatenates_per_row_outputs_in_order(rows):
    src = ArrayBlocks(X, Y, W, OFF, rows=rows)
    np.testing.assert_array_equal(src.map(lambda b: b.y * 2), Y * 2)
    two = src.map(lambda b: b.X[:, :2] + b.offset[:, None])
    np.testing.assert_array_equal(two, X[:, :2] + OFF[:, None])
    flags = src.map(lambda b: b.weights > 1.0)
    assert flags.dtype == bool
    np.testing.assert_array_equal(flags, W > 1.0)


@pytest.mark.parametrize("rows", ROWS)
def test_linear_predictor(rows):
    coef = RNG.normal(size=P)
    got = ArrayBlocks(X, offset=OFF, rows=rows).linear_predictor(coef)
    np.testing.assert_allclose(got, X @ coef + OFF, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("rows", [1, 7, None])
def test_take_rows_keeps_only_the_masked_rows(rows):
    mask = W > 1.0
    src = ArrayBlocks(X, Y, W, OFF, rows=rows).take_rows(mask)
    assert src.n_rows == mask.sum() and src.n_cols == P
    r = rows or block_rows(P)
    assert spans(src) == [(s, min(r, src.n_rows - s)) for s in range(0, src.n_rows, r)]
    np.testing.assert_array_equal(src.map(lambda b: b.X), X[mask])
    np.testing.assert_array_equal(src.map(lambda b: b.y), Y[mask])
    np.testing.assert_array_equal(src.map(lambda b: b.weights), W[mask])
    np.testing.assert_array_equal(src.map(lambda b: b.offset), OFF[mask])
    again = src.take_rows(Y[mask] == 1.0)  # composes
    np.testing.assert_array_equal(again.map(lambda b: b.X), X[mask & (Y == 1.0)])


def test_taken_rows_of_broadcast_defaults_stay_broadcast():
    src = ArrayBlocks(X, Y, rows=100).take_rows(W > 1.0)

    def views(b: Block) -> bool:
        return b.weights.strides == (0,) and b.offset.strides == (0,)

    assert src.reduce(views, True, lambda a, b: a and b)
    np.testing.assert_array_equal(src.map(lambda b: b.weights + b.offset), np.ones(src.n_rows))


def test_take_rows_and_columns_of_everything_return_the_source_itself():
    src = ArrayBlocks(X, Y)
    assert src.take_rows(np.ones(N, dtype=bool)) is src
    assert src.take_columns(np.ones(P, dtype=bool)) is src
    assert src.take_columns(np.arange(P)) is src
    with pytest.raises(ValueError, match="mask must have shape"):
        src.take_rows(np.ones(N - 1, dtype=bool))
    with pytest.raises(ValueError, match="keep must have shape"):
        src.take_columns(np.ones(P - 1, dtype=bool))


def test_take_columns_by_mask_or_index():
    keep = np.array([True, False, True, True, False])
    src = ArrayBlocks(X, Y, W, OFF)
    for cols in (keep, np.flatnonzero(keep)):
        sub = src.take_columns(cols)
        assert sub.n_cols == 3 and sub.rows == block_rows(3)  # block size follows the width
        np.testing.assert_array_equal(sub.map(lambda b: b.X), X[:, keep])
    np.testing.assert_array_equal(sub.take_columns(np.array([2, 0])).map(lambda b: b.X),
                                  X[:, [3, 0]])
    fixed = ArrayBlocks(X, rows=11).take_rows(W > 1).take_columns(keep)
    assert fixed.rows == 11  # a block size that was given stays
    np.testing.assert_array_equal(fixed.map(lambda b: b.X), X[W > 1][:, keep])


@pytest.mark.parametrize("taken", [False, True])
def test_intercept_only_keeps_the_rows_with_a_column_of_ones(taken):
    src = ArrayBlocks(X, Y, W, OFF).take_columns(np.array([1, 2]))
    mask = W > 1.0 if taken else np.ones(N, dtype=bool)
    src = src.take_rows(mask)
    one = src.intercept_only()
    assert (one.n_rows, one.n_cols, one.rows) == (mask.sum(), 1, block_rows(1))
    np.testing.assert_array_equal(one.map(lambda b: b.X), np.ones((mask.sum(), 1)))
    np.testing.assert_array_equal(one.map(lambda b: b.y), Y[mask])
    np.testing.assert_array_equal(one.map(lambda b: b.offset), OFF[mask])
    if not taken:  # a broadcast view: no memory per row
        assert one.reduce(lambda b: b.X.strides == (0, 0), True, lambda a, b: a and b)


def test_ones_for_the_null_model_cost_nothing():
    X_big = np.empty((10**6, 3))
    tracemalloc.start()
    one = ArrayBlocks(X_big).intercept_only()
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert size < 10_000 and one.n_cols == 1 and one.rows == MAX_BLOCK_ROWS


def test_inputs_must_match_the_rows_of_x():
    with pytest.raises(ValueError, match="weights must have shape"):
        ArrayBlocks(X, Y, W[:-1])
    with pytest.raises(ValueError, match="2-dimensional"):
        ArrayBlocks(Y)
    with pytest.raises(ValueError, match="rows must be a positive"):
        ArrayBlocks(X, rows=0)


# --- the solvers and numerics give the same numbers whatever the block size ------------------

@pytest.mark.parametrize("rows", [1, 13, 256, N + 1])
def test_results_do_not_depend_on_the_block_size(rows):
    def everything(r):
        src = ArrayBlocks(X, Y, W, OFF, rows=r)
        gram = weighted_gram(src, lambda b: b.weights * (b.y - 0.5))
        fit = irls(src, F.Binomial(), control=Control(tol=1e-14))
        coef = np.linspace(-0.5, 0.5, P)
        obj = fused_pass(src, lambda b: b.X @ coef + b.offset,
                         lambda b, e: F.Binomial().irls_terms(b.y, e, b.weights))
        mn = multinomial_deviance(ArrayBlocks(X, CODES, W, OFF, rows=r), 3)(
            np.linspace(-0.3, 0.3, 2 * P), True)
        mom = class_moments(ArrayBlocks(X[:, 1:], CODES, rows=r), 3)
        return [gram, fit.coef, fit.gram, fit.deviance, *obj, *mn, mom.counts, mom.means,
                mom.scatter]

    for got, ref in zip(everything(rows), everything(None), strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * np.max(np.abs(ref)))


# --- a small source gathered into one block ---------------------------------------------------

@pytest.mark.parametrize("rows", [N - 1, N, None])
def test_gathered_is_one_block_exactly_when_the_rows_fit_in_one(rows):
    src = ArrayBlocks(X, Y, W, OFF, rows=rows)
    one = src.gathered()
    if rows == N - 1:
        assert one is src
        return
    assert isinstance(one, OneBlock) and one.gathered() is one
    assert (one.n_rows, one.n_cols, one.sample_hessians) == (N, P, src.sample_hessians)
    b = one.block
    for got, ref in ((b.X, X), (b.y, Y), (b.weights, W), (b.offset, OFF)):
        np.testing.assert_array_equal(got, ref)
    assert b.start == 0 and np.shares_memory(b.X, X)  # a view: nothing copied
    assert ArrayBlocks(np.empty((0, 3))).gathered().n_rows == 0  # no rows: no block


def test_a_gathered_source_reduces_and_maps_as_its_source():
    mask = RNG.random(N) < 0.7
    for src in (ArrayBlocks(X, Y, W, OFF), ArrayBlocks(X, Y).take_rows(mask).take_columns(
            np.array([True, False, True, True, True]))):
        one = src.gathered()
        assert isinstance(one, OneBlock)
        coef = np.linspace(-0.4, 0.4, src.n_cols)

        def terms(b, e):
            return F.Binomial().irls_terms(b.y, e, b.weights)

        for a, b in zip(fused_pass(one, None, terms, coef=coef),
                        fused_pass(src, None, terms, coef=coef), strict=True):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
        assert one.reduce(lambda b: b.X.sum(), 0.0) == src.reduce(lambda b: b.X.sum(), 0.0)
        assert one.reduce(lambda b: [b.start], [], lambda a, b: a + b) == [0]
        eta = one.linear_predictor(coef)
        np.testing.assert_array_equal(eta, src.linear_predictor(coef))
        ys = one.map(lambda b: b.y)
        ys[:] = -1.0  # map's output is the caller's: the rows are untouched
        assert not np.any(one.block.y == -1.0)


def test_a_gathered_source_derives_sources_as_its_source():
    src = ArrayBlocks(X, Y, W, OFF)
    one = src.gathered()
    mask = np.arange(N) % 4 > 0
    keep = np.array([True, True, False, True, False])
    assert one.take_rows(np.ones(N, bool)) is one and one.take_columns(np.ones(P, bool)) is one
    for got, ref in ((one.take_rows(mask), src.take_rows(mask)),
                     (one.take_columns(keep), src.take_columns(keep)),
                     (one.intercept_only(), src.intercept_only())):
        assert isinstance(got, OneBlock)
        for a, b in zip(spans(got) + [got.map(lambda b: b.X)],
                        spans(ref) + [ref.map(lambda b: b.X)], strict=True):
            np.testing.assert_array_equal(a, b)


def _rows_of(src: RowBlocks):
    return tuple(src.map(lambda b, f=f: f(b)) for f in (
        lambda b: b.X, lambda b: b.y, lambda b: b.weights, lambda b: b.offset))


@pytest.mark.parametrize("derived", ["plain", "taken rows and columns"])
def test_subsample_is_every_kth_row_of_the_source(derived):
    src = ArrayBlocks(X, Y, W, OFF, rows=100)
    if derived != "plain":
        src = src.take_rows(W > 0.8).take_columns(np.array([True, False, True, True, True]))
    whole = _rows_of(src)
    sub = src.subsample(100)
    step = src.n_rows // 100
    assert isinstance(sub, ArrayBlocks) and sub.n_cols == src.n_cols
    for got, full in zip(_rows_of(sub), whole, strict=True):
        np.testing.assert_array_equal(got, full[step // 2 :: step])


def test_subsample_keeps_broadcast_defaults_and_declines_when_small():
    sub = ArrayBlocks(X, Y).subsample(200)
    assert sub.reduce(lambda b: b.weights.strides == (0,) and b.offset.strides == (0,), True,
                      lambda a, b: a and b)
    assert ArrayBlocks(X, Y).subsample(N // 2 + 1) is None  # fewer than twice the rows
    assert ArrayBlocks(X, Y).gathered().subsample(10) is None  # one block: nothing to save


def test_a_single_precision_gram_pass_differs_only_in_the_gram():
    src = ArrayBlocks(X, Y, W, OFF, rows=128)
    coef = np.array([0.1, 0.4, -0.3, 0.2, 0.0])

    def terms(b, eta):
        return F.Binomial().irls_terms(b.y, eta, b.weights)

    shift = np.array([0.0, 0.3, 0.0, -0.2, 0.1])
    for sh in (None, shift):
        dev64, g64, r64 = fused_pass(src, None, terms, coef=coef, shift=sh)
        dev32, g32, r32 = fused_pass(src, None, terms, coef=coef, shift=sh,
                                     gram_dtype=np.float32)
        assert dev32 == dev64 and g32.dtype == np.float64
        np.testing.assert_array_equal(r32, r64)
        np.testing.assert_allclose(g32, g64, rtol=1e-5, atol=1e-6 * np.abs(g64).max())
        assert not np.array_equal(g32, g64)  # it was made in single precision
        gathered = ArrayBlocks(X, Y, W, OFF).gathered()
        assert isinstance(gathered, OneBlock)
        one = fused_pass(gathered, None, terms, coef=coef, shift=sh, gram_dtype=np.float32)
        np.testing.assert_allclose(one[1], g64, rtol=1e-5, atol=1e-6 * np.abs(g64).max())


def test_with_rows_changes_the_blocks_not_the_values():
    src = ArrayBlocks(X, Y, W, OFF).take_rows(W > 1.0)
    small = src.with_rows(100)
    assert all(r <= 100 for _, r in spans(small)) and len(spans(small)) > len(spans(src))
    assert small.n_rows == src.n_rows and small.take_columns([0, 2]).n_cols == 2
    np.testing.assert_allclose(weighted_gram(small, lambda b: b.weights),
                               weighted_gram(src, lambda b: b.weights), rtol=1e-12)
    assert spans(small.with_rows(None)) == spans(src)
    ones = ArrayBlocks(X, Y, W, OFF).intercept_only().with_rows(10)
    assert ones.n_cols == 1 and spans(ones)[1] == (10, 10)
    with pytest.raises(ValueError, match="rows must be a positive number"):
        src.with_rows(0)
    one = src.gathered() if src.n_rows <= src.rows else OneBlock(next(src.stream()), src)
    assert one.with_rows(3) is one  # one block: its size is its own


def test_positive_weights_keeps_the_rows_of_positive_weight():
    w = np.where(np.arange(N) % 3 == 0, 0.0, W)
    src = ArrayBlocks(X, Y, w, OFF, rows=64)
    kept = src.positive_weights()
    assert kept.n_rows == int((w > 0).sum())
    np.testing.assert_array_equal(kept.map(lambda b: b.X[:, 1]), X[w > 0, 1])
    full = ArrayBlocks(X, Y, W, OFF)
    assert full.positive_weights().n_rows == N
