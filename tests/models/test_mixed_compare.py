"""Comparisons of mixed fits (gc.lrtest, gc.anova, gc.compare) against lme4's anova
(tests/reference/r/mixed_profile.R -> mixed_profile.json): GLM against GLMM by the Laplace
approximation and by adaptive quadrature, and GLMM against GLMM.

With nAGQ > 1 lme4's logLik leaves out the saturated log-likelihood, and its anova refuses a
glm against such a fit; glmclass adds the constant back (``llf_marginal``) and says so. The
references for those cells are lme4's logLik plus the saturated log-likelihood, computed in R.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass import families as F

REF = Path(__file__).resolve().parents[1] / "reference"
R = json.loads((REF / "mixed_profile.json").read_text())
CBPP = "cbind(incidence, size - incidence) ~ C(period)"
POIS = "y ~ x + offset(np.log(t))"


@cache
def data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv")


@cache
def glm(name: str):
    formula, family = (CBPP, F.Binomial()) if name == "cbpp" else (POIS, F.Poisson())
    return gc.GLM.from_formula(formula, data("cbpp" if name == "cbpp" else "mixed_poisson"),
                               family=family).fit()


@cache
def glmm(name: str, nagq: int = 1, fixed: str | None = None):
    formula, family = (CBPP, F.Binomial()) if name == "cbpp" else (POIS, F.Poisson())
    group = "herd" if name == "cbpp" else "g"
    if fixed is not None:
        formula = formula.split("~")[0] + "~ " + fixed
    return gc.MixedGLM.from_formula(f"{formula} + (1 | {group})",
                                    data("cbpp" if name == "cbpp" else "mixed_poisson"),
                                    family=family).fit(nagq=nagq)


@pytest.mark.parametrize("name", ["cbpp", "poisson"])
def test_lrtest_glm_against_laplace_glmm_is_lme4s_anova(name):
    ref = R[name]["laplace"]
    assert glm(name).llf == pytest.approx(R[name]["glm_loglik"], rel=1e-10)
    lr = gc.lrtest(glm(name), glmm(name))
    assert lr.df == ref["Df"] == 1
    assert lr.statistic == pytest.approx(ref["Chisq"], rel=1e-6)
    assert lr.pvalue == pytest.approx(ref["p"], rel=1e-5)
    assert "boundary" in lr.note and "nAGQ" not in lr.note
    assert "conservative" in str(lr)


@pytest.mark.parametrize("name", ["cbpp", "poisson"])
def test_lrtest_glm_against_quadrature_glmm_on_one_footing(name):
    """lme4's anova refuses this pair; lme4's logLik plus the saturated log-likelihood is the
    comparable number (chi2 14.09 on cbpp, not the 98.05 of lme4's llf)."""
    assert "incommensurate" in R[name]["agq10_refused"]
    res = glmm(name, 10)
    assert res.llf_saturated == pytest.approx(R[name]["saturated_loglik"], rel=1e-10)
    assert res.llf_marginal == pytest.approx(R[name]["agq10_loglik"], rel=1e-8)
    lr = gc.lrtest(glm(name), res)
    assert lr.statistic == pytest.approx(R[name]["agq10_chisq"], rel=1e-6)
    assert "nAGQ = 10" in lr.note and "saturated" in lr.note
    table = gc.anova(glm(name), res)
    assert table["deviance_diff"].iloc[1] == pytest.approx(lr.statistic, rel=1e-12)
    assert table["deviance"].iloc[1] == pytest.approx(-2 * R[name]["agq10_loglik"], rel=1e-8)
    assert "nAGQ = 10" in table.to_text()
    # the Laplace fit's llf needs no constant
    assert glmm(name).llf_marginal == glmm(name).llf


@pytest.mark.parametrize("fmt", ["safe", "pickle"])
def test_quadrature_glmm_saved_without_rows_compares_on_the_same_footing(fmt, tmp_path):
    """The saturated log-likelihood was recomputed from the model's rows: a fit saved with
    remove_data=True gave 0 for it, and lrtest said chi2 98.05 under a note saying the
    constant was included. The fit record keeps it."""
    res = glmm("cbpp", 10)
    path = tmp_path / "m.glmc"
    res.save(path, remove_data=True, **({"format": "pickle"} if fmt == "pickle" else {}))
    loaded = gc.load(path, **({"trusted": True} if fmt == "pickle" else {}))
    assert loaded.llf_saturated == res.llf_saturated
    assert gc.lrtest(glm("cbpp"), loaded).statistic == pytest.approx(
        R["cbpp"]["agq10_chisq"], rel=1e-6)


def test_anova_of_two_glmms_is_lme4s():
    ref = R["cbpp"]["glmm_vs_glmm"]
    small, big = glmm("cbpp", fixed="1"), glmm("cbpp")
    table = gc.anova(small, big)
    np.testing.assert_allclose(table["deviance"], ref["deviance"], rtol=1e-7)
    assert table["df"].iloc[1] == ref["Df"] == 3
    assert table["deviance_diff"].iloc[1] == pytest.approx(ref["Chisq"], rel=1e-6)
    assert table["pvalue"].iloc[1] == pytest.approx(ref["p"], rel=1e-5)
    assert table.attrs["notes"] == []  # the same random effects: no variance tested
    lr = gc.lrtest(small, big)
    assert lr.note == "" and lr.statistic == pytest.approx(ref["Chisq"], rel=1e-6)


def test_compare_counts_npar_and_labels_the_marginal_likelihood():
    ref = R["cbpp"]["laplace"]
    table = gc.compare([glm("cbpp"), glmm("cbpp")], names=["glm", "glmm"])
    assert "df_model" not in table and table.attrs["likelihood"] == "marginal"
    np.testing.assert_array_equal(table.loc[["glm", "glmm"], "npar"], ref["npar"])
    np.testing.assert_allclose(table.loc[["glm", "glmm"], "llf"], ref["logLik"], rtol=1e-8)
    np.testing.assert_allclose(table.loc[["glm", "glmm"], "aic"], ref["AIC"], rtol=1e-8)
    np.testing.assert_allclose(table.loc[["glm", "glmm"], "bic"], ref["BIC"], rtol=1e-8)
    text = table.to_text()
    assert "marginal log-likelihood" in text and "conditional log-likelihood" not in text
    assert "Note" not in text
    # a quadrature fit enters on the same footing, and the table says so
    quad = gc.compare([glm("cbpp"), glmm("cbpp", 10)], names=["glm", "agq10"])
    assert quad.loc["agq10", "aic"] == pytest.approx(R["cbpp"]["agq10_aic"], rel=1e-8)
    assert quad.loc["agq10", "bic"] == pytest.approx(R["cbpp"]["agq10_bic"], rel=1e-8)
    assert "nAGQ = 10" in quad.to_text()
    # tables without a mixed fit keep df_model and their label
    plain = gc.compare([glm("cbpp")])
    assert "df_model" in plain and plain.attrs["likelihood"] == "conditional"
