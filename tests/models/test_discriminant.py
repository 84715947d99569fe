"""LDA and QDA against R's MASS (committed JSON), scikit-learn and hand computations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.covariance import ledoit_wolf_shrinkage
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.numerics import discriminant as nd
from glmclass.rows.blocks import ArrayBlocks

REF = Path(__file__).resolve().parents[1] / "reference"
RTOL = 1e-6
CASES = json.loads((REF / "discrim.json").read_text())["cases"]


def read(name: str) -> pd.DataFrame:
    df = pd.read_csv(REF / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])
    if name == "crabs":
        df["sp_sex"] = df["sp"] + "_" + df["sex"]
    return df


IRIS = read("iris")
CRABS = read("crabs")
IRIS_F = "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width"


def close(got, ref, rtol: float = RTOL, atol: float = 0.0) -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(ref, dtype=float),
                               rtol=rtol, atol=atol)


def signs(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Column signs aligning ``got`` with ``ref`` (directions are defined up to sign)."""
    return np.where(np.sum(got * ref, axis=0) < 0, -1.0, 1.0)


@pytest.fixture(scope="module", params=CASES, ids=[c["name"] for c in CASES])
def case(request):
    c = request.param
    df = IRIS if c["dataset"] == "iris" else CRABS
    formula = f"{c['response']} ~ {' + '.join(c['features'])}"
    cls = gc.LDA if c["kind"] == "lda" else gc.QDA
    model = cls.from_formula(formula, df, prior=c.get("prior_given"))
    res = model.fit(cov="unbiased" if c["method"] == "moment" else "mle", cv=True)
    return c, res


def test_r_moments(case):
    c, res = case
    assert res.levels == c["levels"]
    assert list(res.means.columns) == c["features"]
    close(res.counts, c["counts"], 0)
    close(res.priors, c["prior"], 1e-12)
    close(res.means, c["means"], 1e-12)
    assert res.nobs == c["N"]


def test_r_posteriors(case):
    c, res = case
    post = res.predict()
    close(post.iloc[:10], c["posterior_head10"], RTOL, 1e-13)
    close(post.sum(), c["posterior_colsum"], RTOL)
    assert list(res.predict(which="class")) == c["class"]


def test_r_leave_one_out(case):
    c, res = case
    close(res.cv_posterior.iloc[:10], c["cv_posterior_head10"], RTOL, 1e-13)
    close(res.cv_posterior.sum(), c["cv_posterior_colsum"], RTOL)
    assert list(res.cv_class) == c["cv_class"]
    assert res.cv_error == pytest.approx(np.mean(np.array(c["cv_class"]) != res.model.data.endog))


def test_r_scaling(case):
    c, res = case
    if c["kind"] == "lda":
        ref = np.array(c["scaling"])
        got = res.scalings.to_numpy()
        sg = signs(got, ref)
        close(got * sg, ref)
        close(res.svd, c["svd"])
        assert list(res.scalings.columns) == c["scaling_colnames"]
        close(res.transform().iloc[:10].to_numpy() * sg, c["x_head10"], RTOL, 1e-12)
    else:
        close(res.log_det, c["ldet"])
        for lev, ref in zip(c["levels"], c["scaling"], strict=True):
            got = res.scalings[lev].to_numpy()
            ref = np.array(ref)
            close(got * signs(got, ref), ref, RTOL, 1e-12)


# --- scikit-learn and hand-derived values --------------------------------------------------------
X_IRIS = IRIS.iloc[:, :4].to_numpy()
Y_IRIS = IRIS["Species"].to_numpy()


@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
def test_lda_sklearn(solver):
    # every sklearn solver uses the ML pooled covariance (divisor N) in scikit-learn 1.9
    res = gc.LDA(IRIS["Species"], IRIS.iloc[:, :4]).fit(cov="mle")
    sk = LinearDiscriminantAnalysis(solver=solver).fit(X_IRIS, Y_IRIS)
    close(res.predict(), sk.predict_proba(X_IRIS), 1e-8, 1e-14)
    if solver != "svd":  # sklearn's coef_ and intercept_ are Sigma^-1 mu_k and delta_k(0)
        close(res.coef.T, sk.coef_, 1e-10)
        close(res.intercept, sk.intercept_, 1e-10)


def test_lda_shrinkage_sklearn():
    # sklearn shrinks per class towards tr/D I and pools with the priors: linear in the
    # covariance, so equal to shrinking the pooled ML covariance
    res = gc.LDA(IRIS["Species"], IRIS.iloc[:, :4]).fit(shrinkage=0.3)
    sk = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.3).fit(X_IRIS, Y_IRIS)
    close(res.predict(), sk.predict_proba(X_IRIS), 1e-8, 1e-14)
    assert res.shrinkage == 0.3


