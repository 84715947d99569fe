"""The model-side vocabulary of statsmodels (issue 26 §2): ``loglike``, ``score``,
``hessian``, ``information`` at any parameters, ``endog_names``/``exog_names``,
``from_formula(..., subset=)``, and other libraries' spellings answered with the glmclass
equivalent."""

import numpy as np
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import datasets

sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")


@pytest.fixture(scope="module")
def spector():
    return datasets.load("spector")


def test_logit_loglike_score_hessian_equal_statsmodels(spector):
    f = "GRADE ~ GPA + TUCE + PSI"
    model = gcf.logit(f, spector)
    ref = smf.logit(f, spector)
    b = np.array([-10.0, 2.0, 0.1, 1.5])  # away from the estimate: every term counts
    np.testing.assert_allclose(model.loglike(b), ref.loglike(b), rtol=1e-12)
    np.testing.assert_allclose(model.score(b), ref.score(b), rtol=1e-10)
    np.testing.assert_allclose(model.hessian(b), ref.hessian(b), rtol=1e-10)
    np.testing.assert_allclose(model.information(b), -ref.hessian(b), rtol=1e-10)
    res = model.fit()
    assert model.loglike(res.params) == pytest.approx(res.llf, rel=1e-12)
    assert model.endog_names == "GRADE" == ref.endog_names
    assert model.exog_names == ref.exog_names


def test_probit_observed_and_expected_hessian(spector):
    f = "GRADE ~ GPA + TUCE + PSI"
    model = gcf.probit(f, spector)
    ref = smf.probit(f, spector)
    b = np.array([-7.0, 1.5, 0.05, 1.4])
    np.testing.assert_allclose(model.loglike(b), ref.loglike(b), rtol=1e-12)
    np.testing.assert_allclose(model.score(b), ref.score(b), rtol=1e-9)
    np.testing.assert_allclose(model.hessian(b), ref.hessian(b), rtol=1e-9)
    glm = sm.GLM(ref.endog, ref.exog, family=sm.families.Binomial(sm.families.links.Probit()))
    # statsmodels' GLM.information is the expected Hessian (negative definite); glmclass
    # gives the Fisher information itself
    np.testing.assert_allclose(model.information(b), -glm.hessian(b, observed=False), rtol=1e-9)
    np.testing.assert_allclose(model.information(b), -glm.information(b), rtol=1e-9)


