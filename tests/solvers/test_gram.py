"""The blocked Gram matrix equals the dense X'WX for every block size and sign of weights."""

from __future__ import annotations

import numpy as np
import pytest

from glmclass.rows.blocks import ArrayBlocks, block_rows
from glmclass.rows.gram import column_abs_max, fused_pass, weighted_gram

RNG = np.random.default_rng(7)
X = RNG.normal(size=(1037, 6))
W_POS = RNG.uniform(0, 3, 1037)
W_SIGNED = RNG.normal(size=1037)


@pytest.mark.parametrize("rows", [1, 7, 256, 1000, 1036, 1037, 5000, None])
@pytest.mark.parametrize("w", [W_POS, W_SIGNED], ids=["positive", "signed"])
def test_weighted_gram_equals_dense(rows, w):
    dense = (X * w[:, None]).T @ X
    got = weighted_gram(ArrayBlocks(X, weights=w, rows=rows))
    np.testing.assert_allclose(got, dense, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(got, got.T, rtol=0, atol=1e-12)


def test_zero_weights_and_single_column():
    w = W_POS.copy()
    w[::2] = 0.0
    got = weighted_gram(ArrayBlocks(X[:, :1], weights=w, rows=100))
    np.testing.assert_allclose(got, [[np.sum(w * X[:, 0] ** 2)]])


@pytest.mark.parametrize("rows", [7, None])
def test_weights_callable_overrides_the_source_weights(rows):
    src = ArrayBlocks(X, weights=W_POS, rows=rows)
    got = weighted_gram(src, lambda b: b.weights * W_SIGNED[b.start : b.start + b.X.shape[0]])
    np.testing.assert_allclose(got, (X * (W_POS * W_SIGNED)[:, None]).T @ X, rtol=1e-12,
                               atol=1e-10)


def test_gram_of_a_source_with_rows_and_columns_taken():
    keep_rows, keep_cols = W_SIGNED > -0.5, np.array([True, False, True, True, False, True])
    src = ArrayBlocks(X, weights=W_POS, rows=50).take_rows(keep_rows).take_columns(keep_cols)
    Xs, ws = X[keep_rows][:, keep_cols], W_POS[keep_rows]
    np.testing.assert_allclose(weighted_gram(src), (Xs * ws[:, None]).T @ Xs, rtol=1e-12)
    np.testing.assert_array_equal(column_abs_max(src), np.abs(Xs).max(axis=0))


def test_column_abs_max_is_zero_without_rows():
    np.testing.assert_array_equal(column_abs_max(ArrayBlocks(np.empty((0, 3)))), np.zeros(3))


def test_block_rows_targets_the_block_size():
    assert block_rows(50) == 2 * 1024 * 1024 // (8 * 50)
    assert block_rows(10_000) == 256  # at least 256 rows per block
    assert block_rows(0) > 0


@pytest.mark.parametrize("rows", [5, 300, None])
def test_fused_pass_matches_dense(rows):
    coef = RNG.normal(size=6) * 0.3
    offset = RNG.normal(size=1037) * 0.1
    y = RNG.integers(0, 2, 1037).astype(float)

    def terms(b, eta_b):
        mu = 1 / (1 + np.exp(-eta_b))
        w = mu * (1 - mu)
        return w, w * (eta_b - b.offset) + (b.y - mu), float(np.sum(eta_b))

    src = ArrayBlocks(X, y, offset=offset, rows=rows)
    obj, gram, rhs = fused_pass(src, lambda b: b.X @ coef + b.offset, terms)
    eta_ref = X @ coef + offset
    np.testing.assert_allclose(src.linear_predictor(coef), eta_ref, rtol=1e-13)
    mu = 1 / (1 + np.exp(-eta_ref))
    w = mu * (1 - mu)
    np.testing.assert_allclose(gram, (X * w[:, None]).T @ X, rtol=1e-12)
    np.testing.assert_allclose(rhs, X.T @ (w * (eta_ref - offset) + y - mu), rtol=1e-11)
    assert obj == pytest.approx(np.sum(eta_ref), rel=1e-12)


def test_weighted_gram_does_not_modify_inputs():
    x, w = X.copy(), W_SIGNED.copy()
    weighted_gram(ArrayBlocks(x, weights=w, rows=100))
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(w, W_SIGNED)


@pytest.mark.parametrize("rows", [1, 64, 65, 129, 1000, None])
def test_column_abs_max_is_exact_for_every_block_size(rows):
    Z = X * RNG.choice([-1.0, 1.0], size=X.shape)
    Z[517, 3] = -40.0  # a lone extreme row, in an odd-sized fold
    before = Z.copy()
    got = column_abs_max(ArrayBlocks(Z, rows=rows))
    np.testing.assert_array_equal(got, np.abs(Z).max(axis=0))
    np.testing.assert_array_equal(Z, before)  # the folds work on a copy of each block


def test_fused_pass_without_rows_is_all_zero():
    obj, gram, rhs = fused_pass(ArrayBlocks(np.empty((0, 3))), lambda b: b.X @ np.ones(3),
                                lambda b, e: (e, e, 1.0))
    assert obj == 0.0
    np.testing.assert_array_equal(gram, np.zeros((3, 3)))
    np.testing.assert_array_equal(rhs, np.zeros(3))
