"""``get_margeff`` with statsmodels' options (issue 26 §2; issue 25 items 11, 12, 19):
``at="overall"|"mean"|"median"|"zero"|"all"``, every method, ``atexog``, ``dummy``,
``count``, on Logit, Probit, Poisson and MNLogit, equal to statsmodels' numbers; a
categorical term at the means; an aliased column's NaN; a spline at its boundary."""

import warnings

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass import datasets

smf = pytest.importorskip("statsmodels.formula.api")

F = "GRADE ~ GPA + TUCE + PSI"


@pytest.fixture(scope="module")
def spector():
    sp = datasets.load("spector")
    return sp.assign(count=(sp.TUCE // 5).astype(float))


@pytest.fixture(scope="module")
def fits(spector):
    return {
        "logit": (gcf.logit(F, spector).fit(), smf.logit(F, spector).fit(disp=0, tol=1e-12)),
        "probit": (gcf.probit(F, spector).fit(), smf.probit(F, spector).fit(disp=0, tol=1e-12)),
        "poisson": (gcf.glm("count ~ GPA + PSI + GRADE", spector,
                            family=gc.families.Poisson()).fit(),
                    smf.poisson("count ~ GPA + PSI + GRADE", spector).fit(disp=0, tol=1e-12)),
    }


def options():
    for at in ("overall", "mean", "median", "zero"):
        for method in ("dydx", "eyex", "dyex", "eydx"):
            for dummy, count in ((False, False), (True, False), (False, True), (True, True)):
                if (dummy or count) and (at in ("median", "zero") or method in ("eyex", "dyex")):
                    continue  # statsmodels refuses these
                for atexog in (None, {1: 3.0}):
                    yield at, method, dummy, count, atexog


@pytest.mark.parametrize("kind", ["logit", "probit", "poisson"])
def test_every_option_equals_statsmodels(fits, kind):
    ours, ref = fits[kind]
    n = 0
    for at, method, dummy, count, atexog in options():
        a = ours.get_margeff(at=at, method=method, dummy=dummy, count=count, atexog=atexog)
        b = ref.get_margeff(at=at, method=method, dummy=dummy, count=count, atexog=atexog)
        where = (at, method, dummy, count, atexog)
        np.testing.assert_allclose(a.margeff.to_numpy(), b.margeff, rtol=1e-6, err_msg=str(where))
        np.testing.assert_allclose(a.margeff_se.to_numpy(), b.margeff_se, rtol=1e-6,
                                   err_msg=str(where))
        n += 1
    assert n == 56
    a, b = ours.get_margeff(at="all"), ref.get_margeff(at="all")
    np.testing.assert_allclose(a.margeff.to_numpy(), b.margeff, rtol=1e-6, atol=1e-12)
    assert a.margeff.shape == (32, 3) and list(a.margeff.index) == list(range(32))


def test_atexog_by_name_equals_by_position(fits):
    ours, _ = fits["logit"]
    by_pos = ours.get_margeff(at="mean", atexog={2: 25.0})
    by_name = ours.get_margeff(at="mean", atexog={"TUCE": 25.0})
    pd.testing.assert_series_equal(by_pos.margeff, by_name.margeff)
    with pytest.raises(ValueError, match="'AGE' is not a numeric variable"):
        ours.get_margeff(atexog={"AGE": 1.0})
    with pytest.raises(ValueError, match="at='median' with dummy=True"):
        ours.get_margeff(at="median", dummy=True)
    with pytest.raises(ValueError, match="at must be one of"):
        ours.get_margeff(at="means")


def test_mnlogit_equals_statsmodels():
    bw = datasets.load("birthwt")
    bw = bw.assign(code=bw.race.astype("category").cat.codes)
    f = "age + lwt + ftv + smoke"
    ours = gcf.mnlogit("race ~ " + f, bw).fit()
    ref = smf.mnlogit("code ~ " + f, bw).fit(disp=0, maxiter=200, tol=1e-12)
    np.testing.assert_allclose(ours.params.to_numpy(), ref.params.to_numpy(), rtol=1e-6)
    names = ["age", "lwt", "ftv", "smoke"]
    for at in ("overall", "mean", "median", "zero"):  # (statsmodels' MNLogit fails with
        for method in ("dydx", "eydx"):                # dummy=True or count=True)
            a = ours.get_margeff(at=at, method=method)
            b = ref.get_margeff(at=at, method=method)
            # statsmodels: (variables, levels); glmclass: (level, term), every level
            mine = a.margeff.unstack("level").loc[names, ours.levels]
            np.testing.assert_allclose(mine.to_numpy(), b.margeff, rtol=1e-6, atol=1e-12,
                                       err_msg=f"{at} {method}")
            se = a.margeff_se.unstack("level").loc[names, ours.levels]
            np.testing.assert_allclose(se.to_numpy(), b.margeff_se, rtol=1e-6, atol=1e-12)
    a, b = ours.get_margeff(at="all"), ref.get_margeff(at="all")
    mine = a.margeff.loc[:, [(lv, n) for n in names for lv in ours.levels]].to_numpy()
    np.testing.assert_allclose(mine, b.margeff.reshape(len(bw), -1), rtol=1e-6, atol=1e-12)


def test_categorical_term_at_mean_is_statsmodels_atmeans(spector):
    f = "GRADE ~ GPA + TUCE + C(PSI)"
    ours = gcf.logit(f, spector).fit().get_margeff(at="mean")
    ref = smf.logit(f, spector).fit(disp=0, tol=1e-12).get_margeff(at="mean", dummy=True)
    names = ["C(PSI)[T.1]", "GPA", "TUCE"]
    np.testing.assert_allclose(ours.margeff[names].to_numpy(), ref.margeff, rtol=1e-7)
    np.testing.assert_allclose(ours.margeff_se[names].to_numpy(), ref.margeff_se, rtol=1e-6)


def test_aliased_variable_is_nan(spector):
    df = spector.assign(G2=2 * spector.GPA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.RankDeficientWarning)
        res = gcf.logit("GRADE ~ GPA + TUCE + G2", df).fit()
        arr = gc.Logit(df.GRADE, df[["GPA", "TUCE", "G2"]].assign(const=1.0)).fit()
    for me in (res.get_margeff(), arr.get_margeff()):
        assert np.isnan(me.margeff["G2"]) and np.isnan(me.margeff_se["G2"])
    plain = gcf.logit("GRADE ~ GPA + TUCE", df).fit().get_margeff()
    np.testing.assert_allclose(res.get_margeff().margeff[["GPA", "TUCE"]], plain.margeff,
                               rtol=1e-10)
    np.testing.assert_allclose(res.get_margeff().margeff_se[["GPA", "TUCE"]], plain.margeff_se,
                               rtol=1e-8)


def test_spline_at_its_boundary_knots(spector):
    res = gcf.logit("GRADE ~ bs(GPA, df=4) + TUCE", spector).fit()
    me = res.get_margeff()  # patsy cannot evaluate bs beyond the data: one-sided differences
    assert np.isfinite(me.margeff).all() and np.isfinite(me.margeff_se).all()
    rows = res.get_margeff(at="all").margeff["GPA"]
    np.testing.assert_allclose(rows.mean(), me.margeff["GPA"], rtol=1e-12)
    h = 1e-4
    for i in (spector.GPA.idxmax(), spector.GPA.idxmin()):
        d = -1.0 if i == spector.GPA.idxmax() else 1.0
        at = spector.loc[[i]]
        p = [res.predict(at.assign(GPA=at.GPA + d * s * h)).iloc[0] for s in (0, 1, 2)]
        slope = d * (-3 * p[0] + 4 * p[1] - p[2]) / (2 * h)  # error O(h^2)
        assert rows[i] == pytest.approx(slope, rel=1e-6)
