"""Formula terms newcomers write (issue 13): factors derived from expressions at predict time,
two-column binomial responses (statsmodels' ``k + f ~``, R's ``cbind(k, f) ~``), proportions
without trials, ``offset()`` terms, ``exposure=``, per-row arguments by column name, and R's
``y ~ .``. Reference values from R (``tests/reference/formula_terms.json``) and statsmodels."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

import glmclass as gc
import glmclass.formula.api as gcf

REF = Path(__file__).resolve().parents[1] / "reference"
R = json.loads((REF / "formula_terms.json").read_text())["cases"]
ENGINES = ["patsy", "formulaic"]


def read(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])


MENARCHE = read("menarche")
INSURANCE = read("insurance").astype({"District": str})
SPECTOR = read("spector")
BIRTHWT = read("birthwt")


def check_r(res, case, rtol=1e-8, llf=True):
    np.testing.assert_allclose(res.params.to_numpy(), case["coef"], rtol=rtol)
    np.testing.assert_allclose(res.bse.to_numpy(), case["bse"], rtol=1e-6)
    assert res.deviance == pytest.approx(case["deviance"], rel=1e-8)
    assert res.null_deviance == pytest.approx(case["null_deviance"], rel=1e-9)
    if llf:
        assert res.llf == pytest.approx(case["loglik"], rel=1e-9)
        assert res.aic == pytest.approx(case["aic"], rel=1e-9)
    assert res.df_resid == case["df_residual"]


# --- factors derived from expressions ---------------------------------------------------------
@pytest.mark.filterwarnings("ignore::glmclass.SeparationWarning")  # age 40+: all low = 0
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("formula, data", [
    ("GRADE ~ I(GPA > 3) + PSI", SPECTOR),
    ("GRADE ~ C(GPA > 3) + TUCE", SPECTOR),
    ("low ~ C(np.floor(age / 10)) + lwt", BIRTHWT),
    ("low ~ C(age > 25):smoke + C(np.where(race == 1, 'white', 'other'))", BIRTHWT),
])
def test_predict_with_factors_derived_from_expressions(formula, data, engine):
    res = gcf.logit(formula, data, engine=engine).fit()
    new = data.sample(12, random_state=3)
    np.testing.assert_allclose(res.predict(new), res.predict().loc[new.index], rtol=1e-12)
    one_level = data[data.iloc[:, 0] >= 0].head(1)  # a single row: one level of each factor
    assert res.predict(one_level).notna().all()


@pytest.mark.filterwarnings("ignore::glmclass.SeparationWarning")
@pytest.mark.parametrize("engine", ENGINES)
def test_an_unseen_value_of_a_derived_factor_names_the_term(engine):
    res = gcf.logit("low ~ C(np.floor(age / 10)) + lwt", BIRTHWT, engine=engine).fit()
    old = BIRTHWT.head(2).assign(age=[19, 98])
    with pytest.raises(ValueError, match=r"term 'C\(np.floor\(age / 10\)\)' has level 9\.0.*"
                                         r"levels: \[1\.0, 2\.0, 3\.0, 4\.0\]"):
        res.predict(old)


# --- binomial counts ------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("formula", ["cbind(Menarche, Total - Menarche) ~ Age",
                                     "Menarche + I(Total - Menarche) ~ Age"])
def test_two_column_binomial_responses_match_r(formula, engine):
    case = R["menarche_cbind"]
    res = gcf.glm(formula, MENARCHE, engine=engine).fit()
    check_r(res, case)
    new = pd.DataFrame({"Age": case["new_age"]})
    np.testing.assert_allclose(res.predict(new), case["predict_response"], rtol=1e-9)
    np.testing.assert_allclose(res.predict(new, which="linear"), case["predict_link"],
                               rtol=1e-9)
    assert res.model.data.endog_name == "Menarche + I(Total - Menarche)"


def test_two_column_response_matches_statsmodels_and_the_array_form():
    star = sm.datasets.star98.load_pandas().data
    f = "NABOVE + NBELOW ~ LOWINC + PERASIAN + PERBLACK"
    ref = smf.glm(f, star, family=sm.families.Binomial()).fit(tol=1e-13)
    res = gcf.glm(f, star).fit()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-9)
    np.testing.assert_allclose(res.bse, ref.bse, rtol=1e-7)
    assert res.llf == pytest.approx(ref.llf, rel=1e-11)
    assert res.nobs == ref.nobs
    arrays = gc.GLM(star[["NABOVE", "NBELOW"]], sm.add_constant(star[["LOWINC", "PERASIAN",
                                                                      "PERBLACK"]])).fit()
    np.testing.assert_allclose(arrays.params.to_numpy(), res.params.to_numpy(), rtol=1e-10)
    logit = gcf.logit("cbind(NABOVE, NBELOW) ~ LOWINC + PERASIAN + PERBLACK", star).fit()
    np.testing.assert_allclose(logit.params, res.params, rtol=1e-10)


def test_two_column_responses_are_binomial_only():
    with pytest.raises(ValueError, match="two columns .*binomial"):
        gcf.glm("cbind(Menarche, Total) ~ Age", MENARCHE, family=gc.families.Poisson())
    with pytest.raises(ValueError, match="two columns"):
        gcf.mnlogit("cbind(Menarche, Total) ~ Age", MENARCHE)
    with pytest.raises(ValueError, match="has 3 parts"):
        gcf.glm("Menarche + Total + Age ~ Age", MENARCHE)
    with pytest.raises(ValueError, match="non-negative"):
        gcf.glm("cbind(Menarche, Menarche - Total) ~ Age", MENARCHE)


def test_proportions_without_trials_warn_as_r_and_say_how_to_write_it():
    case = R["menarche_proportion_no_trials"]
    assert case["warned_non_integer"]
    with pytest.warns(gc.DataWarning, match=r"var_weights.*'successes \+ failures ~ \.\.\.'.*"
                                            r"'cbind\(successes, failures\) ~ \.\.\.'"):
        res = gcf.glm("I(Menarche / Total) ~ Age", MENARCHE).fit()
    # R's logLik rounds the non-integer successes (dbinom(round(m y), ...)), statsmodels' and
    # glmclass's do not: the likelihood is not that of counts either way, hence the warning
    check_r(res, case, rtol=1e-7, llf=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.DataWarning)
        trials = gcf.glm("I(Menarche / Total) ~ Age", MENARCHE, var_weights="Total").fit()
    check_r(trials, R["menarche_cbind"])


# --- offsets and exposure ---------------------------------------------------------------------
POISSON = gc.families.Poisson()
INS_RHS = "District + Group + Age"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("how", ["term", "exposure", "offset_column", "offset_array"])
def test_offsets_match_r_and_are_read_from_new_data(how, engine):
    ins = INSURANCE.assign(logH=np.log(INSURANCE.Holders))
    kw = {"family": POISSON, "engine": engine}
    if how == "term":
        res = gcf.glm(f"Claims ~ {INS_RHS} + offset(np.log(Holders))", ins, **kw).fit()
    elif how == "exposure":
        res = gcf.glm(f"Claims ~ {INS_RHS}", ins, exposure="Holders", **kw).fit()
    elif how == "offset_column":
        res = gcf.glm(f"Claims ~ {INS_RHS}", ins, offset="logH", **kw).fit()
    else:
        res = gcf.glm(f"Claims ~ {INS_RHS}", ins, offset=ins.logH.to_numpy(), **kw).fit()
    case = R["insurance_offset_term"]
    check_r(res, case)
    new = ins.iloc[case["new_rows"]].assign(Holders=case["new_holders"])
    new = new.assign(logH=np.log(new.Holders))
    if how == "offset_array":  # an array offset is the training rows': give the new one
        pred = res.predict(new, which="linear", offset=new.logH.to_numpy())
    else:  # as R: the formula's offset is evaluated on the new data
        pred = res.predict(new, which="linear")
    np.testing.assert_allclose(pred, case["predict_link"], rtol=1e-9)
    np.testing.assert_allclose(res.predict(new, exposure=new.Holders) if how == "exposure"
                               else np.exp(pred), case["predict_response"], rtol=1e-9)
    assert R["insurance_offset_arg"]["predict_link"] == case["predict_link"]


def test_offset_and_exposure_match_statsmodels():
    ins = INSURANCE
    ref = smf.glm(f"Claims ~ {INS_RHS}", ins, family=sm.families.Poisson(),
                  exposure=ins.Holders).fit(tol=1e-13)
    res = gcf.glm(f"Claims ~ {INS_RHS}", ins, family=POISSON, exposure=ins.Holders).fit()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-9)
    arrays = gc.GLM(ins.Claims, res.model.exog, family=POISSON, exposure=ins.Holders).fit()
    np.testing.assert_allclose(arrays.params.to_numpy(), res.params.to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(arrays.predict(res.model.exog[:5], exposure=ins.Holders[:5]),
                               ref.predict(ins.head(5), exposure=ins.Holders[:5]), rtol=1e-9)


def test_offset_errors():
    with pytest.raises(ValueError, match="exposure= is for a log link"):
        gcf.glm("I(Menarche / Total) ~ Age", MENARCHE, exposure="Total", var_weights="Total")
    with pytest.raises(ValueError, match="exposure must be positive"):
        gcf.glm(f"Claims ~ {INS_RHS}", INSURANCE.assign(Holders=INSURANCE.Holders - 3),
                family=POISSON, exposure="Holders")
    with pytest.raises(ValueError, match="removes an offset"):
        gcf.glm("Claims ~ Age - offset(Holders)", INSURANCE, family=POISSON)
    with pytest.raises(ValueError, match="offset\\(\\) must be a term of its own"):
        gcf.glm("Claims ~ Age:offset(Holders)", INSURANCE, family=POISSON)
    with pytest.raises(ValueError, match="must be numeric"):
        gcf.glm("Claims ~ Age + offset(Group)", INSURANCE, family=POISSON)
    with pytest.raises(ValueError, match="LDA has no offset"):
        gcf.lda("Age ~ Claims + offset(np.log(Holders))", INSURANCE)


def test_an_offset_term_and_an_offset_array_add_up_as_in_r():
    ins = INSURANCE
    half = np.log(ins.Holders.to_numpy()) / 2
    both = gcf.glm(f"Claims ~ {INS_RHS} + offset(np.log(Holders) / 2)", ins, family=POISSON,
                   offset=half).fit()
    check_r(both, R["insurance_offset_term"])


# --- R's "y ~ ." ----------------------------------------------------------------------------------
def test_dot_means_every_other_column():
    bw = BIRTHWT[["low", "age", "lwt", "smoke", "ht"]]
    dot = gcf.logit("low ~ .", bw).fit()
    explicit = gcf.logit("low ~ age + lwt + smoke + ht", bw).fit()
    np.testing.assert_array_equal(dot.params.to_numpy(), explicit.params.to_numpy())
    assert list(dot.params.index) == list(explicit.params.index)
    minus = gcf.logit("low ~ . - ht", bw).fit()
    assert list(minus.params.index) == ["Intercept", "age", "lwt", "smoke"]
    inter = gcf.logit("low ~ (.)**2", bw[["low", "age", "smoke"]]).fit()
    assert list(inter.params.index) == ["Intercept", "age", "smoke", "age:smoke"]
    counts = gcf.glm("cbind(Menarche, Total - Menarche) ~ .", MENARCHE).fit()
    assert list(counts.params.index) == ["Intercept", "Age"]  # both response columns left out
    quoted = gcf.logit("low ~ .", bw.rename(columns={"lwt": "last weight"})).fit()
    assert "Q('last weight')" in quoted.params.index
    assert np.isclose(dot.predict(bw.head(3)), explicit.predict(bw.head(3))).all()
