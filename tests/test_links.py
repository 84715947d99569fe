"""Property tests of every link: inverse, derivatives, log-scale tails, domains, no overflow."""

from __future__ import annotations

import warnings
from dataclasses import fields

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glmclass as gc
from glmclass import links as L

BINARY = L.registered(within=(0, 1))
ALL = L.registered()
ETA = np.linspace(-6.0, 6.0, 97)


def ids(links):
    return [lk.name for lk in links]


# --- reference inverse links in 50-digit arithmetic --------------------------------------------
def mp_inverse(link: L.Link, eta: float):
    e = mpmath.mpf(eta)
    return {
        "logit": lambda: 1 / (1 + mpmath.exp(-e)),
        "probit": lambda: mpmath.ncdf(e),
        "cloglog": lambda: 1 - mpmath.exp(-mpmath.exp(e)),
        "loglog": lambda: mpmath.exp(-mpmath.exp(-e)),
        "cauchit": lambda: mpmath.mpf(1) / 2 + mpmath.atan(e) / mpmath.pi,
        "log": lambda: mpmath.exp(e),
        "identity": lambda: e,
        "robust_logit": lambda: link.eps + (1 - 2 * mpmath.mpf(link.eps)) / (1 + mpmath.exp(-e)),
    }[link.name]()


def mp_log_inverse(link: L.Link, eta: float) -> float:
    with mpmath.workdps(400):  # 1 - exp(-exp(-700)) needs ~310 digits
        return float(mpmath.log(mp_inverse(link, eta)))


def mp_log_inverse_c(link: L.Link, eta: float) -> float:
    with mpmath.workdps(400):
        return _mp_log_inverse_c(link, eta)


def _mp_log_inverse_c(link: L.Link, eta: float) -> float:
    if link.name == "probit":  # 1 - Phi(eta) = Phi(-eta) without cancellation
        return float(mpmath.log(mpmath.ncdf(-mpmath.mpf(eta))))
    if link.name == "logit":
        return float(mpmath.log(1 / (1 + mpmath.exp(mpmath.mpf(eta)))))
    if link.name == "cloglog":
        return float(-mpmath.exp(mpmath.mpf(eta)))
    if link.name == "cauchit":
        return float(mpmath.log(mpmath.mpf(1) / 2 - mpmath.atan(mpmath.mpf(eta)) / mpmath.pi))
    if link.name == "robust_logit":
        return float(mpmath.log(mp_inverse_c(link, mpmath.mpf(eta))))
    return float(mpmath.log(1 - mp_inverse(link, eta)))


