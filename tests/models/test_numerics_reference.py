"""Rank decisions and accuracy on hard designs (issue 10) against R and NIST.

``tests/reference/numerics.json`` is written by ``tests/reference/r/numerics.R`` (R's
``glm.fit`` on shifted, scaled, collinear, near-collinear and polynomial designs; each case
stores its X and y). ``tests/reference/data/longley*`` are NIST's Longley data and certified
values.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glmclass as gc
from glmclass.errors import RankDeficientWarning

REF = Path(__file__).resolve().parents[1] / "reference"
CASES = {c["name"]: c for c in json.loads((REF / "numerics.json").read_text())["cases"]}
LINKS = {"logit": gc.links.Logit, "probit": gc.links.Probit}


def _case(name):
    c = CASES[name]
    X = np.array(c["X"], dtype=float)
    y = np.array(c["y"], dtype=float)
    coef = np.array([np.nan if v is None else v for v in c["coef"]], dtype=float)
    return c, X, y, coef


def _fit(model, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficientWarning)
        return model.fit(**kw)


def _glm(c, X, y):
    fam = gc.families.Binomial(LINKS[c["link"]]())
    return _fit(gc.GLM(y, X, family=fam))


#: near_1e-9 keeps (as R) a column 1e-9 from the span of the others: its estimates are ~4e8
#: and eta cancels them to O(1), so eta, and the deviance, carry ~1e-7 of rounding (in R too)
DEV_RTOL = {"near_1e-9": 1e-8}


@pytest.mark.parametrize("name", sorted(CASES))
def test_glm_aliases_exactly_the_columns_r_aliases(name):
    c, X, y, coef = _case(name)
    res = _glm(c, X, y)
    np.testing.assert_array_equal(np.isnan(res.params.to_numpy()), c["glm_aliased"])
    assert res.deviance == pytest.approx(c["deviance"], rel=DEV_RTOL.get(name, 1e-10))


def test_near_collinear_column_r_keeps_is_fitted_as_r():
    """R's glm keeps a column 1e-9 from the span of the others (its QR tolerance is 1e-11);
    the Gram would square that to 1e-18, so these iterations solve by QR, as R's."""
    c, X, y, coef = _case("near_1e-9")
    # cond ~1e9: the deviance is nearly flat along the pair's difference, so both fits stop
    # (R at epsilon 1e-8, glmclass at tol 1e-10) ~1e-7 along it
    np.testing.assert_allclose(_glm(c, X, y).params.to_numpy(), coef, rtol=1e-6, atol=1e-6)


WELL_POSED = ["plain", "shift_1e6", "shift_1e6_second", "scale_1e-8", "scale_1e8_shift_1e3",
              "exact_collinear", "near_1e-4", "shifted_near_1e-9", "near_1e-13"]


@pytest.mark.parametrize("name", WELL_POSED)
def test_glm_estimates_agree_with_r(name):
    c, X, y, coef = _case(name)
    got = _glm(c, X, y).params.to_numpy()
    # R's own rounding on these designs is ~cond(X) * 1e-16; 1e-9 relative leaves room for it
    np.testing.assert_allclose(got, coef, rtol=1e-9, equal_nan=True)


def _extended_mle(c, X, y, coef):
    """The MLE to ~1e-15: Newton from R's estimate with the score and the information in
    extended precision (x86-64 long double, eps 1e-19), each solve refined in it."""
    assert np.finfo(np.longdouble).eps < 1e-18, "needs an extended-precision long double"
    Xl, yl, b = X.astype(np.longdouble), y.astype(np.longdouble), coef.astype(np.longdouble)
    for _ in range(6):
        eta = Xl @ b
        if c["link"] == "logit":
            mu = 1 / (1 + np.exp(-eta))
            w, u = mu * (1 - mu), yl - mu
        else:  # probit: score and Fisher weights from the normal density and tails
            from scipy import special
            e = eta.astype(float)
            mu = np.asarray(special.ndtr(e), dtype=np.longdouble)
            dens = np.asarray(np.exp(-e * e / 2) / np.sqrt(2 * np.pi), dtype=np.longdouble)
            v = mu * (1 - mu)
            w, u = dens * dens / v, dens * (yl - mu) / v
        h, g = (Xl * w[:, None]).T @ Xl, Xl.T @ u
        d = np.sqrt(np.diag(h))
        hs, gs = h / np.outer(d, d), g / d
        step = np.zeros_like(gs)
        for _ in range(6):  # refinement: float64 solves of extended-precision residuals
            step += np.linalg.solve(hs.astype(float), (gs - hs @ step).astype(float))
        b = b + step / d
    return b.astype(float)


@pytest.mark.parametrize("name", ["poly3_logit", "poly2_logit"])
def test_polynomial_basis_with_a_large_mean_reaches_the_mle(name):
    """R's own glm is 1.7e-10 (relative) from the MLE on poly3 (its QR's rounding: the
    basis has a condition number ~2e4 and its coefficients cancel); glmclass stops (R's
    deviance rule at tol 1e-10) ~5e-11 from it."""
    c, X, y, coef = _case(name)
    res = _glm(c, X, y)
    exact = _extended_mle(c, X, y, coef)
    np.testing.assert_allclose(res.params.to_numpy(), exact, rtol=1e-10)
    tight = _fit(gc.GLM(y, X, family=gc.families.Binomial()), tol=1e-14)
    np.testing.assert_allclose(tight.params.to_numpy(), exact, rtol=1e-11)
    np.testing.assert_allclose(res.params.to_numpy(), coef, rtol=3e-10)  # R's own error
    assert res.deviance == pytest.approx(c["deviance"], rel=1e-12)


