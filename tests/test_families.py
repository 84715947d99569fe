"""Families: variance, unit deviance, log-likelihood against scipy.stats, start values, links."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from scipy import special, stats

import glmclass as gc
from glmclass import families as F
from glmclass import links as L

BINOMIAL_LINKS = L.registered(within=(0, 1))
RNG = np.random.default_rng(20261121)


def binomial_case(link: L.Link, n: int = 40):
    eta = RNG.uniform(-3, 3, n)
    if isinstance(link, L.Log):
        eta = -np.abs(eta) - 0.05
    trials = RNG.integers(1, 12, n).astype(float)
    k = RNG.binomial(trials.astype(int), link.inverse(eta))
    return eta, k / trials, trials


FAMILIES = (
    [F.Binomial(link=lk) for lk in BINOMIAL_LINKS]
    + [F.Poisson(), F.Poisson(link=L.Identity()), F.Gaussian(), F.Gaussian(link=L.Log())]
)


def fam_id(f: F.Family) -> str:
    return f"{f.name}-{f.link.name}"


def case(fam: F.Family, n: int = 40):
    """(eta, y, var_weights) inside the family's domain."""
    if isinstance(fam, F.Binomial):
        return binomial_case(fam.link, n)
    if isinstance(fam, F.Poisson):
        eta = RNG.uniform(-1, 3, n) if isinstance(fam.link, L.Log) else RNG.uniform(0.3, 9, n)
        return eta, RNG.poisson(fam.link.inverse(eta)).astype(float), np.ones(n)
    eta = RNG.uniform(-1, 2, n)
    return eta, fam.link.inverse(eta) + RNG.normal(0, 0.5, n), RNG.uniform(0.5, 2, n)


# --- canonical links and allowed links ------------------------------------------------------
@pytest.mark.parametrize("fam, link", [(F.Binomial, L.Logit), (F.Poisson, L.Log),
                                       (F.Gaussian, L.Identity)])
def test_default_link_is_canonical(fam, link):
    f = fam()
    assert isinstance(f.link, link)
    assert f.is_canonical
    assert not fam(link=L.Log() if link is not L.Log else L.Identity()).is_canonical


def test_binomial_accepts_every_registered_link():
    for lk in L.registered():
        assert F.Binomial(link=lk).link == lk


@dataclass(frozen=True)
class _Tanh(L.Link):
    """A link onto (-1, 1)."""

    name: ClassVar[str] = "tanh"
    range: ClassVar[tuple[float, float]] = (-1.0, 1.0)

    def link(self, mu):
        return np.arctanh(mu)

    def inverse(self, eta):
        return np.tanh(eta)

    def mu_eta(self, eta):
        return 1.0 - np.tanh(eta) ** 2


def test_link_whose_range_does_not_fit_names_link_and_family():
    with pytest.raises(ValueError, match=r"_Tanh\(\).*Poisson.*\(-1, 1\).*use one of"):
        F.Poisson(link=_Tanh())  # means in (-1, 1) against counts' (0, inf): not nested
    assert F.Gaussian(link=_Tanh()).link == _Tanh()  # (-1, 1) lies inside the real line
    assert F.Binomial(link=_Tanh()).link == _Tanh()  # wider than (0, 1): domain-checked


def test_links_with_nested_ranges_are_accepted_as_in_r():
    # R's families accept any link-glm object; a narrower range (means capped at 1) or a wider
    # one (checked at every IRLS step) is nested with the mean space
    assert F.Poisson(link=L.Logit()).link == L.Logit()
    assert F.Gaussian(link=L.Probit()).link == L.Probit()
    assert F.Binomial(link=L.Identity()).link_stays_inside is False
    assert F.Binomial(link=L.Probit()).link_stays_inside is True


def test_links_by_name_or_class():
    assert F.Binomial(link="probit") == F.Binomial(link=L.Probit())
    assert F.Binomial(link="CLogLog").link == L.CLogLog()
    assert F.Binomial(link=L.Cauchit).link == L.Cauchit()
    with pytest.raises(ValueError, match="unknown link 'logistic'"):
        F.Binomial(link="logistic")
    with pytest.raises(TypeError, match="glmclass link"):
        F.Binomial(link=3)


