"""The one likelihood-results base (:mod:`glmclass.results.likelihood`): every likelihood
model's results get their Wald inference, criteria and likelihood-ratio test from it, read
through public names, and are complete and frozen when built."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import glmclass as gc
from glmclass.results.likelihood import LikelihoodResults

SPECTOR = sm.datasets.spector.load_pandas().data
rng = np.random.default_rng(7)
N = 300
THREE = pd.DataFrame({"x": rng.normal(size=N), "z": rng.normal(size=N),
                      "g": rng.choice(["a", "b", "c"], size=N)})
THREE["y"] = np.where(THREE.x + rng.normal(size=N) > 0.5, "hi",
                      np.where(THREE.z + rng.normal(size=N) > 0, "mid", "lo"))
THREE["v"] = 1.0 + THREE.x + 0.5 * THREE.z + rng.normal(size=N)


def fits() -> dict:
    return {
        "logit": gc.Logit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR).fit(),
        "gaussian": gc.GLM.from_formula("v ~ x + C(g)", THREE,
                                       family=gc.families.Gaussian()).fit(),
        "mnlogit": gc.MNLogit.from_formula("y ~ x + z + C(g)", THREE).fit(),
        "bayes": gc.BayesLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR,
                                            prior_scale=2.5).fit(),
        "firth": gc.FirthLogit.from_formula("GRADE ~ GPA + TUCE + PSI", SPECTOR).fit(),
    }


FITS = fits()


@pytest.fixture(params=sorted(FITS))
def res(request):
    return FITS[request.param]


def test_every_likelihood_model_shares_the_base(res):
    assert isinstance(res, LikelihoodResults)


def test_assigning_after_construction_raises(res):
    with pytest.raises(AttributeError, match="frozen when built.*'params'"):
        res.params = res.params * 2
    with pytest.raises(AttributeError, match="frozen when built"):
        res.new_name = 1
    _ = res.llf  # a cached value, in the instance dict
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del res.llf
    assert "new_name" not in vars(res)


def test_cached_properties_still_cache(res):
    assert res.bse is res.bse
    assert res.pvalues is res.pvalues
    assert np.isfinite(res.aic)


def test_replaced_is_a_frozen_copy_sharing_the_numbers(res):
    bse = res.bse
    new = res.replaced(separation="marker") if "separation" in vars(res) else \
        res.replaced(model=res.model)
    assert new is not res and type(new) is type(res)
    assert new.bse is bse
    if "separation" in vars(res):
        assert new.separation == "marker" and res.separation != "marker"
    with pytest.raises(AttributeError, match="frozen when built"):
        new.params = None
    with pytest.raises(AttributeError, match="has no not_an_attribute"):
        res.replaced(not_an_attribute=1)


def test_pickled_results_stay_frozen_and_equal(res):
    _ = res.bse
    again = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(again.conf_int(), res.conf_int())
    with pytest.raises(AttributeError, match="frozen when built"):
        again.params = None


def test_wald_inference_from_the_public_inputs(res):
    """bse, z or t, p-values and intervals follow from cov_values, flat_params and use_t, in
    the flat order of coef_index (level-major for the multinomial logit)."""
    b, V = res.flat_params, res.cov_values
    se = np.sqrt(np.diag(V))
    np.testing.assert_array_equal(res.flat(res.bse), se)
    np.testing.assert_array_equal(res.flat(res.tvalues), b / se)
    ref = stats.t(res.df_resid) if res.use_t else stats.norm
    np.testing.assert_allclose(res.flat(res.pvalues), 2 * ref.sf(np.abs(b / se)), rtol=1e-14)
    q = ref.isf(0.05)
    ci = res.conf_int(0.1)
    assert ci.index.equals(res.coef_index) and res.cov_params().index.equals(res.coef_index)
    np.testing.assert_allclose(ci["lower"], b - q * se, rtol=1e-14)
    np.testing.assert_allclose(ci["upper"], b + q * se, rtol=1e-14)
    assert res.critical_value(0.1) == pytest.approx(q, rel=1e-15)


def test_t_for_an_estimated_dispersion_z_otherwise():
    assert FITS["gaussian"].use_t and FITS["gaussian"].tvalues.name == "t"
    assert not FITS["logit"].use_t and FITS["logit"].tvalues.name == "z"
    assert not FITS["mnlogit"].use_t


def test_wald_test_terms_reads_the_flat_coefficients(res):
    """The joint test of each term over every equation, by hand from cov_values."""
    table = res.wald_test_terms()
    p = res.estimable.size
    k = res.flat_params.size // p
    names = res.model.exog_names
    for term, row in table.iterrows():
        cols = [j for j, n in enumerate(names) if n == term or n.startswith(f"{term}[")]
        pos = [lv * p + c for lv in range(k) for c in cols]
        b, V = res.flat_params[pos], res.cov_values[np.ix_(pos, pos)]
        w = float(b @ np.linalg.solve(V, b))
        assert row["df"] == len(pos)
        assert row["statistic"] == pytest.approx(w, rel=1e-10)


def test_criteria_and_likelihood_ratio(res):
    assert res.aic == pytest.approx(-2 * res.llf + 2 * res.k_params, rel=1e-15)
    assert res.bic == pytest.approx(-2 * res.llf + res.k_params * np.log(res.nobs), rel=1e-15)
    assert res.prsquared == pytest.approx(1 - res.llf / res.llnull, rel=1e-15)


def test_separation_is_given_by_the_model_and_frozen():
    df = pd.DataFrame({"x": [1.0, 2, 3, 4, 5, 6], "y": [0, 0, 0, 1, 1, 1]})
    with pytest.warns(gc.errors.SeparationWarning):
        res = gc.Logit.from_formula("y ~ x", df).fit()
    assert res.separation.separated
    with pytest.raises(AttributeError, match="frozen when built"):
        res.separation = None
    assert "separat" in str(res.summary()).lower()


# --- the same base over Dask data: the rows of a fit go through the row source ---------------
DASK_CASES = {
    "logit": (gc.Logit, "b ~ x + z + C(g)", {}),
    "gaussian": (gc.GLM, "v ~ x + C(g)", {"family": gc.families.Gaussian()}),
    "mnlogit": (gc.MNLogit, "y ~ x + z + C(g)", {}),
    "firth": (gc.FirthLogit, "b ~ x + z + C(g)", {}),
}


@pytest.mark.parametrize("case", sorted(DASK_CASES))
def test_dask_fit_gets_the_same_inference_and_is_frozen(case):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    model, formula, kw = DASK_CASES[case]
    frame = THREE.assign(b=(THREE.x + THREE.z + rng.normal(size=N) > 0).astype(float))
    with dask.config.set(scheduler="sync"):
        mem = model.from_formula(formula, frame, **kw).fit()
        lazy = model.from_formula(formula, dd.from_pandas(frame, npartitions=3), **kw).fit()
        for name in ("tidy", "wald_test_terms", "conf_int", "cov_params"):
            pd.testing.assert_frame_equal(getattr(lazy, name)(), getattr(mem, name)(),
                                          check_exact=False, rtol=1e-10, atol=0)
        for name in ("aic", "bic", "llr", "prsquared"):
            assert getattr(lazy, name) == pytest.approx(getattr(mem, name), rel=1e-10)
        np.testing.assert_allclose(lazy.raw_bse(), mem.raw_bse(), rtol=1e-10)
    with pytest.raises(AttributeError, match="frozen when built"):
        lazy.params = mem.params


@pytest.mark.parametrize("model", [gc.Logit, gc.MNLogit, gc.FirthLogit])
def test_summary_names_the_aliased_columns(model):
    frame = THREE.assign(b=(THREE.x + rng.normal(size=N) > 0).astype(float), x2=2 * THREE.x)
    y = "y" if model is gc.MNLogit else "b"
    with pytest.warns(UserWarning, match="x2"):
        res = model.from_formula(f"{y} ~ x + z + x2", frame).fit()
    assert res.aliased == ["x2"]
    assert "Aliased (linearly dependent) columns with NaN estimates: x2." in str(res.summary())
