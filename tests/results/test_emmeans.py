"""gc.emmeans / .contrast / gc.joint_tests against R's emmeans 1.8 (tests/reference/emmeans.json,
written by tests/reference/r/emmeans.R): birthwt logit (link and response scales, by groups,
the four weightings, at=, sandwich covariances, every contrast method and adjustment), probit
and cloglog links, a Gaussian fit (t), warpbreaks Poisson (rates and ratios), the housing
multinomial logit (mode="prob"); BayesLogit against the linear functions of its posterior;
Dask fits against the in-memory fit of the same rows."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
TOL = 1e-6
FORMULA = "low ~ C(race) * C(smoke) + age"
MEAN_COLS = ["SE", "asymp.LCL", "asymp.UCL"]
CONTRAST_COLS = ["SE", "asymp.LCL", "asymp.UCL", "z.ratio", "p.value"]


@pytest.fixture(scope="module")
def ref() -> dict:
    return json.loads((REF / "emmeans.json").read_text())


@pytest.fixture(scope="module")
def birthwt() -> pd.DataFrame:
    return pd.read_csv(REF / "data" / "birthwt.csv")


@pytest.fixture(scope="module")
def logit(birthwt):
    return gc.Logit.from_formula(FORMULA, birthwt).fit()


@pytest.fixture(scope="module")
def poisson():
    wb = pd.read_csv(REF / "data" / "warpbreaks.csv")
    wb["tension"] = pd.Categorical(wb["tension"], categories=["L", "M", "H"])  # R's order
    return gc.GLM.from_formula("breaks ~ wool * tension", wb,
                               family=gc.families.Poisson()).fit()


def check(frame: pd.DataFrame, expected: dict, numbers: list[str], atol: float = 0.0,
          skip: tuple = ()) -> None:
    """Every label column equal (as text), every number column within TOL relative."""
    assert len(frame) == len(next(iter(expected.values())))
    for col, want in expected.items():
        if col in ("null", "t.ratio", *skip) or col not in frame and col in ("z.ratio",
                                                                               "p.value"):
            continue
        got = frame[col]
        if col in numbers:
            np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float),
                                       rtol=TOL, atol=atol, err_msg=col)
        elif col in ("df", "df1", "df2"):
            np.testing.assert_array_equal(np.asarray(got, float), np.asarray(want, float))
        else:
            assert [str(v) for v in got] == list(want), col


# --- birthwt logit -------------------------------------------------------------------------------
def test_means_link_scale(logit, ref):
    e = gc.emmeans(logit, "race")
    frame = e.summary_frame()
    assert list(frame.columns) == ["race", "emmean", "SE", "df", "asymp.LCL", "asymp.UCL"]
    check(frame, ref["birthwt"]["race"], ["emmean", *MEAN_COLS])


def test_means_response_scale_back_transform_the_link_interval(logit, ref):
    frame = gc.emmeans(logit, "race", type="response").summary_frame()
    check(frame, ref["birthwt"]["race_response"], ["prob", *MEAN_COLS])


@pytest.mark.parametrize("call, key, col", [
    (dict(specs="race", by="smoke"), "race_by_smoke", "emmean"),
    (dict(specs="race | smoke"), "race_by_smoke", "emmean"),
    (dict(specs="race * smoke", type="response"), "race_smoke_response", "prob"),
    (dict(specs=["race", "smoke"], type="response"), "race_smoke_response", "prob"),
    (dict(specs="race", at={"age": 30}), "race_at30", "emmean"),
    (dict(specs="smoke", level=0.90), "smoke_level90", "emmean"),
])
def test_means_by_at_level(logit, ref, call, key, col):
    check(gc.emmeans(logit, **call).summary_frame(), ref["birthwt"][key], [col, *MEAN_COLS])


@pytest.mark.parametrize("weights, key", [("proportional", "proportional"),
                                          ("outer", "outer"), ("cells", "cells")])
def test_weights(logit, ref, weights, key):
    frame = gc.emmeans(logit, "race", weights=weights).summary_frame()
    check(frame, ref["birthwt"]["weights"][key], ["emmean", *MEAN_COLS])


@pytest.mark.parametrize("weights", ["equal", "proportional", "outer", "cells"])
def test_weights_over_two_interacting_factors(birthwt, ref, weights):
    """Means of ht averaged over race and smoke, which interact: "outer" (products of the
    margins) and "proportional" (the joint frequencies) differ."""
    want = ref["birthwt"]["weights3"]
    res = gc.Logit.from_formula(want["formula"], birthwt).fit()
    frame = gc.emmeans(res, "ht", weights=weights).summary_frame()
    check(frame, want[weights], ["emmean", *MEAN_COLS])


def test_cells_weights_differ_by_level(logit, ref):
    frame = gc.emmeans(logit, "smoke", weights="cells").summary_frame()
    check(frame, ref["birthwt"]["weights"]["smoke_cells"], ["emmean", *MEAN_COLS])
    equal = gc.emmeans(logit, "smoke").summary_frame()
    assert np.max(np.abs(frame["emmean"] - equal["emmean"])) > 0.05


@pytest.mark.parametrize("cov_type", ["HC0", "HC3"])
def test_robust_covariance(birthwt, ref, cov_type):
    res = gc.Logit.from_formula(FORMULA, birthwt).fit(cov_type=cov_type)
    e = gc.emmeans(res, "race")
    assert e.cov_type == cov_type
    check(e.summary_frame(), ref["birthwt"]["robust"][cov_type], ["emmean", *MEAN_COLS])


@pytest.mark.parametrize("adjust", ["none", "tukey", "holm", "bonferroni", "sidak", "fdr"])
def test_pairwise_adjustments(logit, ref, adjust):
    frame = gc.emmeans(logit, "race").contrast("pairwise", adjust=adjust).summary_frame()
    assert list(frame.columns) == ["contrast", "estimate", "SE", "df", "asymp.LCL",
                                   "asymp.UCL", "z.ratio", "p.value"]
    check(frame, ref["birthwt"]["contrasts"][f"pairwise_{adjust}"],
          ["estimate", *CONTRAST_COLS])


@pytest.mark.parametrize("method", ["revpairwise", "trt.vs.ctrl", "consec", "poly", "eff"])
def test_contrast_methods(logit, ref, method):
    frame = gc.emmeans(logit, "race").contrast(method, adjust="none").summary_frame()
    check(frame, ref["birthwt"]["contrasts"][f"{method}_none"], ["estimate", *CONTRAST_COLS])


def test_odds_ratios_on_the_response_scale(logit, ref):
    frame = gc.emmeans(logit, "race", type="response").contrast("pairwise", "tukey")
    check(frame.summary_frame(), ref["birthwt"]["contrasts"]["pairwise_response_tukey"],
          ["odds.ratio", *CONTRAST_COLS])


def test_contrasts_within_by_groups_and_formula_specs(logit, ref):
    want = ref["birthwt"]["contrasts"]["pairwise_by_smoke_tukey"]
    by = gc.emmeans(logit, "race", by="smoke").contrast("pairwise", "tukey")
    check(by.summary_frame(), want, ["estimate", *CONTRAST_COLS])
    e = gc.emmeans(logit, "pairwise ~ race | smoke")  # default adjustment: tukey
    check(e.contrasts.summary_frame(), ref["birthwt"]["contrasts"]["formula_spec"],
          ["estimate", *CONTRAST_COLS])


@pytest.mark.parametrize("method, key", [("pairwise", "pairwise_mvt"),
                                         ("trt.vs.ctrl", "pairwise_mvt_trt")])
def test_mvt_within_monte_carlo_error(logit, ref, method, key):
    """R's mvtnorm integrates to an absolute error of 1e-3 (emmeans' default), ours to 1e-5.
    For unequal standard errors mvt is the exact simultaneous adjustment that Tukey-Kramer
    approximates, so the two differ (here by ~5e-4)."""
    e = gc.emmeans(logit, "race")
    frame = e.contrast(method, "mvt").summary_frame()
    want = ref["birthwt"]["contrasts"][key]
    check(frame, want, ["estimate", "SE", "z.ratio"], skip=("p.value", "asymp.LCL", "asymp.UCL"))
    for col in ("p.value", "asymp.LCL", "asymp.UCL"):
        np.testing.assert_allclose(frame[col], want[col], rtol=0, atol=1e-3, err_msg=col)


def test_joint_tests(logit, ref):
    frame = gc.joint_tests(logit)
    assert list(frame.columns) == ["model term", "df1", "df2", "F.ratio", "Chisq", "p.value"]
    check(frame, ref["birthwt"]["joint_tests"], ["F.ratio", "Chisq", "p.value"])
    terms = logit.wald_test_terms()  # one-df terms are the coefficients' own Wald tests
    assert frame["Chisq"].iloc[2] == pytest.approx(terms.loc["age", "statistic"], rel=1e-10)


# --- other links and families --------------------------------------------------------------------
@pytest.mark.parametrize("name, link", [("probit", gc.links.Probit()),
                                        ("cloglog", gc.links.CLogLog())])
def test_other_binomial_links(birthwt, ref, name, link):
    res = gc.GLM.from_formula(FORMULA, birthwt, family=gc.families.Binomial(link=link)).fit(
        information="expected")  # R's glm: the expected information
    check(gc.emmeans(res, "race").summary_frame(), ref["birthwt"]["links"][name]["race"],
          ["emmean", *MEAN_COLS])
    response = gc.emmeans(res, "race", type="response")
    check(response.summary_frame(), ref["birthwt"]["links"][name]["race_response"],
          ["prob", *MEAN_COLS])
    # a contrast of a probit or cloglog mean stays on the link scale (emmeans' note)
    assert "estimate" in response.contrast("pairwise", "none").summary_frame()


def test_gaussian_uses_t(birthwt, ref):
    res = gc.GLM.from_formula("bwt ~ C(race) * C(smoke) + age", birthwt,
                              family=gc.families.Gaussian()).fit()
    frame = gc.emmeans(res, "race", type="response").summary_frame()
    assert list(frame.columns)[-2:] == ["lower.CL", "upper.CL"]
    check(frame, ref["birthwt"]["gaussian"]["race"], ["emmean", "SE", "lower.CL", "upper.CL"])
    check(gc.joint_tests(res), ref["birthwt"]["gaussian"]["joint_tests"],
          ["F.ratio", "Chisq", "p.value"])


def test_poisson_rates_and_ratios(poisson, ref):
    wb = ref["warpbreaks"]
    check(gc.emmeans(poisson, "tension").summary_frame(), wb["tension"], ["emmean", *MEAN_COLS])
    rates = gc.emmeans(poisson, "tension", type="response")
    check(rates.summary_frame(), wb["tension_response"], ["rate", *MEAN_COLS])
    check(gc.emmeans(poisson, "wool", by="tension", type="response").summary_frame(),
          wb["wool_by_tension"], ["rate", *MEAN_COLS])
    # R's ptukey and scipy's studentized range agree to 1e-6 relative down to p ~ 1e-9
    check(rates.contrast("pairwise", "tukey").summary_frame(), wb["pairs_response_tukey"],
          ["ratio", "SE", "asymp.LCL", "asymp.UCL", "z.ratio", "p.value"], atol=1e-12)
    check(gc.emmeans(poisson, "tension").contrast("pairwise", "holm").summary_frame(),
          wb["pairs_link_holm"], ["estimate", *CONTRAST_COLS])
    check(gc.joint_tests(poisson), wb["joint_tests"], ["F.ratio", "Chisq", "p.value"])


# --- several outcome levels ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def mnlogit():
    hs = pd.read_csv(REF / "data" / "housing.csv")
    hs["Sat"] = pd.Categorical(hs["Sat"], categories=["Low", "Medium", "High"], ordered=True)
    return gc.MNLogit.from_formula("Sat ~ Infl + Type + Cont", hs,
                                   freq_weights=hs["Freq"]).fit()


def test_multinomial_probabilities(mnlogit, ref):
    mn = ref["multinom"]
    np.testing.assert_allclose(mnlogit.params.T, mn["coef"], rtol=1e-7)  # nnet, polished
    frame = gc.emmeans(mnlogit, "Sat", by="Infl", mode="prob").summary_frame()
    check(frame, mn["infl_prob"], ["prob", *MEAN_COLS])
    np.testing.assert_allclose(frame.groupby("Infl")["prob"].sum(), 1.0, rtol=1e-12)
    check(gc.emmeans(mnlogit, "Type | Sat").summary_frame(), mn["type_prob"],
          ["prob", *MEAN_COLS])
    pairs = gc.emmeans(mnlogit, "Infl | Sat").contrast("pairwise", "none")
    check(pairs.summary_frame(), mn["infl_pairs"], ["estimate", *CONTRAST_COLS])


def test_multinomial_mean_class_is_the_weighted_probabilities(mnlogit):
    probs = gc.emmeans(mnlogit, "Sat", by="Infl").summary_frame()
    mean = gc.emmeans(mnlogit, "Infl", mode="mean.class").summary_frame()
    want = (probs["prob"] * np.tile([1.0, 2.0, 3.0], 3)).groupby(probs["Infl"]).sum()
    np.testing.assert_allclose(mean.set_index("Infl")["mean.class"], want, rtol=1e-12)


def test_joint_tests_refuse_several_outcomes(mnlogit):
    with pytest.raises(ValueError, match="wald_test_terms"):
        gc.joint_tests(mnlogit)


# --- BayesLogit and Dask -------------------------------------------------------------------------
def test_bayeslogit_uses_the_posterior(birthwt):
    res = gc.BayesLogit.from_formula(FORMULA, birthwt, prior_scale=2.5).fit()
    e = gc.emmeans(res, "race")
    grid = pd.DataFrame([(r, s, birthwt["age"].mean()) for r in ("black", "other", "white")
                         for s in (0, 1)], columns=["race", "smoke", "age"])
    X = res.model.data.design(grid)
    L = np.kron(np.eye(3), np.full((1, 2), 0.5)) @ X  # equal weights over smoke
    b, V = res.params.to_numpy(), res.cov_params().to_numpy()
    np.testing.assert_allclose(e.estimate, L @ b, rtol=1e-12)
    np.testing.assert_allclose(e.se, np.sqrt(np.diag(L @ V @ L.T)), rtol=1e-12)


def test_dask_fit_equals_in_memory(birthwt):
    import dask
    import dask.dataframe as dd

    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gc.Logit.from_formula(FORMULA, birthwt).fit(cov_type="HC0")
        b = gc.Logit.from_formula(FORMULA, dd.from_pandas(birthwt, npartitions=4)).fit(
            cov_type="HC0")
        for kw in (dict(specs="race", by="smoke", type="response"),
                   dict(specs="smoke", weights="cells"), dict(specs="race", weights="outer")):
            fa, fb = gc.emmeans(a, **kw).summary_frame(), gc.emmeans(b, **kw).summary_frame()
            num = fa.select_dtypes("number").columns
            np.testing.assert_allclose(fb[num], fa[num], rtol=1e-10)
        np.testing.assert_allclose(gc.joint_tests(b)["Chisq"], gc.joint_tests(a)["Chisq"],
                                   rtol=1e-10)


def test_dask_multinomial_equals_in_memory():
    import dask
    import dask.dataframe as dd

    hs = pd.read_csv(REF / "data" / "housing.csv")
    hs["Sat"] = pd.Categorical(hs["Sat"], categories=["Low", "Medium", "High"], ordered=True)
    ddf = dd.from_pandas(hs, npartitions=3)
    with dask.config.set(scheduler="sync"):
        a = gc.MNLogit.from_formula("Sat ~ Infl + Type + Cont", hs,
                                    freq_weights=hs["Freq"]).fit()
        b = gc.MNLogit.from_formula("Sat ~ Infl + Type + Cont", ddf,
                                    freq_weights=ddf["Freq"]).fit()
        for kw in (dict(specs="Sat | Infl"), dict(specs="Infl", weights="cells",
                                                  mode="mean.class")):
            fa, fb = gc.emmeans(a, **kw).summary_frame(), gc.emmeans(b, **kw).summary_frame()
            num = fa.select_dtypes("number").columns
            np.testing.assert_allclose(fb[num], fa[num], rtol=1e-10)


# --- the grid, plots and errors ------------------------------------------------------------------
def test_two_valued_covariate_is_kept_as_its_values(birthwt):
    """emmeans' cov.keep = "2": a numeric 0/1 column is a grid dimension (averaged with equal
    weights), not held at its mean."""
    res = gc.Logit.from_formula("low ~ C(race) + ht", birthwt).fit()
    by_ht = gc.emmeans(res, "race", by="ht").summary_frame()
    assert sorted(set(by_ht["ht"])) == [0.0, 1.0]
    avg = gc.emmeans(res, "race").summary_frame()
    np.testing.assert_allclose(avg["emmean"],
                               by_ht.groupby("race", sort=False)["emmean"].mean(), rtol=1e-12)


def test_covariate_values_as_a_grid_dimension(logit):
    """at={"age": [20, 30]} makes age a dimension: with age additive, the contrast of its two
    values is -10 times its coefficient, with that coefficient's standard error times 10."""
    e = gc.emmeans(logit, "age", by="race", at={"age": [20, 30]})
    frame = e.contrast("pairwise", "none").summary_frame()
    assert list(frame["contrast"]) == ["age20 - age30"] * 3
    np.testing.assert_allclose(frame["estimate"], -10 * logit.params["age"], rtol=1e-12)
    np.testing.assert_allclose(frame["SE"], 10 * logit.bse["age"], rtol=1e-12)


