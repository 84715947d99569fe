"""The probit's closed-form IRLS terms for 0/1 responses (glmclass.binomial_terms) against the
same quantities in 50-digit arithmetic (mpmath), and against the family's generic formulas
where those keep their digits."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from glmclass import families as F
from glmclass import links as L
from glmclass.binomial_terms import probit_terms_for

PROBIT = F.Binomial(link=L.Probit())
RNG = np.random.default_rng(20261126)
TAILS = [-699.0, -120.0, -45.0, -38.5, -37.5, -20.0, -8.3, -1e-300, 0.0, 8.3, 20.0, 37.5, 38.5,
         45.0, 120.0, 699.0]


def _exact(eta: float, y: float, observed: bool) -> tuple[float, float, float]:
    """(weight, score per unit of eta, unit deviance) of one row, to 50 digits."""
    with mp.workdps(50):
        e = mp.mpf(eta)
        q = 1 if y == 1 else -1
        s = q * e
        cdf_s, pdf = mp.ncdf(s), mp.npdf(e)
        lam = pdf / cdf_s
        w = lam * (lam + s) if observed else pdf**2 / (mp.ncdf(e) * mp.ncdf(-e))
        return float(w), float(q * lam), float(-2 * mp.log(cdf_s))


def _rows():
    eta = np.r_[RNG.normal(0, 3, 300), TAILS, TAILS]
    y = np.r_[(RNG.uniform(size=300) < 0.5), np.zeros(len(TAILS)), np.ones(len(TAILS))]
    return eta, y.astype(float)


@pytest.mark.parametrize("observed", [False, True])
def test_probit_terms_to_the_digits_of_50_digit_arithmetic(observed):
    eta, y = _rows()
    w, u, dev = probit_terms_for(y, np.ones_like(y))(eta.copy(), observed)
    ref = np.array([_exact(e, v, observed) for e, v in zip(eta, y, strict=True)])
    # the observed weight lambda (lambda + s) where s << 0 (lambda ~ -s) too: no cancellation
    big = ref[:, 0] > 1e-290  # below, both are 0 or subnormal
    np.testing.assert_allclose(w[big], ref[big, 0], rtol=1e-12)
    assert np.all(w[~big] <= 1e-290)
    # lambda = exp(log phi - log Phi) where s > -5: the two logs are ~eta^2 / 2, so the
    # difference keeps ~eta^2 eps of its digits
    rtol_u = np.maximum(1e-13, 4e-16 * eta**2)
    keep = np.abs(ref[:, 1]) > 1e-290
    np.testing.assert_array_less(np.abs(u - ref[:, 1])[keep], rtol_u[keep] * np.abs(ref[keep, 1]))
    far = (2 * y - 1) * eta < -5  # the continued fraction's rows: to rounding
    np.testing.assert_allclose(u[far], ref[far, 1], rtol=1e-14)
    assert dev == pytest.approx(ref[:, 2].sum(), rel=1e-14)


@pytest.mark.parametrize("observed", [False, True])
def test_probit_terms_agree_with_the_generic_formulas(observed):
    """Where ``y - mu`` keeps its digits (|eta| < 5), the generic formulas of the family
    (``Family._terms``) give the same terms to rounding; the weights enter as factors."""
    eta = RNG.normal(0, 1.5, 400).clip(-5, 5)
    y = (RNG.uniform(size=eta.size) < 0.4).astype(float)
    for weights in (np.ones_like(y), RNG.uniform(0.5, 3.0, y.size)):
        got = probit_terms_for(y, weights)(eta.copy(), observed)
        ref = F.Family._terms(PROBIT, y, weights)(eta.copy(), observed)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-11)
        assert got[2] == pytest.approx(ref[2], rel=1e-13)
        assert PROBIT.irls_terms(y, eta, weights, observed)[2] == got[2]  # the family uses it


def test_the_weights_and_score_are_capped_at_700_as_the_generic_ones():
    y = np.array([0.0, 1.0, 0.0, 1.0])
    eta = np.array([-800.0, -800.0, 750.0, 750.0])
    w, u, dev = probit_terms_for(y, np.ones(4))(eta.copy())
    capped = probit_terms_for(y, np.ones(4))(np.clip(eta, -700, 700))
    np.testing.assert_array_equal(w, capped[0])
    np.testing.assert_array_equal(u, capped[1])
    assert dev > capped[2]  # the deviance is at eta itself
    assert np.isfinite(dev)


def test_proportions_and_other_links_keep_the_generic_terms():
    y = np.array([0.0, 0.5, 1.0])
    eta = np.array([-0.3, 0.2, 1.1])
    ref = F.Family._terms(PROBIT, y, np.ones(3))(eta)
    got = PROBIT.irls_terms(y, eta, np.ones(3))
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
    assert got[2] == pytest.approx(ref[2], rel=1e-13)


def test_a_wild_step_gives_a_non_finite_deviance_and_leaves_its_arguments():
    y = np.array([1.0, 0.0, 1.0])
    eta = np.array([-np.inf, np.nan, 2.0])
    before = eta.copy()
    _, _, dev = probit_terms_for(y, np.ones(3))(eta)
    assert not np.isfinite(dev)
    np.testing.assert_array_equal(eta, before)
