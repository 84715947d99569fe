"""The bounded finite-difference Newton solver (the outer optimiser of MixedGLM)."""

from __future__ import annotations

import numpy as np
import pytest

from glmclass.solvers.bounded_newton import derivatives, gradient, minimise, newton_step


def rosenbrock(x: np.ndarray) -> float:
    return float((1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2)


def test_derivatives_of_a_quadratic_are_exact():
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    f = lambda x: float(0.5 * x @ A @ x + x.sum())  # noqa: E731
    x = np.array([0.3, -0.7])
    fx, g, H = derivatives(f, x)
    assert fx == pytest.approx(f(x))
    np.testing.assert_allclose(g, A @ x + 1, rtol=1e-8)
    np.testing.assert_allclose(H, A, rtol=1e-6)
    np.testing.assert_allclose(gradient(f, x), A @ x + 1, rtol=1e-9)


def test_unbounded_minimum():
    res = minimise(rosenbrock, np.array([-1.2, 1.0]), np.full(2, -np.inf), 200, 1e-14)
    assert res.converged
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-6)


def test_a_bound_holds_the_parameter_and_the_others_are_optimal():
    """min (x0 + 1)^2 + (x1 - 2)^2 + x0 x1 / 2 with x0 >= 0: x0 = 0, x1 = 2."""
    f = lambda x: float((x[0] + 1) ** 2 + (x[1] - 2) ** 2 + 0.5 * x[0] * x[1])  # noqa: E731
    res = minimise(f, np.array([1.0, 0.0]), np.array([0.0, -np.inf]), 100, 1e-14)
    assert res.x[0] == 0.0
    assert res.x[1] == pytest.approx(2.0, abs=1e-7)
    assert res.converged


def test_newton_step_is_a_descent_direction_for_an_indefinite_hessian():
    H = np.array([[1.0, 0.0], [0.0, -2.0]])
    g = np.array([1.0, 1.0])
    step = newton_step(H, g, np.array([True, True]))
    assert step @ g < 0
    held = newton_step(H, g, np.array([True, False]))
    assert held[1] == 0.0 and held[0] == pytest.approx(-1.0)
