"""BayesLogit / BayesGLM: MAP and posterior sd against R's arm::bayesglm, the Laplace evidence
against brute-force integration, prior optimisation, predictive probabilities, reports."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, optimize, special
from sklearn.linear_model import LogisticRegression

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import links as L

REF = Path(__file__).resolve().parents[1] / "reference"
BAYES = json.loads((REF / "bayesglm.json").read_text())
CASES = {c["name"]: c for c in BAYES["cases"]}


def data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv")


SPECTOR, BIRTHWT, ENDO = data("spector"), data("birthwt"), data("endometrial")


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def fit_case(case, **kw):
    link = L.Logit() if case["link"] == "logit" else L.Probit()
    model = gc.BayesGLM.from_formula(case["patsy_formula"], data(case["dataset"]), link=link,
                                     prior_scale=case["prior"]["scale"])
    return model.fit(**kw)


# --- agreement with R's arm::bayesglm ---------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_map_and_posterior_sd_match_arm_bayesglm(name):
    case = CASES[name]
    names = case["patsy_coef_names"]
    res = fit_case(case)
    assert res.converged
    assert rel(res.params[names], case["coef"]) < 1e-9
    assert res.llf == pytest.approx(case["loglik_at_map"], rel=1e-12)
    assert res.deviance == pytest.approx(case["deviance"], rel=1e-12)
    assert res.log_posterior - res.log_prior == pytest.approx(res.llf, rel=1e-14)
    # arm's prior kernel -sum(b^2)/(2 S^2) plus the normalising constants of ln N(b | 0, S^2)
    s, k = case["prior"]["scale"], len(names)
    assert res.log_prior == pytest.approx(
        case["log_prior_kernel_at_map"] - 0.5 * k * np.log(2 * np.pi * s * s), rel=1e-12)
    assert rel(res.fittedvalues.iloc[:10], case["fitted_head"]) < 1e-9
    # posterior sd: the Laplace (observed) Hessian, and the Fisher version arm reports
    assert rel(res.bse[names], case["check"]["se_observed_at_newton"]) < 1e-9
    expected = fit_case(case, information="expected")
    assert rel(expected.bse[names], case["se"]) < 1e-9
    cov = expected.cov_params().loc[names, names].to_numpy()
    assert np.max(np.abs(cov - np.array(case["vcov"]))) < 1e-9 * np.max(np.abs(cov))
    if case["link"] == "logit":  # canonical link: observed = expected, as arm's se
        assert rel(res.bse[names], case["se"]) < 1e-9


def test_map_matches_sklearn_l2_with_flat_intercept():
    # sklearn minimises ||w||^2 / 2 + C sum(log loss) with an unpenalised intercept: the MAP
    # under N(0, C) on the slopes and a flat intercept
    cols = ["GPA", "TUCE", "PSI"]
    c = 2.0
    res = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_scale=np.sqrt(c),
                                     prior_scale_intercept="flat").fit()
    sk = LogisticRegression(C=c, solver="newton-cholesky", tol=1e-12, max_iter=200)
    sk.fit(SPECTOR[cols], SPECTOR["GRADE"])
    assert rel(res.params[cols], sk.coef_[0]) < 1e-7
    assert res.params["Intercept"] == pytest.approx(sk.intercept_[0], rel=1e-7)
    assert np.isinf(res.prior_scale["Intercept"])


def test_map_with_prior_mean_matches_direct_optimisation():
    m0 = {"GPA": 1.0, "PSI": -0.5}
    model = gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_mean=m0,
                                       prior_scale=[5.0, 0.5, 0.2, 0.3])
    res = model.fit()
    X, y = model.exog, model.endog
    mean, s = res.prior_mean.to_numpy(), res.prior_scale.to_numpy()

    def neg(w):
        eta = X @ w
        value = -(np.sum(y * special.log_expit(eta) + (1 - y) * special.log_expit(-eta))
                  - 0.5 * np.sum(((w - mean) / s) ** 2))
        return value, -(X.T @ (y - special.expit(eta)) - (w - mean) / s**2)

    best = optimize.minimize(neg, np.zeros(4), jac=True, method="trust-constr",
                             options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000})
    assert rel(res.params, best.x) < 1e-6
    assert np.max(np.abs(neg(res.params.to_numpy())[1])) < 1e-9
    assert res.prior_mean.tolist() == [0.0, 1.0, 0.0, -0.5]


# --- the Laplace evidence ---------------------------------------------------------------------

def brute_log_evidence(model, scale, mode, sd, weights=None):
    """ln int p(y | w) N(w | 0, scale^2 I) dw by adaptive quadrature (1 or 2 coefficients)."""
    X, y = model.exog, model.endog
    wt = np.ones(len(y)) if weights is None else weights

    def log_joint(*w):
        w = np.array(w)
        eta = X @ w
        ll = np.sum(wt * (y * special.log_expit(eta) + (1 - y) * special.log_expit(-eta)))
        return ll - 0.5 * np.sum(w * w) / scale**2 - 0.5 * len(w) * np.log(2 * np.pi * scale**2)

    c = log_joint(*mode)
    lims = [(m - 12 * d, m + 12 * d) for m, d in zip(mode, sd, strict=True)]
    f = lambda *w: np.exp(log_joint(*w) - c)  # noqa: E731
    if len(mode) == 1:
        val = integrate.quad(f, *lims[0], epsabs=0, epsrel=1e-11, limit=200)[0]
    else:
        val = integrate.nquad(f, lims, opts={"epsabs": 0, "epsrel": 1e-8})[0]
    return c + np.log(val)


# measured |Laplace - exact| on these real-data models (prior sd 2.5): spector intercept only
# 0.0084, spector PSI 0.034, birthwt smoke 0.0065; the Laplace error is O(1/n)
@pytest.mark.parametrize("df,formula,bound", [
    (SPECTOR, "GRADE ~ 1", 0.01), (SPECTOR, "GRADE ~ PSI", 0.04),
    (BIRTHWT, "low ~ smoke", 0.008)], ids=["spector-1", "spector-PSI", "birthwt-smoke"])
def test_log_evidence_against_numerical_integration(df, formula, bound):
    model = gc.BayesLogit.from_formula(formula, df, prior_scale=2.5)
    res = model.fit()
    exact = brute_log_evidence(model, 2.5, res.params.to_numpy(), res.bse.to_numpy())
    err = res.log_evidence - exact
    assert 1e-4 < abs(err) < bound  # an approximation, close but not exact


def test_laplace_error_shrinks_like_one_over_n():
    # replicating the rows k times (frequency weights) multiplies the information by k; the
    # Laplace error must fall roughly as 1/k (measured: 0.034, 0.0107, 0.0029 for k = 1, 4, 16)
    errs = []
    for k in (1, 4, 16):
        w = np.full(len(SPECTOR), float(k))
        model = gc.BayesLogit.from_formula("GRADE ~ PSI", SPECTOR, prior_scale=2.5,
                                           freq_weights=w)
        res = model.fit()
        exact = brute_log_evidence(model, 2.5, res.params.to_numpy(), res.bse.to_numpy(), w)
        errs.append(abs(res.log_evidence - exact))
    assert errs[1] < errs[0] / 2.5 and errs[2] < errs[1] / 2.5


def test_log_evidence_from_its_pieces():
    res = fit_case(CASES["birthwt_logit_S1"])
    cov = res.cov_params().to_numpy()
    m = len(res.params)
    want = (res.llf + res.log_prior + 0.5 * m * np.log(2 * np.pi)
            + 0.5 * np.linalg.slogdet(cov)[1])
    assert res.log_evidence == pytest.approx(want, rel=1e-12)
    # a non-canonical link: the evidence uses the observed Hessian whatever cov_params reports
    obs, exp_ = fit_case(CASES["spector_probit_S2.5"]), fit_case(
        CASES["spector_probit_S2.5"], information="expected")
    assert exp_.log_evidence == obs.log_evidence
    want = (obs.llf + obs.log_prior + 2 * np.log(2 * np.pi)
            + 0.5 * np.linalg.slogdet(obs.cov_params().to_numpy())[1])
    assert obs.log_evidence == pytest.approx(want, rel=1e-12)


# --- prior optimisation -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def spector_flat():
    return gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR,
                                      prior_scale_intercept="flat")


def test_direct_optimisation_maximises_the_laplace_evidence(spector_flat):
    res = spector_flat.fit(optimize_prior=True)
    assert res.optimized and res.evidence_optimization.converged
    a = res.alpha["all"]
    curve = res.evidence_curve(a * np.array([0.9, 0.99, 0.999, 1.0, 1.001, 1.01, 1.1]))
    assert list(curve.columns) == ["alpha", "prior_scale", "log_evidence", "llf", "log_prior",
                                   "effective_params"]
    assert curve["log_evidence"].idxmax() == 3
    assert curve["log_evidence"].iloc[3] == pytest.approx(res.log_evidence, abs=1e-9)
    assert res.prior_scale[["GPA", "TUCE", "PSI"]].to_numpy() == pytest.approx(1 / np.sqrt(a))
    assert np.isinf(res.prior_scale["Intercept"])
    assert res.groups.tolist() == [None, "all", "all", "all"]


def test_mackay_fixed_point(spector_flat):
    res = spector_flat.fit(optimize_prior="mackay")
    a = res.alpha["all"]
    slopes = ["GPA", "TUCE", "PSI"]
    gamma = res.effective_params[slopes].sum()
    assert a == pytest.approx(gamma / np.sum(res.params[slopes] ** 2), rel=1e-6)
    # gamma = sum lambda / (lambda + alpha) over the eigenvalues of the data Hessian: with the
    # flat intercept, on the slopes after profiling it out (Schur complement)
    direct = spector_flat.fit(optimize_prior="direct")
    # the fixed point ignores d(X'RX)/d alpha: close to, and not above, the exact maximum
    assert res.log_evidence <= direct.log_evidence + 1e-12
    assert res.log_evidence == pytest.approx(direct.log_evidence, abs=0.05)
    assert a == pytest.approx(direct.alpha["all"], rel=0.5)


def test_optimisation_by_groups_beats_one_group(spector_flat):
    one = spector_flat.fit(optimize_prior=True)
    two = spector_flat.fit(optimize_prior=True, groups={"scores": ["GPA", "TUCE"], "psi": "PSI"})
    assert list(two.alpha.index) == ["scores", "psi"]
    assert two.log_evidence >= one.log_evidence - 1e-9
    assert two.prior_scale["GPA"] == two.prior_scale["TUCE"] != two.prior_scale["PSI"]
    curve = two.evidence_curve(two.alpha["psi"] * np.array([0.95, 1.0, 1.05]), group="psi")
    assert curve["log_evidence"].idxmax() == 1
    with pytest.raises(ValueError, match="not one of the prior groups"):
        two.evidence_curve(group="nope")


def test_evidence_curve_default_grid_and_model_unchanged(spector_flat):
    before = spector_flat.prior_scale.copy()
    res = spector_flat.fit()
    curve = res.evidence_curve()
    assert len(curve) == 41 and curve["alpha"].is_monotonic_increasing
    assert np.all(np.diff(curve["effective_params"]) < 0)  # more shrinkage, fewer parameters
    assert np.array_equal(spector_flat.prior_scale, before)
    assert not res.optimized and res.alpha["all"] == 1.0


def test_groups_argument_errors(spector_flat):
    with pytest.raises(ValueError, match="'Age' is not a design column"):
        spector_flat.fit(optimize_prior=True, groups={"a": ["Age"]})
    with pytest.raises(ValueError, match="one per column"):
        spector_flat.fit(optimize_prior=True, groups=["a", "b"])
    with pytest.raises(ValueError, match="optimize_prior"):
        spector_flat.fit(optimize_prior="newton")


# --- predictive distribution ------------------------------------------------------------------

@pytest.fixture(scope="module")
def endo_fit():
    return gcf.bayes_logit("HG ~ NV + PI + EH", ENDO, prior_scale=2.5).fit()


def test_probit_approximation_against_quadrature(endo_fit):
    new = ENDO.iloc[::5]
    quad = endo_fit.predict(new, method="quadrature")
    probit = endo_fit.predict(new, method="probit")
    lin = endo_fit.predict_linear(new)
    mu, sd = lin["mean"].to_numpy(), lin["sd"].to_numpy()
    assert probit.to_numpy() == pytest.approx(special.expit(mu / np.sqrt(1 + np.pi * sd**2 / 8)))
    assert np.max(np.abs(probit - quad)) < 0.01
    exact = [integrate.quad(lambda a, m=m, s=s: special.expit(a) * np.exp(-0.5 * ((a - m) / s)
                            ** 2) / (s * np.sqrt(2 * np.pi)), m - 30 * s, m + 30 * s,
                            epsabs=0, epsrel=1e-12, limit=200)[0]
             for m, s in zip(mu, sd, strict=True)]
    assert np.max(np.abs(quad.to_numpy() - exact)) < 1e-9
    # moderation pulls probabilities toward 1/2 relative to the plug-in at the mode
    plug = endo_fit.predict(new, method="map")
    assert np.all(np.abs(probit - 0.5) <= np.abs(plug - 0.5) + 1e-15)
    assert list(quad.index) == list(new.index)


def test_mc_prediction_is_seeded_and_unbiased(endo_fit):
    a = endo_fit.predict(ENDO.iloc[:8], method="mc", seed=3, n_draws=20000)
    b = endo_fit.predict(ENDO.iloc[:8], method="mc", seed=3, n_draws=20000)
    quad = endo_fit.predict(ENDO.iloc[:8], method="quadrature")
    assert a.equals(b)
    assert np.max(np.abs(a - quad)) < 0.01


def test_probit_link_closed_form_is_exact():
    res = gc.BayesGLM.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, link=L.Probit(),
                                   prior_scale=2.5).fit()
    assert res.predict(method="probit").to_numpy() == pytest.approx(
        res.predict(method="quadrature").to_numpy(), abs=1e-10)
    cll = gc.BayesGLM.from_formula("GRADE ~ GPA + PSI", SPECTOR, link=L.CLogLog()).fit()
    with pytest.raises(ValueError, match="method='quadrature'"):
        cll.predict(method="probit")
    assert np.all(np.isfinite(cll.predict(method="quadrature")))


def test_predict_map_linear_class_and_errors(endo_fit):
    eta = endo_fit.model.exog @ endo_fit.params.to_numpy()
    assert endo_fit.predict(method="map").to_numpy() == pytest.approx(special.expit(eta))
    assert endo_fit.predict(which="linear").to_numpy() == pytest.approx(eta)
    cls = endo_fit.predict(which="class")
    assert set(cls) <= {0, 1}
    assert np.array_equal(cls.to_numpy().astype(int),
                          (endo_fit.predict().to_numpy() > 0.5).astype(int))
    with pytest.raises(ValueError, match="method must be"):
        endo_fit.predict(method="laplace")
    prob = endo_fit.predict(which="prob")
    np.testing.assert_allclose(prob[1], endo_fit.predict(), rtol=1e-15)
    np.testing.assert_allclose(prob[0], 1 - endo_fit.predict(), rtol=1e-15)
    with pytest.raises(ValueError, match="which must be"):
        endo_fit.predict(which="probs")
    # which comes second for every classifier: predict(X, "linear")
    assert endo_fit.predict(ENDO, "linear").to_numpy() == pytest.approx(eta)


# --- separation, design, API ------------------------------------------------------------------

def test_separated_data_give_finite_estimates():
    # NV separates the endometrial data: Logit warns and suggests BayesLogit
    with pytest.warns(gc.SeparationWarning, match="BayesLogit"):
        gcf.logit("HG ~ NV + PI + EH", ENDO).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gcf.bayes_logit("HG ~ NV + PI + EH", ENDO, prior_scale=2.5).fit()
    assert res.converged and np.all(np.isfinite(res.params)) and np.all(np.isfinite(res.bse))
    assert 0 < res.params["NV"] < 10
    case = CASES["endometrial_logit_S2.5"]
    assert rel(res.params[case["patsy_coef_names"]], case["coef"]) < 1e-9


def test_collinear_design_is_full_rank_under_a_proper_prior():
    df = SPECTOR.assign(GPA2=2 * SPECTOR["GPA"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gc.BayesLogit.from_formula("GRADE ~ GPA + GPA2 + PSI", df).fit()
    # the prior splits the effect in proportion to the columns' scales (2:1 -> 1:2)
    assert res.params["GPA2"] == pytest.approx(2 * res.params["GPA"], rel=1e-8)
    assert np.isfinite(res.log_evidence)


def test_prior_specification_forms():
    cols = ["Intercept", "GPA", "TUCE", "PSI"]
    f = "GRADE ~ GPA + TUCE + PSI"
    by_dict = gc.BayesLogit.from_formula(f, SPECTOR, prior_scale={"PSI": 3.0}).fit()
    by_list = gc.BayesLogit.from_formula(f, SPECTOR, prior_scale=[1, 1, 1, 3.0]).fit()
    assert by_dict.prior_scale.tolist() == [1.0, 1.0, 1.0, 3.0]
    assert list(by_dict.prior_scale.index) == cols
    assert by_dict.params.equals(by_list.params)
    broad = gc.BayesLogit.from_formula(f, SPECTOR, prior_scale_intercept=10).fit()
    assert broad.prior_scale.tolist() == [10.0, 1.0, 1.0, 1.0]
    assert broad.groups["Intercept"] is None  # held fixed when the prior is optimised
    assert "intercept N(0, 10^2)" in str(broad.summary())
    flat = gc.BayesLogit.from_formula(f, SPECTOR, prior_scale_intercept="flat").fit()
    assert "intercept flat" in str(flat.summary())
    assert "up to a constant" in str(flat.summary())


@pytest.mark.parametrize("kwargs,match", [
    ({"prior_scale": -1.0}, "prior_scale of 'Intercept'"),
    ({"prior_scale": [1.0, 2.0]}, "2 values for 4 design columns"),
    ({"prior_scale": {"AGE": 1.0}}, "'AGE' is not a design column"),
    ({"prior_mean": np.nan}, "prior_mean must be finite"),
    ({"prior_scale_intercept": "wide"}, "positive number or 'flat'"),
    ({"prior_scale_intercept": 0.0}, "must be positive"),
])
def test_prior_errors_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR, **kwargs)


def test_intercept_option_needs_an_intercept():
    with pytest.raises(ValueError, match="no intercept"):
        gc.BayesLogit(SPECTOR["GRADE"], SPECTOR[["GPA", "PSI"]], prior_scale_intercept=5)


def test_array_path_matches_formula_path():
    X = SPECTOR[["GPA", "TUCE", "PSI"]].assign(const=1.0)[["const", "GPA", "TUCE", "PSI"]]
    arr = gc.BayesLogit(SPECTOR["GRADE"], X, prior_scale=2.5).fit()
    frm = gcf.bayes_glm("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_scale=2.5).fit()
    assert list(arr.params.index) == ["const", "GPA", "TUCE", "PSI"]
    assert arr.params.to_numpy() == pytest.approx(frm.params.to_numpy(), rel=1e-12)
    assert arr.log_evidence == pytest.approx(frm.log_evidence, rel=1e-12)
    by_name = gc.BayesGLM(SPECTOR["GRADE"], X, link="probit")  # names work wherever links do
    assert by_name.family == gc.BayesGLM(SPECTOR["GRADE"], X, link=gc.links.Probit()).family
    with pytest.raises(TypeError, match="link must be a glmclass link"):
        gc.BayesGLM(SPECTOR["GRADE"], X, link=3)


def test_credible_intervals_and_common_results():
    res = fit_case(CASES["spector_logit_S2.5"])
    ci = res.conf_int(0.1)
    assert list(ci.columns) == ["lower", "upper"]
    assert (ci["upper"] - res.params).to_numpy() == pytest.approx(1.6448536269514722 * res.bse)
    assert res.nobs == 32 and res.df_model == 3 and res.k_params == 4
    assert res.aic == pytest.approx(-2 * res.llf + 8)
    cov = res.cov_params()
    assert np.allclose(cov, cov.T, rtol=0, atol=0)
    assert res.effective_params.sum() < 4


def test_summary_reports_prior_posterior_and_evidence():
    res = gcf.bayes_logit("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_scale=2.5).fit(
        optimize_prior=True)
    text = str(res.summary())
    for key in ("BayesLogit Regression Results", "Log Evidence", "Laplace", "prior sd", "mode",
                "credible", "alpha (all)", "Prior optimised", "Log-Likelihood",
                f"{res.log_evidence:.4f}"):
        assert key in text
    assert "<table>" in res.summary().as_html()
    assert "tabular" in res.summary().as_latex()


def test_compare_fills_log_evidence_and_bayes_factor():
    a = gcf.bayes_logit("GRADE ~ PSI", SPECTOR, prior_scale=2.5).fit()
    b = gcf.bayes_logit("GRADE ~ GPA + TUCE + PSI", SPECTOR, prior_scale=2.5).fit()
    ml = gcf.logit("GRADE ~ PSI", SPECTOR).fit()
    table = gc.compare([a, b], names=["psi", "full"])
    assert table.loc["psi", "log_evidence"] == a.log_evidence
    best = max(a.log_evidence, b.log_evidence)
    assert table.loc["full", "bayes_factor"] == pytest.approx(np.exp(b.log_evidence - best))
    assert table["bayes_factor"].max() == 1.0
    mixed = gc.compare([a, ml], names=["bayes", "ml"])
    assert np.isnan(mixed.loc["ml", "log_evidence"]) and mixed.loc["bayes", "bayes_factor"] == 1
    other = gcf.bayes_logit("low ~ smoke", BIRTHWT).fit()
    with pytest.raises(ValueError, match="different rows"):
        gc.compare([a, other])


def test_fit_returns_new_results_each_time():
    model = gcf.bayes_logit("GRADE ~ GPA + PSI", SPECTOR)
    r1, r2 = model.fit(), model.fit(optimize_prior=True)
    assert r1 is not r2 and r1.prior_scale["GPA"] == 1.0 != r2.prior_scale["GPA"]
    assert model.prior_scale.tolist() == [1.0, 1.0, 1.0]
    assert "BayesLogit" in repr(model) and "log_evidence" in repr(r1)


# --- issue 26: one optimised prior over columns of very different scales -------------------------
PIMA = json.loads((REF / "pima_scales.json").read_text())
PIMA_COLS = list(PIMA["sd"])


def test_optimize_prior_warns_when_shared_columns_differ_in_scale():
    """Pima (MASS): ped (SD 0.34) and glu (SD 31) share one optimised prior; the evidence fits
    the prior to the many small coefficients and ped falls from R's 1.31 to nearly 0: a
    UserWarning names the columns and the ratio, R's SD ratio."""
    d = data("pima")
    mle = gcf.logit(PIMA["formula"], d).fit()
    np.testing.assert_allclose(mle.params.to_numpy(), list(PIMA["coef"].values()), rtol=1e-7)
    model = gc.BayesLogit.from_formula(PIMA["formula"], d, prior_scale_intercept="flat")
    with pytest.warns(UserWarning, match="differ in scale") as rec:
        res = model.fit(optimize_prior=True)
    msg = [str(w.message) for w in rec if "differ in scale" in str(w.message)]
    assert len(msg) == 1
    assert f"by {PIMA['sd_ratio']:.0f}x" in msg[0]  # 90x, R's sd ratio (n - 1 cancels)
    assert "'ped' (SD 0.344)" in msg[0] and "'glu' (SD 31)" in msg[0]
    assert "standardize(x)" in msg[0] and "groups=" in msg[0] and "prior_cov=" in msg[0]
    assert all(f"'{c}'" not in msg[0] for c in ("npreg", "bp", "skin", "bmi", "age"))
    assert res.params["ped"] < 0.05 * PIMA["coef"]["ped"]  # the shrinkage it warns of
    # the intercept (constant) in the shared group: still the columns' ratio, still a warning
    with pytest.warns(UserWarning, match="differ in scale"):
        gc.BayesLogit.from_formula(PIMA["formula"], d).fit(optimize_prior=True)


def test_no_scale_warning_for_standardised_columns_or_separate_groups():
    d = data("pima")
    std = "y ~ " + " + ".join(f"standardize({c})" for c in PIMA_COLS)
    groups = {"large": [c for c in PIMA_COLS if c != "ped"], "small": ["ped"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = gc.BayesLogit.from_formula(std, d, prior_scale_intercept="flat").fit(
            optimize_prior=True)
        by_group = gc.BayesLogit.from_formula(PIMA["formula"], d, prior_scale_intercept="flat"
                                              ).fit(optimize_prior=True, groups=groups)
        gc.BayesLogit.from_formula(PIMA["formula"], d).fit()  # a fixed prior: not optimised
    # standardised, ped's effect per SD keeps most of R's maximum-likelihood one
    assert res.params["standardize(ped)"] > 0.75 * PIMA["coef"]["ped"] * PIMA["sd"]["ped"]
    assert by_group.params["ped"] > 0.75 * PIMA["coef"]["ped"]
