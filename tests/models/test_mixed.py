"""MixedGLM against lme4's glmer (tests/reference/r/mixed.R -> mixed.json): the deviance at
lme4's estimates, the optimum, fixed effects, lme4's vcov, variance components, conditional
modes and their SEs, predictions, information criteria, for cbpp (Laplace, nAGQ 10 and 25), a
random-intercept logit and probit, correlated and uncorrelated slopes, crossed and nested
factors, a Poisson with an offset (Laplace and nAGQ 10) and a singular fit."""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass import families as F
from glmclass import links as L
from glmclass.errors import GlmclassWarning

REF = Path(__file__).resolve().parents[1] / "reference"
DATA = REF / "data"
REFS = json.loads((REF / "mixed.json").read_text())

# name: (data file, formula, family, nagq)
CASES = {
    "cbpp": ("cbpp", "cbind(incidence, size - incidence) ~ C(period) + (1 | herd)",
             F.Binomial(), 1),
    "cbpp_agq10": ("cbpp", "cbind(incidence, size - incidence) ~ C(period) + (1 | herd)",
                   F.Binomial(), 10),
    "cbpp_agq25": ("cbpp", "cbind(incidence, size - incidence) ~ C(period) + (1 | herd)",
                   F.Binomial(), 25),
    "ri_logit": ("mixed_ri", "y ~ x1 + x2 + (1 | g)", F.Binomial(), 1),
    "ri_probit": ("mixed_ri", "y ~ x1 + x2 + (1 | g)", F.Binomial(L.Probit()), 1),
    "slope": ("mixed_slope", "y ~ x + (x | g)", F.Binomial(), 1),
    "slope_uncorr": ("mixed_slope", "y ~ x + (x || g)", F.Binomial(), 1),
    "crossed": ("mixed_crossed", "y ~ x + (1 | a) + (1 | b)", F.Binomial(), 1),
    "nested": ("mixed_nested", "y ~ x + (1 | a/b)", F.Binomial(), 1),
    "poisson": ("mixed_poisson", "y ~ x + offset(np.log(t)) + (1 | g)", F.Poisson(), 1),
    "poisson_agq10": ("mixed_poisson", "y ~ x + offset(np.log(t)) + (1 | g)", F.Poisson(), 10),
    "singular": ("mixed_singular", "y ~ x + (1 | g)", F.Binomial(), 1),
}


