"""Cholesky solves, inverses, log-determinants and R-style aliasing of the Gram matrix."""

from __future__ import annotations

import numpy as np
import pytest

from glmclass.numerics.linalg import (
    NotPositiveDefinite,
    aliased_columns,
    cholesky,
    clear_cholesky,
    clearly_full_rank,
    spd_inverse,
    spd_logdet,
    spd_solve,
)

RNG = np.random.default_rng(3)


def spd(p: int, scales=None) -> np.ndarray:
    a = RNG.normal(size=(3 * p, p))
    if scales is not None:
        a = a * scales
    return a.T @ a


def test_cholesky_reconstructs():
    a = spd(5)
    c, d = cholesky(a)
    np.testing.assert_allclose(np.diag(d) @ c.T @ c @ np.diag(d), a, rtol=1e-12)
    assert np.allclose(c, np.triu(c))


def test_spd_solve_vector_and_matrix():
    a = spd(6)
    b = RNG.normal(size=6)
    np.testing.assert_allclose(a @ spd_solve(a, b), b, rtol=1e-10, atol=1e-12)
    bm = RNG.normal(size=(6, 3))
    np.testing.assert_allclose(a @ spd_solve(a, bm), bm, rtol=1e-10, atol=1e-12)


def test_equilibration_handles_columns_scaled_by_1e16():
    scales = np.array([1e-8, 1.0, 1e8])
    a = spd(3, scales)
    b = a @ np.array([1e8, 2.0, -3e-8])
    np.testing.assert_allclose(spd_solve(a, b), [1e8, 2.0, -3e-8], rtol=1e-8)


def test_spd_inverse_is_symmetric_inverse():
    a = spd(5)
    inv = spd_inverse(a)
    np.testing.assert_array_equal(inv, inv.T)
    np.testing.assert_allclose(inv @ a, np.eye(5), atol=1e-10)


def test_spd_logdet():
    a = spd(4, np.array([1e-3, 1.0, 10.0, 1e4]))
    sign, ref = np.linalg.slogdet(a)
    assert sign == 1
    assert spd_logdet(a) == pytest.approx(ref, rel=1e-12)


def test_not_positive_definite_raises():
    with pytest.raises(NotPositiveDefinite):
        spd_solve(np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones(2))
    with pytest.raises(np.linalg.LinAlgError):  # NotPositiveDefinite is a LinAlgError
        cholesky(-np.eye(2))


def test_aliased_columns_keeps_first_of_collinear_pair_as_r():
    x = RNG.normal(size=(50, 4))
    X = np.column_stack([np.ones(50), x[:, 0], 2 * x[:, 0], x[:, 1], x[:, 1] - x[:, 0],
                         x[:, 2], np.zeros(50)])
    g = X.T @ X
    np.testing.assert_array_equal(aliased_columns(g),
                                  [False, False, True, False, True, False, True])


def test_aliased_columns_full_rank_and_scaled():
    X = RNG.normal(size=(40, 5)) * np.array([1e-6, 1, 1e6, 1, 1e3])
    assert not aliased_columns(X.T @ X).any()


def test_aliased_columns_detects_near_collinearity_at_r_tolerance():
    x = RNG.normal(size=200)
    z = RNG.normal(size=200)
    near = np.column_stack([np.ones(200), x, x + 1e-9 * z])  # relative distance 1e-9
    assert aliased_columns(near.T @ near).tolist() == [False, False, True]
    fine = np.column_stack([np.ones(200), x, x + 1e-3 * z])
    assert not aliased_columns(fine.T @ fine).any()


def test_clear_cholesky_is_the_factor_the_solve_would_make():
    for a in (spd(5), spd(4, scales=np.array([1e-8, 1.0, 1e8, 3.0]))):
        factor = clear_cholesky(a)
        assert factor is not None and clearly_full_rank(a)
        c, d = cholesky(a)
        np.testing.assert_array_equal(np.triu(factor[0]), c)
        np.testing.assert_array_equal(factor[1], d)
        b = RNG.normal(size=a.shape[0])
        assert spd_solve(a, b, factor).tobytes() == spd_solve(a, b).tobytes()
    x = RNG.normal(size=(20, 3))
    near = np.column_stack([x, x[:, 0] + 1e-6 * x[:, 1]])
    for bad in (near.T @ near, np.diag([1.0, 0.0]), np.array([[1.0, np.nan], [np.nan, 1.0]])):
        assert clear_cholesky(bad) is None and not clearly_full_rank(bad)
    assert clear_cholesky(np.empty((0, 0)))[0].shape == (0, 0)


@pytest.mark.parametrize("diag", [[4.0, 9.0], [4.0, 0.0], [np.nan, 1.0], [-4.0, 1.0], []])
def test_scale_is_the_root_of_the_absolute_diagonal_with_one_where_it_is_not_positive(diag):
    from glmclass.numerics.linalg import _scale

    a = np.diag(np.array(diag, dtype=float))
    d = np.sqrt(np.abs(a.diagonal()))
    assert np.array_equal(_scale(a), np.where(d > 0, d, 1.0))