def test_canonical_is_declared_not_inherited():
    @dataclass(frozen=True)
    class Shifted(L.Logit):
        shift: float = 1.0

        def inverse(self, eta):
            return super().inverse(eta - self.shift)

    assert L.Logit().canonical == "binomial" and Shifted().canonical is None
    assert not F.Binomial(link=Shifted()).is_canonical
    assert Shifted(1.0) == Shifted(1.0) != Shifted(2.0)
    assert hash(Shifted(1.0)) == hash(Shifted(1.0))
    assert Shifted(0.0) != L.Logit()


def test_link_with_state_outside_its_fields_is_refused():
    class Stateful(L.Logit):  # not a dataclass: eps would be ignored by equality
        def __init__(self, eps):
            object.__setattr__(self, "eps", eps)

    with pytest.raises(TypeError, match="eps.*dataclass"):
        F.Binomial(link=Stateful(0.1))


def test_link_without_a_derivative_is_refused_at_definition():
    with pytest.raises(TypeError, match="mu_eta"):
        class NoDerivative(L.Link):
            def link(self, mu):
                return mu

            def inverse(self, eta):
                return eta


def test_family_is_immutable_and_has_repr():
    f = F.Binomial(link=L.Probit())
    with pytest.raises(AttributeError):
        f.link = L.Logit()
    assert repr(f) == "Binomial(link=Probit())"
    assert F.Binomial() == F.Binomial(link=L.Logit())
    assert gc.families.Binomial is F.Binomial


# --- variance ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
def test_variance_function(fam):
    eta, _, _ = case(fam)
    mu = fam.link.inverse(eta)
    expected = {"Binomial": mu * (1 - mu), "Poisson": mu, "Gaussian": np.ones_like(mu)}[fam.name]
    # mu (1 - mu) computed here loses digits of 1 - mu near 1; the family's log scale does not
    np.testing.assert_allclose(fam.variance(mu), expected, rtol=1e-9)
    np.testing.assert_allclose(np.exp(fam.log_variance(eta)), expected, rtol=1e-9)
    mid = mu[(mu > 1e-3) & (mu < 1 - 1e-3)] if fam.name == "Binomial" else mu
    h = 1e-7
    fd = (fam.variance(mid + h) - fam.variance(mid - h)) / (2 * h)
    np.testing.assert_allclose(fam.dvariance(mid), fd, rtol=1e-6, atol=1e-8)


def test_binomial_log_variance_in_the_tails():
    fam = F.Binomial()
    eta = np.array([-745.0, -700.0, 700.0, 745.0])
    np.testing.assert_allclose(fam.log_variance(eta), -np.abs(eta), rtol=1e-12)


# --- log-likelihood against scipy.stats -----------------------------------------------------
@pytest.mark.parametrize("fam", [f for f in FAMILIES if f.name == "Binomial"], ids=fam_id)
def test_binomial_loglik_is_binomial_logpmf(fam):
    eta, y, n = case(fam)
    mu = fam.link.inverse(eta)
    ref = stats.binom.logpmf(np.round(y * n), n, mu)
    np.testing.assert_allclose(fam.loglik_obs(y, eta, n, 1.0), ref, rtol=1e-7, atol=1e-12)


def test_binomial_loglik_bernoulli_in_the_tails():
    fam = F.Binomial()
    eta = np.array([-800.0, -40.0, 40.0, 800.0])
    y = np.array([1.0, 1.0, 0.0, 0.0])
    ll = fam.loglik_obs(y, eta, np.ones(4), 1.0)
    np.testing.assert_allclose(ll, [-800.0, -40.0, -40.0, -800.0], rtol=1e-12)


