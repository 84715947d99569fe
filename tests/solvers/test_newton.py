"""The damped Newton solver and the multinomial block-Hessian objective, on plain arrays."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from glmclass.rows.blocks import ArrayBlocks
from glmclass.solvers.control import Control
from glmclass.solvers.fit import Fit
from glmclass.solvers.newton import (
    _complement,
    multinomial_deviance,
    newton,
    penalized,
    softmax_parts,
)

RNG = np.random.default_rng(5)
N, P, K = 300, 4, 4
X = np.column_stack([np.ones(N), RNG.normal(size=(N, P - 1))])
B_TRUE = RNG.normal(scale=0.7, size=(P, K - 1))
ETA = np.column_stack([np.zeros(N), X @ B_TRUE])
CODES = np.array([RNG.choice(K, p=pr) for pr in softmax(ETA, axis=1)])
W = RNG.integers(1, 4, size=N).astype(float)
OFF = RNG.normal(scale=0.1, size=N)


def quadratic(A, b):
    def ev(x, derivatives):
        f = 0.5 * x @ A @ x - b @ x
        return (f, A @ x - b, A) if derivatives else (f, None, None)
    return ev


def dense_terms(coef):
    """Deviance, gradient and Hessian from the explicit N x K x p formulas (test only)."""
    Bm = coef.reshape(K - 1, P).T
    eta = np.column_stack([np.zeros(N), X @ Bm + OFF[:, None]])
    pr = softmax(eta, axis=1)
    T = np.eye(K)[CODES]
    dev = -2 * np.sum(W * np.log(pr[np.arange(N), CODES]))
    grad = -2 * ((T - pr)[:, 1:] * W[:, None]).T @ X  # (K-1, p)
    H = np.zeros(((K - 1) * P, (K - 1) * P))
    for j in range(K - 1):
        for k in range(K - 1):
            a = W * pr[:, j + 1] * ((j == k) - pr[:, k + 1])
            H[j * P:(j + 1) * P, k * P:(k + 1) * P] = X.T @ (X * a[:, None])
    return dev, grad.ravel(), 2 * H


# --- the generic loop ------------------------------------------------------------------------

def test_quadratic_is_solved_in_one_step():
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])
    fit = newton(quadratic(A, b), np.zeros(2))
    assert isinstance(fit, Fit)
    np.testing.assert_allclose(fit.coef, np.linalg.solve(A, b), rtol=1e-14)
    assert fit.converged and fit.n_iter == 2  # the second step confirms the change is < tol
    np.testing.assert_allclose(fit.gradient, 0, atol=1e-14)


def test_step_halving_rescues_a_diverging_newton_step():
    # f = sqrt(1 + x^2): the plain Newton step maps x to -x^3 and diverges from |x| > 1
    def ev(x, derivatives):
        f = float(np.sqrt(1 + x[0] ** 2))
        if not derivatives:
            return f, None, None
        return f, np.array([x[0] / f]), np.array([[1 / f ** 3]])

    fit = newton(ev, np.array([3.0]), Control(method="newton", maxiter=100))
    assert fit.converged
    assert abs(fit.coef[0]) < 1e-4
    assert np.all(np.diff(fit.history) <= 0)  # halving keeps the objective from rising


def test_nonfinite_trial_points_are_halved():
    # f = x - log(x) on x > 0 (minimum at 1); outside the domain the objective is inf
    def ev(x, derivatives):
        if x[0] <= 0:
            return np.inf, None, None
        f = float(x[0] - np.log(x[0]))
        return (f, np.array([1 - 1 / x[0]]), np.array([[1 / x[0] ** 2]])) if derivatives \
            else (f, None, None)

    fit = newton(ev, np.array([5.0]))  # the full Newton step from 5 lands at -15
    assert fit.converged
    np.testing.assert_allclose(fit.coef, [1.0], atol=1e-5)


def test_stopping_rule_and_maxiter():
    def ev(x, derivatives):
        f = float(np.sum(np.exp(x) - x))
        return (f, np.exp(x) - 1, np.diag(np.exp(x))) if derivatives else (f, None, None)

    fit = newton(ev, np.full(3, 4.0), Control(method="newton", maxiter=2))
    assert not fit.converged and fit.n_iter == 2 and "no convergence in 2" in fit.message
    fit = newton(ev, np.full(3, 4.0), Control(method="newton", tol=1e-10))
    h = np.asarray(fit.history)
    assert abs(h[-1] - h[-2]) / (abs(h[-1]) + 0.1) < 1e-10
    assert abs(h[-2] - h[-3]) / (abs(h[-2]) + 0.1) >= 1e-10  # stopped at the first pass


def test_start_outside_the_domain_raises():
    with pytest.raises(ValueError, match="starting values"):
        newton(lambda x, d: (np.nan, None, None), np.zeros(2))


def test_penalized_objective_gives_the_posterior_mode():
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    b = np.array([1.0, 2.0])
    prec = np.diag([0.5, 2.0])
    mean = np.array([0.3, -0.2])
    fit = newton(penalized(quadratic(A, b), prec, mean), np.zeros(2))
    # 0.5 x'Ax - b'x + (x-m)'P(x-m): gradient A x - b + 2 P (x - m) = 0
    expected = np.linalg.solve(A + 2 * prec, b + 2 * prec @ mean)
    np.testing.assert_allclose(fit.coef, expected, rtol=1e-13)
    np.testing.assert_allclose(fit.hessian, A + 2 * prec)


# --- the multinomial objective ---------------------------------------------------------------

@pytest.mark.parametrize("rows", [None, 7, N])
def test_multinomial_terms_match_the_dense_formulas(rows):
    coef = RNG.normal(scale=0.5, size=(K - 1) * P)
    dev, grad, hess = multinomial_deviance(ArrayBlocks(X, CODES, W, OFF, rows=rows), K)(coef, True)
    d0, g0, h0 = dense_terms(coef)
    np.testing.assert_allclose(dev, d0, rtol=1e-13)
    np.testing.assert_allclose(grad, g0, rtol=1e-11, atol=1e-10)
    np.testing.assert_allclose(hess, h0, rtol=1e-11, atol=1e-10)
    assert dev == multinomial_deviance(ArrayBlocks(X, CODES, W, OFF, rows=rows), K)(coef, False)[0]


def test_multinomial_gradient_is_the_derivative_of_the_deviance():
    ev = multinomial_deviance(ArrayBlocks(X, CODES, W, OFF), K)
    coef = RNG.normal(scale=0.5, size=(K - 1) * P)
    _, g, h = ev(coef, True)
    eps = 1e-6
    for i in (0, P + 1, 2 * P + 3):
        e = np.zeros_like(coef)
        e[i] = eps
        num = (ev(coef + e, False)[0] - ev(coef - e, False)[0]) / (2 * eps)
        np.testing.assert_allclose(g[i], num, rtol=1e-6, atol=1e-6)
        num_h = (ev(coef + e, True)[1] - ev(coef - e, True)[1]) / (2 * eps)
        np.testing.assert_allclose(h[i], num_h, rtol=1e-5, atol=1e-5)


def test_newton_on_the_multinomial_reaches_a_zero_gradient():
    fit = newton(multinomial_deviance(ArrayBlocks(X, CODES, W, OFF), K), np.zeros((K - 1) * P))
    assert fit.converged and fit.n_iter < 10
    assert np.max(np.abs(fit.gradient)) < 1e-6
    np.testing.assert_allclose(fit.objective, dense_terms(fit.coef)[0], rtol=1e-13)


def test_softmax_parts_never_overflow():
    eta = np.array([[1000.0, -1000.0], [-1000.0, -1000.0], [0.0, 745.0], [1e300, 0.0]])
    lse, prob, p0 = softmax_parts(eta)
    total = p0 + prob.sum(axis=1)
    np.testing.assert_allclose(total, 1.0, rtol=1e-15)
    np.testing.assert_allclose(lse[:3], [1000.0, np.log1p(2 * np.exp(-1000.0)), 745.0])
    assert prob[0, 0] == 1.0 and p0[1] == 1.0


def test_complement_is_accurate_near_one():
    eta = np.array([[40.0, 0.0], [0.0, 0.0]])
    _, prob, p0 = softmax_parts(eta)
    q = _complement(prob, p0)
    # 1 - p_1 = (1 + e^0) / (1 + e^40 + e^0) = 2 / (2 + e^40): plain 1 - p would lose it all
    np.testing.assert_allclose(q[0, 0], 2 / (2 + np.exp(40.0)), rtol=1e-14)
    np.testing.assert_allclose(q[1], [2 / 3, 2 / 3], rtol=1e-15)


def test_infinite_linear_predictor_is_reported_as_outside_the_domain():
    ev = multinomial_deviance(ArrayBlocks(X, CODES, W, OFF), K)
    coef = np.full((K - 1) * P, 1e308)
    f, g, h = ev(coef, True)
    assert f == np.inf and g is None and h is None


@pytest.mark.parametrize("k1", [1, 2, 5, 12])
def test_softmax_complement_and_residual_agree_with_the_dense_formulas(k1):
    from scipy.special import logsumexp

    from glmclass.solvers.newton import _complement, _observed_eta, _residual

    rng = np.random.default_rng(k1)
    eta = rng.normal(0, 3, (500, k1))
    eta[:5] = 40.0 * np.sign(rng.normal(size=(5, k1)))  # levels fitted near probability 1
    full = np.column_stack([np.zeros(500), eta])
    lse, prob, p0 = softmax_parts(eta)
    np.testing.assert_allclose(lse, logsumexp(full, axis=1), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(prob, np.exp(eta - lse[:, None]), rtol=1e-13)
    q = _complement(prob, p0)
    pk = np.exp(full - lse[:, None])
    others = np.column_stack([np.delete(pk, j + 1, axis=1).sum(axis=1) for j in range(k1)])
    np.testing.assert_allclose(q, others, rtol=1e-13)  # 1 - p, accurate where p is near 1
    codes = rng.integers(0, k1 + 1, 500)
    f = rng.uniform(0.5, 2.0, 500)
    t = codes[:, None] == np.arange(1, k1 + 1)
    np.testing.assert_allclose(_residual(codes, f, prob, q), f[:, None] * np.where(t, q, -prob),
                               rtol=1e-15)
    np.testing.assert_array_equal(_observed_eta(eta, codes),
                                  np.where(codes > 0, full[np.arange(500), codes], 0.0))


@pytest.mark.parametrize("k", [2, 4, 11])
def test_absent_weights_and_offset_skip_work_without_changing_a_bit(k):
    # a source without weights or offset gives broadcast 1.0 and 0.0, which the objective
    # skips; explicit ones and zeros go through the multiplications and the addition
    rng = np.random.default_rng(k)
    n = 400
    x = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    codes = rng.integers(0, k, n)
    coef = rng.normal(scale=0.5, size=(k - 1) * 4)
    bare = multinomial_deviance(ArrayBlocks(x, codes), k)(coef, True)
    given = multinomial_deviance(ArrayBlocks(x, codes, np.ones(n), np.zeros(n)), k)(coef, True)
    np.testing.assert_array_equal(bare[1], given[1])
    np.testing.assert_array_equal(bare[2], given[2])
    # NumPy sums a dot product with a broadcast vector in another order: the last bit or so
    np.testing.assert_allclose(bare[0], given[0], rtol=1e-15)
    no_offset = multinomial_deviance(ArrayBlocks(x, codes, None, np.zeros(n)), k)(coef, True)
    assert no_offset[0] == bare[0]
