"""Sandwich covariances from ``fit(cov_type=..., cov_kwds=...)`` against R's sandwich package.

The references (``tests/reference/inference.json``, section ``robust``) are R's
``vcovHC(type = "HC0".."HC3")`` and ``vcovCL(type = "HC1")`` (one- and two-way, with and
without ``fix``, and without corrections) of exact-MLE glm fits; ``expected`` uses R's bread
(the Fisher information), ``observed`` the inverse observed information as bread.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from inference_reference import (
    cluster_kwds,
    glm_case,
    glm_model,
    load,
    mnlogit_names,
    reference,
    rel,
)

import glmclass as gc
import glmclass.formula.api as gcf

RTOL = 1e-9  # achieved: 1e-11 or better
CASES = [(c["name"], info, key) for c in reference()["robust"]
         for info in ("expected", "observed") for key in c[info]]


def fit_quietly(model, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(**kw)


@pytest.mark.parametrize(("name", "information", "key"), CASES)
def test_glm_covariance_matches_r_sandwich(name, information, key):
    case = glm_case(name)
    cov_type, kwds = cluster_kwds(case, key)
    res = fit_quietly(glm_model(case), information=information, cov_type=cov_type,
                      cov_kwds=kwds)
    names = case["coef_names"]
    assert rel(res.cov_params().loc[names, names], case[information][key]) < RTOL
    assert res.cov_type == cov_type


def test_inference_uses_the_robust_covariance():
    case = glm_case("birthwt_logit")
    res = glm_model(case).fit(cov_type="HC3")
    V = res.cov_params()
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(V)), rtol=1e-14)
    np.testing.assert_allclose(res.tvalues, res.params / res.bse, rtol=1e-14)
    z = 1.959963984540054
    ci = res.conf_int()
    np.testing.assert_allclose(ci["upper"] - ci["lower"], 2 * z * res.bse, rtol=1e-12)
    plain = glm_model(case).fit()
    assert not np.allclose(plain.bse, res.bse)
    np.testing.assert_array_equal(plain.params, res.params)


def test_summary_states_the_covariance_type():
    res = glm_model(glm_case("birthwt_logit")).fit(cov_type="cluster",
                                                  cov_kwds={"groups": ["grp", "grp2"]})
    text = " ".join(str(res.summary()).split())  # notes are wrapped to the report's width
    assert "two-way cluster-robust by grp (15 clusters) and grp2 (10 clusters)" in text
    assert "Covariance Type:" in text and "cluster" in text
    assert "HC1 (HC0 times n/(n-k)) sandwich" in " ".join(str(
        glm_model(glm_case("birthwt_logit")).fit(cov_type="HC1").summary()).split())
    assert "from the observed information matrix" in str(
        glm_model(glm_case("birthwt_logit")).fit().summary())


def test_groups_as_column_array_or_used_rows_agree_and_drop_missing_rows():
    """survey drops 67 incomplete rows: a column name, a full-length array and an array
    for the used rows give the same covariance."""
    case = glm_case("survey_logit_missing")
    model = glm_model(case)
    df = load("survey")
    assert model.data.n_dropped == len(df) - case["n_rows_fit"] > 0
    by_name = model.fit(cov_type="cluster", cov_kwds={"groups": "grp"}).cov_params()
    full = df["grp"].to_numpy()
    used = full[model.data.source_rows]
    labels = np.array([f"g{v}" for v in full])  # string labels work as well
    for groups in (full, used, df["grp"], pd.Series(used), labels, list(full)):
        other = model.fit(cov_type="cluster", cov_kwds={"groups": groups}).cov_params()
        np.testing.assert_allclose(other, by_name, rtol=1e-13)
    two = model.fit(cov_type="cluster", cov_kwds={"groups": df[["grp", "grp2"]]})
    assert rel(two.cov_params().loc[case["coef_names"], case["coef_names"]],
               case["observed"]["cluster2"]) < RTOL


def test_groups_missing_only_in_dropped_rows_are_fine_else_an_error():
    df = load("survey")
    df["g"] = df["grp"].astype(float)
    dropped = df["Pulse"].isna()
    df.loc[dropped, "g"] = np.nan  # missing where the model drops the row anyway
    model = gcf.logit("Sex ~ Height + Pulse + Exer", df)
    model.fit(cov_type="cluster", cov_kwds={"groups": "g"})
    df.loc[~dropped & df["Height"].notna(), "g"] = np.nan
    model = gcf.logit("Sex ~ Height + Pulse + Exer", df)
    with pytest.raises(ValueError, match=r"cluster groups 'g' have 170 missing labels"):
        model.fit(cov_type="cluster", cov_kwds={"groups": "g"})


def test_frequency_weights_are_replicated_rows():
    """ucb: freq_weights=Freq against R on the data with each row repeated (all types)."""
    case = glm_case("ucb_freq")
    df = load("ucb")
    rep = df.loc[df.index.repeat(df["Freq"])].reset_index(drop=True)
    replicated = gcf.logit("Admit ~ Gender + Dept", rep)
    weighted = glm_model(case)
    for key in ("HC0", "HC1", "HC2", "HC3", "cluster"):
        cov_type, kwds = cluster_kwds(case, key)
        a = weighted.fit(cov_type=cov_type, cov_kwds=kwds).cov_params()
        kw_rep = {"groups": rep["Dept"]} if kwds else None
        b = replicated.fit(cov_type=cov_type, cov_kwds=kw_rep).cov_params()
        assert rel(a, b) < 1e-10


@pytest.mark.parametrize("case", reference()["mnlogit_robust"], ids=lambda c: c["name"])
def test_mnlogit_covariance_matches_r_sandwich(case):
    kw = {}
    if case.get("freq_weights"):
        df = load(case["dataset"])
        kw["freq_weights"] = df[case["freq_weights"]]
    else:
        df = load(case["dataset"], complete=("Exer", "Sex", "Age", "Pulse"))
    model = gc.MNLogit.from_formula(case["patsy_formula"], df, **kw)
    names = mnlogit_names(case)
    for key, expected in case["cov"].items():
        cov_type, kwds = cluster_kwds(case, key)
        res = model.fit(cov_type=cov_type, cov_kwds=kwds)
        assert rel(res.cov_params().loc[names, names], expected) < RTOL, key
        np.testing.assert_allclose(res.bse.to_numpy().T.ravel(),
                                   np.sqrt(np.diag(res.cov_params())), rtol=1e-14)
    assert "cluster-robust by Type (4 clusters)" in str(res.summary()) or not kw


def test_mnlogit_scores_sum_to_zero_and_refuse_hc2():
    df = load("survey", complete=("Exer", "Sex", "Age", "Pulse"))
    model = gc.MNLogit.from_formula("Exer ~ Sex + Age + Pulse", df)
    s = model.fit().score_obs()
    assert s.shape == (len(df), 8)
    assert np.abs(s.sum()).max() < 1e-9 * np.abs(s).sum().sum()
    with pytest.raises(ValueError, match="'HC3' divides by 1 - h_i .* use 'HC0', 'HC1'"):
        model.fit(cov_type="HC3")


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"cov_type": "HC4"}, ValueError, r"cov_type must be 'nonrobust', 'HC0', .* got 'HC4'"),
    ({"cov_type": "hc1"}, ValueError, r"got 'hc1'"),
    ({"cov_type": "HC1", "cov_kwds": {"groups": "grp"}}, ValueError,
     r"cov_type='HC1' takes no cov_kwds; got 'groups'"),
    ({"cov_type": "cluster"}, ValueError, r"needs cov_kwds=\{'groups': ...\}"),
    ({"cov_type": "cluster", "cov_kwds": {"group": "grp"}}, ValueError,
     r"accepts 'groups', 'use_correction' or 'fix'; got 'group'"),
    ({"cov_type": "cluster", "cov_kwds": {"groups": "school"}}, ValueError,
     r"'school' is not a column of the data \(columns: 'low', 'age'"),
    ({"cov_type": "cluster", "cov_kwds": {"groups": np.arange(10)}}, ValueError,
     r"cov_kwds\['groups'\] has 10 values, but the data have 189 rows"),
    ({"cov_type": "cluster", "cov_kwds": {"groups": np.zeros((189, 3))}}, ValueError,
     r"shape \(n,\)\) or two \(shape \(n, 2\)\), got shape \(189, 3\)"),
    ({"cov_type": "cluster", "cov_kwds": {"groups": "grp", "fix": 1}}, ValueError,
     r"cov_kwds\['fix'\] must be True or False, got 1"),
    ({"cov_type": "cluster", "cov_kwds": {"groups": np.zeros(189)}}, ValueError,
     r"at least 2 clusters"),
    ({"cov_type": "cluster", "cov_kwds": ["grp"]}, TypeError, r"cov_kwds must be a dict"),
])
def test_bad_covariance_arguments_raise_before_fitting(kwargs, error, message):
    model = glm_model(glm_case("birthwt_logit"))
    with pytest.raises(error, match=message):
        model.fit(**kwargs)


def test_column_name_needs_a_formula_model():
    df = load("birthwt")
    model = gc.Logit(df["low"], df[["age", "lwt"]].assign(const=1.0))
    with pytest.raises(ValueError, match="names columns, but the model was not built from a "
                                         "formula"):
        model.fit(cov_type="cluster", cov_kwds={"groups": "grp"})
    # labels as an array work on the array path
    res = model.fit(cov_type="cluster", cov_kwds={"groups": df["grp"].to_numpy()})
    assert res.cov_type == "cluster"


def test_hc3_with_a_leverage_of_one_fails_at_fit():
    df = load("birthwt")
    df["only"] = 0.0
    df.loc[0, "only"] = 1.0  # a column only row 0 uses: its leverage is 1
    model = gcf.glm("bwt ~ age + only", df, family=gc.families.Gaussian())
    with pytest.raises(ValueError, match="HC3 divides by 1 - h, but 1 row"):
        model.fit(cov_type="HC3")
    model.fit(cov_type="HC1")


def test_nothing_the_caller_passed_is_modified():
    df = load("survey")
    before = df.copy()
    groups = df["grp"].to_numpy().copy()
    model = gcf.logit("Sex ~ Height + Pulse + Exer", df)
    model.fit(cov_type="cluster", cov_kwds={"groups": groups})
    model.fit(cov_type="cluster", cov_kwds={"groups": "grp"})
    pd.testing.assert_frame_equal(df, before)
    np.testing.assert_array_equal(groups, before["grp"].to_numpy())
