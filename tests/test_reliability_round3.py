"""Silent wrong answers and unhelpful messages of issue 25 (round three), one test each."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import glmclass as gc  # noqa: E402
import glmclass.formula.api as gcf  # noqa: E402


@pytest.fixture(scope="module")
def birthwt() -> pd.DataFrame:
    return gc.datasets.load("birthwt")


def test_response_value_printed_with_full_precision(birthwt):
    # item 24: 1 + 1e-12 was reported as "the value 1"
    df = birthwt.assign(low=birthwt.low.astype(float))
    df.loc[0, "low"] = 1 + 1e-12
    with pytest.raises(ValueError, match=r"has the value 1\.000000000001:"):
        gcf.logit("low ~ age", df)


@pytest.mark.parametrize("seed", [-1, 1.5, "x", True])
def test_regularization_path_seed_is_checked(birthwt, seed):
    # item 20: a bad seed went through (or failed inside numpy's generator)
    model = gcf.logit("low ~ age + lwt", birthwt)
    with pytest.raises(ValueError, match=r"seed must be None, a non-negative integer"):
        model.regularization_path(5, cv=3, seed=seed)


def test_regularization_path_seed_generator_and_int_work(birthwt):
    model = gcf.logit("low ~ age + lwt", birthwt)
    a = model.regularization_path(5, cv=3, seed=7)
    b = model.regularization_path(5, cv=3, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(a.folds, b.folds)
    np.testing.assert_allclose(a.cv_mean, b.cv_mean, rtol=1e-12)


@pytest.mark.parametrize("prior", [["a", "b"], {0: "x", 1: 0.5}])
def test_lda_prior_of_strings_names_prior(birthwt, prior):
    # item 25: "could not convert string to float: 'a'"
    with pytest.raises(ValueError, match=r"^prior must"):
        gcf.lda("low ~ age", birthwt, prior=prior)


def test_decision_boundary_all_nan_feature_names_the_column(birthwt):
    # item 22: "Axis limits cannot be NaN or Inf" after numpy's All-NaN warnings
    res = gcf.lda("low ~ age + lwt", birthwt).fit()
    with pytest.raises(ValueError, match=r"column 'age' of data has no finite value"):
        gc.plot.decision_boundary(res, birthwt.assign(age=np.nan))
    res = gcf.lda("low ~ age + lwt + smoke", birthwt).fit()
    with pytest.raises(ValueError, match=r"column 'smoke' of data has no value.*fixed="):
        gc.plot.decision_boundary(res, birthwt.assign(smoke=np.nan), x="age", y="lwt")


def _separated() -> pd.DataFrame:
    x = np.r_[np.linspace(-3, -0.1, 30), np.linspace(0.1, 3, 30)]
    return pd.DataFrame({"x": x, "y": (x > 0).astype(float)})


def test_bayes_optimized_prior_at_its_upper_bound_warns():
    # item 9: separated data with a flat intercept: the scale was clipped at 1e5 in silence
    with pytest.warns(gc.errors.ConvergenceWarning, match=r"prior scale of x is clipped at its "
                                                          r"upper bound 1e\+05.*separated"):
        res = gcf.bayes_logit("y ~ x", _separated(), prior_scale_intercept=np.inf).fit(
            optimize_prior=True)
    assert res.prior_scale["x"] == pytest.approx(1e5, rel=1e-4)


def test_bayes_optimized_prior_at_its_lower_bound_warns(birthwt):
    # item 9: no signal: the scale was pinned at 1e-5 in silence
    rng = np.random.default_rng(0)
    df = birthwt.assign(noise=rng.normal(size=len(birthwt)),
                        low=rng.integers(0, 2, len(birthwt)))
    with pytest.warns(gc.errors.ConvergenceWarning, match=r"pinned at its lower bound 1e-05.*"
                                                          r"no signal"):
        res = gcf.bayes_logit("low ~ noise", df).fit(optimize_prior=True)
    assert np.all(np.abs(res.params) < 1e-8)


def test_bayes_optimized_prior_inside_the_bounds_does_not_warn(birthwt):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.errors.ConvergenceWarning)
        res = gcf.bayes_logit("low ~ age + lwt + smoke", birthwt).fit(optimize_prior=True)
    assert 1e-5 < res.prior_scale.iloc[0] < 1e5


@pytest.mark.parametrize("scale", [1e-160, 1e-300])
def test_gaussian_nb_feature_too_small_to_square_says_underflow(birthwt, scale):
    # item 10: 1e-160 gave posteriors off by 1e-6..1e-4 in silence; 1e-300 said "constant"
    with pytest.raises(ValueError, match=r"feature 'age' is too small in scale.*underflows.*"
                                         r"multiply it by 1e"):
        gcf.gaussian_nb("low ~ age + lwt", birthwt.assign(age=birthwt.age * scale)).fit()


@pytest.mark.parametrize("scale", [1e-100, 1e100])
def test_gaussian_nb_posteriors_invariant_to_a_representable_rescaling(birthwt, scale):
    a = gcf.gaussian_nb("low ~ age + lwt", birthwt).fit().predict(which="prob")
    b = gcf.gaussian_nb("low ~ age + lwt", birthwt.assign(age=birthwt.age * scale)).fit()
    np.testing.assert_allclose(b.predict(which="prob").to_numpy(), a.to_numpy(), rtol=1e-12)


def test_masked_entries_are_missing_not_data(birthwt):
    # item 8: the mask was ignored and masked entries were used as data
    X = np.column_stack([np.ones(len(birthwt)), birthwt[["age", "lwt"]].to_numpy(float)])
    y = birthwt["low"].to_numpy()
    mask = np.zeros_like(X, dtype=bool)
    mask[[3, 10], 1] = True
    Xm = np.ma.array(X.copy(), mask=mask)
    Xm.data[[3, 10], 1] = 1e6           # what is under the mask must not be read
    ym = np.ma.array(y, mask=np.isin(np.arange(len(y)), [20]))
    res = gc.Logit(ym, Xm).fit()
    keep = ~np.isin(np.arange(len(y)), [3, 10, 20])
    ref = gc.Logit(y[keep], X[keep]).fit()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-12)
    assert res.nobs == keep.sum()
    assert Xm.data[3, 1] == 1e6 and Xm.mask[3, 1]          # the caller's array is untouched
    with pytest.raises(ValueError, match="missing values"):
        gc.Logit(ym, Xm, missing="raise")
    w = np.ma.array(np.ones(len(y)), mask=np.isin(np.arange(len(y)), [7]))
    res_w = gc.Logit(y, X, freq_weights=w).fit()
    assert res_w.nobs == len(y) - 1


def test_predict_refuses_exposure_without_a_log_link(birthwt):
    # item 15: Logit.predict(new, exposure=[2]) silently added log 2 to a logit
    res = gcf.logit("low ~ age + lwt", birthwt).fit()
    with pytest.raises(ValueError, match=r"exposure= is for a log link.*not 'logit'"):
        res.predict(birthwt.head(2), exposure=[2, 2])
    pois = gcf.glm("ptl ~ age", birthwt, family=gc.families.Poisson()).fit()
    got = pois.predict(birthwt.head(2), exposure=[2, 2], which="linear")
    want = pois.predict(birthwt.head(2), which="linear") + np.log(2)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_lrtest_refuses_a_lasso_fit(birthwt):
    # item 5: p = 0.558 from a penalised llf (the ML fit gives 0.660)
    small = gcf.logit("low ~ age", birthwt).fit()
    lasso = gcf.logit("low ~ age + lwt + smoke", birthwt).fit_regularized(alpha=0.01)
    with pytest.raises(ValueError, match=r"model 2 is a penalised fit.*refit"):
        gc.lrtest(small, lasso)
    with pytest.raises(ValueError, match=r"penalised fit"):
        gc.anova(small, lasso)


def test_lrtest_refuses_different_links_or_families(birthwt):
    # item 5: lrtest(logit, probit) returned p = 0.94
    logit = gcf.logit("low ~ age", birthwt).fit()
    probit = gcf.probit("low ~ age + lwt", birthwt).fit()
    with pytest.raises(ValueError, match=r"logit link and model 2 .*probit link.*not nested"):
        gc.lrtest(logit, probit)
    ok = gc.lrtest(logit, gcf.logit("low ~ age + lwt", birthwt).fit())
    assert 0 < ok.pvalue < 1


@pytest.mark.parametrize("n", [50, 30000], ids=["small design", "large design"])
def test_finite_checks_name_the_column_on_small_and_large_designs(n):
    """On a small and a larger design: an infinite column, a column too small to square, and
    an infinite value in a per-row array given as one broadcast value are named."""
    rng = np.random.default_rng(0)
    X = np.c_[np.ones(n), rng.normal(size=(n, 2))]
    y = (rng.random(n) < 0.5).astype(float)
    names = gc.Logit(y, X).exog_names
    bad = X.copy()
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match=f"exog column '{names[1]}' has infinite values"):
        gc.Logit(y, bad)
    tiny = X.copy()
    tiny[:, 2] *= 1e-200
    with pytest.raises(ValueError, match=f"feature '{names[2]}' is too small in scale"):
        gc.Logit(y, tiny)
    with pytest.raises(ValueError, match="offset has infinite values"):
        gc.GLM(y, X, family=gc.families.Binomial(), offset=np.broadcast_to(np.inf, (n,)))
    assert gc.Logit(y, X).fit().converged
