"""R's deviance tables of one GLM fit: ``gc.anova(res)`` (``anova(fit, test = "Chisq")``) and
``res.drop1()`` (``drop1(fit, test = "Chisq")``, marginality respected), against
tests/reference/hypothesis.json (tests/reference/r/hypothesis.R)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis_reference import birthwt, close, fit, r_name, reference

import glmclass as gc
import glmclass.formula.api as gcf

ANOVA = reference()["anova"]
DROP1 = reference()["drop1"]


@pytest.mark.parametrize("case", ANOVA, ids=lambda c: c["case"])
def test_sequential_anova_equals_r(case):
    table = gc.anova(fit(case["case"]), test=case["test"])
    assert list(table.index) == [r_name(t) for t in case["rows"]]
    cols = ["df", "deviance", "df_resid", "resid_deviance"] + (
        ["F"] if case["test"] == "F" else []) + ["pvalue"]
    assert list(table.columns) == cols
    for col in cols:
        expected = np.asarray(case[col], dtype=float)
        got = table[col].to_numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=col)
        close(got[~np.isnan(got)], expected[~np.isnan(expected)], 1e-8)


@pytest.mark.parametrize("case", DROP1, ids=lambda c: f"{c['case']}-{c['test']}")
def test_drop1_equals_r(case):
    table = fit(case["case"]).drop1(test=case["test"])
    assert list(table.index) == [r_name(t) for t in case["rows"]]
    cols = ["df", "deviance", "aic"] + (["F"] if case["test"] == "F" else ["lrt"]) + ["pvalue"]
    assert list(table.columns) == cols
    for col in cols:
        expected = np.asarray(case[col], dtype=float)
        got = table[col].to_numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=col)
        close(got[~np.isnan(got)], expected[~np.isnan(expected)], 1e-8)


def test_marginality_keeps_main_effects_of_an_interaction():
    table = fit("logit_inter").drop1()
    assert "age" not in table.index and "smoke" not in table.index
    assert "age:smoke" in table.index and "lwt" in table.index


def test_terms_in_r_order_not_the_design_s():
    # patsy puts C(race) (no numeric factor) first; R adds the terms as written
    res = gcf.logit("low ~ age + C(race) + smoke", birthwt()).fit()
    assert list(res.params.index[:3]) == ["Intercept", "C(race)[T.other]", "C(race)[T.white]"]
    assert list(gc.anova(res).index) == ["NULL", "age", "C(race)", "smoke"]
    # R's '.' is the other columns in the data's order
    dot = gcf.logit("low ~ . + age:smoke", birthwt()[["low", "age", "race", "smoke"]]).fit()
    assert list(gc.anova(dot).index) == ["NULL", "age", "race", "smoke", "age:smoke"]


def test_last_row_and_single_refits_equal_separate_fits():
    df = birthwt()
    res = gcf.logit("low ~ age + lwt + smoke", df).fit()
    table = gc.anova(res)
    two = gcf.logit("low ~ age + lwt", df).fit()
    close(table.loc["lwt", "resid_deviance"], two.deviance, 1e-10)
    close(table.loc["smoke", "resid_deviance"], res.deviance, 1e-14)
    close(table.loc["NULL", "resid_deviance"], res.null_deviance, 1e-14)
    pair = gc.anova(two, res)
    close(table.loc["smoke", "pvalue"], pair["pvalue"].iloc[1], 1e-9)
    drop = res.drop1()
    close(drop.loc["lwt", "deviance"], gcf.logit("low ~ age + smoke", df).fit().deviance,
          1e-10)


def test_offset_and_weights_are_kept():
    df = birthwt().assign(w=lambda d: 1.0 + (d["age"] % 3), off=lambda d: d["lwt"] / 500)
    res = gcf.glm("ftv ~ age + smoke", df, family=gc.families.Poisson(),
                  freq_weights=df["w"].to_numpy(), offset=df["off"].to_numpy()).fit()
    sub = gcf.glm("ftv ~ age", df, family=gc.families.Poisson(),
                  freq_weights=df["w"].to_numpy(), offset=df["off"].to_numpy()).fit()
    close(gc.anova(res).loc["age", "resid_deviance"], sub.deviance, 1e-10)
    close(res.drop1().loc["smoke", "deviance"], sub.deviance, 1e-10)


def test_array_models_have_one_term_per_column():
    df = birthwt()
    X = np.column_stack([np.ones(len(df)), df[["age", "lwt"]].to_numpy(float)])
    res = gc.Logit(df["low"].to_numpy(), pd.DataFrame(X, columns=["const", "age", "lwt"])).fit()
    table = gc.anova(res)
    assert list(table.index) == ["NULL", "age", "lwt"]
    close(table.loc["lwt", "resid_deviance"], res.deviance, 1e-14)
    assert list(res.drop1().index) == ["<none>", "age", "lwt"]


def test_refusals():
    df = birthwt()
    res = gcf.logit("low ~ age + smoke", df).fit()
    with pytest.raises(ValueError, match="test must be one of 'Chisq', 'LRT', 'F'"):
        gc.anova(res, test="Rao")
    with pytest.raises(ValueError, match="test='F' is for families with an estimated "
                                         "dispersion .* Binomial family has dispersion 1"):
        res.drop1(test="F")
    with pytest.raises(ValueError, match="anova of one fit labels its rows by term"):
        gc.anova(res, names=["a"])
    with pytest.raises(ValueError, match="MNLogit compare nested fits"):
        gcf.mnlogit("race ~ age + smoke", df).fit().drop1()
    with pytest.raises(ValueError, match="does not maximise the likelihood"):
        gcf.firthlogit("low ~ age + smoke", df).fit().drop1()
    with pytest.raises(ValueError, match="Bayesian fit"):
        gc.anova(gcf.bayes_logit("low ~ age + smoke", df).fit())
    assert list(res.drop1(test="none").columns) == ["df", "deviance", "aic"]
    assert list(gc.anova(res, test="LRT").columns)[-1] == "pvalue"


def test_dask_tables_equal_in_memory():
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    df = birthwt()
    formula = "low ~ age + lwt + C(race) * smoke + ptd"
    with dask.config.set(scheduler="sync"):
        a = gcf.logit(formula, df).fit()
        b = gcf.logit(formula, dd.from_pandas(df, npartitions=3)).fit()
        for ours, theirs in ((gc.anova(a), gc.anova(b)), (a.drop1(), b.drop1())):
            assert list(ours.index) == list(theirs.index)
            close(theirs.to_numpy()[1:], ours.to_numpy()[1:], 1e-10)
        close(b.wald_test("ptd = smoke, age = 0").statistic,
              a.wald_test("ptd = smoke, age = 0").statistic, 1e-10)


def test_formulaic_engine_gives_the_same_tables():
    pytest.importorskip("formulaic")
    df = birthwt()
    formula = "low ~ age + C(race) * smoke + offset(lwt / 1000)"
    a = gcf.logit(formula, df).fit()
    b = gcf.logit(formula, df, engine="formulaic").fit()
    for ours, theirs in ((gc.anova(a), gc.anova(b)), (a.drop1(), b.drop1()),
                         (a.wald_test_terms(), b.wald_test_terms())):
        assert list(ours.index) == list(theirs.index)
        close(theirs.to_numpy()[1:], ours.to_numpy()[1:], 1e-10)


def test_saved_results_without_data_refuse_refits(tmp_path):
    res = gcf.logit("low ~ age + C(race) + smoke", birthwt()).fit()
    res.save(tmp_path / "with.pkl")
    back = gc.load(tmp_path / "with.pkl")
    close(gc.anova(back).to_numpy()[1:], gc.anova(res).to_numpy()[1:], 1e-12)
    res.save(tmp_path / "without.pkl", remove_data=True)
    bare = gc.load(tmp_path / "without.pkl")
    close(bare.wald_test("smoke = age").statistic, res.wald_test("smoke = age").statistic,
          1e-14)
    with pytest.raises(ValueError, match="saved without .remove_data=True."):
        bare.drop1()
    with pytest.raises(ValueError, match="saved without .remove_data=True."):
        gc.anova(bare)
