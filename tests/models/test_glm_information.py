"""Which information the solver's Gram holds (``Fit.information``), and the standard errors
built on it: the large-N path hands the observed information to a probit's standard errors
without a further pass, and every results quantity that needs Fisher's gets Fisher's."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

import glmclass as gc
import glmclass.models.glm_problem as GB  # the problem makes the information passes
import glmclass.solvers.sampled as SM


def _probit_data(n=6000, p=4, seed=5):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p))])
    beta = rng.uniform(-0.8, 0.8, p + 1)
    y = (rng.uniform(size=n) < stats.norm.cdf(X @ beta)).astype(float)
    return X, y


@pytest.mark.parametrize("family", [gc.families.Binomial(link="probit"),
                                    gc.families.Binomial(link="cloglog")])
def test_newton_with_expected_information_gives_fisher_s_standard_errors(family):
    """Newton's Gram is the observed information: asked for the expected one, the results make
    Fisher's (they used to invert Newton's observed Gram)."""
    X, y = _probit_data(800)
    model = gc.GLM(y, X, family=family)
    for information in ("expected", "observed"):
        irls = model.fit(information=information)
        newton = model.fit(method="newton", information=information)
        np.testing.assert_allclose(newton.bse, irls.bse, rtol=1e-8)
    assert not np.allclose(model.fit(method="newton", information="expected").bse,
                           model.fit(method="newton").bse, rtol=1e-6)


@pytest.fixture
def large_n_path(monkeypatch):
    """The sampled large-N path from 1000 rows (the tests' data are small)."""
    monkeypatch.setattr(SM, "SAMPLED_MIN_ROWS", 1000)


def test_large_n_probit_standard_errors_come_from_the_final_pass(large_n_path, monkeypatch):
    X, y = _probit_data()
    res = gc.Probit(y, X).fit()
    assert res._fit.information == "observed"

    def no_pass(*args, **kwargs):
        raise AssertionError("the standard errors made a pass over the rows")

    monkeypatch.setattr(GB, "weighted_gram", no_pass)
    ref = sm.Probit(y, X).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-8)
    np.testing.assert_allclose(res.bse, ref.bse, rtol=1e-8)


def test_large_n_probit_with_expected_information_and_fisher_s_quantities(large_n_path,
                                                                          monkeypatch):
    X, y = _probit_data()
    model = gc.Probit(y, X)
    observed, expected = model.fit(), model.fit(information="expected")
    assert expected._fit.information == "expected"
    robust = {cov: model.fit(cov_type=cov).bse for cov in ("HC0", "HC3")}
    monkeypatch.setattr(SM, "SAMPLED_MIN_ROWS", 10**9)  # the exact IRLS path as reference
    ref_obs, ref_exp = model.fit(), model.fit(information="expected")
    assert ref_exp._fit.information == "expected"
    np.testing.assert_allclose(observed.bse, ref_obs.bse, rtol=1e-8)
    np.testing.assert_allclose(expected.bse, ref_exp.bse, rtol=1e-8)
    # leverages and influence use Fisher's weights whatever Gram the solver holds
    np.testing.assert_allclose(observed.hat_matrix_diag, ref_exp.hat_matrix_diag, rtol=1e-7)
    np.testing.assert_allclose(observed.get_influence().cooks_distance[0],
                               ref_exp.get_influence().cooks_distance[0], rtol=1e-6)
    for cov, bse in robust.items():
        np.testing.assert_allclose(bse, model.fit(cov_type=cov).bse, rtol=1e-7)


@pytest.mark.parametrize("link", ["probit", "cauchit"])
def test_observed_standard_errors_keep_their_digits_with_large_column_means(link):
    """A fit on a shifted design (a column of mean 1e4) inverts the observed information of
    that design, not the raw one's (whose Gram loses ~1e-7 of the standard errors)."""
    X, y = _probit_data(5000, 3, seed=9)
    X[:, 2] += 1e4
    fam = gc.families.Binomial(link=link)
    res = gc.GLM(y, X, family=fam).fit()
    assert res._fit.transform is not None
    beta = res.params.to_numpy()
    w = fam.irls_terms(y, X @ beta, np.ones_like(y), observed=True)[0]
    shift = X[:, 2] @ w / w.sum()  # any shift gives the same covariance, exactly
    xc = X.copy()
    xc[:, 2] -= shift
    t = np.eye(X.shape[1])
    t[0, 2] = shift  # X = Xc T
    cov = np.linalg.solve(t, np.linalg.solve((xc * w[:, None]).T @ xc, np.linalg.inv(t).T))
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(cov)), rtol=1e-12)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_leverages_with_large_column_means_are_those_of_the_centred_design(link):
    """Hat values (and Cook's distances) of a fit on a shifted design come from that design:
    the same as the fit on the centred columns to rounding (the raw (X'WX)^-1 lost ~3e-8)."""
    X, y = _probit_data(5000, 3, seed=11)
    centred = X.copy()
    X[:, 2] += 1e4
    fam = gc.families.Binomial(link=link)
    res, ref = gc.GLM(y, X, family=fam).fit(), gc.GLM(y, centred, family=fam).fit()
    assert res._fit.transform is not None and ref._fit.transform is None
    np.testing.assert_allclose(res.hat_matrix_diag, ref.hat_matrix_diag, rtol=1e-11)
    assert res.hat_matrix_diag.sum() == pytest.approx(X.shape[1], rel=1e-13)
    np.testing.assert_allclose(res.get_influence().cooks_distance[0],
                               ref.get_influence().cooks_distance[0], rtol=1e-9)
