"""A user-defined link is one frozen dataclass, and a binomial GLM fit with it agrees with R's
``glm`` given the same ``link-glm`` object (tests/reference/custom_link.json, generate.R)."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from scipy import special

import glmclass as gc

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = json.loads((REF / "custom_link.json").read_text())["cases"]


@dataclass(frozen=True)
class MislabelLogit(gc.links.Link):
    """mu = eps + (1 - 2 eps) sigma(eta), written as a user would: the three functions of R's
    ``make.link`` and nothing else (the second derivative comes from the base class)."""

    eps: float = 0.05
    name: ClassVar[str] = "mislabel_logit"

    @property
    def range(self) -> tuple[float, float]:
        return (self.eps, 1.0 - self.eps)

    def link(self, mu):
        return special.logit((np.asarray(mu, dtype=float) - self.eps) / (1.0 - 2.0 * self.eps))

    def inverse(self, eta):
        return self.eps + (1.0 - 2.0 * self.eps) * special.expit(eta)

    def mu_eta(self, eta):
        s = special.expit(eta)
        return (1.0 - 2.0 * self.eps) * s * (1.0 - s)


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv", keep_default_na=False, na_values=[""])


def _fit(case: dict, information: str = "expected"):
    df = _data(case["dataset"])
    kw = {}
    if "weights" in case:
        kw["var_weights"] = df[case["weights"]].to_numpy(float)
    if "offset" in case:
        assert case["offset"] == "-0.015 * lwt"
        kw["offset"] = -0.015 * df["lwt"].to_numpy(float)
    fam = gc.families.Binomial(link=MislabelLogit(case["eps"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an honest fit: no warning of any kind
        model = gc.GLM.from_formula(case["patsy_formula"], df, family=fam, **kw)
        return model.fit(tol=1e-14, maxiter=100, information=information)


def _by_r(res, case: dict, values) -> np.ndarray:
    return res.loc[case["patsy_coef_names"]].to_numpy() if isinstance(res, pd.Series) else values


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_custom_link_agrees_with_r_glm(case):
    res = _fit(case)
    names = case["patsy_coef_names"]
    np.testing.assert_allclose(res.params[names], case["coef"], rtol=1e-8)
    # R's summary.glm uses the expected information
    np.testing.assert_allclose(res.bse[names], case["se_expected"], rtol=1e-7)
    cov = res.cov_params().loc[names, names].to_numpy()
    np.testing.assert_allclose(cov, np.asarray(case["vcov"]), rtol=1e-6,
                               atol=1e-10 * np.abs(case["vcov"]).max())
    assert res.deviance == pytest.approx(case["deviance"], rel=1e-10)
    assert res.null_deviance == pytest.approx(case["null_deviance"], rel=1e-9)
    assert res.llf == pytest.approx(case["loglik"], rel=1e-10)
    assert res.aic == pytest.approx(case["aic"], rel=1e-10)
    assert res.df_resid == case["df_residual"] and res.converged
    np.testing.assert_allclose(res.fittedvalues, case["fitted"], rtol=1e-8)
    np.testing.assert_allclose(res.linear_predictor, case["linear_predictors"], rtol=1e-7,
                               atol=1e-9)


@pytest.mark.parametrize("case", CASES[:3], ids=[c["name"] for c in CASES[:3]])
def test_observed_information_of_a_custom_link(case):
    res = _fit(case, information="observed")
    names = case["patsy_coef_names"]
    # the observed information uses d2mu/deta2 by a central difference: ~1e-10 relative
    np.testing.assert_allclose(res.bse[names], case["se_observed"], rtol=1e-6)
    np.testing.assert_allclose(res.params[names], case["coef"], rtol=1e-8)


def test_a_custom_link_is_not_the_plain_logit():
    case = CASES[0]
    robust = _fit(case)
    plain = gc.Logit.from_formula(case["patsy_formula"], _data(case["dataset"])).fit()
    assert not np.allclose(robust.params, plain.params, rtol=1e-2)
    assert robust.model.family != plain.model.family
    assert robust.model.family == gc.families.Binomial(link=MislabelLogit(case["eps"]))
    assert "mislabel_logit" in str(robust.summary())
