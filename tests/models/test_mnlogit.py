"""MNLogit against R's nnet::multinom (committed JSON), statsmodels' MNLogit and our Logit."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import assume, given
from hypothesis import strategies as st

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.models.mnlogit import MNLogit
from glmclass.results.mnlogit import MNLogitResults

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "multinom.json").read_text())["cases"]


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def case_data(case: dict) -> pd.DataFrame:
    df = load(case["dataset"])
    if case["levels"] != sorted(case["levels"]):  # R's own order (housing Low < Medium < High)
        df[case["response"]] = pd.Categorical(df[case["response"]], categories=case["levels"])
    return df


def fit_case(case: dict) -> MNLogitResults:
    df = case_data(case)
    w = df[case["weights"]] if case["weights"] else None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of the reference fits may warn
        return gcf.mnlogit(f"{case['response']} ~ {case['patsy_rhs']}", df,
                           freq_weights=w).fit()


IRIS = load("iris")
SURVEY = load("survey")


# --- R: nnet::multinom -----------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_agrees_with_r_multinom(case):
    res = fit_case(case)
    assert res.converged
    assert res.ref == case["reference_level"]
    assert list(res.params.columns) == case["levels"][1:]
    names = case["patsy_coef_names"]
    params = res.params.loc[names].to_numpy().T  # R: one row per non-reference level
    assert rel(params, case["coef"]) < 1e-6
    assert rel(res.bse.loc[names].to_numpy().T, case["se"]) < 1e-5
    assert rel(res.llf, case["loglik"]) < 1e-6
    assert rel(res.deviance, case["deviance"]) < 1e-6
    assert rel(res.aic, case["aic"]) < 1e-6
    bic = -2 * case["loglik"] + case["edf"] * np.log(case["sum_weights"])
    assert rel(res.bic, bic) < 1e-6
    assert res.k_params == case["edf"] == case["loglik_df"]
    assert res.nobs == case["sum_weights"]
    assert res.model.data.n_dropped == case["n_rows_data"] - case["n_complete"]
    # vcov: R's names "level:coef", level outer, the order of our (level, term) MultiIndex
    order = [(lv, names[case["coef_names"].index(c)])
             for lv, c in (v.split(":", 1) for v in case["vcov_names"])]
    cov = res.cov_params().loc[order, order].to_numpy()
    assert np.max(np.abs(cov - np.array(case["vcov"]))) < 1e-5 * np.max(np.abs(case["vcov"]))
    prob = res.predict()[case["levels"]]
    np.testing.assert_allclose(prob.to_numpy()[:5], case["fitted_head5"], rtol=1e-6)
    np.testing.assert_allclose((prob.to_numpy() * res.model.freq_weights[:, None]).sum(0)
                               if case["weights"] is None else prob.to_numpy().sum(0),
                               case["fitted_colsum"], rtol=1e-6)
    new = case_data(case).loc[res.model.data.index[:5]]
    np.testing.assert_allclose(res.predict(new)[case["levels"]].to_numpy(),
                               case["predict_probs_head5"], rtol=1e-6)
    assert res.predict(which="class").astype(str).tolist() == case["predict_class"]


# --- statsmodels -----------------------------------------------------------------------------

def sm_fit(res: MNLogitResults):
    m = res.model
    return sm.MNLogit(m.codes, m.exog).fit(method="newton", tol=1e-13, maxiter=100, disp=0)


@pytest.mark.parametrize("formula", ["Smoke ~ Sex + Age + Pulse", "Exer ~ Sex + Age + Height",
                                     "Clap ~ W_Hnd + NW_Hnd"])
def test_agrees_with_statsmodels(formula):
    res = gcf.mnlogit(formula, SURVEY).fit()
    ref = sm_fit(res)
    assert rel(res.params.to_numpy(), ref.params) < 1e-6
    assert rel(res.bse.to_numpy(), ref.bse) < 1e-5
    for name in ("llf", "llnull", "aic", "bic", "prsquared", "llr", "llr_pvalue", "df_model",
                 "df_resid"):
        assert rel(getattr(res, name), getattr(ref, name)) < 1e-6, name
    assert rel(res.pvalues.to_numpy(), ref.pvalues) < 1e-5
    assert rel(res.predict().to_numpy(), ref.predict()) < 1e-6
    np.testing.assert_allclose(res.cov_params().to_numpy(), ref.cov_params(), rtol=1e-5,
                               atol=1e-12)


def test_agrees_with_scikit_learn_unpenalised_softmax():
    from sklearn.linear_model import LogisticRegression

    res = gcf.mnlogit("Smoke ~ Sex + Age + Pulse", SURVEY).fit()
    X, y = res.model.exog[:, 1:], res.model.codes
    sk = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    sk.fit(X, y)
    assert rel(res.predict().to_numpy(), sk.predict_proba(X)) < 1e-6
    coef = np.column_stack([sk.intercept_, sk.coef_]).T  # symmetric form: one column per level
    assert rel(res.params.to_numpy(), coef[:, 1:] - coef[:, [0]]) < 1e-6


def test_housing_frequency_weights_match_statsmodels_on_expanded_rows():
    df = load("housing")
    res = gcf.mnlogit("Sat ~ Infl + Type + Cont", df, freq_weights=df["Freq"]).fit()
    long = df.loc[df.index.repeat(df["Freq"])].reset_index(drop=True)
    ref = sm.MNLogit(pd.Categorical(long["Sat"]).codes,
                     res.model.data.spec.exog(long)).fit(method="newton", tol=1e-13, disp=0)
    assert rel(res.params.to_numpy(), ref.params) < 1e-6
    assert rel(res.bse.to_numpy(), ref.bse) < 1e-5
    for name in ("llf", "llnull", "aic", "bic", "df_resid"):
        assert rel(getattr(res, name), getattr(ref, name)) < 1e-6, name


# --- identities --------------------------------------------------------------------------------

def test_two_classes_reproduce_logit_exactly():
    df = load("spector")
    mn = gcf.mnlogit("GRADE ~ GPA + TUCE + PSI", df).fit()
    lo = gcf.logit("GRADE ~ GPA + TUCE + PSI", df).fit()
    assert mn.levels == [0, 1] and list(mn.params.columns) == [1]
    np.testing.assert_allclose(mn.params[1], lo.params, rtol=1e-9)
    np.testing.assert_allclose(mn.bse[1], lo.bse, rtol=1e-9)
    np.testing.assert_allclose(mn.pvalues[1], lo.pvalues, rtol=1e-8)
    for name in ("llf", "llnull", "aic", "bic", "deviance", "null_deviance", "df_model",
                 "df_resid", "nobs", "k_params", "prsquared"):
        np.testing.assert_allclose(getattr(mn, name), getattr(lo, name), rtol=1e-10,
                                   err_msg=name)
    np.testing.assert_allclose(mn.predict()[1], lo.predict(), rtol=1e-9)
    np.testing.assert_allclose(mn.conf_int().loc[1].to_numpy(), lo.conf_int().to_numpy(),
                               rtol=1e-9)
    table = gc.compare([lo, mn], names=["logit", "mnlogit"])
    np.testing.assert_allclose(table.loc["logit", "bic"], table.loc["mnlogit", "bic"])


def random_data(n=240, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    eta = np.column_stack([np.zeros(n), 0.5 + x @ [1.0, -0.5], -0.3 + x @ [-0.7, 0.8]])
    p = np.exp(eta - eta.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = np.array(["lo", "mid", "hi"])[[rng.choice(3, p=r) for r in p]]
    return pd.DataFrame({"y": y, "x1": x[:, 0], "x2": x[:, 1]})


def test_frequency_weights_equal_duplicated_rows():
    df = random_data()
    w = np.random.default_rng(1).integers(0, 4, size=len(df))
    weighted = gcf.mnlogit("y ~ x1 + x2", df, freq_weights=w).fit()
    dup = gcf.mnlogit("y ~ x1 + x2", df.loc[df.index.repeat(w)]).fit()
    np.testing.assert_allclose(weighted.params, dup.params, rtol=1e-9)
    np.testing.assert_allclose(weighted.bse, dup.bse, rtol=1e-9)
    for name in ("llf", "llnull", "aic", "bic", "nobs", "df_resid", "df_model"):
        np.testing.assert_allclose(getattr(weighted, name), getattr(dup, name), rtol=1e-10)
    assert weighted.nobs == w.sum()
    np.testing.assert_allclose(weighted.pred_table(), dup.pred_table())


def test_reference_level_is_a_reparametrisation():
    base = gcf.mnlogit("Species ~ Sepal_Length", IRIS).fit()
    other = gcf.mnlogit("Species ~ Sepal_Length", IRIS, ref="virginica").fit()
    assert other.ref == "virginica" and list(other.params.columns) == ["setosa", "versicolor"]
    # beta_j(ref = virginica) = beta_j - beta_virginica, beta_setosa = 0 in the base fit
    np.testing.assert_allclose(other.params["setosa"], -base.params["virginica"], rtol=1e-8)
    np.testing.assert_allclose(other.params["versicolor"],
                               base.params["versicolor"] - base.params["virginica"], rtol=1e-8)
    np.testing.assert_allclose(other.llf, base.llf, rtol=1e-12)
    np.testing.assert_allclose(other.predict(), base.predict(), rtol=1e-8)
    assert list(other.predict().columns) == ["setosa", "versicolor", "virginica"]
    with pytest.raises(ValueError, match="ref='virginia' is not a level of 'Species'"):
        gcf.mnlogit("Species ~ Sepal_Length", IRIS, ref="virginia")


@pytest.mark.parametrize("kind", ["str", "int", "category", "float"])
def test_response_types_keep_their_labels(kind):
    codes = pd.Categorical(IRIS["Species"]).codes
    y = {"str": IRIS["Species"], "int": pd.Series(codes + 1),
         "category": pd.Series(pd.Categorical(IRIS["Species"],
                                              categories=["virginica", "setosa", "versicolor"])),
         "float": pd.Series(codes + 1.0)}[kind]
    res = gc.MNLogit(y, sm.add_constant(IRIS[["Sepal_Length"]])).fit()
    labels = {"str": ["setosa", "versicolor", "virginica"], "int": [1, 2, 3],
              "category": ["virginica", "setosa", "versicolor"], "float": [1, 2, 3]}[kind]
    assert res.levels == labels
    assert list(res.params.columns) == labels[1:]
    assert list(res.predict().columns) == labels
    assert set(res.predict(which="class")) <= set(labels)
    np.testing.assert_allclose(res.llf, -91.03396639482857, rtol=1e-10)


def test_bool_response():
    df = load("spector").assign(passed=lambda d: d["GRADE"] == 1)
    res = gcf.mnlogit("passed ~ GPA", df).fit()
    assert res.levels == [False, True] and list(res.params.columns) == [True]
    assert res.predict(which="class").isin([False, True]).all()


# --- results -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smoke():
    return gcf.mnlogit("Smoke ~ Sex + Age", SURVEY).fit()


def test_labels_and_shapes(smoke):
    levels = ["Never", "Occas", "Regul"]
    terms = ["Intercept", "Sex[T.Male]", "Age"]
    for frame in (smoke.params, smoke.bse, smoke.tvalues, smoke.pvalues):
        assert list(frame.columns) == levels and list(frame.index) == terms
    assert smoke.zvalues is smoke.tvalues
    ci = smoke.conf_int(alpha=0.1)
    assert ci.index.names == ["level", "term"] and list(ci.columns) == ["lower", "upper"]
    assert ci.index.tolist() == [(lv, t) for lv in levels for t in terms]
    np.testing.assert_allclose(ci.loc[("Occas", "Age"), "upper"],
                               smoke.params.loc["Age", "Occas"]
                               + 1.6448536269514722 * smoke.bse.loc["Age", "Occas"])
    cov = smoke.cov_params()
    assert cov.shape == (9, 9) and cov.index.equals(ci.index) and cov.columns.equals(ci.index)
    np.testing.assert_allclose(np.sqrt(cov.loc[("Regul", "Age"), ("Regul", "Age")]),
                               smoke.bse.loc["Age", "Regul"])
    assert smoke.k_params == 9 and smoke.df_model == 6 and smoke.df_resid == 235 - 9
    with pytest.raises(ValueError, match="alpha"):
        smoke.conf_int(alpha=1.5)


def test_predict_new_data(smoke):
    new = pd.DataFrame({"Sex": ["Male", "Female", "Male"], "Age": [20.0, 45.0, np.nan]},
                       index=["a", "b", "c"])
    prob = smoke.predict(new)
    assert list(prob.columns) == ["Heavy", "Never", "Occas", "Regul"]
    assert list(prob.index) == ["a", "b", "c"]
    np.testing.assert_allclose(prob.iloc[:2].sum(axis=1), 1.0, rtol=1e-14)
    assert prob.iloc[2].isna().all()
    lin = smoke.predict(new, which="linear")
    X = np.array([[1, 1, 20.0], [1, 0, 45.0]])
    np.testing.assert_allclose(lin.iloc[:2].to_numpy(), X @ smoke.params.to_numpy())
    np.testing.assert_allclose(np.log(prob.iloc[:2, 1:].to_numpy()
                                      / prob.iloc[:2, [0]].to_numpy()), lin.iloc[:2], rtol=1e-12)
    cls = smoke.predict(new, which="class")
    assert cls.tolist()[:2] == prob.iloc[:2].idxmax(axis=1).tolist() and pd.isna(cls.iloc[2])
    np.testing.assert_allclose(smoke.predict(new, offset=[1.0, 1.0, 1.0], which="linear")
                               .iloc[:2], lin.iloc[:2] + 1.0)
    with pytest.raises(ValueError, match="which must be"):
        smoke.predict(new, which="response")
    with pytest.raises(ValueError, match="level 'Other'"):
        smoke.predict(pd.DataFrame({"Sex": ["Other"], "Age": [20.0]}))


def test_extreme_linear_predictors_do_not_overflow(smoke):
    new = pd.DataFrame({"Sex": ["Male", "Female"], "Age": [1e6, -1e6]})
    prob = smoke.predict(new).to_numpy()  # RuntimeWarnings are errors in this suite
    assert np.all(np.isfinite(prob)) and np.allclose(prob.sum(axis=1), 1.0)


def test_pred_table(smoke):
    table = smoke.pred_table()
    labels = ["Heavy", "Never", "Occas", "Regul"]
    assert list(table.index) == labels and list(table.columns) == labels
    assert table.index.name == "observed" and table.columns.name == "predicted"
    assert table.to_numpy().sum() == smoke.nobs
    observed = smoke.model.data.endog
    assert table.loc["Never"].sum() == (observed == "Never").sum()
    predicted = smoke.predict(which="class")
    assert table.loc["Never", "Never"] == ((observed == "Never") & (predicted == "Never")).sum()


def test_summary(smoke):
    text = str(smoke.summary())
    for piece in ("MNLogit Regression Results", "Smoke = Never (against Heavy)",
                  "Smoke = Occas (against Heavy)", "Smoke = Regul (against Heavy)",
                  "Log-Likelihood", "LL-Null", "AIC", "BIC", "Reference level", "Converged",
                  "No. Iterations", "Information", "observed", "Rows dropped (missing)",
                  "Sex[T.Male]", "P>|z|"):
        assert piece in text, piece
    assert f"{smoke.llf:.4f}" in text and f"{smoke.params.loc['Age', 'Regul']:.4f}" in text
    html = smoke.summary().as_html()
    assert "Smoke = Occas (against Heavy)" in html and "<table>" in html
    assert "Smoke = Regul" in smoke.summary().as_latex()
    exp = smoke.summary(exp=True)
    assert f"{np.exp(smoke.params.loc['Age', 'Never']):.4f}" in str(exp)
    assert str(smoke.summary()) == str(smoke.summary())  # deterministic


def test_expected_information_is_identical(smoke):
    exp = gcf.mnlogit("Smoke ~ Sex + Age", SURVEY).fit(information="expected")
    assert exp.information == "expected"
    np.testing.assert_array_equal(exp.bse, smoke.bse)
    assert "expected information" in str(exp.summary())
    with pytest.raises(ValueError, match="information must be"):
        smoke.model.fit(information="fisher")
    with pytest.raises(ValueError, match="method must be 'newton'"):
        smoke.model.fit(method="bfgs")


def test_compare_beside_binary_models_on_the_same_rows():
    df = SURVEY.dropna(subset=["W_Hnd", "Exer", "Pulse", "Age"]).reset_index(drop=True)
    lo = gcf.logit("W_Hnd ~ Pulse + Age", df).fit()
    mn = gcf.mnlogit("W_Hnd ~ Pulse", df).fit()
    table = gc.compare([lo, mn])
    assert list(table.columns[:5]) == ["nobs", "df_model", "llf", "aic", "bic"]
    np.testing.assert_allclose(table.loc["W_Hnd ~ Pulse", "llf"], mn.llf)
    assert table.loc["W_Hnd ~ Pulse", "df_model"] == 1
    other = gcf.mnlogit("Exer ~ Pulse", SURVEY).fit()  # different rows after missing values
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([lo, other])


def test_fit_returns_a_new_results_object_and_leaves_the_model_alone(smoke):
    m = smoke.model
    before = dict(vars(m))
    again = m.fit(maxiter=3, tol=1e-3)
    assert again is not smoke and vars(m).keys() == before.keys()
    assert smoke.converged and smoke.n_iter > again.n_iter - 1


def test_nonconvergence_warns():
    with pytest.warns(gc.ConvergenceWarning, match="did not converge"):
        res = gcf.mnlogit("Smoke ~ Sex + Age", SURVEY).fit(maxiter=1)
    assert not res.converged and res.n_iter == 1


# --- data handling -----------------------------------------------------------------------------

def test_arrays_and_formula_give_the_same_fit():
    df = random_data()
    X = sm.add_constant(df[["x1", "x2"]]).rename(columns={"const": "Intercept"})
    a = gc.MNLogit(df["y"], X).fit()
    f = gcf.mnlogit("y ~ x1 + x2", df).fit()
    np.testing.assert_allclose(a.params, f.params, rtol=1e-12)
    assert a.formula is None and f.formula == "y ~ x1 + x2"
    assert list(a.params.columns) == ["lo", "mid"] and a.ref == "hi"
    assert isinstance(gc.MNLogit.from_formula("y ~ x1", df), MNLogit)


def test_missing_values_drop_or_raise():
    df = random_data()
    df.loc[[3, 10], "x1"] = np.nan
    res = gcf.mnlogit("y ~ x1 + x2", df).fit()
    assert res.nobs == len(df) - 2 and res.model.data.n_dropped == 2
    with pytest.raises(ValueError, match="missing values in 'x1'"):
        gcf.mnlogit("y ~ x1 + x2", df, missing="raise")
    with pytest.raises(ValueError, match="missing"):
        gc.MNLogit(df["y"], df[["x1", "x2"]], missing="raise")


def test_bad_input_raises_naming_the_problem():
    df = random_data()
    with pytest.raises(ValueError, match="single class"):
        gc.MNLogit(np.zeros(5), np.ones((5, 1)))
    with pytest.raises(ValueError, match="freq_weights must be finite and non-negative"):
        gcf.mnlogit("y ~ x1", df, freq_weights=-np.ones(len(df)))
    with pytest.raises(ValueError, match="level 'mid' of 'y' has zero total frequency weight"):
        gcf.mnlogit("y ~ x1", df, freq_weights=(df["y"] != "mid").astype(float))
    with pytest.raises(ValueError, match="the design has no columns"):
        gcf.mnlogit("y ~ 0", df)
    with pytest.raises(ValueError, match="infinite"):
        gc.MNLogit(df["y"], df[["x1"]].assign(x1=np.inf))


def test_offset_shifts_the_intercepts():
    df = random_data()
    base = gcf.mnlogit("y ~ x1 + x2", df).fit()
    off = gcf.mnlogit("y ~ x1 + x2", df, offset=np.full(len(df), 0.7)).fit()
    np.testing.assert_allclose(off.params.loc["Intercept"], base.params.loc["Intercept"] - 0.7,
                               rtol=1e-8)
    np.testing.assert_allclose(off.params.iloc[1:], base.params.iloc[1:], rtol=1e-8)
    np.testing.assert_allclose(off.llf, base.llf, rtol=1e-12)
    np.testing.assert_allclose(off.llnull, base.llnull, rtol=1e-12)


def test_rank_deficient_design_gives_nan_coefficients():
    df = random_data().assign(x3=lambda d: 2 * d["x1"])
    full = gcf.mnlogit("y ~ x1 + x2", df).fit()
    with pytest.warns(gc.RankDeficientWarning, match="'x3' is a linear combination"):
        res = gcf.mnlogit("y ~ x1 + x2 + x3", df).fit()
    assert res.aliased == ["x3"] and res.params.loc["x3"].isna().all()
    assert res.k_params == full.k_params and res.df_model == full.df_model
    np.testing.assert_allclose(res.params.drop("x3"), full.params, rtol=1e-10)
    np.testing.assert_allclose(res.bse.drop("x3"), full.bse, rtol=1e-9)
    assert res.cov_params().loc[("lo", "x3")].isna().all()
    np.testing.assert_allclose(res.predict(df), full.predict(df), rtol=1e-10)
    assert "Aliased" in str(res.summary())


def test_no_intercept_model():
    df = random_data()
    res = gcf.mnlogit("y ~ x1 + x2 - 1", df).fit()
    ref = sm_fit(res)
    assert rel(res.params.to_numpy(), ref.params) < 1e-6
    assert res.df_model == 4
    np.testing.assert_allclose(res.llnull, len(df) * np.log(1 / 3), rtol=1e-12)


# --- separation --------------------------------------------------------------------------------

def separated_data():
    rng = np.random.default_rng(0)
    n = 200
    x, z = rng.normal(size=n), rng.normal(size=n)
    y = np.where(x > 1, "c", np.where(z + rng.normal(size=n) > 0, "a", "b"))
    return pd.DataFrame({"y": y, "x": x, "z": z})


def test_separated_level_warns_once_naming_level_and_columns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = gcf.mnlogit("y ~ x + z", separated_data()).fit()
    assert len(caught) == 1 and caught[0].category is gc.SeparationWarning
    msg = str(caught[0].message)
    assert "level 'c'" in msg and "x (+inf)" in msg and "Bayesian" in msg
    assert res.separation is not None and res.separation.levels == ["c"]
    assert "x (+inf)" in res.separation.infinite["c"]
    assert "separation detected" in str(res.summary())


def test_iris_setosa_separation_is_detected():
    with pytest.warns(gc.SeparationWarning, match="level 'setosa' is perfectly separated"):
        gcf.mnlogit("Species ~ Sepal_Length + Sepal_Width", IRIS).fit()


def test_overlapping_levels_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gcf.mnlogit("Species ~ Sepal_Length", IRIS).fit()
    assert not res.separation.separated and res.separation.kind == "none"


def test_large_problems_report_apparent_separation_without_the_lp(monkeypatch):
    import glmclass.numerics.separation as S

    monkeypatch.setattr(S, "MULTINOMIAL", S.SeparationPolicy(always_cells=0, max_cells=0))
    monkeypatch.setattr(S, "detect_separation", None)  # must not be called
    with pytest.warns(gc.SeparationWarning, match="Apparent separation") as rec:
        res = gcf.mnlogit("y ~ x + z", separated_data()).fit()
    assert len(rec) == 1 and "level 'c': " in str(rec[0].message)
    assert res.separation.kind == "apparent" and "x (+inf)" in res.separation.infinite["c"]


def test_extreme_but_finite_fits_are_not_flagged():
    # strong signal, overlapping classes: probabilities near 0/1 occur, the MLE exists
    rng = np.random.default_rng(7)
    x = rng.normal(size=3000)
    eta = np.column_stack([np.zeros(3000), 6 * x, -6 * x + 1])
    p = np.exp(eta - eta.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = (p.cumsum(1) > rng.uniform(size=(3000, 1))).argmax(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gc.MNLogit(y, sm.add_constant(x)).fit()
    assert not res.separation.separated and res.predict().to_numpy().min() < 1e-6


# --- properties on random data -------------------------------------------------------------------

@given(seed=st.integers(0, 2**32 - 1), n=st.integers(15, 60), k=st.integers(2, 4),
       p=st.integers(1, 3))
def test_random_fits_are_at_a_maximum_or_report_separation(seed, n, k, p):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p)) * rng.choice([1e-2, 1, 1e2], p)])
    y = rng.integers(0, k, size=n)
    assume(len(np.unique(y)) == k)
    w = rng.integers(0, 3, size=n).astype(float)
    assume(all(w[y == j].sum() > 0 for j in range(k)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = gc.MNLogit(y, X, freq_weights=w).fit()
    kinds = {c.category for c in caught}
    assert kinds <= {gc.SeparationWarning, gc.ConvergenceWarning, gc.RankDeficientWarning}
    if res.separation is not None or not res.converged or res.aliased:
        return
    # the score vanishes (relative to the scale of each column) and the information is PD
    grad = res._fit.gradient.reshape(k - 1, -1)
    assert np.max(np.abs(grad) / np.abs(X).max(0)) < 1e-6 * max(1.0, res.deviance)
    assert np.all(np.isfinite(res.bse.to_numpy()))
    dup = gc.MNLogit(np.repeat(y, w.astype(int)), np.repeat(X, w.astype(int), axis=0)).fit()
    np.testing.assert_allclose(res.llf, dup.llf, rtol=1e-9)
    np.testing.assert_allclose(res.params, dup.params, rtol=1e-5, atol=1e-7)


def test_the_probability_symptom_is_decided_as_the_probabilities_would_decide_it():
    from glmclass.models.mnlogit import PROB_TRIGGER, _probability_below
    from glmclass.solvers.newton import softmax_parts

    rng = np.random.default_rng(11)
    for k1 in (1, 2, 4, 9):
        for scale in (0.1, 1.0, 3.0, 5.0, 8.0, 20.0):
            eta = rng.normal(scale=scale, size=(50, k1))
            _, prob, p0 = softmax_parts(eta)
            exact = min(prob.min(), p0.min()) < PROB_TRIGGER
            assert _probability_below(eta, PROB_TRIGGER) == exact
        # a row right at the trigger: the bound cannot decide, the probabilities do
        for shift in (-1e-9, 0.0, 1e-9):
            eta = np.zeros((3, k1))
            eta[1, 0] = np.log(PROB_TRIGGER) + np.log1p(k1) + shift
            _, prob, p0 = softmax_parts(eta)
            assert _probability_below(eta, PROB_TRIGGER) == (min(prob.min(), p0.min())
                                                             < PROB_TRIGGER)
    assert not _probability_below(np.zeros((0, 2)), PROB_TRIGGER)
