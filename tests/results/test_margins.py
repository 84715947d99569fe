"""``get_margeff``: per-variable marginal effects through the formula design, against R
(effects recomputed through ``model.matrix`` on perturbed data, delta method with numDeriv)
and against statsmodels' ``get_margeff`` on plain designs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from inference_reference import load, reference, rel_each
from scipy.special import expit

import glmclass as gc
import glmclass.formula.api as gcf

RTOL = 1e-8  # achieved: ~1e-10 (standard errors), ~1e-12 (effects)
TIGHT = 1e-14  # fit to the exact MLE, as R's reference


def r_fit(case):
    if "mnlogit" in case["name"]:
        df = load("survey", complete=case["complete_cases"])
        return gcf.mnlogit(case["patsy_formula"], df).fit(tol=TIGHT)
    link = gc.links.Probit() if "probit" in case["name"] else gc.links.Logit()
    return gcf.glm(case["patsy_formula"], load("birthwt"),
                   family=gc.families.Binomial(link=link)).fit(tol=TIGHT, information="expected")


@pytest.mark.parametrize("case", reference()["margins"], ids=lambda c: c["name"])
def test_margins_through_formula_terms_match_r(case):
    res = r_fit(case)
    for run in case["runs"]:
        me = res.get_margeff(at=run["at"], method=run["method"], dummy=run["dummy"])
        labels = [case["labels"][n] for n in run["names"]]
        if "levels" in case:  # multinomial: R's rows are effects, columns levels
            idx = [(lv, lab) for lab in labels for lv in case["levels"]]
            shape = (len(labels), len(case["levels"]))
            got = me.margeff.loc[idx].to_numpy().reshape(shape)
            got_se = me.margeff_se.loc[idx].to_numpy().reshape(shape)
        else:
            got, got_se = me.margeff.loc[labels], me.margeff_se.loc[labels]
            assert len(me.margeff) == len(labels)
        what = f"{run['at']} {run['method']} dummy={run['dummy']}"
        assert rel_each(got, np.squeeze(run["margeff"])) < RTOL, what
        assert rel_each(got_se, np.squeeze(run["margeff_se"])) < RTOL, what


def test_labels_kinds_and_order_follow_the_design():
    res = gcf.logit("low ~ age + I(age**2) + np.log(lwt) + C(race) + smoke + age:smoke + ht",
                    load("birthwt")).fit()
    me = res.get_margeff()
    # variables in the order of the design columns (patsy puts categorical terms first)
    assert list(me.margeff.index) == ["C(race)[T.other]", "C(race)[T.white]", "age", "lwt",
                                      "smoke", "ht"]
    assert list(me.kind) == ["discrete"] * 2 + ["derivative"] * 4
    dummies = res.get_margeff(dummy=True)
    assert dummies.kind["smoke"] == "discrete" and dummies.kind["age"] == "derivative"


def test_derivative_through_every_term_written_out():
    """d mu / d age = mu' (b_age + 2 b_age2 age + b_int smoke), averaged."""
    df = load("birthwt")
    res = gcf.logit("low ~ age + I(age**2) + smoke + age:smoke", df).fit()
    b = res.params
    mu = res.fittedvalues.to_numpy()
    slope = b["age"] + 2 * b["I(age ** 2)"] * df["age"] + b["age:smoke"] * df["smoke"]
    expected = np.mean(mu * (1 - mu) * slope)
    assert res.get_margeff().margeff["age"] == pytest.approx(expected, rel=1e-11)


def test_discrete_change_of_a_categorical_level_written_out():
    df = load("birthwt")
    res = gcf.logit("low ~ age + C(race, Treatment('white'))", df).fit()
    me = res.get_margeff()
    b = res.params
    eta0 = b["Intercept"] + b["age"] * df["age"]
    expected = np.mean(expit(eta0 + b["C(race, Treatment('white'))[T.black]"]) - expit(eta0))
    assert me.margeff["C(race, Treatment('white'))[T.black]"] == pytest.approx(expected,
                                                                                 rel=1e-12)
    assert "C(race, Treatment('white'))[T.white]" not in me.margeff.index


# statsmodels refuses the elasticities with dummy=True
SM_RUNS = [(at, method, dummy) for at in ("overall", "mean")
           for method in ("dydx", "eyex", "dyex", "eydx") for dummy in (False, True)
           if method == "dydx" or not dummy]


@pytest.mark.parametrize("model", ["logit", "probit"])
@pytest.mark.parametrize(("at", "method", "dummy"), SM_RUNS)
def test_matches_statsmodels_on_plain_designs(model, at, method, dummy):
    df = load("birthwt")
    X = sm.add_constant(df[["age", "lwt", "smoke", "ht"]].astype(float))
    ours = getattr(gc, model.capitalize())(df["low"], X).fit(tol=TIGHT)
    theirs = getattr(sm, model.capitalize())(df["low"], X).fit(disp=0, method="newton",
                                                               tol=1e-14)
    a = ours.get_margeff(at=at, method=method, dummy=dummy)
    b = theirs.get_margeff(at=at, method=method, dummy=dummy)
    np.testing.assert_allclose(a.margeff, b.margeff, rtol=1e-9)
    np.testing.assert_allclose(a.margeff_se, b.margeff_se, rtol=1e-7)
    assert list(a.margeff.index) == ["age", "lwt", "smoke", "ht"]