@pytest.mark.parametrize("fam", [F.Poisson(), F.Poisson(link=L.Identity())], ids=fam_id)
def test_poisson_loglik_is_poisson_logpmf(fam):
    eta, y, w = case(fam)
    ref = stats.poisson.logpmf(y, fam.link.inverse(eta))
    np.testing.assert_allclose(fam.loglik_obs(y, eta, w, 1.0), ref, rtol=1e-10)


@pytest.mark.parametrize("fam", [F.Gaussian(), F.Gaussian(link=L.Log())], ids=fam_id)
def test_gaussian_loglik_is_normal_logpdf(fam):
    eta, y, w = case(fam)
    scale = 0.37
    ref = stats.norm.logpdf(y, fam.link.inverse(eta), np.sqrt(scale / w))
    np.testing.assert_allclose(fam.loglik_obs(y, eta, w, scale), ref, rtol=1e-10)


# --- unit deviance -----------------------------------------------------------------------------
@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
def test_unit_deviance_is_twice_the_loglik_gap_to_the_saturated_model(fam):
    """d(y, mu) = 2 [l(y; y) - l(y; mu)] per unit of prior weight (dispersion 1)."""
    eta, y, w = case(fam)
    if fam.name == "Binomial":
        w = np.ones_like(w)
        y = (y > 0.5).astype(float)
    sat_eta = fam.link.link(np.clip(y, 1e-300, None)) if fam.name != "Gaussian" else \
        fam.link.link(y) if isinstance(fam.link, L.Identity) else np.log(np.abs(y))
    with np.errstate(divide="ignore", invalid="ignore"):
        ll_sat = fam.loglik_obs(y, sat_eta, np.ones_like(y), 1.0)
    ll = fam.loglik_obs(y, eta, np.ones_like(y), 1.0)
    d = fam.unit_deviance(y, eta)
    ok = np.isfinite(ll_sat)
    if fam.name == "Gaussian" and isinstance(fam.link, L.Log):
        ok &= y > 0
    np.testing.assert_allclose(d[ok], 2 * (ll_sat[ok] - ll[ok]), rtol=1e-8, atol=1e-10)
    assert np.all(d >= -1e-12)


@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
def test_unit_deviance_explicit_formula(fam):
    eta, y, _ = case(fam)
    mu = fam.link.inverse(eta)
    from scipy.special import xlogy

    expected = {
        "Binomial": 2 * (xlogy(y, y / mu) + xlogy(1 - y, (1 - y) / (1 - mu))),
        "Poisson": 2 * (xlogy(y, y / mu) - (y - mu)),
        "Gaussian": (y - mu) ** 2,
    }[fam.name]
    np.testing.assert_allclose(fam.unit_deviance(y, eta), expected, rtol=1e-9, atol=1e-12)


def test_binomial_unit_deviance_is_finite_in_the_tails():
    fam = F.Binomial(link=L.Probit())
    eta = np.array([-800.0, 800.0, -38.0, 38.0])
    y = np.array([1.0, 0.0, 1.0, 0.0])
    d = fam.unit_deviance(y, eta)
    assert np.all(np.isfinite(d))
    np.testing.assert_allclose(d[:2], -2 * F.Binomial(link=L.Probit()).link.log_inverse(
        np.array([-800.0, -800.0])), rtol=1e-12)


# --- start values and IRLS pieces -----------------------------------------------------------------
def test_start_values_are_those_of_r():
    y = np.array([0.0, 1.0, 0.25, 1.0])
    w = np.array([1.0, 1.0, 4.0, 3.0])
    np.testing.assert_allclose(F.Binomial().start_mu(y, w), (w * y + 0.5) / (w + 1))
    counts = np.array([0.0, 3.0, 10.0])
    np.testing.assert_allclose(F.Poisson().start_mu(counts, np.ones(3)), counts + 0.1)
    z = np.array([-1.0, 2.5])
    np.testing.assert_allclose(F.Gaussian().start_mu(z, np.ones(2)), z)
    np.testing.assert_allclose(F.Gaussian(link=L.Log()).start_mu(z, np.ones(2)), [0.1, 2.5])
    mu0 = F.Binomial().start_mu(np.array([0.0, 1.0]), np.ones(2))
    assert np.all((mu0 > 0) & (mu0 < 1))