# --- inverse o link = identity --------------------------------------------------------------------
@pytest.mark.parametrize("link", BINARY, ids=ids(BINARY))
@settings(max_examples=60, deadline=None)
@given(mu=st.floats(1e-12, 1 - 1e-12))
def test_inverse_of_link_is_identity_binary(link, mu):
    lo, hi = link.range  # (0, 1), or narrower (robust logit)
    mu = lo + (hi - lo) * mu
    assert link.inverse(link.link(np.array([mu])))[0] == pytest.approx(mu, rel=1e-9, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(mu=st.floats(1e-200, 1e200))
def test_inverse_of_link_is_identity_log(mu):
    assert L.Log().inverse(L.Log().link(np.array([mu])))[0] == pytest.approx(mu, rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(mu=st.floats(-1e6, 1e6))
def test_inverse_of_link_is_identity_identity(mu):
    assert L.Identity().inverse(L.Identity().link(np.array([mu])))[0] == mu


@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_link_of_inverse_is_identity(link):
    # within the range where mu and 1 - mu keep enough digits to invert
    lo, hi = {"cloglog": (-5, 2), "loglog": (-2, 5), "log": (-30, 30)}.get(link.name, (-5, 5))
    eta = np.linspace(lo, hi, 41)
    np.testing.assert_allclose(link.link(link.inverse(eta)), eta, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_inverse_matches_high_precision(link):
    eta = np.array([-30.0, -8.0, -1.5, -1e-3, 0.0, 0.7, 3.0, 8.0, 30.0])
    if link.name in ("cloglog",):
        eta = eta[eta < 6]  # 1 - exp(-exp(8)) rounds to 1 in any float
    if link.name == "loglog":
        eta = eta[eta > -6]
    with mpmath.workdps(50):
        ref = np.array([float(mp_inverse(link, e)) for e in eta])
    np.testing.assert_allclose(link.inverse(eta), ref, rtol=1e-13, atol=0)


# --- derivatives: numerical differentiation in 50-digit arithmetic and finite differences ----
ETA_D = np.array([-12.0, -5.0, -2.3, -0.4, 0.0, 0.9, 2.7, 5.0, 12.0])


def mp_inverse_c(link: L.Link, eta) -> mpmath.mpf:
    """1 - mu without cancellation (links onto (0, 1))."""
    return {
        "logit": lambda: 1 / (1 + mpmath.exp(eta)),
        "probit": lambda: mpmath.ncdf(-eta),
        "cloglog": lambda: mpmath.exp(-mpmath.exp(eta)),
        "loglog": lambda: -mpmath.expm1(-mpmath.exp(-eta)),
        "cauchit": lambda: mpmath.mpf(1) / 2 - mpmath.atan(eta) / mpmath.pi,
        "robust_logit": lambda: link.eps + (1 - 2 * mpmath.mpf(link.eps)) / (1 + mpmath.exp(eta)),
    }[link.name]()


def mp_derivatives(link: L.Link, eta: float) -> tuple[float, float, float]:
    """(mu', mu'', d log mu' / d eta) by mpmath's numerical differentiation (of 1 - mu in the
    upper tail, where mu itself is 1 to 50 digits)."""
    with mpmath.workdps(50):
        if eta > 0 and link in BINARY:
            f, sign = (lambda e: mp_inverse_c(link, e)), -1  # noqa: E731
        else:
            f, sign = (lambda e: mp_inverse(link, e)), 1  # noqa: E731
        d1 = sign * mpmath.diff(f, mpmath.mpf(eta), 1)
        d2 = sign * mpmath.diff(f, mpmath.mpf(eta), 2)
        return float(d1), float(d2), float(d2 / d1)


@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_derivatives_against_high_precision_differentiation(link):
    ref = np.array([mp_derivatives(link, e) for e in ETA_D])
    np.testing.assert_allclose(link.mu_eta(ETA_D), ref[:, 0], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(link.mu_eta2(ETA_D), ref[:, 1], rtol=1e-11, atol=1e-20)
    np.testing.assert_allclose(link.dlog_mu_eta(ETA_D), ref[:, 2], rtol=1e-11, atol=1e-14)


def central(f, x, h=1e-4):
    """Fourth-order central difference."""
    return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h)


def close_on_scale(actual, desired, rtol):
    """Relative to the largest value: finite differences have an absolute rounding error."""
    scale = np.max(np.abs(desired))
    np.testing.assert_allclose(actual, desired, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_mu_eta_is_derivative_of_inverse(link):
    close_on_scale(link.mu_eta(ETA), central(link.inverse, ETA), 1e-9)


@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_mu_eta2_is_derivative_of_mu_eta(link):
    close_on_scale(link.mu_eta2(ETA), central(link.mu_eta, ETA), 1e-9)


@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_dlog_mu_eta_is_derivative_of_log_mu_eta(link):
    close_on_scale(link.dlog_mu_eta(ETA), central(link.log_mu_eta, ETA), 1e-9)
    np.testing.assert_allclose(np.exp(link.log_mu_eta(ETA)), link.mu_eta(ETA), rtol=1e-14)


@pytest.mark.parametrize("link", BINARY, ids=ids(BINARY))
def test_mu_eta_integrates_to_one(link):
    """mu' is a density on the eta scale for the links onto (0, 1) (it integrates to the width
    of the range: 1 - 2 eps for the robust logit)."""
    from scipy import integrate

    total, _ = integrate.quad(lambda e: float(link.mu_eta(np.array([e]))[0]), -np.inf, np.inf,
                              limit=200)
    assert total == pytest.approx(link.range[1] - link.range[0], rel=1e-7)


# --- log mu and log(1 - mu) -------------------------------------------------------------------
TAIL = np.array([-700.0, -200.0, -40.0, -8.0, -1.0, 0.0, 0.5, 3.0, 8.0, 40.0, 200.0, 700.0])


@pytest.mark.parametrize("link", BINARY, ids=ids(BINARY))
def test_log_inverse_against_high_precision(link):
    eta = TAIL
    if link.name == "loglog":
        eta = eta[eta > -6.5]  # log mu = -exp(-eta) is finite but below -1e300 beyond
    ref = np.array([mp_log_inverse(link, e) for e in eta])
    np.testing.assert_allclose(link.log_inverse(eta), ref, rtol=1e-12)


@pytest.mark.parametrize("link", BINARY, ids=ids(BINARY))
def test_log_inverse_c_against_high_precision(link):
    eta = TAIL
    if link.name == "cloglog":
        eta = eta[eta < 6.5]
    ref = np.array([mp_log_inverse_c(link, e) for e in eta])
    np.testing.assert_allclose(link.log_inverse_c(eta), ref, rtol=1e-12)


@pytest.mark.parametrize("link", BINARY, ids=ids(BINARY))
def test_log_inverse_direct_formula_in_the_middle(link):
    eta = np.linspace(-2.5, 2.5, 51)  # where log(mu) and log1p(-mu) keep their digits
    mu = link.inverse(eta)
    np.testing.assert_allclose(link.log_inverse(eta), np.log(mu), rtol=1e-10)
    np.testing.assert_allclose(link.log_inverse_c(eta), np.log1p(-mu), rtol=1e-10)


def test_log_link_log_inverse():
    eta = np.array([-800.0, -3.0, -1e-8])
    np.testing.assert_array_equal(L.Log().log_inverse(eta), eta)
    with mpmath.workdps(50):
        ref = [float(mpmath.log(-mpmath.expm1(mpmath.mpf(e)))) for e in eta]
    np.testing.assert_allclose(L.Log().log_inverse_c(eta), ref, rtol=1e-12)
    assert np.isnan(L.Log().log_inverse_c(np.array([0.5]))[0])  # mu > 1: no log(1 - mu)


# --- tails: no overflow, finite where the value is finite ------------------------------------
METHODS = ["inverse", "mu_eta", "mu_eta2", "log_mu_eta", "dlog_mu_eta", "log_inverse",
           "log_inverse_c"]


@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_no_warnings_at_eta_800(link):
    eta = np.array([-800.0, -750.0, 750.0, 800.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            for m in METHODS:
                out = getattr(link, m)(eta)
                assert not np.any(np.isnan(out)) or link.name in ("log", "identity"), m


@pytest.mark.parametrize("link", BINARY, ids=ids(BINARY))
def test_binary_tails_are_bounded_and_monotone(link):
    eta = np.array([-800.0, -750.0, -40.0, 0.0, 40.0, 750.0, 800.0])
    mu = link.inverse(eta)
    assert np.all((mu >= 0) & (mu <= 1))
    assert np.all(mu[1:] >= mu[:-1])
    assert np.all(link.mu_eta(eta) >= 0)
    lm, l1m = link.log_inverse(eta), link.log_inverse_c(eta)
    assert not np.any(np.isnan(lm)) and not np.any(np.isnan(l1m))
    assert np.all(lm <= 0) and np.all(l1m <= 0)
    assert np.all(lm[1:] >= lm[:-1]) and np.all(l1m[1:] <= l1m[:-1])


@pytest.mark.parametrize("link", [L.Logit(), L.Probit(), L.Cauchit()], ids=["logit", "probit",
                                                                           "cauchit"])
def test_symmetric_links(link):
    eta = np.linspace(-50, 50, 101)
    np.testing.assert_allclose(link.log_inverse(eta), link.log_inverse_c(-eta), rtol=1e-13)
    np.testing.assert_allclose(link.mu_eta(eta), link.mu_eta(-eta), rtol=1e-13)


def test_loglog_mirrors_cloglog():
    eta = np.linspace(-30, 30, 61)
    cl, ll = L.CLogLog(), L.LogLog()
    np.testing.assert_allclose(ll.log_inverse(eta), cl.log_inverse_c(-eta), rtol=1e-13)
    np.testing.assert_allclose(ll.log_inverse_c(eta), cl.log_inverse(-eta), rtol=1e-13)
    np.testing.assert_allclose(ll.mu_eta(eta), cl.mu_eta(-eta), rtol=1e-13, atol=1e-300)


# --- domains ---------------------------------------------------------------------------------
@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_valid_eta(link):
    assert link.valid_eta(np.array([-3.0, 0.0, 3.0]))
    assert not link.valid_eta(np.array([0.0, np.nan]))
    assert not link.valid_eta(np.array([np.inf]))


def test_binomial_family_domain_of_log_and_identity_links():
    fam_log = gc.families.Binomial(link=L.Log())
    assert fam_log.valid(np.array([-2.0, -1e-3]))
    assert not fam_log.valid(np.array([-2.0, 0.0]))  # mu = 1
    assert not fam_log.valid(np.array([0.3]))  # mu > 1
    fam_id = gc.families.Binomial(link=L.Identity())
    assert fam_id.valid(np.array([0.01, 0.5, 0.99]))
    assert not fam_id.valid(np.array([0.5, 1.2]))
    assert not fam_id.valid(np.array([-0.1, 0.5]))
    assert gc.families.Poisson().valid(np.array([-700.0, 5.0]))
    assert not gc.families.Poisson(link=L.Identity()).valid(np.array([-1.0, 2.0]))


# --- names and identity -------------------------------------------------------------------------
@pytest.mark.parametrize("link", ALL, ids=ids(ALL))
def test_get_link_by_name(link):
    assert L.get_link(link.name) == link
    assert L.get_link(link.name.upper()) == link
    assert L.get_link(link) is link
    assert hash(L.get_link(link.name)) == hash(link)
    params = ", ".join(f"{f.name}={getattr(link, f.name)!r}" for f in fields(link))
    assert repr(link) == f"{type(link).__name__}({params})"


@pytest.mark.parametrize("link", BINARY, ids=ids(BINARY))
def test_link_at_the_boundary_is_infinite_without_warnings(link):
    with np.errstate(all="raise"):
        out = link.link(np.array(link.range))
    assert out[0] == -np.inf and out[1] == np.inf


def test_get_link_unknown_name_lists_choices():
    with pytest.raises(ValueError, match="unknown link 'logistic'.*cauchit.*probit"):
        L.get_link("logistic")


def test_links_are_not_equal_across_types():
    assert L.Logit() != L.Probit()
    assert L.Logit() == L.Logit()
