"""``conf_int(method="profile")`` on MNLogit (issue 26 §2): per level x term, each bound a
root of the profile likelihood (checked by an independent maximisation over the other
coefficients), and with two levels the logit's profile intervals (which equal MASS's)."""

import numpy as np
import pytest
from scipy import optimize, stats

import glmclass.formula.api as gcf
from glmclass import datasets


@pytest.fixture(scope="module")
def birthwt():
    return datasets.load("birthwt")


def test_bounds_are_roots_of_the_profile_likelihood(birthwt):
    res = gcf.mnlogit("race ~ age + lwt + smoke", birthwt).fit()
    ci = res.conf_int(method="profile", alpha=0.1)
    assert list(ci.index) == list(res.conf_int().index) and ci.shape == (8, 2)
    model = res.model
    flat = res.params.to_numpy().T.ravel()  # level by level
    q2 = stats.norm.isf(0.05) ** 2
    for pos in (1, 3, 6):  # (other, age), (other, smoke), (white, lwt)
        free = np.arange(flat.size) != pos
        for b in ci.iloc[pos]:
            def negll(theta, b=b, pos=pos, free=free):
                full = flat.copy()
                full[pos], full[free] = b, theta
                return -model.loglike(full)

            def grad(theta, b=b, pos=pos, free=free):
                full = flat.copy()
                full[pos], full[free] = b, theta
                return -model.score(full)[free]

            opt = optimize.minimize(negll, flat[free], jac=grad, method="BFGS",
                                    options={"gtol": 1e-10, "maxiter": 1000})
            assert 2 * (res.llf + opt.fun) == pytest.approx(q2, rel=1e-6)
        wald = res.conf_int(alpha=0.1).iloc[pos]
        assert abs(ci.iloc[pos, 0] - wald.iloc[0]) < 0.1 * (wald.iloc[1] - wald.iloc[0])
    assert res.conf_int(method="profile", alpha=0.1) is not ci  # a copy, cached inside


def test_two_levels_equal_the_logit_profile(birthwt):
    f = " ~ age + lwt + smoke"
    mn = gcf.mnlogit("low" + f, birthwt).fit().conf_int(method="profile")
    lg = gcf.logit("low" + f, birthwt).fit().conf_int(method="profile")
    np.testing.assert_allclose(mn.to_numpy(), lg.to_numpy(), rtol=1e-7)


def test_bad_method(birthwt):
    res = gcf.mnlogit("race ~ age", birthwt).fit()
    with pytest.raises(ValueError, match="method must be 'wald' or 'profile'"):
        res.conf_int(method="likelihood")
