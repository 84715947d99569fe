"""``gc.lrtest``, ``gc.anova`` and ``wald_test_terms`` against R (``lmtest::lrtest``,
``anova(..., test = "Chisq")``, Wald statistics checked with ``car::linearHypothesis``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from inference_reference import glm_case, glm_model, load, reference, rel_each

import glmclass as gc
import glmclass.formula.api as gcf

RTOL = 1e-9


def anova_case(name: str) -> dict:
    return next(c for c in reference()["anova"] if c["name"] == name)


def fits(case: dict):
    df = load(case["dataset"], complete=case.get("complete_cases"))
    if case["family"] == "multinomial":
        return [gcf.mnlogit(f, df).fit(tol=1e-14) for f in case["patsy_formulas"]]
    fam = {"binomial": gc.families.Binomial(), "gaussian": gc.families.Gaussian()}
    return [gcf.glm(f, df, family=fam[case["family"]]).fit() for f in case["patsy_formulas"]]


def none_to_nan(values):
    return np.array([np.nan if v is None else v for v in values], dtype=float)


@pytest.mark.parametrize("name", ["birthwt_logit", "birthwt_gaussian"])
def test_anova_matches_r(name):
    case = anova_case(name)
    table = gc.anova(*fits(case))
    assert list(table.columns) == ["df_resid", "deviance", "df", "deviance_diff", "pvalue"]
    assert list(table.index) == case["patsy_formulas"]
    for col in table.columns:
        expected = none_to_nan(case["anova"][col])
        np.testing.assert_array_equal(np.isnan(table[col]), np.isnan(expected))
        ok = ~np.isnan(expected)
        assert rel_each(table[col][ok], expected[ok]) < RTOL, col
    # a list works too, and names label the rows
    again = gc.anova(fits(case), names=["a", "b", "c"])
    assert list(again.index) == ["a", "b", "c"]


@pytest.mark.parametrize("name", ["birthwt_logit", "birthwt_gaussian", "survey_exer_mnlogit"])
def test_lrtest_matches_r(name):
    case = anova_case(name)
    models = fits(case)
    pairs = {"lrtest_1_3": (0, 2), "lrtest_2_3": (1, 2), "lrtest_1_2": (0, 1)}
    for key, (i, j) in pairs.items():
        if key not in case:
            continue
        t = gc.lrtest(models[i], models[j])
        expected = case[key]
        assert rel_each([t.statistic, t.df, t.pvalue],
                        [expected["statistic"], expected["df"], expected["pvalue"]]) < RTOL
        assert "chi2 =" in str(t)


def test_different_rows_are_refused_naming_the_models():
    df = load("survey")
    small = gcf.mnlogit("Exer ~ Sex", df).fit()
    big = gcf.mnlogit("Exer ~ Sex + Age + Pulse", df).fit()  # drops the rows without Pulse
    with pytest.raises(ValueError, match=r"lrtest: model 2 was fit to different rows than "
                                         r"model 1 \(191 and 236 observations"):
        gc.lrtest(small, big)
    with pytest.raises(ValueError, match="anova: model 2 was fit to different rows"):
        gc.anova(small, big)
    w = gcf.logit("low ~ age", load("birthwt"), freq_weights=np.full(189, 2.0)).fit()
    with pytest.raises(ValueError, match="different rows"):
        gc.lrtest(gcf.logit("low ~ 1", load("birthwt")).fit(), w)


def test_not_nested_in_parameter_count_is_refused():
    df = load("birthwt")
    a = gcf.logit("low ~ age + lwt", df).fit()
    b = gcf.logit("low ~ age + smoke", df).fit()
    c = gcf.logit("low ~ age + lwt + smoke", df).fit()
    with pytest.raises(ValueError, match=r"lrtest: the restricted model has 3 parameters and "
                                         r"the full model 3; the first must have fewer"):
        gc.lrtest(a, b)
    with pytest.raises(ValueError, match="the restricted model has 4 parameters and the full "
                                         "model 3"):
        gc.lrtest(c, a)
    with pytest.raises(ValueError, match=r"anova: model 2 has 3 parameters and model 1 has 4; "
                                         "list the models from the smallest to the largest"):
        gc.anova(c, a)
    with pytest.raises(ValueError, match="anova needs one fitted GLM .* or two or more"):
        gc.anova()  # one fit gives its sequential table (tests/results/test_anova_one.py)


def test_other_refusals():
    df = load("birthwt")
    a = gcf.logit("low ~ age", df).fit()
    with pytest.raises(ValueError, match="different response"):
        gc.lrtest(a, gcf.logit("smoke ~ age + lwt", df).fit())
    with pytest.raises(ValueError, match="Bayesian fit"):
        gc.lrtest(a, gcf.bayes_logit("low ~ age + lwt", df).fit())
    with pytest.raises(TypeError, match="argument 2 is not a fitted glmclass model"):
        gc.lrtest(a, 3.0)
    with pytest.raises(ValueError, match="test must be 'Chisq'"):
        gc.anova(a, gcf.logit("low ~ age + lwt", df).fit(), test="F")


def test_lrtest_equals_anova_deviance_difference_for_binary_models():
    df = load("birthwt")
    a, b = gcf.logit("low ~ age", df).fit(), gcf.logit("low ~ age + lwt + smoke", df).fit()
    t, table = gc.lrtest(a, b), gc.anova(a, b)
    assert t.statistic == pytest.approx(table["deviance_diff"].iloc[1], rel=1e-12)
    assert t.pvalue == pytest.approx(table["pvalue"].iloc[1], rel=1e-10)


@pytest.mark.parametrize("case", reference()["wald_terms"], ids=lambda c: c["name"])
def test_wald_test_terms_match_r(case):
    model = glm_model(glm_case(case["name"]))
    for key, kw in (("nonrobust", {"information": "expected"}),
                    ("HC1", {"information": "expected", "cov_type": "HC1"}),
                    ("observed", {})):
        table = model.fit(**kw).wald_test_terms()
        expected = pd.DataFrame({k: case[key][k] for k in ("statistic", "df", "pvalue")},
                                index=case["patsy_terms"])
        table = table.loc[expected.index]
        assert rel_each(table["statistic"], expected["statistic"]) < RTOL, key
        np.testing.assert_array_equal(table["df"], expected["df"])
        assert rel_each(table["pvalue"], expected["pvalue"]) < RTOL, key


def test_mnlogit_wald_test_terms_match_r():
    case = reference()["mnlogit_wald_terms"]
    df = load("survey", complete=("Exer", "Sex", "Age", "Pulse"))
    model = gcf.mnlogit("Exer ~ Sex + Age + Pulse", df)
    for key, kw in (("nonrobust", {}), ("HC1", {"cov_type": "HC1"})):
        table = model.fit(tol=1e-14, **kw).wald_test_terms()
        assert list(table.index) == case["patsy_terms"]
        assert rel_each(table["statistic"], case[key]["statistic"]) < RTOL
        np.testing.assert_array_equal(table["df"], case[key]["df"])  # 2 levels per column


def test_wald_test_terms_on_arrays_and_with_aliased_columns():
    df = load("birthwt")
    X = df[["age", "lwt"]].assign(const=1.0, age2=df["age"])  # age2 aliased
    with pytest.warns(gc.RankDeficientWarning):
        res = gc.Logit(df["low"], X).fit()
    table = res.wald_test_terms()
    assert list(table.index) == ["age", "lwt", "const", "age2"]
    assert table.loc["age2", "df"] == 0 and np.isnan(table.loc["age2", "statistic"])
    z2 = (res.params / res.bse) ** 2
    np.testing.assert_allclose(table["statistic"].iloc[:3], z2.iloc[:3], rtol=1e-12)
