"""GLM / Logit / Probit models: weights, Newton vs IRLS, rank deficiency, responses, validation."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import links as L
from glmclass.models.glm import MLEGLM

RNG = np.random.default_rng(2026)
N = 300
DF = pd.DataFrame({
    "x1": RNG.normal(size=N),
    "x2": RNG.uniform(-1, 1, N),
    "g": RNG.choice(["a", "b", "c"], N),
})
_eta = -0.4 + 0.9 * DF.x1 - 0.7 * DF.x2 + (DF.g == "b") * 0.5
DF["y"] = (RNG.uniform(size=N) < 1 / (1 + np.exp(-_eta))).astype(int)
FORMULA = "y ~ x1 + x2 + C(g)"
NON_CANONICAL = [lk for lk in L.registered(within=(0, 1)) if lk.canonical is None]


def glm(link=None, data=DF, formula=FORMULA, **kw):
    fam = gc.families.Binomial(link=link or L.Logit())
    return gc.GLM.from_formula(formula, data, family=fam, **kw)


# --- frequency and variance weights --------------------------------------------------------------
@pytest.mark.parametrize("link", [L.Logit(), L.CLogLog()], ids=["logit", "cloglog"])
def test_freq_weights_identical_to_duplicating_rows(link):
    reps = RNG.integers(0, 4, N)
    small = DF.assign(w=reps)
    big = DF.loc[DF.index.repeat(reps)]
    a = glm(link, small, freq_weights=small.w.to_numpy()).fit(tol=1e-14)
    b = glm(link, big).fit(tol=1e-14)
    np.testing.assert_allclose(a.params, b.params, rtol=1e-10)
    np.testing.assert_allclose(a.bse, b.bse, rtol=1e-9)
    for attr in ("llf", "llnull", "deviance", "null_deviance", "aic", "bic", "pearson_chi2",
                 "prsquared", "llr"):
        assert getattr(a, attr) == pytest.approx(getattr(b, attr), rel=1e-10), attr
    assert a.nobs == b.nobs == reps.sum()
    assert a.df_resid == b.df_resid and a.df_model == b.df_model
    np.testing.assert_allclose(a.pred_table(), b.pred_table())


def test_var_weights_are_trials_for_proportions():
    """Proportions k/n with var_weights=n give the Bernoulli fit of the expanded rows."""
    grp = DF.assign(x1=DF.x1.round(0), x2=DF.x2.round(0)).groupby(["x1", "x2", "g"])
    agg = grp["y"].agg(["sum", "count"]).reset_index()
    agg["p"] = agg["sum"] / agg["count"]
    a = gc.GLM.from_formula("p ~ x1 + x2 + C(g)", agg, var_weights=agg["count"]).fit(tol=1e-14)
    rows = DF.assign(x1=DF.x1.round(0), x2=DF.x2.round(0))
    b = gc.GLM.from_formula(FORMULA, rows).fit(tol=1e-14)
    np.testing.assert_allclose(a.params, b.params, rtol=1e-9)
    np.testing.assert_allclose(a.bse, b.bse, rtol=1e-8)
    # the binomial log-likelihood adds log C(n, k) to the Bernoulli one
    from scipy.special import gammaln

    logc = np.sum(gammaln(agg["count"] + 1) - gammaln(agg["sum"] + 1)
                  - gammaln(agg["count"] - agg["sum"] + 1))
    assert a.llf == pytest.approx(b.llf + logc, rel=1e-10)
    assert a.nobs == len(agg)  # one observation per row; trials are precision weights
    ref = sm.GLM(agg["p"], sm.add_constant(pd.get_dummies(agg[["x1", "x2", "g"]],
                 drop_first=True, dtype=float)), family=sm.families.Binomial(),
                 var_weights=agg["count"]).fit(tol=1e-14)
    # (statsmodels' llf with var_weights is not the binomial likelihood; R's is, see
    # test_glm_reference's menarche cases)
    assert a.deviance == pytest.approx(ref.deviance, rel=1e-9)
    np.testing.assert_allclose(np.sort(a.bse.to_numpy()), np.sort(ref.bse.to_numpy()), rtol=1e-8)


def test_zero_frequency_weight_rows_do_not_count():
    w = np.ones(N)
    w[:10] = 0
    a = glm(freq_weights=w).fit(tol=1e-14)
    b = glm(data=DF.iloc[10:]).fit(tol=1e-14)
    np.testing.assert_allclose(a.params, b.params, rtol=1e-10)
    assert a.nobs == b.nobs == N - 10
    assert a.llf == pytest.approx(b.llf, rel=1e-12)


# --- Newton and IRLS ------------------------------------------------------------------------------
@pytest.mark.parametrize("link", NON_CANONICAL, ids=lambda lk: lk.name)
def test_newton_agrees_with_irls(link):
    a = glm(link).fit(method="irls")
    b = glm(link).fit(method="newton")
    np.testing.assert_allclose(b.params, a.params, rtol=1e-8)
    np.testing.assert_allclose(b.bse, a.bse, rtol=1e-8)
    assert b.llf == pytest.approx(a.llf, rel=1e-12)
    assert b.method == "newton" and a.method == "irls"


@pytest.mark.parametrize("link", NON_CANONICAL, ids=lambda lk: lk.name)
def test_observed_and_expected_information(link):
    obs = glm(link).fit()
    exp_ = glm(link).fit(information="expected")
    np.testing.assert_allclose(obs.params, exp_.params, rtol=1e-12)
    assert obs.information == "observed" and exp_.information == "expected"
    assert not np.allclose(obs.bse, exp_.bse, rtol=1e-6, atol=0)  # they differ off-canonical
    np.testing.assert_allclose(obs.bse, exp_.bse, rtol=0.2)  # ... but not by much here


def test_information_is_the_same_for_canonical_links():
    a, b = glm().fit(), glm().fit(information="expected")
    np.testing.assert_allclose(a.bse, b.bse, rtol=1e-12)


def test_start_params_and_maxiter():
    ref = glm(L.Probit()).fit()
    again = glm(L.Probit()).fit(start_params=ref.params.to_numpy())
    assert again.n_iter <= 2
    np.testing.assert_allclose(again.params, ref.params, rtol=1e-9)
    with pytest.warns(gc.ConvergenceWarning, match="did not converge.*maxiter"):
        short = glm(L.Cauchit()).fit(maxiter=1)
    assert not short.converged and short.n_iter == 1


# --- rank deficiency -----------------------------------------------------------------------------
def test_rank_deficiency_as_r():
    data = DF.assign(x3=2 * DF.x1 - DF.x2)
    with pytest.warns(gc.RankDeficientWarning, match="'x3' is a linear combination"):
        res = glm(data=data, formula="y ~ x1 + x2 + x3 + C(g)").fit()
    full = glm().fit()
    assert res.aliased == ["x3"]
    assert np.isnan(res.params["x3"]) and np.isnan(res.bse["x3"])
    assert np.isnan(res.pvalues["x3"]) and res.conf_int().loc["x3"].isna().all()
    assert res.cov_params()["x3"].isna().all()
    np.testing.assert_allclose(res.params.drop("x3"), full.params[res.params.drop("x3").index],
                               rtol=1e-9)
    assert res.df_model == full.df_model and res.llf == pytest.approx(full.llf, rel=1e-12)
    new = data.head(7)
    np.testing.assert_allclose(res.predict(new), full.predict(new), rtol=1e-9)
    assert "x3" in str(res.summary())


def test_rank_deficiency_names_every_aliased_column():
    data = DF.assign(a=DF.x1 * 1.0, b=DF.x2 + DF.x1)
    with pytest.warns(gc.RankDeficientWarning, match="'a', 'b' are linear combinations"):
        res = glm(data=data, formula="y ~ x1 + x2 + a + b").fit()
    assert res.aliased == ["a", "b"] and res.rank == 3


# --- responses -----------------------------------------------------------------------------------
@pytest.mark.parametrize("encode", [
    lambda y: y.astype(bool),
    lambda y: np.where(y == 1, "yes", "no"),
    lambda y: pd.Categorical(np.where(y == 1, "yes", "no"), categories=["no", "yes"]),
    lambda y: y.astype(float),
], ids=["bool", "strings", "categorical", "float"])
def test_response_encodings_give_the_same_fit(encode):
    ref = gc.Logit.from_formula(FORMULA, DF).fit()
    res = gc.Logit.from_formula(FORMULA, DF.assign(y=encode(DF.y.to_numpy()))).fit()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-12)


def test_categorical_order_sets_the_success_level():
    y = pd.Categorical(np.where(DF.y == 1, "yes", "no"), categories=["yes", "no"])
    res = gc.Logit.from_formula(FORMULA, DF.assign(y=y)).fit()
    ref = gc.Logit.from_formula(FORMULA, DF).fit()
    np.testing.assert_allclose(res.params, -ref.params, rtol=1e-10)
    assert set(res.predict(which="class")) <= {"yes", "no"}


def test_three_levels_point_to_mnlogit():
    with pytest.raises(ValueError, match="'g'.*3 levels.*MNLogit"):
        gc.Logit.from_formula("g ~ x1", DF)


def test_logit_and_probit_are_glms_with_fixed_family():
    for cls, link in ((gc.Logit, L.Logit()), (gc.Probit, L.Probit())):
        a = cls.from_formula(FORMULA, DF).fit()
        b = glm(link).fit()
        np.testing.assert_allclose(a.params, b.params, rtol=1e-12)
        assert a.model.family == gc.families.Binomial(link)
        # composed, not inherited: a Probit is not a Logit, a Logit not a GLM
        assert not isinstance(a.model, gc.GLM) and isinstance(a.model, MLEGLM)
    assert not issubclass(gc.Probit, gc.Logit) and not issubclass(gc.BayesGLM, gc.GLM)
    lo = gcf.logit(FORMULA, DF).fit()
    pr = gcf.probit(FORMULA, DF).fit()
    gl = gcf.glm(FORMULA, DF, family=gc.families.Binomial(link=L.CLogLog())).fit()
    assert type(lo.model) is gc.Logit and type(pr.model) is gc.Probit
    assert gl.model.family.link == L.CLogLog()


def test_fit_returns_new_results_and_leaves_model_alone():
    model = glm()
    before = dict(vars(model))
    a, b = model.fit(), model.fit()
    assert a is not b
    assert a.params.equals(b.params)
    assert vars(model).keys() == before.keys()
    assert all(vars(model)[k] is v for k, v in before.items())


# --- array path ----------------------------------------------------------------------------------
def test_array_path_matches_formula_path_and_keeps_labels():
    ref = gc.Logit.from_formula("y ~ x1 + x2", DF).fit()
    X = sm.add_constant(DF[["x1", "x2"]])
    res = gc.Logit(DF["y"], X).fit()
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-12)
    assert list(res.params.index) == ["const", "x1", "x2"]
    plain = gc.Logit(DF["y"].to_numpy(), X.to_numpy()).fit()
    assert list(plain.params.index) == ["x1", "x2", "x3"]
    assert res.fittedvalues.index.equals(DF.index)


def test_array_path_missing_values():
    X = sm.add_constant(DF[["x1", "x2"]]).to_numpy()
    X[3, 1] = np.nan
    res = gc.Logit(DF["y"].to_numpy(), X).fit()
    assert res.nobs == N - 1
    assert "Rows dropped (missing):" in str(res.summary())
    with pytest.raises(ValueError, match="missing values in 'x2'.*missing='drop'"):
        gc.Logit(DF["y"].to_numpy(), X, missing="raise")


# --- validation ----------------------------------------------------------------------------------
def test_fit_argument_errors_name_the_argument():
    model = glm()
    with pytest.raises(ValueError, match="method must be 'irls', 'newton', 'gd', 'sgd' or "):
        model.fit(method="bfgs")
    with pytest.raises(ValueError, match="information must be"):
        model.fit(information="sandwich")
    with pytest.raises(ValueError, match="start_params must have 5 values"):
        model.fit(start_params=[0.0, 1.0])
    with pytest.raises(TypeError, match="family must be a glmclass family"):
        gc.GLM.from_formula(FORMULA, DF, family=sm.families.Binomial())


def test_weight_errors_name_the_argument():
    w = np.ones(N)
    w[5] = -1
    with pytest.raises(ValueError, match="freq_weights must be finite and non-negative; row 5"):
        glm(freq_weights=w)
    with pytest.raises(ValueError, match="var_weights"):
        glm(var_weights=np.r_[np.ones(N - 1), np.inf])


def test_poisson_and_gaussian_against_statsmodels():
    counts = RNG.poisson(np.exp(0.3 + 0.4 * DF.x1)).astype(float)
    data = DF.assign(c=counts, z=DF.x1 * 2 + RNG.normal(size=N))
    X = sm.add_constant(data[["x1", "x2"]])
    for fam, sfam, yname in ((gc.families.Poisson(), sm.families.Poisson(), "c"),
                             (gc.families.Gaussian(), sm.families.Gaussian(), "z")):
        res = gc.GLM.from_formula(f"{yname} ~ x1 + x2", data, family=fam).fit()
        # R (and glmclass) use Student t when the dispersion is estimated
        ref = sm.GLM(data[yname], X, family=sfam).fit(use_t=not fam.fixed_scale)
        np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-9)
        np.testing.assert_allclose(res.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-8)
        assert res.scale == pytest.approx(ref.scale, rel=1e-10)
        assert res.llf == pytest.approx(ref.llf, rel=1e-10)
        assert res.deviance == pytest.approx(ref.deviance, rel=1e-10)
        np.testing.assert_allclose(res.pvalues.to_numpy(), ref.pvalues.to_numpy(), rtol=1e-6)


def test_no_runtime_warnings_in_a_separated_tail_fit():
    """Huge linear predictors (|eta| ~ 800) keep every quantity finite and warning-free."""
    data = pd.DataFrame({"x": np.r_[np.linspace(-10, -1, 20), np.linspace(1, 10, 20)]})
    data["y"] = (data.x > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)
        warnings.simplefilter("error", RuntimeWarning)
        for link in [L.Logit(), *NON_CANONICAL]:
            res = glm(link, data, "y ~ x").fit(maxiter=60)
            assert np.isfinite(res.llf) and np.isfinite(res.deviance)


def test_first_step_out_of_the_domain_asks_for_start_params():
    """As R's glm.fit ("no valid set of coefficients"): no silent garbage, and the suggested
    start (intercept link(mean y), zero slopes) then fits."""
    rng = np.random.default_rng(8)
    x = np.linspace(0, 3, 100)
    data = pd.DataFrame({"x": x, "y": (rng.uniform(size=100) < np.exp(-2.0 + 0.5 * x))})
    fam = gc.families.Binomial(link=L.Log())
    model = gc.GLM.from_formula("y ~ x", data, family=fam)
    with pytest.raises(gc.DataError, match="no valid set of coefficients.*start_params"):
        model.fit()
    res = model.fit(start_params=[np.log(data.y.mean()), 0.0])
    assert res.converged and res.fittedvalues.max() < 0.75  # an interior maximum
    with pytest.warns(sm.tools.sm_exceptions.DomainWarning):
        ref_model = sm.GLM(data.y.astype(float), sm.add_constant(data.x),
                           family=sm.families.Binomial(sm.families.links.Log()))
    ref = ref_model.fit(start_params=res.params.to_numpy(), tol=1e-14)
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-8)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(40, 300), p=st.integers(1, 5),
       link=st.sampled_from(["logit", "probit", "cloglog"]))
def test_random_designs_agree_with_statsmodels(seed, n, p, link):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p)) * rng.uniform(0.1, 10, p)])
    beta = rng.normal(size=p + 1) * 0.5 / np.r_[1.0, np.std(X[:, 1:], axis=0)]
    sm_link = {"logit": sm.families.links.Logit, "probit": sm.families.links.Probit,
               "cloglog": sm.families.links.CLogLog}[link]()
    y = (rng.uniform(size=n) < sm_link.inverse(X @ beta)).astype(float)
    assume(0 < y.sum() < n)
    fam = gc.families.Binomial(link=L.get_link(link))
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.SeparationWarning)
        try:
            res = gc.GLM(y, X, family=fam).fit()
        except gc.SeparationWarning:
            assume(False)
    ref = sm.GLM(y, X, family=sm.families.Binomial(sm_link)).fit(
        method="newton", tol=1e-14, maxiter=200, disp=0)
    np.testing.assert_allclose(res.params.to_numpy(), ref.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.bse.to_numpy(), ref.bse, rtol=1e-6)
    assert res.llf == pytest.approx(ref.llf, rel=1e-10, abs=1e-10)


def test_categorical_endog_order_sets_the_levels_on_the_array_path():
    """A Categorical's category order (not sorted order) decides failure/success."""
    d = sm.datasets.spector.load_pandas().data
    X = sm.add_constant(d[["GPA", "PSI"]])
    labels = np.where(d.GRADE == 1, "b", "a")
    flipped = gc.Logit(pd.Series(pd.Categorical(labels, categories=["b", "a"])), X).fit()
    plain = gc.Logit(d.GRADE, X).fit()
    assert flipped.model.levels == ["b", "a"]
    np.testing.assert_allclose(flipped.params.to_numpy(), -plain.params.to_numpy(), rtol=1e-10)
    as_array = gc.Logit(pd.Categorical(labels, categories=["b", "a"]), X).fit()
    assert as_array.model.levels == ["b", "a"]
