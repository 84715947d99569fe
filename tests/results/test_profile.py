"""``conf_int(method="profile")`` against exact profile roots computed in R (uniroot on glm.fit
with the coefficient in the offset) and against MASS's interpolated ``confint``."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from inference_reference import glm_case, glm_model, load, reference, rel_each

import glmclass as gc
import glmclass.formula.api as gcf

RTOL = 1e-9  # achieved: 1e-11 or better


def model_of(case: dict):
    if case["name"] == "spector_logit":
        return gcf.logit(case["patsy_formula"], load("spector")), case["coef_names"]
    ref = glm_case(case["name"])
    return glm_model(ref), ref["coef_names"]


@pytest.mark.parametrize("case", reference()["profile"], ids=lambda c: c["name"])
def test_profile_intervals_match_exact_roots_and_mass(case):
    model, names = model_of(case)
    res = model.fit()
    ci = res.conf_int(method="profile").loc[names]
    assert rel_each(ci["lower"], case["lower"]) < RTOL
    assert rel_each(ci["upper"], case["upper"]) < RTOL
    assert rel_each(res.conf_int(0.1, method="profile").loc[names, "lower"],
                    case["lower90"]) < RTOL
    # MASS interpolates the profile with a spline: within 1e-3 standard errors
    se = res.bse.loc[names].to_numpy()
    assert np.max(np.abs(ci["lower"] - case["mass_lower"]) / se) < 1e-3
    assert np.max(np.abs(ci["upper"] - case["mass_upper"]) / se) < 1e-3


def test_profile_interval_is_asymmetric_and_cached():
    res = gcf.logit("GRADE ~ GPA + TUCE + PSI", load("spector")).fit()
    prof, wald = res.conf_int(method="profile"), res.conf_int()
    assert not np.allclose(prof, wald, rtol=1e-3)
    upper_gap = prof["upper"] - res.params
    lower_gap = res.params - prof["lower"]
    assert not np.allclose(upper_gap, lower_gap, rtol=1e-3)
    assert res.conf_int(method="profile") is not res.conf_int(method="profile")  # copies
    prof.iloc[0, 0] = 99.0
    assert res.conf_int(method="profile").iloc[0, 0] != 99.0


def test_one_column_and_freq_weights():
    df = load("birthwt")
    res = gc.Logit(df["low"], np.ones((189, 1))).fit()
    ci = res.conf_int(method="profile")
    # intercept-only: the profile is the binomial likelihood of the proportion
    assert ci.iloc[0, 0] < res.params.iloc[0] < ci.iloc[0, 1]
    counts = df.groupby(["smoke", "low"]).size().rename("n").reset_index()
    w = gcf.logit("low ~ smoke", counts, freq_weights=counts["n"]).fit()
    full = gcf.logit("low ~ smoke", df).fit()
    np.testing.assert_allclose(w.conf_int(method="profile"), full.conf_int(method="profile"),
                               rtol=1e-9)


def test_separation_gives_an_infinite_bound_with_a_warning():
    sep = pd.DataFrame({"y": [0, 0, 0, 1, 1, 1], "x": [1.0, 2, 3, 4, 5, 6]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = gcf.logit("y ~ x", sep).fit()
    with pytest.warns(gc.GlmclassWarning) as record:
        ci = res.conf_int(method="profile")
    messages = [str(w.message) for w in record]
    assert any("'x' does not fall to the 0.95 cutoff" in m for m in messages)
    # holding the intercept fixed leaves the slope without a finite estimate
    assert any("profile of 'Intercept': some refits" in m for m in messages)
    assert ci.loc["x", "upper"] == np.inf
    assert np.isfinite(ci.loc["x", "lower"])


def test_aliased_columns_are_nan_and_bad_arguments_raise():
    df = load("birthwt").assign(age2=lambda d: d["age"])
    with pytest.warns(gc.RankDeficientWarning):
        res = gcf.logit("low ~ age + age2 + lwt", df).fit()
    ci = res.conf_int(method="profile")
    assert ci.loc["age2"].isna().all() and ci.drop("age2").notna().all().all()
    with pytest.raises(ValueError, match="method must be 'wald' or 'profile', got 'lr'"):
        res.conf_int(method="lr")
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        res.conf_int(0, method="profile")
