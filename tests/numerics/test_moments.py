"""Class moments and the residual fourth moment, read through a row-block source."""

from __future__ import annotations

import numpy as np
import pytest

from glmclass.numerics.discriminant import (
    _merge_moments,
    class_moments,
    residual_fourth_moment,
)
from glmclass.rows.blocks import ArrayBlocks

RNG = np.random.default_rng(8)
X = RNG.normal(size=(700, 4)) * [1.0, 5.0, 0.2, 1.0] + [1e5, 0.0, -3.0, 7.0]
CODES = RNG.integers(0, 4, 700)
CODES[CODES == 2] = 3  # class 2 absent: count 0, mean and scatter 0


def dense(X, codes, k):
    cnt = np.array([np.sum(codes == j) for j in range(k)], dtype=float)
    means = np.array([X[codes == j].mean(0) if cnt[j] else np.zeros(X.shape[1])
                      for j in range(k)])
    scat = np.array([(X[codes == j] - means[j]).T @ (X[codes == j] - means[j]) for j in range(k)])
    return cnt, means, scat


@pytest.mark.parametrize("rows", [1, 50, 699, None])
def test_class_moments_match_the_dense_formulas(rows):
    m = class_moments(ArrayBlocks(X, CODES, rows=rows), 4)
    cnt, means, scat = dense(X, CODES, 4)
    np.testing.assert_array_equal(m.counts, cnt)
    np.testing.assert_allclose(m.means, means, rtol=1e-14, atol=0)
    np.testing.assert_allclose(m.scatter, scat, rtol=1e-9, atol=1e-12 * np.abs(scat).max())
    np.testing.assert_array_equal(m.scatter, m.scatter.transpose(0, 2, 1))


def test_moments_of_partitions_merge_to_the_whole():
    """A partitioned source reduces each part and merges the partial results."""
    whole = class_moments(ArrayBlocks(X, CODES), 4)
    a = class_moments(ArrayBlocks(X[:300], CODES[:300], rows=64), 4)
    b = class_moments(ArrayBlocks(X[300:], CODES[300:], rows=64), 4)
    merged = _merge_moments(a, b)
    np.testing.assert_array_equal(merged.counts, whole.counts)
    np.testing.assert_allclose(merged.means, whole.means, rtol=1e-14)
    np.testing.assert_allclose(merged.scatter, whole.scatter, rtol=1e-10,
                               atol=1e-12 * np.abs(whole.scatter).max())


@pytest.mark.parametrize("rows", [3, None])
def test_residual_fourth_moment(rows):
    means = dense(X, CODES, 4)[1]
    r = X - means[CODES]
    ref = np.sum(np.sum(r * r, axis=1) ** 2)
    got = residual_fourth_moment(ArrayBlocks(X, CODES, rows=rows), means)
    assert got == pytest.approx(ref, rel=1e-12)