def test_ledoit_wolf_intensity():
    res = gc.LDA(IRIS["Species"], IRIS.iloc[:, :4]).fit(shrinkage="ledoit-wolf")
    resid = X_IRIS - res.means.to_numpy()[res.model.endog]
    lam = ledoit_wolf_shrinkage(resid, assume_centered=True)
    assert 0 < res.shrinkage < 1
    assert res.shrinkage == pytest.approx(lam, rel=1e-10)
    s = resid.T @ resid / 150
    close(res.covariance, (1 - lam) * s + lam * np.trace(s) / 4 * np.eye(4), 1e-10)


def test_qda_sklearn():
    # scikit-learn 1.9 divides the class scatter by N_k (cov="mle")
    res = gc.QDA(IRIS["Species"], IRIS.iloc[:, :4]).fit(cov="mle")
    sk = QuadraticDiscriminantAnalysis().fit(X_IRIS, Y_IRIS)
    close(res.predict(), sk.predict_proba(X_IRIS), 1e-8, 1e-14)
    # sklearn's per-class shrinkage toward tr(S_k)/D I is reg_gamma
    res = gc.QDA(IRIS["Species"], IRIS.iloc[:, :4]).fit(reg_gamma=0.25)
    sk = QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=0.25).fit(X_IRIS, Y_IRIS)
    close(res.predict(), sk.predict_proba(X_IRIS), 1e-8, 1e-14)


def _joint(X, y, means, covs, prior):
    lj = np.column_stack([np.log(prior[k]) + stats.multivariate_normal(means[k], covs[k]).logpdf(X)
                          for k in range(len(prior))])
    post = lj - np.logaddexp.reduce(lj, axis=1, keepdims=True)
    r = np.arange(len(y))
    return lj[r, y].sum(), post[r, y].sum(), lj


@pytest.mark.parametrize("cov", ["mle", "unbiased"])
def test_llf_by_hand(cov):
    y = pd.Categorical(Y_IRIS).codes
    n = 150
    res = gc.LDA(Y_IRIS, X_IRIS).fit(cov=cov)
    means = np.array([X_IRIS[y == k].mean(0) for k in range(3)])
    r = X_IRIS - means[y]
    s = r.T @ r / (n - 3 if cov == "unbiased" else n)
    llf, llc, lj = _joint(X_IRIS, y, means, [s] * 3, np.full(3, 1 / 3))
    assert res.llf == pytest.approx(llf, rel=1e-12)
    assert res.llf_conditional == pytest.approx(llc, rel=1e-10)
    close(res.predict(which="log_joint"), lj, 1e-12)
    k = 2 + 12 + 10
    assert res.k_params == k and res.df_model == k
    assert res.aic == pytest.approx(-2 * llf + 2 * k)
    assert res.bic == pytest.approx(-2 * llf + k * np.log(n))
    q = gc.QDA(Y_IRIS, X_IRIS).fit(cov=cov)
    covs = [np.cov(X_IRIS[y == k].T, ddof=1 if cov == "unbiased" else 0) for k in range(3)]
    llf, llc, _ = _joint(X_IRIS, y, means, covs, np.full(3, 1 / 3))
    assert q.llf == pytest.approx(llf, rel=1e-12)
    assert q.llf_conditional == pytest.approx(llc, rel=1e-10)
    assert q.k_params == 2 + 12 + 30


def test_discriminant_functions_and_logistic_form():
    df = CRABS
    res = gcf.lda("sp ~ FL + RW + CL + CW + BD", df).fit()
    X = df[["FL", "RW", "CL", "CW", "BD"]].to_numpy()
    delta = X @ res.coef.to_numpy() + res.intercept.to_numpy()
    close(res.predict(which="log_prob"), delta - np.logaddexp.reduce(delta, axis=1)[:, None],
          1e-9, 1e-12)
    w = res.logistic_params
    assert list(w.index) == ["Intercept", "FL", "RW", "CL", "CW", "BD"]
    sigma = res.covariance.to_numpy()
    mu = res.means.to_numpy()
    close(w.iloc[1:], np.linalg.solve(sigma, mu[1] - mu[0]), 1e-10)
    p = 1 / (1 + np.exp(-(w.iloc[0] + X @ w.iloc[1:].to_numpy())))
    close(res.predict()["O"], p, 1e-9)
    with pytest.raises(ValueError, match="two classes"):
        _ = gc.LDA(Y_IRIS, X_IRIS).fit().logistic_params


def test_scalings_whiten_within_class():
    res = gc.LDA(Y_IRIS, X_IRIS).fit(cov="unbiased")
    a = res.scalings.to_numpy()
    close(a.T @ res.covariance.to_numpy() @ a, np.eye(2), 1e-10, 1e-12)
    assert res.svd.iloc[0] > res.svd.iloc[1]
    z = res.transform()
    close(z.to_numpy(), (X_IRIS - res.priors.to_numpy() @ res.means.to_numpy()) @ a, 1e-12)


