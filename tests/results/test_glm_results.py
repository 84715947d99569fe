"""Every GLMResults attribute of API.md against statsmodels (GLM, Logit, Probit) at test time.

Observed-information standard errors are compared with statsmodels' ``Logit``/``Probit`` and
``GLM.fit(method="newton")`` (Hessian of the log-likelihood); expected-information ones with
statsmodels' IRLS ``GLM.fit()`` (Fisher scoring), which is R's convention.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import glmclass as gc
from glmclass import links as L

SPECTOR = sm.datasets.spector.load_pandas().data
X = sm.add_constant(SPECTOR[["GPA", "TUCE", "PSI"]])
Y = SPECTOR["GRADE"]
SM_LINKS = {"logit": sm.families.links.Logit, "probit": sm.families.links.Probit,
            "cloglog": sm.families.links.CLogLog, "loglog": sm.families.links.LogLog,
            "cauchit": sm.families.links.Cauchy}
LINKS = {"logit": L.Logit, "probit": L.Probit, "cloglog": L.CLogLog, "loglog": L.LogLog,
         "cauchit": L.Cauchit}
R = 1e-8  # statsmodels converges to ~1e-12 here; this leaves room for its stopping rules


def close(a, b, rtol=R):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=rtol, atol=0)


@cache
def ours(link: str, information: str = "observed"):
    fam = gc.families.Binomial(link=LINKS[link]())
    return gc.GLM(Y, X, family=fam).fit(information=information)


@cache
def sm_glm(link: str, method: str):
    model = sm.GLM(Y, X, family=sm.families.Binomial(SM_LINKS[link]()))
    newton = model.fit(method="newton", tol=1e-14, maxiter=200, disp=0)
    if method == "newton":
        return newton
    return model.fit(start_params=newton.params, tol=1e-14, maxiter=200)  # IRLS, expected info


@pytest.mark.parametrize("cls", [gc.Logit, gc.Probit], ids=["logit", "probit"])
def test_discrete_model_attributes(cls):
    res = cls(Y, X).fit()
    ref = getattr(sm, cls.__name__)(Y, X).fit(disp=0, tol=1e-14, maxiter=100)
    close(res.params, ref.params)
    close(res.bse, ref.bse)  # observed information (Hessian), statsmodels' Logit/Probit
    close(res.tvalues, ref.tvalues)
    close(res.zvalues, ref.tvalues)
    close(res.pvalues, ref.pvalues, 1e-7)
    close(res.cov_params(), ref.cov_params())
    ci = res.conf_int()
    assert list(ci.columns) == ["lower", "upper"]
    close(ci, ref.conf_int())
    close(res.conf_int(alpha=0.1), ref.conf_int(alpha=0.1))
    for attr in ("llf", "llnull", "llr", "prsquared", "aic", "bic"):
        assert getattr(res, attr) == pytest.approx(getattr(ref, attr), rel=R), attr
    assert res.llr_pvalue == pytest.approx(ref.llr_pvalue, rel=1e-7)
    assert res.nobs == ref.nobs and res.df_model == ref.df_model
    assert res.df_resid == ref.df_resid
    assert res.converged and res.n_iter >= 1
    close(res.predict(), ref.predict())
    close(res.predict(X.iloc[:9]), ref.predict(X.iloc[:9]))
    close(res.predict(X.iloc[:9], which="linear"), ref.predict(X.iloc[:9], which="linear"))
    np.testing.assert_array_equal(res.pred_table(), ref.pred_table())
    np.testing.assert_array_equal(res.pred_table(0.3), ref.pred_table(0.3))


@pytest.mark.parametrize("link", list(LINKS))
def test_glm_observed_information_matches_statsmodels_newton(link):
    res, ref = ours(link), sm_glm(link, "newton")
    close(res.params, ref.params)
    close(res.bse, ref.bse)
    close(res.cov_params(), ref.cov_params())
    close(res.tvalues, ref.tvalues)


@pytest.mark.parametrize("link", list(LINKS))
def test_glm_expected_information_matches_statsmodels_irls(link):
    res, ref = ours(link, "expected"), sm_glm(link, "irls")
    close(res.params, ref.params)
    close(res.bse, ref.bse)
    close(res.pvalues, ref.pvalues, 1e-7)
    close(res.conf_int(), ref.conf_int())


@pytest.mark.parametrize("link", list(LINKS))
def test_glm_fit_statistics_and_residuals(link):
    res, ref = ours(link), sm_glm(link, "irls")
    for attr in ("llf", "llnull", "deviance", "null_deviance", "pearson_chi2", "aic", "scale"):
        assert getattr(res, attr) == pytest.approx(getattr(ref, attr), rel=R), attr
    assert res.bic == pytest.approx(ref.bic_llf, rel=R)
    assert res.nobs == ref.nobs and res.df_model == ref.df_model
    assert res.df_resid == ref.df_resid
    assert res.llr == pytest.approx(2 * (ref.llf - ref.llnull), rel=R)
    assert res.prsquared == pytest.approx(1 - ref.llf / ref.llnull, rel=R)
    assert res.llr_pvalue == pytest.approx(stats.chi2.sf(res.llr, 3), rel=1e-12)
    for kind in ("response", "pearson", "deviance", "working"):
        close(getattr(res, f"resid_{kind}"), getattr(ref, f"resid_{kind}"), 1e-7)
    close(res.fittedvalues, ref.fittedvalues)
    close(res.predict(X.iloc[3:8]), ref.predict(X.iloc[3:8]))
    close(res.predict(which="linear"), ref.predict(which="linear"))


def test_aic_bic_definitions():
    res = ours("cloglog")
    k = 4
    assert res.aic == pytest.approx(-2 * res.llf + 2 * k, rel=1e-14)
    assert res.bic == pytest.approx(-2 * res.llf + k * np.log(32), rel=1e-14)
    assert res.k_params == k


def test_labels_and_types():
    res = ours("probit")
    for attr in ("params", "bse", "tvalues", "pvalues", "resid_pearson", "fittedvalues"):
        assert isinstance(getattr(res, attr), pd.Series), attr
    assert list(res.params.index) == ["const", "GPA", "TUCE", "PSI"]
    assert list(res.cov_params().index) == list(res.cov_params().columns) == list(X.columns)
    assert res.resid_response.index.equals(Y.index)
    assert isinstance(res.nobs, float) and isinstance(res.converged, bool)
    assert isinstance(res.n_iter, int)
    assert res.information == "observed" and res.method == "irls"


def test_conf_int_alpha_validation():
    with pytest.raises(ValueError, match="alpha must be in"):
        ours("logit").conf_int(alpha=1.5)


def test_predict_class_and_threshold():
    data = SPECTOR.assign(grade=np.where(SPECTOR.GRADE == 1, "pass", "fail"))
    res = gc.Logit.from_formula("grade ~ GPA + TUCE + PSI", data).fit()
    p = res.predict()
    cls = res.predict(which="class")
    np.testing.assert_array_equal(cls, np.where(p > 0.5, "pass", "fail"))
    np.testing.assert_array_equal(res.predict(which="class", threshold=0.2),
                                  np.where(p > 0.2, "pass", "fail"))
    new = data.iloc[[0, 5, 10]]
    np.testing.assert_array_equal(res.predict(new, which="class"), cls.iloc[[0, 5, 10]])
    table = res.pred_table()
    assert list(table.index) == ["fail", "pass"] and list(table.columns) == ["fail", "pass"]
    assert table.index.name == "observed" and table.columns.name == "predicted"
    assert table.to_numpy().sum() == 32
    ref = sm.Logit(Y, X).fit(disp=0)
    np.testing.assert_array_equal(table.to_numpy(), ref.pred_table())
    prob = res.predict(which="prob")  # both levels, as every classifier's which="prob"
    assert list(prob.columns) == ["fail", "pass"]
    np.testing.assert_allclose(prob["pass"], res.predict(), rtol=1e-15)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-15)
    with pytest.raises(ValueError, match="which must be 'mean', 'prob'"):
        res.predict(which="probability")


def test_predict_class_needs_labels():
    data = pd.DataFrame({"p": [0.1, 0.5, 0.7, 0.2], "x": [0.0, 1.0, 2.0, 0.5]})
    res = gc.GLM.from_formula("p ~ x", data, var_weights=[10, 10, 10, 10]).fit()
    with pytest.raises(ValueError, match="binary response"):
        res.predict(which="class")
    with pytest.raises(ValueError, match="binary response"):
        res.pred_table()


def test_predict_with_offset_matches_statsmodels():
    counts = np.array([2, 3, 6, 7, 8, 9, 10, 12, 15, 20], dtype=float)
    expo = np.array([10, 17, 21, 19, 25, 27, 30, 29, 41, 50], dtype=float)
    x = np.arange(10, dtype=float)
    Xp = sm.add_constant(x)
    res = gc.GLM(counts, Xp, family=gc.families.Poisson(), offset=np.log(expo)).fit()
    ref = sm.GLM(counts, Xp, family=sm.families.Poisson(), offset=np.log(expo)).fit(tol=1e-14)
    close(res.params, ref.params)
    close(res.predict(), ref.predict())
    new = Xp[:3]
    close(res.predict(new, offset=np.log(expo[:3])), ref.predict(new, offset=np.log(expo[:3])))
    close(res.predict(new), np.exp(new @ res.params.to_numpy()))


def test_results_repr_and_cached_values_are_stable():
    res = ours("logit")
    assert repr(res) == "<GLMResults: GLM, nobs=32>"
    assert res.bse is res.bse  # cached
    cov = res.cov_params()
    cov.iloc[0, 0] = -1.0  # the caller's copy, not the cached matrix
    assert res.cov_params().iloc[0, 0] > 0


@pytest.mark.parametrize("link", list(LINKS))
def test_every_attribute_is_finite_and_warning_free_at_huge_eta(link):
    """Separated data push |eta| to hundreds: residuals, chi2 and the report stay exact."""
    import warnings

    data = pd.DataFrame({"x": np.r_[np.linspace(-10, -1, 20), np.linspace(1, 10, 20)]})
    data["y"] = (data.x > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GlmclassWarning)
        warnings.simplefilter("error", RuntimeWarning)
        res = gc.GLM.from_formula("y ~ x", data,
                                  family=gc.families.Binomial(link=LINKS[link]())).fit()
        for attr in ("resid_response", "resid_pearson", "resid_deviance", "resid_working"):
            assert np.all(np.isfinite(getattr(res, attr))), attr
        assert np.isfinite(res.pearson_chi2)
        str(res.summary()), res.summary().as_html(), res.pred_table(), res.conf_int()
    fam, eta, y = res.model.family, res.linear_predictor.to_numpy(), res.model.endog
    lm, l1m = fam.link.log_inverse(eta), fam.link.log_inverse_c(eta)
    lme = fam.link.log_mu_eta(eta)
    # y = 1: (1 - mu)/mu'; y = 0: -mu/mu' (e.g. minus the Mills ratio for the probit)
    with np.errstate(over="ignore"):  # the branch np.where discards may overflow
        working = np.where(y == 1, np.exp(l1m - lme), -np.exp(lm - lme))
        pearson = np.where(y == 1, np.exp(0.5 * (l1m - lm)), -np.exp(0.5 * (lm - l1m)))
    np.testing.assert_allclose(res.resid_working, working, rtol=1e-9)
    np.testing.assert_allclose(res.resid_pearson, pearson, rtol=1e-9, atol=1e-300)


def test_freq_weights_against_statsmodels():
    rng = np.random.default_rng(1)
    w = rng.integers(1, 4, 32).astype(float)
    res = gc.Probit(Y, X, freq_weights=w).fit(information="expected")
    ref = sm.GLM(Y, X, family=sm.families.Binomial(sm.families.links.Probit()),
                 freq_weights=w).fit(start_params=res.params.to_numpy(), tol=1e-14)
    close(res.params, ref.params)
    close(res.bse, ref.bse)
    for attr in ("llf", "deviance", "pearson_chi2", "df_resid", "null_deviance"):
        assert getattr(res, attr) == pytest.approx(getattr(ref, attr), rel=R), attr
    assert res.nobs == ref.model.wnobs == w.sum()  # statsmodels' nobs counts rows
    # per-row residuals carry sqrt(prior weight), as R's; statsmodels leaves freq weights out
    close(res.resid_pearson, ref.resid_pearson * np.sqrt(w))
    close(res.resid_deviance, ref.resid_deviance * np.sqrt(w))


def test_per_row_scores_and_leverages_agree_with_statsmodels():
    res = gc.Logit(Y, X).fit()
    ref = sm.GLM(Y, X, family=sm.families.Binomial()).fit(tol=1e-14)
    scores = res.score_obs()
    np.testing.assert_allclose(scores.to_numpy(), ref.model.score_obs(ref.params), rtol=1e-7,
                               atol=1e-12)
    np.testing.assert_allclose(scores.sum(), 0.0, atol=1e-8)  # zero at the MLE
    np.testing.assert_allclose(res.hat_matrix_diag, ref.get_hat_matrix_diag(), rtol=1e-8)
    assert res.hat_matrix_diag.sum() == pytest.approx(res.rank, rel=1e-10)
