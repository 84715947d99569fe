"""DaskBlocks reads the same rows as ArrayBlocks: every pass agrees with the in-memory source."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest

from glmclass import families as F
from glmclass.numerics.discriminant import class_moments
from glmclass.rows.blocks import ArrayBlocks
from glmclass.rows.dask import DaskBlocks
from glmclass.rows.gram import column_abs_max, fused_pass, weighted_gram
from glmclass.solvers.control import Control
from glmclass.solvers.irls import irls


def _sources(chunks=(300, 0, 450, 250), p=4, seed=0):
    rng = np.random.default_rng(seed)
    n = sum(chunks)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.linspace(0.5, -0.5, p)))).astype(float)
    w = rng.integers(0, 3, n).astype(float)
    o = rng.normal(0, 0.1, n)
    Xd = da.from_array(X, chunks=(chunks, p))
    parts = [dask.delayed(tuple)([a, b, c, d]) for a, b, c, d in zip(
        Xd.to_delayed()[:, 0], da.from_array(y, chunks=(chunks,)).to_delayed(),
        da.from_array(w, chunks=(chunks,)).to_delayed(),
        da.from_array(o, chunks=(chunks,)).to_delayed(), strict=True)]
    return ArrayBlocks(X, y, w, o), DaskBlocks(parts, chunks, p, y_dtype=float), (X, y, w, o)


def test_reductions_and_maps_agree_with_arrays():
    ab, db, (X, y, w, o) = _sources()
    assert db.n_rows == ab.n_rows and db.n_cols == ab.n_cols and db.npartitions == 4
    np.testing.assert_allclose(weighted_gram(db), weighted_gram(ab), rtol=1e-13)
    np.testing.assert_array_equal(column_abs_max(db), column_abs_max(ab))
    coef = np.array([0.1, -0.2, 0.3, 0.4])
    eta = db.linear_predictor(coef)
    assert isinstance(eta, da.Array) and eta.chunks[0] == (300, 450, 250)  # no empty chunk
    np.testing.assert_array_equal(eta.compute(), ab.linear_predictor(coef))
    # a reduction whose zero is not an identity: empty partitions take no part in combine
    dev, g, r = fused_pass(db, lambda b: b.X @ coef + b.offset,
                           lambda b, e: (b.weights, b.weights * e, float(e.sum())))
    dev2, g2, r2 = fused_pass(ab, lambda b: b.X @ coef + b.offset,
                              lambda b, e: (b.weights, b.weights * e, float(e.sum())))
    assert dev == pytest.approx(dev2, rel=1e-13)
    np.testing.assert_allclose(g, g2, rtol=1e-13)


def test_derived_sources():
    ab, db, (X, y, w, o) = _sources()
    keep = np.array([True, False, True, True])
    np.testing.assert_allclose(weighted_gram(db.take_columns(keep)),
                               weighted_gram(ab.take_columns(keep)), rtol=1e-13)
    assert db.take_columns(np.ones(4, bool)) is db
    np.testing.assert_allclose(weighted_gram(db.intercept_only()),
                               weighted_gram(ab.intercept_only()), rtol=1e-13)
    mask = y > 0
    np.testing.assert_allclose(weighted_gram(db.take_rows(mask)),
                               weighted_gram(ab.take_rows(mask)), rtol=1e-13)
    lazy_mask = da.from_array(mask, chunks=((300, 0, 450, 250),))
    assert db.take_rows(lazy_mask).n_rows == int(mask.sum())
    pos = db.positive_weights()
    assert pos.n_rows == int((w > 0).sum())
    np.testing.assert_allclose(weighted_gram(pos), weighted_gram(ab.take_rows(w > 0)),
                               rtol=1e-13)
    with pytest.raises(ValueError, match="shape"):
        db.take_rows(mask[:10])
    # no warm-start sample from partitions (it would cost a pass of its own), no sampling
    assert db.subsample(100) is None and not db.sample_hessians


def test_irls_is_the_same_solver():
    ab, db, _ = _sources()
    for fam in (F.Binomial(), F.Binomial(link="probit")):
        f1 = irls(ab.take_rows(ab._weights > 0), fam, control=Control())
        f2 = irls(_sources()[1].positive_weights(), fam, control=Control())
        np.testing.assert_allclose(f2.coef, f1.coef, rtol=1e-12, atol=1e-13)
        assert f2.deviance == pytest.approx(f1.deviance, rel=1e-12)
        assert f2.n_iter == f1.n_iter


def test_class_moments_merge_over_partitions():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(900, 3)) * [1.0, 1e3, 1e-3] + [0, 1e6, 0]
    codes = rng.integers(0, 3, 900)
    chunks = (100, 500, 0, 300)
    parts = [dask.delayed(tuple)([a, b, None, None]) for a, b in zip(
        da.from_array(X, chunks=(chunks, 3)).to_delayed()[:, 0],
        da.from_array(codes, chunks=(chunks,)).to_delayed(), strict=True)]
    m1 = class_moments(ArrayBlocks(X, codes), 3)
    m2 = class_moments(DaskBlocks(parts, chunks, 3, y_dtype=np.intp), 3)
    np.testing.assert_array_equal(m1.counts, m2.counts)
    np.testing.assert_allclose(m2.means, m1.means, rtol=1e-12)
    np.testing.assert_allclose(m2.scatter, m1.scatter, rtol=1e-11)


def test_threaded_scheduler():
    ab, db, _ = _sources(chunks=(200,) * 5)
    with dask.config.set(scheduler="threads"):
        np.testing.assert_allclose(weighted_gram(db), weighted_gram(ab), rtol=1e-13)


def test_tree_reduce_keeps_partition_order_and_skips_empty_partitions():
    from glmclass.rows.dask import EMPTY, tree_reduce

    nodes = [dask.delayed(lambda i: EMPTY if i % 5 == 2 else [i])(i) for i in range(23)]
    out = tree_reduce(nodes, lambda a, b: a + b, [], split_every=3)
    assert out == [i for i in range(23) if i % 5 != 2]
    assert tree_reduce([], lambda a, b: a + b, "zero") == "zero"
    assert tree_reduce(nodes[2:3], lambda a, b: a + b, "zero") == "zero"


def test_partition_blocks_keep_per_row_vectors_under_64kb():
    """Dask's workers run with MALLOC_TRIM_THRESHOLD_=65536, under which every array of 128 KB
    or more is its own mmap: a partition's blocks keep each per-row vector under 64 KB, and
    a reduction over them is the one over the whole partition."""
    from glmclass.rows.dask import WORKER_BLOCK_ROWS, View, partition_blocks

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30000, 2)), rng.normal(size=30000)
    b = partition_blocks((X, y, None, None), None, View())
    sizes = [blk.X.shape[0] for blk in b.stream()]
    assert max(sizes) == WORKER_BLOCK_ROWS and sum(sizes) == 30000
    assert WORKER_BLOCK_ROWS * 8 < 65536
    assert partition_blocks((X, y, None, None), None, View(rows=20000)).reduce(
        lambda blk: blk.X.shape[0], 0, max) == 20000
    np.testing.assert_allclose(b.reduce(lambda blk: blk.X.T @ blk.X, 0), X.T @ X, rtol=1e-12)