@cache
def data(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv")


@cache
def model(name: str) -> gc.MixedGLM:
    file, formula, family, _ = CASES[name]
    return gc.MixedGLM.from_formula(formula, data(file), family=family)


@cache
def fitted(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GlmclassWarning)  # the singular fit's warning
        return model(name).fit(nagq=CASES[name][3])


def ref_ranef(ref: dict, block) -> tuple[np.ndarray, np.ndarray]:
    """lme4's modes and SEs of one term, rows in the block's level order."""
    r = next(t for t in ref["ranef"] if t["group"] == block.group)
    idx = pd.Index(r["levels"]).get_indexer(block.levels.astype(str))
    assert (idx >= 0).all()
    cols = [r["names"].index(n) for n in block.names]
    return np.asarray(r["modes"])[idx][:, cols], np.asarray(r["se"])[idx][:, cols]


@pytest.mark.parametrize("name", CASES)
def test_deviance_function_at_lme4_estimates(name):
    """lme4's objective, conditional modes, their SEs and fitted means at lme4's (theta, beta)
    (the Poisson Laplace differs by 2e-4 on 1785: lme4 factors A at the weights of the
    iteration before its last PIRLS step; ours is the Laplace at the modes)."""
    ref, m = REFS[name], model(name)
    dev = m.deviance_function()
    theta, beta = np.array(ref["theta"]), np.array(ref["fixef"])
    obj = dev(np.r_[theta, beta], CASES[name][3])
    assert obj == pytest.approx(ref["objective"], rel=1e-6)
    modes = dev.modes(theta, beta)
    b = dev.random_effects(theta, modes.u)
    cv = dev.conditional_variances(theta, modes)
    for k, block in enumerate(m.blocks):
        want, want_se = ref_ranef(ref, block)
        np.testing.assert_allclose(b[k], want, atol=1e-6)
        np.testing.assert_allclose(np.sqrt(np.diagonal(cv[k], axis1=1, axis2=2)), want_se,
                                   atol=1e-5)
    np.testing.assert_allclose(m.family.link.inverse(modes.eta), ref["fitted"], atol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_fit_matches_lme4(name):
    ref, res = REFS[name], fitted(name)
    # never a worse optimum than lme4's polished fit
    assert -2 * res.llf <= ref["objective"] + 1e-6
    se = np.array(ref["bse"])
    tol = np.maximum(1e-4 * np.abs(ref["fixef"]), 1e-3 * se)
    assert np.all(np.abs(res.params.to_numpy() - ref["fixef"]) <= tol)
    np.testing.assert_allclose(res.bse.to_numpy(), se, rtol=1e-3)
    np.testing.assert_allclose(res.cov_params().to_numpy(), ref["vcov"], rtol=2e-3,
                               atol=1e-3 * se.max() ** 2)
    # variance components: SDs and correlations
    vc = res.random_effects_cov
    for term in ref["varcorr"]:
        rows = vc[(vc["group"] == term["group"]) & vc["var2"].isna()]
        assert list(rows["var1"]) == term["names"]
        np.testing.assert_allclose(rows["sdcor"], term["sd"], atol=1e-3)
        corr = np.asarray(term["corr"])
        for j in range(len(term["names"])):
            for i in range(j + 1, len(term["names"])):
                got = vc[(vc["group"] == term["group"]) & (vc["var1"] == term["names"][j])
                         & (vc["var2"] == term["names"][i])]["sdcor"]
                assert got.item() == pytest.approx(corr[i, j], abs=1e-3)
    for block in res.model.blocks:
        want, want_se = ref_ranef(ref, block)
        got = res.random_effects.loc[block.group][block.names].to_numpy()
        got_se = res.random_effects_se.loc[block.group][block.names].to_numpy()
        np.testing.assert_allclose(got, want, atol=1e-3)
        np.testing.assert_allclose(got_se, want_se, atol=1e-3)
    np.testing.assert_allclose(res.predict(), ref["fitted"], atol=1e-3)
    np.testing.assert_allclose(res.predict(data(CASES[name][0]), random_effects=False),
                               ref["mean_fixed"], atol=1e-3)
    np.testing.assert_allclose(res.predict(which="linear"), ref["linear"], atol=2e-3)
    # lme4 counts beta and theta; deviance() is the conditional deviance, not -2 llf
    shift = -2 * res.llf - ref["objective"]
    assert res.aic == pytest.approx(ref["aic"] + shift, abs=1e-9 * abs(ref["aic"]) + 1e-9)
    assert res.bic == pytest.approx(ref["bic"] + shift, abs=1e-9 * abs(ref["bic"]) + 1e-9)
    assert res.deviance == pytest.approx(ref["deviance"], rel=1e-4)
    assert res.nobs == ref["nobs"]
    assert res.ngroups == ref["ngroups"]
    assert res.singular == ref["singular"]
    np.testing.assert_allclose(res.theta.to_numpy(), ref["theta"], atol=1e-3)


def test_predictions_on_new_data_match_in_sample():
    res = fitted("ri_logit")
    d = data("mixed_ri")
    np.testing.assert_allclose(res.predict(d), res.predict().to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(res.predict(d, which="linear"),
                               res.predict(which="linear").to_numpy(), rtol=1e-12)
    new = d.iloc[:3].assign(g="unseen")
    with pytest.raises(ValueError, match="'unseen'.*allow_new_groups"):
        res.predict(new)
    np.testing.assert_allclose(res.predict(new, allow_new_groups=True),
                               res.predict(new, random_effects=False), rtol=1e-12)


def test_an_unseen_numeric_group_is_named_as_written():
    """cbpp's herds are integers: the error said "level np.int64(99)"."""
    d = gc.datasets.load("cbpp")
    d["period"] = d["period"].astype(str)
    res = gc.MixedGLM.from_formula("cbind(incidence, size - incidence) ~ period + (1 | herd)",
                                   d, family=gc.families.Binomial()).fit()
    with pytest.raises(ValueError, match=r"^level 99 of the grouping factor 'herd'"):
        res.predict(d.head(2).assign(herd=99))


def test_predictions_read_the_results_estimates():
    res = fitted("ri_logit")
    d = data("mixed_ri").iloc[:5]
    shifted = res.replaced(params=res.params + 0.5)
    X = np.asarray(res.model.exog)[:5]  # the fit's first rows are d's
    np.testing.assert_allclose(shifted.predict(d, which="linear", random_effects=False),
                               X @ (res.params.to_numpy() + 0.5), rtol=1e-12)


def test_singular_fit_warns():
    m = model("singular")
    with pytest.warns(GlmclassWarning, match="boundary \\(singular\\) fit"):
        res = m.fit()
    assert res.singular and res.theta.iloc[0] < 1e-4


def test_lrtest_against_the_glm():
    """The random intercept tested against the GLM (the chi2 p-value is conservative: the
    variance is tested at its boundary)."""
    res = fitted("cbpp")
    glm = gc.GLM.from_formula("cbind(incidence, size - incidence) ~ C(period)",
                              data("cbpp"), family=F.Binomial()).fit()
    assert glm.llf == pytest.approx(REFS["cbpp_glm_loglik"], rel=1e-9)
    lr = gc.lrtest(glm, res)
    assert lr.df == 1
    assert lr.statistic == pytest.approx(2 * (-REFS["cbpp"]["objective"] / 2
                                              - REFS["cbpp_glm_loglik"]), abs=1e-5)
    table = gc.compare([glm, res])
    assert table.loc[:, "aic"].min() == pytest.approx(res.aic)


def test_entry_points_and_families():
    d = data("mixed_ri")
    import glmclass.formula.api as gcf

    a = gcf.mixed_logit("y ~ x1 + x2 + (1 | g)", d)
    b = gcf.mixed_probit("y ~ x1 + x2 + (1 | g)", d)
    c = gcf.mixed_glm("y ~ x1 + x2 + (1 | g)", d, family=F.Binomial(L.Probit()))
    assert a.family.link.name == "logit" and b.family.link.name == c.family.link.name
    with pytest.raises(ValueError, match="family fixed"):
        gcf.mixed_logit("y ~ x1 + (1 | g)", d, family=F.Poisson())


def test_array_path_matches_formula():
    d = data("mixed_ri")
    X = np.column_stack([np.ones(len(d)), d["x1"], d["x2"]])
    res = gc.MixedLogit(d["y"], X, d["g"]).fit()
    np.testing.assert_allclose(res.params.to_numpy(), fitted("ri_logit").params.to_numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(res.predict(X[:5], groups=d["g"][:5]),
                               fitted("ri_logit").predict().to_numpy()[:5], rtol=1e-8)


def test_nagq_needs_one_scalar_factor():
    with pytest.raises(ValueError, match="nagq > 1.*scalar random effect"):
        model("slope").fit(nagq=5)
    with pytest.raises(ValueError, match="nagq must be a positive integer"):
        model("cbpp").fit(nagq=0)


def test_formula_errors_name_the_problem():
    d = data("mixed_ri")
    with pytest.raises(gc.DataError, match="no random-effect term"):
        gc.MixedGLM.from_formula("y ~ x1", d)
    with pytest.raises(ValueError, match="grouping column 'school'"):
        gc.MixedGLM.from_formula("y ~ x1 + (1 | school)", d)
    with pytest.raises(ValueError, match="Binomial .* or Poisson"):
        gc.MixedGLM.from_formula("y ~ x1 + (1 | g)", d, family=F.Gaussian())


def test_dask_data_is_refused():
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(data("mixed_ri"), npartitions=2)
    with pytest.raises(NotImplementedError, match="Dask"):
        gc.MixedGLM.from_formula("y ~ x1 + (1 | g)", ddf)


def test_summary_layout():
    summary = fitted("slope").summary()
    text = summary.as_text()
    for piece in ("Generalized linear mixed model fit by maximum likelihood (Laplace "
                  "Approximation)", "Family: binomial ( logit )", "Random effects:",
                  "Std.Dev.", "Corr", "Number of obs:", "Groups: g:", "Fixed effects:",
                  "Pr(>|z|)", f"{REFS['slope']['varcorr'][0]['corr'][1][0]:.3f}"):
        assert piece in text
    assert "glmclass-summary" in summary.as_html()
    assert "nAGQ = 10" in fitted("cbpp_agq10").summary().as_text()
    assert "boundary (singular) fit" in fitted("singular").summary().as_text()


def test_anova_uses_minus_two_llf_as_lme4():
    """lme4's anova(glm, glmm): the deviance column is -2 logLik; the test equals lrtest."""
    res = fitted("cbpp")
    glm = gc.GLM.from_formula("cbind(incidence, size - incidence) ~ C(period)",
                              data("cbpp"), family=F.Binomial()).fit()
    table = gc.anova(glm, res)
    lr = gc.lrtest(glm, res)
    assert table["deviance_diff"].iloc[1] == pytest.approx(lr.statistic, rel=1e-12)
    assert table["pvalue"].iloc[1] == pytest.approx(lr.pvalue, rel=1e-9)
    assert table["deviance"].iloc[1] == pytest.approx(REFS["cbpp"]["objective"], abs=1e-6)


def test_sparse_factorisation_of_crossed_factors(monkeypatch):
    """Above DENSE_Q random effects the penalised system is factored by SuperLU: the same
    deviance, modes and conditional SDs as the dense Cholesky."""
    import glmclass.likelihoods.mixed as LM

    ref, m = REFS["crossed"], model("crossed")
    theta, beta = np.array(ref["theta"]), np.array(ref["fixef"])
    dense = m.deviance_function()
    monkeypatch.setattr(LM, "DENSE_Q", 10)
    sparse_dev = m.deviance_function()
    assert sparse_dev(np.r_[theta, beta]) == pytest.approx(dense(np.r_[theta, beta]),
                                                           rel=1e-12)
    md, ms = dense.modes(theta, beta), sparse_dev.modes(theta, beta)
    np.testing.assert_allclose(ms.u, md.u, atol=1e-10)
    for a, b in zip(dense.conditional_variances(theta, md),
                    sparse_dev.conditional_variances(theta, ms), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8)


def test_array_path_crossed_groups_and_exposure():
    d = data("mixed_crossed")
    X = np.column_stack([np.ones(len(d)), d["x"]])
    res = gc.MixedLogit(d["y"], X, d[["a", "b"]]).fit()
    assert -2 * res.llf <= REFS["crossed"]["objective"] + 1e-6
    np.testing.assert_allclose(res.theta.to_numpy(), REFS["crossed"]["theta"], atol=1e-3)
    p = data("mixed_poisson")
    by_name = gc.MixedGLM.from_formula("y ~ x + (1 | g)", p, family=F.Poisson(),
                                       exposure="t").fit()
    assert -2 * by_name.llf <= REFS["poisson"]["objective"] + 1e-6
    np.testing.assert_allclose(by_name.predict(p), REFS["poisson"]["fitted"], atol=1e-3)


def test_rows_missing_a_grouping_value_are_dropped_or_named():
    d = data("mixed_ri").copy()
    d.loc[[3, 7], "g"] = None
    assert gc.MixedLogit.from_formula("y ~ x1 + (1 | g)", d).data.nrows == len(d) - 2
    with pytest.raises(ValueError, match="random-effect column.*'g'"):
        gc.MixedLogit.from_formula("y ~ x1 + (1 | g)", d, missing="raise")


def test_convergence_checks_as_lme4():
    """A step cut short is finished by the Newton polish (converged, no warning); a gradient
    left at the estimate or a Hessian that is not positive definite is reported."""
    from dataclasses import replace

    from glmclass.results.mixed import MixedGLMResults

    m = model("ri_logit")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        short = m.fit(maxiter=1)
    assert short.converged and short.convergence_check is None
    res = fitted("ri_logit")
    np.testing.assert_allclose(short.params, res.params, rtol=1e-6)
    fit = res.fit_record
    steep = MixedGLMResults(m, replace(fit, gradient=fit.gradient + 5.0))
    assert "scaled gradient" in steep.convergence_check
    flat = MixedGLMResults(m, replace(fit, hessian=-np.eye(fit.hessian.shape[0])))
    assert "not positive definite" in flat.convergence_check
    assert res.wald_test("x1 = 0").statistic == pytest.approx(
        (res.params["x1"] / res.bse["x1"]) ** 2, rel=1e-10)


def test_command_line_fits_a_mixed_model(capsys):
    from glmclass.cli import main

    code = main(["fit", str(DATA / "mixed_ri.csv"), "y ~ x1 + x2 + (1 | g)", "--model",
                 "mixed_logit"])
    out = capsys.readouterr().out
    assert code == 0 and "Random effects:" in out and "Fixed effects:" in out


def test_proportions_with_trials_equal_cbind():
    d = data("cbpp").assign(p=lambda f: f["incidence"] / f["size"])
    res = gc.MixedLogit.from_formula("p ~ C(period) + (1 | herd)", d,
                                     var_weights=d["size"]).fit()
    assert -2 * res.llf == pytest.approx(-2 * fitted("cbpp").llf, rel=1e-10)
    np.testing.assert_allclose(res.params.to_numpy(), fitted("cbpp").params.to_numpy(),
                               rtol=1e-6)


def test_array_path_drops_the_groups_of_incomplete_rows():
    d = data("mixed_ri")
    X = np.column_stack([np.ones(len(d)), d["x1"], d["x2"]])
    X[0, 1] = np.nan
    a = gc.MixedLogit(d["y"], X, d["g"]).fit()
    b = gc.MixedLogit(d["y"].iloc[1:], X[1:], d["g"].iloc[1:]).fit()
    assert a.nobs == len(d) - 1
    np.testing.assert_allclose(a.params.to_numpy(), b.params.to_numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["ri_logit", "poisson_agq10", "slope"])
def test_row_chunks_give_the_single_pass_numbers(monkeypatch, name):
    """One grouping factor: penalised IRLS over row chunks (CHUNK_ROWS, what keeps a 1e6-row
    fit's memory near the design's) gives the deviance, modes and conditional SDs of one pass."""
    import glmclass.likelihoods.mixed as LM

    ref, m = REFS[name], model(name)
    x = np.r_[ref["theta"], ref["fixef"]]
    whole = m.deviance_function()
    monkeypatch.setattr(LM, "CHUNK_ROWS", 97)
    chunked = m.deviance_function()
    assert len(chunked.chunks) > 5 and len(whole.chunks) == 1
    assert chunked(x, CASES[name][3]) == pytest.approx(whole(x, CASES[name][3]), rel=1e-12)
    assert chunked.saturated == pytest.approx(whole.saturated, rel=1e-12)
    theta, beta = np.array(ref["theta"]), np.array(ref["fixef"])
    a, b = whole.modes(theta, beta), chunked.modes(theta, beta)
    np.testing.assert_allclose(b.u, a.u, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.eta, a.eta, rtol=1e-12, atol=1e-12)
    for va, vb in zip(whole.conditional_variances(theta, a),
                      chunked.conditional_variances(theta, b), strict=True):
        np.testing.assert_allclose(vb, va, rtol=1e-10)
