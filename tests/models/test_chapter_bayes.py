"""Bayesian logistic regression with a full Gaussian prior N(m_0, S_0) (PRML §4.5) against a
direct numpy implementation of the notes' formulas: the MAP of eq. 4.140-4.142 by Newton's
method, S_N of eq. 4.143, the Laplace evidence of eq. 4.137 and the probit predictive of
eq. 4.155."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
SPECTOR = pd.read_csv(REF / "data" / "spector.csv")
NAMES = ["Intercept", "GPA", "TUCE", "PSI"]
S0 = np.array([[4.0, 0.5, -0.3, 0.2],
               [0.5, 2.0, 0.1, -0.4],
               [-0.3, 0.1, 0.5, 0.05],
               [0.2, -0.4, 0.05, 3.0]])
M0 = np.array([0.5, -0.2, 0.1, 0.3])


def design():
    X = np.column_stack([np.ones(len(SPECTOR)), SPECTOR[["GPA", "TUCE", "PSI"]].to_numpy()])
    return X, SPECTOR["GRADE"].to_numpy(dtype=float)


def numpy_posterior(S0, m0):
    """PRML eq. 4.140-4.143 and 4.137, straight from the notes."""
    X, t = design()
    P0 = np.linalg.inv(S0)
    def log_post(w):  # ln p(w | t) up to a constant: eq. 4.142
        a = X @ w
        return -0.5 * (w - m0) @ P0 @ (w - m0) + np.sum(t * a - np.logaddexp(0, a))

    w = np.zeros(len(m0))
    for _ in range(200):  # Newton's method with step halving
        y = special.expit(X @ w)
        grad = -P0 @ (w - m0) + X.T @ (t - y)
        A = P0 + X.T @ (X * (y * (1 - y))[:, None])  # S_N^-1, eq. 4.143
        step = np.linalg.solve(A, grad)
        h = 1.0
        while log_post(w + h * step) < log_post(w) - 1e-12 and h > 1e-8:
            h /= 2
        w = w + h * step
        if np.max(np.abs(step)) < 1e-13:
            break
    y = special.expit(X @ w)
    A = P0 + X.T @ (X * (y * (1 - y))[:, None])
    SN = np.linalg.inv(A)
    loglik = np.sum(t * np.log(y) + (1 - t) * np.log1p(-y))
    d = w - m0
    M = len(w)
    log_prior = -0.5 * (M * np.log(2 * np.pi) + np.linalg.slogdet(S0)[1] + d @ P0 @ d)
    log_ev = loglik + log_prior + 0.5 * M * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(A)[1]
    return w, SN, loglik, log_prior, log_ev


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


@pytest.fixture(scope="module")
def full():
    return gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_mean=M0,
                                      prior_cov=S0).fit(tol=1e-14)


def test_full_prior_map_cov_evidence_match_prml(full):
    w, SN, loglik, log_prior, log_ev = numpy_posterior(S0, M0)
    assert full.converged
    assert rel(full.params[NAMES], w) < 1e-8
    assert rel(full.cov_params().loc[NAMES, NAMES], SN) < 1e-8
    assert full.llf == pytest.approx(loglik, rel=1e-10)
    assert full.log_prior == pytest.approx(log_prior, rel=1e-10)
    assert full.log_evidence == pytest.approx(log_ev, rel=1e-10)
    assert rel(full.prior_cov.loc[NAMES, NAMES], S0) < 1e-15
    assert rel(full.prior_scale[NAMES], np.sqrt(np.diag(S0))) < 1e-15
    # gamma_j = 1 - (S0^-1 S_N)_jj, summing to M - Tr(S0^-1 S_N)
    gamma = 1 - np.diag(np.linalg.inv(S0) @ SN)
    assert rel(full.effective_params[NAMES], gamma) < 1e-7
    assert "N(m_0, S_0), full S_0" in str(full.summary())


def test_full_prior_predictive_is_probit_approximation(full):
    w, SN, *_ = numpy_posterior(S0, M0)
    X, _ = design()
    mu = X @ w
    var = np.einsum("ij,jk,ik->i", X, SN, X)  # eq. 4.149-4.150
    p = special.expit(mu / np.sqrt(1 + np.pi * var / 8))  # eq. 4.155
    assert rel(full.predict(method="probit"), p) < 1e-8
    assert rel(full.predict(method="map"), special.expit(mu)) < 1e-8


def test_prior_cov_dataframe_by_names_in_any_order():
    order = ["PSI", "GPA", "Intercept", "TUCE"]
    frame = pd.DataFrame(S0, index=NAMES, columns=NAMES).loc[order, order]
    res = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR,
                                     prior_cov=frame).fit(tol=1e-14)
    w, SN, *_, log_ev = numpy_posterior(S0, np.zeros(4))
    assert rel(res.params[NAMES], w) < 1e-8
    assert res.log_evidence == pytest.approx(log_ev, rel=1e-10)


def test_diagonal_prior_cov_equals_prior_scale():
    s = np.array([3.0, 1.0, 0.5, 2.0])
    a = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR,
                                   prior_scale=dict(zip(NAMES, s, strict=True))).fit(tol=1e-14)
    b = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR,
                                   prior_cov=np.diag(s**2)).fit(tol=1e-14)
    assert rel(b.params, a.params) < 1e-10
    assert b.log_evidence == pytest.approx(a.log_evidence, rel=1e-12)
    assert rel(b.cov_params(), a.cov_params()) < 1e-9


def test_optimised_full_prior_scales_s0_to_the_evidence_maximum():
    model = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_cov=S0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = model.fit(optimize_prior=True, tol=1e-13)
    alpha = float(res.alpha.iloc[0])

    def neg(log_a):
        return -numpy_posterior(S0 / np.exp(log_a), np.zeros(4))[4]

    best = optimize.minimize_scalar(neg, bounds=(-8, 8), method="bounded",
                                    options={"xatol": 1e-10})
    assert alpha == pytest.approx(np.exp(best.x), rel=1e-4)
    assert res.log_evidence == pytest.approx(-best.fun, rel=1e-10)
    assert rel(res.prior_cov, S0 / alpha) < 1e-12
    _, _, _, _, ev = numpy_posterior(S0 / alpha, np.zeros(4))
    assert res.log_evidence == pytest.approx(ev, rel=1e-10)
    curve = res.evidence_curve([alpha, 2 * alpha])
    assert curve["log_evidence"].iloc[0] == pytest.approx(ev, rel=1e-10)
    assert curve["log_evidence"].iloc[1] < curve["log_evidence"].iloc[0]
    mackay = model.fit(optimize_prior="mackay", tol=1e-13)
    # MacKay's fixed point in the whitened coefficients: gamma = M - alpha Tr(S0^-1 S_N)
    a = float(mackay.alpha.iloc[0])
    w, SN, *_ = numpy_posterior(S0 / a, np.zeros(4))
    P0 = np.linalg.inv(S0)
    gamma = 4 - a * np.trace(P0 @ SN)
    assert a == pytest.approx(gamma / (w @ P0 @ w), rel=1e-6)


@pytest.mark.parametrize("kw, msg", [
    ({"prior_scale": 2.0}, "exclusive"),
    ({"prior_scale_intercept": 10.0}, "exclusive"),
])
def test_prior_cov_is_exclusive_with_scales(kw, msg):
    with pytest.raises(ValueError, match=msg):
        gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_cov=S0, **kw)


@pytest.mark.parametrize("bad, msg", [
    (np.eye(3), r"shape \(3, 3\)"),
    (S0 + np.triu(np.ones((4, 4)), 1), "symmetric"),
    (np.diag([1.0, 1.0, 0.0, 1.0]), "not positive definite"),
    (pd.DataFrame(np.eye(4), index=["a", "GPA", "TUCE", "PSI"],
                  columns=["a", "GPA", "TUCE", "PSI"]), "missing \\['Intercept'\\]"),
])
def test_bad_prior_cov_is_refused_with_a_reason(bad, msg):
    with pytest.raises(ValueError, match=msg):
        gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_cov=bad)


def test_groups_refused_with_full_prior():
    model = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_cov=S0)
    with pytest.raises(ValueError, match="groups cannot split"):
        model.fit(optimize_prior=True, groups={"a": ["GPA"]})
