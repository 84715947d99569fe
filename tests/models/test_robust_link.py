"""The registered robust logit link, gc.links.RobustLogit(eps), against R's glm with the same
link-glm object (tests/reference/custom_link.json), and the profile likelihood over eps,
including the JSON's finding that on birthwt there is no interior maximum and that beyond
eps ~ 0.1085 glm's fit is a local maximum only."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf

REF = Path(__file__).resolve().parents[1] / "reference"
JSON = json.loads((REF / "custom_link.json").read_text())
CASES = JSON["cases"]
PROFILE = JSON["profiles"][0]


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])


def _model(case: dict, eps: float):
    df = _data(case["dataset"])
    kw = {}
    if "weights" in case:
        kw["var_weights"] = df[case["weights"]].to_numpy(float)
    if "offset" in case:
        kw["offset"] = -0.015 * df["lwt"].to_numpy(float)
    fam = gc.families.Binomial(link=gc.links.RobustLogit(eps))
    return gc.GLM.from_formula(case["patsy_formula"], df, family=fam, **kw)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_robust_logit_agrees_with_r_glm(case):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = _model(case, case["eps"]).fit(tol=1e-14, maxiter=100, information="expected")
    names = case["patsy_coef_names"]
    np.testing.assert_allclose(res.params[names], case["coef"], rtol=1e-8)
    np.testing.assert_allclose(res.bse[names], case["se_expected"], rtol=1e-7)
    assert res.deviance == pytest.approx(case["deviance"], rel=1e-10)
    assert res.null_deviance == pytest.approx(case["null_deviance"], rel=1e-9)
    assert res.llf == pytest.approx(case["loglik"], rel=1e-10)
    assert res.aic == pytest.approx(case["aic"], rel=1e-10)
    np.testing.assert_allclose(res.fittedvalues, case["fitted"], rtol=1e-8)
    assert "robust_logit" in str(res.summary())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_observed_information_uses_the_exact_second_derivative(case):
    res = _model(case, case["eps"]).fit(tol=1e-14, maxiter=100, information="observed",
                                        method="newton")
    names = case["patsy_coef_names"]
    np.testing.assert_allclose(res.params[names], case["coef"], rtol=1e-8)
    # R's observed information (d2mu/deta2 in closed form, checked by a numeric Jacobian)
    np.testing.assert_allclose(res.bse[names], case["se_observed"], rtol=1e-8)


def test_score_in_eps_matches_r():
    from glmclass.models.robust_link import score_eps

    for case in CASES:
        res = _model(case, case["eps"]).fit(tol=1e-14, maxiter=100)
        assert score_eps(res) == pytest.approx(case["eps_score"], rel=1e-7)


def test_the_link_itself():
    lk = gc.links.RobustLogit(0.1)
    assert lk.range == (0.1, 0.9) and lk.canonical is None and lk.name == "robust_logit"
    assert lk == gc.links.RobustLogit(0.1) and lk != gc.links.RobustLogit(0.2)
    assert hash(lk) == hash(gc.links.RobustLogit(0.1))
    assert gc.links.get_link("robust_logit") == gc.links.RobustLogit(0.05)
    eta = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    np.testing.assert_allclose(lk.log_inverse(eta), np.log(lk.inverse(eta)), rtol=1e-15)
    assert lk.log_inverse(eta)[0] == pytest.approx(np.log(0.1), rel=1e-15)
    assert lk.log_inverse_c(eta)[-1] == pytest.approx(np.log(0.1), rel=1e-15)
    assert np.isnan(lk.link(np.array([0.05]))[0])  # outside (eps, 1 - eps)
    fam = gc.families.Binomial(link=lk)
    assert fam.link_stays_inside and not fam.is_canonical


@pytest.mark.parametrize("bad", [0.0, 0.5, -0.1, 0.7, np.nan, np.inf, "0.1", True, None])
def test_eps_outside_the_open_interval_is_an_error_naming_eps(bad):
    with pytest.raises(ValueError, match="eps"):
        gc.links.RobustLogit(bad)


# --- profile likelihood ----------------------------------------------------------------------
def _birthwt():
    return gcf.logit(PROFILE["patsy_formula"], _data("birthwt"))


def _r_direction() -> pd.Series:
    names = dict(zip(CASES[0]["coef_names"], CASES[0]["patsy_coef_names"], strict=True))
    lim = PROFILE["limit"]
    return pd.Series(lim["direction"], index=[names[n] for n in lim["direction_names"]])


def test_profile_matches_r_and_reports_the_boundary_and_the_local_maxima():
    grid = PROFILE["grid"]
    with pytest.warns(gc.GlmclassWarning) as rec:
        prof = gc.robust_logit_profile(_birthwt(), eps=grid["eps"], direction=_r_direction())
    t = prof.table
    np.testing.assert_array_equal(t["converged"], grid["glm_converged"])
    ok = np.array(grid["glm_converged"])

    def r(key: str) -> np.ndarray:
        return np.array(grid[key], dtype=float)[ok]

    np.testing.assert_allclose(t["deviance"][ok], r("deviance"), rtol=1e-12)
    np.testing.assert_allclose(t["llf"][ok], r("loglik"), rtol=1e-12)
    np.testing.assert_allclose(t["score_eps"][ok], r("eps_score"), rtol=1e-9)
    np.testing.assert_allclose(t["limit_deviance"], grid["limit_deviance"], rtol=1e-12)
    np.testing.assert_array_equal(t["local_only"], grid["local_only"])
    assert prof.limit_eps == pytest.approx(PROFILE["limit"]["crossover_eps"], rel=1e-9)
    # no interior maximum: the largest usable value is at the smallest eps, and it says so
    assert prof.boundary == "lower" and prof.eps == grid["eps"][0]
    msg = str(rec[0].message)
    assert "no interior maximum" in msg and "local maximum only" in msg and "0.108529" in msg
    assert not t["usable"][np.array(grid["local_only"])].any()


def test_profile_argmax_at_the_lower_end_as_r_optimize():
    arg = PROFILE["argmax"]
    with pytest.warns(gc.GlmclassWarning, match="no interior maximum"):
        prof = gc.robust_logit_profile(_birthwt(), eps=[1e-4, 1e-3, 0.01, 0.05, 0.1])
    assert prof.boundary == "lower" and prof.eps == 1e-4
    # R's optimize stopped at eps = 1e-4 + 3.8e-11: the same fit to ~1e-9
    assert prof.llf == pytest.approx(arg["loglik"], rel=1e-9)
    names = dict(zip(CASES[0]["coef_names"], CASES[0]["patsy_coef_names"], strict=True))
    coef = prof.results.params[[names[n] for n in arg["coef_names"]]]
    np.testing.assert_allclose(coef, arg["coef"], rtol=1e-6)
    # the fits tend to the plain logit as eps -> 0
    assert prof.table["llf"].iloc[0] < PROFILE["logit_eps0"]["loglik"]


def test_profile_without_a_known_direction_still_flags_local_maxima_soundly():
    with pytest.warns(gc.GlmclassWarning, match="local maximum only"):
        prof = gc.robust_logit_profile(_birthwt(), eps=PROFILE["grid"]["eps"])
    flagged = prof.table["local_only"].to_numpy()
    r_flagged = np.array(PROFILE["grid"]["local_only"])
    assert flagged.any() and not (flagged & ~r_flagged).any()  # sound: never a false alarm
    assert prof.limit_eps >= PROFILE["limit"]["crossover_eps"]


def test_profile_finds_an_interior_maximum_when_labels_are_flipped():
    rng = np.random.default_rng(7)
    n = 3000
    x = rng.normal(size=(n, 2))
    p = 0.1 + 0.8 / (1 + np.exp(-(0.5 + 2.5 * x[:, 0] - 2.0 * x[:, 1])))
    y = (rng.uniform(size=n) < p).astype(float)
    model = gc.GLM(y, np.column_stack([np.ones(n), x]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an interior optimum: no warning
        prof = gc.robust_logit_profile(model, eps=np.arange(1, 21) / 100)
    assert prof.boundary is None and 0.06 < prof.eps < 0.14
    assert "interior maximum" in prof.message
    # refined between grid points: the profile's slope in eps vanishes there
    from glmclass.models.robust_link import score_eps

    assert abs(score_eps(prof.results)) < 1e-3
    assert prof.llf >= prof.table["llf"].max()


def test_profile_bad_arguments():
    with pytest.raises(ValueError, match=r"eps\[1\]"):
        gc.robust_logit_profile(_birthwt(), eps=[0.1, 0.6])
    with pytest.raises(ValueError, match="eps"):
        gc.robust_logit_profile(_birthwt(), eps=[0.1])
    with pytest.raises(TypeError, match="model"):
        gc.robust_logit_profile(gc.MNLogit([0, 1, 2, 0], np.ones((4, 1))))
    with pytest.raises(ValueError, match="direction"):
        gc.robust_logit_profile(_birthwt(), eps=[0.01, 0.02], direction=[1.0, 2.0])
