"""The results-side vocabulary of statsmodels (issue 26 §2): ``summary2()``,
``summary().tables``, ``mle_retvals``, ``resid_dev``, ``resid_generalized``,
``remove_data()``, checked against statsmodels' numbers."""

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import datasets

sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")

F = "GRADE ~ GPA + TUCE + PSI"


@pytest.fixture(scope="module")
def spector():
    return datasets.load("spector")


@pytest.fixture(scope="module")
def iris():
    df = datasets.load("iris")
    return df.assign(code=df.Species.astype("category").cat.codes)


@pytest.mark.parametrize("entry, sm_entry", [(gcf.logit, smf.logit), (gcf.probit, smf.probit)])
def test_summary2_and_tables_equal_statsmodels(spector, entry, sm_entry):
    res = entry(F, spector).fit()
    ref = sm_entry(F, spector).fit(disp=0)
    ours = res.summary2().tables
    theirs = ref.summary2().tables
    assert list(ours[1].columns) == list(theirs[1].columns)
    np.testing.assert_allclose(ours[1].to_numpy(dtype=float), theirs[1].to_numpy(dtype=float),
                               rtol=1e-6)
    assert list(ours[1].index) == list(theirs[1].index)
    head = ours[0]["value"]
    assert head["Dependent Variable"] == "GRADE"
    assert head["No. Observations"] == 32
    assert head["AIC"] == pytest.approx(ref.aic, rel=1e-8)
    assert head["Pseudo R-squared"] == pytest.approx(ref.prsquared, rel=1e-8)
    assert str(res.summary2()).startswith(" " * 10) and "Results: " in str(res.summary2())
    table = res.summary().tables[1]  # statsmodels' summary().tables[1]: the coefficients
    np.testing.assert_allclose(table["coef"], ref.params, rtol=1e-6)
    np.testing.assert_allclose(table["std err"], ref.bse, rtol=1e-6)
    assert res.summary().tables[0].loc["Log-Likelihood", "value"] == pytest.approx(ref.llf)


def test_mnlogit_summary2_one_table_per_level(iris):
    res = gcf.mnlogit("Species ~ Sepal_Length", iris).fit()
    ref = smf.mnlogit("code ~ Sepal_Length", iris).fit(disp=0)
    ours, theirs = res.summary2().tables, ref.summary2().tables
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours[1:], theirs[1:], strict=True):
        np.testing.assert_allclose(a.to_numpy(dtype=float), b.iloc[:, 1:].to_numpy(dtype=float),
                                   rtol=1e-6)
    assert res.mle_retvals["converged"] is True
    assert res.mle_retvals["fopt"] == pytest.approx(ref.mle_retvals["fopt"], rel=1e-8)


def test_mle_retvals(spector):
    res = gcf.logit(F, spector).fit()
    ref = smf.logit(F, spector).fit(disp=0)
    r = res.mle_retvals
    assert r["converged"] is True and r["iterations"] == res.n_iter and r["method"] == "irls"
    assert r["fopt"] == pytest.approx(ref.mle_retvals["fopt"], rel=1e-10)
    with pytest.warns(gc.ConvergenceWarning):
        bad = gcf.logit(F, spector).fit(maxiter=1)
    assert bad.mle_retvals["converged"] is False and bad.mle_retvals["iterations"] == 1


@pytest.mark.parametrize("entry, sm_entry", [(gcf.logit, smf.logit), (gcf.probit, smf.probit)])
def test_resid_generalized_and_dev(spector, entry, sm_entry):
    res = entry(F, spector).fit()
    ref = sm_entry(F, spector).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(res.resid_generalized, ref.resid_generalized, rtol=1e-6,
                               atol=1e-10)
    glm = smf.glm(F, spector, family=sm.families.Binomial(
        sm.families.links.Logit() if entry is gcf.logit else sm.families.links.Probit())).fit(
        tol=1e-13)
    np.testing.assert_allclose(res.resid_dev, glm.resid_deviance, rtol=1e-6)
    pd.testing.assert_series_equal(res.resid_dev, res.resid_deviance)


def test_poisson_resid_generalized(spector):
    df = spector.assign(count=(spector.TUCE // 5).astype(float))
    res = gcf.glm("count ~ GPA + PSI", df, family=gc.families.Poisson()).fit()
    ref = smf.poisson("count ~ GPA + PSI", df).fit(disp=0)
    np.testing.assert_allclose(res.resid_generalized, df["count"] - ref.predict(), rtol=1e-6)
    np.testing.assert_allclose(res.resid_generalized, ref.resid_generalized
                               if hasattr(ref, "resid_generalized") else ref.resid, rtol=1e-6)


def test_remove_data(spector):
    res = gcf.logit(F, spector).fit()
    light = res.remove_data()
    assert light is not res and light.data_removed
    pd.testing.assert_series_equal(light.params, res.params)
    pd.testing.assert_series_equal(light.bse, res.bse)
    assert light.model.data.exog.shape[0] == 0 and res.model.data.exog.shape[0] == 32
    np.testing.assert_allclose(light.predict(spector.head(3)), res.predict(spector.head(3)))
    assert light.wald_test("GPA = 0").pvalue == pytest.approx(res.wald_test("GPA = 0").pvalue)
    assert "Results" in str(light.summary())
    with pytest.raises(ValueError, match="removed"):
        light.fittedvalues  # noqa: B018
    res.fittedvalues  # noqa: B018 - the original keeps its rows