def test_reduced_rank():
    res = gc.LDA(Y_IRIS, X_IRIS).fit()
    full = res.predict(n_components=2)
    close(full, res.predict(), 1e-9, 1e-14)
    one = res.predict(n_components=1)
    z = res.transform(n_components=1).to_numpy()[:, 0]
    zm = (res.means.to_numpy() - res.priors.to_numpy() @ res.means.to_numpy()) @ \
        res.scalings.to_numpy()[:, 0]
    lj = -0.5 * (z[:, None] - zm) ** 2 + np.log(1 / 3)
    close(one, np.exp(lj - np.logaddexp.reduce(lj, axis=1)[:, None]), 1e-9, 1e-14)
    assert res.predict(n_components=1, which="class").iloc[0] == "setosa"
    with pytest.raises(ValueError, match="n_components must be between 1 and 2"):
        res.predict(n_components=3)


def test_newdata_and_formula_features():
    df = CRABS.assign(big=(CRABS["CL"] > 30).map({True: "yes", False: "no"}))
    model = gcf.lda("sp ~ FL + RW + C(big)", df)
    assert sorted(model.exog_names) == ["C(big)[T.yes]", "FL", "RW"]  # no Intercept
    res = model.fit()
    new = df.iloc[[3, 150]]
    close(res.predict(new), res.predict().iloc[[3, 150]])
    assert list(res.predict(new, which="class").index) == list(new.index)
    arr = gc.QDA(df["sp"], df[["FL", "RW"]]).fit()
    close(arr.predict(df[["FL", "RW"]].iloc[:5]), arr.predict().iloc[:5])
    with_na = df.iloc[:3].copy()
    with_na.loc[with_na.index[1], "FL"] = np.nan
    cls = res.predict(with_na, which="class")
    assert pd.isna(cls.iloc[1]) and cls.iloc[0] == "B"


def test_prior_and_labels():
    y = pd.Categorical(Y_IRIS, categories=["virginica", "setosa", "versicolor"])
    res = gc.LDA(y, X_IRIS, prior={"setosa": 0.5, "versicolor": 0.3, "virginica": 0.2}).fit()
    assert list(res.priors.index) == ["virginica", "setosa", "versicolor"]
    close(res.priors, [0.2, 0.5, 0.3])
    assert res.k_params == 12 + 10  # given priors are not estimated
    ref = gc.LDA(Y_IRIS, X_IRIS, prior=[0.5, 0.3, 0.2]).fit()
    close(res.predict()[["setosa", "versicolor", "virginica"]], ref.predict(), 1e-12)
    with pytest.raises(ValueError, match="'versicolor'"):
        gc.LDA(Y_IRIS, X_IRIS, prior={"setosa": 0.5, "virginica": 0.5})
    with pytest.raises(ValueError, match="sums to"):
        gc.LDA(Y_IRIS, X_IRIS, prior=[0.5, 0.3, 0.3])
    with pytest.raises(ValueError, match="3 classes"):
        gc.LDA(Y_IRIS, X_IRIS, prior=[0.5, 0.5])


def test_errors_name_the_culprit():
    X = pd.DataFrame(X_IRIS, columns=["a", "b", "c", "d"]).assign(e=lambda d: d.a + 2 * d.b)
    with pytest.raises(ValueError, match=r"'e' is a linear combination.*shrinkage"):
        gc.LDA(Y_IRIS, X).fit()
    assert np.isfinite(gc.LDA(Y_IRIS, X).fit(shrinkage=0.1).llf)
    with pytest.raises(ValueError, match=r"class 'setosa'.*'e'.*reg_lambda"):
        gc.QDA(Y_IRIS, X).fit()
    const = pd.DataFrame(X_IRIS[:, :2], columns=["a", "b"]).assign(const=1.0)
    with pytest.raises(ValueError, match="'const' is constant"):
        gc.LDA(Y_IRIS, const).fit()
    small = slice(0, 104)  # virginica keeps 4 rows: N_k <= D
    with pytest.raises(ValueError, match=r"class 'virginica' has 4 observations.*N_k > D = 4"):
        gc.QDA(Y_IRIS[small], X_IRIS[small]).fit()
    assert np.isfinite(gc.QDA(Y_IRIS[small], X_IRIS[small]).fit(reg_lambda=0.5).llf)
    with pytest.raises(ValueError, match="cov must be"):
        gc.LDA(Y_IRIS, X_IRIS).fit(cov="moment")
    with pytest.raises(ValueError, match="shrinkage must be in"):
        gc.LDA(Y_IRIS, X_IRIS).fit(shrinkage=1.5)
    with pytest.raises(ValueError, match="cv=True"):
        gc.QDA(Y_IRIS, X_IRIS).fit(reg_lambda=0.1, cv=True)
    with pytest.raises(ValueError, match="fit\\(cv=True\\)"):
        _ = gc.LDA(Y_IRIS, X_IRIS).fit().cv_error
    with pytest.raises(ValueError, match="single class"):
        gc.LDA(np.zeros(5), np.arange(5.0))