@pytest.mark.parametrize("at", ["overall", "mean"])
def test_mnlogit_matches_statsmodels_on_plain_designs(at):
    df = load("survey", complete=("Exer", "Age", "Pulse"))
    X = sm.add_constant(df[["Age", "Pulse"]])
    y = df["Exer"]
    ours = gc.MNLogit(y, X).fit(tol=TIGHT)
    theirs = sm.MNLogit(pd.Categorical(y).codes, X).fit(disp=0, method="newton", tol=1e-14)
    a = ours.get_margeff(at=at)
    b = theirs.get_margeff(at=at)
    # statsmodels: (variables x levels) arrays
    got = np.array([[a.margeff[(lv, v)] for lv in ours.levels] for v in ("Age", "Pulse")])
    got_se = np.array([[a.margeff_se[(lv, v)] for lv in ours.levels] for v in ("Age", "Pulse")])
    np.testing.assert_allclose(got, b.margeff, rtol=1e-9)
    np.testing.assert_allclose(got_se, b.margeff_se, rtol=1e-7)
    # the effects on the probabilities of all levels sum to zero
    sums = a.margeff.groupby(level="term").sum()
    assert np.abs(sums).max() < 1e-15


def test_formula_and_array_models_agree_on_plain_terms():
    df = load("birthwt")
    f = gcf.probit("low ~ age + lwt + smoke", df).fit()
    X = sm.add_constant(df[["age", "lwt", "smoke"]].astype(float))
    a = gc.Probit(df["low"], X).fit()
    for at in ("overall", "mean"):
        np.testing.assert_allclose(f.get_margeff(at=at).margeff, a.get_margeff(at=at).margeff,
                                   rtol=1e-10)
        np.testing.assert_allclose(f.get_margeff(at=at, dummy=True).margeff_se,
                                   a.get_margeff(at=at, dummy=True).margeff_se, rtol=1e-10)


def test_string_and_bool_variables_are_discrete_and_a_numeric_threshold_is_refused():
    df = load("birthwt").assign(smoker=lambda d: d["smoke"] == 1)
    res = gcf.logit("low ~ age + smoker + I(race == 'white')", df).fit()
    me = res.get_margeff()
    assert list(me.margeff.index) == ["smoker[T.True]", "race[T.other]", "race[T.white]", "age"]
    assert me.kind.iloc[:3].eq("discrete").all()
    # new data through an expression of a string column (the level check skips it)
    np.testing.assert_allclose(res.predict(df.head()), res.fittedvalues.head(), rtol=1e-14)
    # race only enters through race == 'white': 'other' changes nothing against 'black'
    assert me.margeff["race[T.other]"] == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ValueError, match="the numeric column 'age' enters the categorical term "
                                         r"'C\(age > 30\)' through an expression"):
        gcf.logit("low ~ C(age > 30) + lwt", df).fit().get_margeff()


def test_uses_the_fit_covariance_and_reports():
    df = load("birthwt")
    model = gcf.logit("low ~ age + lwt + C(race)", df)
    plain, robust = model.fit().get_margeff(), model.fit(cov_type="HC1").get_margeff()
    np.testing.assert_array_equal(plain.margeff, robust.margeff)
    assert not np.allclose(plain.margeff_se, robust.margeff_se)
    frame = robust.summary_frame(alpha=0.1)
    assert list(frame.columns) == ["margeff", "margeff_se", "z", "pvalue", "ci_lower",
                                   "ci_upper"]
    np.testing.assert_allclose(frame["ci_upper"] - frame["margeff"],
                               1.6448536269514722 * frame["margeff_se"], rtol=1e-12)
    text = str(robust.summary())
    assert "Marginal Effects (dydx, at overall" in text and "C(race)[T.white]" in text
    assert "with the HC1 covariance of the estimates" in text and robust.cov_type == "HC1"
    assert robust.margeff_cov.shape == (4, 4)


def test_bad_arguments():
    res = gcf.logit("low ~ age", load("birthwt")).fit()
    # at="median" is statsmodels' option since wave 3 (tests/results/test_vocab_margeff.py)
    with pytest.raises(ValueError, match="at must be one of .*'all'.*, got 'middle'"):
        res.get_margeff(at="middle")
    with pytest.raises(ValueError, match="method must be one of"):
        res.get_margeff(method="dy/dx")
    with pytest.raises(ValueError, match="dummy must be True or False"):
        res.get_margeff(dummy="yes")
    with pytest.raises(ValueError, match="no variables besides the intercept"):
        gcf.logit("low ~ 1", load("birthwt")).fit().get_margeff()
