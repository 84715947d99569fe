"""GaussianNB against R (direct normal densities, tests/reference/naive_bayes.json) and
scikit-learn's GaussianNB."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "naive_bayes.json").read_text())["cases"]


def data(name):
    return pd.read_csv(REF / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])


def fit_case(case):
    formula = f"{case['response']} ~ {' + '.join(case['features'])}"
    prior = case["prior"] if case["prior_given"] else None
    return gcf.gaussian_nb(formula, data(case["dataset"]), prior=prior).fit(cov=case["method"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_r(case):
    res = fit_case(case)
    assert res.levels == case["levels"]
    assert res.means.columns.tolist() == case["features"]
    np.testing.assert_array_equal(res.counts, case["counts"])
    np.testing.assert_allclose(res.priors, case["prior"], rtol=1e-15)
    np.testing.assert_allclose(res.means, case["means"], rtol=1e-14)
    np.testing.assert_allclose(res.variances, case["variances"], rtol=1e-13)
    assert res.llf == pytest.approx(case["loglik_joint"], rel=1e-13)
    assert res.llf_conditional == pytest.approx(case["loglik_conditional"], rel=1e-11)
    assert res.df_model == case["df"]
    assert res.aic == pytest.approx(case["aic"], rel=1e-13)
    assert res.bic == pytest.approx(case["bic"], rel=1e-13)
    np.testing.assert_allclose(res.predict(which="log_joint").iloc[:10], case["log_joint_head10"],
                               rtol=1e-13)
    post = res.predict(which="prob")
    np.testing.assert_allclose(post.iloc[:10], case["posterior_head10"], rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(post.sum(), case["posterior_colsum"], rtol=1e-12)
    assert res.predict(which="class").tolist() == case["class"]


def test_matches_scikit_learn():
    sk = pytest.importorskip("sklearn.naive_bayes")
    iris = gc.datasets.load("iris")
    X, y = iris.iloc[:, :4], iris["Species"]
    f = "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width"
    for smoothing in (0.0, 1e-9, 0.01):
        ref = sk.GaussianNB(var_smoothing=smoothing).fit(X, y)
        res = gcf.gaussian_nb(f, iris).fit(var_smoothing=smoothing)
        assert res.epsilon == pytest.approx(ref.epsilon_, rel=1e-14)
        np.testing.assert_allclose(res.means, ref.theta_, rtol=1e-14)
        np.testing.assert_allclose(res.variances, ref.var_, rtol=1e-13)
        np.testing.assert_allclose(res.priors, ref.class_prior_, rtol=1e-15)
        np.testing.assert_allclose(res.predict(X, which="log_joint"),
                                   ref.predict_joint_log_proba(X), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(res.predict(X), ref.predict_proba(X), atol=1e-13)
        assert (res.predict(X, which="class") == ref.predict(X)).all()


def test_array_api_priors_and_df():
    iris = gc.datasets.load("iris")
    X = iris.iloc[:, :2]
    res = gc.GaussianNB(iris["Species"], X, prior={"setosa": 0.5, "versicolor": 0.25,
                                                    "virginica": 0.25}).fit()
    assert res.df_model == 2 * 3 * 2  # the prior is given: not estimated
    assert res.priors["setosa"] == 0.5
    assert isinstance(res.means, pd.DataFrame) and res.means.index.tolist() == res.levels
    est = gc.GaussianNB(iris["Species"], X).fit()
    assert est.df_model == 2 + 2 * 3 * 2
    # a diagonal QDA: the same joint likelihood when the features are uncorrelated in-class
    assert est.llf <= gcf.qda("Species ~ Sepal_Length + Sepal_Width", iris).fit().llf


def test_streams_in_blocks_like_one_pass(monkeypatch):
    """Moments merged over row blocks equal a single pass (Chan-Golub-LeVeque)."""
    import glmclass.rows.blocks as blocks

    iris = gc.datasets.load("iris").sample(frac=1.0, random_state=1)
    f = "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width"
    whole = gcf.gaussian_nb(f, iris).fit()
    monkeypatch.setattr(blocks, "block_rows", lambda n_cols, block_bytes=0: 7)
    monkeypatch.setattr(blocks, "MAX_BLOCK_ROWS", 7)
    parts = gcf.gaussian_nb(f, iris).fit()
    np.testing.assert_allclose(parts.variances, whole.variances, rtol=1e-13)
    np.testing.assert_allclose(parts.means, whole.means, rtol=1e-14)


def test_degenerate_and_bad_arguments():
    iris = gc.datasets.load("iris").assign(const=1.0)
    f = "Species ~ Sepal_Length + const"
    with pytest.raises(ValueError, match="'const' is constant within class 'setosa'.*"
                                         "var_smoothing"):
        gcf.gaussian_nb(f, iris).fit()
    odd = iris.assign(w=np.where(iris.Species == "setosa", 2.0, iris.Sepal_Width))
    with pytest.raises(ValueError, match="'w' is constant within class 'setosa'"):
        gcf.gaussian_nb("Species ~ w", odd).fit()
    assert np.isfinite(gcf.gaussian_nb("Species ~ w", odd).fit(var_smoothing=1e-9).llf)
    with pytest.raises(ValueError, match="var_smoothing"):
        gcf.gaussian_nb(f, iris).fit(var_smoothing=-1)
    with pytest.raises(ValueError, match="var_smoothing"):
        gcf.gaussian_nb(f, iris).fit(var_smoothing="1e-9")
    with pytest.raises(ValueError, match="cov must be"):
        gcf.gaussian_nb(f, iris).fit(cov="ml")
    one = pd.DataFrame({"y": ["a", "a", "b"], "x": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="class 'b' has 1 observation"):
        gcf.gaussian_nb("y ~ x", one).fit(cov="unbiased")


def test_summary_compare_and_missing_rows():
    iris = gc.datasets.load("iris")
    f = "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width"
    nb = gcf.gaussian_nb(f, iris).fit()
    text = str(nb.summary())
    assert "Gaussian Naive Bayes Results" in text and "Group standard deviations" in text
    assert max(map(len, text.splitlines())) <= 100
    # the same features: joint likelihoods of LDA, QDA and GaussianNB are comparable
    table = gc.compare([nb, gcf.lda(f, iris).fit(), gcf.qda(f, iris).fit()])
    assert table.attrs["likelihood"] == "joint" and table.shape[0] == 3
    new = iris.head(3).copy()
    new.loc[1, "Sepal_Width"] = np.nan
    pred = nb.predict(new, which="class")
    assert pd.isna(pred.iloc[1]) and pred.iloc[0] == "setosa"
    assert repr(nb) == "<GaussianNBResults: 3 classes, nobs=150>"
