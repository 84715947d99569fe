"""``get_prediction``: delta-method standard errors and intervals on the linear-predictor
scale, against R's ``predict.glm(se.fit = TRUE)`` (and X V X' with sandwich's covariances),
a multinomial delta method written out in R, and statsmodels' GLM ``get_prediction``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from inference_reference import glm_case, glm_model, load, reference, rel_each
from scipy import special, stats

import glmclass as gc
import glmclass.formula.api as gcf

RTOL = 1e-9  # achieved: ~1e-12


def newdata(case: dict) -> pd.DataFrame:
    nd = pd.DataFrame(case["newdata"])
    if "District" in nd:  # pandas reads insurance's District as integers
        nd["District"] = nd["District"].astype(int)
    return nd


def offset_of(case: dict, nd: pd.DataFrame):
    return np.log(nd["Holders"].to_numpy(float)) if case["name"] == "insurance_poisson" \
        else None


@pytest.mark.parametrize("case", reference()["predict"], ids=lambda c: c["name"])
def test_glm_prediction_matches_predict_glm(case):
    model = glm_model(glm_case(case["name"]))
    nd = newdata(case)
    off = offset_of(case, nd)
    res = model.fit(information="expected")  # R's vcov: the Fisher information
    lin = res.get_prediction(nd, which="linear", offset=off)
    mean = res.get_prediction(nd, offset=off)
    assert rel_each(lin.predicted, case["linear"]) < RTOL
    assert rel_each(lin.se, case["linear_se"]) < RTOL
    assert rel_each(mean.predicted, case["mean"]) < RTOL
    assert rel_each(mean.se, case["mean_se"]) < RTOL
    hc1 = model.fit(information="expected", cov_type="HC1")
    assert rel_each(hc1.get_prediction(nd, which="linear", offset=off).se,
                    case["linear_se_HC1"]) < RTOL
    observed = model.fit().get_prediction(nd, which="linear", offset=off)
    assert rel_each(observed.se, case["linear_se_observed"]) < RTOL
    inside = res.get_prediction(which="linear")  # in-sample
    assert rel_each(inside.predicted.iloc[:6], case["insample_linear_head"]) < RTOL
    assert rel_each(inside.se.iloc[:6], case["insample_linear_se_head"]) < RTOL


def test_interval_is_the_inverse_link_of_the_linear_interval():
    case = glm_case("birthwt_probit")
    res = glm_model(case).fit()
    nd = newdata(reference()["predict"][1])
    frame = res.get_prediction(nd).summary_frame(alpha=0.1)
    lin = res.get_prediction(nd, which="linear")
    z = stats.norm.isf(0.05)
    np.testing.assert_allclose(frame["mean_ci_lower"], stats.norm.cdf(lin.predicted - z * lin.se),
                               rtol=1e-13)
    np.testing.assert_allclose(frame["mean_ci_upper"], stats.norm.cdf(lin.predicted + z * lin.se),
                               rtol=1e-13)
    assert list(frame.columns) == ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
    assert ((frame["mean_ci_lower"] < frame["mean"]) & (frame["mean"] < frame["mean_ci_upper"])
            ).all()
    lin_frame = lin.summary_frame()
    np.testing.assert_allclose(lin_frame["mean_ci_upper"] - lin_frame["mean"],
                               stats.norm.isf(0.025) * lin.se, rtol=1e-13)
    pd.testing.assert_frame_equal(lin.conf_int(), lin_frame[["mean_ci_lower", "mean_ci_upper"]]
                                  .set_axis(["lower", "upper"], axis=1))


def test_gaussian_intervals_use_student_t_like_conf_int():
    res = glm_model(glm_case("birthwt_gaussian")).fit()
    frame = res.get_prediction(load("birthwt").head(4)).summary_frame()
    q = stats.t.isf(0.025, res.df_resid)
    np.testing.assert_allclose(frame["mean_ci_upper"] - frame["mean"], q * frame["mean_se"],
                               rtol=1e-12)


def test_matches_statsmodels_glm_get_prediction():
    df = load("birthwt")
    X = sm.add_constant(df[["age", "lwt", "smoke", "ht"]].astype(float))
    for link, sm_link in ((gc.links.Logit(), sm.families.links.Logit()),
                          (gc.links.CLogLog(), sm.families.links.CLogLog())):
        ours = gc.GLM(df["low"], X, family=gc.families.Binomial(link=link)).fit(
            information="expected")
        theirs = sm.GLM(df["low"], X, family=sm.families.Binomial(link=sm_link)).fit(
            tol=1e-13)
        a = ours.get_prediction(X.iloc[:20]).summary_frame(alpha=0.1)
        b = theirs.get_prediction(X.iloc[:20]).summary_frame(alpha=0.1)
        np.testing.assert_allclose(a.to_numpy(), b[a.columns].to_numpy(), rtol=1e-7)


def test_rows_with_missing_values_give_nan():
    res = gcf.logit("low ~ age + lwt", load("birthwt")).fit()
    nd = pd.DataFrame({"age": [20.0, np.nan], "lwt": [120.0, 130.0]})
    frame = res.get_prediction(nd).summary_frame()
    assert frame.iloc[1].isna().all() and frame.iloc[0].notna().all()


def test_bad_which_and_alpha():
    res = gcf.logit("low ~ age", load("birthwt")).fit()
    with pytest.raises(ValueError, match="which must be 'mean' or 'linear', got 'class'"):
        res.get_prediction(which="class")
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        res.get_prediction().summary_frame(alpha=1.5)


def mnlogit_case():
    case = reference()["mnlogit_predict"]
    df = load("survey", complete=("Exer", "Sex", "Age", "Pulse"))
    return case, gcf.mnlogit("Exer ~ Sex + Age + Pulse", df), pd.DataFrame(case["newdata"])


TIGHT = 1e-14  # R's values are at the exact MLE; the default tol leaves ~1e-9 in eta


def test_mnlogit_prediction_matches_r_delta_method():
    case, model, nd = mnlogit_case()
    res = model.fit(tol=TIGHT)
    p = res.get_prediction(nd)
    levels = case["levels"]
    assert list(p.predicted.columns) == levels
    assert rel_each(p.predicted, case["prob"]) < RTOL
    assert rel_each(p.se, case["prob_se"]) < RTOL
    ci = p.conf_int()
    assert rel_each(ci["lower"].to_numpy().reshape(-1, 3), case["prob_ci_lower"]) < RTOL
    assert rel_each(ci["upper"].to_numpy().reshape(-1, 3), case["prob_ci_upper"]) < RTOL
    lin = res.get_prediction(nd, which="linear")
    assert list(lin.predicted.columns) == levels[1:]
    assert rel_each(lin.predicted, case["linear"]) < RTOL
    assert rel_each(lin.se, case["linear_se"]) < RTOL
    hc1 = model.fit(cov_type="HC1", tol=TIGHT)
    assert rel_each(hc1.get_prediction(nd).se, case["HC1"]["prob_se"]) < RTOL
    assert rel_each(hc1.get_prediction(nd, which="linear").se, case["HC1"]["linear_se"]) < RTOL


def test_mnlogit_summary_frame_is_long_with_a_level_column():
    case, model, nd = mnlogit_case()
    frame = model.fit().get_prediction(nd).summary_frame()
    assert list(frame.columns) == ["level", "mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
    assert len(frame) == 3 * len(nd)
    assert list(frame["level"].iloc[:3]) == case["levels"]
    np.testing.assert_allclose(frame.groupby(level=0)["mean"].sum(), 1.0, rtol=1e-14)
    # the interval on the logit scale of each level, mapped back
    z = stats.norm.isf(0.025)
    lo = special.expit(special.logit(frame["mean"]) - z * frame["mean_se"]
                       / (frame["mean"] * (1 - frame["mean"])))
    np.testing.assert_allclose(frame["mean_ci_lower"], lo, rtol=1e-12)


def test_binary_mnlogit_equals_logit():
    """With two levels the multinomial interval (logit scale of p_k) is the logit interval."""
    df = load("birthwt")
    a = gcf.logit("low ~ age + lwt", df).fit().get_prediction(df.head(5)).summary_frame()
    b = gcf.mnlogit("low ~ age + lwt", df).fit().get_prediction(df.head(5)).summary_frame()
    b1 = b[b["level"] == 1].drop(columns="level")
    np.testing.assert_allclose(a.to_numpy(), b1.to_numpy(), rtol=1e-7)


def test_bayes_logit_prediction_is_the_laplace_posterior_of_eta():
    df = load("birthwt")
    res = gcf.bayes_logit("low ~ age + lwt + smoke", df, prior_scale=2.5).fit()
    moments = res.predict_linear(df.head(6))
    lin = res.get_prediction(df.head(6), which="linear")
    np.testing.assert_allclose(lin.predicted, moments["mean"], rtol=1e-12)
    np.testing.assert_allclose(lin.se, moments["sd"], rtol=1e-10)
    frame = res.get_prediction(df.head(6)).summary_frame()
    z = stats.norm.isf(0.025)
    np.testing.assert_allclose(frame["mean_ci_lower"],
                               special.expit(moments["mean"] - z * moments["sd"]), rtol=1e-10)
    moderated = res.predict(df.head(6))  # the predictive probability lies inside the interval
    assert ((frame["mean_ci_lower"] < moderated) & (moderated < frame["mean_ci_upper"])).all()
