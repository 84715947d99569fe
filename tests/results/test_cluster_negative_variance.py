"""A two-way cluster-robust covariance with a negative variance (issue 25, item 2).

Cameron, Gelbach and Miller's two-way sandwich V_g + V_h - V_gh can be indefinite. R's
``sandwich::vcovCL(fit, cluster = ~ g + h, type = "HC1")`` reports it as it is (``fix =
FALSE``, its default) and ``fix = TRUE`` sets its negative eigenvalues to zero. The references
(``tests/reference/cluster_fix.json``, from ``tests/reference/r/cluster_fix.R``) are two
logits whose covariance has a negative variance (the slope of z; the intercept).

glmclass gives R's matrix, NaN standard errors for the negative variances with one warning
naming the coefficients and offering ``fix`` (it was numpy's "invalid value encountered in
sqrt"), R's ``fix = TRUE`` matrix with ``cov_kwds={"fix": True}``, and NaN, not 0, for the
standard errors of predictions, marginal effects and constraints whose variance is negative.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc

REF = json.loads((Path(__file__).parents[1] / "reference" / "cluster_fix.json").read_text())
CASES = sorted(REF["cases"])
TWO_WAY = {"cov_type": "cluster", "cov_kwds": {"groups": ["g", "h"]}}
FIXED = {"cov_type": "cluster", "cov_kwds": {"groups": ["g", "h"], "fix": True}}


def case_frame(name: str) -> pd.DataFrame:
    return pd.DataFrame(REF["cases"][name]["data"])


def fit_recording(df: pd.DataFrame, **kwargs):
    """The fit (bse read) and the glmclass warnings; numpy's RuntimeWarnings raise."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        res = gc.Logit.from_formula("y ~ x + z", df).fit(**kwargs)
        res.bse  # noqa: B018
    return res, [w for w in caught if issubclass(w.category, gc.GlmclassWarning)]


def r_names(names):
    return ["Intercept" if n == "(Intercept)" else n for n in names]


@pytest.mark.parametrize("name", CASES)
def test_the_indefinite_two_way_covariance_is_rs(name):
    ref = REF["cases"][name]
    res, ours = fit_recording(case_frame(name), **TWO_WAY)
    np.testing.assert_allclose(res.params.to_numpy(), ref["coef"], rtol=1e-7)
    np.testing.assert_allclose(res.cov_params().to_numpy(), np.array(ref["vcov"]), rtol=1e-6,
                               atol=1e-9)
    negative = r_names(ref["negative"])
    bse = res.bse
    assert bse[negative].isna().all()
    assert bse.drop(negative).notna().all() and (bse.drop(negative) > 0).all()
    assert res.pvalues[negative].isna().all() and res.conf_int().loc[negative].isna().all().all()
    # one warning, at the user's call, naming the coefficient and the fix
    assert len(ours) == 1 and ours[0].filename == __file__
    text = str(ours[0].message)
    assert all(repr(n) in text for n in negative)
    assert "'fix': True" in text and "vcovCL(fix = TRUE)" in text
    others = [n for n in res.params.index if n not in negative]
    assert not any(repr(n) in text for n in others)


@pytest.mark.parametrize("name", CASES)
def test_fix_clips_the_negative_eigenvalues_as_r(name):
    ref = REF["cases"][name]
    res, ours = fit_recording(case_frame(name), **FIXED)
    np.testing.assert_allclose(res.cov_params().to_numpy(), np.array(ref["vcov_fix"]),
                               rtol=1e-6, atol=1e-9)
    assert ours == [] and res.bse.notna().all()
    assert np.linalg.eigvalsh(res.cov_params().to_numpy()).min() > -1e-12


