"""BernoulliNB against hand-derived values and scikit-learn's BernoulliNB."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import xlogy
from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB

import glmclass as gc
import glmclass.formula.api as gcf

# a small hand-checkable data set: 3 classes, 3 binary features
X = np.array([[1, 0, 1], [1, 1, 1], [0, 0, 1], [1, 0, 0],
              [0, 1, 0], [0, 1, 1], [0, 1, 0],
              [1, 1, 0], [0, 0, 0], [1, 0, 1], [0, 0, 0]], dtype=float)
Y = np.array(["a"] * 4 + ["b"] * 3 + ["c"] * 4)


def hand(alpha: float):
    levels = ["a", "b", "c"]
    counts = np.array([4.0, 3.0, 4.0])
    ones = np.array([X[Y == k].sum(0) for k in levels])
    theta = (ones + alpha) / (counts[:, None] + 2 * alpha)
    prior = counts / counts.sum()
    # elementwise x ln theta + (1 - x) ln(1 - theta) with 0 ln 0 = 0
    terms = xlogy(X[:, None, :], theta) + xlogy(1 - X[:, None, :], 1 - theta)
    lj = np.log(prior) + terms.sum(axis=2)
    return theta, prior, lj


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_hand_derived(alpha):
    res = gc.BernoulliNB(Y, X).fit(alpha=alpha)
    theta, prior, lj = hand(alpha)
    np.testing.assert_allclose(res.feature_prob, theta, rtol=1e-14)
    np.testing.assert_allclose(res.priors, prior, rtol=1e-14)
    codes = pd.Categorical(Y).codes
    llf = lj[np.arange(len(Y)), codes].sum()
    assert res.llf == pytest.approx(llf, rel=1e-13)
    post = lj - np.logaddexp.reduce(lj, axis=1, keepdims=True)
    assert res.llf_conditional == pytest.approx(post[np.arange(len(Y)), codes].sum(), rel=1e-12)
    np.testing.assert_allclose(res.predict(which="log_prob"), post, rtol=1e-12)
    k = 2 + 3 * 3
    assert res.k_params == k and res.df_model == k
    assert res.aic == pytest.approx(-2 * llf + 2 * k)
    assert res.bic == pytest.approx(-2 * llf + k * np.log(11))


@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_sklearn(alpha):
    res = gc.BernoulliNB(Y, X).fit(alpha=alpha)
    sk = SkBernoulliNB(alpha=alpha, binarize=None).fit(X, Y)
    np.testing.assert_allclose(res.feature_log_prob, sk.feature_log_prob_, rtol=1e-13)
    np.testing.assert_allclose(res.predict(), sk.predict_proba(X), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.predict(which="log_joint"), sk.predict_joint_log_proba(X),
                               rtol=1e-13)
    new = np.array([[0, 1, 1], [1, 1, 0]], dtype=float)
    assert list(res.predict(new, which="class")) == list(sk.predict(new))
    # given priors are sklearn's class_prior (fit_prior ignored)
    res = gc.BernoulliNB(Y, X, prior=[0.2, 0.3, 0.5]).fit(alpha=alpha)
    sk = SkBernoulliNB(alpha=alpha, binarize=None, class_prior=[0.2, 0.3, 0.5]).fit(X, Y)
    np.testing.assert_allclose(res.predict(), sk.predict_proba(X), rtol=1e-12, atol=1e-15)
    assert res.k_params == 9
    # fit_prior=False: uniform priors
    res = gc.BernoulliNB(Y, X, prior=np.full(3, 1 / 3)).fit(alpha=alpha)
    sk = SkBernoulliNB(alpha=alpha, binarize=None, fit_prior=False).fit(X, Y)
    np.testing.assert_allclose(res.predict(), sk.predict_proba(X), rtol=1e-12, atol=1e-15)


def test_mle_alpha_zero():
    res = gc.BernoulliNB(Y, X).fit(alpha=0)
    theta, prior, lj = hand(0.0)
    assert np.isfinite(res.llf)  # training rows agree with every theta of 0 or 1
    codes = pd.Categorical(Y).codes
    assert res.llf == pytest.approx(lj[np.arange(len(Y)), codes].sum(), rel=1e-13)
    # class b has x1 = 0 always: a new row with x1 = 1 cannot be b
    p = res.predict(np.array([[1.0, 1.0, 1.0]]))
    assert p["b"].iloc[0] == 0.0
    assert p.sum(axis=1).iloc[0] == pytest.approx(1.0)
    assert res.feature_log_prob.loc["b", "x1"] == -np.inf


def test_formula_and_errors():
    df = pd.DataFrame(X, columns=["u", "v", "w"]).assign(y=Y, g=["p", "q"] * 5 + ["p"])
    res = gcf.bernoulli_nb("y ~ u + v + C(g)", df).fit()
    assert "Intercept" not in res.model.exog_names and len(res.model.exog_names) == 3
    np.testing.assert_allclose(res.predict(df.iloc[:4]), res.predict().iloc[:4], rtol=1e-14)
    with pytest.raises(ValueError, match="'v' has the value 2"):
        gc.BernoulliNB(Y, df[["u", "v"]].assign(v=lambda d: d.v * 2))
    with pytest.raises(ValueError, match="alpha must be"):
        gc.BernoulliNB(Y, X).fit(alpha=-1)
    bools = gc.BernoulliNB(Y, X.astype(bool)).fit()
    np.testing.assert_allclose(bools.feature_prob, gc.BernoulliNB(Y, X).fit().feature_prob)


def test_summary():
    res = gc.BernoulliNB(Y, X).fit()
    text = str(res.summary())
    assert "Bernoulli Naive Bayes" in text and "p(x_j = 1 | class)" in text
    assert "Smoothing alpha" in text
    assert res.pred_table().to_numpy().sum() == 11
    assert res.likelihood_kind == "joint"
