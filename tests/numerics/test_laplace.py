"""Laplace numerics on plain arrays: evidence formula, fixed point, predictive integrals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, special, stats

from glmclass import links as L
from glmclass.numerics import laplace

RNG = np.random.default_rng(5)


def test_log_prior_density_matches_scipy_and_skips_flat():
    w, m = np.array([0.3, -1.2, 4.0]), np.array([0.0, 0.5, 1.0])
    prec = np.array([4.0, 0.25, 0.0])
    want = stats.norm.logpdf(0.3, 0.0, 0.5) + stats.norm.logpdf(-1.2, 0.5, 2.0)
    assert laplace.log_prior_density(w, m, prec) == pytest.approx(want, rel=1e-14)


def test_laplace_evidence_is_exact_for_a_gaussian_integrand():
    # for a log-quadratic posterior the Laplace formula is exact: ln int exp(l(w)) N(w|m,S0) dw
    # with l(w) = c - (w - b)' H (w - b) / 2 has a closed form (a Gaussian convolution)
    p = 3
    B = RNG.normal(size=(p, p))
    H = B @ B.T + p * np.eye(p)
    b, m = RNG.normal(size=p), RNG.normal(size=p)
    prec = np.array([0.5, 2.0, 1.5])
    A = H + np.diag(prec)
    mode = np.linalg.solve(A, H @ b + prec * m)
    c = -3.7
    ll = c - 0.5 * (mode - b) @ H @ (mode - b)
    got = laplace.laplace_log_evidence(ll, mode, m, prec, A)
    # closed form: c + ln N(b | m, S0 + H^-1) + (p/2) ln 2pi - ln|H| / 2
    cov = np.diag(1 / prec) + np.linalg.inv(H)
    want = (c + stats.multivariate_normal(m, cov).logpdf(b) + 0.5 * p * np.log(2 * np.pi)
            - 0.5 * np.linalg.slogdet(H)[1])
    assert got == pytest.approx(want, rel=1e-12)


def test_well_determined_is_mackays_gamma():
    p, alpha = 4, 0.7
    B = RNG.normal(size=(10, p))
    H = B.T @ B
    S = np.linalg.inv(H + alpha * np.eye(p))
    lam = np.linalg.eigvalsh(H)
    gamma = laplace.well_determined(np.full(p, alpha), np.diag(S)).sum()
    assert gamma == pytest.approx(np.sum(lam / (lam + alpha)), rel=1e-12)


def test_mackay_update_by_group_and_fixed_coefficients():
    coef, mean = np.array([1.0, 2.0, -1.0, 5.0]), np.zeros(4)
    prec, sdiag = np.array([0.5, 0.5, 2.0, 1.0]), np.array([0.4, 0.2, 0.1, 0.3])
    codes = np.array([0, 0, 1, -1])
    got = laplace.mackay_update(coef, mean, prec, sdiag, codes, 2)
    g0 = (1 - 0.5 * 0.4) + (1 - 0.5 * 0.2)
    assert got == pytest.approx([g0 / 5.0, (1 - 2.0 * 0.1) / 1.0], rel=1e-14)


def _gaussian_evidence(b, H, c, m):
    """A problem where the data Hessian does not depend on the prior: the exact log evidence
    as a function of a scalar prior precision, and the record maximize_evidence needs."""
    p = b.size

    def at(alpha):
        prec = np.full(p, alpha[0])
        A = H + np.diag(prec)
        mode = np.linalg.solve(A, H @ b + prec * m)
        ll = c - 0.5 * (mode - b) @ H @ (mode - b)
        ev = laplace.laplace_log_evidence(ll, mode, m, prec, A)
        return ev, mode, m, prec, np.diag(np.linalg.inv(A))
    return at


@pytest.mark.parametrize("method", ["mackay", "direct"])
def test_maximize_evidence_finds_the_maximum(method):
    p = 5
    B = RNG.normal(size=(30, p))
    H = B.T @ B
    b = RNG.normal(scale=0.6, size=p)
    at = _gaussian_evidence(b, H, 0.0, np.zeros(p))
    res = laplace.maximize_evidence(at, np.zeros(p, dtype=int), np.array([1.0]), method)
    grid = np.exp(np.linspace(-6, 6, 2001))
    evs = np.array([at(np.array([a]))[0] for a in grid])
    assert res.converged
    # with a constant data Hessian MacKay's fixed point is the exact stationary point
    assert res.log_evidence >= evs.max() - 1e-9
    a_best = grid[np.argmax(evs)]
    assert res.alpha[0] == pytest.approx(a_best, rel=5e-3)


def test_maximize_evidence_rejects_unknown_method():
    with pytest.raises(ValueError, match="'direct' or 'mackay'"):
        laplace.maximize_evidence(lambda a: None, np.zeros(2, dtype=int), np.ones(1), "newton")


def test_kappa_and_probit_predictive_closed_forms():
    assert laplace.kappa(0.0) == 1.0
    assert laplace.kappa(8 / np.pi) == pytest.approx(1 / np.sqrt(2))
    mu, var = np.array([-2.0, 0.0, 1.5]), np.array([0.5, 3.0, 10.0])
    got = laplace.probit_predictive(mu, var, "probit")
    want = [integrate.quad(lambda a, m=m, v=v: special.ndtr(a) * stats.norm.pdf(a, m, np.sqrt(v)),
                           -np.inf, np.inf, epsabs=0, epsrel=1e-12)[0]
            for m, v in zip(mu, var, strict=True)]
    assert got == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match="quadrature"):
        laplace.probit_predictive(mu, var, "cloglog")


@pytest.mark.parametrize("link", [L.Logit(), L.Probit(), L.CLogLog(), L.Cauchit()],
                         ids=lambda k: k.name)
@pytest.mark.parametrize("gh_max_sd", [laplace.GH_MAX_SD, 2.0])
def test_quadrature_matches_adaptive_integration(link, gh_max_sd):
    # narrow rows go through Gauss-Hermite, wide ones through Gauss-Legendre panels
    mu = np.array([-4.0, -1.0, 0.3, 2.0, 6.0, 0.5, -2.0])
    sd = np.array([0.1, 0.7, 1.0, 2.0, 3.0, 10.0, 60.0])
    if gh_max_sd == 2.0 and link.name not in ("logit", "probit"):
        sd = sd[sd <= 0.75]
        mu = mu[: sd.size]
    got = laplace.quadrature_predictive(mu, sd**2, link.inverse, 64, gh_max_sd)
    want = [integrate.quad(lambda a, m=m, s=s: link.inverse(a) * stats.norm.pdf(a, m, s),
                           -np.inf, np.inf, epsabs=0, epsrel=1e-13, limit=1000)[0]
            for m, s in zip(mu, sd, strict=True)]
    assert np.max(np.abs(got - np.array(want))) < 1e-9


def test_quadrature_rejects_no_nodes():
    with pytest.raises(ValueError, match="n_nodes"):
        laplace.quadrature_predictive(np.zeros(1), np.ones(1), special.expit, 0)


def test_probit_approximation_error_is_small():
    # PRML §4.5.2: sigma(kappa mu) is close to the exact integral; measured max |err| ~ 0.02
    mu = np.linspace(-6, 6, 120)  # no 0: there both are exactly 1/2
    for var in (0.1, 1.0, 4.0, 25.0):
        v = np.full(mu.size, var)
        exact = laplace.quadrature_predictive(mu, v, special.expit)
        approx = laplace.probit_predictive(mu, v)
        assert np.max(np.abs(approx - exact)) < 0.02
        # the approximation keeps the decision boundary and the side of 1/2
        assert np.all(np.sign(approx - 0.5) == np.sign(exact - 0.5))


def test_zero_variance_gives_the_plug_in():
    mu = np.array([-1.0, 0.0, 2.0])
    z = np.zeros(3)
    assert laplace.probit_predictive(mu, z) == pytest.approx(special.expit(mu), rel=1e-15)
    assert laplace.quadrature_predictive(mu, z, special.expit) == pytest.approx(
        special.expit(mu), rel=1e-12)


def test_linear_predictor_moments():
    X = RNG.normal(size=(6, 3))
    coef = RNG.normal(size=3)
    B = RNG.normal(size=(3, 3))
    cov = B @ B.T
    off = np.arange(6.0)
    mu, var = laplace.linear_predictor_moments(X, coef, cov, off)
    assert mu == pytest.approx(X @ coef + off)
    assert var == pytest.approx(np.diag(X @ cov @ X.T), rel=1e-12)


def test_monte_carlo_is_seeded_and_near_quadrature():
    X = np.column_stack([np.ones(5), np.linspace(-2, 2, 5)])
    coef, cov = np.array([0.2, 1.0]), np.array([[0.3, 0.05], [0.05, 0.2]])
    mu, var = laplace.linear_predictor_moments(X, coef, cov)
    exact = laplace.quadrature_predictive(mu, var, special.expit)
    a = laplace.monte_carlo_predictive(X, coef, cov, special.expit, None, 20000,
                                       np.random.default_rng(1))
    b = laplace.monte_carlo_predictive(X, coef, cov, special.expit, None, 20000,
                                       np.random.default_rng(1))
    assert np.array_equal(a, b)
    assert np.max(np.abs(a - exact)) < 0.01
    with pytest.raises(ValueError, match="n_draws"):
        laplace.monte_carlo_predictive(X, coef, cov, special.expit, None, 0,
                                       np.random.default_rng(1))