def test_poisson_and_gaussian_glm(spector):
    df = spector.assign(count=(spector.TUCE // 5).astype(float))
    f = "count ~ GPA + PSI"
    model = gcf.glm(f, df, family=gc.families.Poisson())
    ref = smf.glm(f, df, family=sm.families.Poisson())
    b = np.array([0.5, 0.3, -0.1])
    np.testing.assert_allclose(model.loglike(b), ref.loglike(b), rtol=1e-12)
    np.testing.assert_allclose(model.score(b), ref.score(b), rtol=1e-10)
    np.testing.assert_allclose(model.hessian(b), ref.hessian(b), rtol=1e-10)
    gauss = gcf.glm("TUCE ~ GPA + PSI", spector, family=gc.families.Gaussian())
    res = gauss.fit()
    assert gauss.loglike(res.params) == pytest.approx(res.llf, rel=1e-12)
    sm_res = smf.glm("TUCE ~ GPA + PSI", spector).fit()
    assert gauss.loglike(res.params) == pytest.approx(sm_res.llf, rel=1e-10)


def test_mnlogit_loglike_score_hessian():
    bw = datasets.load("birthwt")
    df = bw.assign(code=bw.race.astype("category").cat.codes, lwt=bw.lwt / 100)
    model = gcf.mnlogit("race ~ age + lwt", df)
    ref = smf.mnlogit("code ~ age + lwt", df)
    B = np.array([[1.0, 2.0], [-0.05, 0.02], [0.3, -0.4]])  # (k, K - 1)
    flat = B.ravel(order="F")  # level by level, as statsmodels
    np.testing.assert_allclose(model.loglike(flat), ref.loglike(flat), rtol=1e-12)
    np.testing.assert_allclose(model.loglike(B), ref.loglike(flat), rtol=1e-12)
    np.testing.assert_allclose(model.score(flat), ref.score(flat), rtol=1e-10)
    np.testing.assert_allclose(model.hessian(flat), ref.hessian(flat), rtol=1e-10)
    res = model.fit()
    assert model.loglike(res.params) == pytest.approx(res.llf, rel=1e-12)
    sm_res = ref.fit(disp=0, tol=1e-12)
    assert model.loglike(res.params) == pytest.approx(sm_res.llf, rel=1e-10)


def test_subset_equals_statsmodels(spector):
    f = "GRADE ~ GPA + TUCE"
    mask = spector.PSI == 0
    ref = smf.logit(f, spector, subset=mask).fit(disp=0)
    for subset in (mask, mask.to_numpy(), spector.index[mask]):
        res = gcf.logit(f, spector, subset=subset).fit()
        np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-7)
        assert res.nobs == ref.nobs
    w = np.arange(1.0, 33.0)
    res = gcf.logit(f, spector, subset=mask, freq_weights=w).fit()
    direct = gcf.logit(f, spector[mask], freq_weights=w[mask.to_numpy()]).fit()
    np.testing.assert_allclose(res.params, direct.params, rtol=1e-12)
    with pytest.raises(ValueError, match="subset is a boolean mask of 3 values for 32 rows"):
        gcf.logit(f, spector, subset=[True, False, True])
    with pytest.raises(ValueError, match="not in the index"):
        gcf.logit(f, spector, subset=[100, 200])


@pytest.mark.parametrize("call, words", [
    (lambda d: gcf.logit("GRADE ~ GPA", d, exposure=np.ones(32)),
     ["Logit does not take exposure=", "log link", "offset="]),
    (lambda d: gcf.gaussian_nb("GRADE ~ GPA", d, freq_weights=np.ones(32)),
     ["GaussianNB does not take freq_weights=", "repeat each row"]),
    (lambda d: gcf.lda("GRADE ~ GPA", d, priors=[0.5, 0.5]),
     ["LDA does not take priors=", "use prior="]),
    (lambda d: gcf.logit("GRADE ~ GPA", d, maxiter=5),
     ["maxiter= is an option of fit()"]),
    (lambda d: gcf.logit("GRADE ~ GPA", d).fit_regularized(0.1, offset=np.zeros(32)),
     ["Logit.fit_regularized() does not take offset=", "argument of the model"]),
    (lambda d: gcf.logit("GRADE ~ GPA", d).fit_regularized(0.1, method="l1"),
     ["does not take method=", "alpha_glmclass = alpha_statsmodels / n"]),
    (lambda d: gcf.logit("GRADE ~ GPA", d).fit_regularized(0.1, refit=True),
     ["does not take refit=", "fit the model again"]),
    (lambda d: gcf.logit("GRADE ~ GPA", d).fit_regularized(0.1, trim_mode="auto"),
     ["does not take trim_mode=", "exact zeros"]),
])
def test_other_spellings_answered(spector, call, words):
    with pytest.raises(TypeError) as info:
        call(spector)
    text = str(info.value)
    assert "_setup" not in text
    for w in words:
        assert w in text


def test_fit_regularized_keeps_its_signature_and_warning_site(spector):
    import inspect
    import warnings

    sig = inspect.signature(gc.Logit.fit_regularized)
    assert "L1_wt" in sig.parameters and "penalty_factor" in sig.parameters
    assert "Parameters" in (gc.Logit.fit_regularized.__doc__ or "")
    model = gcf.logit("GRADE ~ GPA + TUCE + PSI", spector)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit_regularized(0.001, maxiter=1)
    ours = [w for w in caught if issubclass(w.category, gc.ConvergenceWarning)]
    assert ours and ours[0].filename == __file__  # points at the user's call


def test_alpha_scaling_against_statsmodels_l1(spector):
    """The documented conversion: statsmodels' method="l1" with alpha a on the slopes (its
    intercept left free) is glmclass's fit_regularized(a / n)."""
    import warnings

    f = "GRADE ~ GPA + TUCE + PSI"
    a = 2.0
    ref = smf.logit(f, spector)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ref.fit_regularized(method="l1", alpha=np.array([0.0, a, a, a]), disp=0,
                                     acc=1e-12, trim_mode="off")
    ours = gcf.logit(f, spector).fit_regularized(a / len(spector), tol=1e-12)
    np.testing.assert_allclose(ours.params.to_numpy(), theirs.params.to_numpy(), rtol=1e-6)
    assert "alpha_glmclass = alpha_statsmodels / n" in gc.Logit.fit_regularized.__doc__
