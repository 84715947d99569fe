"""GLM, Logit and Probit against R's glm through the committed reference JSON.

``tests/reference/glm.json`` is written by ``tests/reference/generate.R`` (R's ``glm`` with
``epsilon`` as recorded per case, then polished to a score below 1e-11); every number here must
agree to 1e-6 relative or better (most agree to ~1e-12).
"""

from __future__ import annotations

import json
import re
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "glm.json").read_text())["cases"]
RTOL = 1e-6
FAMILY = {"binomial": gc.families.Binomial, "gaussian": gc.families.Gaussian,
          "poisson": gc.families.Poisson}
LINK = {"logit": gc.links.Logit, "probit": gc.links.Probit, "cloglog": gc.links.CLogLog,
        "loglog": gc.links.LogLog, "cauchit": gc.links.Cauchit, "log": gc.links.Log,
        "identity": gc.links.Identity}


def rel(a, b) -> float:
    """Largest relative difference; NaN (aliased) must sit at the same places."""
    a, b = np.asarray(a, dtype=float), np.asarray(np.where(np.equal(b, None), np.nan, b),
                                                  dtype=float)
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    m = ~np.isnan(a)
    if not m.any():
        return 0.0
    den = np.where(b[m] == 0, 1.0, np.abs(b[m]))  # an exact 0 (p < 1e-300) must be ~0 here
    return float(np.max(np.abs(a[m] - b[m]) / den))


def load(case: dict) -> pd.DataFrame:
    df = pd.read_csv(REF / "data" / f"{case['dataset']}.csv", keep_default_na=False,
                     na_values=[""])
    return df.assign(**{k: df[v] for k, v in case.get("derived_columns", {}).items()})


def kwargs(case: dict, df: pd.DataFrame) -> dict:
    kw = {"family": FAMILY[case["family"]](link=LINK[case["link"]]())}
    if "weights" in case:
        kind = "freq_weights" if case["name"].endswith("_freq") else "var_weights"
        kw[kind] = df[case["weights"]].to_numpy(dtype=float)
    if "offset" in case:
        col = re.fullmatch(r"log\((\w+)\)", case["offset"]).group(1)
        kw["offset"] = np.log(df[col].to_numpy(dtype=float))
    return kw


@cache
def fitted(name: str, information: str, tol: float | None):
    case = next(c for c in CASES if c["name"] == name)
    df = load(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.RankDeficientWarning)
        model = gc.GLM.from_formula(case["patsy_formula"], df, **kwargs(case, df))
        fit_kw = {"information": information}
        if tol is not None:
            fit_kw["tol"] = tol
        return case, df, model.fit(**fit_kw)


NAMES = [c["name"] for c in CASES]


def test_reference_covers_the_issue():
    links = {c["link"] for c in CASES if c["family"] == "binomial"}
    assert links == {"logit", "probit", "cloglog", "loglog", "cauchit"}
    assert {c["family"] for c in CASES} == {"binomial", "gaussian", "poisson"}
    assert any("offset" in c for c in CASES) and any(any(c["aliased"]) for c in CASES)
    assert any(c["name"].endswith("_freq") for c in CASES)


@pytest.mark.parametrize("name", NAMES)
def test_estimates_and_expected_information(name):
    case, df, res = fitted(name, "expected", case_tol(name))
    names = case["patsy_coef_names"]
    assert sorted(res.params.index) == sorted(names)  # patsy puts categorical terms first
    assert rel(res.params[names], case["coef"]) < RTOL
    assert rel(res.bse[names], case["se_expected"]) < RTOL
    assert rel(res.tvalues[names], case["stat"]) < RTOL
    assert rel(res.pvalues[names], case["pvalues"]) < RTOL
    keep = [n for n, a in zip(names, case["aliased"], strict=True) if not a]
    assert rel(res.cov_params().loc[keep, keep], case["cov_scaled"]) < RTOL
    assert res.aliased == [n for n, a in zip(names, case["aliased"], strict=True) if a]
    assert res.rank == case["rank"]
    assert res.converged is case["converged"]


@pytest.mark.parametrize("name", NAMES)
def test_observed_information(name):
    case, _, res = fitted(name, "observed", case_tol(name))
    names = case["patsy_coef_names"]
    assert rel(res.bse[names], case["se_observed"]) < RTOL


@pytest.mark.parametrize("name", NAMES)
def test_fit_statistics(name):
    case, _, res = fitted(name, "expected", case_tol(name))
    assert rel(res.deviance, case["deviance"]) < RTOL
    assert rel(res.null_deviance, case["null_deviance"]) < RTOL
    assert rel(res.llf, case["loglik"]) < RTOL
    assert rel(res.aic, case["aic"]) < RTOL
    assert rel(res.scale, case["dispersion"]) < RTOL
    assert res.k_params == case["loglik_df"]
    if name.endswith("_freq"):
        # R counts the rows; glmclass counts the replicated observations (API.md)
        n = float(load(case)[case["weights"]].sum())
        assert res.nobs == n and case["nobs"] == case["n_rows"]
        assert res.df_resid == n - case["rank"]
        assert rel(res.bic - case["bic"], case["loglik_df"] * (np.log(n) - np.log(case["nobs"]))
                   ) < RTOL
    else:
        assert res.nobs == case["nobs"]
        assert res.df_resid == case["df_residual"]
        assert rel(res.bic, case["bic"]) < RTOL
        assert res.df_model == case["df_null"] - case["df_residual"]


@pytest.mark.parametrize("name", NAMES)
def test_fitted_values_and_residuals(name):
    case, df, res = fitted(name, "expected", case_tol(name))
    k = len(case["fitted_head"])
    assert rel(res.fittedvalues.iloc[:k], case["fitted_head"]) < RTOL
    assert rel(res.fittedvalues.sum(), case["fitted_sum"]) < RTOL
    assert rel(res.linear_predictor.iloc[:k], case["linear_predictors_head"]) < RTOL
    for kind, ref in case["residuals_head"].items():
        assert rel(getattr(res, f"resid_{kind}").iloc[:k], ref) < RTOL, kind


@pytest.mark.parametrize("name", NAMES)
def test_predict_on_new_rows_through_the_formula(name):
    case, df, res = fitted(name, "expected", case_tol(name))
    new = df.head(5)
    offset = kwargs(case, df).get("offset")
    pred = res.predict(new, offset=None if offset is None else offset[:5])
    assert rel(pred, case["predict_response_head5"]) < RTOL
    np.testing.assert_array_equal(pred.index, new.index)


@pytest.mark.parametrize("name", NAMES)
def test_default_fit_reaches_r_estimates(name):
    """With the default tol=1e-10 the estimates still agree with R's polished fit."""
    case, _, res = fitted(name, "observed", None)
    names = case["patsy_coef_names"]
    assert rel(res.params[names], case["coef"]) < RTOL
    assert rel(res.bse[names], case["se_observed"]) < RTOL
    assert rel(res.llf, case["loglik"]) < 1e-9


def case_tol(name: str) -> float:
    return next(c for c in CASES if c["name"] == name)["control_epsilon"]