def test_predictions_margins_and_constraints_are_nan_not_zero():
    """The slope of z has a negative variance: its marginal effect and a prediction along it
    used to get a standard error of 0 (an interval of width 0, a p-value of 0)."""
    df = case_frame("slope")
    res, _ = fit_recording(df, **TWO_WAY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        me = res.get_margeff().summary_frame()
        pred = res.get_prediction(df).summary_frame()
        tt = res.t_test("z = 0").summary_frame()
    ours = [w for w in caught if issubclass(w.category, gc.GlmclassWarning)]
    assert np.isnan(me.loc["z", "margeff_se"]) and np.isnan(me.loc["z", "pvalue"])
    assert me.loc["x", "margeff_se"] > 0
    bad = pred["mean_se"].isna()
    assert bad.any() and (pred.loc[~bad, "mean_se"] > 0).all()
    assert pred.loc[bad, "mean_ci_lower"].isna().all()
    assert np.isnan(tt.iloc[0]["std err"])
    texts = [str(w.message) for w in ours]
    assert any("marginal effects have a negative variance" in t for t in texts)
    assert any(f"{int(bad.sum())} of the predictions" in t for t in texts)
    assert all(w.filename == __file__ for w in ours)
    # with the fix every one is a number again, and a positive one
    fixed, _ = fit_recording(df, **FIXED)
    assert (fixed.get_margeff().summary_frame()["margeff_se"] > 0).all()
    assert (fixed.get_prediction(df).summary_frame()["mean_se"] > 0).all()


def test_a_semidefinite_covariance_keeps_rounding_at_zero():
    """One-way clusters give a positive semi-definite covariance: nothing is NaN, no warning
    (negative rounding of a variance of 0 stays 0)."""
    df = case_frame("slope")
    res, ours = fit_recording(df, cov_type="cluster", cov_kwds={"groups": "g"})
    assert ours == [] and res.bse.notna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert res.get_prediction(df).summary_frame()["mean_se"].notna().all()


def test_a_wald_test_on_the_negative_variance_says_why():
    res, _ = fit_recording(case_frame("slope"), **TWO_WAY)
    with pytest.raises(ValueError, match=r"not positive definite.*indefinite.*'fix': True"):
        res.wald_test("z = 0")
    fixed, _ = fit_recording(case_frame("slope"), **FIXED)
    assert fixed.wald_test("z = 0").pvalue > 0


@pytest.mark.parametrize("model", ["mnlogit", "ordinal"])
def test_multinomial_and_ordinal_fits_name_the_coefficient(model):
    """Every likelihood model reads its standard errors through the same check: a
    multinomial coefficient is named as wald_test names it, ``[level]term``."""
    df = case_frame("slope").assign(k=lambda d: (d.y + (d.z > 0.5)).astype(int))
    make = gc.MNLogit if model == "mnlogit" else gc.OrderedModel
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        res = make.from_formula("k ~ x + z", df).fit(**TWO_WAY)
        flat = res.bse.to_numpy().ravel()
    ours = [w for w in caught if issubclass(w.category, gc.GlmclassWarning)]
    assert np.isnan(flat).sum() == 1 and len(ours) == 1
    text = str(ours[0].message)
    assert ("'[1]z'" if model == "mnlogit" else "'z'") in text


def test_emmeans_of_an_indefinite_covariance_are_nan_not_zero():
    """A negative variance of a marginal mean (or a contrast) was clipped to 0: SE 0, an
    interval of width 0 and z = inf, with no message. Now NaN, with one warning."""
    rng = np.random.default_rng(2)  # 40 rows, 3 x 3 clusters: the intercept's variance < 0
    df = pd.DataFrame({"f": rng.choice(list("abc"), 40), "g": rng.integers(0, 3, 40),
                       "h": rng.integers(0, 3, 40)})
    df["y"] = (rng.random(40) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = gc.Logit.from_formula("y ~ f", df).fit(**TWO_WAY)
    assert res.cov_params().to_numpy()[0, 0] < 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        em = gc.emmeans(res, "f")
        frame = em.summary_frame()
        pairs = em.contrast("pairwise").summary_frame()
    assert np.isnan(frame["SE"].iloc[0]) and np.isnan(frame["asymp.LCL"].iloc[0])
    assert (frame["SE"].iloc[1:] > 0).all()
    assert any("marginal means have a negative variance" in str(w.message) for w in caught)
    # the differences of the means have positive variances here: they are reported
    assert pairs["SE"].notna().all() and pairs["p.value"].notna().all()


def test_labels_are_asked_for_only_when_a_variance_is_negative():
    """MNLogit's bse built its (level, term) MultiIndex on every call for the warning's
    labels: ~1 ms of a 2 ms fit at 50 rows. The labels are read only to name a negative one."""
    from glmclass.numerics.stderr import standard_errors

    def labels():
        raise AssertionError("labels read although no variance is negative")

    np.testing.assert_array_equal(standard_errors(np.array([4.0, 9.0]), labels), [2.0, 3.0])
    with pytest.warns(gc.GlmclassWarning, match="'b'"):
        se = standard_errors(np.array([4.0, -1.0]), lambda: ["a", "b"])
    assert np.isnan(se[1])