@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
def test_working_weights_and_score_ratio(fam):
    eta, _, _ = case(fam)
    mu, d = fam.link.inverse(eta), fam.link.mu_eta(eta)
    v = fam.variance(mu)
    if isinstance(fam, F.Binomial):  # V = mu (1 - mu) with 1 - mu kept exact (cloglog, eta = 3)
        v = mu * np.exp(fam.link.log_inverse_c(eta))
    np.testing.assert_allclose(fam.working_weights(eta), d * d / v, rtol=1e-9)
    np.testing.assert_allclose(fam.score_ratio(eta), d / v, rtol=1e-9)


@pytest.mark.parametrize("link", BINOMIAL_LINKS, ids=lambda lk: lk.name)
def test_working_weights_stay_finite_at_eta_800(link):
    fam = F.Binomial(link=link)
    eta = np.array([-800.0, -60.0, 0.0, 60.0, 800.0])
    w, r = fam.working_weights(eta), fam.score_ratio(eta)
    assert np.all(np.isfinite(w)) and np.all(w >= 0)
    assert np.all(np.isfinite(r))


@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
def test_observed_weights_are_minus_second_derivative_of_loglik(fam):
    eta, y, w = case(fam, 12)
    if fam.name == "Binomial":
        w = np.ones_like(w)

    def ll(e):
        return fam.loglik_obs(y, e, w, 1.0)

    h = 1e-4
    d2 = (-ll(eta + 2 * h) + 16 * ll(eta + h) - 30 * ll(eta) + 16 * ll(eta - h)
          - ll(eta - 2 * h)) / (12 * h * h)
    np.testing.assert_allclose(w * fam.observed_weights(y, eta), -d2, rtol=1e-5, atol=1e-7)
    if fam.is_canonical:
        np.testing.assert_allclose(fam.observed_weights(y, eta), fam.working_weights(eta))