def test_plot_draws_one_interval_per_mean(logit):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = gc.emmeans(logit, "race", by="smoke", type="response").plot()
    assert len(ax.get_yticks()) == 6 and ax.get_xlabel().startswith("prob")
    plt.close(ax.figure)


@pytest.mark.parametrize("kwargs, match", [
    (dict(specs="race", type="mean"), "type must be"),
    (dict(specs="race", weights="flat"), "weights must be"),
    (dict(specs="height"), "'height' is not a variable"),
    (dict(specs="race", at={"race": "asian"}), "no level 'asian'"),
    (dict(specs="race", at={"bmi": 20}), "not variables of the formula"),
    (dict(specs="__import__('os').system('x') ~ race"), "left of '~'"),
    (dict(specs="pairwise ~ race; smoke"), "not a variable name"),
    (dict(specs="race", mode="prob"), "several outcome levels"),
    (dict(specs="race", level=95), "level must be"),
])
def test_errors_name_the_argument(logit, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gc.emmeans(logit, **kwargs)


def test_contrast_errors_and_array_models(logit, birthwt):
    e = gc.emmeans(logit, "race")
    with pytest.raises(ValueError, match="method must be"):
        e.contrast("all")
    with pytest.raises(ValueError, match="adjust must be"):
        e.contrast("pairwise", adjust="scheffe")
    arrays = gc.Logit(birthwt["low"], np.column_stack([np.ones(len(birthwt)),
                                                       birthwt["age"]])).fit()
    with pytest.raises(ValueError, match="from_formula"):
        gc.emmeans(arrays, "age")


# --- ordinal (proportional odds): emmeans' mode="prob" and mode="mean.class" ---------------------
@pytest.fixture(scope="module")
def ordinal():
    hs = pd.read_csv(REF / "data" / "housing.csv")
    hs["Sat"] = pd.Categorical(hs["Sat"], ["Low", "Medium", "High"], ordered=True)
    return gc.OrderedModel.from_formula("Sat ~ Infl + Type + Cont", hs,
                                        freq_weights=hs["Freq"]).fit()


@pytest.mark.parametrize("fit", ["polr", "clm"])
def test_ordinal_probabilities_by_level(ordinal, ref, fit):
    want = ref["ordinal"][fit]
    check(gc.emmeans(ordinal, "Sat", by="Infl").summary_frame(), want["infl_prob"],
          ["prob", *MEAN_COLS], skip=("z.ratio", "p.value"))


@pytest.mark.parametrize("fit", ["polr", "clm"])
def test_ordinal_mean_class(ordinal, ref, fit):
    want = ref["ordinal"][fit]
    check(gc.emmeans(ordinal, "Infl", mode="mean.class").summary_frame(),
          want["infl_mean_class"], ["mean.class", *MEAN_COLS], skip=("z.ratio", "p.value"))


@pytest.mark.parametrize("fit", ["polr", "clm"])
def test_ordinal_pairwise_probabilities(ordinal, ref, fit):
    want = ref["ordinal"][fit]
    got = gc.emmeans(ordinal, "Infl | Sat").contrast("pairwise", adjust="none").summary_frame()
    check(got, want["infl_pairs_prob"], ["estimate", *CONTRAST_COLS], atol=1e-12)


# --- the formulaic engine ----------------------------------------------------------------------
@pytest.mark.parametrize("formula", [FORMULA, "low ~ C(race, Sum) + C(smoke) + center(age) + "
                                              "I(age**2)"])
def test_formulaic_fit_gives_the_patsy_fits_numbers(birthwt, formula, ref):
    """emmeans reads the factors of formulaic's model spec as of patsy's design: the same
    design, estimates, grid, means, contrasts and joint tests, to the bit."""
    a = gc.Logit.from_formula(formula, birthwt).fit()
    b = gc.Logit.from_formula(formula, birthwt, engine="formulaic").fit()
    np.testing.assert_array_equal(a.model.exog, b.model.exog)
    for specs, kwargs in (("race", {}), ("race", {"type": "response", "weights": "cells"}),
                          ("pairwise ~ race | smoke", {}), (["race", "smoke"], {})):
        ea, eb = gc.emmeans(a, specs, **kwargs), gc.emmeans(b, specs, **kwargs)
        pd.testing.assert_frame_equal(eb.summary_frame(), ea.summary_frame(), check_exact=True)
        pd.testing.assert_frame_equal(eb.contrast("pairwise", adjust="holm").summary_frame(),
                                      ea.contrast("pairwise", adjust="holm").summary_frame(),
                                      check_exact=True)
    pd.testing.assert_frame_equal(gc.joint_tests(b), gc.joint_tests(a), check_exact=True)
    if formula == FORMULA:  # and R's numbers
        check(gc.emmeans(b, "race").summary_frame(), ref["birthwt"]["race"],
              ["emmean", *MEAN_COLS])


def test_formulaic_derived_factor_is_refused_by_name(birthwt):
    res = gc.Logit.from_formula("low ~ C(age > 25) + C(race)", birthwt, engine="formulaic").fit()
    with pytest.raises(ValueError, match=r"categorical term 'C\(age > 25\)' is an expression"):
        gc.emmeans(res, "race")
