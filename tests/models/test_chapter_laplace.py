"""gc.laplace (PRML §4.4) against the notes' formulas in numpy: the mode solves d ln f / dz = 0,
A = -d^2 ln f / dz^2 (eq. 4.132), ln Z = ln f(z*) + (M/2) ln 2 pi - ln|A| / 2 (eq. 4.135); PRML's
1-D example of Fig. 4.14, a Gaussian (where the approximation is exact), and the Bayesian
logistic posterior, whose Laplace normaliser is the model's evidence."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

import glmclass as gc

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REF = Path(__file__).resolve().parents[1] / "reference"
SPECTOR = pd.read_csv(REF / "data" / "spector.csv")


def log_f(z):  # PRML Fig. 4.14: p(z) ~ exp(-z^2/2) sigma(20 z + 4)
    return -z * z / 2 + special.log_expit(20 * z + 4)


def d_log_f(z):
    return -z + 20 * special.expit(-(20 * z + 4))


def d2_log_f(z):
    s = special.expit(20 * z + 4)
    return -1 - 400 * s * (1 - s)


def numpy_laplace():
    z = optimize.brentq(d_log_f, -2, 2, xtol=1e-15, rtol=1e-15)
    A = -d2_log_f(z)
    return z, 1 / A, log_f(z) + 0.5 * np.log(2 * np.pi) - 0.5 * np.log(A)


@pytest.mark.parametrize("kw, how", [
    ({}, "numerical gradient and Hessian (from values)"),
    ({"grad": d_log_f}, "numerical Hessian (from the gradient)"),
    ({"grad": d_log_f, "hess": d2_log_f}, "given"),
])
def test_prml_1d_example_matches_the_formulas(kw, how):
    z, var, log_z = numpy_laplace()
    lap = gc.laplace(log_f, 0.0, **kw)
    assert lap.derivatives == how
    assert lap.converged
    assert isinstance(lap.mode, float) and isinstance(lap.cov, float)
    assert lap.mode == pytest.approx(z, rel=1e-8)
    assert lap.cov == pytest.approx(var, rel=1e-8)
    assert lap.log_normaliser == pytest.approx(log_z, rel=1e-8)
    # the Gaussian's log density at the mode is -ln(2 pi var)/2
    assert lap.logpdf(z)[0] == pytest.approx(-0.5 * np.log(2 * np.pi * var), rel=1e-8)


def test_gaussian_is_exact_in_several_dimensions():
    S = np.array([[2.0, 0.6, 0.1], [0.6, 1.0, -0.3], [0.1, -0.3, 0.7]])
    P, mu = np.linalg.inv(S), np.array([1.0, -2.0, 0.5])

    def f(z):
        return -0.5 * (z - mu) @ P @ (z - mu) + 3.0

    lap = gc.laplace(f, np.zeros(3))
    exact = 3.0 + 1.5 * np.log(2 * np.pi) + 0.5 * np.linalg.slogdet(S)[1]
    assert np.max(np.abs(lap.mode - mu)) < 1e-8
    assert np.max(np.abs(lap.cov - S) / np.abs(S)) < 1e-6
    assert lap.log_normaliser == pytest.approx(exact, rel=1e-9)


def test_bayes_logit_posterior_is_the_same_laplace_approximation():
    X = np.column_stack([np.ones(len(SPECTOR)), SPECTOR[["GPA", "TUCE", "PSI"]].to_numpy()])
    t = SPECTOR["GRADE"].to_numpy(dtype=float)
    S0 = np.diag([4.0, 1.0, 0.25, 2.0])
    P0 = np.linalg.inv(S0)

    def log_joint(w):  # ln p(t | w) + ln N(w | 0, S0)
        a = X @ w
        return (np.sum(t * a - np.logaddexp(0, a)) - 0.5 * w @ P0 @ w
                - 0.5 * (4 * np.log(2 * np.pi) + np.linalg.slogdet(S0)[1]))

    def grad(w):
        return X.T @ (t - special.expit(X @ w)) - P0 @ w

    def hess(w):
        y = special.expit(X @ w)
        return -(X.T @ (X * (y * (1 - y))[:, None]) + P0)

    lap = gc.laplace(log_joint, np.zeros(4), grad=grad, hess=hess)
    res = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR,
                                     prior_scale=np.sqrt(np.diag(S0))).fit(tol=1e-14)
    assert np.max(np.abs(lap.mode - res.params.to_numpy())) < 1e-8
    assert np.max(np.abs(lap.cov - res.cov_params().to_numpy())) < 1e-8
    assert lap.log_normaliser == pytest.approx(res.log_evidence, rel=1e-10)
    assert res.laplace.log_normaliser == pytest.approx(res.log_evidence, rel=1e-13)
    assert np.max(np.abs(res.laplace.cov - res.cov_params().to_numpy())) < 1e-12


def test_plot_draws_the_density_and_its_gaussian():
    z, var, log_z = numpy_laplace()
    lap = gc.laplace(log_f, 0.0, grad=d_log_f)
    ax = lap.plot(bounds=(-2, 4), n=2001)
    fill, line = ax.collections[0], ax.lines[0]
    x, y = line.get_data()
    gauss = np.exp(-(x - z) ** 2 / (2 * var)) / np.sqrt(2 * np.pi * var)
    assert np.max(np.abs(y - gauss)) < 1e-8
    dens = np.exp(np.array([log_f(v) for v in x]) - log_z)  # the Laplace Z is approximate
    area = fill.get_paths()[0].vertices
    assert area[:, 1].max() == pytest.approx(dens.max() * np.exp(log_z)
                                             / np.trapezoid(np.exp(log_f(x)), x), rel=1e-6)
    ax2 = lap.plot(log=True)
    assert ax2.get_ylabel() == "-ln density"
    plt.close("all")


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="not finite at the start"):
        gc.laplace(lambda z: -np.inf, -1.0)
    with pytest.raises(ValueError, match="not negative definite"):
        gc.laplace(lambda z: z @ z, np.array([0.0, 0.0]))
    lap = gc.laplace(lambda z: -0.5 * z @ z, np.ones(2))
    with pytest.raises(ValueError, match="1-D densities"):
        lap.plot()