@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
def test_irls_terms_score_is_derivative_of_loglik(fam):
    eta, y, w = case(fam, 12)
    if fam.name == "Binomial":
        w = np.ones_like(w)
    wt, u, dev = fam.irls_terms(y, eta, w)
    h = 1e-6
    dl = (fam.loglik_obs(y, eta + h, w, 1.0) - fam.loglik_obs(y, eta - h, w, 1.0)) / (2 * h)
    np.testing.assert_allclose(u, dl, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(wt, w * fam.working_weights(eta), rtol=1e-12)
    assert dev == pytest.approx(np.sum(w * fam.unit_deviance(y, eta)), rel=1e-12)


# --- response checks ---------------------------------------------------------------------------
def test_check_endog_messages():
    with pytest.raises(ValueError, match="Binomial response.*var_weights"):
        F.Binomial().check_endog(np.array([0.0, 1.5]))
    with pytest.raises(ValueError, match="Poisson response must be non-negative"):
        F.Poisson().check_endog(np.array([1.0, -1.0]))
    F.Binomial().check_endog(np.array([0.0, 0.3, 1.0]))
    F.Poisson().check_endog(np.array([0.0, 4.0]))
    F.Gaussian().check_endog(np.array([-3.0, 4.0]))


def test_fixed_scale():
    assert F.Binomial().fixed_scale and F.Poisson().fixed_scale
    assert not F.Gaussian().fixed_scale


@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
def test_scaled_residual_is_y_minus_mu_over_scale(fam):
    eta, y, _ = case(fam)
    mu = fam.link.inverse(eta)
    log_scale = 0.5 * fam.log_variance(eta)
    np.testing.assert_allclose(fam.scaled_residual(y, eta, log_scale),
                               (y - mu) / np.sqrt(fam.variance(mu)), rtol=1e-7, atol=1e-12)


def test_scaled_residual_in_the_binomial_tails():
    fam = F.Binomial(link=L.Probit())
    eta = np.array([-60.0, -60.0, 60.0, 60.0])
    y = np.array([0.0, 1.0, 0.0, 1.0])
    r = fam.scaled_residual(y, eta, fam.link.log_mu_eta(eta))
    # -mu/mu' -> 1/eta (Mills ratio) for y = 0 at eta -> -inf, and mirrored
    np.testing.assert_allclose(r[[0, 3]], np.array([-1.0, 1.0]) / 60 * (1 - 1 / 3600 + 3 / 3600**2),
                               rtol=1e-9)
    assert r[1] > 1e300 and r[2] < -1e300  # misclassified tails are huge, not NaN


# --- terms at a fixed response: the same bits as the formulas --------------------------------
def _reference_terms(fam, y, eta, w, observed):
    """irls_terms as the formulas read (the generic family's definition, before any sharing),
    and the logit's closed form as first written."""
    if type(fam.link) is L.Logit:
        e = np.exp(-np.minimum(np.abs(eta), 700.0))
        ope = 1.0 + e
        mu = np.where(eta >= 0, 1.0, e) / ope
        loglik = y * eta - np.maximum(eta, 0.0) - np.log1p(e)
        dev = -2.0 * float(w @ loglik)
        if ((y > 0) & (y < 1)).any():
            dev += 2.0 * float(w @ (special.xlogy(y, y) + special.xlogy(1.0 - y, 1.0 - y)))
        return w * (e / (ope * ope)), w * (y - mu), dev
    wt = w * (fam.observed_weights(y, eta) if observed else fam.working_weights(eta))
    with np.errstate(invalid="ignore", over="ignore"):
        u = w * fam.score_ratio(eta) * (y - fam.link.inverse(eta))
        dev = float(np.sum(w * fam.unit_deviance(y, eta)))
    return wt, u, dev


@pytest.mark.parametrize("fam", FAMILIES, ids=fam_id)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("observed", [False, True])
def test_terms_for_gives_the_bits_of_the_formulas(fam, weighted, observed):
    eta, y, w = case(fam, 60)
    if fam.name == "Binomial":  # 0/1 responses too, and the capped tails of |eta| > 700
        y = np.where(np.arange(60) % 3 == 0, y, np.round(y))
        if fam.link_stays_inside:
            eta[:3] = [-800.0, 750.0, 40.0]
    w = w if weighted else np.ones_like(w)
    terms = fam.terms_for(y, w)
    for _ in range(2):  # the prepared terms can be called again
        got = terms(eta.copy(), observed)
        ref = _reference_terms(fam, y, eta, w, observed)
        if isinstance(fam.link, L.Probit):  # its inverse_logs: the tail's logs, to rounding
            for g, r in zip(got[:2], ref[:2], strict=True):
                np.testing.assert_allclose(g, r, rtol=1e-12, atol=0)
            assert got[2] == pytest.approx(ref[2], rel=1e-14)
            continue
        for g, r in zip(got[:2], ref[:2], strict=True):
            assert g.tobytes() == r.tobytes()
        assert got[2] == ref[2] or (np.isnan(got[2]) and np.isnan(ref[2]))
    wt, u, dev = fam.irls_terms(y, eta, w, observed=observed)
    assert wt.tobytes() == got[0].tobytes() and u.tobytes() == got[1].tobytes()


def test_terms_for_leaves_its_arguments_alone():
    eta, y, w = case(F.Binomial(), 30)
    before = [a.copy() for a in (eta, y, w)]
    for fam in (F.Binomial(), F.Binomial(link=L.Log()), F.Poisson(link=L.Log())):
        yy = np.round(y) * 3 if fam.name == "Poisson" else y
        e = -np.abs(eta) - 0.1 if isinstance(fam.link, L.Log) else eta
        kept = e.copy()
        fam.terms_for(yy, w)(e, True)
        np.testing.assert_array_equal(e, kept)  # the log link returns eta itself as log mu
    for a, b in zip((eta, y, w), before, strict=True):
        np.testing.assert_array_equal(a, b)


def test_terms_for_uses_a_subclass_s_own_terms_and_weights():
    @dataclass(frozen=True, repr=False)
    class Halved(F.Binomial):
        def irls_terms(self, y, eta, weights, observed=False):
            w, u, dev = super().irls_terms(y, eta, weights, observed)
            return w / 2.0, u, dev

    @dataclass(frozen=True, repr=False)
    class Heavier(F.Poisson):
        def working_weights(self, eta):
            return 3.0 * super().working_weights(eta)

    eta, y, w = case(F.Binomial(), 20)
    np.testing.assert_array_equal(Halved().terms_for(y, w)(eta)[0],
                                  F.Binomial().irls_terms(y, eta, w)[0] / 2.0)
    counts = np.arange(20.0)
    np.testing.assert_array_equal(Heavier().terms_for(counts, w)(eta)[0],
                                  w * (3.0 * F.Poisson().working_weights(eta)))


def test_probit_inverse_logs_from_the_smaller_tail():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    eta = np.array([-60.0, -38.0, -30.0, -8.0, -1.0, -1e-3, 0.0, 0.5, 3.0, 8.5, 30.0, 60.0])
    mu, lm, l1m = L.Probit().inverse_logs(eta)
    for e, m, a, b in zip(eta, mu, lm, l1m, strict=True):
        phi = mpmath.ncdf(mpmath.mpf(float(e)))
        assert a == pytest.approx(float(mpmath.log(phi)), rel=4e-16)
        assert b == pytest.approx(float(mpmath.log(mpmath.ncdf(-mpmath.mpf(float(e))))),
                                  rel=4e-16)
        assert m == pytest.approx(float(phi), rel=4e-16)
    # the three at once equal the three alone (a subclass keeps the generic ones)
    ref = (special.ndtr(eta), special.log_ndtr(eta), special.log_ndtr(-eta))
    for got, want in zip((mu, lm, l1m), ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-15, atol=0)

    class Shifted(L.Probit):
        def inverse(self, eta):
            return special.ndtr(np.asarray(eta) - 1.0)

    assert Shifted().inverse_logs(np.array([0.0]))[0][0] == special.ndtr(-1.0)


@pytest.mark.parametrize("link", [L.Logit(), L.Probit(), L.CLogLog()], ids=lambda k: k.name)
@pytest.mark.parametrize("weights", ["broadcast", "array"])
def test_binomial_loglik_of_zero_one_responses_skips_only_unit_coefficients(link, weights):
    """0/1 responses with one trial each: every binomial coefficient is 1, so the log-gamma
    terms are skipped; a response that is not 0/1 or a weight that is not 1 keeps them."""
    n = 200
    y = (RNG.random(n) < 0.4).astype(float)
    eta = RNG.normal(0, 2, n)
    ones = np.broadcast_to(1.0, (n,)) if weights == "broadcast" else np.ones(n)
    fam = F.Binomial(link)
    lm, l1m = link.log_inverse(eta), link.log_inverse_c(eta)

    def binom(k, m):  # log C(m, k) + k log mu + (m - k) log(1 - mu)
        return (special.gammaln(m + 1) - special.gammaln(k + 1) - special.gammaln(m - k + 1)
                + np.where(k == 0, 0.0, k * lm)
                + np.where(m - k == 0, 0.0, (m - k) * l1m))

    np.testing.assert_allclose(fam.loglik_obs(y, eta, ones, 1.0), binom(y, np.ones(n)),
                               rtol=1e-14)
    y2, w2 = y.copy(), np.ones(n)
    y2[0], w2[0] = 0.5, 2.0  # 1 of 2 trials
    y2[1], w2[1] = 0.75, 4.0  # 3 of 4 trials
    ref = binom(np.round(w2 * y2), w2)
    np.testing.assert_allclose(fam.loglik_obs(y2, eta, w2, 1.0), ref, rtol=1e-12)