def test_rda_by_hand():
    y = pd.Categorical(Y_IRIS).codes
    lam, gam = 0.3, 0.2
    res = gc.QDA(Y_IRIS, X_IRIS).fit(reg_lambda=lam, reg_gamma=gam)
    means = np.array([X_IRIS[y == k].mean(0) for k in range(3)])
    r = X_IRIS - means[y]
    pooled = r.T @ r / 150
    covs = []
    for k in range(3):
        s = (1 - lam) * np.cov(X_IRIS[y == k].T, ddof=0) + lam * pooled
        covs.append((1 - gam) * s + gam * np.trace(s) / 4 * np.eye(4))
        close(res.covariance[res.levels[k]], covs[-1], 1e-10)
    llf, _, lj = _joint(X_IRIS, y, means, covs, np.full(3, 1 / 3))
    assert res.llf == pytest.approx(llf, rel=1e-12)
    lda = gc.LDA(Y_IRIS, X_IRIS).fit()
    close(gc.QDA(Y_IRIS, X_IRIS).fit(reg_lambda=1.0).predict(), lda.predict(), 1e-9, 1e-14)


def test_loo_equals_refits():
    # brute force on a small subsample, both estimators, against the rank-one downdates
    rows = np.r_[0:12, 50:62, 100:112]
    X, y = X_IRIS[rows], Y_IRIS[rows]
    for cls in (gc.LDA, gc.QDA):
        for cov in ("mle", "unbiased"):
            res = cls(y, X).fit(cov=cov, cv=True)
            prior = res.priors.to_numpy()
            brute = []
            for i in range(len(y)):
                keep = np.arange(len(y)) != i
                fit = cls(y[keep], X[keep], prior=prior).fit(cov=cov)
                brute.append(fit.predict(X[i:i + 1]).to_numpy()[0])
            close(res.cv_posterior, np.array(brute), 1e-9, 1e-13)


def test_blocked_moments_match_numpy():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1000, 3)) * [1.0, 10.0, 0.1] + 1e6
    codes = rng.integers(0, 4, size=1000)
    m = nd.class_moments(ArrayBlocks(X, codes, rows=97), 4)
    for k in range(4):
        xk = X[codes == k]
        assert m.counts[k] == len(xk)
        close(m.means[k], xk.mean(0), 1e-14)
        ref = (xk - xk.mean(0)).T @ (xk - xk.mean(0))
        close(m.scatter[k], ref, 1e-9, 1e-12 * np.abs(ref).max())


def test_summary_and_tables():
    res = gc.LDA(Y_IRIS, X_IRIS).fit(cv=True)
    text = str(res.summary())
    for word in ("Linear Discriminant Analysis", "Prior probabilities", "Group means",
                 "LD1", "Log-Likelihood (joint)", "Leave-one-out error", "delta_k"):
        assert word in text
    assert "<table>" in res.summary().as_html()
    tab = res.pred_table()
    assert tab.to_numpy().sum() == 150
    assert np.trace(tab.to_numpy()) == 150 * (1 - res.error_rate)
    assert res.cv_pred_table().to_numpy().sum() == 150
    qtext = str(gc.QDA(Y_IRIS, X_IRIS).fit().summary())
    assert "Quadratic Discriminant Analysis" in qtext and "log_det" in qtext
    assert res.likelihood_kind == "joint"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_affine_invariance(seed):
    # posteriors of LDA/QDA do not depend on the units or origin of the features; the joint
    # log-likelihood changes by -N ln|det A| (the Jacobian)
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(4, 4)) + 3 * np.eye(4)
    b = rng.normal(size=4) * 1e4
    Xt = X_IRIS @ a.T + b
    jac = 150 * np.log(abs(np.linalg.det(a)))
    for cls in (gc.LDA, gc.QDA):
        base = cls(Y_IRIS, X_IRIS).fit(cov="unbiased", cv=True)
        moved = cls(Y_IRIS, Xt).fit(cov="unbiased", cv=True)
        close(moved.predict(), base.predict(), 1e-7, 1e-12)
        close(moved.cv_posterior, base.cv_posterior, 1e-7, 1e-12)
        assert moved.llf == pytest.approx(base.llf - jac, rel=1e-9)
        assert moved.llf_conditional == pytest.approx(base.llf_conditional, rel=1e-7)
