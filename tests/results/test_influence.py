"""results.get_influence(): hat values, Cook's distances, standardized and studentized
residuals, DFBETA(S), DFFITS and covariance ratios against R (tests/reference/influence.json,
written by tests/reference/r/influence.R) and statsmodels' GLMInfluence."""

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
CASES = json.loads((REF / "influence.json").read_text())["cases"]
FAMILIES = {"binomial": gc.families.Binomial, "gaussian": gc.families.Gaussian,
            "poisson": gc.families.Poisson}


def fit_case(case):
    data = pd.read_csv(REF / "data" / f"{case['dataset']}.csv", keep_default_na=False,
                       na_values=[""])
    kw = {}
    if case.get("weights") is not None:
        kw["var_weights"] = np.asarray(case["weights"], dtype=float)
    if case.get("offset") is not None:
        kw["offset"] = np.asarray(case["offset"], dtype=float)
    family = FAMILIES[case["family"]](gc.links.get_link(case["link"]))
    return gc.GLM.from_formula(case["patsy_formula"], data, family=family, **kw).fit(
        tol=1e-14, maxiter=100)


def close(got, want, rtol=1e-9):
    """Relative agreement, measured against the largest value for entries near 0."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    scale = np.maximum(np.abs(want), 1e-6 * np.max(np.abs(want)))
    assert np.max(np.abs(got - want) / scale) <= rtol


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_r(case):
    res = fit_case(case)
    names = case["patsy_coef_names"]
    close(res.params[names], case["coef"], 1e-10)
    infl = res.get_influence()
    close(infl.hat_matrix_diag, case["hat"])
    close(infl.cooks_distance[0], case["cooks"])
    close(infl.resid_studentized_deviance, case["rstandard_dev"])
    close(infl.resid_studentized, case["rstandard_pear"])
    close(infl.resid_studentized_external, case["rstudent"])
    close(infl.dfbeta[names], case["dfbeta"])
    close(infl.dffits, case["dffits"])
    close(infl.cov_ratio, case["covratio"])
    im = infl.influence_measures()
    close(im[[f"dfb_{n}" for n in names]], case["dfbetas"])
    assert list(im.columns[-4:]) == ["dffit", "cov_r", "cook_d", "hat"]
    assert len(im.columns) == len(case["infmat_names"])
    close(im["dffit"], case["dffits"])
    close(im["cook_d"], case["cooks"])
    assert infl.k_vars == len(names)


SM_CASES = [
    ("GRADE ~ GPA + TUCE + PSI", "spector", sm.families.Binomial(), gc.families.Binomial()),
    ("low ~ age + lwt + race + smoke", "birthwt", sm.families.Binomial(),
     gc.families.Binomial()),
    ("bwt ~ age + lwt + race + smoke", "birthwt", sm.families.Gaussian(),
     gc.families.Gaussian()),
    ("ptl ~ age + lwt + smoke", "birthwt", sm.families.Poisson(), gc.families.Poisson()),
]


@pytest.mark.parametrize("formula,dataset,sm_family,family", SM_CASES,
                         ids=["logit", "logit_race", "gaussian", "poisson"])
def test_matches_statsmodels_glm_influence(formula, dataset, sm_family, family):
    data = gc.datasets.load(dataset)
    ref = smf.glm(formula, data, family=sm_family).fit(tol=1e-14, maxiter=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' own notes on its influence code
        si = ref.get_influence()
        want = si.summary_frame()
        d_params, pvalues = si.d_params, si.cooks_distance[1]
    infl = gcf.glm(formula, data, family=family).fit(tol=1e-14, maxiter=100).get_influence()
    got = infl.summary_frame()
    assert list(got.columns) == list(want.columns)
    close(got, want, 1e-8)
    close(infl.d_params, d_params, 1e-8)
    close(infl.params_one, ref.params.to_numpy() - d_params, 1e-10)
    close(infl.cooks_distance[1], pvalues, 1e-8)


def test_gaussian_one_step_is_the_exact_deletion():
    """For a linear model the one-step change is exact: refit without each row."""
    data = gc.datasets.load("spector")
    res = gcf.glm("GPA ~ TUCE + PSI", data, family=gc.families.Gaussian()).fit()
    d = res.get_influence().d_params
    for i in (0, 7, 31):
        drop = gcf.glm("GPA ~ TUCE + PSI", data.drop(index=i),
                       family=gc.families.Gaussian()).fit()
        np.testing.assert_allclose(d.loc[i], res.params - drop.params, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d, res.get_influence().dfbeta, rtol=1e-12)  # d = r for Gaussian


def test_structure_zero_weights_and_aliased_columns():
    data = gc.datasets.load("spector").assign(GPA2=lambda d: 2 * d.GPA)
    w = np.ones(32)
    w[3] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.RankDeficientWarning)
        res = gcf.logit("GRADE ~ GPA + GPA2 + PSI", data, var_weights=w).fit()
    infl = res.get_influence()
    assert list(infl.d_params.columns) == ["Intercept", "GPA", "PSI"]  # aliased GPA2 left out
    assert infl.hat_matrix_diag.sum() == pytest.approx(3.0, rel=1e-12)  # the rank
    for s in (infl.hat_matrix_diag, infl.cooks_distance[0], infl.resid_studentized,
              infl.resid_studentized_external, infl.dffits, infl.cov_ratio):
        assert np.isnan(s.iloc[3]) and s.drop(index=3).notna().all()
    assert infl.d_params.iloc[3].isna().all()
    # the weight-0 row is left out: the same numbers as the fit without it
    ref = gcf.logit("GRADE ~ GPA + PSI", data.drop(index=3)).fit().get_influence()
    close(infl.cooks_distance[0].drop(index=3), ref.cooks_distance[0], 1e-8)
    close(infl.dffits.drop(index=3), ref.dffits, 1e-8)
    assert repr(infl) == "<GLMInfluence: 31 rows, 3 coefficients>"


def test_newton_fit_and_labels():
    data = gc.datasets.load("spector").set_axis([f"s{i}" for i in range(32)])
    a = gcf.probit("GRADE ~ GPA + PSI", data).fit(method="newton").get_influence()
    b = gcf.probit("GRADE ~ GPA + PSI", data).fit().get_influence()
    assert list(a.hat_matrix_diag.index[:2]) == ["s0", "s1"]
    close(a.influence_measures(), b.influence_measures(), 1e-7)


def test_a_row_fit_exactly_gives_nan_not_inf():
    """A level seen in one row only has hat value 1: R's measures are NaN there."""
    data = gc.datasets.load("spector").assign(g=["a"] * 31 + ["b"])
    res = gcf.glm("GPA ~ TUCE + C(g)", data, family=gc.families.Gaussian()).fit()
    infl = res.get_influence()
    assert infl.hat_matrix_diag.iloc[31] == 1.0
    for s in (infl.resid_studentized, infl.resid_studentized_deviance, infl.cooks_distance[0],
              infl.resid_studentized_external, infl.dffits, infl.cov_ratio):
        assert np.isnan(s.iloc[31]) and np.isfinite(s.iloc[:31]).all()
    assert (infl.dfbeta.iloc[31] == 0).all()
