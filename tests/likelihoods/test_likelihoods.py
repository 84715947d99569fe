"""The likelihood contract against statsmodels' per-row terms and against finite differences.

Every per-row term (``loglike_obs``, ``score_obs``) is compared with statsmodels' ``loglikeobs``
/ ``score_obs`` at parameters away from the MLE (so that the scores are not ~0), and
``score_obs`` summed with the central-difference gradient of the summed log-likelihood; the
mean's Jacobian with differences of the mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import glmclass as gc
from glmclass import families as F
from glmclass import links as L
from glmclass.likelihoods import (
    GLMLikelihood,
    Likelihood,
    MultinomialLikelihood,
    likelihood_of,
)
from glmclass.rows.blocks import Block

TOL = 1e-10


def rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture(scope="module")
def birthwt():
    df = gc.datasets.load("birthwt")
    X = np.column_stack([np.ones(len(df)), df.age, df.lwt / 100, df.smoke,
                         (df.race == "black").astype(float), (df.race == "other").astype(float)])
    return X, df.low.to_numpy(float), df


def block(X, y, weights=None, offset=None) -> Block:
    n = X.shape[0]
    return Block(X, y, np.ones(n) if weights is None else weights,
                 np.zeros(n) if offset is None else offset, 0)


def num_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h * max(1.0, abs(x[j]))
        g[j] = (f(x + e) - f(x - e)) / (2 * e[j])
    return g


PARAMS = np.array([0.3, -0.03, -0.8, 0.9, 1.1, 0.7])


@pytest.mark.parametrize(("family", "sm_model"), [
    (F.Binomial(), sm.Logit), (F.Binomial("probit"), sm.Probit)])
def test_binary_terms_match_statsmodels(birthwt, family, sm_model):
    X, y, _ = birthwt
    lik = GLMLikelihood(family)
    b = block(X, y)
    ref = sm_model(y, X)
    assert rel(lik.loglike_obs(b, PARAMS), ref.loglikeobs(PARAMS)) < TOL
    assert rel(lik.score_obs(b, PARAMS), ref.score_obs(PARAMS)) < TOL
    # Fisher weights: minus statsmodels' Hessian for the canonical logit
    if sm_model is sm.Logit:
        H = X.T @ (lik.weights(b, PARAMS)[:, None] * X)
        assert rel(H, -ref.hessian(PARAMS)) < TOL
    Hobs = X.T @ (lik.weights(b, PARAMS, observed=True)[:, None] * X)
    assert rel(Hobs, -ref.hessian(PARAMS)) < 1e-9


@pytest.mark.parametrize(("family", "sm_family"), [
    (F.Poisson(), sm.families.Poisson()),
    (F.Gaussian(), sm.families.Gaussian()),
    (F.Binomial("cloglog"), sm.families.Binomial(sm.families.links.CLogLog())),
])
def test_glm_terms_match_statsmodels(birthwt, family, sm_family):
    X, y, df = birthwt
    yy = df.ftv.to_numpy(float) if isinstance(family, (F.Poisson, F.Gaussian)) else y
    params = PARAMS * 0.3
    # variance weights (statsmodels' binomial reads them as trials only when integer)
    w = np.linspace(0.5, 2.0, len(yy)) if family.name != "Binomial" else np.ones(len(yy))
    lik = GLMLikelihood(family)
    ref = sm.GLM(yy, X, family=sm_family, var_weights=w)
    b = block(X, yy, w)
    expected = ref.family.loglike_obs(yy, ref.predict(params), w, 1.0)
    assert rel(lik.loglike_obs(b, params), expected) < TOL
    assert rel(lik.score_obs(b, params), ref.score_obs(params, scale=1.0)) < TOL


def test_glm_score_is_gradient_of_loglike(birthwt):
    X, y, _ = birthwt
    off = np.linspace(-0.2, 0.2, len(y))
    w = np.linspace(1, 3, len(y)).round()
    for fam in (F.Binomial(), F.Binomial("probit"), F.Binomial("cauchit")):
        lik = GLMLikelihood(fam)
        b = block(X, y, w, off)
        g = num_grad(lambda p, lik=lik, b=b: lik.loglike_obs(b, p).sum(), PARAMS)
        assert rel(lik.score_obs(b, PARAMS).sum(axis=0), g) < 1e-7


def test_glm_mean_jacobian_by_differences(birthwt):
    X, _, _ = birthwt
    lik = GLMLikelihood(F.Binomial("probit"))
    J = lik.mean_jacobian(X, PARAMS)
    assert J.shape == (X.shape[0], 1, X.shape[1])
    for j in range(PARAMS.size):
        e = np.zeros_like(PARAMS)
        e[j] = 1e-6
        d = (lik.mean(X, PARAMS + e) - lik.mean(X, PARAMS - e)) / 2e-6
        assert rel(J[:, :, j], d) < 1e-7


@pytest.fixture(scope="module")
def iris():
    df = gc.datasets.load("iris")
    X = np.column_stack([np.ones(len(df)), df.Sepal_Length, df.Sepal_Width])
    codes = pd.Categorical(df.Species).codes.astype(np.intp)
    return X, codes


def test_multinomial_terms_match_statsmodels(iris):
    X, codes = iris
    B = np.array([[1.0, -2.0], [0.5, 1.2], [-1.1, -0.4]])  # (k, K-1)
    lik = MultinomialLikelihood(3)
    b = block(X, codes)
    ref = sm.MNLogit(codes, X)
    assert rel(lik.loglike_obs(b, B), ref.loglikeobs(B).sum(axis=1)) < TOL  # one-hot rows
    # statsmodels' score_obs is equation-major too: [level 1 terms, level 2 terms]
    assert rel(lik.score_obs(b, B), ref.score_obs(B.T.ravel())) < TOL
    assert rel(lik.score_obs(b, B.T.ravel()), lik.score_obs(b, B)) == 0
    H = np.einsum("rjl,ra,rb->jalb", lik.weights(b, B), X, X).reshape(6, 6)
    assert rel(H, -ref.hessian(B.T.ravel())) < TOL
    assert rel(lik.mean(X, B), ref.predict(B)) < TOL


def test_multinomial_score_and_jacobian_by_differences(iris):
    X, codes = iris
    lik = MultinomialLikelihood(3)
    f = np.linspace(1, 2, len(codes))
    off = np.linspace(-0.5, 0.5, len(codes))
    b = block(X, codes, f, off)
    flat = np.array([1.0, 0.5, -1.1, -2.0, 1.2, -0.4])
    g = num_grad(lambda p: lik.loglike_obs(b, p).sum(), flat)
    assert rel(lik.score_obs(b, flat).sum(axis=0), g) < 1e-7
    J = lik.mean_jacobian(X, flat, off)
    assert J.shape == (X.shape[0], 3, 6)
    for j in range(flat.size):
        e = np.zeros_like(flat)
        e[j] = 1e-6
        d = (lik.mean(X, flat + e, off) - lik.mean(X, flat - e, off)) / 2e-6
        assert rel(J[:, :, j], d) < 1e-7
    # the second-order term: d (J delta) / d eta by differences
    eta = lik.linear_predictor(X, flat, off)
    delta = np.column_stack([np.linspace(-1, 1, len(codes)), np.ones(len(codes))])
    Hd = lik.mean_eta_hess_dot(eta, delta)
    for j in range(2):
        e = np.zeros_like(eta)
        e[:, j] = 1e-6
        Jd = (np.einsum("rmj,rj->rm", lik.mean_eta_jacobian(eta + e), delta)
              - np.einsum("rmj,rj->rm", lik.mean_eta_jacobian(eta - e), delta)) / 2e-6
        assert rel(Hd[:, :, j], Jd) < 1e-7


def test_encode_and_errors():
    lik = MultinomialLikelihood(3, levels=["a", "b", "c"])
    assert lik.encode(np.array(["c", "a"], dtype=object)).tolist() == [2, 0]
    with pytest.raises(ValueError, match="'z' is not one of the levels"):
        lik.encode(np.array(["z"], dtype=object))
    with pytest.raises(ValueError, match=r"integers 0\.\.2"):
        MultinomialLikelihood(3).encode(np.array([0, 3]))
    with pytest.raises(ValueError, match="at least 2"):
        MultinomialLikelihood(1)
    with pytest.raises(ValueError, match=r"params must have shape \(6,\)"):
        MultinomialLikelihood(3).coef_matrix(np.zeros(5), 3)
    with pytest.raises(ValueError, match="response"):
        GLMLikelihood(F.Poisson()).encode([-1.0])
    with pytest.raises(TypeError, match="glmclass family"):
        GLMLikelihood("binomial")


def test_likelihood_of_models(birthwt, iris):
    _, _, df = birthwt
    logit = gc.Logit.from_formula("low ~ age + C(race)", df)
    lik = likelihood_of(logit)
    assert isinstance(lik, GLMLikelihood) and lik.family == logit.family
    assert lik.n_equations == 1 and lik.n_extra == 0
    mn = gc.MNLogit.from_formula("Species ~ Sepal_Length", gc.datasets.load("iris"))
    lik = likelihood_of(mn)
    assert isinstance(lik, MultinomialLikelihood) and lik.n_equations == 2
    assert isinstance(lik, Likelihood)
    with pytest.raises(TypeError, match="has no likelihood"):
        likelihood_of(object())


@pytest.mark.parametrize("family", [F.Binomial(), F.Binomial(L.Probit()), F.Poisson(),
                                    F.Gaussian()], ids=lambda f: f"{f.name}-{f.link.name}")
@pytest.mark.parametrize("how", ["freq", "var", None])
def test_null_partials_without_offset_match_rowwise(family, how):
    """Without an offset (a broadcast view of 0) the null model's eta is one number, and the
    link's logs are taken once; the sums equal those over an explicit per-row eta."""
    from glmclass.likelihoods.glm import NullPartials

    rng = np.random.default_rng(3)
    n = 500
    y = (rng.random(n) < 0.3).astype(float) if family.name == "Binomial" else (
        rng.poisson(2.0, n).astype(float) if family.name == "Poisson" else rng.normal(size=n))
    w = rng.uniform(0.5, 2.0, n)
    X = np.ones((n, 1))
    c = 0.3 if family.name != "Gaussian" else 0.1
    null = NullPartials(family, c, how)
    shared = null(Block(X, y, w, np.broadcast_to(0.0, (n,)), 0))
    rowwise = null(Block(X, y, w, np.zeros(n), 0))
    np.testing.assert_allclose(shared, rowwise, rtol=1e-13, equal_nan=True)
    assert null(Block(X[:0], y[:0], w[:0], np.broadcast_to(0.0, (0,)), 0))[0] == 0.0
