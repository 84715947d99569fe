"""Active-set steps inside the coordinate descent (issue 26, section 5): on strongly
correlated columns the quadratic subproblem is solved exactly (its KKT conditions hold to
rounding, and no nearby point is lower), and a path prints its progress with ``disp=True``."""

from __future__ import annotations

import numpy as np
import pytest

import glmclass as gc
from glmclass.solvers.active_set import support_solve
from glmclass.solvers.coordinate_descent import cd_quadratic


def _problem(seed: int, a: int = 12):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((200, 3))
    X = base @ rng.standard_normal((3, a)) + 0.05 * rng.standard_normal((200, a))
    H = X.T @ X / 200                       # rank ~3 plus noise: condition number ~1e4
    r = H @ rng.standard_normal(a) + 0.1 * rng.standard_normal(a)
    l1 = np.full(a, 0.02)
    l2 = np.zeros(a)
    return H, r, l1, l2


def _objective(H, r, l1, l2, b):
    return 0.5 * b @ H @ b - r @ b + l1 @ np.abs(b) + 0.5 * l2 @ (b * b)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cd_quadratic_reaches_the_kkt_point_of_a_correlated_problem(seed):
    H, r, l1, l2 = _problem(seed)
    b, sweeps = cd_quadratic(H, r, np.zeros(r.size), l1, l2, 1e-20, 100_000)
    g = H @ b - r
    nz = b != 0
    assert nz.any() and (~nz).any()
    np.testing.assert_allclose(g[nz] + l1[nz] * np.sign(b[nz]), 0.0, atol=1e-12)
    assert np.all(np.abs(g[~nz]) <= l1[~nz] * (1 + 1e-9))
    assert sweeps < 1000
    # the conditions are sufficient for a convex problem; a perturbation only rises
    rng = np.random.default_rng(seed)
    for _ in range(20):
        d = 1e-4 * rng.standard_normal(r.size)
        assert _objective(H, r, l1, l2, b + d) > _objective(H, r, l1, l2, b)


def test_support_solve_steps_to_the_first_zero_crossing():
    # from (0.5, 0.5) the solve with signs (+, +) flips coordinate 1: the step stops where it
    # reaches 0, then the solve on {0} gives 0.99, whose KKT check on coordinate 1 fails
    H = np.array([[1.0, 0.9], [0.9, 1.0]])
    r = np.array([1.0, 0.0])
    l1 = np.array([0.01, 0.01])
    zero, movable = np.zeros(2), np.ones(2, bool)
    b, exact = support_solve(H, r, np.array([0.5, 0.5]), l1, zero, movable)
    assert not exact and b[1] == 0.0 and b[0] == pytest.approx(0.99, rel=1e-14)
    assert _objective(H, r, l1, zero, b) < _objective(H, r, l1, zero, np.array([0.5, 0.5]))
    # the minimum has signs (+, -): (H) x = r - l1 s
    want = np.linalg.solve(H, r - l1 * np.array([1.0, -1.0]))
    got, _ = cd_quadratic(H, r, np.array([0.5, 0.5]), l1, zero, 1e-20, 100_000)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    best, exact = support_solve(H, r, np.array([1.0, -1.0]), l1, zero, movable)
    assert exact
    np.testing.assert_allclose(best, want, rtol=1e-13)


def test_path_disp_prints_a_line_per_alpha_and_fold(capsys):
    rng = np.random.default_rng(5)
    X = np.column_stack([np.ones(150), rng.standard_normal((150, 4))])
    y = (rng.random(150) < 1 / (1 + np.exp(-X[:, 1]))).astype(float)
    path = gc.Logit(y, X).regularization_path(8, cv=3, seed=0, disp=True)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "regularization path, then 3 folds"
    assert sum(line.startswith("fold ") for line in out) == 3
    rows = [line.split() for line in out if line[:5].strip().isdigit()]
    assert len(rows) == 4 * path.alphas.size
    assert [float(r[1]) for r in rows[: path.alphas.size]] == pytest.approx(path.alphas,
                                                                              rel=1e-4)
    quiet = gc.Logit(y, X).regularization_path(8, cv=3, seed=0)
    assert capsys.readouterr().out == ""
    np.testing.assert_array_equal(quiet.coefs.to_numpy(), path.coefs.to_numpy())
    with pytest.raises(TypeError, match="disp"):
        gc.Logit(y, X).regularization_path(8, disp="yes")
