"""R's aliasing rule on a QR factor, the shifted Gram, and the two-stage decision."""

from __future__ import annotations

import numpy as np
import pytest

from glmclass.numerics.linalg import aliased_from_r, clearly_full_rank
from glmclass.rows.blocks import ArrayBlocks
from glmclass.rows.gram import fused_pass, shift_from_gram, shift_transform, weighted_gram
from glmclass.solvers.rank import aliased_design_columns, qr_factor

RNG = np.random.default_rng(11)
N = 500
x, z, v = RNG.normal(size=(3, N))
ONE = np.ones(N)


def test_aliased_from_r_matches_r_order_and_tolerance():
    u = RNG.normal(size=N)
    X = np.column_stack([ONE, x, 2 * x, z, z - x, v, np.zeros(N), x + 1e-9 * u,
                         x + 1e-12 * u])
    # R: glm's tol 1e-11 keeps the 1e-9 column, drops the 1e-12 one; qr()'s 1e-7 drops both
    got = aliased_from_r(X, 1e-11)
    np.testing.assert_array_equal(got, [0, 0, 1, 0, 1, 0, 1, 0, 1])
    np.testing.assert_array_equal(aliased_from_r(X, 1e-7), [0, 0, 1, 0, 1, 0, 1, 1, 1])
    # the rule on the R factor equals the rule on X itself
    r = np.linalg.qr(X, mode="r")
    np.testing.assert_array_equal(aliased_from_r(r, 1e-11), got)


def test_rounding_floor_aliases_what_is_only_the_shift_rounding():
    X = np.column_stack([ONE, x + 1e6, z, x + 1e6 + 1e-9 * z])
    s = shift_from_gram(X.T @ X, 0)
    raw = np.linalg.norm(X, axis=0)
    np.testing.assert_array_equal(aliased_from_r(X - s, 1e-11, raw), [0, 0, 0, 1])


def test_shift_only_when_a_mean_dwarfs_the_spread():
    def gram(*cols):
        X = np.column_stack(cols)
        return X.T @ X

    assert shift_from_gram(gram(ONE, x, z), 0) is None
    assert shift_from_gram(gram(ONE, x + 1e6), None) is None
    s = shift_from_gram(gram(x, ONE, x + 1e6, z), 1)
    np.testing.assert_allclose(s, [0, 0, np.mean(x + 1e6), np.mean(z)], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("rows", [7, 256, None])
def test_shifted_gram_and_pass_equal_the_dense_shifted_design(rows):
    X = np.column_stack([ONE, x * 1e3 + 1e7, z])
    s = np.array([0.0, 1e7, 0.0])
    w = RNG.uniform(0.1, 2.0, N)
    Xc = X - s
    got = weighted_gram(ArrayBlocks(X, weights=w, rows=rows), shift=s)
    np.testing.assert_allclose(got, (Xc * w[:, None]).T @ Xc, rtol=1e-12)
    coef = np.array([0.1, 1e-3, -0.2])
    obj, g, r = fused_pass(ArrayBlocks(X, weights=w, rows=rows), None,
                           lambda b, e: (b.weights, e, float(e.sum())), coef=coef, shift=s)
    np.testing.assert_allclose(r, Xc.T @ (Xc @ coef), rtol=1e-12)
    assert obj == pytest.approx(np.sum(Xc @ coef), rel=1e-12)
    t = shift_transform(s, 0)  # gamma = T beta keeps X beta
    beta = np.linalg.solve(t, coef)
    np.testing.assert_allclose(X @ beta, Xc @ coef, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("rows", [3, 100, None])
def test_qr_factor_over_blocks_is_a_factor_of_the_weighted_design(rows):
    X = np.column_stack([ONE, x, z])
    w = RNG.uniform(0, 2, N)
    r = qr_factor(ArrayBlocks(X, weights=w, rows=rows))
    assert r.shape == (3, 3)
    np.testing.assert_allclose(r.T @ r, (X * w[:, None]).T @ X, rtol=1e-12)


def test_two_stage_decision_uses_the_gram_when_clear_and_qr_otherwise(monkeypatch):
    import glmclass.solvers.rank as rank
    calls = []
    real = rank.qr_factor
    monkeypatch.setattr(rank, "qr_factor", lambda *a, **k: calls.append(1) or real(*a, **k))
    clear = ArrayBlocks(np.column_stack([ONE, x, z]))
    assert not aliased_design_columns(clear).any() and not calls
    dup = ArrayBlocks(np.column_stack([ONE, x, z, x - z]))
    np.testing.assert_array_equal(aliased_design_columns(dup), [0, 0, 0, 1])
    assert calls


def test_clearly_full_rank():
    assert clearly_full_rank(np.eye(3))
    assert not clearly_full_rank(np.array([[1.0, 1.0], [1.0, 1.0]]))
    assert not clearly_full_rank(np.diag([1.0, 0.0]))
