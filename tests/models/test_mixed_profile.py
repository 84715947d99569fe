"""conf_int(method="profile") of MixedGLM fits against lme4's confint(method = "profile")
(tests/reference/r/mixed_profile.R -> mixed_profile.json), on cbpp, a random-intercept
logit, and correlated and uncorrelated random slopes ((x | g): SDs and the correlation).

Tolerance: 2e-4 absolute on every bound (observed: at most 6.4e-5 on cbpp and the random
intercept, 7.8e-5 on (x | g)'s sd_x upper bound, 3.1e-5 on (x || g)). lme4 interpolates its
profile zeta between profile points with a spline (the R script makes the profile 4 times
denser than lme4's default to shrink that error), while glmclass finds each bound as the exact
root of the signed root deviance; the spline is what separates the two, not the deviance.
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import glmclass as gc
from glmclass import families as F
from glmclass.errors import GlmclassWarning
from glmclass.results.mixed_profile import (
    MixedProfile,
    profiled_parameters,
    sdcor_from_theta,
    theta_from_sdcor,
)

REF = Path(__file__).resolve().parents[1] / "reference"
R = json.loads((REF / "mixed_profile.json").read_text())
CASES = {
    "profile_cbpp": ("cbpp", "cbind(incidence, size - incidence) ~ C(period) + (1 | herd)"),
    "profile_ri_logit": ("mixed_ri", "y ~ x1 + x2 + (1 | g)"),
    "profile_slope": ("mixed_slope", "y ~ x + (x | g)"),
    "profile_slope_uncorr": ("mixed_slope", "y ~ x + (x || g)"),
}


@cache
def data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv")


@cache
def fitted(name: str):
    file, formula = CASES[name]
    return gc.MixedGLM.from_formula(formula, data(file), family=F.Binomial()).fit()


@pytest.mark.parametrize("name", CASES)
def test_profile_intervals_match_lme4(name):
    ref, res = R[name], fitted(name)
    assert -2 * res.llf <= ref["objective"] + 1e-6
    ci = res.conf_int(method="profile")
    k = len(res.params)
    assert list(ci.index[:-k]) == list(ref["names"][:-k])  # lme4's names, order of SDs/cors
    assert list(ci.index[-k:]) == list(res.params.index)
    np.testing.assert_allclose(ci["lower"], ref["lower"], atol=2e-4)
    np.testing.assert_allclose(ci["upper"], ref["upper"], atol=2e-4)
    # no method: Wald, lme4's confint(method = "Wald")
    wald = res.conf_int()
    assert list(wald.index) == list(res.params.index)
    np.testing.assert_allclose(wald.to_numpy(), ref["wald"], atol=2e-3 * res.bse.max())


def test_a_bound_is_where_the_profile_deviance_reaches_the_cutoff():
    res = fitted("profile_cbpp")
    ci = res.conf_int(alpha=0.1, method="profile")
    q = stats.norm.isf(0.05)
    prof = MixedProfile(res, 1)  # the intercept
    assert prof.z(ci.loc["Intercept", "upper"]) == pytest.approx(q, abs=1e-6)
    assert prof.z(ci.loc["Intercept", "lower"]) == pytest.approx(-q, abs=1e-6)
    wide = res.conf_int(method="profile")
    assert (wide["lower"] < ci["lower"]).all() and (wide["upper"] > ci["upper"]).all()


def test_correlated_term_bounds_are_roots_or_limits_as_lme4():
    """(x | g) at level 0.999 against lme4: where the profile of the correlation stays inside
    the cutoff up to 1 (its zeta there is 2.86 < 3.29), the bound is 1 (lme4's confint puts the
    limit where its spline gives NA); the other bounds are roots of the signed root."""
    ref, res = R["profile_slope"], fitted("profile_slope")
    ci = res.conf_int(alpha=0.001, method="profile")
    assert ci.loc["cor_x.(Intercept)|g", "upper"] == 1.0
    assert ref["upper_999"][1] == 1.0
    np.testing.assert_allclose(ci["lower"], ref["lower_999"], atol=2e-4)
    np.testing.assert_allclose(ci["upper"], ref["upper_999"], atol=2e-4)
    q = stats.norm.isf(0.0005)
    for j, side in ((1, "lower"), (2, "lower"), (2, "upper")):
        z = MixedProfile(res, j).z(ci.iloc[j][side])
        assert z == pytest.approx(q if side == "upper" else -q, abs=1e-6)


def test_singular_fit_sd_interval_starts_at_zero():
    d = pd.read_csv(REF / "data" / "mixed_singular.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GlmclassWarning)
        res = gc.MixedLogit.from_formula("y ~ x + (1 | g)", d).fit()
        ci = res.conf_int(method="profile")
    lo, hi = ci.loc["sd_(Intercept)|g"]
    assert lo == 0.0 and hi > 0.0
    q = stats.norm.isf(0.025)
    assert MixedProfile(res, 0).z(hi) == pytest.approx(q, abs=1e-6)


def test_which_parameters_are_profiled():
    """Every term's SDs and correlations get lme4's names and order (``(x || g)`` is two
    scalar terms, both named ``|g`` as lme4's profile does), positions in (sdcor, beta)."""
    d = pd.read_csv(REF / "data" / "mixed_slope.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GlmclassWarning)
        uncorr = gc.MixedLogit.from_formula("y ~ x + (x || g)", d).fit(maxiter=1)
        corr = gc.MixedLogit.from_formula("y ~ x + (x | g)", d).fit(maxiter=1)
    assert profiled_parameters(uncorr) == [("sd_(Intercept)|g", 0, 0.0), ("sd_x|g", 1, 0.0),
                                           ("Intercept", 2, -np.inf), ("x", 3, -np.inf)]
    assert profiled_parameters(corr) == [("sd_(Intercept)|g", 0, 0.0),
                                         ("cor_x.(Intercept)|g", 1, -1.0), ("sd_x|g", 2, 0.0),
                                         ("Intercept", 3, -np.inf), ("x", 4, -np.inf)]


def test_sdcor_and_theta_are_inverse():
    """lme4's Cv_to_Sv / Sv_to_Cv on a 3 x 3 factor: SDs and correlations of ``L L'`` in
    theta's (column-major) order, and back."""
    L = np.array([[0.9, 0.0, 0.0], [0.3, 0.5, 0.0], [-0.2, 0.4, 0.7]])
    theta = np.array([0.9, 0.3, -0.2, 0.5, 0.4, 0.7])
    S = L @ L.T
    sd = np.sqrt(np.diag(S))
    R = S / np.outer(sd, sd)
    want = [sd[0], R[1, 0], R[2, 0], sd[1], R[2, 1], sd[2]]
    np.testing.assert_allclose(sdcor_from_theta(theta, 3), want, rtol=1e-14)
    np.testing.assert_allclose(theta_from_sdcor(np.array(want), 3), theta, rtol=1e-14)
    # p = 2 at a correlation of 1 (R singular): the slope's row is sd * (1, 0)
    np.testing.assert_allclose(theta_from_sdcor(np.array([0.5, 1.0, 2.0]), 2), [0.5, 2.0, 0.0])
    assert theta_from_sdcor(np.array([1.0, 0.9, -0.9, 1.0, 0.9, 1.0]), 3) is None


def test_unknown_method_is_named():
    res = fitted("profile_cbpp")
    with pytest.raises(ValueError, match="method must be 'wald' or 'profile', got 'spline'"):
        res.conf_int(method="spline")
    with pytest.raises(ValueError, match="alpha"):
        res.conf_int(alpha=2.0, method="profile")



class _NoSignChange:
    """A profile whose signed root is past the cutoff at both ends of the bracket (its value
    at the estimate moved: a refit there found another optimum)."""

    bhat, mle_start, start = 0.0, None, None

    def z(self, b: float) -> float:
        return 3.0


def test_a_profile_that_is_not_monotone_gives_nan_with_a_warning_not_scipys_error():
    """scipy's "f(a) and f(b) must have different signs" reached the user; lme4 gives NA."""
    from glmclass.results.mixed_profile import profile_bound

    with pytest.warns(gc.GlmclassWarning, match="profile of sd_x.*not monotone"):
        assert np.isnan(profile_bound(_NoSignChange(), 1.96, 1.0, 0.5, (0.0, np.inf), "sd_x"))