@pytest.mark.parametrize("name", ["poly3_probit", "poly2_logit"])
def test_polynomial_basis_with_a_large_mean_agrees_with_r_to_1e10(name):
    c, X, y, coef = _case(name)
    res = _glm(c, X, y)
    np.testing.assert_allclose(res.params.to_numpy(), coef, rtol=1e-10)
    assert res.deviance == pytest.approx(c["deviance"], rel=1e-12)


def test_shifted_and_scaled_slopes_equal_the_plain_fit():
    c, X, y, _ = _case("plain")
    plain = gc.Logit(y, X).fit()
    for shift, scale in ((1e6, 1.0), (1e12, 1.0), (0.0, 1e-8), (0.0, 1e8), (-1e6, 1e3)):
        Z = X.copy()
        Z[:, 1] = X[:, 1] * scale + shift
        res = gc.Logit(y, Z).fit()
        assert not np.isnan(res.params.to_numpy()).any(), (shift, scale)
        # the shifted column carries the data only to ~1e-16 of the shift
        rtol = max(1e-9, 1e-15 * abs(shift) / scale)
        assert res.params.iloc[1] * scale == pytest.approx(plain.params.iloc[1], rel=rtol)
        assert res.params.iloc[2] == pytest.approx(plain.params.iloc[2], rel=rtol)
        assert res.bse.iloc[1] * scale == pytest.approx(plain.bse.iloc[1], rel=max(1e-7, rtol))
        assert res.deviance == pytest.approx(plain.deviance, rel=max(1e-12, rtol))


@pytest.mark.parametrize("name", sorted(CASES))
def test_mnlogit_aliases_as_r_on_the_same_design(name):
    """MNLogit decides on X with its frequency weights: R's rule (qr, tol 1e-11) on X."""
    c, X, y, _ = _case(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = gc.MNLogit(y, X).fit()
    aliased = np.isnan(np.asarray(res.params, dtype=float)).all(axis=1)
    np.testing.assert_array_equal(aliased, c["qr_aliased_1e11"])


def test_mnlogit_shifted_column_equals_the_plain_fit():
    rng = np.random.default_rng(3)
    n = 300
    x, z = rng.normal(size=n), rng.normal(size=n)
    y = rng.integers(0, 3, n)
    plain = gc.MNLogit(y, np.c_[np.ones(n), x, z]).fit()
    shifted = gc.MNLogit(y, np.c_[np.ones(n), x + 1e6, z]).fit()
    np.testing.assert_allclose(np.asarray(shifted.params)[1:], np.asarray(plain.params)[1:],
                               rtol=1e-7)
    assert shifted.llf == pytest.approx(plain.llf, rel=1e-10)


@pytest.mark.parametrize("name", ["shift_1e6", "scale_1e-8", "exact_collinear",
                                  "shifted_near_1e-9", "near_1e-13"])
def test_bayeslogit_keeps_every_column_under_a_proper_prior(name):
    """A proper prior identifies every coefficient: nothing is aliased, and the estimate is a
    stationary point of the log posterior (checked with the prior's own penalty)."""
    c, X, y, _ = _case(name)
    res = gc.BayesLogit(y, X).fit()
    b = res.params.to_numpy()
    assert np.all(np.isfinite(b))
    prec = res.model.prior_precision
    mu = 1.0 / (1.0 + np.exp(-(X @ b)))
    grad = X.T @ (y - mu) - prec * (b - res.model.prior_mean)
    scale = np.abs(X).T @ np.abs(y - mu) + prec * np.abs(b) + 1.0
    assert np.max(np.abs(grad) / scale) < 1e-8


def test_bayeslogit_shifted_column_keeps_its_slope():
    c, X, y, _ = _case("plain")
    Z = X.copy()
    Z[:, 1] += 1e6
    res = gc.BayesLogit(y, Z).fit()
    assert np.all(np.isfinite(res.params.to_numpy()))
    assert res.params.iloc[1] != 0.0


def _longley():
    data = pd.read_csv(REF / "data" / "longley.csv")
    cert = json.loads((REF / "data" / "longley_certified.json").read_text())
    return data, cert


def _digits(got, want):
    """Correct significant digits; an exact match counts as 17 (float64 has no more)."""
    rel = np.abs(np.asarray(got) - want) / np.abs(want)
    return -np.log10(np.maximum(rel, 1e-17))


def test_longley_gaussian_glm_reaches_eleven_certified_digits():
    data, cert = _longley()
    X = np.c_[np.ones(len(data)), data[[f"x{i}" for i in range(1, 7)]].to_numpy(float)]
    res = gc.GLM(data["y"].to_numpy(float), X, family=gc.families.Gaussian()).fit()
    assert _digits(res.params.to_numpy(), cert["coef"]).min() >= 11
    assert np.sqrt(res.scale) == pytest.approx(cert["residual_sd"], rel=1e-11)
    assert _digits(res.bse.to_numpy(), cert["bse"]).min() >= 7


def test_longley_through_the_formula_api():
    data, cert = _longley()
    res = gc.GLM.from_formula("y ~ x1 + x2 + x3 + x4 + x5 + x6", data,
                             family=gc.families.Gaussian()).fit()
    assert _digits(res.params.to_numpy(), cert["coef"]).min() >= 11
